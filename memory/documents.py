"""A namespace's documents, whatever keeps them: their Protocol, and the rules every backend
applies.

``Documents`` is what a backend offers (``get``, ``put`` with compare-and-set on a version,
``delete``, ``list``); ``memory.interface`` hands it out per namespace
(``MemoryNamespace.documents``, ``Store.documents``) and for the store's client as a whole
(``Store.bot_documents``).

A key is a path of segments of ASCII letters, digits, ``_`` and ``-`` (``history``,
``reminders/17``), so that every backend can keep it as it is; ``memory`` is reserved (the file
store's ``memory.json``, the memories themselves). A value is JSON of at most
``MAX_DOCUMENT_BYTES`` in the text both backends keep (``memory.jsontext.dump_json``).
``update_document`` is the read-modify-write loop over a backend's compare-and-set.
"""

from __future__ import annotations

import random
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from memory.errors import DocumentConflict, MemoryInvalid
from memory.jsontext import dump_json

UPDATE_TRIES = 20  # compare-and-set rounds before ``update_document`` gives up
UPDATE_BACKOFF_SECONDS = 0.05  # the longest wait between two rounds
MAX_DOCUMENT_BYTES = 1_000_000

RESERVED = frozenset({"memory"})  # memory.json in the file store: the memories themselves
_KEY_SEGMENT = re.compile(r"[A-Za-z0-9_-]{1,64}")

ABSENT = ""  # the version of a document that does not exist (``put(..., version=ABSENT)``)


@dataclass(frozen=True, slots=True)
class Document:
    """One JSON document and the version it was read at."""

    key: str
    value: Any
    version: str


class Documents(Protocol):
    """A namespace's JSON documents, with compare-and-set on a version."""

    def get(self, key: str) -> Document | None:
        """The document, or None if there is none."""
        ...

    def put(
        self, key: str, value: Any, *, version: str | None = None, durable: bool = True
    ) -> Document:
        """Store ``value`` under ``key`` and return it with its new version.

        With ``version`` (``ABSENT`` for "must not exist yet"), only if the document is still
        at that version, else ``DocumentConflict``. Without ``durable`` a crash may bring the
        previous value back (conveniences such as chat history); never half of one.
        """
        ...

    def delete(self, key: str, *, version: str | None = None) -> bool:
        """Remove the document (only at ``version`` if given); whether there was one."""
        ...

    def list(self, prefix: str = "") -> list[Document]:
        """Every document whose key starts with ``prefix``, sorted by key."""
        ...


def validate_key(key: object) -> str:
    """``key`` if it is a valid document key (``history``, ``reminders/17``), else an error."""
    if (
        not isinstance(key, str)
        or not 0 < len(key) <= 200
        or not all(_KEY_SEGMENT.fullmatch(part) for part in key.split("/"))
    ):
        raise MemoryInvalid(
            f"invalid document key {key!r}: use letters, digits, '_', '-' and '/'", field="key"
        )
    return key


def checked_key(key: str) -> str:
    """``key`` if a document may have it: valid, and not reserved."""
    validate_key(key)
    if key in RESERVED:
        raise MemoryInvalid(f"the document key {key!r} is reserved", field="key")
    return key


def encoded(key: str, value: Any) -> bytes:
    """The text kept of the document ``key`` holding ``value`` (``MemoryInvalid`` if ``value``
    is not JSON, or is too large)."""
    try:
        data = dump_json(value)
    except (TypeError, ValueError, RecursionError) as e:
        raise MemoryInvalid(f"document {key!r} is not JSON: {e}", field="value") from e
    if len(data) > MAX_DOCUMENT_BYTES:
        raise MemoryInvalid(
            f"document {key!r} is {len(data):,} bytes; the maximum is {MAX_DOCUMENT_BYTES:,}",
            field="value",
        )
    return data


def update_document(
    documents: Documents,
    key: str,
    change: Callable[[Any], Any],
    *,
    durable: bool = True,
) -> Any:
    """Apply ``change`` (old value or None -> new value) to a document, atomically.

    A read-modify-write on compare-and-set: if another process changed the document in
    between, ``change`` runs again on the newer value. ``change`` must therefore be a pure
    function of its argument. Returning None deletes the document. Returns the new value.

    After a conflict it waits a random moment, up to twice as long each time (to
    ``UPDATE_BACKOFF_SECONDS``), so that writers in step do not collide again and again.
    """
    for attempt in range(UPDATE_TRIES):
        if attempt:
            time.sleep(random.uniform(0, min(UPDATE_BACKOFF_SECONDS, 0.001 * 2**attempt)))
        current = documents.get(key)
        old, version = (current.value, current.version) if current else (None, ABSENT)
        new = change(old)
        try:
            if new is None:
                if current is not None:
                    documents.delete(key, version=version)
            else:
                documents.put(key, new, version=version, durable=durable)
        except DocumentConflict:
            continue
        return new
    raise DocumentConflict(key, expected=version, actual="(changing too often)")
