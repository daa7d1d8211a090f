"""The bot's own JSON files and inputs, nested deeper than the parser's recursion allows.

``json.loads`` raises ``RecursionError`` for ``[`` x 100,000, which is not the ``ValueError`` its
callers expect from bad input: each place that parses a file or the model's arguments must treat
it as one more unreadable value.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.assistant.dialogue import HISTORY_FILE, USAGE_FILE, load_history, read_usage
from bot.assistant.executor import ToolExecutor
from bot.chat.inbox import Inbox
from memory.files import MemoryStore

DEEP = "[" * 100_000


@pytest.mark.parametrize("name", [HISTORY_FILE, USAGE_FILE])
def test_a_deeply_nested_history_or_usage_file_is_moved_aside(tmp_path: Path, name: str) -> None:
    folder = tmp_path / "users/1"
    folder.mkdir(parents=True)
    (folder / name).write_text(DEEP, encoding="utf-8")
    documents = MemoryStore(tmp_path).documents("users/1")
    assert load_history(documents) == []
    assert read_usage(documents).turns == 0
    (moved,) = folder.glob(f"{name}.corrupt-*")
    assert moved.read_text(encoding="utf-8") == DEEP


def test_a_deeply_nested_inbox_line_costs_nothing_else(tmp_path: Path) -> None:
    good = {"update": {"update_id": 1, "message": {"message_id": 1, "text": "hi"}}, "tries": 0}
    (tmp_path / ".bot").mkdir()
    (tmp_path / ".bot" / "inbox.jsonl").write_text(
        json.dumps(good) + "\n" + DEEP + "\n", encoding="utf-8"
    )
    recovered = Inbox.of(MemoryStore(tmp_path)).open()
    assert [pending.update_id for pending in recovered.again] == [1]


def test_deeply_nested_tool_arguments_are_refused_as_invalid(tmp_path: Path) -> None:
    with MemoryStore(tmp_path) as store:
        executor = ToolExecutor(store.namespace("users/1"))
        result = json.loads(executor.execute("addMemory", '{"content": ' + DEEP))
        assert result["error"]["code"] == "MEMORY_INVALID"
        assert "not valid JSON" in result["error"]["message"]
