"""bot.view.i18n: both languages say everything, with the same placeholders."""

from __future__ import annotations

import string

from telegram import User

from bot.view.i18n import STRINGS, language_of, t


def placeholders(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def test_both_languages_have_the_same_keys_and_placeholders() -> None:
    assert STRINGS["en"].keys() == STRINGS["zh"].keys()
    for key, english in STRINGS["en"].items():
        assert placeholders(english) == placeholders(STRINGS["zh"][key]), key


def test_language_follows_telegram_language_code() -> None:
    def user(code: str | None) -> User:
        return User(1, "A", False, language_code=code)

    assert language_of(user("zh-hans")) == "zh" and language_of(user("zh-TW")) == "zh"
    assert language_of(user("en")) == "en" and language_of(user("de")) == "en"
    assert language_of(user(None)) == "en" and language_of(None) == "en"
    assert t("fr", "cancelled") == t("en", "cancelled")
