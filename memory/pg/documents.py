"""Documents and record logs in PostgreSQL (``memory.documents``, ``memory.interface.RecordLog``).

A document's value is kept as the text the file store writes (``memory.jsontext.dump_json``), so
both backends hand back the same value; its version is a number from one sequence, handed
out as text, so a document deleted and made again never comes back at an old version. A
compare-and-set is one statement (``INSERT ... ON CONFLICT DO NOTHING`` for "must not exist",
``UPDATE ... WHERE version = %s`` otherwise): the database decides who wins. Every call is one
round trip (``Database.run``); a refused compare-and-set asks once more, for the version that
won, to say so.

A record log is a table of rows in the order they were appended. Appends commit without
waiting for the disk, unless ``durable``; ``sync`` is one commit that waits, which makes every
earlier commit durable too (the server's write-ahead log is flushed in order).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from memory.documents import ABSENT, Document, checked_key, encoded, validate_key
from memory.errors import DocumentConflict, MemoryInvalid
from memory.jsontext import parse_json
from memory.pg.database import Database


def _version(version: str) -> int | None:
    """A version as the number stored, or None for one this store never handed out."""
    return int(version) if version.isascii() and version.isdigit() else None


class PgDocuments:
    """The documents of one scope: a namespace's name, or ``''`` for the bot's own."""

    def __init__(self, database: Database, scope: str) -> None:
        self._db = database
        self.scope = scope

    def get(self, key: str) -> Document | None:
        """The document, or None if there is none."""
        checked_key(key)
        row = self._db.run(
            "SELECT value, version FROM documents WHERE scope = %s AND key = %s",
            (self.scope, key),
            write=False,
        ).one()
        return None if row is None else Document(key, parse_json(row[0]), str(row[1]))

    def put(
        self, key: str, value: Any, *, version: str | None = None, durable: bool = True
    ) -> Document:
        """Store ``value``; with ``version``, only if the document is still at it."""
        checked_key(key)
        text = encoded(key, value).decode("utf-8")
        if version is None:
            sql = (
                "INSERT INTO documents (scope, key, value, version)"
                " VALUES (%s, %s, %s, nextval('document_versions'))"
                " ON CONFLICT (scope, key) DO UPDATE"
                " SET value = excluded.value, version = excluded.version RETURNING version"
            )
            params: tuple[Any, ...] = (self.scope, key, text)
        elif version == ABSENT:
            sql = (
                "INSERT INTO documents (scope, key, value, version)"
                " VALUES (%s, %s, %s, nextval('document_versions'))"
                " ON CONFLICT (scope, key) DO NOTHING RETURNING version"
            )
            params = (self.scope, key, text)
        else:
            sql = (
                "UPDATE documents SET value = %s, version = nextval('document_versions')"
                " WHERE scope = %s AND key = %s AND version = %s RETURNING version"
            )
            params = (text, self.scope, key, _version(version))
        row = self._db.run(sql, params, write=True, durable=durable).one()
        if row is None:
            raise DocumentConflict(key, expected=version or "", actual=self._actual(key))
        return Document(key, json.loads(text), str(row[0]))

    def delete(self, key: str, *, version: str | None = None) -> bool:
        """Remove the document (only at ``version`` if given); whether there was one."""
        checked_key(key)
        if version is None:
            deleted = self._db.run(
                "DELETE FROM documents WHERE scope = %s AND key = %s", (self.scope, key), write=True
            )
            return bool(deleted.count)
        deleted = self._db.run(
            "DELETE FROM documents WHERE scope = %s AND key = %s AND version = %s",
            (self.scope, key, _version(version)),
            write=True,
        )
        if deleted.count:
            return True
        actual = self._actual(key)
        if actual != version:
            raise DocumentConflict(key, expected=version, actual=actual)
        return False

    def list(self, prefix: str = "") -> list[Document]:
        """Every document whose key starts with ``prefix``, sorted by key."""
        rows = self._db.run(
            "SELECT key, value, version FROM documents WHERE scope = %s"
            ' AND left(key, %s) = %s ORDER BY key COLLATE "C"',
            (self.scope, len(prefix), prefix),
            write=False,
        ).rows
        return [Document(key, parse_json(value), str(version)) for key, value, version in rows]

    def _actual(self, key: str) -> str:
        """The version the document is at now (``ABSENT``), for a refusal's message."""
        row = self._db.run(
            "SELECT version FROM documents WHERE scope = %s AND key = %s",
            (self.scope, key),
            write=False,
        ).one()
        return ABSENT if row is None else str(row[0])


class PgRecordLog:
    """The bot's record log ``name``: rows of ``record_logs``, oldest first."""

    def __init__(self, database: Database, name: str) -> None:
        self._db = database
        self.name = validate_key(name)

    def read(self) -> list[Any]:
        """Every record, oldest first."""
        rows = self._db.run(
            "SELECT record FROM record_logs WHERE name = %s ORDER BY seq", (self.name,), write=False
        ).rows
        return [parse_json(row[0]) for row in rows]

    def append(self, record: Any, *, durable: bool = False) -> None:
        """Add ``record`` at the end: committed on return, on disk too with ``durable``."""
        text = _line(record)
        self._db.run(
            "INSERT INTO record_logs (name, record) VALUES (%s, %s)",
            (self.name, text),
            write=True,
            durable=durable,
        )

    def sync(self) -> None:
        """Make every record appended so far durable: one commit that waits for the disk."""
        # A commit that writes nothing flushes nothing; this one takes a transaction id.
        self._db.run("SELECT pg_current_xact_id()", write=True)

    def rewrite(self, records: Sequence[Any]) -> None:
        """Replace the log with ``records``, in one transaction."""
        lines = [_line(record) for record in records]
        with self._db.transaction(write=True) as connection:
            connection.execute("DELETE FROM record_logs WHERE name = %s", (self.name,))
            with connection.cursor() as cursor:
                cursor.executemany(
                    "INSERT INTO record_logs (name, record) VALUES (%s, %s)",
                    [(self.name, line) for line in lines],
                )

    def close(self) -> None:
        """Nothing is held between calls: connections belong to the store's pool."""


def _line(record: Any) -> str:
    try:
        return json.dumps(record, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError, RecursionError) as e:
        raise MemoryInvalid(f"a record is not JSON: {e}", field="record") from e
