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

import base64
import hashlib
import json
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import Any, Final
from urllib.parse import quote

from conformance.reporting import timeline as tl
from conformance.reporting.compare import KIND_ORDER, KIND_TEXT, Cell, Comparison
from conformance.reporting.expectations import ASSESSMENTS
from conformance.reporting.timeline import STAGE_ORDER
from conformance.reporting.verdicts import verdict_words
from conformance.running.outcomes import Pointer
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


_FINDING_STATUSES: Final = frozenset({*FAILING, Status.EXPECTED_FAIL})

_JS: Final = """
document.addEventListener('DOMContentLoaded', function () {
  document.documentElement.setAttribute('data-script', 'ran');
  var box = document.getElementById('only-failing');
  if (!box) { return; }
  box.addEventListener('change', function () {
    var rows = document.querySelectorAll('tr.rule');
    for (var i = 0; i < rows.length; i++) {
      var quiet = rows[i].getAttribute('data-failing') !== 'true';
      rows[i].hidden = box.checked && quiet;
    }
  });
});
"""

CSS: Final = """
:root { --col: 2.1rem; --label: 11rem; --answer: 16rem; font-family: system-ui, sans-serif; }
body { margin: 1.5rem; color: #1d1d1f; background: #fff; line-height: 1.4; }
h1 { font-size: 1.5rem; } h2 { margin-top: 2rem; border-bottom: 1px solid #ccc; }
code, pre, .mono { font-family: ui-monospace, monospace; font-size: .85em; }
table { border-collapse: collapse; margin: .5rem 0; }
th, td { border: 1px solid #ddd; padding: .2rem .5rem; text-align: left; vertical-align: top; }
td.num, th.num { text-align: right; }
.verdict { font-weight: bold; padding: .1rem .4rem; border-radius: .2rem; }
.verdict.ok { background: #d7f5dd; } .verdict.bad { background: #fbd9d9; }
.status-pass { background: #e3f6e6; } .status-fail { background: #fbd9d9; }
.status-error, .status-timeout { background: #fde4c8; }
.status-expected-fail { background: #f6ecc4; } .status-unexpected-pass { background: #e6dcfb; }
.status-not-applicable, .status-untested, .status-not-exercised, .status-none { color: #666; }
.finding { border: 1px solid #bbb; border-left: .4rem solid #c0392b; margin: 1rem 0;
  padding: .5rem 1rem; }
.finding h3, .difference h3 { margin: .3rem 0; }
.difference { border: 1px solid #bbb; border-left: .4rem solid #2f6db5; margin: 1rem 0;
  padding: .5rem 1rem; }
.status-difference { background: #dde8f7; }
.why { color: #444; font-size: .85em; }
blockquote { margin: .3rem 0 .3rem 1rem; padding-left: .6rem; border-left: 3px solid #ccc;
  white-space: pre-wrap; }
.messages li { font-family: ui-monospace, monospace; font-size: .85em; }
.note { color: #8a4b00; }
.timeline { overflow-x: auto; margin: .6rem 0; padding: .3rem; background: #fafafa;
  border: 1px solid #e5e5e5; }
.lane { display: grid; gap: 2px 0; align-items: center; border-top: 1px dashed #ddd;
  padding: 3px 0; min-width: max-content; }
.lane.ticks { border-top: none; color: #888; font-size: .7rem; }
.lane-label { grid-column: 1; font-size: .8rem; padding-right: .4rem; overflow-wrap: anywhere; }
.span { height: 1.25rem; border-radius: .25rem; font-size: .7rem; padding: 0 .3rem;
  overflow: hidden; white-space: nowrap; color: #111; opacity: .85; }
.span.open { border-right: 2px dashed #333; }
.event { z-index: 1; justify-self: center; font-size: .8rem; min-width: 1.1rem; text-align: center;
  border-radius: .2rem; cursor: default; }
.event.mutate { background: #fff; border: 1px solid #555; }
.event.mutate.accepted { background: #c0392b; color: #fff; }
.event.at-throw { color: #c0392b; font-weight: bold; }
.answer { font-size: .75rem; padding: .1rem .3rem; border: 1px solid #bbb; border-radius: .2rem;
  overflow-wrap: anywhere; }
.answer.error, .answer.raised, .answer.interrupted { background: #fdecea; }
.answer.ok { background: #eef8ef; }
.violation { outline: 3px solid #e01b24; outline-offset: 1px; }
.badge { font-size: .7rem; padding: 0 .3rem; border-radius: .2rem; background: #eee; }
.badge.abort { background: #fde4c8; }
.stage-pre-execute { background: #9ecae1; } .stage-approval { background: #fdd0a2; }
.stage-guard { background: #c7e9c0; } .stage-wrapper { background: #dadaeb; }
.stage-body { background: #fdae6b; } .stage-post-execute { background: #a1d99b; }
.stage-finalize { background: #bcbddc; } .stage-result { background: #d9d9d9; }
.stage-classifier, .stage-code-dispatch-log, .stage-program, .stage-present,
.stage-other { background: #f2f2f2; }
.event[class*="stage-"] { background: transparent; }
.legend span { display: inline-block; padding: 0 .4rem; margin-right: .2rem; font-size: .75rem;
  border-radius: .2rem; }
details.log li { font-size: .8rem; }
.kind-regressed { color: #c0392b; } .kind-fixed { color: #1e7b34; }
"""


def _e(value: object) -> str:
    """Escape anything for HTML text and attribute values."""
    return escape(str(value), quote=True)


def _short(value: Any, limit: int = 160) -> str:
    """A JSON preview of a value, cut to ``limit`` characters (not escaped)."""
    return tl.short(value, limit)


def _slug(value: object) -> str:
    """A token safe in a class name or an id: anything else becomes ``-``."""
    return re.sub(r"[^A-Za-z0-9_-]", "-", str(value))[:80] or "x"


def _status_class(status: object) -> str:
    return f"status-{status}" if str(status) in {str(s) for s in Status} else "status-none"


def _stage_class(stage: object) -> str:
    return f"stage-{stage}" if stage in STAGE_ORDER else "stage-other"


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _href(target: str | Path, base: Path) -> str:
    """A relative, percent-encoded link from ``base`` (a directory) to ``target``."""
    relative = Path(os.path.relpath(Path(target).resolve(), base.resolve())).as_posix()
    return quote(relative)


def page(title: str, body: list[str], css: str = "") -> str:
    """A whole self-contained page: ``body`` (HTML, escaped by the caller) under the page's
    Content-Security-Policy (no network, the one inline script allowed by its hash), with
    :data:`CSS` plus ``css``."""
    return _page(title, body, css)


def escape_text(value: object) -> str:
    """Escape anything for HTML text and attribute values."""
    return _e(value)


def _page(title: str, body: list[str], css: str = "") -> str:
    digest = base64.b64encode(hashlib.sha256(_JS.encode()).digest()).decode()
    policy = (
        "default-src 'none'; style-src 'unsafe-inline'; "
        f"script-src 'sha256-{digest}'; img-src data:; base-uri 'none'; form-action 'none'"
    )
    head = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{_e(policy)}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(title)}</title>",
        f"<style>{CSS}{css}</style>",
        f"<script>{_JS}</script>",
        "</head>",
        "<body>",
    ]
    return "\n".join([*head, *body, "</body>", "</html>"]) + "\n"


# ----------------------------------------------------------------- case files


@dataclass
class CaseFiles:
    """The counterexamples a report points at: loaded, linked, or missing."""

    cases: dict[str, dict[str, Any]] = field(default_factory=dict)  # path as written -> case
    links: dict[str, str] = field(default_factory=dict)  # path as written -> href from the page
    missing: dict[str, str] = field(default_factory=dict)  # path as written -> why not loaded


def _referenced(document: Mapping[str, Any], expected: Mapping[str, Any]) -> list[str]:
    paths: list[str] = []
    for rule in _list(document.get("rules")):
        for failure in _list(_dict(rule).get("failures")):
            case = _dict(failure).get("counterexample")
            if isinstance(case, str) and case and case not in paths:
                paths.append(case)
    for entry in expected.values():
        case = _dict(entry).get("counterexample")
        if isinstance(case, str) and case and case not in paths:
            paths.append(case)
    return paths


def load_cases(
    document: Mapping[str, Any],
    expect: Mapping[str, Any] | None,
    bases: Sequence[Path],
    page_dir: Path,
) -> CaseFiles:
    """Load every counterexample the report (and the expect file) points at.

    A path is tried as written (relative to the cwd), then relative to each of ``bases``
    (the report's directory, the expect file's); links are relative to ``page_dir``.
    Missing or unreadable files are listed in ``missing``, never an error.
    """
    found = CaseFiles()
    expected = _dict((expect or {}).get("expected"))
    for written in _referenced(document, expected):
        candidates = [Path(written)] + [base / written for base in bases]
        path = next((p for p in candidates if p.is_file()), None)
        if path is None:
            found.missing[written] = "not found"
            continue
        try:
            case = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError, RecursionError) as e:
            found.missing[written] = f"unreadable: {type(e).__name__}"
            continue
        if not isinstance(case, dict):
            found.missing[written] = "not a counterexample (not a JSON object)"
            continue
        found.cases[written] = case
        found.links[written] = _href(path, page_dir)
    return found


# ------------------------------------------------------------------- findings


@dataclass
class _Finding:
    key: str
    rules: list[dict[str, Any]] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)  # the rules' counterexamples, in order


def _verdict_kind(rule: Mapping[str, Any]) -> str:
    status = str(rule.get("status"))
    if status == Status.EXPECTED_FAIL:
        return str(_dict(rule.get("expected")).get("status", Status.FAIL))
    return status


def _primary_case(rule: Mapping[str, Any], expected: Mapping[str, Any]) -> str | None:
    """The counterexample a rule's finding shows: one of its verdict's kind, as compare does."""
    failures = [_dict(f) for f in _list(rule.get("failures"))]
    kind = _verdict_kind(rule)
    for f in [*(f for f in failures if f.get("kind") == kind), *failures]:
        case = f.get("counterexample")
        if isinstance(case, str) and case:
            return case
    case = _dict(expected.get(str(rule.get("id")))).get("counterexample")
    return case if isinstance(case, str) and case else None


def _scenario_key(case: Mapping[str, Any]) -> str:
    scenario = case.get("scenario")
    text = _short(scenario, limit=10**9)
    digest = hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:16]
    return f"scenario:{_dict(scenario).get('id')}:{digest}"


def _findings(
    rules: Iterable[Mapping[str, Any]],
    expected: Mapping[str, Any],
    cases: Mapping[str, Mapping[str, Any]],
) -> list[_Finding]:
    """Rules (their section's view: :func:`_views`) grouped by root cause: rules whose
    counterexample is the same scenario (or file), or whose written finding quotes the same
    evidence (the same line of the same source), are one finding. Groups are the connected
    parts of "shares a key"."""
    failing = list(rules)
    paths: list[str | None] = []
    keys: list[set[str]] = []
    for rule in failing:
        path = _primary_case(rule, expected)
        paths.append(path)
        mine = {f"rule:{rule.get('id')}"}
        if path is not None:
            mine.add(_scenario_key(cases[path]) if path in cases else f"file:{path}")
        entry = _dict(expected.get(str(rule.get("id")))) or _dict(rule.get("expected"))
        evidence = _dict(entry.get("evidence"))
        if evidence.get("quote") and evidence.get("source"):
            mine.add(f"evidence:{evidence['source']}|{evidence['quote']}")
        keys.append(mine)
    # union-find over the rules, joined by any key they share
    parent = list(range(len(failing)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    first: dict[str, int] = {}
    for i, mine in enumerate(keys):
        for key in sorted(mine):
            if key in first:
                parent[root(i)] = root(first[key])
            else:
                first[key] = i
    out: dict[int, _Finding] = {}
    for i, rule in enumerate(failing):
        group = root(i)
        finding = out.setdefault(group, _Finding(min(keys[group])))
        finding.rules.append(dict(rule))
        path = paths[i]
        if path is not None and path not in finding.paths:
            finding.paths.append(path)
    return list(out.values())


def _views(rules: Iterable[Mapping[str, Any]], differences: bool) -> list[dict[str, Any]]:
    """The rules one section shows, each with the failures it shows.

    The defects section: every failing rule (``fail``, ``error``, ``timeout``,
    ``expected-fail``) with its kept failures but the differences. The differences section:
    every rule with a kept difference, with those only; a rule that also has defects keeps
    its written finding (``expected``) for the defects section.
    """
    out = []
    for rule in rules:
        failures = [_dict(f) for f in _list(rule.get("failures"))]
        differing = [f for f in failures if f.get("kind") == Status.DIFFERENCE]
        if differences and differing:
            view = {**rule, "failures": differing}
            if str(rule.get("status")) != Status.DIFFERENCE:
                view.pop("expected", None)
            out.append(view)
        elif not differences and str(rule.get("status")) in _FINDING_STATUSES:
            out.append({**rule, "failures": [f for f in failures if f not in differing]})
    return out


def _expect_entry(rule: Mapping[str, Any], expected: Mapping[str, Any] | None) -> dict[str, Any]:
    if expected is not None:
        return _dict(expected.get(str(rule.get("id"))))
    return _dict(rule.get("expected"))


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


# ------------------------------------------------------------------- timeline


def _violation_attrs(marks: Sequence[tl.Mark]) -> tuple[str, str]:
    """(extra class, data attributes) for an element some violated verdicts point at:
    ``data-pointed`` says whether any of them carried a pointer (always, now that a verdict
    without one marks nothing)."""
    if not marks:
        return "", ""
    rules = sorted({r for m in marks for r in m.rules})
    title = "violated: " + " | ".join(dict.fromkeys(m.message for m in marks))
    pointed = str(any(m.pointed for m in marks)).lower()
    return (
        " violation",
        f' data-violates="{_e(" ".join(rules))}" data-why="{_e(title)}" data-pointed="{pointed}"',
    )


def timeline_html(
    key: str,
    scenario: Mapping[str, Any],
    trace: Mapping[str, Any],
    sources: Sequence[tl.Source] = (),
    *,
    keys: Sequence[str] | None = None,
    log: bool = True,
) -> str:
    """One trace as a timeline (``.timeline[data-case=key]``), marking what ``sources`` (the
    violated verdicts) point at. ``keys``: draw only these lanes (the others are counted);
    ``log``: add the list of every event in trace order (each event's title says the same)."""
    every = tl.lanes(scenario, trace)
    shown = every if keys is None else [lane for lane in every if lane.key in keys]
    this = tl.trace_key(trace)
    marks = [tl.resolve(s) for s in sources if s.trace in (None, this)]
    aborting = tl.aborting(scenario)
    count = len(_list(trace.get("events")))
    columns = f"grid-template-columns: var(--label) repeat({count}, var(--col)) var(--answer)"
    out = [
        f'<div class="timeline" data-case="{_e(key)}" data-events="{count}">',
        f'<div class="lane ticks" style="{columns}"><div class="lane-label">call \\ event</div>',
    ]
    out += [f'<div style="grid-column: {i + 2}">{i}</div>' for i in range(count)]
    out.append(f'<div style="grid-column: {count + 2}">answer</div></div>')
    for lane in shown:
        spans, rows = tl.layout(lane)
        found = tl.hits(lane, spans, marks)
        depth = max([0, *rows.values(), *(s.depth for s in spans)]) + 1
        out.append(f'<div class="lane" data-call="{_e(lane.key)}" style="{columns}">')
        badge = ' <span class="badge abort">aborted on entry</span>' if lane.abort_before else ""
        out.append(
            f'<div class="lane-label" style="grid-row: 1 / {depth + 1}">'
            f"<code>{_e(lane.label)}</code>{badge}</div>"
        )
        for span in spans:
            end = span.end if span.end is not None else (lane.events[-1][0] if lane.events else 0)
            extra, attrs = _violation_attrs(found.spans.get(span.start, []))
            aborts = (span.stage, span.ident) in aborting
            label = f"{span.stage} {span.ident}" + (" ⊘ aborts" if aborts else "")
            closed = "" if span.end is not None else " open"
            out.append(
                f'<div class="span {_stage_class(span.stage)}{closed}{extra}" '
                f'data-stage="{_e(span.stage)}" data-id="{_e(span.ident)}" '
                f'data-closed-by="{_e(span.closer or "nothing")}"{attrs} '
                f'style="grid-column: {span.start + 2} / {end + 3}; grid-row: {span.depth + 1}" '
                f'title="{_e(label)}">{_e(label)}</div>'
            )
        for index, event in lane.events:
            at = str(event.get("at") or "")
            classes = ["event", _stage_class(event.get("stage"))]
            if at:
                classes.append(f"at-{_slug(at)}")
            glyph = tl.GLYPHS.get(at, "•")
            if "mutate" in event:
                refused = event.get("raised") is True
                classes += ["mutate", "refused" if refused else "accepted"]
                glyph = "✎"
            elif "what" in event or "observed" in event:
                glyph = "◉"
            extra, attrs = _violation_attrs(found.events.get(index, []))
            mutate = f' data-mutate="{_e(event["mutate"])}"' if "mutate" in event else ""
            raised = (
                f' data-raised="{str(event.get("raised") is True).lower()}"'
                if "mutate" in event
                else ""
            )
            out.append(
                f'<div class="{" ".join(classes)}{extra}" data-stage="{_e(event.get("stage"))}" '
                f'data-index="{index}" data-at="{_e(at)}"{mutate}{raised}{attrs} '
                f'style="grid-column: {index + 2}; grid-row: {rows.get(index, 0) + 1}" '
                f'title="{_e(tl.event_text(index, event))}">{glyph}</div>'
            )
        answers = lane.answers or ([] if not lane.in_actions else [(-1, None)])
        if answers:
            extra, attrs = _violation_attrs(found.answer)
            said = [tl.answer_text(answer) for _, answer in answers]
            kind = said[-1][0]
            text = " / ".join(t for _, t in said)
            out.append(
                f'<div class="answer {_slug(kind)}{extra}" data-call="{_e(lane.key)}"{attrs} '
                f'style="grid-column: {count + 2}; grid-row: 1 / {depth + 1}" '
                f'title="{_e(text)}">{_e(text)}</div>'
            )
        out.append("</div>")
    if len(shown) < len(every):
        out.append(
            f'<p class="note hidden-lanes">{len(every) - len(shown)} more call(s) of this '
            "trace not drawn.</p>"
        )
    unpointed = sum(not m.pointed for m in marks)
    if unpointed:
        out.append(
            f'<p class="note no-pointer">no pointer: {unpointed} violated verdict(s) name no '
            "call or event, so they mark nothing.</p>"
        )
    registrations = _list(trace.get("registrations"))
    marked = tl.registration_marks(marks)
    if marked:  # the set-up registrations a violated verdict is about
        out.append('<ul class="registrations">')
        for i, on in sorted(marked.items()):
            entry = registrations[i] if i < len(registrations) else None
            extra, attrs = _violation_attrs(on)
            out.append(
                f'<li class="registration{extra}" data-index="{i}"{attrs}>set-up registration '
                f"<code>{_e(_short(entry))}</code></li>"
            )
        out.append("</ul>")
    others = [
        (i, a)
        for i, a in enumerate(_list(scenario.get("actions")))
        if not ({"call", "batch", "executionMode"} & set(_dict(a)))
    ]
    if others:
        answers_of = _list(trace.get("actions"))
        out.append('<ul class="actions">')
        for i, action in others:
            answer = answers_of[i] if i < len(answers_of) else None
            extra, attrs = _violation_attrs(tl.action_marks(marks, i))
            out.append(
                f'<li class="action{extra}" data-index="{i}"{attrs}><code>{_e(_short(action))}'
                f"</code> → <code>{_e(_short(answer))}</code></li>"
            )
        out.append("</ul>")
    if log:
        out.append('<details class="log"><summary>events in trace order</summary><ol start="0">')
        for index, event in enumerate(_list(trace.get("events"))):
            out.append(f"<li>{_e(tl.event_text(index, _dict(event)))}</li>")
        out.append("</ol></details></div>")
    else:
        out.append("</div>")
    return "\n".join(out)


def legend() -> str:
    """The timeline's key: stage colours and glyphs."""
    items = "".join(f'<span class="{_stage_class(s)}">{_e(s)}</span>' for s in STAGE_ORDER)
    return (
        f'<p class="legend">Stages in pipeline order: {items}<br>'
        "▸ enter, ◂ exit, ✕ throw, ? approval request, ! approval answer, ◉ observation, "
        "✎ mutation attempt (filled red: accepted; outlined: refused), "
        "outlined red: what a violated verdict points at.</p>"
    )


def _case_sources(
    rid: str,
    case: Mapping[str, Any] | None,
    failures: list[dict[str, Any]],
    path: str | None,
    shown: list[str],
) -> list[tl.Source]:
    """The violated verdicts of ``rid`` as marks on its case's trace: the case's own
    ``pointers`` (one per ``required`` message), else the pointers of the report's failures
    with that case, else the messages shown (without a pointer: they mark nothing)."""
    if case is not None:
        key = tl.trace_key(case.get("trace"))
        required = [str(m) for m in _list(case.get("required"))]
        given = _list(case.get("pointers"))
        if given and len(given) == len(required):
            out = []
            for message, raw in zip(required, given, strict=True):
                pointer = Pointer.from_json(raw)
                said = f"{pointer.subject}: {message}" if pointer.subject else message
                out.append(tl.Source(rid, said, pointer, key))
            return out
        out = []
        for f in failures:
            if path is None or f.get("counterexample") != path:
                continue
            for raw in _list(f.get("pointers")):
                out.append(tl.Source(rid, str(f.get("message")), Pointer.from_json(raw), key))
        if any(s.pointed for s in out):
            return out
    return [tl.Source(rid, message) for message in shown]


def _finding_html(
    number: int,
    finding: _Finding,
    expected: Mapping[str, Any] | None,
    files: CaseFiles,
    kind: str = "finding",
) -> list[str]:
    """One card: ``kind`` ``finding`` (the defects section) or ``difference``."""
    ids = [str(r.get("id")) for r in finding.rules]
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
        whys = list(
            dict.fromkeys(str(f["why"]) for f in _list(rule.get("failures")) if f.get("why"))
        )
        why = (
            f'<br><span class="why">why a difference: {_e("; ".join(whys))}</span>' if whys else ""
        )
        out.append(
            f'<li><a href="#rule-{_slug(rule.get("id"))}">{_e(rule.get("id"))}</a> '
            f"{_e(rule.get('title', ''))}: "
            f'<span class="{_status_class(rule.get("status"))}">'
            f"{_e(rule.get('status'))}</span>{why}</li>"
        )
    out.append("</ul>")
    for rule in finding.rules:
        out += _expectation_html(str(rule.get("id")), _expect_entry(rule, expected))
    # the messages violated, per rule: the case's `required`, else the report's failures
    sources: list[tl.Source] = []
    out.append('<h4>Violated</h4><ul class="messages">')
    for rule in finding.rules:
        rid = str(rule.get("id"))
        path = _primary_case(rule, _dict(expected))
        case = files.cases.get(path) if path else None
        failures = [_dict(f) for f in _list(rule.get("failures"))]
        mine = [str(f.get("message")) for f in failures if path and f.get("counterexample") == path]
        required = [str(m) for m in _list((case or {}).get("required"))]
        said = mine or required or [str(f.get("message")) for f in failures[:1]]
        for message in said:
            out.append(f"<li>{_e(rid)}: {_e(message)}</li>")
        sources += _case_sources(rid, case, failures, path, said)
        rest = len(failures) - len(mine)
        if rest > 0:
            out.append(
                f"<li><details><summary>{_e(rid)}: {rest} more kept failure(s)</summary><ul>"
            )
            for f in failures:
                if not (path and f.get("counterexample") == path):
                    out.append(
                        f"<li>{_e(f.get('kind'))} on <code>{_e(f.get('scenario'))}</code>: "
                        f"{_e(f.get('message'))}</li>"
                    )
            out.append("</ul></details></li>")
    out.append("</ul>")
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
    if not finding.paths:
        out.append('<p class="note">No counterexample was saved for this finding.</p>')
    out.append("</section>")
    return out


# --------------------------------------------------------------------- report


def _rules_of(document: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [_dict(r) for r in _list(document.get("rules"))]


def _failing(status: object, profile: str) -> bool:
    try:
        return Status(str(status)).fails_run(profile)
    except ValueError:
        return True  # a status the kit does not know: never hide it


def _sections(
    rules: list[dict[str, Any]],
    written: Mapping[str, Any],
    cases: Mapping[str, Mapping[str, Any]],
) -> tuple[list[_Finding], list[_Finding], dict[str, Any]]:
    """(the defects' findings, the differences' findings, the written entries of the
    differences) as the page numbers them."""
    findings = _findings(_views(rules, False), written, cases)
    differing_views = _views(rules, True)
    own = {str(r.get("id")) for r in differing_views if r.get("status") == Status.DIFFERENCE}
    written_differences = {rid: e for rid, e in written.items() if rid in own}
    differences = _findings(differing_views, written_differences, cases)
    return findings, differences, written_differences


def _numbers(findings: Sequence[_Finding]) -> dict[str, int]:
    return {str(r.get("id")): n for n, f in enumerate(findings, 1) for r in f.rules}


def finding_anchors(
    document: Mapping[str, Any],
    expect: Mapping[str, Any] | None,
    cases: Mapping[str, Mapping[str, Any]],
) -> dict[str, list[str]]:
    """Rule ID -> the anchors of its cards on the report page (``finding-N`` in the
    defects, ``difference-N`` in the differences): what another page links to."""
    written = _dict(expect.get("expected")) if expect is not None else {}
    findings, differences, _ = _sections(_rules_of(document), written, cases)
    out: dict[str, list[str]] = {}
    for rid, n in _numbers(findings).items():
        out.setdefault(rid, []).append(f"finding-{n}")
    for rid, n in _numbers(differences).items():
        out.setdefault(rid, []).append(f"difference-{n}")
    return out


def report_html(
    document: dict[str, Any],
    expect: dict[str, Any] | None,
    cases: Mapping[str, dict[str, Any]],
    *,
    links: Mapping[str, str] | None = None,
    missing: Mapping[str, str] | None = None,
) -> str:
    """The report page. ``document`` is a ``report.json``; ``expect`` an expect file's
    document (None: the report's own ``expected`` blocks); ``cases`` the counterexamples by
    the path the report (or expect file) writes; ``links`` their hrefs from the page.
    """
    files = CaseFiles(dict(cases), dict(links or {}), dict(missing or {}))
    impl = _dict(document.get("implementation"))
    profile = str(document.get("profile", ""))
    rules = _rules_of(document)
    expected = _dict(expect.get("expected")) if expect is not None else None
    for path in _referenced(document, expected or {}):
        if path not in files.cases and path not in files.missing:
            files.missing[path] = "not found"

    title = f"Conformance report: {impl.get('name', '?')} {impl.get('version', '?')}"
    conformant = document.get("conformant") is True
    verdict = verdict_words(
        conformant=conformant,
        known=sum(r.get("status") == Status.EXPECTED_FAIL for r in rules),
        differing=sum(r.get("status") == Status.DIFFERENCE for r in rules),
        incomplete=document.get("incomplete") is True,
    )
    body = [f"<header><h1>{_e(title)}</h1>", '<table class="meta">']
    capabilities = ", ".join(str(c) for c in sorted(map(str, _list(impl.get("capabilities")))))
    rows = [
        ("implementation", f"{impl.get('name', '?')} {impl.get('version', '?')}"),
        ("language", impl.get("language", "?")),
        ("profile", profile),
        ("seed", "none" if document.get("seed") is None else document.get("seed")),
        (
            "scenarios run",
            f"{document.get('scenarios', 0)} in {document.get('durationSeconds', 0)} s",
        ),
        ("capabilities", capabilities or "none"),
    ]
    rows += [(f"missing {c}", why) for c, why in sorted(_dict(impl.get("missing")).items())]
    if document.get("expectFile"):
        rows.append(("expectations", document["expectFile"]))
    judged_by = _dict(document.get("contract"))
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
    kit = _dict(document.get("kit"))
    if kit:
        rows.append(("kit", f"{kit.get('name', '')} {kit.get('version', '')}"))
    body += [f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in rows]
    ok = "ok" if conformant else "bad"
    body.append(
        f'<tr><th>result</th><td><span class="verdict {ok}" data-conformant="'
        f'{str(conformant).lower()}">{_e(verdict)}</span></td></tr>'
    )
    body.append("</table></header>")

    body += ["<h2>Summary</h2>", '<table class="groups"><tr><th>group</th>']
    body.append(
        '<th class="num">pass</th><th class="num">failing</th><th class="num">differ</th>'
        '<th class="num">other</th></tr>'
    )
    groups: dict[str, list[dict[str, Any]]] = {}
    for rule in rules:
        groups.setdefault(str(rule.get("group", "")), []).append(rule)
    for group, members in groups.items():
        passed = sum(r.get("status") == Status.PASS for r in members)
        failing = sum(_failing(r.get("status"), profile) for r in members)
        differs = sum(r.get("status") == Status.DIFFERENCE for r in members)
        other = len(members) - passed - failing - differs
        body.append(
            f'<tr data-group="{_e(group)}"><td>{_e(group)}</td><td class="num">{passed}</td>'
            f'<td class="num">{failing}</td><td class="num">{differs}</td>'
            f'<td class="num">{other}</td></tr>'
        )
    body.append("</table>")

    written = expected if expected is not None else {}
    findings, differences, written_differences = _sections(rules, written, files.cases)
    contract = _dict(document.get("contract"))
    body += ["<h2>Defects</h2>"]
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
        if not findings:
            body.append(legend())
    for number, finding in enumerate(differences, 1):
        body += _finding_html(
            number,
            finding,
            written_differences if expected is not None else None,
            files,
            "difference",
        )
    if files.missing:
        body.append('<p class="note missing">Counterexample files not shown: ')
        body.append(", ".join(f"<code>{_e(p)}</code> ({_e(w)})" for p, w in files.missing.items()))
        body.append("</p>")

    finding_of, difference_of = _numbers(findings), _numbers(differences)
    body += [
        "<h2>Rules</h2>",
        '<p><label><input type="checkbox" id="only-failing"> only rules with a finding '
        "(a problem or a difference)</label></p>",
        '<table class="rules"><tr><th>rule</th><th>title</th><th>status</th>',
        '<th class="num">checks</th><th>note</th></tr>',
    ]
    for rule in rules:
        rid, status = str(rule.get("id")), rule.get("status")
        failures = [_dict(f) for f in _list(rule.get("failures"))]
        note = rule.get("reason") or (failures[0].get("message") if failures else "") or ""
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
        clauses = _list(rule.get("clauses"))
        named = str(rule.get("title", ""))
        if clauses:
            named += f" (clauses judged: {', '.join(map(str, clauses))})"
        body.append(
            f'<tr class="rule" id="rule-{_slug(rid)}" data-rule="{_e(rid)}" '
            f'data-status="{_e(status)}" data-failing="{str(problem).lower()}">'
            f"<td>{_e(rid)}</td><td>{_e(named)}</td>"
            f'<td class="{_status_class(status)}">{_e(status)}</td>'
            f'<td class="num">{_e(rule.get("checks", 0))}</td><td>{_e(note)}{where}</td></tr>'
        )
    body.append("</table>")
    notes = [str(n) for n in _list(document.get("notes"))]
    if notes:
        body += ["<h2>Notes</h2>", "<ul>", *(f"<li>{_e(n)}</li>" for n in notes), "</ul>"]
    body.append("<h2>Kit errors</h2>")
    kit_errors = [str(k) for k in _list(document.get("kitErrors"))]
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
    return _page(title, body)


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
    return _page(heading, body)
