"""The bundled reference, behind the adapter seam -- and the worked example of an adapter.

An adapter for a Python registry is this file with the API calls swapped: it
builds the set-up from :class:`conformance.interpreter.session.Session`'s factories (which
interpret every scripted step and record every event), maps them onto the
registry's own registration calls, and runs the scenario's actions in order.
It never judges anything.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping
from typing import Any

import reference
from conformance.interpreter.code_runtime import ScriptedCodeRuntime
from conformance.interpreter.session import JSON, Binding, Session, decode, jsonable
from conformance.seam.adapter import CAPABILITIES, DEFAULT_CLOSED_FORMS, AdapterInfo
from reference import (
    AbortController,
    CodeRunFailed,
    Registry,
    ToolCallError,
    ToolExecutionInput,
    materialize,
    run_batch,
)

__all__ = [
    "ACTION_DEADLINE_S",
    "DecisionMismatch",
    "ReferenceAdapter",
    "ReferenceBinding",
    "attempt_write",
    "build_definition",
    "code_runtime",
    "native_decision",
    "run_actions",
]

ACTION_DEADLINE_S = 5.0

REGISTRY_FACTORY = Callable[[Mapping[str, Any]], Registry]


def build_definition(session: Session, spec: Mapping[str, Any]) -> dict[str, Any]:
    """A reference-style definition (snake_case keys) from a scenario tool spec."""
    definition: dict[str, Any] = {"name": spec["name"], "execute": session.tool_body(spec)}
    if "description" in spec:
        definition["description"] = spec["description"]
    if "parameters" in spec:
        definition["parameters"] = spec["parameters"]
    if "output" in spec:
        out = spec["output"]
        output: dict[str, Any] = {}
        if "schema" in out:
            output["schema"] = out["schema"]
        if "render" in out:
            output["render"] = session.projection(out["render"], content=True)
        if "presentationMeta" in out:
            output["presentation_meta"] = session.projection(out["presentationMeta"], content=False)
        definition["output"] = output
    if "finalizeContent" in spec:
        definition["finalize_content"] = session.finalizer(spec)
    if "isConcurrencySafe" in spec:
        definition["is_concurrency_safe"] = session.classifier(spec)
    if "timeoutMs" in spec:
        definition["timeout_ms"] = decode(spec["timeoutMs"])
    for key, field in (("presentCall", "present_call"), ("presentResult", "present_result")):
        if key in spec:
            definition[field] = session.projection(spec[key], content=False)
    definition.update(spec.get("extra", {}))
    return definition


class ReferenceBinding(Binding):
    """The default binding, with the reference's own abort controllers."""

    def new_controller(self) -> Any:
        return AbortController()

    def pre_decision(self, data: JSON) -> Any:
        return native_decision(data)

    def post_decision(self, data: JSON) -> Any:
        return native_decision(data)


def native_decision(data: JSON) -> Any:
    """A decision built the way a host builds it: with the reference's constructors.

    A well-formed decision goes through ``reference.allow`` / ``deny`` / ``ask`` /
    ``accept`` / ``block`` (the host API an adapter of another registry would call
    instead); anything else -- a near-miss kind, a stray key, a ``None`` where the
    constructor would drop the key -- is passed on as decoded, so malformed decisions
    still reach the registry exactly as scripted. Either way the registry receives
    the same mapping the scenario wrote: a constructor that builds anything else raises
    :class:`DecisionMismatch` inside the listener (a throw the script never scripted, so
    the fixtures' expectations fail), never a decision silently changed.
    """
    if not isinstance(data, Mapping) or not isinstance(data.get("kind"), str):
        return decode(data)
    v = {k: decode(x) for k, x in data.items() if k != "kind"}
    kind, keys = data["kind"], set(v)
    built = _construct(kind, keys, v)
    if built is None:
        return decode(data)
    if jsonable(built) != jsonable({"kind": kind, **v}):
        raise DecisionMismatch(f"the reference's constructor built {built!r} for {data!r}")
    return built


class DecisionMismatch(Exception):
    """A host constructor of the reference built another decision than the one scripted."""


def _construct(kind: str, keys: set[str], v: dict[str, Any]) -> Any:
    """The well-formed decision ``kind`` built by its constructor; None when not well-formed."""
    if kind == "allow" and not keys:
        return reference.allow()
    if kind == "deny" and keys == {"reason"} and isinstance(v["reason"], str):
        return reference.deny(v["reason"])
    if kind == "ask" and keys <= {"reason"} and isinstance(v.get("reason", ""), str):
        return reference.ask(v.get("reason"))
    # the constructors drop a None content / additionalContexts: those stay as scripted
    kept = v.get("content", ()) is not None and v.get("additionalContexts", ()) is not None
    contexts = v.get("additionalContexts")
    if kind == "accept" and kept and keys <= {"content", "value", "additionalContexts"}:
        value = {"value": v["value"]} if "value" in v else {}
        return reference.accept(content=v.get("content"), additional_contexts=contexts, **value)
    if kind == "block" and kept and keys in ({"feedback"}, {"feedback", "additionalContexts"}):
        return reference.block(v["feedback"], additional_contexts=contexts)
    return None


def code_runtime() -> ScriptedCodeRuntime:
    """The kit's scripted code runtime, speaking the reference's failure types."""
    return ScriptedCodeRuntime(
        failure=CodeRunFailed, call_error=ToolCallError, returned=materialize
    )


class ReferenceAdapter:
    """Runs scenarios on :class:`reference.Registry` (or a variant built by ``factory``)."""

    def __init__(
        self,
        factory: REGISTRY_FACTORY | None = None,
        *,
        name: str = "reference",
        version: str = reference.__version__,
        batch: Callable[..., Any] = run_batch,
        binding: Binding | None = None,
        closed_forms: frozenset[str] = DEFAULT_CLOSED_FORMS,
        session: Callable[[Mapping[str, Any], Binding], Session] = Session,
    ) -> None:
        self._session = session  # tests build broken adapters with another (the doctor's)
        self._factory = factory or (
            lambda s: Registry(mode=s.get("registry", {}).get("mode", "native"))
        )
        self._info = AdapterInfo(
            name=name,
            version=version,
            capabilities=frozenset(CAPABILITIES),
            closed_forms=closed_forms,
        )
        self._batch = batch
        self._binding = binding or ReferenceBinding()

    def describe(self) -> AdapterInfo:
        return self._info

    def run(self, scenario: Mapping[str, Any]) -> dict[str, Any]:
        return asyncio.run(self._run(scenario))

    async def _run(self, scenario: Mapping[str, Any]) -> dict[str, Any]:
        session = self._session(scenario, self._binding)
        registry = self._factory(scenario)
        if scenario.get("registry", {}).get("mode", "native") != "native":
            registry.code_runtime = code_runtime()
        if "approval" in scenario:
            registry.approval = session.approval(scenario["approval"])
        specs = {t.get("key", t["name"]): t for t in scenario.get("tools", [])}
        disposers: dict[str, Callable[[], None]] = {}
        spent: dict[str, Callable[[], None]] = {}  # the disposer each key ran last
        definitions: dict[str, Any] = {}  # a re-registration registers the same object
        registrations: list[dict[str, Any]] = []

        def register(key: str) -> dict[str, Any]:
            spec = specs[key]
            if key not in definitions:
                definitions[key] = build_definition(session, spec)
            definition = definitions[key]
            try:
                disposers[key] = registry.register(definition, spec.get("scope"))
            except Exception as e:
                return {"key": key, "ok": False, "error": f"{type(e).__name__}: {e}"}
            return {"key": key, "ok": True}

        def dispose(key: str, again: bool = False) -> None:
            if again:
                if key in spent:
                    spent[key]()
            elif key in disposers:
                spent[key] = disposers.pop(key)
                spent[key]()

        session.register_hook = lambda key: registrations.append(register(key))
        session.dispose_hook = dispose
        session.nested_call = lambda ctx, call_id, name, arguments: registry.execute(
            nested_input(ctx, call_id, name, arguments)
        )
        for key, spec in specs.items():
            if spec.get("registered", True):
                registrations.append(register(key))
        listeners = _Listeners(registry, session, scenario)
        if scenario.get("timeoutPolicy"):
            listeners.register("timeoutPolicy", "timeoutPolicy")
        for key in _EVENTS:
            for spec in scenario.get(key, []):
                if spec.get("registered", True):
                    listeners.register(key, spec["id"])

        def call_input(call: Mapping[str, Any]) -> ToolExecutionInput:
            controller, arguments = session.caller(call)
            # a caller that forgot the signal (CANCEL-1): the input type refuses it
            signal: Any = None if call.get("withoutSignal") else controller.signal
            return session.track_caller(
                call["callId"],
                ToolExecutionInput(
                    call_id=call["callId"],
                    name=call["name"],
                    arguments=arguments,
                    signal=signal,
                    agent=call.get("agent"),
                ),
            )

        actions = await run_actions(
            scenario,
            execute=lambda call: registry.execute(call_input(call)),
            caller_writes=session.caller_writes,
            batch=lambda calls, n: self._batch(
                registry, [call_input(c) for c in calls], max_parallel=n
            ),
            schemas=registry.schemas,
            execution_mode=lambda call: registry.execution_mode(call_input(call)),
            register=lambda key: _appended(registrations, register(key)),
            dispose=dispose,
            result_json=session.binding.result_json,
            register_listener=listeners.register,
            dispose_listener=listeners.dispose,
        )
        return {
            "registrations": registrations,
            "actions": actions,
            "events": session.events,
            "log": json.loads(json.dumps(registry.log)),
        }


#: The scenario keys of listeners, each with its event and the Session factory of its callable.
_EVENTS: Mapping[str, tuple[str | None, str]] = {
    "preExecute": ("tools/pre-execute", "pre_listener"),
    "guards": (None, "guard"),
    "wrappers": ("tools/execute", "wrapper"),
    "postExecute": ("tools/post-execute", "post_listener"),
    "observers": ("tools/result", "observer"),
    "codeDispatchLog": ("tools/code-dispatch-log", "code_dispatch_log"),
}


class _Listeners:
    """The registrations of listeners, guards and the timeout policy, and their disposers.

    Registering an id again registers the very callable it registered before (a plugin that
    reloads registers its listener anew); disposing an id runs the disposer of its latest
    registration, and ``again`` runs the last spent one once more (PIPE-6)."""

    def __init__(self, registry: Registry, session: Session, scenario: Mapping[str, Any]) -> None:
        self._registry = registry
        self._session = session
        self._specs = {(key, spec["id"]): spec for key in _EVENTS for spec in scenario.get(key, [])}
        self._made: dict[tuple[str, str], Any] = {}
        self._live: dict[tuple[str, str], list[Callable[[], None]]] = {}
        self._spent: dict[tuple[str, str], Callable[[], None]] = {}

    def register(self, kind: str, ident: str) -> None:
        if kind == "timeoutPolicy":
            disposer = self._registry.use_timeout_policy()
        else:
            spec = self._specs[kind, ident]
            event, factory = _EVENTS[kind]
            made = self._made.setdefault((kind, ident), getattr(self._session, factory)(spec))
            if event is None:
                disposer = self._registry.guard(made, scope=spec.get("scope"))
            else:
                disposer = self._registry.on(event, made, scope=spec.get("scope"))
        self._live.setdefault((kind, ident), []).append(disposer)

    def dispose(self, kind: str, ident: str, again: bool = False) -> None:
        key = (kind, ident)
        if again:
            if key in self._spent:
                self._spent[key]()
        elif self._live.get(key):
            self._spent[key] = self._live[key].pop()
            self._spent[key]()


def nested_input(ctx: Any, call_id: str, name: str, arguments: Any) -> ToolExecutionInput:
    """A composite tool's nested call: under the body's signal and agent, its parent the body's."""
    return ToolExecutionInput(
        call_id=call_id,
        name=name,
        arguments=arguments,
        signal=ctx.signal,
        agent=ctx.agent,
        parent=ctx.token,
    )


def attempt_write(listed: Any, mutate: Mapping[str, Any]) -> None:
    """A caller's write into what ``schemas()`` handed it (a ``schemas`` action's ``mutate``):
    ``mutate["value"]`` at ``mutate["path"]``; a refused write is what a correct registry's
    copies may do, so it is swallowed (DEF-2 judges the re-read, not the write)."""
    target: Any = listed
    path = mutate["path"]
    try:
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = mutate["value"]
    except Exception:
        pass


def _appended(items: list[dict[str, Any]], item: dict[str, Any]) -> dict[str, Any]:
    items.append(item)
    return item


async def _invoked(
    pending: Any, writes: Callable[[list[Mapping[str, Any]], str], None], calls: Any
) -> Any:
    """Make the ``afterInvoke`` writes of ``calls`` the moment the caller has control back
    after invoking ``execute`` (or ``batch``), before it awaits the result; returns what to
    await. A JavaScript caller gets control back when the async call reaches its first
    ``await``; a Python coroutine runs only once scheduled, so it is scheduled and run to its
    first wait, then written to (SPEC PIPE-2: "later" counts from the call). A write that
    raises cancels the call."""
    if not any(isinstance(c, Mapping) and c.get("afterInvoke") for c in calls):
        return pending
    if asyncio.iscoroutine(pending):
        pending = asyncio.ensure_future(pending)
        await asyncio.sleep(0)  # the call runs up to its first wait
    try:
        writes(calls, "afterInvoke")
    except BaseException:
        if isinstance(pending, asyncio.Future):
            pending.cancel()
        elif asyncio.iscoroutine(pending):
            pending.close()
        raise
    return pending


async def run_actions(
    scenario: Mapping[str, Any],
    *,
    execute: Callable[[Mapping[str, Any]], Any],
    batch: Callable[[list[Mapping[str, Any]], int], Any],
    schemas: Callable[[str | None], list[dict[str, Any]]],
    execution_mode: Callable[[Mapping[str, Any]], str],
    register: Callable[[str], dict[str, Any]],
    dispose: Callable[[str, bool], None],
    result_json: Callable[[Any], Any],
    caller_writes: Callable[[Mapping[str, Any], str], None] | None = None,
    register_listener: Callable[[str, str], None] | None = None,
    dispose_listener: Callable[[str, str, bool], None] | None = None,
) -> list[dict[str, Any]]:
    """Run a scenario's actions in order; one answer per action (shared by Python adapters).

    A call's ``afterInvoke`` writes are made right after ``execute`` (or ``batch``) is
    invoked and before it is awaited (:func:`_invoked`: once the call reached its first
    wait), its ``afterResult`` writes after it returned
    (``caller_writes``: ``Session.caller_writes``; None: none are made)."""

    def writes(calls: list[Mapping[str, Any]], moment: str) -> None:
        if caller_writes is not None:
            for call in calls:
                caller_writes(call, moment)

    answers: list[dict[str, Any]] = []
    for action in scenario.get("actions", []):
        try:
            if "call" in action:
                pending = await _invoked(execute(action["call"]), writes, [action["call"]])
                result = await asyncio.wait_for(pending, ACTION_DEADLINE_S)
                answers.append({"result": result_json(result)})
                writes([action["call"]], "afterResult")
            elif "batch" in action:
                pending = batch(action["batch"], action.get("maxParallel", 4))
                pending = await _invoked(pending, writes, action["batch"])
                results = await asyncio.wait_for(pending, ACTION_DEADLINE_S)
                answers.append({"results": [result_json(r) for r in results]})
                writes(action["batch"], "afterResult")
            elif "schemas" in action:
                scope = action["schemas"].get("scope")
                listed = schemas(scope)
                answer: dict[str, Any] = {"schemas": jsonable(listed)}
                if "mutate" in action:
                    attempt_write(listed, action["mutate"])
                    answer["after"] = jsonable(schemas(scope))
                answers.append(answer)
            elif "executionMode" in action:
                answers.append({"mode": execution_mode(action["executionMode"])})
            elif "of" in action and (register_listener is None or dispose_listener is None):
                raise NotImplementedError("this adapter registers no listeners between calls")
            elif "register" in action and "of" in action:
                register_listener(action["of"], action["register"])  # type: ignore[misc]
                answers.append({"ok": True})
            elif "dispose" in action and "of" in action:
                dispose_listener(action["of"], action["dispose"], bool(action.get("again")))  # type: ignore[misc]
                answers.append({})
            elif "register" in action:
                outcome = register(action["register"])
                answers.append({k: v for k, v in outcome.items() if k != "key"})
            elif "dispose" in action:
                dispose(action["dispose"], bool(action.get("again")))
                answers.append({})
        except TimeoutError:
            answers.append({"raised": f"deadline of {ACTION_DEADLINE_S:g} s exceeded"})
        except Exception as e:
            answers.append({"raised": f"{type(e).__name__}: {e}"})
    return answers
