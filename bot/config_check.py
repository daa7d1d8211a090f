"""A TOML table checked against a frozen dataclass, key by key: how ``bot.config`` reads.

A section of the configuration is a dataclass; ``build`` makes one from a parsed table, and
``convert`` checks one value against its field: its type (a whole number is not a number, a
boolean not a number), and what the field's ``metadata`` asks (``choices``, a range
``between``, a ``checked`` text such as a cron expression or a time zone). An unknown key or a
wrong value raises ``ConfigError`` naming the key (``telegram.group_scope``), so a typo never
silently falls back to a default. A key is secret when its field says so
(``metadata={"secret": True}``) or its name does (a part ``token``, ``key``, ``secret``,
``password``...: ``api_key``, ``auth_token``): a message about it names the key and the type it
got, never the value, nor does one about a whole table, which may hold secrets.
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from bot.errors import ConfigError


def choices(*values: str) -> dict[str, tuple[str, ...]]:
    """A text value that is one of ``values`` (any case; kept lower-cased)."""
    return {"choices": values}


def between(low: float, high: float) -> dict[str, tuple[float, float]]:
    """A number from ``low`` to ``high``."""
    return {"between": (low, high)}


def checked(check: Callable[[str], object]) -> dict[str, Callable[[str], object]]:
    """A text value that ``check`` accepts (``ValueError`` says what is wrong with it)."""
    return {"check": check}


_SECRET_WORDS = frozenset({"token", "key", "secret", "password", "passwd", "credentials"})


def is_secret(spec: dataclasses.Field[Any]) -> bool:
    """Whether a key's value must never appear in a message or a log line."""
    declared = spec.metadata.get("secret")
    if declared is not None:
        return bool(declared)
    return any(part in _SECRET_WORDS for part in spec.name.lower().split("_"))


_T = typing.TypeVar("_T")


def parse_section(
    cls: type[_T], table: Mapping[str, Any], *, name: str, source: str = "config"
) -> _T:
    """Check one table of the config (``[name]``) against its dataclass ``cls`` and build it."""
    return build(cls, table, prefix=f"{name}.", source=source)


def build(cls: type[_T], table: Mapping[str, Any], *, prefix: str, source: str) -> _T:
    """``cls`` made from ``table``, every key checked (``prefix`` names the table's keys)."""
    fields = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    hints = typing.get_type_hints(cls)
    values: dict[str, Any] = {}
    for key, value in table.items():
        name = f"{prefix}{key}"
        if key not in fields:
            known = ", ".join(prefix + k for k in fields)
            raise ConfigError(f"unknown key {name} (known keys: {known})", key=name, source=source)
        values[key] = convert(value, hints[key], fields[key], name, source)
    return cls(**values)


_TOML_TYPES = {
    str: "text",
    bool: "true or false",
    int: "a whole number",
    float: "a number",
    list: "a list",
    dict: "a table",
}


def convert(value: Any, hint: Any, spec: dataclasses.Field[Any], name: str, source: str) -> Any:
    """``value`` of the key ``name`` (from ``source``) as its field ``spec`` of type ``hint``
    wants it; ``ConfigError`` saying what is wrong."""
    secret = is_secret(spec)

    def wrong(expected: str) -> ConfigError:
        # A secret's value, or a whole table's (it may hold secrets), is never shown.
        if secret or dataclasses.is_dataclass(hint):
            got = _TOML_TYPES.get(type(value), f"a {type(value).__name__}")
            got += " (the value is not shown: it is secret)" if secret else ""
        else:
            got = f"{value!r} ({type(value).__name__})"
        return ConfigError(f"{name} must be {expected}, not {got}", key=name, source=source)

    if dataclasses.is_dataclass(hint):
        if not isinstance(value, dict):
            raise wrong(f"a table ([{name}])")
        return build(typing.cast(type[Any], hint), value, prefix=f"{name}.", source=source)
    if hint is bool:
        if not isinstance(value, bool):
            raise wrong("true or false")
        return value
    if hint is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise wrong("a whole number")
        between = spec.metadata.get("between")
        if between and not between[0] <= value <= between[1]:
            raise wrong(f"a whole number from {between[0]} to {between[1]}")
        return value
    if hint is float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise wrong("a number")
        if value <= 0:
            raise wrong("a positive number")
        between = spec.metadata.get("between")
        if between and not between[0] <= value <= between[1]:
            raise wrong(f"a number from {between[0]:g} to {between[1]:g}")
        return float(value)
    if hint is Path:
        if not isinstance(value, str) or not value:
            raise wrong("a path (text)")
        return Path(value).expanduser()
    if hint is str:
        if not isinstance(value, str):
            raise wrong("text")
        choices = spec.metadata.get("choices")
        if choices and value.lower() not in choices:
            raise wrong(" or ".join(f'"{c}"' for c in choices))
        check = spec.metadata.get("check")
        if check is not None:
            try:
                check(value)
            except ValueError as e:
                if secret:  # the reason may quote the value
                    problem = "is not valid (the value is not shown: it is secret)"
                    raise ConfigError(f"{name} {problem}", key=name, source=source) from None
                raise ConfigError(f"{name}: {e}", key=name, source=source) from e
        return value.lower() if choices else value
    if typing.get_origin(hint) is tuple and typing.get_args(hint) == (int, ...):
        if not isinstance(value, list) or not all(
            isinstance(item, int) and not isinstance(item, bool) for item in value
        ):
            raise wrong("a list of whole numbers (Telegram user ids)")
        return tuple(value)
    raise TypeError(f"no conversion for {name}: {hint!r}")  # a programming error, not the user's
