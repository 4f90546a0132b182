"""Publish one implementation's conformance outcome as a directory people can read and CI can gate.

    toolreg-conformance publish --adapter "stdio:node harnesses/dsh/harness.mjs" \\
        --dir docs/implementations/dsh-tools-0.1.0-rc.8

writes, in ``DIR``:

* ``report.json`` -- the run (``fixtures/schema/report.schema.json``);
* ``cases/<RULE>.json`` -- one replayable counterexample per failing rule,
  preferring a hand-written fixture over a generated (shrunk) scenario, since
  it is the easier one to read;
* ``expect.json`` -- the expectations for ``run --expect``: every failing rule (and
  every difference) with its status and category, keeping what people wrote (requires,
  does, assessment, evidence, upstream, note, link) and pointing ``counterexample`` at its
  case;
* ``README.md`` -- the Markdown report rendered from ``report.json``, with the
  findings of ``expect.json`` first;
* ``report.html`` -- the same as one self-contained page (findings by root cause, a
  timeline per counterexample).

The failures are classified by the implementation's contract, ``DIR/contract.json`` when
it exists (or ``contract=``; :mod:`conformance.judging.contract`): a failing promised rule is a
defect, any other failing rule a difference from DSH, published in its own section. Before
the run, a written ``assessment: defect`` without the evidence one needs (a contract
promise, a tracker reference, stated intent) is refused, and after it a ``defect`` on a rule
that turned out a difference: a malformed input, exit code 2, nothing written.

Re-running it after an upstream release shows, in the diff, exactly which
findings changed.
"""

from __future__ import annotations

import json
import shlex
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conformance.judging.contract import Contract, load_contract
from conformance.reporting.expectations import (
    Expectations,
    apply_expectations,
    check_against_run,
    check_assessments,
    load_expectations,
    updated_expectations,
    write_expectations,
)
from conformance.reporting.report import findings_markdown, report_json, report_markdown
from conformance.running.outcomes import RuleOutcome, RunResult
from conformance.running.progress import Tick
from conformance.running.runner import run_suite
from conformance.scenario.cases import read_case
from conformance.seam.adapter import Adapter
from conformance.vocab import FAILING, Status

PUBLISHED = (*FAILING, Status.DIFFERENCE)  # the statuses whose case is published

__all__ = ["publish"]


def _best_case(outcome: RuleOutcome, scratch: Path) -> str | None:
    """The counterexample to publish for a failing rule: the rule's own fixture first, then
    a fixture that lists the rule, then any fixture, then a generated (shrunk) scenario."""
    bucket = {str(kind): found for kind, found in outcome.buckets()}
    found = [f for f in bucket.get(outcome.status, []) if f.counterexample]

    def written_for(path: str) -> bool:
        case = read_case(scratch / path)
        return outcome.id in (case.get("scenario") or {}).get("rules", [])

    found.sort(
        key=lambda f: (
            f.scenario_id.startswith("generated/"),
            not f.scenario_id.startswith(f"rules/{outcome.id}/"),
            not written_for(str(f.counterexample)),
            f.scenario_id,
        )
    )
    return found[0].counterexample if found else None


def publish(
    adapter: Adapter,
    directory: str | Path,
    *,
    spec: str = "ADAPTER",
    profile: str = "ci",
    rules: str | None = None,
    progress: Callable[[str], None] = lambda line: None,
    tick: Callable[[Tick], None] | None = None,
    contract: str | Path | None = None,
) -> tuple[Expectations, bool]:
    """Run, then write report.json, cases/, expect.json and README.md into ``directory``.

    ``contract`` is the implementation's contract file (default: ``DIR/contract.json``
    when it exists; none: every rule is promised); report.json records which.

    A ``NOTES.md`` beside them (the adapter's mapping, what it cannot express, findings
    no generator reaches) is written by people: it is copied into README.md verbatim,
    ahead of the generated findings, and never overwritten.

    ``rules`` selects the rules as ``run --rules`` does (e.g. ``portable`` for an agent
    framework); the gate then runs with the same selection.

    Returns the expectations written and whether the run now matches them
    (it always should, right after publishing; False means kit errors).
    """
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    expect_path = out / "expect.json"
    previous = load_expectations(expect_path) if expect_path.exists() else None
    if contract is None and (out / "contract.json").exists():
        contract = out / "contract.json"
    promises: Contract | None = load_contract(contract) if contract is not None else None
    if previous is not None:
        check_assessments(previous, promises)  # before a long run
    with tempfile.TemporaryDirectory() as scratch:
        result = run_suite(
            adapter,
            profile=profile,
            rules=rules,
            report_dir=Path(scratch),
            progress=progress,
            tick=tick,
            contract=promises,
        )
        if promises is not None and result.contract is not None:
            result.contract["file"] = _shown(Path(promises.source), out)
            info = result.implementation
            result.notes += promises.notes_for(info.name, info.version)
        if previous is not None:
            result.notes += check_against_run(previous, result)
        cases = out / "cases"
        if cases.exists():
            shutil.rmtree(cases)
        cases.mkdir()
        chosen: dict[str, str] = {}  # rule -> published case
        sources: dict[str, str] = {}  # rule -> the scratch counterexample it came from
        for outcome in result.rules:
            source = _best_case(outcome, Path(scratch))
            if source is not None and outcome.status in PUBLISHED:
                target = cases / f"{outcome.id}.json"
                case = read_case(Path(scratch) / source)
                target.write_text(json.dumps(case, indent=2, sort_keys=True) + "\n")
                chosen[outcome.id] = f"cases/{outcome.id}.json"
                sources[outcome.id] = source
    expectations = updated_expectations(result, previous)
    for rid, entry in expectations.expected.items():
        if rid in chosen:
            entry["counterexample"] = chosen[rid]
        else:
            entry.pop("counterexample", None)
    write_expectations(expect_path, expectations)
    expectations.source = str(expect_path)
    apply_expectations(result, expectations)
    # Counterexample paths inside the report point at the published cases, not the scratch dir.
    for outcome in result.rules:
        for failure in outcome.problems():
            mine = failure.counterexample is not None and failure.counterexample == sources.get(
                outcome.id
            )
            failure.counterexample = chosen[outcome.id] if mine else None
    document: dict[str, Any] = report_json(result, "expect.json")
    (out / "report.json").write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    selection = f" --rules {shlex.quote(rules)}" if rules else ""
    judged_by = f" --contract {shlex.quote(str(promises.source))}" if promises else ""
    implicit = promises is not None and Path(promises.source) == out / "contract.json"
    intro = [
        "## How this was produced",
        "",
        "```sh",
        f"toolreg-conformance publish --adapter {shlex.quote(spec)} --dir {out} "
        f"--profile {profile}{selection}{'' if implicit else judged_by}",
        "```",
        "",
        "Gate a later run against these findings, and check that each case still fails:",
        "",
        "```sh",
        f"toolreg-conformance run --adapter {shlex.quote(spec)} --profile {profile}{selection} "
        f"{judged_by.lstrip()}{' ' if judged_by else ''}--expect {out / 'expect.json'}",
        f"toolreg-conformance replay {out / 'cases'}/*.json --adapter {shlex.quote(spec)} "
        "--expect-fail",
        "```",
        "",
    ]
    notes_path = out / "NOTES.md"  # written by people (the adapter's mapping): kept verbatim
    notes = [notes_path.read_text(encoding="utf-8").rstrip(), ""] if notes_path.exists() else []
    findings = notes + intro + findings_markdown(expectations.expected, adapter=spec)
    result.report_dir = out  # its cases are the published ones now, relative to out
    markdown = report_markdown(result, "expect.json", findings, expect=expectations.to_json())
    (out / "README.md").write_text(markdown)
    write_page(out)
    return expectations, result.conformant


def _shown(path: Path, directory: Path) -> str:
    """``path`` relative to ``directory`` when it lies inside it (a published contract.json)."""
    try:
        return path.resolve().relative_to(directory.resolve()).as_posix()
    except ValueError:
        return str(path)


def write_page(directory: Path) -> Path:
    """``DIR/report.html`` from a published directory's report.json, expect.json and cases."""
    from conformance.reporting.cases import load_cases
    from conformance.reporting.html import report_html

    result = RunResult.read(directory / "report.json")
    expect_path = directory / "expect.json"
    expect = load_expectations(str(expect_path)).to_json() if expect_path.exists() else None
    files = load_cases(result, expect, directory, directory, directory)
    page = report_html(result, expect, files.cases, links=files.links, missing=files.missing)
    (directory / "report.html").write_text(page, encoding="utf-8")
    return directory / "report.html"
