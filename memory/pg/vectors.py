"""A namespace's embeddings in PostgreSQL: the table ``memory_vectors`` (``memory.pg.schema``).

``PgVectors`` is the PostgreSQL backend of ``memory.vectors.VectorStore``: one row per
embedded text of a model (its key, ``memory.vectors.text_key``, and the vector as
little-endian float32 bytes). Only derived data: rows that cannot be read are embedded again.
"""

from __future__ import annotations

import logging

import numpy as np

from memory.errors import MemoryStoreError
from memory.pg.database import Database
from memory.vectors import VectorSet

log = logging.getLogger(__name__)


class PgVectors:
    """A namespace's embeddings in ``memory_vectors`` (``memory.vectors.VectorStore``)."""

    def __init__(self, database: Database, name: str) -> None:
        self._db = database
        self.name = name

    def load(self, model: str, dimensions: int) -> VectorSet | None:
        """The stored vectors of ``model`` at ``dimensions`` (None if there are none, or if
        the database cannot be read: only derived data, embedded again)."""
        try:
            rows = self._db.run(
                "SELECT key, vector FROM memory_vectors WHERE namespace = %s AND model = %s"
                " AND dimensions = %s",
                (self.name, model, dimensions),
                write=False,
            ).rows
        except MemoryStoreError as e:
            log.warning("vectors of %s not read (embedding again): %s", self.name, e.message)
            return None
        good = [(bytes(k), bytes(v)) for k, v in rows if len(bytes(v)) == 4 * dimensions]
        if not good:
            return None
        matrix = np.frombuffer(b"".join(v for _, v in good), dtype="<f4")
        vectors = matrix.astype(np.float32).reshape(len(good), dimensions)
        return VectorSet(model, dimensions, tuple(k for k, _ in good), vectors)

    def stored(self) -> list[tuple[str, int]]:
        """The models (and sizes) with vectors here, sorted."""
        rows = self._db.run(
            "SELECT DISTINCT model, dimensions FROM memory_vectors WHERE namespace = %s"
            " ORDER BY model, dimensions",
            (self.name,),
            write=False,
        ).rows
        return [(str(model), int(dimensions)) for model, dimensions in rows]

    def save(self, vectors: VectorSet) -> None:
        """Replace the stored vectors of that model, in one transaction."""
        matrix = np.ascontiguousarray(vectors.vectors, dtype="<f4")
        if matrix.shape != (len(vectors.keys), vectors.dimensions):
            raise ValueError(f"vectors of shape {matrix.shape} for {len(vectors.keys)} keys")
        rows = [
            (self.name, vectors.model, vectors.dimensions, key, matrix[i].tobytes())
            for i, key in enumerate(vectors.keys)
        ]
        with self._db.transaction(write=True, durable=False) as connection:
            connection.execute(
                "DELETE FROM memory_vectors WHERE namespace = %s AND model = %s"
                " AND dimensions = %s",
                (self.name, vectors.model, vectors.dimensions),
            )
            with connection.cursor() as cursor:
                cursor.executemany(
                    "INSERT INTO memory_vectors (namespace, model, dimensions, key, vector)"
                    " VALUES (%s, %s, %s, %s, %s)",
                    rows,
                )
