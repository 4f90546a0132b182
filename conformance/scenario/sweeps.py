"""The sweep fixtures: each table of ``methods.json`` applied to a rule, every row in one
scenario (one call per row), written to ``fixtures/rules/<ID>/method-*.json`` by
``python -m conformance.scenario.methods --write``.

A builder returns a plain scenario; :class:`conformance.scenario.methods.Sweep` adds its id,
rules and description. Rows are told apart by the call (its id, its agent: a listener
scoped to that agent answers for that row), so one scenario holds a whole table.
"""

from __future__ import annotations

from typing import Any

from conformance.scenario import strategies as s
from conformance.scenario.methods import (
    almost_results,
    empties,
    family,
    host_kinds,
    near_miss_values,
    sweep,
    throwables,
)

Scenario = dict[str, Any]


# --------------------------------------------------------- method 1: near misses


@sweep("PRE-6", "near-miss-kinds", "method 1, literals: pre-decision-kind and decision-key")
def _near_miss_kinds() -> Scenario:
    """Each call's own agent has one pre-execute listener answering a near miss of a decision
    (a near-miss kind, bare and with a deny's reason, or a near-miss key); every one must fail
    closed, and never skip the guard."""
    decisions: list[Any] = []
    for kind in near_miss_values("pre-decision-kind"):
        decisions.append({"kind": kind})
        decisions.append({"kind": kind, "reason": "near miss"})
    decisions += [{key: "allow"} for key in near_miss_values("decision-key")]
    pre, actions = [], []
    for i, decision in enumerate(decisions):
        pre.append(s.listener(f"near-miss-{i}", [{"return": decision}], scope=f"a{i}"))
        actions.append({"call": s.call(f"c{i}", "run", {"i": i}, agent=f"a{i}")})
    return s.scenario(
        "",
        [s.tool("run", [{"return": "ran"}], finalizeContent=[{"return": None}])],
        actions,
        rules=["PRE-6", "GUARD-1"],
        description="Every near miss of a pre-execute decision fails the call closed.",
        preExecute=pre,
        guards=[s.listener("guard", [{"return": None}])],
        observers=[s.listener("observer", [])],
    )


@sweep("PRE-4", "near-miss-answers", "method 1, literals: approval-answer")
def _near_miss_answers() -> Scenario:
    """Each call is answered with one near miss of an approval answer (byCall); each must be
    denied, distinguishably from the exact rejected and cancelled, which two control calls get."""
    answers = near_miss_values("approval-answer")
    by_call = {f"c{i}": [{"return": answer}] for i, answer in enumerate(answers)}
    by_call["rejected"] = [{"return": "rejected"}]
    by_call["cancelled"] = [{"return": "cancelled"}]
    calls = [*by_call]
    return s.scenario(
        "",
        [s.tool("run", [{"return": "ran"}], finalizeContent=[{"return": None}])],
        [{"call": s.call(c, "run", {"command": "make"}, agent="main")} for c in calls],
        description="Only the exact allowed-once proceeds; every near miss of an answer denies.",
        preExecute=[s.listener("permission", [{"return": {"kind": "ask", "reason": "check"}}])],
        approval={"steps": [{"return": "unavailable"}], "byCall": by_call},
        observers=[s.listener("observer", [])],
    )


@sweep("CONC-1", "near-miss-verdicts", "method 1, literals: classifier-verdict and tool-name")
def _near_miss_verdicts() -> Scenario:
    """A tool per near miss of ``true`` (each classifier answers it), and queries naming near
    misses of a parallel-safe tool's name: every one is exclusive; the control is parallel."""
    verdicts = near_miss_values("classifier-verdict")
    tools = [
        s.tool(f"v{i}", [{"return": "ok"}], isConcurrencySafe=[{"return": verdict}])
        for i, verdict in enumerate(verdicts)
    ]
    tools.append(s.tool("read_file", [{"return": "ok"}], isConcurrencySafe=[{"return": True}]))
    names = [*(f"v{i}" for i in range(len(verdicts))), "read_file"]
    names += [n for n in near_miss_values("tool-name") if n not in names]
    return s.scenario(
        "",
        tools,
        [{"executionMode": s.call(f"q{i}", name, {})} for i, name in enumerate(names)],
        description="Only exactly true, from the tool the name names, is parallel.",
    )


@sweep("SCOPE-1", "near-miss-names", "method 1, literals: tool-name")
def _near_miss_names() -> Scenario:
    """Calls naming every near miss of a registered tool's name: each is a name the scope
    cannot see (UNKNOWN_TOOL, no body), like the missing control call."""
    names = family("tool-name").values
    misses = [n for n in near_miss_values("tool-name") if n not in names]
    tools = [s.tool(str(name), [{"return": "ran"}]) for name in names]
    actions = [{"call": s.call(f"c{i}", str(n), {"path": "a"})} for i, n in enumerate(misses)]
    actions.append({"call": s.call("missing", "no_such_tool", {"path": "a"})})
    return s.scenario(
        "",
        tools,
        actions,
        description="A near miss of a tool's name is another name.",
        observers=[s.listener("observer", [])],
    )


@sweep("SCOPE-1", "near-miss-run-code", "method 1, literals: run-code")
def _near_miss_run_code() -> Scenario:
    """Under mode code, model-direct calls naming near misses of run_code: each is a missing
    name (UNKNOWN_TOOL), never the transport."""
    misses = near_miss_values("run-code")
    program = {"code": '{"steps": []}', "description": "nothing"}
    return s.scenario(
        "",
        [s.tool("bash", [{"return": "ran"}])],
        [{"call": s.call(f"c{i}", n, program, agent="main")} for i, n in enumerate(misses)],
        description="Only run_code itself is the Code Mode transport.",
        registry={"mode": "code"},
        observers=[s.listener("observer", [])],
    )


@sweep("DEF-5", "case-variants", "method 1, literals: tool-registration")
def _case_variants() -> Scenario:
    """Tools whose names differ only by case, in one layer: none is a duplicate of another,
    and each call reaches its own tool."""
    names = [*family("tool-registration").values, *near_miss_values("tool-registration")]
    tools = [s.tool(str(n), [{"return": f"v{i}"}]) for i, n in enumerate(names)]
    return s.scenario(
        "",
        tools,
        [{"call": s.call(f"c{i}", str(n), {})} for i, n in enumerate(names)],
        description="Names are compared exactly: a case variant is another name.",
    )


# ------------------------------------------------- method 2: nothing versus empty

_METHOD_2 = "method 2, nothing versus empty"


def _rows() -> list[Any]:
    return empties()


@sweep("GUARD-2", "empty-verdicts", _METHOD_2)
def _empty_guard_verdicts() -> Scenario:
    """A guard per row (scoped to the row's agent) returns one of the values: only null is
    no objection."""
    values = _rows()
    guards = [
        s.listener(f"guard-{i}", [{"return": v}], scope=f"a{i}") for i, v in enumerate(values)
    ]
    return s.scenario(
        "",
        [s.tool("run", [{"return": "ran"}], finalizeContent=[{"return": None}])],
        [{"call": s.call(f"c{i}", "run", {}, agent=f"a{i}")} for i in range(len(values))],
        rules=["GUARD-2", "GUARD-1"],
        description="Only nothing (null) is no objection; an empty value objects.",
        guards=guards,
        observers=[s.listener("observer", [])],
    )


@sweep("PRE-6", "empty-decisions", _METHOD_2)
def _empty_decisions() -> Scenario:
    """A pre-execute listener per row returns one of the values: none is a decision."""
    values = _rows()
    pre = [s.listener(f"pre-{i}", [{"return": v}], scope=f"a{i}") for i, v in enumerate(values)]
    return s.scenario(
        "",
        [s.tool("run", [{"return": "ran"}], finalizeContent=[{"return": None}])],
        [{"call": s.call(f"c{i}", "run", {}, agent=f"a{i}")} for i in range(len(values))],
        description="An empty value is no decision: the call fails closed.",
        preExecute=pre,
        observers=[s.listener("observer", [])],
    )


@sweep("PRE-4", "empty-answers", _METHOD_2)
def _empty_answers() -> Scenario:
    """Each call's approval answer is one of the values: each denies."""
    values = _rows()
    by_call = {f"c{i}": [{"return": v}] for i, v in enumerate(values)}
    return s.scenario(
        "",
        [s.tool("run", [{"return": "ran"}])],
        [{"call": s.call(c, "run", {}, agent="main")} for c in by_call],
        description="An empty answer is no allowed-once.",
        preExecute=[s.listener("permission", [{"return": {"kind": "ask", "reason": "check"}}])],
        approval={"steps": [{"return": "allowed-once"}], "byCall": by_call},
    )


@sweep("CONC-1", "empty-verdicts", _METHOD_2)
def _empty_classifier_verdicts() -> Scenario:
    """A tool per row whose classifier returns one of the values: each is exclusive."""
    values = _rows()
    tools = [
        s.tool(f"t{i}", [{"return": "ok"}], isConcurrencySafe=[{"return": v}])
        for i, v in enumerate(values)
    ]
    return s.scenario(
        "",
        tools,
        [{"executionMode": s.call(f"q{i}", f"t{i}", {})} for i in range(len(values))],
        description="An empty classifier verdict is not true.",
    )


@sweep("OUT-1", "empty-values", _METHOD_2)
def _empty_body_values() -> Scenario:
    """A tool per row whose body returns one of the values: each success carries exactly it,
    rendered."""
    values = _rows()
    tools = [s.tool(f"t{i}", [{"return": v}]) for i, v in enumerate(values)]
    return s.scenario(
        "",
        tools,
        [{"call": s.call(f"c{i}", f"t{i}", {})} for i in range(len(values))],
        rules=["OUT-1", "OUT-2", "RES-3"],
        description="An empty value is a value.",
        observers=[s.listener("observer", [])],
    )


@sweep("OUT-3", "empty-meta", _METHOD_2)
def _empty_meta() -> Scenario:
    """A tool per row whose presentationMeta projects one of the values: meta is exactly it
    (null: absent or null)."""
    values = _rows()
    tools = [
        s.tool(
            f"t{i}",
            [{"return": "ok"}],
            output={"schema": {}, "render": "json", "presentationMeta": {"const": v}},
        )
        for i, v in enumerate(values)
    ]
    return s.scenario(
        "",
        tools,
        [{"call": s.call(f"c{i}", f"t{i}", {})} for i in range(len(values))],
        description="Empty metadata is metadata.",
    )


@sweep("CTX-1", "empty-contexts", _METHOD_2)
def _empty_contexts() -> Scenario:
    """A tool per row whose body defers one of the values: each rides its result."""
    values = _rows()
    tools = [
        s.tool(f"t{i}", [{"deferContext": v}, {"deferContext": "after"}, {"return": "ok"}])
        for i, v in enumerate(values)
    ]
    return s.scenario(
        "",
        tools,
        [{"call": s.call(f"c{i}", f"t{i}", {})} for i in range(len(values))],
        description="An empty context is a context.",
    )


@sweep("POST-2", "empty-replacements", _METHOD_2)
def _empty_replacements() -> Scenario:
    """A post-execute listener per row accepts with one of the values as the replacement
    value, and one row replaces the content with the empty list."""
    values = _rows()
    decisions = [{"kind": "accept", "value": v} for v in values]
    decisions.append({"kind": "accept", "content": []})
    post = [
        s.listener(f"post-{i}", [{"observe": "result"}, {"return": d}], scope=f"a{i}")
        for i, d in enumerate(decisions)
    ]
    return s.scenario(
        "",
        [s.tool("run", [{"return": {"n": 1}}])],
        [{"call": s.call(f"c{i}", "run", {}, agent=f"a{i}")} for i in range(len(decisions))],
        description="An empty replacement replaces.",
        postExecute=post,
    )


@sweep("FIN-3", "empty-finalizer-returns", _METHOD_2)
def _empty_finalizer_returns() -> Scenario:
    """A tool per row whose finalizeContent returns one of the values: null keeps the
    content, the empty list is content; the rest is a broken finalizer (one result)."""
    values = _rows()
    tools = [
        s.tool(f"t{i}", [{"return": "ok"}], finalizeContent=[{"observe": "result"}, {"return": v}])
        for i, v in enumerate(values)
    ]
    return s.scenario(
        "",
        tools,
        [{"call": s.call(f"c{i}", f"t{i}", {})} for i in range(len(values))],
        rules=["FIN-3", "FIN-4", "FIN-2"],
        description="Nothing keeps the content; an empty list replaces it.",
        observers=[s.listener("observer", [])],
    )


@sweep("EXEC-4", "empty-wrapper-returns", _METHOD_2)
def _empty_wrapper_returns() -> Scenario:
    """A wrapper per row returns one of the values instead of calling next(): not a result."""
    values = _rows()
    wrappers = [
        s.listener(f"wrap-{i}", [{"return": v}], scope=f"a{i}") for i, v in enumerate(values)
    ]
    return s.scenario(
        "",
        [s.tool("run", [{"return": "ran"}], finalizeContent=[{"return": None}])],
        [{"call": s.call(f"c{i}", "run", {}, agent=f"a{i}")} for i in range(len(values))],
        description="An empty value is no result.",
        wrappers=wrappers,
        observers=[s.listener("observer", [])],
    )


# -------------------------------------------------------- method 4: host values

_METHOD_4 = "method 4, host value kinds"


def _kinds() -> list[dict[str, str]]:
    return [{"$special": kind} for kind in host_kinds("reject")]


@sweep("PIPE-2", "host-arguments", _METHOD_4)
def _host_arguments() -> Scenario:
    """A call per host value kind in its arguments (at the top and nested): each is
    INVALID_ARGS, reaching no policy stage and not the body."""
    calls = []
    for i, value in enumerate(_kinds()):
        args = {"v": value} if i % 2 else {"nested": {"list": [1, value]}}
        calls.append({"call": s.call(f"c{i}", "run", args)})
    return s.scenario(
        "",
        [s.tool("run", [{"observe": "arguments"}, {"return": "ran"}])],
        calls,
        description="A host value that looks like JSON is not lossless JSON.",
        preExecute=[s.listener("pre", [{"observe": "arguments"}, {"delegate": True}])],
        observers=[s.listener("observer", [])],
    )


@sweep("OUT-5", "host-values", _METHOD_4)
def _host_values() -> Scenario:
    """A tool per host value kind whose body returns it (or holds it inside), one whose
    presentationMeta projects it, one whose post-execute accept replaces the value with it:
    none may succeed."""
    tools, calls, post = [], [], []
    for i, value in enumerate(_kinds()):
        tools.append(s.tool(f"body{i}", [{"return": value if i % 2 else {"n": [value]}}]))
        meta = {"schema": {}, "render": "json", "presentationMeta": {"const": {"card": value}}}
        tools.append(s.tool(f"meta{i}", [{"return": "ok"}], output=meta))
        tools.append(s.tool(f"post{i}", [{"return": "ok"}]))
        decision = {"kind": "accept", "value": value}
        post.append(s.listener(f"post-{i}", [{"return": decision}], scope=f"a{i}"))
        calls += [
            {"call": s.call(f"body-{i}", f"body{i}", {})},
            {"call": s.call(f"meta-{i}", f"meta{i}", {})},
            {"call": s.call(f"post-{i}", f"post{i}", {}, agent=f"a{i}")},
        ]
    return s.scenario(
        "",
        tools,
        calls,
        description="A host value that looks like JSON is rejected where it enters.",
        postExecute=post,
        observers=[s.listener("observer", [])],
    )


# ---------------------------------------------------- method 5: per-call answers

_METHOD_5 = "method 5, per-call independence"
#: Answers alternating between calls of one tool: a decision cached per tool shows.
_ALTERNATE = (0, 1, 0, 1, 1, 0)


@sweep("PRE-2", "per-call-decisions", _METHOD_5)
def _per_call_decisions() -> Scenario:
    """One listener answers each call of one tool by its own arguments: allow, deny, allow..."""
    decisions = [{"kind": "allow"}, {"kind": "deny", "reason": "not this one"}]
    calls = [
        {"call": s.call(f"c{i}", "run", {"n": i, "decision": decisions[k]}, agent="main")}
        for i, k in enumerate(_ALTERNATE)
    ]
    return s.scenario(
        "",
        [s.tool("run", [{"return": "ran"}])],
        calls,
        rules=["PRE-2", "PRE-1"],
        description="A decision is made per call, never cached per tool.",
        preExecute=[s.listener("policy", [{"pick": ["decision"]}])],
        observers=[s.listener("observer", [])],
    )


@sweep("GUARD-2", "per-call-objections", _METHOD_5)
def _per_call_objections() -> Scenario:
    """One guard answers each call of one tool by its own arguments: nothing, an objection..."""
    objections = [None, "not this one"]
    calls = [
        {"call": s.call(f"c{i}", "run", {"n": i, "objection": objections[k]}, agent="main")}
        for i, k in enumerate(_ALTERNATE)
    ]
    return s.scenario(
        "",
        [s.tool("run", [{"return": "ran"}])],
        calls,
        rules=["GUARD-2", "GUARD-1"],
        description="A guard's verdict is per call.",
        guards=[s.listener("guard", [{"pick": ["objection"]}])],
        observers=[s.listener("observer", [])],
    )


@sweep("PRE-4", "per-call-answers", _METHOD_5)
def _per_call_answers() -> Scenario:
    """The same ask (tool, agent, reason) answered differently per call."""
    answers = ["allowed-once", "rejected", "cancelled"]
    order = (0, 1, 0, 2, 1, 0)
    by_call = {f"c{i}": [{"return": answers[k]}] for i, k in enumerate(order)}
    return s.scenario(
        "",
        [s.tool("run", [{"return": "ran"}])],
        [{"call": s.call(c, "run", {"n": i}, agent="main")} for i, c in enumerate(by_call)],
        description="An approval is consent to one call: never remembered for the next.",
        preExecute=[s.listener("permission", [{"return": {"kind": "ask", "reason": "check"}}])],
        approval={"steps": [{"return": "rejected"}], "byCall": by_call},
        observers=[s.listener("observer", [])],
    )


@sweep("PIPE-4", "per-call-validation", _METHOD_5)
def _per_call_validation() -> Scenario:
    """Valid and invalid arguments of one tool, alternating: each call validated."""
    params = {"type": "object", "required": ["path"], "properties": {"path": {"type": "string"}}}
    arguments = [{"path": "a"}, {"path": 1}]
    calls = [
        {"call": s.call(f"c{i}", "run", arguments[k], agent="main")}
        for i, k in enumerate(_ALTERNATE)
    ]
    return s.scenario(
        "",
        [s.tool("run", [{"return": "ran"}], parameters=params)],
        calls,
        description="Validation is per call.",
        observers=[s.listener("observer", [])],
    )


@sweep("CONC-2", "per-call-verdicts", _METHOD_5)
def _per_call_verdicts() -> Scenario:
    """One batch of one tool whose classifier answers each member by its own arguments:
    parallel, exclusive, parallel...; each member is classified for itself."""
    verdicts = [True, True, False, True, 1, True]
    batch = [s.call(f"c{i}", "either", {"n": i, "safe": v}) for i, v in enumerate(verdicts)]
    either = s.tool(
        "either",
        [{"yield": 3}, {"yield": 3}, {"return": "ran"}],
        isConcurrencySafe=[{"pick": ["safe"]}],
    )
    return s.scenario(
        "",
        [either],
        [
            {"batch": batch, "maxParallel": 2},
            {"executionMode": s.call("q0", "either", {"safe": 1})},
        ],
        rules=["CONC-2", "CONC-1"],
        description="Classification is per call, in the batch driver too.",
        observers=[s.listener("observer", [])],
    )


# ------------------------------------------------------ method 6: every path


_METHOD_6 = "method 6, every path a call can take"

#: The path cases each rule is judged on (method 6), its sweep holding each case's call made
#: model-direct, as a batch member, as a composite's nested call and as a run_code
#: sub-dispatch.
_PATHS: dict[str, tuple[str, ...]] = {
    "CODE-2": tuple(sorted(s.PATH_CASES)),
    "PRE-8": ("denied", "runs"),
    "GUARD-3": ("guarded", "runs"),
    "FIN-2": ("denied", "invalid", "runs"),
    "PRE-2": ("denied",),
    "GUARD-2": ("guarded",),
    "PIPE-4": ("invalid",),
    "SCOPE-1": ("hidden",),
    "SCOPE-2": ("runs", "shadowed"),
}


def _path_sweep(rule: str, cases: tuple[str, ...]) -> None:
    def build() -> Scenario:
        out = s.path_scenario(cases)
        out["rules"] = [rule]
        out["description"] = f"The same call ({', '.join(cases)}) agrees with itself on every path."
        return out

    sweep(rule, "every-path", _METHOD_6)(build)


for _rule, _cases in _PATHS.items():
    _path_sweep(_rule, _cases)


# ------------------------------------------------- method 7: copies in any form


@sweep("PRE-5", "copies", "method 7, copies of what must not be copied")
def _copies() -> Scenario:
    """Calls whose arguments are distinctive, to tools with and without a presentCall, asked
    with and without a reason: no field of any approval request may carry a copy of them."""
    arguments = [
        {"path": "/home/ana/notes/secret-plan.md"},
        {"command": "rm -rf ./build && make release", "cwd": "/srv/app"},
        {"payment": {"to": "mallory@example.com", "amount": 500}},
    ]
    tools = [
        s.tool("plain", [{"return": "done"}]),
        s.tool("shown", [{"return": "done"}], presentCall="args"),
    ]
    calls = [
        {"call": s.call(f"c{i}-{name}", name, args, agent="main")}
        for i, args in enumerate(arguments)
        for name in ("plain", "shown")
    ]
    return s.scenario(
        "",
        tools,
        calls,
        description="The request carries the call id and the reason, and no copy of the arguments.",
        preExecute=[s.listener("permission", [{"return": {"kind": "ask", "reason": "check"}}])],
        approval={"steps": [{"return": "rejected"}]},
    )


# ---------------------------------------------------- method 8: the caller's timing

_METHOD_8 = "method 8, timing of the caller"
_WRITES: list[dict[str, Any]] = [
    {"target": "caller-arguments", "path": ["path"], "value": "tampered"},
    {"target": "caller-arguments", "path": ["items"], "op": "append", "value": "late"},
    {"target": "caller", "path": ["arguments"], "value": {"replaced": True}},
]


@sweep("PIPE-2", "caller-moments", _METHOD_8)
def _caller_moments() -> Scenario:
    """The caller changes its objects right after invoking execute (and the batch driver),
    before awaiting, and again after the result: no stage, no later member sees a change."""

    def call(call_id: str) -> dict[str, Any]:
        out = s.call(call_id, "run", {"path": "a", "items": [1]}, agent="main")
        out["afterInvoke"] = [dict(w) for w in _WRITES]
        out["afterResult"] = [dict(w) for w in _WRITES]
        return out

    observe = [{"observe": "arguments"}, {"observe": "execution"}]
    tool = s.tool("run", [*observe, {"yield": 2}, {"return": "ok"}])
    tool["isConcurrencySafe"] = [{"pick": ["parallel"]}]
    members = [call(f"m{i}") for i in range(3)]
    members[1]["arguments"]["parallel"] = True
    members[2]["arguments"]["parallel"] = True
    return s.scenario(
        "",
        [tool],
        [{"call": call("c0")}, {"batch": members, "maxParallel": 2}, {"call": call("c1")}],
        rules=["PIPE-2", "PIPE-3"],
        description="Later changes change nothing, counted from the moment of the call.",
        preExecute=[s.listener("pre", [*observe, {"delegate": True}])],
        guards=[s.listener("guard", [*observe, {"return": None}])],
        postExecute=[s.listener("post", [*observe, {"delegate": True}])],
        observers=[s.listener("observer", observe)],
    )


# ------------------------------------- method 10: throwables and almost-results

_METHOD_10 = "method 10, structured throwables and almost-results"
#: Observers that try to change what a failure carries, and one that looks after them.
_TAMPERING = [
    s.listener(
        "tamper",
        [
            {
                "mutate": {
                    "target": "result",
                    "path": ["error", "info", "code"],
                    "op": "append",
                    "value": "X",
                }
            },
            {
                "mutate": {
                    "target": "result",
                    "path": ["content"],
                    "op": "append",
                    "value": {"type": "text", "text": "X"},
                }
            },
            {"mutate": {"target": "result", "path": ["error", "message"], "value": "tampered"}},
        ],
    ),
    s.listener("later", [{"observe": "result"}]),
]


@sweep("EXEC-4", "almost-results", _METHOD_10)
def _almost_results() -> Scenario:
    """A wrapper per row returns a mapping that almost is a result (scoped to the row's agent):
    every one is an error result, or a success normalized through the output declaration."""
    rows = almost_results()
    wrappers = [
        s.listener(f"wrap-{i}", [{"return": row}], scope=f"a{i}") for i, (row, _) in enumerate(rows)
    ]
    return s.scenario(
        "",
        [s.tool("run", [{"return": "ran"}], finalizeContent=[{"return": None}])],
        [{"call": s.call(f"c{i}", "run", {}, agent=f"a{i}")} for i in range(len(rows))],
        rules=["EXEC-4", "EXEC-3", "RES-3", "RES-1"],
        description="An almost-result is refused or normalized, never published as given.",
        wrappers=wrappers,
        observers=_TAMPERING,
    )


@sweep("RES-3", "structured-throws", _METHOD_10)
def _structured_throws() -> Scenario:
    """A tool per throwable, its body throwing it: each is a failure whose message is a string
    and whose error.info, if any, holds a string name and code -- and observers cannot change
    what it carries."""
    throws = throwables()
    tools = [s.tool(f"t{i}", [{"throw": t}]) for i, t in enumerate(throws)]
    return s.scenario(
        "",
        tools,
        [{"call": s.call(f"c{i}", f"t{i}", {})} for i in range(len(throws))],
        rules=["RES-3", "RES-1", "RES-2", "POST-1"],
        description="A structured throw is a tool error of the spec's shape.",
        postExecute=[s.listener("post", [{"observe": "result"}, {"delegate": True}])],
        observers=_TAMPERING,
    )


# ------------------------------------------------ method 12: overlap both ways


@sweep("CONC-2", "overlap-both-ways", "method 12, overlap measured both ways")
def _overlap_both_ways() -> Scenario:
    """Parallel pairs around an exclusive call, a pool of two, bodies that wait for each other
    at a barrier and completion stages that take turns: the pair's bodies overlap, exactly two
    at a time, and the exclusive call runs alone -- against the calls before it and after it,
    its whole pipeline."""
    barrier = {"barrier": {"name": "pair", "parties": 2}}
    tools = [
        s.tool(
            "slow",
            [{"yield": 2}, barrier, {"yield": 5}, {"pick": ["n"]}],
            isConcurrencySafe=[{"return": True}],
        ),
        # done sooner after the barrier: completion order differs from model order
        s.tool(
            "quick", [{"yield": 2}, barrier, {"pick": ["n"]}], isConcurrencySafe=[{"return": True}]
        ),
        s.tool("serial", [{"yield": 5}, {"return": "alone"}]),
    ]
    names = ["slow", "quick", "serial", "slow", "quick", "serial"]
    batch = [s.call(f"c{i}", name, {"n": i}) for i, name in enumerate(names)]
    return s.scenario(
        "",
        tools,
        [{"batch": batch, "maxParallel": 2}],
        description="An exclusive call is a barrier for its whole pipeline.",
        preExecute=[s.listener("policy", [{"yield": 2}, {"delegate": True}])],
        postExecute=[s.listener("post", [{"yield": 3}, {"delegate": True}])],
        observers=[s.listener("observer", [{"yield": 3}])],
    )
