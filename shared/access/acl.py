"""The Redis ACL users of Chordal, one per role, as data: what each may run, on which
keys and pub/sub channels, and why.

Consumes nothing; produces `ROLES` (role -> its `Rule`s), from which the ACL file of
the embedded Redis (`acl_file`), `ACL SETUSER` arguments (`setuser_args`), the table
in docs/operations.md (`markdown_table`) and docker/compose.yaml's users all come, so they
cannot drift apart.

- `workers`: every `chordal worker` role and `chordal up` (its supervisor and sweeper):
  they take tasks from all four queues (BLMOVE into their `chordal:inflight:` list,
  shared/broker/transport.py) and send the next ones, keep kombu's record of unacknowledged
  tasks, and read and write every `chordal:` key.
- `producers`: `ask`, `enqueue`, `status`, `wait`, `results`, `show`, `debug`, `index`
  and the HTTP API: they write query records and send `chordal.plan` to the `plan`
  queue; they read, but cannot take, what waits in the other queues (LLEN only), never
  see kombu's unacknowledged tasks, and send no control broadcast (they count workers
  by heartbeat, shared/broker/recovery.py `census`), so they cannot shut a worker down.
- `monitoring`: Flower and a read-only `chordal status`: task events, control
  broadcasts (inspect, ping) and their replies, queue lengths, `chordal:` keys read-only.
- `owner`: the process that runs the Redis server itself (`chordal up`, the test
  fixtures): PING to see it is up, INFO to recognise a leftover, SHUTDOWN to stop it
  with its append-only file flushed, ACL LOG to see who was refused what.

No user gets FLUSHALL, FLUSHDB, CONFIG, KEYS, SCAN, DEBUG, MODULE, MONITOR, SCRIPT FLUSH
or any ACL write. The default user is off: nobody logs in as it (see `acl_file` for why
it still holds every permission). Refused commands are in `ACL LOG`.

What kombu's Redis transport needs, beyond the queues (`plan`, `execute`, `finalize`,
`react`, each with its priority sub-queues `NAME\\x06\\x16{3,6,9}`, matched by
`NAME??[0-9]`, which Flower's queue lengths count though Chordal sends no priorities):
the routing tables `_kombu.binding.*` (with kombu 5.7's
`_kombu.binding_permanent.*` and `_kombu.binding_deadlines`, which every consumer of an
expiring queue refreshes and sweeps with Lua scripts, so every role writes them), the
control reply queues `UUID.reply.celery.pidbox`, each worker's own
`NODE.celery.pidbox`, the `unacked`, `unacked_index` and `unacked_mutex` keys of late
acknowledgement (workers only: shared/broker/transport.py keeps other processes from
restoring tasks), and pub/sub channels `/0.celeryev/*` (events) and `/0.celery.pidbox`
(control broadcasts). The `/0` is the database number, so the URLs name database 0.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from shared import naming

ROLE_NAMES = ("workers", "producers", "monitoring")
"""The roles a Chordal process runs as (CHORDAL_REDIS_ROLE)."""
OWNER = "owner"
USERS = (*ROLE_NAMES, OWNER)
"""Every ACL user Chordal makes: the roles and the owner of the server."""
DB = 0
"""The database every URL names: kombu puts it into the channel names below."""
EVENTS = f"/{DB}.celeryev/*"
CONTROL = f"/{DB}.celery.pidbox"


@dataclass(frozen=True)
class Rule:
    tokens: str
    """ACL rule tokens, space-separated; a selector is one `( … )` group."""
    why: str


def queue_keys(*names: str, prefix: str = "~") -> str:
    """Key patterns of kombu queues: each name and its priority sub-queues."""
    return " ".join(f"{prefix}{n} {prefix}{n}??[0-9]" for n in names)


def _keys(*patterns: str, prefix: str = "~") -> str:
    return " ".join(prefix + p for p in patterns)


CONNECT = Rule("+hello +auth +ping",
               "log in (redis-py sends HELLO 3, redis-cli AUTH) and check the link")
SCRIPTS = Rule("+eval +evalsha +script|load +script|exists +time",
               "Lua scripts (first-write-wins terminal states, the LLM slots, kombu's "
               "binding tables and its mutex); TIME inside them")
TRANSACTIONS = Rule("+multi +exec +discard +watch +unwatch",
                    "MULTI/EXEC pipelines and WATCHed transactions")
BINDINGS = Rule(_keys("_kombu.binding*") + " +sadd +srem +smembers +exists +del +zadd "
                "+zrangebyscore +zrem",
                "kombu's routing tables: each process that declares a queue adds its "
                "binding, and kombu 5.7 refreshes and sweeps stale tables from any consumer")
REPLIES = Rule(f"({queue_keys('*.reply.celery.pidbox')} +brpop +llen +exists +del +pexpire)",
               "control replies (ping, inspect): a reply queue per request, taken with "
               "BRPOP and deleted after; only these keys, so no task queue can be taken")
PIDBOX_PUBLISH = Rule(f"&{CONTROL} +publish",
                      "send control broadcasts (Flower's inspect and its worker controls); "
                      "Redis cannot tell a ping from a shutdown, so any user with this "
                      "may send both")

WORKERS = (
    CONNECT,
    Rule(queue_keys(*naming.TASK_QUEUES) + " +blmove +brpop +lpush +rpush +llen",
         "take tasks from every queue (BLMOVE into the worker's in-flight list; BRPOP for "
         "`--role all`), send the next ones (LPUSH), give back those of dead workers to "
         "the head (RPUSH)"),
    Rule(_keys("unacked", "unacked_index", "unacked_mutex") + " +hset +hget +hdel +zadd "
         "+zrem +zrange +zrangebyscore +set",
         "late acknowledgement: kombu's record of every task taken and not acknowledged, "
         "and its restore lock; recovery gives dead workers' tasks back from it"),
    BINDINGS,
    Rule(queue_keys("*.celery.pidbox") + " +lpush +brpop +llen +del +exists +pexpire",
         "control: each worker's own pidbox queue, and the reply queues it answers on"),
    Rule(f"&{CONTROL} &{EVENTS} +psubscribe +punsubscribe +publish",
         "receive control broadcasts; send task and worker events (Flower)"),
    Rule(_keys(f"{naming.KEY_PREFIX}:*") + " +get +set +incr +incrby +del +exists "
         "+expire +expireat +hget +hset +hsetnx +hdel +hgetall +hkeys +hmget +hlen +hincrby "
         "+hexists +lrange +llen +rpush +lrem +zadd +zrem +zrange +zrangebyscore +zcard "
         "+zcount +zscore +zremrangebyscore",
         "the run store, step results, dispatch graphs, heartbeats, in-flight and held "
         "tasks, ReAct leases, LLM slots, GET cache and the shared copies of document texts "
         "(`chordal:text:*`): every `chordal:` key"),
    Rule(_keys(naming.plan_lane_key("*")) + " +rpop +lpush",
         "plan lanes: move batch plan messages from their lane to the `plan` queue, round "
         "robin (shared/broker/lanes.py)"),
    SCRIPTS,
    TRANSACTIONS,
)

PRODUCERS = (
    CONNECT,
    Rule(f"(~{naming.QUEUE_PLAN} +lpush +rpush)",
         "send `chordal.plan` to the `plan` queue (a single question to its head), and "
         "nothing else to any queue"),
    Rule(_keys(naming.plan_lane_key("*"), naming.plan_lanes_key()) + " +lpush +rpop +llen "
         "+zadd +zrem +zrange",
         "a batch's plan messages into its plan lane, and from the lanes to the `plan` "
         "queue, round robin (shared/broker/lanes.py)"),
    Rule(f"({queue_keys(*naming.TASK_QUEUES, prefix='%R~')} +llen)",
         "queue depths (`chordal status`, the pages): LLEN only, so no queue can be "
         "taken from or read"),
    Rule(_keys(f"{naming.KEY_PREFIX}:*", prefix="%R~") + " +get +exists +hget +hgetall "
         "+hkeys +hmget +hlen +hexists +lrange +zrange +zrangebyscore +zcard +zscore +pttl",
         "read every `chordal:` key: records, steps, graphs, batches, workers and held "
         "tasks (`show`, `status`, the API's events and pages), how long a client's count "
         "of wrong API tokens lasts"),
    Rule(_keys(naming.run_key("*"), naming.deadlines_key(), naming.done_key("*"),
               naming.batch_key("*"), naming.batches_key(), naming.session_key("*"),
               naming.auth_failures_key("*"), naming.get_cache_generation_key("*"))
         + " +hset +hsetnx +hdel +del +expire +expireat +zadd +zrem +rpush +blmove +incrby",
         "write query records (queued, withdrawn, failed past the deadline), wait for "
         "answers (BLMOVE of the done list onto itself), batches, the API's sessions and its count of wrong tokens per "
         "client; `chordal index` bumps the GET cache's generation"),
    Rule(f"({_keys(naming.steps_key('*'))} +expire)",
         "give a query's step results the TTL of its record as that script ends it"),
    Rule(_keys(naming.batch_counts_key("*"), naming.batch_open_key("*"),
               naming.batch_latency_key("*"), naming.batch_failures_key("*"))
         + " +hset +hincrby +del +expire +zadd +zrem",
         "batch counters, moved in the scripts that create a batch's queries and fail "
         "them past their deadline; `chordal status --recount` rebuilds them"),
    BINDINGS,
    Rule(f"&/{DB}.celeryev/task.sent +publish",
         "the `task-sent` event of each query sent, so Flower sees it queued: the only "
         "channel they may publish on (no control broadcast, so no worker shutdown)"),
    SCRIPTS,
    TRANSACTIONS,
)

MONITORING = (
    CONNECT,
    Rule(f"&{EVENTS} +psubscribe +punsubscribe",
         "Flower: every task and worker event"),
    Rule(f"({queue_keys(*naming.TASK_QUEUES, 'celeryev.*', prefix='%R~')} +llen)",
         "queue depths (Flower's broker page, `chordal status`) and of Flower's own event "
         "queue: LLEN only"),
    Rule(_keys(f"{naming.KEY_PREFIX}:*", prefix="%R~") + " +exists +hget +hgetall +hkeys "
         "+hmget +hlen +llen +lrange +zrange +zrangebyscore +zcard +zscore",
         "`chordal status` read-only: batches, records, workers alive, tasks held and "
         "plan lanes"),
    BINDINGS,
    REPLIES,
    PIDBOX_PUBLISH,
    SCRIPTS,
    TRANSACTIONS,
)

OWNER_RULES = (
    CONNECT,
    Rule("+info +shutdown +acl|log",
         "the server's owner: INFO to recognise a leftover server, SHUTDOWN to stop it "
         "with its append-only file flushed, ACL LOG to see who was refused what; no key"),
)

ROLES: dict[str, tuple[Rule, ...]] = {"workers": WORKERS, "producers": PRODUCERS,
                                      "monitoring": MONITORING, OWNER: OWNER_RULES}


def tokens(role: str) -> list[str]:
    """The ACL rule tokens of `role` after a reset (no password), selectors whole."""
    out: list[str] = []
    for rule in ROLES[role]:
        text = rule.tokens.strip()
        if text.startswith("("):
            out.append(text)
        else:
            out.extend(text.split())
    return out


def password_hash(password: str) -> str:
    """`#` and the SHA-256 of `password`: an ACL file with it holds no password."""
    return "#" + hashlib.sha256(password.encode()).hexdigest()


def setuser_args(role: str, password: str) -> list[str]:
    """Arguments of `ACL SETUSER` that make `role` exactly as ROLES says."""
    return [role, "reset", "on", password_hash(password), *tokens(role)]


def acl_file(passwords: dict[str, str]) -> str:
    """An ACL file (`aclfile` in redis.conf): the default user off, and one user per
    entry of `passwords` (role -> password, stored hashed)."""
    # Off (no one logs in as it, a new connection can run nothing but AUTH and HELLO),
    # yet allowed everything: Redis 7.0-7.4 replays the MULTI/EXEC blocks of the
    # append-only file as the default user and drops each one that user may not run
    # (redis/redis#14541, fixed by #14545): kombu's acknowledgement records and the run
    # store's transactions would be lost at every restart.
    lines = ["user default off resetpass ~* &* +@all"]
    for role in USERS:
        if role in passwords:
            lines.append("user " + " ".join(setuser_args(role, passwords[role])))
    return "\n".join(lines) + "\n"


def markdown_table() -> str:
    """The rules as the Markdown table docs/operations.md shows (tests check it matches)."""
    rows = ["| user | rule | why |", "|---|---|---|"]
    for role, rules in ROLES.items():
        for rule in rules:
            # a `|` inside a table cell ends it, even in a code span: escaped
            rows.append(f"| `{role}` | `{rule.tokens.replace('|', chr(92) + '|')}` | "
                        f"{rule.why} |")
    return "\n".join(rows)
