"""Inline buttons of the memories: how they look, and what pressing them does.

🗑 under /list and a /related result, Delete / Keep in the confirmation it asks, ⋯ under a
/recall result (the memory's own menu: 🗑 Forget, 🔗 Related, 🕘 History), ◀ ▶ of /list and of
/recall; their callback data is in the one table, ``bot.view.callbacks``.

Nothing is trusted: a press is resolved in the namespace of the person who pressed, in the chat
where they pressed (``bot.chat.presses``), so a callback crafted with the id of another
namespace's memory finds nothing and is refused. In a group, 🗑 and Delete work only for the
member who stored the memory or an administrator (``bot.core.policy``, through
``bot.core.operations``), whoever asked for the confirmation. A page number out of range is
clamped.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence

from telegram import InlineKeyboardButton, InlineKeyboardMarkup, Update
from telegram.ext import ContextTypes

from bot import categories
from bot.categories import canonical, in_category
from bot.chat.access import run_changing
from bot.chat.presses import Press, pressed
from bot.chat.services import services
from bot.core import operations
from bot.errors import NotAllowed
from bot.view import callbacks
from bot.view.i18n import language_of, t
from bot.view.render import PREVIEW_CHARS, escape, memory_block, memory_list, preview
from bot.view.replies import edit_html, reply_html
from memory.errors import MemoryInvalid, MemoryNotFound
from memory.model import Memory

PAGE_SIZE = 10
FORGET_ROW = 5  # 🗑 buttons a row under /list
BUTTON_PREVIEW = 32


def category_key(category: str) -> str:
    """A category's name as 8 hex digits (CRC-32), short enough for any callback data."""
    return f"{zlib.crc32(category.encode()):08x}"


# -- views -------------------------------------------------------------------------------------


def with_row(
    keyboard: InlineKeyboardMarkup | None, row: Sequence[InlineKeyboardButton]
) -> InlineKeyboardMarkup | None:
    """``keyboard`` with ``row`` added as its last row (no row: the keyboard as it was)."""
    if not row:
        return keyboard
    rows = list(keyboard.inline_keyboard) if keyboard is not None else []
    return InlineKeyboardMarkup([*rows, list(row)])


def forget_keyboard(
    memories: Sequence[Memory], language: str, *, start: int = 0
) -> InlineKeyboardMarkup | None:
    """One 🗑 button per listed memory, numbered as in the list (from ``start`` + 1)."""
    rows = []
    for index, memory in enumerate(memories, start=start + 1):
        label = preview(memory.content, BUTTON_PREVIEW)
        text = t(language, "button_forget_plain", index=index, preview=label)
        rows.append([callbacks.FORGET.button(text, memory.id)])
    return InlineKeyboardMarkup(rows) if rows else None


def forget_prompt(memory: Memory, language: str) -> tuple[str, InlineKeyboardMarkup]:
    """The confirmation asked before forgetting ``memory``, with Delete / Keep."""
    keyboard = InlineKeyboardMarkup(
        [
            [
                callbacks.DELETE.button(t(language, "button_delete_plain"), memory.id),
                callbacks.KEEP.button(t(language, "button_keep_plain"), memory.id),
            ]
        ]
    )
    text = t(
        language,
        "forget_confirm",
        memory=memory_block(memory, limit=PREVIEW_CHARS, language=language),
    )
    return text, keyboard


def page_view(
    memories: Sequence[Memory],
    page: int,
    category: str | None,
    language: str,
    *,
    tag: str | None = None,
) -> tuple[str, InlineKeyboardMarkup | None]:
    """Page ``page`` (0-based, clamped) of /list (``memories``, newest first), with a 🗑 for each
    memory shown and ◀ ▶; ``memories`` are those of ``category`` (either language's word for a
    known one: shown in the reader's, named in the buttons by its stored one), or of ``tag`` if
    given. The whole list keeps reminders' memories apart: they are counted at its end, and
    listed with ``/list reminder``."""
    apart = 0
    if category is None and tag is None:
        kept = [m for m in memories if m.category != operations.REMINDER_CATEGORY]
        apart, memories = len(memories) - len(kept), kept
    category = canonical(category) if category else None
    label = f" ({escape(categories.shown(category, language))})" if category else ""
    if tag is not None:
        label = f" (#{escape(tag)})"
    tail = f"\n\n{t(language, 'list_reminders_apart', count=apart)}" if apart else ""
    if not memories:
        return t(language, "list_empty", category=label) + tail, None
    pages = -(-len(memories) // PAGE_SIZE)
    page = min(max(page, 0), pages - 1)
    shown = memories[page * PAGE_SIZE : (page + 1) * PAGE_SIZE]
    title = t(
        language,
        "list_title",
        category=label,
        page=page + 1,
        pages=pages,
        total=len(memories),
    )
    first = page * PAGE_SIZE
    blocks = [
        memory_block(m, first + i, limit=PREVIEW_CHARS, language=language)
        for i, m in enumerate(shown, start=1)
    ]
    key = [category_key(category)] if category else []
    if tag is not None:
        key = [f"#{category_key(tag)}"]
    forget = [callbacks.FORGET.button(f"🗑 {first + i}", m.id) for i, m in enumerate(shown, start=1)]
    rows = [forget[i : i + FORGET_ROW] for i in range(0, len(forget), FORGET_ROW)]
    nav = []
    if page > 0:
        nav.append(callbacks.LIST_PAGE.button(t(language, "button_prev_plain"), page - 1, *key))
    if page < pages - 1:
        nav.append(callbacks.LIST_PAGE.button(t(language, "button_next_plain"), page + 1, *key))
    if nav:
        rows.append(nav)
    return "\n\n".join([title, *blocks]) + tail, InlineKeyboardMarkup(rows)


def results_view(
    title: str, memories: Sequence[Memory], language: str
) -> tuple[str, InlineKeyboardMarkup | None]:
    """A titled list of memories in full, with a 🗑 button for each."""
    return memory_list(title, memories, language=language), forget_keyboard(memories, language)


def menu_row(memories: Sequence[Memory], *, start: int = 0) -> list[InlineKeyboardButton]:
    """One "⋯ N" button per listed memory (numbered from ``start`` + 1): its own menu."""
    if len(memories) == 1 and start == 0:
        return [callbacks.MENU.button("⋯", memories[0].id)]
    return [callbacks.MENU.button(f"⋯ {i}", m.id) for i, m in enumerate(memories, start=start + 1)]


def recall_view(
    found: operations.Matches, language: str, *, footer: str = ""
) -> tuple[str, InlineKeyboardMarkup | None]:
    """A page of /recall: the answers (or "I found nothing about ..." with a hint), the weaker
    matches on the pages after them ("More ▶"), or the newest memories of a blank /recall.

    Each memory shown has a "⋯" button to its own menu (🗑 Forget, 🔗 Related, 🕘 History):
    a search result carries no 🗑 of its own, so that a reply is read, not pruned by mistake.
    A memory a newer one shown before it gives another value is marked "(older)".
    """
    tail = f"\n\n{footer}" if footer else ""
    total = f"{found.total}+" if found.capped else str(found.total)
    older = t(language, "older_mark")  # a newer memory gives the same thing another value
    blocks = [
        memory_block(m, i, language=language, note=older if m.id in found.older else "")
        for i, m in enumerate(found.memories, start=found.start + 1)
    ]
    if not found.query:
        last = found.start + len(found.memories)
        counted = (
            t(language, "recall_range", first=found.start + 1, last=last, total=total)
            if found.start
            else t(language, "recall_count", count=len(found.memories), total=total)
        )
        head = f"{t(language, 'recent_title')} {counted}"
    elif not found.weaker:
        question = escape(preview(found.query, 80))
        if found.memories:
            head = t(language, "recall_answer_title", query=question)
            if len(found.memories) == 1:
                blocks = [memory_block(found.memories[0], language=language)]
        elif found.statement:  # told, not asked: nothing it updates or touches is stored yet
            head = t(language, "statement_new", query=question)
        else:
            head = t(language, "recall_none", query=question) + "\n" + t(language, "recall_hint")
    else:
        last = found.start + len(found.memories)
        head = t(
            language,
            "recall_weaker_title",
            query=escape(preview(found.query, 80)),
            first=found.start + 1 - found.answers,
            last=last - found.answers,
            total=f"{found.total - found.answers}{'+' if found.capped else ''}",
        )
    text = "\n\n".join([head, *blocks]) + tail
    rows: list[Sequence[InlineKeyboardButton]] = []
    if found.memories:
        rows.append(menu_row(found.memories, start=found.start))
    key = [found.token] if found.query and found.token else []
    if found.query and not key:
        return text, InlineKeyboardMarkup(rows) if rows else None  # nothing more to show
    nav = []
    if found.page:
        nav.append(
            callbacks.RECALL_PAGE.button(t(language, "button_prev_plain"), found.page - 1, *key)
        )
    if found.more:
        left = found.total - found.start - len(found.memories)
        if found.query and not found.answers and not found.page:
            label = t(language, "button_closest_plain")
        else:
            label = t(
                language, "button_more_count_plain", count=f"{left}{'+' if found.capped else ''}"
            )
        nav.append(callbacks.RECALL_PAGE.button(label, found.page + 1, *key))
    if nav:
        rows.append(nav)
    return text, InlineKeyboardMarkup(rows) if rows else None


def memory_menu(memory: Memory, language: str) -> tuple[str, InlineKeyboardMarkup]:
    """A memory's own menu: the memory, and 🗑 Forget, 🔗 Related, 🕘 History."""
    keyboard = InlineKeyboardMarkup(
        [
            [
                callbacks.FORGET.button(t(language, "button_menu_forget_plain"), memory.id),
                callbacks.RELATED.button(t(language, "button_menu_related_plain"), memory.id),
                callbacks.HISTORY.button(t(language, "button_menu_history_plain"), memory.id),
            ]
        ]
    )
    return memory_block(memory, limit=PREVIEW_CHARS, language=language), keyboard


# -- presses -----------------------------------------------------------------------------------


async def _pressed_to_change(
    update: Update, context: ContextTypes.DEFAULT_TYPE
) -> tuple[Press, Memory] | None:
    """Like ``presses.pressed``, for a button that changes its memory: None (the press
    answered with why) when the memory is gone or the presser may not change it."""
    press = await pressed(update, context)
    if press is None:
        return None
    try:
        memory = await run_changing(
            update, context, press.caller, operations.find_changeable, press.value
        )
    except (MemoryNotFound, MemoryInvalid):
        await press.stale()
        return None
    except NotAllowed:
        await press.refuse("not_yours_plain")
        return None
    return press, memory


async def ask_forget(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """🗑 pressed under a result: ask for confirmation in a new message."""
    found = await _pressed_to_change(update, context)
    if found is None:
        return
    press, memory = found
    await press.answer()
    text, keyboard = forget_prompt(memory, press.language)
    await reply_html(press.message, text, keyboard)


async def confirm_forget(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """ "Delete" pressed in a confirmation: forget the memory."""
    press = await pressed(update, context)
    if press is None:
        return
    try:
        memory = await run_changing(update, context, press.caller, operations.forget, press.value)
    except (MemoryNotFound, MemoryInvalid):  # gone (another member or process deleted it)
        await press.stale()
        return
    except NotAllowed:
        await press.refuse("not_yours_plain")
        return
    await press.answer()
    content = escape(preview(memory.content, 200))
    await edit_html(press.query, t(press.language, "forgotten", content=content))


async def keep(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """ "Keep" pressed in a confirmation: leave the memory alone."""
    press = await pressed(update, context)
    if press is None:
        return
    try:
        memory: Memory | None = await services(context).workers.run(
            press.caller.namespace, operations.find, press.value
        )
    except (MemoryNotFound, MemoryInvalid):
        memory = None
    await press.answer()
    if memory is None:
        await edit_html(press.query, t(press.language, "cancelled"))
    else:
        content = escape(preview(memory.content, 200))
        await edit_html(press.query, t(press.language, "kept", content=content))


async def turn_page(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """◀ or ▶ pressed under /list: show that page."""
    press = await pressed(update, context)
    if press is None:
        return
    page, *key = press.value.split(":")
    memories = await services(context).workers.run(press.caller.namespace, operations.listing)
    category = tag = None
    if key and key[0].startswith("#"):
        tags = {label for m in memories for label in m.tags}
        tag = next((x for x in sorted(tags) if category_key(x) == key[0][1:]), "")
        memories = [m for m in memories if tag in m.tags]
    elif key:
        # The stored names, and each as canonical: a button sent before names 健康 by itself.
        names = {name for m in memories for name in (m.category, canonical(m.category))}
        category = next((c for c in sorted(names) if category_key(c) == key[0]), None)
        memories = in_category(memories, category) if category is not None else []
    await press.answer()
    text, keyboard = page_view(memories, int(page), category, press.language, tag=tag)
    await edit_html(press.query, text, keyboard)


async def turn_recall_page(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """◀ or ▶ pressed under /recall: show that page of the same matches (not a use)."""
    press = await pressed(update, context)
    if press is None:
        return
    page, *token = press.value.split(":")
    found_services = services(context)
    question = ""
    if token:
        documents = found_services.store.documents(press.caller.namespace)
        kept = await found_services.workers.call(
            lambda: operations.recall_query(documents, token[0])
        )
        if kept is None:  # forgotten since (only the last few are kept), or another namespace's
            await press.stale()
            return
        question = kept
    found = await found_services.workers.run(
        press.caller.namespace, operations.recall_page, question, int(page), use=False
    )
    await press.answer()
    if not found.memories and not found.query:
        await edit_html(press.query, t(press.language, "no_memories"))
        return
    text, keyboard = recall_view(found, press.language)
    await edit_html(press.query, text, keyboard)


async def open_menu(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """⋯ pressed under a result: the memory's own menu, in a new message (not a use)."""
    press = await pressed(update, context)
    if press is None:
        return
    try:
        memory = await services(context).workers.run(
            press.caller.namespace, operations.find, press.value
        )
    except (MemoryNotFound, MemoryInvalid):
        await press.stale()
        return
    await press.answer()
    text, keyboard = memory_menu(memory, press.language)
    await reply_html(press.message, text, keyboard)


async def unknown_button(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """A press whose data this bot does not know (an old or crafted button)."""
    query = update.callback_query
    assert query is not None
    await query.answer(t(language_of(update.effective_user), "stale_plain"), show_alert=True)
