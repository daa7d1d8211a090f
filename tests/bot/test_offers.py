"""Reminders offered for what people say they will do (issue 26), end to end.

The real ``Application`` against the fake Bot API (and the fake OpenAI server for the model's
``offerReminder``), with a controlled clock: Tuesday 2026-12-01 09:00 in Shanghai. Nothing is
scheduled until Yes; a press twice acts once; in a group only who said it, or an
administrator, answers; the console shows and presses the same offer.
"""

from __future__ import annotations

import io
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from bot_harness import ALICE, BOB, LI, Bot

from bench.fakes.openai_server import API_KEY, Answer, FakeOpenAI, Request, ToolCalls
from bench.fakes.telegram_server import BOT_USERNAME, TOKEN, Call, FakeBotAPI
from bot.chat.app import build_application
from bot.chat.console import Console
from bot.chat.running import serving
from bot.chat.services import KEY
from bot.config import parse_config
from bot.jobs.reminders import ReminderJob
from memory.files import MemoryStore

START = datetime(2026, 12, 1, 1, 0, tzinfo=UTC)  # Tuesday 09:00 in Shanghai
CAROL = FakeBotAPI.user(45, "Carol")


class Clock:
    """Real time plus an offset: starts at ``start``, moved on by ``advance``."""

    def __init__(self, start: datetime = START) -> None:
        self.offset = start - datetime.now(UTC)

    def __call__(self) -> datetime:
        return datetime.now(UTC) + self.offset

    def advance(self, **delta: float) -> None:
        self.offset += timedelta(**delta)


class OfferBot(Bot):
    """The running bot, with its reminder job."""

    def __init__(self, telegram: FakeBotAPI, config: Any, application: Any) -> None:
        super().__init__(telegram, config)
        self.job: ReminderJob = application.bot_data[KEY].reminders


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture
def start(telegram: FakeBotAPI, data_dir: Path, tmp_path: Path, clock: Clock) -> Any:
    @asynccontextmanager
    async def running(llm: FakeOpenAI | None = None) -> AsyncIterator[OfferBot]:
        from bot.__main__ import make_llm

        data: dict[str, Any] = {
            "data_dir": str(data_dir),
            "telegram": {"token": TOKEN, "base_url": telegram.base_url, "flood_control": False},
            "reminders": {"timezone": "Asia/Shanghai"},
        }
        if llm is not None:
            data["llm"] = {"base_url": llm.base_url, "api_key": API_KEY, "model": "test-model"}
        config = parse_config(data, base_dir=tmp_path)
        model = make_llm(config) if llm is not None else None
        application = build_application(config, MemoryStore(data_dir), model, clock=clock)
        async with serving(application, poll_timeout=5):
            yield OfferBot(telegram, config, application)

    return running


def buttons(call: Call) -> list[str]:
    markup = call.params.get("reply_markup") or {}
    return [b["callback_data"] for row in markup.get("inline_keyboard", []) for b in row]


def offer_data(call: Call, what: str) -> str:
    [data] = [d for d in buttons(call) if d.startswith("ro:") and d.endswith(f":{what}")]
    return data


def reminder_records(data_dir: Path) -> list[dict[str, Any]]:
    with MemoryStore(data_dir) as store:
        return [d.value for d in store.bot_documents().list("reminders/")]


def alert(telegram: FakeBotAPI, query_id: str) -> str:
    [answer] = telegram.find("answerCallbackQuery", callback_query_id=query_id)
    return str(answer.params.get("text", ""))


# -- offered, and set on Yes ----------------------------------------------------------------------


async def test_an_intention_is_offered_in_either_language_and_yes_sets_one_reminder(
    start: Any, telegram: FakeBotAPI, data_dir: Path, clock: Clock
) -> None:
    async with start() as bot:
        [offer] = await bot.say("I need to call the plumber tomorrow morning", user=ALICE)
        assert offer.text == (
            "⏰ Remind you 2026-12-02 (Wed) 09:00 Asia/Shanghai? — call the plumber"
        )
        rows = offer.params["reply_markup"]["inline_keyboard"]
        # 💾 too: the statement can be kept as a note without a reminder.
        labels = ["✅ Yes", "🕒 Another time", "✖️ No", "💾 Remember this"]
        assert [b["text"] for row in rows for b in row] == labels
        assert reminder_records(data_dir) == []  # nothing is set until Yes
        since = telegram.mark()
        await bot.press(offer, offer_data(offer, "y"), user=ALICE)
        [confirmed] = await telegram.wait("editMessageText", since=since)
        assert "✅ I will remind you:" in confirmed.text
        assert "⏰ 2026-12-02 (Wed) 09:00 Asia/Shanghai — call the plumber" in confirmed.text
        again = await bot.press(offer, offer_data(offer, "y"), user=ALICE)  # twice: once
        assert "set already" in alert(telegram, again)
        [record] = reminder_records(data_dir)
        assert record["text"] == "call the plumber" and record["author"] == "user:42"
        [found] = await bot.say("/recall plumber", user=ALICE)  # a memory too, as /remind's
        assert "2026-12-02 (Wed) 09:00" in found.text

        [zh] = await bot.say("明天下午三点要去接孩子", user=LI)
        assert zh.text == "⏰ 要在 2026-12-02 (周三) 15:00 Asia/Shanghai 提醒你吗？— 去接孩子"
        await bot.press(zh, offer_data(zh, "y"), user=LI)

        since = telegram.mark()
        clock.advance(hours=24)  # Wednesday 09:00: the plumber's reminder is due, once
        [delivered] = await telegram.wait("sendMessage", since=since, chat_id=ALICE["id"])
        assert "call the plumber" in delivered.text
    assert len(reminder_records(data_dir)) == 2


@pytest.mark.parametrize(
    ("remind", "said", "expected"),
    [
        ("周五之前 交报告", "我要在周五之前交报告", "2026-12-03 (周四) 09:00 Asia/Shanghai"),
        ("周五前 交报告", "周五前要交报告", "2026-12-03 (周四) 09:00 Asia/Shanghai"),
        ("3月1日之前 交房租", "3月1日之前要交房租", "2027-02-28 (周日) 09:00 Asia/Shanghai"),
        ("before March 1 pay the rent", "I need to pay the rent before March 1",
         "2027-02-28 (Sun) 09:00 Asia/Shanghai"),
        ("before Friday submit the report", "I have to submit the report before Friday",
         "2026-12-03 (Thu) 09:00 Asia/Shanghai"),
        ("before 8am tomorrow call mom", "I need to call mom before 8am tomorrow",
         "2026-12-02 (Wed) 07:00 Asia/Shanghai"),
    ],
)  # fmt: skip
async def test_before_a_day_is_the_day_before_for_remind_and_for_an_offer_alike(
    start: Any, telegram: FakeBotAPI, data_dir: Path, remind: str, said: str, expected: str
) -> None:
    """A reminder before a deadline comes ahead of it, in time to act: /remind and the offer
    for the same words say the same time (Tuesday 1 December: Friday is the 4th)."""
    user = LI if "周" in expected else ALICE
    async with start() as bot:
        [confirmed] = await bot.say(f"/remind {remind}", user=user)
        assert f"⏰ {expected} — " in confirmed.text
        assert "之前" not in confirmed.text and "before" not in confirmed.text.split("—")[1]
        [offer] = await bot.say(said, user=user)
        assert f" {expected}" in offer.text and (
            "Remind you" in offer.text or "提醒你" in offer.text
        )


@pytest.mark.parametrize(
    "text",
    [
        "Yesterday I went to the dentist",
        "我上周去了杭州",
        "What time is it in Tokyo?",
        "my car is at B2 spot 23",
        "车停在B2层 23号",
        "The store closes at 9pm tomorrow",
        "I don't have to work tomorrow",
        "I need to buy milk",
    ],
)
async def test_statements_questions_and_past_events_get_no_offer(
    start: Any, data_dir: Path, text: str
) -> None:
    async with start() as bot:
        [reply] = await bot.say(text, user=ALICE)
        assert "Remind you" not in reply.text
        assert not [d for d in buttons(reply) if d.startswith("ro:")]
    with MemoryStore(data_dir) as store:
        assert store.namespace("users/42").documents().list("reminder-offers/") == []


async def test_remember_offers_for_a_plan_and_not_for_a_parking_spot(
    start: Any, telegram: FakeBotAPI, data_dir: Path
) -> None:
    async with start() as bot:
        [parked] = await bot.say("/remember 车停在B2层 23号", user=LI)
        assert "📅" not in parked.text and parked.params.get("reply_markup") is None
        [stored] = await bot.say("/remember dentist next Tuesday at 3pm", user=ALICE)
        assert "✅ Remembered." in stored.text and "dentist next Tuesday at 3pm" in stored.text
        assert stored.text.endswith("⏰ Remind you 2026-12-08 (Tue) 15:00 Asia/Shanghai? — dentist")
        since = telegram.mark()
        await bot.press(stored, offer_data(stored, "y"), user=ALICE)
        [confirmation] = await telegram.wait("sendMessage", since=since, chat_id=ALICE["id"])
        assert "⏰ 2026-12-08 (Tue) 15:00 Asia/Shanghai — dentist" in confirmation.text
        [dropped] = await telegram.wait("editMessageReplyMarkup", since=since)  # "Remembered" stays
        assert not dropped.params.get("reply_markup")
        [memory] = bot.memories("users/42")
        [record] = reminder_records(data_dir)
        assert record["memory_id"] == memory["id"]  # the note, not a second memory


async def test_a_reminder_button_of_an_earlier_version_still_sets_it(
    start: Any, telegram: FakeBotAPI, data_dir: Path
) -> None:
    async with start() as bot:
        [stored] = await bot.say("/remember 后天上午十点去银行", user=LI)
        [memory] = bot.memories("users/44")
        since = telegram.mark()
        await bot.press(stored, f"rm:{memory['id']}", user=LI)  # ⏰ under a memory, as sent before
        [confirmation] = await telegram.wait("sendMessage", since=since, chat_id=LI["id"])
        # read as of when the memory was stored (the real time: memories are stamped with it)
        assert "10:00 Asia/Shanghai — 去银行" in confirmation.text
    assert len(reminder_records(data_dir)) == 1


async def test_a_forwarded_plan_is_offered_at_the_time_it_meant(
    start: Any, telegram: FakeBotAPI
) -> None:
    async with start():
        said = int((START - timedelta(days=1)).timestamp())  # "tomorrow", said on Monday
        origin = {"type": "user", "date": said, "sender_user": BOB}
        since = telegram.mark()
        telegram.post(user=ALICE, text="I'll pick you up tomorrow at 6pm", forward_origin=origin)
        [reply] = await telegram.wait("sendMessage", since=since, chat_id=ALICE["id"])
        assert "Remembered" in reply.text and "I'll pick you up tomorrow at 6pm" in reply.text
        assert "⏰ Remind you 2026-12-01 (Tue) 18:00 Asia/Shanghai? — pick you up" in reply.text
        assert offer_data(reply, "y").startswith("ro:m")


# -- No, another time, stale and forged presses, groups -----------------------------------------


async def test_no_declines_and_another_time_takes_a_picked_or_a_typed_time(
    start: Any, telegram: FakeBotAPI, data_dir: Path
) -> None:
    async with start() as bot:
        [offer] = await bot.say("I have to renew my visa before March 1", user=ALICE)
        assert "2027-02-28 (Sun) 09:00" in offer.text  # the day before the deadline
        since = telegram.mark()
        await bot.press(offer, offer_data(offer, "n"), user=ALICE)
        [declined] = await telegram.wait("editMessageText", since=since)
        assert declined.text == "OK, no reminder: renew my visa"
        late = await bot.press(offer, offer_data(offer, "y"), user=ALICE)  # a stale keyboard
        assert "said no" in alert(telegram, late)
        assert reminder_records(data_dir) == []

        [second] = await bot.say("Need to pay the electricity bill on Friday", user=ALICE)
        since = telegram.mark()
        await bot.press(second, offer_data(second, "o"), user=ALICE)
        [asked] = await telegram.wait("sendMessage", since=since, chat_id=ALICE["id"])
        assert "When should I remind you of “pay the electricity bill”?" in asked.text
        labels = [b["text"] for row in asked.params["reply_markup"]["inline_keyboard"] for b in row]
        assert labels == [
            "1 hour before (08:00)",
            "The day before (Thu 09:00)",
            "The evening before (Thu 20:00)",
            "✖️ No",
        ]
        since = telegram.mark()
        await bot.press(asked, offer_data(asked, "e"), user=ALICE)
        [picked] = await telegram.wait("editMessageText", since=since)
        assert "⏰ 2026-12-03 (Thu) 20:00 Asia/Shanghai — pay the electricity bill" in picked.text

        [third] = await bot.say("I'm going to the gym tomorrow at 7am", user=ALICE)
        since = telegram.mark()
        await bot.press(third, offer_data(third, "o"), user=ALICE)
        await telegram.wait("sendMessage", since=since, chat_id=ALICE["id"])  # the question
        [typed] = await bot.say("in 3 hours", user=ALICE)  # the next message: a time alone
        assert "⏰ 2026-12-01 (Tue) 12:00 Asia/Shanghai — going to the gym" in typed.text

        [fourth] = await bot.say("明天下午要去取快递", user=LI)
        [replied] = await bot.say("后天早上8点", user=LI, reply_to=fourth.result)
        assert "⏰ 2026-12-03 (周四) 08:00 Asia/Shanghai — 去取快递" in replied.text
        [other] = await bot.say("I need to call mom tomorrow", user=ALICE)
        since = telegram.mark()
        await bot.press(other, offer_data(other, "o"), user=ALICE)
        await telegram.wait("sendMessage", since=since, chat_id=ALICE["id"])
        [moved_on] = await bot.say("wifi password", user=ALICE)  # no time: searched as ever
        assert "I found nothing" in moved_on.text
    texts = sorted(r["text"] for r in reminder_records(data_dir))
    assert texts == ["going to the gym", "pay the electricity bill", "去取快递"]


async def test_a_stale_or_forged_press_finds_nothing(
    start: Any, telegram: FakeBotAPI, data_dir: Path
) -> None:
    async with start() as bot:
        [offer] = await bot.say("I need to call the bank tomorrow at 10am", user=ALICE)
        [bobs] = await bot.say("/help", user=BOB)
        forged = await bot.press(bobs, offer_data(offer, "y"), user=BOB)  # Alice's id, Bob's chat
        assert "no longer open" in alert(telegram, forged)
        invented = await bot.press(offer, "ro:999999:y", user=ALICE)
        assert "no longer open" in alert(telegram, invented)
    assert reminder_records(data_dir) == []


async def test_in_a_group_only_who_said_it_or_an_admin_answers_the_offer(
    start: Any, telegram: FakeBotAPI, data_dir: Path
) -> None:
    group = telegram.group()
    telegram.admins[group["id"]] = {CAROL["id"]}
    async with start() as bot:
        said = f"@{BOT_USERNAME} I need to book the meeting room tomorrow at 10am"
        [offer] = await bot.say(said, user=ALICE, chat=group)
        assert "⏰ Remind you 2026-12-02 (Wed) 10:00" in offer.text
        refused = await bot.press(offer, offer_data(offer, "y"), user=BOB)
        assert "Only who said it" in alert(telegram, refused)
        refused = await bot.press(offer, offer_data(offer, "n"), user=BOB)
        assert "Only who said it" in alert(telegram, refused)
        assert reminder_records(data_dir) == []
        since = telegram.mark()
        await bot.press(offer, offer_data(offer, "y"), user=CAROL)  # an administrator
        [confirmed] = await telegram.wait("editMessageText", since=since)
        assert "book the meeting room" in confirmed.text
    [record] = reminder_records(data_dir)
    assert record["author"] == "user:42"  # set for who said it


# -- the model's offerReminder ------------------------------------------------------------------


async def test_the_model_offers_through_its_tool_and_nothing_is_set_before_yes(
    start: Any, telegram: FakeBotAPI, data_dir: Path
) -> None:
    def answer(request: Request) -> Answer:
        [result] = request.tool_results()[-1:]
        assert result["offered"] is True and result["set"] is False
        assert result["due"] == "2026-12-02 (Wed) 09:00 Asia/Shanghai"
        return Answer("I can remind you tomorrow morning, see below.")

    async with FakeOpenAI() as llm:
        llm.script(
            ToolCalls(("offerReminder", {"text": "call the plumber", "local": "2026-12-02 09:00"})),
            answer,
        )
        async with start(llm) as bot:
            said = "I need to call the plumber tomorrow morning"
            [reply, offer] = await bot.say(said, user=ALICE, replies=2)
            assert "remind you tomorrow" in reply.text
            assert offer.text == (
                "⏰ Remind you 2026-12-02 (Wed) 09:00 Asia/Shanghai? — call the plumber"
            )
            assert "offerReminder" in llm.requests[0].tool_names
            assert reminder_records(data_dir) == []
            since = telegram.mark()
            await bot.press(offer, offer_data(offer, "y"), user=ALICE)
            [confirmed] = await telegram.wait("editMessageText", since=since)
            assert "⏰ 2026-12-02 (Wed) 09:00 Asia/Shanghai — call the plumber" in confirmed.text
            assert len(llm.requests) == 2  # the press needs no model
    assert [r["text"] for r in reminder_records(data_dir)] == ["call the plumber"]


# -- the console ----------------------------------------------------------------------------------


async def test_the_console_shows_the_offer_and_its_buttons_set_it(
    data_dir: Path, tmp_path: Path
) -> None:
    config = parse_config(
        {"data_dir": str(data_dir), "reminders": {"timezone": "Asia/Shanghai"}},
        base_dir=tmp_path,
    )
    out = io.StringIO()
    store = MemoryStore(config.data_dir)
    console = Console(config, store, None, user_id=1, language="en", out=out, clock=Clock())
    async with console:
        await console.say("I need to call the plumber tomorrow morning")
        assert (
            "#2 ⏰ Remind you 2026-12-02 (Wed) 09:00 Asia/Shanghai? — call the plumber\n"
            "  [1] ✅ Yes\n  [2] 🕒 Another time\n  [3] ✖️ No\n"
        ) in out.getvalue()
        await console.say("1")
        assert "#2 (edited) ✅ I will remind you:" in out.getvalue()
        await console.say("/remember my car is at B2 spot 23")
        assert "Remind you" not in out.getvalue().split("#4 ")[-1]
        await console.say("/reminders")
        assert "1. ⏰ 2026-12-02 (Wed) 09:00 Asia/Shanghai — call the plumber" in out.getvalue()
