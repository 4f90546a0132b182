"""The gate's triage file and its verdict: python -m pytest mutation/tests/test_triage.py"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from cosmic_ray.work_item import TestOutcome as Outcome  # type: ignore[import-untyped]

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import kill
import measure
import triage

HERE = Path(__file__).resolve().parents[1]


def survivor(line: int, old: str, new: str, definition: str = "f") -> dict[str, Any]:
    return {
        "file": "reference/registry.py",
        "line": line,
        "operator": "core/AddNot",
        "occurrence": 3,
        "definition": definition,
        "diff": [" context", f"-    {old}", f"+    {new}", " context"],
    }


EQUIVALENT = survivor(10, "x = 1", "x = 2")
DEFENSIVE = survivor(20, "raise E", "pass")
UNKNOWN = survivor(30, "if a:", "if not a:")


def document(**changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "recorded": {"killed": 90, "nonEquivalent": 92},
        "margin": 2,
        "survivors": [
            triage.entry(EQUIVALENT, "E", "unobservable"),
            triage.entry(DEFENSIVE, "D", "unreachable"),
        ],
    }
    return {**base, **changes}


def write(tmp_path: Path, doc: Any) -> Path:
    path = tmp_path / "triage.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def test_a_survivor_is_recognised_after_its_line_and_occurrence_moved(tmp_path: Path) -> None:
    t = triage.load(write(tmp_path, document()))
    moved = {**EQUIVALENT, "line": 99, "occurrence": 0, "diff": ["-x = 1", "+x   = 2"]}
    assert triage.key(moved) in t.verdicts
    assert triage.key({**EQUIVALENT, "definition": "g"}) not in t.verdicts
    assert triage.key(UNKNOWN) not in t.verdicts


def test_equivalent_survivors_leave_the_rate_defensive_and_unknown_ones_count(
    tmp_path: Path,
) -> None:
    t = triage.load(write(tmp_path, document()))
    v = triage.judge(90, [EQUIVALENT, DEFENSIVE, UNKNOWN], t)
    assert (v.killed, v.non_equivalent) == (90, 92)
    assert v.untriaged == [UNKNOWN] and v.defensive == [DEFENSIVE]
    assert t.floor == pytest.approx(88 / 92)


def test_the_gate_passes_at_the_floor_and_fails_below_it_naming_the_survivors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    t = triage.load(write(tmp_path, document()))
    at_floor = [EQUIVALENT, DEFENSIVE, UNKNOWN]  # 88 / 90 >= 88 / 92
    assert measure.gate_non_equivalent(t, 88, at_floor, finished=True) == 0
    weakened = [*at_floor, survivor(40, "y()", "pass"), survivor(41, "z()", "pass")]
    assert measure.gate_non_equivalent(t, 80, weakened, finished=True) == 1
    err = capsys.readouterr().err
    assert "FAILED" in err and "reference/registry.py:40 core/AddNot in `f`: -y() / +pass" in err
    assert "reference/registry.py:10" not in err.split("gate: survivors")[-1]
    assert measure.gate_non_equivalent(t, 90, [EQUIVALENT], finished=False) == 1


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ([], "$: expected an object"),
        (document(margin="2"), "$.margin: expected int"),
        (document(recorded={"killed": 3}), "$.recorded.nonEquivalent: expected int"),
        (document(margin=95), "$.recorded: need 0 <= margin"),
        (document(survivors=[{"verdict": "B"}]), "$.survivors[0].verdict: expected one of"),
        (
            document(survivors=[{**triage.entry(UNKNOWN, "E", "x"), "change": ["x"]}]),
            "$.survivors[0].change",
        ),
        (
            document(survivors=[triage.entry(UNKNOWN, "E", "x")] * 2),
            "$.survivors[1]: the same survivor is listed twice",
        ),
    ],
)
def test_a_malformed_file_names_the_file_and_the_json_path(
    tmp_path: Path, doc: Any, message: str
) -> None:
    path = write(tmp_path, doc)
    with pytest.raises(triage.TriageError) as raised:
        triage.load(path)
    assert str(raised.value).startswith(f"{path}: ") and message in str(raised.value)


def test_the_committed_triage_file_is_well_formed() -> None:
    t = triage.load(HERE / "triage.json")
    assert t.floor < t.recorded and set(t.verdicts.values()) <= set(triage.VERDICTS)


def test_a_kit_that_cannot_replay_its_own_corpus_stops_the_driver(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The replay baseline: an unmutated copy the replay does not pass (a rule left not
    exercised) would have every mutant killed by error, so the driver stops first."""
    seen: list[str | None] = []

    def replay(command: str, timeout: float) -> tuple[Any, str]:
        seen.append(os.environ.get(kill.CORPUS_VARIABLE))
        return Outcome.KILLED, "POST-1  not-exercised"

    monkeypatch.setattr(measure, "run_tests", replay)
    config = measure.effective_config(30)
    with pytest.raises(SystemExit, match="does not survive the corpus replay"):
        measure.replay_baseline(config, "/tmp/corpus.jsonl")
    assert seen == ["/tmp/corpus.jsonl"]
    assert kill.CORPUS_VARIABLE not in os.environ
    monkeypatch.setattr(measure, "run_tests", lambda c, t: (Outcome.SURVIVED, ""))
    measure.replay_baseline(config, "/tmp/corpus.jsonl")
