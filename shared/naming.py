"""Every queue name, task name and Redis key of Chordal, in one place.

Renaming a module never orphans queued messages because tasks are registered under
these explicit names, and every key the run store writes starts with `KEY_PREFIX`.
"""

import hashlib

QUEUE_PLAN = "plan"
QUEUE_EXECUTE = "execute"
QUEUE_FINALIZE = "finalize"
QUEUE_REACT = "react"

TASK_PLAN = "chordal.plan"
TASK_GET = "chordal.get"
TASK_EXTRACT = "chordal.extract"
TASK_COMPUTE = "chordal.compute"
TASK_FINALIZE = "chordal.finalize"
TASK_REACT = "chordal.react_step"

#: operation -> task name; every executor task consumes the `execute` queue.
STEP_TASKS = {
    "GET": TASK_GET,
    "SEARCH": "chordal.search",
    "EXTRACT": TASK_EXTRACT,
    "COMPUTE": TASK_COMPUTE,
    "IF": "chordal.if",
    "VALIDATE": "chordal.validate",
    "MERGE": "chordal.merge",
    "FILTER": "chordal.filter",
    "ARBITRATE": "chordal.arbitrate",
}

#: worker role -> the queues it consumes.
ROLE_QUEUES = {
    "planner": (QUEUE_PLAN,),
    "executor": (QUEUE_EXECUTE,),
    "finalizer": (QUEUE_FINALIZE,),
    "react": (QUEUE_REACT,),
}
ROLE_QUEUES["all"] = tuple(q for queues in ROLE_QUEUES.values() for q in queues)
TASK_QUEUES: tuple[str, ...] = ROLE_QUEUES["all"]
"""Every queue a task waits in."""

QUEUE_TASKS: dict[str, frozenset[str]] = {
    QUEUE_PLAN: frozenset({TASK_PLAN}),
    QUEUE_EXECUTE: frozenset(STEP_TASKS.values()),
    QUEUE_FINALIZE: frozenset({TASK_FINALIZE}),
    QUEUE_REACT: frozenset({TASK_REACT}),
}
"""queue -> the only task names a worker runs from it (shared/broker/admission.py): anything
else taken from it is refused, whatever the worker has registered."""

BATCH_PRIORITY = 9
"""The priority of a batch query's messages (`chordal enqueue`), inherited by its steps,
its finalizer and its ReAct iterations (`task_inherit_parent_priority`); every other
message (a single question's) has priority 0 and goes ahead of them
(shared/broker/transport.py `Channel._put`)."""
LANE_HEADER = "chordal_lane"
"""Message header naming the batch whose plan lane a `chordal.plan` message waits in
(shared/broker/lanes.py)."""

KEY_PREFIX = "chordal"


def run_key(query_id: str) -> str:
    """Hash with the query, status, plan, answer and timings of one query."""
    return f"{KEY_PREFIX}:run:{query_id}"


def steps_key(query_id: str) -> str:
    """Hash step_id -> StepResult JSON (first write wins)."""
    return f"{KEY_PREFIX}:steps:{query_id}"


def graph_key(query_id: str) -> str:
    """Names no data Chordal writes: the dispatch graph is the run hash's `g:{step}`
    fields (shared/stores/graph.py). Kept so tests and tools can check the key is gone."""
    return f"{KEY_PREFIX}:graph:{query_id}"


def dispatched_key(query_id: str) -> str:
    """Names no data Chordal writes: when each step was sent is the run hash's
    `sent:{step}` (shared/stores/retire.py). Kept so tests and tools can check the key is gone."""
    return f"{KEY_PREFIX}:dispatched:{query_id}"


def done_key(query_id: str) -> str:
    """List pushed once when a query reaches a terminal state (a waiter blocks on BLMOVE
    of the list onto itself, which leaves the item for other waiters)."""
    return f"{KEY_PREFIX}:done:{query_id}"


def deadlines_key() -> str:
    """Sorted set of the query ids not yet terminal, scored by their deadline (the sweeper
    fails those past it)."""
    return f"{KEY_PREFIX}:deadlines"


def deliveries_key(action_id: str) -> str:
    """Names no data Chordal writes: a task's delivery counter is the run hash's
    `delivered:{name}` (shared/stores/retire.py). Kept so tests and tools can check the key is
    gone."""
    return f"{KEY_PREFIX}:deliveries:{action_id}"


def text_key(doc_id: str, version: str) -> str:
    """The shared cached copy of one version of a document's text (shared/stores/texts.py); the
    id is hashed, so any id makes a well-formed key."""
    digest = hashlib.sha256(doc_id.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"{KEY_PREFIX}:text:{digest}:{version}"


def llm_calls_key(query_id: str) -> str:
    """List of LLMCall JSON, in call order."""
    return f"{KEY_PREFIX}:llm:{query_id}"


def iterations_key(query_id: str) -> str:
    """Hash n -> ReactIteration JSON (first write wins)."""
    return f"{KEY_PREFIX}:react:{query_id}"


def react_leases_key() -> str:
    """Sorted set of running ReAct iterations (`qid|n|token`) scored by lease expiry."""
    return f"{KEY_PREFIX}:react-leases"


def held_messages_key() -> str:
    """Hash delivery tag -> `instance|queue|task name|task id` of every message a worker
    took and has not finished (shared/broker/recovery.py)."""
    return f"{KEY_PREFIX}:held"


def held_value(instance: str, queue: str, task: str, task_id: str) -> str:
    """A held message's value in `held_messages_key()` (shared/broker/recovery.py `Held.parse`)."""
    return f"{instance}|{queue}|{task}|{task_id}"


def refused_key() -> str:
    """Hash `queue|task|reason` -> how many messages workers took from `queue` and
    refused without running them (shared/broker/admission.py); `task` is a registered task
    name, `(unknown)` or `(malformed)`, so the hash stays small whatever is sent."""
    return f"{KEY_PREFIX}:refused"


def inflight_key(instance: str) -> str:
    """List of the messages one worker instance has taken off its queue and not yet
    recorded as unacknowledged (shared/broker/transport.py moves each here atomically as it
    takes it, so a reply lost on the wire loses no message)."""
    return f"{KEY_PREFIX}:inflight:{instance}"


def workers_key() -> str:
    """Sorted set of worker instances scored by their last heartbeat (shared/broker/recovery.py)."""
    return f"{KEY_PREFIX}:workers"


def llm_slots_key() -> str:
    """Sorted set of in-flight LLM calls across all workers (the concurrency cap)."""
    return f"{KEY_PREFIX}:llm-slots"


def llm_form_key(endpoint: str) -> str:
    """The structured-output form one LLM endpoint and model accepts (JSON: `form` and
    the `reason` it was chosen), found by the first call that needed it; expires after
    CHORDAL_LLM_JSON_FORM_TTL_S. `endpoint` is a hash of the base URL and the model
    (see shared/llm/form_choice.py)."""
    return f"{KEY_PREFIX}:llm-form:{endpoint}"


def get_cache_key(backend: str, generation: int, bucket: int, digest: str) -> str:
    """One cached GET lookup (`best`) of a search backend, in one time bucket; expires
    with its bucket. `backend` and `digest` are hashes (see shared/search/cache.py)."""
    return f"{KEY_PREFIX}:get-cache:{backend}:{generation}:{bucket}:{digest}"


def get_cache_generation_key(backend: str) -> str:
    """Counter bumped whenever documents are added: older GET cache entries go unread."""
    return f"{KEY_PREFIX}:get-cache:{backend}:generation"


def get_cache_stats_key(backend: str) -> str:
    """Hash with the GET cache's `hits` and `misses` counters of one search backend."""
    return f"{KEY_PREFIX}:get-cache:{backend}:stats"


def batch_key(name: str) -> str:
    """Sorted set of the query ids of one batch, scored by their line in the batch file."""
    return f"{KEY_PREFIX}:batch:{name}"


def batches_key() -> str:
    """Sorted set of batch names scored by the time they were last enqueued to."""
    return f"{KEY_PREFIX}:batches"


def batch_counts_key(name: str) -> str:
    """Hash of one batch's counters: status -> queries in it, `first_queued`,
    `last_finished` (shared/stores/batch_counts.py)."""
    return f"{KEY_PREFIX}:batch-counts:{name}"


def batch_open_key(name: str) -> str:
    """Sorted set of the batch's unfinished query ids scored by when each was queued."""
    return f"{KEY_PREFIX}:batch-open:{name}"


def batch_latency_key(name: str) -> str:
    """Hash of one batch's answered queries: `b{k}` -> answers whose queued-to-done
    latency falls in bucket k, `s{second % 60}` -> `second:answers` of the last minute."""
    return f"{KEY_PREFIX}:batch-latency:{name}"


def batch_failures_key(name: str) -> str:
    """Hash of one batch's failed queries by group: `n:{group}` -> how many,
    `e:{group}` -> the first one's error (shared/stores/batch_counts.py)."""
    return f"{KEY_PREFIX}:batch-failures:{name}"


def plan_lane_key(batch: str) -> str:
    """List of the `chordal.plan` messages of one batch waiting for their turn in the
    `plan` queue (shared/broker/lanes.py moves them there, round robin between batches)."""
    return f"{KEY_PREFIX}:plan-lane:{batch}"


def plan_lanes_key() -> str:
    """Sorted set of the batches with messages in their plan lane, scored by their turn
    (lowest first)."""
    return f"{KEY_PREFIX}:plan-lanes"


def session_key(digest: str) -> str:
    """Hash of one browser session of the pages (`csrf`, `token`): `digest` is the SHA-256
    of the session cookie, so the key does not give the cookie away
    (producers/api/sessions.py)."""
    return f"{KEY_PREFIX}:session:{digest}"


def auth_failures_key(client: str) -> str:
    """Counter of the wrong API tokens (bearer or login form) one client address sent in
    its current window; expires with the window (producers/api/failures.py)."""
    return f"{KEY_PREFIX}:auth-failures:{client}"


def action_id(query_id: str, step_id: str) -> str:
    """The id of one step's task and result (`q-17:E2`; a ReAct action is `q-17:R3`)."""
    return f"{query_id}:{step_id}"


def plan_action_id(query_id: str) -> str:
    """The id whose deliveries the planner counts (`RunStore.count_delivery`)."""
    return f"{query_id}:plan"


def finalize_task_id(query_id: str) -> str:
    """The task id of a query's one `chordal.finalize` task: sent again (a redelivered
    step that claimed the join), it is still the same task (`RunStore.count_finalizer_run`)."""
    return f"{query_id}:finalize"


def react_action_id(query_id: str, n: int) -> str:
    """The id whose deliveries ReAct iteration `n` counts (`RunStore.count_delivery`)."""
    return f"{query_id}:react:{n}"


# Claim names: a field `claimed_{name}` of the run hash (RunStore.claim), set once.

def dispatch_claim(step_id: str) -> str:
    """Claim to send one step of a query's dispatch graph once its inputs are stored."""
    return f"dispatch:{step_id}"


def finalize_claim() -> str:
    """Claim to send a query's finalize task, by the step that stored the plan's last result."""
    return "finalize"


def react_claim(n: int) -> str:
    """Claim to send ReAct iteration `n`."""
    return f"react:{n}"
