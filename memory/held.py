"""What a namespace holds in the process: its memories, and the indexes kept over them.

Every backend answers a namespace's reads from memories held in RAM (``memory.namespace``)
and keeps them in step with what is stored (``memory.backend``): catching up brings what
other processes changed, a commit this one's changes. This is that state, one copy for every
backend: the memories in stored order, the memory each ``source`` came from, the memories of
each content (``memory.text.content_key``, for ``add_unique``), the rankers
(``memory.ranking``, ``memory.bm25``) and the vectors (``memory.meaning``), each told of every
memory put and dropped. Not thread-safe: the namespace holds its mutex around every use.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from memory.bm25 import Bm25Ranker
from memory.errors import MemoryNotFound
from memory.indexfile import IndexCache
from memory.meaning import Meaning
from memory.model import Added, Memory
from memory.ranking import Ranker, SeedRanker
from memory.text import content_key


class ContentKeys:
    """Which memories have which content key: the one memory of most keys, and the several
    of a key some memories share (a hand edit, an import that keeps duplicates, two photos
    with one caption), so that the common case costs one dict entry."""

    def __init__(self) -> None:
        self._one: dict[str, int] = {}
        self._several: dict[str, set[int]] = {}

    def add(self, key: str, memory_id: int) -> None:
        if not key:
            return
        several = self._several.get(key)
        if several is not None:
            several.add(memory_id)
            return
        first = self._one.setdefault(key, memory_id)
        if first != memory_id:
            self._several[key] = {self._one.pop(key), memory_id}

    def remove(self, key: str, memory_id: int) -> None:
        several = self._several.get(key)
        if several is not None:
            several.discard(memory_id)
            if len(several) == 1:
                self._one[key] = several.pop()
                del self._several[key]
        elif self._one.get(key) == memory_id:
            del self._one[key]

    def ids(self, key: str) -> list[int]:
        """The ids of the memories with content ``key``, in increasing order."""
        several = self._several.get(key)
        if several is not None:
            return sorted(several)
        return [self._one[key]] if key in self._one else []

    def keys(self) -> set[str]:
        """Every content key held."""
        return {*self._one, *self._several}


def same_file(stored: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> bool:
    """Whether two attachments are the same file (or both absent): Telegram's
    ``file_unique_id`` when both have one, else the whole reference."""
    if stored is None or new is None:
        return stored is new
    key = "file_unique_id"
    if key in stored and key in new:
        return bool(stored[key] == new[key])
    return dict(stored) == dict(new)


class Held:
    """One namespace's memories in RAM, with the indexes over them (see the module docstring).

    ``index`` is where the keyword ranking keeps its analysis between runs (the file
    backend's ``memory.index``), ``meaning`` the namespace's vectors (None: no embedder).
    """

    def __init__(self, index: IndexCache | None, meaning: Meaning | None) -> None:
        self.memories: dict[int, Memory] = {}
        self.sources: dict[str, int] = {}  # source -> id of the memory that came from it
        self.meaning = meaning
        self._index = index
        # Built when first asked (None: not yet), so that opening a namespace does not fold
        # the content of every memory.
        self._keys: ContentKeys | None = None
        self.rankers = self._new_rankers()

    def __len__(self) -> int:
        return len(self.memories)

    def find(self, memory_id: int) -> Memory:
        """The memory with this id (``MemoryNotFound`` if none is held)."""
        try:
            return self.memories[memory_id]
        except KeyError:
            raise MemoryNotFound(memory_id) from None

    def repeated(
        self, content: str, source: str | None, attachment: Mapping[str, Any] | None
    ) -> Added | None:
        """What an add of ``content`` (from ``source``, made from ``attachment``) would repeat:
        the memory that came from ``source`` (the same message, delivered again), else the
        oldest with the same content key and the same file (``same_file``), as a
        ``duplicate``; None if it is new."""
        if source is not None and source in self.sources:
            return Added(self.memories[self.sources[source]])
        key = content_key(content)
        for same in self.content_keys().ids(key) if key else ():
            if same_file(self.memories[same].attachment, attachment):
                return Added(self.memories[same], duplicate=True)
        return None

    def content_keys(self) -> ContentKeys:
        """Content key -> the memories with it."""
        if self._keys is None:
            self._keys = ContentKeys()
            for memory in self.memories.values():
                self._keys.add(content_key(memory.content), memory.id)
        return self._keys

    def put(self, memory: Memory) -> None:
        """Hold ``memory`` (new, or a new version of one held)."""
        old = self.memories.get(memory.id)
        if old is not None:
            source = old.source
            if (
                source is not None
                and source != memory.source
                and self.sources.get(source) == old.id
            ):
                del self.sources[source]  # the new version came from elsewhere
            if self._keys is not None:
                self._keys.remove(content_key(old.content), old.id)
        self.memories[memory.id] = memory
        if self._keys is not None:
            self._keys.add(content_key(memory.content), memory.id)
        if memory.source is not None:
            self.sources[memory.source] = memory.id
        for ranker in self.rankers.values():
            ranker.index(memory)
        if self.meaning is not None:
            self.meaning.note(memory.id, memory.content)

    def drop(self, memory_id: int) -> None:
        """Forget the memory with this id (nothing if none is held)."""
        memory = self.memories.pop(memory_id, None)
        if memory is not None:
            if memory.source is not None:
                self.sources.pop(memory.source, None)
            if self._keys is not None:
                self._keys.remove(content_key(memory.content), memory.id)
        for ranker in self.rankers.values():
            ranker.unindex(memory_id)
        if self.meaning is not None:
            self.meaning.forget(memory_id)

    def count(self, memories: Iterable[Memory]) -> None:
        """Take the access bookkeeping of ``memories`` (a touch: counts and times only, so
        nothing is indexed again); those no longer held are skipped."""
        for memory in memories:
            if memory.id in self.memories:
                self.memories[memory.id] = memory

    def clear(self) -> None:
        """Forget every memory, to hold them afresh (a reload, a merge)."""
        self._forget()
        if self.meaning is not None:
            self.meaning.forget_all()

    def release(self) -> None:
        """Forget every memory and let the vectors go (saved first); the next use loads."""
        self._forget()
        if self.meaning is not None:
            self.meaning.release()

    def persist_index(self) -> None:
        """Keep the keyword ranking's analysis in its cache (only a cache; own lock)."""
        ranker = self.rankers["default"]
        if isinstance(ranker, Bm25Ranker):
            ranker.persist()

    def _forget(self) -> None:
        self.memories, self.sources, self._keys = {}, {}, None
        self.rankers = self._new_rankers()

    def _new_rankers(self) -> dict[str, Ranker]:
        return {"default": Bm25Ranker(self._index), "seed": SeedRanker()}
