"""Cooperative cancellation: an AbortController / AbortSignal pair (CANCEL-1).

Semantics, stated precisely (as trio states its own):

* A signal starts un-aborted and aborts at most once; ``reason`` is fixed by the
  first ``abort``. Aborting again is a no-op.
* Abort callbacks run synchronously inside ``abort``, in registration order. A
  callback's exception is swallowed: one listener cannot stop the others.
* ``await signal.wait()`` returns once the signal has aborted (immediately if it
  already has). Nothing here ever cancels a task: a body that ignores the signal
  keeps running, and the registry waits for it (CANCEL-4).
* :meth:`AbortSignal.any` fuses signals: the fused signal aborts as soon as any
  input does, with that input's reason (EXEC-2).

Only the controller can abort; a signal is read-only to whoever receives it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

__all__ = ["AbortController", "AbortSignal"]


class AbortSignal:
    __slots__ = ("_aborted", "_callbacks", "_event", "_reason")

    def __init__(self) -> None:
        self._aborted = False
        self._reason: Any = None
        self._callbacks: list[Callable[[Any], None]] = []
        self._event: asyncio.Event | None = None

    def __copy__(self) -> AbortSignal:
        return self  # a handle on one cancellation: a copy must not fork it

    def __deepcopy__(self, memo: dict[int, Any]) -> AbortSignal:
        return self

    @property
    def aborted(self) -> bool:
        return self._aborted

    @property
    def reason(self) -> Any:
        return self._reason

    def add_callback(self, callback: Callable[[Any], None]) -> Callable[[], None]:
        """Run ``callback(reason)`` on abort (at once if already aborted). Returns a remover."""
        if self._aborted:
            _safe(callback, self._reason)
            return lambda: None
        self._callbacks.append(callback)

        def remove() -> None:
            if callback in self._callbacks:
                self._callbacks.remove(callback)

        return remove

    async def wait(self) -> None:
        """Return once the signal has aborted."""
        if self._aborted:
            return
        if self._event is None:
            self._event = asyncio.Event()
        await self._event.wait()

    def _abort(self, reason: Any) -> None:
        if self._aborted:
            return
        self._aborted = True
        self._reason = reason
        if self._event is not None:
            self._event.set()
        callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            _safe(callback, reason)

    @staticmethod
    def any(*signals: AbortSignal) -> AbortSignal:
        """A signal that aborts when any of ``signals`` does (EXEC-2)."""
        fused = AbortSignal()
        for signal in signals:
            if signal.aborted:
                fused._abort(signal.reason)
                return fused
        for signal in signals:
            signal.add_callback(fused._abort)
        return fused

    def __repr__(self) -> str:
        return f"AbortSignal(aborted={self._aborted}, reason={self._reason!r})"


class AbortController:
    __slots__ = ("signal",)

    def __init__(self) -> None:
        self.signal = AbortSignal()

    def abort(self, reason: Any = "aborted") -> None:
        self.signal._abort(reason)


def _safe(callback: Callable[[Any], None], reason: Any) -> None:
    with contextlib.suppress(Exception):  # one listener cannot stop the others
        callback(reason)
