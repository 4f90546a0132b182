"""Google's Agent Development Kit (``google-adk``) behind the kit's adapter seam::

    toolreg-conformance run --adapter python:conformance.adapters.google_adk:make_adapter

Every ``call`` action is one run of ``google.adk.runners.InMemoryRunner.run_async``
(``SP/runners.py``), consumed as a host consumes it, driven offline by ADK's own scripted
model, ``google.adk.cli.agent_test_runner.MockModel`` (``SP/cli/agent_test_runner.py:121-141``:
it answers each request with the next of its ``LlmResponse`` list): turn 1 is the
scenario's function call(s), turn 2 a text. ``SP`` below is ``site-packages/google/adk`` of
google-adk 2.13.0. The adapter maps each declared stage onto one ADK API and builds no
mechanism ADK lacks.

Mapping (kit stage -> ADK API):

* tool -> a ``BaseTool`` subclass (``SP/tools/base_tool.py:126-165``, ADK's documented way
  to write a tool by hand): ``_get_declaration`` gives a ``FunctionDeclaration`` with the
  scenario's JSON Schema as ``parameters_json_schema``; ``run_async(args=, tool_context=)``
  is the body. ADK validates nothing against the schema on this path: none is added here.
  A tool's host fields (``extra``) -> ``BaseTool.custom_metadata`` (``base_tool.py:90-95``,
  "for storing and retrieving tool-specific metadata").
* a call's agent -> the ``LlmAgent``'s name; scope -> that agent's own ``tools`` list (a scoped
  tool is on its agent only, a global one on every agent with no scoped tool of that
  name). A call with none runs on an agent named
  ``toolreg_no_agent`` (every ADK call belongs to an agent).
* the call's arguments, as every stage sees them -> the ``args`` dict ADK hands the
  callbacks and the tool (one object, ``SP/flows/llm_flows/tools/_caller.py:505-520,
  660-667``). A stage that assigns the arguments replaces that dict's contents in place,
  as a callback author modifying ``args`` does.
* pre-execute (one listener) -> the tool's ``check_require_confirmation(args, tool_context)``
  (``SP/tools/base_tool.py:194-198``), consulted by ADK's confirmation gate after the
  before-tool callbacks (``_caller.py:553-570``, ``SP/tools/_confirmation_utils.py:48-72``)
  and again when a confirmation comes back (``_confirmation.py:176-195``): ``ask`` -> True,
  ``allow`` -> False. ADK's hook answers only whether to ask: a ``deny`` skips the scenario
  (a denial is a before_tool_callback's, mapped as a guard). Any other answer is handed to
  ADK as is (its gate holds a call only on ``True``). A chain of listeners is skipped.
* approval -> ADK's confirmation round trip: the held call's run yields an
  ``adk_request_confirmation`` function call (``_functions.py:205-245``: its args carry the
  ``originalFunctionCall`` and the ``toolConfirmation`` hint); the scenario's approver is
  handed that call; ``allowed-once`` / ``rejected`` -> the host resumes the session with its
  ``FunctionResponse`` ``{"confirmed": true|false}`` (``ToolConfirmation``,
  ``SP/tools/tool_confirmation.py``). ADK has no other answer: any other, or an approver
  that raised, leaves the call waiting (answer ``interrupted``). The pause's own
  FunctionResponse (the gate's "requires confirmation" error, whose event lists the call in
  ``actions.requested_tool_confirmations``) is not a result: the host's loop skips it.
* guards -> ``LlmAgent.before_tool_callback`` as a list, one callback per guard
  (``SP/agents/llm_agent.py:540,945-952``; run in order, the first non-``None`` answer
  is the call's response and the tool does not run, ``_caller.py:505-524``): ``None`` ->
  ``None``; a reason -> ``{"error": reason}`` (ADK's own error-response shape, the one its
  confirmation gate and unknown-tool answer use, ``SP/tools/_confirmation_utils.py:65-71``,
  ``_error_handler.py:92-98``). Anything else a guard returns is handed to ADK as is.
* post-execute -> ``LlmAgent.after_tool_callback`` as a list (``llm_agent.py:556,955-962``,
  ``_caller.py:609-625``: the first non-``None`` answer replaces the response):
  ``accept`` -> ``None``, ``block`` -> ``{"error": feedback}``; other answers as is.
* observers -> the host's consumer of the run's events: each event carrying a
  ``FunctionResponse`` part (``Event.get_function_responses``) is ADK's per-result
  notification, for an executed call and a callback's answer alike. The observer is
  handed the ``FunctionResponse`` (id, name, response) and its ``response`` dict. Several
  observers are the host's own loop over one event: a scenario whose observer writes
  before another runs, or raises, is skipped (that is the host's code, not ADK's).
* the caller's own objects (``mutate`` targets ``caller`` / ``caller-arguments``, a call's
  ``afterInvoke`` / ``afterResult`` writes) -> the ``FunctionCall`` part of the model-response
  ``Event`` the host's loop is handed, and its ``args`` dict. ``BaseLlmFlow`` yields that event
  and then executes the calls from the very same object
  (``SP/flows/llm_flows/base_llm_flow.py:502-522``; ``core/_finalizer.py:80-90`` copies the
  event shallowly, so the part is the scripted model's own): the first moment a host holds
  the call and has control back before its result, so the ``afterInvoke`` writes are made
  there, in the host's loop, and the ``afterResult`` writes once the turn answered. ADK takes
  no snapshot at that yield: what a write there changes, ADK runs.
* batch -> one model turn with several function calls.
* unknown tool -> ADK answers the model ``{"error": "Invoking `X()` failed as no tool with
  that name is available..."}`` (``_error_handler.py:82-99``) -> code ``UNKNOWN_TOOL``.
* schemas -> the ``function_declarations`` of the ``LlmRequest`` ADK sent the scripted
  model (``MockModel.requests``), the request a provider gets, through the kit's wire
  projection.

Results: a response ADK built from a non-dict tool return is ``{"result": value}``
(``_caller.py:63-67``); the caller's value is that ``value``. ADK has no error flag: a
response the adapter's own callback produced (a guard's reason, a ``block``) is
``isError`` with its ``error`` text. A body or callback that raises (with no
``on_tool_error_callback``) fails the run: answer ``raised``.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.cli.agent_test_runner import MockModel
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import InMemoryRunner
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.base_toolset import BaseToolset
from google.adk.tools.tool_context import ToolContext
from google.genai import types

from conformance.adapters import host
from conformance.adapters.runner import chain_end, kind_of, run_actions
from conformance.interpreter.binding import JSON, Binding, jsonable
from conformance.interpreter.session import Session
from conformance.seam.adapter import ScenarioSkipped
from conformance.seam.wire import model_entry

__all__ = ["AdkBinding", "GoogleAdkAdapter", "make_adapter"]

DIST = "google-adk"
NO_AGENT = "toolreg_no_agent"
APP = "toolreg"
USER = "toolreg-user"

CAPABILITIES = frozenset(
    {"approval", "pre-execute", "guards", "post-execute", "observers", "scheduler", "scopes"}
)
MISSING: dict[str, str] = {
    "agentless-calls": "every ADK call belongs to an agent (LlmAgent.name is required)",
    "wrappers": "no around-wrapper of a tool's body: run_async is the body itself",
    "finalizer": "no last-mile content stage after after_tool_callback",
    "classifier": "no per-tool concurrency classification",
    "timeout-policy": "no per-tool timeout on BaseTool",
    "code-mode": "no code mode",
    "presentation": "no presentation metadata on a tool",
    "registry-mutation": "an agent's tool list is fixed for a run; no register/dispose",
    "nested-calls": "a tool cannot run a call through the same pipeline (AgentTool starts "
    "a new run)",
}
_UNKNOWN_PREFIX = "Invoking `"  # _error_handler.py:94
REQUEST_CONFIRMATION = "adk_request_confirmation"  # the host's question, _functions.py:226-235


async def _no_confirmation(call: Any) -> bool:
    return False


@dataclass
class AdkResult:
    """What the host's event loop has for one call's result: the run's ``Event`` (its
    ``author``, the agent) and the ``FunctionResponse`` part it carries (id, name,
    response)."""

    response: types.FunctionResponse
    author: str | None


@dataclass
class AdkCall:
    """What ADK hands a tool callback: ``(tool, args, tool_context)``."""

    tool: BaseTool
    args: dict[str, Any]
    tool_context: ToolContext


class AdkBinding(Binding):
    """Reads ADK's callback arguments and ``FunctionResponse`` parts."""

    def new_controller(self) -> Any:
        return host.TaskController()  # the caller's abort cancels the task consuming the run

    def read(self, obj: Any, key: str | int) -> Any:
        if isinstance(obj, AdkCall):
            if key == "arguments":
                return obj.args
            if key == "name":
                return obj.tool.name
            if key == "agent":
                name = obj.tool_context.agent_name
                return None if name == NO_AGENT else name
            if key == "callId":
                return obj.tool_context.function_call_id
            return getattr(obj.tool_context, self.attribute(str(key)))
        if isinstance(obj, types.FunctionCall) and obj.name == REQUEST_CONFIRMATION:
            if isinstance(key, str) and key in _ASKED:
                return _asked(obj)[_ASKED[key]]
            if key == "reason":
                return _confirmation(obj).get("hint")
            if key == "requestId":
                return obj.id
        if isinstance(obj, AdkResult):
            if key == "agent":
                return None if obj.author == NO_AGENT else obj.author
            if key == "callId":
                return obj.response.id
            if key == "arguments":
                raise AttributeError("a FunctionResponse carries no arguments")
            return self.read(obj.response, key)
        return super().read(obj, key)

    def write(self, obj: Any, key: str | int, value: Any) -> None:
        asking = isinstance(obj, types.FunctionCall) and obj.name == REQUEST_CONFIRMATION
        if asking and isinstance(key, str) and key in _ASKED:
            _asked(obj)[_ASKED[key]] = value  # the originalFunctionCall the host sends back
        elif isinstance(obj, AdkCall) and key == "arguments":
            if not isinstance(value, dict):
                raise TypeError("ADK's args is a dict: a callback can only change its contents")
            obj.args.clear()  # the one dict ADK hands every callback and the tool
            obj.args.update(value)
        elif isinstance(obj, AdkCall) and key == "name":
            obj.tool.name = value
        elif isinstance(obj, AdkCall) and key == "callId":
            obj.tool_context.function_call_id = value  # a public setter, context.py:253
        elif isinstance(obj, AdkResult) and key == "agent":
            obj.author = value
        elif isinstance(obj, AdkResult) and key == "callId":
            obj.response.id = value
        elif isinstance(obj, AdkResult):
            self.write(obj.response, key, value)
        else:
            super().write(obj, key, value)

    def request_arguments(self, request: Any) -> Any:
        """An ``adk_request_confirmation`` call shows its host the original call, arguments
        included (``originalFunctionCall.args``)."""
        if isinstance(request, types.FunctionCall) and request.name == REQUEST_CONFIRMATION:
            return jsonable(_asked(request).get("args", {}))
        return super().request_arguments(request)

    def keys(self, obj: Any) -> list[str]:
        if isinstance(obj, types.FunctionCall) and obj.name == REQUEST_CONFIRMATION:
            return ["callId", "name", "arguments", "reason", "requestId"]
        if isinstance(obj, AdkCall):
            return ["callId", "name", "arguments", "agent"]
        if isinstance(obj, AdkResult):
            return ["callId", "name", "response", "agent"]
        return super().keys(obj)

    def signal(self, execution: Any) -> Any:
        return None  # ADK hands no signal

    def has_parent(self, execution: Any) -> bool:
        return False

    classify: Callable[[types.FunctionResponse], JSON] | None = None

    def result_json(self, result: Any) -> JSON:
        """A FunctionResponse (what observers get) or a raw tool return (what an
        after_tool_callback gets), mapped as the caller's is."""
        if isinstance(result, AdkResult) and self.classify is not None:
            return self.classify(result.response)
        return _success(result)


_ASKED = {"callId": "id", "name": "name", "arguments": "args"}


def _asked(request: types.FunctionCall) -> dict[str, Any]:
    """The ``originalFunctionCall`` an ``adk_request_confirmation`` call carries."""
    original = (request.args or {}).get("originalFunctionCall")
    return original if isinstance(original, dict) else {}


def _confirmation(request: types.FunctionCall) -> dict[str, Any]:
    confirmation = (request.args or {}).get("toolConfirmation")
    return confirmation if isinstance(confirmation, dict) else {}


def _success(response: Any) -> JSON:
    value = response
    if isinstance(response, Mapping) and set(response) == {"result"}:
        value = response["result"]  # ADK's wrapping of a non-dict return, _caller.py:63-67
    text = response if isinstance(response, str) else json.dumps(jsonable(response))
    return host.success(value, text)


# --------------------------------------------------------------------------- adapter


GAPS = host.Gaps(
    contexts="no deferred contexts or turn conclusion in ADK",
    pre_chain="one check_require_confirmation per tool: no chain of pre-execute listeners",
    scoped="before/after_tool_callback are set per agent, but a scenario's agents share "
    "one set of callbacks here: scoped callbacks are not mapped",
    observer_raises="an observer is the host's own loop over the run's FunctionResponse "
    "events: ADK never calls it, so whether a raising one is contained is the host's code",
    observers_write="several observers are the host's own loop over one event: what one "
    "observer's write does to a later one is the host's, not ADK's",
)


def _unsupported(scenario: Mapping[str, Any]) -> str | None:
    """Why ADK (or this adapter) cannot express this scenario, when it cannot."""
    reason = host.gap(scenario, GAPS)
    if reason is not None:
        return reason
    for ret in host.post_returns(scenario):
        if ret.get("kind") == "accept" and len(ret) > 1:
            return "an accept with a replacement has no ADK counterpart distinct from block"
        if "additionalContexts" in ret:
            return "no deferred contexts in ADK"
    return None


class _Run(host.HostDriver):
    """One scenario: the ADK objects built from it and each call's outcome; each call or
    batch action is one model turn of one run (:meth:`turn`)."""

    framework = "ADK"

    def __init__(self, scenario: Mapping[str, Any], session: Session) -> None:
        self.scenario = scenario
        self.session = session
        self.closed: set[str] = set()  # call ids answered by an adapter callback's error
        self.invoked: set[str] = set()  # call ids whose function-call event the host was handed
        self.failed: dict[str, str] = {}  # call id -> why its confirmation got no answer
        built, self.registrations = host.register_tools(scenario, self._tool)
        # (tool, the agent it is scoped to)
        self.tools = [(tool, spec.get("scope")) for spec, tool in built]
        self.before = [self._guard(g) for g in scenario.get("guards", [])]
        self.after = [self._post(p) for p in scenario.get("postExecute", [])]
        self.observers = host.Observers(session)

    def _tool(self, spec: Mapping[str, Any]) -> BaseTool:
        body = self.session.tool_body(spec)
        parameters = copy.deepcopy(dict(spec.get("parameters", {"type": "object"})))
        extra = copy.deepcopy(dict(spec.get("extra", {})))  # host fields -> custom_metadata
        policy = self._policy()

        class ScenarioTool(BaseTool):
            def _get_declaration(self) -> types.FunctionDeclaration:
                return types.FunctionDeclaration(
                    name=self.name,
                    description=self.description,
                    # built afresh per request, as FunctionTool builds its own from the
                    # signature: the tool holds no dict a request could alias
                    parameters_json_schema=copy.deepcopy(parameters),
                )

            async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
                return await body(args, AdkCall(self, args, tool_context))

            async def check_require_confirmation(
                self, args: dict[str, Any], tool_context: ToolContext
            ) -> Any:
                return await policy(AdkCall(self, args, tool_context))

        return ScenarioTool(
            name=spec["name"],
            description=spec.get("description", ""),
            custom_metadata=extra or None,
        )

    def _policy(self) -> Callable[[AdkCall], Awaitable[Any]]:
        """The pre-execute listener as ``BaseTool.check_require_confirmation``: ``ask`` ->
        True, ``allow`` -> False; any other answer is returned to ADK as is (its gate holds
        a call back only on ``True``, ``_confirmation_utils.py:51-54``)."""
        specs = self.scenario.get("preExecute", [])
        if not specs:
            return _no_confirmation
        listener = self.session.pre_listener(specs[0])
        next_ = chain_end(self.session.binding, "pre-execute")

        async def check_require_confirmation(call: AdkCall) -> Any:
            decision = await listener(call, next_)
            kind = kind_of(decision, "pre-execute")
            if kind == "allow":
                return False
            if kind == "ask":
                return True
            if kind == "deny":
                raise ScenarioSkipped(
                    "check_require_confirmation only answers whether to ask: ADK has no "
                    "pre-execute denial (a before_tool_callback's answer is mapped as a guard)"
                )
            return decision  # not a bool: ADK decides what it means

        return check_require_confirmation

    def _guard(self, spec: Mapping[str, Any]) -> Callable[..., Any]:
        guard = self.session.guard(spec)

        def before_tool(tool: BaseTool, args: dict[str, Any], tool_context: ToolContext) -> Any:
            reason = guard(AdkCall(tool, args, tool_context))
            if reason is None:
                return None
            if isinstance(reason, str):
                self.closed.add(str(tool_context.function_call_id))
                return {"error": reason}
            return reason  # not a callback answer ADK documents: ADK decides what it means

        return before_tool

    def _post(self, spec: Mapping[str, Any]) -> Callable[..., Any]:
        listener = self.session.post_listener(spec)
        next_ = chain_end(self.session.binding, "post-execute")

        async def after_tool(
            tool: BaseTool, args: dict[str, Any], tool_context: ToolContext, tool_response: Any
        ) -> Any:
            call = AdkCall(tool, args, tool_context)
            decision = await listener(call, tool_response, next_)
            kind = kind_of(decision, "post-execute")
            if kind == "accept" and set(decision) == {"kind"}:
                return None
            if kind == "block" and isinstance(decision["feedback"], str):
                self.closed.add(str(tool_context.function_call_id))
                return {"error": decision["feedback"]}
            return decision  # not a callback answer ADK documents: ADK decides

        return after_tool

    def _agent(self, name: str | None, model: MockModel) -> LlmAgent:
        return LlmAgent(
            name=name or NO_AGENT,
            model=model,
            tools=self._tools_of(name or NO_AGENT),
            before_tool_callback=list(self.before) or None,
            after_tool_callback=list(self.after) or None,
        )

    def _tools_of(self, agent: str) -> list[Callable[..., Any] | BaseTool | BaseToolset]:
        """The agent's own tool list (``LlmAgent.tools``): its scoped tools, and the global
        ones no scoped tool of the same name shadows."""
        own = {t.name for t, scope in self.tools if scope == agent}
        return [
            t for t, scope in self.tools if scope == agent or (scope is None and t.name not in own)
        ]

    async def turn(self, calls: list[Mapping[str, Any]], max_parallel: int | None) -> list[JSON]:
        """One model turn with these calls; one answer per call. ``maxParallel`` has no
        counterpart: ADK runs a turn's function calls as it does."""
        agents = {c.get("agent") for c in calls}
        if len(agents) > 1:
            raise ScenarioSkipped("one model turn belongs to one agent; the batch mixes agents")
        controllers = []
        parts = []
        for call in calls:
            controller, arguments = self.session.caller(call)
            controllers.append(controller)
            if not isinstance(arguments, dict) or any(not isinstance(k, str) for k in arguments):
                raise ScenarioSkipped("ADK's FunctionCall.args is an object with string keys")
            fc = types.FunctionCall(id=call["callId"], name=call["name"], args=arguments)
            parts.append(types.Part(function_call=fc))
        model = _model([types.Content(role="model", parts=parts)])
        self.model = model
        outputs: dict[str, Any] = {}
        asked: dict[str, types.FunctionCall] = {}  # original call id -> its confirmation request
        runner = InMemoryRunner(agent=self._agent(agents.pop(), model), app_name=APP)
        adk_session = await runner.session_service.create_session(app_name=APP, user_id=USER)
        message = types.Content(role="user", parts=[types.Part.from_text(text="go")])
        pending: list[str] = []
        made = {str(c["callId"]): c for c in calls}
        while True:
            events = self._consume(runner, adk_session.id, message, outputs, asked, made)
            try:
                await host.consume(events, controllers)
            except host.RunFailed as failed:
                return [failed.answer for _ in calls]
            if not asked:
                break
            answers, pending = await self._decide(asked)
            asked = {}
            if not answers:
                break
            message = types.Content(role="user", parts=answers)
        answered: list[JSON] = []
        for c in calls:
            if c["callId"] in pending:
                why = self.failed.get(c["callId"], "waiting for confirmation")
                answered.append({"interrupted": why})
            elif c["callId"] in outputs:
                answered.append({"result": outputs[c["callId"]]})
            else:
                answered.append({"raised": "no output"})
        return answered

    async def _consume(
        self,
        runner: InMemoryRunner,
        session_id: str,
        message: types.Content,
        outputs: dict[str, Any],
        asked: dict[str, types.FunctionCall],
        made: Mapping[str, Mapping[str, Any]],
    ) -> None:
        """One run, consumed as a host does: each FunctionResponse is the call's result and
        is handed to the observers, except the one answering a call held for confirmation
        (its event's ``actions.requested_tool_confirmations`` names it: the pause, not a
        result); an ``adk_request_confirmation`` function call is a question for the host.
        A function call of ``made`` is the caller's: :meth:`_invoked`."""
        async for event in runner.run_async(
            user_id=USER, session_id=session_id, new_message=message
        ):
            self._invoked(event, made)
            held = event.actions.requested_tool_confirmations or {}
            for response in event.get_function_responses():
                if str(response.id) in held:
                    continue
                outputs[str(response.id)] = self.classify(response)
                view = AdkResult(response, event.author)
                await self.observers(view, view)
            for fc in event.get_function_calls():
                if fc.name == REQUEST_CONFIRMATION and isinstance(fc.args, dict):
                    original = fc.args.get("originalFunctionCall")
                    if isinstance(original, dict):
                        asked[str(original.get("id"))] = fc

    def _invoked(self, event: Any, made: Mapping[str, Mapping[str, Any]]) -> None:
        """The host is handed the model-response event carrying the scenario's calls: its
        ``FunctionCall`` parts (and their ``args``) are the caller's own objects from now on,
        and the calls' ``afterInvoke`` writes are made to them here, before ADK resumes and
        executes them from these very objects (``base_llm_flow.py:502-522``)."""
        fresh = [fc for fc in event.get_function_calls() if fc.id in made.keys() - self.invoked]
        for fc in fresh:
            call_id = str(fc.id)
            self.invoked.add(call_id)
            self.session.track_caller(call_id, fc)
            self.session.caller_arguments[call_id] = fc.args  # the args the host holds
        for fc in fresh:
            self.session.caller_writes(made[str(fc.id)], "afterInvoke")

    def caller_writes(self, call: Mapping[str, Any], moment: str) -> None:
        """The runner's moments of the caller's writes: ``afterResult`` once the turn
        answered; ``afterInvoke`` is the host's loop's (:meth:`_invoked`), where a host first
        holds the call: a call whose event never came (a run cancelled or failed before the
        model's answer) gets no such write, as no host could make one."""
        if moment != "afterInvoke":
            self.session.caller_writes(call, moment)

    async def _decide(
        self, asked: dict[str, types.FunctionCall]
    ) -> tuple[list[types.Part], list[str]]:
        """The scenario's approver answers each confirmation request: allowed-once ->
        ``{"confirmed": true}``, rejected -> ``{"confirmed": false}`` (a ``ToolConfirmation``,
        ``SP/tools/tool_confirmation.py``), sent back as the request's FunctionResponse.
        ADK has no other answer: any other leaves the call waiting (``interrupted``)."""
        if "approval" not in self.scenario:
            return [], list(asked)
        approver = self.session.approval(self.scenario["approval"])
        parts: list[types.Part] = []
        pending: list[str] = []
        for call_id, request in asked.items():
            try:
                answer = await approver.request(request)
            except Exception as e:  # the host's approval backend failed: nothing to send
                self.failed[call_id] = f"the approval service raised: {e}"
                pending.append(call_id)
                continue
            if answer not in ("allowed-once", "rejected"):
                pending.append(call_id)
                continue
            if answer == "rejected":
                self.closed.add(call_id)
            confirmation = {"confirmed": answer == "allowed-once"}
            response = types.FunctionResponse(
                id=request.id, name=REQUEST_CONFIRMATION, response=confirmation
            )
            parts.append(types.Part(function_response=response))
        return parts, pending

    def classify(self, response: types.FunctionResponse) -> JSON:
        """A FunctionResponse as the kit's result (the same for the caller and observers)."""
        body = response.response
        error = body.get("error") if isinstance(body, Mapping) else None
        if isinstance(error, str) and str(response.id) in self.closed:
            return host.failure(error)
        if isinstance(error, str) and error.startswith(_UNKNOWN_PREFIX) and len(body or {}) == 1:
            return host.failure(error, "UNKNOWN_TOOL")
        return _success(body)

    async def schemas(self, agent_name: str | None) -> list[Any]:
        """The function declarations of the request ADK sends the model, as the wire has
        them (``LlmRequest.config.tools``)."""
        model = _model([])
        async for _ in _events(self._agent(agent_name, model), "list"):
            pass
        config = model.requests[0].config
        entries = []
        for tool in (config.tools if config is not None else None) or []:
            for decl in getattr(tool, "function_declarations", None) or []:
                entry = {
                    "name": decl.name,
                    "description": decl.description,
                    "parameters": decl.parameters_json_schema,
                }
                entries.append(model_entry(entry))
        return entries


async def _events(agent: LlmAgent, text: str) -> Any:
    """One ``InMemoryRunner.run_async`` on a fresh session: the run's events."""
    runner = InMemoryRunner(agent=agent, app_name=APP)
    adk_session = await runner.session_service.create_session(app_name=APP, user_id=USER)
    message = types.Content(role="user", parts=[types.Part.from_text(text=text)])
    async for event in runner.run_async(
        user_id=USER, session_id=adk_session.id, new_message=message
    ):
        yield event


def _model(first: list[types.Content]) -> MockModel:
    """ADK's scripted model: the given turn(s), then a final text."""
    done = types.Content(role="model", parts=[types.Part.from_text(text="done")])
    return MockModel(responses=[LlmResponse(content=c) for c in [*first, done]], requests=[])


class GoogleAdkAdapter(host.FrameworkAdapter):
    dist = DIST
    capabilities = CAPABILITIES
    missing = MISSING

    def unsupported(self, scenario: Mapping[str, Any]) -> str | None:
        return _unsupported(scenario)

    async def run_async(self, scenario: Mapping[str, Any]) -> dict[str, Any]:
        binding = AdkBinding()
        session = Session(scenario, binding)
        run = _Run(scenario, session)
        binding.classify = run.classify
        answers = await run_actions(scenario, run)
        return {"registrations": run.registrations, "actions": answers, "events": session.events}


def make_adapter() -> GoogleAdkAdapter:
    return GoogleAdkAdapter()
