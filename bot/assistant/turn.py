"""A free-text turn: the message, the relevant memories and the tools, to the model and back.

One turn, for one namespace (the chat's), one at a time per namespace:

1. the memories that answer the message (``bot.core.operations.answer_of``, the same decision
   as /recall's: none when nothing does, at most three; ``touch=False``) within
   ``memory_tokens`` (1,500 by default), and the last ``history_messages`` messages of the
   conversation (20 by default, within ``history_tokens``) are read, off the event loop;
2. the model gets the system prompt (``bot.assistant.prompt``), that history, the message and the
   eight memory tools (``bot.assistant.tools``); each response's tool calls, several per response
   if it likes, run against the namespace and go back as tool results, until the model answers.
   After ``max_rounds`` rounds of tool calls (5 by default) the next response must be the answer;
   a model that still calls tools is stopped there, with an honest message. At most
   ``MAX_TOOL_CALLS`` calls per turn are executed;
3. the answer, the ids the turn added, changed and deleted (for the "Memory updated" line) and
   the changes past the turn's cap that wait for the user's confirmation
   (``bot.assistant.executor.TurnPolicy``; reminders past theirs,
   ``bot.assistant.reminder_desk``) come back as a ``TurnResult``; what the turn changed is
   one change in the namespace's history of memories (``memory.history``, written by the store
   ahead of each write), whose id the ↩ Undo button carries (the reminders the turn set carry
   it too, and are cancelled with it); what waits is kept durably in
   ``changes.json`` (``bot.assistant.changes``) under the token of Apply all / Discard; the
   message and the answer join the history; the tokens are added to the namespace's totals;
   the memories of the prompt that the answer quotes count as used
   (``bot.core.operations.used_in_answer``: being in the prompt alone is not a use).

A turn is all or nothing for the memories: if it fails (the endpoint times out or errs after
some tool calls ran, or the model is stopped at the limit), its writes are undone
(``ToolExecutor.rollback``) and the history is left as it was, so nothing is half-stored and
the user can simply send the message again. The tokens spent are still counted. A turn whose
waiting changes cannot be kept (the disk refuses ``changes.json``) fails the same way
(``NOT_KEPT``); no change of the model's stands without its record in the history (the store
refuses a change whose record it cannot write).

``TurnResult.seconds`` is the whole turn; ``model_seconds`` the time spent waiting for the SDK
(the model, the network, retry sleeps); the difference is the bot's own overhead, logged per
turn and measured by ``bench/llm_bench.py``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from bot.assistant.changes import ChangeFile, Waiting
from bot.assistant.dialogue import Usage, add_usage, append_history, load_history
from bot.assistant.executor import ToolExecutor, error_result
from bot.assistant.limits import Changes, MessageCut, TurnPolicy, cut_message
from bot.assistant.llm import ChatModel, LLMFailure, Meter, TextSink, ToolCall
from bot.assistant.prompt import memory_context, recent_history, system_prompt
from bot.assistant.reminder_desk import ReminderDesk
from bot.assistant.tools import tool_schemas
from bot.core.operations import SEARCH_RANKER, answer_of, used_in_answer
from memory.errors import MemoryStoreError
from memory.interface import MemoryNamespace
from memory.model import Hit, Memory

log = logging.getLogger(__name__)

TOOL_LIMIT = "tool_limit"  # TurnResult.failure.kind when the model is stopped at max_rounds
NOT_KEPT = "not_kept"  # TurnResult.failure.kind when the turn's undo could not be saved
MAX_TOOL_CALLS = 24


@dataclass(frozen=True)
class AssistantSettings:
    """The turn's limits (documented in ``config.example.toml`` under ``[llm]``)."""

    max_rounds: int = 5
    history_messages: int = 20
    history_tokens: int = 2000
    memory_tokens: int = 1500
    memory_limit: int = 8
    max_changes: int = 3
    max_deletions: int = 1


@dataclass(frozen=True)
class TurnResult:
    """What a turn produced, for the bot to render."""

    text: str
    failure: LLMFailure | None = None
    changes: Changes = field(default_factory=Changes)
    pending: tuple[Waiting, ...] = ()  # memory changes and reminders
    undo_token: str | None = None  # of the ↩ Undo button: the turn's change (``memory.history``)
    pending_token: str | None = None  # of the Apply all / Discard buttons
    rounds: int = 0
    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    context_ids: tuple[int, ...] = ()
    context_tokens: int = 0
    model_seconds: float = 0.0
    seconds: float = 0.0
    usage: Usage | None = None  # the namespace's totals after this turn
    cut: MessageCut | None = None  # the message was longer than the model reads

    @property
    def ok(self) -> bool:
        """Whether the model answered."""
        return self.failure is None

    @property
    def overhead_seconds(self) -> float:
        """Time the turn spent in the bot's own code (everything but waiting for the SDK)."""
        return self.seconds - self.model_seconds


def _local_now() -> datetime:
    return datetime.now().astimezone()


class Assistant:
    """Answers free text with a model that uses the memory tools of the chat's namespace."""

    def __init__(
        self,
        model: ChatModel,
        settings: AssistantSettings | None = None,
        *,
        name: str = "Cogito",
        clock: Callable[[], datetime] = _local_now,
    ) -> None:
        self.model = model
        self.settings = settings if settings is not None else AssistantSettings()
        self.name = name
        self.clock = clock
        self.tools = tool_schemas()
        self._locks: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()

    async def aclose(self) -> None:
        """Close the model's HTTP connections."""
        await self.model.aclose()

    def _lock(self, namespace: MemoryNamespace) -> asyncio.Lock:
        lock = self._locks.get(namespace.name)
        if lock is None:
            lock = asyncio.Lock()
            self._locks[namespace.name] = lock
        return lock

    async def reply(
        self,
        namespace: MemoryNamespace,
        message: str,
        *,
        language: str = "en",
        speaker: str | None = None,
        group: bool = False,
        may_change: Callable[[Memory], bool] | None = None,
        source: str | None = None,
        on_text: TextSink | None = None,
        reminders: ReminderDesk | None = None,
        zone: ZoneInfo | None = None,
    ) -> TurnResult:
        """Run one turn for ``message`` in ``namespace``.

        ``speaker`` (a display name) prefixes the message in groups, where several people share
        the history. Memory errors (``memory.errors``) propagate; endpoint failures come back in
        ``TurnResult.failure``. ``may_change`` limits which existing memories the model may
        update (``TurnPolicy``); ``source`` names the message, so that a turn
        run again (after a crash) adds no memory twice (``ToolExecutor``); ``reminders`` lets
        the model set reminders (``scheduleReminder``), undone with the turn if it fails;
        ``zone`` is the chat's time zone (None: UTC): the model is told the time in it, and
        ``addMemory`` reads the dates a memory names in it, as ``/remember`` does.
        """
        async with self._lock(namespace):
            started = time.perf_counter()
            result = await self._turn(
                namespace,
                message,
                language,
                speaker,
                group,
                may_change,
                source,
                on_text,
                reminders,
                zone,
            )
            seconds = time.perf_counter() - started
            # A failed turn (a refused key, an endpoint down) is the operator's to notice.
            log.log(
                logging.WARNING if result.failure else logging.INFO,
                "turn in %s: %d rounds, %d requests, %d+%d tokens, %d memories (%d tokens) in "
                "context, %.0f ms (%.1f ms ours)%s",
                namespace.name,
                result.rounds,
                result.requests,
                result.prompt_tokens,
                result.completion_tokens,
                len(result.context_ids),
                result.context_tokens,
                seconds * 1000,
                (seconds - result.model_seconds) * 1000,
                f", failed: {result.failure.kind} ({result.failure.message})"
                if result.failure
                else "",
            )
            return dataclasses.replace(result, seconds=seconds)

    async def _turn(
        self,
        namespace: MemoryNamespace,
        message: str,
        language: str,
        speaker: str | None,
        group: bool,
        may_change: Callable[[Memory], bool] | None,
        source: str | None,
        on_text: TextSink | None,
        reminders: ReminderDesk | None = None,
        zone: ZoneInfo | None = None,
    ) -> TurnResult:
        settings = self.settings
        message, cut = cut_message(message)  # searched, read and kept only so far
        hits, history = await asyncio.to_thread(self._recall, namespace, message)
        context = memory_context(hits, settings.memory_tokens)
        said = f"{speaker}: {message}" if speaker else message
        said += cut.note() if cut else ""
        now = self.clock() if zone is None else self.clock().astimezone(zone)  # the chat's time
        system = system_prompt(
            now=now, language=language, memories=context.lines, name=self.name, group=group
        )
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": system},
            *recent_history(history, settings.history_messages, settings.history_tokens),
            {"role": "user", "content": said},
        ]
        # In a group the model deletes nothing on its own: each deletion is asked with buttons,
        # which only the memory's author or an administrator can confirm (bot.chat.access).
        allowed = 0 if group else settings.max_deletions
        policy = TurnPolicy(
            max_changes=settings.max_changes, max_deletions=allowed, may_change=may_change
        )
        executor = ToolExecutor(namespace, policy, source, reminders, zone)
        meter = Meter()
        rounds = 0
        calls_left = MAX_TOOL_CALLS
        answer = ""
        failure: LLMFailure | None = None
        try:
            while True:
                try:
                    completion = await self.model.complete(
                        messages, self.tools, on_text=on_text, meter=meter
                    )
                except LLMFailure as e:
                    failure = e
                    break
                if not completion.tool_calls:
                    answer = completion.text.strip()
                    break
                if rounds == settings.max_rounds:
                    failure = LLMFailure(TOOL_LIMIT, f"still calling tools after {rounds} rounds")
                    break
                rounds += 1
                runnable = completion.tool_calls[: max(calls_left, 0)]
                calls_left -= len(completion.tool_calls)
                results = await asyncio.to_thread(_execute, executor, runnable)
                messages.append(completion.message())
                for call in completion.tool_calls:
                    content = results.get(call.id) or error_result(
                        "TOO_MANY_CALLS", f"not run: at most {MAX_TOOL_CALLS} calls per message"
                    )
                    messages.append({"role": "tool", "tool_call_id": call.id, "content": content})
        except asyncio.CancelledError:
            executor.rollback()  # shutting down mid-turn: the user never saw an answer
            raise
        finished = await asyncio.to_thread(
            self._finish,
            namespace,
            executor,
            meter,
            failure,
            [("user", said), ("assistant", answer)],
        )
        if finished.failure is None and answer:
            shown = [hit.memory for hit in hits if hit.memory.id in context.ids]
            await asyncio.to_thread(_count_quoted, namespace, answer, shown)
        return TurnResult(
            text=answer,
            failure=finished.failure,
            changes=executor.changes,
            pending=_waiting(executor),
            undo_token=finished.undo_token,
            pending_token=finished.pending_token,
            rounds=rounds,
            requests=meter.requests,
            prompt_tokens=meter.prompt_tokens,
            completion_tokens=meter.completion_tokens,
            context_ids=context.ids,
            context_tokens=context.tokens,
            model_seconds=meter.seconds,
            usage=finished.usage,
            cut=cut,
        )

    def _recall(
        self, namespace: MemoryNamespace, message: str
    ) -> tuple[list[Hit], list[dict[str, str]]]:
        hits: list[Hit] = []
        if message.strip():
            found = namespace.search(
                message, limit=self.settings.memory_limit, ranker=SEARCH_RANKER, touch=False
            )
            hits = list(answer_of(message, found).shown)  # what answers it, nothing else
        return hits, load_history(namespace.documents())

    def _finish(
        self,
        namespace: MemoryNamespace,
        executor: ToolExecutor,
        meter: Meter,
        failure: LLMFailure | None,
        exchange: list[tuple[str, str]],
    ) -> _Finished:
        """Keep a turn's undo and pending changes, or undo a failed turn's writes; remember
        the exchange of a turn that stands; count the tokens either way."""
        finished = _Finished(failure)
        if failure is None:
            try:
                finished = _keep(namespace, executor)
            except MemoryStoreError as e:
                log.warning("changes of %s not kept, turn undone: %s", namespace.name, e.message)
                finished = _Finished(LLMFailure(NOT_KEPT, f"changes not kept: {e.message}"))
        if finished.failure is not None:
            executor.rollback()
        try:
            if finished.failure is None and self.settings.history_messages > 0:
                append_history(namespace.documents(), exchange, keep=self.settings.history_messages)
            finished.usage = add_usage(
                namespace.documents(),
                requests=meter.requests,
                prompt_tokens=meter.prompt_tokens,
                completion_tokens=meter.completion_tokens,
            )
        except MemoryStoreError as e:
            # Side files only: the memories are saved and the answer stands without them.
            log.warning("history or usage of %s not saved: %s", namespace.name, e.message)
        return finished


@dataclass
class _Finished:
    """How a turn ended, once its changes are kept (or undone)."""

    failure: LLMFailure | None = None
    undo_token: str | None = None
    pending_token: str | None = None
    usage: Usage | None = None


def _keep(namespace: MemoryNamespace, executor: ToolExecutor) -> _Finished:
    """Keep the turn's pending changes in ``changes.json``; the tokens of its buttons (↩ Undo:
    the turn's change in the history, which the store wrote ahead of each write)."""
    book = ChangeFile(namespace.documents())
    made = executor.reminders.made if executor.reminders is not None else []
    undo = executor.change if executor.undo or made else None
    pending = _waiting(executor)
    return _Finished(None, undo, book.keep_pending(pending) if pending else None)


def _waiting(executor: ToolExecutor) -> tuple[Waiting, ...]:
    """What the turn leaves for the user's confirmation: memory changes, then reminders."""
    reminders = executor.reminders.waiting if executor.reminders is not None else []
    return (*executor.policy.pending, *reminders)


def _count_quoted(namespace: MemoryNamespace, answer: str, shown: list[Memory]) -> None:
    """The memories of the prompt that the answer quotes count as used (``operations``)."""
    try:
        used_in_answer(namespace, answer, shown)
    except MemoryStoreError as e:  # bookkeeping: the answer stands without it
        log.warning("access counts of %s not updated: %s", namespace.name, e.message)


def _execute(executor: ToolExecutor, calls: list[ToolCall]) -> dict[str, str]:
    """Run tool calls in order (in a worker thread: the store's writes fsync)."""
    return {call.id: executor.execute(call.name, call.arguments) for call in calls}
