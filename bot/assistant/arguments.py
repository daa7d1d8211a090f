"""The arguments of a model's tool call, checked against the tool's JSON schema.

A model sends a call's arguments as JSON text, and not always as asked: ids as digit strings,
tags as one string of commas, the article's ``updateMemory(id, updates)`` with the changes in
an object. ``parse_arguments`` takes what can be read as meant, and refuses the rest with a
``MemoryInvalid`` that names the argument, which goes back to the model as the call's error
(``bot.assistant.executor``) so that it can call again.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from bot.assistant.tools import Tool
from memory import parse_json
from memory.errors import MemoryInvalid


def _check(name: str, spec: Mapping[str, Any], value: object) -> Any:
    """``value`` if it fits the parameter's schema (ids may come as digit strings)."""
    kind = spec["type"]
    if kind == "string" and isinstance(value, str):
        return value
    if kind == "integer":
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().isdigit():
            return int(value.strip())
    if kind == "array" and isinstance(value, list) and all(isinstance(v, str) for v in value):
        return value
    if kind == "array" and isinstance(value, str):
        return value  # "a, b, c": the store splits a string of tags on commas
    if kind == "boolean" and isinstance(value, bool):
        return value
    expected = {"array": "a list of strings"}.get(kind, f"a {kind}")
    raise MemoryInvalid(f"{name} must be {expected}, not {json.dumps(value)}", field=name)


def parse_arguments(tool: Tool, raw: str | None) -> dict[str, Any]:
    """The call's arguments, checked against the tool's schema; ``MemoryInvalid`` if not."""
    try:
        args = parse_json(raw) if raw and raw.strip() else {}
    except ValueError as e:  # bad syntax, odd bytes, brackets nested too deeply
        raise MemoryInvalid(f"the arguments are not valid JSON ({e})", field="arguments") from e
    if not isinstance(args, dict):
        raise MemoryInvalid("the arguments must be a JSON object", field="arguments")
    properties: dict[str, Any] = tool.parameters["properties"]
    # Article fidelity: updateMemory(id, updates) with the changes in an object.
    if tool.name == "updateMemory" and isinstance(args.get("updates"), dict):
        args = {**args.pop("updates"), **args}
    unknown = sorted(set(args) - set(properties))
    if unknown:
        known = ", ".join(properties) or "none"
        raise MemoryInvalid(f"unknown argument {unknown[0]!r} (known: {known})", field=unknown[0])
    for key in tool.parameters["required"]:
        if args.get(key) is None:
            raise MemoryInvalid(f"missing required argument {key!r}", field=key)
    return {k: _check(k, properties[k], v) for k, v in args.items() if v is not None}
