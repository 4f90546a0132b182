"""Reports of one run: ``report.json``, ``report.md``, ``junit.xml`` and ``report.html``.

``report.json`` follows ``fixtures/schema/report.schema.json``.

Counterexamples are written by the runner itself, to ``DIR/counterexamples/``;
the reports point at them.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from conformance.reporting.classify import reclassified
from conformance.reporting.expectations import ASSESSMENTS
from conformance.reporting.findings import sections
from conformance.reporting.verdicts import verdict_text
from conformance.running.outcomes import Failure, RuleOutcome, RunResult
from conformance.vocab import FAILING, NOT_RUN, Status

__all__ = [
    "ASSESSMENTS",
    "STATUSES",
    "differences_markdown",
    "findings_markdown",
    "group_counts",
    "reclassified",
    "report_json",
    "result_from_json",
    "verdict_text",
    "write_reports",
]

STATUSES = tuple(str(s) for s in Status)
SKIPPED = NOT_RUN


def report_json(result: RunResult, expect_file: str | None = None) -> dict[str, Any]:
    document = result.to_json()
    if expect_file is not None:
        document["expectFile"] = expect_file
    return document


def groups(result: RunResult) -> dict[str, list[RuleOutcome]]:
    out: dict[str, list[RuleOutcome]] = {}
    for outcome in result.rules:
        out.setdefault(outcome.group, []).append(outcome)
    return out


def group_counts(result: RunResult) -> list[tuple[str, int, int, int, int]]:
    """(group, passed, failing the run, differing, other) per rule group, in run order.

    ``differing``: rules whose status is ``difference`` (they never fail the run).
    """
    rows = []
    for group, outcomes in groups(result).items():
        passed = sum(o.status == Status.PASS for o in outcomes)
        failing = sum(result.failing(o) for o in outcomes)
        differing = sum(o.status == Status.DIFFERENCE for o in outcomes)
        rows.append(
            (group, passed, failing, differing, len(outcomes) - passed - failing - differing)
        )
    return rows


def all_failures(outcome: RuleOutcome) -> Iterable[tuple[str, Failure]]:
    return iter(outcome.kept())


def defect_failures(outcome: RuleOutcome) -> Iterable[tuple[str, Failure]]:
    """Every kept failure but the differences: defects, errors and timeouts."""
    return ((k, f) for k, f in all_failures(outcome) if k != Status.DIFFERENCE)


def _failure_line(kind: str, failure: Failure) -> str:
    where = f" — counterexample `{failure.counterexample}`" if failure.counterexample else ""
    category = f" [{failure.category}]" if failure.category else ""
    clause = f" (clause `{failure.clause}`)" if failure.clause else ""
    return f"- {kind}{category}{clause} on `{failure.scenario_id}`: {failure.message}{where}"


def _clauses_note(outcome: RuleOutcome) -> str:
    """`` (clauses judged: a, b)`` for a rule with named clauses."""
    if not outcome.clauses:
        return ""
    return f" (clauses judged: {', '.join(outcome.clauses)})"


def differences_markdown(result: RunResult) -> list[str]:
    """The run's differences from DSH: every kept failure the contract does not promise."""
    lines = ["## Differences from DSH", ""]
    contract = result.contract
    if contract is None:
        return [
            *lines,
            "None: no contract was given, so SPEC.md is the contract, every rule is "
            "promised and every failure is a defect.",
            "",
        ]
    lines += [
        f"Judged by the contract `{contract['file']}` ({contract['implementation']} "
        f"{contract['version']}: {contract['basis']}). A difference is a failure of "
        "something that contract does not promise: how this implementation differs from "
        "DSH, the design SPEC.md describes. It is not a defect and does not make the run "
        "non-conformant.",
        "",
    ]
    differing = [o for o in result.rules if o.differences]
    if not differing:
        return [*lines, "None.", ""]
    for o in differing:
        lines += [f"### {o.id} ({o.status}): {o.title}", ""]
        lines += [_failure_line("difference", f) for f in o.differences]
        whys = list(dict.fromkeys(f.why for f in o.differences if f.why))
        lines += ["", *(f"Why a difference: {why}." for why in whys), ""]
    return lines


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def report_markdown(
    result: RunResult,
    expect_file: str | None = None,
    findings: Iterable[str] = (),
    expect: Mapping[str, Any] | None = None,
) -> str:
    """The Markdown report; ``findings`` (lines) go right after the summary table, then the
    failing rules grouped by root cause (:func:`root_causes_markdown`, with ``expect``, an
    expect file's document, as the HTML page groups them)."""
    info = result.implementation
    lines = [
        f"# Conformance report: {info.name} {info.version}",
        "",
        f"- implementation: **{info.name}** {info.version} ({info.language})",
        f"- capabilities: {', '.join(sorted(info.capabilities)) or 'none'}",
        *(f"- missing `{c}`: {_cell(why)}" for c, why in sorted(info.missing.items())),
        f"- profile: `{result.profile}`, seed: {'none' if result.seed is None else result.seed}",
        f"- scenarios run: {result.scenarios} in {round(result.duration_s, 3):.1f} s",  # as in JSON
    ]
    if expect_file:
        lines.append(f"- expectations: `{expect_file}`")
    if result.contract is not None:
        contract = result.contract
        lines.append(
            f"- contract: `{contract['file']}` ({contract['implementation']} "
            f"{contract['version']}: {_cell(contract['basis'])})"
        )
    lines += [f"- result: **{verdict_text(result)}**"]
    if result.incomplete:
        not_run = ", ".join(result.not_run) or "none"
        lines.append(f"- not run (in full): {not_run}")
    lines.append("")
    lines += ["| group | pass | failing | differ | other |", "|---|---:|---:|---:|---:|"]
    lines += [f"| {g} | {p} | {f} | {d} | {o} |" for g, p, f, d, o in group_counts(result)]
    lines.append("")
    lines += findings
    lines += root_causes_markdown(result, expect)
    for group, outcomes in groups(result).items():
        lines += [
            f"## {group}",
            "",
            "| rule | title | status | checks | note |",
            "|---|---|---|---:|---|",
        ]
        for o in outcomes:
            note = o.reason or ""
            if not note and o.problems():
                note = next(iter(all_failures(o)))[1].message
            status = f"**{o.status}**" if result.failing(o) else o.status
            title = _cell(o.title + _clauses_note(o))
            lines.append(f"| {o.id} | {title} | {status} | {o.checks} | {_cell(note)} |")
        lines.append("")
        failed = [o for o in outcomes if any(True for _ in defect_failures(o))]
        for o in failed:
            lines.append(f"### {o.id} ({o.status})")
            lines.append("")
            lines += [_failure_line(kind, failure) for kind, failure in defect_failures(o)]
            if o.differences:
                lines.append(f"- and {len(o.differences)} difference(s): see Differences from DSH")
            lines.append("")
    lines += differences_markdown(result)
    if result.notes:
        lines += ["## Notes", ""] + [f"- {n}" for n in result.notes] + [""]
    if result.coverage is not None:
        lines += coverage_section(result.coverage)
    if result.transport is not None:
        lines += _transport_section(result.transport)
    if result.protocol is not None:
        from conformance.transport.fuzz import protocol_markdown

        lines += protocol_markdown(result.protocol)
    lines += ["## Kit errors", ""]
    if result.kit_errors:
        lines.append("Bugs in the kit itself, not in the implementation:")
        lines.append("")
        lines += [f"- {e}" for e in result.kit_errors]
    else:
        lines.append("None.")
    lines.append("")
    if any(f.counterexample for o in result.rules for _, f in all_failures(o)):
        lines += [
            "Replay a counterexample with `toolreg-conformance replay PATH --adapter ADAPTER`.",
            "",
        ]
    return "\n".join(lines)


def root_causes_markdown(result: RunResult, expect: Mapping[str, Any] | None = None) -> list[str]:
    """The failing rules grouped by root cause, as the HTML page's cards group them (the one
    grouping, :mod:`conformance.reporting.findings`): the defects, then the differences,
    each a line naming its rules, its scenarios and its counterexamples. The cases are read
    from the run's report directory (none without one: then only the same counterexample
    file or the same written evidence joins rules)."""
    from conformance.reporting.cases import load_cases

    base = result.report_dir
    cases = {} if base is None else load_cases(result, expect, base, None, base).cases
    written = (expect or {}).get("expected")
    found, differing, _ = sections(result.rules, written or {}, cases)
    lines: list[str] = []
    for heading, group in (("Defects", found), ("Differences", differing)):
        if not group:
            continue
        lines += [f"## {heading} by root cause", ""]
        for number, finding in enumerate(group, 1):
            ids = " + ".join(rule.id for rule in finding.rules)
            scenarios = sorted(
                {
                    str((cases[p].get("scenario") or {}).get("id"))
                    for p in finding.paths
                    if p in cases
                }
            )
            where = "".join(f", scenario `{s}`" for s in scenarios)
            files = "".join(f", counterexample `{p}`" for p in finding.paths)
            lines.append(f"{number}. **{ids}**{where}{files}")
        lines.append("")
    return lines


_WRITES = ("assign", "delete", "add", "append", "splice", "replace")


def coverage_section(coverage: Mapping[str, Any]) -> list[str]:
    """The attack-surface matrix: attempts per stage, object and write; what was not."""
    lines = [
        "## Attack-surface coverage",
        "",
        f"{coverage['attemptedCells']} of {coverage['cells']} cells attempted "
        f"({coverage['attempts']} attempts). A cell is one write (a column) a stage's "
        "callable attempts on one object it is handed (a row), as listed in "
        "`fixtures/schema/attack-surface.json`; it counts as attempted when a trace holds "
        "its `mutate` event in that stage. `-`: the write does not apply to the object.",
        "",
    ]
    for stage, objects in coverage["matrix"].items():
        used = [w for w in _WRITES if any(w in writes for writes in objects.values())]
        lines += [f"### {stage}", "", "| object | " + " | ".join(used) + " |"]
        lines.append("|---|" + "---:|" * len(used))
        for name, writes in objects.items():
            counts = [str(writes[w]) if w in writes else "-" for w in used]
            lines.append(f"| {_cell(name)} | " + " | ".join(counts) + " |")
        lines.append("")
    never = coverage["notAttempted"]
    lines.append(
        f"Not attempted ({len(never)}): " + (", ".join(f"`{c}`" for c in never) or "none.")
    )
    lines.append("")
    excluded = coverage["excluded"]
    if excluded:
        lines.append(f"Excluded by the implementation's capabilities ({len(excluded)}):")
        lines.append("")
        lines += [f"- `{c}` (needs {', '.join(needs)})" for c, needs in excluded.items()]
        lines.append("")
    if coverage.get("notSelected"):
        lines += [f"Cells threatening no selected rule: {coverage['notSelected']}.", ""]
    gaps = coverage.get("gaps") or []
    if gaps:
        lines += ["Stages where no write can be attempted yet:", ""]
        lines += [f"- {g['stage']} ({_cell(g['callable'])}): {_cell(g['reason'])}" for g in gaps]
        lines.append("")
    return lines


def _transport_section(transport: dict[str, Any]) -> list[str]:
    """How the implementation was reached, how often it failed to answer, what it said on stderr."""
    lines = ["## Transport", ""]
    for key, value in transport.items():
        if key == "stderrTail":
            continue
        shown = " ".join(value) if isinstance(value, list) else value
        lines.append(f"- {key}: `{shown}`" if shown not in (None, {}) else f"- {key}: none")
    if "stderrTail" not in transport:  # e.g. HTTP: the service's output is not the kit's to see
        return [*lines, ""]
    tail = transport.get("stderrTail") or []
    lines += ["", "The implementation's stderr (last lines; evidence, never a failure):", ""]
    if tail:
        lines += ["```", *tail, "```"]
    else:
        lines.append("(empty)")
    lines.append("")
    return lines


def result_from_json(document: dict[str, Any]) -> RunResult:
    """A RunResult back from ``report.json`` (so Markdown can be re-rendered from it)."""
    return RunResult.from_json(document)


def _finding_lines(rid: str, entry: dict[str, Any], base: str, adapter: str) -> list[str]:
    category = f", {entry['category']}" if entry.get("category") else ""
    lines = [f"### {rid}", "", f"Status: {entry['status']}{category}.", ""]
    if entry.get("requires"):
        lines.append(f"- **The spec requires:** {entry['requires']}")
    if entry.get("does"):
        lines.append(f"- **The implementation does:** {entry['does']}")
    if entry.get("assessment"):
        meaning = ASSESSMENTS.get(entry["assessment"], "")
        lines.append(f"- **Assessment:** `{entry['assessment']}` — {meaning}")
    if entry.get("upstream"):
        lines.append(f"- **{entry['upstream'].capitalize()}:** {entry.get('note', '')}")
    elif entry.get("note"):
        lines.append(f"- **Note:** {entry['note']}")
    evidence = entry.get("evidence")
    if evidence:
        kind = f"{evidence['kind']}, " if evidence.get("kind") else ""
        lines.append(f"- **Evidence** ({kind}{evidence['source']}):")
        lines += ["", *(f"  > {line}" for line in evidence["quote"].splitlines()), ""]
    if entry.get("counterexample"):
        path = f"{base}{entry['counterexample']}"
        lines.append(f'- **Replay:** `toolreg-conformance replay {path} --adapter "{adapter}"`')
    if entry.get("reason") and not entry.get("does"):
        lines.append(f"- {entry['reason']}")
    if entry.get("link"):
        lines.append(f"- Tracked: {entry['link']}")
    if entry.get("tracker"):
        lines.append(f"- Public tracker: {entry['tracker']}")
    lines.append("")
    return lines


def _assessment_cell(entry: dict[str, Any]) -> str:
    text = str(entry.get("assessment", ""))
    if entry.get("upstream"):
        text = f"{text} ({entry['upstream']})".strip()
    return text


def findings_markdown(
    expected: dict[str, dict[str, Any]], base: str = "", adapter: str = "ADAPTER"
) -> list[str]:
    """One section per expected failure: what the spec requires, what happens, and why.

    The defects (and errors, timeouts) come first, under "Findings: defects"; the
    differences after them, in their own section.
    """
    lines = ["## Findings: defects", ""]
    if not expected:
        return [*lines, "No known failures.", ""]
    defects = sorted(r for r, e in expected.items() if e["status"] != Status.DIFFERENCE)
    differing = sorted(r for r, e in expected.items() if e["status"] == Status.DIFFERENCE)
    for rule_ids, empty in ((defects, "No known defect."), (differing, "")):
        if rule_ids is differing:
            lines += [
                "## Findings: differences from DSH",
                "",
                "Failures of what this implementation does not promise: not defects.",
                "",
            ]
        if not rule_ids:
            lines += [empty or "None.", ""]
            continue
        lines += ["| rule | status | assessment |", "|---|---|---|"]
        for rid in rule_ids:
            entry = expected[rid]
            cell = _assessment_cell(entry)
            lines.append(f"| [{rid}](#{rid.lower()}) | {entry['status']} | {cell} |")
        lines.append("")
        for rid in rule_ids:
            lines += _finding_lines(rid, expected[rid], base, adapter)
    return lines


def report_junit(result: RunResult) -> ET.ElementTree:
    info = result.implementation
    counts = {s: sum(o.status == s for o in result.rules) for s in STATUSES}
    suites = ET.Element("testsuites", name="toolreg-conformance")
    suite = ET.SubElement(
        suites,
        "testsuite",
        name=f"toolreg-conformance {info.name} {info.version}",
        tests=str(len(result.rules) + (1 if result.kit_errors else 0)),
        failures=str(counts["fail"] + counts["unexpected-pass"]),
        errors=str(counts["error"] + counts["timeout"] + (1 if result.kit_errors else 0)),
        skipped=str(sum(counts[s] for s in (*SKIPPED, "expected-fail"))),
        time=f"{result.duration_s:.3f}",
    )
    props = ET.SubElement(suite, "properties")
    for key, value in (
        ("implementation", info.name),
        ("version", info.version),
        ("language", info.language),
        ("capabilities", ",".join(sorted(info.capabilities))),
        ("profile", result.profile),
        ("seed", "" if result.seed is None else str(result.seed)),
    ):
        ET.SubElement(props, "property", name=key, value=value)
    for o in result.rules:
        case = ET.SubElement(suite, "testcase", classname=o.group, name=o.id)
        details = "\n".join(
            f"{kind} on {f.scenario_id}: {f.message}"
            + (f"\ncounterexample: {f.counterexample}" if f.counterexample else "")
            for kind, f in defect_failures(o)
        )
        first = next(iter(defect_failures(o)), None)
        message = first[1].message if first else (o.reason or o.status)
        if o.status == "fail":
            ET.SubElement(case, "failure", message=message, type="fail").text = details
        elif o.status == "unexpected-pass":
            ET.SubElement(case, "failure", message=message, type="unexpected-pass")
        elif o.status in (Status.ERROR, Status.TIMEOUT):
            ET.SubElement(case, "error", message=message, type=o.status).text = details
        elif o.status in SKIPPED:
            ET.SubElement(case, "skipped", message=f"{o.status}: {o.reason or ''}".rstrip(": "))
        elif o.status == "expected-fail":
            ET.SubElement(case, "skipped", message=f"expected-fail: {o.reason or message}")
        if o.status == "not-exercised" and result.failing(o):
            # under the ci profile an unexercised rule fails the run: say so
            for child in list(case):
                case.remove(child)
            ET.SubElement(
                case, "failure", message=o.reason or "not exercised", type="not-exercised"
            )
        out = [details] if details and o.status not in FAILING else []
        if o.differences:  # passed (a difference never fails the run), shown on stdout
            out.append(
                f"difference from DSH, not a defect: {len(o.differences)} failure(s) of what "
                "the contract does not promise"
            )
            out += [
                f"difference on {f.scenario_id}: {f.message}"
                + (f" (clause {f.clause})" if f.clause else "")
                + (f"\nwhy: {f.why}" if f.why else "")
                + (f"\ncounterexample: {f.counterexample}" if f.counterexample else "")
                for f in o.differences
            ]
        if out:
            ET.SubElement(case, "system-out").text = "\n".join(out)
    if result.kit_errors:
        case = ET.SubElement(suite, "testcase", classname="kit", name="kit-errors")
        error = ET.SubElement(case, "error", message=result.kit_errors[0], type="kit-error")
        error.text = "\n".join(result.kit_errors)
    ET.indent(suites)
    return ET.ElementTree(suites)


def write_reports(
    result: RunResult, directory: str | Path, expect_file: str | None = None
) -> list[Path]:
    """Write report.json, report.md, junit.xml and report.html into ``directory``; return
    their paths (in that order)."""
    from conformance.reporting.cases import load_cases
    from conformance.reporting.html import report_html

    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / "report.json", out / "report.md", out / "junit.xml", out / "report.html"]
    document = report_json(result, expect_file)
    paths[0].write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    # the findings' written assessments, when the run was gated by an expect file
    expect = None
    if expect_file is not None and Path(expect_file).is_file():
        from conformance.reporting.expectations import load_expectations

        expect = load_expectations(expect_file).to_json()
    paths[1].write_text(report_markdown(result, expect_file, expect=expect), encoding="utf-8")
    report_junit(result).write(paths[2], encoding="utf-8", xml_declaration=True)
    # the report's case paths are relative to its directory, the expect file's to its own
    expect_dir = Path(expect_file).parent if expect_file else None
    shown = result if expect_file is None else replace(result, expect_file=expect_file)
    files = load_cases(shown, expect, out, expect_dir, out)
    page = report_html(shown, expect, files.cases, links=files.links, missing=files.missing)
    paths[3].write_text(page, encoding="utf-8")
    return paths
