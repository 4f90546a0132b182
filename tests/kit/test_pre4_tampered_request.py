"""PRE-4's latitude: an approval service that rewrote its request's identity consented to
no existing call, so the registry may deny the call (SPEC PRE-4) -- but only then."""

from __future__ import annotations

import copy
from typing import Any

from conformance.adapters.reference import ReferenceAdapter
from conformance.judging.evaluate import judge
from conformance.scenario.surface import cell, probe_scenario


def _denied_after_a_write(raised: bool) -> tuple[dict[str, Any], dict[str, Any]]:
    """The probe where the approver assigns request.callId and answers allowed-once, with
    the trace of a registry that denied the call; the write took effect unless ``raised``."""
    scenario = probe_scenario(cell("approval/request.callId/assign"))
    assert scenario is not None
    rejecting = copy.deepcopy(scenario)
    rejecting["approval"]["steps"][-1] = {"return": "rejected"}
    trace = ReferenceAdapter().run(rejecting)
    writes = [e for e in trace["events"] if e.get("stage") == "approval" and "mutate" in e]
    assert writes, "the probe writes to the request"
    for event in writes:
        event["raised"] = raised
    return scenario, trace


def _pre4(scenario: dict[str, Any], trace: dict[str, Any]) -> list[bool]:
    return [v.ok for v in judge(scenario, trace, ["PRE-4"])["PRE-4"]]


def test_a_denial_after_the_request_identity_was_rewritten_is_allowed() -> None:
    scenario, trace = _denied_after_a_write(raised=False)
    verdicts = _pre4(scenario, trace)
    assert verdicts and all(verdicts)


def test_a_denial_after_a_refused_write_is_still_a_violation() -> None:
    scenario, trace = _denied_after_a_write(raised=True)
    assert not all(_pre4(scenario, trace))


def test_the_reference_refuses_the_write_and_proceeds() -> None:
    scenario = probe_scenario(cell("approval/request.callId/assign"))
    assert scenario is not None
    trace = ReferenceAdapter().run(scenario)
    assert all(_pre4(scenario, trace))


def test_a_rewritten_request_whose_forged_call_ran_is_a_violation() -> None:
    scenario, trace = _denied_after_a_write(raised=False)
    trace["events"].append(
        {
            "call": "forged",
            "stage": "body",
            "at": "enter",
            "id": "probe",
            "tool": "probe",
            "agent": "main",
            "hasParent": False,
        }
    )
    assert not all(_pre4(scenario, trace))
