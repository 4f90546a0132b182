"""pydantic-ai (pydantic-ai-slim 2.68.0), in process, driven by its own scripted model.

The kit's example of the ``python:MODULE:FACTORY`` form::

    toolreg-conformance run --adapter python:conformance.adapters.pydantic_ai:make_adapter

Two approval flavours, one adapter (same name and version; each trace's ``notes`` says which):
``make_adapter`` interrupts then resumes, ``make_inline_adapter`` answers inline (below).

Every action is one ``Agent.run`` whose ``FunctionModel`` answers the first request with one
model turn (one ``ToolCallPart`` per call of the action) and every later request with the
text ``DONE``, which ends the run. No network, no keys. File:line references are to the
installed package ``pydantic_ai/`` (abbreviated ``pa/``).

Mapping (kit stage -> framework API):

* tool -> ``Tool.from_schema(body, name, description, parameters, takes_ctx=True,
  sequential=True)`` in one ``FunctionToolset``; ``from_schema`` validates nothing
  (``any_schema``, pa/tools.py:549): the adapter adds no validation either. A tool without
  ``isConcurrencySafe`` is exclusive (SPEC CONC-1): ``sequential=True``, the framework's barrier.
* a call -> ``ToolCallPart(name, args=<the caller's decoded dict>, tool_call_id)`` (a dict is
  what ``ToolCallPart.args`` accepts besides JSON text); the answer is the call's
  ``ToolReturnPart`` in the run's history (below). With observers the run must stream
  (pa/capabilities/hooks.py ``on.event``): the args then travel as JSON text (``DeltaToolCall``).
* ① pre-execute -> an ``after_tool_validate`` hook (``Hooks`` capability), the framework's
  "reliable gate on validated arguments" that may defer the call (pa/capabilities/abstract.py:
  1251-1273); it runs before every execute hook, so before the wrappers (pa/tool_manager.py:
  690, 752-767). The framework has no waterfall: the adapter chains the listeners (``next()``
  runs the rest; the end says allow) and maps the decision: allow -> the args are returned;
  deny(reason) -> ``ToolFailed(reason)``; ask -> ``ApprovalRequired(metadata={"reason": ...})``.
  A value that is no well-formed decision is returned as is: the hook's return value IS the
  args (pa/tool_manager.py:690). Assigning the view's ``arguments`` is how a hook replaces
  them: the hook returns the view's arguments. On the resumed run of an approved call
  (re-validated with ``approved=True``, pa/_tool_execution.py:785) the hook returns the args
  without asking the listeners again: the approval answered the ask.
* approval -> interrupt-then-resume: the run ends with ``DeferredToolRequests``; each
  pending call's request (``ToolCallPart`` + its metadata, presented with the kit's key
  names: callId, name, arguments, metadata; the arguments it shows are the part's args,
  parsed) goes to the scenario's approval script; the
  run resumes with ``DeferredToolResults(approvals=...)``: allowed-once -> ``True``,
  rejected / cancelled / unavailable -> ``ToolDenied(<distinct message>)``, anything else as
  is (the framework checks it, pa/_deferred.py:233-252), keyed by the part's
  ``tool_call_id`` read after the decision, as the documented idiom does
  (pa/.agents/skills/building-pydantic-ai-agents/references/TOOLS-ADVANCED.md:30-34). The part
  is the live one of the message history the run resumes from: no copy is made.
  No approval service: the run stops
  with the requests pending -> the closed form ``interrupted``.
  Inline flavour (``make_inline_adapter``): the same requests, script and answer mapping, but
  asked from within the run by a ``HandleDeferredToolCalls(handler=...)`` capability
  (pa/capabilities/deferred_tool_handler.py:15); the framework applies the answers and goes on
  (pa/_tool_execution.py:1238); nothing resumes. Answers it drops (ids it does not know,
  pa/_deferred.py:260-275) leave calls pending: the run ends with them -> ``interrupted``.
* ② guards -> one ``after_tool_validate`` hook each, after the pre-execute one (hooks of a
  kind run in registration order, pa/capabilities/hooks.py:1178-1183): None -> the view's
  args; any other return -> ``ToolFailed(reason)``. (``before_tool_execute`` would run
  INSIDE every wrap, pa/tool_manager.py:752-767: too late for a guard.)
* ③ wrappers -> ``tool_execute`` (``wrap_tool_execute``) hooks; ``next()`` is the framework's
  ``handler(args)`` with the view's arguments.
* ④ post-execute -> an ``after_tool_execute`` hook chaining the listeners (the end says
  accept): accept -> the result; accept{value} -> the value; block(feedback) ->
  ``ToolFailed(feedback)``; malformed -> returned as is (it replaces the result).
* result observers -> ``on.event(FunctionToolResultEvent)``, handed the live ``ToolReturnPart``
  (kit value and content -> its ``content``, isError -> its ``outcome``) and, as the call's
  arguments, the model's ``ToolCallPart`` found by id in ``ctx.messages`` (see _Published).
  A streamed turn carries JSON text: arguments with no JSON text (a cycle) cannot be streamed
  and such a scenario is skipped.
* cancellation -> one ``CancellationToken`` per run (``agent.run(cancellation_token=)``):
  aborting any call's signal cancels the run (the framework's granularity), which raises
  ``RunCancelled``. No signal reaches any stage: stages wait on the caller's own signal.
* schemas -> the ``ToolDefinition``s the ``FunctionModel`` receives, projected to the wire
  fields a provider sends (name, description, parameters_json_schema -> parameters): the
  dataclass also holds host-only fields no provider sends (kind, sequential, timeout...).

Result (kit JSON, SPEC section 3) from a ``ToolReturnPart``: ``outcome == 'success'`` ->
``{"isError": false, "value": content, "content": [text of model_response_str()]}``; any
other outcome (failed / denied / retried / interrupted) -> ``{"isError": true, "error":
{"message": model_response_str(wrap_if_error=False)}, "content": [text the model sees]}``.
Codes only where the framework says so itself: ``retry.cause == 'unknown_tool'`` ->
UNKNOWN_TOOL, ``'validation_error'`` -> INVALID_ARGS (pa/messages.py:1918,
pa/tool_manager.py:545-550), the timeout's ``ModelRetry('Timed out after ...')`` ->
TOOL_TIMEOUT (pa/toolsets/function.py:864). A body exception propagates out of
``agent.run`` (pa/tool_manager.py:759-763 re-raises it) -> the closed form ``raised``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from importlib.metadata import version
from typing import Any

from pydantic_ai import (
    Agent,
    ApprovalRequired,
    CancellationToken,
    DeferredToolRequests,
    DeferredToolResults,
    RunContext,
    Tool,
    ToolDenied,
)
from pydantic_ai.capabilities import HandleDeferredToolCalls, Hooks
from pydantic_ai.exceptions import ToolFailed
from pydantic_ai.messages import (
    FunctionToolResultEvent,
    ModelMessage,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel
from pydantic_ai.toolsets import FunctionToolset

from conformance.core.adapter import AdapterInfo, ScenarioSkipped, requirements
from conformance.core.interpreter import JSON, Binding, Session, canonical_json, decode, jsonable
from conformance.core.scenario import scripts_of

__all__ = ["PydanticAIAdapter", "make_adapter", "make_inline_adapter"]

ACTION_DEADLINE_S = 5.0

CAPABILITIES = frozenset(
    [
        "approval",
        "scheduler",
        "timeout-policy",
        "pre-execute",
        "guards",
        "wrappers",
        "post-execute",
        "observers",
    ]
)
MISSING = {
    "agentless-calls": "approvals are not routed by agent: every deferred call goes back to "
    "the host that runs the agent (DeferredToolRequests), so PRE-4's no-agent case has no "
    "counterpart",
    "scopes": "one Agent resolves one tool set; there are no per-agent registration or "
    "listener layers (tools can be filtered per run with prepare, nothing scopes hooks)",
    "code-mode": "no registry modes or run_code transport of the kit's kind",
    "presentation": "no presentation metadata on a tool definition",
    "registry-mutation": "a FunctionToolset has no disposer; tools are fixed for a run",
    "nested-calls": "a tool body has no API to dispatch another tool through the pipeline",
    "finalizer": "no last-mile stage run once per outcome: nothing runs for denied, invalid "
    "or unknown calls (pa/tool_manager.py:726-789)",
    "classifier": "concurrency is a static per-tool flag (ToolDefinition.sequential), never a "
    "function of the call's arguments",
}
CLOSED_FORMS = frozenset({"error-result", "raised", "interrupted"})

# approval answers -> the framework's: allowed-once runs, the refusals are distinct denials
_APPROVALS: dict[str, Callable[[], Any]] = {
    "allowed-once": lambda: True,
    "rejected": lambda: ToolDenied("The approval service rejected the call."),
    "cancelled": lambda: ToolDenied("The approval was cancelled."),
    "unavailable": lambda: ToolDenied("The approval service is unavailable."),
}
_CONTEXT_STEPS = ("deferContext", "concludeTurn")


class _Failure:
    """A failure a wrapper authored: its hook raises it as ToolFailed."""

    def __init__(self, message: str) -> None:
        self.message = message

    def to_json(self) -> JSON:
        return {"isError": True, "error": {"message": self.message}}


class _Inexpressible(Exception):
    """A scripted decision the framework has no way to say (the scenario is skipped)."""


# ------------------------------------------------------------------ views and signals


class _Signal:
    """The caller's signal: the kit's; aborting it cancels the run's CancellationToken."""

    def __init__(self) -> None:
        self.aborted = False
        self.event = asyncio.Event()
        self.token: CancellationToken | None = None

    async def wait(self) -> None:
        await self.event.wait()


class _Controller:
    def __init__(self) -> None:
        self.signal = _Signal()


class _Call:
    """What a hook is handed, under the kit's names: the live ToolCallPart and args dict."""

    signal: Any = None  # no signal reaches any stage (the caller's own is waited on)

    def __init__(self, part: ToolCallPart, args: Any, agent: Any = None) -> None:
        self.part = part
        self.arguments = args
        self.agent = agent  # the run's deps: the kit's agent id of the action's first call

    @property
    def call_id(self) -> str:
        return self.part.tool_call_id

    @call_id.setter
    def call_id(self, value: str) -> None:
        self.part.tool_call_id = value

    @property
    def name(self) -> str:
        return self.part.tool_name

    @name.setter
    def name(self, value: str) -> None:
        self.part.tool_name = value


class _Published:
    """What an observer is handed as the call: the live ToolReturnPart's identity, the deps,
    and the arguments of the call it answers, found the way the framework matches a result to
    its call: by tool_call_id, in the run's messages (``ctx.messages``; ToolResultEvent's
    ``tool_call_id``, pa/messages.py:7312-7315). That is the model's ToolCallPart as the
    history records it (JSON text when streamed): reading parses it, assigning replaces it."""

    signal: Any = None

    def __init__(self, part: ToolReturnPart, agent: Any, call: ToolCallPart | None) -> None:
        self.part = part
        self.agent = agent
        self.call = call

    @property
    def arguments(self) -> Any:
        return None if self.call is None else self.call.args_as_dict()

    @arguments.setter
    def arguments(self, value: Any) -> None:
        if self.call is not None:
            self.call.args = value

    @property
    def call_id(self) -> str:
        return self.part.tool_call_id

    @property
    def name(self) -> str:
        return self.part.tool_name


class _BodyCtx:
    """The body's view: the framework's RunContext and the keyword args it called the body with."""

    signal: Any = None

    def __init__(self, ctx: RunContext[Any], arguments: dict[str, Any]) -> None:
        self.ctx = ctx
        self.arguments = arguments
        self.agent = ctx.deps

    @property
    def call_id(self) -> str | None:
        return self.ctx.tool_call_id

    @property
    def name(self) -> str | None:
        return self.ctx.tool_name


class _Request(_Call):
    """A ToolCallPart with its own args: an approval request (and metadata), a caller's input."""

    def __init__(self, part: ToolCallPart, metadata: Any = None) -> None:
        super().__init__(part, None, None)
        self.metadata = metadata

    @property
    def arguments(self) -> Any:
        return self.part.args

    @arguments.setter
    def arguments(self, value: Any) -> None:
        if value is not None:
            self.part.args = value


class PydanticBinding(Binding):
    def new_controller(self) -> Any:
        return _Controller()

    def abort(self, controller: Any) -> None:
        signal: _Signal = controller.signal
        signal.aborted = True
        signal.event.set()
        if signal.token is not None:
            signal.token.cancel()

    def request_arguments(self, request: Any) -> Any:
        """What the approver is shown: the pending ToolCallPart's args, parsed when JSON text
        (``DeferredToolRequests.approvals`` holds the model's parts, pa/_deferred.py:53)."""
        if isinstance(request, _Request):
            return jsonable(request.part.args_as_dict())
        return super().request_arguments(request)

    def keys(self, obj: Any) -> list[str]:
        if isinstance(obj, _Request):
            return ["callId", "name", "arguments", "metadata"]
        return super().keys(obj)

    def get(self, obj: Any, key: str) -> Any:
        if isinstance(obj, _Request) and key == "reason":
            return obj.metadata.get("reason") if isinstance(obj.metadata, Mapping) else None
        return super().get(obj, key)

    def read(self, obj: Any, key: str | int) -> Any:
        if isinstance(obj, ToolReturnPart):
            return obj.content if key == "value" else self.result_json(obj)[key]
        return super().read(obj, key)

    def write(self, obj: Any, key: str | int, value: Any) -> None:
        if isinstance(obj, ToolReturnPart) and key == "isError":
            obj.outcome = "failed" if value else "success"  # the field that says it
            return
        if isinstance(obj, ToolReturnPart) and key in ("value", "content"):
            key = "content"  # one field: what the model sees is rendered from it
        super().write(obj, key, value)

    def call_id(self, execution: Any) -> str | None:
        if isinstance(execution, ToolReturnPart):
            return execution.tool_call_id
        return super().call_id(execution)

    def tool_name(self, execution: Any) -> str | None:
        if isinstance(execution, ToolReturnPart):
            return execution.tool_name
        return super().tool_name(execution)

    def result_json(self, result: Any) -> JSON:
        """A ToolReturnPart's kit form; a raw value (what hooks see and return) is the success
        the framework would publish for it."""
        if isinstance(result, _Failure):
            return result.to_json()
        if not isinstance(result, ToolReturnPart):
            result = ToolReturnPart("", result, tool_call_id="")
        return result_json(result)

    def authored_result(self, data: JSON) -> Any:
        """A wrapper-authored kit result -> the framework's: a success is its value (the
        framework renders the content itself); a failure is raised as ToolFailed by the hook."""
        if isinstance(data, Mapping) and data.get("isError") is False and "value" in data:
            return decode(data["value"])
        error = data.get("error") if isinstance(data, Mapping) else None
        message = error.get("message") if isinstance(error, Mapping) else None
        if isinstance(message, str) and data.get("isError") is True:
            return _Failure(message)
        return decode(data)

    def defer_context(self, ctx: Any, message: Any) -> None:
        raise _Inexpressible("no deferred context for later calls")

    def conclude_turn(self, ctx: Any) -> None:
        raise _Inexpressible("a tool cannot conclude the turn")


def result_json(part: ToolReturnPart) -> JSON:
    """The kit's result JSON of the framework's result (see the module docstring)."""
    content = [{"type": "text", "text": part.model_response_str()}]
    if part.outcome == "success":
        return {"isError": False, "value": jsonable(part.content), "content": content}
    error: dict[str, Any] = {"message": part.model_response_str(wrap_if_error=False)}
    cause = part.retry.cause if part.retry is not None else None
    code = {"unknown_tool": "UNKNOWN_TOOL", "validation_error": "INVALID_ARGS"}.get(str(cause))
    if cause == "model_retry" and str(part.content).startswith("Timed out after "):
        code = "TOOL_TIMEOUT"
    if code is not None:  # name: the framework's own word for it, its retry cause
        error["info"] = {"name": str(cause), "code": code}
    return {"isError": True, "error": error, "content": content}


# ------------------------------------------------------------------ the adapter


def _well_formed(decision: Any, kinds: Mapping[str, tuple[set[str], set[str]]]) -> str | None:
    """The decision's kind when it has exactly the keys its kind needs (required, optional)."""
    if not isinstance(decision, Mapping) or decision.get("kind") not in kinds:
        return None
    kind = str(decision["kind"])
    required, optional = kinds[kind]
    keys = set(decision) - {"kind"}
    texts = all(isinstance(decision[k], str) for k in keys & {"reason", "feedback"})
    return kind if required <= keys <= required | optional and texts else None


async def _chain(
    listeners: Sequence[Callable[..., Awaitable[Any]]], args: tuple[Any, ...], end: Any
) -> Any:
    """The kit's waterfall over hooks that have none: next() runs the rest of the chain."""

    async def step(i: int) -> Any:
        if i == len(listeners):
            return dict(end)
        return await listeners[i](*args, lambda: step(i + 1))

    return await step(0)


class PydanticAIAdapter:
    """The framework driven in process; ``inline`` picks the approval flavour: False ->
    interrupt-then-resume (DeferredToolRequests, then DeferredToolResults on a new run),
    True -> the inline callback (``HandleDeferredToolCalls(handler=...)``)."""

    def __init__(self, *, inline: bool = False) -> None:
        self._binding = PydanticBinding()
        self.inline = inline
        flavour = "inline callback (HandleDeferredToolCalls)" if inline else "interrupt-then-resume"
        self.notes = [f"approval flavour: {flavour}"]

    def describe(self) -> AdapterInfo:
        info: dict[str, Any] = {
            "name": "pydantic-ai-slim",
            "version": version("pydantic-ai-slim"),
            "language": "python",
            "capabilities": CAPABILITIES,
            "missing": MISSING,
            "closed_forms": CLOSED_FORMS,
        }
        known = {f.name for f in dataclasses.fields(AdapterInfo)}
        return AdapterInfo(**{k: v for k, v in info.items() if k in known})

    def run(self, scenario: Mapping[str, Any]) -> dict[str, Any]:
        needs = set(requirements(scenario)) | _stage_needs(scenario)
        lacking = sorted(needs - CAPABILITIES)
        if lacking:
            raise ScenarioSkipped(
                "; ".join(f"{c}: {MISSING.get(c, 'not supported')}" for c in lacking)
            )
        try:
            return asyncio.run(self._run(scenario))
        except _Inexpressible as e:
            raise ScenarioSkipped(f"pydantic-ai cannot express this: {e}") from None

    async def _run(self, scenario: Mapping[str, Any]) -> dict[str, Any]:
        session = Session(scenario, self._binding)
        toolset: FunctionToolset[Any] = FunctionToolset()
        registrations = [_register(session, toolset, spec, scenario) for spec in scenario["tools"]]
        hooks = self._hooks(session, scenario)
        approval = session.approval(scenario["approval"]) if "approval" in scenario else None
        answers: list[dict[str, Any]] = []
        for action in scenario.get("actions", []):
            if "call" in action or "batch" in action:
                calls = [action["call"]] if "call" in action else list(action["batch"])
                run = _Run(
                    session,
                    toolset,
                    hooks,
                    approval,
                    calls,
                    streams="observers" in scenario,
                    inline=self.inline,
                )
                try:
                    answer = await asyncio.wait_for(run.answer("call" in action), ACTION_DEADLINE_S)
                except TimeoutError:
                    answer = {"raised": f"deadline of {ACTION_DEADLINE_S:g} s exceeded"}
                except _Inexpressible:
                    raise
                except Exception as e:
                    answer = {"raised": f"{type(e).__name__}: {e}"}
            elif "schemas" in action:
                answer = {"schemas": [_wire(d) for d in await _tool_defs(toolset, hooks)]}
            elif "executionMode" in action:
                defs = {d.name: d for d in await _tool_defs(toolset, hooks)}
                tool_def = defs.get(action["executionMode"]["name"])
                answer = {"mode": "exclusive" if tool_def and tool_def.sequential else "parallel"}
            else:
                raise _Inexpressible(f"action {sorted(action)}")
            answers.append(answer)
        trace = {"registrations": registrations, "actions": answers, "events": session.events}
        return {**trace, "notes": list(self.notes)}

    def _hooks(self, session: Session, scenario: Mapping[str, Any]) -> Hooks[Any]:
        hooks: Hooks[Any] = Hooks()
        pre = [session.pre_listener(s) for s in scenario.get("preExecute", [])]
        guards = [session.guard(s) for s in scenario.get("guards", [])]
        post = [session.post_listener(s) for s in scenario.get("postExecute", [])]
        kinds_pre = {
            "allow": (set(), set()),
            "deny": ({"reason"}, set()),
            "ask": (set(), {"reason"}),
        }
        kinds_post = {"accept": (set(), {"value", "content", "additionalContexts"}),
                      "block": ({"feedback"}, {"additionalContexts"})}  # fmt: skip

        if pre:

            async def pre_execute(
                ctx: RunContext[Any], *, call: ToolCallPart, tool_def: Any, args: Any
            ) -> Any:
                if ctx.tool_call_approved:
                    return args  # the approval service answered this call's ask
                view = _Call(call, args, ctx.deps)
                decision = await _chain(pre, (view,), {"kind": "allow"})
                kind = _well_formed(decision, kinds_pre)
                if kind == "deny":
                    raise ToolFailed(decision["reason"])
                if kind == "ask":
                    raise ApprovalRequired(metadata={"reason": decision.get("reason")})
                return view.arguments if kind == "allow" else decision

            hooks.on.after_tool_validate(pre_execute)
        for guard in guards:

            def guard_hook(guard: Callable[[Any], Any]) -> Callable[..., Awaitable[Any]]:
                async def hook(
                    ctx: RunContext[Any], *, call: ToolCallPart, tool_def: Any, args: Any
                ) -> Any:
                    view = _Call(call, args, ctx.deps)
                    reason = guard(view)
                    if reason is None:
                        return view.arguments
                    raise ToolFailed(reason if isinstance(reason, str) else canonical_json(reason))

                return hook

            hooks.on.after_tool_validate(guard_hook(guard))
        for spec in scenario.get("wrappers", []):

            def wrap_hook(wrapper: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
                async def hook(
                    ctx: RunContext[Any],
                    *,
                    call: ToolCallPart,
                    tool_def: Any,
                    args: Any,
                    handler: Callable[[Any], Awaitable[Any]],
                ) -> Any:
                    dispatch = _Call(call, args, ctx.deps)
                    result = await wrapper(dispatch, lambda: handler(dispatch.arguments))
                    if isinstance(result, _Failure):
                        raise ToolFailed(result.message)
                    return result

                return hook

            hooks.on.tool_execute(wrap_hook(session.wrapper(spec)))
        if post:

            async def post_execute(
                ctx: RunContext[Any], *, call: ToolCallPart, tool_def: Any, args: Any, result: Any
            ) -> Any:
                decision = await _chain(
                    post, (_Call(call, args, ctx.deps), result), {"kind": "accept"}
                )
                kind = _well_formed(decision, kinds_post)
                if kind is None:
                    return decision
                if "content" in decision or "additionalContexts" in decision:
                    raise _Inexpressible("one result channel: no content apart from the value")
                if kind == "block":
                    raise ToolFailed(decision["feedback"])
                return decision.get("value", result)

            hooks.on.after_tool_execute(post_execute)
        for spec in scenario.get("observers", []):

            def observe(observer: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[None]]:
                async def hook(ctx: RunContext[Any], event: FunctionToolResultEvent) -> None:
                    call = _call_of(ctx.messages, event.tool_call_id)
                    await observer(_Published(event.part, ctx.deps, call), event.part)

                return hook

            hooks.on.event(FunctionToolResultEvent)(observe(session.observer(spec)))
        return hooks


def _call_of(messages: Sequence[ModelMessage], call_id: str) -> ToolCallPart | None:
    """The model's ToolCallPart with that id in the run's messages (the latest one)."""
    found = None
    for message in messages:
        for part in message.parts:
            if isinstance(part, ToolCallPart) and part.tool_call_id == call_id:
                found = part
    return found


def _stage_needs(scenario: Mapping[str, Any]) -> set[str]:
    needs = {cap for key, cap in (("preExecute", "pre-execute"), ("guards", "guards"),
             ("wrappers", "wrappers"), ("postExecute", "post-execute"),
             ("observers", "observers")) if scenario.get(key)}  # fmt: skip
    for tool in scenario.get("tools", []):
        if "finalizeContent" in tool:
            needs.add("finalizer")
        if "isConcurrencySafe" in tool:
            needs.add("classifier")
    if any(k in step for script in scripts_of(scenario) for step in script for k in _CONTEXT_STEPS):
        raise ScenarioSkipped("deferContext / concludeTurn: pydantic-ai has neither (CTX)")
    return needs


def _register(
    session: Session, toolset: FunctionToolset[Any], spec: Mapping[str, Any], scenario: Any
) -> dict[str, Any]:
    key = spec.get("key", spec["name"])
    execute = session.tool_body(spec)

    async def body(ctx: RunContext[Any], **kwargs: Any) -> Any:
        return await execute(kwargs, _BodyCtx(ctx, kwargs))

    try:
        tool: Tool[Any] = Tool.from_schema(
            body,
            name=spec["name"],
            description=spec.get("description"),
            json_schema=spec.get("parameters", {"type": "object", "properties": {}}),
            takes_ctx=True,
            sequential=True,
        )
        timeout = decode(spec.get("timeoutMs"))
        if scenario.get("timeoutPolicy") and isinstance(timeout, (int, float)):
            tool.timeout = timeout / 1000
        toolset.add_tool(tool)
    except Exception as e:
        return {"key": key, "ok": False, "error": f"{type(e).__name__}: {e}"}
    return {"key": key, "ok": True}


def _wire(tool_def: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"name": tool_def.name}
    if tool_def.description is not None:
        out["description"] = tool_def.description
    out["parameters"] = jsonable(tool_def.parameters_json_schema)
    return out


async def _tool_defs(toolset: FunctionToolset[Any], hooks: Hooks[Any]) -> list[Any]:
    """The ToolDefinitions the model receives on its first request."""
    seen: list[Any] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.extend(info.function_tools)
        return ModelResponse(parts=[TextPart("DONE")])

    await Agent(FunctionModel(model), toolsets=[toolset], capabilities=[hooks]).run("schemas")
    return seen


class _Run:
    """One action: a model turn with its calls, resumed until no approval is pending (or, inline,
    with the approvals answered from within the run)."""

    def __init__(
        self,
        session: Session,
        toolset: FunctionToolset[Any],
        hooks: Hooks[Any],
        approval: Any,
        calls: list[Mapping[str, Any]],
        *,
        streams: bool,
        inline: bool = False,
    ) -> None:
        self.session, self.approval, self.calls = session, approval, calls
        self.token = CancellationToken()
        self.parts: list[ToolCallPart] = []
        for call in calls:
            controller, arguments = session.caller(call)
            controller.signal.token = self.token
            part = ToolCallPart(call["name"], arguments, tool_call_id=call["callId"])
            session.track_caller(call["callId"], _Request(part))
            self.parts.append(part)
        self.texts: list[str] = []
        if streams:  # a streamed turn carries JSON text (DeltaToolCall.json_args)
            try:
                self.texts = [json.dumps(p.args) for p in self.parts]
            except (TypeError, ValueError) as e:
                raise _Inexpressible(f"streamed arguments are JSON text, these are not: {e}") from e
        self.turned = False
        model = FunctionModel(self._turn, stream_function=self._stream) if streams else None
        model = model or FunctionModel(self._turn)
        self.inline = inline and approval is not None
        capabilities: list[Any] = [hooks]
        if self.inline:
            capabilities.append(HandleDeferredToolCalls(handler=lambda ctx, r: self._decide(r)))
        self.agent: Agent[Any, Any] = Agent(
            model,
            toolsets=[toolset],
            capabilities=capabilities,
            output_type=[str, DeferredToolRequests],
        )

    def _turn(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if self.turned:
            return ModelResponse(parts=[TextPart("DONE")])
        self.turned = True
        return ModelResponse(parts=list(self.parts))

    async def _stream(self, messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        if self.turned:
            yield "DONE"
            return
        self.turned = True
        yield {
            i: DeltaToolCall(p.tool_name, text, tool_call_id=p.tool_call_id)
            for i, (p, text) in enumerate(zip(self.parts, self.texts, strict=True))
        }

    async def answer(self, single: bool) -> dict[str, Any]:
        if any(c.signal.aborted for c in map(self.session.controllers.get, self._ids()) if c):
            self.token.cancel()
        deps = self.calls[0].get("agent")
        result = await self.agent.run("go", deps=deps, cancellation_token=self.token)
        while isinstance(result.output, DeferredToolRequests) and self.approval and not self.inline:
            result = await self.agent.run(
                message_history=result.all_messages(),
                deferred_tool_results=await self._decide(result.output),
                deps=deps,
                cancellation_token=self.token,
            )
        if isinstance(result.output, DeferredToolRequests):
            pending = [p.tool_call_id for p in result.output.approvals]
            return {"interrupted": f"the run stopped with approvals pending for {pending}"}
        returns: dict[str, ToolReturnPart] = {}
        for message in result.all_messages():
            for p in getattr(message, "parts", []):
                if isinstance(p, ToolReturnPart):
                    returns[p.tool_call_id] = p
        results = [returns.get(i) for i in self._ids()]
        if any(r is None for r in results):
            return {"raised": f"no result for {[i for i in self._ids() if i not in returns]}"}
        answers = [self.session.binding.result_json(r) for r in results]
        return {"result": answers[0]} if single else {"results": answers}

    async def _decide(self, requests: DeferredToolRequests) -> DeferredToolResults:
        """The approval script's answer to each pending request, keyed by the part's id as read
        after the decision (both flavours)."""
        approvals: dict[str, Any] = {}
        for part in requests.approvals:
            request = _Request(part, requests.metadata.get(part.tool_call_id))
            answer = await self.approval.request(request)
            made = _APPROVALS.get(answer) if isinstance(answer, str) else None
            approvals[part.tool_call_id] = made() if made else answer
        return DeferredToolResults(approvals=approvals)

    def _ids(self) -> list[str]:
        return [str(c["callId"]) for c in self.calls]


def make_adapter() -> PydanticAIAdapter:
    """Approval as interrupt-then-resume."""
    return PydanticAIAdapter()


def make_inline_adapter() -> PydanticAIAdapter:
    """Approval as the inline callback ``HandleDeferredToolCalls(handler=...)``."""
    return PydanticAIAdapter(inline=True)
