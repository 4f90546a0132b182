"""The session policy every out-of-process transport shares (stdio, HTTP).

A transport knows how to open a session, shake hands, exchange one ``run``
and drop a session; this class decides everything else, the same way for all
of them (docs/protocol.md, "Deadlines and containment"):

* ``seq`` counts 1, 2, 3... per session and restarts at 1 with a new one;
* a failure of category ``errored`` keeps the session (the answer was in
  order); any other failure drops it, and the next scenario opens a new one;
* every new session replays the handshake, which must describe the same
  implementation as the first;
* the adapter gives up -- every later scenario fails at once with the
  reason, and the run goes on -- after ``max_restarts`` new sessions, after
  ``max_consecutive`` timeouts in a row or ``max_timeouts`` in all (each
  costs a whole deadline), or when a handshake after a failure fails or
  changes the implementation;
* each ``run`` answer is awaited for ``deadline_s`` plus what the scenario
  itself may legitimately wait for (:func:`scenario_allowance`), so a stuck
  harness is found in seconds while a scenario full of scripted waits still
  has the time it needs;
* every bound on what is read from the implementation is one
  :class:`Limits` (docs/protocol.md, "Limits").
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, TypedDict

from conformance.scenario.bounds import DEFAULT_MAX_BYTES, DEFAULT_MAX_DEPTH
from conformance.seam.adapter import (
    AdapterError,
    AdapterInfo,
    ImplementationFailure,
    ScenarioSkipped,
)

__all__ = [
    "DEFAULT_DEADLINE_S",
    "DEFAULT_START_DEADLINE_S",
    "WAITING_STEPS",
    "Limits",
    "SessionAdapter",
    "SessionOptions",
    "scenario_allowance",
]

DEFAULT_DEADLINE_S: Final = 5.0
DEFAULT_START_DEADLINE_S: Final = 30.0
DEFAULT_MAX_RESTARTS: Final = 50
DEFAULT_MAX_CONSECUTIVE: Final = 2
DEFAULT_MAX_TIMEOUTS: Final = 5
# What a harness may wait per waiting step (``waitForAbort``, ``barrier``: the
# interpreter's ``wait_s``), and the most the scenario may add to the deadline.
WAIT_STEP_S: Final = 1.0
MAX_ALLOWANCE_S: Final = 10.0
WAITING_STEPS: Final = frozenset({"waitForAbort", "barrier"})


@dataclass(frozen=True)
class Limits:
    """Every bound on what the kit reads from an implementation (docs/protocol.md, "Limits").

    ``max_message_bytes``: one stdout line or one HTTP response body (bytes);
    ``max_depth``: containers nested in a decoded message; ``stderr_tail_bytes``:
    the harness's stderr kept (the last bytes, newline or not);
    ``kill_grace_s``: between SIGTERM and SIGKILL to a harness's process group.
    """

    max_message_bytes: int = DEFAULT_MAX_BYTES
    max_depth: int = DEFAULT_MAX_DEPTH
    stderr_tail_bytes: int = 64 * 1024
    kill_grace_s: float = 0.5

    def __post_init__(self) -> None:
        for name in ("max_message_bytes", "max_depth", "stderr_tail_bytes"):
            value = getattr(self, name)
            if type(value) is not int or value <= 0:
                raise AdapterError(f"{name} must be a positive integer, got {value!r}")
        check_seconds("kill_grace_s", self.kill_grace_s, allow_zero=True)


class SessionOptions(TypedDict, total=False):
    """The policy's options, the same keywords for every transport (defaults: SessionAdapter)."""

    deadline_s: float
    start_deadline_s: float
    max_restarts: int
    max_consecutive: int
    max_timeouts: int
    validate_protocol: bool
    limits: Limits | None


def check_seconds(name: str, value: float, *, allow_zero: bool = False) -> None:
    """The one check of a duration option (the CLI's ``--deadline`` too): finite, positive."""
    ok = isinstance(value, int | float) and math.isfinite(value)
    if not ok or value < 0 or (value == 0 and not allow_zero):
        wanted = "a non-negative" if allow_zero else "a positive"
        raise AdapterError(f"{name} must be {wanted} number of seconds, got {value!r}")


def scenario_allowance(scenario: Mapping[str, Any]) -> float:
    """Seconds a correct harness may spend waiting inside ``scenario``, beyond the deadline.

    Each waiting step (``waitForAbort``, ``barrier``) may wait ``WAIT_STEP_S``
    once per call the actions make; the total is capped at ``MAX_ALLOWANCE_S``.
    Counted iteratively (a hostile scenario cannot make this recurse).
    """
    waits = 0
    stack: list[Any] = [scenario]
    while stack:
        item = stack.pop()
        if isinstance(item, Mapping):
            waits += sum(1 for key in item if key in WAITING_STEPS)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    if not waits:
        return 0.0
    calls = 0
    for action in scenario.get("actions") or []:
        batch = action.get("batch") if isinstance(action, Mapping) else None
        calls += len(batch) if isinstance(batch, list) else 1
    return min(MAX_ALLOWANCE_S, WAIT_STEP_S * waits * max(1, calls))


class SessionAdapter:
    """Base of the stdio and HTTP adapters: describe/run over transport hooks."""

    transport = "?"
    # How the messages name a new session: "restarts of the harness", "new handshakes...".
    restart_noun = "new sessions"

    def __init__(
        self,
        *,
        deadline_s: float = DEFAULT_DEADLINE_S,
        start_deadline_s: float = DEFAULT_START_DEADLINE_S,
        max_restarts: int = DEFAULT_MAX_RESTARTS,
        max_consecutive: int = DEFAULT_MAX_CONSECUTIVE,
        max_timeouts: int = DEFAULT_MAX_TIMEOUTS,
        validate_protocol: bool = False,
        limits: Limits | None = None,
    ) -> None:
        check_seconds("the deadline", deadline_s)
        check_seconds("the start deadline", start_deadline_s)
        for name, value in (
            ("max_restarts", max_restarts),
            ("max_consecutive", max_consecutive),
            ("max_timeouts", max_timeouts),
        ):
            least = 0 if name == "max_restarts" else 1
            if type(value) is not int or value < least:
                raise AdapterError(f"{name} must be an integer of at least {least}, got {value!r}")
        self.deadline_s = deadline_s
        self.start_deadline_s = max(start_deadline_s, deadline_s)
        self.max_restarts = max_restarts
        self.max_consecutive = max_consecutive
        self.max_timeouts = max_timeouts
        self.validate_protocol = validate_protocol
        self.limits = limits or Limits()
        self.failures: dict[str, int] = {}
        self._info: AdapterInfo | None = None
        self._open = False
        self._seq = 0
        self._starts = 0
        self._consecutive = 0
        self._gave_up: str | None = None

    # ------------------------------------------------------- transport hooks

    def _handshake(self) -> AdapterInfo:
        """Open a session and return the implementation's ``started`` description."""
        raise NotImplementedError

    def _exchange(self, seq: int, scenario: Mapping[str, Any]) -> dict[str, Any]:
        """One ``run`` in the open session: its trace, or ScenarioSkipped/ImplementationFailure."""
        raise NotImplementedError

    def _drop(self) -> None:
        """Forget the open session (kill the process, stop using the connection)."""

    def _start_failed(self, failure: ImplementationFailure) -> AdapterError:
        """The error for a first handshake that failed (the run cannot start)."""
        return AdapterError(f"the implementation did not start: {failure}")

    def deadline_for(self, scenario: Mapping[str, Any]) -> float:
        """The deadline of one ``run``: ``deadline_s`` plus the scenario's own waiting."""
        return self.deadline_s + scenario_allowance(scenario)

    # ------------------------------------------------------------- the seam

    def describe(self) -> AdapterInfo:
        if self._info is None:
            try:
                self._ensure_session()
            except ImplementationFailure as e:
                raise self._start_failed(e) from e
        assert self._info is not None
        return self._info

    def run(self, scenario: Mapping[str, Any]) -> dict[str, Any]:
        if self._gave_up:
            raise ImplementationFailure("crash", f"not run: {self._gave_up}")
        try:
            self._ensure_session()
            self._seq += 1
            trace = self._exchange(self._seq, scenario)
        except ImplementationFailure as e:
            self._failed(e)
            raise
        except ScenarioSkipped:  # an in-order answer: the session stays
            self._consecutive = 0
            raise
        except BaseException:
            self._close_session()
            raise
        self._consecutive = 0
        return trace

    def diagnostics(self) -> dict[str, Any]:
        """Transport facts for the report (subclasses add their own)."""
        return {
            "transport": self.transport,
            "starts": self._starts,
            "failures": dict(sorted(self.failures.items())),
            "gaveUp": self._gave_up,
        }

    # ------------------------------------------------------------- internals

    def _close_session(self) -> None:
        self._open = False
        self._drop()

    def _ensure_session(self) -> None:
        if self._open:
            return
        if self._starts > self.max_restarts:
            self._gave_up = f"gave up after {self.max_restarts} {self.restart_noun}"
            raise ImplementationFailure("crash", self._gave_up)
        self._starts += 1
        self._seq = 0
        try:
            info = self._handshake()
        except ImplementationFailure as e:
            self._close_session()
            if self._info is not None:  # a handshake after a failure fails: stop trying
                self._gave_up = f"a new handshake failed: {e.message}"
            raise
        if self._info is not None and info != self._info:
            self._close_session()
            self._gave_up = "a new handshake described a different implementation"
            raise ImplementationFailure(
                "protocol",
                f"handshake changed after a failure: {info.to_json()} != {self._info.to_json()}",
            )
        self._info = info
        self._open = True

    def _failed(self, failure: ImplementationFailure) -> None:
        self.failures[failure.category] = self.failures.get(failure.category, 0) + 1
        if failure.category == "errored":  # answered in order: keep the session
            self._consecutive = 0
            return
        self._close_session()  # out of sync: the next scenario opens a new session
        self._consecutive = self._consecutive + 1 if failure.category == "timeout" else 0
        if self._gave_up:
            return
        if self._consecutive >= self.max_consecutive:
            self._gave_up = (
                f"gave up after {self._consecutive} timeouts in a row (last: {failure.message})"
            )
        elif self.failures.get("timeout", 0) >= self.max_timeouts:
            self._gave_up = (
                f"gave up after {self.failures['timeout']} timeouts (last: {failure.message})"
            )
