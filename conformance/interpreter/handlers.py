"""One handler per step kind of the step table, and what a running script can reach.

What each step kind is comes from steps.json (:mod:`conformance.scenario.steps`);
this module supplies one handler per kind (``return`` is handled by the
interpreter itself) and checks at import that the handlers and the table agree.
The handlers run inside :class:`conformance.interpreter.session.Session`'s scripts.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from conformance.interpreter.binding import Binding, decode
from conformance.scenario.steps import STEPS, ScriptError

if TYPE_CHECKING:
    from conformance.interpreter.session import Session

__all__ = [
    "ASYNC_STEPS",
    "ENDINGS",
    "SYNC_STEPS",
    "AsyncStep",
    "ScriptedError",
    "SyncStep",
    "ThrownValue",
]

#: The steps that end a script with a value, handled by the interpreter itself.
ENDINGS: Final = frozenset({"return", "pick"})


class _Return(Exception):
    def __init__(self, value: Any) -> None:
        self.value = value


# --------------------------------------------------------------- the step table
#
# What each step kind is comes from steps.json; below is one handler per step kind
# (the ending steps ``return`` and ``pick`` are handled by the interpreter itself).
# A step out of the stages the table allows, or an async step in a synchronous
# script, is a ScriptError -- a malformed scenario, never blamed on the implementation.


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
    keep: str | None = None
    forwarded: int = 0
    remembered: list[Any] = field(default_factory=list)
    restore: list[Callable[[], None]] = field(default_factory=list)
    #: The controllers of the signals this wrapper's ``replaceSignal`` steps put in place.
    owned: list[Any] = field(default_factory=list)
    #: The arguments a classifier is handed (its script has no execution).
    arguments: Any = None
    #: What the script's own ``throw`` step raised (any other exception escaping the script
    #: came from elsewhere: a ``next()``, a nested call, the binding -- method 11).
    thrown: BaseException | None = None


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
    previous = b.read(frame.dispatch, "signal")
    controller = b.new_controller()
    b.write(frame.dispatch, "signal", b.controller_signal(controller))
    frame.owned.append(controller)
    frame.restore.append(_restorer(b, frame.dispatch, previous))


async def _abort_own_signal(session: Session, frame: _Frame, arg: Any) -> None:
    if not frame.owned:
        raise ScriptError("abortOwnSignal before replaceSignal")
    session.binding.abort(frame.owned[-1])


async def _defer_context(session: Session, frame: _Frame, arg: Any) -> None:
    session.binding.defer_context(frame.ctx, decode(arg))


async def _conclude_turn(session: Session, frame: _Frame, arg: Any) -> None:
    session.binding.conclude_turn(frame.ctx)


async def _forward(session: Session, frame: _Frame, arg: Any) -> None:
    b = session.binding
    frame.forwarded += 1
    call_id = arg.get("callId") or f"{b.call_id(frame.ctx)}:forward:{frame.forwarded}"
    name = arg["name"]
    result = await session.nested_call(frame.ctx, call_id, name, decode(arg.get("arguments", {})))
    b.forward(frame.ctx, result)
    session.events.append(
        {**frame.who, "forward": name, "nested": call_id, "result": b.result_json(result)}
    )


class ScriptedError(RuntimeError):
    """A structured throwable (method 10): its ``message``, ``code`` and ``name`` are the
    scenario's JSON values, of any type."""

    def __init__(self, fields: Mapping[str, Any]) -> None:
        message = fields.get("message", "")
        super().__init__(message if isinstance(message, str) else repr(message))
        self.message = decode(message)
        for key in ("code", "name"):
            if key in fields:
                setattr(self, key, decode(fields[key]))


class ThrownValue(Exception):
    """Python raises only exceptions: a thrown value that is no error is carried as ``value``
    (JavaScript throws the value itself)."""

    def __init__(self, value: Any) -> None:
        super().__init__(value)
        self.value = value


def _throw(session: Session, frame: _Frame, arg: Any) -> None:
    if isinstance(arg, Mapping) and set(arg) == {"value"}:
        frame.thrown = ThrownValue(decode(arg["value"]))
    elif isinstance(arg, Mapping):
        frame.thrown = ScriptedError(arg)
    else:
        frame.thrown = RuntimeError(arg)
    raise frame.thrown


def _abort(session: Session, frame: _Frame, arg: Any) -> None:
    execution = frame.execution
    session.abort_call(session.call_of(execution) if execution is not None else None)


def _register(session: Session, frame: _Frame, arg: Any) -> None:
    session.register_hook(arg)


def _dispose(session: Session, frame: _Frame, arg: Any) -> None:
    session.dispose_hook(arg)


def _observe(session: Session, frame: _Frame, arg: Any) -> None:
    observed = session._observe(arg, frame.execution, frame.result, frame.ctx)
    session.events.append({**frame.who, "what": arg, "observed": observed})


def _mutate(session: Session, frame: _Frame, arg: Any) -> None:
    raised = session._mutate(frame, arg)
    where = arg["target"] + "".join(f"[{p!r}]" for p in arg["path"])
    op = arg.get("op", "assign")
    event = {**frame.who, "mutate": where, "raised": bool(raised)}
    if raised is None:  # the adapter never routed the object: not an attempt, not a refusal
        event["delivered"] = False
    session.events.append(event if op == "assign" else {**event, "op": op})


async def _return_kept(session: Session, frame: _Frame, arg: Any) -> None:
    hit = arg in session.kept
    session.events.append({**frame.who, "what": "returnKept", "met": hit})
    if hit:
        raise _Return(session.kept[arg])  # as it was kept: no conversion


def _keep(session: Session, frame: _Frame, arg: Any) -> None:
    frame.keep = str(arg)


AsyncStep = Callable[["Session", _Frame, Any], Awaitable[None]]
SyncStep = Callable[["Session", _Frame, Any], None]

_HANDLERS: Final[Mapping[str, AsyncStep | SyncStep]] = {
    "delegate": _delegate,
    "callNext": _call_next,
    "returnNext": _return_next,
    "waitForAbort": _wait_for_abort,
    "yield": _yield,
    "barrier": _barrier,
    "replaceSignal": _replace_signal,
    "abortOwnSignal": _abort_own_signal,
    "deferContext": _defer_context,
    "concludeTurn": _conclude_turn,
    "forward": _forward,
    "throw": _throw,
    "abort": _abort,
    "register": _register,
    "dispose": _dispose,
    "observe": _observe,
    "mutate": _mutate,
    "keep": _keep,
    "returnKept": _return_kept,
}


def _split_handlers() -> tuple[Mapping[str, AsyncStep], Mapping[str, SyncStep]]:
    """The handlers by the table's sync flag; any disagreement with the table fails the import."""
    if set(_HANDLERS) != set(STEPS) - ENDINGS:
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


def _restorer(binding: Binding, dispatch: Any, previous: Any) -> Callable[[], None]:
    def restore() -> None:
        binding.write(dispatch, "signal", previous)

    return restore
