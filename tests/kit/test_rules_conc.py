"""CONC predicates can fail: each test runs a broken registry or batch driver."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Any

from conformance.adapters.reference import ReferenceAdapter
from conformance.rules import RULES
from conformance.runner import run_suite
from reference import Registry, ToolExecutionInput
from reference._json import NotLosslessJSON, materialize, thaw

GROUP = "CONC"


def adapter(cls: type[Registry] = Registry, **kwargs: Any) -> ReferenceAdapter:
    return ReferenceAdapter(
        lambda s: cls(mode=s.get("registry", {}).get("mode", "native")), name="bad", **kwargs
    )


def status(rule_id: str, cls: type[Registry] = Registry, **kwargs: Any) -> str:
    logging.disable(logging.CRITICAL)
    try:
        result = run_suite(adapter(cls, **kwargs), profile="quick", rules=rule_id)
    finally:
        logging.disable(logging.NOTSET)
    (outcome,) = result.rules
    return outcome.status


def test_reference_passes_every_conc_rule() -> None:
    ids = [rid for rid in RULES if rid.startswith(GROUP + "-")]
    result = run_suite(adapter(), profile="quick", rules=f"{GROUP}-*")
    assert not result.kit_errors
    statuses = {o.id: o.status for o in result.rules}
    assert statuses == {rid: "untested" if RULES[rid].check is None else "pass" for rid in ids}


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
