"""What a tidy tells the chat: what it did, what it asks, and its buttons.

The report lists what changed (merged, marked past, ended, older values replaced), each with
the memories' first words, and asks about the conflicts it could not settle: one numbered item
each, with a row of buttons (keep the newer, keep the older, keep both). ↩ Undo reverts the
whole tidy (``memory.history``: it was one change). The buttons are ``tq:`` and ``cu:`` of
``bot.view.callbacks``.

This module is pure: no Telegram calls, no store.
"""

from __future__ import annotations

from collections.abc import Sequence

from telegram import InlineKeyboardButton, InlineKeyboardMarkup

from bot.core.tidying import Tidied
from bot.view import callbacks
from bot.view.i18n import t
from bot.view.render import escape, preview
from memory.model import Memory

LISTED = 3  # memories named per line of the report
PREVIEW = 60


def _named(memories: Sequence[Memory]) -> str:
    shown = [f"“{escape(preview(m.content, PREVIEW))}”" for m in memories[:LISTED]]
    more = len(memories) - len(shown)
    return ", ".join(shown) + (f" (+{more})" if more > 0 else "")


def render(
    tidied: Tidied, language: str, *, group: bool = False, change: str | None = None
) -> tuple[str, InlineKeyboardMarkup | None]:
    """The report of ``tidied`` in ``language`` (a group's, or a private chat's), and its
    buttons: each conflict's, then ↩ Undo for ``change``."""
    if not tidied.changed and not tidied.conflicts:
        return t(language, "tidy_nothing"), None
    lines = [t(language, "tidy_title_group" if group else "tidy_title")] if tidied.changed else []
    for key, memories in (
        ("tidy_merged", tidied.merged),
        ("tidy_past", tidied.past),
        ("tidy_ended", tidied.ended),
        ("tidy_resolved", [older for older, _ in tidied.resolved]),
    ):
        if memories:
            lines.append(t(language, key, count=len(memories), content=_named(memories)))
    rows: list[list[InlineKeyboardButton]] = []
    if tidied.conflicts and tidied.token is not None:
        if lines:
            lines.append("")
        lines.append(t(language, "tidy_question"))
        for number, conflict in enumerate(tidied.conflicts, start=1):
            newer = escape(preview(conflict.newer.content, PREVIEW * 2))
            older = escape(preview(conflict.older.content, PREVIEW * 2))
            lines.append(t(language, "tidy_question_item", index=number, newer=newer, older=older))
            rows.append(
                [
                    callbacks.TIDY_QUESTION.button(
                        t(language, f"button_tidy_{choice}_plain", index=number),
                        tidied.token,
                        number - 1,
                        choice[0],
                    )
                    for choice in ("newer", "older", "both")
                ]
            )
    if change is not None:
        lines += ["", t(language, "tidy_undo_hint")]
        rows.append([callbacks.UNDO.button(t(language, "button_undo_plain"), change)])
    return "\n".join(lines), InlineKeyboardMarkup(rows) if rows else None


__all__ = ["render"]
