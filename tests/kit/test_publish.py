"""publish: one implementation's outcome as report.json, cases/, expect.json and README.md."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from conformance.cli.main import main
from conformance.scenario.schema import validate

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


@pytest.mark.long(10)
@pytest.mark.slow
def test_publish_then_gate_and_replay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.syspath_prepend(str(HERE))
    broken = "python:broken_registry:adapter"
    out = tmp_path / "impl"
    out.mkdir()
    (out / "expect.json").write_text(
        json.dumps(
            {
                "implementation": "asks-without-service",
                "expected": {
                    "PRE-3": {
                        "status": "fail",
                        "requires": "an ask with no approval service fails closed",
                        "assessment": "likely-defect",
                    }
                },
            }
        )
    )
    assert (
        main(["publish", "--adapter", broken, "--dir", str(out), "--profile", "quick", "-q"]) == 0
    )
    expect = json.loads((out / "expect.json").read_text())
    validate(expect, "expect")
    entry = expect["expected"]["PRE-3"]
    assert entry["counterexample"] == "cases/PRE-3.json"
    assert entry["requires"] == "an ask with no approval service fails closed"  # kept
    assert (out / "cases" / "PRE-3.json").exists()
    validate(json.loads((out / "report.json").read_text()), "report")
    readme = (out / "README.md").read_text()
    assert "## Findings" in readme and "### PRE-3" in readme and "expected-fail" in readme

    gate = ["run", "--adapter", broken, "--profile", "quick", "--rules", "PRE-*", "-q"]
    assert main([*gate, "--expect", str(out / "expect.json")]) == 0
    cases = sorted(str(p) for p in (out / "cases").glob("*.json"))
    assert main(["replay", *cases, "--adapter", broken, "--expect-fail"]) == 0
    capsys.readouterr()
    assert main(["replay", *cases, "--adapter", "reference", "--expect-fail"]) == 1
    assert "no longer fail" in capsys.readouterr().out
    # an implementation that no longer answers proves nothing either way
    crashing = f"stdio:{sys.executable} {ROOT / 'tests/transport/fake_harness.py'} crash-always"
    assert main(["replay", *cases, "--adapter", crashing, "--expect-fail"]) == 2
    assert "produced no trace" in capsys.readouterr().out
