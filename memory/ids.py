"""Ids: millisecond timestamps, as in the article, strictly increasing per namespace.

A namespace's id clock is the highest id it has handed out or taken in; a new id is
``max(now, clock + 1)``. An id from elsewhere (an import, a hand edit of memory.json, a row
another version wrote) moves the clock only if it is at most ``ID_REACH_MS`` past now. Ours
never are: a store adding faster than one memory a millisecond runs ahead of the wall clock
by one millisecond per add in excess (a day is 86 million of them), and machines' clocks
differ by minutes, or by hours of a wrong time zone. An id beyond the reach would push every
later id past it (2**63 - 1 leaves none): an import gives such a record a fresh id
(``renumber``), and one held already (from before this rule, or a hand edit) is stepped
around by new ids (``new_id``) but never moves the clock. So new ids are strictly
increasing, above every id held or handed out within the reach; an id beyond it is just
not a bound (and the clock stays sane only while the wall clock does not go back a day).
"""

from __future__ import annotations

import time
from collections.abc import Container, Iterable, Sequence
from dataclasses import replace

from memory.errors import MemoryInvalid
from memory.model import MAX_ID, Memory

ID_REACH_MS = 86_400_000  # a day: how far past now an id may move a namespace's id clock


def clock_ms() -> int:
    """The wall clock in milliseconds since the epoch: the id of a memory added now."""
    return time.time_ns() // 1_000_000


def within_reach(memory_id: int, now: int | None = None) -> bool:
    """Whether ``memory_id`` may move an id clock at ``now`` (at most ``ID_REACH_MS`` past it)."""
    return memory_id <= (clock_ms() if now is None else now) + ID_REACH_MS


def advanced(clock: int, memory_id: int) -> int:
    """The id clock ``clock`` once ``memory_id`` is seen: ``memory_id`` if it is later and
    within reach, else ``clock`` unchanged."""
    return memory_id if memory_id > clock and within_reach(memory_id) else clock


def clock_of(ids: Iterable[int]) -> int:
    """The id clock of a namespace that has seen ``ids``: the highest within reach (0: none)."""
    reach = clock_ms() + ID_REACH_MS
    return max((i for i in ids if i <= reach), default=0)


def new_id(clock: int, now: int, held: Container[int]) -> int:
    """The id of a new memory: ``max(now, clock + 1)``, stepped past ids ``held`` already
    (ones beyond the clock's reach); ``MemoryInvalid`` should the wall clock pass ``MAX_ID``."""
    memory_id = max(now, clock + 1)
    while memory_id in held:
        memory_id += 1
    if memory_id >= MAX_ID:
        raise MemoryInvalid("no ids left in this namespace (the system clock is far off)")
    return memory_id


def renumber(
    memories: Sequence[Memory], clock: int, held: Container[int]
) -> tuple[list[Memory], dict[int, int]]:
    """``memories`` (to import into a namespace of id clock ``clock`` holding ``held``), each
    one whose id is beyond the clock's reach given a fresh id, as adds would get, in order; and
    the old id -> new id of each renumbered. The others keep theirs, and the fresh ids come
    after them, so no two collide."""
    now = clock_ms()
    for memory in memories:
        clock = advanced(clock, memory.id)
    kept: list[Memory] = []
    moved: dict[int, int] = {}
    for memory in memories:
        if within_reach(memory.id, now):
            kept.append(memory)
            continue
        clock = new_id(clock, now, held)
        moved[memory.id] = clock
        kept.append(replace(memory, id=clock))
    return kept, moved
