"""The broker plumbing, Celery's and kombu's side of Redis: the Celery configuration
every process shares (app.py), kombu's Redis transport with its defects closed
(transport.py), what a worker runs of what it takes (admission.py), the plan lanes that
take turns between batches (lanes.py), giving dead workers' messages back (recovery.py),
the census of live workers and queue depths (census.py), riding out a Redis outage
inside a task (outage.py), and log lines of bounded length (log_lines.py)."""
