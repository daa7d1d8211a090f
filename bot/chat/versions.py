"""The versions of memories, as Telegram sees them: /undo, /history and their buttons.

The records are the store's (``memory.history``: every change to a memory, by whom, when and
through which door, one *change* per update, the model's whole turn included); this module
reads them through ``bot.core.undoing`` and renders them. Its buttons
(``bot.view.callbacks``): ↩ Undo (``cu:``) under the "🧠 Memory updated" line (the model's
turn) and under what Apply all did, and nowhere else: it undoes that one change; under
/history, a version's button (``hv:``) puts back the version its record left (for a deletion:
the memory as it was, with its id, times and counts).

``/undo`` reverts the newest change made in this chat that is not undone yet; again, the one
before. Undoing a change also cancels the reminders it set (the model's turn, an Apply all:
``bot.assistant.reminder_desk.cancel_change``), those the caller may cancel. In a group's
shared namespace a member undoes only their own changes (the model's on their behalf
included) and an administrator anyone's (``Caller.may_undo``), so an administrator's /undo
asks Telegram once whether they are one. A memory changed since the
change (by anyone, anywhere) is left as it is, and the reply says by whom and when and points
to ``/history <id>``, where a version can be picked (``memory.history`` explains the choice).

As every button, a press is resolved in the namespace of the person who pressed, in the chat
where they pressed: a ref or change of another namespace finds nothing. In a group, ♻ Restore
brings back a deleted memory for its author only if they deleted it themselves; what an
administrator deleted only an administrator restores (``Caller.may_restore``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from telegram import InlineKeyboardButton, InlineKeyboardMarkup, Message, Update
from telegram.ext import ContextTypes

from bot.assistant.reminder_desk import cancel_change
from bot.chat.access import caller_of, run_changing, with_admin
from bot.chat.presses import pressed
from bot.chat.services import services
from bot.core import operations, undoing
from bot.core.policy import Caller
from bot.core.reminders import Reminder
from bot.errors import NotAllowed, RestoreNotAllowed
from bot.jobs import reminder_memory
from bot.view import callbacks, reminder_view
from bot.view.i18n import STRINGS, language_of, t
from bot.view.render import escape, memory_block, preview
from bot.view.replies import reply_html
from memory.errors import MemoryInvalid, MemoryNotFound
from memory.history import ChangeRecord, History, Undone, state, versions
from memory.model import Memory

RECENT = 10  # changes listed by /history without an id
VERSIONS = 10  # versions of one memory listed by /history <id>
BUTTONS = 6  # restore buttons under one /history reply
PREVIEW = 80
OP_ICONS = {"add": "➕", "import": "📥", "update": "✏️", "restore": "♻️", "delete": "🗑", "keep": "⏸"}


# -- views -------------------------------------------------------------------------------------


def _when(record: ChangeRecord) -> str:
    return escape(record.at[:16].replace("T", " ")) + " UTC"


def _word(language: str, key: str, fallback: str) -> str:
    return STRINGS.get(language, STRINGS["en"]).get(key, fallback)


def _who(record: ChangeRecord, language: str) -> str:
    """Who made a change and through which door, in the reader's words: a command is its own
    name (/edit); a button, a message, the assistant are words; a change made by the command
    line or a program is that alone; someone whose name was not recorded is their number."""
    author = record.author
    door = (
        author.door
        if author.door.startswith("/")
        else _word(language, f"door_{author.door}", author.door)
    )
    if not author.name and author.by in ("cli", "library", "mcp"):
        return escape(_word(language, f"door_{author.by}", author.by))
    if author.by == "bot":  # a job of the bot's own (the nightly tidy): its door says which
        return escape(_word(language, f"door_{author.door}", author.door))
    number = author.by.partition(":")[2]
    name = author.name or (t(language, "history_someone", id=number) if number else author.by)
    return t(language, "history_who", who=escape(name), door=escape(door))


def _content(memory: Memory | None) -> str:
    return escape(preview(memory.content, PREVIEW)) if memory is not None else "—"


def undone_text(
    done: Undone | None, history: History, language: str, cancelled: Sequence[Reminder] = ()
) -> str:
    """What an undo did: each memory put back, and each left as it is (and why); each
    reminder cancelled."""
    lines = [t(language, "undo_title")]
    if done is None:
        done = Undone("")
    for record in done.reverted:
        if record.before is None:
            key = "undo_removed"
        elif record.after is None:
            key = "undo_reinstated"
        else:
            key = "undo_back"
        shown = record.before if record.before is not None else record.after
        lines.append(t(language, key, id=record.memory_id, content=_content(shown)))
    for left in done.left:
        since = left.since
        values = {"id": left.record.memory_id}
        if since is None:
            lines.append(t(language, "undo_left_unknown", **values))
        else:
            lines.append(
                t(language, "undo_left", who=_who(since, language), at=_when(since), **values)
            )
    for reminder in cancelled:
        line = reminder_view.reminder_line(reminder, language)
        lines.append(t(language, "undo_reminder_cancelled", line=line))
    if not done.reverted and not cancelled:
        lines[0] = t(language, "undo_nothing_changed")
    return "\n".join(lines)


def _damage(history: History, language: str) -> str:
    if not history.unreadable:
        return ""
    name = history.kept.name if history.kept is not None else "?"
    return "\n\n" + t(language, "history_unreadable", count=history.unreadable, file=escape(name))


def _button(label: str, record: ChangeRecord) -> InlineKeyboardButton:
    return callbacks.RESTORE.button(label, record.ref)


def recent_view(
    history: History, present: set[int], language: str
) -> tuple[str, InlineKeyboardMarkup | None]:
    """/history: the newest changes, newest first, with ♻ under deletions still deleted."""
    records = [r for r in history.records if r.op != "keep"][-RECENT:][::-1]
    if not records:
        return t(language, "history_empty") + _damage(history, language), None
    lines = [t(language, "history_recent_title", count=len(records))]
    rows: list[list[InlineKeyboardButton]] = []
    offered: set[int] = set()
    for record in records:
        memory = record.after if record.after is not None else record.before
        undo = " ↩" if record.author.undoes else ""
        lines.append(
            f"{OP_ICONS.get(record.op, '•')}{undo} <code>{record.memory_id}</code> "
            f"{_content(memory)}\n    <i>{_when(record)} · {_who(record, language)}</i>"
        )
        gone = record.op == "delete" and record.memory_id not in present
        if gone and len(rows) < BUTTONS and record.memory_id not in offered:
            offered.add(record.memory_id)
            label = t(language, "button_reinstate_plain", id=record.memory_id)
            rows.append([_button(label, record)])
    lines.append(t(language, "history_hint"))
    text = "\n".join(lines) + _damage(history, language)
    return text, InlineKeyboardMarkup(rows) if rows else None


def memory_view(
    memory_id: int, history: History, current: Memory | None, language: str
) -> tuple[str, InlineKeyboardMarkup | None]:
    """/history <id>: every version of one memory (who, when), and a button per version that
    is not the current one (deleted: the last version restores it)."""
    records = [r for r in history.records if r.op != "keep"]
    if not records:
        return t(language, "history_none", id=memory_id) + _damage(history, language), None
    found = versions(records)
    number = {r.ref: n for n, r in enumerate(found, start=1)}
    lines = [t(language, "history_memory_title", id=memory_id)]
    for record in records[-VERSIONS:]:
        when = f"<i>{_when(record)} · {_who(record, language)}</i>"
        if record.after is None:
            lines.append(f"🗑 {t(language, 'history_deleted')} · {when}")
            continue
        label = t(language, f"op_{record.op}")
        block = memory_block(record.after, limit=PREVIEW * 3, language=language)
        version = t(language, "history_version", n=number[record.ref])
        lines.append(f"<b>{version}</b> · {label} · {when}\n{block}")
    if current is None:
        lines.append(t(language, "history_is_deleted"))
    rows: list[list[InlineKeyboardButton]] = []
    for record in reversed(found):
        if len(rows) == BUTTONS:
            break
        if current is not None and state(record.after) == state(current):
            continue
        key = "button_version_plain" if current is not None else "button_reinstate_version_plain"
        rows.append([_button(t(language, key, n=number[record.ref]), record)])
    text = "\n\n".join(lines) + _damage(history, language)
    return text, InlineKeyboardMarkup(rows) if rows else None


# -- commands ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Undid:
    """What an undo did: to the memories (None: nothing to undo there), and to reminders."""

    done: Undone | None
    history: History
    cancelled: tuple[Reminder, ...] = ()
    refused: int = 0  # reminders of the change the caller may not cancel

    @property
    def anything(self) -> bool:
        return self.done is not None or bool(self.cancelled)


async def _undo_as(
    update: Update, context: ContextTypes.DEFAULT_TYPE, caller: Caller, change: str | None
) -> _Undid:
    """Undo for ``caller``, with their administrator rights if they matter (a shared group),
    and cancel the reminders the change set."""
    chat = update.effective_chat
    caller = await with_admin(context, update, caller)
    chat_id = chat.id if chat is not None else None
    found = services(context)
    done, history = await found.workers.run(
        caller.namespace, undoing.undo, caller, chat=chat_id, change=change
    )
    undone = done.change if done is not None else change
    job = found.reminders
    if undone is None or job is None:
        return _Undid(done, history)
    cancelled, refused = await found.workers.call(
        lambda: cancel_change(job.store, caller, undone, job.clock())
    )
    for reminder in cancelled:
        job.track(reminder)
    await found.workers.call(lambda: reminder_memory.follow_all(job.store, cancelled))
    return _Undid(done, history, tuple(cancelled), refused)


async def undo_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Undo the newest change made in this chat (the caller's own, in a group)."""
    message, caller = update.effective_message, caller_of(update, context)
    if message is None or caller is None:
        return
    language = language_of(update.effective_user)
    undid = await _undo_as(update, context, caller, None)
    history = undid.history
    if not undid.anything:
        key = "undo_nothing_group" if caller.shared else "undo_nothing"
        await reply_html(message, t(language, key) + _damage(history, language))
        return
    text = undone_text(undid.done, history, language, undid.cancelled)
    await reply_html(message, text + _damage(history, language))


async def history_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Show the recent changes, or every version of one memory, with buttons to restore."""
    message, caller = update.effective_message, caller_of(update, context)
    if message is None or caller is None:
        return
    language = language_of(update.effective_user)
    text = message.text or ""
    words = text.split(maxsplit=2)
    await show_history(context, message, caller, language, words[1] if len(words) > 1 else None)


async def show_history(
    context: ContextTypes.DEFAULT_TYPE,
    message: Message,
    caller: Caller,
    language: str,
    value: str | None,
) -> None:
    """Answer ``message`` with the recent changes, or every version of memory ``value``."""
    run = services(context).workers.run
    try:
        history, current = await run(caller.namespace, undoing.memory_history, value)
    except MemoryInvalid:
        await reply_html(message, t(language, "bad_id", value=escape(preview(value or "", 40))))
        return
    except MemoryNotFound as e:
        await reply_html(message, t(language, "history_none", id=e.memory_id))
        return
    if value is None:
        memories = await run(caller.namespace, operations.listing)
        reply, keyboard = recent_view(history, {m.id for m in memories}, language)
    else:
        memory_id = current.id if current is not None else history.records[0].memory_id
        reply, keyboard = memory_view(memory_id, history, current, language)
    await reply_html(message, reply, keyboard)


# -- buttons -----------------------------------------------------------------------------------


async def history_pressed(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """🕘 History pressed in a memory's menu: as /history with its id."""
    press = await pressed(update, context)
    if press is None:
        return
    await press.answer()
    await show_history(context, press.message, press.caller, press.language, press.value)


async def undo_pressed(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """↩ Undo pressed under a change (the model's turn, an Apply all): undo that change."""
    press = await pressed(update, context)
    if press is None:
        return
    try:
        undid = await _undo_as(update, context, press.caller, press.value)
    except NotAllowed:
        await press.refuse("not_yours_changes_plain")
        return
    if not undid.anything:
        await press.refuse("not_yours_changes_plain" if undid.refused else "undo_gone_plain")
        return
    await press.answer()
    text = undone_text(undid.done, undid.history, press.language, undid.cancelled)
    await reply_html(press.message, text)


async def restore_pressed(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """A version's button under /history pressed: put that version back."""
    press = await pressed(update, context)
    if press is None:
        return
    try:
        memory = await run_changing(
            update, context, press.caller, undoing.restore_version, press.value
        )
    except RestoreNotAllowed:
        await press.refuse("restore_not_yours_plain")
        return
    except NotAllowed:
        await press.refuse("not_yours_plain")
        return
    except (MemoryInvalid, MemoryNotFound):
        memory = None
    if memory is None:
        await press.stale()
        return
    await press.answer()
    block = memory_block(memory, language=press.language)
    await reply_html(press.message, t(press.language, "restored", memory=block))
