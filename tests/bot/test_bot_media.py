"""Messages that are not typed text, end to end through the fake Bot API: forwards, photos,
files, voice notes (with a fake transcription endpoint), places, contacts, unsupported kinds,
a group's photos, the 20 MB limit, edits, and recall from any chat (inline mode)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from bot_harness import ALICE, BOB, LI, Bot, StartBot, is_help

from bench.fakes.openai_server import API_KEY, Answer, FakeOpenAI, Status
from bench.fakes.telegram_server import BOT_USERNAME, Call, FakeBotAPI
from bot.__main__ import make_llm
from bot.config import parse_config

MB = 1024 * 1024


@pytest.fixture
async def llm() -> AsyncIterator[FakeOpenAI]:
    async with FakeOpenAI() as server:
        yield server


async def post(
    bot: Bot, *, user: dict[str, Any], chat: dict[str, Any] | None = None, **fields: Any
) -> list[Call]:
    """Send a message of any kind, then /help as a sentinel: every call the bot made for it."""
    telegram = bot.telegram
    since = telegram.mark()
    message = telegram.post(user=user, chat=chat, **fields)
    telegram.send("/help", user=user, chat=message["chat"])
    await telegram.wait("sendMessage", since=since, chat_id=message["chat"]["id"], where=is_help)
    return [call for call in telegram.calls[since:] if not is_help(call)]


def replies(calls: list[Call]) -> list[Call]:
    return [call for call in calls if call.method == "sendMessage"]


def origin_user(user: dict[str, Any], date: int = 1_700_000_000) -> dict[str, Any]:
    return {"type": "user", "date": date, "sender_user": user}


# -- forwards -----------------------------------------------------------------------------------


async def test_a_forward_is_remembered_with_its_origin_not_searched(bot: Bot) -> None:
    bob = {**BOB, "username": "bob_b"}
    calls = await post(
        bot, user=ALICE, text="The wifi password is hunter2", forward_origin=origin_user(bob)
    )
    [reply] = replies(calls)
    assert "Remembered" in reply.text and "hunter2" in reply.text
    assert "Bob (@bob_b) · 2023-11-14" in reply.text
    [memory] = bot.memories("users/42")
    assert memory["content"] == "The wifi password is hunter2"
    assert memory["origin"] == {
        "kind": "user", "name": "Bob", "chat": "@bob_b", "date": "2023-11-14T22:13:20.000Z"
    }  # fmt: skip
    [recalled] = await bot.say("/recall wifi password", user=ALICE)
    assert "↪️ Bob (@bob_b) · 2023-11-14" in recalled.text


async def test_a_forwarded_command_is_remembered_not_run(bot: Bot) -> None:
    calls = await post(bot, user=ALICE, text="/forget 1", forward_origin=origin_user(BOB))
    [reply] = replies(calls)
    assert "Remembered" in reply.text
    assert [m["content"] for m in bot.memories("users/42")] == ["/forget 1"]


async def test_forwards_from_a_hidden_user_and_a_channel(bot: Bot) -> None:
    hidden = {"type": "hidden_user", "date": 1_700_000_000, "sender_user_name": "Anonymous Ann"}
    [reply] = replies(await post(bot, user=ALICE, text="secret recipe", forward_origin=hidden))
    assert "Anonymous Ann 👤? · 2023-11-14" in reply.text
    channel = {
        "type": "channel",
        "date": 1_700_000_000,
        "chat": {"id": -100555, "type": "channel", "title": "Daily News", "username": "dailynews"},
        "message_id": 77,
    }
    [reply] = replies(await post(bot, user=ALICE, text="rates go up", forward_origin=channel))
    assert "Daily News (@dailynews)" in reply.text
    origins = [m["origin"] for m in bot.memories("users/42")]
    assert origins[0]["kind"] == "hidden_user" and "chat" not in origins[0]
    assert origins[1] == {
        "kind": "channel", "name": "Daily News", "chat": "@dailynews", "message": 77,
        "date": "2023-11-14T22:13:20.000Z",
    }  # fmt: skip


async def test_a_burst_of_forwards_gets_one_reply(bot: Bot) -> None:
    telegram = bot.telegram
    since = telegram.mark()
    for number in range(6):
        telegram.post(user=ALICE, text=f"note number {number}", forward_origin=origin_user(BOB))
    telegram.send("/help", user=ALICE)
    await telegram.wait("sendMessage", since=since, chat_id=42, where=is_help)
    calls = [c for c in telegram.calls[since:] if c.method == "sendMessage"]
    assert len(calls) == 2 and is_help(calls[1])  # the burst's reply came first, and only one
    assert "Remembered 6 messages" in calls[0].text
    assert len(bot.memories("users/42")) == 6


async def test_an_album_gets_one_reply_after_a_quiet_moment(bot: Bot) -> None:
    telegram = bot.telegram
    since = telegram.mark()
    for number in range(3):
        photo = telegram.upload(b"\xff\xd8jpeg%d" % number, "photo.jpg")
        telegram.post(
            user=ALICE,
            photo=[{**photo, "width": 800, "height": 600}],
            media_group_id="album1",
            caption="holiday beach" if number == 0 else None,
        )
    [reply] = await telegram.wait("sendMessage", since=since, chat_id=42)
    assert "Remembered 3 messages" in reply.text
    calls = await bot.exchange("/help", user=ALICE)  # nothing else was sent meanwhile
    assert [c for c in calls if c.method == "sendMessage"] == []
    assert len(bot.memories("users/42")) == 3


# -- photos and files ---------------------------------------------------------------------------


def photo_of(telegram: FakeBotAPI, content: bytes = b"\xff\xd8jpeg") -> list[dict[str, Any]]:
    small = telegram.upload(content[:4], "small.jpg")
    big = telegram.upload(content, "big.jpg")
    return [{**small, "width": 90, "height": 60}, {**big, "width": 1280, "height": 960}]


async def test_a_photo_with_a_caption_is_remembered_and_sent_back_on_recall(bot: Bot) -> None:
    photo = photo_of(bot.telegram)
    [reply] = replies(await post(bot, user=ALICE, photo=photo, caption="parking level 3 #car"))
    assert "parking level 3" in reply.text and "/recall sends it back" in reply.text
    [memory] = bot.memories("users/42")
    assert memory["content"] == "parking level 3 #car" and memory["tags"] == ["car"]
    assert memory["attachment"]["kind"] == "photo"
    assert memory["attachment"]["file_id"] == photo[1]["file_id"]  # the biggest size
    since = bot.telegram.mark()
    bot.telegram.send("/recall parking", user=ALICE)
    [sent] = await bot.telegram.wait("sendPhoto", since=since, chat_id=42)
    assert (
        sent.params["photo"] == photo[1]["file_id"]
        and sent.params["caption"] == "parking level 3 #car"
    )
    assert "parse_mode" not in sent.params  # the caption is shown as written


async def test_a_photo_without_a_caption_asks_for_one(bot: Bot) -> None:
    [reply] = replies(await post(bot, user=ALICE, photo=photo_of(bot.telegram)))
    assert "📷 photo" in reply.text and "without a caption is hard to find" in reply.text
    [memory] = bot.memories("users/42")
    assert memory["content"] == "📷 photo"
    assert f"/edit {memory['id']}" in reply.text


async def test_a_photo_without_a_caption_is_described_by_a_vision_model(
    start_bot: StartBot, llm: FakeOpenAI, tmp_path: Path
) -> None:
    table = {"base_url": llm.base_url, "api_key": API_KEY, "model": "vision-model", "vision": True}
    config = parse_config({"llm": table}, base_dir=tmp_path)
    llm.script(Answer("A grey car parked next to pillar B7.\nSecond line ignored."))
    async with start_bot(llm=make_llm(config), sections={"llm": table}) as bot:
        [reply] = replies(await post(bot, user=ALICE, photo=photo_of(bot.telegram, b"\xff\xd8car")))
        [memory] = bot.memories("users/42")
    assert memory["content"] == (
        "📷 photo (description by the model): A grey car parked next to pillar B7."
    )
    assert "The model described the photo (its words, not yours)" in reply.text
    [request] = llm.requests
    image = request.messages[0]["content"][1]["image_url"]["url"]
    assert image.startswith("data:image/jpeg;base64,")


async def test_documents_videos_audio_locations_and_contacts(bot: Bot) -> None:
    telegram = bot.telegram
    pdf = telegram.upload(b"%PDF-1.4", "report.pdf", size=int(1.2 * MB))
    await post(
        bot, user=ALICE, document={**pdf, "file_name": "report.pdf", "mime_type": "application/pdf"}
    )
    video = telegram.upload(b"mp4", "clip.mp4")
    await post(bot, user=ALICE, video={**video, "width": 640, "height": 480, "duration": 42})
    song = telegram.upload(b"mp3", "song.mp3")
    audio = {**song, "duration": 192, "performer": "Queen", "title": "Bohemian Rhapsody"}
    await post(bot, user=ALICE, audio=audio)
    await post(bot, user=ALICE, location={"latitude": 48.858370, "longitude": 2.294481})
    contact = {"phone_number": "+49 30 1234567", "first_name": "Dr", "last_name": "Who"}
    await post(bot, user=ALICE, contact=contact)
    contents = [m["content"] for m in bot.memories("users/42")]
    assert contents == [
        "📄 report.pdf (1.2 MB)",
        "🎬 video (0:42)",
        "🎵 Queen – Bohemian Rhapsody (3:12)",
        "📍 location 48.85837, 2.29448",
        "👤 Dr Who +49 30 1234567",
    ]
    for query, method, key, value in (
        ("report", "sendDocument", "document", pdf["file_id"]),
        ("video", "sendVideo", "video", video["file_id"]),
        ("bohemian", "sendAudio", "audio", song["file_id"]),
        ("location", "sendLocation", "latitude", 48.85837),
        ("1234567", "sendContact", "phone_number", "+49 30 1234567"),
    ):
        since = telegram.mark()
        telegram.send(f"/recall {query}", user=ALICE)
        [sent] = await telegram.wait(method, since=since, chat_id=42)
        assert sent.params[key] == value, (query, sent.params)


async def test_a_caption_with_html_or_markdown_is_kept_and_shown_literally(bot: Bot) -> None:
    caption = "<b>not bold</b> *nor this* _x_ &amp; [link](http://x)"
    [reply] = replies(await post(bot, user=ALICE, photo=photo_of(bot.telegram), caption=caption))
    assert caption in reply.text
    [memory] = bot.memories("users/42")
    assert memory["content"] == caption


async def test_a_big_file_is_remembered_by_reference_without_downloading_it(bot: Bot) -> None:
    film = bot.telegram.upload(b"...", "film.mkv", size=1500 * MB)
    document = {**film, "file_name": "film.mkv", "mime_type": "video/x-matroska"}
    [reply] = replies(await post(bot, user=ALICE, document=document))
    assert "film.mkv (1500.0 MB)" in reply.text
    assert bot.telegram.downloads == []
    since = bot.telegram.mark()
    bot.telegram.send("/recall film", user=ALICE)
    [sent] = await bot.telegram.wait("sendDocument", since=since, chat_id=42)
    assert sent.params["document"] == film["file_id"]


# -- unsupported kinds, groups ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "word"),
    [
        ({"sticker": {"file_id": "stk", "file_unique_id": "u", "width": 1, "height": 1,
                      "is_animated": False, "is_video": False, "type": "regular"}}, "stickers"),
        ({"poll": {"id": "p", "question": "Lunch?", "options": [], "total_voter_count": 0,
                   "is_closed": False, "is_anonymous": True, "type": "regular",
                   "allows_multiple_answers": False, "allows_revoting": False,
                   "members_only": False}}, "polls"),
        ({"dice": {"emoji": "🎲", "value": 4}}, "dice rolls"),
    ],
)  # fmt: skip
async def test_stickers_polls_and_dice_get_a_short_explanation(
    bot: Bot, fields: dict[str, Any], word: str
) -> None:
    [reply] = replies(await post(bot, user=ALICE, **fields))
    assert f"I can't remember {word}" in reply.text
    assert bot.memories("users/42") == []


async def test_a_photo_in_a_group_needs_a_mention(bot: Bot) -> None:
    group = bot.telegram.group()
    calls = await post(bot, user=ALICE, chat=group, photo=photo_of(bot.telegram), caption="lunch")
    assert replies(calls) == []
    assert "chats/-1001234567890" not in bot.namespaces()
    caption = f"@{BOT_USERNAME} whiteboard after the meeting"
    [reply] = replies(
        await post(bot, user=ALICE, chat=group, photo=photo_of(bot.telegram), caption=caption)
    )
    assert "whiteboard after the meeting" in reply.text
    [memory] = bot.memories("chats/-1001234567890")
    assert memory["content"] == "whiteboard after the meeting"


# -- voice notes --------------------------------------------------------------------------------


def voice_of(telegram: FakeBotAPI, *, size: int | None = None, duration: int = 7) -> dict[str, Any]:
    note = telegram.upload(b"OggS-voice", "voice.ogg", size=size)
    return {**note, "duration": duration, "mime_type": "audio/ogg"}


async def test_a_voice_note_without_transcription_is_kept_and_sent_back(bot: Bot) -> None:
    voice = voice_of(bot.telegram)
    [reply] = replies(await post(bot, user=ALICE, voice=voice))
    assert "🎤 voice note (0:07)" in reply.text
    [memory] = bot.memories("users/42")
    assert memory["attachment"] == {
        "kind": "voice", "file_id": voice["file_id"], "file_unique_id": voice["file_unique_id"],
        "size": 10, "mime": "audio/ogg", "duration": 7,
    }  # fmt: skip
    since = bot.telegram.mark()
    bot.telegram.send("/recall voice note", user=ALICE)
    [sent] = await bot.telegram.wait("sendVoice", since=since, chat_id=42)
    assert sent.params["voice"] == voice["file_id"]


def transcription(llm: FakeOpenAI, **keys: Any) -> dict[str, dict[str, Any]]:
    return {"transcription": {"base_url": llm.base_url, "api_key": API_KEY, **keys}}


async def test_a_transcribed_voice_note_is_answered_as_typed_text(
    start_bot: StartBot, llm: FakeOpenAI
) -> None:
    llm.transcripts.append("where did I park the car")
    async with start_bot(sections=transcription(llm, model="whisper-test")) as bot:
        await bot.say("/remember the car is on level 3, spot 42 #car", user=ALICE)
        calls = await post(bot, user=ALICE, voice=voice_of(bot.telegram))
        [heard, answer] = replies(calls)
        assert heard.text == "🎤 where did I park the car"
        assert "level 3, spot 42" in answer.text  # searched, as the same words typed are
        assert len(bot.memories("users/42")) == 1  # the question was not stored
    [(name, audio, model)] = llm.audio
    assert audio == b"OggS-voice" and model == "whisper-test" and name.endswith(".ogg")


async def test_a_transcribed_voice_note_without_a_model_is_kept_unless_it_asks(
    start_bot: StartBot, llm: FakeOpenAI
) -> None:
    llm.transcripts.extend(
        ["Remember that my locker is 23.", "the bike is in the garage", "帮我记一下明天交报告"]
    )
    llm.transcripts.append("and then we talked about the budget " * 150)  # 5,400 characters
    async with start_bot(sections=transcription(llm)) as bot:
        voice = voice_of(bot.telegram)
        [heard, stored] = replies(await post(bot, user=ALICE, voice=voice))
        assert heard.text == "🎤 Remember that my locker is 23."
        assert stored.text.startswith("✅ Remembered.") and "my locker is 23." in stored.text
        # A statement, not only a note: nothing else would keep it.
        [_, kept] = replies(await post(bot, user=ALICE, voice=voice_of(bot.telegram)))
        assert "the bike is in the garage" in kept.text
        first, second = bot.memories("users/42")
        assert first["content"] == "my locker is 23." and second["content"] == (
            "the bike is in the garage"
        )
        assert first["attachment"]["kind"] == "voice"
        assert first["attachment"]["file_id"] == voice["file_id"]
        [_, zh] = replies(await post(bot, user=LI, voice=voice_of(bot.telegram)))
        assert zh.text.startswith("✅ 记住了。")
        assert "提醒你吗？— 交报告" in zh.text  # what they will do, and when: offered
        assert [m["content"] for m in bot.memories("users/44")] == ["明天交报告"]
        since = bot.telegram.mark()
        bot.telegram.send("/recall locker", user=ALICE)
        [sent] = await bot.telegram.wait("sendVoice", since=since, chat_id=42)
        assert sent.params["voice"] == voice["file_id"]
        # Words over the store's limit are cut, not refused: the voice note keeps the rest.
        long = replies(await post(bot, user=ALICE, voice=voice_of(bot.telegram)))
        assert any(reply.text.startswith("✅ Remembered.") for reply in long)  # in parts
        kept = bot.memories("users/42")[-1]
        assert len(kept["content"]) == 4000 and kept["content"].endswith("…")
        assert kept["attachment"]["kind"] == "voice"


async def test_a_failing_transcription_keeps_the_voice_note(
    start_bot: StartBot, llm: FakeOpenAI
) -> None:
    llm.transcripts.extend([Status(500, "whisper crashed")] * 2)  # the SDK retries once
    llm.transcripts.append("")  # silence
    async with start_bot(sections=transcription(llm)) as bot:
        [reply] = replies(await post(bot, user=LI, voice=voice_of(bot.telegram)))
        assert "没能转写这条语音（转写服务出了问题）" in reply.text and "HTTP" not in reply.text
        assert "🎤 语音（0:07）" in reply.text
        [reply] = replies(await post(bot, user=ALICE, voice=voice_of(bot.telegram)))
        assert "no words were heard" in reply.text
        assert [m["content"] for m in bot.memories("users/44")] == ["🎤 语音（0:07）"]


async def test_a_voice_note_over_20_mb_is_not_downloaded(
    start_bot: StartBot, llm: FakeOpenAI
) -> None:
    async with start_bot(sections=transcription(llm)) as bot:
        voice = voice_of(bot.telegram, size=21 * MB, duration=3600)
        [reply] = replies(await post(bot, user=ALICE, voice=voice))
        assert "over the 20 MB bots can download" in reply.text
        assert "🎤 voice note (1:00:00)" in reply.text
        assert bot.telegram.downloads == [] and llm.audio == []


# -- imports ------------------------------------------------------------------------------------


def memory_file(*records: dict[str, Any]) -> bytes:
    return json.dumps(list(records), ensure_ascii=False).encode()


def record(memory_id: int, content: str, **extra: Any) -> dict[str, Any]:
    return {"id": memory_id, "content": content, "tags": ["t"], "category": "general", **extra}


async def send_file(
    bot: Bot, content: bytes, name: str = "memory.json", *, size: int | None = None
) -> Call:
    stored = bot.telegram.upload(content, name, size=size)
    [reply] = replies(await post(bot, user=ALICE, document={**stored, "file_name": name}))
    return reply


async def press(bot: Bot, message: Call, data: str, user: dict[str, Any]) -> str:
    """Press a button of ``message`` and return the text the message was edited to."""
    since = bot.telegram.mark()
    await bot.press(message, data, user=user)
    [edit] = await bot.telegram.wait("editMessageText", since=since)
    return edit.text


async def test_an_import_is_previewed_then_applied_once(bot: Bot) -> None:
    await bot.say("/remember the dentist is on Friday", user=ALICE)
    data = memory_file(
        record(1_700_000_000_001, "代码在 D:\\projects", tags=["代码", "路径"]),
        record(1_700_000_000_002, "THE DENTIST is on friday"),  # already here, once folded
        record(1_700_000_000_003, "   "),  # refused: empty
        "not an object",
        record(1_700_000_000_004, "stolen", source="telegram:1:2:43"),  # source dropped
    )
    preview = await send_file(bot, data)
    assert "5 memories in the file" in preview.text
    assert "• 2 new\n• 1 already here\n• 2 refused" in preview.text
    assert "its text is empty, too long or has a character I can't store (entry 3)" in preview.text
    assert "it is not a memory (an object with an id and a text) (entry 4)" in preview.text
    assert "content is empty" not in preview.text  # the library's words are for the log
    assert bot.memories("users/42")[1:] == []  # nothing changed yet
    [(_, apply), _] = preview.buttons
    done = await press(bot, preview, apply, ALICE)
    assert "Imported 2 memories (1 were already here, 2 refused)" in done
    memories = bot.memories("users/42")
    assert [m["content"] for m in memories[1:]] == ["代码在 D:\\projects", "stolen"]
    assert "source" not in memories[2]
    # the same file again: nothing new, no buttons
    again = await send_file(bot, data)
    assert "• 0 new\n• 3 already here" in again.text and again.buttons == []
    # a second press of the first preview's button finds nothing waiting
    await bot.press(preview, apply, user=ALICE)
    assert len(bot.memories("users/42")) == 3


async def test_an_import_renumbers_ids_from_the_far_future_and_adds_go_on(bot: Bot) -> None:
    far = 2**63 - 1  # the largest id: kept, it left no id for any later /remember
    data = memory_file(
        record(far, "from the far future"),
        record(9_999_999_999_999, "in the year 2286"),
        record(-1, "a negative id"),
        record(0, "id zero"),
        {"id": 1e308, "content": "a huge float"},
        {"id": "1700000000005", "content": "digits as text"},
    )
    preview = await send_file(bot, data)
    assert "• 3 new\n• 0 already here\n• 3 refused" in preview.text
    assert "3 × it has no id or no text, or a field that a memory file does not hold" in (
        preview.text
    )
    assert f"2 ids renumbered (old → new, given at import): {far}, 9999999999999;" in preview.text
    done = await press(bot, preview, preview.buttons[0][1], ALICE)
    assert "Imported 3 memories (0 were already here, 3 refused)" in done
    ids = {m["content"]: m["id"] for m in bot.memories("users/42")}
    new, later = ids["from the far future"], ids["in the year 2286"]
    assert f"2 ids renumbered (old → new): {far} → {new}, 9999999999999 → {later}" in done
    assert ids["digits as text"] == 1_700_000_000_005
    [added] = await bot.say("/remember one more", user=ALICE)
    await bot.say(f"/forget {new}", user=ALICE)
    [again] = await bot.say("/remember and again", user=ALICE)
    assert "🆔" in added.text and "🆔" in again.text
    after = {m["content"]: m["id"] for m in bot.memories("users/42")}
    assert later < after["one more"] < after["and again"] < far


async def test_an_import_can_be_cancelled_and_only_its_sender_may_press(bot: Bot) -> None:
    preview = await send_file(bot, memory_file(record(1_700_000_000_001, "a new thing")))
    [(_, apply), (_, cancel)] = preview.buttons
    since = bot.telegram.mark()
    await bot.press(preview, apply, user=BOB)  # in Bob's namespace the import does not exist
    [answer] = bot.telegram.find("answerCallbackQuery", since=since)
    assert "no longer waiting" in answer.params["text"]
    assert "Import cancelled" in await press(bot, preview, cancel, ALICE)
    assert bot.memories("users/42") == []


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"{not json", "is not a memory file I can read: it stops making sense at line 1"),
        (b'[\n{"id": 1,\n "content": "x"\n "tags": []}]', "stops making sense at line 4"),
        (b"\xff\xfe\x00garbage", "is not a memory file I can read"),
        (b"\x80\x81 not utf-8", "is not a memory file I can read: it is not text"),
        (b"[" * 100_000 + b"]" * 100_000, "is not a memory file I can read: it is nested"),
        (b'{"memories": []}', "not a list of memories (the file holds one object, not a list"),
        (b'"just text"', "not a list of memories"),
    ],
)
async def test_bad_import_files_are_refused_and_change_nothing(
    bot: Bot, content: bytes, expected: str
) -> None:
    reply = await send_file(bot, content)
    assert expected in reply.text and reply.buttons == []
    assert bot.memories("users/42") == []


async def test_import_files_too_big_are_refused_before_downloading(bot: Bot) -> None:
    reply = await send_file(bot, b"[]", size=6 * MB)
    assert "is 6.0 MB; I import files of at most 5.0 MB" in reply.text
    reply = await send_file(bot, b"[]", size=25 * MB)
    assert "I import files of at most 5.0 MB" in reply.text
    assert bot.telegram.downloads == []


async def test_an_old_file_s_chinese_category_is_imported_as_the_same_category(bot: Bot) -> None:
    await bot.say("/remember health: flu shot in october", user=ALICE)
    data = memory_file(
        record(1_700_000_000_001, "每天吃维生素", category="健康"),
        record(1_700_000_000_002, "松饼要两个鸡蛋", category="菜谱"),  # the user's own: as is
    )
    preview = await send_file(bot, data)
    await press(bot, preview, preview.buttons[0][1], ALICE)
    categories = {m["content"]: m["category"] for m in bot.memories("users/42")}
    assert categories == {
        "flu shot in october": "health",
        "每天吃维生素": "health",
        "松饼要两个鸡蛋": "菜谱",
    }
    [listed] = await bot.say("/list 健康", user=ALICE)
    assert "(total: 2)" in listed.text


async def test_an_export_imports_into_another_account(bot: Bot) -> None:
    await bot.say("/remember standup at 10:00 #work", user=ALICE)
    [document] = await bot.say("/export", user=ALICE, method="sendDocument")
    _, content = document.files["document"]
    stored = bot.telegram.upload(content, "memory.json")
    [preview] = replies(await post(bot, user=BOB, document={**stored, "file_name": "memory.json"}))
    assert "• 1 new" in preview.text
    await press(bot, preview, preview.buttons[0][1], BOB)
    [memory] = bot.memories("users/43")
    assert memory["content"] == "standup at 10:00 #work" and memory["tags"] == ["work"]


# -- a Bot API server whose getFile names a file on the bot's own disk -------------------------


@pytest.mark.parametrize(
    "shape", ["absolute", "climbing", "relative to the working directory", "encoded", "nested"]
)
async def test_a_get_file_path_naming_the_bots_own_disk_is_never_read(
    bot: Bot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shape: str
) -> None:
    secret = memory_file(record(1_700_000_000_001, "a secret on the bot's disk"))
    work = tmp_path / "work"
    work.mkdir()
    for folder in (tmp_path, work):
        (folder / "secret.json").write_bytes(secret)
    monkeypatch.chdir(work)
    path = {
        "absolute": str(tmp_path / "secret.json"),
        "climbing": "../secret.json",
        "relative to the working directory": "secret.json",  # fetched over HTTP: 404 there
        "encoded": "files/%2e%2e/%2E%2E/secret.json",
        "nested": "files/x/../../../../etc/passwd",
    }[shape]
    stored = bot.telegram.upload(b"[]", "memory.json", file_path=path)
    [reply] = replies(await post(bot, user=ALICE, document={**stored, "file_name": "a.json"}))
    assert "I couldn't download the file from Telegram" in reply.text and reply.buttons == []
    assert bot.memories("users/42") == []
    assert bot.telegram.downloads in ([], ["secret.json"])  # over HTTP, never from the disk


async def test_a_voice_note_whose_path_names_a_local_file_is_not_transcribed_from_it(
    start_bot: StartBot, llm: FakeOpenAI, tmp_path: Path
) -> None:
    local = tmp_path / "private.ogg"
    local.write_bytes(b"OggS-the-bot's-own-audio")
    llm.transcripts.append("words the bot's own file said")
    async with start_bot(sections=transcription(llm)) as bot:
        note = bot.telegram.upload(b"OggS-voice", "voice.ogg", file_path=str(local))
        voice = {**note, "duration": 7, "mime_type": "audio/ogg"}
        [reply] = replies(await post(bot, user=ALICE, voice=voice))
        assert "Telegram did not give me the file" in reply.text
        assert "🎤 voice note (0:07)" in reply.text
    assert llm.audio == []  # nothing of the bot's disk went to the transcriber


# -- edits --------------------------------------------------------------------------------------


async def test_editing_a_remembered_message_updates_its_memory(bot: Bot) -> None:
    telegram = bot.telegram
    since = telegram.mark()
    sent = telegram.send("/remember the dentist is on Friday", user=ALICE)
    await telegram.wait("sendMessage", since=since, chat_id=42)
    since = telegram.mark()
    telegram.edit(sent, text="/remember the dentist is on Monday #health")
    [reply] = await telegram.wait("sendMessage", since=since, chat_id=42)
    assert "Updated to match your edited message" in reply.text and "Monday" in reply.text
    [memory] = bot.memories("users/42")
    assert memory["content"] == "the dentist is on Monday #health" and memory["tags"] == ["health"]
    assert memory["updatedAt"]


async def test_editing_a_caption_updates_the_photo_memory(bot: Bot) -> None:
    telegram = bot.telegram
    since = telegram.mark()
    sent = telegram.post(user=ALICE, photo=photo_of(telegram), caption="receipt")
    await telegram.wait("sendMessage", since=since, chat_id=42)
    since = telegram.mark()
    telegram.edit(sent, caption="receipt for the new laptop")
    await telegram.wait("sendMessage", since=since, chat_id=42)
    [memory] = bot.memories("users/42")
    assert memory["content"] == "receipt for the new laptop"
    assert memory["attachment"]["kind"] == "photo"


async def test_editing_a_question_answers_it_again(bot: Bot) -> None:
    await bot.say("/remember the dentist is on Friday", user=ALICE)
    await bot.say("/remember the car is on level 3", user=ALICE)
    telegram = bot.telegram
    since = telegram.mark()
    sent = telegram.send("where is the dentist", user=ALICE)
    [first] = await telegram.wait("sendMessage", since=since, chat_id=42)
    assert "Friday" in first.text
    since = telegram.mark()
    telegram.edit(sent, text="where is the car")
    [second] = await telegram.wait("sendMessage", since=since, chat_id=42)
    assert "level 3" in second.text
    assert len(bot.memories("users/42")) == 2


# -- inline mode --------------------------------------------------------------------------------


async def inline(bot: Bot, query: str, user: dict[str, Any]) -> dict[str, Any]:
    since = bot.telegram.mark()
    query_id = bot.telegram.inline(query, user=user, chat_type="supergroup")
    await bot.telegram.wait("answerInlineQuery", since=since, inline_query_id=query_id)
    return bot.telegram.inline_answers[query_id]


async def test_inline_queries_show_only_the_users_own_memories_never_cached(bot: Bot) -> None:
    group = bot.telegram.group()
    await bot.say("/remember dentist on Friday at 9", user=ALICE)
    await bot.say(
        f"/remember@{BOT_USERNAME} dentist for the team is Dr Who", user=ALICE, chat=group
    )
    await bot.say("/remember my dentist is Dr Bob", user=BOB)
    await post(bot, user=ALICE, photo=photo_of(bot.telegram), caption="dentist appointment card")
    answer = await inline(bot, "dentist", ALICE)
    assert answer["is_personal"] is True and answer["cache_time"] == 0
    results = answer["results"]
    texts = [
        r.get("input_message_content", {}).get("message_text") or r.get("caption") for r in results
    ]
    assert sorted(texts) == ["dentist appointment card", "dentist on Friday at 9"]
    [photo] = [r for r in results if r["type"] == "photo"]
    assert photo["photo_file_id"] == bot.memories("users/42")[1]["attachment"]["file_id"]
    answer = await inline(bot, "dentist", BOB)
    assert [r["input_message_content"]["message_text"] for r in answer["results"]] == [
        "my dentist is Dr Bob"
    ]
    stranger = FakeBotAPI.user(99, "Eve")
    assert (await inline(bot, "dentist", stranger))["results"] == []
    # looking is not using: no access was counted
    assert all(m["accessCount"] == 0 for m in bot.memories("users/42"))


async def test_inline_queries_of_users_outside_the_allow_list_get_nothing(
    start_bot: StartBot,
) -> None:
    async with start_bot(allowed_user_ids=[43]) as bot:
        await bot.say("/remember dentist on Friday", user=BOB)
        assert (await inline(bot, "dentist", ALICE))["results"] == []
        assert len((await inline(bot, "dentist", BOB))["results"]) == 1
