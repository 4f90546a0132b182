"""A frozen corpus (conformance.scenario.corpus): written once, replayed, and stopping early.

A corpus written by a run against the reference holds what that run judged; replayed, it
gives the same verdicts as the run that wrote it, and against a known-bad registry with
``fail_fast`` it stops at the first failure it waits for.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.adapters.reference import ReferenceAdapter
from conformance.adapters.reference.mutants import CATALOGUE
from conformance.cli import main
from conformance.running.outcomes import RunResult
from conformance.running.runner import run_suite
from conformance.scenario.corpus import Entry, read_corpus
from conformance.scenario.schema import FixtureError
from conformance.selftest import run_selftest
from tests.kit.support import quiet

RULES = "PRE-2,PRE-3,GUARD-1"


@pytest.fixture(scope="module")
def writing_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, RunResult]:
    """The run against the reference that writes the corpus, and its result."""
    path = tmp_path_factory.mktemp("corpus") / "quick.jsonl"
    with quiet():
        result = run_suite(ReferenceAdapter(), profile="quick", rules=RULES, write_corpus=path)
    return path, result


@pytest.fixture(scope="module")
def corpus_file(writing_run: tuple[Path, RunResult]) -> Path:
    return writing_run[0]


def test_a_corpus_holds_every_scenario_the_run_judged(writing_run: tuple[Path, RunResult]) -> None:
    corpus_file, result = writing_run
    corpus = read_corpus(corpus_file)
    assert set(corpus.header["rules"]) == set(RULES.split(","))
    assert len(corpus.entries) == result.scenarios
    sources = {e.source.split("/")[0] for e in corpus.entries}
    assert {"generated", "fixtures"} <= sources <= {"generated", "fixtures", "surface"}
    assert all(e.targets for e in corpus.entries)


def test_a_replay_gives_the_verdicts_of_the_run_that_wrote_it(
    writing_run: tuple[Path, RunResult],
) -> None:
    corpus_file, drawn = writing_run
    with quiet():
        replayed = run_suite(ReferenceAdapter(), rules=RULES, corpus=read_corpus(corpus_file))
    assert [(o.id, o.status, o.checks) for o in replayed.rules] == [
        (o.id, o.status, o.checks) for o in drawn.rules
    ]
    assert replayed.scenarios == drawn.scenarios and replayed.conformant


def test_a_replay_against_a_mutant_finds_its_fault_and_stops_early(
    corpus_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mutant = (
        CATALOGUE["pre.deny-runs-body"]
        if "pre.deny-runs-body" in CATALOGUE
        else next(m for m in CATALOGUE.values() if m.targets == ("PRE-2",))
    )
    corpus = read_corpus(corpus_file)
    with quiet():
        whole = run_suite(mutant.build(), rules=RULES, corpus=corpus)
        made: list[str] = []  # the entries made into fixtures: only those judged
        as_fixture = Entry.as_fixture
        monkeypatch.setattr(Entry, "as_fixture", lambda e: made.append(e.source) or as_fixture(e))
        early = run_suite(mutant.build(), rules=RULES, corpus=corpus, fail_fast="any")
    assert {o.id: o.status for o in whole.rules}["PRE-2"] == "fail"
    assert early.stopped_early and not early.conformant and not early.incomplete
    assert early.scenarios < whole.scenarios
    assert len(made) == early.scenarios
    assert any(o.status == "fail" for o in early.rules)
    assert early.to_json()["stoppedEarly"] is True


def test_fail_fast_all_waits_for_a_violation_of_every_rule(corpus_file: Path) -> None:
    mutant = next(m for m in CATALOGUE.values() if m.targets == ("PRE-2",))
    with quiet():
        result = run_suite(
            mutant.build(), rules="PRE-2,PRE-3", corpus=read_corpus(corpus_file), fail_fast="all"
        )
    # PRE-3 never fails on a PRE-2 mutant: the replay runs to the end
    assert not result.stopped_early


def test_fail_fast_needs_a_corpus() -> None:
    with pytest.raises(ValueError, match="needs a corpus"):
        run_suite(ReferenceAdapter(), rules="PRE-2", fail_fast="any")


def test_a_malformed_corpus_names_the_file_and_the_line(tmp_path: Path, corpus_file: Path) -> None:
    lines = corpus_file.read_text(encoding="utf-8").splitlines()
    broken = tmp_path / "broken.jsonl"
    broken.write_text("\n".join([lines[0], '{"source": "x"}', *lines[1:3]]), encoding="utf-8")
    with pytest.raises(FixtureError) as caught:
        read_corpus(broken)
    assert "broken.jsonl (line 2)" in str(caught.value) and "targets" in str(caught.value)
    not_json = tmp_path / "not.jsonl"
    not_json.write_text(lines[0] + "\n{oops\n", encoding="utf-8")
    with pytest.raises(FixtureError, match="line 2"):
        read_corpus(not_json)


def test_the_cli_replays_a_corpus_and_refuses_bad_combinations(
    corpus_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "out"
    code = main(["run", "--corpus", str(corpus_file), "--rules", RULES, "-q",
                 "--report", str(report), "-j", "1"])  # fmt: skip
    assert code == 0, capsys.readouterr().err
    assert json.loads((report / "report.json").read_text(encoding="utf-8"))["conformant"]
    assert main(["run", "--fail-fast", "-q"]) == 2
    assert "--fail-fast needs --corpus" in capsys.readouterr().err
    both = ["run", "--corpus", str(corpus_file), "--write-corpus", str(tmp_path / "x"), "-q"]
    assert main(both) == 2


@pytest.mark.long(10)
def test_selftest_replays_the_references_corpus() -> None:
    chosen = {name: m for name, m in CATALOGUE.items() if name.startswith("pre.")}
    with quiet():
        result = run_selftest(mutants=chosen, variants={}, coverage=False, corpus=True)
    assert result.ok, [r.why() for r in result.survivors + result.false_positives]
    assert [r.kind for r in result.baseline] == ["reference"]


@pytest.mark.parametrize("read", [True, False], ids=["read-from-its-line", "made-in-process"])
def test_a_replay_hands_each_run_its_own_copy_of_a_scenario(corpus_file: Path, read: bool) -> None:
    """One corpus serves many runs in one process: what a run writes into the scenario it was
    handed (a registry whose schemas are live views of the scenario's own objects) must not
    reach the next run -- whether the entry was read from a file (copies are parsed from its
    line) or made in process (from its scenario's JSON text)."""
    entry = read_corpus(corpus_file).entries[0]
    if not read:
        entry = Entry(entry.source, entry.targets, entry.scenario)
    first = entry.as_fixture()
    first["tools"] = "written by a run"
    first.setdefault("actions", []).append({"written": True})
    assert entry.as_fixture() == {**entry.scenario, "rules": list(entry.targets)}
    assert entry.as_fixture()["tools"] != "written by a run"
