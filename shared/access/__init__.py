"""How a process reaches Redis, and how a Redis is locked down: URLs that carry a
password and how they are shown (urls.py), the ACL users, one per role (acl.py), the auth
directory of a locked-down Redis (auth_dir.py) and its TLS certificates (tls.py). Below
the settings (shared/config.py), which read the auth directory; above nothing of the
project but errors and naming."""
