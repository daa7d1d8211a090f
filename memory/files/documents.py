"""A namespace's documents as files: ``data/<namespace>/<key>.json``, beside ``memory.json``.

The file backend of ``memory.documents.Documents``. A document is one JSON file holding just
its value, readable by a person (``history.json``, ``usage.json``, ``digest.json`` keep the
shape they always had). A key's ``/`` becomes ``.`` in the file name (``reminders/17`` is
``reminders.17.json``): key segments hold no dots, so names never collide, and no namespace
folder (whose names hold no dots either) can be mistaken for a document or the reverse. The
key ``memory`` is refused: that file is the memories' own.

The version is a hash of the file's bytes, so a hand edit is a new version like any other
write, and nothing beside the value needs storing. A compare-and-set takes the folder's
document lock (``.docs.lock``, an ``flock`` opened for the operation, so an idle namespace
holds no file open), reads the current bytes, compares, and replaces the file atomically
(``memory.files.io.write_bytes_atomic``). Reads take no lock: a rename is atomic, so a reader
sees the old document or the new. A file that does not parse (a bad hand edit) is moved aside
(``memory.files.io.quarantine``) and the document counts as absent.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from memory.documents import ABSENT, RESERVED, Document, checked_key, encoded
from memory.errors import DocumentConflict, MemoryInvalid, MemoryLoadFailed, MemorySaveFailed
from memory.files.io import FileLock, quarantine, write_bytes_atomic
from memory.jsontext import parse_json

log = logging.getLogger(__name__)

LOCK = ".docs.lock"
SUFFIX = ".json"


def _version(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=8).hexdigest()


class FileDocuments:
    """The documents of one namespace folder; threads and processes share it by ``flock``."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    # -- the interface ----------------------------------------------------------------------

    def get(self, key: str) -> Document | None:
        """The document, or None if there is none (or it could not be parsed)."""
        path = self._path(key)
        data = self._read(path)
        return None if data is None else self._parse(key, path, data)

    def put(
        self, key: str, value: Any, *, version: str | None = None, durable: bool = True
    ) -> Document:
        """Store ``value``; with ``version``, only if the document is still at it."""
        path = self._path(key)
        data = encoded(key, value)
        with self._locked():
            if version is not None:
                self._check(key, path, version)
            write_bytes_atomic(path, data, durable=durable)
        return Document(key, json.loads(data), _version(data))

    def delete(self, key: str, *, version: str | None = None) -> bool:
        """Remove the document (only at ``version`` if given); whether there was one."""
        path = self._path(key)
        with self._locked():
            if version is not None:
                self._check(key, path, version)
            try:
                path.unlink()
            except FileNotFoundError:
                return False
            except OSError as e:
                raise MemorySaveFailed(f"could not delete {path}: {e.strerror}", path=path) from e
            return True

    def list(self, prefix: str = "") -> list[Document]:
        """Every document whose key starts with ``prefix``, sorted by key."""
        try:
            names = sorted(os.listdir(self.folder))
        except FileNotFoundError:
            return []
        except OSError as e:
            raise MemoryLoadFailed(
                f"could not list {self.folder}: {e.strerror}", path=self.folder
            ) from e
        found = []
        for name in names:
            if name.startswith(".") or not name.endswith(SUFFIX):
                continue
            key = name[: -len(SUFFIX)].replace(".", "/")
            if not key.startswith(prefix) or key in RESERVED:
                continue
            try:
                document = self.get(key)
            except MemoryInvalid:
                continue  # a file a person named, not one of ours
            if document is not None:
                found.append(document)
        return found

    # -- internals --------------------------------------------------------------------------

    def _path(self, key: str) -> Path:
        return self.folder / (checked_key(key).replace("/", ".") + SUFFIX)

    @staticmethod
    def _read(path: Path) -> bytes | None:
        try:
            return path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as e:
            raise MemoryLoadFailed(f"could not read {path}: {e.strerror or e}", path=path) from e

    @staticmethod
    def _parse(key: str, path: Path, data: bytes) -> Document | None:
        try:
            value = parse_json(data)
        except (UnicodeDecodeError, ValueError, RecursionError):
            if path.exists():  # another reader may have moved it aside already
                quarantine(path)  # bytes kept; logged there
            return None
        return Document(key, value, _version(data))

    def _check(self, key: str, path: Path, version: str) -> None:
        data = self._read(path)
        actual = ABSENT if data is None else _version(data)
        if actual != version:
            raise DocumentConflict(key, expected=version, actual=actual)

    @contextmanager
    def _locked(self) -> Iterator[None]:
        # A new open file description each time: flock then excludes other threads of this
        # process as it excludes other processes, and nothing stays open while idle.
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise MemorySaveFailed(
                f"could not create {self.folder}: {e.strerror}", path=self.folder
            ) from e
        lock = FileLock(self.folder / LOCK)
        try:
            lock.acquire()
        except OSError as e:
            raise MemorySaveFailed(
                f"could not lock {lock.path}: {e.strerror}", path=lock.path
            ) from e
        try:
            yield
        finally:
            lock.release()
            lock.close()
