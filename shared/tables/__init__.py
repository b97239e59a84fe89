"""Tables read from documents: a grid of cells (shared/models/table.py) with its header
periods (periods.py, header.py), unit and scale (units.py), read from PDF words, from text
laid out in columns (lines.py, words.py) and from rows of cells (rows.py, assemble.py;
read.py is the entry); and the figures written in a cell or a sentence, typed
(quantities.py)."""
