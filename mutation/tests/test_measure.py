"""The driver's sampling and its reading of results: python -m pytest mutation/tests"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from cosmic_ray.testing import run_tests  # type: ignore[import-untyped]
from cosmic_ray.work_item import (  # type: ignore[import-untyped]
    MutationSpec,
    WorkerOutcome,
    WorkItem,
    WorkResult,
)
from cosmic_ray.work_item import (
    TestOutcome as Outcome,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import kill
import measure

HERE = Path(__file__).resolve().parents[1]


def item(path: str, occurrence: int, operator: str = "core/NumberReplacer") -> WorkItem:
    spec = MutationSpec(path, operator, occurrence, (1, 0), (1, 1))
    return WorkItem.single(f"{path}-{operator}-{occurrence}", spec)


def killed(output: str) -> WorkResult:
    return WorkResult(WorkerOutcome.NORMAL, output, Outcome.KILLED)


def test_quotas_cover_every_file_and_follow_the_counts() -> None:
    q = measure.quotas({"a.py": 900, "b.py": 90, "c.py": 2}, 100, 3)
    assert q == {"a.py": 91, "b.py": 9, "c.py": 2}


def test_draw_is_seeded_and_spread() -> None:
    items = [item("a.py", i) for i in range(50)] + [item("b.py", i) for i in range(5)]
    first = measure.draw(items, 10, 7, 3)
    assert [i.job_id for i in first] == [i.job_id for i in measure.draw(items[::-1], 10, 7, 3)]
    assert [i.job_id for i in first] != [i.job_id for i in measure.draw(items, 10, 8, 3)]
    assert sum(str(i.mutations[0].module_path) == "b.py" for i in first) == 3
    assert len(measure.draw(items, None, 7, 3)) == len(items)


@pytest.mark.parametrize(
    ("result", "expected"),
    [
        (WorkResult(WorkerOutcome.NORMAL, "x\nverdict: survived", Outcome.SURVIVED), "survived"),
        (killed("verdict: killed-by-rules PRE-3=fail,FIN-2=error"), "killed"),
        (killed("timeout"), "timeout"),
        (
            killed("kit error: ImportError\nverdict: killed-by-error exit 2: kit error"),
            "error-kill",
        ),
        (WorkResult(WorkerOutcome.EXCEPTION, "Traceback", Outcome.INCOMPETENT), "incompetent"),
        (WorkResult(WorkerOutcome.NO_TEST), "no-test"),
    ],
)
def test_outcome(result: WorkResult, expected: str) -> None:
    assert measure.outcome(result)[0] == expected


def test_verdict_names_the_failing_rules(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    report.write_text(
        '{"rules": [{"id": "PRE-1", "status": "pass"}, {"id": "FIN-2", "status": "error"}],'
        ' "kitErrors": []}'
    )
    assert kill.verdict(0, "", report) == "survived"
    assert kill.verdict(1, "", report) == "killed-by-rules FIN-2=error"
    assert kill.verdict(2, "x\nkit error: Boom\n", tmp_path / "none") == (
        "killed-by-error exit 2: kit error: Boom"
    )


@pytest.fixture
def tree(tmp_path: Path) -> Iterator[Path]:
    commit = measure.git("rev-parse", "HEAD").decode().strip()
    measure.make_tree(commit, tmp_path / "tree")
    yield tmp_path / "tree"


def test_a_broken_import_kills_with_its_reason(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with (tree / "reference" / "timeout.py").open("a") as f:
        f.write("\nraise ImportError('mutant broke the import')\n")
    monkeypatch.chdir(tree)
    outcome, output = run_tests(f"{sys.executable} mutation/kill.py", 120)
    kind, reason = measure.outcome(WorkResult(WorkerOutcome.NORMAL, output, outcome))
    assert (kind, "mutant broke the import" in reason) == ("error-kill", True)


def test_a_hang_is_a_timeout_kill(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with (tree / "reference" / "timeout.py").open("a") as f:
        f.write("\nimport time\nwhile True:\n    time.sleep(0.05)\n")
    monkeypatch.chdir(tree)
    started = time.monotonic()
    outcome, output = run_tests(f"{sys.executable} mutation/kill.py", 4)
    assert time.monotonic() - started < 30
    assert measure.outcome(WorkResult(WorkerOutcome.NORMAL, output, outcome))[0] == "timeout"


def test_annotations_are_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "m.py").write_text(
        "from __future__ import annotations\n"
        "x: int | None = 1\n"
        "def f(a: A | B, *, b: C = 2) -> D | E:\n"
        "    return a | b\n"
    )
    monkeypatch.chdir(tmp_path)
    spans: dict[str, list[measure.Position]] = {}

    def at(start: tuple[int, int], end: tuple[int, int]) -> bool:
        spec = MutationSpec("m.py", "core/ReplaceBinaryOperator_BitOr_Add", 0, start, end)
        return measure.in_annotation(WorkItem.single("j", spec), spans)

    assert [at((2, 7), (2, 8)), at((3, 11), (3, 12)), at((3, 34), (3, 35))] == [True] * 3
    assert [at((4, 13), (4, 14)), at((2, 0), (2, 16))] == [False, False]


def test_draw_keeps_its_quota_of_valid_mutants() -> None:
    items = [item("a.py", i) for i in range(20)]
    chosen = measure.draw(items, 5, 7, 0, lambda i: i.mutations[0].occurrence % 2 == 0)
    assert len(chosen) == 5
    assert all(i.mutations[0].occurrence % 2 == 0 for i in chosen)


def test_a_corpus_replay_kills_a_mutant_and_spares_the_reference(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """kill.py with the driver's corpus: the unmutated copy survives, a broken one is killed."""
    corpus = measure.write_corpus(tree, tree.parent / "corpus.jsonl")
    monkeypatch.chdir(tree)
    monkeypatch.setenv(kill.CORPUS_VARIABLE, corpus)
    outcome, output = run_tests(f"{sys.executable} mutation/kill.py", 300)
    assert measure.outcome(WorkResult(WorkerOutcome.NORMAL, output, outcome))[0] == "survived"
    registry = tree / "reference" / "registry.py"
    text = registry.read_text(encoding="utf-8")
    objection = "            if verdict is None:\n                continue\n"
    assert objection in text
    # a registry whose guards object to nothing: GUARD-1 finds it, and the replay stops there
    registry.write_text(text.replace(objection, objection.replace("None", "None or True")))
    outcome, output = run_tests(f"{sys.executable} mutation/kill.py", 300)
    assert measure.outcome(WorkResult(WorkerOutcome.NORMAL, output, outcome))[0] != "survived"


def test_two_http_workers_on_loopback_run_a_sample(tmp_path: Path) -> None:
    """cosmic-ray's own distributed execution: its http distributor hands a seeded sample to
    two of its HTTP workers (each in a scratch copy of its own, on a loopback port), and the
    session records a result for every mutant of the sample."""
    work = tmp_path / "work"
    command = [
        sys.executable, str(HERE / "measure.py"), "--sample", "2", "--min-per-file", "0",
        "--seed", "3", "--workers", "2", "--work", str(work), "--exclude", "reference/example.py",
        "--timeout", "300",
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    results = json.loads((work / "results.json").read_text(encoding="utf-8"))
    assert results["finished"] and results["workers"] == 2 and results["corpus"]
    assert "on 2 HTTP workers" in done.stdout
    assert (work / "worker-0").is_dir() and (work / "worker-1").is_dir()


def test_a_mutation_cosmic_ray_cannot_make_is_no_mutant(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """cosmic-ray's ExceptionReplacer crashes on some `except` clauses: a full run (no
    --sample) must skip such a mutant, not stop."""
    module = tmp_path / "m.py"
    module.write_text("x = 1\n", encoding="utf-8")

    def crash(code: str, operator: object, occurrence: int) -> str:
        raise AttributeError("'PythonNode' object has no attribute 'value'")

    assert measure.compiles(item(str(module), 0))
    monkeypatch.setattr(measure, "mutate_code", crash)
    assert not measure.compiles(item(str(module), 0))
