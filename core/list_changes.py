"""When a registry tells its listeners that its list changed: once per change a client can see.

A client answers each `notifications/{kind}/list_changed` with a re-list. A registry that told its
listeners once per item registered made a mounted upstream of nine tools cost every connected client
nine re-lists, and a reconnection that re-registered the same items cost as many again for nothing.
So an edit tells the listeners only when it changed what a list shows (the registry decides: an item
added, removed, or replaced by a different definition), and the edits inside `batch()` tell them at
most once, at its end, and only if the list then differs from the list before the batch.
"""

from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator


class ListChanges:
    """The listeners of one registry's list. `visible()` is what a client lists (compared around a batch)."""

    def __init__(self, visible: Callable[[], Any]) -> None:
        self.listeners: list[Callable[[], None]] = []
        self._visible = visible
        self._depth = 0  # nested batches: the outermost one tells
        self._before: Any = None  # the list as the outermost batch found it
        self._edited = False  # some edit inside the batch changed the list (it may have been undone since)

    @contextlib.contextmanager
    def batch(self) -> Iterator[None]:
        """Edits inside tell the listeners once, at the end, iff the list then differs from before."""
        if not self._depth:
            self._before, self._edited = self._visible(), False
        self._depth += 1
        try:
            yield
        finally:
            self._depth -= 1
            if not self._depth:
                before, self._before = self._before, None
                if self._edited and self._visible() != before:
                    self._tell()

    def changed(self) -> None:
        """An edit changed the list: tell now, or at the end of the batch in progress."""
        if self._depth:
            self._edited = True
            return
        self._tell()

    def _tell(self) -> None:
        for listener in list(self.listeners):
            listener()
