"""Short random names for what waits for a person's press: a button carries the name only.

An add held for a choice between near-duplicates (``bot.core.adding``) and the model's changes
held for a confirmation (``bot.assistant.changes``) are kept in the namespace's documents under
a ``new_token()``: 48 random bits as URL-safe base64, eight characters, so that callback data
stays far below Telegram's 64 bytes and a press cannot guess another one. ``TOKEN_PATTERN`` is
what such a press may carry (``bot.view.callbacks`` checks it before anything is looked up).
"""

from __future__ import annotations

import secrets

TOKEN_PATTERN = r"[A-Za-z0-9_-]{8}"


def new_token() -> str:
    """A fresh token: eight characters of ``TOKEN_PATTERN``."""
    return secrets.token_urlsafe(6)
