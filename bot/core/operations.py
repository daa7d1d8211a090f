"""The memory operations of the bot: one set for commands, buttons, the model's tools and jobs.

Each operation is a plain function of a namespace (``memory.interface.MemoryNamespace``) and,
when it changes a memory that exists, of who asks (``bot.core.policy``: a door's ``Caller``, or
the model's turn, which answers ``may_change`` by its ``TurnPolicy``). It reads what
people type with the library's own parsers (``memory.model.parse_id``, ``parse_limit``),
applies the one permission rule (``Caller.may_change``; ``bot.errors.NotAllowed`` when it
refuses), and returns memory values; what a reply looks like is the door's business. The one
outside view of a memory, without the bot's bookkeeping (``source``), is ``public_record``.

What counts as a use of a memory (``accessCount`` + 1, ``accessedAt`` now) is decided here,
for every door, and nowhere else: a memory is used when it is the answer, not when it is
merely shown. Precisely:

- ``/recall`` and free text without a model (``recall_page``): the first answer, and only on
  the first page; weaker matches, further pages, the newest memories of a blank /recall, and
  ``/list``, ``/related``, ``/stats``, the digest and ``/export`` are not uses;
- the model's ``searchMemory`` (``search``): each answer it receives (``answer_of``: what
  ``memory.relevance.decide`` shows); the memories in the system prompt only if the answer
  quotes them (``used_in_answer``, called by ``bot.assistant.turn``); ``getMemory`` and the
  other tools are not uses;
- buttons: 🗑, Delete, Keep, the page buttons of ``/list`` and ``/recall`` are not uses.

A match that shares only stop words or characters with the query (``你是谁`` and
``小王的生日是3月5日`` share 是) is never shown by ``/recall`` and never counts
(``memory.relevance.matches``). The library's ``search(..., touch=True)``, which touches every
hit as the article does, stays for the CLI and library callers; here every search is made with
``touch=False`` and the answer is touched with ``MemoryNamespace.touch``.

Store calls block (an fsync, a cold namespace's index build: seconds at 100,000 memories), so
the doors never make them on the event loop: they run each operation in a small pool of worker
threads (``bot.core.workers.Workers``), and one chat's slow call delays no other chat. The
model's tools call the same functions from the turn's own worker thread.

Every change is recorded in the namespace's history by the store itself, with who acts
(``memory.history.current_author``, set once per update by ``bot.chat.access.gatekeeper``), so
no door needs to remember to; ``bot.core.undoing`` reads it, undoes a change and restores a
version.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

from bot.categories import canonical, in_category, merge_counts
from bot.core.dating import day_asked, on_day
from bot.core.policy import Permission
from bot.errors import NotAllowed
from memory.documents import Documents, update_document
from memory.errors import MemoryNotFound, MemoryStoreError
from memory.interface import MemoryNamespace, SearchStatus
from memory.model import Hit, Memory, Stats, clean_category, clean_tags, parse_id, parse_limit
from memory.relevance import Answer, decide, matches, quotes
from memory.text import created_terms, date_terms
from memory.updates import judge, newest_first, whose_first

RECALL_LIMIT = 5  # weaker matches a page
_DAY_TERM = re.compile(r"@\d\d-\d\d")  # memory.text's term of a day of the year
REMINDER_CATEGORY = "reminder"  # the category of a reminder's memory (``bot.chat.reminding``)
# Every search of the bot fuses keywords with meaning when the store has an embedder; without
# one (or while it fails) "hybrid" is exactly the keyword ranking (``memory.hybrid``).
SEARCH_RANKER = "hybrid"
RECALL_DEPTH = 100  # /recall counts and pages through at most this many matches
RECALL_QUERIES = "recall-queries"  # the namespace's document of paged /recall queries
KEPT_QUERIES = 20
QUERY_TOKEN_CHARS = 10
RELATED_LIMIT = 5
BOT_FIELDS = ("source", "attachment", "origin")  # the bot's own keys of a memory's record

log = logging.getLogger(__name__)


def find(namespace: MemoryNamespace, value: object) -> Memory:
    """The memory whose id is ``value`` as typed (``MemoryInvalid``, ``MemoryNotFound``)."""
    return namespace.get(parse_id(value))


def find_changeable(namespace: MemoryNamespace, caller: Permission, value: object) -> Memory:
    """Like ``find``, for a memory about to change: ``NotAllowed`` if the caller may not."""
    memory = find(namespace, value)
    if not caller.may_change(memory):
        raise NotAllowed(memory)
    return memory


def add(
    namespace: MemoryNamespace,
    content: str,
    tags: Iterable[str] | str = (),
    category: str | None = None,
    *,
    source: str | None = None,
    attachment: Mapping[str, Any] | None = None,
    origin: Mapping[str, Any] | None = None,
) -> Memory:
    """Store a new memory as it is given (a ``source`` already stored returns that memory
    instead), with the file it was made from (``attachment``) and a forward's ``origin`` when
    given. What a person or the model asks to remember goes through ``bot.core.adding.remember``
    instead, which also looks for near-duplicates; this is for what the bot stores itself (a
    forwarded message, a file, a reminder's memory)."""
    return namespace.add(
        content, tags, category, source=source, attachment=attachment, origin=origin
    )


def from_source(namespace: MemoryNamespace, source: str) -> Memory | None:
    """The memory stored from the message ``source`` names, if any."""
    return next((m for m in namespace.memories() if m.source == source), None)


def browse(namespace: MemoryNamespace, query: str, limit: object = RECALL_LIMIT) -> list[Memory]:
    """What answers ``query`` (``answer_of``), without counting as an access (inline queries run
    on every keystroke); a blank query: the newest ``limit`` memories."""
    count = parse_limit(limit)
    if query.strip():
        hits = namespace.search(query, max(count, RECALL_LIMIT), ranker=SEARCH_RANKER, touch=False)
        return [hit.memory for hit in answer_of(query, hits).shown[:count]]
    return namespace.memories()[-count:][::-1]


@dataclass(frozen=True)
class Matches:
    """One page of what /recall found: ``memories`` from position ``start`` of ``total``.

    What a question found is one list: its answers first (``answers`` of them, what
    ``memory.relevance.decide`` shows; for a question about a day, that day's memories), then
    the weaker matches, best first. The first page shows the answers (none: "nothing found"),
    the next ones the weaker matches, ``size`` a page. A blank /recall pages the newest memories,
    all of them "answers".
    """

    query: str
    memories: tuple[Memory, ...]
    start: int
    total: int
    capped: bool = False  # the search stopped at RECALL_DEPTH: there may be more than total
    token: str | None = None  # names ``query`` for the buttons of other pages (``recall_query``)
    answers: int = 0
    page: int = 0
    older: frozenset[int] = frozenset()  # superseded by a newer value shown before them
    statement: bool = False  # searched for a statement (it asks nothing: ``answer_of``)

    @property
    def more(self) -> bool:
        """Whether a page follows this one."""
        return self.start + len(self.memories) < self.total

    @property
    def weaker(self) -> bool:
        """Whether this page shows weaker matches, not answers."""
        return self.page > 0 and bool(self.query)


def recall_page(
    namespace: MemoryNamespace,
    query: str,
    page: int = 0,
    size: object = RECALL_LIMIT,
    *,
    use: bool = True,
    zone: ZoneInfo | None = None,
    statement: bool = False,
) -> Matches:
    """Page ``page`` (0-based, clamped) of what ``query`` found (``Matches``); blank: the newest
    memories.

    With ``use`` (a question asked, not a page turned), the first answer counts as used (see the
    module docstring). When there is more than one page, the query is kept (``keep_query``) under
    the returned ``token``. A question about a relative day ("what did I save today", "昨天记了
    什么") has the memories stored that day (in ``zone``, UTC by default) or speaking of it as
    its answers (``bot.core.dating``). A reminder's memory is an answer only as the first one,
    and a ``statement`` has only a clear match for an answer (``answer_of``). Of two memories
    that give one thing different values, the newer is shown first and the older is ``older``
    (``memory.updates.newest_first``).
    """
    count, number = parse_limit(size), max(page, 0)
    if not query.strip():
        newest = namespace.memories()[::-1]
        start = min(number * count, max(len(newest) - 1, 0) // count * count)
        page_of = tuple(newest[start : start + count])
        return Matches("", page_of, start, len(newest), answers=len(newest), page=start // count)
    hits = namespace.search(query, RECALL_DEPTH, ranker=SEARCH_RANKER, touch=False)
    capped = len(hits) == RECALL_DEPTH
    zone = zone or ZoneInfo("UTC")
    if (day := day_asked(query, datetime.now(UTC), zone)) is not None:
        that_day = on_day(namespace.memories(), day, zone)
        ids = {m.id for m in that_day}
        rest = [hit.memory for hit in matches(query, hits) if hit.memory.id not in ids]
        found, answers, older = [*that_day, *rest], len(that_day), frozenset[int]()
    else:
        answer = answer_of(query, hits, statement=statement)
        answering, weaker, older = newest_first(
            [hit.memory for hit in answer.shown], [hit.memory for hit in answer.weaker]
        )
        answering = whose_first(query, answering)
        found, answers = [*answering, *weaker], len(answering)
    first = min(answers, count)  # the first page: the answers (at most a page of them)
    last_page = -(-(len(found) - first) // count) if len(found) > first else 0
    number = min(number, last_page)
    if number == 0:
        start, shown = 0, found[:first]
    else:
        start = first + (number - 1) * count
        shown = found[start : start + count]
    if use and number == 0 and shown:
        shown[:1] = namespace.touch([shown[0].id]) or shown[:1]
    token = None
    if len(found) > first:
        token = keep_query(namespace.documents(), query) if use else query_token(query)
    return Matches(
        query, tuple(shown), start, len(found), capped, token, answers, number, older, statement
    )


STATEMENT_MARGIN = 4.5  # a statement searched shows only a clear match (``answer_of``)
UPDATE_LOOKED_AT = 20  # the best hits looked at for the memory a statement updates


def answer_of(query: str, hits: Sequence[Hit], *, statement: bool = False) -> Answer:
    """What answers ``query`` of ``hits`` (``memory.relevance.decide``), with two rules of the
    bot's: a reminder's memory is an answer only when it is the first (the place of a close
    second belongs to what the question is about; a reminder that merely looks alike, by its
    date or its time, is a weaker match), and a question naming a date that nothing else
    answers ("12月8日", "what did I save on May 4th?") has that date's memories as its
    answers (stored that day, or speaking of it). A ``statement`` (a message that asks
    nothing, searched for what it touches) shows only a clear match: its best must score
    ``STATEMENT_MARGIN`` above the threshold (log-odds: about ninety times the odds), so that
    "my bike is blue" does not answer with "my passport is in the blue folder" (a clear match
    reaches 6, the blue folder 3.5); but a memory the statement gives a new value ("the cabin
    wifi password is now pinecone43": ``memory.updates`` would replace or ask) is what it
    touches, and is its answer, first: the 💾 under it then replaces it (``bot.core.adding``)."""
    answer = decide(query, hits, margin=STATEMENT_MARGIN if statement else 0.0)
    if statement and (updated := _updated(query, hits)) is not None:
        rest = [hit for hit in (*answer.shown, *answer.weaker) if hit is not updated]
        return Answer((updated,), tuple(rest))
    if not answer.shown and (dated := _dated(query, hits)):
        ids = {hit.memory.id for hit in dated}
        return Answer(
            tuple(dated), tuple(h for h in matches(query, hits) if h.memory.id not in ids)
        )
    shown = [
        hit
        for place, hit in enumerate(answer.shown)
        if place == 0 or hit.memory.category != REMINDER_CATEGORY
    ]
    if len(shown) == len(answer.shown):
        return answer
    moved = [hit for hit in answer.shown if hit not in shown]
    return Answer(tuple(shown), (*moved, *answer.weaker))


def _updated(statement: str, hits: Sequence[Hit]) -> Hit | None:
    """The best of ``hits`` that ``statement`` gives a new value (``memory.updates.judge``),
    a reminder's memory aside (a reminder changes through its own buttons)."""
    for hit in hits[:UPDATE_LOOKED_AT]:
        memory = hit.memory
        if memory.category != REMINDER_CATEGORY and judge(statement, memory.content) is not None:
            return hit
    return None


def newest(query: str, answer: Answer) -> tuple[Answer, frozenset[int]]:
    """``answer`` to ``query`` with the newer of two memories that give one thing different
    values before the older, and what is about someone the query does not ask about after the
    rest (``memory.updates.newest_first``, ``whose_first``); the ids of the older ones."""
    by_id = {hit.memory.id: hit for hit in (*answer.shown, *answer.weaker)}
    shown, weaker, older = newest_first(
        [hit.memory for hit in answer.shown], [hit.memory for hit in answer.weaker]
    )
    shown = whose_first(query, shown)
    if [m.id for m in shown] == [h.memory.id for h in answer.shown]:
        return answer, older
    return Answer(tuple(by_id[m.id] for m in shown), tuple(by_id[m.id] for m in weaker)), older


def _dated(query: str, hits: Sequence[Hit]) -> list[Hit]:
    """The matches of ``hits`` stored on, or speaking of, a date ``query`` names (its days
    when it names days, else its months)."""
    named = date_terms(query)
    days = {term for term in named if _DAY_TERM.fullmatch(term)}
    wanted = days or set(named)
    if not wanted:
        return []

    def on(memory: Memory) -> bool:
        terms = set(created_terms(memory.created_at))
        if memory.date:
            terms.update(created_terms(memory.date))
        return bool(terms & wanted)

    return [hit for hit in hits if on(hit.memory)]


def recall(
    namespace: MemoryNamespace,
    query: str,
    limit: object = RECALL_LIMIT,
    *,
    zone: ZoneInfo | None = None,
) -> list[Memory]:
    """The best matches for ``query``, best first; a blank query: the newest memories."""
    return list(recall_page(namespace, query, 0, limit, zone=zone).memories)


def query_token(query: str) -> str:
    """A short name for a query, for callback data (hex, ``QUERY_TOKEN_CHARS`` long)."""
    return hashlib.sha256(query.encode("utf-8", "surrogatepass")).hexdigest()[:QUERY_TOKEN_CHARS]


def keep_query(documents: Documents, query: str) -> str:
    """Keep ``query`` among the namespace's last ``KEPT_QUERIES`` paged ones; its token."""
    token = query_token(query)

    def change(value: Any) -> dict[str, str]:
        kept = {k: v for k, v in value.items() if k != token} if isinstance(value, dict) else {}
        kept[token] = query
        return dict(list(kept.items())[-KEPT_QUERIES:])

    try:
        update_document(documents, RECALL_QUERIES, change, durable=False)
    except MemoryStoreError as e:  # only the ▶ button needs it: it will say it is stale
        log.warning("could not keep a /recall query: %s", e.message)
    return token


def recall_query(documents: Documents, token: str) -> str | None:
    """The query kept under ``token`` (``keep_query``), or None if it is no longer kept."""
    found = documents.get(RECALL_QUERIES)
    query = found.value.get(token) if found is not None and isinstance(found.value, dict) else None
    return query if isinstance(query, str) and query_token(query) == token else None


def search(namespace: MemoryNamespace, query: str, limit: object = 10) -> Answer:
    """What answers ``query`` (``answer_of``; the model's ``searchMemory``), the answers
    counted as used, and the weaker matches after them (at most ``limit`` in all); of two
    that give one thing different values, the newer first (``newest``)."""
    count = parse_limit(limit)
    hits = namespace.search(query, max(count, RECALL_LIMIT), ranker=SEARCH_RANKER, touch=False)
    answer = newest(query, answer_of(query, hits))[0]
    used = [hit.memory.id for hit in answer.shown]
    touched = {memory.id: memory for memory in namespace.touch(used)} if used else {}
    shown = tuple(
        Hit(touched.get(h.memory.id, h.memory), h.score, h.evidence) for h in answer.shown
    )
    return Answer(shown[:count], answer.weaker[: max(count - len(shown), 0)])


def used_in_answer(namespace: MemoryNamespace, answer: str, shown: Iterable[Memory]) -> list[int]:
    """Count as used the memories of ``shown`` (the system prompt's) that ``answer`` quotes,
    unless used since they were shown (a search of the same turn); the ids counted."""
    quoted = quotes(answer, shown)
    if not quoted:
        return []
    fresh = []
    for memory in quoted.values():
        try:
            if namespace.get(memory.id).access_count == memory.access_count:
                fresh.append(memory.id)
        except MemoryNotFound:  # deleted by this turn
            continue
    return [memory.id for memory in namespace.touch(fresh)] if fresh else []


def forget(namespace: MemoryNamespace, caller: Permission, value: object) -> Memory:
    """Delete the memory whose id is ``value``, if the caller may; the deleted memory."""
    return namespace.delete(find_changeable(namespace, caller, value).id)


def edit(
    namespace: MemoryNamespace,
    caller: Permission,
    value: object,
    *,
    content: str | None = None,
    tags: Iterable[str] | str | None = None,
    category: str | None = None,
) -> Memory:
    """Change the memory whose id is ``value``, if the caller may; the changed memory."""
    memory = find_changeable(namespace, caller, value)
    if category is not None:
        category = canonical(category)  # 健康 is health (bot.categories)
    return namespace.update(memory.id, content=content, tags=tags, category=category)


def related(
    namespace: MemoryNamespace, value: object, limit: object = RELATED_LIMIT
) -> tuple[Memory, list[Memory]]:
    """The memory whose id is ``value`` and the memories related to it, best first.

    Unlike the article (+1 a shared tag, +2 the same category), a shared tag weighs more than
    a shared category, and the default category weighs nothing: that every note without a
    category is in ``general`` does not make them related.
    """
    memory = find(namespace, value)
    hits = namespace.related(
        memory.id, parse_limit(limit), tag=2.0, category=1.0, default_category=False
    )
    return memory, [hit.memory for hit in hits]


def listing(
    namespace: MemoryNamespace, category: str | None = None, *, tag: str | None = None
) -> list[Memory]:
    """Every memory (or one category's, either language's word: ``bot.categories``, or those
    with ``tag``), newest first."""
    newest = namespace.memories()[::-1]
    if category is not None:
        clean_category(category)  # MemoryInvalid: no category could be called that
        newest = in_category(newest, category)
    if tag is None:
        return newest
    [label] = clean_tags([tag]) or ("",)
    return [m for m in newest if label in m.tags]


def stats(namespace: MemoryNamespace) -> Stats:
    """Totals by category, the most used tags and the most used memories: never one unused
    (the article's top 5 by ``accessCount`` may list memories nobody used)."""
    found = namespace.stats()
    used = [memory for memory in found.most_accessed if memory.access_count > 0]
    by_category = merge_counts(found.by_category)  # 健康 and health are one (bot.categories)
    return dataclasses.replace(found, by_category=by_category, most_accessed=used)


def search_status(namespace: MemoryNamespace) -> SearchStatus:
    """How searches work now: keywords only, or keywords and meaning (and how far embedded)."""
    return namespace.search_status()


def public_record(memory: Memory) -> dict[str, Any]:
    """A memory as the outside sees it: the article's record, without the bot's ``source``
    (where it came from: chat, message and author ids, which are bookkeeping), ``attachment``
    (a Telegram file reference, valid for this bot only) and ``origin``."""
    record = memory.to_dict()
    for key in BOT_FIELDS:
        record.pop(key, None)
    return record


def export(namespace: MemoryNamespace) -> list[dict[str, Any]]:
    """Every memory as an article-format record (``public_record``), in stored order."""
    return [public_record(memory) for memory in namespace.memories()]
