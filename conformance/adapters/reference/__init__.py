"""The bundled reference, behind the adapter seam -- and the worked example of an adapter.

An adapter for a Python registry is this file with the API calls swapped: it
builds the set-up from :class:`conformance.interpreter.session.Session`'s factories (which
interpret every scripted step and record every event), maps them onto the
registry's own registration calls, and runs the scenario's actions in order through
:func:`conformance.adapters.runner.run_actions` with a small driver (what each action
does on the registry). It never judges anything. docs/adapters.md walks through it.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Callable, Mapping
from typing import Any

import conformance.adapters.runner as runner
import reference
from conformance.adapters.reference.loop import plain_report, run_in_a_clean_loop, run_in_a_new_loop
from conformance.adapters.runner import attempt_write, run_actions, well_formed
from conformance.interpreter.binding import canonical_json
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
    "plain_report",
    "run_actions",
    "run_in_a_new_loop",
]

ACTION_DEADLINE_S = runner.ACTION_DEADLINE_S  # the runner's; a test may shorten it here

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
    """A decision built the way a host builds it: with the reference's constructors, or as
    plain data (:func:`as_data`).

    A well-formed decision goes through ``reference.allow`` / ``deny`` / ``ask`` /
    ``accept`` / ``block`` (the host API an adapter of another registry would call
    instead), and about half of them reach the registry as that decision's JSON decoded
    afresh, as a host whose policy is data hands it; anything else -- a near-miss kind, a
    stray key, a ``None`` where the constructor would drop the key -- is passed on as
    decoded, so malformed decisions still reach the registry exactly as scripted. Either
    way the registry receives the same mapping the scenario wrote: a constructor that
    builds anything else raises :class:`DecisionMismatch` inside the listener (a throw the
    script never scripted, so the fixtures' expectations fail), never a decision silently
    changed.
    """
    if not isinstance(data, Mapping) or not isinstance(data.get("kind"), str):
        return decode(data)
    v = {k: decode(x) for k, x in data.items() if k != "kind"}
    kind, keys = data["kind"], set(v)
    built = _construct(kind, keys, v)
    if built is _NOT_BUILT:
        return decode(data)
    if jsonable(built) != jsonable({"kind": kind, **v}):
        raise DecisionMismatch(f"the reference's constructor built {built!r} for {data!r}")
    return decode(json.loads(json.dumps(data))) if as_data(data) else built


def as_data(data: JSON) -> bool:
    """Does this well-formed decision reach the registry as plain data -- a mapping decoded
    from JSON, as a host whose policy is configuration hands it (upstream's decisions are
    plain objects) -- instead of as the host's constructor built it? Both are decisions the
    registry must take (a registry that recognises an ``ask`` by the identity of its
    constructor's interned ``"ask"`` does not take the first: the bundled mutant
    ``pre.ask-by-identity``, found by cosmic-ray).
    About half the decisions each way, by a hash of the decision's JSON: the same decision is
    always handed the same way, so a trace depends on its scenario alone."""
    return zlib.crc32(canonical_json(data).encode()) % 2 == 1


class DecisionMismatch(Exception):
    """A host constructor of the reference built another decision than the one scripted."""


#: What :func:`_construct` answers for a decision no constructor builds as scripted (a
#: constructor that returns None is a constructor's answer, judged like any other).
_NOT_BUILT: Any = object()


def _construct(kind: str, keys: set[str], v: dict[str, Any]) -> Any:
    """The well-formed decision ``kind`` built by its constructor; :data:`_NOT_BUILT` when not
    well-formed (:func:`conformance.adapters.runner.well_formed`) or not constructible as
    scripted."""
    pre = kind in ("allow", "deny", "ask")
    if not well_formed({"kind": kind, **v}, "pre-execute" if pre else "post-execute"):
        return _NOT_BUILT
    if kind == "allow":
        return reference.allow()
    if kind == "deny":
        return reference.deny(v["reason"])
    if kind == "ask":
        return reference.ask(v.get("reason"))
    # the constructors drop a None content / additionalContexts: those stay as scripted
    if v.get("content", ()) is None or v.get("additionalContexts", ()) is None:
        return _NOT_BUILT
    contexts = v.get("additionalContexts")
    if kind == "accept":
        value = {"value": v["value"]} if "value" in v else {}
        return reference.accept(content=v.get("content"), additional_contexts=contexts, **value)
    return reference.block(v["feedback"], additional_contexts=contexts)


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
        return run_in_a_clean_loop(self._run(scenario))

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

        result_json, batch_driver = session.binding.result_json, self._batch

        class Driver(runner.Driver):
            """Each action on the registry: the adapter's driver (the binding is the other half)."""

            caller_writes = session.caller_writes

            async def call(self, call: Mapping[str, Any]) -> JSON:
                return {"result": result_json(await registry.execute(call_input(call)))}

            async def batch(self, calls: list[Mapping[str, Any]], max_parallel: int) -> JSON:
                inputs = [call_input(c) for c in calls]
                results = await batch_driver(registry, inputs, max_parallel=max_parallel)
                return {"results": [result_json(r) for r in results]}

            def schemas(self, scope: str | None) -> list[dict[str, Any]]:
                return registry.schemas(scope)

            def execution_mode(self, call: Mapping[str, Any]) -> str:
                return registry.execution_mode(call_input(call))

            def register(self, key: str) -> dict[str, Any]:
                return _appended(registrations, register(key))

            def dispose(self, key: str, again: bool) -> None:
                dispose(key, again)

            def register_listener(self, kind: str, ident: str) -> None:
                listeners.register(kind, ident)

            def dispose_listener(self, kind: str, ident: str, again: bool) -> None:
                listeners.dispose(kind, ident, again)

        actions = await run_actions(scenario, Driver(), deadline=ACTION_DEADLINE_S)
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


def _appended(items: list[dict[str, Any]], item: dict[str, Any]) -> dict[str, Any]:
    items.append(item)
    return item
