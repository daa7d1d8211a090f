"""The assistant's documents in a namespace: the recent dialogue and token usage.

(Not ``memory.history``, the record of every change to a memory: this is what was said.)

``history`` (``history.json`` in the file store) holds the last messages of the conversation
(user messages and the bot's answers, not the tool traffic), so that "and the other one?"
makes sense after a restart. It is bounded: ``append`` keeps the newest ``keep`` entries,
each cut to ``MAX_ENTRY_CHARS``.

``usage`` (``usage.json``) adds up the tokens the endpoint reported for this namespace
(``/stats`` shows them). Both are documents of the store (``memory.documents.Documents``),
replaced whole (a reader sees the old document or the new, never half of one) but, unlike
memories, not durable: they are conveniences, not the user's data, and an fsync costs 1-12 ms
per file on a busy disk, which would be most of a turn's own time. A restart keeps them; a
power cut may lose the last turn's entry. A document that does not parse is set aside by the
store and started afresh; entries of the wrong shape (a hand edit) are skipped. Neither is a
memory: ``Store.namespace_names`` does not list a namespace that has only these.

Each change is a compare-and-set (``memory.update_document``): two turns of one namespace at
once, in two processes or replicas, both keep their messages and both count their tokens.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from memory import Documents, update_document
from memory.timestamps import now_iso

HISTORY = "history"  # document keys
USAGE = "usage"
HISTORY_FILE = "history.json"  # their files in the file store
USAGE_FILE = "usage.json"
MAX_ENTRY_CHARS = 2000
ROLES = ("user", "assistant")


def load_history(documents: Documents) -> list[dict[str, str]]:
    """The stored messages, oldest first, as ``{"role", "content", "at"}``."""
    found = documents.get(HISTORY)
    return _entries(found.value if found is not None else [])


def _entries(data: Any) -> list[dict[str, str]]:
    if not isinstance(data, list):
        return []
    return [
        {"role": e["role"], "content": e["content"], "at": str(e.get("at", ""))}
        for e in data
        if isinstance(e, dict) and e.get("role") in ROLES and isinstance(e.get("content"), str)
    ]


def append_history(documents: Documents, messages: list[tuple[str, str]], *, keep: int) -> None:
    """Add ``(role, content)`` messages and keep the newest ``keep`` (0 keeps no document)."""
    if keep <= 0:
        documents.delete(HISTORY)
        return
    at = now_iso()
    added = [
        {
            "role": role,
            "content": content
            if len(content) <= MAX_ENTRY_CHARS
            else content[:MAX_ENTRY_CHARS] + "…",
            "at": at,
        }
        for role, content in messages
    ]
    update_document(documents, HISTORY, lambda old: [*_entries(old), *added][-keep:], durable=False)


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


def read_usage(documents: Documents) -> Usage:
    """The namespace's token totals (zeros if none were recorded)."""
    found = documents.get(USAGE)
    return _usage(found.value if found is not None else {})


def _usage(data: Any) -> Usage:
    if not isinstance(data, dict):
        return Usage()
    return Usage(
        turns=_count(data, "turns"),
        requests=_count(data, "requests"),
        prompt_tokens=_count(data, "promptTokens"),
        completion_tokens=_count(data, "completionTokens"),
        since=str(data.get("since", "")),
    )


def add_usage(
    documents: Documents, *, requests: int, prompt_tokens: int, completion_tokens: int
) -> Usage:
    """Add one turn's figures to the namespace's totals and return the new totals."""
    now = now_iso()

    def add(data: Any) -> dict[str, Any]:
        old = _usage(data)
        return Usage(
            turns=old.turns + 1,
            requests=old.requests + requests,
            prompt_tokens=old.prompt_tokens + prompt_tokens,
            completion_tokens=old.completion_tokens + completion_tokens,
            since=old.since or now,
        ).to_dict()

    return _usage(update_document(documents, USAGE, add, durable=False))
