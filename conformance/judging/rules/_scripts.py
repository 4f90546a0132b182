"""What a scenario script does, read statically: which steps run, how it settles, whether
it may abort a signal.

The step kinds' properties (safe, safe in a synchronous script, ends a script)
come from the step table, ``fixtures/schema/steps.json``. (The leading
underscore keeps the rule auto-loader away.)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from conformance.interpreter.session import STEPS
from conformance.judging.model import CallView
from conformance.judging.rules._json import has_special
from conformance.scenario.schema import once_per_judgement, scripts_of

__all__ = [
    "SAFE_STEPS",
    "SYNC_SAFE_STEPS",
    "executed",
    "first_terminal",
    "may_abort",
    "passive",
    "picked",
    "step_kinds",
    "terminal",
]

JSON = Any

# Steps that never end a script and never raise (in any stage that allows them),
# and the same for synchronous scripts (guards, classifiers, finalizers), where
# abort is harmless: both read from the step table (fixtures/schema/steps.json).
SAFE_STEPS = frozenset(name for name, step in STEPS.items() if step.safe)


SYNC_SAFE_STEPS = frozenset(name for name, step in STEPS.items() if step.safe_in_sync)


_ENDS = tuple(name for name, step in STEPS.items() if step.ends)


def step_kinds(steps: Sequence[Mapping[str, Any]]) -> list[str]:
    """The kind (single key) of each step."""
    return [next(iter(step)) for step in steps]


def executed(
    steps: Sequence[Mapping[str, Any]], *, special_defer_raises: bool = True
) -> list[Mapping[str, Any]]:
    """The steps a script runs before its ending step (return, throw, delegate, returnNext).

    With ``special_defer_raises`` (the default) a ``deferContext`` of a non-JSON
    value also ends the prefix: it may raise at the source (OUT-5). CTX-1/2 pass
    False and instead skip any script that defers a non-JSON value.
    """
    out: list[Mapping[str, Any]] = []
    for step in steps:
        ((kind, arg),) = step.items()
        if kind in _ENDS:
            break
        if special_defer_raises and kind == "deferContext" and has_special(arg):
            break
        out.append(step)
    return out


def terminal(steps: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The step that ends a script, or None when it runs off its end."""
    done = len(executed(steps))
    return steps[done] if done < len(steps) else None


def first_terminal(
    steps: Sequence[Mapping[str, Any]], arguments: JSON = None
) -> tuple[str, JSON] | None:
    """How a synchronous script settles, ("return" | "throw", arg), if only safe steps precede it.

    Stricter than :func:`terminal`: None unless every earlier step is in
    SYNC_SAFE_STEPS; running off the end returns None (``("return", None)``). A ``pick``
    returns what its path reads in ``arguments`` (the call's, as scenario JSON), when given.
    """
    done = executed(steps)
    if any(kind not in SYNC_SAFE_STEPS for kind in step_kinds(done)):
        return None
    last = terminal(steps)
    if last is None:
        return ("return", None)
    ((kind, arg),) = last.items()
    if kind == "pick":
        return None if arguments is None else ("return", picked(arguments, arg))
    return (kind, arg) if kind in ("return", "throw") else None


def picked(arguments: JSON, path: Sequence[Any]) -> JSON:
    """What a ``pick`` step reads at ``path`` of the (scenario JSON) arguments: null if absent."""
    value = arguments
    for key in path:
        found = (isinstance(value, Mapping) and isinstance(key, str) and key in value) or (
            isinstance(value, list) and type(key) is int and 0 <= key < len(value)
        )
        if not found:
            return None
        value = value[key]
    return value


def passive(steps: Sequence[Mapping[str, Any]]) -> bool:
    """A delegating listener: only observations, yields and attempted writes, then
    ``delegate``. A write (``mutate``, ``keep``) changes nothing on a correct registry
    (PIPE-3, RES-1: what a callable is handed is immutable or its own copy), so the
    outcome rules go on judging the call; a replaced signal is not passive (EXEC-1)."""
    if not steps or steps[-1] != {"delegate": True}:
        return False
    return all(
        set(step) <= {"observe", "yield", "mutate", "keep"}
        and not ("mutate" in step and step["mutate"].get("target") == "signal")
        for step in steps[:-1]
    )


@once_per_judgement
def may_abort(
    scenario: Mapping[str, Any],
    call: CallView | None = None,
    *,
    deadline: bool = False,
    own: bool = True,
) -> bool:
    """Can a signal abort: an ``abort`` step, ``abortBefore``, (``deadline``) a timeout policy,
    or (``own``) a wrapper's ``abortOwnSignal`` step -- which the body, under the fused signal,
    may see, but which never aborts the caller's signal (``own=False``: can *the caller's*?).

    An ``abort`` step in any script may abort any call. ``abortBefore`` counts
    for ``call`` only, or for every call when ``call`` is None. ``deadline``
    adds the timeout policy, which aborts the body's signal: the PRE/GUARD/DEF
    predicates leave it out (it cannot fire before dispatch), the flow
    predicates (PIPE, POST, EXEC, CANCEL) count it.
    """
    if deadline and scenario.get("timeoutPolicy"):
        return True
    if call is not None:
        if call.spec.get("abortBefore"):
            return True
    else:
        for action in scenario.get("actions", []):
            calls = action.get("batch", [action["call"]] if "call" in action else [])
            if any(c.get("abortBefore") for c in calls):
                return True
    kinds = ("abort", "abortOwnSignal") if own else ("abort",)
    return any(kind in step for script in scripts_of(scenario) for step in script for kind in kinds)
