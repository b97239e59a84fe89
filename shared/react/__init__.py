"""ReAct loops (Thought → Action → Observation), one iteration per task.

    actions.py  the model's reply -> Action (tolerant JSON), or "no valid Action: …"
    tools.py    the ReAct tools (get, search, extract, calculate, current_time, finish),
                mapped onto the executors' registry; `register_tool` adds one
    act.py      run one Action with a timeout -> StepResult (`{query_id}:R{n}`)
    observe.py  a StepResult -> the clean, short observation the model sees
    prompts.py  the stored iterations (+ auto-mode seed) -> the next chat messages
    reply_schema.py  the tool names -> the strict JSON schema of one reply
    seed.py     a ReWOO plan's results and gaps -> the first prompt of auto mode
    answer.py   the final text (or a stopped loop) + results -> the cited Answer
    support.py  whether that text rests on what the loop read, or the feedback to send
    loop.py     react_step(query, n, store, client, backend, settings): one iteration
    leases.py   leases of running iterations; resume_stalled re-sends dead workers' loops

The run store holds every iteration (`chordal:react:{qid}`, first write wins), so any
worker can run the next one and a re-sent iteration just moves on.
"""

from .actions import Action, parse_action
from .leases import Leases, resume_stalled
from .loop import next_iteration, react_step
from .observe import observe
from .tools import ReactTool, register_tool

__all__ = ["Action", "Leases", "ReactTool", "next_iteration", "observe", "parse_action",
           "react_step", "register_tool", "resume_stalled"]
