"""CTX predicates can fail: each test runs a realistically broken registry and expects ``fail``."""

from __future__ import annotations

import logging

from conformance.adapters.reference import ReferenceAdapter
from conformance.rules import RULES
from conformance.runner import run_suite
from reference import Registry
from reference.registry import Prepared

GROUP = "CTX"


def adapter(cls: type[Registry] = Registry) -> ReferenceAdapter:
    return ReferenceAdapter(
        lambda s: cls(mode=s.get("registry", {}).get("mode", "native")), name="bad"
    )


def status(rule_id: str, cls: type[Registry] = Registry) -> str:
    logging.disable(logging.CRITICAL)
    try:
        result = run_suite(adapter(cls), profile="quick", rules=rule_id)
    finally:
        logging.disable(logging.NOTSET)
    (outcome,) = result.rules
    return outcome.status


def test_reference_passes_every_ctx_rule() -> None:
    ids = [rid for rid in RULES if rid.startswith(GROUP + "-")]
    result = run_suite(adapter(), profile="quick", rules=f"{GROUP}-*")
    assert not result.kit_errors
    assert {o.id: o.status for o in result.rules} == {rid: "pass" for rid in ids}


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
