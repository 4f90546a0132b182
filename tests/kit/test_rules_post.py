"""POST-1..5: each predicate catches a realistically broken registry; the reference passes."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from reference import Registry, ToolResult, ToolSuccess, text
from reference.registry import Prepared
from tests.kit.support import mutant_outcome as outcome


class OnlySuccessesReachPost(Registry):
    """Treats a body error as final: it bypasses post-execute."""

    async def complete(self, run: Prepared) -> ToolResult:
        if run.outcome == "dispatched" and run.result is not None and run.result.is_error:
            run.outcome = "policy-failure"
        return await super().complete(run)


def test_POST_1_catches_body_errors_bypassing_post_execute() -> None:
    assert outcome(OnlySuccessesReachPost, "POST-1").status == "fail"


class KeepsOldContent(Registry):
    """Applies a replacement value but keeps the old rendering."""

    async def _post_execute(
        self, run: Prepared, result: ToolResult
    ) -> tuple[ToolResult, bool, Sequence[Any]]:
        new, blocked, contexts = await super()._post_execute(run, result)
        if (
            isinstance(new, ToolSuccess)
            and isinstance(result, ToolSuccess)
            and new.value != result.value
        ):
            new = dataclasses.replace(new, content=result.content)
        return new, blocked, contexts


def test_POST_2_catches_a_replacement_value_not_re_rendered() -> None:
    assert outcome(KeepsOldContent, "POST-2").status == "fail"


class BlockShowsMessage(Registry):
    """Renders a block as `Error: <message>` instead of the feedback itself."""

    async def _post_execute(
        self, run: Prepared, result: ToolResult
    ) -> tuple[ToolResult, bool, Sequence[Any]]:
        new, blocked, contexts = await super()._post_execute(run, result)
        if blocked and new.is_error:
            new = dataclasses.replace(new, content=text(f"Error: blocked ({new.message})"))
        return new, blocked, contexts


def test_POST_3_catches_block_content_that_is_not_the_feedback() -> None:
    assert outcome(BlockShowsMessage, "POST-3").status == "fail"


class SwallowsPostFailures(Registry):
    """A throwing post-execute listener is logged and the uninspected result goes through."""

    async def _post_execute(
        self, run: Prepared, result: ToolResult
    ) -> tuple[ToolResult, bool, Sequence[Any]]:
        try:
            return await super()._post_execute(run, result)
        except Exception:
            return result, False, ()


def test_POST_4_catches_a_swallowed_post_execute_failure() -> None:
    assert outcome(SwallowsPostFailures, "POST-4").status == "fail"


class BlockKeepsBodyContexts(Registry):
    """Forgets that a block drops the body's deferred contexts."""

    async def _post_execute(
        self, run: Prepared, result: ToolResult
    ) -> tuple[ToolResult, bool, Sequence[Any]]:
        new, _blocked, contexts = await super()._post_execute(run, result)
        return new, False, contexts


def test_POST_5_catches_block_keeping_body_contexts() -> None:
    assert outcome(BlockKeepsBodyContexts, "POST-5").status == "fail"
