"""What Chordal keeps in Redis: the run store (runs.py) with its dispatch graph
(graph.py), what a finished query keeps (retire.py), document texts by reference
(texts.py), batches (batches.py) and their counters (batch_counts.py). Every key's name is
in shared/naming.py; how Redis is reached and locked down is in shared/access/."""
