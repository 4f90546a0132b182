"""A run of some rules judges every bundled fixture written for them, wherever it is filed.

A fixture names the rules it exercises (``rules``); ``rules/EXEC-5/timeout-waits-for-the-body``
is CANCEL-4's as much as EXEC-5's. A run selecting CANCEL-4 (or the portable set, which holds
it and not EXEC-5) must send it: before, only the rule's own directory was read, and a
framework whose timeout abandons the body passed CANCEL-4 in every portable run.
"""

from __future__ import annotations

import json
from pathlib import Path

from conformance.running.plan import fixture_files, select
from conformance.scenario.schema import FIXTURES


def _relative(paths: list[Path]) -> list[str]:
    return [str(p.relative_to(FIXTURES)) for p in paths]


def test_a_fixture_filed_under_another_rule_runs_for_every_rule_it_names() -> None:
    files = _relative(fixture_files(["CANCEL-4"]))
    assert "rules/CANCEL-4/uncooperative-body.json" in files
    assert "rules/EXEC-5/timeout-waits-for-the-body.json" in files
    assert "rules/EXEC-1/only-wrappers-own-the-signal.json" not in files


def test_every_fixture_naming_a_selected_rule_runs_once() -> None:
    selected = list(select("portable"))
    files = fixture_files(selected)
    assert len(files) == len(set(files))
    for path in sorted((FIXTURES / "rules").glob("*/*.json")):
        named = set(json.loads(path.read_text(encoding="utf-8")).get("rules", [path.parent.name]))
        named.add(path.parent.name)
        assert (path in files) == bool(named & set(selected)), path
