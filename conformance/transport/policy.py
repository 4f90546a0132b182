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
  ``max_consecutive`` timeouts in a row (each costs a whole deadline), or
  when a handshake after a failure fails or changes the implementation.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from conformance.core.adapter import (
    AdapterError,
    AdapterInfo,
    ImplementationFailure,
    ScenarioSkipped,
)

__all__ = ["SessionAdapter"]


class SessionAdapter:
    """Base of the stdio and HTTP adapters: describe/run over transport hooks."""

    transport = "?"
    # How the messages name a new session: "restarts of the harness", "new handshakes...".
    restart_noun = "new sessions"

    def __init__(
        self,
        *,
        deadline_s: float,
        start_deadline_s: float,
        max_restarts: int,
        max_consecutive: int,
        validate_protocol: bool,
    ) -> None:
        self.deadline_s = deadline_s
        self.start_deadline_s = max(start_deadline_s, deadline_s)
        self.max_restarts = max_restarts
        self.max_consecutive = max_consecutive
        self.validate_protocol = validate_protocol
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
        if self._consecutive >= self.max_consecutive and not self._gave_up:
            self._gave_up = (
                f"gave up after {self._consecutive} timeouts in a row (last: {failure.message})"
            )
