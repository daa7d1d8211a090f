"""Namespace names: ``users/42``, ``chats/-1001234/topics/7``, safe as folders and as keys.

A store keeps a namespace under its name as it is: a folder of the data directory (the file
backend), a key of its rows (PostgreSQL). So a name is checked once, the same for every
backend, before it reaches either: what could leave the data directory, or stand in for a
namespace's own files, is refused with ``NamespaceInvalid``.
"""

from __future__ import annotations

import re

from memory.errors import NamespaceInvalid

_SEGMENT = re.compile(r"[A-Za-z0-9_-]{1,64}")


def validate_namespace(name: object) -> str:
    """``name`` if it is a safe namespace name (``users/42``), else ``NamespaceInvalid``.

    Segments of ASCII letters, digits, ``_`` and ``-`` joined by ``/``: no ``..``, no absolute
    path, no NUL, nothing that leaves the data directory, and (no dots) no segment that could
    take the place of a namespace's own files such as ``memory.json``.
    """
    text = name if isinstance(name, str) else repr(name)
    if not isinstance(name, str) or not name or len(name) > 200:
        raise NamespaceInvalid(f"invalid namespace name {text!r}", namespace=text)
    if not all(_SEGMENT.fullmatch(part) for part in name.split("/")):
        raise NamespaceInvalid(
            f"invalid namespace name {name!r}: use letters, digits, '_', '-' and '/'",
            namespace=name,
        )
    return name
