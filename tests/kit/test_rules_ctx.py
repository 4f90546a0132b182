"""CTX predicates can fail: each test runs a realistically broken registry and expects ``fail``."""

from __future__ import annotations

from reference import Registry
from reference.registry import Prepared
from tests.kit.support import rule_status as status


class ForgetsContextsOnFailure(Registry):
    """Drops the body's deferred contexts when the dispatch ends in an error."""

    async def dispatch(self, run: Prepared) -> None:
        await super().dispatch(run)
        if run.result is not None and run.result.is_error:
            run.deferred.clear()


def test_CTX_1_catches_contexts_lost_when_the_body_throws() -> None:
    assert status("CTX-1", ForgetsContextsOnFailure) == "fail"


class ForgetsConcludeTurn(Registry):
    """Never marks a result as concluding the turn."""

    async def dispatch(self, run: Prepared) -> None:
        await super().dispatch(run)
        run.concluded = False


def test_CTX_2_catches_a_lost_conclude_mark() -> None:
    assert status("CTX-2", ForgetsConcludeTurn) == "fail"
