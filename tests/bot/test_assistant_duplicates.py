"""The model's addMemory: a duplicate or a near-duplicate is told back, and nothing is added."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from bench.fakes.openai_server import API_KEY, Answer, FakeOpenAI, ToolCalls
from bot.assistant.llm import ChatModel, RetryPolicy, make_client
from bot.assistant.prompt import system_prompt
from bot.assistant.turn import Assistant
from memory.files import MemoryStore

NOW = datetime(2026, 12, 1, 9, 30, tzinfo=UTC)


async def _assistant(llm: FakeOpenAI) -> Assistant:
    client = make_client(llm.base_url, API_KEY, 10.0)
    model = ChatModel(client, "test-model", retry=RetryPolicy(retries=0, backoff=0.01))
    return Assistant(model, None, clock=lambda: NOW)


async def test_add_memory_tells_the_model_of_duplicates_and_near_duplicates(
    tmp_path: Path,
) -> None:
    async with FakeOpenAI() as llm:
        assistant = await _assistant(llm)
        with MemoryStore(tmp_path / "data") as store:
            ns = store.namespace("users/1")
            old = ns.add("my code is in D:\\projects", ["code"])
            llm.script(
                ToolCalls(("addMemory", {"content": "My code is in D:\\projects."})),
                ToolCalls(("addMemory", {"content": "my code is now in E:\\work"})),
                ToolCalls(("updateMemory", {"id": old.id, "content": "my code is in E:\\work"})),
                Answer("Updated."),
            )
            result = await assistant.reply(ns, "my code is now in E:\\work", language="en")
            await assistant.aclose()
            assert result.ok and result.changes.added == []
            [record] = ns.export()
            assert record["content"] == "my code is in E:\\work"
        duplicate, near, _ = [
            json.loads(request.messages[-1]["content"]) for request in llm.requests[1:]
        ]
        assert duplicate["duplicate"] is True and duplicate["memory"]["id"] == old.id
        assert "Already remembered" in duplicate["message"]
        assert near["stored"] is False and near["nearDuplicates"][0]["id"] == old.id
        assert "updateMemory" in near["message"]


def test_the_system_prompt_tells_the_model_to_update_near_duplicates() -> None:
    text = system_prompt(now=NOW, language="en", memories=[])
    assert "nearDuplicates" in text and "updateMemory" in text
