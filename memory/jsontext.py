"""JSON text as the library reads and writes it, whatever keeps the bytes.

``parse_json`` is the one way to parse bytes: whatever is wrong with them (bad UTF-8, bad
syntax, brackets nested deeper than the parser's recursion allows) is a ``ValueError``.
``dump_json`` is the layout a person reads: ``memory.json`` and the documents in files, and
the text PostgreSQL keeps of a document (``memory.pg.documents``), so that both backends
hold the same text; ``dump_records`` lays out a long array in slices.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

# The standard library's indented layout (its encoder is pure Python with an indent).
_INDENTED = json.JSONEncoder(ensure_ascii=False, indent=2)
SLICE = 64  # records ``dump_records`` lays out between two calls of its ``pause``


def dump_records(records: Iterable[Any], *, pause: Callable[[], None] | None = None) -> bytes:
    """``dump_json(list(records))``, byte for byte, with ``pause()`` between slices of records.

    ``records`` may be a generator: it is consumed slice by slice (``SLICE`` records), so its
    own work is sliced too. A background writer passes a ``pause`` that sleeps briefly: this
    is pure-Python work that holds the interpreter (the GIL), and without a pause another
    thread waits for it in turns of the interpreter's switch interval (5 ms) every time it
    lets go of the interpreter, for a system call or a numpy loop.
    """
    chunks: list[bytes] = []
    batch: list[Any] = []
    for record in records:
        batch.append(record)
        if len(batch) == SLICE:
            chunks.append(_items(batch))
            batch = []
            if pause is not None:
                pause()
    if batch:
        chunks.append(_items(batch))
    if not chunks:
        return b"[]\n"
    return b"[\n" + b",\n".join(chunks) + b"\n]\n"


def _items(batch: list[Any]) -> bytes:
    """The items of a non-empty array laid out as in any array of the same depth: its lines
    between ``[`` and ``]``, which is how they appear in the whole array too."""
    return _INDENTED.encode(batch)[2:-2].encode("utf-8")


def dump_json(value: Any) -> bytes:
    """JSON as a person would like to read it: indented, UTF-8, non-ASCII kept as is.

    Exactly ``json.dumps(value, ensure_ascii=False, indent=2)`` and a newline; an array is laid
    out by ``dump_records`` (the same bytes).
    """
    if type(value) is list:
        return dump_records(value)
    return (json.dumps(value, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


def parse_json(data: bytes | str) -> Any:
    """The JSON value in ``data``; ``ValueError`` for anything that is not readable JSON.

    ``json.loads`` raises ``RecursionError`` for deeply nested brackets (``[`` x 100,000), which
    no caller expects from bad input; here it is one more way of not being JSON.
    """
    try:
        return json.loads(data)
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None
