"""Scripted behaviour: turn a scenario's scripts into Python callables that record a trace.

Rules of this file:

* This is the *only* place the step vocabulary is interpreted for Python
  implementations. What each step kind is (its argument, sync or async, whether
  it ends a script, the stages it may run in, what it records) is not written
  here: it is read from the step table ``fixtures/schema/steps.json``; this file
  only supplies one handler per step kind and checks at import that the two
  agree. The golden cases ``fixtures/interpreter/*.json`` pin what it records.
  An adapter for a Python registry builds its set-up from :class:`Session`'s
  factories and maps them onto its own API; it never interprets steps itself.
* Every event in a trace is recorded here, by the kit's own callables, never by
  the implementation under test: what a listener saw and returned, when a body
  entered and settled, each mutation attempt, each observation.
* How to read the implementation's objects (an execution's call id, its
  signal, a result's JSON form...) is the :class:`Binding`'s business. The
  default binding reads the bundled reference's shapes; it builds no abort
  controllers (``new_controller``), since this module imports no
  implementation: the reference adapter's ``ReferenceBinding`` builds the
  reference's, and a third-party registry's binding overrides ``new_controller``
  and the few methods whose names or shapes differ.

Deadlines, not sleeps: ``waitForAbort`` and ``barrier`` wait at most
``Session.wait_s`` seconds, then record ``met: false`` and go on, so a broken
implementation produces a failing trace instead of a hang.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import math
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

__all__ = [
    "STAGES",
    "STEPS",
    "Binding",
    "ScriptError",
    "Session",
    "StageKind",
    "StepKind",
    "decode",
]

#: The step table: the one definition of the step language (steps.schema.json is its format).
STEP_TABLE_PATH: Final = Path(__file__).resolve().parents[1] / "fixtures" / "schema" / "steps.json"

JSON = Any


class ScriptError(Exception):
    """A script is malformed for the stage it runs in (a kit or scenario bug)."""


class _Return(Exception):
    def __init__(self, value: Any) -> None:
        self.value = value


def decode(value: JSON) -> Any:
    """Replace ``{"$special": ...}`` markers with the non-JSON values they stand for."""
    if isinstance(value, Mapping):
        if set(value) == {"$special"}:
            return _special(value["$special"])
        return {k: decode(v) for k, v in value.items()}
    if isinstance(value, list):
        return [decode(v) for v in value]
    return value


def _special(kind: str) -> Any:
    if kind == "nan":
        return math.nan
    if kind == "infinity":
        return math.inf
    if kind == "negative-infinity":
        return -math.inf
    if kind == "function":
        return lambda: None
    if kind == "cycle":
        cyclic: dict[str, Any] = {}
        cyclic["self"] = cyclic
        return cyclic
    if kind == "non-string-key":
        return {1: "one"}
    if kind == "host-object":
        return object()
    raise ScriptError(f"unknown $special {kind!r}")


def jsonable(value: Any, _active: frozenset[int] = frozenset()) -> JSON:
    """Best-effort JSON form of whatever an implementation handed us (for the trace).

    A cycle is recorded as ``{"$special": "cycle"}`` instead of recursing forever.
    """
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return (
            value if math.isfinite(value) else {"$special": "nan" if value != value else "infinity"}
        )
    if isinstance(value, (Mapping, list, tuple)) and id(value) in _active:
        return {"$special": "cycle"}
    if isinstance(value, Mapping):
        inner = _active | {id(value)}
        return {str(k): jsonable(v, inner) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        inner = _active | {id(value)}
        return [jsonable(v, inner) for v in value]
    to_json = getattr(value, "to_json", None)
    if callable(to_json):
        return jsonable(to_json())
    return {"$special": "host-object", "repr": type(value).__name__}


def canonical_json(value: JSON) -> str:
    """Canonical JSON text: sorted keys, compact separators, non-ASCII characters unescaped."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


class Binding:
    """How the kit reads and builds an implementation's objects. Override what differs."""

    # -- executions
    def call_id(self, execution: Any) -> str | None:
        return getattr(execution, "call_id", None)

    def tool_name(self, execution: Any) -> str | None:
        return getattr(execution, "name", None)

    def agent(self, execution: Any) -> str | None:
        return getattr(execution, "agent", None)

    def has_parent(self, execution: Any) -> bool:
        return getattr(execution, "parent", None) is not None

    def arguments(self, execution: Any) -> Any:
        return getattr(execution, "arguments", None)

    def signal(self, execution: Any) -> Any:
        return getattr(execution, "signal", None)

    # -- signals
    def aborted(self, signal: Any) -> bool:
        return bool(getattr(signal, "aborted", False))

    async def wait_aborted(self, signal: Any) -> None:
        await signal.wait()

    def new_controller(self) -> Any:
        """A fresh abort controller of the implementation's own kind (a caller's, a replacement)."""
        raise NotImplementedError("the binding builds the implementation's abort controllers")

    def controller_signal(self, controller: Any) -> Any:
        return controller.signal

    def abort(self, controller: Any) -> None:
        controller.abort("aborted by the scenario")

    # -- results and decisions
    def result_json(self, result: Any) -> JSON:
        return jsonable(result)

    def authored_result(self, data: JSON) -> Any:
        """A wrapper-authored result, from its JSON form."""
        return decode(data)

    def pre_decision(self, data: JSON) -> Any:
        return decode(data)

    def post_decision(self, data: JSON) -> Any:
        return decode(data)

    def result_field(self, key: str) -> str:
        return {
            "isError": "is_error",
            "additionalContexts": "additional_contexts",
            "concludesTurn": "concludes_turn",
        }.get(key, key)

    def execution_field(self, key: str) -> str:
        return {"callId": "call_id"}.get(key, key)

    # -- the body's run context
    def defer_context(self, ctx: Any, message: Any) -> None:
        ctx.defer_context(message)

    def conclude_turn(self, ctx: Any) -> None:
        ctx.conclude_turn()


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
        self._barriers: dict[str, _Barrier] = {}
        self.controllers: dict[str, Any] = {}
        self.caller_arguments: dict[str, Any] = {}
        self.register_hook: Callable[[str], None] = lambda key: None
        self.dispose_hook: Callable[[str], None] = lambda key: None

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
            return self.run_sync(spec["isConcurrencySafe"], "classifier", spec["name"], decode)

        return is_concurrency_safe

    def finalizer(self, spec: Mapping[str, Any]) -> Callable[[Any, Any], Any]:
        def finalize_content(execution: Any, result: Any) -> Any:
            self._enter("finalize", spec["name"], execution)
            steps = spec["finalizeContent"]
            return self.run_sync(
                steps, "finalize", spec["name"], decode, execution=execution, result=result
            )

        return finalize_content

    def projection(self, kind: Any, *, content: bool) -> Callable[[Any, Any], Any]:
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
                keys = sorted(_public_fields(request))
                call_id = getattr(request, "call_id", None)
                session.events.append(
                    {
                        "stage": "approval",
                        "at": "request",
                        "call": call_id,
                        "keys": keys,
                        "reason": jsonable(getattr(request, "reason", None)),
                    }
                )
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
            call_id = b.call_id(execution)
            if call_id is not None:
                event["call"] = call_id
                event["tool"] = b.tool_name(execution)
                event["agent"] = b.agent(execution)
                event["hasParent"] = b.has_parent(execution)
        return event

    def _enter(self, stage: str, ident: str, execution: Any) -> None:
        self.events.append({**self._who(stage, ident, execution), "at": "enter"})

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
        if enter:
            self._enter(stage, ident, execution)
        frame = _Frame(
            stage, self._who(stage, ident, execution), execution, result, ctx, dispatch, next_
        )
        try:
            for step in steps:
                kind, arg = _checked(step, stage, sync=False)
                if kind == "return":
                    raise _Return(convert(arg))
                if kind in ASYNC_STEPS:
                    await ASYNC_STEPS[kind](self, frame, arg)
                else:
                    SYNC_STEPS[kind](self, frame, arg)
            value = convert(None)
        except _Return as r:
            value = r.value
        except ScriptError:
            raise
        except Exception:
            self.events.append({**frame.who, "at": "throw"})
            raise
        finally:
            for undo in reversed(frame.restore):
                undo()
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
    ) -> Any:
        """Run a synchronous script (guards, classifiers, finalizers)."""
        frame = _Frame(stage, self._who(stage, ident, execution), execution, result)
        try:
            for step in steps:
                kind, arg = _checked(step, stage, sync=True)
                if kind == "return":
                    value = convert(arg)
                    self.events.append({**frame.who, "at": "exit", "returned": jsonable(arg)})
                    return value
                SYNC_STEPS[kind](self, frame, arg)
        except ScriptError:
            raise
        except Exception:
            self.events.append({**frame.who, "at": "throw"})
            raise
        self.events.append({**frame.who, "at": "exit", "returned": None})
        return None

    def _signal(self, execution: Any, ctx: Any, dispatch: Any) -> Any:
        holder = ctx if ctx is not None else dispatch if dispatch is not None else execution
        signal = self.binding.signal(holder)
        if signal is None:  # e.g. an approval request without a signal: the caller's
            call_id = self.binding.call_id(execution)
            controller = self.controllers.get(call_id or "")
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

    def _mutate(
        self, target: str, path: Sequence[Any], value: Any, execution: Any, result: Any, ctx: Any
    ) -> bool:
        """Attempt one mutation; True when the attempt raised (informational only)."""
        b = self.binding
        holder = ctx if ctx is not None else execution
        try:
            if target == "signal":
                holder.signal = b.controller_signal(b.new_controller())
                return False
            if target == "caller-arguments":
                root: Any = self.caller_arguments.get(b.call_id(holder) or "")
            elif target == "arguments":
                root = b.arguments(holder)
            elif target == "execution":
                if len(path) == 1:
                    setattr(holder, b.execution_field(str(path[0])), value)
                    return False
                root = getattr(holder, b.execution_field(str(path[0])))
                path = path[1:]
            elif target == "result":
                if len(path) == 1:
                    setattr(result, b.result_field(str(path[0])), value)
                    return False
                root = getattr(result, b.result_field(str(path[0])))
                path = path[1:]
            else:
                raise ScriptError(f"unknown mutation target {target!r}")
            for key in path[:-1]:
                root = root[key]
            if not path:
                raise ScriptError("mutation needs a path")
            root[path[-1]] = value
            return False
        except ScriptError:
            raise
        except Exception:
            return True

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


# --------------------------------------------------------------- the step table
#
# What each step kind is comes from steps.json; below is one handler per step kind
# (``return`` is handled by the interpreter itself). A step out of the stages the
# table allows, or an async step in a synchronous script, is a ScriptError -- a
# malformed scenario, never blamed on the implementation.


@dataclass(frozen=True)
class StepKind:
    """One step kind of the step table (see steps.json's description for each field)."""

    name: str
    argument: Mapping[str, Any]
    sync: bool
    suspends: bool
    ends: bool
    stages: frozenset[str]
    safe: bool
    safe_in_sync: bool
    records: Mapping[str, Any] | None


@dataclass(frozen=True)
class StageKind:
    """One stage a script runs in."""

    name: str
    sync: bool
    next: bool


def load_step_table(
    path: Path = STEP_TABLE_PATH,
) -> tuple[Mapping[str, StageKind], Mapping[str, StepKind]]:
    """The stages and step kinds of a step table, checked for internal consistency."""
    document = json.loads(path.read_text(encoding="utf-8"))
    stages = {
        name: StageKind(name, bool(entry["sync"]), bool(entry["next"]))
        for name, entry in document["stages"].items()
    }
    steps: dict[str, StepKind] = {}
    for name, entry in document["steps"].items():
        step = StepKind(
            name=name,
            argument=entry["argument"],
            sync=bool(entry["sync"]),
            suspends=bool(entry["suspends"]),
            ends=bool(entry["ends"]),
            stages=frozenset(entry["stages"]),
            safe=bool(entry["safe"]),
            safe_in_sync=bool(entry["safeInSync"]),
            records=entry.get("records"),
        )
        if not step.stages <= set(stages):
            raise ValueError(f"{path}: step {name!r} names unknown stages")
        if step.suspends and step.sync:
            raise ValueError(f"{path}: step {name!r} suspends, so it cannot be sync")
        if step.safe_in_sync and not step.sync:
            raise ValueError(f"{path}: step {name!r} is safeInSync but not sync")
        if (step.safe or step.safe_in_sync) and step.ends:
            raise ValueError(f"{path}: step {name!r} ends a script, so it is not safe")
        steps[name] = step
    if "return" not in steps or not steps["return"].ends:
        raise ValueError(f"{path}: the table lacks the ending step 'return'")
    return stages, steps


_TABLE: Final = load_step_table()
STAGES: Final[Mapping[str, StageKind]] = _TABLE[0]
STEPS: Final[Mapping[str, StepKind]] = _TABLE[1]


@dataclass
class _Frame:
    """What one running script can reach."""

    stage: str
    who: dict[str, Any]
    execution: Any
    result: Any = None
    ctx: Any = None
    dispatch: Any = None
    next_: Callable[[], Awaitable[Any]] | None = None
    remembered: list[Any] = field(default_factory=list)
    restore: list[Callable[[], None]] = field(default_factory=list)


NEXT_STAGES: Final = frozenset(name for name, stage in STAGES.items() if stage.next)
#: The step kinds allowed in only some stages, with those stages.
STEP_STAGES: Final[Mapping[str, frozenset[str]]] = {
    name: step.stages for name, step in STEPS.items() if step.stages != set(STAGES)
}


def _checked(step: Mapping[str, Any], stage: str, *, sync: bool) -> tuple[str, Any]:
    if len(step) != 1:
        raise ScriptError(f"a step has exactly one key, got {sorted(step)}")
    ((kind, arg),) = step.items()
    entry = STEPS.get(kind)
    if entry is None:
        raise ScriptError(f"unknown step {kind!r}")
    if stage not in entry.stages:
        raise ScriptError(f"step {kind!r} cannot run in stage {stage}")
    if sync and not entry.sync:
        raise ScriptError(f"{kind} cannot run in the synchronous {stage} stage")
    return kind, arg


async def _next(session: Session, frame: _Frame, remember: bool, give_back: bool) -> None:
    if remember:
        if frame.next_ is None:
            raise ScriptError(f"{frame.stage} has no next()")
        frame.remembered.append(await frame.next_())
    if give_back:
        if not frame.remembered:
            raise ScriptError("returnNext before callNext")
        raise _Return(frame.remembered[-1])


async def _delegate(session: Session, frame: _Frame, arg: Any) -> None:
    await _next(session, frame, remember=True, give_back=True)


async def _call_next(session: Session, frame: _Frame, arg: Any) -> None:
    await _next(session, frame, remember=True, give_back=False)


async def _return_next(session: Session, frame: _Frame, arg: Any) -> None:
    await _next(session, frame, remember=False, give_back=True)


async def _wait_for_abort(session: Session, frame: _Frame, arg: Any) -> None:
    signal = session._signal(frame.execution, frame.ctx, frame.dispatch)
    met = await session._within(session.binding.wait_aborted(signal))
    session.events.append({**frame.who, "what": "waitForAbort", "met": met})


async def _yield(session: Session, frame: _Frame, arg: Any) -> None:
    for _ in range(int(arg)):
        await asyncio.sleep(0)


async def _barrier(session: Session, frame: _Frame, arg: Any) -> None:
    met = await session._barrier(arg["name"], arg["parties"])
    session.events.append({**frame.who, "barrier": arg["name"], "met": met})


async def _replace_signal(session: Session, frame: _Frame, arg: Any) -> None:
    b = session.binding
    previous = frame.dispatch.signal
    frame.dispatch.signal = b.controller_signal(b.new_controller())
    frame.restore.append(_restorer(frame.dispatch, previous))


async def _defer_context(session: Session, frame: _Frame, arg: Any) -> None:
    session.binding.defer_context(frame.ctx, decode(arg))


async def _conclude_turn(session: Session, frame: _Frame, arg: Any) -> None:
    session.binding.conclude_turn(frame.ctx)


def _throw(session: Session, frame: _Frame, arg: Any) -> None:
    raise RuntimeError(arg)


def _abort(session: Session, frame: _Frame, arg: Any) -> None:
    execution = frame.execution
    session.abort_call(session.binding.call_id(execution) if execution is not None else None)


def _register(session: Session, frame: _Frame, arg: Any) -> None:
    session.register_hook(arg)


def _dispose(session: Session, frame: _Frame, arg: Any) -> None:
    session.dispose_hook(arg)


def _observe(session: Session, frame: _Frame, arg: Any) -> None:
    observed = session._observe(arg, frame.execution, frame.result, frame.ctx)
    session.events.append({**frame.who, "what": arg, "observed": observed})


def _mutate(session: Session, frame: _Frame, arg: Any) -> None:
    value = decode(arg["value"])
    raised = session._mutate(
        arg["target"], arg["path"], value, frame.execution, frame.result, frame.ctx
    )
    where = arg["target"] + "".join(f"[{p!r}]" for p in arg["path"])
    session.events.append({**frame.who, "mutate": where, "raised": raised})


AsyncStep = Callable[[Session, _Frame, Any], Awaitable[None]]
SyncStep = Callable[[Session, _Frame, Any], None]

_HANDLERS: Final[Mapping[str, AsyncStep | SyncStep]] = {
    "delegate": _delegate,
    "callNext": _call_next,
    "returnNext": _return_next,
    "waitForAbort": _wait_for_abort,
    "yield": _yield,
    "barrier": _barrier,
    "replaceSignal": _replace_signal,
    "deferContext": _defer_context,
    "concludeTurn": _conclude_turn,
    "throw": _throw,
    "abort": _abort,
    "register": _register,
    "dispose": _dispose,
    "observe": _observe,
    "mutate": _mutate,
}


def _split_handlers() -> tuple[Mapping[str, AsyncStep], Mapping[str, SyncStep]]:
    """The handlers by the table's sync flag; any disagreement with the table fails the import."""
    if set(_HANDLERS) != set(STEPS) - {"return"}:
        raise ImportError(f"handlers disagree with the step table: {set(_HANDLERS) ^ set(STEPS)}")
    asynchronous: dict[str, AsyncStep] = {}
    synchronous: dict[str, SyncStep] = {}
    for name, handler in _HANDLERS.items():
        if inspect.iscoroutinefunction(handler) == STEPS[name].sync:
            raise ImportError(f"the handler of {name!r} disagrees with the table's sync flag")
        if STEPS[name].sync:
            synchronous[name] = handler  # type: ignore[assignment]
        else:
            asynchronous[name] = handler  # type: ignore[assignment]
    return asynchronous, synchronous


_SPLIT: Final = _split_handlers()
ASYNC_STEPS: Final[Mapping[str, AsyncStep]] = _SPLIT[0]
SYNC_STEPS: Final[Mapping[str, SyncStep]] = _SPLIT[1]


def _restorer(dispatch: Any, previous: Any) -> Callable[[], None]:
    def restore() -> None:
        dispatch.signal = previous

    return restore


def _public_fields(obj: Any) -> list[str]:
    if isinstance(obj, Mapping):
        return [str(k) for k in obj]
    fields = getattr(obj, "__dataclass_fields__", None)
    if fields is not None:
        return [_camel(f) for f in fields]
    return [_camel(k) for k in vars(obj) if not k.startswith("_")]


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)
