"""Nothing on the event loop: one chat's slow store call must not hold up another chat.

    python -m bench.stall_bench [--memories 100000] [--runs 3] [--json FILE]

A namespace of ``--memories`` memories is opened cold by a fresh bot (the real
``Application``, the Bot API answered in-process by ``bot.chat.local_api.LocalBotAPI``), and its
owner sends ``/recall``: the namespace is loaded and its search index built, which takes
seconds at 100,000 memories. 20 ms later another user sends ``/help``, which needs no store at
all. Measured per run:

- ``help_ms``: from the ``/help`` update to its reply (the target is at most 50 ms: a store
  call running on the event loop would make it wait for the whole index build);
- ``recall_ms``: from the ``/recall`` update to its reply.

Updates are handled as the running bot handles them (concurrently across chats, in order
within one: ``bot.chat.updates.ChatOrderedUpdateProcessor``). Figures are medians over ``--runs``
runs, each in a fresh process.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from telegram import Update

from bench.bot_bench import prepare, running
from bench.store_bench import corpus_records, real_corpus, synthetic_records
from bot.chat.local_api import LocalBotAPI, Outgoing
from memory.files import MemoryStore

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "bench" / "data"
BIG_USER, SMALL_USER = 42, 43


def _update(update_id: int, user_id: int, text: str) -> dict[str, Any]:
    command = text.split(maxsplit=1)[0]
    return {
        "update_id": update_id,
        "message": {
            "message_id": update_id,
            "date": int(time.time()),
            "chat": {"id": user_id, "type": "private", "first_name": "B"},
            "from": {"id": user_id, "is_bot": False, "first_name": "B", "language_code": "en"},
            "text": text,
            "entities": [{"type": "bot_command", "offset": 0, "length": len(command)}],
        },
    }


async def one_run(memories: int) -> dict[str, float]:
    """Fill the big namespace, start a bot cold, time the two replies."""
    corpus = real_corpus(CORPUS)
    records = corpus_records(corpus[0], memories) if corpus else synthetic_records(memories)
    with tempfile.TemporaryDirectory() as folder:
        config = prepare(Path(folder), 0, "http://unused/bot", "0:local")
        with MemoryStore(config.data_dir) as store:
            store.namespace(f"users/{BIG_USER}").import_memories(records)
        replies: list[tuple[float, str]] = []

        def sent(outgoing: Outgoing) -> None:
            replies.append((time.perf_counter(), outgoing.text))

        chat = {"id": BIG_USER, "type": "private", "first_name": "B"}
        async with running(config, LocalBotAPI(sent, chat)) as application:
            recall = Update.de_json(_update(1, BIG_USER, "/recall train ticket"), application.bot)
            hello = Update.de_json(_update(2, SMALL_USER, "/help"), application.bot)
            started = time.perf_counter()
            await application.update_queue.put(recall)
            await asyncio.sleep(0.02)
            # When the user sent it: a loop held up by the first handler delays this very
            # line, and that delay is what is measured.
            asked = started + 0.02
            await application.update_queue.put(hello)
            while len(replies) < 2:
                await asyncio.sleep(0.001)
    help_at = next(at for at, text in replies if "/remember" in text)
    recall_at = next(at for at, text in replies if "/remember" not in text)
    return {"help_ms": (help_at - asked) * 1000, "recall_ms": (recall_at - started) * 1000}


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark and print its figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    os.environ.setdefault("PTB_TIMEDELTA", "1")  # as python -m bot does
    if args.child:
        print(json.dumps(asyncio.run(one_run(args.memories))))
        return
    runs = []
    for run in range(args.runs):
        command = [sys.executable, "-m", "bench.stall_bench", "--child"]
        command += ["--memories", str(args.memories)]
        out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
        runs.append(json.loads(out.strip().splitlines()[-1]))
        print(f"run {run + 1}: {runs[-1]}", file=sys.stderr)
    summary = {k: round(statistics.median(r[k] for r in runs), 1) for k in runs[0]}
    print(
        f"{args.memories} memories, cold /recall in one chat, /help in another 20 ms later; "
        f"median of {args.runs} runs: /help answered in {summary['help_ms']} ms, "
        f"/recall in {summary['recall_ms']} ms"
    )
    if args.json:
        args.json.write_text(json.dumps({"summary": summary, "runs": runs}, indent=2) + "\n")


if __name__ == "__main__":
    main()
