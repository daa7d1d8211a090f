"""Importing a memory file: a preview with Import / Cancel, then the import.

A ``.json`` document (by name or MIME type: the article's ``memory.json``), a ``.md`` one
(``/export md``'s file, or any Markdown note) or a ``.zip`` of Markdown notes (an Obsidian
vault) sent to the bot is read (``bot.core.imports``: bounded, safe parsing) and previewed
against the chat's namespace: how many memories the file holds, how many are new, how many are
already here, how many would be refused and why, which ids are renumbered (more than a day
ahead: a fresh id each; the reply to Import says old → new) and, for a zip, how many files in
it were not notes. A file too big, not JSON or of the wrong shape, a note that is not text, an
archive with a file that is not safe to read (``bot.core.note_archive``) is refused at once
and nothing changes.

Between the preview and the press nothing of the file is kept but its Telegram reference, in
the namespace's document ``imports/<token>`` (with who sent it): Import downloads it again and
plans again on the namespace as it is then, so the preview can never be applied to a different
file, and a second press (or a second Import of the same file) adds nothing. The press is
resolved in the presser's namespace, so a forged token of another chat finds nothing; only the
sender may press Import. The buttons carry the token only (``ia:``, ``ic:`` in
``bot.view.callbacks``).
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections import Counter
from typing import Any

from telegram import InlineKeyboardMarkup, Message, Update
from telegram.ext import ContextTypes

from bot.chat.attachments import DownloadFailed, FileTooBig, download
from bot.chat.incoming import size_text
from bot.chat.presses import Press, pressed
from bot.chat.services import services
from bot.core import imports
from bot.core.imports import INVALID, ImportPlan, ImportRefused
from bot.core.note_archive import MAX_NOTE_BYTES, MAX_UNPACKED_BYTES
from bot.core.policy import Caller
from bot.view import callbacks
from bot.view.i18n import t
from bot.view.render import escape
from bot.view.render import preview as cut
from bot.view.replies import edit_html, reply_html
from memory.documents import Documents

log = logging.getLogger(__name__)

PENDING = "imports"  # document key prefix of the imports awaiting a press
MAX_PENDING = 10  # per namespace; older ones are dropped
REASONS_SHOWN = 5
IDS_SHOWN = 10  # renumbered ids listed; the rest are counted


def is_import(message: Message) -> bool:
    """Whether ``message`` carries a memory file to import (``.json``, ``.md``, ``.zip``)."""
    document = message.document
    if document is None:
        return False
    return imports.kind_of(document.file_name or "", document.mime_type or "") is not None


# What a refused entry's field says about it (``imports.plan``'s ``invalid:<field>``).
_INVALID_FIELDS = {"content": "content", "tags": "tags", "tag": "tags", "category": "category"}


def _reasons(plan: ImportPlan, language: str) -> str:
    """Why entries were refused, in words (never the library's own message), with one entry
    of each reason."""
    lines = []
    for reason, count in Counter(plan.refused).most_common(REASONS_SHOWN):
        if reason.startswith(INVALID):
            field = _INVALID_FIELDS.get(reason.partition(":")[2], "other")
            key = f"import_reason_invalid_{field}"
        else:
            key = f"import_reason_{reason}"
        entry = t(language, "import_entry_plain", entry=plan.examples.get(reason, "?"))
        text = f"{t(language, key)} ({entry})"
        lines.append(t(language, "import_reason", count=count, reason=escape(cut(text, 160))))
    return "".join(lines)


def _ids(ids: list[str]) -> str:
    shown = ", ".join(ids[:IDS_SHOWN])
    return shown + (f", … (+{len(ids) - IDS_SHOWN})" if len(ids) > IDS_SHOWN else "")


def _summary(plan: ImportPlan, name: str, language: str, skipped: int = 0) -> str:
    question = (
        t(language, "import_question", new=len(plan.new))
        if plan.new
        else t(language, "import_nothing")
    )
    return t(
        language,
        "import_preview",
        name=escape(name),
        total=plan.total,
        new=len(plan.new),
        present=plan.present,
        refused=plan.refused_count,
        reasons=_reasons(plan, language),
        renumbered=t(
            language,
            "import_renumber",
            count=len(plan.renumbered),
            ids=_ids([f"<code>{old}</code>" for old in plan.renumbered]),
        )
        if plan.renumbered
        else "",
        question=(t(language, "import_skipped", count=skipped) if skipped else "") + question,
    )


def _refusal(error: ImportRefused | FileTooBig, name: str, language: str) -> str:
    kind = imports.kind_of(name) or imports.JSON
    if isinstance(error, FileTooBig) or error.code == imports.TOO_BIG:
        size = error.size if isinstance(error, FileTooBig) else error.values.get("size")
        return t(
            language,
            "import_too_big",
            name=escape(name),
            size=size_text(size if isinstance(size, int) else None),
            limit=size_text(imports.limit_of(kind)),
        )
    # The parser's message ("Expecting ',' delimiter: line 1 column 5") is for the log only.
    log.info("import of %s refused: %s (%s)", name, error, error.__cause__)
    if error.code == imports.NOT_TEXT:
        return t(language, "import_not_text", name=escape(name))
    if error.code == imports.ARCHIVE:
        member = cut(str(error.values.get("member") or ""), 80)
        limits = {"note": size_text(MAX_NOTE_BYTES), "total": size_text(MAX_UNPACKED_BYTES)}
        why = t(language, f"import_archive_{error.reason}_plain", member=member, **limits)
        return t(language, "import_archive_refused", name=escape(name), reason=escape(why))
    if kind != imports.JSON and error.reason == "too_many":
        reason = t(language, "import_shape_too_many_plain", **error.values)
        return t(language, "import_notes_too_many", name=escape(name), reason=escape(reason))
    if error.code == imports.NOT_JSON:
        why = t(language, f"import_why_{error.reason}_plain", **error.values)
        return t(language, "import_not_json", name=escape(name), reason=escape(why))
    if error.reason == "too_many":
        reason = t(language, "import_shape_too_many_plain", **error.values)
    else:
        found = t(language, f"import_kind_{error.values.get('found', 'value')}_plain")
        reason = t(language, "import_shape_not_list_plain", found=found)
    return t(language, "import_wrong_shape", name=escape(name), reason=escape(reason))


async def _read(
    context: ContextTypes.DEFAULT_TYPE, file_id: str, size: int | None, kind: str
) -> tuple[list[Any], int]:
    data = await download(context.bot, file_id, size, limit=imports.limit_of(kind))
    # Unpacking and parsing a file of megabytes is work for a thread, not the event loop.
    return await asyncio.to_thread(imports.read_entries, kind, data)


def _keep_pending(documents: Documents, token: str, value: dict[str, Any]) -> None:
    waiting = documents.list(f"{PENDING}/")
    for old in sorted(waiting, key=lambda d: d.value.get("at", 0))[
        : max(0, len(waiting) - MAX_PENDING + 1)
    ]:
        documents.delete(old.key, version=old.version)
    documents.put(f"{PENDING}/{token}", value)


async def preview(
    update: Update,
    context: ContextTypes.DEFAULT_TYPE,
    message: Message,
    caller: Caller,
    language: str,
) -> None:
    """Answer a ``.json`` document with what importing it would do, and Import / Cancel."""
    document = message.document
    assert document is not None
    name = document.file_name or "memory.json"
    kind = imports.kind_of(name, document.mime_type or "") or imports.JSON
    found = services(context)
    try:
        entries, skipped = await _read(context, document.file_id, document.file_size, kind)
    except (ImportRefused, FileTooBig) as e:
        await reply_html(message, _refusal(e, name, language))
        return
    except DownloadFailed as e:
        log.warning("could not download %s: %s", name, e.reason)
        await reply_html(message, t(language, "file_download_failed"))
        return
    assign = kind != imports.JSON
    plan = await found.workers.run(caller.namespace, imports.plan, entries, assign_ids=assign)
    if not plan.new:
        await reply_html(message, _summary(plan, name, language, skipped))
        return
    token = secrets.token_hex(8)
    pending = {
        "file_id": document.file_id,
        "size": document.file_size,
        "name": name,
        "kind": kind,
        "by": caller.actor.key,
        "at": time.time(),
    }
    documents = found.store.documents(caller.namespace)
    await found.workers.call(lambda: _keep_pending(documents, token, pending))
    keyboard = InlineKeyboardMarkup(
        [
            [
                callbacks.IMPORT.button(t(language, "button_import_plain"), token),
                callbacks.CANCEL_IMPORT.button(t(language, "button_cancel_import_plain"), token),
            ]
        ]
    )
    await reply_html(message, _summary(plan, name, language, skipped), keyboard)


async def _claim(
    update: Update, context: ContextTypes.DEFAULT_TYPE
) -> tuple[Press, dict[str, Any]] | None:
    """The pending import a press names, removed so that it runs once (None: answered)."""
    press = await pressed(update, context)
    if press is None:
        return None
    found = services(context)
    documents = found.store.documents(press.caller.namespace)
    key = f"{PENDING}/{press.value}"
    pending = await found.workers.call(lambda: documents.get(key))
    if pending is None:
        await press.refuse("import_gone_plain")
        return None
    if pending.value.get("by") != press.caller.actor.key:
        await press.refuse("import_not_yours_plain")
        return None
    if not await found.workers.call(lambda: documents.delete(key, version=pending.version)):
        await press.refuse("import_gone_plain")
        return None
    return press, dict(pending.value)


async def apply_import(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Import: download the file again, plan again, add the new memories."""
    claimed = await _claim(update, context)
    if claimed is None:
        return
    press, pending = claimed
    query, language = press.query, press.language
    name = str(pending.get("name") or "memory.json")
    size = pending.get("size")
    kind = str(pending.get("kind") or imports.kind_of(name) or imports.JSON)
    try:
        entries, _ = await _read(
            context, str(pending["file_id"]), size if isinstance(size, int) else None, kind
        )
    except (ImportRefused, FileTooBig) as e:
        await press.answer()
        await edit_html(query, _refusal(e, name, language))
        return
    except DownloadFailed as e:
        await press.answer()
        log.warning("could not download a file to import: %s", e.reason)
        await edit_html(query, t(language, "file_download_failed"))
        return
    namespace = press.caller.namespace
    plan, added, renumbered = await services(context).workers.run(
        namespace, imports.apply, entries, assign_ids=kind != imports.JSON
    )
    log.info("imported %d memories into %s", added, namespace)
    await press.answer()
    present = plan.present + len(plan.new) - added
    text = t(language, "import_done", added=added, present=present, refused=plan.refused_count)
    if renumbered:
        moved = [f"<code>{old}</code> → <code>{new}</code>" for old, new in renumbered.items()]
        text += t(language, "import_renumbered", count=len(moved), ids=_ids(moved))
    await edit_html(query, text)


async def cancel_import(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Cancel: forget the pending import; nothing changes."""
    claimed = await _claim(update, context)
    if claimed is None:
        return
    press, _ = claimed
    await press.answer()
    await edit_html(press.query, t(press.language, "import_cancelled"))
