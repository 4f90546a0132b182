"""Method 6, every path a call can take: the same call made model-direct, as a batch member,
as a nested call of a composite tool (a ``forward`` step) and as a ``run_code`` sub-dispatch
must agree on what SPEC fixes for every execution.

A *twin* is a nested execution (it has a parent) whose tool, arguments and agent equal those
of a model-direct call of the same scenario. Where SPEC says every execution is treated
alike -- which listeners and guards see it (PRE-8, GUARD-3, CODE-2), whether it runs (SCOPE-1,
PIPE-4, PRE-2, GUARD-2), what it resolves to (SCOPE-2), that it is finalized and published
once (FIN-2, RES-1) -- the twins must agree. Where SPEC lets them differ (``meta`` is not
computed for nested Code Mode dispatches, OUT-3; the identity carries a parent) nothing is
compared. Batch members are model-direct calls already: every rule judges them.

Each rule asks :func:`disagreements` for the facts it owns. (The leading underscore keeps
the rule auto-loader away.)
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from conformance.judging.model import CallView, View
from conformance.judging.rules._base import Verdict, require
from conformance.judging.rules._json import has_special, same_json
from conformance.judging.rules._programs import program_calls, program_outcomes, program_steps
from conformance.judging.rules._scripts import executed, may_abort
from conformance.vocab import RUN_CODE

__all__ = ["FACTS", "Twin", "disagreements", "during", "twins"]


@dataclass(frozen=True)
class Twin:
    """A nested execution and the model-direct call it is the same call as."""

    path: str  # "nested call" (a forward step) or "run_code sub-dispatch"
    nested_id: str
    direct: CallView
    events: tuple[Mapping[str, Any], ...]
    #: (isError, value when a success) of the nested result, as far as the trace says it.
    outcome: tuple[bool, Any] | None


def _key(name: Any, arguments: Any, agent: Any) -> str:
    return json.dumps([name, arguments, agent], sort_keys=True)


def _forwards(view: View, call: CallView) -> Iterator[tuple[str, str, Any, Any]]:
    """(nested id, tool, arguments, recorded nested result) of the call's forward steps."""
    spec = view.visible_tool(str(call.spec["name"]), call.spec.get("agent"))
    if spec is None:
        return
    steps = [step["forward"] for step in executed(spec["execute"]) if "forward" in step]
    recorded = [e for e in call.events if e.get("stage") == "body" and "forward" in e]
    for step, event in zip(steps, recorded, strict=False):
        if event.get("forward") == step["name"]:
            yield (
                str(event.get("nested")),
                step["name"],
                step.get("arguments", {}),
                event.get("result"),
            )


def _program(view: View, call: CallView) -> tuple[str, Any, Any] | None:
    """(tool, arguments, outcome) of a run_code call whose program makes exactly one call."""

    steps = program_steps(call.spec)
    if steps is None:
        return None
    calls = program_calls(steps)
    if len(calls) != 1 or any("return" in s or "fail" in s for s in steps):
        return None
    outcomes = program_outcomes((call.result or {}).get("value"), 1)
    outcome = outcomes[0] if isinstance(outcomes, list) else None
    return str(calls[0]["call"]), calls[0].get("arguments", {}), outcome


def twins(view: View) -> list[Twin]:
    """Every nested execution of the scenario with a model-direct twin (static set-ups only,
    no aborts, no per-call approval scripts: then the twins meet the same stages)."""
    return _twins(view)


def _twins(view: View) -> list[Twin]:
    scenario = view.scenario
    if (
        not view.lifecycle_static
        or view.mode == "code"
        or may_abort(scenario, deadline=True)
        or "byCall" in scenario.get("approval", {})
    ):
        return []
    direct: dict[str, CallView] = {}
    for call in view.calls:
        if call.returned and not has_special(call.arguments):
            key = _key(call.spec["name"], call.arguments, call.spec.get("agent"))
            direct.setdefault(key, call)
    if not direct:
        return []
    events = view.trace.get("events", [])
    out: list[Twin] = []
    for call in view.calls:
        agent = call.spec.get("agent")
        if not call.returned:
            continue
        nested: list[tuple[str, str, str, Any, Any]] = []
        for nested_id, name, arguments, result in _forwards(view, call):
            outcome = None
            if isinstance(result, Mapping) and isinstance(result.get("isError"), bool):
                outcome = (result["isError"], result.get("value"))
            nested.append(("nested call", nested_id, name, arguments, outcome))
        if call.spec["name"] == RUN_CODE and not call.is_error:
            found = _program(view, call)
            mine = _sub_dispatches(view, call)
            if found is not None and len(mine) == 1:
                name, arguments, result = found
                outcome = None
                if isinstance(result, Mapping) and "ok" in result:
                    outcome = (False, result["ok"])
                elif isinstance(result, Mapping) and "error" in result:
                    outcome = (True, None)
                nested.append(("run_code sub-dispatch", mine[0], name, arguments, outcome))
        for path, nested_id, name, arguments, outcome in nested:
            twin = direct.get(_key(name, arguments, agent))
            if twin is None or twin.id == nested_id:
                continue
            mine_events = tuple(e for e in events if e.get("call") == nested_id)
            out.append(Twin(path, nested_id, twin, mine_events, outcome))
    return out


def during(view: View, call: CallView) -> list[Mapping[str, Any]]:
    """The events of executions with a parent recorded while ``call``'s action ran (after the
    earlier actions' last event, up to ``call``'s own last one): its nested calls, whatever
    ids the registry gave them."""
    if not call.events:
        return []
    earlier = [
        view.position(c.events[-1])
        for c in view.calls
        if c.action_index < call.action_index and c.events
    ]
    first, last = max(earlier, default=-1) + 1, view.position(call.events[-1])
    return [
        e
        for e in view.trace.get("events", [])[first:last]
        if e.get("hasParent") is True and e.get("call") not in (None, call.id)
    ]


def _sub_dispatches(view: View, call: CallView) -> list[str]:
    """The ids of the executions with a parent that ran while ``call`` ran."""
    return sorted({str(e.get("call")) for e in during(view, call)})


def _entered(events: tuple[Mapping[str, Any], ...], stage: str) -> list[str]:
    return sorted(
        str(e.get("id")) for e in events if e.get("stage") == stage and e.get("at") == "enter"
    )


def _facts(twin: Twin) -> dict[str, Any]:
    """The facts of the nested execution, keyed like :data:`FACTS`."""
    events = twin.events
    return {
        "pre-execute": _entered(events, "pre-execute"),
        "guard": _entered(events, "guard"),
        "post-execute": _entered(events, "post-execute"),
        "body": bool(_entered(events, "body")),
        "finalize": len(_entered(events, "finalize")),
        "result": len(_entered(events, "result")),
    }


def _direct_facts(call: CallView) -> dict[str, Any]:
    return {
        "pre-execute": _entered(tuple(call.events), "pre-execute"),
        "guard": _entered(tuple(call.events), "guard"),
        "post-execute": _entered(tuple(call.events), "post-execute"),
        "body": call.body_entered,
        "finalize": call.finalizer_calls,
        "result": call.notifications,
    }


#: The facts twins must share, each with what it means.
FACTS: dict[str, str] = {
    "pre-execute": "the pre-execute listeners that saw it",
    "guard": "the guards that judged it",
    "post-execute": "the post-execute listeners that saw it",
    "body": "whether the body ran",
    "finalize": "how often finalizeContent ran",
    "result": "how many tools/result notifications it had",
    "outcome": "whether it failed, and a success's value",
}


def disagreements(
    view: View,
    facts: tuple[str, ...],
    why: str,
    when: Callable[[CallView], bool] | None = None,
    paths: tuple[str, ...] = ("nested call", "run_code sub-dispatch"),
) -> Iterator[Verdict]:
    """One verdict per twin on the ``facts`` this rule owns: the nested execution must agree
    with its model-direct twin (``why``: the rule's reason, for the message). ``when`` limits
    it to twins whose model-direct call is in the rule's premise; ``paths`` to some paths."""
    for twin in _cached(view):
        if twin.path not in paths or (when is not None and not when(twin.direct)):
            continue
        mine, theirs = _facts(twin), _direct_facts(twin.direct)
        problems = [
            f"{FACTS[fact]}: {mine[fact]!r} there, {theirs[fact]!r} model-direct"
            for fact in facts
            if fact != "outcome" and mine[fact] != theirs[fact]
        ]
        if "outcome" in facts and twin.outcome is not None and twin.direct.result is not None:
            failed, value = twin.outcome
            if failed != twin.direct.is_error:
                problems.append(
                    f"it {'failed' if failed else 'succeeded'} there, the model-direct call "
                    f"{'failed' if twin.direct.is_error else 'succeeded'}"
                )
            elif not failed and not same_json(value, twin.direct.result.get("value")):
                problems.append(
                    f"its value is {value!r} there, {twin.direct.result.get('value')!r} "
                    "model-direct (another definition ran)"
                )
        yield require(
            not problems,
            f"{twin.direct.id}/{twin.nested_id}",
            f"the same call as a {twin.path} must agree with the model-direct "
            f"{twin.direct.id} ({why}): " + "; ".join(problems),
            # the nested execution's lane: its events of the disagreeing stages and the
            # model-direct twin's (all of them when the stages are not events: the outcome)
            call=str(twin.nested_id),
            events=_pointed(view, twin, facts),
        )


def _pointed(view: View, twin: Twin, facts: tuple[str, ...]) -> list[int]:
    """The positions of the events of both twins in the stages ``facts`` name (every event
    of the nested execution when none does, or when the facts are only the outcome)."""
    stages = set(facts) - {"outcome"}
    chosen = [e for e in (*twin.events, *twin.direct.events) if e.get("stage") in stages]
    return [view.position(e) for e in chosen or twin.events]


def _cached(view: View) -> list[Twin]:
    """The view's twins, found once per view (every rule asks)."""
    found: list[Twin] | None = getattr(view, "_path_twins", None)
    if found is None:
        found = twins(view)
        view._path_twins = found  # type: ignore[attr-defined]
    return found
