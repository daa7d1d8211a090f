"""``/export md`` and Markdown imports (a ``.md`` file, a ``.zip`` of notes) through the bot.

The round trip: what one account exports imports into another as the same memories (text,
tags, category, dates, ids), and into its own adds nothing. Obsidian notes (front matter,
``#tags``, list notes, folders) import with the same preview / Import / Cancel as a JSON file;
hostile archives (a zip bomb, names that climb out of the folder, links, archives inside,
encrypted or non-UTF-8 notes, too many or too big files) are refused whole, with what is wrong,
and nothing is imported.
"""

from __future__ import annotations

import io
import struct
import zipfile
from typing import Any

import pytest
import yaml
from bot_harness import ALICE, BOB, LI, Bot, is_help

from bench.fakes.telegram_server import Call

MB = 1024 * 1024
KEYS = ("id", "content", "tags", "category", "createdAt", "date")


async def post(bot: Bot, *, user: dict[str, Any], **fields: Any) -> list[Call]:
    """Send a message of any kind, then /help as a sentinel: the bot's messages for it."""
    telegram = bot.telegram
    since = telegram.mark()
    message = telegram.post(user=user, **fields)
    telegram.send("/help", user=user, chat=message["chat"])
    await telegram.wait("sendMessage", since=since, chat_id=message["chat"]["id"], where=is_help)
    return [c for c in telegram.calls[since:] if c.method == "sendMessage" and not is_help(c)]


async def send_file(bot: Bot, content: bytes, name: str, user: dict[str, Any] = ALICE) -> Call:
    stored = bot.telegram.upload(content, name)
    [reply] = await post(bot, user=user, document={**stored, "file_name": name})
    return reply


async def press(bot: Bot, message: Call, data: str, user: dict[str, Any]) -> str:
    since = bot.telegram.mark()
    await bot.press(message, data, user=user)
    [edit] = await bot.telegram.wait("editMessageText", since=since)
    return edit.text


async def export_md(bot: Bot, user: dict[str, Any]) -> tuple[Call, str]:
    [document] = await bot.say("/export md", user=user, method="sendDocument")
    name, content = document.files["document"]
    assert name == "memories.md"
    return document, content.decode()


def front_matter(text: str) -> dict[str, Any]:
    _, header, _ = text.split("---\n", 2)
    return dict(yaml.safe_load(header))


def comparable(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(({key: r.get(key) for key in KEYS} for r in records), key=lambda r: r["id"])


async def remember_many(bot: Bot) -> None:
    for text in (
        "/remember work: standup at 10:00 #meeting #daily",
        "/remember the dentist is next Tuesday 3pm",
        "/remember 代码在 D:\\projects\\cogito #代码",
        "/remember packing list\n- passport\n- charger\n\n1. book the taxi\n# not a heading",
        "/remember #recipes: pancakes need 2 eggs, use #include <stdio.h> in C",
        "/remember > a quote and a \\# backslash",
    ):
        await bot.say(text, user=ALICE)
    stored = bot.telegram.upload(b"%PDF-1.4 fake", "report.pdf")
    await post(bot, user=ALICE, document={**stored, "file_name": "report.pdf"}, caption="Q3 #work")


async def test_an_export_imports_into_another_account_as_the_same_memories(bot: Bot) -> None:
    await remember_many(bot)
    alice = bot.memories("users/42")
    document, text = await export_md(bot, ALICE)
    assert "📝 7 memories as Markdown" in document.text
    header = front_matter(text)
    assert header["count"] == 7 and header["namespace"] == "users/42"
    assert header["exported"].endswith("Z") and header["title"] == "Memories"
    assert "\n## work\n" in text and "\n## recipes\n" in text
    assert "  - tags: #meeting #daily\n" in text
    assert "- date: " in text  # the dentist's Tuesday
    assert "- file: document · report.pdf · file_id `" in text
    assert "\n  \\- passport\n" in text  # a line of the text, not a nested list
    # Bob imports it: the same memories
    preview = await send_file(bot, text.encode(), "memories.md", user=BOB)
    assert "7 memories in the file" in preview.text and "• 7 new" in preview.text
    [(_, apply), _] = preview.buttons
    done = await press(bot, preview, apply, BOB)
    assert "Imported 7 memories (0 were already here, 0 refused)" in done
    bob = bot.memories("users/43")
    assert comparable(bob) == comparable(alice)
    assert all("attachment" not in memory for memory in bob)  # the file_id is this bot's only
    # Alice imports her own export: nothing new, no buttons
    again = await send_file(bot, text.encode(), "memories.md")
    assert "• 0 new\n• 7 already here" in again.text and again.buttons == []
    # Bob's export of the import is Alice's export, but for its header
    _, bobs = await export_md(bot, BOB)
    without_file = [line for line in text.split("---\n", 2)[2].split("\n") if "file:" not in line]
    assert bobs.split("---\n", 2)[2].split("\n") == without_file


async def test_markdown_in_chinese_has_chinese_headings_and_labels(bot: Bot) -> None:
    [empty] = await bot.say("/export md", user=LI)
    assert "还没有可以导出的记忆" in empty.text
    await bot.say("/remember 健康：每天吃维生素 #健康", user=LI)
    await bot.say("/remember 工作：周一开周会", user=LI)
    document, text = await export_md(bot, LI)
    assert "2 条记忆，Markdown 格式" in document.text
    assert front_matter(text)["title"] == "记忆" and "\n# 记忆\n" in text
    assert "\n## 健康\n" in text and "\n## 工作\n" in text
    assert "  - 标签: #健康\n" in text and "  - 创建: " in text and "  - 编号: " in text
    preview = await send_file(bot, text.encode(), "记忆.md", user=ALICE)
    await press(bot, preview, preview.buttons[0][1], ALICE)
    assert {m["category"] for m in bot.memories("users/42")} == {"health", "work"}
    assert comparable(bot.memories("users/42")) == comparable(bot.memories("users/44"))


def vault(files: dict[str, bytes | str], **infos: zipfile.ZipInfo) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in files.items():
            archive.writestr(name, content)
        for info in infos.values():
            archive.writestr(info, b"# a note\n")
    return buffer.getvalue()


NOTES = {
    "Vault/Dentist.md": "---\ntags: [health, appointments]\ncreated: 2025-03-01\n---\n"
    "# Dentist\n\nDr. Wu, Tuesdays at 3pm. Bring the #insurance card.\n",
    "Vault/Work/Shopping.md": "---\ncategory: shopping\ntags:\n  - home\n---\n"
    "- milk #dairy\n- eggs\n\t- free range\n- bread\n",
    "Vault/Ideas.md": "## idea\n\n- a bot that remembers\n- a calendar feed\n\n## 工作\n\n- 周报\n",
    "Vault/.obsidian/app.json": "{}",
    "Vault/attachments/scan.png": b"\x89PNG\r\n\x1a\n\x00\x00binary",
    "__MACOSX/Vault/._Dentist.md": b"\x00\x05\x16\x07\xff\xfe binary resource fork",
    "Vault/empty.md": "",
}


async def test_an_obsidian_vault_zipped_imports_its_notes(bot: Bot) -> None:
    preview = await send_file(bot, vault(NOTES), "Vault.zip")
    assert "8 memories in the file" in preview.text and "• 8 new" in preview.text
    assert "3 files that are not notes were skipped" in preview.text
    done = await press(bot, preview, preview.buttons[0][1], ALICE)
    assert "Imported 8 memories" in done
    found = {m["content"]: m for m in bot.memories("users/42")}
    dentist = found["Dentist\n\nDr. Wu, Tuesdays at 3pm. Bring the #insurance card."]
    assert dentist["tags"] == ["health", "appointments", "insurance"]
    assert dentist["createdAt"] == "2025-03-01T00:00:00.000Z"
    assert found["milk #dairy"]["tags"] == ["home", "dairy"]
    assert found["milk #dairy"]["category"] == "shopping"
    assert "eggs\n- free range" in found
    assert found["a bot that remembers"]["category"] == "idea"
    assert found["周报"]["category"] == "work"
    assert found["empty"]["category"] == "general"  # a note without text: its title
    again = await send_file(bot, vault(NOTES), "Vault.zip")
    assert "• 0 new\n• 8 already here" in again.text and again.buttons == []


async def test_a_markdown_import_can_be_cancelled(bot: Bot) -> None:
    preview = await send_file(bot, b"- one thing\n- another\n", "list.md")
    assert "• 2 new" in preview.text
    assert "Import cancelled" in await press(bot, preview, preview.buttons[1][1], ALICE)
    assert bot.memories("users/42") == []


def patched_size(data: bytes, claimed: int) -> bytes:
    """``data`` (a zip of one entry) with its headers claiming ``claimed`` bytes unpacked."""
    local = data.index(b"PK\x03\x04")
    central = data.index(b"PK\x01\x02")
    data = bytearray(data)
    data[local + 22 : local + 26] = struct.pack("<I", claimed)
    data[central + 24 : central + 28] = struct.pack("<I", claimed)
    return bytes(data)


def link(name: str) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name)
    info.external_attr = 0o120777 << 16
    return info


def encrypted(data: bytes) -> bytes:
    """``data`` (a zip of one entry) with its entry marked as encrypted."""
    local = data.index(b"PK\x03\x04")
    central = data.index(b"PK\x01\x02")
    data = bytearray(data)
    for flags in (local + 6, central + 8):
        data[flags] |= 0x1
    return bytes(data)


HOSTILE = {
    "a zip bomb": (vault({"bomb.md": b"a" * (30 * MB)}), "“bomb.md” is too big unpacked"),
    "a header that lies": (
        patched_size(vault({"small.md": b"b" * (2 * MB)}), 100),
        "is not a zip file, or it is damaged",
    ),
    "too much in all": (
        vault({f"n{i}.md": b"c" * (MB - 10) for i in range(21)}),
        "is too big unpacked (a note may be at most 1.0 MB, all of them 20.0 MB)",
    ),
    "a climbing name": (vault({"notes/../../evil.md": "x"}), "“notes/../../evil.md” is a link"),
    "an absolute name": (vault({"/etc/cron.d/x.md": "x"}), "points outside the folder"),
    "a drive name": (vault({"C:/x.md": "x"}), "points outside the folder"),
    "a link": (vault({"ok.md": "fine"}, x=link("passwd.md")), "“passwd.md” is a link"),
    "an archive inside": (vault({"a.md": "x", "inner.zip": b"PK"}), "“inner.zip” is an archive"),
    "an encrypted note": (encrypted(vault({"secret.md": "x"})), "protected by a password"),
    "a note not UTF-8": (
        vault({"a.md": "fine", "latin1.md": "caf\xe9".encode("latin-1")}),
        ("“latin1.md” is not UTF-8 text"),
    ),
    "too many files": (vault({f"{i}.txt": "" for i in range(10_001)}), "too many files"),
    "no notes": (vault({"photo.jpg": b"\xff\xd8"}), "it holds no Markdown notes"),
    "not a zip": (b"PK\x03\x04 this is not a zip at all", "it is not a zip file"),
}


@pytest.mark.parametrize("case", list(HOSTILE))
async def test_a_hostile_archive_is_refused_whole_and_nothing_is_imported(
    bot: Bot, case: str
) -> None:
    content, expected = HOSTILE[case]
    reply = await send_file(bot, content, "notes.zip")
    assert "📥 notes.zip cannot be imported: " in reply.text and "Nothing changed" in reply.text
    assert expected in reply.text and reply.buttons == []
    assert bot.memories("users/42") == []


async def test_a_markdown_file_that_is_not_text_or_too_big_is_refused(bot: Bot) -> None:
    reply = await send_file(bot, "caf\xe9 #x".encode("latin-1"), "notes.md")
    assert "is not a text file I can read (it is not UTF-8)" in reply.text
    stored = bot.telegram.upload(b"- x\n", "big.md", size=6 * MB)
    [reply] = await post(bot, user=ALICE, document={**stored, "file_name": "big.md"})
    assert "is 6.0 MB; I import files of at most 5.0 MB" in reply.text
    [reply] = await post(bot, user=LI, document={**stored, "file_name": "big.md"})
    assert "没有做任何修改" in reply.text
    reply = await send_file(bot, vault({"../x.md": "x"}), "笔记.zip", user=LI)
    assert "无法导入" in reply.text and "指向文件夹之外" in reply.text
    assert bot.memories("users/42") == [] and bot.memories("users/44") == []
