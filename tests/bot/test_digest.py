"""The digest: the report, its schedule (cron, time zones, DST), periods, restarts, failures,
its configuration and the /digest command.

The job is run directly (``Digest.run``) with a controlled clock, sending through the real
python-telegram-bot ``Bot`` to the fake Bot API on 127.0.0.1; the memories are real files.
The command is tested end to end: the real ``Application`` against the fake.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from bot_harness import ALICE as ALICE_USER
from bot_harness import BOB as BOB_USER
from bot_harness import LI as LI_USER
from bot_harness import StartBot
from telegram import Bot
from telegram.ext import ApplicationBuilder

from bench.fakes.telegram_server import TOKEN, FakeBotAPI
from bot.__main__ import main
from bot.chat.app import build_application
from bot.config import DigestConfig, parse_config
from bot.core.chat_zones import set_chat_zone
from bot.errors import ConfigError
from bot.jobs.digest import Digest
from bot.jobs.digest_plan import SETTINGS_FILE
from bot.schedule import Schedule, crontab_weekdays, parse_timezone
from memory.files import MemoryStore
from memory.timestamps import format_time

SHANGHAI = ZoneInfo("Asia/Shanghai")
BERLIN = ZoneInfo("Europe/Berlin")
# "0 9 * * mon" in Asia/Shanghai: Monday 3 March 2025, 09:00 local, is 01:00 UTC.
PERIOD = datetime(2025, 3, 3, 1, 0, tzinfo=UTC)
PREVIOUS = PERIOD - timedelta(days=7)
ALICE, BOB, CAROL = 42, 43, 44


def record(
    content: str,
    *,
    created: datetime,
    accessed: datetime | None = None,
    count: int = 0,
    offset: int = 0,
) -> dict[str, Any]:
    """An article-format memory with chosen times and access count."""
    return {
        "id": int(created.timestamp() * 1000) + offset,
        "content": content,
        "tags": [],
        "category": "general",
        "createdAt": format_time(created),
        "accessedAt": format_time(accessed or created),
        "accessCount": count,
    }


def settings_file(store: MemoryStore, name: str) -> dict[str, Any]:
    return dict(json.loads((store.data_dir / name / SETTINGS_FILE).read_text("utf-8")))


def make_digest(store: MemoryStore, now: datetime = PERIOD, **config: Any) -> Digest:
    """The digest at ``now``; every namespace on unless it chose (``default="on"``)."""
    values = {"schedule": "0 9 * * mon", "timezone": "Asia/Shanghai", "default": "on", **config}
    return Digest(DigestConfig(**values), store, clock=lambda: now)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[MemoryStore]:
    with MemoryStore(tmp_path / "data") as opened:
        yield opened


@pytest.fixture
async def sender(telegram: FakeBotAPI) -> AsyncIterator[Bot]:
    """The real python-telegram-bot ``Bot``, pointed at the fake."""
    async with Bot(TOKEN, base_url=telegram.base_url) as bot:
        yield bot


def remember(store: MemoryStore, name: str, *records: dict[str, Any]) -> None:
    store.namespace(name).import_memories(records)


def one_memory(store: MemoryStore, *names: str) -> None:
    for name in names:
        remember(store, name, record(f"a memory of {name}", created=PREVIOUS, count=1))


def texts(telegram: FakeBotAPI, chat_id: int) -> list[str]:
    return [call.text for call in telegram.find("sendMessage", chat_id=chat_id)]


# -- the report --------------------------------------------------------------------------------


async def test_the_report_lists_most_used_new_and_unused_memories(
    store: MemoryStore, telegram: FakeBotAPI, sender: Bot
) -> None:
    telegram.private_chat(FakeBotAPI.user(ALICE))
    old = PERIOD - timedelta(days=90)
    remember(
        store,
        "users/42",
        record("standup is at 10:00", created=old, accessed=PERIOD - timedelta(days=1), count=3),
        record("my code is in D:\\projects", created=old, accessed=PERIOD, count=7, offset=1),
        record("the wifi password is <b>&amp; tricky", created=old, offset=2),  # never used
        record("dentist on friday", created=PERIOD - timedelta(days=2), count=0),
    )
    result = await make_digest(store).run(sender)

    assert result.sent == ["users/42"]
    [text] = texts(telegram, ALICE)
    most_used = text.index("Most used")
    assert most_used < text.index("(7×) my code is in D:\\projects") < text.index("(3×) standup")
    assert "wifi" not in text[most_used : text.index("Added since")]  # never recalled
    # Added since the previous Monday 09:00 (Shanghai), where the first report starts.
    assert "Added since 2025-02-24 (Mon) 09:00 Asia/Shanghai: 1" in text
    assert "• dentist on friday" in text
    # Unused for 30 days: the wifi password (created and last used 90 days ago).
    assert "1 memories not recalled for 30 days" in text
    assert "/list" in text and "/forget" in text
    for memory in store.namespace("users/42").memories():
        assert (f"🆔 {memory.id}" in text) == ("wifi" not in memory.content)


async def test_contents_are_escaped_and_a_long_report_is_split(
    store: MemoryStore, telegram: FakeBotAPI, sender: Bot
) -> None:
    telegram.private_chat(FakeBotAPI.user(ALICE))
    remember(
        store,
        "users/42",
        *(
            record(f"<b>{n}</b> & " + "x" * 300, created=PREVIOUS, count=n, offset=n)
            for n in range(1, 41)
        ),
    )
    await make_digest(store, top=40).run(sender)

    parts = texts(telegram, ALICE)  # the fake refuses bad HTML and messages over 4096
    assert len(parts) >= 2
    assert "<b>40</b> & xxx" in parts[0]  # shown literally, the most used first


async def test_chinese_memories_get_a_chinese_report(
    store: MemoryStore, telegram: FakeBotAPI, sender: Bot
) -> None:
    telegram.private_chat(FakeBotAPI.user(ALICE))
    remember(store, "users/42", record("代码在 D:\\projects", created=PREVIOUS, count=2))
    await make_digest(store).run(sender)
    [text] = texts(telegram, ALICE)
    assert "记忆摘要" in text and "代码在" in text


async def test_reporting_does_not_change_access(
    store: MemoryStore, telegram: FakeBotAPI, sender: Bot, tmp_path: Path
) -> None:
    telegram.private_chat(FakeBotAPI.user(ALICE))
    remember(store, "users/42", record("standup at 10", created=PREVIOUS, count=4))
    before = store.namespace("users/42").export()
    digest = make_digest(store)

    assert digest.report("users/42") is not None  # /digest now
    assert (await digest.run(sender)).sent == ["users/42"]

    assert store.namespace("users/42").export() == before
    store.close()
    with MemoryStore(tmp_path / "data") as reopened:  # what is on disk, not only in RAM
        assert reopened.namespace("users/42").export() == before


async def test_namespaces_without_memories_or_chat_are_skipped(
    store: MemoryStore, telegram: FakeBotAPI, sender: Bot
) -> None:
    telegram.private_chat(FakeBotAPI.user(ALICE))
    telegram.private_chat(FakeBotAPI.user(BOB))
    one_memory(store, "users/42", "users/43", "team/notes")
    emptied = store.namespace("users/43")
    for memory in emptied.memories():
        emptied.delete(memory.id)
    assert "users/43" in store.namespace_names()

    result = await make_digest(store).run(sender)

    assert result.sent == ["users/42"]
    assert [call.params["chat_id"] for call in telegram.find("sendMessage")] == [ALICE]
    assert not (store.data_dir / "users/43" / SETTINGS_FILE).exists()


# -- periods and restarts ------------------------------------------------------------------------


async def test_a_period_is_reported_once_and_the_next_one_again(
    store: MemoryStore, telegram: FakeBotAPI, sender: Bot
) -> None:
    telegram.private_chat(FakeBotAPI.user(ALICE))
    one_memory(store, "users/42")
    digest = make_digest(store)

    assert (await digest.run(sender, PERIOD)).sent == ["users/42"]
    assert settings_file(store, "users/42")["last_period"] == "2025-03-03T01:00:00.000Z"
    assert (await digest.run(sender, PERIOD + timedelta(minutes=30))).sent == []
    assert len(texts(telegram, ALICE)) == 1

    next_week = PERIOD + timedelta(days=7)
    assert (await digest.run(sender, next_week)).sent == ["users/42"]
    assert settings_file(store, "users/42")["last_period"] == "2025-03-10T01:00:00.000Z"
    assert len(texts(telegram, ALICE)) == 2


async def test_concurrent_runs_send_once(
    store: MemoryStore, telegram: FakeBotAPI, sender: Bot
) -> None:
    telegram.private_chat(FakeBotAPI.user(ALICE))
    one_memory(store, "users/42")
    digest = make_digest(store)
    await asyncio.gather(digest.run(sender), digest.run(sender))
    assert len(texts(telegram, ALICE)) == 1


async def test_a_missed_report_is_sent_once_after_a_restart_within_the_grace_period(
    store: MemoryStore, telegram: FakeBotAPI, sender: Bot
) -> None:
    telegram.private_chat(FakeBotAPI.user(ALICE))
    one_memory(store, "users/42")
    # Down over Monday 09:00; back two hours later: a new Digest, as at start-up.
    first = await make_digest(store, grace_hours=6).run(sender, PERIOD + timedelta(hours=2))
    assert first.sent == ["users/42"]
    # Restarted once more: the period is recorded in the namespace's folder.
    again = await make_digest(store, grace_hours=6).run(sender, PERIOD + timedelta(hours=3))
    assert again.sent == []
    assert len(texts(telegram, ALICE)) == 1


async def test_a_report_missed_by_more_than_the_grace_period_is_dropped(
    store: MemoryStore, telegram: FakeBotAPI, sender: Bot
) -> None:
    telegram.private_chat(FakeBotAPI.user(ALICE))
    one_memory(store, "users/42")
    late = await make_digest(store, grace_hours=6).run(sender, PERIOD + timedelta(hours=7))
    assert late.period == PERIOD and late.sent == []
    assert texts(telegram, ALICE) == []
    assert not (store.data_dir / "users/42" / SETTINGS_FILE).exists()


async def test_start_up_catches_up_once_through_the_job_queue(
    store: MemoryStore, telegram: FakeBotAPI, tmp_path: Path
) -> None:
    """The real Application and JobQueue: the catch-up job runs at start, once per period."""
    telegram.private_chat(FakeBotAPI.user(ALICE))
    telegram.private_chat(FakeBotAPI.user(BOB))
    one_memory(store, "users/42")

    async def start_once(now: datetime, wait_for_chat: int) -> None:
        application = ApplicationBuilder().token(TOKEN).base_url(telegram.base_url).build()
        digest = make_digest(store, now)
        digest.register(application)
        names = sorted(job.name for job in application.job_queue.jobs())  # type: ignore[union-attr]
        assert names == ["digest", "digest-catch-up", "digest-sweep"]
        since = telegram.mark()
        async with application:
            await application.start()
            await telegram.wait("sendMessage", since=since, chat_id=wait_for_chat)
            [cron] = application.job_queue.get_jobs_by_name("digest")  # type: ignore[union-attr]
            assert cron.next_t is not None
            local = cron.next_t.astimezone(SHANGHAI)
            assert (local.weekday(), local.hour, local.minute) == (0, 9, 0)
            await application.stop()

    await start_once(PERIOD + timedelta(hours=1), wait_for_chat=ALICE)
    one_memory(store, "users/43")  # Bob starts using the bot while it is down again
    # Namespaces are done in name order: Bob's report comes after Alice would have had hers.
    await start_once(PERIOD + timedelta(hours=2), wait_for_chat=BOB)
    assert len(texts(telegram, ALICE)) == 1
    assert len(texts(telegram, BOB)) == 1


async def test_each_chat_is_reported_at_nine_in_its_own_zone_and_replicas_learn_new_zones(
    store: MemoryStore, telegram: FakeBotAPI, sender: Bot
) -> None:
    """Alice chose Europe/Berlin (through another replica: only the store knows); Bob did not
    and is on [digest] timezone, Asia/Shanghai. Monday 09:00 is 01:00 UTC for Bob, 08:00 UTC
    for Alice; the sweep teaches the job to wake at Berlin's 09:00 too."""
    telegram.private_chat(FakeBotAPI.user(ALICE))
    telegram.private_chat(FakeBotAPI.user(BOB))
    one_memory(store, "users/42", "users/43")
    digest = make_digest(store, grace_hours=6)
    application = ApplicationBuilder().token(TOKEN).base_url(telegram.base_url).build()
    digest.register(application)
    [cron] = application.job_queue.get_jobs_by_name("digest")  # type: ignore[union-attr]
    set_chat_zone(store, ALICE, BERLIN)  # as /timezone Berlin did, elsewhere
    after_shanghai = PERIOD + timedelta(minutes=30)
    assert cron.job.trigger.get_next_fire_time(None, after_shanghai) == PERIOD + timedelta(days=7)
    await digest.sweep(sender, after_shanghai)
    berlin_nine = PERIOD + timedelta(hours=7)  # 3 March 2025, 09:00 in Berlin
    assert cron.job.trigger.get_next_fire_time(None, after_shanghai) == berlin_nine

    first = await digest.run(sender, after_shanghai)
    assert first.sent == ["users/43"]  # Alice's 09:00 has not come yet
    second = await digest.run(sender, berlin_nine + timedelta(minutes=1))
    assert second.sent == ["users/42"]
    assert settings_file(store, "users/42")["last_period"] == format_time(berlin_nine)
    assert (await digest.run(sender, berlin_nine + timedelta(hours=1))).sent == []
    assert len(texts(telegram, ALICE)) == len(texts(telegram, BOB)) == 1
    assert digest.next_report("users/42") == (berlin_nine, BERLIN)  # the clock is at PERIOD


# -- opting out, 403 and failures --------------------------------------------------------------


async def test_opt_out_survives_a_restart_and_opt_in_waits_for_the_next_period(
    store: MemoryStore, telegram: FakeBotAPI, sender: Bot
) -> None:
    telegram.private_chat(FakeBotAPI.user(ALICE))
    telegram.private_chat(FakeBotAPI.user(BOB))
    one_memory(store, "users/42", "users/43")
    digest = make_digest(store)  # default = "on": every namespace that has not chosen
    assert digest.settings("users/42").enabled is None and digest.is_on(digest.settings("users/42"))

    make_digest(store).switch("users/42", False)
    assert settings_file(store, "users/42")["enabled"] is False

    result = await make_digest(store).run(sender)  # a new Digest: read from the file
    assert result.sent == ["users/43"]
    assert texts(telegram, ALICE) == []

    later = PERIOD + timedelta(hours=1)
    make_digest(store, later).switch("users/42", True)
    assert (await make_digest(store).run(sender, later)).sent == []  # this period: already past
    next_week = PERIOD + timedelta(days=7)
    assert (await make_digest(store).run(sender, next_week)).sent == ["users/42", "users/43"]


async def test_a_blocked_user_is_switched_off_and_the_others_still_get_theirs(
    store: MemoryStore, telegram: FakeBotAPI, sender: Bot, caplog: pytest.LogCaptureFixture
) -> None:
    for user in (ALICE, BOB):
        telegram.private_chat(FakeBotAPI.user(user))
    one_memory(store, "users/42", "users/43")
    telegram.fail(
        "sendMessage",
        403,
        "Forbidden: bot was blocked by the user",
        when=lambda params: params.get("chat_id") == ALICE,
    )
    with caplog.at_level(logging.WARNING, logger="bot.jobs.digest"):
        result = await make_digest(store).run(sender)

    assert result.switched_off == ["users/42"] and result.sent == ["users/43"]
    assert settings_file(store, "users/42")["enabled"] is False
    assert settings_file(store, "users/42")["off_reason"] == "blocked"
    assert any("users/42" in r.getMessage() and "blocked" in r.getMessage() for r in caplog.records)

    next_week = PERIOD + timedelta(days=7)
    assert (await make_digest(store).run(sender, next_week)).sent == ["users/43"]
    assert len(telegram.find("sendMessage", ok=None, chat_id=ALICE)) == 1  # never tried again


async def test_one_failing_namespace_does_not_stop_the_others_and_is_retried(
    store: MemoryStore, telegram: FakeBotAPI, sender: Bot, caplog: pytest.LogCaptureFixture
) -> None:
    for user in (ALICE, BOB, CAROL):
        telegram.private_chat(FakeBotAPI.user(user))
    one_memory(store, "users/42", "users/43", "users/44")
    telegram.fail("sendMessage", 500, "Internal Server Error", when=lambda p: p["chat_id"] == BOB)
    (store.data_dir / "users/44" / SETTINGS_FILE).mkdir()  # a settings file that cannot be read

    with caplog.at_level(logging.ERROR, logger="bot.jobs.digest"):
        result = await make_digest(store).run(sender)

    assert result.sent == ["users/42"]
    assert result.failed == ["users/43", "users/44"]
    assert {r.getMessage() for r in caplog.records} >= {
        "digest for users/43 failed",
        "digest for users/44 failed",
    }
    # The failed send was not recorded as sent: a run later in the period (a restart) retries.
    assert settings_file(store, "users/43")["last_period"] is None
    retry = await make_digest(store).run(sender, PERIOD + timedelta(hours=1))
    assert retry.sent == ["users/43"]


# -- the schedule -------------------------------------------------------------------------------


def utc_fires(schedule: Schedule, start: datetime, count: int) -> list[str]:
    fires, moment = [], start
    for _ in range(count):
        fire = schedule.next_after(moment)
        assert fire is not None
        fires.append(fire.astimezone(UTC).strftime("%m-%d %H:%M"))
        moment = fire
    return fires


def test_fire_times_follow_the_wall_clock_across_daylight_saving_time() -> None:
    daily = Schedule.parse("0 9 * * *", BERLIN)
    # Clocks go forward on Sunday 30 March 2025 and back on Sunday 26 October.
    assert utc_fires(daily, datetime(2025, 3, 28, 12, tzinfo=UTC), 3) == [
        "03-29 08:00",
        "03-30 07:00",
        "03-31 07:00",
    ]
    assert utc_fires(daily, datetime(2025, 10, 24, 12, tzinfo=UTC), 3) == [
        "10-25 07:00",
        "10-26 08:00",
        "10-27 08:00",
    ]
    assert daily.latest(datetime(2025, 3, 30, 7, 30, tzinfo=UTC)) == datetime(
        2025, 3, 30, 7, tzinfo=UTC
    )


def test_a_time_that_happens_twice_fires_once_and_a_skipped_time_fires_once() -> None:
    night = Schedule.parse("30 2 * * *", BERLIN)
    # 02:30 happens twice on 26 October (00:30 and 01:30 UTC): only the first one fires.
    assert utc_fires(night, datetime(2025, 10, 25, 12, tzinfo=UTC), 2) == [
        "10-26 00:30",
        "10-27 01:30",
    ]
    # 02:30 does not exist on 30 March: it fires once, an hour later on the wall clock.
    assert utc_fires(night, datetime(2025, 3, 29, 12, tzinfo=UTC), 2) == [
        "03-30 01:30",
        "03-31 00:30",
    ]


async def test_the_job_reports_once_across_the_october_change(
    store: MemoryStore, telegram: FakeBotAPI, sender: Bot
) -> None:
    telegram.private_chat(FakeBotAPI.user(ALICE))
    one_memory(store, "users/42")
    digest = make_digest(store, schedule="30 2 * * *", timezone="Europe/Berlin")
    first = datetime(2025, 10, 26, 0, 30, tzinfo=UTC)
    assert (await digest.run(sender, first)).sent == ["users/42"]
    # An hour later the wall clock shows 02:30 again: the same period, nothing sent.
    assert (await digest.run(sender, first + timedelta(hours=1))).sent == []
    assert len(texts(telegram, ALICE)) == 1


@pytest.mark.parametrize(
    ("weekday", "days"),
    [
        ("1", "mon"),
        ("0", "sun"),
        ("7", "sun"),
        ("1-5", "mon,tue,wed,thu,fri"),
        ("MON-FRI", "mon,tue,wed,thu,fri"),
        ("fri-sun", "sun,fri,sat"),
        ("*/2", "sun,tue,thu,sat"),
        ("sat,0", "sun,sat"),
    ],
)
def test_day_of_week_numbers_mean_what_crontab_says(weekday: str, days: str) -> None:
    assert crontab_weekdays(weekday) == days


def test_monday_is_one_as_in_crontab() -> None:
    schedule = Schedule.parse("0 9 * * 1", SHANGHAI)
    fire = schedule.next_after(datetime(2025, 3, 4, tzinfo=UTC))  # a Tuesday
    assert fire is not None and fire.strftime("%a %H:%M") == "Mon 09:00"


@pytest.mark.parametrize(
    "expression",
    ["", "0 9 * *", "0 9 * * * *", "61 9 * * *", "0 9 * * 8", "0 9 * * fri-mon", "0 9 31 2 *"],
)
def test_an_invalid_or_never_firing_schedule_is_refused(expression: str) -> None:
    with pytest.raises(ValueError, match=r"cron expression|fields"):
        Schedule.parse(expression, SHANGHAI)


@pytest.mark.parametrize("name", ["Mars/Olympus", "utc", "", "../etc/passwd", "Europe"])
def test_an_unknown_time_zone_is_refused(name: str) -> None:
    with pytest.raises(ValueError, match="time zone"):
        parse_timezone(name)


async def test_by_default_a_namespace_gets_nothing_until_it_opts_in(
    store: MemoryStore, telegram: FakeBotAPI, sender: Bot
) -> None:
    telegram.private_chat(FakeBotAPI.user(ALICE))
    telegram.private_chat(FakeBotAPI.user(BOB))
    one_memory(store, "users/42", "users/43")
    assert DigestConfig().default == "off"
    opted_in = make_digest(store, default="off")
    opted_in.switch("users/43", True)

    next_week = PERIOD + timedelta(days=7)
    assert (await make_digest(store, default="off").run(sender, next_week)).sent == ["users/43"]
    assert not (store.data_dir / "users/42" / SETTINGS_FILE).exists()


async def test_nothing_is_sent_when_the_owner_turned_the_digest_off(
    store: MemoryStore, telegram: FakeBotAPI, sender: Bot
) -> None:
    telegram.private_chat(FakeBotAPI.user(ALICE))
    one_memory(store, "users/42")
    assert (await make_digest(store, enabled=False).run(sender)).sent == []
    assert texts(telegram, ALICE) == []


# -- configuration ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("digest", "key", "message"),
    [
        ({"schedule": "0 9 * *"}, "digest.schedule", "has 4 fields"),
        ({"schedule": "0 25 * * *"}, "digest.schedule", "not a valid cron expression"),
        ({"schedule": "0 9 31 2 *"}, "digest.schedule", "never fires"),
        ({"timezone": "Asia/Beijing"}, "digest.timezone", "unknown time zone 'Asia/Beijing'"),
        ({"top": 0}, "digest.top", "from 1 to 50"),
        ({"stale_days": "30"}, "digest.stale_days", "a whole number"),
        ({"grace_hours": 0}, "digest.grace_hours", "a positive number"),
        ({"default": "yes"}, "digest.default", '"on" or "off"'),
        ({"cron": "0 9 * * mon"}, "digest.cron", "unknown key"),
    ],
)
def test_a_bad_digest_setting_stops_start_up_naming_the_key(
    tmp_path: Path, digest: dict[str, Any], key: str, message: str
) -> None:
    with pytest.raises(ConfigError) as error:
        parse_config({"digest": digest}, base_dir=tmp_path)
    assert error.value.key == key
    assert key in error.value.message and message in error.value.message


def test_python_m_bot_refuses_an_invalid_schedule(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "config.toml"
    path.write_text('[digest]\nschedule = "every monday"\ntimezone = "Asia/Shanghai"\n')
    assert main(["--config", str(path)]) == 2
    assert "digest.schedule" in capsys.readouterr().err


def test_the_application_schedules_the_digest_unless_told_not_to(tmp_path: Path) -> None:
    def job_names(digest: dict[str, Any], **options: Any) -> list[str]:
        config = parse_config({"telegram": {"token": TOKEN}, "digest": digest}, base_dir=tmp_path)
        with MemoryStore(tmp_path / "data") as store:
            application = build_application(config, store, None, **options)
            assert application.job_queue is not None
            return sorted(job.name or "" for job in application.job_queue.jobs())

    tidy = ["tidy", "tidy-catch-up"]  # the nightly tidy (bot.jobs.tidy)
    assert job_names({}) == ["digest", "digest-catch-up", "digest-sweep", "reminders", *tidy]
    assert job_names({"enabled": False}) == ["reminders", *tidy]
    assert job_names({}, jobs=False) == []  # the console: no report may count as sent


# -- /digest, end to end ----------------------------------------------------------------------

SHANGHAI_DIGEST = {"digest": {"schedule": "0 9 * * mon", "timezone": "Asia/Shanghai"}}


def digest_file(bot_data: Path, name: str) -> dict[str, Any]:
    return dict(json.loads((bot_data / name / SETTINGS_FILE).read_text("utf-8")))


def next_monday_nine(zone: ZoneInfo) -> str:
    """The next Monday 09:00 in ``zone`` from the clock's now, as the digest names it."""
    now = datetime.now(zone)
    day = now + timedelta(days=(0 - now.weekday()) % 7)
    at = day.replace(hour=9, minute=0, second=0, microsecond=0)
    if at <= now:
        at += timedelta(days=7)
    return at.strftime("%Y-%m-%d (%a) %H:%M")


async def test_digest_command_in_a_private_chat(start_bot: StartBot, tmp_path: Path) -> None:
    data = tmp_path / "data"
    async with start_bot(sections=SHANGHAI_DIGEST) as bot:
        # Was a date written the day the test was (it failed once that Monday 09:00 passed).
        monday = next_monday_nine(ZoneInfo("Asia/Shanghai"))
        [status] = await bot.say("/digest", user=ALICE_USER)
        assert "The digest is off here" in status.text
        assert f"(next: {monday} Asia/Shanghai)" in status.text

        [switched] = await bot.say("/digest on", user=ALICE_USER)
        assert switched.text.startswith(f"✅ Digest on. Next report: {monday} ")
        assert digest_file(data, "users/42")["enabled"] is True
        assert digest_file(data, "users/42")["language"] == "en"
        [status] = await bot.say("/digest", user=ALICE_USER)
        assert "The digest is on here" in status.text

        [empty] = await bot.say("/digest now", user=ALICE_USER)
        assert "No memories yet" in empty.text
        await bot.say("/remember standup is at 10:00 <daily> #work", user=ALICE_USER)
        await bot.say("/recall standup", user=ALICE_USER)
        [report] = await bot.say("/digest now", user=ALICE_USER)
        assert "Your memory digest · 1 memories" in report.text
        assert "(1×) standup is at 10:00 <daily>" in report.text  # escaped, shown literally
        [record_] = bot.memories("users/42")
        assert record_["accessCount"] == 1  # the report did not count as access

        [switched] = await bot.say("/digest off", user=ALICE_USER)
        assert switched.text.startswith("🔕 Digest off.")
        assert digest_file(data, "users/42")["enabled"] is False
        assert digest_file(data, "users/42")["off_reason"] == "user"
        [usage] = await bot.say("/digest weekly", user=ALICE_USER)
        assert "/digest on" in usage.text and "/digest now" in usage.text
        [chinese] = await bot.say("/digest", user=LI_USER)
        assert "这里的定期摘要已关闭" in chinese.text

    async with start_bot(sections=SHANGHAI_DIGEST) as bot:  # a restart keeps the setting
        [status] = await bot.say("/digest", user=ALICE_USER)
        assert "The digest is off here" in status.text


async def test_in_a_group_only_administrators_change_the_digest(
    start_bot: StartBot, telegram: FakeBotAPI, tmp_path: Path
) -> None:
    group = telegram.group()
    telegram.admins[group["id"]] = {ALICE}
    name = f"chats/{group['id']}"
    async with start_bot(sections=SHANGHAI_DIGEST) as bot:
        since = telegram.mark()
        [refused] = await bot.say("/digest on", user=BOB_USER, chat=group)
        assert "Only the group's administrators" in refused.text
        assert telegram.find("getChatMember", since=since, user_id=BOB)
        assert not (tmp_path / "data" / name / SETTINGS_FILE).exists()

        [status] = await bot.say("/digest", user=BOB_USER, chat=group)  # everyone may look
        assert "The digest is off here" in status.text

        [switched] = await bot.say("/digest on", user=ALICE_USER, chat=group)
        assert switched.text.startswith("✅ Digest on.")
        assert digest_file(tmp_path / "data", name)["enabled"] is True

        await bot.say("/remember the deploy key is in the vault", user=BOB_USER, chat=group)
        [report] = await bot.say("/digest now", user=BOB_USER, chat=group)
        assert "Memory digest of Team · 1 memories" in report.text  # the group's, not "your"


async def test_the_command_is_in_help_and_in_both_menus(
    start_bot: StartBot, telegram: FakeBotAPI
) -> None:
    async with start_bot() as bot:
        [help_text] = await bot.say("/help", user=ALICE_USER)
        assert "/digest [on|off|now]" in help_text.text
        [help_zh] = await bot.say("/help", user=LI_USER)
        assert "/digest [on|off|now] — 定期摘要" in help_zh.text
    for language in ("", "zh"):
        assert "digest" in [command["command"] for command in telegram.commands[language]]


async def test_when_the_owner_turned_it_off_digest_now_still_works(start_bot: StartBot) -> None:
    async with start_bot(sections={"digest": {"enabled": False}}) as bot:
        [refused] = await bot.say("/digest on", user=ALICE_USER)
        assert "The bot's owner has turned the scheduled digest off" in refused.text
        await bot.say("/remember standup at 10", user=ALICE_USER)
        [report] = await bot.say("/digest now", user=ALICE_USER)
        assert "Your memory digest" in report.text
