"""LangGraph's ``ToolNode``, as langchain's ``create_agent`` runs it, behind the kit's seam.

::

    toolreg-conformance run --adapter python:conformance.adapters.langgraph:make_adapter

Every ``call`` (or ``batch``) action is one agent run, ``agent.astream(...,
stream_mode="updates")`` on a new thread of the scenario's ``create_agent(...)`` graph
(``LC/agents/factory.py``, compiled once per agent name), consumed as a host consumes it, with
a checkpointer (``langgraph.checkpoint.memory.InMemorySaver``) so that an interrupt can
be resumed. The model is langchain-core's own scripted chat model,
``GenericFakeChatModel`` (``CORE/language_models/fake_chat_models.py:227``): turn 1 is
an ``AIMessage`` with the scenario's tool call(s), turn 2 a final message. That model
raises ``NotImplementedError`` from ``bind_tools`` (``CORE/language_models/
chat_models.py:2409-2426``), which ``create_agent`` calls whenever there are tools
(``LC/agents/factory.py:1486-1491``): :class:`ScriptedModel` adds only that method, which
returns the model itself (it answers from its script). No network.
``LC`` is ``site-packages/langchain`` 1.5.2, ``LG`` ``site-packages/langgraph`` (1.2.24,
``langgraph.prebuilt`` 1.1.3), ``CORE`` ``site-packages/langchain_core`` 1.8.3.

Mapping (kit stage -> framework API):

* tool -> ``StructuredTool.from_function(coroutine=body, name, description,
  args_schema=<the tool's JSON Schema dict>)`` (``CORE/tools/structured.py``); a JSON
  Schema ``args_schema`` is not validated, so none is added. The body is handed the
  call's arguments as keyword arguments and the ``ToolRuntime`` ``ToolNode`` injects
  (``tool_call_id``, state, config).
  Host fields a definition carries (``extra``) -> ``BaseTool.metadata`` ("Optional
  metadata associated with the tool", ``CORE/tools/base.py``).
* a call's agent -> ``create_agent(name=agent)``; a call with none runs on an agent
  without a name (``name=None`` is the default).
* pre-execute (one listener) -> ``HumanInTheLoopMiddleware(interrupt_on={tool:
  {"allowed_decisions": ["approve", "reject"], "when": policy}}, interrupt_mode="per_call")``
  (``LC/agents/middleware/human_in_the_loop.py:362-393``, the "predicate controlling
  whether to interrupt for a given tool call"): ``ask`` -> True, ``allow`` -> False,
  ``deny`` -> False plus a tool-call middleware (below) answering the reason as an error
  ``ToolMessage``, as a guard does (the middleware has no pre-body denial of its own).
  Any other answer is passed to the middleware as is, the return of a buggy predicate (it
  tests ``not when(request)``, ``human_in_the_loop.py:746``). The predicate is
  synchronous: a script that awaits cannot be one (the scenario is skipped). The
  middleware runs the predicate again when the run resumes (documented at ``:378-382``),
  so the listener is asked twice for a call that was interrupted.
  ``per_call`` mode (one interrupt per gated call, carrying its ``tool_call_id``,
  ``human_in_the_loop.py:174-195``) is used so that the approver knows which call it
  answers; the predicate then runs inside the middleware's ``wrap_tool_call`` with the
  real ``ToolCallRequest`` (``:733-757``).
* approval -> each per-call interrupt (``__interrupt__`` update, value a
  ``ToolApprovalRequest``) handed to the scenario's approver -> ``allowed-once`` ->
  ``{"type": "approve"}``, ``rejected`` -> ``{"type": "reject"}``, resumed with
  ``Command(resume={interrupt.id: decision, ...})``. There is no decision for any other answer
  (``cancelled``, a raising approval backend): the host does not resume, the call's
  answer is ``interrupted``.
* guards -> one ``AgentMiddleware`` per guard with ``awrap_tool_call``
  (``LC/agents/middleware/types.py:676``), in registration order: ``None`` -> the
  handler is called, a string -> an error ``ToolMessage`` with that text without calling
  the handler; anything else is returned to ``ToolNode`` as is.
* observers -> the host's consumer of the run's ``updates`` stream: every ``ToolMessage``
  a node update carries (``tools`` for an executed call, ``HumanInTheLoopMiddleware.
  after_model`` for a rejection) is one per-result notification. An observer is handed
  :class:`ToolOutput` (the message and the model's tool call of the same id). Several
  observers are the host's own loop over one update: a writing or raising observer
  followed by another is skipped, as for openai-agents.
* batch -> one model turn with several tool calls (``create_agent`` sends each to
  ``ToolNode`` as its own task); ``maxParallel`` -> the run config's
  ``max_concurrency``.
* schemas -> ``convert_to_openai_tool`` (``CORE/utils/function_calling.py``) of the
  tools bound to the model, through the kit's one projection (``model_entry``).

Results: a ``ToolMessage`` with ``status="error"`` is an error result with its content
as message; ``Error: X is not a valid tool, ...`` (``LG/prebuilt/tool_node.py:122-124``)
is ``UNKNOWN_TOOL``. A body, guard or predicate that raises fails the run (``ToolNode``'s
default error handler re-raises everything but argument-validation errors,
``LG/prebuilt/tool_node.py:405-413``): answer
``raised``. Missing capabilities, each with its reason: :data:`MISSING`.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from dataclasses import dataclass
from typing import Any, cast

from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware, HumanInTheLoopMiddleware
from langchain.tools import ToolRuntime
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import BaseTool, StructuredTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command

from conformance.adapters import host
from conformance.adapters.runner import chain_end, kind_of, run_actions
from conformance.interpreter.binding import ABSENT, JSON, Binding, jsonable
from conformance.interpreter.session import Session
from conformance.seam.adapter import ScenarioSkipped
from conformance.seam.wire import model_entry

__all__ = ["LangGraphAdapter", "LangGraphBinding", "ScriptedModel", "make_adapter"]

DIST = "langgraph"

CAPABILITIES = frozenset({"approval", "pre-execute", "guards", "observers", "scheduler"})
MISSING: dict[str, str] = {
    "agentless-calls": "an interrupt goes to whoever runs the graph, never routed per agent "
    "(langgraph/types.py interrupt): PRE-4's no-agent case has no counterpart",
    "wrappers": "not mapped by this adapter yet: awrap_tool_call middleware "
    "(langchain/agents/middleware/types.py:676) is the counterpart, here used for guards",
    "post-execute": "not mapped by this adapter yet: an awrap_tool_call middleware that "
    "inspects the handler's ToolMessage is the counterpart",
    "finalizer": "no last-mile content stage on a tool",
    "classifier": "no per-tool concurrency classification; max_concurrency is run-wide",
    "code-mode": "no code mode",
    "presentation": "no presentation metadata on a tool",
    "registry-mutation": "an agent's tool list is fixed when create_agent compiles the graph",
    "nested-calls": "a tool cannot run a call through the same agent's ToolNode",
    "timeout-policy": "ToolNode has no per-tool timeout",
    "scopes": "not mapped by this adapter yet: one create_agent graph has one tool list; "
    "per-agent tools are separate graphs",
}
_NOT_VALID = "is not a valid tool, try one of"  # LG/prebuilt/tool_node.py:122-124


class ScriptedModel(GenericFakeChatModel):
    """langchain-core's scripted chat model plus the one method ``create_agent`` needs:
    ``bind_tools`` returns the model (it answers from its script, whatever is bound)."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self


# --------------------------------------------------------------------------- binding


@dataclass
class Invocation:
    """What the body is handed: its keyword arguments and the injected ``ToolRuntime``."""

    runtime: ToolRuntime
    name: str
    arguments: dict[str, Any]


@dataclass
class ToolOutput:
    """One per-result notification: a ``ToolMessage`` of a node update and the model's
    tool call (``AIMessage.tool_calls`` entry) with the same id."""

    message: ToolMessage
    call: dict[str, Any] | None


class LangGraphBinding(Binding):
    """Reads ToolCallRequest, ToolRuntime, ToolMessage and the HITL action request."""

    agent_name: str | None = None

    def new_controller(self) -> Any:
        return host.TaskController()  # the caller's abort cancels the task consuming the stream

    def read(self, obj: Any, key: str | int) -> Any:
        if isinstance(obj, ToolCallRequest):
            return self._read_call(obj.tool_call, key)
        if isinstance(obj, Invocation):
            if key == "callId":
                return obj.runtime.tool_call_id
            if key in ("name", "arguments"):
                return getattr(obj, str(key))
            return super().read(obj.runtime, key)
        if isinstance(obj, ToolOutput):
            if key == "callId":
                return obj.message.tool_call_id
            if key in ("name", "arguments") and obj.call is not None:
                return self._read_call(obj.call, key)
            return super().read(obj.message, key)
        if _is_approval(obj) and key in ("callId", "arguments"):
            return obj["tool_call_id" if key == "callId" else "args"]
        return super().read(obj, key)

    def _read_call(self, call: Any, key: str | int) -> Any:
        names = {"callId": "id", "name": "name", "arguments": "args"}
        return call[names.get(str(key), key)]

    def write(self, obj: Any, key: str | int, value: Any) -> None:
        names = {"callId": "id", "name": "name", "arguments": "args"}
        if isinstance(obj, ToolCallRequest):
            call: dict[str, Any] = obj.tool_call  # type: ignore[assignment]
            call[names.get(str(key), str(key))] = value
        elif isinstance(obj, Invocation) and key in ("name", "arguments"):
            setattr(obj, str(key), value)
        elif isinstance(obj, Invocation):
            super().write(obj.runtime, key, value)
        elif isinstance(obj, ToolOutput):
            if key in names and obj.call is not None:
                obj.call[names[str(key)]] = value
            else:
                super().write(obj.message, "toolCallId" if key == "callId" else key, value)
        else:
            super().write(obj, key, value)

    def keys(self, obj: Any) -> list[str]:
        if isinstance(obj, (ToolCallRequest, Invocation, ToolOutput)):
            return ["callId", "name", "arguments"]
        return super().keys(obj)

    def agent(self, execution: Any) -> str | None:
        return self.agent_name  # the agent the host built for this run

    def arguments(self, execution: Any) -> Any:
        return self.get(execution, "arguments")

    def request_arguments(self, request: Any) -> Any:
        """A ``ToolApprovalRequest`` shows its reviewer ``args``."""
        if isinstance(request, Mapping) and "args" in request:
            return jsonable(request["args"])
        return ABSENT if not isinstance(request, Mapping) else super().request_arguments(request)

    def signal(self, execution: Any) -> Any:
        return None  # no signal is handed to any stage

    def has_parent(self, execution: Any) -> bool:
        return False

    def result_json(self, result: Any) -> JSON:
        if isinstance(result, ToolMessage):
            return result_of(result)
        return jsonable(result)


def _is_approval(obj: Any) -> bool:
    """A per-call ``ToolApprovalRequest`` (``human_in_the_loop.py:174-195``)."""
    return isinstance(obj, Mapping) and obj.get("type") == "tool_approval"


def result_of(message: ToolMessage) -> JSON:
    """A ``ToolMessage`` as the kit's result (the same for the caller and the observers)."""
    text = message.content if isinstance(message.content, str) else json.dumps(message.content)
    if message.status == "error":
        unknown = text.startswith("Error: ") and _NOT_VALID in text
        return host.failure(text, "UNKNOWN_TOOL" if unknown else None)
    try:
        value: Any = json.loads(text)
    except ValueError:
        value = text
    return host.success(value, text)


# --------------------------------------------------------------------------- adapter


class _Awaits(ScenarioSkipped):
    pass


def _now(coro: Coroutine[Any, Any, Any]) -> Any:
    """Run a script coroutine that never suspends, from a synchronous framework callback."""
    try:
        coro.send(None)
    except StopIteration as done:
        return done.value
    coro.close()
    raise _Awaits("the pre-execute script awaits; HITL's `when` predicate is synchronous")


GAPS = host.Gaps(
    contexts="no deferred contexts or turn conclusion",
    caller_writes="the caller's afterInvoke/afterResult writes: the caller is the agent's own "
    "stream loop, which this adapter does not interrupt to write (the doctor's caller-writes)",
    pre_chain="one HITL `when` predicate per tool: no chain of pre-execute listeners",
    scoped="middleware is not registered per agent",
    observer_raises="an observer is the host's own loop over the stream: a raising one is "
    "host code",
    observers_write="several observers are the host's own loop over one update",
)


class _Guard(AgentMiddleware[Any, Any, Any]):
    """A deny-only guard as a tool-call middleware (``awrap_tool_call``)."""

    def __init__(self, ident: str, decide: Callable[[ToolCallRequest], Any]) -> None:
        super().__init__()
        self._ident = ident
        self._decide = decide

    @property
    def name(self) -> str:
        return f"guard:{self._ident}"

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[Any]],
    ) -> Any:
        reason = self._decide(request)
        if reason is None:
            return await handler(request)
        if isinstance(reason, str):
            call = request.tool_call
            return ToolMessage(reason, tool_call_id=call["id"], name=call["name"], status="error")
        return reason  # not a ToolMessage: ToolNode decides what it means


class _Run(host.HostDriver):
    """One scenario: the agent built from it; each call or batch action is one agent run
    (:meth:`turn`)."""

    def __init__(self, scenario: Mapping[str, Any], session: Session) -> None:
        self.scenario = scenario
        self.session = session
        self.binding: LangGraphBinding = session.binding  # type: ignore[assignment]
        self.denials: dict[str, str] = {}
        built, self.registrations = host.register_tools(scenario, self._tool)
        self.tools = [tool for _, tool in built]
        self.observers = host.Observers(session)
        self.middleware = self._middleware()
        self.models: dict[str | None, ScriptedModel] = {}
        self.agents: dict[str | None, Any] = {}
        self.thread = 0  # one checkpointer thread per action

    def _agent(self, name: str | None) -> Any:
        """The scenario's agent of this name, compiled once (its tools and middleware are the
        scenario's); each action gives its model a new script and runs on a new thread."""
        if name not in self.agents:
            self.models[name] = ScriptedModel(messages=iter([]))
            self.agents[name] = create_agent(
                self.models[name],
                tools=list(self.tools),
                middleware=self.middleware,
                checkpointer=InMemorySaver(),
                name=name,
            )
        return self.agents[name]

    def _tool(self, spec: Mapping[str, Any]) -> BaseTool:
        body = self.session.tool_body(spec)
        name = spec["name"]

        async def run(runtime: ToolRuntime, **kwargs: Any) -> Any:
            return await body(kwargs, Invocation(runtime, name, kwargs))

        return StructuredTool.from_function(
            coroutine=run,
            name=name,
            description=spec.get("description", ""),
            args_schema=copy.deepcopy(dict(spec.get("parameters", {"type": "object"}))),
            metadata=dict(spec["extra"]) if spec.get("extra") else None,  # host data
        )

    def _middleware(self) -> list[AgentMiddleware[Any, Any, Any]]:
        out: list[AgentMiddleware[Any, Any, Any]] = []
        if self.scenario.get("preExecute"):
            when = self._when(self.scenario["preExecute"][0])
            config: Any = {"allowed_decisions": ["approve", "reject"], "when": when}
            gated = {t.name: config for t in self.tools}
            out.append(HumanInTheLoopMiddleware(gated, interrupt_mode="per_call"))
            out.append(_Guard("pre-deny", lambda r: self.denials.get(str(r.tool_call["id"]))))
        for g in self.scenario.get("guards", []):
            out.append(_Guard(g["id"], self.session.guard(g)))
        return out

    def _when(self, spec: Mapping[str, Any]) -> Callable[[ToolCallRequest], Any]:
        listener = self.session.pre_listener(spec)
        next_ = chain_end(self.session.binding, "pre-execute")

        def when(request: ToolCallRequest) -> Any:
            decision = _now(cast("Coroutine[Any, Any, Any]", listener(request, next_)))
            kind = kind_of(decision, "pre-execute")
            if kind is None:
                return decision  # the middleware tests its truth
            if kind == "deny":
                self.denials[str(request.tool_call["id"])] = str(decision["reason"])
            return kind == "ask"

        return when

    async def turn(self, calls: list[Mapping[str, Any]], parallel: int | None) -> list[JSON]:
        agents = {c.get("agent") for c in calls}
        if len(agents) > 1:
            raise ScenarioSkipped("one model turn belongs to one agent; the batch mixes agents")
        self.binding.agent_name = agents.pop()
        controllers = []
        tool_calls: list[dict[str, Any]] = []
        for call in calls:
            controller, arguments = self.session.caller(call)
            controllers.append(controller)
            if not isinstance(arguments, Mapping):
                raise ScenarioSkipped("a tool call's args are a JSON object")
            tool_call = {"name": call["name"], "args": arguments, "id": call["callId"]}
            tool_calls.append(self.session.track_caller(call["callId"], tool_call))
        agent = self._agent(self.binding.agent_name)
        self.models[self.binding.agent_name].messages = iter(
            [AIMessage("", tool_calls=tool_calls), "done"]
        )
        self.thread += 1
        config: Any = {"configurable": {"thread_id": str(self.thread)}}
        if parallel is not None:
            config["max_concurrency"] = parallel
        by_id = {c["id"]: c for c in tool_calls}
        answers: dict[str, JSON] = {}
        run_input: Any = {"messages": [{"role": "user", "content": "go"}]}
        while True:
            stream = self._stream(agent, run_input, config, by_id, answers)
            try:
                interrupts = await host.consume(stream, controllers)
            except host.RunFailed as failed:
                return [failed.answer for _ in calls]
            if not interrupts:
                break
            decisions, pending = await self._decide(interrupts)
            if pending:
                for call_id, why in pending.items():
                    answers[call_id] = {"interrupted": why}
                break
            run_input = Command(resume=decisions)
        return [answers.get(c["callId"], {"raised": "no result for this call"}) for c in calls]

    async def _stream(
        self,
        agent: Any,
        run_input: Any,
        config: Any,
        by_id: Mapping[str, dict[str, Any]],
        answers: dict[str, JSON],
    ) -> list[Any]:
        interrupts: list[Any] = []
        async for update in agent.astream(run_input, config, stream_mode="updates"):
            for node, value in update.items():
                if node == "__interrupt__":
                    interrupts.extend(value)
                    continue
                messages = value.get("messages", []) if isinstance(value, Mapping) else []
                for message in messages:
                    if isinstance(message, ToolMessage):
                        answers[message.tool_call_id] = {"result": result_of(message)}
                        view = ToolOutput(message, by_id.get(message.tool_call_id))
                        await self.observers(view, message)
        return interrupts

    async def _decide(self, interrupts: list[Any]) -> tuple[dict[str, Any], dict[str, str]]:
        """The approver answers each per-call interrupt (its value a ``ToolApprovalRequest``);
        the decisions keyed by interrupt id, and the call ids left without one."""
        pending: dict[str, str] = {}
        decisions: dict[str, Any] = {}
        spec = self.scenario.get("approval")
        approver = self.session.approval(spec) if spec is not None else None
        for interrupt in interrupts:
            request = interrupt.value
            call_id = str(request.get("tool_call_id"))
            if approver is None:
                pending[call_id] = "waiting for approval"
                continue
            try:
                answer = await approver.request(request)
            except Exception as e:
                pending[call_id] = f"the approval service raised: {e}"
                continue
            if answer == "allowed-once":
                decisions[interrupt.id] = {"type": "approve"}
            elif answer == "rejected":
                decisions[interrupt.id] = {"type": "reject"}
            else:
                pending[call_id] = f"no HITL decision for the answer {answer!r}"
        return decisions, pending

    def schemas(self, scope: str | None) -> list[Any]:
        if scope is not None:
            raise ScenarioSkipped("no per-agent tool lists (scopes)")
        return [model_entry(convert_to_openai_tool(t)["function"]) for t in self.tools]


class LangGraphAdapter(host.FrameworkAdapter):
    dist = DIST
    capabilities = CAPABILITIES
    missing = MISSING

    def unsupported(self, scenario: Mapping[str, Any]) -> str | None:
        return host.gap(scenario, GAPS)

    async def run_async(self, scenario: Mapping[str, Any]) -> dict[str, Any]:
        session = Session(scenario, LangGraphBinding())
        run = _Run(scenario, session)
        answers = await run_actions(scenario, run)
        return {"registrations": run.registrations, "actions": answers, "events": session.events}


def make_adapter() -> LangGraphAdapter:
    return LangGraphAdapter()
