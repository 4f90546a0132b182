"""The reference tool registry and its five-stage execution pipeline.

Rules of this file (as h11's ``_state.py`` states its own):

* Everything that decides what happens to one execution lives here: which
  stages it traverses, which result it ends with, which finalizer runs. The
  Code Mode transport (``code_mode.py``), the batch scheduler (``scheduler.py``)
  and the timeout policy (``timeout.py``) are clients of this file's API.
* This file does not know who the caller is (an agent loop, a scheduler, a
  ``run_code`` program): every caller goes through :meth:`Registry.execute`,
  or through its three phases ``prepare`` / ``dispatch`` / ``complete``.
* Rule IDs from SPEC.md stand beside the code that implements them.

Theory of operation. One execution is a small state machine::

    materialize -> resolve -> (pre-aborted?) -> pre-execute -> approval -> guards
        -> tools/execute wrappers -> body -> post-execute -> finalize -> tools/result

Every outcome is *normalized* into a result as soon as it is known, and then
takes one of the routes in :data:`ROUTES` to the end: a route says whether the
outcome still passes ``tools/post-execute`` and whether the snapshotted
finalizer runs. Every route ends in exactly one ``tools/result``. Nothing ever
cancels a task: cancellation is a signal the stages and the body observe, and
the registry re-checks it between stages (CANCEL-2..4).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import inspect
import json
import logging
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal, cast

import jsonschema
from jsonschema.validators import Draft202012Validator

from reference._json import FrozenDict, NotLosslessJSON, materialize, thaw
from reference._signal import AbortSignal
from reference._types import (
    RUN_CODE,
    ApprovalRequest,
    DispatchExecution,
    ErrorCode,
    ErrorInfo,
    ExecutionToken,
    RegistrationError,
    ToolExecution,
    ToolExecutionInput,
    ToolFailure,
    ToolResult,
    ToolSuccess,
    failure,
    text,
)

__all__ = ["EVENTS", "ROUTES", "Prepared", "Registry", "Route"]

log = logging.getLogger("reference.registry")

Mode = Literal["native", "code", "both"]
ExecutionMode = Literal["parallel", "exclusive"]

EVENTS: Final = (
    "tools/pre-execute",
    "tools/execute",
    "tools/post-execute",
    "tools/result",
    "tools/code-dispatch-log",
)

# The definition fields, by layer (DEF-1). Only MODEL_VISIBLE ever reaches a model:
# schemas() copies these keys and nothing else (DEF-2) -- the host-only fields (execute,
# output, finalize_content, timeout_ms, is_concurrency_safe), the presentation fields
# (present_call, present_result) and any field added later never need listing.
MODEL_VISIBLE: Final = ("name", "description", "parameters")


@dataclass(frozen=True, slots=True)
class Route:
    post_execute: bool  # does this outcome still pass tools/post-execute?
    finalize: bool  # does the snapshotted finalizeContent run?


# Which later stages each kind of outcome reaches (PIPE-1, POST-1, EXEC-4, FIN-2).
# Every route ends in exactly one tools/result (RES-1).
ROUTES: Final[Mapping[str, Route]] = {
    #  outcome                                  post-execute  finalize
    "unknown-tool": Route(post_execute=False, finalize=False),  # nothing resolved
    "invalid-args": Route(post_execute=False, finalize=True),  # PIPE-2, PIPE-4
    "aborted-before-dispatch": Route(post_execute=False, finalize=True),  # CANCEL-2
    "denied": Route(post_execute=False, finalize=True),  # PRE-2..4, GUARD-1 (reference's choice)
    "policy-failure": Route(post_execute=False, finalize=True),  # PRE-6, GUARD-2
    "wrapper-failure": Route(post_execute=False, finalize=True),  # EXEC-4
    "dispatched": Route(post_execute=True, finalize=True),  # POST-1: body value or error
}

APPROVAL_DENIALS: Final[Mapping[str, str]] = {  # PRE-4: distinct reasons per answer
    "rejected": "the user rejected this call",
    "cancelled": "the approval request was cancelled",
    "unavailable": "approval is unavailable; the call was not approved",
}


# --------------------------------------------------------------------------- tools


@dataclass(frozen=True, slots=True)
class _Tool:
    """A registered definition, validated and snapshotted (DEF-1..4)."""

    name: str
    description: str
    parameters: Any  # frozen JSON Schema
    output_schema: Any  # frozen JSON Schema
    render: Callable[[Any, Any], Any]
    presentation_meta: Callable[[Any, Any], Any] | None
    execute: Callable[[Any, Any], Any]
    finalize_content: Callable[[ToolExecution, ToolResult], Any] | None
    timeout_ms: float | None
    is_concurrency_safe: Callable[[Any], Any] | None
    definition: Mapping[str, Any]  # the caller's definition, as given (host side only)
    params_validator: Draft202012Validator = field(repr=False)
    output_validator: Draft202012Validator = field(repr=False)


def _validator(schema: Any) -> Draft202012Validator:
    """A checked validator for the JSON Schema ``schema`` (SchemaError if it is not one).

    Validators are immutable; registrations reuse a few distinct schemas many
    times, so each is checked and compiled once, keyed by its canonical JSON.
    """
    return _validator_for(json.dumps(schema, sort_keys=True))


@functools.lru_cache(maxsize=256)
def _validator_for(canonical: str) -> Draft202012Validator:
    schema = json.loads(canonical)
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def _compile(definition: Mapping[str, Any]) -> _Tool:
    if not isinstance(definition, Mapping):
        raise RegistrationError("DEF-1: a definition is a mapping of fields")
    name = definition.get("name")
    if not isinstance(name, str) or not name:
        raise RegistrationError("DEF-1: `name` must be a non-empty string")
    description = definition.get("description", "")
    if not isinstance(description, str):
        raise RegistrationError(f"DEF-1: tool {name!r}: `description` must be a string")
    try:
        parameters = materialize(definition.get("parameters", {"type": "object"}))
        params_validator = _validator(thaw(parameters))
    except (NotLosslessJSON, jsonschema.SchemaError) as e:
        raise RegistrationError(f"DEF-1: tool {name!r}: invalid `parameters`: {e}") from None
    execute = definition.get("execute")
    if not callable(execute):
        raise RegistrationError(f"DEF-1: tool {name!r}: `execute` must be callable")
    output = definition.get("output")  # DEF-3: mandatory canonical output declaration
    if (
        not isinstance(output, Mapping)
        or "schema" not in output
        or not callable(output.get("render"))
    ):
        raise RegistrationError(f"DEF-3: tool {name!r}: `output` needs `schema` and `render`")
    try:
        output_schema = materialize(output["schema"])
        output_validator = _validator(thaw(output_schema))
    except (NotLosslessJSON, jsonschema.SchemaError) as e:
        raise RegistrationError(f"DEF-3: tool {name!r}: invalid `output.schema`: {e}") from None
    meta = output.get("presentation_meta")
    if meta is not None and not callable(meta):
        raise RegistrationError(f"OUT-3: tool {name!r}: `presentation_meta` must be callable")
    timeout_ms = definition.get("timeout_ms")  # DEF-4
    if timeout_ms is not None and (
        isinstance(timeout_ms, bool)
        or not isinstance(timeout_ms, (int, float))
        or not (0 < timeout_ms < float("inf"))
    ):
        raise RegistrationError(f"DEF-4: tool {name!r}: `timeout_ms` must be positive and finite")
    for key in ("finalize_content", "is_concurrency_safe", "present_call", "present_result"):
        if definition.get(key) is not None and not callable(definition[key]):
            raise RegistrationError(f"DEF-1: tool {name!r}: `{key}` must be callable")
    return _Tool(
        name=name,
        description=description,
        parameters=parameters,
        output_schema=output_schema,
        render=output["render"],
        presentation_meta=meta,
        execute=execute,
        finalize_content=definition.get("finalize_content"),
        timeout_ms=timeout_ms,
        is_concurrency_safe=definition.get("is_concurrency_safe"),
        definition=definition,
        params_validator=params_validator,
        output_validator=output_validator,
    )


# ------------------------------------------------------------------- the run state


@dataclass(slots=True, eq=False)
class Prepared:
    """One execution between phases. Opaque to callers other than the scheduler."""

    execution: ToolExecution
    tool: _Tool | None
    finalizer: Callable[[ToolExecution, ToolResult], Any] | None  # FIN-1: snapshotted at start
    result: ToolResult | None = None  # set once the outcome is known
    outcome: str = "dispatched"  # a key of ROUTES
    body_entered: bool = False
    deferred: list[Any] = field(default_factory=list)  # CTX-1
    concluded: bool = False  # CTX-2

    @property
    def ready(self) -> bool:
        """True when the call passed every policy stage and waits for dispatch."""
        return self.result is None


class ToolRunContext:
    """The body's view (CANCEL-1, CTX-1, CTX-2): read-only execution + two methods."""

    __slots__ = ("_execution", "_run", "_signal")
    _execution: ToolExecution
    _run: Prepared
    _signal: AbortSignal

    def __init__(self, run: Prepared, signal: AbortSignal) -> None:
        object.__setattr__(self, "_execution", run.execution)
        object.__setattr__(self, "_run", run)
        object.__setattr__(self, "_signal", signal)

    token = property(lambda self: self._execution.token)
    call_id = property(lambda self: self._execution.call_id)
    name = property(lambda self: self._execution.name)
    arguments = property(lambda self: self._execution.arguments)
    agent = property(lambda self: self._execution.agent)
    parent = property(lambda self: self._execution.parent)
    signal = property(lambda self: self._signal)  # CANCEL-1: read-only to the body

    def defer_context(self, message: Any) -> None:
        """CTX-1: ride this execution's result; never inject while the call is open."""
        self._run.deferred.append(materialize(message, "$.context"))  # OUT-5: reject at source

    def conclude_turn(self) -> None:
        """CTX-2: mark a *successful* result as concluding the turn."""
        self._run.concluded = True

    def forward(self, nested: ToolResult) -> None:
        """CTX-2: a composite tool forwards a nested result's contexts and turn mark."""
        for message in nested.additional_contexts:
            self.defer_context(message)
        if isinstance(nested, ToolSuccess) and nested.concludes_turn:
            self.conclude_turn()

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"CANCEL-1: the run context is read-only (attempted {name!r})")


# ------------------------------------------------------------------------ registry

Listener = Callable[..., Any]


@dataclass(frozen=True, slots=True, eq=False)
class _Entry:
    fn: Listener
    scope: str | None


async def _settle(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


class Registry:
    """Registration, visibility, the pipeline and concurrency classification."""

    def __init__(
        self,
        *,
        mode: Mode = "native",
        approval: Any = None,
        code_runtime: Any = None,
    ) -> None:
        if mode not in ("native", "code", "both"):
            raise ValueError(f"mode must be native, code or both, not {mode!r}")
        self.mode: Mode = mode
        self.approval = approval  # PRE-3/PRE-4: the approval seam, or None (unmounted)
        self.code_runtime = code_runtime
        self.log: list[dict[str, Any]] = []  # the durable log copy (CODE-3)
        self._global: dict[str, _Tool] = {}
        self._scoped: dict[str, dict[str, _Tool]] = {}
        self._listeners: dict[str, list[_Entry]] = {event: [] for event in EVENTS}
        self._guards: list[_Entry] = []
        self._run_code: _Tool | None = None
        # PIPE-2: the snapshot taken when each call was made, until its prepare() takes it
        # (keyed by the call's identity; the entry holds the call, so the id is not reused)
        self._snapshots: dict[int, tuple[ToolExecutionInput, Any, str | None]] = {}

    # ------------------------------------------------------------ registration

    def register(
        self, definition: Mapping[str, Any], scope: str | None = None
    ) -> Callable[[], None]:
        """Register a tool globally or for one agent; returns its disposer (DEF-6)."""
        tool = _compile(definition)
        if tool.name == RUN_CODE:  # CODE-4
            raise RegistrationError(f"CODE-4: `{RUN_CODE}` is reserved")
        layer = self._global if scope is None else self._scoped.setdefault(scope, {})
        if tool.name in layer:  # DEF-5
            where = "globally" if scope is None else f"for agent {scope!r}"
            raise RegistrationError(f"DEF-5: tool {tool.name!r} is already registered {where}")
        layer[tool.name] = tool

        def dispose() -> None:  # DEF-6: idempotent; removes exactly this registration
            if layer.get(tool.name) is tool:
                del layer[tool.name]

        return dispose

    def on(
        self, event: str, listener: Listener, *, scope: str | None = None, prepend: bool = False
    ) -> Callable[[], None]:
        """Add a listener for one pipeline event; ``scope`` limits it to one agent (PRE-8)."""
        if event not in self._listeners:
            raise ValueError(f"unknown event {event!r}; expected one of {EVENTS}")
        return self._add(self._listeners[event], _Entry(listener, scope), prepend)

    def guard(
        self, guard: Callable[[ToolExecution], Any], *, scope: str | None = None
    ) -> Callable[[], None]:
        """Add a monotonic guard (GUARD-1); ``scope`` limits it to one agent (GUARD-3)."""
        return self._add(self._guards, _Entry(guard, scope), False)

    @staticmethod
    def _add(entries: list[_Entry], entry: _Entry, prepend: bool) -> Callable[[], None]:
        entries.insert(0, entry) if prepend else entries.append(entry)

        def dispose() -> None:  # this very registration, by identity: never an equal one
            for i, held in enumerate(entries):
                if held is entry:
                    del entries[i]
                    return

        return dispose

    def use_timeout_policy(self) -> Callable[[], None]:
        """Install the timeout policy as the outermost ``tools/execute`` wrapper (EXEC-5)."""
        from reference.timeout import timeout_wrapper

        return self.on("tools/execute", timeout_wrapper, prepend=True)

    # -------------------------------------------------------------- visibility

    def _visible(self, scope: str | None) -> dict[str, _Tool]:
        """SCOPE-2: the one visibility view behind schemas, lookup and execution."""
        view = dict(self._global)
        if scope is not None:
            view.update(self._scoped.get(scope, {}))  # DEF-5: agent layer shadows global
        return view

    def _direct(self, scope: str | None) -> dict[str, _Tool]:
        """What a model-direct call (no parent) from ``scope`` can run (CODE-1, SCOPE-2)."""
        transport = {RUN_CODE: self._transport()} if self.mode in ("code", "both") else {}
        return transport if self.mode == "code" else {**self._visible(scope), **transport}

    def _resolve(self, name: str, scope: str | None, parent: ExecutionToken | None) -> _Tool | None:
        if parent is None:
            return self._direct(scope).get(name)
        transport = {RUN_CODE: self._transport()} if self.mode in ("code", "both") else {}
        return {**self._visible(scope), **transport}.get(name)  # CODE-2

    def _transport(self) -> _Tool:
        if self._run_code is None:
            from reference.code_mode import run_code_definition

            self._run_code = _compile(run_code_definition(self))
        return self._run_code

    def get(self, name: str, scope: str | None = None) -> Mapping[str, Any] | None:
        """The definition a model-direct call from ``scope`` would run, or None."""
        tool = self._direct(scope).get(name)
        return tool.definition if tool else None

    def schemas(self, scope: str | None = None) -> list[dict[str, Any]]:
        """DEF-2: fresh copies, built by whitelist, of what ``scope`` can call directly.

        Under ``code`` this is the presented list (only ``run_code``); the SDK's
        source is :meth:`catalog` (the latitude SCOPE-2 grants, documented).
        """
        return [_schema(tool) for tool in self._direct(scope).values()]

    def catalog(self, scope: str | None = None) -> list[dict[str, Any]]:
        """The native tools ``scope`` can reach, from a ``run_code`` program or directly."""
        return [_schema(tool) for tool in self._visible(scope).values()]

    # ------------------------------------------------------------ classification

    def execution_mode(self, call: ToolExecutionInput) -> ExecutionMode:
        """CONC-1: parallel only when the visible classifier returns exactly ``True``."""
        tool = self._resolve(call.name, call.agent, call.parent)
        if tool is None or tool.is_concurrency_safe is None:
            return "exclusive"
        try:
            args = materialize(call.arguments)
        except NotLosslessJSON:
            return "exclusive"
        if next(tool.params_validator.iter_errors(thaw(args)), None) is not None:
            return "exclusive"
        try:
            verdict = tool.is_concurrency_safe(args)
        except Exception:  # a throwing classifier means exclusive
            return "exclusive"
        return "parallel" if verdict is True else "exclusive"

    # ---------------------------------------------------------------- pipeline

    def execute(self, call: ToolExecutionInput) -> Coroutine[Any, Any, ToolResult]:
        """Run one call through the whole pipeline; returns the authoritative result.

        The arguments are snapshotted now, when the call is made -- not when the returned
        coroutine is first awaited: a caller that changes its object in between changes
        nothing (PIPE-2).
        """
        self.snapshot(call)
        return self._execute(call)

    async def _execute(self, call: ToolExecutionInput) -> ToolResult:
        run = await self.prepare(call)
        if run.ready:
            await self.dispatch(run)
        return await self.complete(run)

    def snapshot(self, call: ToolExecutionInput) -> None:
        """PIPE-2: take the call's one lossless snapshot of its arguments now (``prepare``
        uses it); a driver calls it for every call when it is handed them (``run_batch``).
        A call already snapshotted keeps its snapshot: there is one, taken at the call."""
        if self._snapshots.get(id(call), (None,))[0] is call:
            return
        try:
            # PIPE-2: one lossless snapshot, deep-frozen. PIPE-3: decisions carry no
            # rewrite, so every stage and the body see exactly these arguments.
            arguments, bad_args = materialize(call.arguments, "$.arguments"), None
        except NotLosslessJSON as e:
            arguments, bad_args = None, f"arguments are not lossless JSON: {e}"
        self._snapshots[id(call)] = (call, arguments, bad_args)

    def taken(self, call: ToolExecutionInput) -> tuple[Any, str | None]:
        """The call's snapshot (arguments, or None and why they are not lossless JSON): the
        one taken when the call was made, else one taken now (``snapshot``)."""
        self.snapshot(call)  # (a no-op when the call was snapshotted when it was made)
        _, arguments, bad_args = self._snapshots[id(call)]
        return arguments, bad_args

    async def prepare(self, call: ToolExecutionInput) -> Prepared:
        """Materialize, resolve, and run the policy stages ① and ② (PIPE-1)."""
        tool = self._resolve(call.name, call.agent, call.parent)
        token = ExecutionToken()
        arguments, bad_args = self.taken(call)
        del self._snapshots[id(call)]
        execution = ToolExecution(
            token, call.call_id, call.name, arguments, call.signal, call.agent, call.parent
        )
        run = Prepared(execution, tool, tool.finalize_content if tool else None)  # FIN-1
        if bad_args is not None:
            return self._end(run, "invalid-args", failure(bad_args, ErrorCode.INVALID_ARGS))
        if tool is None:  # SCOPE-1, CODE-1: hidden, missing, or code-only look the same
            return self._end(run, "unknown-tool", _unknown(call.name, self.mode, call.parent))
        problems = [e.message for e in tool.params_validator.iter_errors(thaw(arguments))]
        if problems:  # PIPE-4
            message = f"invalid arguments for {tool.name}: " + "; ".join(problems)
            return self._end(run, "invalid-args", failure(message, ErrorCode.INVALID_ARGS))
        if self._cancelled(run):  # CANCEL-2: pre-aborted entry skips every policy stage
            return run
        try:
            decision = await self._pre_execute(execution)  # ①
        except _PolicyFailure as e:  # PRE-6: fail closed
            if self._cancelled(run):
                return run
            return self._end(run, "policy-failure", failure(str(e)))
        if self._cancelled(run):  # PRE-7: re-check after the waterfall settled
            return run
        if decision["kind"] == "deny":  # PRE-2
            return self._end(run, "denied", failure(decision["reason"]))
        if decision["kind"] == "ask":  # PRE-3, PRE-4
            refusal = await self._approve(execution, decision.get("reason"))
            if self._cancelled(run):
                return run
            if refusal is not None:
                return self._end(run, "denied", failure(refusal))
        objection = self._guards_for(execution)  # ②
        if objection is not None:
            return self._end(run, objection[0], failure(objection[1]))
        self._cancelled(run)
        return run

    async def dispatch(self, run: Prepared) -> None:
        """③ ``tools/execute`` wrappers around the body (EXEC-1..4)."""
        assert run.ready and run.tool is not None, "dispatch() needs a prepared, allowed run"
        tool = run.tool
        view = DispatchExecution(run.execution, tool.timeout_ms)
        wrappers = self._scoped_entries("tools/execute", run.execution.agent)

        async def body() -> ToolResult:
            caller = run.execution.signal
            if caller.aborted:  # CANCEL-2: e.g. aborted while a wrapper held the call
                return _code_failure(ErrorCode.ABORTED_BEFORE_DISPATCH, "cancelled before dispatch")
            # EXEC-2: a replacement signal is fused with the caller's before the body runs
            signal = caller if view.signal is caller else AbortSignal.any(caller, view.signal)
            context = ToolRunContext(run, signal)
            run.body_entered = True
            try:
                value = await _settle(tool.execute(run.execution.arguments, context))  # CANCEL-4
            except Exception as e:  # POST-1: a body error is a normalized result
                return _exception_failure(e)
            return self._normalize(run, value)

        async def wrapped(i: int) -> ToolResult:
            if i == len(wrappers):
                return await body()
            inner: list[ToolResult] = []

            async def next_() -> ToolResult:
                inner.append(await wrapped(i + 1))
                return inner[-1]

            result = await _settle(wrappers[i](view, _once(next_)))
            if inner and result is inner[-1]:
                return result  # passed through unchanged: already normalized
            return self._normalize_authored(run, result)  # EXEC-3

        try:
            result = await wrapped(0)
        except Exception as e:  # EXEC-4: bypasses post-execute, still finalized
            self._end(run, "wrapper-failure", _exception_failure(e))
            return
        self._end(run, "dispatched", result)

    async def complete(self, run: Prepared) -> ToolResult:
        """④ post-execute, cancellation, contexts, ⑤ finalize, then ``tools/result``."""
        assert run.result is not None, "complete() runs after prepare() (and dispatch())"
        execution, result = run.execution, run.result
        blocked, decided = False, cast(Sequence[Any], ())
        if ROUTES[run.outcome].post_execute:
            try:
                result, blocked, decided = await self._post_execute(run, result)  # ④
            except Exception as e:  # POST-4
                result = _exception_failure(e)
        if not result.is_error and execution.signal.aborted:  # CANCEL-2/3: only a success
            code = ErrorCode.ABORTED if run.body_entered else ErrorCode.ABORTED_BEFORE_DISPATCH
            result = _code_failure(code, "the call was cancelled")
        # CTX-1, POST-5: deferred contexts ride the result unless a block dropped them
        contexts = (() if blocked else tuple(run.deferred)) + tuple(decided)
        if isinstance(result, ToolSuccess):
            result = _replace(result, additional_contexts=contexts, concludes_turn=run.concluded)
        else:  # CTX-2: a failure never concludes the turn
            result = _replace(result, additional_contexts=contexts)
        if ROUTES[run.outcome].finalize and run.finalizer is not None:
            result = _finalize(run.finalizer, execution, result)  # ⑤ FIN-2..4
        for entry in self._scoped_entries("tools/result", execution.agent):  # RES-1
            try:
                await _settle(entry(execution, result))
            except Exception:  # RES-1: an observer's exception changes nothing
                log.exception("tools/result observer failed for %s", execution.call_id)
        return result  # RES-2: the very object observers received

    # ------------------------------------------------------------------ stages

    async def _pre_execute(self, execution: ToolExecution) -> Mapping[str, Any]:
        """① The allow/deny/ask waterfall (PRE-1, PRE-6, PRE-8)."""
        listeners = self._scoped_entries("tools/pre-execute", execution.agent)
        failures: list[_PolicyFailure] = []  # PRE-6: once failed, no outer listener reopens it

        async def step(i: int) -> Mapping[str, Any]:
            if i == len(listeners):
                return {"kind": "allow"}  # PRE-1: the end of the chain allows
            try:
                decision = await _settle(listeners[i](execution, _once(lambda: step(i + 1))))
                return _check_pre_decision(decision)
            except _PolicyFailure as e:
                failures.append(e)
                raise
            except Exception as e:  # PRE-6: a throwing listener fails closed
                failures.append(_PolicyFailure(f"pre-execute listener failed: {_describe(e)}"))
                raise failures[-1] from e

        decision: Mapping[str, Any] = {}
        with contextlib.suppress(_PolicyFailure):
            decision = await step(0)
        if failures:
            raise failures[0]
        return decision

    async def _approve(self, execution: ToolExecution, reason: str | None) -> str | None:
        """PRE-3..5: the approval seam. Returns a denial reason, or None when allowed once."""
        service = self.approval
        if service is None:  # PRE-3: fail closed
            return "approval required but no approval service is mounted"
        if execution.agent is None:
            return "approval required but the call has no agent to route the question to"
        request = ApprovalRequest(  # PRE-5: the call id and reason, never the arguments
            call_id=execution.call_id,
            tool_name=execution.name,
            agent=execution.agent,
            reason=reason,
            signal=execution.signal,
        )
        try:
            answer = await _settle(service.request(request))
        except Exception as e:  # PRE-4: a throwing service denies
            return f"the approval service failed: {_describe(e)}"
        if answer == "allowed-once":
            return None
        if isinstance(answer, str) and answer in APPROVAL_DENIALS:
            return APPROVAL_DENIALS[answer]
        return f"the approval service gave an unrecognized answer ({answer!r}); denied"

    def _guards_for(self, execution: ToolExecution) -> tuple[str, str] | None:
        """② Monotonic guards: the first objection is final (GUARD-1..3)."""
        for entry in self._guards:
            if entry.scope is not None and entry.scope != execution.agent:
                continue
            try:
                verdict = entry.fn(execution)
            except Exception as e:  # GUARD-2: a throwing guard denies
                return "policy-failure", f"guard failed: {_describe(e)}"
            if verdict is None:
                continue
            if isinstance(verdict, str) and verdict:
                return "denied", verdict
            return "policy-failure", f"guard returned {verdict!r} instead of a reason or nothing"
        return None

    async def _post_execute(
        self, run: Prepared, result: ToolResult
    ) -> tuple[ToolResult, bool, Sequence[Any]]:
        """④ POST-1..5. Returns (result, blocked, decision contexts)."""
        listeners = self._scoped_entries("tools/post-execute", run.execution.agent)
        if not listeners:
            return result, False, ()

        async def step(i: int) -> Mapping[str, Any]:
            if i == len(listeners):
                return {"kind": "accept"}  # POST-1: next() accepts unchanged
            decision = await _settle(
                listeners[i](run.execution, result, _once(lambda: step(i + 1)))
            )
            return cast(Mapping[str, Any], decision)

        decision = await step(0)
        if not isinstance(decision, Mapping) or decision.get("kind") not in ("accept", "block"):
            raise ValueError(f"post-execute returned a malformed decision: {decision!r}")
        contexts = [
            materialize(c, "$.additionalContexts") for c in decision.get("additionalContexts", ())
        ]
        if decision["kind"] == "block":  # POST-3: an error whose content is the feedback
            feedback = decision.get("feedback")
            content = (
                text(feedback) if isinstance(feedback, str) else _content(feedback, "$.feedback")
            )
            message = " ".join(b.get("text", "") for b in content if b.get("type") == "text")
            return (
                ToolFailure(message=message or "blocked by post-execute", content=content),
                True,
                contexts,
            )
        if "content" in decision and "value" in decision:  # POST-2: never both
            raise ValueError("post-execute accept may replace content or value, never both")
        if "value" in decision:  # POST-2: revalidated and re-rendered
            return self._normalize(run, decision["value"]), False, contexts
        if "content" in decision:  # POST-2: replacement content keeps value and meta
            return (
                _replace(result, content=_content(decision["content"], "$.content")),
                False,
                contexts,
            )
        return result, False, contexts

    # ------------------------------------------------------------- normalizing

    def _normalize(self, run: Prepared, value: Any) -> ToolResult:
        """OUT-1..3, OUT-5: snapshot, validate, render a canonical value."""
        tool = run.tool
        assert tool is not None
        args = run.execution.arguments
        try:
            value = materialize(value, "$.value")
        except NotLosslessJSON as e:
            return _code_failure(ErrorCode.INVALID_TOOL_OUTPUT, f"{tool.name} returned {e}")
        problems = [e.message for e in tool.output_validator.iter_errors(thaw(value))]
        if problems:
            message = f"{tool.name} returned a value that violates its output schema: " + "; ".join(
                problems
            )
            return _code_failure(ErrorCode.INVALID_TOOL_OUTPUT, message)
        try:
            content = _content(tool.render(args, value), "$.content")
            meta = None
            if tool.presentation_meta is not None and run.execution.parent is None:  # OUT-3
                meta = materialize(tool.presentation_meta(args, value), "$.meta")
        except (NotLosslessJSON, ValueError, TypeError) as e:
            return _code_failure(ErrorCode.INVALID_TOOL_OUTPUT, f"{tool.name}: {e}")
        except Exception as e:  # a throwing projection is an output error
            return _code_failure(ErrorCode.INVALID_TOOL_OUTPUT, f"{tool.name}: {_describe(e)}")
        return ToolSuccess(value=value, content=content, meta=meta)

    def _normalize_authored(self, run: Prepared, result: Any) -> ToolResult:
        """EXEC-3: a wrapper's result; an authored success is validated and rendered."""
        if isinstance(result, ToolSuccess):
            return self._normalize(run, result.value)
        if isinstance(result, ToolFailure):
            return _replace(result, additional_contexts=())
        if isinstance(result, Mapping) and result.get("isError") is False and "value" in result:
            return self._normalize(run, result["value"])
        if isinstance(result, Mapping) and result.get("isError") is True:
            error = result.get("error")
            if isinstance(error, Mapping) and isinstance(error.get("message"), str):
                return failure(error["message"])
        raise TypeError(f"tools/execute wrapper returned {result!r}, not a result")

    # ------------------------------------------------------------------ helpers

    def _scoped_entries(self, event: str, agent: str | None) -> list[Listener]:
        """PRE-8: a scoped listener sees only its agent's calls; a global one sees all."""
        return [e.fn for e in self._listeners[event] if e.scope is None or e.scope == agent]

    def _cancelled(self, run: Prepared) -> bool:
        """CANCEL-2: cancellation before the body was invoked."""
        if run.execution.signal.aborted:
            self._end(
                run,
                "aborted-before-dispatch",
                _code_failure(ErrorCode.ABORTED_BEFORE_DISPATCH, "cancelled before dispatch"),
            )
            return True
        return False

    @staticmethod
    def _end(run: Prepared, outcome: str, result: ToolResult) -> Prepared:
        run.outcome, run.result = outcome, result
        return run


class _PolicyFailure(Exception):
    """A listener threw or returned a malformed decision (PRE-6)."""


def _once(step: Callable[[], Awaitable[Any]]) -> Callable[[], Awaitable[Any]]:
    """PIPE-1: ``next()`` runs the rest of a chain at most once, however often it is called."""
    memo: list[Any] = []

    async def next_() -> Any:
        if not memo:
            memo.append(asyncio.ensure_future(step()))
        return await memo[0]

    return next_


def _check_pre_decision(decision: Any) -> Mapping[str, Any]:
    """PRE-6: only a well-formed allow / deny(reason) / ask(reason?) passes."""
    if isinstance(decision, Mapping):
        kind = decision.get("kind")
        reason = decision.get("reason")
        if kind == "allow":
            return decision
        if kind == "deny" and isinstance(reason, str) and reason:
            return decision
        if kind == "ask" and (reason is None or isinstance(reason, str)):
            return decision
    raise _PolicyFailure(f"pre-execute returned a malformed decision: {decision!r}")


def _finalize(
    finalizer: Callable[[ToolExecution, ToolResult], Any],
    execution: ToolExecution,
    result: ToolResult,
) -> ToolResult:
    """FIN-2..4: exactly once; may replace only ``content``; a throw keeps the result."""
    try:
        content = finalizer(execution, result)
        if inspect.isawaitable(content):
            close = getattr(content, "close", None)
            if close:
                close()
            raise TypeError("finalize_content must be synchronous")
        if content is None:
            return result
        return _replace(result, content=_content(content, "$.content"))
    except Exception:  # FIN-4: still exactly one result
        log.exception("finalize_content of %s violated its contract", execution.name)
        return result


def _content(blocks: Any, path: str) -> tuple[FrozenDict, ...]:
    content = materialize(blocks, path)
    if not isinstance(content, tuple) or not all(
        isinstance(b, FrozenDict) and isinstance(b.get("type"), str) for b in content
    ):
        raise ValueError(f"{path}: content must be a list of blocks with a string `type`")
    return content


def _replace(result: ToolResult, **changes: Any) -> ToolResult:
    return dataclasses.replace(result, **changes)


def _code_failure(code: ErrorCode, message: str) -> ToolFailure:
    return failure(message, code.value, name=_ERROR_NAMES[code])


_ERROR_NAMES: Final = {
    ErrorCode.UNKNOWN_TOOL: "ToolNotFoundError",
    ErrorCode.INVALID_ARGS: "ToolArgsError",
    ErrorCode.INVALID_TOOL_OUTPUT: "ToolOutputError",
    ErrorCode.ABORTED: "ToolAbortedError",
    ErrorCode.ABORTED_BEFORE_DISPATCH: "ToolAbortedError",
    ErrorCode.TOOL_TIMEOUT: "ToolTimeoutError",
}


def _unknown(name: str, mode: str, parent: ExecutionToken | None) -> ToolFailure:
    if mode == "code" and parent is None:  # CODE-1: point the model to run_code
        message = (
            f"unknown tool `{name}`: only `{RUN_CODE}` is callable directly; "
            f"call tools from inside a `{RUN_CODE}` program"
        )
    else:
        message = f"unknown tool `{name}`"
    return _code_failure(ErrorCode.UNKNOWN_TOOL, message)


def _exception_failure(e: Exception) -> ToolFailure:
    code = getattr(e, "code", None)
    info = ErrorInfo(type(e).__name__, code) if isinstance(code, str) and code else None
    message = str(e) or type(e).__name__
    return ToolFailure(message=message, content=text(f"Error: {message}"), info=info)


def _describe(e: BaseException) -> str:
    return f"{type(e).__name__}: {e}" if str(e) else type(e).__name__


def _schema(tool: _Tool) -> dict[str, Any]:
    """DEF-2: exactly name, description, parameters -- as a fresh, private copy."""
    return {"name": tool.name, "description": tool.description, "parameters": thaw(tool.parameters)}
