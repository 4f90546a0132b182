"""Building blocks for scenarios: plain builders and shallow hypothesis strategies.

Generation, not execution, bounds the suite (~200 nested scenarios/s here), so
strategies stay shallow: a handful of tools, short scripts drawn from small
menus, a few calls. Focused strategies (one per rule, in ``conformance.judging.rules``)
compose these so that the rule's premise holds often; every generated scenario
is judged against *every* rule whose premise it meets.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from hypothesis import strategies as st

from conformance.scenario.methods import host_kinds, near_miss_values, throwables

__all__ = [
    "FINALIZERS",
    "NEAR_MISS_KEYS",
    "NEAR_MISS_KINDS",
    "OPEN_OBJECT",
    "OUTCOMES",
    "TEXT",
    "arguments",
    "body_scripts",
    "call",
    "content_blocks",
    "json_values",
    "listener",
    "near_miss_decisions",
    "outcome_scenario",
    "path_scenario",
    "path_scenarios",
    "post_decisions",
    "pre_decisions",
    "scenario",
    "scenarios",
    "tool",
]

Scenario = dict[str, Any]
OPEN_OBJECT: Mapping[str, Any] = {"type": "object"}
STRING_OUTPUT: Mapping[str, Any] = {"schema": {"type": "string"}, "render": "text"}
ANY_OUTPUT: Mapping[str, Any] = {"schema": {}, "render": "json"}


# ------------------------------------------------------------------ builders


def tool(
    name: str, execute: Sequence[Mapping[str, Any]] | None = None, **fields: Any
) -> dict[str, Any]:
    """A tool spec; by default open parameters, any-JSON output, returning "ok"."""
    spec: dict[str, Any] = {
        "name": name,
        "description": f"The {name} tool.",
        "parameters": dict(OPEN_OBJECT),
        "output": dict(ANY_OUTPUT),
        "execute": list(execute) if execute is not None else [{"return": "ok"}],
    }
    spec.update(fields)
    return spec


def call(call_id: str, name: str, arguments: Any = None, **fields: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "callId": call_id,
        "name": name,
        "arguments": {} if arguments is None else arguments,
    }
    spec.update(fields)
    return spec


def listener(
    ident: str, steps: Sequence[Mapping[str, Any]], scope: str | None = None
) -> dict[str, Any]:
    out: dict[str, Any] = {"id": ident, "steps": list(steps)}
    if scope is not None:
        out["scope"] = scope
    return out


def scenario(
    ident: str,
    tools: Sequence[Mapping[str, Any]],
    actions: Sequence[Mapping[str, Any]],
    **fields: Any,
) -> Scenario:
    out: Scenario = {"id": ident, "tools": list(tools), "actions": list(actions)}
    out.update(fields)
    return out


# ---------------------------------------------------------------- strategies

NAMES = st.sampled_from(["read_file", "edit_file", "bash", "grep"])
AGENTS = st.sampled_from([None, "main", "helper"])
KEYS = st.sampled_from(["path", "command", "n", "flag"])

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 5),
    st.sampled_from(["", "a", "x y", "é"]),
    # ``+ 0.0`` turns -0.0 into 0.0: whether -0 survives materialization is asked once, by a
    # PIPE-2 fixture, instead of confounding every rule whose scenario happens to carry it.
    st.floats(-2, 2, allow_nan=False, allow_infinity=False).map(lambda f: round(f, 2) + 0.0),
)


def json_values(depth: int = 2) -> st.SearchStrategy[Any]:
    """Small lossless JSON values, at most ``depth`` containers deep."""
    if depth <= 0:
        return json_scalars
    inner = json_values(depth - 1)
    return st.one_of(
        json_scalars,
        st.lists(inner, max_size=2),
        st.dictionaries(KEYS, inner, max_size=2),
    )


def arguments() -> st.SearchStrategy[dict[str, Any]]:
    return st.dictionaries(KEYS, json_values(1), max_size=3)


SPECIALS = st.sampled_from(
    [
        "nan",
        "infinity",
        "negative-infinity",
        "function",
        "cycle",
        "list-cycle",
        "non-string-key",
        "host-object",
        # method 4: the host values a lazy JSON check lets through (methods.json hostValues)
        *host_kinds("reject"),
    ]
)


def special() -> st.SearchStrategy[dict[str, str]]:
    return SPECIALS.map(lambda kind: {"$special": kind})


#: Decision kinds a pre-execute listener may get *almost* right, from the table of literals
#: (method 1, ``methods.json``): another case, surrounding whitespace, an affix, a Unicode
#: lookalike, the empty string, another JSON type, and the post-execute or everyday vocabulary.
#: None is a pre-execute kind, so each fails closed (PRE-6), whether it sorts before
#: ``allow`` or after ``deny`` and with a reason or not.
NEAR_MISS_KINDS: tuple[Any, ...] = tuple(near_miss_values("pre-decision-kind"))
#: Near misses of the key a decision names its kind under (``Kind``, ``type``...).
NEAR_MISS_KEYS: tuple[Any, ...] = tuple(near_miss_values("decision-key"))


def near_miss_decisions() -> st.SearchStrategy[dict[str, Any]]:
    """Pre-execute decisions whose kind (or kind key) is a near miss, bare or with a deny's
    reason / feedback."""
    carried: list[dict[str, Any]] = [
        {},
        {"reason": "no"},
        {"feedback": [{"type": "text", "text": "no"}]},
    ]
    kinds = st.tuples(st.sampled_from(NEAR_MISS_KINDS), st.sampled_from(carried)).map(
        lambda kr: {"kind": kr[0], **kr[1]}
    )
    keys = st.tuples(st.sampled_from(NEAR_MISS_KEYS), st.sampled_from(["allow", "deny"])).map(
        lambda kk: {str(kk[0]): kk[1]}
    )
    return st.one_of(kinds, keys)


def pre_decisions() -> st.SearchStrategy[Any]:
    """Well-formed and malformed pre-execute decisions (near-miss kinds among the malformed)."""
    return st.one_of(
        st.just({"kind": "allow"}),
        st.sampled_from(["no", "policy says no"]).map(lambda r: {"kind": "deny", "reason": r}),
        st.just({"kind": "ask", "reason": "needs a person"}),
        st.just({"kind": "ask"}),
        st.sampled_from(
            [None, "allow", {"kind": "deny"}, {"kind": "deny", "reason": ""}, {"kind": "maybe"}, 1]
        ),
        near_miss_decisions(),
    )


def post_decisions() -> st.SearchStrategy[Any]:
    return st.one_of(
        st.just({"kind": "accept"}),
        st.just({"kind": "accept", "content": [{"type": "text", "text": "replaced"}]}),
        json_values(1).map(lambda v: {"kind": "accept", "value": v}),
        st.just({"kind": "block", "feedback": [{"type": "text", "text": "blocked"}]}),
        st.just({"kind": "accept", "additionalContexts": [{"role": "user", "content": "post"}]}),
    )


def body_scripts() -> st.SearchStrategy[list[dict[str, Any]]]:
    """Bodies: return a value, throw, defer, conclude, observe -- short and shallow."""
    prefix = st.lists(
        st.sampled_from(
            [
                {"observe": "arguments"},
                {"deferContext": {"role": "user", "content": "deferred"}},
                {"concludeTurn": True},
                {"yield": 2},
            ]
        ),
        max_size=2,
    )
    ending = st.one_of(
        json_values(1).map(lambda v: {"return": v}),
        st.just({"throw": "body failed"}),
        st.sampled_from(throwables()).map(lambda t: {"throw": t}),  # method 10
    )
    return st.tuples(prefix, ending).map(lambda pe: [*pe[0], pe[1]])


@st.composite
def scenarios(draw: st.DrawFn, *, mode: str | None = None) -> Scenario:
    """A general scenario: a few tools, optional listeners of every stage, a few calls."""
    names = draw(st.lists(NAMES, min_size=1, max_size=3, unique=True))
    tools = []
    for name in names:
        spec = tool(name, draw(body_scripts()), scope=draw(st.sampled_from([None, None, "main"])))
        if spec["scope"] is None:
            del spec["scope"]
        if draw(st.booleans()):
            spec["finalizeContent"] = [{"return": None}]
        tools.append(spec)
    out = scenario("generated/general", tools, [])
    if mode is not None:
        out["registry"] = {"mode": mode}
    if draw(st.booleans()):
        out["preExecute"] = [
            listener(
                "pre-1",
                [draw(st.sampled_from([{"delegate": True}, {"return": {"kind": "allow"}}]))],
            )
        ]
        if draw(st.booleans()):
            out["preExecute"].append(
                listener("pre-2", [{"return": draw(pre_decisions())}], scope=draw(AGENTS))
            )
    if draw(st.booleans()):
        out["approval"] = {
            "steps": [
                {"return": draw(st.sampled_from(["allowed-once", "rejected", "unavailable"]))}
            ]
        }
    if draw(st.booleans()):
        out["guards"] = [
            listener("guard-1", [{"return": draw(st.sampled_from([None, None, "guarded"]))}])
        ]
    if draw(st.booleans()):
        out["postExecute"] = [listener("post-1", [{"return": draw(post_decisions())}])]
    out["observers"] = [listener("observer", [])]
    calls = draw(
        st.lists(
            st.tuples(st.sampled_from([*names, "missing"]), arguments(), AGENTS),
            min_size=1,
            max_size=3,
        )
    )
    for i, (name, args, agent) in enumerate(calls):
        spec = call(f"c{i}", name, args)
        if agent is not None:
            spec["agent"] = agent
        out["actions"].append({"call": spec})
    return out


# --------------------------------------------------- shared scenario builders

TEXT = st.sampled_from(["a", "capped", "x y"])


def content_blocks(text: str) -> list[dict[str, str]]:
    """One text block."""
    return [{"type": "text", "text": text}]


FINALIZERS: st.SearchStrategy[list[dict[str, Any]]] = st.one_of(
    st.just([{"observe": "result"}, {"return": None}]),
    st.just([{"return": None}]),
    TEXT.map(lambda t: [{"observe": "result"}, {"return": content_blocks(t)}]),
    st.just([{"observe": "execution"}, {"return": content_blocks("final")}]),
    st.just([{"observe": "result"}, {"return": []}]),  # method 2: the empty list is content
)


# One variation per normalized outcome the pipeline can produce (FIN-2's list).
OUTCOMES = (
    "success",
    "body-error",
    "body-error-unsaid",
    "deny",
    "ask-no-service",
    "ask-rejected",
    "ask-unavailable",
    "ask-throws",
    "guard",
    "guard-throws",
    "invalid-args",
    "non-lossless-args",
    "wrapper-throws",
    "post-throws",
    "output-invalid",
    "abort-before",
    "abort-in-pre",
    "abort-in-body",
    "malformed-decision",
    "post-block",
    "post-value",
    "defer-and-throw",
    "conclude",
)


def outcome_scenario(
    outcome: str, finalizer: list[dict[str, Any]] | None, *, observers: int = 1, name: str = "t"
) -> Scenario:
    """One call to one tool, steered into ``outcome``."""
    spec = tool(name, [{"observe": "signal"}, {"return": "ok"}])
    if finalizer is not None:
        spec["finalizeContent"] = finalizer
    first = call("c0", name, {"path": "a"}, agent="main")
    extra: dict[str, Any] = {}
    if outcome == "body-error":
        spec["execute"] = [{"throw": "body failed"}]
    elif outcome == "body-error-unsaid":  # an error with an empty message (a bare TimeoutError())
        spec["execute"] = [{"throw": ""}]
    elif outcome == "deny":
        extra["preExecute"] = [listener("policy", [{"return": {"kind": "deny", "reason": "no"}}])]
    elif outcome.startswith("ask"):
        extra["preExecute"] = [listener("policy", [{"return": {"kind": "ask", "reason": "check"}}])]
        answer = {
            "ask-rejected": [{"return": "rejected"}],
            "ask-unavailable": [{"return": "unavailable"}],
            "ask-throws": [{"throw": "service down"}],
        }.get(outcome)
        if answer is not None:
            extra["approval"] = {"steps": answer}
    elif outcome == "guard":
        extra["guards"] = [listener("guard", [{"return": "guarded"}])]
    elif outcome == "guard-throws":
        extra["guards"] = [listener("guard", [{"throw": "guard broke"}])]
    elif outcome == "invalid-args":
        spec["parameters"] = {"type": "object", "required": ["command"]}
    elif outcome == "non-lossless-args":
        first["arguments"] = {"n": {"$special": "nan"}}
    elif outcome == "wrapper-throws":
        extra["wrappers"] = [listener("wrap", [{"callNext": True}, {"throw": "wrapper failed"}])]
    elif outcome == "post-throws":
        extra["postExecute"] = [listener("post", [{"throw": "post failed"}])]
    elif outcome == "post-block":
        extra["postExecute"] = [
            listener("post", [{"return": {"kind": "block", "feedback": content_blocks("no")}}])
        ]
    elif outcome == "post-value":
        extra["postExecute"] = [listener("post", [{"return": {"kind": "accept", "value": "new"}}])]
    elif outcome == "output-invalid":
        spec["output"] = {"schema": {"type": "string"}, "render": "text"}
        spec["execute"] = [{"return": 1}]
    elif outcome == "abort-before":
        first["abortBefore"] = True
    elif outcome == "abort-in-pre":
        extra["preExecute"] = [listener("policy", [{"abort": True}, {"delegate": True}])]
    elif outcome == "abort-in-body":
        spec["execute"] = [{"abort": True}, {"observe": "signal"}, {"return": "ok"}]
    elif outcome == "malformed-decision":
        extra["preExecute"] = [listener("policy", [{"return": "allow"}])]
    elif outcome == "defer-and-throw":
        spec["execute"] = [
            {"deferContext": {"role": "user", "content": "d1"}},
            {"throw": "late failure"},
        ]
    elif outcome == "conclude":
        spec["execute"] = [
            {"deferContext": {"role": "user", "content": "d1"}},
            {"concludeTurn": True},
            {"return": "ok"},
        ]
    extra["observers"] = [listener(f"observer-{i}", []) for i in range(observers)]
    return scenario(f"generated/{outcome}", [spec], [{"call": first}], **extra)


# ------------------------------------------------------ method 6: every path

#: The situations a call is put in, each (target tool, its arguments): one call per path.
PATH_CASES: Mapping[str, tuple[str, dict[str, Any]]] = {
    "runs": ("open", {"decision": {"kind": "allow"}}),
    "shadowed": ("shadowed", {"decision": {"kind": "allow"}}),
    "hidden": ("hidden", {"decision": {"kind": "allow"}}),
    "invalid": ("strict", {"decision": {"kind": "allow"}, "path": 1}),
    "denied": ("open", {"decision": {"kind": "deny", "reason": "not here"}}),
    # no approval service is mounted: an ask is a denial (PRE-3), on every path
    "asked": ("open", {"decision": {"kind": "ask", "reason": "confirm first"}}),
    "guarded": ("open", {"decision": {"kind": "allow"}, "objection": "not here either"}),
}
_ALLOW = {"decision": {"kind": "allow"}}


def path_scenario(cases: Sequence[str], agent: str = "main") -> Scenario:
    """Each case's call made model-direct, as a batch member, as the nested call of a
    composite tool (``via-<case>`` forwards it) and as a ``run_code`` program's one call,
    under mode ``both``; a pre-execute listener and a guard answer each call by its own
    arguments (``pick``), so the outer calls pass and the case's own call meets its fate."""
    tools = [
        tool("open", [{"return": "open"}], finalizeContent=[{"return": None}]),
        tool("shadowed", [{"return": "global"}]),
        tool("shadowed", [{"return": "scoped"}], key="shadowed#agent", scope=agent),
        tool("hidden", [{"return": "hidden"}], scope="elsewhere"),
        tool(
            "strict",
            [{"return": "strict"}],
            parameters={
                "type": "object",
                "required": ["path"],
                "properties": {"path": {"type": "string"}},
            },
        ),
    ]
    actions: list[dict[str, Any]] = []
    for case in cases:
        name, arguments = PATH_CASES[case]
        tools.append(
            tool(
                f"via-{case}",
                [{"forward": {"name": name, "arguments": arguments}}, {"return": "via"}],
            )
        )
        program = json.dumps({"steps": [{"call": name, "arguments": arguments}]})
        code = {"code": program, "description": f"the {case} call", **_ALLOW}
        actions += [
            {"call": call(f"{case}-direct", name, arguments, agent=agent)},
            {"call": call(f"{case}-via", f"via-{case}", dict(_ALLOW), agent=agent)},
            {"call": call(f"{case}-program", "run_code", code, agent=agent)},
            {"batch": [call(f"{case}-member", name, arguments, agent=agent)]},
        ]
    return scenario(
        "generated/paths",
        tools,
        actions,
        registry={"mode": "both"},
        preExecute=[listener("policy", [{"observe": "execution"}, {"pick": ["decision"]}])],
        guards=[listener("guard", [{"pick": ["objection"]}])],
        postExecute=[listener("post", [{"observe": "result"}, {"delegate": True}])],
        observers=[listener("observer", [])],
    )


def path_scenarios() -> st.SearchStrategy[Scenario]:
    """A few of the path cases, in any order, for one of two agents."""
    return st.tuples(
        st.lists(st.sampled_from(sorted(PATH_CASES)), min_size=1, max_size=3, unique=True),
        st.sampled_from(["main", "helper"]),
    ).map(lambda ca: path_scenario(ca[0], ca[1]))
