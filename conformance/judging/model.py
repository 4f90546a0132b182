"""Reading a (scenario, trace) pair: the few questions every predicate asks.

:class:`View` joins a scenario with the trace an implementation produced for
it: each model-direct call with its result and the events recorded for it,
and the static facts of the set-up (which tools exist, for which scope, which
listeners apply to which agent). Everything here is derived from data, never
from running an implementation.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Final, TypedDict

from conformance.scenario.schema import (
    listener_lifecycle,
    mutates_registry,
    once_per_judgement,
)
from conformance.seam.adapter import DEFAULT_CLOSED_FORMS
from conformance.vocab import STAGES, is_action_timeout, mode_of

__all__ = [
    "IDENTITY_FIELDS",
    "MISSING",
    "STAGES",
    "CallView",
    "Pointing",
    "Positions",
    "View",
    "resolve",
    "scripted_throw",
]

#: The identity fields of an execution as a trace records them, each with the field a
#: ``mutate`` step writes to change it.
IDENTITY_FIELDS: Final[Mapping[str, str]] = {
    "callId": "callId",
    "name": "name",
    "agent": "agent",
    "hasParent": "parent",
}

# What a question answers when the trace does not say (no exit recorded, text not JSON).
MISSING: Any = object()


def resolve(
    specs: Iterable[Mapping[str, Any]], name: str, agent: str | None
) -> Mapping[str, Any] | None:
    """The spec among active registrations ``specs`` a call of ``name`` from ``agent`` reaches.

    Agent-scoped registrations shadow global ones (DEF-5); the first global wins.
    """
    found: Mapping[str, Any] | None = None
    for spec in specs:
        if spec["name"] != name:
            continue
        scope = spec.get("scope")
        if (scope is None and found is None) or (scope is not None and scope == agent):
            found = spec
    return found


#: What :meth:`CallView.of_kind` answers for a kind the call has no event of.
_NONE: Final[tuple[Mapping[str, Any], ...]] = ()

# A batch member that closed without a result: {"raised": message} or {"interrupted": ...}.
_CLOSED_ENTRIES: Final = ({"raised"}, {"interrupted"})


@dataclass
class CallView:
    """One model-direct call: its spec, its result (if it returned) and its events."""

    spec: Mapping[str, Any]
    result: Mapping[str, Any] | None
    raised: str | None  # the action raised or hit the deadline instead of returning
    events: list[Mapping[str, Any]] = field(default_factory=list)
    action_index: int = 0
    batch: bool = False
    #: The run stopped waiting for an approval answer instead of answering the call.
    interrupted: str | None = None
    #: The closed forms the implementation declared (AdapterInfo.closed_forms).
    forms: frozenset[str] = DEFAULT_CLOSED_FORMS
    #: ``events`` by (stage, at), in order, and how many events that index covers (it is
    #: built again whenever ``events`` grew: the view appends them as it reads the trace).
    _kinds: dict[tuple[Any, Any], list[Mapping[str, Any]]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    _indexed: int = field(default=-1, init=False, repr=False, compare=False)
    #: each event's position in ``events`` (by identity), and the writes that took effect of
    #: each callable (stage, id): (position, the ``mutate`` text), in order; built with _kinds
    _positions: dict[int, int] = field(default_factory=dict, init=False, repr=False, compare=False)
    _writes: dict[tuple[Any, Any], list[tuple[int, str]]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def _index(self) -> None:
        """(Re)build the indices of ``events`` when it grew since they were built."""
        if self._indexed == len(self.events):
            return
        kinds: dict[tuple[Any, Any], list[Mapping[str, Any]]] = {}
        positions: dict[int, int] = {}
        writes: dict[tuple[Any, Any], list[tuple[int, str]]] = {}
        for i, e in enumerate(self.events):
            kinds.setdefault((e.get("stage"), e.get("at")), []).append(e)
            positions.setdefault(id(e), i)
            if e.get("raised") is False:
                writes.setdefault((e.get("stage"), e.get("id")), []).append(
                    (i, str(e.get("mutate", "")))
                )
        self._kinds, self._positions, self._writes = kinds, positions, writes
        self._indexed = len(self.events)

    def of_kind(self, stage: str, at: str) -> Sequence[Mapping[str, Any]]:
        """The call's events of ``stage`` that are of kind ``at`` (``enter``, ``exit``,
        ``throw``...), in order (shared with every caller: read only)."""
        if self._indexed != len(self.events):
            self._index()
        return self._kinds.get((stage, at), _NONE)

    @property
    def id(self) -> str:
        return str(self.spec["callId"])

    @property
    def returned(self) -> bool:
        return self.result is not None

    def raised_instead(self) -> str | None:
        """What the call raised instead of publishing a result (None: it returned, or it
        hit the per-action deadline -- a timeout, not an answer). A rule that requires a
        published result fails on it, with this message (issue 11)."""
        if self.result is not None or self.raised is None or is_action_timeout(self.raised):
            return None
        return str(self.raised)

    @property
    def is_error(self) -> bool:
        return bool(self.result and self.result.get("isError"))

    def closed_otherwise(self) -> str | None:
        """The message of a declared closed form other than an error result: the run raised
        (``raised``) or stopped for an approval answer (``interrupted``); None otherwise."""
        if self.result is not None:
            return None
        if "interrupted" in self.forms and self.interrupted is not None:
            return str(self.interrupted)
        return self.raised_instead() if "raised" in self.forms else None

    @property
    def closed(self) -> bool:
        """The call did not run to a success, and the caller knows: an error result, or
        another closed form the implementation declared (the portable profile)."""
        return self.is_error or self.closed_otherwise() is not None

    @property
    def answered(self) -> bool:
        """A result, or a declared closed form in its place."""
        return self.returned or self.closed_otherwise() is not None

    @property
    def code(self) -> str | None:
        if not self.result or not self.result.get("isError"):
            return None
        error = self.result.get("error")
        info = error.get("info") if isinstance(error, Mapping) else None
        code = info.get("code") if isinstance(info, Mapping) else None
        return code if isinstance(code, str) else None

    def entered(self, stage: str, ident: str | None = None) -> list[Mapping[str, Any]]:
        entered = self.of_kind(stage, "enter")
        if ident is None:
            return list(entered)
        return [e for e in entered if e.get("id") == ident]

    @property
    def body_entered(self) -> bool:
        return bool(self.of_kind("body", "enter"))

    @property
    def finalizer_calls(self) -> int:
        return len(self.of_kind("finalize", "enter"))

    @property
    def notifications(self) -> int:
        """tools/result notifications: one per observer per notification, so divide."""
        return len(self.of_kind("result", "enter"))

    def stage_order(self) -> list[str]:
        """Stages in the order they were first entered."""
        seen: list[str] = []
        for e in self.events:
            stage = e.get("stage")
            if e.get("at") in ("enter", "request") and stage not in seen:
                seen.append(str(stage))
        return seen

    def threw(self, *stages: str) -> bool:
        """Did a callable of one of these stages throw its own scripted throw during this call?

        A throw that was not the script's own (``unscripted``: a ``next()`` that raised, a
        nested call that raised) is not "the listener threw": no rule forgives it as one
        (method 11; :meth:`broke` asks about those)."""
        return any(scripted_throw(e) for stage in stages for e in self.of_kind(stage, "throw"))

    def broke(self, stage: str) -> list[Mapping[str, Any]]:
        """The throw events of ``stage`` that were not their script's own throw."""
        return [e for e in self.of_kind(stage, "throw") if e.get("unscripted")]

    def exits(self, stage: str) -> list[Mapping[str, Any]]:
        return list(self.of_kind(stage, "exit"))

    def observations(self, what: str) -> list[Mapping[str, Any]]:
        return [e for e in self.events if e.get("what") == what and "observed" in e]

    @property
    def arguments(self) -> Any:
        """The arguments the caller handed over, as scenario JSON."""
        return self.spec.get("arguments", {})

    def message(self) -> str:
        """The error message of the call's result, or of the declared closed form that took
        its place ("" when there is none)."""
        if self.result is None:
            return self.closed_otherwise() or ""
        error = self.result.get("error")
        text = error.get("message") if isinstance(error, Mapping) else None
        return text if isinstance(text, str) else ""

    def finalizer_threw(self) -> bool:
        """Did the tool's finalizeContent throw (FIN-4)?

        Then the registry publishes one result of its own choosing: the
        unfinalized result or an error in its place. Rules about what the result
        says (codes, messages, content) do not judge such a call; fail-closed
        facts (an error stays an error, the body's run or not) still hold.
        """
        return self.threw("finalize")

    def post_touched(self) -> bool:
        """Did post-execute see the call (so it may have rewritten the result)?"""
        return bool(self.entered("post-execute"))

    def effective_exit(self, stage: str) -> Any:
        """What a waterfall stage returned as a whole: the first-entered listener's exit value.

        MISSING when no listener was entered or the first one never exited.
        """
        entered = self.entered(stage)
        if not entered:
            return MISSING
        first = entered[0].get("id")
        exits = [e for e in self.exits(stage) if e.get("id") == first]
        return exits[-1].get("returned") if exits else MISSING

    def decision(self) -> Any:
        """The pre-execute waterfall's decision: allow for an empty chain (PRE-1), None if
        unsettled."""
        if not self.entered("pre-execute"):
            return {"kind": "allow"}
        decision = self.effective_exit("pre-execute")
        return None if decision is MISSING else decision

    def index(self, event: Mapping[str, Any]) -> int:
        """Position of ``event`` among the call's events (by identity; ValueError when it is
        not one of them, as ``list.index``)."""
        self._index()
        found = self._positions.get(id(event))
        if found is None or self.events[found] is not event:
            raise ValueError(f"not an event of call {self.id!r}: {event!r}")
        return found

    def identity(self) -> dict[str, Any]:
        """The call's identity as the scenario made it: what every stage must see (a
        model-direct call has no parent)."""
        return {
            "callId": self.id,
            "name": self.spec.get("name"),
            "agent": self.spec.get("agent"),
            "hasParent": False,
        }

    def wrote_before(self, event: Mapping[str, Any], target: str) -> bool:
        """Did the callable that recorded ``event`` itself make a write that took effect
        (it did not raise) whose ``mutate`` text starts with ``target`` (``"result"``,
        ``"execution['name']"``), before ``event``? Then what it sees there is its own write."""
        self._index()
        found = self._positions.get(id(event))
        before = found if found is not None and self.events[found] is event else len(self.events)
        return any(
            i < before and mutate.startswith(target)
            for i, mutate in self._writes.get((event.get("stage"), event.get("id")), ())
        )

    @once_per_judgement
    def identity_changes(self, stages: Collection[str]) -> list[str]:
        """Where a callable of ``stages`` saw this call with another identity than the
        scenario gave it: in the identity its events were recorded with (the execution it was
        handed) and in every ``observe: execution``. A callable reading back its own write
        (one that took effect) is not counted: the write is its own; what a *later* callable
        sees is. Nested calls of a ``run_code`` call are not this call."""
        expected = self.identity()
        nested = self.spec.get("name") == "run_code"
        out: list[str] = []
        for e in self.events:
            if e.get("stage") not in stages or (nested and e.get("hasParent")):
                continue
            seen: dict[str, Any] = {}
            observed = e.get("observed")
            if e.get("at") == "enter" and "tool" in e:
                seen = {
                    "name": e.get("tool"),
                    "agent": e.get("agent"),
                    "hasParent": e.get("hasParent"),
                }
            elif e.get("what") == "execution" and isinstance(observed, Mapping):
                seen = {key: observed.get(key) for key in IDENTITY_FIELDS}
            for key, value in seen.items():
                if value != expected[key] and not self.wrote_before(
                    e, f"execution[{IDENTITY_FIELDS[key]!r}]"
                ):
                    out.append(f"{e.get('stage')} {e.get('id')!r} saw {key}={value!r}")
        return out


def scripted_throw(event: Mapping[str, Any]) -> bool:
    """Is ``event`` a throw of its script's own ``throw`` step (not one that escaped from a
    ``next()`` or a nested call: ``unscripted``)?"""
    return event.get("at") == "throw" and not event.get("unscripted")


def refusable(action: Mapping[str, Any], call: Mapping[str, Any] | None = None) -> bool:
    """May the registry refuse this action (or this call of it) outright -- by a raise, or an
    error result before any stage -- with one rule alone judging the refusal?

    A call made without a signal (CANCEL-1: it must be refused); a batch asked for a pool of
    fewer than one (CONC-2: refused, or run as a pool of one); a spent disposer run again
    (DEF-6: it removes nothing, and may say so by raising). A raise that answers such a
    request is not the implementation failing to answer (:attr:`Evaluation.raised`)."""
    if call is not None and call.get("withoutSignal") is True:
        return True
    if "call" in action:
        return action["call"].get("withoutSignal") is True
    if "dispose" in action:
        return action.get("again") is True
    return "batch" in action and small_pool(action)


def small_pool(action: Mapping[str, Any]) -> bool:
    """Does this batch ask for a pool of fewer than one call (CONC-2's latitude)?"""
    pool = action.get("maxParallel", 1)
    return isinstance(pool, int) and not isinstance(pool, bool) and pool < 1


class Pointing(TypedDict):
    """A failing verdict's pointers as ``require``/``fail`` take them (``**view.at(...)``)."""

    call: str
    events: Positions


class Positions:
    """Event positions, worked out when first read: ``require`` reads a verdict's pointers
    only when it fails, so a verdict that holds (most of them) never pays for them."""

    __slots__ = ("_found", "_work")

    def __init__(self, work: Callable[[], list[int]]) -> None:
        self._work = work
        self._found: list[int] | None = None

    def __iter__(self) -> Iterator[int]:
        if self._found is None:
            self._found = self._work()
        return iter(self._found)


class View:
    """A scenario and its trace, joined."""

    def __init__(
        self,
        scenario: Mapping[str, Any],
        trace: Mapping[str, Any],
        closed_forms: frozenset[str] = DEFAULT_CLOSED_FORMS,
    ) -> None:
        self.scenario = scenario
        self.trace = trace
        self.closed_forms = closed_forms

    @cached_property
    def mode(self) -> str:
        return mode_of(self.scenario)

    @property
    def approval_mounted(self) -> bool:
        return "approval" in self.scenario

    @cached_property
    def calls(self) -> list[CallView]:
        """Model-direct calls in action order (batch members included). Requests the
        registry refused outright are not among them, and one rule alone judges each: a call
        made without a signal (CANCEL-1, :attr:`unsignalled`), the members of a batch asked
        for a pool of fewer than one that the driver refused (CONC-2, :meth:`refused_batch`;
        a driver that ran it as a pool of one is judged by every rule), and the calls made
        after a listener was registered or disposed between calls (PIPE-6,
        :attr:`relisted`)."""
        changed = listener_lifecycle(self.scenario)
        return [
            c
            for c in self.every_call
            if not c.spec.get("withoutSignal")
            and c.action_index not in self._refused_batches
            and (changed is None or c.action_index < changed)
        ]

    @cached_property
    def relisted(self) -> list[CallView]:
        """Calls made after a listener, guard or the timeout policy was registered or disposed
        between calls (or while one waits to be): PIPE-6 alone judges them (the others read
        the set-up's listeners)."""
        changed = listener_lifecycle(self.scenario)
        if changed is None:
            return []
        calls = [c for c in self.every_call if c.action_index >= changed]
        return [c for c in calls if not c.spec.get("withoutSignal")]

    @cached_property
    def _refused_batches(self) -> frozenset[int]:
        return frozenset(
            index
            for index, action, _ in self.answers("batch")
            if small_pool(action) and self.refused_batch(index)
        )

    def refused_batch(self, index: int) -> bool:
        """Did the driver refuse the batch of action ``index`` outright: a raise (not the
        per-action deadline), or an error result for every call with none of them reaching a
        stage?"""
        answers = self.trace.get("actions", [])
        answer = answers[index] if index < len(answers) else {}
        raised = answer.get("raised")
        if isinstance(raised, str):
            return not is_action_timeout(raised)
        members = [c for c in self.every_call if c.action_index == index]
        results = answer.get("results")
        return (
            isinstance(results, list)
            and len(results) == len(members)
            and all(isinstance(r, Mapping) and r.get("isError") is True for r in results)
            and not any(e.get("at") == "enter" for c in members for e in c.events)
        )

    @cached_property
    def unsignalled(self) -> list[CallView]:
        """Calls the caller made without a signal: CANCEL-1 alone judges them."""
        return [c for c in self.every_call if c.spec.get("withoutSignal")]

    @cached_property
    def every_call(self) -> list[CallView]:
        """Every call of the scenario, with or without a signal."""
        out: list[CallView] = []
        answers: Sequence[Mapping[str, Any]] = self.trace.get("actions", [])
        for index, action in enumerate(self.scenario.get("actions", [])):
            answer = answers[index] if index < len(answers) else {}
            if "call" in action:
                out.append(
                    CallView(
                        action["call"],
                        answer.get("result"),
                        answer.get("raised"),
                        action_index=index,
                        interrupted=answer.get("interrupted"),
                        forms=self.closed_forms,
                    )
                )
            elif "batch" in action:
                results = answer.get("results") or []
                for j, call in enumerate(action["batch"]):
                    result = results[j] if j < len(results) else None
                    raised, interrupted = answer.get("raised"), answer.get("interrupted")
                    if isinstance(result, Mapping) and set(result) in _CLOSED_ENTRIES:
                        raised, interrupted = result.get("raised"), result.get("interrupted")
                        result = None  # this member closed without a result
                    out.append(
                        CallView(
                            call,
                            result,
                            raised,
                            action_index=index,
                            batch=True,
                            interrupted=interrupted,
                            forms=self.closed_forms,
                        )
                    )
        by_id = {c.id: c for c in out}
        for event in self.trace.get("events", []):
            call = by_id.get(str(event.get("call")))
            if call is not None:
                call.events.append(event)
        return out

    @cached_property
    def _positions(self) -> dict[int, int]:
        return {id(e): i for i, e in enumerate(self.trace.get("events", []))}

    def position(self, event: Mapping[str, Any]) -> int:
        """Position of ``event`` (one of the trace's own, by identity) in the whole event log."""
        return self._positions[id(event)]

    def at(
        self,
        call: CallView,
        events: Iterable[Mapping[str, Any]] = (),
        *,
        stage: str | None = None,
        ident: str | None = None,
        at: str | None = None,
    ) -> Pointing:
        """What a failure about ``call`` points at: the call, and the positions in
        ``trace["events"]`` of ``events`` (the trace's own: what broke the rule), else of
        the call's events of ``stage`` (of the callable ``ident``, of kind ``at``:
        ``enter``, ``exit``, ``throw``...).

        When that selects nothing, the failure is about an absence (a stage that should
        have run and did not, a notification that never came): it points at the call's
        last event, which shows where the call stopped; and at no event when the call has
        none, so that its answer is what is marked.

        The positions are worked out only when read (:class:`Positions`); ``events`` may
        therefore be a generator, read then."""

        def positions() -> list[int]:
            chosen = list(events)
            if not chosen and stage is not None:
                chosen = [
                    e
                    for e in call.events
                    if e.get("stage") == stage
                    and (ident is None or e.get("id") == ident)
                    and (at is None or e.get("at") == at)
                ]
            if not chosen:
                chosen = call.events[-1:]
            return sorted({self.position(e) for e in chosen})

        return {"call": call.id, "events": Positions(positions)}

    @cached_property
    def _first_event_after(self) -> list[int | None]:
        """[k]: the position of the first event of a call of an action after action ``k``."""
        last_action: dict[str, int] = {}
        for c in self.calls:
            last_action[c.id] = max(last_action.get(c.id, -1), c.action_index)
        actions = len(self.scenario.get("actions", []))
        first_of: list[int | None] = [None] * (actions + 1)
        for position, event in enumerate(self.trace.get("events", [])):
            call = event.get("call")
            action = last_action.get(call) if isinstance(call, str) else None
            if action is not None and first_of[action] is None:
                first_of[action] = position
        out: list[int | None] = [None] * (actions + 1)
        best: int | None = None
        for k in range(actions - 1, -1, -1):
            out[k] = best
            found = first_of[k]
            if found is not None and (best is None or found < best):
                best = found
        return out

    def first_event_after(self, action_index: int) -> Mapping[str, Any] | None:
        """The first event (in the trace) of any call of a later action than ``action_index``."""
        position = self._first_event_after[action_index]
        return None if position is None else self.trace.get("events", [])[position]

    def call(self, call_id: str) -> CallView:
        return next(c for c in self.calls if c.id == call_id)

    def answers(self, kind: str) -> Iterator[tuple[int, Mapping[str, Any], Mapping[str, Any]]]:
        """(index, action, answer) for every action of one kind."""
        answers = self.trace.get("actions", [])
        for index, action in enumerate(self.scenario.get("actions", [])):
            if kind in action and index < len(answers):
                yield index, action, answers[index]

    # ------------------------------------------------------------ static facts

    @cached_property
    def tool_specs(self) -> list[Mapping[str, Any]]:
        return list(self.scenario.get("tools", []))

    def registered_ok(self, key: str) -> bool:
        """Did the set-up registration of ``key`` succeed (per the trace)?"""
        return key in self._registered

    @cached_property
    def _registered(self) -> set[Any]:
        return {r.get("key") for r in self.trace.get("registrations", []) if r.get("ok")}

    @cached_property
    def lifecycle_static(self) -> bool:
        """True when no tool is registered or disposed after set-up."""
        if any(
            ("register" in a or "dispose" in a) and "of" not in a  # a tool's, not a listener's
            for a in self.scenario.get("actions", [])
        ):
            return False
        return not mutates_registry(self.scenario)

    def visible_tool(self, name: str, agent: str | None) -> Mapping[str, Any] | None:
        """The tool spec a model-direct call from ``agent`` resolves to, for a static set-up.

        Agent-scoped registrations shadow global ones (DEF-5); only tools whose
        set-up registration succeeded count. Under mode ``code`` no native tool
        is directly callable (CODE-1). ``run_code`` is not a scenario tool.
        """
        if self.mode == "code":
            return None
        return self.catalog_tool(name, agent)

    def catalog_tool(self, name: str, agent: str | None) -> Mapping[str, Any] | None:
        """The tool spec ``agent`` can reach (directly or from a program), static set-up."""
        memo = self._catalog_memo
        if (name, agent) not in memo:
            memo[name, agent] = resolve(self._catalog, name, agent)
        return memo[name, agent]

    @cached_property
    def _catalog(self) -> list[Mapping[str, Any]]:
        """The tool specs whose set-up registration succeeded, in scenario order."""
        return [
            spec
            for spec in self.tool_specs
            if spec.get("registered", True) and self.registered_ok(spec.get("key", spec["name"]))
        ]

    @cached_property
    def _catalog_memo(self) -> dict[tuple[str, str | None], Mapping[str, Any] | None]:
        return {}

    def listeners(self, key: str, agent: str | None) -> list[Mapping[str, Any]]:
        """Listeners of a stage that apply to ``agent``'s calls (PRE-8, GUARD-3)."""
        return [
            e
            for e in self.scenario.get(key, [])
            if e.get("scope") is None or e.get("scope") == agent
        ]
