"""Mutants of ② the monotonic guards (GUARD-1..3).

Read beside ``conformance/judging/rules/guard.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from conformance.adapters.reference.mutants._base import mutant
from reference import ExecutionToken, Registry, ToolExecution


@mutant("GUARD-1", "each guard overrides the previous verdict: a later quiet guard undoes a denial")
class LastGuardWins(Registry):
    """Guards folded like settings: the last one to speak wins, so a denial is not final."""

    def _guards_for(self, execution: ToolExecution) -> tuple[str, str] | None:
        verdict: tuple[str, str] | None = None
        for entry in self._guards:
            if entry.scope is not None and entry.scope != execution.agent:
                continue
            reason = entry.fn(execution)
            verdict = ("denied", reason) if isinstance(reason, str) and reason else None  # the bug
        return verdict


@mutant("GUARD-1", "a pre-execute listener's explicit allow waives the guards' objection")
class ExplicitAllowOverridesGuards(Registry):
    """Tempting: "An explicit allow is stronger than a default": a call some listener allowed
    outright skips the guard verdict. Guards exist precisely so that no listener can loosen them."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._allowed: set[ExecutionToken] = set()

    async def _pre_execute(self, execution: ToolExecution) -> Mapping[str, Any]:
        decision = await super()._pre_execute(execution)
        if decision["kind"] == "allow" and self._scoped_entries(
            "tools/pre-execute", execution.agent
        ):
            self._allowed.add(execution.token)
        return decision

    def _guards_for(self, execution: ToolExecution) -> tuple[str, str] | None:
        objection = super()._guards_for(execution)
        return None if execution.token in self._allowed else objection  # the bug


@mutant("GUARD-1", "guards run as the innermost pre-execute listener, before the chain settles")
class GuardsInsideTheWaterfall(Registry):
    """Guards implemented as "the last listener of the chain": every listener that called
    ``next()`` sees their denial and can still answer allow -- and they run before the
    waterfall has settled."""

    def _scoped_entries(self, event: str, agent: str | None) -> list[Callable[..., Any]]:
        entries = super()._scoped_entries(event, agent)
        if event == "tools/pre-execute":
            return [*entries, self._guards_as_listener]  # the bug
        return entries

    async def _guards_as_listener(self, execution: ToolExecution, next_: Any) -> Any:
        objection = super()._guards_for(execution)
        if objection is not None:
            return {"kind": "deny", "reason": objection[1]}
        return await next_()

    def _guards_for(self, execution: ToolExecution) -> tuple[str, str] | None:
        return None  # already consulted, inside the chain


@mutant("GUARD-2", "a guard that throws or returns a non-reason counts as no objection")
class ThrowingGuardIgnored(Registry):
    """Fail-open guards: an exception is logged and skipped, ``True``/``1`` read as "fine"."""

    def _guards_for(self, execution: ToolExecution) -> tuple[str, str] | None:
        for entry in self._guards:
            if entry.scope is not None and entry.scope != execution.agent:
                continue
            try:
                reason = entry.fn(execution)
            except Exception:
                continue  # the bug
            if isinstance(reason, str) and reason:
                return "denied", reason
        return None


@mutant("GUARD-3", "guards registered for one agent apply to every agent")
class GuardScopeIgnored(Registry):
    """The scope of ``guard()`` is stored and never consulted."""

    def _guards_for(self, execution: ToolExecution) -> tuple[str, str] | None:
        saved = self._guards
        try:
            self._guards = [type(e)(e.fn, None) for e in saved]  # the bug: scope dropped
            return super()._guards_for(execution)
        finally:
            self._guards = saved
