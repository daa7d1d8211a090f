"""Every button's callback data: one table of prefixes, each with what may follow it.

Callback data is small and carries a prefix and ids only, never content (Telegram allows 64
bytes). A button is made with its entry's ``button(label, ...)`` (or ``data(...)``), and its
press is routed by the entry's ``pattern`` (``bot.chat.app.PRESSES``): no other module writes a
prefix. Nothing a press carries is trusted: it is resolved in the namespace of whoever pressed,
in the chat where they pressed (``bot.chat.presses``), so an id of another namespace finds
nothing (a reminder's buttons also look in that chat's other namespaces, its forum topics':
``bot.core.reminders.locate``, never another chat's)::

    f:<memory id>            🗑 under /list or a /related result, or in a memory's menu: ask
    d:<memory id>            Delete in that confirmation: forget it
    k:<memory id>            Keep in that confirmation
    m:<memory id>            ⋯ under a /recall result: the memory's own menu
    mr:<memory id>           🔗 Related in the menu
    mh:<memory id>           🕘 History in the menu
    p:<page>[:<category>]    ◀ ▶ of /list; the category as the CRC-32 of its name, in hex
    p:<page>:#<tag>          ◀ ▶ of /list #tag; the tag as the CRC-32 of its name, in hex
    r:<page>[:<query>]       ◀ ▶ and More ▶ of /recall; the query by its token
                             (``bot.core.operations.keep_query``), none: the newest memories
    nk:<token>               keep both, beside a near-duplicate (``bot.core.adding``)
    nr:<token>:<n>           replace the n-th near-duplicate
    nc:<token>               cancel that add
    rt:<message id>          💾 Remember this under a statement's search
    ca:<token>               Apply all: the model's changes waiting (``bot.assistant.changes``)
    cx:<token>               Discard them
    cu:<change>              ↩ Undo a change (``memory.history``): the model's turn, an Apply all
    hv:<ref>                 under /history: put back the version the record ``ref`` left
    rd:<reminder id>         ✅ Done under a delivery
    rz:<reminder id>:<what>  ⏰ snooze: 10 (minutes), 60, or t (tomorrow at the same time)
    rc:<reminder id>         🗑 Cancel (under the confirmation and in /reminders)
    re:<reminder id>         ✏️ Change: asks for the new time as a reply
    rm:<memory id>           ⏰ under a memory with a time in it: make it a reminder (buttons of
                             earlier versions; a memory now gets a reminder offer)
    ro:<offer>:<what>        a reminder offered (``bot.core.reminder_offers``): y Yes, o another
                             time, n No, or a time picked: h an hour before, d the day before,
                             e the evening before
    tzs:<zone>               /timezone: choose this zone of the place named
    tzm:<zone>               move the chat's reminders to the new zone's clock
    tzk                      keep them at their instants
    tzl:<latitude>:<longitude>   the zone of a location shared
    ia:<token>               import the memory.json sent
    ic:<token>               cancel that import
    w:examples | w:help      under /start
    tq:<token>:<n>:<n|o|b>   a tidy's question (``bot.core.tidying``): keep the newer, the
                             older, or both of conflict n
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from telegram import InlineKeyboardButton

from bot.core.operations import QUERY_TOKEN_CHARS
from bot.core.reminder_offers import ID_PATTERN as OFFER_ID
from bot.core.reminders import ID_PATTERN as REMINDER_ID
from bot.core.tokens import TOKEN_PATTERN as TOKEN
from memory.history import CHANGE_PATTERN as CHANGE

MAX_CALLBACK_DATA = 64  # bytes, Telegram's limit

MEMORY_ID = r"\d{1,19}"
MESSAGE_ID = r"\d{1,19}"
PAGE = r"\d{1,6}"
NAME_KEY = r"[0-9a-f]{8}"  # a category's or a tag's CRC-32 (``bot.chat.buttons.category_key``)
QUERY_TOKEN = rf"[0-9a-f]{{{QUERY_TOKEN_CHARS}}}"
IMPORT_TOKEN = r"[0-9a-f]{16}"  # ``secrets.token_hex(8)`` (``bot.chat.imports``)
ZONE = r"[A-Za-z0-9_+\-/]{1,60}"
DEGREES = r"-?\d{1,3}\.\d{1,6}"


@dataclass(frozen=True)
class Callback:
    """One kind of button: its ``prefix`` and the pattern of what follows it (``args``: none
    for a button that carries nothing but its prefix)."""

    prefix: str
    args: str = ""

    @property
    def pattern(self) -> str:
        """The whole callback data of a press of this button, as a regular expression."""
        return rf"^{self.prefix}:{self.args}$" if self.args else rf"^{self.prefix}$"

    def data(self, *parts: object) -> str:
        """The callback data carrying ``parts`` (``f:<id>``), checked against ``pattern``."""
        data = ":".join([self.prefix, *map(str, parts)])
        assert re.fullmatch(self.pattern, data), data  # an invariant of the table
        assert len(data.encode()) <= MAX_CALLBACK_DATA, data
        return data

    def button(self, label: str, *parts: object) -> InlineKeyboardButton:
        """An inline button labelled ``label`` whose press carries ``parts`` (``data``)."""
        return InlineKeyboardButton(label, callback_data=self.data(*parts))

    def carries(self, data: str | object) -> bool:
        """Whether ``data`` is this button's."""
        return isinstance(data, str) and re.fullmatch(self.pattern, data) is not None


# Memories (bot.chat.buttons, bot.chat.commands, bot.chat.versions).
FORGET = Callback("f", MEMORY_ID)
DELETE = Callback("d", MEMORY_ID)
KEEP = Callback("k", MEMORY_ID)
MENU = Callback("m", MEMORY_ID)
RELATED = Callback("mr", MEMORY_ID)
HISTORY = Callback("mh", MEMORY_ID)
LIST_PAGE = Callback("p", rf"{PAGE}(:#?{NAME_KEY})?")
RECALL_PAGE = Callback("r", rf"{PAGE}(:{QUERY_TOKEN})?")
# A near-duplicate's choice (bot.chat.choices) and 💾 Remember this (bot.chat.noting).
KEEP_BOTH = Callback("nk", TOKEN)
REPLACE = Callback("nr", rf"{TOKEN}:\d")
CANCEL_ADD = Callback("nc", TOKEN)
REMEMBER_THIS = Callback("rt", MESSAGE_ID)
# The model's changes (bot.chat.confirmations) and the store's history (bot.chat.versions).
APPLY = Callback("ca", TOKEN)
DISCARD = Callback("cx", TOKEN)
UNDO = Callback("cu", CHANGE)
RESTORE = Callback("hv", CHANGE)
# Reminders (bot.view.reminder_view, bot.chat.reminding).
DONE = Callback("rd", REMINDER_ID)
SNOOZE = Callback("rz", rf"{REMINDER_ID}:(10|60|t)")
CANCEL_REMINDER = Callback("rc", REMINDER_ID)
CHANGE_REMINDER = Callback("re", REMINDER_ID)
FROM_MEMORY = Callback("rm", MEMORY_ID)
OFFER = Callback("ro", rf"{OFFER_ID}:[yonhde]")  # bot.chat.offering, bot.chat.offer_answers
# Time zones (bot.chat.timezones).
CHOOSE_ZONE = Callback("tzs", ZONE)
MOVE_REMINDERS = Callback("tzm", ZONE)
KEEP_REMINDERS = Callback("tzk")
LOCATION_ZONE = Callback("tzl", rf"{DEGREES}:{DEGREES}")
# Imports (bot.chat.imports) and /start (bot.chat.welcome).
IMPORT = Callback("ia", IMPORT_TOKEN)
CANCEL_IMPORT = Callback("ic", IMPORT_TOKEN)
WELCOME = Callback("w", "(examples|help)")
# The nightly tidy's questions (bot.chat.tidying).
TIDY_QUESTION = Callback("tq", rf"{TOKEN}:\d:[nob]")

CALLBACKS = (
    *(FORGET, DELETE, KEEP, MENU, RELATED, HISTORY, LIST_PAGE, RECALL_PAGE),
    *(KEEP_BOTH, REPLACE, CANCEL_ADD, REMEMBER_THIS, APPLY, DISCARD, UNDO, RESTORE),
    *(DONE, SNOOZE, CANCEL_REMINDER, CHANGE_REMINDER, FROM_MEMORY, OFFER),
    *(CHOOSE_ZONE, MOVE_REMINDERS, KEEP_REMINDERS, LOCATION_ZONE, IMPORT, CANCEL_IMPORT, WELCOME),
    TIDY_QUESTION,
)
