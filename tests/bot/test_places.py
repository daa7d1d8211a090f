"""The place reader of /timezone (``bot.core.places``, ``bot.core.offsets``): what people write
for a zone, in English and Chinese, and what must not be read as one."""

from __future__ import annotations

import gzip
from datetime import UTC, datetime
from importlib import resources
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.core import offsets, places
from bot.core.places import Choice, Place, Unknown, read_place

NOW = datetime(2026, 12, 2, 1, 0, tzinfo=UTC)

# text -> the zone it names (a fixed offset marked with "fixed:").
ONE_ZONE = {
    # IANA names, any case; old names taken to today's.
    "Europe/Berlin": "Europe/Berlin",
    "europe/berlin": "Europe/Berlin",
    "ASIA/SHANGHAI": "Asia/Shanghai",
    "Asia/Calcutta": "Asia/Kolkata",
    "Europe/Kiev": "Europe/Kyiv",
    "America/New York": "America/New_York",
    # The city part of an IANA name, and CLDR's exemplar cities.
    "Berlin": "Europe/Berlin",
    "new york": "America/New_York",
    "Sao Paulo": "America/Sao_Paulo",
    "São Paulo": "America/Sao_Paulo",
    "sao-paulo": "America/Sao_Paulo",
    "Ho Chi Minh": "Asia/Ho_Chi_Minh",
    "Ho Chi Minh City": "Asia/Ho_Chi_Minh",
    "Kolkata": "Asia/Kolkata",
    # Cities that are no zone's name (GeoNames), the larger one of a name.
    "Beijing": "Asia/Shanghai",
    "San Francisco": "America/Los_Angeles",
    "Los Angeles": "America/Los_Angeles",
    "Boston": "America/New_York",
    "Seattle": "America/Los_Angeles",
    "Delhi": "Asia/Kolkata",
    "Mumbai": "Asia/Kolkata",
    "Washington": "America/New_York",
    "Toronto": "America/Toronto",
    "Birmingham": "Europe/London",
    "Sydney": "Australia/Sydney",
    "Paris": "Europe/Paris",
    # Other names: old, local, codes, with "time" or "city" after them.
    "Peking": "Asia/Shanghai",
    "Bombay": "Asia/Kolkata",
    "Saigon": "Asia/Ho_Chi_Minh",
    "München": "Europe/Berlin",
    "NYC": "America/New_York",
    "new-york": "America/New_York",
    "Beijing time": "Asia/Shanghai",
    "Tokyo time": "Asia/Tokyo",
    # Chinese.
    "北京": "Asia/Shanghai",
    "上海": "Asia/Shanghai",
    "深圳": "Asia/Shanghai",
    "广州": "Asia/Shanghai",
    "杭州": "Asia/Shanghai",
    "成都": "Asia/Shanghai",
    "香港": "Asia/Hong_Kong",
    "台北": "Asia/Taipei",
    "东京": "Asia/Tokyo",
    "首尔": "Asia/Seoul",
    "纽约": "America/New_York",
    "伦敦": "Europe/London",
    "巴黎": "Europe/Paris",
    "柏林": "Europe/Berlin",
    "悉尼": "Australia/Sydney",
    "加尔各答": "Asia/Kolkata",
    "莫斯科": "Europe/Moscow",
    "北京时间": "Asia/Shanghai",
    "北京市": "Asia/Shanghai",
    # Countries of one clock, or one clearly most populous.
    "Japan": "Asia/Tokyo",
    "日本": "Asia/Tokyo",
    "China": "Asia/Shanghai",
    "中国": "Asia/Shanghai",
    "Germany": "Europe/Berlin",
    "India": "Asia/Kolkata",
    "Brazil": "America/Sao_Paulo",
    "UK": "Europe/London",
    "英国": "Europe/London",
    "Korea": "Asia/Seoul",
    "台湾": "Asia/Taipei",
    # Metazones and unambiguous abbreviations.
    "Central European Time": "Europe/Berlin",
    "中国标准时间": "Asia/Shanghai",
    "CET": "Europe/Berlin",
    "JST": "Asia/Tokyo",
    "PST": "America/Los_Angeles",
    # Offsets: whole hours are fixed zones; half hours the places that keep them all year.
    "UTC+8": "fixed:Etc/GMT-8",
    "GMT-5": "fixed:Etc/GMT+5",
    "+8": "fixed:Etc/GMT-8",
    "UTC 8": "fixed:Etc/GMT-8",
    "utc+08:00": "fixed:Etc/GMT-8",
    "-0500": "fixed:Etc/GMT+5",
    "UTC+14": "fixed:Etc/GMT-14",
    "东八区": "fixed:Etc/GMT-8",
    "西五区": "fixed:Etc/GMT+5",
    "东十二区": "fixed:Etc/GMT-12",
    "UTC": "fixed:UTC",
    "GMT": "fixed:UTC",
    "UTC+05:30": "Asia/Kolkata",
    "+0545": "Asia/Kathmandu",
}

# text -> zones that must all be offered (different clocks, no clear winner).
CHOICES = {
    "CST": {"America/Chicago", "Asia/Shanghai"},
    "IST": {"Asia/Kolkata", "Europe/Dublin", "Asia/Jerusalem"},
    "BST": {"Europe/London", "Asia/Dhaka"},
    "USA": {"America/New_York", "America/Chicago", "America/Los_Angeles", "America/Denver"},
    "美国": {"America/New_York", "America/Chicago", "America/Los_Angeles"},
    "Australia": {"Australia/Sydney", "Australia/Brisbane", "Australia/Perth"},
    "Canada": {"America/Toronto", "America/Vancouver"},
    "Valencia": {"Europe/Madrid", "America/Caracas"},
    "Hyderabad": {"Asia/Kolkata", "Asia/Karachi"},
    "UTC-03:30": {"America/St_Johns"},  # kept in winter only: the person says which
}

# Not a zone: never a guess. With the near spellings of well-known places, if any.
UNKNOWN = {
    "Mars/Olympus_Mons": set(),
    "Asia/Beijing": set(),
    "hello": set(),
    "asdf": set(),
    "tomorrow": set(),
    "明天": set(),
    "火星": set(),
    "time": set(),
    "now": set(),
    "the": set(),
    "9am": set(),
    "8": set(),
    "UTC+25": set(),
    "UTC+5:20": set(),
    "东二十区": set(),
    "": set(),
    "x" * 101: set(),
    "Berln": {"Europe/Berlin"},
    "New Yrok": {"America/New_York"},
}


@pytest.mark.parametrize("text", ONE_ZONE)
def test_a_place_names_one_zone(text: str) -> None:
    reading = read_place(text, NOW)
    wanted = ONE_ZONE[text]
    assert isinstance(reading, Place), (text, reading)
    assert reading.zone.key == wanted.removeprefix("fixed:"), text
    assert reading.fixed == wanted.startswith("fixed:"), text


@pytest.mark.parametrize("text", CHOICES)
def test_ambiguous_words_ask_which(text: str) -> None:
    reading = read_place(text, NOW)
    assert isinstance(reading, Choice), (text, reading)
    offered = {zone.key for zone in reading.options}
    assert CHOICES[text] <= offered, (text, offered)
    assert 1 <= len(offered) <= places.MAX_CHOICES


@pytest.mark.parametrize("text", UNKNOWN)
def test_what_is_no_zone_is_not_guessed(text: str) -> None:
    reading = read_place(text, NOW)
    assert isinstance(reading, Unknown), (text, reading)
    assert {zone.key for zone in reading.suggestions} >= UNKNOWN[text]
    if not UNKNOWN[text]:
        assert reading.suggestions == (), text


def test_the_reply_names_the_place_as_said() -> None:
    assert read_place("Europe/Berlin", NOW) == Place(ZoneInfo("Europe/Berlin"), "Berlin")
    assert read_place("  北京  ", NOW) == Place(ZoneInfo("Asia/Shanghai"), "北京")
    assert read_place("UTC+8", NOW) == Place(ZoneInfo("Etc/GMT-8"), "UTC+08:00", fixed=True)
    assert places.city_of(ZoneInfo("Asia/Shanghai"), "zh") == "上海"
    assert places.city_of(ZoneInfo("America/New_York"), "en") == "New York"


def test_fixed_offsets_are_named_with_their_real_sign() -> None:
    """IANA's Etc/GMT-8 is UTC+08:00: nobody is shown the inverted sign."""
    assert offsets.zone_label(ZoneInfo("Etc/GMT-8")) == "UTC+08:00"
    assert offsets.zone_label(ZoneInfo("Etc/GMT+5")) == "UTC−05:00"
    assert offsets.zone_label(ZoneInfo("UTC")) == "UTC"
    assert offsets.zone_label(ZoneInfo("Europe/Berlin")) == "Europe/Berlin"
    assert offsets.is_fixed(ZoneInfo("Etc/GMT-8")) and not offsets.is_fixed(ZoneInfo("Asia/Tokyo"))


def test_a_location_names_its_zone() -> None:
    pytest.importorskip("tzfpy")  # a dependency; the README says what is lost without it
    assert places.zone_at(39.9042, 116.4074) == ZoneInfo("Asia/Shanghai")  # Beijing
    assert places.zone_at(52.52, 13.405) == ZoneInfo("Europe/Berlin")
    assert places.zone_at(40.7128, -74.006) == ZoneInfo("America/New_York")
    assert places.zone_at(30.0, -40.0) is None  # the Atlantic: no place's clock
    assert places.zone_at(123.0, 0.0) is None  # not a latitude


def test_the_data_file_holds_names_as_the_reader_compares_them() -> None:
    """``bot.core.places_build`` stores ``key_of`` of each name: if ``key_of`` changes, the file
    must be built again, or names would silently stop matching."""
    raw = resources.files("bot.core").joinpath(places.DATA).read_bytes()
    checked = 0
    for line in gzip.decompress(raw).decode().splitlines():
        if line.startswith("N\t"):
            for key in line.split("\t")[3].split("|"):
                assert places.key_of(key) == key, line
                checked += 1
    assert checked > 100_000


@given(st.text(max_size=120))
@settings(max_examples=400, deadline=None)
def test_any_text_is_read_without_an_error(text: str) -> None:
    """Whatever follows /timezone (control characters, markup, paths, any script) is a
    reading, never an exception."""
    assert isinstance(read_place(text, NOW), Place | Choice | Unknown)


@pytest.mark.parametrize(
    "name", ["/etc/passwd", "../../etc/passwd", "posixrules", "zone1970.tab", "europe/berlin"]
)
def test_a_button_s_zone_must_be_exactly_a_zone_s_name(name: str) -> None:
    assert places.zone_named(name) is None
    assert places.zone_named("Europe/Berlin") == ZoneInfo("Europe/Berlin")
