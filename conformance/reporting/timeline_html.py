"""One trace drawn as a timeline (HTML): one lane per call, the trace's events in trace
order along the x axis, each ``enter``...``exit``/``throw`` pair a bar coloured by its
stage, the call's answer at the lane's end; what the violated verdicts point at carries
the class ``violation`` (see :mod:`conformance.reporting.html` for the page around it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from conformance.reporting import timeline as tl
from conformance.reporting.page import as_dict as _dict
from conformance.reporting.page import as_list as _list
from conformance.reporting.page import esc as _e
from conformance.reporting.page import short as _short
from conformance.reporting.page import slug as _slug
from conformance.reporting.page import stage_class as _stage_class
from conformance.reporting.timeline import STAGE_ORDER
from conformance.running.outcomes import Failure, Pointer

__all__ = ["case_sources", "legend", "timeline_html"]


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
        out += _lane_html(lane, marks, aborting, columns, count)
    if len(shown) < len(every):
        out.append(
            f'<p class="note hidden-lanes">{len(every) - len(shown)} more call(s) of this '
            "trace not drawn.</p>"
        )
    out += _unpointed_html(marks, trace)
    out += _actions_html(scenario, trace, marks)
    if log:
        out.append('<details class="log"><summary>events in trace order</summary><ol start="0">')
        for index, event in enumerate(_list(trace.get("events"))):
            out.append(f"<li>{_e(tl.event_text(index, _dict(event)))}</li>")
        out.append("</ol></details></div>")
    else:
        out.append("</div>")
    return "\n".join(out)


def _lane_html(
    lane: tl.Lane,
    marks: Sequence[tl.Mark],
    aborting: set[tuple[str, str]],
    columns: str,
    count: int,
) -> list[str]:
    """One call's lane: its label, its bars, its events and its answer."""
    out: list[str] = []
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
    return out


def _unpointed_html(marks: Sequence[tl.Mark], trace: Mapping[str, Any]) -> list[str]:
    """The note for verdicts that point at nothing, and the set-up registrations a violated
    verdict is about."""
    out: list[str] = []
    unpointed = sum(not m.pointed for m in marks)
    if unpointed:
        out.append(
            f'<p class="note no-pointer">no pointer: {unpointed} violated verdict(s) name no '
            "call or event, so they mark nothing.</p>"
        )
    registrations = _list(trace.get("registrations"))
    marked = tl.registration_marks(marks)
    if marked:
        out.append('<ul class="registrations">')
        for i, on in sorted(marked.items()):
            entry = registrations[i] if i < len(registrations) else None
            extra, attrs = _violation_attrs(on)
            out.append(
                f'<li class="registration{extra}" data-index="{i}"{attrs}>set-up registration '
                f"<code>{_e(_short(entry))}</code></li>"
            )
        out.append("</ul>")
    return out


def _actions_html(
    scenario: Mapping[str, Any], trace: Mapping[str, Any], marks: Sequence[tl.Mark]
) -> list[str]:
    """The scenario's other actions (no call) with what each answered."""
    out: list[str] = []
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
    return out


def legend() -> str:
    """The timeline's key: stage colours and glyphs."""
    items = "".join(f'<span class="{_stage_class(s)}">{_e(s)}</span>' for s in STAGE_ORDER)
    return (
        f'<p class="legend">Stages in pipeline order: {items}<br>'
        "▸ enter, ◂ exit, ✕ throw, ? approval request, ! approval answer, ◉ observation, "
        "✎ mutation attempt (filled red: accepted; outlined: refused), "
        "outlined red: what a violated verdict points at.</p>"
    )


def case_sources(
    rid: str,
    case: Mapping[str, Any] | None,
    failures: Sequence[Failure],
    path: str | None,
    shown: list[str],
) -> list[tl.Source]:
    """The violated verdicts of ``rid`` as marks on its case's trace: the case's own
    ``pointers`` (one per ``required`` message), else the pointers of the rule's kept
    ``failures`` (the report model's) with that case, else the messages shown (without a
    pointer: they mark nothing)."""
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
            if path is None or f.counterexample != path:
                continue
            out += [tl.Source(rid, f.message, pointer, key) for pointer in f.pointers]
        if any(s.pointed for s in out):
            return out
    return [tl.Source(rid, message) for message in shown]
