"""A namespace's embeddings as a file: ``memory.vectors`` beside ``memory.json``.

``FileVectors`` is the file backend of ``memory.vectors.VectorStore``, so ``memory.json``
keeps the article's format. The file is::

    CMVEC1\\n
    {"model": ..., "dimensions": ..., "count": n, "checksum": ...}\\n
    n keys of 16 bytes (blake2b of the embedded text), then n x dimensions float32 (little-endian)

The checksum (blake2b of everything after the header) tells a torn or damaged file from a good
one. It is only derived data: a missing file, one of another model or size (the model was
changed) or a damaged one loads as None, and the namespace embeds its memories again in the
background (``memory.meaning``); search uses what is embedded so far meanwhile. It is written
atomically (a reader sees the old file or the new), without fsync, like the search index.
"""

from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path

import numpy as np

from memory.files.io import write_bytes_atomic
from memory.vectors import KEY_BYTES, VectorSet

log = logging.getLogger(__name__)

VECTORS_FILE = "memory.vectors"
MAGIC = b"CMVEC1\n"


class FileVectors:
    """``memory.vectors`` in one namespace folder (see the module docstring)."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / VECTORS_FILE

    def load(self, model: str, dimensions: int) -> VectorSet | None:
        """The vectors in the file if they are whole and of ``model`` at ``dimensions``."""
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as e:
            log.warning("could not read %s (embedding again): %s", self.path, e.strerror or e)
            return None
        try:
            return self._parse(data, model, dimensions)
        except ValueError as e:
            log.warning("%s is unusable (embedding again): %s", self.path, e)
            return None

    def stored(self) -> list[tuple[str, int]]:
        """The model and size of the file's vectors (none if it has none usable)."""
        try:
            with self.path.open("rb") as file:
                head = file.read(len(MAGIC))
                line = file.readline(4096)
            header = json.loads(line)
            found = (str(header["model"]), int(header["dimensions"]))
        except FileNotFoundError:
            return []
        except (OSError, KeyError, TypeError, ValueError) as e:
            log.warning("%s is unusable: %s", self.path, e)
            return []
        return [found] if head == MAGIC and self.load(*found) is not None else []

    def save(self, vectors: VectorSet) -> None:
        """Write the file atomically (``MemorySaveFailed`` if it cannot be)."""
        keys = b"".join(vectors.keys)
        matrix = np.ascontiguousarray(vectors.vectors, dtype="<f4")
        if matrix.shape != (len(vectors.keys), vectors.dimensions):
            raise ValueError(f"vectors of shape {matrix.shape} for {len(vectors.keys)} keys")
        body = keys + matrix.tobytes()
        header = {
            "model": vectors.model,
            "dimensions": vectors.dimensions,
            "count": len(vectors.keys),
            "checksum": hashlib.blake2b(body, digest_size=16).hexdigest(),
        }
        line = json.dumps(header, ensure_ascii=False).encode("utf-8") + b"\n"
        write_bytes_atomic(self.path, MAGIC + line + body, durable=False)

    @staticmethod
    def _parse(data: bytes, model: str, dimensions: int) -> VectorSet | None:
        if not data.startswith(MAGIC):
            raise ValueError("not a vector file")
        end = data.find(b"\n", len(MAGIC))
        if end < 0:
            raise ValueError("no header")
        try:
            header = json.loads(data[len(MAGIC) : end])
            count, dims = int(header["count"]), int(header["dimensions"])
            stored_model, checksum = str(header["model"]), str(header["checksum"])
        except (KeyError, TypeError, ValueError) as e:
            raise ValueError(f"bad header: {e}") from e
        if stored_model != model or dims != dimensions:
            log.info(
                "vectors of %s/%d found, %s/%d wanted: embedding again",
                stored_model,
                dims,
                model,
                dimensions,
            )
            return None
        body = data[end + 1 :]
        if count < 0 or len(body) != count * (KEY_BYTES + 4 * dims):
            raise ValueError(f"{len(body)} bytes for {count} vectors")
        if hashlib.blake2b(body, digest_size=16).hexdigest() != checksum:
            raise ValueError("checksum mismatch")
        keys = tuple(body[i * KEY_BYTES : (i + 1) * KEY_BYTES] for i in range(count))
        matrix = np.frombuffer(body, dtype="<f4", offset=count * KEY_BYTES).reshape(count, dims)
        if not np.isfinite(matrix).all():
            raise ValueError("non-finite numbers")
        return VectorSet(model, dims, keys, matrix.astype(np.float32))
