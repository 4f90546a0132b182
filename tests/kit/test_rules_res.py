"""RES predicates can fail: each test runs a realistically broken registry and expects ``fail``."""

from __future__ import annotations

import dataclasses
from typing import Any

from reference import Registry, ToolExecutionInput
from reference._types import text
from reference.registry import Prepared
from tests.kit.support import rule_status as status


class PublishesTwice(Registry):
    """Every observer is registered twice over: each result is published two times."""

    def _scoped_entries(self, event: str, agent: str | None) -> list[Any]:
        entries = super()._scoped_entries(event, agent)
        return entries * 2 if event == "tools/result" else entries


def test_RES_1_catches_a_double_publication() -> None:
    assert status("RES-1", PublishesTwice) == "fail"


class ReturnsUnfinalized(Registry):
    """Observers get the finalized result, the caller the one from before finalization."""

    async def complete(self, run: Prepared) -> Any:
        finalizer = run.finalizer
        before: list[Any] = []
        if finalizer is not None:

            def capture(execution: Any, result: Any) -> Any:
                before.append(result)
                return finalizer(execution, result)

            run.finalizer = capture
        result = await super().complete(run)
        return before[0] if before else result


def test_RES_2_catches_caller_and_observers_disagreeing() -> None:
    assert status("RES-2", ReturnsUnfinalized) == "fail"


class BareFailures(Registry):
    """Early failures carry the bare message as content, without the `Error: ` envelope."""

    async def prepare(self, call: ToolExecutionInput) -> Prepared:
        run = await super().prepare(call)
        if run.result is not None and run.result.is_error:
            run.result = dataclasses.replace(run.result, content=text(run.result.message))
        return run


def test_RES_3_catches_failure_content_without_error_prefix() -> None:
    assert status("RES-3", BareFailures) == "fail"
