"""What Chordal keeps in Redis and how it reaches Redis: the run store (runs.py) with its
dispatch graph (graph.py), what a finished query keeps (retire.py), document texts by
reference (texts.py), batches (batches.py) and their counters (batch_counts.py); the ACL
users (acl.py), the auth directory that locks a Redis down (auth_dir.py), its TLS
certificates (tls.py), and URLs that carry a password (urls.py). Every key's name is in
shared/naming.py."""
