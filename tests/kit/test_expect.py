"""--expect gating: known failures, stale entries, wrong categories, --update-expect."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import conformance.running.plan
from conformance.cli.main import main
from conformance.judging.rules import RULES
from conformance.reporting.expectations import (
    Expectations,
    apply_expectations,
    load_expectations,
    updated_expectations,
)
from conformance.running.outcomes import Failure, RuleOutcome, RunResult
from conformance.seam.adapter import AdapterInfo

HERE = Path(__file__).resolve().parent
BROKEN_NAME = "asks-without-service"


@pytest.fixture
def broken(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.syspath_prepend(str(HERE))
    return "python:broken_registry:adapter"


def write(path: Path, expected: dict[str, Any], implementation: str = BROKEN_NAME) -> str:
    path.write_text(json.dumps({"implementation": implementation, "expected": expected}))
    return str(path)


def run(*args: str) -> int:
    return main(["run", "--profile", "quick", "--rules", "PRE-3", "-q", *args])


def test_outcomes_exactly_as_expected_exit_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], broken: str
) -> None:
    expect = write(tmp_path / "expect.json", {"PRE-3": {"status": "fail", "reason": "no seam"}})
    report = tmp_path / "report"
    assert run("--adapter", broken, "--expect", expect, "--report", str(report)) == 0
    assert "as expected" in capsys.readouterr().out
    (rule,) = json.loads((report / "report.json").read_text())["rules"]
    assert rule["status"] == "expected-fail" and rule["expected"]["reason"] == "no seam"
    assert rule["failures"]  # still reported, with their counterexamples


def test_a_stale_entry_is_an_unexpected_pass_and_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    expect = write(tmp_path / "expect.json", {"PRE-3": {"status": "fail"}}, "reference")
    assert run("--expect", expect) == 1
    out = capsys.readouterr().out
    assert "PRE-3  unexpected-pass" in out and "--update-expect" in out


def test_a_failure_in_another_category_keeps_its_status_and_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], broken: str
) -> None:
    expect = write(tmp_path / "expect.json", {"PRE-3": {"status": "timeout"}})
    assert run("--adapter", broken, "--expect", expect) == 1
    out = capsys.readouterr().out
    assert "PRE-3  fail" in out and "expected timeout" in out


def test_an_unlisted_failure_exits_1(tmp_path: Path, broken: str) -> None:
    assert run("--adapter", broken, "--expect", write(tmp_path / "expect.json", {})) == 1


def test_update_expect_refuses_a_filtered_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    expect = write(tmp_path / "expect.json", {})
    assert run("--expect", expect, "--update-expect") == 2
    assert "--rules" in capsys.readouterr().err
    assert json.loads(Path(expect).read_text())["expected"] == {}  # untouched


@pytest.mark.parametrize(
    ("document", "where"),
    [
        (
            {"implementation": "x", "expected": {"PRE-3": {"status": "broken"}}},
            "$.expected.PRE-3.status",
        ),
        ({"implementation": "x", "expected": {"pre3": {"status": "fail"}}}, "$.expected"),
        ({"expected": {}}, "$"),
    ],
)
def test_a_malformed_expect_file_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], document: Any, where: str
) -> None:
    path = tmp_path / "expect.json"
    path.write_text(json.dumps(document))
    assert run("--expect", str(path)) == 2
    assert f"at {where}:" in capsys.readouterr().err


def test_update_expect_rewrites_the_file_keeping_reasons(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, broken: str
) -> None:
    # a full (unfiltered) run, over a rule set reduced to PRE-3 to stay fast
    monkeypatch.setattr(conformance.running.plan, "RULES", {"PRE-3": RULES["PRE-3"]})
    expect = write(
        tmp_path / "expect.json",
        {"PRE-3": {"status": "error", "reason": "kept", "link": "https://example.invalid/1"}},
    )
    argv = ["run", "--profile", "quick", "-q", "--adapter", broken, "--expect", expect]
    assert main([*argv, "--update-expect"]) == 0
    document = json.loads(Path(expect).read_text())
    assert document["implementation"] == BROKEN_NAME
    assert document["expected"] == {
        "PRE-3": {"status": "fail", "reason": "kept", "link": "https://example.invalid/1"}
    }
    assert main(argv) == 0  # and the rewritten file gates the next run


def test_update_expect_creates_a_missing_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, broken: str
) -> None:
    monkeypatch.setattr(conformance.running.plan, "RULES", {"PRE-3": RULES["PRE-3"]})
    expect = tmp_path / "new.json"
    argv = ["run", "--profile", "quick", "-q", "--adapter", broken, "--expect", str(expect)]
    assert main([*argv, "--update-expect"]) == 0
    loaded = load_expectations(expect)
    assert loaded.expected["PRE-3"]["status"] == "fail"
    assert "ask without an approval service" in loaded.expected["PRE-3"]["reason"]


def result_of(*outcomes: RuleOutcome) -> RunResult:
    return RunResult(AdapterInfo("impl", "1"), "quick", None, list(outcomes), [], 0.0, 1)


def test_apply_and_update_on_synthetic_outcomes() -> None:
    failure = Failure("boom", "s", None)
    result = result_of(
        RuleOutcome("A-1", "a", "A", status="fail", failures=[failure]),
        RuleOutcome("A-2", "a", "A", status="pass", checks=1),
        RuleOutcome("A-3", "a", "A", status="error", errors=[failure]),
        RuleOutcome("A-4", "a", "A", status="fail", failures=[failure]),
        RuleOutcome("A-5", "a", "A", status="not-applicable", reason="needs scopes"),
    )
    expectations = Expectations(
        "impl",
        {
            "A-1": {"status": "fail", "reason": "r1"},
            "A-2": {"status": "fail"},
            "A-3": {"status": "timeout"},
            "A-5": {"status": "error", "reason": "r5"},
            "Z-9": {"status": "fail"},
        },
        "expect.json",
    )
    hints = apply_expectations(result, expectations)
    status = {o.id: o.status for o in result.rules}
    assert status == {
        "A-1": "expected-fail",
        "A-2": "unexpected-pass",
        "A-3": "error",
        "A-4": "fail",
        "A-5": "not-applicable",
    }
    assert not result.conformant
    assert {h.split(":")[0] for h in hints} == {"A-2", "A-3", "A-5", "Z-9"}

    updated = updated_expectations(result, expectations).expected
    assert updated == {
        "A-1": {"status": "fail", "reason": "r1"},
        "A-3": {"status": "error", "reason": "boom"},
        "A-4": {"status": "fail", "reason": "boom"},
        "A-5": {"status": "error", "reason": "r5"},  # unconfirmed: kept
    }


def test_a_changed_error_category_fails_the_run_and_update_records_categories() -> None:
    crash = Failure("[crash] the harness exited", "s", None, "crash")
    protocol = Failure("[protocol] not JSON", "s", None, "protocol")
    result = result_of(
        RuleOutcome("A-1", "a", "A", status="error", errors=[crash]),
        RuleOutcome("A-2", "a", "A", status="error", errors=[protocol]),
    )
    documented = {
        "requires": "r",
        "does": "d",
        "assessment": "likely-defect",
        "evidence": {"quote": "q", "source": "README.md"},
        "counterexample": "cases/A-1.json",
        "link": "https://example.invalid/1",
    }
    expectations = Expectations(
        "impl",
        {
            "A-1": {"status": "error", "category": "crash", **documented},
            "A-2": {"status": "error", "category": "crash"},
        },
        "expect.json",
    )
    hints = apply_expectations(result, expectations)
    status = {o.id: o.status for o in result.rules}
    assert status == {"A-1": "expected-fail", "A-2": "error"}
    assert not result.conformant
    assert [h.split(":")[0] for h in hints] == ["A-2"] and "changed failure category" in hints[0]

    updated = updated_expectations(result, expectations).expected
    assert updated["A-1"] == {
        "status": "error",
        "category": "crash",
        "reason": "[crash] the harness exited",
        **documented,
    }
    assert updated["A-2"]["category"] == "protocol"  # the run's category, recorded
