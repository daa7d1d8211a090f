"""A namespace's embeddings: where they are kept (``VectorStore``), how they are held in RAM
(``VectorIndex``), and the key of an embedded text.

Where a namespace keeps its vectors is its backend's (``VectorStore``, which loads and saves a
``VectorSet``: the file ``memory.vectors`` beside ``memory.json``, ``memory.files.vectors``;
the table ``memory_vectors``, ``memory.pg.vectors``).

``VectorIndex`` is what a namespace holds: per memory the key of its text, per key a row of a
matrix grown by doubling, and the texts still to embed. A search multiplies the whole matrix
by the query (one contiguous matrix-vector product: about 1 ms at 10,000 memories) and picks
the rows of the memories it has. The product is ``np.vecdot``, numpy's own loop, not BLAS's
``@``: OpenBLAS runs a matrix-vector product this size on all its threads, which then spin
waiting for more work and take the core that embeds the next query. Measured at 10,000
memories on 2 shared cores (``python -m bench.hybrid_bench``, back to back, load 2.4-3.2):
hybrid search median 31 / 52 / 64 ms with ``@``, 24 / 28 / 29 ms with OpenBLAS held to one
thread; ``np.vecdot`` alone 0.95 ms against ``@``'s 0.26 ms idle and 6 ms under that load.
Rows of texts no longer held (an edited memory's old text) stay until the namespace is
released; what is saved keeps only the rows of the texts held.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

KEY_BYTES = 16


@dataclass(frozen=True)
class VectorSet:
    """A namespace's stored embeddings of one model: one row per key.

    A key is a hash of the embedded text (``memory.vectors.text_key``), so a memory whose text
    has not changed keeps its vector, and a vector is never shown to a memory it is not of.
    """

    model: str
    dimensions: int
    keys: tuple[bytes, ...]
    vectors: npt.NDArray[np.float32]  # (len(keys), dimensions), unit rows


class VectorStore(Protocol):
    """Where a namespace keeps its embeddings (beside ``memory.json``, whose format stays).

    Only derived data: whatever cannot be read is rebuilt by embedding again, so ``load``
    never raises for a missing, stale (another model or size) or corrupt copy; it says None.
    """

    def load(self, model: str, dimensions: int) -> VectorSet | None:
        """The stored vectors of ``model`` at ``dimensions``, or None if there are none usable."""
        ...

    def save(self, vectors: VectorSet) -> None:
        """Replace the stored vectors (atomically: a reader sees the old set or the new)."""
        ...

    def stored(self) -> list[tuple[str, int]]:
        """The models (and sizes) whose vectors are stored, to ``load`` each (a migration)."""
        ...


def text_key(text: str) -> bytes:
    """The key of an embedded text: 16 bytes of blake2b of its UTF-8."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=KEY_BYTES).digest()


class VectorIndex:
    """A namespace's vectors in RAM (see the module docstring). Not thread-safe: the
    namespace calls it under its mutex."""

    def __init__(self, model: str, dimensions: int) -> None:
        self.model = model
        self.dimensions = dimensions
        self.loaded = False  # the file has been read (or found unusable)
        self.dirty = False  # holds vectors the file does not
        self._key_of: dict[int, bytes] = {}  # memory id -> key of its text
        self._todo: dict[bytes, str] = {}  # key -> text, not embedded yet
        self._row: dict[bytes, int] = {}
        self._matrix = np.zeros((16, dimensions), dtype=np.float32)
        self._used = 0
        self._view: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]] | None = None

    def note(self, memory_id: int, text: str) -> bool:
        """Record a memory's text; whether it still needs embedding."""
        key = text_key(text)
        if self._key_of.get(memory_id) != key:
            self._key_of[memory_id] = key
            self._view = None
        if key in self._row:
            return False
        self._todo[key] = text
        return True

    def forget(self, memory_id: int) -> None:
        if self._key_of.pop(memory_id, None) is not None:
            self._view = None

    def forget_all(self) -> None:
        """Forget every memory (a reload puts them back); the vectors stay."""
        self._key_of, self._todo, self._view = {}, {}, None

    def missing(self, count: int, skip: set[bytes]) -> list[tuple[bytes, str]]:
        """Up to ``count`` (key, text) of held memories without a vector, not in ``skip``."""
        if not self._todo:
            return []
        held = set(self._key_of.values())
        for key in [key for key in self._todo if key not in held]:
            del self._todo[key]
        found: list[tuple[bytes, str]] = []
        for key, text in self._todo.items():
            if key not in skip:
                found.append((key, text))
                if len(found) == count:
                    break
        return found

    @property
    def pending(self) -> int:
        """Texts waiting to be embedded (an upper bound)."""
        return len(self._todo)

    def fill(self, keys: list[bytes], vectors: npt.NDArray[np.float32]) -> None:
        """Take the vectors of ``keys`` (rows of ``vectors``)."""
        for key, vector in zip(keys, vectors, strict=True):
            self._todo.pop(key, None)
            if key in self._row:
                continue
            if self._used == len(self._matrix):
                grown = np.zeros((2 * len(self._matrix), self.dimensions), dtype=np.float32)
                grown[: self._used] = self._matrix[: self._used]
                self._matrix = grown
            self._matrix[self._used] = vector
            self._row[key] = self._used
            self._used += 1
            self.dirty = True
        self._view = None

    def take(self, stored: VectorSet) -> None:
        """Take the rows of a loaded file that belong to held memories."""
        held = set(self._key_of.values())
        rows = [i for i, key in enumerate(stored.keys) if key in held and key not in self._row]
        self.fill([stored.keys[i] for i in rows], stored.vectors[rows])
        self.dirty = False
        self.loaded = True

    @property
    def embedded(self) -> int:
        """Held memories that have a vector."""
        return sum(1 for key in self._key_of.values() if key in self._row)

    @property
    def total(self) -> int:
        return len(self._key_of)

    def cosines(
        self, query: npt.NDArray[np.float32]
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        """The ids (sorted) of the held memories with a vector, and their cosines with ``query``."""
        if self._view is None:
            pairs = sorted(
                (mid, self._row[key]) for mid, key in self._key_of.items() if key in self._row
            )
            ids = np.array([mid for mid, _ in pairs], dtype=np.int64)
            rows = np.array([row for _, row in pairs], dtype=np.int64)
            self._view = (ids, rows)
        ids, rows = self._view
        if not len(ids):
            return ids, np.zeros(0, dtype=np.float32)
        return ids, np.vecdot(self._matrix[: self._used], query)[rows]

    def snapshot(self) -> VectorSet:
        """The vectors of the held memories, for the file."""
        keys = sorted({key for key in self._key_of.values() if key in self._row})
        rows = [self._row[key] for key in keys]
        self.dirty = False
        return VectorSet(self.model, self.dimensions, tuple(keys), self._matrix[rows].copy())
