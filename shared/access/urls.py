"""URLs that carry a password (Redis, Elasticsearch, an LLM endpoint): how messages
show them, and the one form Redis URLs are handed to Celery and redis-py in.

- `mask_url(text)`: `text` with the password of every URL in it replaced by `***`,
  both where it sits in the userinfo (`redis://:pw@host`, `https://user:pw@host`) and
  in the query (`?password=pw`); host, port, database, user and other options stay, so
  the message still says where. Every message, log line and exception that names a URL
  goes through it.
- `password_in_userinfo(url)`: a `redis://` URL with `?password=` (and `?username=`)
  moved into the userinfo. redis-py reads either form; kombu (so Celery) cannot parse
  the query form at all (`TypeError: dict() got multiple values for keyword argument
  'password'`), and masks passwords only in the userinfo.

Why not kombu's `kombu.utils.url.sanitize_url`: it masks the userinfo password (`**`)
but drops the whole query string, `?password=` with `ssl_cert_reqs` and every other
option, adds a trailing `/`, and reads one URL, not a message. Celery's
`celery.app.utils.sanitize_url` keeps the query, and `?password=` in it in clear.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

MASK = "***"
SECRET_PARAMS = ("password", "passwd", "pwd", "token", "access_token", "api_key", "apikey",
                 "secret")
"""Query parameters whose values are masked."""
_URL = re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>]+")
_SECRET_PARAM = re.compile(rf"([?&;](?:{'|'.join(SECRET_PARAMS)})=)[^&;#\s]*", re.IGNORECASE)


def mask_url(text: str) -> str:
    """`text` with the password of every URL in it replaced by `***`; all else unchanged."""
    return _URL.sub(lambda m: _mask_one(m.group(0)), text)


def _mask_one(url: str) -> str:
    scheme, sep, rest = url.partition("://")
    # The last "@" ends the userinfo: a password with an unescaped "@" or "/" is still
    # masked whole (urlsplit would read part of it as the host and show it).
    userinfo, at, tail = rest.rpartition("@")
    if at and ":" in userinfo:
        rest = f"{userinfo.partition(':')[0]}:{MASK}@{tail}"
    return scheme + sep + _SECRET_PARAM.sub(rf"\g<1>{MASK}", rest)


def password_in_userinfo(url: str) -> str:
    """`url` with `?password=` and `?username=` moved into its userinfo (`redis://` and
    `rediss://` only; a password already in the userinfo wins, as it does in redis-py)."""
    parts = urlsplit(url)
    if parts.scheme not in ("redis", "rediss") or not parts.query:
        return url
    query = parse_qsl(parts.query, keep_blank_values=True)
    creds = {k: v for k, v in query if k in ("username", "password")}
    if not creds.get("password"):
        return url
    userinfo, at, hostport = parts.netloc.rpartition("@")
    if not (at and ":" in userinfo):
        user = userinfo if at else quote(creds.get("username", ""), safe="")
        userinfo = f"{user}:{quote(creds['password'], safe='')}"
    rest = urlencode([(k, v) for k, v in query if k not in creds])
    return urlunsplit(parts._replace(netloc=f"{userinfo}@{hostport}", query=rest))
