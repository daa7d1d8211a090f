"""The assistant's side files in a namespace folder: short-term history and token usage.

``history.json`` holds the last messages of the conversation (user messages and the bot's
answers, not the tool traffic), so that "and the other one?" makes sense after a restart. It is
bounded: ``append`` keeps the newest ``keep`` entries, each cut to ``MAX_ENTRY_CHARS``.

``usage.json`` adds up the tokens the endpoint reported for this namespace (``/stats`` shows
them). Both are small JSON documents replaced atomically (a temporary file renamed over the old
one: a reader sees the old document or the new, never half of one) but, unlike memories, not
fsynced: they are conveniences, not the user's data, and an fsync costs 1-12 ms per file on a
busy disk, which would be most of a turn's own time. A restart keeps them; a power cut may
lose the last turn's entry. A file that does not parse is moved aside by
``memory.files.read_json`` and started afresh; entries of the wrong shape (a hand edit) are
skipped. Neither is a memory: ``MemoryStore.namespace_names``
does not list a folder that has only these.

Callers serialise access per namespace (``bot.assistant.turn`` holds a lock per namespace for a
turn).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memory.files import read_json, write_json_atomic
from memory.model import now_iso

HISTORY_FILE = "history.json"
USAGE_FILE = "usage.json"
MAX_ENTRY_CHARS = 2000
ROLES = ("user", "assistant")


def load_history(folder: Path) -> list[dict[str, str]]:
    """The stored messages, oldest first, as ``{"role", "content", "at"}``."""
    data = read_json(folder / HISTORY_FILE, [])
    if not isinstance(data, list):
        return []
    return [
        {"role": e["role"], "content": e["content"], "at": str(e.get("at", ""))}
        for e in data
        if isinstance(e, dict) and e.get("role") in ROLES and isinstance(e.get("content"), str)
    ]


def append_history(folder: Path, messages: list[tuple[str, str]], *, keep: int) -> None:
    """Add ``(role, content)`` messages and keep the newest ``keep`` (0 keeps no file)."""
    path = folder / HISTORY_FILE
    if keep <= 0:
        path.unlink(missing_ok=True)
        return
    at = now_iso()
    entries = load_history(folder)
    for role, content in messages:
        text = content if len(content) <= MAX_ENTRY_CHARS else content[:MAX_ENTRY_CHARS] + "…"
        entries.append({"role": role, "content": text, "at": at})
    write_json_atomic(path, entries[-keep:], durable=False)


@dataclass(frozen=True)
class Usage:
    """Tokens the endpoint reported for a namespace, in total."""

    turns: int = 0
    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    since: str = ""

    @property
    def total_tokens(self) -> int:
        """Prompt and completion tokens together."""
        return self.prompt_tokens + self.completion_tokens

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape of ``usage.json``."""
        return {
            "turns": self.turns,
            "requests": self.requests,
            "promptTokens": self.prompt_tokens,
            "completionTokens": self.completion_tokens,
            "since": self.since,
        }


def _count(data: dict[str, Any], key: str) -> int:
    value = data.get(key, 0)
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def read_usage(folder: Path) -> Usage:
    """The namespace's token totals (zeros if none were recorded)."""
    data = read_json(folder / USAGE_FILE, {})
    if not isinstance(data, dict):
        return Usage()
    return Usage(
        turns=_count(data, "turns"),
        requests=_count(data, "requests"),
        prompt_tokens=_count(data, "promptTokens"),
        completion_tokens=_count(data, "completionTokens"),
        since=str(data.get("since", "")),
    )


def add_usage(folder: Path, *, requests: int, prompt_tokens: int, completion_tokens: int) -> Usage:
    """Add one turn's figures to the namespace's totals and return the new totals."""
    old = read_usage(folder)
    new = Usage(
        turns=old.turns + 1,
        requests=old.requests + requests,
        prompt_tokens=old.prompt_tokens + prompt_tokens,
        completion_tokens=old.completion_tokens + completion_tokens,
        since=old.since or now_iso(),
    )
    write_json_atomic(folder / USAGE_FILE, new.to_dict(), durable=False)
    return new
