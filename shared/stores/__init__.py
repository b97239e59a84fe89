"""What Chordal keeps in Redis: the run store (runs.py: a query's lifecycle) with its
dispatch graph (graph.py), step results (step_results.py), model calls and iterations
(model_calls.py) and whole records (records.py); what a finished query keeps
(retire.py); document texts by reference (texts.py); batches (batches.py) and their
counters (batch_counts.py). Every key's name is in shared/naming.py; how Redis is
reached and locked down is in shared/access/."""
