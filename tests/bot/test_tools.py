"""The LLM tools: the article's eight operations, bound to one namespace, never crashing."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.assistant.changes import Reverted, revert
from bot.assistant.executor import ToolExecutor, TurnPolicy
from bot.assistant.reminder_desk import ReminderDesk
from bot.assistant.tools import TOOLS, tool_schemas
from bot.core import operations, reminders
from bot.core.policy import Actor, Caller
from memory.files import FileNamespace as Namespace
from memory.files import MemoryStore

ARTICLE_TOOLS = [
    "addMemory",
    "searchMemory",
    "getAllMemories",
    "getMemory",
    "updateMemory",
    "deleteMemory",
    "getMemoryStats",
    "getRelatedMemories",
]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[MemoryStore]:
    with MemoryStore(tmp_path / "data") as store:
        yield store


@pytest.fixture
def ns(store: MemoryStore) -> Namespace:
    return store.namespace("users/1")


def run(executor: ToolExecutor, name: str, args: dict[str, Any] | str | None = None) -> Any:
    raw = args if isinstance(args, str) or args is None else json.dumps(args, ensure_ascii=False)
    return json.loads(executor.execute(name, raw))


def on_disk(store: MemoryStore, name: str) -> list[dict[str, Any]]:
    store.namespace(name).flush()
    return json.loads((store.data_dir / name / "memory.json").read_text("utf-8"))


def test_the_article_s_eight_tools_with_described_parameters() -> None:
    schemas = tool_schemas()
    assert [s["function"]["name"] for s in schemas] == [
        *ARTICLE_TOOLS,
        "scheduleReminder",
        "offerReminder",
    ]
    for schema in schemas:
        function = schema["function"]
        assert schema["type"] == "function" and len(function["description"]) > 20
        parameters = function["parameters"]
        assert parameters["type"] == "object" and parameters["additionalProperties"] is False
        assert set(parameters["required"]) <= set(parameters["properties"])
        for name, spec in parameters["properties"].items():
            assert spec["description"], f"{function['name']}.{name} has no description"
            assert name != "namespace"


def test_add_stores_the_memory_with_lower_case_tags_and_reports_it(
    store: MemoryStore, ns: Namespace
) -> None:
    executor = ToolExecutor(ns)
    raw = executor.execute(
        "addMemory",
        json.dumps(
            {
                "content": "我的代码都在 D:\\projects 里",
                "tags": ["代码", "Path"],
                "category": "Work",
            }
        ),
    )
    assert '", "' not in raw and '": ' not in raw and "\\u" not in raw  # compact, CJK as is
    result = json.loads(raw)
    assert result["ok"] is True
    memory = result["memory"]
    assert memory["tags"] == ["代码", "path"] and memory["category"] == "work"
    assert executor.changes.added == [memory["id"]]
    [record] = on_disk(store, "users/1")
    assert record["content"] == "我的代码都在 D:\\projects 里" and record["id"] == memory["id"]


def test_search_finds_and_counts_the_access(ns: Namespace) -> None:
    target = ns.add("standup is at 10:00 every day", ["meeting", "schedule"], "work")
    ns.add("buy oat milk", ["shopping"])
    result = run(ToolExecutor(ns), "searchMemory", {"query": "standup meeting", "limit": 5})
    assert result["ok"] and result["memories"][0]["id"] == target.id
    assert result["count"] == len(result["memories"]) == 1  # the answer; nothing else answers
    assert "weakerMatches" not in result or all(
        m["id"] != target.id for m in result["weakerMatches"]
    )
    assert ns.get(target.id).access_count == 1


def test_all_memories_by_category_newest_when_limited(ns: Namespace) -> None:
    ids = [ns.add(f"work note {i}", category="work").id for i in range(5)]
    ns.add("a personal note", category="personal")
    result = run(ToolExecutor(ns), "getAllMemories", {"category": "work", "limit": 2})
    assert result["total"] == 5 and result["shown"] == 2
    assert [m["id"] for m in result["memories"]] == ids[-2:]
    assert run(ToolExecutor(ns), "getAllMemories")["total"] == 6


def test_get_update_related_and_stats(ns: Namespace) -> None:
    a = ns.add("project X lives in /srv/x", ["project", "path"], "work")
    b = ns.add("project Y lives in /srv/y", ["project"], "work")
    executor = ToolExecutor(ns)
    got = run(executor, "getMemory", {"id": str(a.id)})["memory"]
    assert got["content"] == a.content and got["accessCount"] == 0
    updated = run(executor, "updateMemory", {"id": a.id, "content": "project X moved to /opt/x"})
    assert updated["memory"]["content"] == "project X moved to /opt/x"
    # The article's form: updateMemory(id, updates).
    run(executor, "updateMemory", {"id": a.id, "updates": {"tags": ["moved"]}})
    assert ns.get(a.id).tags == ("moved",) and executor.changes.updated == [a.id]
    related = run(executor, "getRelatedMemories", {"id": b.id})
    assert [m["id"] for m in related["memories"]] == [a.id]
    stats = run(executor, "getMemoryStats")
    assert stats["total"] == 2 and stats["byCategory"] == {"work": 2}


def test_the_tools_answer_as_the_commands_do(ns: Namespace) -> None:
    # getMemoryStats, getRelatedMemories and getAllMemories call the operations of /stats,
    # /related and /list: the same memories, weighed the same, the same "most used".
    used = ns.add("standup is at 10", ["meeting"], "work")
    ns.touch([used.id])
    unused = ns.add("retro is on friday", ["meeting"], "work")
    milk = ns.add("buy oat milk")  # general, as the next: nothing else in common
    ns.add("call the bank")
    executor = ToolExecutor(ns)

    stats = run(executor, "getMemoryStats")
    assert [m["id"] for m in stats["mostAccessed"]] == [used.id]  # never one nobody used
    assert [m["id"] for m in stats["mostAccessed"]] == [
        m.id for m in operations.stats(ns).most_accessed
    ]
    assert stats["byCategory"] == operations.stats(ns).by_category == {"work": 2, "general": 2}

    assert run(executor, "getRelatedMemories", {"id": milk.id})["count"] == 0
    related = run(executor, "getRelatedMemories", {"id": unused.id})["memories"]
    _, expected = operations.related(ns, unused.id)
    assert [m["id"] for m in related] == [m.id for m in expected] == [used.id]

    listed = run(executor, "getAllMemories", {"category": "工作"})["memories"]
    expected = operations.listing(ns, "工作")
    assert [m["id"] for m in listed] == [m.id for m in reversed(expected)] == [used.id, unused.id]


def test_a_known_category_is_one_category_in_both_languages(ns: Namespace) -> None:
    legacy = ns.add("每天吃维生素", category="健康")  # stored with the Chinese word, before
    executor = ToolExecutor(ns)
    added = run(executor, "addMemory", {"content": "牙医在周五", "category": "健康"})
    assert added["memory"]["category"] == "health"  # stored by its English name
    run(executor, "addMemory", {"content": "dentist on friday", "category": "Health"})
    run(executor, "addMemory", {"content": "pancakes need 2 eggs", "category": "recipes"})
    for asked in ("health", "健康"):
        found = run(executor, "getAllMemories", {"category": asked})
        assert found["total"] == 3 and legacy.id in [m["id"] for m in found["memories"]]
    assert run(executor, "getMemoryStats")["byCategory"] == {"health": 3, "recipes": 1}
    run(executor, "updateMemory", {"id": added["memory"]["id"], "category": "工作"})
    assert ns.get(added["memory"]["id"]).category == "work"
    assert ns.get(legacy.id).category == "健康"  # what was stored is not rewritten


@pytest.mark.parametrize(
    ("name", "args", "code"),
    [
        ("addMemory", '{"content": "unterminated', "MEMORY_INVALID"),
        ("addMemory", '["not", "an", "object"]', "MEMORY_INVALID"),
        ("addMemory", "{}", "MEMORY_INVALID"),
        ("addMemory", {"content": "   "}, "MEMORY_INVALID"),
        ("addMemory", {"content": "x", "tags": 5}, "MEMORY_INVALID"),
        (
            "addMemory",
            {"content": "x", "tags": ["a"] * 3 + [f"t{i}" for i in range(30)]},
            "MEMORY_INVALID",
        ),
        ("addMemory", {"content": "x", "namespace": "users/2"}, "MEMORY_INVALID"),
        ("searchMemory", {"query": "x", "limit": 0}, "MEMORY_INVALID"),
        ("searchMemory", {"query": ""}, "MEMORY_INVALID"),
        ("getMemory", {"id": "twelve"}, "MEMORY_INVALID"),
        ("getMemory", {"id": 42}, "MEMORY_NOT_FOUND"),
        ("updateMemory", {"id": 42, "content": "y"}, "MEMORY_NOT_FOUND"),
        ("deleteMemory", {"id": -1}, "MEMORY_INVALID"),
        ("rm -rf", {}, "UNKNOWN_TOOL"),
    ],
)
def test_bad_calls_come_back_as_errors(
    ns: Namespace, name: str, args: dict[str, Any] | str, code: str
) -> None:
    result = run(ToolExecutor(ns), name, args)
    assert result["ok"] is False
    assert result["error"]["code"] == code and result["error"]["message"]


def test_updating_nothing_changes_nothing(ns: Namespace) -> None:
    memory = ns.add("keep me", ["a"])
    result = run(ToolExecutor(ns), "updateMemory", {"id": memory.id})
    assert result["error"]["code"] == "MEMORY_INVALID"
    assert ns.get(memory.id) == memory


def test_a_call_cannot_reach_another_namespace(store: MemoryStore) -> None:
    mine, theirs = store.namespace("users/1"), store.namespace("users/2")
    secret = theirs.add("their secret", ["secret"])
    executor = ToolExecutor(mine)
    assert run(executor, "getMemory", {"id": secret.id})["error"]["code"] == "MEMORY_NOT_FOUND"
    assert run(executor, "deleteMemory", {"id": secret.id})["error"]["code"] == "MEMORY_NOT_FOUND"
    assert run(executor, "searchMemory", {"query": "secret"})["count"] == 0
    assert run(executor, "getAllMemories")["total"] == 0
    assert run(executor, "updateMemory", {"id": secret.id, "namespace": "users/2"})["ok"] is False
    assert theirs.get(secret.id) == secret


def test_one_deletion_per_turn_the_rest_waits_for_the_user(
    store: MemoryStore, ns: Namespace
) -> None:
    ids = [ns.add(f"memory {i}").id for i in range(4)]
    policy = TurnPolicy()
    executor = ToolExecutor(ns, policy)
    first = run(executor, "deleteMemory", {"id": ids[0]})
    assert first["ok"] and first["deleted"]["id"] == ids[0]
    for memory_id in (ids[1], ids[2], ids[2]):
        result = run(executor, "deleteMemory", {"id": memory_id})
        assert result["ok"] is False and result["needsConfirmation"] is True
        assert "confirm" in result["message"]
    assert [m.id for m in policy.pending] == [ids[1], ids[2]]
    assert executor.changes.deleted == [ids[0]]
    assert [r["id"] for r in on_disk(store, "users/1")] == ids[1:]


def test_changes_to_existing_memories_are_capped_and_the_rest_waits(
    store: MemoryStore, ns: Namespace
) -> None:
    ids = [ns.add(f"memory {i}", ["old"]).id for i in range(6)]
    policy = TurnPolicy(max_changes=3)
    executor = ToolExecutor(ns, policy)
    added = run(executor, "addMemory", {"content": "new today"})["memory"]["id"]
    assert run(executor, "updateMemory", {"id": added, "content": "new, edited"})["ok"]
    for memory_id in ids[:2]:
        assert run(executor, "updateMemory", {"id": memory_id, "content": "pwned"})["ok"]
    assert run(executor, "updateMemory", {"id": ids[0], "tags": ["again"]})["ok"]  # counted once
    assert run(executor, "deleteMemory", {"id": ids[2]})["ok"]  # the third change
    for args in ({"id": ids[3], "content": "pwned"}, {"id": ids[3], "tags": ["x"]}):
        result = run(executor, "updateMemory", args)
        assert result["needsConfirmation"] is True and "Do not call it again" in result["message"]
    assert run(executor, "deleteMemory", {"id": ids[4]})["needsConfirmation"] is True
    # A change the store would refuse is refused now, not kept for the user to confirm.
    assert run(executor, "updateMemory", {"id": ids[5], "content": " "})["ok"] is False

    assert [(p.op, p.id, p.content, p.tags) for p in policy.pending] == [
        ("update", ids[3], "pwned", ("x",)),  # both edits of one memory, merged
        ("delete", ids[4], None, None),
    ]
    assert policy.changed == [ids[0], ids[1], ids[2]]
    assert [m.content for m in ns.memories()] == [
        "pwned",
        "pwned",
        "memory 3",
        "memory 4",
        "memory 5",
        "new, edited",
    ]
    # Every write of the turn can be undone from what the executor kept.
    assert revert(ns, executor.undo) == Reverted(undone=6)
    restored = sorted(ns.memories(), key=lambda m: m.id)  # a reinstated one is stored last
    assert [(m.content, m.tags) for m in restored] == [(f"memory {i}", ("old",)) for i in range(6)]


def test_deletions_keep_their_stricter_limit_inside_the_cap(ns: Namespace) -> None:
    ids = [ns.add(f"memory {i}").id for i in range(3)]
    policy = TurnPolicy(max_changes=3, max_deletions=0)  # a group
    executor = ToolExecutor(ns, policy)
    assert run(executor, "deleteMemory", {"id": ids[0]})["needsConfirmation"] is True
    assert run(executor, "updateMemory", {"id": ids[1], "content": "changed"})["ok"]
    assert "every deletion needs" in run(executor, "deleteMemory", {"id": ids[1]})["message"]
    assert len(ns.memories()) == 3 and [p.op for p in policy.pending] == ["delete", "delete"]


def test_undo_leaves_alone_what_someone_else_changed_since(ns: Namespace) -> None:
    ids = [ns.add(f"memory {i}").id for i in range(3)]
    executor = ToolExecutor(ns)
    for memory_id in ids[:2]:
        run(executor, "updateMemory", {"id": memory_id, "content": "pwned"})
    run(executor, "deleteMemory", {"id": ids[2]})
    ns.update(ids[1], content="fixed by hand")  # another chat, meanwhile
    assert revert(ns, executor.undo) == Reverted(undone=2, left_alone=1)
    restored = sorted(ns.memories(), key=lambda m: m.id)
    assert [m.content for m in restored] == ["memory 0", "fixed by hand", "memory 2"]


def test_rollback_undoes_the_turn(store: MemoryStore, ns: Namespace) -> None:
    kept = ns.add("original text", ["old"], "work")
    doomed = ns.add("will be deleted and come back", ["back"])
    before = ns.export()
    executor = ToolExecutor(ns)
    added = run(executor, "addMemory", {"content": "half a turn", "tags": ["x"]})["memory"]["id"]
    run(executor, "updateMemory", {"id": kept.id, "content": "changed", "category": "other"})
    run(executor, "deleteMemory", {"id": doomed.id})
    assert executor.changes
    executor.rollback()
    assert not executor.changes
    after = ns.export()
    assert [m["id"] for m in after] == [m["id"] for m in before]
    assert added not in {m["id"] for m in after}
    restored = ns.get(kept.id)
    assert (restored.content, restored.tags, restored.category) == (
        "original text",
        ("old",),
        "work",
    )
    assert ns.get(doomed.id).to_dict() == doomed.to_dict()
    assert [r["id"] for r in on_disk(store, "users/1")] == [kept.id, doomed.id]


def test_rollback_leaves_alone_what_someone_else_changed_since(ns: Namespace) -> None:
    memory = ns.add("standup is at 10", ["work"])
    executor = ToolExecutor(ns)
    added = run(executor, "addMemory", {"content": "retro is on friday"})["memory"]["id"]
    run(executor, "updateMemory", {"id": memory.id, "content": "standup is at 11"})
    ns.update(memory.id, content="standup is at 9:30")  # another chat, meanwhile
    ns.update(added, tags=["retro"])
    executor.rollback()
    assert ns.get(memory.id).content == "standup is at 9:30"
    assert ns.get(added).tags == ("retro",)


@settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    name=st.sampled_from([t.name for t in TOOLS]) | st.text(max_size=20),
    arguments=st.none()
    | st.text(max_size=60)
    | st.dictionaries(
        st.sampled_from(["content", "tags", "category", "query", "limit", "id", "updates", "x"]),
        st.none()
        | st.booleans()
        | st.integers(min_value=-(2**70), max_value=2**70)
        | st.floats(allow_nan=False)
        | st.text(max_size=30)
        | st.lists(st.text(max_size=10) | st.integers(), max_size=4)
        | st.dictionaries(st.text(max_size=8), st.text(max_size=8), max_size=2),
        max_size=4,
    ).map(json.dumps),
)
def test_the_executor_never_raises(ns: Namespace, name: str, arguments: str | None) -> None:
    result = json.loads(ToolExecutor(ns).execute(name, arguments))
    assert isinstance(result["ok"], bool)
    if not result["ok"]:
        assert result.get("needsConfirmation") or result["error"]["code"]


def test_a_group_policy_keeps_the_model_from_changing_another_members_memory(
    ns: Namespace,
) -> None:
    theirs = ns.add("bob's locker is 99", source="telegram:-5:1:43")
    mine = ns.add("alice's locker is 12", source="telegram:-5:2:42")
    executor = ToolExecutor(ns, TurnPolicy(may_change=lambda m: m.source == mine.source))

    refused = run(executor, "updateMemory", {"id": theirs.id, "content": "bob's locker is 1"})
    assert refused["ok"] is False and refused["error"]["code"] == "NOT_ALLOWED"
    assert ns.get(theirs.id).content == "bob's locker is 99"

    assert run(executor, "updateMemory", {"id": mine.id, "content": "alice's locker is 13"})["ok"]
    added = run(executor, "addMemory", {"content": "the retro moved to friday"})["memory"]["id"]
    assert run(executor, "updateMemory", {"id": added, "content": "the retro is on friday"})["ok"]
    assert executor.changes.updated == [mine.id]


def test_a_turn_run_again_after_a_crash_adds_no_memory_twice(ns: Namespace) -> None:
    def turn() -> list[int]:
        executor = ToolExecutor(ns, source="telegram:42:7:42")
        return [
            run(executor, "addMemory", {"content": content})["memory"]["id"]
            for content in ("standup is at 10", "retro is on friday")
        ]

    first = turn()
    assert turn() == first  # the inbox replayed the message: the same memories come back
    assert [m.id for m in ns.memories()] == first
    assert [m.source for m in ns.memories()] == ["telegram:42:7:42:1", "telegram:42:7:42:2"]


def test_reminders_past_the_cap_wait_checked_as_if_set_and_a_failed_turn_drops_them(
    store: MemoryStore, ns: Namespace
) -> None:
    now = datetime(2026, 12, 1, 4, 0, tzinfo=UTC)
    caller = Caller(Actor("user", 1, "Ann"), "users/1")
    desk = ReminderDesk(store, caller, 1, ZoneInfo("Asia/Shanghai"), lambda: now, "en", source="m")
    executor = ToolExecutor(ns, reminders=desk)
    for hour in (8, 12, 20, 22):
        run(executor, "scheduleReminder", {"text": f"pill at {hour}", "local": f"{hour}:00"})
    assert len(desk.made) == 3 and [p.text for p in desk.waiting] == ["pill at 22"]
    assert desk.waiting[0].due.local().strftime("%Y-%m-%d %H:%M") == "2026-12-01 22:00"
    # What waits is checked now, as setting it would be: a text no document can hold is
    # refused to the model at once, not kept to fail the turn (or the Apply) later.
    refused = run(executor, "scheduleReminder", {"text": "a\ud800b", "local": "23:00"})
    assert refused["error"]["code"] == "MEMORY_INVALID" and len(desk.waiting) == 1
    executor.rollback()
    assert [r.state for r in reminders.every(store, "users/1")] == ["cancelled"] * 3
    assert desk.waiting == []


def test_offer_reminder_sets_nothing_and_a_failed_turn_offers_nothing(
    store: MemoryStore, ns: Namespace
) -> None:
    now = datetime(2026, 12, 1, 4, 0, tzinfo=UTC)
    caller = Caller(Actor("user", 1, "Ann"), "users/1")
    desk = ReminderDesk(store, caller, 1, ZoneInfo("Asia/Shanghai"), lambda: now, "en")
    executor = ToolExecutor(ns, reminders=desk)
    offered = run(executor, "offerReminder", {"text": "call the plumber", "local": "09:00"})
    assert offered["ok"] is True and offered["set"] is False
    assert offered["due"] == "2026-12-02 (Wed) 09:00 Asia/Shanghai"  # the code's time
    birthday = {"text": "Mia's birthday", "local": "2027-05-03", "repeat": "yearly"}
    assert run(executor, "offerReminder", birthday)["repeat"] == "every year"
    past = run(executor, "offerReminder", {"text": "x", "local": "2026-11-30 10:00"})
    assert past["ok"] is False and "has passed" in past["error"]["message"]
    run(executor, "offerReminder", {"text": "third", "local": "21:00"})
    capped = run(executor, "offerReminder", {"text": "fourth", "local": "22:00"})
    assert capped["ok"] is False and "at most 3 offers" in capped["error"]["message"]
    assert [text for text, _ in desk.offered] == ["call the plumber", "Mia's birthday", "third"]
    assert reminders.every(store) == [] and desk.made == []  # offered: nothing is set
    executor.rollback()
    assert desk.offered == []


@pytest.mark.parametrize(
    "arguments",
    [
        {"text": "x", "local": "0001-01-01 00:30"},
        {"text": "x", "local": "9999-12-31 23:59"},
        {"text": "x", "local": "9999-12-31", "repeat": "yearly"},
        {"text": "x", "local": "2999-06-01 10:00"},
    ],
)
@pytest.mark.parametrize("zone", ["Asia/Shanghai", "America/New_York"])
def test_schedule_reminder_refuses_a_date_out_of_reach_as_a_bad_date(
    store: MemoryStore, arguments: dict[str, Any], zone: str
) -> None:
    caller = Caller(Actor("user", 1, "Ann"), "users/1")
    now = datetime(2026, 12, 1, 1, 0, tzinfo=UTC)
    desk = ReminderDesk(store, caller, 1, ZoneInfo(zone), lambda: now, "en")
    executor = ToolExecutor(store.namespace("users/1"), reminders=desk)
    result = run(executor, "scheduleReminder", arguments)
    assert result["ok"] is False and result["error"]["code"] == "MEMORY_INVALID"
    assert re.search("has passed|5 years ahead", result["error"]["message"])
    assert reminders.every(store) == []
