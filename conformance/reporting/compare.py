"""Compare conformance reports: rules x implementations (or releases), changes first.

    toolreg-conformance compare docs/implementations/dsh-tools-0.1.0-rc.{6,7,8} -o COMPARE.md

Each argument is a ``report.json`` (``fixtures/schema/report.schema.json``) or a
directory holding one (a ``publish`` directory). The columns keep the order given.

Theory of operation
-------------------
A cell is a rule's *verdict* in one report, not its bookkeeping: ``expected-fail``
is the failure it expected (``fail``, ``error`` or ``timeout``), ``unexpected-pass``
is ``pass``. A cell says ``defect`` for a failing promised rule (status ``fail``) and
``difference`` for a rule failing only where the implementation's contract promises
nothing (``--contract FILE`` classifies a report's failures by a contract). A failing
cell of kind ``error``/``timeout`` also carries the failure categories its report
recorded. A rule the run did not select (another ``--rules``) has no cell: "not judged".

Two consecutive columns of one implementation (same name, another version) are two
releases, and their differences are listed before the matrix, each one classified by
the table ``CHANGES`` below (before-class x after-class -> kind); a comparison of different
implementations shows only the matrix. Wording, durations and failure counts never
make a change: only the verdict, its failure categories and whether the rule was
judged at all.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any, Final

from conformance.judging.contract import Contract
from conformance.running.outcomes import RuleOutcome, RunResult
from conformance.scenario.cases import case_path
from conformance.scenario.schema import FixtureError, load_json
from conformance.vocab import FAILING, NOT_RUN, Status

__all__ = ["Cell", "Change", "Column", "Comparison", "compare", "comparison_markdown"]

#: A verdict's class, for the change table.
_CLASS: Final = {
    Status.PASS: "pass",
    **{s: "failing" for s in FAILING},
    Status.DIFFERENCE: "difference",
    **{s: "not-run" for s in NOT_RUN},
}
#: What a cell says for a verdict (the status word, but for these).
_WORDS: Final = {Status.FAIL: "defect", Status.DIFFERENCE: "difference"}

#: (class before, class after) -> kind of change. ``"None"`` is "not judged" (the rule
#: was not selected, or is new to the kit). Same class: "category-changed" when the
#: verdicts differ (fail -> error) or their failure categories do, else no change.
CHANGES: Final[dict[tuple[str, str], str]] = {
    ("failing", "pass"): "fixed",
    ("pass", "failing"): "regressed",
    ("not-run", "failing"): "regressed",
    ("None", "failing"): "regressed",
    ("failing", "not-run"): "no-longer-judged",
    ("pass", "not-run"): "no-longer-judged",
    ("failing", "None"): "no-longer-judged",
    ("pass", "None"): "no-longer-judged",
    ("not-run", "None"): "no-longer-judged",
    ("not-run", "pass"): "now-judged",
    ("None", "pass"): "now-judged",
    ("None", "not-run"): "now-judged",
    # a difference never fails a run: its coming and going is listed apart
    ("difference", "failing"): "regressed",
    ("pass", "difference"): "difference-changed",
    ("difference", "pass"): "difference-changed",
    ("failing", "difference"): "difference-changed",
    ("not-run", "difference"): "difference-changed",
    ("None", "difference"): "difference-changed",
    ("difference", "not-run"): "no-longer-judged",
    ("difference", "None"): "no-longer-judged",
}

#: The order changes are listed in: what a user upgrading must see first.
KIND_ORDER: Final = (
    "regressed",
    "category-changed",
    "fixed",
    "difference-changed",
    "no-longer-judged",
    "now-judged",
)

KIND_TEXT: Final = {
    "regressed": "regressed (passed, differed or was not judged, now fails)",
    "category-changed": "failure changed (another verdict or failure category)",
    "fixed": "fixed (failed, now passes)",
    "difference-changed": "difference from DSH appeared, vanished or replaced a defect "
    "(never a failure)",
    "no-longer-judged": "no longer judged (now not-applicable, untested, not-exercised or not run)",
    "now-judged": "now judged (was not-applicable, untested, not-exercised or not run)",
}


@dataclass(frozen=True)
class Cell:
    """One rule's verdict in one report."""

    status: Status
    categories: tuple[str, ...] = ()
    counterexample: str | None = None  # a path (absolute or relative to the cwd)
    reason: str | None = None

    @property
    def kind(self) -> str:
        return _CLASS[self.status]

    def text(self) -> str:
        word = _WORDS.get(self.status, str(self.status))
        if self.categories:
            return f"{word} ({', '.join(self.categories)})"
        return word


@dataclass(frozen=True)
class Column:
    """One report: an implementation (or release) and its cells by rule ID."""

    label: str
    source: Path
    name: str
    version: str
    profile: str
    scenarios: int
    cells: dict[str, Cell]
    titles: dict[str, str]
    missing: dict[str, str]


@dataclass(frozen=True)
class Change:
    rule: str
    kind: str
    before: Cell | None
    after: Cell | None


@dataclass(frozen=True)
class Comparison:
    columns: list[Column]
    rules: list[str]
    #: (column before, column after, changes) for consecutive releases of one implementation
    changes: list[tuple[Column, Column, list[Change]]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """The comparison as plain data (for another renderer)."""

        def cell(c: Cell | None) -> dict[str, Any] | None:
            if c is None:
                return None
            out: dict[str, Any] = {"status": str(c.status)}
            if c.categories:
                out["categories"] = list(c.categories)
            if c.counterexample:
                out["counterexample"] = c.counterexample
            return out

        return {
            "columns": [
                {
                    "label": col.label,
                    "report": str(col.source),
                    "implementation": col.name,
                    "version": col.version,
                    "profile": col.profile,
                }
                for col in self.columns
            ],
            "rules": [
                {"id": r, "cells": [cell(col.cells.get(r)) for col in self.columns]}
                for r in self.rules
            ],
            "changes": [
                {
                    "from": a.label,
                    "to": b.label,
                    "changes": [
                        {
                            "rule": c.rule,
                            "kind": c.kind,
                            "before": cell(c.before),
                            "after": cell(c.after),
                        }
                        for c in found
                    ],
                }
                for a, b, found in self.changes
            ],
        }


def _report_path(argument: str) -> Path:
    path = Path(argument)
    if path.is_dir():
        path = path / "report.json"
    return path


def _verdict(rule: RuleOutcome) -> Status:
    status = Status(rule.status)
    if status is Status.EXPECTED_FAIL:
        return Status((rule.expected or {}).get("status", Status.FAIL))
    if status is Status.UNEXPECTED_PASS:
        return Status.PASS
    return status


def _column(argument: str, contracts: Sequence[Contract] = ()) -> Column:
    path = _report_path(argument)
    document = load_json(path, "report")
    if "rules" not in document:
        raise FixtureError(str(path), "$", "a protocol-robustness report only: no rules to compare")
    impl = document["implementation"]
    mine = [c for c in contracts if c.implementation == impl["name"]]
    mine.sort(key=lambda c: c.version != impl["version"])  # this version's contract first
    if mine:
        from conformance.reporting.classify import reclassified

        document = reclassified(document, mine[0])
    result = RunResult.from_json(document)
    cells: dict[str, Cell] = {}
    titles: dict[str, str] = {}
    for index, rule in enumerate(result.rules):
        if rule.id in cells:
            raise FixtureError(str(path), f"$.rules[{index}].id", f"rule {rule.id} listed twice")
        verdict = _verdict(rule)
        failures = [f for kind, f in rule.kept() if kind == verdict]
        categories = tuple(sorted({f.category for f in failures if f.category}))
        case = next((f.counterexample for f in failures if f.counterexample), None)
        cells[rule.id] = Cell(
            verdict,
            categories,
            str(case_path(path.parent, case)) if case else None,
            rule.reason,
        )
        titles[rule.id] = rule.title
    info = result.implementation
    return Column(
        label=f"{info.name} {info.version}",
        source=path,
        name=info.name,
        version=info.version,
        profile=result.profile,
        scenarios=result.scenarios,
        cells=cells,
        titles=titles,
        missing=dict(info.missing),
    )


def _rule_key(rule_id: str) -> tuple[str, int, str]:
    match = re.fullmatch(r"([A-Z]+)-(\d+)", rule_id)
    return (match.group(1), int(match.group(2)), "") if match else (rule_id, 0, rule_id)


def _change(rule: str, before: Cell | None, after: Cell | None) -> Change | None:
    was = before.kind if before else "None"
    now = after.kind if after else "None"
    if was == now:
        same = (
            before is None
            or after is None
            or ((before.status, before.categories) == (after.status, after.categories))
        )
        return None if same or was != "failing" else Change(rule, "category-changed", before, after)
    return Change(rule, CHANGES[(was, now)], before, after)


def compare(reports: Sequence[str], contracts: Sequence[Contract] = ()) -> Comparison:
    """Read the reports (files or publish directories) and compare them, in order.

    A report of an implementation one of ``contracts`` is written for has its failures
    classified by that contract (the one of its version first); the others keep the
    classification they were run with.
    """
    columns = [_column(r, contracts) for r in reports]
    labels = [c.label for c in columns]
    for i, col in enumerate(columns):  # the same implementation and version twice: say which
        if labels.count(col.label) > 1:
            where = col.source.parent.name or str(col.source)
            columns[i] = Column(**{**col.__dict__, "label": f"{col.label} ({where})"})
    rules = sorted({r for c in columns for r in c.cells}, key=_rule_key)
    changes = []
    for before, after in pairwise(columns):
        if before.name != after.name or before.version == after.version:
            continue  # not two releases of one implementation
        found = [
            change
            for rule in rules
            if (change := _change(rule, before.cells.get(rule), after.cells.get(rule)))
        ]
        found.sort(key=lambda c: (KIND_ORDER.index(c.kind), _rule_key(c.rule)))
        changes.append((before, after, found))
    return Comparison(columns, rules, changes)


def _link(text: str, target: str | None, base: Path) -> str:
    if not target:
        return text
    return f"[{text}]({Path(os.path.relpath(target, base)).as_posix()})"


def comparison_markdown(
    comparison: Comparison, base: Path = Path(), title: str | None = None
) -> str:
    """Markdown: the changes between consecutive releases first, then the matrix.

    Links (reports, counterexamples) are relative to ``base``, the output's directory.
    """
    cols = comparison.columns
    out = [f"# {title or 'Conformance comparison'}", ""]
    out += [
        "| | implementation | version | profile | scenarios | report |",
        "|---|---|---|---|---:|---|",
    ]
    for i, col in enumerate(cols, 1):
        readme = col.source.parent / "README.md"
        target = readme if readme.exists() else col.source
        out.append(
            f"| {i} | {col.name} | {col.version} | {col.profile} | {col.scenarios} | "
            f"{_link(target.name, str(target), base)} |"
        )
    out.append("")
    if comparison.changes:
        out += ["## Changes between releases", ""]
        for before, after, found in comparison.changes:
            out += [f"### {before.label} -> {after.label}", ""]
            if not found:
                out += ["No rule changed its verdict.", ""]
                continue
            for kind in KIND_ORDER:
                these = [c for c in found if c.kind == kind]
                if not these:
                    continue
                out.append(f"- **{KIND_TEXT[kind]}**:")
                for c in these:
                    was = c.before.text() if c.before else "not judged"
                    now = c.after.text() if c.after else "not judged"
                    note = ""
                    if c.after and c.after.status in NOT_RUN and c.after.reason:
                        note = f" -- now: {c.after.reason}"
                    elif c.after is None:
                        note = " -- not selected by the later run"
                    elif c.before and c.before.status in NOT_RUN and c.before.reason:
                        note = f" -- before: {c.before.reason}"
                    out.append(f"  - {c.rule}: {was} -> {now}{note}")
            out.append("")
    out += ["## Rules x implementations", ""]
    out.append("| rule | " + " | ".join(str(i) for i in range(1, len(cols) + 1)) + " |")
    out.append("|---|" + "---|" * len(cols))
    titles: dict[str, str] = {}
    for col in cols:
        titles.update(col.titles)
    for rule in comparison.rules:
        row = []
        for col in cols:
            cell = col.cells.get(rule)
            if cell is None:
                row.append("—")
            elif cell.status in FAILING:
                row.append(f"**{_link(cell.text(), cell.counterexample, base)}**")
            elif cell.status == Status.DIFFERENCE:
                row.append(_link(cell.text(), cell.counterexample, base))
            else:
                row.append(cell.text())
        out.append(f"| {rule} {titles.get(rule, '')} | " + " | ".join(row) + " |")
    out += [
        "",
        "— : the rule was not selected by that run (for example `--rules portable`). "
        "defect: a failing rule the implementation promises (without a contract, SPEC.md "
        "promises every rule); difference: it fails only where the implementation's "
        "contract promises nothing (a difference from DSH, never a defect).",
    ]
    missing = [(col, cap, why) for col in cols for cap, why in sorted(col.missing.items())]
    if missing:
        out += ["", "## Missing capabilities", ""]
        out += [f"- {col.label}: `{cap}` -- {why}" for col, cap, why in missing]
    return "\n".join(out) + "\n"
