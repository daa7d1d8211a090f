"""Reading every memory that can still be read out of a ``memory.json`` that does not parse.

A file that does not parse is quarantined whole (``memory.json.corrupt-<time>``), because one
trailing comma from a hand edit makes ``json.loads`` refuse all of it. Most of such a file is
still fine: this module gets those memories back. It does not parse the file as one value; it
looks for JSON objects in it. At each ``{`` it tries to read one object with
``json.JSONDecoder.raw_decode``; one that is a valid memory (``Memory.from_dict``) is kept.
Anything else (not JSON, or JSON that is not a memory) is passed over, and the search goes on at
the next ``{``, so a memory is found wherever it sits: after a missing bracket, a BOM, garbage
or a half-written object, and inside a journal line (``{"op": "put", "m": {...}}``). The parts
that did not read get a second look with their commas mended as a person's edit breaks them: a
trailing comma (``"x",}``) or a doubled one is dropped, a missing one between two values is
added; so a memory with a trailing comma inside it is read too. Only those parts: what reads as
it is is never changed.

What lies between the memories read is the file's punctuation (``[``, ``,``, ``]``, white space)
or something that could not be read. Each stretch of the latter is reported with its lines, and
counted as ``unreadable``: as many pieces as object openings it holds (at least one), which is
about one per damaged memory.

Cost: an object is decoded only if a regular expression finds it whole and at most
``MAX_NESTING`` deep (a memory is 2 deep), so no decode recurses far, and ``[`` or ``{"a":``
x 100,000 costs one short look per bracket instead of a deep parse each. About 50 us a memory.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from memory.errors import MemoryInvalid
from memory.model import Memory

# strict=False: a control character typed into a string (a tab, a line break) is kept, not fatal.
_DECODER = json.JSONDecoder(strict=False)
# How deeply a memory object may nest (itself 1, its tags 2): deeper ones are not tried, so that no
# decode recurses far and a chain of brackets costs one look per bracket, not a deep parse each.
MAX_NESTING = 4


def _object_pattern(nesting: int) -> re.Pattern[str]:
    """A whole object nested at most ``nesting`` deep, with well-formed strings.

    Each alternative starts with a different character and repeats are possessive, so a match,
    or a failure, costs one pass over the characters it looks at.
    """
    atom = r'(?:[^{}\[\]"]|"(?:[^"\\]|\\.)*+")'
    inner = atom
    for _ in range(nesting - 1):
        inner = rf"(?:{atom}|\[{inner}*+\]|\{{{inner}*+\}})"
    return re.compile(rf"\{{{inner}*+\}}", re.DOTALL)


_OBJECT = _object_pattern(MAX_NESTING)
_PUNCTUATION = " \t\r\n[],\ufeff"
_OBJECT_START = re.compile(r"(?:^|[\[,])\s*\{")
# The commas of hand edits: one before a closing bracket or another comma (dropped), none between
# two values on either side of white space (added). Strings are matched first and kept as they
# are, so only commas outside strings change; in valid JSON none of these shapes occurs.
_COMMAS = re.compile(
    r'(?P<string>"(?:[^"\\\n]|\\.)*")'
    r"|,(?=\s*[,}\]])"
    r'|(?<=[0-9el"}\]])(?P<space>\s+)(?=["{\[])'
)


def _mend_commas(match: re.Match[str]) -> str:
    if match["string"] is not None:
        return match["string"]
    if match["space"] is not None:
        return "," + match["space"]
    return ""


@dataclass(frozen=True)
class Stretch:
    """A part of the file that could not be read: its first and last line (1-based)."""

    first_line: int
    last_line: int
    pieces: int  # about how many memories it held (object openings, at least one)


@dataclass(frozen=True)
class Salvage:
    """What ``salvage`` read: the memories in file order, and the parts it could not read."""

    memories: list[Memory] = field(default_factory=list)
    stretches: list[Stretch] = field(default_factory=list)

    @property
    def unreadable(self) -> int:
        """About how many memories the unreadable parts held."""
        return sum(s.pieces for s in self.stretches)


def decode(data: bytes) -> str:
    """The text of a file: UTF-8 (a BOM is dropped), or UTF-16 with its BOM.

    Bytes that are not UTF-8 become U+FFFD, so a memory with one bad byte is still read.
    """
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return data.decode("utf-16", errors="replace")
    return data.decode("utf-8-sig", errors="replace")


def salvage(data: bytes) -> Salvage:
    """Every complete memory object in ``data``, and the parts that could not be read."""
    text = decode(data)
    memories: list[Memory] = []
    stretches: list[Stretch] = []
    lines = _Lines(text)
    for start, gap, memory in _split(text):
        # A part that did not read as it is gets its commas mended, and a second look.
        mended = _COMMAS.sub(_mend_commas, gap)  # keeps every line break where it was
        base, mended_lines = lines.of(start), _Lines(mended)
        for at, piece, found in _split(mended):
            body = piece.strip(_PUNCTUATION)
            if body:
                first = base + mended_lines.of(at + piece.index(body[0])) - 1
                pieces = max(1, len(_OBJECT_START.findall(body)))
                stretches.append(Stretch(first, first + body.count("\n"), pieces))
            if found is not None:
                memories.append(found)
        if memory is not None:
            memories.append(memory)
    return Salvage(memories, stretches)


def _split(text: str) -> Iterator[tuple[int, str, Memory | None]]:
    """``text`` as (where a part starts, the part, the memory that follows it), in order.

    The last part has no memory after it. A memory inside another one (an added key holding a
    memory) is found too: the search goes on inside each memory read, not after it.
    """
    read_to = 0  # the end of the text read so far
    at = text.find("{")
    while at >= 0:
        memory, end = _memory_at(text, at)
        if memory is not None:
            yield read_to, text[read_to:at] if at > read_to else "", memory
            read_to = max(read_to, end)
        at = text.find("{", at + 1)
    yield read_to, text[read_to:], None


def _memory_at(text: str, at: int) -> tuple[Memory | None, int]:
    """The memory whose object starts at ``at``, and where it ends; None if there is none."""
    match = _OBJECT.match(text, at)
    if match is None:
        return None, at  # unbalanced, or nested deeper than a memory is
    try:
        # Only the object's own text: a decode error counts the lines before it, from the start.
        value, length = _DECODER.raw_decode(match[0])
        return Memory.from_dict(value), at + length
    except (ValueError, MemoryInvalid):  # not JSON from here, or JSON that is not a memory
        return None, at


class _Lines:
    """The line numbers of ever later positions in ``text``, counted as it goes (not again)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.position = 0
        self.line = 1

    def of(self, position: int) -> int:
        """The 1-based line of ``position`` (never before the last one asked)."""
        self.line += self.text.count("\n", self.position, position)
        self.position = position
        return self.line
