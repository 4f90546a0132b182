"""GUARD-1..3: each predicate catches a realistically broken registry; the reference passes."""

from __future__ import annotations

from typing import Any

from reference import Registry
from tests.kit.support import mutant_status as _status


class _LastGuardWins(Registry):
    """Each guard overrides the previous verdict: a later "no objection" undoes a denial."""

    def _guards_for(self, execution: Any) -> tuple[str, str] | None:
        verdict: tuple[str, str] | None = None
        for entry in self._guards:
            if entry.scope is not None and entry.scope != execution.agent:
                continue
            reason = entry.fn(execution)
            verdict = ("denied", reason) if isinstance(reason, str) and reason else None
        return verdict


def test_GUARD_1_catches_non_monotonic_guards() -> None:
    assert _status(_LastGuardWins, "GUARD-1") == "fail"


class _ThrowingGuardIgnored(Registry):
    """A guard that throws (or returns a non-reason) is treated as no objection: fail-open."""

    def _guards_for(self, execution: Any) -> tuple[str, str] | None:
        for entry in self._guards:
            if entry.scope is not None and entry.scope != execution.agent:
                continue
            try:
                reason = entry.fn(execution)
            except Exception:
                continue
            if isinstance(reason, str) and reason:
                return "denied", reason
        return None


def test_GUARD_2_catches_fail_open_guards() -> None:
    assert _status(_ThrowingGuardIgnored, "GUARD-2") == "fail"


class _GuardScopeIgnored(Registry):
    """Guards registered for one agent apply to everyone."""

    def _guards_for(self, execution: Any) -> tuple[str, str] | None:
        saved = self._guards
        try:
            self._guards = [type(e)(e.fn, None) for e in saved]
            return super()._guards_for(execution)
        finally:
            self._guards = saved


def test_GUARD_3_catches_unscoped_guards() -> None:
    assert _status(_GuardScopeIgnored, "GUARD-3") == "fail"
