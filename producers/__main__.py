from producers.cli import main

main()
