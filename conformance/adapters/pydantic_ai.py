"""pydantic-ai (pydantic-ai-slim 2.68.0), in process, driven by its own scripted model.

The kit's example of the ``python:MODULE:FACTORY`` form::

    toolreg-conformance run --adapter python:conformance.adapters.pydantic_ai:make_adapter

Two approval flavours, one adapter (same name and version; each trace's ``notes`` says which):
``make_adapter`` interrupts then resumes, ``make_inline_adapter`` answers inline (below).

Every action is one ``Agent.run`` whose ``FunctionModel`` answers the first request with one
model turn (one ``ToolCallPart`` per call of the action) and every later request with the
text ``DONE``, which ends the run. No network, no keys. File:line references are to the
installed package ``pydantic_ai/`` (abbreviated ``pa/``).

Mapping (kit stage -> framework API). The adapter maps each stage onto one framework
mechanism and builds none the framework lacks: where a scenario needs one (a listener
waterfall, a decision with no counterpart), it is skipped with the reason.

* tool -> ``Tool.from_schema(body, name, description, parameters, takes_ctx=True,
  sequential=True)`` (pa/tools.py:509) in one ``FunctionToolset``; ``from_schema`` validates
  nothing (``any_schema``, pa/tools.py:549; its docstring: "Schema validation of the arguments
  is skipped", pa/tools.py:523-525): the adapter adds no validation either. The parameters dict
  is the tool author's (built from the scenario's JSON) and from then on the framework's own:
  every ``ToolDefinition`` holds it (pa/tools.py:566-571). A tool without ``isConcurrencySafe``
  is exclusive (SPEC CONC-1): ``sequential=True``, the framework's barrier (pa/tools.py:740-748).
* a call -> ``ToolCallPart(name, args=<the caller's decoded dict>, tool_call_id)`` (a dict is
  what ``ToolCallPart.args`` accepts besides JSON text); the answer is the call's
  ``ToolReturnPart`` in the run's history (below). With observers the run streams
  (``DeltaToolCall``), so the args travel as JSON text, as a provider sends them.
* scheduler (a batch) -> one model turn with one ``ToolCallPart`` per call: the framework's
  own tool-call scheduling runs them (``sequential`` tools as barriers).
* (1) pre-execute -> ONE ``after_tool_validate`` hook (``Hooks().on.after_tool_validate``), the
  framework's "reliable gate on validated arguments" that may defer the call
  (pa/capabilities/abstract.py:1251-1273); it runs before every execute hook, so before the
  wrappers (pa/tool_manager.py:689-694, 753-765). pydantic-ai has no waterfall: its hooks of a
  kind each return the args in turn and none hands on to the rest (pa/capabilities/hooks.py:
  1178-1183), so a scenario with more than one listener is skipped; the one listener's
  ``next()`` is the end of a one-listener chain, allow. Its decision in the hook's own terms
  (it returns ``ValidatedToolArgs = dict[str, Any]`` or raises, pa/capabilities/abstract.py:91):
  allow -> the args are returned; deny(reason) -> ``raise ToolFailed(reason)`` (its terminal
  failure, pa/exceptions.py:123-142); ask(reason) -> ``raise ApprovalRequired(metadata=
  {"reason": reason})`` (pa/exceptions.py:195-207). A non-mapping (nothing, ``'allow'``, a
  number...) is what a buggy hook written against that API returns: it is returned as is, and
  the framework refuses it (the tool is never called with it). A mapping that is no decision
  (``{kind: 'maybe'}``, a deny without a reason) has no counterpart: in the hook's terms a dict
  IS the args, so the scenario is skipped. Assigning the view's ``arguments`` is how a hook
  replaces them: the hook returns the view's arguments. On the resumed run of an approved call
  the framework re-validates with ``ctx.tool_call_approved`` set (pa/_run_context.py:297-298)
  and the hook returns the args without asking the listener again, as the framework's own
  conditional-approval idiom does (``if ... and not ctx.tool_call_approved: raise
  ApprovalRequired()``, pa/.agents/skills/building-pydantic-ai-agents/references/
  TOOLS-ADVANCED.md:108, 125).
* approval -> interrupt-then-resume: the run ends with ``DeferredToolRequests`` (output type
  ``[str, DeferredToolRequests]``, pa/_deferred.py:40-56); each pending call's request
  (``ToolCallPart`` + its metadata, presented with the kit's key names: callId, name,
  arguments, metadata; the arguments it shows are the part's args, parsed) goes to the
  scenario's approval script; the run resumes with ``DeferredToolResults(approvals=...)``:
  allowed-once -> ``True``, rejected / cancelled / unavailable -> ``ToolDenied(<distinct
  message>)``, anything else as is (the framework checks it, pa/_deferred.py:233-252), keyed by
  the part's ``tool_call_id`` read after the decision, as the documented idiom does
  (pa/.agents/skills/building-pydantic-ai-agents/references/TOOLS-ADVANCED.md:30-34). The part
  is the live one of the message history the run resumes from: no copy is made.
  No approval service: the run stops
  with the requests pending -> the closed form ``interrupted``.
  Inline flavour (``make_inline_adapter``): the same requests, script and answer mapping, but
  asked from within the run by a ``HandleDeferredToolCalls(handler=...)`` capability
  (pa/capabilities/deferred_tool_handler.py:15); the framework applies the answers and goes on
  (pa/_tool_execution.py:1238); nothing resumes. Answers it drops (ids it does not know,
  pa/_deferred.py:260-275) leave calls pending: the run ends with them -> ``interrupted``.
* (2) guards -> one ``after_tool_validate`` hook each, after the pre-execute one (hooks of a
  kind run in registration order, pa/capabilities/hooks.py:1178-1183; a raise ends the chain,
  so no later hook undoes a denial): no objection (None) -> the view's args; a reason (a
  string) -> ``raise ToolFailed(reason)``; any other non-mapping is the hook's malformed
  return, returned as is for the framework to refuse; a mapping is args in the hook's terms:
  the scenario is skipped. (``before_tool_execute`` would run INSIDE every wrap,
  pa/tool_manager.py:753-765: too late for a guard.)
* (3) wrappers -> ``tool_execute`` (``wrap_tool_execute``, pa/capabilities/abstract.py:
  1373-1392) hooks, chained by the framework (pa/capabilities/hooks.py:1244-1259); ``next()``
  is the framework's ``handler(args)`` with the view's arguments.
* (4) post-execute -> ONE ``after_tool_execute`` hook ("Modify result after execution",
  pa/capabilities/abstract.py:1352-1371); more than one listener: skipped, as for
  pre-execute. ``next()`` is accept. The decision in the hook's terms (it returns the result
  or raises): accept -> the result; accept{value} -> the value; block(feedback) -> ``raise
  ToolFailed(feedback)``. Anything else (content or contexts beside the value, no decision at
  all) has no counterpart -- whatever the hook returns IS the result -- and is skipped.
* result observers -> ``on.event(FunctionToolResultEvent)`` (pa/capabilities/hooks.py:447-464),
  the framework's per-result notification: one event per call's ``ToolReturnPart`` whatever its
  outcome (success, failed, denied, retried), handed the live part (``ToolResultEvent.part``,
  "The tool result part that will be sent back to the model", pa/messages.py:7309-7310; kit
  value and content -> its ``content``, isError -> its ``outcome``) and, as the call's
  arguments, the model's ``ToolCallPart`` found by id in ``ctx.messages`` (see _Published).
  A run that raises publishes no result, so it notifies nobody. A streamed turn carries JSON
  text: arguments with no JSON text (a cycle) cannot be streamed and such a scenario is skipped.
* timeout-policy -> the tool's own ``Tool.timeout`` (pa/tools.py:373), which the framework
  turns into ``ModelRetry('Timed out after ...')`` (pa/toolsets/function.py:864).
* cancellation -> one ``CancellationToken`` per run (``agent.run(cancellation_token=)``,
  pa/_cancel.py:50): aborting any call's signal cancels the run (the framework's granularity),
  which raises ``RunCancelled``. No signal reaches any stage: stages wait on the caller's own.
* schemas -> the ``ToolDefinition``s the ``FunctionModel`` receives (``AgentInfo.function_tools``,
  pa/models/function.py:270), each as the fields pydantic-ai's providers put on the wire: name,
  description, ``parameters_json_schema`` and a set ``strict`` (pa/models/openai/
  _responses_model.py:2270-2277, pa/models/openai/_chat_model.py:1273-1289), read through the
  kit's one projection (``conformance.seam.wire.model_entry``: ``parameters_json_schema`` ->
  parameters, the boolean ``strict`` is envelope). The values are the framework's own objects:
  ``parameters`` IS the definition's dict, so a ``schemas`` action's write goes into what the
  framework sends next time (DEF-2's copy clause judges pydantic-ai). The dataclass's other
  fields are the host's (``metadata``: "It is not sent to the model", pa/tools.py:761-762;
  kind, sequential, timeout... steer the run) and no provider sends them.

Missing stages (``MISSING``, with the reason each): finalizer, classifier, scopes, code-mode,
presentation, registry-mutation, nested-calls, agentless-calls.

Result (kit JSON, SPEC section 3) from a ``ToolReturnPart``: ``outcome == 'success'`` ->
``{"isError": false, "value": content, "content": [text of model_response_str()]}``; any
other outcome (failed / denied / retried / interrupted) -> ``{"isError": true, "error":
{"message": model_response_str(wrap_if_error=False)}, "content": [text the model sees]}``.
Codes only where the framework says so itself: ``retry.cause == 'unknown_tool'`` ->
UNKNOWN_TOOL, ``'validation_error'`` -> INVALID_ARGS (pa/messages.py:1918,
pa/tool_manager.py:545-550), the timeout's ``ModelRetry('Timed out after ...')`` ->
TOOL_TIMEOUT (pa/toolsets/function.py:864). A body exception propagates out of
``agent.run`` (pa/tool_manager.py:762-763 hands it to ``on_tool_execute_error``, whose default
re-raises it, pa/capabilities/abstract.py:1429) -> the closed form ``raised``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import Any, Final

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
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.toolsets import FunctionToolset

from conformance.adapters.host import FrameworkAdapter, Gaps, gap
from conformance.adapters.runner import Driver, chain_end, kind_of, run_actions, well_formed
from conformance.interpreter.session import JSON, Binding, Session, canonical_json, decode, jsonable
from conformance.seam.adapter import ScenarioSkipped, requirements
from conformance.seam.wire import model_entry

__all__ = ["PydanticAIAdapter", "make_adapter", "make_inline_adapter"]

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

# approval answers -> the framework's: allowed-once runs, the refusals are distinct denials
_APPROVALS: dict[str, Callable[[], Any]] = {
    "allowed-once": lambda: True,
    "rejected": lambda: ToolDenied("The approval service rejected the call."),
    "cancelled": lambda: ToolDenied("The approval was cancelled."),
    "unavailable": lambda: ToolDenied("The approval service is unavailable."),
}


def _no_chain(key: str, hook: str) -> str:
    """Why a chain of ``key`` listeners is skipped: pydantic-ai has no waterfall."""
    return (
        f"{{n}} {key} listeners: pydantic-ai has no listener waterfall (its {hook} hooks each "
        "return the args or result in turn and none hands on to the rest, pa/capabilities/"
        f"hooks.py:1178-1183, 1229-1242): one listener maps onto one {hook} hook, a chain "
        "has no counterpart"
    )


GAPS = Gaps(
    contexts="deferContext / concludeTurn: pydantic-ai has neither (CTX)",
    caller_writes="the caller's afterInvoke/afterResult writes: the caller is the agent's own "
    "loop, which this adapter does not interrupt to write (the doctor's caller-writes)",
    pre_chain=_no_chain("preExecute", "after_tool_validate"),
    post_chain=_no_chain("postExecute", "after_tool_execute"),
)


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


def _validated_args(decision: Any, args: Any) -> Any:
    """A pre-execute decision said in ``after_tool_validate``'s terms: it returns the validated
    args (``ValidatedToolArgs = dict[str, Any]``, pa/capabilities/abstract.py:91) or raises.
    The decisions are those :func:`~conformance.adapters.runner.well_formed` accepts."""
    if isinstance(decision, Mapping):
        kind = kind_of(decision, "pre-execute")
        if kind == "allow":
            return args
        if kind == "deny":
            raise ToolFailed(decision["reason"])
        if kind == "ask":
            raise ApprovalRequired(metadata={"reason": decision.get("reason")})
        raise _Inexpressible(
            f"the pre-execute decision {canonical_json(jsonable(decision))} has no counterpart: "
            "an after_tool_validate hook returns the args or raises, and a dict it returns IS "
            "the args (pa/capabilities/abstract.py:91)"
        )
    return decision  # the hook's own malformed return (not the args): the framework's to refuse


def _guarded_args(objection: Any, args: Any) -> Any:
    """A guard's answer in ``after_tool_validate``'s terms: no objection -> the args; a reason ->
    ToolFailed; a non-mapping is the hook's malformed return; a mapping would be the args."""
    if objection is None:
        return args
    if isinstance(objection, str):
        raise ToolFailed(objection)
    if isinstance(objection, Mapping):
        raise _Inexpressible(
            f"the guard's answer {canonical_json(jsonable(objection))} has no counterpart: a "
            "dict an after_tool_validate hook returns IS the args (pa/capabilities/abstract.py:91)"
        )
    return objection


def _executed_result(decision: Any, result: Any) -> Any:
    """A post-execute decision in ``after_tool_execute``'s terms: it returns the result (any
    value is one, pa/capabilities/abstract.py:1352-1371) or raises."""
    keys = set(decision) - {"kind"} if well_formed(decision, "post-execute") else None
    if keys == set() and decision["kind"] == "accept":
        return result
    if keys == {"value"}:
        return decision["value"]
    if keys == {"feedback"} and isinstance(decision["feedback"], str):  # a text: ToolFailed's
        raise ToolFailed(decision["feedback"])
    raise _Inexpressible(
        f"the post-execute decision {canonical_json(jsonable(decision))} has no counterpart: an "
        "after_tool_execute hook returns one value, the result, or raises (no content or "
        "contexts beside it, and no malformed answer: whatever it returns is the result)"
    )


class PydanticAIAdapter(FrameworkAdapter):
    """The framework driven in process; ``inline`` picks the approval flavour: False ->
    interrupt-then-resume (DeferredToolRequests, then DeferredToolResults on a new run),
    True -> the inline callback (``HandleDeferredToolCalls(handler=...)``)."""

    dist = "pydantic-ai-slim"
    capabilities = CAPABILITIES
    missing = MISSING

    def __init__(self, *, inline: bool = False) -> None:
        super().__init__()
        self._binding = PydanticBinding()
        self.inline = inline
        flavour = "inline callback (HandleDeferredToolCalls)" if inline else "interrupt-then-resume"
        self.notes = [f"approval flavour: {flavour}"]

    def unsupported(self, scenario: Mapping[str, Any]) -> str | None:
        reason = gap(scenario, GAPS)
        if reason is not None:
            return reason
        lacking = sorted((set(requirements(scenario)) | _stage_needs(scenario)) - CAPABILITIES)
        return "; ".join(f"{c}: {MISSING.get(c, 'not supported')}" for c in lacking) or None

    def run(self, scenario: Mapping[str, Any]) -> dict[str, Any]:
        try:
            return super().run(scenario)
        except _Inexpressible as e:
            raise ScenarioSkipped(f"pydantic-ai cannot express this: {e}") from None

    async def run_async(self, scenario: Mapping[str, Any]) -> dict[str, Any]:
        session = Session(scenario, self._binding)
        toolset: FunctionToolset[Any] = FunctionToolset()
        registrations = [_register(session, toolset, spec, scenario) for spec in scenario["tools"]]
        hooks = self._hooks(session, scenario)
        approval = session.approval(scenario["approval"]) if "approval" in scenario else None
        answers = await run_actions(scenario, _Driver(self, session, toolset, hooks, approval))
        trace = {"registrations": registrations, "actions": answers, "events": session.events}
        return {**trace, "notes": list(self.notes)}

    def _hooks(self, session: Session, scenario: Mapping[str, Any]) -> Hooks[Any]:
        hooks: Hooks[Any] = Hooks()
        pre = [session.pre_listener(s) for s in scenario.get("preExecute", [])]
        guards = [session.guard(s) for s in scenario.get("guards", [])]
        post = [session.post_listener(s) for s in scenario.get("postExecute", [])]

        allow = chain_end(session.binding, "pre-execute")  # one listener: its next() ends
        accept = chain_end(session.binding, "post-execute")
        if pre:
            (listener,) = pre  # one at most: GAPS skips a chain

            async def pre_execute(
                ctx: RunContext[Any], *, call: ToolCallPart, tool_def: Any, args: Any
            ) -> Any:
                if ctx.tool_call_approved:
                    return args  # approved: the framework's idiom does not ask again
                view = _Call(call, args, ctx.deps)
                decision = await listener(view, allow)
                return _validated_args(decision, view.arguments)

            hooks.on.after_tool_validate(pre_execute)
        for guard in guards:

            def guard_hook(guard: Callable[[Any], Any]) -> Callable[..., Awaitable[Any]]:
                async def hook(
                    ctx: RunContext[Any], *, call: ToolCallPart, tool_def: Any, args: Any
                ) -> Any:
                    view = _Call(call, args, ctx.deps)
                    return _guarded_args(guard(view), view.arguments)

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
            (inspector,) = post  # one at most: GAPS skips a chain

            async def post_execute(
                ctx: RunContext[Any], *, call: ToolCallPart, tool_def: Any, args: Any, result: Any
            ) -> Any:
                view = _Call(call, args, ctx.deps)
                decision = await inspector(view, result, accept)
                return _executed_result(decision, result)

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
            # the author's own dict, built from the scenario's JSON: the Tool's from now on
            json_schema=decode(spec.get("parameters", {"type": "object", "properties": {}})),
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


#: pydantic-ai's names for the spec's model-visible keys (ToolDefinition -> DEF-2).
_RENAMES: Final[Mapping[str, str]] = {"parameters_json_schema": "parameters"}


def _model_entry(tool_def: ToolDefinition) -> dict[str, Any]:
    """What a provider sends of a ToolDefinition (name, description, parameters_json_schema, a
    set strict: pa/models/openai/_responses_model.py:2270-2277) through the kit's one projection,
    holding the framework's own values: ``parameters`` IS ``tool_def.parameters_json_schema``."""
    sent: dict[str, Any] = {
        "name": tool_def.name,
        "description": tool_def.description,
        "parameters_json_schema": tool_def.parameters_json_schema,
    }
    if tool_def.strict is not None:
        sent["strict"] = tool_def.strict
    return model_entry(sent, _RENAMES)


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


class _Driver(Driver):
    """Each action on the framework: a call or batch is one run (:class:`_Run`)."""

    passes_through = (ScenarioSkipped, _Inexpressible)

    def __init__(
        self,
        adapter: PydanticAIAdapter,
        session: Session,
        toolset: FunctionToolset[Any],
        hooks: Hooks[Any],
        approval: Any,
    ) -> None:
        self.adapter, self.session, self.toolset, self.hooks = adapter, session, toolset, hooks
        self.approval = approval

    def _run(self, calls: list[Mapping[str, Any]]) -> _Run:
        streams = "observers" in self.session.scenario
        return _Run(self.session, self.toolset, self.hooks, self.approval, calls,
                    streams=streams, inline=self.adapter.inline)  # fmt: skip

    async def call(self, call: Mapping[str, Any]) -> JSON:
        return await self._run([call]).answer(True)

    async def batch(self, calls: list[Mapping[str, Any]], max_parallel: int) -> JSON:
        return await self._run(calls).answer(False)

    async def schemas(self, scope: str | None) -> list[dict[str, Any]]:
        """The entries of the definitions the model receives (the framework's own objects)."""
        return [_model_entry(d) for d in await _tool_defs(self.toolset, self.hooks)]

    async def execution_mode(self, call: Mapping[str, Any]) -> str:
        defs = {d.name: d for d in await _tool_defs(self.toolset, self.hooks)}
        tool_def = defs.get(call["name"])
        return "exclusive" if tool_def and tool_def.sequential else "parallel"

    def unsupported(self, action: Mapping[str, Any]) -> Any:
        raise _Inexpressible(f"action {sorted(action)}")


def make_adapter() -> PydanticAIAdapter:
    """Approval as interrupt-then-resume."""
    return PydanticAIAdapter()


def make_inline_adapter() -> PydanticAIAdapter:
    """Approval as the inline callback ``HandleDeferredToolCalls(handler=...)``."""
    return PydanticAIAdapter(inline=True)
