"""DEF -- the three layers of a tool definition."""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st
from jsonschema.validators import Draft202012Validator

from conformance.judging.model import CallView, View
from conformance.judging.rules import focus
from conformance.judging.rules._base import Scenario, Verdict, require, rule
from conformance.judging.rules._facts import (
    UNKNOWN_TOOL,
    args_valid,
    may_abort,
    mutates_registry,
    resolve,
)
from conformance.judging.rules._json import schema_usable
from conformance.scenario import strategies as s
from conformance.scenario.schema import once_per_judgement
from conformance.vocab import NOT_CALLABLE, RUN_CODE, ErrorCode

MODEL_VISIBLE = frozenset({"name", "description", "parameters"})
# Host-only and presentation fields (DEF-1), in the spec's and in snake_case spelling.
HIDDEN_FIELDS = frozenset(
    {
        "execute",
        "output",
        "finalizeContent",
        "finalize_content",
        "timeoutMs",
        "timeout_ms",
        "isConcurrencySafe",
        "is_concurrency_safe",
        "presentCall",
        "present_call",
        "presentResult",
        "present_result",
        "presentationMeta",
        "presentation_meta",
        "render",
        "schema",
    }
)


def _host_objects(value: Any) -> bool:
    """Does a JSON answer hold a host object (a function, a callable, ...) anywhere?"""
    if isinstance(value, Mapping):
        if value.get("$special") in ("host-object", "function"):
            return True
        return any(_host_objects(v) for v in value.values())
    if isinstance(value, list):
        return any(_host_objects(v) for v in value)
    return False


def _listings(view: View) -> Iterator[tuple[str, int, list[Any]]]:
    """(subject, action index, entries) for every schemas answer and its re-read."""
    for index, action, answer in view.answers("schemas"):
        scope = action["schemas"].get("scope")
        for part in ("schemas", "after"):
            if isinstance(answer.get(part), list):
                yield (
                    f"schemas({scope}) [action {index}{', after' if part == 'after' else ''}]",
                    index,
                    answer[part],
                )


# ------------------------------------------------------------------- DEF-1


@rule("DEF-1", "Three layers")
def DEF_1(view: View) -> Iterator[Verdict]:
    """Host-only and presentation layers never reach the model-visible schemas."""
    for subject, index, entries in _listings(view):
        leaked = sorted(
            {str(k) for e in entries if isinstance(e, Mapping) for k in e if k in HIDDEN_FIELDS}
        )
        hosts = [e.get("name") for e in entries if isinstance(e, Mapping) and _host_objects(e)]
        yield require(
            not leaked and not hosts,
            subject,
            "model-visible schemas must carry no host-only or presentation field: "
            f"found fields {leaked} and host objects in entries {hosts}",
            action=index,  # the schemas listing's answer
        )


@st.composite
def _layered_tools(draw: st.DrawFn) -> s.Scenario:
    names = draw(st.lists(s.NAMES, min_size=1, max_size=2, unique=True))
    tools = []
    for name in names:
        tool = s.tool(name, [{"return": "ok"}])
        optional: dict[str, Any] = {
            "finalizeContent": [{"return": None}],
            "isConcurrencySafe": [{"return": True}],
            "timeoutMs": draw(st.sampled_from([1000, 30000, 0.5])),
            "presentCall": "args",
            "presentResult": "call",
        }
        for key, value in optional.items():
            if draw(st.integers(0, 3)):
                tool[key] = value
        if draw(st.booleans()):
            tool["scope"] = "main"
            tool["key"] = f"{name}@main"
        tools.append(tool)
    scopes = draw(st.lists(s.AGENTS, min_size=1, max_size=2))
    return s.scenario(
        "generated/DEF-1",
        tools,
        [{"schemas": {"scope": scope} if scope else {}} for scope in scopes]
        + [{"call": s.call("c0", names[0], {}, agent=scopes[0])}],
    )


focus("DEF-1", _layered_tools(), "scopes")


# ------------------------------------------------------------------- DEF-2


#: DEF-2's clauses (SPEC DEF-2): both are portable.
DEF_2_CLAUSES = {
    "whitelist": "each entry has exactly name, description and parameters, the definition's "
    "own: no host-only, presentation or unknown field",
    "copy": "mutating the returned schemas, at any depth, changes nothing later schemas show",
}


@rule("DEF-2", "Whitelisted model-visible schemas", clauses=DEF_2_CLAUSES)
def DEF_2(view: View) -> Iterator[Verdict]:
    """Each entry has exactly name, description, parameters; schemas are copies.

    The definition an entry must show is the one its scope resolves *at that
    action*: for a registry that registers and disposes tools between reads, the
    lifecycle replayed from the trace (:func:`walk`) says which.
    """
    lifecycle = None if view.lifecycle_static else walk(view)
    states = {i: active for i, _, _, active, _ in lifecycle.steps} if lifecycle else {}
    for index, action, answer in view.answers("schemas"):
        entries = answer.get("schemas")
        if not isinstance(entries, list):
            continue
        scope = action["schemas"].get("scope")
        problems: list[str] = []
        for entry in entries:
            if not isinstance(entry, Mapping):
                problems.append(f"entry {entry!r} is not an object")
                continue
            keys = set(entry)
            if keys != MODEL_VISIBLE:
                problems.append(f"entry {entry.get('name')!r} has keys {sorted(keys)}")
            name = entry.get("name")
            spec: Mapping[str, Any] | None = None
            if name == RUN_CODE:
                pass
            elif view.lifecycle_static:
                spec = view.catalog_tool(str(name), scope)
            elif index in states:
                spec = resolve(states[index].values(), str(name), scope)
            if spec is None:
                continue
            if "description" in spec and entry.get("description") != spec["description"]:
                problems.append(f"entry {name!r} has description {entry.get('description')!r}")
            if "parameters" in spec and entry.get("parameters") != spec["parameters"]:
                problems.append(f"entry {name!r} has parameters {entry.get('parameters')!r}")
        subject = f"schemas({scope}) [action {index}]"
        yield require(
            not problems,
            subject,
            "schemas() must build each entry by whitelist (exactly name, description, "
            "parameters): " + "; ".join(problems),
            clause="whitelist",
            action=index,  # the schemas listing's answer
        )
        if "mutate" in action and isinstance(answer.get("after"), list):
            yield require(
                answer["after"] == entries,
                subject,
                f"mutating the returned schemas at {action['mutate']['path']} changed what "
                "schemas() returns next (not a copy)",
                clause="copy",
                action=index,
            )


EXTRA_FIELDS = st.dictionaries(
    st.sampled_from(["x-owner", "annotations", "strict", "cacheTtl", "permissions", "examples"]),
    s.json_values(1),
    min_size=1,
    max_size=3,
)
MUTATION_PATHS = [
    [0, "name"],
    [0, "description"],
    [0, "parameters", "type"],
    [0, "parameters", "properties", "path", "type"],
    [0, "parameters", "required"],
    [0, "injected"],
]


@st.composite
def _whitelist_scenarios(draw: st.DrawFn) -> s.Scenario:
    names = draw(st.lists(s.NAMES, min_size=1, max_size=2, unique=True))
    tools = []
    for name in names:
        tool = s.tool(
            name,
            [{"return": "ok"}],
            parameters={
                "type": "object",
                "properties": {"path": {"type": "string"}},
                "required": ["path"],
            },
            extra=draw(EXTRA_FIELDS),
        )
        if draw(st.booleans()):
            tool["presentCall"] = "args"
            tool["timeoutMs"] = 5000
        tools.append(tool)
    mutate = {
        "path": draw(st.sampled_from(MUTATION_PATHS)),
        "value": draw(st.sampled_from(["mutated", 7, None])),
    }
    actions: list[dict[str, Any]] = [{"schemas": {}, "mutate": mutate}]
    if draw(st.booleans()):
        actions.append({"schemas": {}})
    if draw(st.booleans()):
        actions.append({"call": s.call("c0", names[0], {"path": "a"})})
    return s.scenario("generated/DEF-2", tools, actions)


# Parameters one layer of a name accepts and another refuses (history scenarios).
_LOOSE: Mapping[str, Any] = {"type": "object"}
_STRICT: Mapping[str, Any] = {
    "type": "object",
    "properties": {"path": {"type": "string"}},
    "required": ["path"],
    "additionalProperties": False,
}
_HISTORY_ARGUMENTS: st.SearchStrategy[dict[str, Any]] = st.sampled_from(
    [{"path": "a"}, {}, {"path": 1}, {"path": "a", "extra": 1}]
)


@st.composite
def history_scenarios(draw: st.DrawFn) -> s.Scenario:
    """Registry changes interleaved with reads: a name in two to four layers (global,
    agent-scoped; stricter or looser parameters than each other), some registered only
    later; reads and calls mostly from the agent that has a shadow, around a sequence
    of register / dispose / re-register / ``schemas()`` / calls."""
    name = draw(s.NAMES)
    who = draw(st.sampled_from(["main", "helper"]))
    strict = draw(st.booleans())
    layers = [(None, strict), (who, not strict if draw(st.integers(0, 2)) else strict)]
    layers += draw(
        st.lists(st.tuples(st.sampled_from([None, "main", "helper"]), st.booleans()), max_size=2)
    )
    tools = []
    for i, (scope, tight) in enumerate(layers):
        tool = s.tool(
            name,
            [{"return": f"v{i}"}],
            key=f"{name}#{i}",
            description=f"layer {i}: {'strict' if tight else 'loose'} {scope or 'global'}",
            parameters=dict(_STRICT if tight else _LOOSE),
        )
        if scope is not None:
            tool["scope"] = scope
        if i and not draw(st.integers(0, 1 if i > 1 else 2)):
            tool["registered"] = False
        tools.append(tool)
    keys = [t["key"] for t in tools]
    agents = st.sampled_from([who, who, who, None, "main", "helper"])
    actions: list[dict[str, Any]] = [{"schemas": {"scope": who}}]
    for i, kind in enumerate(
        draw(st.lists(st.sampled_from(["change", "read", "call", "call"]), min_size=2, max_size=7))
    ):
        if kind == "change":
            verb = draw(st.sampled_from(["register", "register", "dispose"]))
            late: list[str] = [t["key"] for t in tools if t.get("registered") is False]
            pool = late if verb == "register" and late and draw(st.booleans()) else keys
            actions.append({verb: draw(st.sampled_from(pool))})
        elif kind == "read":
            agent = draw(agents)
            actions.append({"schemas": {"scope": agent} if agent else {}})
        else:
            arguments = dict(draw(_HISTORY_ARGUMENTS))
            actions.append({"call": s.call(f"c{i}", name, arguments, agent=draw(agents))})
    actions.append({"schemas": {"scope": who}})
    return s.scenario("generated/history", tools, actions)


focus("DEF-2", st.one_of(_whitelist_scenarios(), history_scenarios()))


# ------------------------------------------------------------------- DEF-3 / DEF-4 / DEF-5 / DEF-6


def _output_complete(spec: Mapping[str, Any]) -> bool:
    """DEF-3: a schema and a render function (a field holding no function is no render)."""
    output = spec.get("output")
    return (
        isinstance(output, Mapping)
        and "schema" in output
        and "render" in output
        and output["render"] != NOT_CALLABLE
    )


def _hooks_callable(spec: Mapping[str, Any]) -> bool:
    """No optional hook holds a non-function (SPEC DEF-1: a registry may refuse one)."""
    output = spec.get("output")
    meta = output.get("presentationMeta") if isinstance(output, Mapping) else None
    return NOT_CALLABLE not in (meta, spec.get("presentCall"), spec.get("presentResult"))


def timeout_form(spec: Mapping[str, Any]) -> str:
    """``absent``, ``valid`` (a positive finite number), ``invalid``, or ``ambiguous`` (null)."""
    if "timeoutMs" not in spec:
        return "absent"
    value = spec["timeoutMs"]
    if value is None:
        return "ambiguous"  # "omitted" in a language with undefined; never premised on
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return "invalid"
    return "valid" if value > 0 and math.isfinite(value) else "invalid"


def clearly_valid(spec: Mapping[str, Any]) -> bool:
    """Nothing in the definition is a reason to refuse it (other than name collisions)."""
    if (
        spec["name"] == RUN_CODE
        or not _output_complete(spec)
        or not _hooks_callable(spec)
        or timeout_form(spec) not in ("absent", "valid")
    ):
        return False
    try:
        output = spec["output"]["schema"]
    except Exception:
        return False
    if not (schema_usable(spec.get("parameters", {"type": "object"})) and schema_usable(output)):
        return False
    return not any(
        k in spec.get("extra", {})
        for k in ("name", "description", "parameters", "execute", "output")
    )


@dataclass
class Registration:
    key: str
    spec: Mapping[str, Any]
    ok: bool | None  # None: the trace does not say
    subject: str
    #: The ``register`` action's index (what a verdict about it points at); None: set-up.
    action: int | None = None
    #: A set-up registration's index in ``trace["registrations"]``; None: an action's, or
    #: one the trace does not record.
    recorded: int | None = None


@dataclass
class Walk:
    """The scenario's lifecycle, replayed from the trace's registration outcomes."""

    setup: list[Registration] = field(default_factory=list)
    steps: list[
        tuple[int, Mapping[str, Any], Mapping[str, Any], dict[str, Mapping[str, Any]], set[str]]
    ] = field(
        default_factory=list
    )  # (action index, action, answer, active registrations before it, names disposed so far)
    registrations: list[tuple[Registration, dict[str, Mapping[str, Any]]]] = field(
        default_factory=list
    )


@once_per_judgement  # four DEF predicates ask
def walk(view: View) -> Walk | None:
    """The scenario's registrations and actions replayed in order (None: scripts change the
    registry mid-call, so there is no replay)."""
    if mutates_registry(view.scenario):  # scripts change the registry mid-call: no replay
        return None
    specs = {t.get("key", t["name"]): t for t in view.tool_specs}
    out = Walk()
    outcomes: dict[str, bool] = {}
    recorded: dict[str, int] = {}
    for position, entry in enumerate(view.trace.get("registrations", [])):
        outcomes.setdefault(str(entry.get("key")), bool(entry.get("ok")))
        recorded.setdefault(str(entry.get("key")), position)
    active: dict[str, Mapping[str, Any]] = {}
    for key, spec in specs.items():
        if not spec.get("registered", True):
            continue
        registration = Registration(
            key, spec, outcomes.get(key), f"register {key}", recorded=recorded.get(key)
        )
        out.setup.append(registration)
        out.registrations.append((registration, dict(active)))
        if registration.ok:
            active[key] = spec
    disposed: set[str] = set()
    answers = view.trace.get("actions", [])
    for index, action in enumerate(view.scenario.get("actions", [])):
        answer = answers[index] if index < len(answers) else {}
        out.steps.append((index, action, answer, dict(active), set(disposed)))
        if "of" in action:  # a listener's registration (PIPE-6), not a tool's
            continue
        if "register" in action and action["register"] in specs:
            key = action["register"]
            ok = answer.get("ok") if isinstance(answer.get("ok"), bool) else None
            registration = Registration(
                key, specs[key], ok, f"register {key} [action {index}]", index
            )
            out.registrations.append((registration, dict(active)))
            if ok and key not in active:
                active[key] = specs[key]
        elif "dispose" in action and not action.get("again") and action["dispose"] in active:
            disposed.add(str(active.pop(action["dispose"])["name"]))  # (again: a no-op)
    return out


def _no_policy(scenario: Scenario) -> bool:
    return not any(
        scenario.get(k) for k in ("preExecute", "guards", "wrappers", "postExecute")
    ) and not scenario.get("timeoutPolicy")


def _simple_value(spec: Mapping[str, Any]) -> tuple[bool, Any]:
    """(True, V) when the body just returns a value its output schema accepts."""
    steps = spec.get("execute", [])
    if len(steps) != 1 or "return" not in steps[0]:
        return False, None
    value = steps[0]["return"]
    try:
        ok = Draft202012Validator(spec["output"]["schema"]).is_valid(value)
    except Exception:
        return False, None
    return ok, value


def _call_of(view: View, action: Mapping[str, Any], answer: Mapping[str, Any]) -> CallView | None:
    """The call of ``action`` (a ``call`` action) with its answer and its events."""
    if "call" not in action:
        return None
    call = CallView(action["call"], answer.get("result"), answer.get("raised"))
    call.events = [e for e in view.trace.get("events", []) if e.get("call") == call.id]
    return call


# ------------------------------------------------------------------- DEF-3


@rule("DEF-3", "Mandatory output declaration")
def DEF_3(view: View) -> Iterator[Verdict]:
    """Registering without output.schema and output.render fails at registration."""
    lifecycle = walk(view)
    if lifecycle is None:
        return
    for registration, _ in lifecycle.registrations:
        if _output_complete(registration.spec) or registration.ok is None:
            continue
        yield require(
            registration.ok is False,
            registration.subject,
            f"a definition whose output is {registration.spec.get('output', 'missing')!r} "
            "(no schema and render function) must be refused at registration, but it was accepted",
            action=registration.action,
            registration=registration.recorded,
        )


@st.composite
def _output_scenarios(draw: st.DrawFn) -> s.Scenario:
    names = draw(st.lists(s.NAMES, min_size=1, max_size=3, unique=True))
    variants: list[dict[str, Any] | None] = [
        None,
        {},
        {"schema": {"type": "string"}},
        {"render": "text"},
        {"presentationMeta": "value"},
        {"schema": {}, "render": "json"},
        {"schema": {"type": "string"}, "render": NOT_CALLABLE},
        {"schema": {}, "render": "json", "presentationMeta": NOT_CALLABLE},
    ]
    tools = []
    for name in names:
        tool = s.tool(name, [{"return": "ok"}])
        output = draw(st.sampled_from(variants))
        if output is None:
            del tool["output"]
        else:
            tool["output"] = output
        if draw(st.integers(0, 3)) == 0:
            tool["registered"] = False
        tools.append(tool)
    actions: list[dict[str, Any]] = [
        {"register": t["name"]} for t in tools if t.get("registered") is False
    ]
    actions += [{"call": s.call(f"c{i}", t["name"], {})} for i, t in enumerate(tools)]
    return s.scenario("generated/DEF-3", tools, actions)


focus("DEF-3", _output_scenarios())


# ------------------------------------------------------------------- DEF-4


@rule("DEF-4", "Cooperative timeoutMs")
def DEF_4(view: View) -> Iterator[Verdict]:
    """timeoutMs: validated at registration; omitted means no deadline; never registry-enforced."""
    lifecycle = walk(view)
    if lifecycle is None:
        return
    for registration, active in lifecycle.registrations:
        form = timeout_form(registration.spec)
        if form in ("absent", "ambiguous") or registration.ok is None:
            continue
        if form == "invalid":
            yield require(
                registration.ok is False,
                registration.subject,
                f"timeoutMs {registration.spec['timeoutMs']!r} is not a positive finite number; "
                "registration must fail, but it was accepted",
                action=registration.action,
                registration=registration.recorded,
            )
            continue
        layer = registration.spec.get("scope")
        clash = any(
            s.get("scope") == layer and s["name"] == registration.spec["name"]
            for s in active.values()
        )
        if clearly_valid(registration.spec) and not clash:
            yield require(
                registration.ok is True,
                registration.subject,
                f"timeoutMs {registration.spec['timeoutMs']!r} is a positive finite number; "
                "registration must accept it, but it was refused",
                action=registration.action,
                registration=registration.recorded,
            )
    if view.mode == "code" or may_abort(view.scenario) or view.scenario.get("wrappers"):
        return
    policy = bool(view.scenario.get("timeoutPolicy"))
    for _, action, answer, active, _ in lifecycle.steps:
        call = _call_of(view, action, answer)
        if call is None or not call.returned:
            continue
        spec = resolve(active.values(), str(call.spec["name"]), call.spec.get("agent"))
        if spec is None or args_valid(spec, call.spec.get("arguments", {})) is not True:
            continue
        form = timeout_form(spec)
        if form == "absent" and policy:
            why = "timeoutMs is omitted (no deadline) although the timeout policy is installed"
        elif form == "valid" and not policy:
            why = "the registry itself must not enforce timeoutMs (no timeout policy is installed)"
        else:
            continue
        aborted = [
            e
            for e in call.events
            if e.get("stage") == "body"
            and e.get("what") == "signal"
            and (e.get("observed") or {}).get("aborted")
        ]
        yield require(
            call.code != ErrorCode.TOOL_TIMEOUT and not aborted,
            call.id,
            f"{why}, but the call timed out or its body saw an aborted signal (code={call.code})",
            # the aborted signal the body saw, else its body (or last event)
            **view.at(call, aborted or call.entered("body")),
        )


@st.composite
def _timeout_scenarios(draw: st.DrawFn) -> s.Scenario:
    values = st.sampled_from(
        [
            0,
            -1,
            -0.5,
            "100",
            True,
            [100],
            {"$special": "nan"},
            {"$special": "infinity"},
            {"$special": "negative-infinity"},
            0.001,
            0.01,
            1,
            250,
            1e9,
        ]
    )
    names = draw(st.lists(s.NAMES, min_size=1, max_size=3, unique=True))
    tools = []
    for name in names:
        body: list[dict[str, Any]] = [
            {"yield": draw(st.integers(1, 30))},
            {"observe": "signal"},
            {"return": "done"},
        ]
        tool = s.tool(name, body)
        if draw(st.integers(0, 3)):
            tool["timeoutMs"] = draw(values)
        tools.append(tool)
    fields: dict[str, Any] = {}
    if draw(st.booleans()):
        fields["timeoutPolicy"] = True
    return s.scenario(
        "generated/DEF-4",
        tools,
        [{"call": s.call(f"c{i}", t["name"], {})} for i, t in enumerate(tools)],
        **fields,
    )


focus("DEF-4", _timeout_scenarios(), "timeout-policy")


# ------------------------------------------------------------------- DEF-5


@rule("DEF-5", "Unique names per layer, scoped shadowing")
def DEF_5(view: View) -> Iterator[Verdict]:
    """A duplicate in one layer is refused; an agent-scoped tool shadows a global one."""
    lifecycle = walk(view)
    if lifecycle is None:
        return
    for registration, active in lifecycle.registrations:
        if registration.ok is None:
            continue
        spec = registration.spec
        layer = spec.get("scope")
        same = [s for s in active.values() if s.get("scope") == layer and s["name"] == spec["name"]]
        where = "globally" if layer is None else f"for agent {layer!r}"
        variants = [
            o["name"]
            for o in active.values()
            if o.get("scope") == layer
            and o["name"] != spec["name"]
            and o["name"].casefold() == spec["name"].casefold()
        ]
        if same:
            yield require(
                registration.ok is False,
                registration.subject,
                f"{spec['name']!r} is already registered {where}; a duplicate must be refused",
                action=registration.action,
                registration=registration.recorded,
            )
        elif variants and clearly_valid(spec):
            yield require(
                registration.ok is True,
                registration.subject,
                f"{spec['name']!r} differs from {variants} only by case: it is another name, "
                "not a duplicate, and its registration must succeed",
                action=registration.action,
                registration=registration.recorded,
            )
        elif (
            layer is not None
            and clearly_valid(spec)
            and resolve(active.values(), spec["name"], None) is not None
        ):
            yield require(
                registration.ok is True,
                registration.subject,
                f"registering {spec['name']!r} {where} over a global tool must succeed (shadowing)",
                action=registration.action,
                registration=registration.recorded,
            )
    if view.mode == "code":
        return
    plain = _no_policy(view.scenario) and not may_abort(view.scenario)
    for index, action, answer, active, _ in lifecycle.steps:
        call = _call_of(view, action, answer)
        if call is not None and call.returned and plain:
            yield from _own_case(view, call, active)
        shadowed = {s["name"] for s in active.values() if s.get("scope") is not None} & {
            s["name"] for s in active.values() if s.get("scope") is None
        }
        if not shadowed:
            continue
        call = _call_of(view, action, answer)
        if call is not None and call.returned and call.spec["name"] in shadowed and plain:
            target = resolve(active.values(), str(call.spec["name"]), call.spec.get("agent"))
            simple, value = _simple_value(target) if target is not None else (False, None)
            valid = (
                args_valid(target, call.spec.get("arguments", {})) if target is not None else None
            )
            if target is not None and valid is False:
                # Stricter or looser parameters than another layer: whether the resolved
                # definition refuses the arguments is PIPE-4's; DEF-5's is that no *other*
                # layer's body ran them (checked against the other layer's parameters).
                others = {
                    repr(v)
                    for o in active.values()
                    if o is not target and o["name"] == target["name"]
                    for ok, v in [_simple_value(o)]
                    if ok and v != value
                }
                got = (call.result or {}).get("value")
                yield require(
                    call.is_error or not simple or repr(got) not in others,
                    call.id,
                    f"a call from agent {call.spec.get('agent')!r} resolves to the "
                    f"{'scoped' if target.get('scope') else 'global'} {call.spec['name']!r}, "
                    f"but another layer's body answered it (value {got!r})",
                    # about the result: the body that answered (else the call's last event)
                    **view.at(call, stage="body"),
                )
            if target is not None and simple and valid is True:
                got = (call.result or {}).get("value")
                yield require(
                    not call.is_error and got == value,
                    call.id,
                    f"a call from agent {call.spec.get('agent')!r} must run the "
                    f"{'scoped' if target.get('scope') else 'global'} {call.spec['name']!r} "
                    f"(value {value!r}), got isError={call.is_error}, value={got!r}",
                    # about the result: the body that answered (else the call's last event)
                    **view.at(call, stage="body"),
                )
        if "schemas" in action and isinstance(answer.get("schemas"), list):
            scope = action["schemas"].get("scope")
            problems = []
            for entry in answer["schemas"]:
                if not isinstance(entry, Mapping) or entry.get("name") not in shadowed:
                    continue
                shown = resolve(active.values(), str(entry["name"]), scope)
                if shown is None:
                    continue
                for field_name in ("description", "parameters"):
                    if field_name in shown and entry.get(field_name) != shown[field_name]:
                        problems.append(
                            f"{entry['name']!r} shows {field_name} {entry.get(field_name)!r}"
                        )
            yield require(
                not problems,
                f"schemas({scope}) [action {index}]",
                f"schemas({scope}) must show the definitions that scope resolves (shadowing): "
                + "; ".join(problems),
                action=index,
            )


def _own_case(
    view: View, call: CallView, active: Mapping[str, Mapping[str, Any]]
) -> Iterator[Verdict]:
    """A call naming one of several active names that differ only by case reaches exactly
    the tool of its own name (names are compared exactly)."""
    name = str(call.spec["name"])
    variants = {o["name"] for o in active.values() if o["name"].casefold() == name.casefold()}
    if len(variants) < 2:
        return
    target = resolve(active.values(), name, call.spec.get("agent"))
    simple, value = _simple_value(target) if target is not None else (False, None)
    if target is None or not simple:
        return
    if args_valid(target, call.spec.get("arguments", {})) is not True:
        return
    got = (call.result or {}).get("value")
    yield require(
        not call.is_error and got == value,
        call.id,
        f"{name!r} is one of {sorted(variants)}, which differ only by case: the call must reach "
        f"its own tool (value {value!r}), got isError={call.is_error}, value={got!r}",
        # about the result: the body that answered (else the call's last event)
        **view.at(call, stage="body"),
    )


@st.composite
def _layer_scenarios(draw: st.DrawFn) -> s.Scenario:
    name = draw(s.NAMES)
    layers = draw(st.lists(st.sampled_from([None, None, "main", "helper"]), min_size=2, max_size=4))
    tools = []
    for i, scope in enumerate(layers):
        tool = s.tool(name, [{"return": f"v{i}"}], key=f"{name}#{i}", description=f"variant {i}")
        if scope is not None:
            tool["scope"] = scope
        tools.append(tool)
    names = [name]
    if draw(st.integers(0, 2)) == 0:  # method 1: a case variant in a layer is another name
        variant = draw(st.sampled_from([name.upper(), name.capitalize()]))
        tool = s.tool(variant, [{"return": "variant"}], key=f"{variant}#case")
        if layers[0] is not None:
            tool["scope"] = layers[0]
        tools.insert(1, tool)
        names.append(variant)
    actions: list[dict[str, Any]] = []
    for i, agent in enumerate(draw(st.lists(s.AGENTS, min_size=1, max_size=3))):
        actions.append({"call": s.call(f"c{i}", draw(st.sampled_from(names)), {}, agent=agent)})
    scope = draw(s.AGENTS)
    actions.append({"schemas": {"scope": scope} if scope else {}})
    if draw(st.booleans()):
        extra = s.tool(name, [{"return": "late"}], key=f"{name}#late", registered=False)
        late_scope = draw(s.AGENTS)
        if late_scope is not None:
            extra["scope"] = late_scope
        tools.append(extra)
        actions.append({"register": extra["key"]})
    return s.scenario("generated/DEF-5", tools, actions)


focus("DEF-5", st.one_of(_layer_scenarios(), history_scenarios()), "scopes")


# ------------------------------------------------------------------- DEF-6


@rule("DEF-6", "Disposer")
def DEF_6(view: View) -> Iterator[Verdict]:
    """After its disposer runs, a tool is neither visible nor executable."""
    lifecycle = walk(view)
    if lifecycle is None or view.mode == "code":
        return
    plain = _no_policy(view.scenario) and not may_abort(view.scenario)
    for index, action, answer, active, disposed in lifecycle.steps:
        if not disposed:
            continue
        call = _call_of(view, action, answer)
        if call is not None and call.returned and call.spec["name"] in disposed:
            spec = resolve(active.values(), str(call.spec["name"]), call.spec.get("agent"))
            if spec is None:
                yield require(
                    call.code == UNKNOWN_TOOL and not call.body_entered,
                    call.id,
                    f"{call.spec['name']!r} was disposed: a call must be {UNKNOWN_TOOL} "
                    f"without running a body (code={call.code}, body entered={call.body_entered})",
                    # about the result: the body that answered (else the call's last event)
                    **view.at(call, stage="body"),
                )
            else:
                simple, value = _simple_value(spec)
                if plain and simple and args_valid(spec, call.spec.get("arguments", {})) is True:
                    ok = not call.is_error and (call.result or {}).get("value") == value
                else:
                    ok = call.code != UNKNOWN_TOOL
                yield require(
                    ok,
                    call.id,
                    f"after a dispose, {call.spec['name']!r} must resolve to the remaining "
                    f"registration ({spec.get('key', spec['name'])}), got {call.result!r}",
                    # about the result: the body that answered (else the call's last event)
                    **view.at(call, stage="body"),
                )
        if "schemas" in action and isinstance(answer.get("schemas"), list):
            scope = action["schemas"].get("scope")
            listed = {str(e.get("name")) for e in answer["schemas"] if isinstance(e, Mapping)}
            want = {n for n in disposed if resolve(active.values(), n, scope) is not None}
            got = listed & disposed
            yield require(
                got == want,
                f"schemas({scope}) [action {index}]",
                f"after disposing {sorted(disposed)}, schemas({scope}) must list {sorted(want)} "
                f"of them, but lists {sorted(got)}",
                action=index,
            )


@st.composite
def _dispose_scenarios(draw: st.DrawFn) -> s.Scenario:
    name = draw(s.NAMES)
    tools = [s.tool(name, [{"return": "global"}], key="global")]
    if draw(st.booleans()):
        tools.append(s.tool(name, [{"return": "scoped"}], key="scoped", scope="main"))
    other = s.tool("other", [{"return": "other"}])
    tools.append(other)
    victim = draw(st.sampled_from([t.get("key", t["name"]) for t in tools[:-1]]))
    agent = draw(s.AGENTS)
    scope = {"scope": agent} if agent else {}
    actions: list[dict[str, Any]] = [
        {"call": s.call("c0", name, {}, agent=agent)},
        {"dispose": victim},
    ]
    actions += [{"schemas": scope}, {"call": s.call("c1", name, {}, agent=agent)}]
    if draw(st.booleans()):
        actions.append({"call": s.call("c2", name, {}, agent=draw(s.AGENTS))})
    if draw(st.booleans()):
        actions += [
            {"register": victim},
            {"call": s.call("c3", name, {}, agent=agent)},
            {"schemas": scope},
        ]
        if draw(st.booleans()):  # the spent disposer again: it must not remove the new one
            actions += [
                {"dispose": victim, "again": True},
                {"call": s.call("c4", name, {}, agent=agent)},
                {"schemas": scope},
            ]
    return s.scenario("generated/DEF-6", tools, actions)


focus("DEF-6", st.one_of(_dispose_scenarios(), history_scenarios()), "scopes")
