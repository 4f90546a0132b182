"""The OpenAI Agents SDK (``openai-agents``) behind the kit's adapter seam.

The kit's example of the ``python:MODULE:FACTORY`` form::

    toolreg-conformance run --adapter python:conformance.adapters.openai_agents:make_adapter

Every ``call`` action is one streamed run, ``Runner.run_streamed`` (``SP/run.py:489``),
consumed as a host consumes it, driven by the SDK's own scripted model
(``agents.testing.ScriptedModel``, ``SP/testing/model.py:249``): turn 1 is the scenario's
function call(s), turn 2 a final message. No network: the Agent gets a model instance and
tracing is off. ``SP`` below is ``site-packages/agents`` of openai-agents 0.24.0. The
adapter maps each declared stage onto one SDK API and builds no mechanism the SDK lacks.

Mapping (kit stage -> SDK API):

* tool -> ``FunctionTool(name, description, params_json_schema=parameters,
  on_invoke_tool, strict_json_schema=False)`` (``SP/tool.py:455-518``); the body receives
  the ToolContext and the JSON text the SDK passes ``on_invoke_tool`` (``SP/tool.py:2289``:
  the function-call item's ``arguments``, ``SP/run_internal/tool_execution.py:2091-2095``),
  parsed. A raw FunctionTool validates nothing (``on_invoke_tool`` gets "the arguments
  from the LLM, as a JSON string", ``SP/tool.py:469-473``): no validation is added here.
  ``scope`` -> ``is_enabled`` (``SP/tool.py:486``: a scoped tool is enabled only for the
  Agent named after the call's agent; a global one gives way to it).
* a call's agent -> the Agent's name. A call with none runs on an Agent named
  ``toolreg-no-agent`` (``Agent.name`` is required; the SDK has no call outside an
  agent), and its approval reaches the host like any other: the SDK's interruptions
  are the run's, not routed per agent.
* the call's arguments, as every stage's execution view shows them -> where the SDK keeps
  them: the ToolContext's function-call item, ``tool_call.arguments`` (what the body is
  invoked with), and its ``tool_arguments`` copy; a stage's write of them goes to both
  (see :class:`AgentsBinding`).
* caller signal -> cancelling the host's task consuming the stream; the host then cancels
  the run, ``RunResultStreaming.cancel()`` (``SP/result.py:941``), and drains its stream
  as the SDK asks (``:964-965``). The caller's answer is the ``CancelledError``.
* pre-execute (one listener) -> ``needs_approval`` policy callable
  (``SP/tool.py:500``; evaluated by ``SP/util/_approvals.py:37-50``; it gets the arguments
  parsed afresh, or is not asked at all and approval is required when they are no
  standard JSON, ``_approvals.py:19-34,73-76``): ``allow`` -> False, ``ask`` -> True,
  ``deny`` -> False plus a ``ToolInputGuardrail`` answering ``reject_content(reason)`` (the
  SDK's only pre-body denial). Any other answer is passed to the SDK as is, the return of
  a buggy policy: it ``bool()``s it (``_approvals.py:50``). A chain of pre-execute
  listeners is skipped: a tool has one policy.
* approval -> interrupt then resume: ``result.interruptions`` (``SP/result.py:717``) -> the
  scenario's approval script is handed the ``ToolApprovalItem`` -> ``allowed-once`` ->
  ``state.approve``, ``rejected`` -> ``state.reject`` (``SP/run_state.py:1380,1398``; no
  ``rejection_message``: the kit's answer carries no text, so the model gets the SDK's
  default). The SDK has no word for any other answer (``cancelled``, ``unavailable``,
  ...) and none for an approval backend that raised (approve/reject take a yes or a no):
  such a host does not resume, the call stays pending and its answer is ``interrupted``
  with what happened. Choosing a ``reject`` with an adapter-written message instead
  would credit the SDK with distinct denial reasons it does not have.
* guards -> ``ToolInputGuardrail`` each (``SP/tool_guardrails.py:152``, run in order by
  ``SP/run_internal/tool_execution.py:2781-2812``): ``None`` -> ``allow()``, a string ->
  ``reject_content(reason)``; anything else is returned to the SDK as is.
* post-execute -> ``ToolOutputGuardrail`` each (``SP/tool_guardrails.py:181``,
  ``tool_execution.py:2815-2852``): ``accept`` (no replacement) -> ``allow()``, ``block`` ->
  ``reject_content(feedback)``; other answers returned as is. A listener's ``next()``
  answers ``accept``: the next guardrail is the SDK's to run, not the listener's.
* observers -> the host's consumer of the streamed run's ``tool_output`` events
  (``RunItemStreamEvent``, ``SP/stream_events.py:24-45``, emitted for every
  ``ToolCallOutputItem``, ``SP/run_internal/streaming.py:46-47``): the SDK's per-result
  notification, for an executed call, a guardrail rejection and an approval rejection
  alike. An observer is handed :class:`ToolOutput` (the event's item and the
  ``tool_called`` item of the same call: the output item carries no tool name or
  arguments) and the item as its result. The SDK gives each event to one consumer, so
  several observers are the host's own loop over one event: a scenario in which an
  observer writes before another observer runs, or in which an observer raises, is
  skipped (what then happens is the host's code, not the SDK's). ``RunHooks.on_tool_end``
  is not used: it is "Called immediately after a local tool is invoked"
  (``SP/lifecycle.py:105``), never for a call that did not run.
* batch -> one model turn with several calls;
  ``ToolExecutionConfig(max_function_tool_concurrency=maxParallel)`` (``SP/run_config.py:146``).
* timeout policy -> ``FunctionTool.timeout_seconds = timeoutMs / 1000`` (``SP/tool.py:515``;
  ``timeout_behavior="error_as_result"``, the default).
* unknown/hidden tool -> ``RunConfig(tool_not_found_behavior="return_error_to_model")``
  (``SP/run_config.py:498``).
* schemas -> the wire form of the enabled tools
  (``agents.models.openai_responses.Converter.convert_tools``,
  ``SP/models/openai_responses.py:2211-2217``) through the kit's one projection
  (``conformance.seam.wire.model_entry``: the envelope ``type: "function"`` and a boolean
  ``strict`` dropped, every other key kept), the SDK's own objects, never a copy.

Missing capabilities, each with its reason: :data:`MISSING`.

Error results (the SDK has no error flag on a function tool's output item; the
adapter knows which of its own callbacks closed the call): approval rejection,
guard/pre-execute ``reject_content`` and post-execute ``block`` -> ``isError``
with the text the model got as message and content; ``Tool 'X' not found.``
(``SP/run_internal/turn_resolution.py:276``) -> code ``UNKNOWN_TOOL``;
``Tool 'X' timed out after N seconds.`` (``SP/tool.py:2011``) -> ``TOOL_TIMEOUT``.
A body, guardrail or policy that raises fails the whole run (``UserError``,
``SP/run_internal/tool_execution.py:1859-1861``; it comes out of ``stream_events``):
answer ``raised``.
"""

from __future__ import annotations

import asyncio
import copy
import json
import re
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field, fields
from typing import Any, cast

from agents import (
    Agent,
    FunctionTool,
    RunConfig,
    RunContextWrapper,
    Runner,
    ToolGuardrailFunctionOutput,
    ToolInputGuardrail,
    ToolOutputGuardrail,
    set_tracing_disabled,
)
from agents.items import ToolApprovalItem, ToolCallItem, ToolCallOutputItem
from agents.models.openai_responses import Converter
from agents.result import RunResultStreaming
from agents.run_config import ToolExecutionConfig
from agents.testing import ScriptedModel, assistant_message, function_call
from agents.tool_context import ToolContext
from openai.types.responses import ResponseFunctionToolCall

from conformance.adapters import host
from conformance.adapters.runner import chain_end, kind_of, run_actions
from conformance.interpreter.binding import ABSENT, JSON, Binding, decode, jsonable
from conformance.interpreter.session import Session
from conformance.seam.adapter import ScenarioSkipped
from conformance.seam.wire import model_entry

__all__ = ["AgentsBinding", "OpenAIAgentsAdapter", "make_adapter"]

DIST = "openai-agents"

CAPABILITIES = frozenset(
    {
        "approval",
        "scopes",
        "scheduler",
        "timeout-policy",
        "pre-execute",
        "guards",
        "post-execute",
        "observers",
    }
)
MISSING: dict[str, str] = {
    "agentless-calls": "every SDK call belongs to an Agent and approvals go to whoever called "
    "Runner.run (agents/agent.py, agents/result.py): PRE-4's no-agent case has no counterpart",
    "wrappers": "no around-wrapper of a function tool's body: on_invoke_tool is the body itself",
    "finalizer": "no last-mile content stage; RunConfig.tool_error_formatter only rewrites "
    "three kinds of SDK error message",
    "classifier": "no per-tool concurrency classification; max_function_tool_concurrency "
    "is one run-wide limit",
    "code-mode": "no code mode",
    "presentation": "no presentation metadata on a function tool",
    "registry-mutation": "an Agent's tool list is fixed for a run; no register/dispose",
    "nested-calls": "a function tool cannot run a call through the same pipeline "
    "(agents-as-tools start a new run)",
}

NO_AGENT = "toolreg-no-agent"  # the Agent's name (required by the SDK) for a call with none
_CALL: ContextVar[str | None] = ContextVar("toolreg_call", default=None)
_NOT_FOUND = re.compile(r"^Tool '.*' not found\.$", re.S)  # turn_resolution.py:276
_TIMED_OUT = re.compile(r"^Tool '.*' timed out after .* seconds\.$", re.S)  # tool.py:2011


# --------------------------------------------------------------------------- binding


class _Controller(host.TaskController):
    """The caller's abort: cancels the task consuming the streamed run, once (the host then
    cancels the run and drains its stream)."""

    cancel_once = True


@dataclass
class PolicyCall:
    """What the SDK hands a ``needs_approval`` policy: (context, parsed arguments, call id)."""

    call_id: str
    name: str
    agent: str | None
    arguments: Any
    context: Any = field(repr=False)


@dataclass
class Invocation:
    """What ``on_invoke_tool`` is handed: the ToolContext and the arguments' JSON text.

    The body's arguments are that text (its own parameter); the rest is the context."""

    context: ToolContext[Any]
    text: str


@dataclass
class ToolOutput:
    """What the host's stream loop has when the SDK reports one call's result: the
    ``tool_output`` event's ``ToolCallOutputItem`` (its call id, agent and output) and the
    ``tool_called`` item the same stream reported for that call id before (the model's
    function call: its name and arguments, which the output item does not carry). Both
    are the SDK's own run items, the ones ``result.new_items`` holds."""

    item: ToolCallOutputItem
    called: ResponseFunctionToolCall | None  # the tool_called item's raw_item


# scenario key -> attribute, for the SDK's own objects
_TOOL_CONTEXT = {"callId": "tool_call_id", "name": "tool_name", "arguments": "tool_arguments"}
_APPROVAL = {"name": "tool_name"}


class AgentsBinding(Binding):
    """Reads the SDK's ToolContext and ToolApprovalItem; no signal is handed to any stage.

    A call's arguments are JSON text in two places of a ``ToolContext``: the model's
    function-call item, ``tool_call.arguments`` (``SP/tool_context.py:55-56``: "The tool
    call object associated with this invocation"), which is what the SDK invokes the
    body with (``SP/run_internal/tool_execution.py:2091-2095``) and records in the run's
    history, and ``tool_arguments`` (``:52-53``, "The raw arguments string of the tool
    call"), the copy guardrails and hooks are handed to read. A stage reads the
    arguments where the SDK keeps them (``tool_call.arguments``) parsed; a stage that
    assigns them writes JSON text to both, as a hook author rewriting the call would, so
    the write reaches every place the SDK reads the arguments from. A write *inside* the
    parsed value cannot reach the string (it lands on a fresh parse). The same holds for
    the caller's model item (``ResponseFunctionToolCall.arguments``).
    """

    def new_controller(self) -> Any:
        return _Controller()

    def _aliases(self, obj: Any) -> Mapping[str, str]:
        if isinstance(obj, ToolContext):
            return _TOOL_CONTEXT
        return _APPROVAL if isinstance(obj, ToolApprovalItem) else {}

    def read(self, obj: Any, key: str | int) -> Any:
        if isinstance(obj, ToolOutput):
            return self._read_output(obj, key)
        if isinstance(obj, ToolCallOutputItem) and key == "value":
            return obj.output  # the tool's output object, as the caller reads it
        if isinstance(obj, Invocation):
            return obj.text if key == "arguments" else self.read(obj.context, key)
        if isinstance(obj, ToolContext) and key == "arguments":
            return _call_arguments(obj)
        if isinstance(key, str) and key in self._aliases(obj):
            return getattr(obj, self._aliases(obj)[key])
        return super().read(obj, key)

    def write(self, obj: Any, key: str | int, value: Any) -> None:
        if isinstance(obj, ToolOutput):
            self._write_output(obj, key, value)
        elif isinstance(obj, ToolCallOutputItem) and key == "value":
            obj.output = value
        elif isinstance(obj, Invocation) and key == "arguments":
            obj.text = json.dumps(value, allow_nan=True)  # rebinding the body's own parameter
            self.write(obj.context, key, value)  # and the call's, in the context it is handed
        elif isinstance(obj, Invocation):
            self.write(obj.context, key, value)
        elif isinstance(obj, ToolContext) and key == "arguments":
            text = json.dumps(value, allow_nan=True)
            obj.tool_arguments = text  # a str field
            if obj.tool_call is not None:
                obj.tool_call.arguments = text  # what the SDK invokes the body with
        elif isinstance(obj, ResponseFunctionToolCall) and key == "arguments":
            obj.arguments = json.dumps(value, allow_nan=True)  # the model item's: str too
        elif isinstance(key, str) and key in self._aliases(obj):
            setattr(obj, self._aliases(obj)[key], value)
        else:
            super().write(obj, key, value)

    def _read_output(self, view: ToolOutput, key: str | int) -> Any:
        called = view.called
        if key == "callId":
            return view.item.call_id
        if key == "agent":
            return view.item.agent
        if key in ("name", "arguments"):
            if called is None:
                raise AttributeError(f"no tool_called item reported the call's {key}")
            return getattr(called, str(key))
        return super().read(view.item, key)

    def _write_output(self, view: ToolOutput, key: str | int, value: Any) -> None:
        called = view.called
        if key == "callId":  # the id the history holds for the output and for the call
            raw = view.item.raw_item
            if not isinstance(raw, dict):
                raise TypeError(f"{type(raw).__name__} output item")
            cast("dict[str, Any]", raw)["call_id"] = value
            if called is not None:
                called.call_id = value
        elif key == "agent":
            view.item.agent = value
        elif key in ("name", "arguments"):
            if called is None:
                raise AttributeError(f"no tool_called item reported the call's {key}")
            text = json.dumps(value, allow_nan=True) if key == "arguments" else value
            setattr(called, str(key), text)
        else:
            super().write(view.item, key, value)

    def delete(self, obj: Any, key: str | int) -> None:
        if isinstance(obj, ToolOutput):
            obj = obj.item
        super().delete(obj.context if isinstance(obj, Invocation) else obj, key)

    def keys(self, obj: Any) -> list[str]:
        if isinstance(obj, Invocation):
            return self.keys(obj.context)
        if isinstance(obj, ToolApprovalItem):  # its fields and its public properties
            names = [f.name for f in fields(obj)] + ["call_id", "name", "arguments"]
            return [_camel(n) for n in names if not n.startswith("_")]
        return super().keys(obj)

    def agent(self, execution: Any) -> str | None:
        if isinstance(execution, Invocation):
            return self.agent(execution.context)
        if isinstance(execution, ToolOutput):
            execution = execution.item
        if isinstance(execution, PolicyCall):
            return execution.agent
        agent = getattr(execution, "agent", None)
        name = getattr(agent, "name", None) if agent is not None else None
        return None if name == NO_AGENT else name

    def arguments(self, execution: Any) -> Any:
        if isinstance(execution, Invocation):
            return _parsed(execution.text)
        if isinstance(execution, ToolContext):  # the SDK hands the JSON text
            return _parsed(_call_arguments(execution))
        if isinstance(execution, ToolOutput):
            return _parsed(self.get(execution, "arguments"))
        return super().arguments(execution)

    def request_arguments(self, request: Any) -> Any:
        """A ToolApprovalItem shows its approver ``arguments``: the call's JSON text
        (``SP/items.py:645``), parsed."""
        if isinstance(request, ToolApprovalItem):
            shown = request.arguments
            return ABSENT if shown is None else jsonable(_parsed(shown))
        return super().request_arguments(request)

    def signal(self, execution: Any) -> Any:
        return None  # the SDK hands no signal: the kit waits on the caller's controller

    def has_parent(self, execution: Any) -> bool:
        return False

    classify: Callable[[str, Any, str], JSON] | None = None
    item_result: Callable[[ToolCallOutputItem], JSON] | None = None

    def result_json(self, result: Any) -> JSON:
        """A raw tool output (what output guardrails are handed) or a ``tool_output`` run
        item (what the host's stream loop is handed), mapped as the caller's is."""
        if isinstance(result, ToolCallOutputItem):
            if self.item_result is not None:
                return self.item_result(result)
            return host.success(result.output, _sent_output(result))
        call_id = _CALL.get()
        if self.classify is not None and call_id is not None:
            return self.classify(call_id, result, _model_text(result))
        return host.success(result, _model_text(result))


def _sent_text(arguments: Any) -> str:
    """The arguments as the JSON text a model sends (the SDK's only input form).

    ``NaN``/``Infinity`` are characters a model can emit (Python's ``json`` reads them
    back, as the SDK's own ``function_tool`` parser does, ``SP/tool.py:1967``). A value
    no JSON text can hold -- a function, a cycle, a non-string key that ``json.dumps``
    would silently turn into a string -- cannot come from a model: the scenario is
    skipped rather than sent in a lossy form the SDK never saw."""
    if _non_string_key(arguments):
        raise ScenarioSkipped("arguments with a non-string key: no model's JSON text has one")
    try:
        return json.dumps(arguments, allow_nan=True)
    except (TypeError, ValueError) as e:
        raise ScenarioSkipped(f"arguments are not JSON text a model can send: {e}") from e


def _non_string_key(value: Any, depth: int = 0) -> bool:
    if depth > 64:  # a cycle: json.dumps refuses it
        return False
    if isinstance(value, Mapping):
        return any(
            not isinstance(k, str) or _non_string_key(v, depth + 1) for k, v in value.items()
        )
    if isinstance(value, list):
        return any(_non_string_key(v, depth + 1) for v in value)
    return False


def _call_arguments(ctx: ToolContext[Any]) -> Any:
    """The call's arguments as the SDK keeps them: its function-call item's JSON text (the
    context's ``tool_arguments`` copy when there is no item)."""
    return ctx.tool_call.arguments if ctx.tool_call is not None else ctx.tool_arguments


def _parsed(text: Any) -> Any:
    """JSON text parsed; anything else (a value no JSON text) as it is."""
    if not isinstance(text, (str, bytes, bytearray)):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def _sent_output(item: ToolCallOutputItem) -> str:
    """The text the model gets for a call: the output item's raw ``output``."""
    raw = item.raw_item
    sent = raw.get("output") if isinstance(raw, Mapping) else None
    return sent if isinstance(sent, str) else _model_text(item.output)


def _model_text(output: Any) -> str:
    return output if isinstance(output, str) else str(output)  # ItemHelpers stringifies


# --------------------------------------------------------------------------- adapter


GAPS = host.Gaps(
    contexts="no deferred contexts or turn conclusion in the SDK",
    caller_writes="the caller's afterInvoke/afterResult writes: the caller is the Runner's "
    "own loop, which this adapter does not interrupt to write (the doctor's caller-writes)",
    pre_chain="one needs_approval policy per tool: no chain of pre-execute listeners",
    scoped="guardrails, approval policies and run hooks are not registered per agent",
    observer_raises="an observer is the host's own stream loop over the run's tool_output "
    "events: the SDK never calls it, so whether a raising one is contained is the host's "
    "code, not the SDK's",
    observers_write="one per-result notification per run (each tool_output event goes to one "
    "consumer): several observers are the host's own loop over one event, so what one "
    "observer's write does to a later one is the host's, not the SDK's",
)


def _unsupported(scenario: Mapping[str, Any]) -> str | None:
    """Why the SDK cannot express this scenario, when it cannot."""
    reason = host.gap(scenario, GAPS)
    if reason is not None:
        return reason
    for ret in host.post_returns(scenario):
        if ret.get("kind") == "accept" and {"content", "value"} & set(ret):
            return "an output guardrail cannot replace a result with another success"
        if "additionalContexts" in ret:
            return "no deferred contexts in the SDK"
    return None


class _Run(host.HostDriver):
    """One scenario: the SDK objects built from it and the outcome of each call; each call
    or batch action is one streamed run (:meth:`turn`)."""

    framework = "SDK"

    def __init__(self, scenario: Mapping[str, Any], session: Session) -> None:
        self.scenario = scenario
        self.session = session
        self.closed: dict[str, str] = {}  # call id -> "denied" (closed by a kit callback)
        self.denials: dict[str, Any] = {}  # call id -> a pre-execute deny reason
        self.failed: dict[str, str] = {}  # call id -> why its approval got no answer
        self.agents: dict[str, str | None] = {}  # call id -> the calling agent
        specs = [t for t in scenario.get("tools", []) if t.get("registered", True)]
        scoped = {(t["name"], t["scope"]) for t in specs if t.get("scope") is not None}
        built, self.registrations = host.register_tools(scenario, lambda s: self._tool(s, scoped))
        self.tools = [tool for _, tool in built]
        self.observers = host.Observers(session)
        self.called: dict[str, ResponseFunctionToolCall] = {}  # call id -> tool_called's item
        self.model: ScriptedModel | None = None  # the current action's model

    # ---- building
    def _tool(self, spec: Mapping[str, Any], scoped: set[tuple[str, str]]) -> FunctionTool:
        body = self.session.tool_body(spec)

        async def on_invoke(ctx: ToolContext[Any], args_json: str) -> Any:
            return await body(json.loads(args_json), Invocation(ctx, args_json))

        scope = spec.get("scope")

        def enabled(ctx: RunContextWrapper[Any], agent: Any) -> bool:
            if scope is not None:
                return bool(agent.name == scope)
            return (spec["name"], agent.name) not in scoped

        guards: list[ToolInputGuardrail[Any]] = []
        if self.scenario.get("preExecute"):
            guards.append(ToolInputGuardrail(guardrail_function=self._pre_deny, name="pre"))
        for g in self.scenario.get("guards", []):
            guards.append(ToolInputGuardrail(guardrail_function=self._guard(g), name=g["id"]))
        post: list[ToolOutputGuardrail[Any]] = [
            ToolOutputGuardrail(guardrail_function=self._post(p), name=p["id"])
            for p in self.scenario.get("postExecute", [])
        ]
        kwargs: dict[str, Any] = {}
        if self.scenario.get("timeoutPolicy") and "timeoutMs" in spec:
            kwargs["timeout_seconds"] = decode(spec["timeoutMs"]) / 1000
        tool = FunctionTool(
            name=spec["name"],
            description=spec.get("description", ""),
            params_json_schema=copy.deepcopy(dict(spec.get("parameters", {"type": "object"}))),
            on_invoke_tool=on_invoke,
            strict_json_schema=False,
            is_enabled=enabled,
            needs_approval=self._policy(spec) if self.scenario.get("preExecute") else False,
            tool_input_guardrails=guards or None,
            tool_output_guardrails=post or None,
            **kwargs,
        )
        for key, value in spec.get("extra", {}).items():  # fields a host might add
            if hasattr(tool, key):
                raise ScenarioSkipped(f"extra field {key!r} is a FunctionTool field")
            setattr(tool, key, value)
        return tool

    def _policy(self, spec: Mapping[str, Any]) -> Callable[..., Any]:
        listener = self.session.pre_listener(self.scenario["preExecute"][0])
        next_ = chain_end(self.session.binding, "pre-execute")

        async def needs_approval(ctx: RunContextWrapper[Any], params: Any, call_id: str) -> Any:
            execution = PolicyCall(call_id, spec["name"], self.agents.get(call_id), params, ctx)
            decision = await listener(execution, next_)
            kind = kind_of(decision, "pre-execute")
            if kind is None:
                return decision  # the SDK bool()s whatever the policy returns
            if kind == "deny":
                self.denials[call_id] = decision.get("reason")
                return False
            return kind == "ask"

        return needs_approval

    async def _pre_deny(self, data: Any) -> ToolGuardrailFunctionOutput:
        call_id = data.context.tool_call_id
        if call_id in self.denials:
            self.closed[call_id] = "denied"
            return ToolGuardrailFunctionOutput.reject_content(self.denials.pop(call_id))
        return ToolGuardrailFunctionOutput.allow()

    def _guard(self, spec: Mapping[str, Any]) -> Callable[[Any], Any]:
        guard = self.session.guard(spec)

        async def guardrail(data: Any) -> Any:
            reason = guard(data.context)
            if reason is None:
                return ToolGuardrailFunctionOutput.allow()
            if isinstance(reason, str):
                self.closed[data.context.tool_call_id] = "denied"
                return ToolGuardrailFunctionOutput.reject_content(reason)
            return reason  # not a guardrail output: the SDK decides what it means

        return guardrail

    def _post(self, spec: Mapping[str, Any]) -> Callable[[Any], Any]:
        listener = self.session.post_listener(spec)
        next_ = chain_end(self.session.binding, "post-execute")

        async def guardrail(data: Any) -> Any:
            _CALL.set(data.context.tool_call_id)
            decision = await listener(data.context, data.output, next_)
            kind = kind_of(decision, "post-execute")
            if kind == "accept" and set(decision) == {"kind"}:
                return ToolGuardrailFunctionOutput.allow()
            if kind == "block" and isinstance(decision["feedback"], str):  # reject_content's
                self.closed[data.context.tool_call_id] = "denied"
                return ToolGuardrailFunctionOutput.reject_content(decision["feedback"])
            return decision  # not a guardrail output: the SDK decides what it means

        return guardrail

    # ---- running
    async def turn(self, calls: list[Mapping[str, Any]], parallel: int | None) -> list[JSON]:
        """One model turn with these calls; one answer per call."""
        self.agents = {c["callId"]: c.get("agent") for c in calls}
        agent_names = {c.get("agent") for c in calls}
        if len(agent_names) > 1:
            raise ScenarioSkipped("one model turn belongs to one agent; the batch mixes agents")
        controllers = []
        items = []
        for call in calls:
            controller, arguments = self.session.caller(call)
            controllers.append(controller)
            text = _sent_text(arguments)
            item = function_call(call["name"], text, call_id=call["callId"])
            items.append(self.session.track_caller(call["callId"], item))
        model = ScriptedModel([items, [assistant_message("done")]])
        agent = Agent(name=agent_names.pop() or NO_AGENT, model=model, tools=list(self.tools))
        config = RunConfig(
            tracing_disabled=True,
            tool_not_found_behavior="return_error_to_model",
            tool_execution=ToolExecutionConfig(max_function_tool_concurrency=parallel),
        )
        self.model = model
        answers: dict[str, JSON] = {}
        run_input: Any = "go"
        while True:
            outputs: dict[str, ToolCallOutputItem] = {}
            stream = self._stream(agent, run_input, config, outputs)
            try:
                result = await host.consume(stream, controllers)
            except host.RunFailed as failed:
                return [failed.answer for _ in calls]
            for call_id, output in outputs.items():
                answers[call_id] = {"result": self.result_of(output)}
            if not result.interruptions:
                break
            state = result.to_state()
            pending = await self._decide(state, result.interruptions)
            if pending:
                for call_id in pending:
                    why = self.failed.get(call_id, "waiting for approval")
                    answers[call_id] = {"interrupted": why}
                break
            run_input = state
        return [answers.get(c["callId"], {"raised": "no output for this call"}) for c in calls]

    async def _stream(
        self,
        agent: Agent[Any],
        run_input: Any,
        config: RunConfig,
        outputs: dict[str, ToolCallOutputItem],
    ) -> RunResultStreaming:
        """One streamed run, as a host consumes it: each call's ``tool_output`` item is kept
        (the caller's result) and handed to the observer; the run's exception, if any,
        comes out of ``stream_events``. Cancelled, the host cancels the run
        (``RunResultStreaming.cancel``) and drains the stream, as the SDK asks ("After
        calling cancel(), you should continue consuming stream_events()",
        ``SP/result.py:964-965``), before giving up."""
        result = Runner.run_streamed(agent, run_input, run_config=config)
        try:
            async for event in result.stream_events():
                if event.type != "run_item_stream_event":
                    continue
                item = event.item
                if event.name == "tool_called" and isinstance(item, ToolCallItem):
                    if isinstance(item.raw_item, ResponseFunctionToolCall):
                        self.called[item.raw_item.call_id] = item.raw_item
                elif event.name == "tool_output" and isinstance(item, ToolCallOutputItem):
                    call_id = str(item.call_id)
                    outputs[call_id] = item
                    await self.observers(ToolOutput(item, self.called.get(call_id)), item)
        except asyncio.CancelledError:
            result.cancel()
            async for _ in result.stream_events():
                pass
            raise
        return result

    async def _decide(self, state: Any, items: list[ToolApprovalItem]) -> list[str]:
        """The scenario's approver answers each interruption; the call ids left undecided."""
        if "approval" not in self.scenario:
            return [str(i.call_id) for i in items]
        approver = self.session.approval(self.scenario["approval"])
        pending: list[str] = []
        for item in items:
            try:
                answer = await approver.request(item)
            except Exception as e:  # the host's approval backend failed: no answer to pass
                self.failed[str(item.call_id)] = f"the approval service raised: {e}"
                pending.append(str(item.call_id))
                continue
            if answer == "allowed-once":
                state.approve(item)
            elif answer == "rejected":
                self.closed[str(item.call_id)] = "denied"
                state.reject(item)
            else:  # approve/reject take only the item: no other answer can be passed
                pending.append(str(item.call_id))
        return pending

    def result_of(self, item: ToolCallOutputItem) -> JSON:
        """A call's ``tool_output`` item as the kit's result: the same for the caller and
        the observers (the host reads one item). ``Tool 'X' not found.`` for a tool the
        model was not offered is UNKNOWN_TOOL."""
        call_id = str(item.call_id)
        text = _sent_output(item)
        name = next((c["name"] for c in self._calls() if c["callId"] == call_id), None)
        calls = self.model.calls if self.model is not None else []
        offered = {getattr(t, "name", "") for t in calls[0].tools} if calls else set()
        if name not in offered and _NOT_FOUND.match(text):
            return host.failure(text, "UNKNOWN_TOOL")
        return self.classify(call_id, item.output, text)

    def classify(self, call_id: str, output: Any, text: str) -> JSON:
        """A function tool's output as the kit's result (the same for caller and observers)."""
        if self.closed.get(call_id) == "denied":
            return host.failure(text)
        if self.scenario.get("timeoutPolicy") and _TIMED_OUT.match(text):
            return host.failure(text, "TOOL_TIMEOUT")
        return host.success(output, text)

    def _calls(self) -> list[Mapping[str, Any]]:
        return [
            c
            for a in self.scenario.get("actions", [])
            for c in ([a["call"]] if "call" in a else a.get("batch", []))
        ]

    async def schemas(self, scope: str | None) -> list[Any]:
        """What a provider request carries for the enabled tools (the Responses API form,
        ``Converter.convert_tools``, ``SP/models/openai_responses.py:2211-2217``), through the
        kit's one wire projection: the envelope (``type: "function"``, a boolean ``strict``)
        dropped, every other key kept, the values the SDK's own objects (``parameters`` is
        the tool's ``params_json_schema`` dict itself)."""
        agent = Agent(name=scope or NO_AGENT, tools=list(self.tools))
        tools = await agent.get_all_tools(RunContextWrapper(None))
        return [model_entry(entry) for entry in Converter.convert_tools(tools, []).tools]


class OpenAIAgentsAdapter(host.FrameworkAdapter):
    dist = DIST
    capabilities = CAPABILITIES
    missing = MISSING

    def __init__(self) -> None:
        set_tracing_disabled(True)
        super().__init__()

    def unsupported(self, scenario: Mapping[str, Any]) -> str | None:
        return _unsupported(scenario)

    async def run_async(self, scenario: Mapping[str, Any]) -> dict[str, Any]:
        binding = AgentsBinding()
        session = Session(scenario, binding)
        run = _Run(scenario, session)
        binding.classify = run.classify
        binding.item_result = run.result_of
        answers = await run_actions(scenario, run)
        return {"registrations": run.registrations, "actions": answers, "events": session.events}


def make_adapter() -> OpenAIAgentsAdapter:
    return OpenAIAgentsAdapter()
