"""The adapter doctor: prove that an adapter delivers what it declares (issue 23).

A plausible adapter can quietly make the kit blind: a caller write it never
routes looks like a refusal by the implementation, a ``withoutSignal`` it ignores
looks like a CANCEL-1 failure. The doctor runs one short probe scenario per
capability the adapter declares (a capability not declared is not probed) and
judges each from the trace alone -- never from the adapter's internals -- so it
works the same for ``python:``, ``stdio:`` and ``http`` adapters.

Each probe ends in one of:

* ``ok``: the trace shows the adapter delivered it;
* ``inconclusive``: the implementation refused before the probe could see the
  adapter's part (its own rules judge that), or skipped the scenario;
* ``broken``: the trace shows the adapter did not deliver it -- with what is
  wrong and the hook (and README section) that fixes it.

``toolreg-conformance doctor`` prints every probe and exits 2 when one is
``broken``; ``run`` performs the same probes before the first rule and reports
the rules that depend on a broken one as ``error`` (adapter), never ``pass``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from conformance.judging.evaluate import run_scenario
from conformance.scenario.surface import cells
from conformance.seam.adapter import Adapter, trim

__all__ = ["PROBES", "Diagnosis", "Probe", "broken_rules", "diagnose", "render"]

#: Where the README explains the hooks.
README: Final = "README.md, 'Implementing an adapter' / 'The adapter doctor'"

OK: Final = "ok"
INCONCLUSIVE: Final = "inconclusive"
BROKEN: Final = "broken"

Trace = Mapping[str, Any]


def _tool(name: str, execute: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "name": name,
        "description": f"The doctor's {name} tool.",
        "parameters": {"type": "object"},
        "output": {"schema": {}, "render": "json"},
        "execute": execute,
    }


def _call(call_id: str, name: str = "t", **extra: Any) -> dict[str, Any]:
    return {
        "call": {"callId": call_id, "name": name, "arguments": {"x": 1}, "agent": "main", **extra}
    }


def _events(trace: Trace, **match: Any) -> list[Mapping[str, Any]]:
    return [
        e
        for e in trace.get("events", [])
        if isinstance(e, Mapping) and all(e.get(k) == v for k, v in match.items())
    ]


def _entered(trace: Trace, stage: str, call: str, ident: str | None = None) -> bool:
    extra = {} if ident is None else {"id": ident}
    return bool(_events(trace, stage=stage, call=call, at="enter", **extra))


@dataclass(frozen=True)
class Probe:
    """One capability check: a scenario, and how its trace shows the adapter's delivery."""

    name: str
    #: What the adapter must deliver, in one line.
    checks: str
    #: The capabilities it needs (all declared, or it is not run); empty: every adapter.
    needs: frozenset[str]
    scenario: Mapping[str, Any]
    #: The trace -> (outcome, what the trace shows).
    judge: Callable[[Trace], tuple[str, str]]
    #: The hook (Python name / JS name) that delivers it.
    hook: str
    #: The rules whose verdicts are meaningless while it is broken.
    rules: tuple[str, ...]


# ---------------------------------------------------------------- the probes

_CALLER_WRITES: Final = [
    {"target": "caller", "path": ["name"], "value": "renamed"},
    {"target": "caller-arguments", "path": ["x"], "value": 2},
]


def _judge_caller(trace: Trace) -> tuple[str, str]:
    answers = [a for a in trace.get("actions", []) if isinstance(a, Mapping) and "raised" in a]
    if answers:  # a plain call that raises: the adapter cannot run a call at all yet
        return BROKEN, f"a plain call raised instead of answering: {answers[0]['raised']}"
    made = _events(trace, stage="caller")
    made = [e for e in made if "mutate" in e]
    if len(made) < 2 * len(_CALLER_WRITES):
        return BROKEN, (
            f"the caller's afterInvoke/afterResult writes were never made ({len(made)} of "
            f"{2 * len(_CALLER_WRITES)} recorded): the adapter must call Session.caller_writes "
            "for each call (run_actions(caller_writes=session.caller_writes))"
        )
    return OK, "every caller write reached the objects the adapter handed the implementation"


def _judge_without_signal(trace: Trace) -> tuple[str, str]:
    seen = _events(trace, stage="body", call="c0", what="signal")
    if not seen:
        return INCONCLUSIVE, "the implementation refused the call without a signal (CANCEL-1)"
    observed = seen[0].get("observed")
    if isinstance(observed, Mapping) and observed.get("aborted") is True:
        return BROKEN, (
            "the body of a call scripted withoutSignal saw the caller's own signal abort: the "
            "adapter passed the caller's signal anyway; a call with withoutSignal must reach the "
            "implementation with no signal at all (CANCEL-1 then blames the implementation)"
        )
    return OK, "a call without a signal reached the implementation without the caller's signal"


def _judge_dispose_again(stage: str, ident: str) -> Callable[[Trace], tuple[str, str]]:
    def judge(trace: Trace) -> tuple[str, str]:
        if not _entered(trace, stage, "c1", ident):
            return INCONCLUSIVE, f"the {stage} {ident!r} never ran on the first call"
        if not _entered(trace, stage, "c2", ident):
            return BROKEN, (
                f"after `dispose {ident} again` with no disposer spent, {ident!r} no longer ran: "
                "the adapter disposed the live registration (by name?); `again` must run only the "
                "disposer this key's last registration returned, which already ran, and do "
                "nothing when there is none (DEF-6, PIPE-6)"
            )
        return OK, "dispose again ran no live registration's disposer"

    return judge


def _judge_stage_write(trace: Trace) -> tuple[str, str]:
    writes = [e for e in _events(trace, stage="pre-execute", id="p1") if "mutate" in e]
    if not writes:
        return INCONCLUSIVE, "the first pre-execute listener never ran"
    if writes[0].get("raised"):
        return OK, "the implementation's own object refused the stage's write"
    seen = [
        e.get("observed")
        for stage, ident in (("pre-execute", "p2"), ("body", "t"))
        for e in _events(trace, stage=stage, id=ident, call="c1", what="arguments")
    ]
    if not seen:
        return INCONCLUSIVE, "neither the next listener nor the body ran"
    if {"x": 2} in seen:
        return OK, "the stage's write reached the object the implementation passes on"
    return BROKEN, (
        "a pre-execute listener replaced execution.arguments and the object it was handed "
        "accepted the write, yet neither the next listener nor the body ever saw it: the "
        "adapter handed the listener a copy (a write the implementation never receives can "
        "neither be refused nor accepted by it). Hand Session.pre_listener's callable the "
        "implementation's own execution object. (An implementation that hands every listener "
        "its own mutable copy shows the same trace: then this probe is wrong about it.)"
    )


def _judge_request(trace: Trace) -> tuple[str, str]:
    requests = _events(trace, stage="approval", at="request")
    if not requests:
        return INCONCLUSIVE, "no approval was requested"
    request = requests[0]
    if "arguments" not in request:
        return OK, "the request shows no arguments (Binding.request_arguments: ABSENT)"
    shown = request["arguments"]
    fields = request.get("fields") or {}
    for value in fields.values() if isinstance(fields, Mapping) else ():
        if value == shown or (isinstance(value, str) and _parsed(value) == shown):
            return OK, "the arguments shown are the request's own"
    return BROKEN, (
        f"Binding.request_arguments reported {json.dumps(shown)}, which no field of the request "
        "holds: it must read what the request itself shows its approver (PIPE-5), never the "
        "caller's arguments"
    )


def _parsed(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _judge_nested(trace: Trace) -> tuple[str, str]:
    inner = _events(trace, stage="body", id="inner", at="enter")
    if not inner:
        return INCONCLUSIVE, "the nested call never reached its body"
    if inner[0].get("hasParent") is True:
        return OK, "a nested call carries its parent"
    return BROKEN, (
        "a nested call (step forward) reached its body without a parent: the adapter's "
        "Session.nested_call must run it as a sub-dispatch of the body's execution (its "
        "parent the body's token, under the body's signal and agent)"
    )


#: The rules whose fixtures run nested calls (step forward).
_NESTED_RULES: Final = (
    "CODE-2",
    "CTX-2",
    "FIN-2",
    "GUARD-2",
    "GUARD-3",
    "PIPE-4",
    "PRE-2",
    "PRE-8",
    "SCOPE-1",
    "SCOPE-2",
)


#: The pre-execute write of the stage-writes probe (a whole new arguments object).
_REPLACE_ARGUMENTS: Final = {"target": "execution", "path": ["arguments"], "value": {"x": 2}}


def _surface_rules(stage: str) -> tuple[str, ...]:
    """The rules the attack surface's writes of ``stage`` threaten."""
    return tuple(sorted({r for c in cells() if c.stage == stage for r in c.rules}))


def _dispose_probe(kind: str, stage: str, needs: str) -> Probe:
    scenario: dict[str, Any] = {
        "id": f"doctor/dispose-again-{stage}",
        "tools": [_tool("t", [{"return": "ok"}])],
        "actions": [
            _call("c1"),
            {"dispose": "t" if kind == "tool" else "p", "again": True},
            _call("c2"),
        ],
    }
    if kind != "tool":
        scenario["preExecute"] = [{"id": "p", "steps": [{"delegate": True}]}]
        scenario["actions"][1]["of"] = "preExecute"
    ident = "t" if kind == "tool" else "p"
    return Probe(
        name=f"dispose-again-{kind}",
        checks=f"`dispose again` of a {kind} runs only the spent disposer, never the live one",
        needs=frozenset({needs} | ({"pre-execute"} if kind != "tool" else set())),
        scenario=scenario,
        judge=_judge_dispose_again(stage, ident),
        hook="dispose(key, again) / the listeners' dispose(kind, id, again): keep the disposer "
        "each registration returned; `again` runs the last spent one",
        rules=("DEF-6",) if kind == "tool" else ("PIPE-6",),
    )


PROBES: Final[tuple[Probe, ...]] = (
    Probe(
        name="caller-writes",
        checks="the caller's writes reach the objects the adapter handed the implementation",
        needs=frozenset(),
        scenario={
            "id": "doctor/caller-writes",
            "tools": [_tool("t", [{"observe": "arguments"}, {"return": "ok"}])],
            "actions": [_call("c1", afterInvoke=_CALLER_WRITES, afterResult=_CALLER_WRITES)],
        },
        judge=_judge_caller,
        hook="Session.track_caller (JS trackCaller) on the input object built for each call, "
        "Session.caller for its arguments, and Session.caller_writes around each call",
        rules=_surface_rules("caller"),
    ),
    Probe(
        name="without-signal",
        checks="a call scripted withoutSignal reaches the implementation with no signal",
        needs=frozenset(),
        scenario={
            "id": "doctor/without-signal",
            "tools": [_tool("t", [{"abort": True}, {"observe": "signal"}, {"return": "ok"}])],
            "actions": [_call("c0", withoutSignal=True)],
        },
        judge=_judge_without_signal,
        hook="the call input: pass no signal when the scenario's call says withoutSignal",
        rules=("CANCEL-1",),
    ),
    Probe(
        name="stage-writes",
        checks="a stage's write is attempted on the implementation's own object, not a copy",
        needs=frozenset({"pre-execute"}),
        scenario={
            "id": "doctor/stage-writes",
            "tools": [_tool("t", [{"observe": "arguments"}, {"return": "ok"}])],
            "preExecute": [
                {
                    "id": "p1",
                    "steps": [
                        {
                            "mutate": {
                                "target": "execution",
                                "path": ["arguments"],
                                "value": {"x": 2},
                            }
                        },
                        {"delegate": True},
                    ],
                },
                {"id": "p2", "steps": [{"observe": "arguments"}, {"delegate": True}]},
            ],
            "actions": [_call("c1")],
        },
        judge=_judge_stage_write,
        hook="register Session.pre_listener(spec) (JS session.preListener) so that it is "
        "handed the implementation's own execution object, never a copy or a converted dict",
        rules=_surface_rules("pre-execute"),
    ),
    _dispose_probe("tool", "body", "registry-mutation"),
    _dispose_probe("listener", "pre-execute", "listener-disposers"),
    Probe(
        name="request-arguments",
        checks="Binding.request_arguments reads the approval request itself",
        needs=frozenset({"approval", "pre-execute"}),
        scenario={
            "id": "doctor/request-arguments",
            "tools": [_tool("t", [{"observe": "arguments"}, {"return": "ok"}])],
            "preExecute": [{"id": "p", "steps": [{"return": {"kind": "ask", "reason": "doctor"}}]}],
            "approval": {"steps": [{"return": "allowed-once"}]},
            "actions": [_call("c1")],
        },
        judge=_judge_request,
        hook="Binding.request_arguments (JS requestArguments)",
        rules=("PIPE-5", "PRE-5"),
    ),
    Probe(
        name="nested-calls",
        checks="a nested call (step forward) carries its parent",
        needs=frozenset({"nested-calls"}),
        scenario={
            "id": "doctor/nested-calls",
            "tools": [
                _tool("outer", [{"forward": {"name": "inner"}}]),
                {**_tool("inner", [{"return": "in"}]), "key": "inner"},
            ],
            "actions": [_call("c1", "outer")],
        },
        judge=_judge_nested,
        hook="Session.nested_call (JS nestedCall): a sub-dispatch whose parent is the body's",
        rules=_NESTED_RULES,
    ),
)


@dataclass(frozen=True)
class Diagnosis:
    """One probe's outcome on one adapter."""

    probe: Probe
    outcome: str  # ok | inconclusive | broken | not-declared
    detail: str

    @property
    def broken(self) -> bool:
        return self.outcome == BROKEN


def diagnose(adapter: Adapter, probes: Iterable[Probe] = PROBES) -> list[Diagnosis]:
    """Run every probe whose capabilities the adapter declares; judge each from its trace."""
    capabilities = adapter.describe().capabilities
    out = []
    for probe in probes:
        if not probe.needs <= capabilities:
            missing = ", ".join(sorted(probe.needs - capabilities))
            out.append(Diagnosis(probe, "not-declared", f"not probed: {missing} not declared"))
            continue
        trace, no_trace = run_scenario(adapter, trim(probe.scenario, capabilities))
        if trace is None:
            assert no_trace is not None
            if no_trace.category == "skipped":
                out.append(Diagnosis(probe, INCONCLUSIVE, no_trace.message))
            else:  # the adapter could not run its own capability's probe
                out.append(Diagnosis(probe, BROKEN, no_trace.message))
            continue
        outcome, detail = probe.judge(trace)
        out.append(Diagnosis(probe, outcome, detail))
    return out


def broken_rules(diagnoses: Iterable[Diagnosis]) -> dict[str, str]:
    """Each rule that depends on a broken probe, with the doctor's message."""
    out: dict[str, str] = {}
    for d in diagnoses:
        if d.broken:
            for rule in d.probe.rules:
                out.setdefault(rule, f"adapter: {d.probe.name}: {d.detail} (fix: {d.probe.hook})")
    return out


def render(diagnoses: Iterable[Diagnosis]) -> str:
    """The doctor's report, one block per probe."""
    lines = []
    for d in diagnoses:
        lines.append(f"{d.outcome:>12}  {d.probe.name}: {d.probe.checks}")
        lines.append(f"{'':>14}{d.detail}")
        if d.broken:
            lines.append(f"{'':>14}fix: {d.probe.hook}; see {README}")
            lines.append(f"{'':>14}rules judged blind meanwhile: {', '.join(d.probe.rules)}")
    return "\n".join(lines)
