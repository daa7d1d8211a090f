"""The slash commands: thin front doors onto the bot's memory operations.

Each handler reads the update (who acts, in which namespace: ``access.caller_of``), parses what
was typed after the command (``bot.core.entry``: hashtags, ``category:``), makes one call into
``bot.core.operations`` off the event loop (``/digest``: into ``bot.jobs.digest``) and renders
the answer; no storage, ranking or permission logic lives here. Expected failures (an unknown
id, content over the limit, a memory that is not yours) are answered here (``_refusal``);
anything else goes to the one error handler (``bot.chat.failures``).
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from typing import Any
from zoneinfo import ZoneInfo

from telegram import InlineKeyboardButton, InlineKeyboardMarkup, Message, Update
from telegram.ext import ContextTypes

from bot.assistant.dialogue import read_usage
from bot.chat.access import (
    addressed_to_bot,
    caller_of,
    is_group,
    may_change_settings,
    message_source,
    replied_to,
    run_changing,
)
from bot.chat.attachments import send_all_back
from bot.chat.buttons import forget_prompt, page_view, recall_view, results_view, with_row
from bot.chat.choices import choice_prompt, replaced_reply
from bot.chat.offering import offer_for_memory
from bot.chat.presses import pressed
from bot.chat.services import services
from bot.core import adding, chat_zones, operations
from bot.core.entry import Entry, parse_entry, split_command
from bot.core.policy import Caller
from bot.errors import NotAllowed
from bot.jobs.digest_plan import chat_of
from bot.schedule import parse_timezone
from bot.view.digest_view import next_report_text
from bot.view.i18n import invalid_reason, language_of, t
from bot.view.render import escape, memory_block, preview, stats_text
from bot.view.replies import reply_html
from memory.errors import MemoryInvalid, MemoryNotFound
from memory.history import current_author
from memory.model import clean_tags

log = logging.getLogger(__name__)


def _request(
    update: Update, context: ContextTypes.DEFAULT_TYPE
) -> tuple[Message, Caller, str, str] | None:
    """The message, who acts where, the user's language and the text after the command."""
    message, caller = update.effective_message, caller_of(update, context)
    if message is None or caller is None:
        return None
    _, argument = split_command(message.text or message.caption or "")
    return message, caller, language_of(update.effective_user), argument


def zone_reader(context: ContextTypes.DEFAULT_TYPE, chat_id: int) -> Callable[[], ZoneInfo]:
    """How to read the zone dates are read in: the chat's, else ``[reminders] timezone``."""
    found = services(context)
    default = parse_timezone(found.config.reminders.timezone)
    return chat_zones.zone_reader(found.store, chat_id, default)


async def chat_zone(context: ContextTypes.DEFAULT_TYPE, chat_id: int) -> ZoneInfo:
    """The zone dates are read in (``zone_reader``), read now."""
    return await asyncio.to_thread(zone_reader(context, chat_id))


def _refusal(language: str, error: Exception, value: str = "", content: str = "") -> str:
    """What to tell the user when an operation refused (an expected failure)."""
    if isinstance(error, NotAllowed):
        return t(language, "not_yours")
    if isinstance(error, MemoryNotFound):
        return t(language, "not_found", id=error.memory_id)
    if isinstance(error, MemoryInvalid) and error.field == "id":
        return t(language, "bad_id", value=escape(preview(value, 40)))
    assert isinstance(error, MemoryInvalid), error
    return invalid_reason(language, error, content)


async def remember(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Store the text after /remember (or of the message replied to), with tags and category."""
    if (found := _request(update, context)) is None:
        return
    message, caller, language, argument = found
    replied = replied_to(message)
    source = (replied.text or replied.caption or "") if replied is not None else ""
    if source.strip():
        # Replying: the other message is the memory; hashtags and a category may come along.
        extra = parse_entry(argument, derive_tags=False)
        base = parse_entry(source, derive_tags=not extra.tags)
        content = "\n".join(part for part in (base.content, extra.content) if part)
        derived = not extra.tags and base.derived_tags
        category = extra.category or base.category
        entry = Entry(content, extra.tags or base.tags, category, derived)
    else:
        entry = parse_entry(argument)
    await remember_entry(context, message, caller, language, entry)


async def remember_entry(
    context: ContextTypes.DEFAULT_TYPE,
    message: Message,
    caller: Caller,
    language: str,
    entry: Entry,
    *,
    source: str | None = None,
    attachment: Mapping[str, Any] | None = None,
) -> None:
    """Store ``entry`` for ``caller`` and answer ``message`` as /remember does (stored, already
    stored, replaced an older value with ↩ Undo, or which near-duplicate; ⏰ for a time it
    names). ``source`` defaults to the message's own; ``attachment`` is the file it was said in
    (a voice note)."""
    if not entry.content:
        await reply_html(message, t(language, "usage_remember"))
        return
    try:
        done = await services(context).workers.run(
            caller.namespace,
            adding.remember,
            entry.content,
            entry.tags,
            entry.category,
            source=source or message_source(message),
            asker=caller,
            replace=True,
            zone=zone_reader(context, message.chat_id),
            attachment=attachment,
        )
    except MemoryInvalid as e:
        await reply_html(message, invalid_reason(language, e, entry.content))
        return
    if done.token is not None:  # near-duplicates: the person chooses
        await reply_html(message, *choice_prompt(entry.content, done.near, done.token, language))
        return
    memory = done.memory
    assert memory is not None
    if done.replaced is not None:  # a new value: the old one is in its history
        text, undo = replaced_reply(done.replaced, memory, language, current_author().change)
        offer = await offer_for_memory(context, message, caller, memory, language)
        if offer is None:
            await reply_html(message, text, undo)
            return
        rows = [b for row in offer[1].inline_keyboard for b in row]
        await reply_html(message, f"{text}\n\n{offer[0]}", with_row(undo, rows))
        return
    if done.duplicate:
        await reply_html(
            message,
            t(language, "already_remembered", memory=memory_block(memory, language=language)),
        )
        return
    text = t(language, "remembered", memory=memory_block(memory, language=language))
    if entry.derived_tags and memory.tags:
        text += "\n" + t(language, "tags_derived")
    # A memory that says what the person will do at a time ("下周二下午三点看牙医") offers a
    # reminder then; a statement with a date in it ("车停在B2层 23号") does not.
    offer = await offer_for_memory(context, message, caller, memory, language)
    if offer is None:
        await reply_html(message, text)
        return
    await reply_html(message, f"{text}\n\n{offer[0]}", offer[1])


async def recall(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Show the memories that best match the question (or the most recent ones)."""
    if (found := _request(update, context)) is None:
        return
    message, caller, language, query = found
    await show_matches(context, message, caller, language, query)


async def show_matches(
    context: ContextTypes.DEFAULT_TYPE,
    message: Message,
    caller: Caller,
    language: str,
    query: str,
    *,
    footer: str = "",
    footer_if_none: str = "",
    extra: Sequence[InlineKeyboardButton] = (),
    statement: bool = False,
    last_row: Sequence[InlineKeyboardButton] = (),
    instead_of_nothing: tuple[str, InlineKeyboardMarkup | None] | None = None,
) -> bool:
    """Answer ``message`` with the best matches for ``query``, or the latest memories if blank;
    ``footer`` (HTML) ends the reply, ``footer_if_none`` too when nothing was found, ``extra``
    buttons are its keyboard's last row (``last_row`` one more after it); a query nothing
    answers is answered ``instead_of_nothing`` when given; whether anything was found. Shared
    by /recall and by free text."""
    tail = "".join(f"\n\n{part}" for part in (footer, footer_if_none) if part)
    found = await services(context).workers.run(
        caller.namespace,
        operations.recall_page,
        query,
        zone=await chat_zone(context, message.chat_id),
        statement=statement,
    )
    if not found.memories and not query:
        await reply_html(message, t(language, "no_memories") + tail, with_row(None, extra))
        return False
    if not found.memories and instead_of_nothing is not None:
        await reply_html(message, *instead_of_nothing)
        return False
    if not found.memories and footer_if_none:
        footer = f"{footer}\n\n{footer_if_none}" if footer else footer_if_none
    text, keyboard = recall_view(found, language, footer=footer)
    await reply_html(message, text, with_row(with_row(keyboard, extra), last_row))
    if query:  # the photos and files of the answers themselves, none of weaker matches
        await send_all_back(message, list(found.memories))
    return bool(found.memories)


MAX_FORGET_IDS = 10  # ids one /forget asks about (a confirmation each)
_ID_SEPARATORS = re.compile(r"[\s,，、;；]+")


async def forget(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Ask to confirm forgetting the memory with each id given (one confirmation each)."""
    if (found := _request(update, context)) is None:
        return
    message, caller, language, argument = found
    values = list(dict.fromkeys(v for v in _ID_SEPARATORS.split(argument) if v))
    if not values:
        await reply_html(message, t(language, "usage_forget"))
        return
    for value in values[:MAX_FORGET_IDS]:
        try:
            memory = await run_changing(update, context, caller, operations.find_changeable, value)
        except (MemoryInvalid, MemoryNotFound, NotAllowed) as e:
            await reply_html(message, _refusal(language, e, value))
            continue
        text, keyboard = forget_prompt(memory, language)
        await reply_html(message, text, keyboard)


async def stats(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Show totals, categories, top tags, the most accessed memories and the tokens spent."""
    if (found := _request(update, context)) is None:
        return
    message, caller, language, _ = found
    found_services = services(context)
    summary = await found_services.workers.run(caller.namespace, operations.stats)
    parts = [stats_text(summary, language) if summary.total else t(language, "no_memories")]
    # The language model's token totals, kept by bot.assistant.turn.
    usage = await found_services.workers.call(
        lambda: read_usage(found_services.store.documents(caller.namespace))
    )
    if usage.turns:
        parts.append(
            t(
                language,
                "stats_llm",
                turns=f"{usage.turns:,}",
                prompt=f"{usage.prompt_tokens:,}",
                completion=f"{usage.completion_tokens:,}",
                since=escape(usage.since[:10]),
            )
        )
    status = await found_services.workers.run(caller.namespace, operations.search_status)
    if status.mode != "hybrid":
        parts.append(t(language, "stats_search_keywords"))
    elif status.failing:
        parts.append(t(language, "stats_search_failing"))
    else:
        parts.append(
            t(
                language,
                "stats_search_hybrid",
                model=escape(status.model or ""),
                embedded=f"{status.embedded:,}",
                total=f"{status.total:,}",
            )
        )
    await reply_html(message, "\n\n".join(parts))


async def list_memories(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """List all memories (or one category's, or one #tag's), newest first, with ◀ ▶ buttons."""
    if (found := _request(update, context)) is None:
        return
    message, caller, language, argument = found
    hashtag = argument[:1] in ("#", "＃")
    category = None if hashtag else argument or None
    try:
        tag = next(iter(clean_tags([_tag_of(argument)])), None) if hashtag else None
        memories = await services(context).workers.run(
            caller.namespace, operations.listing, category, tag=tag
        )
    except MemoryInvalid as e:  # not a possible category or tag (too long, control characters)
        await reply_html(message, invalid_reason(language, e))
        return
    text, keyboard = page_view(memories, 0, category, language, tag=tag)
    await reply_html(message, text, keyboard)


def _tag_of(argument: str) -> str:
    """The tag of ``/list #tag`` (``#`` or a full-width ``＃``, trailing punctuation dropped:
    ``#买菜，``); empty if there is none."""
    words = argument.lstrip("#＃").split(maxsplit=1)
    word = words[0] if words else ""
    while word and unicodedata.category(word[-1]).startswith("P"):
        word = word[:-1]
    return word


async def edit(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Change a memory's text, and its tags or category when given."""
    if (found := _request(update, context)) is None:
        return
    message, caller, language, argument = found
    value, rest = [*argument.split(None, 1), "", ""][:2]
    entry = parse_entry(rest, derive_tags=False)
    if not value or not (entry.content or entry.tags or entry.category):
        await reply_html(message, t(language, "usage_edit"))
        return
    try:
        memory = await run_changing(
            update,
            context,
            caller,
            operations.edit,
            value,
            content=entry.content or None,
            tags=entry.tags or None,
            category=entry.category,
        )
    except (MemoryInvalid, MemoryNotFound, NotAllowed) as e:
        await reply_html(message, _refusal(language, e, value, entry.content))
        return
    await reply_html(message, t(language, "edited", memory=memory_block(memory, language=language)))


async def related(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Show the memories sharing tags or the category with the given one."""
    if (found := _request(update, context)) is None:
        return
    message, caller, language, argument = found
    value = argument.split(maxsplit=1)[0] if argument else ""
    if not value:
        await reply_html(message, t(language, "usage_related"))
        return
    await show_related(context, message, caller, language, value)


async def show_related(
    context: ContextTypes.DEFAULT_TYPE, message: Message, caller: Caller, language: str, value: str
) -> None:
    """Answer ``message`` with the memories related to the one whose id is ``value``."""
    try:
        memory, memories = await services(context).workers.run(
            caller.namespace, operations.related, value
        )
    except (MemoryInvalid, MemoryNotFound) as e:
        await reply_html(message, _refusal(language, e, value))
        return
    content = escape(preview(memory.content, 60))
    if not memories:
        await reply_html(message, t(language, "related_none", content=content))
        return
    text, keyboard = results_view(t(language, "related_title", content=content), memories, language)
    await reply_html(message, text, keyboard)


async def related_pressed(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """🔗 Related pressed in a memory's menu: as /related with its id."""
    press = await pressed(update, context)
    if press is None:
        return
    await press.answer()
    await show_related(context, press.message, press.caller, press.language, press.value)


async def export(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Send the namespace's memories as an article-format memory.json document."""
    if (found := _request(update, context)) is None:
        return
    message, caller, language, _ = found
    records = await services(context).workers.run(caller.namespace, operations.export)
    if not records:
        await reply_html(message, t(language, "export_empty"))
        return
    document = json.dumps(records, ensure_ascii=False, indent=2).encode()
    await message.reply_document(
        document, filename="memory.json", caption=t(language, "export_caption", count=len(records))
    )


async def digest(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Show the scheduled digest's setting, turn it on or off, or send the report now."""
    if (found := _request(update, context)) is None:
        return
    message, caller, language, argument = found
    name, run = caller.namespace, services(context).workers.call
    reporter = services(context).digest
    action = argument.split(maxsplit=1)[0].lower() if argument else ""
    if reporter is None:
        await reply_html(message, t(language, "unknown_command"))
    elif action == "now":  # reading only: anyone may, and the scheduled report still comes
        title = message.chat.title if is_group(message.chat) else None
        report = await run(lambda: reporter.report(name, language=language, title=title))
        await reply_html(message, report or t(language, "no_memories"))
    elif action not in ("", "on", "off"):
        await reply_html(message, t(language, "digest_usage"))
    elif not reporter.config.enabled:
        await reply_html(message, t(language, "digest_disabled"))
    elif chat_of(name) is None and (await run(lambda: reporter.settings(name))).chat_id is None:
        # A channel's own namespace (``channels/<id>``, group_scope = "user"): no chat of its
        # own to send to, and the groups it writes in must not get what it stored elsewhere.
        await reply_html(message, t(language, "digest_no_chat"))
    elif action and not await may_change_settings(update, context):
        await reply_html(message, t(language, "digest_admins_only"))
    else:
        next_run = next_report_text(*await run(lambda: reporter.next_report(name)), language)
        title = message.chat.title if is_group(message.chat) else None
        if action:
            on = action == "on"
            await run(lambda: reporter.switch(name, on, language=language, title=title))
            key = f"digest_switched_{action}"
        else:
            on = reporter.is_on(await run(lambda: reporter.settings(name)))
            if title is not None and on:  # the report's title: the group's name as it is now
                await run(lambda: reporter.note_title(name, title))
            key = "digest_status_on" if on else "digest_status_off"
        await reply_html(message, t(language, key, next=next_run))


async def unknown_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Answer a command this bot does not have (in groups, only one addressed to it by name)."""
    message = update.effective_message
    if message is None or message.text is None:
        return
    if is_group(message.chat) and "@" not in message.text.split(maxsplit=1)[0]:
        return  # "/foo" in a group may be for another bot
    if addressed_to_bot(message, context.bot):
        await reply_html(message, t(language_of(update.effective_user), "unknown_command"))
