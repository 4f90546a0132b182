"""Evaluate one scenario: run it on an adapter, then judge the trace. The one path.

The runner, ``replay``, the pytest plugin and the self-test all come through
:func:`evaluate` (the last two through the runner): a scenario yields either a
trace or the reason there is none (:class:`NoTrace`: skipped, an error or a
timeout, with its category), and the trace is judged by every selected rule --
each predicate reading one :class:`~conformance.judging.model.View`, built once --
and by the checkers of the same table (a fixture's ``expect`` block).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import conformance.judging.fixture_checks  # noqa: F401  (registers the expect-block checker)
from conformance.judging.model import View, refusable
from conformance.judging.rule_sets import Selection
from conformance.judging.rules import CHECKERS, RULES, Verdict
from conformance.scenario.bounds import non_json
from conformance.scenario.schema import (
    FixtureError,
    conforms,
    one_judgement,
    validate,
)
from conformance.seam.adapter import (
    DEFAULT_CLOSED_FORMS,
    Adapter,
    ImplementationFailure,
    ScenarioSkipped,
    trim,
)
from conformance.seam.overrun import Overran, bounded, budget
from conformance.vocab import ACTION_DEADLINE_S, Status, is_action_timeout

__all__ = ["Evaluation", "KitError", "NoTrace", "evaluate", "judge", "run_scenario"]


class KitError(Exception):
    """A bug in the kit itself (a predicate or strategy crashed), never the implementation's."""


@dataclass(frozen=True)
class NoTrace:
    """Why a scenario produced no trace: skipped, or an error/timeout of the implementation.

    ``category``: ``skipped``, ``malformed-trace``, the in-process
    ``adapter-raised``, ``undelivered`` (a write the adapter never routed), or a
    transport failure category (crash, timeout,
    protocol, errored).
    """

    status: Status  # SKIPPED | ERROR | TIMEOUT
    message: str
    category: str
    stderr: str = ""
    reason: str = ""  # skipped: the implementation's own words

    @property
    def kind(self) -> str:
        return str(self.status)


@dataclass
class Evaluation:
    """One scenario evaluated: its trace (or why there is none) and every verdict on it."""

    scenario: Mapping[str, Any]
    trace: dict[str, Any] | None
    no_trace: NoTrace | None = None
    verdicts: dict[str, list[Verdict]] = field(default_factory=dict)
    closed_forms: frozenset[str] = DEFAULT_CLOSED_FORMS

    @property
    def raised(self) -> list[str]:
        """What each action that raised instead of answering said, in action order.

        For an implementation that declares the closed form ``raised``, raising *is* an
        answer (the rules judge it); only a raise at the per-action deadline stays here.
        """
        actions = (self.trace or {}).get("actions", [])
        asked = self.scenario.get("actions", [])
        said = []
        for index, answer in enumerate(actions):
            if not answer.get("raised"):
                continue
            action = asked[index] if index < len(asked) else {}
            message = str(answer["raised"])
            # a request the registry may refuse outright may be refused by a raise (its rule
            # judges it)
            if not (refusable(action) and not is_action_timeout(message)):
                said.append(message)
        if "raised" in self.closed_forms:
            return [r for r in said if is_action_timeout(r)]
        return said

    @property
    def raised_status(self) -> Status | None:
        """How the first raising action counts: a timeout (the per-action deadline) or an error."""
        raised = self.raised
        if not raised:
            return None
        return Status.TIMEOUT if is_action_timeout(raised[0]) else Status.ERROR

    def violations(self, rule_id: str) -> list[Verdict]:
        return [v for v in self.verdicts.get(rule_id, []) if not v.ok]


def run_scenario(
    adapter: Adapter, scenario: Mapping[str, Any]
) -> tuple[dict[str, Any] | None, NoTrace | None]:
    """Run one scenario: (a schema-valid trace, None) or (None, why there is no trace)."""
    try:
        # an adapter with a transport bounds each answer itself (its deadline_s); an in-process
        # one runs the implementation on this thread, bounded here
        own = getattr(adapter, "deadline_s", None) is not None
        with contextlib.nullcontext() if own else bounded(budget(scenario, ACTION_DEADLINE_S)):
            trace = adapter.run(scenario)
    except Overran as e:  # a hang that never yielded: no per-action deadline could end it
        return None, NoTrace(Status.TIMEOUT, str(e), "timeout")
    except ScenarioSkipped as e:
        why = f"the implementation skipped it: {e.reason}"
        return None, NoTrace(Status.NOT_APPLICABLE, why, "skipped", reason=e.reason)
    except ImplementationFailure as e:
        status = Status.TIMEOUT if e.category == "timeout" else Status.ERROR
        return None, NoTrace(status, str(e), e.category, e.stderr)
    except Exception as e:
        why = f"the adapter raised {type(e).__name__}: {e}"
        return None, NoTrace(Status.ERROR, why, "adapter-raised")
    if not conforms(trace, "trace"):  # the fast check (jsonschema-rs); the message comes from:
        try:
            validate(trace, "trace", f"trace of {scenario.get('id')}")
        except FixtureError as e:
            return None, NoTrace(Status.ERROR, f"malformed trace: {e}", "malformed-trace")
    where = non_json(trace)  # an in-process adapter may record the implementation's objects
    if where is not None:
        why = f"malformed trace of {scenario.get('id')}: it holds {where}"
        return None, NoTrace(Status.ERROR, why, "malformed-trace")
    lost = undelivered(trace)
    if lost:  # a write the adapter never routed is neither the implementation's refusal nor a pass
        why = f"the adapter did not deliver {', '.join(lost)} (see `doctor`)"
        return None, NoTrace(Status.ERROR, why, "undelivered")
    return trace, None


#: The hook of a Python adapter (its JS twin in parentheses) that routes each ``mutate`` target
#: an adapter can fail to deliver (README "The adapter doctor").
ROUTING_HOOKS: Mapping[str, str] = {
    "caller": "Session.track_caller (trackCaller)",
    "caller-arguments": "Session.caller (caller)",
}


def undelivered(trace: Mapping[str, Any]) -> list[str]:
    """The writes of a trace the adapter never routed (``delivered: false``), each with the
    hook that routes it, in trace order, without repeats."""
    lost: dict[str, None] = {}
    for event in trace.get("events", []):
        if isinstance(event, Mapping) and event.get("delivered") is False:
            where = str(event.get("mutate"))
            target = where.split("[", 1)[0]
            hook = ROUTING_HOOKS.get(target, "the adapter")
            lost[f"the {event.get('stage')} write {where} (hook {hook})"] = None
    return list(lost)


def judge(
    scenario: Mapping[str, Any],
    trace: Mapping[str, Any],
    rule_ids: Iterable[str] | Selection | None = None,
    *,
    closed_forms: frozenset[str] = DEFAULT_CLOSED_FORMS,
) -> dict[str, list[Verdict]]:
    """Every selected rule's verdicts on one (scenario, trace); KitError if a check crashes.

    One :class:`View` is built and handed to every predicate; then each
    checker of the table adds its verdicts to the rules it speaks for.

    ``rule_ids`` may be a :data:`~conformance.judging.rule_sets.Selection` (rule -> the clauses
    selected, None for all): then only the verdicts of a selected clause are kept, and
    those judging the rule as a whole (``clause`` None).
    """
    with one_judgement():
        return _judge(View(scenario, trace, closed_forms), rule_ids)


def _judge(view: View, rule_ids: Iterable[str] | Selection | None) -> dict[str, list[Verdict]]:
    scenario = view.scenario
    out: dict[str, list[Verdict]] = {}
    for rule_id in rule_ids if rule_ids is not None else RULES:
        check = RULES[rule_id].check
        if check is None:
            continue
        try:
            out[rule_id] = list(check(view))
        except Exception as e:
            where = f"predicate {rule_id} crashed on scenario {scenario.get('id')!r}"
            raise KitError(f"{where}: {type(e).__name__}: {e}") from e
    for check_block in CHECKERS:
        try:
            found = check_block(view)
        except Exception as e:
            where = f"checker {check_block.__name__} crashed on scenario {scenario.get('id')!r}"
            raise KitError(f"{where}: {type(e).__name__}: {e}") from e
        for rule_id, verdicts in found.items():
            if rule_id in out:
                out[rule_id] = out[rule_id] + list(verdicts)
    if isinstance(rule_ids, Mapping):
        for rule_id, clauses in rule_ids.items():
            if clauses is not None and rule_id in out:
                out[rule_id] = [v for v in out[rule_id] if v.clause is None or v.clause in clauses]
    return out


def evaluate(
    adapter: Adapter,
    scenario: Mapping[str, Any],
    *,
    rules: Iterable[str] | Selection | None = None,
) -> Evaluation:
    """Run ``scenario`` on ``adapter`` and judge it with ``rules`` (default: every rule; a
    :data:`~conformance.judging.rule_sets.Selection` keeps only its clauses' verdicts).

    The scenario is first trimmed (:func:`~conformance.seam.adapter.trim`) to the adapter's
    capabilities, and judged with the closed forms the adapter declares.
    Raises :class:`KitError` when a predicate or checker crashes.
    """
    try:
        info = adapter.describe()
    except Exception:  # the run below reports why the implementation cannot answer
        forms = DEFAULT_CLOSED_FORMS
    else:
        scenario, forms = trim(scenario, info.capabilities), info.closed_forms
    trace, no_trace = run_scenario(adapter, scenario)
    if trace is None:
        return Evaluation(scenario, None, no_trace, closed_forms=forms)
    verdicts = judge(scenario, trace, rules, closed_forms=forms)
    return Evaluation(scenario, trace, None, verdicts, closed_forms=forms)
