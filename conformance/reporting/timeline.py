"""A trace as a timeline: one lane per call, the stages as spans, and what a violation marks.

The report page (:mod:`conformance.reporting.html`), ``toolreg-conformance explain`` (as
text, :func:`text_timeline`) and the spec site (:mod:`conformance.reporting.site`) draw
the same model:

* :func:`lanes` -- one :class:`Lane` per call of the scenario (a ``call``, an
  ``executionMode`` query, each member of a ``batch``), then one per call id the events
  carry that no action made (``""``: events without one), each with its events in trace
  order and its answers (``trace.actions[i]``);
* :func:`layout` -- a lane's spans (each ``enter`` ... ``exit``/``throw`` pair, an
  approval's ``request`` ... ``answer``), nested by depth, and each event's row;
* :func:`hits` -- what the violated verdicts mark in one lane.

**What a violation marks.** A violated verdict carries *pointers*
(:class:`~conformance.running.outcomes.Pointer`: ``Verdict.call``, ``Verdict.events``): the
events at those indices are marked, and so is the answer of the call it names when it
names no event, or of the action that is no call it names (``Pointer.action``: a
``schemas`` listing, a ``register``), or the outcome of the set-up registration it names
(``Pointer.registration``). A verdict without pointers marks nothing -- its wording is
never read for a call or a stage (issue 24) -- and the timeline says so ("no pointer").
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from conformance.running.outcomes import Pointer
from conformance.vocab import STAGES

__all__ = [
    "GLYPHS",
    "STAGE_ORDER",
    "Hits",
    "Lane",
    "Mark",
    "Source",
    "Span",
    "aborting",
    "action_marks",
    "answer_text",
    "event_text",
    "focus",
    "hits",
    "lanes",
    "layout",
    "registration_marks",
    "resolve",
    "short",
    "text_timeline",
    "trace_key",
]

#: Stages in pipeline order, then the ones outside one call's pipeline.
STAGE_ORDER: Final = (*STAGES, "classifier", "code-dispatch-log", "program", "present")

GLYPHS: Final = {"enter": "▸", "exit": "◂", "throw": "✕", "request": "?", "answer": "!"}


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def short(value: Any, limit: int = 160) -> str:
    """A JSON preview of a value, cut to ``limit`` characters (not escaped)."""
    try:
        text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=repr)
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def trace_key(trace: Any) -> str:
    """One trace's identity (its whole JSON text): pointers index into one trace only."""
    return short(trace, limit=10**9)


# ---------------------------------------------------------------------- lanes


@dataclass
class Lane:
    key: str  # the callId events carry ("" for events without one)
    label: str
    events: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    answers: list[tuple[int, Any]] = field(default_factory=list)  # (action index, answer)
    abort_before: bool = False
    in_actions: bool = False


def lanes(scenario: Mapping[str, Any], trace: Mapping[str, Any]) -> list[Lane]:
    """One lane per call of the scenario, then per call id only the events carry."""
    found: dict[str, Lane] = {}
    answers = _list(trace.get("actions"))

    def lane(key: str, label: str) -> Lane:
        return found.setdefault(key, Lane(key, label))

    for index, action in enumerate(_list(scenario.get("actions"))):
        action = _dict(action)
        answer = _dict(answers[index]) if index < len(answers) else None
        if "call" in action or "executionMode" in action:
            call = _dict(action.get("call") or action.get("executionMode"))
            kind = "call" if "call" in action else "executionMode"
            key = str(call.get("callId", ""))
            this = lane(key, f"{kind} {key} → {call.get('name', '?')}")
            this.in_actions = True
            this.abort_before = this.abort_before or call.get("abortBefore") is True
            this.answers.append((index, answer))
        elif "batch" in action:
            results = _list((answer or {}).get("results"))
            for j, member in enumerate(_list(action.get("batch"))):
                call = _dict(member)
                key = str(call.get("callId", ""))
                this = lane(key, f"batch[{j}] {key} → {call.get('name', '?')}")
                this.in_actions = True
                this.abort_before = this.abort_before or call.get("abortBefore") is True
                this.answers.append((index, results[j] if j < len(results) else answer))
    for index, raw in enumerate(_list(trace.get("events"))):
        event = _dict(raw)
        seen = event.get("call")
        key = "" if seen is None else str(seen)
        label = f"{key} (not a call of the scenario)" if key else "(no call id)"
        lane(key, label).events.append((index, event))
    return list(found.values())


def aborting(scenario: Mapping[str, Any]) -> set[tuple[str, str]]:
    """(stage, id) of the scripted callables that abort the caller's signal."""
    out: set[tuple[str, str]] = set()

    def aborts(steps: Any) -> bool:
        return any(_dict(s).get("abort") for s in _list(steps))

    for tool in _list(scenario.get("tools")):
        tool = _dict(tool)
        if aborts(tool.get("execute")):
            out.add(("body", str(tool.get("name"))))
        if aborts(tool.get("finalizeContent")):
            out.add(("finalize", str(tool.get("name"))))
    keys = {
        "preExecute": "pre-execute",
        "guards": "guard",
        "wrappers": "wrapper",
        "postExecute": "post-execute",
        "observers": "result",
    }
    for key, stage in keys.items():
        for listener in _list(scenario.get(key)):
            listener = _dict(listener)
            if aborts(listener.get("steps")):
                out.add((stage, str(listener.get("id"))))
    return out


@dataclass
class Span:
    stage: str
    ident: str
    start: int  # trace index
    end: int | None  # trace index of its exit/throw/answer, None: never closed
    depth: int
    closer: str = ""


def layout(lane: Lane) -> tuple[list[Span], dict[int, int]]:
    """Bars (enter..exit pairs) and each event's row (its depth) in one lane."""
    spans: list[Span] = []
    stack: list[Span] = []
    rows: dict[int, int] = {}
    for index, event in lane.events:
        at, stage, ident = event.get("at"), str(event.get("stage")), str(event.get("id", ""))
        if at in ("enter", "request"):
            span = Span(stage, ident, index, None, len(stack))
            spans.append(span)
            stack.append(span)
            rows[index] = span.depth
            continue
        opener = None
        if at in ("exit", "throw"):
            opener = next(
                (s for s in reversed(stack) if (s.stage, s.ident) == (stage, ident)), None
            )
        elif at == "answer":
            opener = next((s for s in reversed(stack) if s.stage == stage), None)
        if opener is not None:
            opener.end, opener.closer = index, str(at)
            stack.remove(opener)
            rows[index] = opener.depth
            continue
        rows[index] = stack[-1].depth if stack else 0
    return spans, rows


def event_text(index: int, event: Mapping[str, Any]) -> str:
    """One line about an event (not escaped)."""
    parts = [f"#{index}", str(event.get("stage")), repr(str(event.get("id", "")))]
    if event.get("at"):
        parts.append(str(event["at"]))
    parts += _details(event)
    if event.get("tool") is not None:
        parts.append(f"tool {event['tool']}")
    if event.get("agent") is not None:
        parts.append(f"agent {event['agent']}")
    return " ".join(parts)


def _details(event: Mapping[str, Any], limit: int = 160) -> list[str]:
    parts = []
    if "mutate" in event:
        op = f" ({event['op']})" if event.get("op") else ""
        refused = event.get("raised") is True
        parts.append(
            f"mutate {event['mutate']}{op}: {'refused (raised)' if refused else 'ACCEPTED'}"
        )
    if "what" in event:
        parts.append(f"observed {event['what']} = {short(event.get('observed'), limit)}")
    elif "observed" in event:
        parts.append(f"observed {short(event.get('observed'), limit)}")
    if "returned" in event:
        parts.append(f"returned {short(event.get('returned'), limit)}")
    for key in ("reason", "arguments", "keys", "barrier", "met", "aborted"):
        if key in event:
            parts.append(f"{key} {short(event[key], limit)}")
    return parts


def answer_text(answer: Any) -> tuple[str, str]:
    """(css class, text) of one action's answer (not escaped)."""
    if answer is None:
        return "missing", "no answer"
    if not isinstance(answer, dict):
        return "other", short(answer)
    if "raised" in answer and "result" not in answer:
        return "raised", f"raised: {short(answer['raised'])}"
    if "interrupted" in answer:
        return "interrupted", f"interrupted: {short(answer['interrupted'])}"
    if "mode" in answer:
        return "ok", f"mode: {short(answer['mode'])}"
    result = answer.get("result", answer)
    if isinstance(result, dict) and result.get("isError") is True:
        error = _dict(result.get("error"))
        code = _dict(error.get("info")).get("code")
        return "error", f"isError, code {short(code)}: {short(error.get('message'))}"
    if isinstance(result, dict) and "isError" in result:
        return "ok", f"value: {short(result.get('value', result.get('content')))}"
    return "other", short(answer)


# ---------------------------------------------------------------------- marks


@dataclass(frozen=True)
class Source:
    """One violated verdict as a report holds it: its rule, its message, its pointer (None:
    it has none) and the trace the pointer indexes (:func:`trace_key`; None: any)."""

    rule: str
    message: str
    pointer: Pointer | None = None
    trace: str | None = None

    @property
    def pointed(self) -> bool:
        return self.pointer is not None and (
            self.pointer.call is not None
            or bool(self.pointer.events)
            or self.pointer.action is not None
            or self.pointer.registration is not None
        )


@dataclass
class Mark:
    """What one violated verdict marks in one trace."""

    rules: set[str]
    message: str
    call: str | None  # a lane key, or None: every lane
    events: frozenset[int]  # exactly these events
    pointed: bool  # False: the verdict carried no pointer, and marks nothing
    action: int | None = None  # an action that is no call: its answer is marked
    registration: int | None = None  # a set-up registration (trace.registrations[i])


def resolve(source: Source) -> Mark:
    """What ``source`` marks: what its pointer names (nothing, without one)."""
    pointer = source.pointer if source.pointed else None
    if pointer is None:
        return Mark({source.rule}, source.message, None, frozenset(), False)
    return Mark(
        {source.rule},
        source.message,
        pointer.call,
        frozenset(pointer.events),
        True,
        pointer.action,
        pointer.registration,
    )


def action_marks(marks: Iterable[Mark], index: int) -> list[Mark]:
    """The marks on the answer of action ``index`` (an action that is no call)."""
    return [m for m in marks if m.pointed and m.action == index]


def registration_marks(marks: Iterable[Mark]) -> dict[int, list[Mark]]:
    """Set-up registration index -> the marks on its outcome."""
    out: dict[int, list[Mark]] = {}
    for mark in marks:
        if mark.pointed and mark.registration is not None:
            out.setdefault(mark.registration, []).append(mark)
    return out


@dataclass
class Hits:
    """What the marks hit in one lane: event index -> marks, span start -> marks, and the
    marks on the lane's answer."""

    events: dict[int, list[Mark]] = field(default_factory=dict)
    spans: dict[int, list[Mark]] = field(default_factory=dict)
    answer: list[Mark] = field(default_factory=list)


def hits(lane: Lane, spans: Sequence[Span], marks: Iterable[Mark]) -> Hits:
    """What ``marks`` hit in ``lane``.

    A mark hits the events at its indices (and the spans they open), and the answer of
    the call it names when it names no event; a mark without a pointer hits nothing.
    """
    out = Hits()
    for mark in marks:
        if not mark.pointed:
            continue
        found = [i for i, _ in lane.events if i in mark.events]
        on_answer = not mark.events and mark.call == lane.key and lane.in_actions
        for i in found:
            out.events.setdefault(i, []).append(mark)
        for span in spans:
            if span.start in found:
                out.spans.setdefault(span.start, []).append(mark)
        if on_answer:
            out.answer.append(mark)
    return out


def focus(all_lanes: Sequence[Lane], marks: Sequence[Mark], limit: int) -> tuple[list[Lane], int]:
    """At most ``limit`` lanes, the marked ones first (in trace order), then the others in
    order: (the lanes to draw, in their order, and how many are left out)."""
    if len(all_lanes) <= limit:
        return list(all_lanes), 0
    marked = []
    for lane in all_lanes:
        spans, _ = layout(lane)
        found = hits(lane, spans, marks)
        if found.events or found.answer:
            marked.append(lane.key)
    keep = set(marked[:limit])
    for lane in all_lanes:
        if len(keep) >= limit:
            break
        keep.add(lane.key)
    shown = [lane for lane in all_lanes if lane.key in keep]
    return shown, len(all_lanes) - len(shown)


# ------------------------------------------------------------------ as text


def text_timeline(
    scenario: Mapping[str, Any],
    trace: Mapping[str, Any],
    sources: Sequence[Source] = (),
    *,
    limit: int = 4,
    width: int | None = None,
    keys: Sequence[str] | None = None,
    indent: str = "    ",
) -> list[str]:
    """The trace as text: one column (lane) per call, one row per event in trace order
    (depth shown by indentation), the answers last; ``✗`` before what the violated
    ``sources`` mark, ``⊘`` after the entry of a scripted callable that aborts the
    caller's signal. At most ``limit`` lanes (the marked ones first), or exactly the lanes
    ``keys`` names (another trace's: its passing twin shows the same calls)."""
    every = lanes(scenario, trace)
    marks = [resolve(s) for s in sources]
    if keys is not None:
        shown = [lane for lane in every if lane.key in keys]
        hidden = len(every) - len(shown)
    else:
        shown, hidden = focus(every, marks, limit)
    if not shown:
        return [f"{indent}(no call and no event)"]
    if width is None:  # about 96 columns in all, 28 to 60 per lane
        width = max(28, min(60, 88 // len(shown) - 2))
    columns: list[dict[int, str]] = []
    answers: list[str] = []
    aborts = aborting(scenario)
    for lane in shown:
        spans, rows = layout(lane)
        found = hits(lane, spans, marks)
        cells = {}
        for index, event in lane.events:
            text = _cell(event, rows.get(index, 0), index in found.events)
            if event.get("at") == "enter" and (event.get("stage"), event.get("id")) in aborts:
                text += " ⊘ aborts the signal"
            cells[index] = text
        columns.append(cells)
        said = [answer_text(a)[1] for _, a in lane.answers] or ["-"]
        answers.append(("✗ " if found.answer else "") + "⇒ " + " / ".join(said))
    labels = [
        _clip(lane.label + (" (aborted on entry)" if lane.abort_before else ""), width)
        for lane in shown
    ]
    indices = sorted({i for cells in columns for i in cells})
    number = max(2, len(str(indices[-1])) if indices else 1)
    blank = indent + " " * number + "  "
    out = [blank + "  ".join(_pad(label, width) for label in labels)]
    for i in indices:
        row = [_pad(_clip(cells.get(i, ""), width), width) for cells in columns]
        out.append(f"{indent}{i:>{number}}  " + "  ".join(row))
    out.append(blank + "  ".join(_pad(_clip(a, width), width) for a in answers))
    out = [line.rstrip() for line in out]
    if hidden:
        out.append(f"{indent}({hidden} more call(s) not shown)")
    actions, answers_of = _list(scenario.get("actions")), _list(trace.get("actions"))
    for i in sorted({m.action for m in marks if m.pointed and m.action is not None}):
        action = actions[i] if i < len(actions) else None
        answer = answers_of[i] if i < len(answers_of) else None
        out.append(f"{indent}✗ action #{i} {short(action, 60)} ⇒ {short(answer, 60)}")
    registrations = _list(trace.get("registrations"))
    for i in sorted(registration_marks(marks)):
        entry = registrations[i] if i < len(registrations) else None
        out.append(f"{indent}✗ set-up registration #{i} {short(entry, 100)}")
    unpointed = [s for s in sources if not s.pointed]
    if unpointed:
        out.append(
            f"{indent}(no pointer: {len(unpointed)} violated verdict(s) name no call or event, "
            "so they mark nothing)"
        )
    return out


def _cell(event: Mapping[str, Any], depth: int, marked: bool) -> str:
    at = str(event.get("at") or "")
    glyph = GLYPHS.get(at, "•")
    if "mutate" in event:
        glyph = "✎"
    elif "what" in event or "observed" in event:
        glyph = "◉"
    text = f"{glyph} {event.get('stage')} {event.get('id', '')}".rstrip()
    details = [d for d in _details(event, 40) if not d.startswith("returned ")]
    if event.get("returned") is not None:
        details.insert(0, f"→ {short(event['returned'], 40)}")
    if details:
        text += " " + "; ".join(details)
    return ("✗ " if marked else "") + "  " * depth + text


def _clip(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _pad(text: str, width: int) -> str:
    return text + " " * max(0, width - len(text))
