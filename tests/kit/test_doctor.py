"""The adapter doctor (issue 23): each broken adapter of the correct reference registry is
caught, naming the hook that fixes it; the reference adapter passes; a caller write the
adapter never routed is neither an attempt (coverage) nor a refusal (an adapter error)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from conformance.adapters.reference import ReferenceAdapter, ReferenceBinding
from conformance.cli.main import main
from conformance.interpreter.session import Session
from conformance.judging.evaluate import run_scenario
from conformance.running.doctor import PROBES, broken_rules, diagnose
from conformance.scenario.surface import attempted, cells, probe_scenario
from conformance.seam.adapter import Adapter

from . import broken_adapters

HERE = Path(__file__).resolve().parent

#: Each broken adapter: the probe that must catch it and words its fix must name.
CASES: list[tuple[Callable[[], Adapter], str, str]] = [
    (broken_adapters.no_track_caller, "caller-writes", "track_caller"),
    (broken_adapters.ignores_without_signal, "without-signal", "withoutSignal"),
    (broken_adapters.disposes_by_name, "dispose-again-tool", "again"),
    (broken_adapters.disposes_by_name, "dispose-again-listener", "again"),
    (broken_adapters.copies_execution, "stage-writes", "copy"),
    (broken_adapters.shows_caller_arguments, "request-arguments", "request_arguments"),
    (broken_adapters.orphans_nested_calls, "nested-calls", "parent"),
]


@pytest.mark.parametrize(("factory", "probe", "hook"), CASES, ids=[c[1] for c in CASES])
def test_the_doctor_catches_a_broken_adapter_and_names_the_hook(
    factory: Callable[[], Adapter], probe: str, hook: str
) -> None:
    found = {d.probe.name: d for d in diagnose(factory())}
    assert found[probe].broken, found[probe]
    assert hook in f"{found[probe].detail} {found[probe].probe.hook}"
    assert set(broken_rules(found.values())) >= set(found[probe].probe.rules)


def test_the_reference_adapter_passes_every_probe_it_declares() -> None:
    found = diagnose(ReferenceAdapter())
    assert [d.probe.name for d in found if d.broken] == []
    assert {d.probe.name for d in found if d.outcome == "ok"} >= {
        "caller-writes",
        "stage-writes",
        "dispose-again-tool",
        "dispose-again-listener",
        "nested-calls",
    }


def test_a_capability_not_declared_is_not_probed() -> None:
    class Bare(ReferenceAdapter):
        def describe(self):  # type: ignore[no-untyped-def]
            info = super().describe()
            return type(info)(info.name, info.version, capabilities=frozenset({"pre-execute"}))

    found = {d.probe.name: d.outcome for d in diagnose(Bare())}
    assert found["nested-calls"] == found["dispose-again-tool"] == "not-declared"
    assert found["stage-writes"] == "ok"


def test_doctor_exits_2_on_a_broken_adapter_and_0_on_the_reference(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(HERE.parent.parent))
    assert main(["doctor", "--adapter", "python:tests.kit.broken_adapters:no_track_caller"]) == 2
    out = capsys.readouterr().out
    assert "broken  caller-writes" in out and "track_caller" in out
    assert main(["doctor"]) == 0
    assert "broken" not in capsys.readouterr().out


def _caller_cells() -> list[str]:
    return [c.id for c in cells() if c.stage == "caller"]


def test_no_caller_cell_counts_as_attempted_unless_delivered() -> None:
    """The input-object cells (target ``caller``): an adapter without track_caller never
    delivers them (its caller-arguments cells it does deliver, through Session.caller)."""
    probes = [
        probe_scenario(c) for c in cells() if c.stage == "caller" and c.object.startswith("caller.")
    ]
    scenarios = [p for p in probes if p is not None]
    assert scenarios
    for scenario in scenarios:
        trace, no_trace = run_scenario(broken_adapters.no_track_caller(), scenario)
        assert trace is None and no_trace is not None
        assert no_trace.category == "undelivered" and "track_caller" in no_trace.message
        raw = broken_adapters.no_track_caller().run(scenario)
        assert not set(attempted(raw)) & set(_caller_cells())
        assert any(e.get("delivered") is False for e in raw["events"])
        good, _ = run_scenario(ReferenceAdapter(), scenario)
        assert good is not None and set(attempted(good)) & set(_caller_cells())


def test_python_caller_writes_twin_of_the_js_one() -> None:
    """harnesses/js/test/caller.test.mjs pins the same for the JavaScript twin."""
    writes = [
        {"target": "caller", "path": ["name"], "value": "renamed"},
        {"target": "caller-arguments", "path": ["x"], "value": 2},
    ]
    session = Session({}, ReferenceBinding())
    routed = {"callId": "c1", "name": "t", "afterResult": writes}
    _, arguments = session.caller(routed)
    given = session.track_caller("c1", {"callId": "c1", "name": "t", "arguments": arguments})
    session.caller_writes(routed, "afterResult")
    assert given["name"] == "renamed" and arguments["x"] == 2
    session.caller_writes({"callId": "c2", "name": "t", "afterInvoke": writes}, "afterInvoke")
    who = {"stage": "caller", "id": "after-invoke", "call": "c2", "raised": False}
    assert session.events[2:] == [
        {**who, "mutate": "caller['name']", "delivered": False},
        {**who, "mutate": "caller-arguments['x']", "delivered": False},
    ]
    assert [e.get("delivered") for e in session.events[:2]] == [None, None]


def test_every_probe_scenario_is_a_valid_scenario() -> None:
    from conformance.scenario.schema import validate

    for probe in PROBES:
        validate(probe.scenario, "scenario", probe.name)


def test_run_reports_the_rules_a_broken_probe_blinds_as_adapter_errors(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """CANCEL-1 fails against this adapter (the body runs a call that has the caller's
    signal): `run` reports it error (adapter), with the doctor's message, never fail."""
    monkeypatch.syspath_prepend(str(HERE.parent.parent))
    spec = "python:tests.kit.broken_adapters:ignores_without_signal"
    assert main(["run", "--adapter", spec, "--rules", "CANCEL-1", "--profile", "quick", "-q"]) == 1
    out, err = capsys.readouterr()
    assert "CANCEL-1  error  adapter: without-signal" in out
    assert "adapter defect (without-signal)" in err and "withoutSignal" in err


def test_run_suite_marks_adapter_errors_never_pass() -> None:
    from conformance.running.runner import run_suite
    from conformance.vocab import Status

    clean = run_suite(ReferenceAdapter(), profile="quick", rules="DEF-6")
    assert [r.status for r in clean.rules] == [Status.PASS]
    blind = run_suite(
        ReferenceAdapter(), profile="quick", rules="DEF-6", adapter_errors={"DEF-6": "doctor says"}
    )
    (outcome,) = blind.rules
    assert outcome.status == Status.ERROR
    assert outcome.errors[0].message == "doctor says"
    assert outcome.errors[0].category == "undelivered"
