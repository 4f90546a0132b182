"""CANCEL predicates can fail: each test runs a realistically broken registry."""

from __future__ import annotations

import asyncio
import dataclasses

from reference import AbortController, Registry, ToolExecutionInput
from reference._types import ErrorCode
from reference.registry import Prepared, _code_failure
from tests.kit.support import rule_status as status


class OwnSignal(Registry):
    """Substitutes a signal of its own for the caller's."""

    async def prepare(self, call: ToolExecutionInput) -> Prepared:
        return await super().prepare(dataclasses.replace(call, signal=AbortController().signal))


def test_CANCEL_1_catches_a_substituted_signal() -> None:
    assert status("CANCEL-1", OwnSignal) == "fail"


class NeverRechecks(Registry):
    """Never looks at the signal between policy stages (nor on entry)."""

    def _cancelled(self, run: Prepared) -> bool:
        return False


def test_CANCEL_2_catches_policy_running_for_cancelled_calls() -> None:
    assert status("CANCEL-2", NeverRechecks) == "fail"


class AbortHidesErrors(Registry):
    """Reports ABORTED for every aborted dispatch, hiding the body's own error."""

    async def dispatch(self, run: Prepared) -> None:
        await super().dispatch(run)
        if run.body_entered and run.execution.signal.aborted:
            run.result = _code_failure(ErrorCode.ABORTED, "the call was cancelled")


def test_CANCEL_3_catches_abort_hiding_a_body_error() -> None:
    assert status("CANCEL-3", AbortHidesErrors) == "fail"


class RacesTheBody(Registry):
    """Stops waiting for the body as soon as the caller aborts."""

    async def dispatch(self, run: Prepared) -> None:
        body = asyncio.ensure_future(super().dispatch(run))
        aborted = asyncio.ensure_future(run.execution.signal.wait())
        done, _ = await asyncio.wait({body, aborted}, return_when=asyncio.FIRST_COMPLETED)
        aborted.cancel()
        if body not in done:
            run.body_entered = True
            run.outcome, run.result = "dispatched", _code_failure(ErrorCode.ABORTED, "abandoned")


def test_CANCEL_4_catches_an_abandoned_body() -> None:
    assert status("CANCEL-4", RacesTheBody) == "fail"
