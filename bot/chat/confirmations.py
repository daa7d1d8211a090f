"""The buttons of the model's changes: Apply all / Discard for what waits, ↩ Undo for what it did.

A button carries a token only (``bot.assistant.changes``: the record stays on the server;
``ca:``, ``cx:``, ``cu:`` in ``bot.view.callbacks``): "Apply all" under the model's changes
that wait for confirmation, "Discard" there, and ↩ Undo under the "Memory updated" line and
under what Apply all did, which names the change in the history of memories
(``memory.history``) and is undone by ``bot.chat.versions`` as /undo undoes one.

As every button, a press is resolved in the namespace of the person who pressed, in the chat
where they pressed (``bot.chat.presses``), so a token of another namespace finds nothing. In a
group, Apply all makes a change only to a memory the presser may change (``bot.core.policy``:
its author or an administrator); the others stay waiting, for someone who may; ↩ Undo is
for the member whose change it was, or an administrator (``Caller.may_undo``). Neither
overwrites a memory someone changed since the model's proposal or change: the newer version
stands, and the reply says so. Discard changes no memory, so anyone in the chat may press it.
The changes are made through ``bot.core.operations`` (``forget``, ``edit``), with the presser
as the ``Caller``, as every door makes them. Pressing twice does the work once, also in two
processes at once: a press takes the changes it makes out of the record in one
compare-and-set before the memories are touched (``ChangeFile.take_pending``; an undone change
is undone already), and a record that is gone answers so.

Reminders the model asked for past its turn's cap wait in the same message, each with its
time; Apply all sets those the presser may set (``bot.assistant.reminder_desk.set_waiting``:
in a group the member who asked, or an administrator), each once even if two processes take
the same record (its id derives from the request), as part of the press's change, so that
its ↩ Undo cancels them; Discard drops them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from telegram import InlineKeyboardMarkup, Update
from telegram.ext import ContextTypes

from bot.assistant.changes import (
    ChangeFile,
    Proposal,
    ReminderProposal,
    Revision,
    Waiting,
    content_of,
    revert,
)
from bot.assistant.reminder_desk import may_set, set_waiting
from bot.chat.access import with_admin
from bot.chat.presses import Press, pressed
from bot.chat.reminding import remember_reminder
from bot.chat.services import services
from bot.core import operations
from bot.core.policy import Caller
from bot.core.reminders import Reminder
from bot.errors import NotAllowed, ReminderNotAllowed
from bot.view import callbacks, reminder_view
from bot.view.i18n import t
from bot.view.render import escape, preview
from bot.view.replies import edit_html
from bot.view.times import local_time
from memory.errors import MemoryNotFound, MemoryStoreError
from memory.history import acting, current_author
from memory.interface import MemoryNamespace, Store

CHANGE_PREVIEW = 60  # characters of content per change listed for confirmation
CHANGES_LISTED = 20  # changes listed in one confirmation; the rest are counted


# -- views -------------------------------------------------------------------------------------


def changes_keyboard(
    pending: str | None, undo: str | None, language: str
) -> InlineKeyboardMarkup | None:
    """Apply all / Discard for the changes waiting under ``pending``, ↩ Undo for ``undo``."""
    rows = []
    if pending is not None:
        apply = callbacks.APPLY.button(t(language, "button_apply_plain"), pending)
        rows.append([apply, callbacks.DISCARD.button(t(language, "button_discard_plain"), pending)])
    if undo is not None:
        rows.append([callbacks.UNDO.button(t(language, "button_undo_plain"), undo)])
    return InlineKeyboardMarkup(rows) if rows else None


def _reminder_line(proposal: ReminderProposal, language: str) -> str:
    due = proposal.due
    when = escape(local_time(due.at, due.zone, language))
    text = escape(preview(proposal.text, CHANGE_PREVIEW))
    rule = f" · 🔁 {escape(reminder_view.repeat_text(due.repeat, language))}" if due.repeat else ""
    return t(language, "change_remind", when=when, text=text, repeat=rule)


def change_lines(proposals: Sequence[Waiting], language: str) -> str:
    """One line per waiting change (the first ``CHANGES_LISTED``): old → new, or 🗑; a
    reminder with its resolved time."""
    lines = []
    for proposal in proposals[:CHANGES_LISTED]:
        if isinstance(proposal, ReminderProposal):
            lines.append(_reminder_line(proposal, language))
            continue
        memory = proposal.memory
        old = escape(preview(memory.content, CHANGE_PREVIEW))
        if proposal.op == "delete":
            lines.append(t(language, "change_delete", id=memory.id, old=old))
            continue
        new = []
        if proposal.content is not None:
            new.append(escape(preview(proposal.content, CHANGE_PREVIEW)))
        if proposal.tags is not None:
            new.append(" ".join(f"#{escape(tag)}" for tag in proposal.tags) or "—")
        if proposal.category is not None:
            new.append(escape(proposal.category))
        lines.append(t(language, "change_update", id=memory.id, old=old, new=" · ".join(new)))
    if len(proposals) > CHANGES_LISTED:
        lines.append(t(language, "changes_more", count=len(proposals) - CHANGES_LISTED))
    return "\n".join(lines)


def pending_prompt(
    proposals: Sequence[Waiting], token: str, language: str
) -> tuple[str, InlineKeyboardMarkup | None]:
    """The one confirmation of a turn's waiting changes, with Apply all / Discard."""
    text = t(language, "changes_pending", items=change_lines(proposals, language))
    return text, changes_keyboard(token, None, language)


# -- presses -----------------------------------------------------------------------------------


@dataclass
class Outcome:
    """What a press did: changes made (and their undo token), left alone, refused; reminders
    set, and those that could not be."""

    done: int = 0
    undo: str | None = None
    skipped: int = 0
    refused: list[Waiting] = field(default_factory=list)
    failed: int = 0
    reminders: tuple[Reminder, ...] = ()
    not_set: int = 0


def _book(store: Store, name: str) -> ChangeFile:
    return ChangeFile(store.documents(name))


async def _as_far_as_allowed(
    update: Update,
    context: ContextTypes.DEFAULT_TYPE,
    caller: Caller,
    work: Callable[[MemoryNamespace, ChangeFile, Caller], Outcome | None],
) -> Outcome | None:
    """Run ``work`` off the event loop for ``caller``; again with the caller's administrator
    rights (asked of Telegram only then) if it refused something without them."""
    workers = services(context).workers
    store = workers.store

    def run(who: Caller) -> Callable[[], Outcome | None]:
        return lambda: work(store.namespace(who.namespace), _book(store, who.namespace), who)

    try:
        return await workers.call(run(caller))
    except (NotAllowed, ReminderNotAllowed):
        admin = await with_admin(context, update, caller)
        if admin is caller:
            raise
        return await workers.call(run(admin))


def _apply_pending(
    namespace: MemoryNamespace,
    book: ChangeFile,
    caller: Caller,
    token: str,
    store: Store,
    now: datetime,
) -> Outcome | None:
    """Make the waiting changes of ``token`` that ``caller`` may make, and set its waiting
    reminders; None if none wait. ``NotAllowed`` (``ReminderNotAllowed``: reminders only)
    when some wait but the caller may make none of them."""
    todo: list[Proposal] = []
    to_set: list[ReminderProposal] = []
    outcome = Outcome()

    def sort(proposals: list[Waiting]) -> list[Waiting]:
        """What stays waiting (for someone who may make it); run again if another press took
        some meanwhile, so the outcome is of the take that stands."""
        nonlocal todo, to_set, outcome
        todo, to_set, outcome = [], [], Outcome()
        for proposal in proposals:
            if isinstance(proposal, ReminderProposal):
                (to_set if may_set(caller, proposal) else outcome.refused).append(proposal)
                continue
            try:
                current = namespace.get(proposal.id)
            except MemoryNotFound:
                outcome.skipped += 1
                continue
            if content_of(current) != content_of(proposal.memory):
                outcome.skipped += 1  # changed since the model asked: the newer version stands
            elif caller.may_change(current):
                todo.append(proposal)
            else:
                outcome.refused.append(proposal)
        if not todo and not to_set and outcome.refused:
            first = outcome.refused[0]
            if isinstance(first, Proposal):
                raise NotAllowed(first.memory)
            raise ReminderNotAllowed(token)
        return outcome.refused

    # Taken before the memories are touched: a second press must not apply twice.
    if not book.take_pending(token, sort):
        return None
    done: list[Revision] = []
    author = current_author()  # this press: one change in the history, ↩ Undo's
    try:
        _apply(namespace, caller, todo, done)
    except MemoryStoreError:
        # All or nothing, as a turn is: what was made is undone (and recorded as undone).
        with acting(dataclasses.replace(author, undoes=author.change)):
            revert(namespace, done)
        book.give_back(token, [*todo, *to_set])
        raise
    outcome.done = len(done)
    outcome.skipped += len(todo) - len(done)
    if to_set:
        _set_reminders(store, caller, book, token, to_set, now, outcome)
    outcome.undo = author.change if done or outcome.reminders else None
    return outcome


def _set_reminders(
    store: Store,
    caller: Caller,
    book: ChangeFile,
    token: str,
    proposals: list[ReminderProposal],
    now: datetime,
    outcome: Outcome,
) -> None:
    """Set the waiting reminders ``proposals``, each also a memory (as the turn's are)."""
    try:
        done = set_waiting(store, caller, proposals, now)
    except MemoryStoreError:
        # Those set stand (set again, each is found, not doubled); the rest wait again.
        book.give_back(token, proposals)
        raise
    outcome.reminders = tuple(reminder for _, reminder in done.made)
    outcome.not_set = done.not_set
    for proposal, reminder in done.made:
        speaker = dataclasses.replace(caller, actor=proposal.author)
        remember_reminder(store, speaker, reminder, proposal.source)


async def _pressed_and_run(
    update: Update,
    context: ContextTypes.DEFAULT_TYPE,
    work: Callable[[MemoryNamespace, ChangeFile, Caller, str], Outcome | None],
) -> tuple[Press, Outcome] | None:
    """Run ``work`` on the pressed button's token (``_as_far_as_allowed``); the press and what
    it did. None after answering the press when there is nothing to do, or nothing that is the
    presser's to do."""
    press = await pressed(update, context)
    if press is None:
        return None
    token = press.value
    try:
        outcome = await _as_far_as_allowed(
            update, context, press.caller, lambda ns, book, who: work(ns, book, who, token)
        )
    except (NotAllowed, ReminderNotAllowed) as e:
        not_yours = isinstance(e, NotAllowed)
        await press.refuse("not_yours_changes_plain" if not_yours else "not_yours_reminders_plain")
        return None
    if outcome is None:
        await press.refuse("changes_gone_plain")
        return None
    await press.answer()
    return press, outcome


async def apply_changes(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """ "Apply all" pressed: make the waiting changes the presser may make, undoably."""
    found = services(context)
    store, job = found.workers.store, found.reminders
    now = job.clock() if job is not None else datetime.now(UTC)

    def apply(ns: MemoryNamespace, book: ChangeFile, who: Caller, token: str) -> Outcome | None:
        return _apply_pending(ns, book, who, token, store, now)

    done = await _pressed_and_run(update, context, apply)
    if done is None:
        return
    press, outcome = done
    language, token = press.language, press.value
    for reminder in outcome.reminders:
        if job is not None:
            job.track(reminder)
    parts = [t(language, "changes_applied", count=outcome.done + len(outcome.reminders))]
    if outcome.reminders:
        lines = [reminder_view.reminder_line(r, language) for r in outcome.reminders]
        parts.append("\n".join(lines[:CHANGES_LISTED]))
        if len(lines) > CHANGES_LISTED:
            parts.append(t(language, "changes_more", count=len(lines) - CHANGES_LISTED))
    if outcome.not_set:
        parts.append(t(language, "changes_reminders_not_set", count=outcome.not_set))
    if outcome.skipped:
        parts.append(t(language, "changes_skipped", count=outcome.skipped))
    if outcome.refused:
        parts.append(
            t(language, "changes_remaining", items=change_lines(outcome.refused, language))
        )
    keyboard = changes_keyboard(token if outcome.refused else None, outcome.undo, language)
    await edit_html(press.query, "\n".join(parts), keyboard)


def _apply(
    namespace: MemoryNamespace,
    caller: Caller,
    proposals: Sequence[Proposal],
    done: list[Revision],
) -> None:
    """Make ``proposals`` as ``caller`` (the presser), through the operations every door uses
    (``bot.core.operations``: ``forget``, ``edit``, with the one permission rule), adding each
    one's revision to ``done`` as it is made (a memory changed or deleted meanwhile is left
    alone)."""
    for proposal in proposals:
        try:
            before = namespace.get(proposal.id)
            if content_of(before) != content_of(proposal.memory):
                continue  # changed meanwhile, by another member or process
            if proposal.op == "delete":
                deleted = operations.forget(namespace, caller, proposal.id)
                done.append(Revision("reinstate", deleted, None))
            else:
                changed = operations.edit(
                    namespace,
                    caller,
                    proposal.id,
                    content=proposal.content,
                    tags=proposal.tags,
                    category=proposal.category,
                )
                done.append(Revision("restore", before, changed))
        except MemoryNotFound:
            continue  # deleted in between, by another member or process
        except NotAllowed:
            continue  # sorted as the caller's (``_apply_pending``): only if its author changed


async def discard_changes(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """ "Discard" pressed: forget the waiting changes (no memory is touched)."""
    press = await pressed(update, context)
    if press is None:
        return

    def discard(namespace: MemoryNamespace, book: ChangeFile, who: Caller) -> Outcome | None:
        return Outcome() if book.take_pending(press.value, lambda proposals: []) else None

    if await _as_far_as_allowed(update, context, press.caller, discard) is None:
        await press.refuse("changes_gone_plain")
        return
    await press.answer()
    await edit_html(press.query, t(press.language, "changes_discarded"))
