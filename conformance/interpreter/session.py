"""Scripted behaviour: turn a scenario's scripts into Python callables that record a trace.

Rules of this file:

* This is the *only* place the step vocabulary is interpreted for Python
  implementations. What each step kind is (its argument, sync or async, whether
  it ends a script, the stages it may run in, what it records) is not written
  here: it is read from the step table ``fixtures/schema/steps.json``; this file
  only supplies one handler per step kind and checks at import that the two
  agree (the handlers are :mod:`conformance.interpreter.handlers`, the table's loader
  :mod:`conformance.scenario.steps`). The golden cases ``fixtures/interpreter/*.json``
  pin what it records.
  An adapter for a Python registry builds its set-up from :class:`Session`'s
  factories and maps them onto its own API; it never interprets steps itself.
* Every event in a trace is recorded here, by the kit's own callables, never by
  the implementation under test: what a listener saw and returned, when a body
  entered and settled, each mutation attempt, each observation.
* How to read and write the implementation's objects (an execution's call id,
  its signal, a result's JSON form...) is the :class:`Binding`'s business
  (:mod:`conformance.interpreter.binding`): the interpreter reaches them only through it. The
  default binding reads the bundled reference's shapes; it builds no abort
  controllers (``new_controller``), since this module imports no
  implementation: the reference adapter's ``ReferenceBinding`` builds the
  reference's, and a third-party registry's binding overrides ``new_controller``
  and the few methods whose names or shapes differ.

Deadlines, not sleeps: ``waitForAbort`` and ``barrier`` wait at most
``Session.wait_s`` seconds, then record ``met: false`` and go on, so a broken
implementation produces a failing trace instead of a hang.

Runaways end: an implementation that enters one scripted callable again and again for one
call (a ``next()`` that re-enters its own wrapper, a waterfall that restarts) makes a chain
that never settles, and a chain of tasks thousands deep cannot even be cancelled (cancelling
it recurses to the interpreter's limit), so no deadline of its loop ends it. The
:data:`RUNAWAY_ENTRIES` + 1st entry of one callable for one call raises :class:`Runaway`
instead of running the script, and so does every later one; the runner answers the action
with it, and the trace so far -- every entry recorded -- is judged (PIPE-1: each listener at
most once per execution).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Final, TypeVar

from conformance.interpreter.binding import ABSENT, JSON, Binding, canonical_json, decode, jsonable
from conformance.interpreter.handlers import ASYNC_STEPS, ENDINGS, SYNC_STEPS, _Frame, _Return
from conformance.scenario.steps import (  # re-exported: the step table's names
    MUTATE_OPS,
    MUTATION_OPS,
    MUTATION_TARGETS,
    NEXT_STAGES,
    STAGES,
    STEP_STAGES,
    STEP_TABLE_PATH,
    STEPS,
    ScriptError,
    StageKind,
    StepKind,
    checked,
    load_step_table,
)
from conformance.vocab import NOT_CALLABLE, RUNAWAY_PREFIX

__all__ = [
    "ASYNC_STEPS",
    "JSON",
    "MUTATION_OPS",
    "MUTATION_TARGETS",
    "NEXT_STAGES",
    "RUNAWAY_ENTRIES",
    "STAGES",
    "STEPS",
    "STEP_STAGES",
    "STEP_TABLE_PATH",
    "SYNC_STEPS",
    "Binding",
    "Runaway",
    "ScriptError",
    "Session",
    "StageKind",
    "StepKind",
    "Undelivered",
    "canonical_json",
    "decode",
    "jsonable",
    "load_step_table",
]

_T = TypeVar("_T")

#: The ops that take a key away (a forged call id then is None).
_REMOVALS = frozenset({"delete", "pop-key"})

#: How many times one scripted callable may be entered for one call before the next entry is a
#: runaway. SPEC PIPE-1 allows one entry per execution; the reference enters none more than 3
#: times for one call id in the ci and quick corpora (a classifier, asked without a call, 7
#: times in a scenario): the bound is far above any scenario's need, and low enough that a
#: runaway chain ends within a fraction of a second.
RUNAWAY_ENTRIES: Final = 100


class Runaway(BaseException):
    """A scripted callable entered more than :data:`RUNAWAY_ENTRIES` times for one call.

    A ``BaseException``, so the implementation's ``except Exception`` does not swallow it: it
    unwinds the chain that re-entered. The runner answers the action ``{"raised": its
    message}`` (:func:`conformance.adapters.runner.run_actions`), which the kit counts as a
    timeout: the call would never have ended by itself."""

    def __init__(self, stage: str, ident: str, call: str | None, entries: int) -> None:
        whose = f"for call {call!r}" if call is not None else "without a call"
        super().__init__(
            f"{RUNAWAY_PREFIX} {stage} {ident!r} was entered {entries} times {whose}; "
            "the kit stopped it (each listener runs at most once per execution)"
        )


async def _no_nested_calls(ctx: Any, call_id: str, name: str, arguments: Any) -> Any:
    raise ScriptError("this adapter runs no nested calls (capability nested-calls)")


def _calls(action: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [action["call"]] if "call" in action else list(action.get("batch", []))


def _thrown(frame: _Frame, error: BaseException) -> dict[str, Any]:
    """The throw event of a script: ``unscripted`` when what escaped was not its own
    ``throw`` step's error (a ``next()`` that raised, a nested call, ... -- method 11)."""
    event: dict[str, Any] = {**frame.who, "at": "throw"}
    if error is not frame.thrown:
        event["unscripted"] = True
    return event


class Undelivered(LookupError):
    """A write whose object the adapter never handed the kit: the hook that routes it
    (``track_caller`` for target ``caller``, ``caller`` for ``caller-arguments``) was never
    invoked for its call. Recorded as ``delivered: false``: not an attempt, not a refusal."""


class _Caller:
    """What a caller's write is attributed to: its own call (``mutate`` of stage ``caller``)."""

    def __init__(self, call_id: str) -> None:
        self.call_id = call_id


class _Barrier:
    def __init__(self, parties: int) -> None:
        self.parties = parties
        self.arrived = 0
        self.event = asyncio.Event()


class Session:
    """One scenario run: the recorder, the barriers, the callers' controllers."""

    def __init__(
        self, scenario: Mapping[str, Any], binding: Binding | None = None, *, wait_s: float = 1.0
    ) -> None:
        self.scenario = scenario
        self.binding = binding or Binding()
        self.wait_s = wait_s
        self.events: list[dict[str, Any]] = []
        #: Entries of each scripted callable per call: (call, stage, id) -> count (a runaway's
        #: bound, :data:`RUNAWAY_ENTRIES`).
        self._entries: dict[tuple[str | None, str, str], int] = {}
        self._barriers: dict[str, _Barrier] = {}
        self.controllers: dict[str, Any] = {}
        self.caller_arguments: dict[str, Any] = {}
        #: The caller's input object of each call (what the adapter handed the registry).
        self.caller_inputs: dict[str, Any] = {}
        #: Values scripts returned under a ``keep`` name (a later ``mutate`` target ``kept``).
        self.kept: dict[str, Any] = {}
        #: Call ids a stage wrote onto the execution it was handed (a write that took effect;
        #: None: it deleted the field), each with the scenario's call it was written on: events
        #: are attributed to the call the scenario made, never to what an implementation object
        #: says afterwards. An id the scenario itself names is never taken as forged.
        self.forged_ids: dict[str | None, str] = {}
        self.register_hook: Callable[[str], None] = lambda key: None
        self.dispose_hook: Callable[[str], None] = lambda key: None
        #: Runs a nested call for a body's ``forward`` step: (run context, call id, tool name,
        #: arguments) -> the nested result. An adapter with the nested-calls capability sets it.
        self.nested_call: Callable[[Any, str, str, Any], Awaitable[Any]] = _no_nested_calls

    # ------------------------------------------------------------- callers

    def caller(self, call: Mapping[str, Any]) -> tuple[Any, Any]:
        """A fresh controller and the caller's own (mutable) arguments for one call."""
        controller = self.binding.new_controller()
        call_id = call["callId"]
        self.controllers[call_id] = controller
        arguments = decode(call.get("arguments", {}))
        self.caller_arguments[call_id] = arguments
        if call.get("abortBefore"):
            self.binding.abort(controller)
        return controller, arguments

    def track_caller(self, call_id: str, call_input: _T) -> _T:
        """Remember the input object the adapter built for a call (``mutate`` target ``caller``)."""
        self.caller_inputs[call_id] = call_input
        return call_input

    def caller_writes(self, call: Mapping[str, Any], moment: str) -> None:
        """The writes the caller makes to its own objects at ``moment``: ``afterInvoke``
        (right after invoking execute, before awaiting it) or ``afterResult`` (after it
        returned). Each is attempted like a ``mutate`` step of stage ``caller`` and recorded
        with id ``after-invoke`` / ``after-result``."""
        writes = call.get(moment)
        if not writes:
            return
        call_id = str(call["callId"])
        ident = "after-invoke" if moment == "afterInvoke" else "after-result"
        frame = _Frame(
            "caller", {"stage": "caller", "id": ident, "call": call_id}, _Caller(call_id)
        )
        for write in writes:
            SYNC_STEPS["mutate"](self, frame, write)

    def call_of(self, execution: Any) -> str | None:
        """The scenario's call an execution belongs to (its call id, unless a stage forged it)."""
        call_id = self.binding.call_id(execution)
        return self.forged_ids.get(call_id, call_id)

    def _forged(self, frame: _Frame, value: Any) -> None:
        original = frame.who.get("call")
        named = {c.get("callId") for a in self.scenario.get("actions", []) for c in _calls(a)}
        forged = value if isinstance(value, str) else None
        if isinstance(original, str) and forged not in named:
            self.forged_ids[forged] = original

    def abort_call(self, call_id: str | None) -> None:
        controller = self.controllers.get(call_id or "")
        targets = [controller] if controller is not None else list(self.controllers.values())
        for target in targets:
            self.binding.abort(target)

    # ----------------------------------------------------------- factories

    def tool_body(self, spec: Mapping[str, Any]) -> Callable[[Any, Any], Awaitable[Any]]:
        async def execute(arguments: Any, ctx: Any) -> Any:
            return await self.run(
                spec["execute"], "body", spec["name"], ctx, ctx=ctx, convert=decode
            )

        return execute

    def classifier(self, spec: Mapping[str, Any]) -> Callable[[Any], Any]:
        def is_concurrency_safe(arguments: Any) -> Any:
            self.events.append({"stage": "classifier", "tool": spec["name"], "at": "enter"})
            return self.run_sync(
                spec["isConcurrencySafe"], "classifier", spec["name"], decode, arguments=arguments
            )

        return is_concurrency_safe

    def finalizer(self, spec: Mapping[str, Any]) -> Callable[[Any, Any], Any]:
        def finalize_content(execution: Any, result: Any) -> Any:
            self._enter("finalize", spec["name"], execution)
            steps = spec["finalizeContent"]
            return self.run_sync(
                steps, "finalize", spec["name"], decode, execution=execution, result=result
            )

        return finalize_content

    def projection(self, kind: Any, *, content: bool) -> Callable[[Any, Any], Any] | str:
        """A projection callable; ``"not-callable"`` stands for a field holding no function."""
        if kind == NOT_CALLABLE:
            return NOT_CALLABLE

        def project(args: Any, value: Any = None) -> Any:
            if isinstance(kind, Mapping):
                return decode(kind["const"])
            if kind == "args":
                out: Any = {"args": jsonable(args)}
            elif kind == "value":
                out = {"value": jsonable(value)}
            elif kind == "call":
                out = {"args": jsonable(args), "value": jsonable(value)}
            elif kind == "text" and isinstance(value, str):
                out = value
            else:
                out = canonical_json(jsonable(value))
            if content:
                return [
                    {"type": "text", "text": out if isinstance(out, str) else canonical_json(out)}
                ]
            return out

        return project

    def pre_listener(self, spec: Mapping[str, Any]) -> Callable[[Any, Any], Awaitable[Any]]:
        async def listener(execution: Any, next_: Callable[[], Awaitable[Any]]) -> Any:
            return await self.run(
                spec["steps"],
                "pre-execute",
                spec["id"],
                execution,
                next_=next_,
                convert=self.binding.pre_decision,
                next_json=lambda d: d,
            )

        return listener

    def guard(self, spec: Mapping[str, Any]) -> Callable[[Any], Any]:
        def guard(execution: Any) -> Any:
            self._enter("guard", spec["id"], execution)
            return self.run_sync(spec["steps"], "guard", spec["id"], decode, execution=execution)

        return guard

    def wrapper(self, spec: Mapping[str, Any]) -> Callable[[Any, Any], Awaitable[Any]]:
        async def wrapper(dispatch: Any, next_: Callable[[], Awaitable[Any]]) -> Any:
            return await self.run(
                spec["steps"],
                "wrapper",
                spec["id"],
                dispatch,
                next_=next_,
                dispatch=dispatch,
                convert=self.binding.authored_result,
                next_json=self.binding.result_json,
            )

        return wrapper

    def post_listener(self, spec: Mapping[str, Any]) -> Callable[[Any, Any, Any], Awaitable[Any]]:
        async def listener(execution: Any, result: Any, next_: Callable[[], Awaitable[Any]]) -> Any:
            return await self.run(
                spec["steps"],
                "post-execute",
                spec["id"],
                execution,
                next_=next_,
                result=result,
                convert=self.binding.post_decision,
                next_json=lambda d: jsonable(d),
            )

        return listener

    def observer(self, spec: Mapping[str, Any]) -> Callable[[Any, Any], Awaitable[Any]]:
        async def observer(execution: Any, result: Any) -> Any:
            self.events.append(
                {
                    **self._who("result", spec["id"], execution),
                    "at": "enter",
                    "observed": self.binding.result_json(result),
                }
            )
            return await self.run(
                spec["steps"],
                "result",
                spec["id"],
                execution,
                result=result,
                convert=decode,
                enter=False,
            )

        return observer

    def code_dispatch_log(self, spec: Mapping[str, Any]) -> Callable[[Any, Any], Awaitable[Any]]:
        async def listener(record: Any, next_: Callable[[], Awaitable[Any]]) -> Any:
            return await self.run(
                spec["steps"],
                "code-dispatch-log",
                spec["id"],
                record,
                next_=next_,
                convert=decode,
                next_json=jsonable,
            )

        return listener

    def approval(self, spec: Mapping[str, Any]) -> Any:
        session = self

        class Approval:
            async def request(self, request: Any) -> Any:
                b = session.binding
                keys = sorted(b.keys(request))
                call_id = b.call_id(request)
                event = {
                    "stage": "approval",
                    "at": "request",
                    "call": call_id,
                    "keys": keys,
                    "reason": jsonable(b.get(request, "reason")),
                    # every field, as JSON: PRE-5 searches them all for a copy of the arguments
                    "fields": {key: jsonable(b.get(request, key)) for key in keys},
                }
                shown = b.request_arguments(request)
                if shown is not ABSENT:
                    event["arguments"] = shown  # what the approver saw (PIPE-5)
                session.events.append(event)
                steps = spec.get("byCall", {}).get(call_id, spec["steps"])
                answer = await session.run(
                    steps, "approval", "approval", request, convert=decode, enter=False
                )
                session.events.append(
                    {
                        "stage": "approval",
                        "at": "answer",
                        "call": call_id,
                        "returned": jsonable(answer),
                    }
                )
                return answer

        return Approval()

    # ----------------------------------------------------------- interpret

    def _who(self, stage: str, ident: str, execution: Any) -> dict[str, Any]:
        b = self.binding
        event: dict[str, Any] = {"stage": stage, "id": ident}
        if execution is not None:
            call_id = self.call_of(execution)
            if call_id is not None:
                event["call"] = call_id
                event["tool"] = _name_or_none(b.tool_name(execution))
                event["agent"] = _name_or_none(b.agent(execution))
                event["hasParent"] = b.has_parent(execution)
        return event

    def _enter(self, stage: str, ident: str, execution: Any) -> None:
        self.events.append({**self._who(stage, ident, execution), "at": "enter"})

    def _entering(self, who: Mapping[str, Any]) -> None:
        """One more entry of the scripted callable ``who`` names: :class:`Runaway` past the
        bound."""
        key = (who.get("call"), str(who["stage"]), str(who["id"]))
        entries = self._entries[key] = self._entries.get(key, 0) + 1
        if entries > RUNAWAY_ENTRIES:
            raise Runaway(key[1], key[2], key[0], entries)

    async def run(
        self,
        steps: Sequence[Mapping[str, Any]],
        stage: str,
        ident: str,
        execution: Any,
        *,
        convert: Callable[[Any], Any],
        next_: Callable[[], Awaitable[Any]] | None = None,
        next_json: Callable[[Any], Any] = jsonable,
        result: Any = None,
        ctx: Any = None,
        dispatch: Any = None,
        enter: bool = True,
    ) -> Any:
        """Run an async script; record enter and exit/throw; return its converted value."""
        who = self._who(stage, ident, execution)
        self._entering(who)
        if enter:
            self.events.append({**who, "at": "enter"})
        frame = _Frame(stage, who, execution, result, ctx, dispatch, next_)
        try:
            for step in steps:
                kind, arg = checked(step, stage, sync=False)
                if kind in ENDINGS:
                    raise _Return(convert(self._ending(frame, kind, arg)))
                if kind in ASYNC_STEPS:
                    await ASYNC_STEPS[kind](self, frame, arg)
                else:
                    SYNC_STEPS[kind](self, frame, arg)
            value = convert(None)
        except _Return as r:
            value = r.value
        except ScriptError:
            raise
        except Exception as e:
            self.events.append(_thrown(frame, e))
            raise
        except asyncio.CancelledError as e:
            # The host cancelled the script's task (a Python timeout or an aborted run): it
            # settles here, by that cancellation -- recorded, so a body cancelled and awaited
            # is not taken for one the registry abandoned (CANCEL-4).
            self.events.append({**_thrown(frame, e), "cancelled": True})
            raise
        finally:
            for undo in reversed(frame.restore):
                undo()
        if frame.keep is not None:
            self.kept[frame.keep] = value
        delegated = bool(frame.remembered) and value is frame.remembered[-1]
        returned = next_json(value) if delegated else jsonable(value)
        self.events.append({**frame.who, "at": "exit", "returned": returned})
        return value

    def run_sync(
        self,
        steps: Sequence[Mapping[str, Any]],
        stage: str,
        ident: str,
        convert: Callable[[Any], Any],
        *,
        execution: Any = None,
        result: Any = None,
        arguments: Any = None,
    ) -> Any:
        """Run a synchronous script (guards, classifiers, finalizers)."""
        frame = _Frame(stage, self._who(stage, ident, execution), execution, result)
        self._entering(frame.who)
        frame.arguments = arguments
        try:
            for step in steps:
                kind, arg = checked(step, stage, sync=True)
                if kind in ENDINGS:
                    answer = self._ending(frame, kind, arg)
                    value = convert(answer)
                    if frame.keep is not None:
                        self.kept[frame.keep] = value
                    self.events.append({**frame.who, "at": "exit", "returned": jsonable(answer)})
                    return value
                SYNC_STEPS[kind](self, frame, arg)
        except ScriptError:
            raise
        except Exception as e:
            self.events.append(_thrown(frame, e))
            raise
        self.events.append({**frame.who, "at": "exit", "returned": None})
        return None

    def _ending(self, frame: _Frame, kind: str, arg: Any) -> JSON:
        """The scenario JSON an ending step returns: ``return``'s own value, or what ``pick``
        reads at its path of the arguments the callable is handed (null when absent)."""
        if kind == "return":
            return arg
        b = self.binding
        if frame.stage == "classifier":
            value = frame.arguments
        else:
            value = b.arguments(frame.ctx if frame.ctx is not None else frame.execution)
        try:
            for key in arg:
                value = b.read(value, key)
        except (LookupError, AttributeError, TypeError):
            return None
        return jsonable(value)

    def _signal(self, execution: Any, ctx: Any, dispatch: Any) -> Any:
        holder = ctx if ctx is not None else dispatch if dispatch is not None else execution
        signal = self.binding.signal(holder)
        if signal is None:  # e.g. an approval request without a signal: the caller's
            controller = self.controllers.get(self.call_of(execution) or "")
            if controller is None:
                raise ScriptError("no signal to wait on")
            signal = self.binding.controller_signal(controller)
        return signal

    def _observe(self, what: str, execution: Any, result: Any, ctx: Any) -> Any:
        b = self.binding
        holder = ctx if ctx is not None else execution
        if what == "arguments":
            return jsonable(b.arguments(holder))
        if what == "signal":
            return {"aborted": b.aborted(b.signal(holder))}
        if what == "result":
            return b.result_json(result) if result is not None else None
        if what == "execution":
            return {
                "callId": b.call_id(holder),
                "name": b.tool_name(holder),
                "agent": b.agent(holder),
                "hasParent": b.has_parent(holder),
                "arguments": jsonable(b.arguments(holder)),
            }
        raise ScriptError(f"cannot observe {what!r}")

    def _mutate(self, frame: _Frame, arg: Mapping[str, Any]) -> bool | None:
        """Attempt one write; True when the attempt raised (informational only), None when
        it was never delivered (:class:`Undelivered`: the adapter never routed its object)."""
        b = self.binding
        holder = frame.ctx if frame.ctx is not None else frame.execution
        target, path, op = arg["target"], list(arg["path"]), arg.get("op", "assign")
        value = decode(arg.get("value"))
        kind = MUTATE_OPS.get(op)
        if kind is None:
            raise ScriptError(f"unknown mutation op {op!r}")
        if kind.value != "none" and "value" not in arg:
            raise ScriptError(f"mutation op {op!r} needs a value")
        if kind.value == "list" and not isinstance(value, list):
            raise ScriptError(f"mutation op {op!r} takes a list of values")
        if target == "request" and frame.stage != "approval":
            raise ScriptError("only an approval script has a request")
        if target == "kept" and not path:
            raise ScriptError("a kept mutation names the kept value first")
        inner = path[1:] if target == "kept" else path
        if target != "signal" and not inner and kind.shape == "key":
            raise ScriptError("mutation needs a path")
        try:
            if target == "signal":
                b.write(holder, "signal", b.controller_signal(b.new_controller()))
                return False
            root = self._mutation_root(target, holder, frame.result, path)
            path = inner
            if kind.shape == "container":
                for key in path:
                    root = b.read(root, key)
                if op == "append":
                    b.insert(root, None, value)
                else:
                    b.host_write(op, root, None, value)
                return False
            for key in path[:-1]:
                root = b.read(root, key)
            key = path[-1]
            if op == "assign":
                b.write(root, key, value)
            elif op == "delete":
                b.delete(root, key)
            elif op == "add" and isinstance(key, int):
                b.insert(root, key, value)
            elif op == "add":
                b.write(root, key, value)
            elif op == "splice":  # the element at the index gives way to the values
                if not isinstance(key, int):
                    raise TypeError("splice needs an index")
                b.delete(root, key)
                for offset, item in enumerate(value):
                    b.insert(root, key + offset, item)
            else:
                b.host_write(op, root, key, value)
            if target == "execution" and path == ["callId"]:
                self._forged(frame, None if op in _REMOVALS else value)
            return False
        except (ScriptError, Undelivered) as e:
            if isinstance(e, Undelivered):
                return None
            raise
        except Exception:
            return True

    def _mutation_root(self, target: str, holder: Any, result: Any, path: list[Any]) -> Any:
        b = self.binding
        if target in ("caller-arguments", "caller"):
            routed = self.caller_arguments if target == "caller-arguments" else self.caller_inputs
            call_id = self.call_of(holder) or ""
            if call_id not in routed:
                hook = "caller" if target == "caller-arguments" else "track_caller"
                raise Undelivered(f"the adapter never called Session.{hook} for call {call_id!r}")
            return routed[call_id]
        if target == "arguments":
            return b.read(holder, "arguments")
        if target in ("execution", "request"):
            return holder
        if target == "result":
            if result is None:
                raise LookupError("this stage is handed no result")
            return result
        if target == "kept":
            return self.kept[str(path[0])]
        raise ScriptError(f"unknown mutation target {target!r}")

    async def _within(self, awaitable: Awaitable[Any]) -> bool:
        try:
            await asyncio.wait_for(awaitable, self.wait_s)
        except TimeoutError:
            return False
        return True

    async def _barrier(self, name: str, parties: int) -> bool:
        barrier = self._barriers.setdefault(name, _Barrier(parties))
        barrier.arrived += 1
        if barrier.arrived >= barrier.parties:
            barrier.event.set()
        return await self._within(barrier.event.wait())


def _name_or_none(value: Any) -> str | None:
    """An event's ``tool`` or ``agent``: the name the callable saw, or None where a stage's
    write left something that is no name there (a number written to ``execution.name``: the
    trace records no name; PIPE-3 still sees the change, the enter event names no tool)."""
    return value if isinstance(value, str) else None
