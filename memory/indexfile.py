"""The file of the search index: the memories ``memory.termindex`` analysed, kept between runs.

The file (``memory.index`` beside ``memory.json``, in the file store) holds each memory's id,
the fingerprint of what it was analysed from (``memory.termindex.fingerprint``) and its
analysed bag, so that opening a namespace does not analyse every memory again. The file starts
with a fingerprint of the analysis itself (``analysis_fingerprint``: the source of
``memory.text``, ``memory.termindex``, ``memory.bm25`` and this module, the Python, Unicode
and stemmer versions) and ends with a CRC; a file from other code, a truncated or corrupt one,
is ignored and the index is rebuilt. It is only a cache: where it is kept is the backend's
(``IndexCache``).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import struct
import sys
import unicodedata
import zlib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from types import ModuleType
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

MAGIC = b"memory.index 1\n"
_HEADER = struct.Struct("<16sQQQQI")  # analysis fingerprint, docs, postings, vocab bytes, tf size

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]
Slots = npt.NDArray[np.integer[Any]]


class IndexCache(Protocol):
    """Where a ranker keeps its analysed memories between runs: only a cache, whose entries
    are checked against the memories when read (the file backend's ``memory.index``)."""

    def read(self) -> bytes | None:
        """What was written last, or None if there is nothing that can be read."""
        ...

    def write(self, data: bytes) -> None:
        """Keep ``data`` (atomically, not durably); ``MemorySaveFailed`` if it cannot."""
        ...


@lru_cache(maxsize=4)
def analysis_fingerprint(*analysis: ModuleType) -> bytes | None:
    """What a stored analysis must have been made by: the modules of the ``analysis`` (the
    ranker's, ``memory.bm25`` and ``memory.text``) and this one, on these versions."""
    digest = hashlib.blake2b(MAGIC, digest_size=16)
    digest.update(repr((sys.version_info[:2], unicodedata.unidata_version)).encode())
    try:
        for package in ("snowballstemmer", "PyStemmer"):
            with contextlib.suppress(importlib.metadata.PackageNotFoundError):
                digest.update(f"{package} {importlib.metadata.version(package)}".encode())
        for module in (*analysis, sys.modules[__name__]):
            digest.update(Path(str(module.__file__)).read_bytes())
    except (OSError, TypeError, importlib.metadata.PackageNotFoundError):
        return None  # code that cannot be identified is not trusted with a stored analysis
    return digest.digest()


def ranges(starts: Ints, counts: Ints) -> Ints:
    """The positions ``starts[i] .. starts[i] + counts[i]`` for every i, concatenated."""
    total = int(counts.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    ends = np.cumsum(counts)
    shift = np.repeat(starts - (ends - counts), counts)
    return shift + np.arange(total, dtype=np.int64)


@dataclass
class Stored:
    """The analysed memories of an index file: row i is ``ids[i]``, its bag a stretch of tids."""

    terms: list[str]
    ids: Ints
    prints: npt.NDArray[np.uint64]
    lengths: Floats
    starts: Ints
    counts: Ints
    tids: npt.NDArray[np.uint32]
    tfs: npt.NDArray[np.floating[Any]]

    def reordered(self, rows: Ints) -> Stored:
        """The same memories, row i being ``rows[i]`` of these."""
        take = ranges(self.starts[rows], self.counts[rows])
        counts = self.counts[rows]
        return Stored(
            self.terms,
            self.ids[rows],
            self.prints[rows],
            self.lengths[rows],
            np.cumsum(counts) - counts,
            counts,
            self.tids[take],
            self.tfs[take],
        )


@dataclass(frozen=True)
class Dumpable:
    """The live memories of a ``TermIndex`` at one moment, to be written to its file."""

    terms: list[str]
    ids: Ints
    prints: npt.NDArray[np.uint64]
    lengths: Floats
    counts: Ints
    tids: npt.NDArray[np.int32]
    tfs: Floats

    def dump(self, analysis: bytes) -> bytes | None:
        """The index file's bytes, stamped with ``analysis`` (``analysis_fingerprint``), or
        None if they cannot be made."""
        used, tids = np.unique(self.tids, return_inverse=True)
        terms = [self.terms[t] for t in used.tolist()]
        if any("\0" in term for term in terms):
            return None
        vocab = "\0".join(terms).encode("utf-8", "surrogatepass")
        narrow = self.tfs.astype(np.float32)
        tf_bytes = (narrow if np.array_equal(narrow, self.tfs) else self.tfs).tobytes()
        payload = b"".join(
            (
                vocab,
                self.ids.tobytes(),
                self.prints.tobytes(),
                self.lengths.tobytes(),
                self.counts.astype(np.uint32).tobytes(),
                tids.astype(np.uint32).tobytes(),
                tf_bytes,
            )
        )
        size = len(tf_bytes) // max(1, len(tids)) if len(tids) else 4
        header = _HEADER.pack(analysis, len(self.ids), len(tids), len(vocab), size, len(terms))
        return MAGIC + header + payload + struct.pack("<I", zlib.crc32(payload))


def load(data: bytes, analysis: bytes) -> Stored | None:
    """The analysed memories in an index file's ``data``; None if they are not usable (made
    by another ``analysis``, truncated, corrupt)."""
    start = len(MAGIC) + _HEADER.size
    if len(data) < start + 4 or not data.startswith(MAGIC):
        return None
    stamp, docs, postings, vocab_size, tf_size, term_count = _HEADER.unpack_from(data, len(MAGIC))
    expected = start + vocab_size + docs * 28 + postings * (4 + tf_size) + 4
    if stamp != analysis or tf_size not in (4, 8) or len(data) != expected:
        return None
    payload = memoryview(data)[start:-4]
    if zlib.crc32(payload) != struct.unpack_from("<I", data, len(data) - 4)[0]:
        return None
    at = vocab_size
    terms = bytes(payload[:at]).decode("utf-8", "surrogatepass").split("\0") if at else []

    def take(dtype: Any, n: int, width: int) -> Any:
        nonlocal at
        out = np.frombuffer(payload, dtype=dtype, count=n, offset=at)
        at += n * width
        return out

    ids = take(np.int64, docs, 8)
    prints = take(np.uint64, docs, 8)
    lengths = take(np.float64, docs, 8).copy()  # kept by the index: not a view of ``data``
    counts = take(np.uint32, docs, 4).astype(np.int64)
    tids = take(np.uint32, postings, 4)
    tfs = take(np.float32 if tf_size == 4 else np.float64, postings, tf_size)
    if len(terms) != term_count or int(counts.sum()) != postings:
        return None
    if postings and int(tids.max()) >= term_count:
        return None
    starts = np.cumsum(counts) - counts
    return Stored(terms, ids, prints, lengths, starts, counts, tids, tfs)
