"""Data the pipeline passes around: inputs, executions, results, decisions.

Everything a stage or an observer receives is immutable (frozen dataclasses
holding deep-frozen JSON), with one deliberate exception: the ``tools/execute``
view, :class:`DispatchExecution`, whose ``signal`` -- and only its signal -- a
wrapper may replace (EXEC-1).

Results serialize to the spec's JSON shape (RES-3) with :meth:`to_json`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import FrozenInstanceError, dataclass, field
from enum import StrEnum
from typing import Any, Final, Literal, NoReturn, TypeVar

from reference._json import FrozenDict, materialize, thaw
from reference._signal import AbortSignal

__all__ = [
    "RUN_CODE",
    "ApprovalRequest",
    "DispatchExecution",
    "ErrorCode",
    "ErrorInfo",
    "ExecutionToken",
    "RegistrationError",
    "ToolError",
    "ToolExecution",
    "ToolExecutionInput",
    "ToolFailure",
    "ToolResult",
    "ToolSuccess",
    "accept",
    "allow",
    "ask",
    "block",
    "deny",
    "failure",
    "success",
    "text",
]

RUN_CODE: Final = "run_code"  # CODE-4: the reserved Code Mode transport

_C = TypeVar("_C", bound=type)


def sealed(cls: _C) -> _C:
    """Make a frozen, slotted dataclass refuse ``object.__setattr__`` too.

    A frozen dataclass refuses ``obj.field = v``, but ``object.__setattr__(obj, "field", v)``
    -- how dataclasses set their own fields -- still writes a slot. Each field becomes a
    write-once property over its slot: the constructor (and ``copy``, ``pickle``,
    ``dataclasses.replace``, which build a fresh instance) sets it once; any later write
    or delete, however it is made, raises ``FrozenInstanceError`` (PIPE-2, PIPE-3, RES-1).
    """
    for f in dataclasses.fields(cls):
        slot = cls.__dict__[f.name]
        setattr(cls, f.name, _write_once(slot, f.name))
    return cls


def _write_once(slot: Any, name: str) -> property:
    def fget(self: Any) -> Any:
        return slot.__get__(self, type(self))

    def fset(self: Any, value: Any) -> None:
        try:
            slot.__get__(self, type(self))
        except AttributeError:  # not set yet: the constructor's (or copy's) one write
            slot.__set__(self, value)
            return
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def fdel(self: Any) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    return property(fget, fset, fdel, f"{name} (read-only)")


class ErrorCode(StrEnum):
    UNKNOWN_TOOL = "UNKNOWN_TOOL"
    INVALID_ARGS = "INVALID_ARGS"
    INVALID_TOOL_OUTPUT = "INVALID_TOOL_OUTPUT"
    ABORTED = "ABORTED"
    ABORTED_BEFORE_DISPATCH = "ABORTED_BEFORE_DISPATCH"
    TOOL_TIMEOUT = "TOOL_TIMEOUT"


class RegistrationError(ValueError):
    """``register`` refused a definition. The message names the rule."""


class ToolError(Exception):
    """An error a body (or wrapper) may raise to carry a routable code."""

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


class ExecutionToken:
    """Opaque identity of one execution; supports equality (identity) only.

    A copy is the token itself (its identity is all it is); it never crosses a process
    boundary, so it refuses to be pickled.
    """

    __slots__ = ()

    def __repr__(self) -> str:
        return f"<ExecutionToken {id(self):#x}>"

    def __copy__(self) -> ExecutionToken:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> ExecutionToken:
        return self

    def __reduce__(self) -> NoReturn:
        raise TypeError("an execution token never crosses a process boundary")


@sealed
@dataclass(frozen=True, slots=True)
class ToolExecutionInput:
    """What a caller hands to ``execute``. ``signal`` is required (CANCEL-1)."""

    call_id: str
    name: str
    arguments: Any
    signal: AbortSignal
    agent: str | None = None
    parent: ExecutionToken | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.signal, AbortSignal):
            raise TypeError("CANCEL-1: every execution needs a caller-owned AbortSignal")
        if self.parent is not None and not isinstance(self.parent, ExecutionToken):
            raise TypeError("CODE-2: parent must be an ExecutionToken")


@sealed
@dataclass(frozen=True, slots=True, eq=False)
class ToolExecution:
    """The immutable view of one execution every stage receives (PIPE-2, RES-1).

    Compared and hashed by identity: a listener may key its own state by the execution.

    ``arguments`` is deep-frozen JSON, or ``None`` when the caller's arguments
    were not lossless JSON (the finalizer still sees such an execution, FIN-3).
    """

    token: ExecutionToken
    call_id: str
    name: str
    arguments: Any
    signal: AbortSignal
    agent: str | None
    parent: ExecutionToken | None


class DispatchExecution:
    """The ``tools/execute`` view: identity read-only, ``signal`` replaceable (EXEC-1)."""

    __slots__ = ("_execution", "_signal", "_timeout_ms")
    _execution: ToolExecution
    _signal: AbortSignal
    _timeout_ms: float | None

    def __init__(self, execution: ToolExecution, timeout_ms: float | None) -> None:
        object.__setattr__(self, "_execution", execution)
        object.__setattr__(self, "_signal", execution.signal)
        object.__setattr__(self, "_timeout_ms", timeout_ms)

    token = property(lambda self: self._execution.token)
    call_id = property(lambda self: self._execution.call_id)
    name = property(lambda self: self._execution.name)
    arguments = property(lambda self: self._execution.arguments)
    agent = property(lambda self: self._execution.agent)
    parent = property(lambda self: self._execution.parent)
    timeout_ms = property(lambda self: self._timeout_ms)

    @property
    def signal(self) -> AbortSignal:
        return self._signal

    @signal.setter
    def signal(self, value: AbortSignal) -> None:
        if not isinstance(value, AbortSignal):
            raise TypeError("EXEC-1: a wrapper may replace the signal only with an AbortSignal")
        object.__setattr__(self, "_signal", value)

    def __setattr__(self, name: str, value: Any) -> None:
        if name != "signal":
            raise AttributeError(f"EXEC-1: only `signal` is replaceable, not {name!r}")
        object.__setattr__(self, name, value)  # runs the `signal` property's setter

    def __delattr__(self, name: str) -> NoReturn:
        raise AttributeError(f"EXEC-1: {name!r} cannot be deleted")


@sealed
@dataclass(frozen=True, slots=True)
class ApprovalRequest:
    """PRE-5: what the approval service is asked. Never the arguments."""

    call_id: str
    tool_name: str
    agent: str
    reason: str | None
    signal: AbortSignal


@sealed
@dataclass(frozen=True, slots=True)
class ErrorInfo:
    name: str
    code: str


@sealed
@dataclass(frozen=True, slots=True)
class ToolSuccess:
    """RES-3 success. ``meta`` ``None`` means absent."""

    value: Any
    content: tuple[FrozenDict, ...]
    meta: Any = None
    additional_contexts: tuple[Any, ...] = ()
    concludes_turn: bool = False
    is_error: Literal[False] = field(default=False, init=False)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"isError": False, "value": thaw(self.value)}
        out["content"] = thaw(self.content)
        _optional(out, self.meta, self.additional_contexts)
        if self.concludes_turn:
            out["concludesTurn"] = True
        return out


@sealed
@dataclass(frozen=True, slots=True)
class ToolFailure:
    """RES-3 failure: no value, ever (POST-3)."""

    message: str
    content: tuple[FrozenDict, ...]
    info: ErrorInfo | None = None
    meta: Any = None
    additional_contexts: tuple[Any, ...] = ()
    is_error: Literal[True] = field(default=True, init=False)

    def to_json(self) -> dict[str, Any]:
        error: dict[str, Any] = {"message": self.message}
        if self.info is not None:
            error["info"] = {"name": self.info.name, "code": self.info.code}
        out: dict[str, Any] = {"isError": True, "error": error, "content": thaw(self.content)}
        _optional(out, self.meta, self.additional_contexts)
        return out


ToolResult = ToolSuccess | ToolFailure


def _optional(out: dict[str, Any], meta: Any, contexts: tuple[Any, ...]) -> None:
    if meta is not None:
        out["meta"] = thaw(meta)
    if contexts:
        out["additionalContexts"] = thaw(contexts)


def text(value: str) -> tuple[FrozenDict, ...]:
    """One text content block."""
    return (FrozenDict({"type": "text", "text": value}),)


def failure(message: str, code: str | None = None, *, name: str = "ToolError") -> ToolFailure:
    """A failure whose content is ``Error: <message>`` (RES-3)."""
    info = ErrorInfo(name=name, code=code) if code is not None else None
    return ToolFailure(message=message, content=text(f"Error: {message}"), info=info)


def success(value: Any) -> ToolSuccess:
    """A wrapper-authored success; the registry normalizes it (EXEC-3)."""
    return ToolSuccess(value=materialize(value), content=())


# --- decisions (PRE-1, POST-2, POST-3): plain mappings, so any source can build them
_UNSET: Any = object()


def allow() -> Mapping[str, Any]:
    return {"kind": "allow"}


def deny(reason: str) -> Mapping[str, Any]:
    return {"kind": "deny", "reason": reason}


def ask(reason: str | None = None) -> Mapping[str, Any]:
    return {"kind": "ask"} if reason is None else {"kind": "ask", "reason": reason}


def accept(
    *,
    content: Sequence[Mapping[str, Any]] | None = None,
    value: Any = _UNSET,
    additional_contexts: Sequence[Any] | None = None,
) -> Mapping[str, Any]:
    out: dict[str, Any] = {"kind": "accept"}
    if content is not None:
        out["content"] = content
    if value is not _UNSET:
        out["value"] = value
    if additional_contexts is not None:
        out["additionalContexts"] = additional_contexts
    return out


def block(
    feedback: str | Sequence[Mapping[str, Any]],
    *,
    additional_contexts: Sequence[Any] | None = None,
) -> Mapping[str, Any]:
    out: dict[str, Any] = {"kind": "block", "feedback": feedback}
    if additional_contexts is not None:
        out["additionalContexts"] = additional_contexts
    return out
