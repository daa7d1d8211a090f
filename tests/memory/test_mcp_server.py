"""``python -m memory ... mcp``: a namespace served over MCP, driven by the ``mcp`` package's
own client (``stdio_client`` spawning the server, ``ClientSession``), on files and PostgreSQL."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from backends import BACKENDS

pytest.importorskip("mcp")

from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp_types import CallToolResult

from memory import open_store
from memory.cli import main
from memory.model import MAX_CONTENT_CHARS

ROOT = Path(__file__).resolve().parents[2]
NS = "users/42"


@pytest.fixture(params=BACKENDS)
def location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A store on each backend: a data directory, a fresh PostgreSQL database."""
    if request.param == "files":
        return str(tmp_path / "data")
    return str(request.getfixturevalue("pg_url"))


def command(location: str, *options: str) -> list[str]:
    return ["-m", "memory", "--store", location, "--ns", NS, "mcp", "--keywords", *options]


@asynccontextmanager
async def session(location: str, tmp_path: Path, *options: str) -> AsyncIterator[ClientSession]:
    """A client session with the server spawned on ``location`` (its log in ``server.log``)."""
    params = StdioServerParameters(
        command=sys.executable, args=command(location, *options), cwd=str(ROOT)
    )
    with (tmp_path / "server.log").open("w") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as client,
        ):
            await client.initialize()
            yield client


async def call(client: ClientSession, tool: str, **arguments: Any) -> dict[str, Any]:
    """The structured result of a call that succeeded."""
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    assert isinstance(result.structured_content, dict)
    assert json.loads(text_of(result)) == result.structured_content
    return result.structured_content


async def refused(client: ClientSession, tool: str, arguments: dict[str, Any]) -> str:
    """The error text of a call that failed (as a tool result: the server goes on)."""
    result = await client.call_tool(tool, arguments)
    assert result.is_error, result.structured_content
    return text_of(result)


def text_of(result: CallToolResult) -> str:
    [content] = result.content
    assert content.type == "text"
    return content.text


async def test_the_tools_are_listed_with_their_json_schemas(tmp_path: Path) -> None:
    async with session(str(tmp_path / "data"), tmp_path) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(tools) == {
        "search",
        "remember",
        "list",
        "get",
        "update",
        "forget",
        "related",
        "stats",
    }
    for tool in tools.values():
        assert tool.description
        assert tool.input_schema["type"] == "object"
        assert tool.input_schema["additionalProperties"] is False
    assert tools["remember"].input_schema["required"] == ["content"]
    assert tools["remember"].input_schema["properties"]["content"]["maxLength"] == 4000
    assert tools["search"].input_schema["required"] == ["query"]
    assert tools["forget"].annotations is not None and tools["forget"].annotations.destructive_hint
    assert tools["search"].annotations is not None and tools["search"].annotations.read_only_hint


async def test_remember_search_update_and_forget_through_the_client(
    location: str, tmp_path: Path
) -> None:
    async with session(location, tmp_path) as client:
        stored = await call(
            client, "remember", content="代码在 D:\\projects", tags=["代码", "项目"]
        )
        assert stored["stored"] is True
        memory_id = stored["memory"]["id"]
        again = await call(client, "remember", content="代码在  D:\\projects")  # folded alike
        assert again["stored"] is False and again["duplicate"] is True
        assert again["memory"]["id"] == memory_id
        assert "Already stored" in again["message"]
        other = await call(client, "remember", content="standup is at 10:00", category="Work")
        assert other["memory"]["category"] == "work"

        found = await call(client, "search", query="我的代码在哪里？")
        assert [m["id"] for m in found["memories"]] == [memory_id]
        assert found["memories"][0]["accessCount"] == 1  # the answer counts as used
        assert "source" not in found["memories"][0]  # no bookkeeping of the bot's
        nothing = await call(client, "search", query="passport")
        assert nothing["count"] == 0 and nothing["note"]

        changed = await call(client, "update", id=str(memory_id), content="代码在 E:\\work")
        assert changed["memory"]["content"] == "代码在 E:\\work"
        assert (await call(client, "get", id=memory_id))["memory"]["content"] == "代码在 E:\\work"
        listed = await call(client, "list")
        assert listed["total"] == 2 and listed["memories"][0]["id"] == memory_id
        assert (await call(client, "list", category="work"))["total"] == 1
        assert (await call(client, "stats"))["total"] == 2
        assert (await call(client, "related", id=memory_id))["count"] == 0

        deleted = await call(client, "forget", id=memory_id)
        assert deleted["deleted"]["id"] == memory_id
        assert "MEMORY_NOT_FOUND" in await refused(client, "get", {"id": memory_id})

    # Closed on exit: every change is in the store, and in its history as the MCP server's.
    with open_store(location) as store:
        namespace = store.namespace(NS)
        assert [m.content for m in namespace.memories()] == ["standup is at 10:00"]
        records = namespace.history().records
        assert [r.op for r in records] == ["add", "add", "update", "delete"]
        assert {(r.author.by, r.author.door) for r in records} == {("mcp", "mcp")}
        assert len({r.author.change for r in records}) == 4  # one change per call
    if "://" not in location:  # the file store compacted on close: memory.json is complete
        saved = json.loads((Path(location) / NS / "memory.json").read_text("utf-8"))
        assert [m["content"] for m in saved] == ["standup is at 10:00"]


async def test_bad_arguments_get_mcp_errors_and_the_server_goes_on(tmp_path: Path) -> None:
    async with session(str(tmp_path / "data"), tmp_path) as client:
        wrong = {
            ("remember", '{"content": ""}'): "content is empty",
            ("remember", json.dumps({"content": "x" * (MAX_CONTENT_CHARS + 1)})): "maximum",
            ("remember", '{"content": "a", "tags": "a,b"}'): "tags must be a list of strings",
            ("remember", '{"content": "a", "colour": "red"}'): "unknown argument 'colour'",
            ("remember", "{}"): "missing required argument 'content'",
            ("search", '{"query": "x", "limit": "ten"}'): "limit must be a whole number",
            ("search", '{"query": "x", "limit": 0}'): "limit must be between 1 and 50",
            ("search", '{"query": 42}'): "query must be a string",
            ("get", '{"id": "abc"}'): "not a memory id",
            ("get", '{"id": true}'): "id must be a whole number or a string",
            ("get", '{"id": -5}'): "out of range",
            ("get", '{"id": 99999999999999999999999}'): "out of range",
            ("forget", '{"id": 123}'): "MEMORY_NOT_FOUND",
            ("update", '{"id": 123}'): "nothing to update",
            ("forgetAll", "{}"): "unknown tool 'forgetAll'",
        }
        for (tool, arguments), expected in wrong.items():
            text = await refused(client, tool, json.loads(arguments))
            assert text.startswith("error [") and expected in text, (tool, arguments, text)
        assert (await call(client, "remember", content="still serving"))["stored"] is True
    assert "Traceback" not in (tmp_path / "server.log").read_text("utf-8")


async def test_near_duplicates_are_returned_and_stored_only_with_keep_both(
    tmp_path: Path,
) -> None:
    async with session(str(tmp_path / "data"), tmp_path) as client:
        await call(client, "remember", content="the wifi password is hunter2")
        near = await call(client, "remember", content="the wifi password is hunter3")
        assert near["stored"] is False and near["nearDuplicates"]
        assert near["nearDuplicates"][0]["content"] == "the wifi password is hunter2"
        kept = await call(client, "remember", content="the wifi password is hunter3", keepBoth=True)
        assert kept["stored"] is True
        assert (await call(client, "list"))["total"] == 2


async def test_read_only_offers_no_tool_that_changes(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with open_store(data) as store:
        store.namespace(NS).add("the spare key is under the mat")
    async with session(str(data), tmp_path, "--read-only") as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert names == {"search", "list", "get", "related", "stats"}
        assert "unknown tool 'forget'" in await refused(client, "forget", {"id": 1})
        found = await call(client, "search", query="where is the spare key?")
        assert found["count"] == 1


def test_standard_output_carries_the_protocol_alone(tmp_path: Path) -> None:
    """Spoken to in raw JSON-RPC: every line it writes is a protocol message, even when the
    namespace's file is unreadable (set aside, and said on standard error)."""
    folder = tmp_path / "data" / NS
    folder.mkdir(parents=True)
    (folder / "memory.json").write_text("[{not json", "utf-8")
    messages = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "stats"}},
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "get", "arguments": {"id": "x"}},
        },
    ]
    server = subprocess.Popen(
        [sys.executable, *command(str(tmp_path / "data"))],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    watchdog = threading.Timer(60, server.kill)  # a server that never answers fails, not hangs
    watchdog.start()
    try:
        assert server.stdin is not None and server.stdout is not None
        answers = []
        for message in messages:  # one at a time, as a client waits for each answer
            server.stdin.write(json.dumps(message) + "\n")
            server.stdin.flush()
            if "id" in message:
                answers.append(json.loads(server.stdout.readline()))
        _, stderr = server.communicate()  # stdin closed: the server stops
    finally:
        watchdog.cancel()
    assert server.returncode == 0, stderr
    assert [a["id"] for a in answers] == [1, 2, 3]
    assert all(a["jsonrpc"] == "2.0" for a in answers)
    assert answers[1]["result"]["structuredContent"]["total"] == 0
    assert answers[2]["result"]["isError"] is True
    assert "moved aside" in stderr


def test_without_the_mcp_package_it_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    for name in ["mcp", *(n for n in sys.modules if n.startswith("mcp."))]:
        monkeypatch.setitem(sys.modules, name, None)  # as if it were not installed
    monkeypatch.delitem(sys.modules, "memory.mcp_server", raising=False)
    status = main(["--data-dir", str(tmp_path), "--ns", NS, "mcp"])
    out, err = capsys.readouterr()
    assert status == 1 and out == ""
    assert "pip install 'cogito-memory-bot[mcp]'" in err
