"""Tables read from documents: a grid of cells with its header periods, unit and scale
(model.py), read from PDF words, from text laid out in columns and from rows of cells."""
