"""The ACL users per role (shared/access/acl.py), as data: nothing that wipes, lists,
reconfigures or stops the server is given to a Chordal role, the ACL file holds no
password, and docs/operations.md shows exactly these rules. That Redis enforces them is
tests/integration/test_redis_tls.py."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from shared.access import acl as redis_acl
from shared.access.acl import OWNER, ROLE_NAMES, ROLES, acl_file, markdown_table, tokens

OPERATIONS = (Path(__file__).resolve().parents[3] / "docs" / "operations.md").read_text()
FORBIDDEN = ("+flushall", "+flushdb", "+config", "+keys", "+scan", "+debug", "+shutdown",
             "+module", "+monitor", "+script|flush", "+acl", "+@")
"""Commands (and every category) no Chordal role is given."""
EVERYTHING = ("allcommands", "allkeys", "allchannels", "~*", "%R~*", "%W~*", "&*", "nopass")


def every_token(role: str) -> list[str]:
    """The role's tokens with each selector's tokens spelled out."""
    return [t for token in tokens(role) for t in token.strip("()").split()]


@pytest.mark.parametrize("role", ROLE_NAMES)
def test_no_role_may_wipe_list_reconfigure_or_stop_the_server_or_touch_every_key(role):
    granted = every_token(role)
    assert not [t for t in granted if t.lower().startswith(FORBIDDEN) or t in EVERYTHING]


def test_the_owner_runs_the_server_but_may_touch_no_key_or_channel():
    granted = every_token(OWNER)
    assert {"+shutdown", "+info", "+acl|log"} <= set(granted)
    assert not [t for t in granted if t[0] in "~%&"]


def test_producers_may_push_only_to_the_plan_queue_and_only_count_the_others():
    selectors = [t for t in tokens("producers") if t.startswith("(")]
    pushing = [s for s in selectors if "+lpush" in s]
    assert pushing == ["(~plan +lpush +rpush)"]  # a single question goes to the head
    counting = [s for s in selectors if "execute" in s]
    assert counting and all(re.fullmatch(r"\((%R~\S+ )+\+llen\)", s) for s in counting)
    root = [t for t in tokens("producers") if not t.startswith("(")]
    assert not [t for t in root if t.lstrip("~%RW") in ("plan", "execute", "unacked",
                                                         "unacked_index")]


def test_producers_send_no_control_broadcast_so_no_worker_shutdown():
    channels = [t for t in every_token("producers") if t.startswith("&")]
    assert channels == ["&/0.celeryev/task.sent"] and "+publish" in every_token("producers")
    assert not [t for t in every_token("producers") if "pidbox" in t]


def test_only_workers_reach_kombus_unacknowledged_tasks():
    for role in ROLES:
        holds = any("unacked" in t for t in every_token(role))
        assert holds == (role == "workers"), role


def test_monitoring_reads_chordal_keys_but_writes_none():
    patterns = [t for t in every_token("monitoring") if t[0] in "~%"]
    chordal = [p for p in patterns if "chordal:" in p]
    assert chordal == ["%R~chordal:*"]


def test_the_acl_file_turns_the_default_user_off_and_holds_hashes_not_passwords():
    passwords = {user: f"pw-of-{user}-1234" for user in redis_acl.USERS}
    text = acl_file(passwords)
    assert text.splitlines()[0].startswith("user default off resetpass")
    assert "nopass" not in text
    for user, password in passwords.items():
        assert password not in text
        assert f"user {user} reset on {redis_acl.password_hash(password)} " in text


def test_the_operations_page_table_shows_exactly_these_rules():
    assert markdown_table() in OPERATIONS, (
        "docs/operations.md's ACL table differs from shared/access/acl.py: paste "
        "`python -c 'from shared.access.acl import markdown_table; print(markdown_table())'`")
