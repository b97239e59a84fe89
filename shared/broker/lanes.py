"""Plan lanes: round robin between batches in front of the `plan` queue.

Consumes the `chordal.plan` messages of batch queries, which the transport puts in their
batch's lane (`chordal:plan-lane:NAME`, registered in `chordal:plan-lanes`) instead of
the `plan` queue (shared/broker/transport.py); produces a `plan` queue that holds at most
`depth` of them, refilled one batch at a time in turn. The batch served longest ago
goes next, a batch new to the set goes first once, and a lane found empty leaves the
set, all in one Lua script, so a message is in a lane or in the queue, never both nor
neither. Whoever makes room refills: the batch sender after each chunk, the planner as it
takes a batch's query, every worker's lane feed.

Planners take from `plan` as ever (one queue, BLMOVE into the in-flight list): acks,
visibility and the recovery of held messages never see a lane.
"""

from __future__ import annotations

import redis

from shared import naming

FEED_LUA = """
local queue, lanes = ARGV[3], KEYS[1]
local room = tonumber(ARGV[1]) - redis.call('LLEN', queue)
local moved = 0
while moved < room do
  local head = redis.call('ZRANGE', lanes, 0, 0)
  if #head == 0 then break end
  local lane = ARGV[2] .. head[1]
  local item = redis.call('RPOP', lane)
  if item then
    redis.call('LPUSH', queue, item)
    moved = moved + 1
  end
  if redis.call('LLEN', lane) == 0 then
    redis.call('ZREM', lanes, head[1])
  else
    local last = redis.call('ZRANGE', lanes, -1, -1, 'WITHSCORES')
    redis.call('ZADD', lanes, tonumber(last[2]) + 1, head[1])
  end
end
return moved
"""
"""KEYS: the lanes' set; ARGV: depth, the lane key prefix, the `plan` queue. The queue
and the lanes are not declared keys: the `producers` ACL user may only push to and count
the queue (shared/access/acl.py), which Redis checks command by command inside the
script, and the script needs a Redis that is not a cluster."""


def feed(client: redis.Redis, depth: int) -> int:
    """Move batch plan messages from their lanes into the `plan` queue, round robin,
    until it holds `depth`; how many moved."""
    return int(client.eval(FEED_LUA, 1, naming.plan_lanes_key(), depth,
                           naming.plan_lane_key(""), naming.QUEUE_PLAN))


def drop(client: redis.Redis, batch: str) -> int:
    """Forget the plan messages of `batch` still in its lane (its queries were
    cancelled: each would only be taken to do nothing); how many."""
    with client.pipeline() as p:
        p.llen(naming.plan_lane_key(batch))
        p.delete(naming.plan_lane_key(batch))
        p.zrem(naming.plan_lanes_key(), batch)
        return int(p.execute()[0])


def waiting(client: redis.Redis) -> int:
    """How many plan messages wait in lanes (not yet in the `plan` queue)."""
    names = client.zrange(naming.plan_lanes_key(), 0, -1)
    if not names:
        return 0
    with client.pipeline(transaction=False) as p:
        for name in names:
            p.llen(naming.plan_lane_key(name if isinstance(name, str) else name.decode()))
        return sum(p.execute())
