"""One view of what is stored for one piece of work (the bot's: one handled update).

A namespace on a store other processes write (``memory.pg``) catches up with them before every
read, and on PostgreSQL that is a round trip, even when nothing changed. A handled
``/remember`` reads its namespace three times before it writes (the gatekeeper's count, the
near-duplicate check, the search for what it updates): three round trips for one answer
(issue 28). Inside ``one_view()`` a namespace catches up at its first read only; its later
reads answer from what it holds: what was stored at that first read, plus this process's own
writes. What another process commits during the view is seen by the next view, or by this
one's next write: a write is stored only if the namespace is still at the version what it
decided from was (``memory.pg.change``), and is otherwise decided again on what is stored, so
nothing is ever written from a stale state (``add_unique``'s duplicate check and a new id
included); a write that writes nothing is a read, and answers from the view. It is the
isolation of a transaction's snapshot, for a piece of work that lasts milliseconds, without a
transaction held open across it.

The first read need not ask either. The work may start knowing the versions of the namespaces
it reads (``one_view(versions)``, ``View.started_at``: the bot's update queue reads its
update's namespace's version in the statement that starts the update, ``memory.pg.updates``):
a namespace that holds exactly that version holds what was stored when the work started, which
is the view's snapshot, and reads with no round trip at all; one that holds another catches up
at its first read, as without it, even one holding a later version (the database may have been
restored from a backup, its versions gone back: only a catch-up notices).

The view goes with the context (``contextvars``): into the tasks and the worker threads the
work hands its calls to (``bot.core.workers`` copies the context). A task that outlives the
block finds the view closed, and catches up at every read as before; so does work outside any
view (jobs, the CLI, the library). A backend whose catch-up costs nothing (``memory.files``:
a file's size and time) has no use for it.
"""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import Iterator, Mapping
from contextvars import ContextVar


class View:
    """What caught up inside one view, and the versions its work started at (see the module
    docstring); thread-safe."""

    def __init__(self, versions: Mapping[str, int] | None = None) -> None:
        self.open = True
        self._caught_up: weakref.WeakSet[object] = weakref.WeakSet()
        self._versions = dict(versions or {})

    def started_at(self, namespace: str) -> int | None:
        """The version ``namespace`` had when the view's work started (None: not known)."""
        return self._versions.get(namespace)

    def caught_up(self, holder: object) -> bool:
        """Whether ``holder`` (a backend) caught up inside this view, still open."""
        return self.open and holder in self._caught_up

    def note(self, holder: object) -> None:
        """``holder`` caught up (a read, a write, a touch): its reads need not again."""
        if self.open:
            self._caught_up.add(holder)

    def forget(self, holder: object) -> None:
        """``holder`` let what it held go: its next read catches up."""
        self._caught_up.discard(holder)


_VIEW: ContextVar[View | None] = ContextVar("memory_view", default=None)


@contextlib.contextmanager
def one_view(versions: Mapping[str, int] | None = None) -> Iterator[View]:
    """One view of what is stored for the block's work (the module docstring); ``versions``:
    the namespaces' versions when the work started, as the statement that started it read
    them (a namespace never written: 0)."""
    view = View(versions)
    token = _VIEW.set(view)
    try:
        yield view
    finally:
        view.open = False
        _VIEW.reset(token)


def current_view() -> View | None:
    """The view the calling context works in, if one is open."""
    view = _VIEW.get()
    return view if view is not None and view.open else None
