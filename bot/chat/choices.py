"""The buttons of an add held for a near-duplicate: keep both, replace the old one, cancel;
and what a replacement says ("🔁 Replaced: old → new", with ↩ Undo).

A button carries the waiting add's token only (``bot.core.adding``: the text stays on the
server; ``nk:``, ``nr:``, ``nc:`` in ``bot.view.callbacks``): "Keep both" stores the new memory
beside the old ones, "Replace" puts the new text in the n-th near-duplicate listed, "Cancel"
stores nothing.

As every button, a press is resolved in the namespace of the person who pressed, in the chat
where they pressed (``bot.chat.presses``). In a group only who asked, or an administrator, may
choose, and replacing needs the right to change the old memory (``bot.core.policy``).
"""

from __future__ import annotations

from collections.abc import Sequence

from telegram import InlineKeyboardMarkup, Update
from telegram.ext import ContextTypes

from bot.chat.access import run_changing
from bot.chat.presses import pressed
from bot.core import adding
from bot.errors import NotAllowed
from bot.view import callbacks
from bot.view.i18n import t
from bot.view.render import PREVIEW_CHARS, escape, memory_block, meta_line, preview
from bot.view.replies import edit_html
from memory.duplicates import Near
from memory.errors import MemoryInvalid, MemoryNotFound
from memory.history import current_author
from memory.model import Memory

BUTTON_PREVIEW = 24
CHOICES = {
    callbacks.KEEP_BOTH.prefix: "keep",
    callbacks.REPLACE.prefix: "replace",
    callbacks.CANCEL_ADD.prefix: "cancel",
}  # what each button asks of ``bot.core.adding.settle``


def replaced_reply(
    old: Memory, memory: Memory, language: str, change: str | None = None
) -> tuple[str, InlineKeyboardMarkup | None]:
    """What replacing ``old`` by ``memory`` (its new version) says, with ↩ Undo for the
    ``change`` that did it (``memory.history``: the old version comes back)."""
    text = t(
        language,
        "replaced",
        old=escape(preview(old.content, PREVIEW_CHARS)),
        new=escape(memory.content),
        meta=meta_line(memory, language),
    )
    if change is None:
        return text, None
    undo = callbacks.UNDO.button(t(language, "button_undo_plain"), change)
    return text, InlineKeyboardMarkup([[undo]])


def choice_prompt(
    content: str, found: Sequence[Near], token: str, language: str
) -> tuple[str, InlineKeyboardMarkup]:
    """The question asked before storing ``content`` beside its near-duplicates ``found``: a
    new value for the first of them (an ``update``) is asked as such."""
    update = bool(found) and found[0].reason == "update"
    near = [n.memory for n in found]
    blocks = [
        memory_block(m, i, limit=PREVIEW_CHARS, language=language)
        for i, m in enumerate(near, start=1)
    ]
    key = "near_update" if update else "near_duplicate"
    text = t(language, key, content=escape(preview(content, 200)))
    rows = [[callbacks.KEEP_BOTH.button(t(language, "button_keep_both_plain"), token)]]
    for index, memory in enumerate(near):
        label = t(
            language,
            "button_replace_plain",
            index=index + 1,
            preview=preview(memory.content, BUTTON_PREVIEW),
        )
        rows.append([callbacks.REPLACE.button(label, token, index)])
    rows.append([callbacks.CANCEL_ADD.button(t(language, "button_cancel_plain"), token)])
    return "\n\n".join([text, *blocks]), InlineKeyboardMarkup(rows)


async def choose(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Keep both, Replace or Cancel pressed under a near-duplicate's question."""
    press = await pressed(update, context)
    if press is None:
        return
    choice = CHOICES[press.prefix]
    token, _, index = press.value.partition(":")
    try:
        settled = await run_changing(
            update, context, press.caller, adding.settle, token, choice, int(index or 0)
        )
    except NotAllowed:
        await press.refuse("not_yours_choice_plain")
        return
    except (MemoryNotFound, MemoryInvalid):
        settled = None
    if settled is None:
        await press.stale()
        return
    await press.answer()
    language, query = press.language, press.query
    if settled.memory is None:
        await edit_html(query, t(language, "cancelled"))
    elif settled.replaced is not None:
        text, keyboard = replaced_reply(
            settled.replaced, settled.memory, language, current_author().change
        )
        await edit_html(query, text, keyboard)
    elif settled.duplicate:
        await edit_html(
            query,
            t(
                language,
                "already_remembered",
                memory=memory_block(settled.memory, language=language),
            ),
        )
    else:
        await edit_html(
            query, t(language, "remembered", memory=memory_block(settled.memory, language=language))
        )
