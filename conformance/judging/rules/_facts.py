"""Facts about a call within its scenario, the questions predicates share that need the
whole :class:`View`: which tool spec a call resolved to, which script recorded an
event, whether only policy can stop it, what its waterfalls decided as scripted,
whether content may be or was replaced.

Questions about one call alone are :class:`~conformance.judging.model.CallView`
methods; script analysis lives in ``_scripts``, JSON comparison in ``_json``, the
shared scenario builders in :mod:`conformance.scenario.strategies`. The names are
re-exported here so a rule module imports its facts from one place. Everything
is derived from the scenario and the events the kit recorded, never from an
implementation. The leading underscore keeps the rule auto-loader away.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from conformance.judging.model import MISSING, CallView, View, resolve, scripted_throw
from conformance.judging.rules._json import (
    args_valid,
    has_special,
    is_content,
    masked,
    project,
    same_json,
    valid_against,
)
from conformance.judging.rules._scripts import (
    SAFE_STEPS,
    SYNC_SAFE_STEPS,
    executed,
    first_terminal,
    may_abort,
    passive,
    step_kinds,
    terminal,
)
from conformance.scenario.schema import mutates_registry
from conformance.scenario.strategies import (
    FINALIZERS,
    OUTCOMES,
    TEXT,
    content_blocks,
    outcome_scenario,
)
from conformance.vocab import STAGE_KEYS, ErrorCode

__all__ = [
    "ABORTED_BEFORE_DISPATCH",
    "FINALIZERS",
    "MISSING",
    "OUTCOMES",
    "SAFE_STEPS",
    "STAGE_KEYS",
    "SYNC_SAFE_STEPS",
    "TEXT",
    "UNKNOWN_TOOL",
    "all_passive",
    "args_valid",
    "arguments_of",
    "content_blocks",
    "content_may_be_replaced",
    "content_replaced",
    "dispatchable",
    "event_index",
    "executed",
    "finalizer_may_replace",
    "first_terminal",
    "has_special",
    "is_content",
    "masked",
    "may_abort",
    "mutates_registry",
    "next_raised",
    "observers_for",
    "outcome_scenario",
    "passive",
    "project",
    "resolution_known",
    "resolve",
    "resolved_spec",
    "same_json",
    "script_of",
    "scripted_decision",
    "step_kinds",
    "terminal",
    "valid_against",
]

JSON = Any

ABORTED_BEFORE_DISPATCH = ErrorCode.ABORTED_BEFORE_DISPATCH
UNKNOWN_TOOL = ErrorCode.UNKNOWN_TOOL


# ------------------------------------------------------------------ JSON values


def arguments_of(call: CallView | Mapping[str, Any]) -> JSON:
    """The arguments the caller handed over (of a call view or a call spec), as scenario JSON."""
    spec = call.spec if isinstance(call, CallView) else call
    return spec.get("arguments", {})


# ---------------------------------------------------------------- script facts


def all_passive(view: View, key: str, agent: Any) -> bool:
    """Every listener under ``key`` that applies to ``agent`` is passive."""
    return all(passive(entry["steps"]) for entry in view.listeners(key, agent))


# -------------------------------------------------------------- tool resolution


def resolution_known(view: View, call: CallView) -> bool:
    """True when the set-up registrations alone decide what ``call`` resolved to at its start.

    Either nothing is ever registered or disposed after set-up, or the call is the
    first action that can run a script (only ``schemas`` queries before it) and
    every registration key occurs once in the trace (so set-up outcomes are plain).
    """
    if view.lifecycle_static:
        return True
    if call.batch:
        return False
    for action in view.scenario.get("actions", [])[: call.action_index]:
        if "schemas" not in action:
            return False
    keys = [r.get("key") for r in view.trace.get("registrations", [])]
    return len(keys) == len(set(keys))


def resolved_spec(
    view: View, call: CallView, *, static_only: bool = False
) -> Mapping[str, Any] | None:
    """The tool spec a model-direct call resolved to at its start; None: unknown or undecidable.

    ``static_only`` demands a registry no action or script ever changes (the
    PIPE/OUT/POST/EXEC predicates reason about the whole call, which a
    mid-call registration change could affect); otherwise :func:`resolution_known`
    suffices (FIN, CANCEL, CTX look at what was fixed at the start).
    """
    known = view.lifecycle_static if static_only else resolution_known(view, call)
    if not known:
        return None
    return view.visible_tool(str(call.spec["name"]), call.spec.get("agent"))


def script_of(
    view: View, call: CallView, stage: str, ident: Any, *, static_only: bool = True
) -> list[Mapping[str, Any]] | None:
    """The steps of the callable that recorded ``stage``/``ident`` events for ``call``, or None.

    Body and finalizer scripts come from the resolved tool (``static_only`` as in
    :func:`resolved_spec`); a listener's from the one entry of that id applying to
    the call's agent (None when the id is ambiguous).
    """
    if stage in ("body", "finalize"):
        spec = resolved_spec(view, call, static_only=static_only)
        if spec is None or spec["name"] != ident:
            return None
        key = "execute" if stage == "body" else "finalizeContent"
        return list(spec[key]) if key in spec else None
    listeners = STAGE_KEYS.get(stage)
    if listeners is None:
        return None
    found = [e for e in view.scenario.get(listeners, []) if e.get("id") == ident]
    if len(found) != 1 or found[0] not in view.listeners(listeners, call.spec.get("agent")):
        return None
    return list(found[0]["steps"])


def observers_for(view: View, call: CallView) -> list[Mapping[str, Any]]:
    """The tools/result observers that apply to ``call``'s agent."""
    return view.listeners("observers", call.spec.get("agent"))


def dispatchable(view: View, call: CallView) -> bool:
    """The call was answered (a result, or a declared closed form), names a tool its scope
    runs directly, with valid arguments, and its signal was not aborted on entry: only
    policy can stop it before dispatch."""
    if not call.answered or call.spec.get("abortBefore") or not view.lifecycle_static:
        return False
    spec = view.visible_tool(str(call.spec["name"]), call.spec.get("agent"))
    return spec is not None and args_valid(spec, arguments_of(call)) is True


# ----------------------------------------------------------- recorded outcomes


def scripted_decision(view: View, call: CallView, stage: str) -> Any:
    """A waterfall's decision as the scenario scripted it (``$special`` markers intact).

    Walks the entered listeners in order past those that delegate; MISSING when
    the deciding listener threw or its decision cannot be read from its script.
    """
    for event in call.entered(stage):
        steps = script_of(view, call, stage, event.get("id"))
        last = terminal(steps) if steps is not None else None
        if last is None:
            return MISSING
        if "return" in last:
            return last["return"]
        if "delegate" not in last and "returnNext" not in last:
            return MISSING
    return MISSING


def finalizer_may_replace(spec: Mapping[str, Any] | None) -> bool:
    """May the tool's finalizeContent return replacement content? (Unknown tool: assume so.)"""
    if spec is None:
        return True
    return any(
        "return" in step and step["return"] is not None for step in spec.get("finalizeContent", [])
    )


def content_may_be_replaced(view: View, call: CallView, spec: Mapping[str, Any]) -> bool:
    """Per the scripts: may a content authority (post-execute, finalizeContent) replace it?"""
    if finalizer_may_replace(spec):
        return True
    for entry in view.listeners("postExecute", call.spec.get("agent")):
        for step in entry["steps"]:
            decision = step.get("return")
            if isinstance(decision, Mapping) and ("content" in decision or "feedback" in decision):
                return True
    return False


def content_replaced(view: View, call: CallView) -> bool:
    """Per the trace: did an explicit content authority (post-execute, finalizer, an authoring
    wrapper) speak?"""
    for e in call.exits("post-execute"):
        returned = e.get("returned")
        if isinstance(returned, Mapping) and ("content" in returned or "feedback" in returned):
            return True
    if any(e.get("returned") is not None for e in call.exits("finalize")):
        return True
    wrappers = view.listeners("wrappers", call.spec.get("agent"))
    return any("return" in step for w in wrappers for step in w["steps"])


def next_raised(
    call: CallView, stage: str, failed: Callable[[Mapping[str, Any]], bool] | None = None
) -> list[str]:
    """The listeners of ``stage`` (a ``next()`` chain) whose script did not throw its own
    throw but had one escape -- a ``next()`` that raised -- although no listener entered
    after it failed first (threw its own throw, or returned what ``failed`` says is a
    failure): the chain's ``next()`` must answer with the rest of the chain's answer, not
    raise (method 11). A re-entered listener's recursion is such a raise too."""
    out: list[str] = []
    for event in call.broke(stage):
        at = call.index(event)
        ident = event.get("id")
        starts = [
            i
            for i, e in enumerate(call.events[:at])
            if e.get("stage") == stage and e.get("id") == ident and e.get("at") == "enter"
        ]
        start = starts[-1] if starts else 0
        deeper = [
            e
            for e in call.events[start + 1 : at]
            if e.get("stage") == stage
            and (scripted_throw(e) or (failed is not None and e.get("at") == "exit" and failed(e)))
        ]
        if not deeper:
            out.append(str(ident))
    return out


def event_index(view: View, event: Mapping[str, Any]) -> int:
    """Position of ``event`` in the whole trace's event log (by identity)."""
    return view.position(event)


# --------------------------------------------------- shared scenario builders
