"""A worker's background services, each a Celery bootstep on one periodic loop
(loop.py); workers/app.py adds them to the app's blueprints by name, so nothing here is
imported before a worker starts.

- the consumer's, which live as long as the worker and need its instance name:
  heartbeat.py (beats, records held messages, leaves the workers set at a clean stop),
  recovery.py (gives back dead workers' messages), giveback.py (at each broker
  reconnection, gives back what the dropped connection left behind);
- the worker's: deadlines.py (fails queries past their deadline), lanes.py (feeds the
  `plan` queue from the batch lanes), resumer.py (re-sends stalled ReAct loops, on
  react workers).
"""
