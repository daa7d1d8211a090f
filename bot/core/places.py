"""Which time zone a person means: ``/timezone Beijing``, ``上海``, ``UTC+8``, ``Japan``.

``read_place(text, now)`` answers with one of three readings, and never guesses:

- ``Place``: one zone. From an IANA name in any case (``europe/berlin``, old names such as
  ``Asia/Calcutta`` taken to today's), an unambiguous abbreviation (``CET``, ``JST``), an
  offset (``UTC+8``, ``东八区``: ``bot.core.offsets``), or a name of a city, a country or a
  metazone ("Central European Time", "北京时间") whose places keep one clock, or one of whose
  clocks is kept by five times as many people as any other (Boston: Massachusetts, not
  Lincolnshire; China: Shanghai, not Urumqi).
- ``Choice``: the words fit places with different clocks and no clear winner ("CST", "USA",
  "美国", "Valencia"); the zones to choose from, the most populous first.
- ``Unknown``: nothing by that name; with the near spellings of well-known places, if any
  ("Berln" -> Berlin), to be confirmed by the person.

The names come from ``places.tsv.gz`` beside this module, built by
``python -m bot.core.places_build``
from GeoNames (34,000 cities of 15,000 people or more, their names in Chinese characters and
the other Latin names of the larger ones: Peking, Bombay, München, NYC) and Unicode CLDR (each
zone's exemplar city in English and Chinese, countries and their zones, metazone names). It is
read on first use (about a second, some 30 MB), in the caller's worker thread; nothing happens
at import. Names are compared case-, accent- and punctuation-blind: "sao-paulo" is São Paulo.

``zone_at(latitude, longitude)`` is the zone of a shared location, from the optional package
``tzfpy`` (polygons inside its wheel, nothing downloaded); without it, ``LocationUnavailable``.
"""

from __future__ import annotations

import difflib
import gzip
import re
import sys
import unicodedata
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from importlib import resources
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from bot.core import offsets

DATA = "places.tsv.gz"
MAX_CHARS = 100  # longer text is not a place name
MAX_CHOICES = 6
CLEAR_LEAD = 5  # a clock kept by this many times the people of the next one is the one meant
SUGGEST_AT = 0.85  # difflib ratio of a near spelling (its first character is the same)
SUGGEST_MIN_CHARS = 5
SUGGEST_MIN_PEOPLE = 100_000  # only well-known places are suggested for a misspelling
_SEPARATORS = re.compile(r"[\s_\-.,'’`/()（）·・、，。]+")
_SUFFIXES = (" time", " time zone", " timezone", " city", "时间", "時間", "时区", "時區", "市")
# Words sent after /timezone that are not a place, though a town somewhere has the name.
_NOT_PLACES = frozenset(
    "time zone timezone now here local my the a today tomorrow home set change show help what "
    "default reset auto current mine 时区 时间 现在 这里 本地 当地 我的 默认".split()
)
# Abbreviations people write for a zone: only the unambiguous ones are read as a zone.
_ABBREVIATIONS = {
    **dict.fromkeys(("utc", "gmt", "z", "zulu", "ut", "协调世界时", "格林尼治时间"), "UTC"),
    **dict.fromkeys(("wet", "west"), "Europe/Lisbon"),
    **dict.fromkeys(("cet", "cest", "met", "mez", "mesz"), "Europe/Berlin"),
    **dict.fromkeys(("eet", "eest"), "Europe/Athens"),
    **dict.fromkeys(("pst", "pdt", "pt"), "America/Los_Angeles"),
    **dict.fromkeys(("est", "edt", "et"), "America/New_York"),
    **dict.fromkeys(("cdt", "ct"), "America/Chicago"),
    **dict.fromkeys(("mdt",), "America/Denver"),
    **dict.fromkeys(("akst", "akdt"), "America/Anchorage"),
    **dict.fromkeys(("nst", "ndt"), "America/St_Johns"),
    **dict.fromkeys(("nzst", "nzdt"), "Pacific/Auckland"),
    "msk": "Europe/Moscow",
    "pkt": "Asia/Karachi",
    "npt": "Asia/Kathmandu",
    "ict": "Asia/Bangkok",
    "wib": "Asia/Jakarta",
    "sgt": "Asia/Singapore",
    "hkt": "Asia/Hong_Kong",
    "pht": "Asia/Manila",
    "jst": "Asia/Tokyo",
    "kst": "Asia/Seoul",
    "awst": "Australia/Perth",
    "aedt": "Australia/Sydney",
    "acdt": "Australia/Adelaide",
    "hst": "Pacific/Honolulu",
    "brt": "America/Sao_Paulo",
    "art": "America/Argentina/Buenos_Aires",
    "sast": "Africa/Johannesburg",
    "wat": "Africa/Lagos",
    "cat": "Africa/Maputo",
    "eat": "Africa/Nairobi",
    "irst": "Asia/Tehran",
}
_AMBIGUOUS = {
    "cst": ("America/Chicago", "Asia/Shanghai", "America/Havana"),
    "ist": ("Asia/Kolkata", "Europe/Dublin", "Asia/Jerusalem"),
    "bst": ("Europe/London", "Asia/Dhaka"),
    "ast": ("America/Halifax", "Asia/Riyadh"),
    "mst": ("America/Denver", "America/Phoenix"),
    "aest": ("Australia/Sydney", "Australia/Brisbane"),
    "acst": ("Australia/Adelaide", "Australia/Darwin"),
    "gst": ("Asia/Dubai", "Atlantic/South_Georgia"),
    "sst": ("Asia/Singapore", "Pacific/Pago_Pago"),
}


class LocationUnavailable(Exception):
    """The optional package ``tzfpy`` (a location's zone) is not installed."""


@dataclass(frozen=True)
class Place:
    """One zone, and the words it was named by (``Beijing``, ``UTC+08:00``)."""

    zone: ZoneInfo
    said: str
    fixed: bool = False  # a fixed offset: it does not follow daylight saving


@dataclass(frozen=True)
class Choice:
    """The words fit places with different clocks: which one is meant."""

    said: str
    options: tuple[ZoneInfo, ...]


@dataclass(frozen=True)
class Unknown:
    """Nothing by that name; ``suggestions``: near spellings of well-known places."""

    said: str
    suggestions: tuple[ZoneInfo, ...] = ()


Reading = Place | Choice | Unknown


def key_of(text: str) -> str:
    """``text`` as names are compared: case, accents and punctuation left out."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    return _SEPARATORS.sub(" ", text).strip()


@dataclass
class _Table:
    # key -> (zone, people) when the name is of one zone (most are: a third of the memory of a
    # dict each), else zone -> people
    names: dict[str, tuple[str, int] | dict[str, int]]
    aliases: dict[str, str]  # an old zone name (lower case) -> today's
    zones: dict[str, str]  # a zone name in lower case -> as IANA writes it
    cities: dict[str, tuple[str, str]]  # zone -> its exemplar city (English, Chinese)
    people: dict[str, int]  # zone -> people of its cities


def _add(table: _Table, keys: str, zone: str, people: int) -> None:
    zone = sys.intern(zone)
    for key in keys.split("|"):
        found = table.names.get(key)
        if found is None:
            table.names[key] = (zone, people)
        elif isinstance(found, tuple):
            if found[0] == zone:
                table.names[key] = (zone, found[1] + people)
            else:
                table.names[key] = {found[0]: found[1], zone: people}
        else:
            found[zone] = found.get(zone, 0) + people


def _weights(key: str) -> dict[str, int] | None:
    """The zones a name is of, and how many people each."""
    found = _table().names.get(key)
    return {found[0]: found[1]} if isinstance(found, tuple) else found


@cache
def _table() -> _Table:
    """The place names, read once (module docstring)."""
    known = available_timezones()
    lower = {zone.lower(): zone for zone in known}
    table = _Table({}, {}, lower, {}, defaultdict(int))
    raw = resources.files("bot.core").joinpath(DATA).read_bytes()
    for line in gzip.decompress(raw).decode().splitlines():
        kind, _, rest = line.partition("\t")
        fields = rest.split("\t")
        if kind == "L" and fields[1] in known:
            table.aliases[fields[0].lower()] = fields[1]
        elif kind == "X" and fields[0] in known:
            table.cities[fields[0]] = (fields[1], fields[2])
        elif kind == "N" and fields[1] in known:
            _add(table, fields[2], fields[1], int(fields[0]))
            table.people[fields[1]] += int(fields[0])
        elif kind in ("C", "M"):
            code_or_zones, names = (fields[1], fields[2]) if kind == "C" else (fields[0], fields[1])
            for part in code_or_zones.split(","):
                zone, _, people = part.rpartition(":")
                if zone in known:
                    _add(table, names, zone, int(people))
    return table


@cache
def _well_known() -> dict[str, list[str]]:
    """The names of places of ``SUGGEST_MIN_PEOPLE`` or more, by their first character."""
    found: dict[str, list[str]] = defaultdict(list)
    for key, zones in _table().names.items():
        people = zones[1] if isinstance(zones, tuple) else sum(zones.values())
        if people >= SUGGEST_MIN_PEOPLE:
            found[key[:1]].append(key)
    return found


def _zone(name: str) -> ZoneInfo | None:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):  # OSError: a folder ("Europe")
        return None


def _iana(text: str) -> ZoneInfo | None:
    """The IANA zone ``text`` names, in any case, an old name taken to today's."""
    table, wanted = _table(), text.strip().replace(" ", "_").lower()
    name = table.aliases.get(wanted) or table.zones.get(wanted)
    return _zone(name) if name is not None else None


def _decide(said: str, weights: dict[str, int], now: datetime) -> Reading:
    """One zone if the clocks are one or one clearly leads (module docstring); else a choice."""
    clocks: list[tuple[int, dict[str, int]]] = []  # people, zones of one clock -> people
    for name, people in sorted(weights.items(), key=lambda item: (-item[1], item[0])):
        zone = _zone(name)
        if zone is None:
            continue
        for index, (total, members) in enumerate(clocks):
            if offsets.same_clock(ZoneInfo(next(iter(members))), zone, now):
                members[name] = people
                clocks[index] = (total + people, members)
                break
        else:
            clocks.append((people, {name: people}))
    if not clocks:
        return Unknown(said)
    clocks.sort(key=lambda clock: -clock[0])
    leaders = [ZoneInfo(max(members, key=lambda z: (members[z], z))) for _, members in clocks]
    if len(clocks) == 1 or clocks[0][0] >= CLEAR_LEAD * clocks[1][0]:
        return Place(leaders[0], said)
    return Choice(said, tuple(leaders[:MAX_CHOICES]))


def _offset(said: str, minutes: int, now: datetime) -> Reading:
    fixed = offsets.fixed_zone(minutes)
    if fixed is not None:
        return Place(fixed, offsets.offset_text(minutes), fixed=True)
    # Half and quarter hours: the places that keep that offset all year (India for +05:30).
    table = _table()
    keeping = {
        z: p for z, p in table.people.items() if offsets.offset_at(ZoneInfo(z), now) == minutes
    }
    steady = {z: p for z, p in keeping.items() if offsets.keeps(ZoneInfo(z), minutes, now)}
    if steady:
        return _decide(offsets.offset_text(minutes), steady, now)
    if keeping:  # kept for part of the year only (St. John's for -03:30): which one is meant
        found = _decide(offsets.offset_text(minutes), keeping, now)
        return Choice(found.said, (found.zone,)) if isinstance(found, Place) else found
    return Unknown(offsets.offset_text(minutes))


def read_place(text: str, now: datetime) -> Reading:
    """The zone ``text`` names (module docstring); ``now`` decides whose clocks are the same."""
    said = " ".join(text.split())
    if not said or len(said) > MAX_CHARS:
        return Unknown(said[:MAX_CHARS])
    key = key_of(said)
    if key in _NOT_PLACES:
        return Unknown(said)
    if key in _AMBIGUOUS:
        return Choice(said, tuple(ZoneInfo(zone) for zone in _AMBIGUOUS[key]))
    if key in _ABBREVIATIONS:
        return Place(ZoneInfo(_ABBREVIATIONS[key]), said, fixed=_ABBREVIATIONS[key] == "UTC")
    minutes = offsets.read_offset(said)
    if minutes is not None:
        return _offset(said, minutes, now)
    zone = _iana(said)
    if zone is not None:  # "Europe/Berlin" is said "Berlin"; an old name ("Japan") as it is
        shown = city_of(zone, "en") if "/" in said else said
        return Place(zone, shown, fixed=offsets.is_fixed(zone))
    for candidate in (key, *(key.removesuffix(s).strip() for s in _SUFFIXES if key.endswith(s))):
        weights = _weights(candidate)
        if weights is not None:
            return _decide(said, weights, now)
    return Unknown(said, _near(key, now))


def _near(key: str, now: datetime) -> tuple[ZoneInfo, ...]:
    """Zones of well-known places spelt like ``key`` ("berln", "new yrok"), each one clock."""
    found: list[ZoneInfo] = []
    if len(key) < SUGGEST_MIN_CHARS:
        return ()  # "now", "zone": a short word is near too many names
    known = _well_known().get(key[:1], [])
    for near in difflib.get_close_matches(key, known, n=3, cutoff=SUGGEST_AT):
        reading = _decide(near, _weights(near) or {}, now)
        if isinstance(reading, Place) and reading.zone not in found:
            found.append(reading.zone)
    return tuple(found)


def biggest_at(minutes: int, now: datetime) -> ZoneInfo | None:
    """The place's zone where most people are ``minutes`` east of UTC now (for "UTC+8":
    Shanghai), to suggest instead of a fixed offset."""
    table = _table()
    found = [
        (people, zone)
        for zone, people in table.people.items()
        if not zone.startswith("Etc/") and offsets.offset_at(ZoneInfo(zone), now) == minutes
    ]
    return ZoneInfo(max(found)[1]) if found else None


def city_of(zone: ZoneInfo, language: str) -> str:
    """The zone's exemplar city in ``language`` (Shanghai, 上海), or its label (UTC+08:00)."""
    if offsets.is_fixed(zone):
        return offsets.zone_label(zone)
    english, chinese = _table().cities.get(zone.key, ("", ""))
    fallback = zone.key.rsplit("/", 1)[-1].replace("_", " ")
    return (chinese if language == "zh" else english) or english or fallback


def zone_named(name: str) -> ZoneInfo | None:
    """The zone of exactly this IANA name (a button's), None for anything else: no path or
    file name under the zone directory is opened unless it is a zone's."""
    return _zone(name) if _table().zones.get(name.lower()) == name else None


def locations_available() -> bool:
    """Whether a location's zone can be found (the optional package ``tzfpy`` is installed)."""
    try:
        import tzfpy  # noqa: F401 (its finder is built on first use, not on import)
    except ImportError:
        return False
    return True


def zone_at(latitude: float, longitude: float) -> ZoneInfo | None:
    """The zone at a location (None: none there, e.g. open sea); ``LocationUnavailable``
    without the optional package ``tzfpy``."""
    try:
        import tzfpy
    except ImportError as e:
        raise LocationUnavailable("the package tzfpy is not installed") from e
    if not (-90 <= latitude <= 90 and -180 <= longitude <= 180):
        return None
    name = tzfpy.get_tz(longitude, latitude)
    if not name or name.startswith("Etc/"):
        return None  # the sea: an hourly offset from the longitude, not a place's clock
    return _iana(name)


__all__ = [
    "Choice",
    "LocationUnavailable",
    "Place",
    "Reading",
    "Unknown",
    "biggest_at",
    "city_of",
    "key_of",
    "locations_available",
    "read_place",
    "zone_at",
    "zone_named",
]
