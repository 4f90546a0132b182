"""CONC predicates can fail: each test runs a broken registry or batch driver."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from reference import Registry, ToolExecutionInput
from reference._json import NotLosslessJSON, materialize, thaw
from tests.kit.support import rule_status as status


class TruthyClassifier(Registry):
    """Treats any truthy isConcurrencySafe answer as a proof of safety."""

    def execution_mode(self, call: ToolExecutionInput) -> Any:
        tool = self._resolve(call.name, call.agent, call.parent)
        if tool is None or tool.is_concurrency_safe is None:
            return "exclusive"
        try:
            args = materialize(call.arguments)
        except NotLosslessJSON:
            return "exclusive"
        if next(tool.params_validator.iter_errors(thaw(args)), None) is not None:
            return "exclusive"
        try:
            return "parallel" if tool.is_concurrency_safe(args) else "exclusive"
        except Exception:
            return "exclusive"


def test_CONC_1_catches_a_truthy_classifier() -> None:
    assert status("CONC-1", TruthyClassifier) == "fail"


async def all_at_once(
    registry: Registry, calls: Sequence[ToolExecutionInput], *, max_parallel: int = 4
) -> list[Any]:
    """A driver that ignores classification: every call of the batch runs at once."""
    return list(await asyncio.gather(*(registry.execute(call) for call in calls)))


def test_CONC_2_catches_exclusive_calls_run_concurrently() -> None:
    assert status("CONC-2", batch=all_at_once) == "fail"
