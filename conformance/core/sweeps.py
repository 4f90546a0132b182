"""The sweep fixtures: each table of ``methods.json`` applied to a rule, every row in one
scenario (one call per row), written to ``fixtures/rules/<ID>/method-*.json`` by
``python -m conformance.core.methods --write``.

A builder returns a plain scenario; :class:`conformance.core.methods.Sweep` adds its id,
rules and description. Rows are told apart by the call (its id, its agent: a listener
scoped to that agent answers for that row), so one scenario holds a whole table.
"""

from __future__ import annotations

from typing import Any

from conformance.core import strategies as s
from conformance.core.methods import family, near_miss_values, sweep

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
