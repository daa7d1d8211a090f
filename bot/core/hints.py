"""When a one-line hint is shown: once a day per chat at most, and only where it helps.

Without a language model, a plain message is searched, and the reply may end with a hint that
notes can be said in words ("💡 Or say it in words: “remember that …” stores what follows",
after the "I found nothing" reply's own pointer to /remember). It helps a person who said
something and found nothing come back: they may have meant to store it. It does not help
under a reply that already carries 💾 Remember this (the button says it), nor under a question
that found its answer, and said under every message it is noise. So the door
(``bot.chat.noting``) offers it only when there is no 💾 button and the search found nothing,
and only when ``due`` says this chat has not been shown it in the last ``EVERY_SECONDS``;
``shown`` records that it was.

The time is kept per chat in the namespace's document ``hints/<chat>``, not durably: a hint
shown twice after a crash costs a line.
"""

from __future__ import annotations

import time
from typing import Any

from memory import update_document
from memory.interface import MemoryNamespace

PREFIX = "hints/"
EVERY_SECONDS = 24 * 3600


def due(namespace: MemoryNamespace, chat_id: int, name: str, now: float | None = None) -> bool:
    """Whether the hint ``name`` may be shown in ``chat_id`` now (not shown in a day)."""
    found = namespace.documents().get(f"{PREFIX}{chat_id}")
    at = found.value.get(name) if found is not None and isinstance(found.value, dict) else None
    moment = time.time() if now is None else now
    return not isinstance(at, int | float) or not 0 <= moment - at < EVERY_SECONDS


def shown(namespace: MemoryNamespace, chat_id: int, name: str, now: float | None = None) -> None:
    """Record that the hint ``name`` was shown in ``chat_id`` now."""
    moment = time.time() if now is None else now

    def change(value: Any) -> dict[str, Any]:
        kept = dict(value) if isinstance(value, dict) else {}
        kept[name] = moment
        return kept

    update_document(namespace.documents(), f"{PREFIX}{chat_id}", change, durable=False)
