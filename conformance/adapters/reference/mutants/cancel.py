"""Mutants of cooperative cancellation (CANCEL-1..4).

Read beside ``conformance/judging/rules/cancel.py``.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Mapping
from typing import Any

from conformance.adapters.reference.mutants._base import mutant
from conformance.seam.adapter import AdapterInfo
from reference import AbortController, ErrorCode, Registry, ToolExecutionInput, ToolResult
from reference.registry import Prepared, _code_failure


@mutant("CANCEL-1", "the registry substitutes a signal of its own for the caller's")
class OwnSignal(Registry):
    """Tempting: "The registry manages cancellation": every call gets a fresh internal signal, so
    the caller's abort never reaches the stages or the body."""

    async def prepare(self, call: ToolExecutionInput) -> Prepared:
        own = AbortController().signal
        return await super().prepare(dataclasses.replace(call, signal=own))  # the bug


class _LenientSignalAdapter:
    """The reference, with ``ToolExecutionInput`` no longer refusing a missing signal and a
    registry that fills one in (see :func:`_defaulted_signal`)."""

    def __init__(self) -> None:
        from conformance.adapters.reference import ReferenceAdapter

        self._inner = ReferenceAdapter(
            lambda s: DefaultsTheSignal(mode=s.get("registry", {}).get("mode", "native")),
            name="cancel.defaulted-signal",
        )

    def describe(self) -> AdapterInfo:
        return self._inner.describe()

    def run(self, scenario: Mapping[str, Any]) -> dict[str, Any]:
        checked = ToolExecutionInput.__post_init__
        ToolExecutionInput.__post_init__ = lambda self: None  # type: ignore[method-assign]
        try:
            return self._inner.run(scenario)
        finally:
            ToolExecutionInput.__post_init__ = checked  # type: ignore[method-assign]


class DefaultsTheSignal(Registry):
    """The other half of the bug: a call that came without a signal gets a fresh one."""

    async def prepare(self, call: ToolExecutionInput) -> Prepared:
        signal: Any = call.signal
        if signal is None:
            call = dataclasses.replace(call, signal=AbortController().signal)  # the bug
        return await super().prepare(call)


def _defaulted_signal() -> _LenientSignalAdapter:
    """Tempting: "Be liberal in what you accept": a caller that forgot the signal gets a
    fresh one instead of a refusal, so the call runs and nobody can ever cancel it."""
    return _LenientSignalAdapter()


mutant(
    "CANCEL-1",
    "a call without a signal gets a fresh one and runs, uncancellable",
    replaces="adapter",
    name="defaulted-signal",
)(_defaulted_signal)


@mutant("CANCEL-2", "the signal is never checked before dispatch: policy runs for cancelled calls")
class NeverChecksBeforeDispatch(Registry):
    """Cancellation left entirely to the body: a call aborted on entry still runs every
    policy stage (and asks the user for approval)."""

    def _cancelled(self, run: Prepared) -> bool:
        return False  # the bug


@mutant("CANCEL-2", "a call cancelled before its body ran is reported ABORTED")
class AbortedWhereBodyNeverRan(Registry):
    """One code for every cancellation: the model is told the body may have had side effects
    when it never ran. ``ABORTED_BEFORE_DISPATCH`` says honestly that nothing ran."""

    def _cancelled(self, run: Prepared) -> bool:
        if run.execution.signal.aborted:
            failed = _code_failure(ErrorCode.ABORTED, "the call was cancelled")  # the bug
            self._end(run, "aborted-before-dispatch", failed)
            return True
        return False


@mutant("CANCEL-2", "an aborted entry is refused before its arguments are checked")
class AbortBeatsInvalidArguments(Registry):
    """The cheapest check first: a pre-aborted call with invalid arguments reports the
    caller's abort instead of the model's own mistake (INVALID_ARGS must win)."""

    async def prepare(self, call: ToolExecutionInput) -> Prepared:
        if call.signal.aborted:
            run = await super().prepare(dataclasses.replace(call, arguments={}))  # the bug
            if run.result is not None and run.result.is_error:
                run.outcome = "aborted-before-dispatch"
                run.result = _code_failure(
                    ErrorCode.ABORTED_BEFORE_DISPATCH, "cancelled before dispatch"
                )
            return run
        return await super().prepare(call)


@mutant("CANCEL-3", "every aborted dispatch reports ABORTED, hiding the body's own error")
class AbortHidesErrors(Registry):
    """Cancellation treated as the most important news: a body error (more specific) is
    replaced by ABORTED."""

    async def dispatch(self, run: Prepared) -> None:
        await super().dispatch(run)
        if run.body_entered and run.execution.signal.aborted:
            run.result = _code_failure(ErrorCode.ABORTED, "the call was cancelled")  # the bug


@mutant("CANCEL-3", "completion runs under a fresh signal: a success stays a success after abort")
class ShieldedCompletion(Registry):
    """Post-execute and finalization are "shielded" from cancellation so that clean-up is not
    cut short -- by handing them a fresh signal. The registry then no longer sees that the
    caller aborted while the body ran, and reports a success instead of ABORTED."""

    async def complete(self, run: Prepared) -> ToolResult:
        shielded = AbortController().signal  # the bug: the caller's signal is swapped out
        run.execution = dataclasses.replace(run.execution, signal=shielded)
        return await super().complete(run)


@mutant("CANCEL-4", "execute returns as soon as the caller aborts, abandoning the body")
class RacesTheBody(Registry):
    """``asyncio.wait(FIRST_COMPLETED)`` between the body and the signal: an uncooperative
    body keeps running -- and landing side effects -- after its call was reported finished."""

    async def dispatch(self, run: Prepared) -> None:
        body = asyncio.ensure_future(super().dispatch(run))
        aborted = asyncio.ensure_future(run.execution.signal.wait())
        done, _ = await asyncio.wait({body, aborted}, return_when=asyncio.FIRST_COMPLETED)
        aborted.cancel()
        if body not in done:  # the bug: the body is abandoned
            run.body_entered = True
            run.outcome, run.result = "dispatched", _code_failure(ErrorCode.ABORTED, "abandoned")


@mutant("CANCEL-2", "a pre-aborted call is noticed but not ended: wrappers and post-execute run")
class PreAbortedNotEnded(Registry):
    """The entry check sees the aborted signal and skips the policy stages, but forgets to end
    the run there: the call goes on to the ``tools/execute`` wrappers, whose body check answers
    ``ABORTED_BEFORE_DISPATCH``, and that result is then shown to post-execute -- stages a
    cancelled call must never reach."""

    def _cancelled(self, run: Prepared) -> bool:
        return run.execution.signal.aborted  # the bug: the run is not ended here
