"""``run --shard K/N`` and ``merge``: three shards merged equal the unsharded run, rule for rule.

Compared: each rule's status, check count and kept failures (kind, clause, scenario,
message and the counterexample's file name), the scenario count and the attack-surface
coverage; on the reference (nothing fails) and on a mutant (failures, counterexamples
and a property's shrunk lead must merge in the unsharded order).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from conformance.adapters import load_adapter
from conformance.adapters.reference.mutants import CATALOGUE
from conformance.cli.main import main
from conformance.running.plan import plan, select_rules
from conformance.running.runner import run_suite
from conformance.running.shard import Shard, adopt_counterexamples, merge, parse_shard, unit_keys
from conformance.scenario.schema import validate

MUTANT = "mutant:def.schemas-stale-after-register"  # fails DEF-2, DEF-5 and DEF-6


def _document(adapter: str, rules: str | None, report: Path, shard: Shard | None) -> Any:
    name = adapter.removeprefix("mutant:")
    result = run_suite(
        CATALOGUE[name].build() if name != adapter else load_adapter(adapter),
        profile="quick",
        rules=rules,
        report_dir=report,
        shard=shard,
        adapter_spec=adapter,
    )
    document = json.loads(json.dumps(result.to_json()))
    validate(document, "report", f"{report}/report.json")
    report.mkdir(parents=True, exist_ok=True)
    (report / "report.json").write_text(json.dumps(document), encoding="utf-8")
    return document


def _rules(document: Any) -> list[tuple[Any, ...]]:
    """What must be equal rule for rule (a counterexample by its file name: the directory
    is the run's)."""
    return [
        (
            r["id"],
            r["status"],
            r["checks"],
            [
                (
                    f["kind"],
                    f.get("clause"),
                    f["scenario"],
                    f["message"],
                    f["counterexample"] and Path(f["counterexample"]).name,
                )
                for f in r["failures"]
            ],
        )
        for r in document["rules"]
    ]


def _sharded(adapter: str, rules: str | None, tmp: Path) -> tuple[Any, list[tuple[str, Any]]]:
    whole = _document(adapter, rules, tmp / "whole", None)
    shards = [
        (str(tmp / f"s{k}" / "report.json"), _document(adapter, rules, tmp / f"s{k}", Shard(k, 3)))
        for k in (1, 2, 3)
    ]
    return whole, shards


@pytest.fixture(scope="module")
def mutant_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any, list[Any]]:
    tmp = tmp_path_factory.mktemp("mutant")
    whole, shards = _sharded(MUTANT, "DEF-*", tmp)
    return tmp, whole, shards


@pytest.mark.long(18)
def test_sharded_reference_run_merges_into_the_unsharded_one(tmp_path: Path) -> None:
    whole, shards = _sharded("reference", None, tmp_path)
    merged = merge(shards).to_json()
    assert _rules(merged) == _rules(whole)
    assert merged["scenarios"] == whole["scenarios"]
    assert merged["coverage"] == whole["coverage"]
    assert merged["conformant"] and whole["conformant"]
    assert not any(r["status"] == "not-exercised" for r in merged["rules"])
    # each shard alone is only its part: some rule is unexercised in one of them
    assert any(r["status"] == "not-exercised" for _, d in shards for r in d["rules"])


def test_sharded_mutant_run_merges_failures_and_counterexamples(
    mutant_runs: tuple[Path, Any, list[Any]],
) -> None:
    tmp, whole, shards = mutant_runs
    result = merge(shards)
    out = tmp / "merged"
    assert adopt_counterexamples(result, [Path(n).parent for n, _ in shards], out) == []
    merged = result.to_json()
    assert _rules(merged) == _rules(whole)
    failing = [r["id"] for r in merged["rules"] if r["status"] == "fail"]
    assert failing == ["DEF-2", "DEF-5", "DEF-6"]
    for rule in merged["rules"]:
        for failure in rule["failures"]:
            # relative to the merged report's directory, as a run's own cases are
            assert Path(failure["counterexample"]).parent == Path("counterexamples")
            case = out / failure["counterexample"]
            assert case.is_file()
            source = tmp / "whole" / "counterexamples" / case.name
            assert json.loads(case.read_text()) == json.loads(source.read_text())


def test_a_lost_unit_changes_the_merge(mutant_runs: tuple[Path, Any, list[Any]]) -> None:
    """The comparison can fail: a shard whose record lost a failing unit merges into
    something else than the unsharded run."""
    _, whole, shards = mutant_runs
    broken = copy.deepcopy(shards)
    name, document = next((n, d) for n, d in broken if d["shard"]["parts"])
    document["shard"]["parts"] = [p for p in document["shard"]["parts"] if "failures" not in p]
    assert _rules(merge(broken).to_json()) != _rules(whole), name


def test_merge_refuses_what_is_not_one_whole_run(
    mutant_runs: tuple[Path, Any, list[Any]], capsys: pytest.CaptureFixture[str]
) -> None:
    tmp, whole, shards = mutant_runs
    (tmp / "whole" / "report.json").write_text(json.dumps(whole), encoding="utf-8")
    names = [n for n, _ in shards]
    seeded = copy.deepcopy(shards[2][1])
    seeded["seed"] = 7
    (tmp / "seeded.json").write_text(json.dumps(seeded), encoding="utf-8")
    for argv, said in [
        (names[:2], "missing shard(s) 3/3"),
        ([names[0], names[1], names[1]], "shard 2/3 given twice"),
        ([*names[:2], str(tmp / "seeded.json")], "their seed differs"),
        ([*names, str(tmp / "whole")], "not a shard's report"),
        ([str(tmp / "nowhere.json")], "nowhere.json: at $: cannot read"),
    ]:
        assert main(["merge", *argv]) == 2
        assert said in capsys.readouterr().err
    assert main(["merge", *[str(Path(n).parent) for n in names], "-q"]) == 1
    assert "NOT CONFORMANT" in capsys.readouterr().out


def test_the_split_is_a_partition_by_name_alone() -> None:
    units = plan(select_rules(None), 1, None)
    keys = unit_keys(units)
    assert len(set(keys)) == len(keys)
    owners = [[k for k in (1, 2, 3) if Shard(k, 3).owns(key)] for key in keys]
    assert all(len(o) == 1 for o in owners)
    assert all(any(o == [k] for o in owners) for k in (1, 2, 3))
    reversed_keys = unit_keys(list(reversed(units)))
    assert sorted(reversed_keys) == sorted(keys)  # order changes no key, so no owner
    assert unit_keys([units[0], units[0]]) == [units[0].label, f"{units[0].label}#1"]


@pytest.mark.parametrize("text", ["0/3", "4/3", "3", "a/b", "1/0", "/2"])
def test_a_malformed_shard_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="expected K/N"):
        parse_shard(text)
    assert parse_shard("2/3") == Shard(2, 3)


def test_a_shard_records_the_same_with_workers(tmp_path: Path) -> None:
    """-j changes neither which units a shard owns nor what it records of them."""
    spec = "python:tests.kit.broken_registry:adapter"  # workers re-create it from the spec
    records = []
    for jobs in (1, 2):
        result = run_suite(
            load_adapter(spec),
            profile="quick",
            rules="PRE-*",
            report_dir=tmp_path / f"j{jobs}",
            shard=Shard(2, 3),
            jobs=jobs,
            adapter_spec=spec,
            load=load_adapter,
        )
        assert result.jobs == jobs and result.shard is not None
        records.append(json.loads(json.dumps(result.shard)))
    one, two = records
    assert one["ran"] == one["owned"] and any("failures" in p for p in one["parts"])
    for part in [*one["parts"], *two["parts"]]:  # the run's directory differs, not the case
        for failures in part.get("failures", {}).values():
            for f in failures:
                f["counterexample"] = f["counterexample"] and Path(f["counterexample"]).name
    assert one == two
