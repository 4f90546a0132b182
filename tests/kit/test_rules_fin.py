"""FIN predicates can fail: each test runs a realistically broken registry and expects ``fail``."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import pytest

import reference.registry as registry_module
from reference import Registry
from reference.registry import Prepared
from tests.kit.support import rule_status as status


class LateFinalizer(Registry):
    """Looks the finalizer up when the call completes instead of snapshotting it at the start."""

    async def complete(self, run: Prepared) -> Any:
        ex = run.execution
        tool = self._resolve(ex.name, ex.agent, ex.parent)
        run.finalizer = tool.finalize_content if tool is not None else None
        return await super().complete(run)


def test_FIN_1_catches_a_finalizer_looked_up_late() -> None:
    assert status("FIN-1", LateFinalizer) == "fail"


class FinalizesOnlyDispatched(Registry):
    """Forgets the finalizer on outcomes that bypass post-execute (denials, invalid args, ...)."""

    async def complete(self, run: Prepared) -> Any:
        if run.outcome != "dispatched":
            run.finalizer = None
        return await super().complete(run)


def test_FIN_2_catches_finalizer_skipped_on_early_failures() -> None:
    assert status("FIN-2", FinalizesOnlyDispatched) == "fail"


def test_FIN_3_catches_nothing_emptying_content(monkeypatch: pytest.MonkeyPatch) -> None:
    original: Callable[..., Any] = registry_module._finalize

    def bad_finalize(finalizer: Any, execution: Any, result: Any) -> Any:
        finalized = original(finalizer, execution, result)
        if finalized is result:  # "returned nothing": the bug empties the content
            return dataclasses.replace(result, content=())
        return finalized

    monkeypatch.setattr(registry_module, "_finalize", bad_finalize)
    assert status("FIN-3") == "fail"


class SilentAfterThrow(Registry):
    """Skips publication when the finalizer throws."""

    threw = False

    async def complete(self, run: Prepared) -> Any:
        finalizer = run.finalizer
        self.threw = False
        if finalizer is not None:

            def wrapped(execution: Any, result: Any) -> Any:
                try:
                    return finalizer(execution, result)
                except Exception:
                    self.threw = True
                    raise

            run.finalizer = wrapped
        return await super().complete(run)

    def _scoped_entries(self, event: str, agent: str | None) -> list[Any]:
        if event == "tools/result" and self.threw:
            return []
        return super()._scoped_entries(event, agent)


def test_FIN_4_catches_no_publication_after_throwing_finalizer() -> None:
    assert status("FIN-4", SilentAfterThrow) == "fail"
