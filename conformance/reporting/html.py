"""One self-contained HTML page per report, and one per comparison.

    toolreg-conformance render REPORT_JSON --expect EXPECT_JSON --html -o report.html
    toolreg-conformance compare docs/implementations/dsh-tools-0.1.0-rc.{7,8} --html cmp.html

What the report page shows, top to bottom:

* the header: the implementation (name, version, language), profile, seed, scenarios,
  capabilities and missing ones, and the verdict;
* a summary table per rule group (pass / failing the run / differ / other), then every rule with
  its status (a checkbox, in a little inline script, hides the passing ones);
* the defects, **grouped by root cause**: the failing rules whose counterexample is the
  same scenario (the same scenario content, hence the same ``scenario.id``, or the same
  counterexample file), or whose written finding quotes the same evidence (the same
  line of the same source), are one finding that lists every rule it breaks. A finding shows
  what the expectations say (requires / does / assessment / evidence), from the expect
  file when one is given, else from the report's own ``expected`` blocks, and the messages
  the counterexample violated (its ``required``);
* then, in their own section ("Differences from DSH"), the differences: the failures the
  report's contract does not promise, with the same cards and timelines and no defect
  wording (none without a contract: SPEC.md then promises every rule);
* per counterexample, a **timeline** of its trace: one lane (a CSS grid row group) per
  call, the trace's events in trace order along the x axis (one column per event, shared
  by every lane so interleaving shows), each ``enter``...``exit``/``throw`` pair (and an
  approval's ``request``...``answer``) a bar coloured by its stage and nested by depth,
  the other events (observations, ``mutate`` attempts -- accepted or refused --,
  approvals) markers on the bar they happen in, and the call's answer
  (``trace.actions[i]``) at the lane's end. What the violated verdicts point at carries
  the class ``violation``: the events at their indices (the ``pointers`` of the case, or
  of the report's failures), and the answer of a call a verdict names without an event.
  A verdict without pointers marks nothing: its wording is never read for a call or a
  stage (issue 24).

Everything read from the JSON comes from the implementation under test and is treated
as hostile: every string goes through :func:`html.escape`; inline styles hold only
numbers computed here; the one inline script holds no data, and the page's
Content-Security-Policy allows only that script (by its hash), so an injected one
would not run. No network: no external stylesheet, font, script or image.

DOM hooks for tests and tools: ``.finding[data-rules]`` (a defect's card),
``.difference[data-rules]`` (a difference's card, under ``#differences``),
``.timeline[data-case]``, ``.lane[data-call]``, ``.event[data-stage][data-index]``,
``.span[data-stage]``, ``.answer[data-call]``, ``.violation[data-pointed]``; rule rows are
``tr.rule[data-rule][data-status]``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from conformance.reporting import timeline as tl
from conformance.reporting.cases import CaseFiles, load_cases
from conformance.reporting.cases import link as _href
from conformance.reporting.cases import named as named_cases
from conformance.reporting.compare import KIND_ORDER, KIND_TEXT, Cell, Comparison
from conformance.reporting.expectations import ASSESSMENTS
from conformance.reporting.findings import FINDING_STATUSES as _FINDING_STATUSES
from conformance.reporting.findings import Finding as _Finding
from conformance.reporting.findings import expect_entry as _expect_entry
from conformance.reporting.findings import failing as _failing
from conformance.reporting.findings import finding_anchors
from conformance.reporting.findings import numbers as _numbers
from conformance.reporting.findings import primary_case as _primary_case
from conformance.reporting.findings import sections as _sections
from conformance.reporting.page import CSS, escape_text, page
from conformance.reporting.page import as_dict as _dict
from conformance.reporting.page import as_list as _list
from conformance.reporting.page import esc as _e
from conformance.reporting.page import short as _short
from conformance.reporting.page import slug as _slug
from conformance.reporting.page import status_class as _status_class
from conformance.reporting.timeline_html import case_sources as _case_sources
from conformance.reporting.timeline_html import legend, timeline_html
from conformance.reporting.verdicts import verdict_text
from conformance.running.outcomes import RuleOutcome, RunResult
from conformance.vocab import FAILING, NOT_RUN, Status

__all__ = [
    "CSS",
    "CaseFiles",
    "comparison_html",
    "escape_text",
    "finding_anchors",
    "legend",
    "load_cases",
    "page",
    "report_html",
    "timeline_html",
]


def _expectation_html(rid: str, entry: Mapping[str, Any]) -> list[str]:
    if not entry:
        return []
    out = [f'<dl class="expectation" data-rule="{_e(rid)}">']
    for key, label in (("requires", "The spec requires"), ("does", "The implementation does")):
        if entry.get(key):
            out.append(f"<dt>{label} ({_e(rid)})</dt><dd>{_e(entry[key])}</dd>")
    if entry.get("assessment"):
        meaning = ASSESSMENTS.get(str(entry["assessment"]), "")
        out.append(
            f"<dt>Assessment</dt><dd><code>{_e(entry['assessment'])}</code> {_e(meaning)}</dd>"
        )
    if entry.get("upstream"):
        out.append(
            f'<dt class="upstream">{_e(str(entry["upstream"]).capitalize())}</dt>'
            f"<dd>{_e(entry.get('note', ''))}</dd>"
        )
    elif entry.get("note"):
        out.append(f"<dt>Note</dt><dd>{_e(entry['note'])}</dd>")
    evidence = _dict(entry.get("evidence"))
    if evidence:
        kind = f"{evidence['kind']}, " if evidence.get("kind") else ""
        out.append(
            f"<dt>Evidence ({_e(kind)}{_e(evidence.get('source', ''))})</dt>"
            f"<dd><blockquote>{_e(evidence.get('quote', ''))}</blockquote></dd>"
        )
    if entry.get("reason") and not entry.get("does"):
        out.append(f"<dt>Reason</dt><dd>{_e(entry['reason'])}</dd>")
    for key in ("link", "tracker"):  # shown as text: the page links nowhere outside itself
        if entry.get(key):
            out.append(f"<dt>{key.capitalize()}</dt><dd><code>{_e(entry[key])}</code></dd>")
    out.append("</dl>")
    return out


def _finding_html(
    number: int,
    finding: _Finding,
    expected: Mapping[str, Any] | None,
    files: CaseFiles,
    kind: str = "finding",
) -> list[str]:
    """One card: ``kind`` ``finding`` (the defects section) or ``difference``."""
    ids = [r.id for r in finding.rules]
    word = "Difference" if kind == "difference" else "Finding"
    out = [
        f'<section class="{kind}" id="{kind}-{number}" data-rules="{_e(" ".join(ids))}">',
        f"<h3>{word} {number}: {_e(' + '.join(ids))}</h3>",
    ]
    scenario_ids = {
        str(_dict(files.cases[p].get("scenario")).get("id"))
        for p in finding.paths
        if p in files.cases
    }
    if scenario_ids:
        out.append(
            "<p>Scenario: "
            + ", ".join(f"<code>{_e(s)}</code>" for s in sorted(scenario_ids))
            + "</p>"
        )
    out.append("<ul>")
    for rule in finding.rules:
        whys = list(dict.fromkeys(f.why for _, f in rule.kept() if f.why))
        why = (
            f'<br><span class="why">why a difference: {_e("; ".join(whys))}</span>' if whys else ""
        )
        out.append(
            f'<li><a href="#rule-{_slug(rule.id)}">{_e(rule.id)}</a> {_e(rule.title)}: '
            f'<span class="{_status_class(rule.status)}">{_e(rule.status)}</span>{why}</li>'
        )
    out.append("</ul>")
    for rule in finding.rules:
        out += _expectation_html(rule.id, _expect_entry(rule, expected))
    violated, sources = _violated_html(finding, expected, files)
    out += violated
    out += _counterexamples_html(finding, files, sources)
    if not finding.paths:
        out.append('<p class="note">No counterexample was saved for this finding.</p>')
    out.append("</section>")
    return out


def _violated_html(
    finding: _Finding, expected: Mapping[str, Any] | None, files: CaseFiles
) -> tuple[list[str], list[tl.Source]]:
    """The messages a finding's rules violated (the case's ``required``, else the report's
    failures), and them as marks on its timelines."""
    out: list[str] = []
    # the messages violated, per rule: the case's `required`, else the report's failures
    sources: list[tl.Source] = []
    out.append('<h4>Violated</h4><ul class="messages">')
    for rule in finding.rules:
        rid = rule.id
        path = _primary_case(rule, _dict(expected))
        case = files.cases.get(path) if path else None
        failures = rule.kept()
        mine = [f.message for _, f in failures if path and f.counterexample == path]
        required = [str(m) for m in _list((case or {}).get("required"))]
        said = mine or required or [f.message for _, f in failures[:1]]
        for message in said:
            out.append(f"<li>{_e(rid)}: {_e(message)}</li>")
        sources += _case_sources(rid, case, [f for _, f in failures], path, said)
        rest = len(failures) - len(mine)
        if rest > 0:
            out.append(
                f"<li><details><summary>{_e(rid)}: {rest} more kept failure(s)</summary><ul>"
            )
            for kind, f in failures:
                if not (path and f.counterexample == path):
                    out.append(
                        f"<li>{_e(kind)} on <code>{_e(f.scenario_id)}</code>: {_e(f.message)}</li>"
                    )
            out.append("</ul></details></li>")
    out.append("</ul>")
    return out, sources


def _counterexamples_html(
    finding: _Finding, files: CaseFiles, sources: list[tl.Source]
) -> list[str]:
    """A timeline per counterexample of a finding (one per distinct trace)."""
    out: list[str] = []
    shown: set[str] = set()
    for path in finding.paths:
        link = files.links.get(path)
        name = f'<a href="{_e(link)}">{_e(path)}</a>' if link else f"<code>{_e(path)}</code>"
        case = files.cases.get(path)
        if case is None:
            why = files.missing.get(path, "not loaded")
            out.append(f'<p class="note">Counterexample {name}: {_e(why)}; no timeline.</p>')
            continue
        trace = case.get("trace")
        if not isinstance(trace, dict):
            why = case.get("traceOmitted") or "the case holds no trace"
            out.append(f'<p class="note">Counterexample {name}: {_e(why)}.</p>')
            continue
        digest = _short(trace, limit=10**9)
        if digest in shown:
            out.append(
                f'<p class="same-trace" data-case="{_e(path)}">'
                f"Counterexample {name}: the same trace as above.</p>"
            )
            continue
        shown.add(digest)
        description = _dict(case.get("scenario")).get("description")
        out.append(f"<h4>Counterexample {name}</h4>")
        if description:
            out.append(f'<p class="description">{_e(description)}</p>')
        out.append(timeline_html(path, _dict(case.get("scenario")), trace, sources))
    return out


# --------------------------------------------------------------------- report


def _header_html(result: RunResult, title: str) -> list[str]:
    """The page's header: the implementation, the run, the contract and the verdict."""
    impl = result.implementation
    conformant = result.conformant
    body = [f"<header><h1>{_e(title)}</h1>", '<table class="meta">']
    capabilities = ", ".join(sorted(impl.capabilities))
    rows: list[tuple[str, object]] = [
        ("implementation", f"{impl.name} {impl.version}"),
        ("language", impl.language),
        ("profile", result.profile),
        ("seed", "none" if result.seed is None else result.seed),
        ("scenarios run", f"{result.scenarios} in {round(result.duration_s, 3)} s"),  # as in JSON
        ("capabilities", capabilities or "none"),
    ]
    rows += [(f"missing {c}", why) for c, why in sorted(impl.missing.items())]
    if result.expect_file:
        rows.append(("expectations", result.expect_file))
    judged_by = result.contract or {}
    if judged_by:
        rows.append(
            (
                "contract",
                f"{judged_by.get('file', '')} ({judged_by.get('implementation', '')} "
                f"{judged_by.get('version', '')}: {judged_by.get('basis', '')})",
            )
        )
    else:
        rows.append(("contract", "none: SPEC.md is the contract (every rule promised)"))
    rows.append(("kit", f"toolreg-conformance {result.kit_version}"))
    body += [f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in rows]
    ok = "ok" if conformant else "bad"
    body.append(
        f'<tr><th>result</th><td><span class="verdict {ok}" data-conformant="'
        f'{str(conformant).lower()}">{_e(verdict_text(result))}</span></td></tr>'
    )
    body.append("</table></header>")
    return body


def _summary_html(rules: list[RuleOutcome], profile: str) -> list[str]:
    """The summary table: per rule group, pass / failing / differ / other."""
    body: list[str] = []
    body += ["<h2>Summary</h2>", '<table class="groups"><tr><th>group</th>']
    body.append(
        '<th class="num">pass</th><th class="num">failing</th><th class="num">differ</th>'
        '<th class="num">other</th></tr>'
    )
    groups: dict[str, list[RuleOutcome]] = {}
    for rule in rules:
        groups.setdefault(rule.group, []).append(rule)
    for group, members in groups.items():
        passed = sum(r.status == Status.PASS for r in members)
        failing = sum(_failing(r.status, profile) for r in members)
        differs = sum(r.status == Status.DIFFERENCE for r in members)
        other = len(members) - passed - failing - differs
        body.append(
            f'<tr data-group="{_e(group)}"><td>{_e(group)}</td><td class="num">{passed}</td>'
            f'<td class="num">{failing}</td><td class="num">{differs}</td>'
            f'<td class="num">{other}</td></tr>'
        )
    body.append("</table>")
    return body


def _defects_html(
    findings: list[_Finding],
    expected: Mapping[str, Any] | None,
    files: CaseFiles,
    contract: Mapping[str, Any],
) -> list[str]:
    """The defects: one card per root cause."""
    body: list[str] = []
    body.append("<h2>Defects</h2>")
    if contract:
        promised = f"the rules its contract <code>{_e(contract.get('file', ''))}</code> promises"
    else:
        promised = "the rules of SPEC.md (no contract was given: every rule is promised)"
    if findings:
        broken = sum(len(f.rules) for f in findings)
        body.append(
            f"<p>{len(findings)} root cause(s) behind {broken} failing rule(s) -- failures of "
            f"{promised}, and any error or timeout: rules whose counterexample is the same "
            "scenario, or whose written finding quotes the same evidence, are one finding.</p>"
        )
        body.append(legend())
    else:
        body.append(f"<p>No failing rule: {promised} hold.</p>")
    for number, finding in enumerate(findings, 1):
        body += _finding_html(number, finding, expected, files)
    return body


def _differences_html(
    differences: list[_Finding],
    after_findings: bool,
    written_differences: Mapping[str, Any],
    expected: Mapping[str, Any] | None,
    files: CaseFiles,
    contract: Mapping[str, Any],
) -> list[str]:
    """The differences: failures of what the contract does not promise, never a defect."""
    body: list[str] = []
    # the differences: failures of what the contract does not promise, never a defect
    body.append('<h2 id="differences">Differences from DSH</h2>')
    if not contract:
        body.append(
            "<p>None: no contract was given, so SPEC.md is the contract, every rule is "
            "promised and every failure is a defect.</p>"
        )
    elif not differences:
        body.append(
            f"<p>None. Judged by the contract <code>{_e(contract.get('file', ''))}</code> "
            f"({_e(contract.get('implementation', ''))} {_e(contract.get('version', ''))}: "
            f"{_e(contract.get('basis', ''))}).</p>"
        )
    else:
        body.append(
            f"<p>Judged by the contract <code>{_e(contract.get('file', ''))}</code> "
            f"({_e(contract.get('implementation', ''))} {_e(contract.get('version', ''))}: "
            f"{_e(contract.get('basis', ''))}). {len(differences)} root cause(s) behind "
            f"{sum(len(f.rules) for f in differences)} rule(s) that fail where this "
            "contract promises nothing: how this implementation differs from DSH, the "
            "design SPEC.md describes. A difference is not a defect and does not make the "
            "run non-conformant.</p>"
        )
        if not after_findings:
            body.append(legend())
    for number, finding in enumerate(differences, 1):
        body += _finding_html(
            number,
            finding,
            written_differences if expected is not None else None,
            files,
            "difference",
        )
    return body


def _rules_html(
    rules: list[RuleOutcome], profile: str, findings: list[_Finding], differences: list[_Finding]
) -> list[str]:
    """Every rule with its status, note and the cards that show it."""
    body: list[str] = []
    finding_of, difference_of = _numbers(findings), _numbers(differences)
    body += [
        "<h2>Rules</h2>",
        '<p><label><input type="checkbox" id="only-failing"> only rules with a finding '
        "(a problem or a difference)</label></p>",
        '<table class="rules"><tr><th>rule</th><th>title</th><th>status</th>',
        '<th class="num">checks</th><th>note</th></tr>',
    ]
    for rule in rules:
        rid, status = rule.id, rule.status
        failures = rule.kept()
        note = rule.reason or (failures[0][1].message if failures else "") or ""
        shown = (*_FINDING_STATUSES, Status.DIFFERENCE)  # a finding, even when not a problem
        problem = _failing(status, profile) or str(status) in shown
        where = (
            f' <a href="#finding-{finding_of[rid]}">finding {finding_of[rid]}</a>'
            if rid in finding_of
            else ""
        )
        if rid in difference_of:
            n = difference_of[rid]
            where += f' <a href="#difference-{n}">difference {n}</a>'
        clauses = rule.clauses or []
        named = rule.title
        if clauses:
            named += f" (clauses judged: {', '.join(map(str, clauses))})"
        body.append(
            f'<tr class="rule" id="rule-{_slug(rid)}" data-rule="{_e(rid)}" '
            f'data-status="{_e(status)}" data-failing="{str(problem).lower()}">'
            f"<td>{_e(rid)}</td><td>{_e(named)}</td>"
            f'<td class="{_status_class(status)}">{_e(status)}</td>'
            f'<td class="num">{_e(rule.checks)}</td><td>{_e(note)}{where}</td></tr>'
        )
    body.append("</table>")
    return body


def report_html(
    result: RunResult,
    expect: dict[str, Any] | None,
    cases: Mapping[str, dict[str, Any]],
    *,
    links: Mapping[str, str] | None = None,
    missing: Mapping[str, str] | None = None,
) -> str:
    """The report page. ``result`` is the report model (a run's, or ``report.json``'s:
    :meth:`RunResult.read`); ``expect`` an expect file's document (None: the report's own
    ``expected`` blocks); ``cases`` the counterexamples by the path the report (or expect
    file) writes; ``links`` their hrefs from the page.
    """
    files = CaseFiles(dict(cases), dict(links or {}), dict(missing or {}))
    profile = result.profile
    rules = result.rules
    expected = _dict(expect.get("expected")) if expect is not None else None
    for path in named_cases(result, expect):
        if path not in files.cases and path not in files.missing:
            files.missing[path] = "not found"

    title = f"Conformance report: {result.implementation.name} {result.implementation.version}"
    body = _header_html(result, title)
    body += _summary_html(rules, profile)
    written = expected if expected is not None else {}
    findings, differences, written_differences = _sections(rules, written, files.cases)
    contract = result.contract or {}
    body += _defects_html(findings, expected, files, contract)
    body += _differences_html(
        differences, bool(findings), written_differences, expected, files, contract
    )
    if files.missing:
        body.append('<p class="note missing">Counterexample files not shown: ')
        body.append(", ".join(f"<code>{_e(p)}</code> ({_e(w)})" for p, w in files.missing.items()))
        body.append("</p>")

    body += _rules_html(rules, profile, findings, differences)
    notes = result.notes
    if notes:
        body += ["<h2>Notes</h2>", "<ul>", *(f"<li>{_e(n)}</li>" for n in notes), "</ul>"]
    body.append("<h2>Kit errors</h2>")
    kit_errors = result.kit_errors
    if kit_errors:
        body.append("<p>Bugs in the kit itself, not in the implementation:</p><ul>")
        body += [f"<li>{_e(k)}</li>" for k in kit_errors]
        body.append("</ul>")
    else:
        body.append("<p>None.</p>")
    if any(p in files.cases for f in findings for p in f.paths):
        body.append(
            "<p>Replay a counterexample with "
            "<code>toolreg-conformance replay PATH --adapter ADAPTER</code>.</p>"
        )
    return page(title, body)


# ----------------------------------------------------------------- comparison


def _cell_html(cell: Cell | None, base: Path) -> str:
    if cell is None:
        return '<td class="cell status-none" data-status="">—</td>'
    text = _e(cell.text())
    if cell.status in (*FAILING, Status.DIFFERENCE) and cell.counterexample:
        text = f'<a href="{_e(_href(cell.counterexample, base))}">{text}</a>'
    title = f' title="{_e(cell.reason)}"' if cell.reason else ""
    status = f'class="cell {_status_class(cell.status)}" data-status="{_e(cell.status)}"'
    return f"<td {status}{title}>{text}</td>"


def comparison_html(comparison: Comparison, base: Path = Path(), title: str | None = None) -> str:
    """The comparison page: the changes between releases first, then rules x reports.

    Links (reports, counterexamples) are relative to ``base``, the page's directory.
    """
    heading = title or "Conformance comparison"
    cols = comparison.columns
    body = [f"<h1>{_e(heading)}</h1>", '<table class="columns"><tr><th></th>']
    body.append("<th>implementation</th><th>version</th><th>profile</th>")
    body.append('<th class="num">scenarios</th><th>report</th></tr>')
    for i, col in enumerate(cols, 1):
        pages = [col.source.parent / name for name in ("report.html", "README.md")]
        target = next((page for page in pages if page.exists()), col.source)
        body.append(
            f"<tr><td>{i}</td><td>{_e(col.name)}</td><td>{_e(col.version)}</td>"
            f'<td>{_e(col.profile)}</td><td class="num">{col.scenarios}</td>'
            f'<td><a href="{_e(_href(target, base))}">{_e(target.name)}</a></td></tr>'
        )
    body.append("</table>")
    if comparison.changes:
        body.append('<h2>Changes between releases</h2><div class="changes">')
        for before, after, found in comparison.changes:
            body.append(f"<h3>{_e(before.label)} → {_e(after.label)}</h3>")
            if not found:
                body.append("<p>No rule changed its verdict.</p>")
                continue
            body.append("<ul>")
            for kind in KIND_ORDER:
                these = [c for c in found if c.kind == kind]
                if not these:
                    continue
                body.append(
                    f'<li class="kind-{_slug(kind)}"><strong>{_e(KIND_TEXT[kind])}</strong><ul>'
                )
                for c in these:
                    was = c.before.text() if c.before else "not judged"
                    now = c.after.text() if c.after else "not judged"
                    note = ""
                    if c.after and c.after.status in NOT_RUN and c.after.reason:
                        note = f" — now: {c.after.reason}"
                    elif c.after is None:
                        note = " — not selected by the later run"
                    elif c.before and c.before.status in NOT_RUN and c.before.reason:
                        note = f" — before: {c.before.reason}"
                    body.append(
                        f'<li class="change" data-rule="{_e(c.rule)}" data-kind="{_e(c.kind)}">'
                        f"{_e(c.rule)}: {_e(was)} → {_e(now)}{_e(note)}</li>"
                    )
                body.append("</ul></li>")
            body.append("</ul>")
        body.append("</div>")
    body += ["<h2>Rules × implementations</h2>", '<table class="matrix"><tr><th>rule</th>']
    body += [f'<th title="{_e(col.label)}">{i}</th>' for i, col in enumerate(cols, 1)]
    body.append("</tr>")
    titles: dict[str, str] = {}
    for col in cols:
        titles.update(col.titles)
    for rule in comparison.rules:
        cells = "".join(_cell_html(col.cells.get(rule), base) for col in cols)
        body.append(
            f'<tr data-rule="{_e(rule)}"><td>{_e(rule)} {_e(titles.get(rule, ""))}</td>{cells}</tr>'
        )
    body.append(
        "</table><p>— : the rule was not selected by that run. defect: a failing rule the "
        "implementation promises (without a contract, SPEC.md promises every rule); "
        "difference: it fails only where the implementation's contract promises nothing "
        "(a difference from DSH, never a defect).</p>"
    )
    missing = [(col, cap, why) for col in cols for cap, why in sorted(col.missing.items())]
    if missing:
        body.append("<h2>Missing capabilities</h2><ul>")
        body += [
            f"<li>{_e(col.label)}: <code>{_e(cap)}</code> — {_e(why)}</li>"
            for col, cap, why in missing
        ]
        body.append("</ul>")
    return page(heading, body)
