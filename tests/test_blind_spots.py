"""The pieces added to close the mutation-testing blind spots (benchmarks/mutation.md, B1-B10).

The rule fixtures and the bundled mutants prove each class of bug is caught (selftest); these
check the language pieces on their own: the ``list-cycle`` special and the ``nested-calls``
capability a ``forward`` step needs.
"""

from __future__ import annotations

from conformance.interpreter.binding import decode, jsonable
from conformance.judging.rules.pre import decision_form
from conformance.scenario.strategies import NEAR_MISS_KINDS, tool
from conformance.seam.adapter import CAPABILITIES, requirements


def test_list_cycle_is_an_array_that_contains_itself() -> None:
    value = decode({"items": {"$special": "list-cycle"}})["items"]
    assert isinstance(value, list) and value[0] is value
    assert jsonable(value) == [{"$special": "cycle"}]


def test_a_forward_step_needs_the_nested_calls_capability() -> None:
    assert "nested-calls" in CAPABILITIES
    composite = {
        "tools": [tool("outer", [{"forward": {"name": "inner"}}, {"return": "ok"}]), tool("inner")],
        "actions": [],
    }
    plain = {"tools": [tool("outer"), tool("inner")], "actions": []}
    assert "nested-calls" in requirements(composite)
    assert "nested-calls" not in requirements(plain)


def test_every_near_miss_kind_is_a_malformed_pre_execute_decision() -> None:
    for kind in NEAR_MISS_KINDS:
        assert decision_form({"kind": kind}) == "malformed", kind
        assert decision_form({"kind": kind, "reason": "no"}) == "malformed", kind
