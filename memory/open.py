"""Opening a store: a data directory (the file backend) or a PostgreSQL URL.

The one place that knows both backends (``memory.files``, ``memory.pg``); each is imported
only when a store of its kind is opened, so that ``import memory`` stays light and PostgreSQL's
driver stays optional.
"""

from __future__ import annotations

import os
from typing import Any

from memory.errors import MemoryInvalid
from memory.interface import Store


def open_store(location: str | os.PathLike[str], **options: Any) -> Store:
    """The store at ``location``: a data directory (``"data"``), or a store URL.

    ``file:///srv/bot/data`` is a data directory too; ``postgresql://user@host/db`` (or
    ``postgres://``) is a PostgreSQL database (``memory.pg``, the ``postgres`` extra).
    ``options`` go to the backend (``embedder``, ``history_days``, ``history_max`` for both;
    ``compact_seconds``, ``idle_seconds`` for files; ``max_cached_namespaces``, ``pool_size``,
    ``timeout`` for PostgreSQL).
    """
    text = os.fspath(location)
    scheme = text.partition("://")[0].lower() if "://" in text else ""
    if scheme in ("postgresql", "postgres"):
        from memory.pg import PgStore  # needs the ``postgres`` extra; says so if it is missing

        return PgStore(text, **options)
    if scheme not in ("", "file"):
        raise MemoryInvalid(f"unknown store URL scheme {scheme!r}", field="store")
    from memory.files.store import MemoryStore  # the file backend; imported here, as it is used

    path = text[len("file://") :] if scheme == "file" else text
    if not path:
        raise MemoryInvalid("the store location is empty", field="store")
    return MemoryStore(path, **options)
