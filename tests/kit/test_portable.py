"""The portable profile: stage capabilities, trimming, closed forms, the portable rule set,
and PIPE-5 -- each shown to fail where it must."""

from __future__ import annotations

import copy
import dataclasses
import json
from collections.abc import Mapping
from typing import Any

import pytest

from conformance.adapters.reference import ReferenceAdapter
from conformance.judging.evaluate import judge
from conformance.judging.model import View
from conformance.judging.rule_sets import (
    EXCLUDED,
    EXCLUDED_CLAUSES,
    PORTABLE,
    PORTABLE_CLAUSES,
    RULE_SETS,
)
from conformance.judging.rules import RULES
from conformance.running.plan import select_rules
from conformance.running.runner import run_suite
from conformance.scenario import strategies as s
from conformance.scenario.schema import SCHEMA_DIR
from conformance.seam.adapter import (
    CAPABILITIES,
    CLOSED_FORMS,
    PIPELINE_STAGES,
    AdapterInfo,
    requirements,
    trim,
)
from conformance.vocab import Status

ALL = frozenset(CAPABILITIES)
_ASK = {"kind": "ask", "reason": "why"}


class _Lacking:
    """The reference, declaring fewer capabilities; it records every scenario it is sent."""

    def __init__(self, lacking: set[str], forms: frozenset[str] | None = None) -> None:
        self._inner = ReferenceAdapter()
        info = self._inner.describe()
        self._info = dataclasses.replace(
            info,
            capabilities=info.capabilities - lacking,
            missing={c: f"no {c} here" for c in lacking},
            closed_forms=forms or info.closed_forms,
        )
        self.sent: list[Mapping[str, Any]] = []

    def describe(self) -> AdapterInfo:
        return self._info

    def run(self, scenario: Mapping[str, Any]) -> dict[str, Any]:
        self.sent.append(copy.deepcopy(scenario))
        return self._inner.run(scenario)


def _onlookers() -> dict[str, Any]:
    tool = s.tool("t", finalizeContent=[{"observe": "result"}, {"return": None}])
    scenario = s.scenario(
        "portable/onlookers",
        [tool],
        [{"call": s.call("c0", "t", {}, agent="main")}],
        preExecute=[s.listener("look", [{"observe": "arguments"}, {"delegate": True}])],
        observers=[s.listener("seen", [{"observe": "result"}])],
    )
    scenario["expect"] = {
        "c0": {"isError": False, "finalizerCalls": 1, "stagesEntered": ["pre-execute", "body"]}
    }
    return scenario


# ------------------------------------------------------------------- capabilities and trim


def test_every_stage_of_a_scenario_is_a_requirement() -> None:
    scenario = _onlookers()
    assert {"pre-execute", "observers", "finalizer"} <= requirements(scenario)
    bare = s.scenario("bare", [s.tool("t")], [{"call": s.call("c0", "t", {}, agent="main")}])
    assert not requirements(bare) & PIPELINE_STAGES


def test_trim_drops_onlookers_of_missing_stages_and_what_expect_said_of_them() -> None:
    scenario = _onlookers()
    assert trim(scenario, ALL) is scenario  # nothing missing: the same object
    trimmed = trim(scenario, ALL - {"pre-execute", "finalizer", "observers"})
    assert "preExecute" not in trimmed and "observers" not in trimmed
    assert "finalizeContent" not in trimmed["tools"][0]
    assert trimmed["expect"]["c0"] == {"isError": False, "stagesEntered": ["body"]}
    assert not requirements(trimmed) & {"pre-execute", "finalizer", "observers"}
    assert scenario["preExecute"] and "finalizeContent" in scenario["tools"][0]  # untouched


def test_trim_keeps_a_script_that_acts() -> None:
    scenario = _onlookers()
    scenario["preExecute"].append(
        s.listener("deny", [{"return": {"kind": "deny", "reason": "no"}}])
    )
    trimmed = trim(scenario, ALL - {"pre-execute"})
    assert [e["id"] for e in trimmed["preExecute"]] == ["deny"]
    assert "pre-execute" in requirements(trimmed)


def test_no_rule_is_judged_on_a_stage_the_adapter_lacks() -> None:
    lacking = {"pre-execute", "finalizer", "approval"}
    adapter = _Lacking(lacking)
    result = run_suite(adapter, profile="quick", rules="PRE-2,PRE-3,PRE-5,FIN-2,RES-2")
    assert adapter.sent
    for scenario in adapter.sent:
        assert not scenario.get("preExecute") and "approval" not in scenario
        assert not any("finalizeContent" in t for t in scenario.get("tools", []))
    status = {o.id: o for o in result.rules}
    for rid in ("PRE-2", "PRE-5", "FIN-2"):
        assert status[rid].status == Status.NOT_APPLICABLE, status[rid]
        assert "no " in (status[rid].reason or "")  # the adapter's own reason is quoted
    assert status["RES-2"].status == Status.PASS


def test_the_schemas_list_every_capability_and_closed_form() -> None:
    protocol = json.loads((SCHEMA_DIR / "protocol.schema.json").read_text(encoding="utf-8"))
    assert set(protocol["$defs"]["capability"]["enum"]) == set(CAPABILITIES)
    report = (SCHEMA_DIR / "report.schema.json").read_text(encoding="utf-8")
    assert all(f'"{c}"' in report for c in [*CAPABILITIES, *CLOSED_FORMS])


# ------------------------------------------------------------------- closed forms


def _asked_without_service() -> dict[str, Any]:
    return s.scenario(
        "portable/ask",
        [s.tool("t", [{"return": "ran"}])],
        [{"call": s.call("c0", "t", {}, agent="main")}],
        preExecute=[s.listener("policy", [{"return": _ASK}])],
    )


@pytest.mark.parametrize("form", ["raised", "interrupted"])
def test_a_declared_closed_form_counts_as_closed_and_an_undeclared_one_does_not(form: str) -> None:
    scenario = _asked_without_service()
    events = [
        {"stage": "pre-execute", "id": "policy", "call": "c0", "at": "enter"},
        {"stage": "pre-execute", "id": "policy", "call": "c0", "at": "exit", "returned": _ASK},
    ]
    trace = {"registrations": [], "actions": [{form: "stopped: why"}], "events": events}
    declared = judge(scenario, trace, ["PRE-3"], closed_forms=frozenset({"error-result", form}))
    assert declared["PRE-3"] and all(v.ok for v in declared["PRE-3"])
    assert View(scenario, trace, frozenset({form})).calls[0].message() == "stopped: why"
    strict = judge(scenario, trace, ["PRE-3"])
    assert not strict["PRE-3"]  # undeclared: the call was never answered, nothing to judge
    ran = copy.deepcopy(trace)
    ran["events"].append({"stage": "body", "id": "t", "call": "c0", "at": "enter"})
    bad = judge(scenario, ran, ["PRE-3"], closed_forms=frozenset({"error-result", form}))
    assert [v.ok for v in bad["PRE-3"]] == [False]  # closed, but the body ran


def test_a_batch_member_may_close_in_its_own_form() -> None:
    scenario = s.scenario(
        "portable/batch", [s.tool("t")], [{"batch": [s.call("a", "t", {}), s.call("b", "t", {})]}]
    )
    ok = {"isError": False, "value": "ok", "content": []}
    trace = {"registrations": [], "events": [], "actions": [{"results": [ok, {"raised": "no"}]}]}
    a, b = View(scenario, trace, frozenset({"error-result", "raised"})).calls
    assert a.returned and not a.closed
    assert b.result is None and b.closed and b.message() == "no"


# ------------------------------------------------------------------- the portable set


def test_the_portable_set_and_its_exclusions_cover_every_judged_rule() -> None:
    judged = {rid for rid, r in RULES.items() if r.check is not None}
    assert judged <= set(PORTABLE) | set(EXCLUDED)
    assert not set(PORTABLE) & set(EXCLUDED)
    assert all(reason.strip() for reason in [*PORTABLE.values(), *EXCLUDED.values()])
    assert select_rules("portable") == [rid for rid in RULES if rid in PORTABLE]
    assert "FIN-2" in select_rules("portable,FIN-2")


def test_a_portable_rule_is_judged_on_its_portable_clauses_and_each_other_has_a_reason() -> None:
    assert set(PORTABLE_CLAUSES) <= set(PORTABLE)
    assert set(EXCLUDED_CLAUSES) == set(PORTABLE_CLAUSES)
    for rid, selected in PORTABLE_CLAUSES.items():
        clauses = set(RULES[rid].clauses)
        assert selected and selected < clauses, rid
        assert set(EXCLUDED_CLAUSES[rid]) == clauses - selected, rid
        assert all(reason.strip() for reason in EXCLUDED_CLAUSES[rid].values())
    selection = RULE_SETS["portable"]
    assert set(selection) == set(PORTABLE)
    assert {rid: c for rid, c in selection.items() if c is not None} == PORTABLE_CLAUSES


def test_the_portable_set_keeps_the_invariants_every_design_claims() -> None:
    """Membership, as SPEC section 6 and the README's table state it."""
    assert set(PORTABLE) == {
        "PIPE-5",  # consent binds what runs
        "PIPE-7",  # consent binds the tool that runs
        "PRE-3",  # ask without a channel does not run
        "PRE-4",  # every non-grant does not run
        "PRE-2",  # a denial is never run
        "GUARD-1",
        "GUARD-2",
        "PRE-6",  # a malformed decision fails closed
        "RES-1",  # exactly one outcome per call
        "RES-2",  # observers and caller agree when no observer writes
        "CANCEL-2",  # no body after a pre-dispatch cancellation
        "CANCEL-4",  # no abandoned body
        "SCOPE-1",  # hidden equals missing
        "DEF-2",  # nothing host-only reaches the model; no live handle
        "POST-4",  # a throwing hook does not turn into a success
    }
    assert dict(PORTABLE_CLAUSES) == {
        "PRE-4": {"answers"},
        "RES-1": {"once"},
        "RES-2": {"agree"},
        "CANCEL-2": {"body"},
    }
    for rid in ("PIPE-2", "PIPE-3", "PIPE-4"):
        assert rid in EXCLUDED


# ------------------------------------------------------------------- PIPE-5


def _consent(shown: Any, body_saw: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    scenario = s.scenario(
        "portable/consent",
        [s.tool("t", [{"observe": "arguments"}, {"return": "ok"}])],
        [{"call": s.call("c0", "t", {"amount": 100}, agent="main")}],
        preExecute=[s.listener("policy", [{"return": _ASK}])],
        approval={"steps": [{"return": "allowed-once"}]},
    )
    request: dict[str, Any] = {"stage": "approval", "at": "request", "call": "c0", "keys": []}
    if shown is not None:
        request["arguments"] = shown
    events = [
        request,
        {"stage": "body", "id": "t", "call": "c0", "at": "enter"},
        {"stage": "body", "id": "t", "call": "c0", "what": "arguments", "observed": body_saw},
    ]
    ok = {"isError": False, "value": "ok", "content": []}
    return scenario, {"registrations": [], "actions": [{"result": ok}], "events": events}


@pytest.mark.parametrize(
    ("shown", "body_saw", "holds"),
    [
        (None, {"amount": 100}, True),  # no arguments in the request: the caller's call
        (None, {"amount": 5000}, False),
        ({"amount": 7}, {"amount": 7}, True),  # judged against what the request showed
        ({"amount": 100}, {"amount": 50}, False),
    ],
)
def test_pipe_5_judges_the_body_against_what_the_approver_saw(
    shown: Any, body_saw: Any, holds: bool
) -> None:
    verdicts = judge(*_consent(shown, body_saw), ["PIPE-5"])["PIPE-5"]
    assert verdicts and all(v.ok == holds for v in verdicts)


def test_the_interpreter_records_the_arguments_a_request_shows() -> None:
    from conformance.interpreter.binding import ABSENT, Binding

    assert Binding().request_arguments({"callId": "c0", "reason": "r"}) is ABSENT
    assert Binding().request_arguments({"callId": "c0", "arguments": {"a": [1]}}) == {"a": [1]}
