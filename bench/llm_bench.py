"""LLM turn benchmark: prompt tokens per turn, and the bot's own latency per turn.

    python -m bench.llm_bench [--memories 1000] [--turns 60] [--runs 5] [--json FILE]

A namespace of ``--memories`` synthetic memories (``bench.store_bench.synthetic_records``: two in
three English, one in three Chinese) answers free-text turns through the real ``Assistant`` and
the real openai SDK, against the fake OpenAI-compatible server of the tests on 127.0.0.1, which
answers at once. The turns cycle through three shapes: a direct answer (one request), an
``addMemory`` call then an answer, a ``searchMemory`` call then an answer (two requests each).
Ten warm-up turns fill the short-term history first, so measured turns carry a full one.

Per turn:

- ``prompt``: estimated tokens of the turn's first request (system prompt with the memory
  context, history, message and the eight tool schemas), with
  ``bot.assistant.prompt.estimate_tokens``; and its parts: ``memory`` (the memory context; default
  budget 1,500), ``history``, ``tools``;
- ``overhead``: the turn's time minus the time spent inside SDK calls
  (``TurnResult.overhead_seconds``): searching for the context, reading and writing history and
  usage (fsynced), building the prompt, running the tools (an ``addMemory`` fsyncs), thread hops;
- ``total``: the whole turn with the instant fake model (adds the SDK and loopback HTTP).

Each figure is the median over the turns of a run; the table shows the median over ``--runs``
runs, each a fresh process, for plain and streamed responses.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.store_bench import queries, synthetic_records
from bot.assistant.llm import ChatModel, make_client
from bot.assistant.prompt import estimate_tokens, memory_line
from bot.assistant.turn import Assistant
from memory.files import MemoryStore

WARMUP = 10


def _fake() -> Any:
    from bench.fakes import openai_server  # aiohttp: the dev extra; imported when run

    return openai_server


def _script(fake: Any, turn: int, query: str) -> list[Any]:
    shape = turn % 3
    if shape == 0:
        return [fake.Answer("Here is what I know about that.")]
    if shape == 1:
        note = {"content": f"benchmark note {turn}: {query}", "tags": ["bench", "note", "turn"]}
        return [fake.ToolCalls(("addMemory", note)), fake.Answer("Noted.")]
    return [fake.ToolCalls(("searchMemory", {"query": query})), fake.Answer("Found it.")]


async def _run(memories: int, turns: int, stream: bool) -> dict[str, float]:
    fake = _fake()
    with tempfile.TemporaryDirectory() as folder:
        store = MemoryStore(Path(folder))
        ns = store.namespace("users/1")
        ns.import_memories(synthetic_records(memories))
        everything = sum(estimate_tokens(memory_line(m)) + 1 for m in ns.memories())
        async with fake.FakeOpenAI() as server:
            model = ChatModel(
                make_client(server.base_url, fake.API_KEY, 30.0), "bench", stream=stream
            )
            assistant = Assistant(model, clock=lambda: datetime(2024, 5, 1, tzinfo=UTC))
            rows: list[dict[str, float]] = []
            for turn, query in enumerate(queries()[: WARMUP + turns]):
                server.script(*_script(fake, turn, query))
                first = len(server.requests)
                result = await assistant.reply(ns, query)
                assert result.ok, result.failure
                if turn < WARMUP:
                    continue
                body = server.requests[first].body
                messages = body["messages"]
                tools = estimate_tokens(json.dumps(body["tools"], ensure_ascii=False))
                history = sum(estimate_tokens(m["content"]) + 4 for m in messages[1:-1])
                prompt = sum(estimate_tokens(str(m["content"])) + 4 for m in messages) + tools
                rows.append(
                    {
                        "prompt_tokens": prompt,
                        "memory_tokens": result.context_tokens,
                        "memories_in_context": len(result.context_ids),
                        "history_tokens": history,
                        "tool_tokens": tools,
                        "overhead_ms": result.overhead_seconds * 1000,
                        "total_ms": result.seconds * 1000,
                    }
                )
            await assistant.aclose()
        store.close()
    out = {key: statistics.median(r[key] for r in rows) for key in rows[0]}
    out["overhead_p90_ms"] = statistics.quantiles([r["overhead_ms"] for r in rows], n=10)[-1]
    out["memory_tokens_max"] = max(r["memory_tokens"] for r in rows)
    out["whole_namespace_tokens"] = everything
    return out


def _one_run(memories: int, turns: int, stream: bool) -> dict[str, float]:
    """One run in a fresh process, so runs share no caches or warm connections."""
    code = (
        "import asyncio, json\n"
        "from bench.llm_bench import _run\n"
        f"print(json.dumps(asyncio.run(_run({memories}, {turns}, {stream}))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    result: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print a table (and JSON with ``--json``)."""
    parser = argparse.ArgumentParser(prog="python -m bench.llm_bench", description=__doc__)
    parser.add_argument("--memories", type=int, default=1000)
    parser.add_argument("--turns", type=int, default=60)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    results: dict[str, Any] = {
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "date": datetime.now(UTC).strftime("%Y-%m-%d"),
        },
        "memories": args.memories,
    }
    for mode, stream in (("plain", False), ("streamed", True)):
        runs = [_one_run(args.memories, args.turns, stream) for _ in range(args.runs)]
        row = {key: statistics.median(r[key] for r in runs) for key in runs[0]}
        results[mode] = row
        print(
            f"{mode:>8}, {args.memories} memories: prompt {row['prompt_tokens']:.0f} tokens "
            f"(memory context {row['memory_tokens']:.0f}, max {row['memory_tokens_max']:.0f}, "
            f"{row['memories_in_context']:.0f} memories; history {row['history_tokens']:.0f}; "
            f"tools {row['tool_tokens']:.0f}; all memories would be "
            f"{row['whole_namespace_tokens']:.0f}) | bot overhead {row['overhead_ms']:.1f} ms "
            f"median, {row['overhead_p90_ms']:.1f} ms p90 | whole turn with an instant model "
            f"{row['total_ms']:.1f} ms",
            flush=True,
        )
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
