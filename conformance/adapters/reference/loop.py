"""The event loops the reference adapter runs scenarios in.

Rules:

* A scenario starts on a loop with nothing on it: no task, no timer, no callback and no
  async generator of an earlier scenario can run during it.
* A scenario's leftovers are ended as ``asyncio.run`` ends them: every task left is
  cancelled and awaited, then async generators and the default executor are shut down.
* SIGINT is left alone (``asyncio.run`` swaps its handler per call; the kit has its own,
  :mod:`conformance.running.interrupt`).
* A loop with callbacks ready does not poll its selector while only its self-pipe is
  registered (nothing it could learn there is not already on the ready queue), unless it has
  a signal handler of its own (:class:`_Selector`).
* Time on a scenario loop is counted in turns, not read from the machine (:class:`Clock`):
  each turn of the loop is :data:`TURN_S` long, and a wait for a timer is as long as the
  timer says once it ran out. So whether a timer (a tool's ``timeoutMs``, a barrier's
  deadline, the per-action deadline) fires before a script's next step depends on the steps
  alone, never on how loaded the machine is: the same scenario gets the same trace on a busy
  CI runner and on a quiet laptop. A scenario that spins for more than :data:`LAG_S` of real
  time is the exception: its clock never falls further behind the machine's than that, so a
  cooperative hang still meets its deadline in bounded real time.

Theory of operation: making and closing a loop (a selector, a self-pipe, their file
descriptors) costs several times a small scenario's own scheduling. So the main thread
keeps one loop, :class:`ScenarioLoop`, and hands it to the next scenario only when the last
one left it *clean*: it returned, no task and no ready callback of it is left, and it
never used the default executor. Its timers are cancelled then (the loop knows
every handle it scheduled), so a late ``call_later`` of one scenario never fires in the
next. Anything else -- a task left behind, an executor used, a ``BaseException`` (Ctrl-C,
the overrun bound's alarm) in the middle of a step -- and the loop is ended exactly as
:func:`run_in_a_new_loop` ends its own, and the next scenario gets a fresh one. Threads
other than the main one (the HTTP server's) always get a fresh loop, closed after use, so
no thread leaves a loop's file descriptors behind.
"""

from __future__ import annotations

import asyncio
import logging
import os
import selectors
import threading
import time
from collections.abc import Callable, Coroutine
from concurrent.futures import Executor
from contextvars import Context
from typing import Any, Final, TypeVar, TypeVarTuple

T = TypeVar("T")
Ts = TypeVarTuple("Ts")


def plain_report(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """The exception handler of the scenario loops: asyncio's default handler,
    minus the repr of the task or future concerned. That repr follows what the task awaits;
    for a runaway chain of tasks (a wrapper that re-enters itself) it recurses to the
    interpreter's limit, once per pending task collected, and the process spends longer
    exiting than it spent being judged. The message and the exception are logged as before."""
    error = context.get("exception")
    logging.getLogger("asyncio").error(
        "%s", context.get("message") or "unhandled exception in the event loop",
        exc_info=error if isinstance(error, BaseException) else None,
    )  # fmt: skip


#: The length of one turn of a scenario loop on its clock: about a light turn's real length
#: on the machine the kit was measured on (a tool's ``timeoutMs: 1`` is a hundred turns).
TURN_S: Final = 1e-5
#: How far a scenario loop's clock may fall behind the machine's within one scenario.
LAG_S: Final = 1.0


class Clock:
    """A scenario loop's time: turns and timed-out waits, counted (see the module's rules).

    ``now`` advances by :data:`TURN_S` per turn and by each wait the selector made (a wait
    that ran out: exactly its timeout; one that something ended: the real time it took). Read,
    it is never more than :data:`LAG_S` behind the real time since :meth:`anchor` (a
    scenario's start) on top of where it stood then."""

    __slots__ = ("_base", "_real", "now")

    def __init__(self) -> None:
        self.now = time.monotonic()
        self.anchor()

    def anchor(self) -> None:
        """A scenario starts: its lag behind the machine's time is counted from here."""
        self._base, self._real = self.now, time.monotonic()

    def read(self) -> float:
        floor = self._base + (time.monotonic() - self._real) - LAG_S
        if floor > self.now:
            self.now = floor
        return self.now


class _Selector(selectors.DefaultSelector):
    """The loop's selector, which skips a poll (a zero timeout: callbacks are ready to run)
    while only the loop's self-pipe is registered. A callback scheduled from another thread
    is already on the ready queue, its byte on the pipe only wakes a loop that blocks, and a
    blocking select (the loop has nothing ready) still drains the pipe; only a signal handler
    of the loop's (``add_signal_handler``) is handled in the drain, so a loop with one polls
    as asyncio's does. Most scenarios never block: the polls were a measurable part of one
    (benchmarks/inprocess.md)."""

    polls = False

    def __init__(self, clock: Clock) -> None:
        super().__init__()
        self.clock = clock

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        self.clock.now += TURN_S  # a select is a turn of the loop
        if timeout == 0:
            if not self.polls and len(self.get_map()) == 1:
                return []
            return super().select(0)
        started = time.monotonic()
        events = super().select(timeout)
        # a wait that ran out lasted its timeout: the timer it waited for is due
        self.clock.now += (
            timeout if timeout is not None and not events else time.monotonic() - started
        )
        return events


class ScenarioLoop(asyncio.SelectorEventLoop):
    """A selector loop that remembers every timer it scheduled and whether the default
    executor was used, so that it can be handed clean to the next scenario."""

    def __init__(self) -> None:
        self.clock = Clock()
        self._polls = _Selector(self.clock)
        super().__init__(self._polls)
        self.set_exception_handler(plain_report)
        self.timers: list[asyncio.TimerHandle] = []
        self.used_executor = False
        self.pid = os.getpid()

    def time(self) -> float:
        return self.clock.read()

    def call_at(
        self,
        when: float,
        callback: Callable[[*Ts], object],
        *args: *Ts,
        context: Context | None = None,
    ) -> asyncio.TimerHandle:
        handle = super().call_at(when, callback, *args, context=context)
        self.timers.append(handle)
        return handle

    def add_signal_handler(self, sig: int, callback: Callable[[*Ts], object], *args: *Ts) -> None:
        self._polls.polls = True  # its handler runs when the loop drains its self-pipe
        super().add_signal_handler(sig, callback, *args)

    def run_in_executor(
        self, executor: Executor | None, func: Callable[[*Ts], T], *args: *Ts
    ) -> asyncio.Future[T]:
        if executor is None:
            self.used_executor = True
        return super().run_in_executor(executor, func, *args)

    def idle(self) -> bool:
        """No callback is waiting to run (asyncio's own ready queue; a loop without one, of
        another asyncio, never counts as idle)."""
        ready = getattr(self, "_ready", None)
        return ready is not None and len(ready) == 0

    def forget_timers(self) -> None:
        """Cancel every timer scheduled so far (one that already ran is unaffected)."""
        for handle in self.timers:
            handle.cancel()
        self.timers.clear()


_kept = threading.local()


def run_in_a_new_loop(main: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(main)`` without its SIGINT handling: a fresh event loop, closed after
    every task left is cancelled and async generators and the default executor are shut
    down, as ``asyncio.run`` does."""
    return _run(ScenarioLoop(), main, keep=False)


def run_in_a_clean_loop(main: Coroutine[Any, Any, T]) -> T:
    """Like :func:`run_in_a_new_loop`, on the main thread's kept loop when the scenario
    before left it clean (see the module's rules)."""
    if threading.current_thread() is not threading.main_thread():
        return run_in_a_new_loop(main)
    loop: ScenarioLoop | None = getattr(_kept, "loop", None)
    _kept.loop = None  # held by this run; put back only if it ends clean
    if loop is None or loop.is_closed() or loop.pid != os.getpid():
        loop = ScenarioLoop()
    return _run(loop, main, keep=True)


async def _then_asyncgens(main: Coroutine[Any, Any, T]) -> tuple[T, bool]:
    """``main``'s value, and whether it ended with no other task left (then its async
    generators are shut down here, as ``asyncio.run`` would once no task is left)."""
    value = await main
    alone = asyncio.all_tasks() <= {asyncio.current_task()}
    if alone:
        await asyncio.get_running_loop().shutdown_asyncgens()
    return value, alone


def _run(loop: ScenarioLoop, main: Coroutine[Any, Any, T], *, keep: bool) -> T:
    clean = False
    loop.clock.anchor()
    try:
        asyncio.set_event_loop(loop)
        value, clean = loop.run_until_complete(_then_asyncgens(main))
        return value
    finally:
        try:
            if not (keep and clean and not loop.used_executor and loop.idle()):
                _end(loop)
            else:
                loop.forget_timers()
                _kept.loop = loop
        finally:
            asyncio.set_event_loop(None)


def _end(loop: ScenarioLoop) -> None:
    """End ``loop`` as ``asyncio.run`` ends its own, and close it."""
    try:
        left = asyncio.all_tasks(loop)
        for task in left:
            task.cancel()
        if left:
            loop.run_until_complete(asyncio.gather(*left, return_exceptions=True))
            for task in left:
                if not task.cancelled() and task.exception() is not None:
                    loop.call_exception_handler(
                        {
                            "message": "unhandled exception during a scenario loop's shutdown",
                            "exception": task.exception(),
                            "task": task,
                        }
                    )
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.run_until_complete(loop.shutdown_default_executor())
    finally:
        loop.close()
