"""PRE -- ① tools/pre-execute, the allow / deny / ask waterfall."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from hypothesis import strategies as st

from .. import strategies as s
from ..model import CallView, View
from . import focus
from ._base import Scenario, Trace, Verdict, expect, rule


def effective_decision(call: CallView) -> Any:
    """What the waterfall as a whole returned: the first-entered listener's exit value."""
    entered = call.entered("pre-execute")
    if not entered:
        return {"kind": "allow"}  # PRE-1: an empty chain allows
    first = entered[0].get("id")
    exits = [e for e in call.exits("pre-execute") if e.get("id") == first]
    return exits[-1].get("returned") if exits else None


def _is_ask(decision: Any) -> bool:
    return isinstance(decision, dict) and decision.get("kind") == "ask" and isinstance(decision.get("reason", ""), str)


@rule("PRE-3", "Fail-closed ask")
def PRE_3(scenario: Scenario, trace: Trace) -> Iterator[Verdict]:
    """An effective ``ask`` with no approval service denies; the body never runs."""
    view = View(scenario, trace)
    if view.approval_mounted:
        return
    for call in view.calls:
        if not call.returned or not _is_ask(effective_decision(call)):
            continue
        yield expect(
            call.is_error and not call.body_entered,
            call.id,
            "ask without an approval service must deny without running the body "
            f"(isError={call.is_error}, body entered={call.body_entered})",
        )


@st.composite
def _ask_scenarios(draw: st.DrawFn) -> Scenario:
    name = draw(s.NAMES)
    steps = draw(st.sampled_from([
        [{"return": {"kind": "ask", "reason": "side-effecting command"}}],
        [{"return": {"kind": "ask"}}],
        [{"callNext": True}, {"return": {"kind": "ask", "reason": "after next"}}],
    ]))
    pre = [s.listener("permission", steps)]
    if draw(st.booleans()):
        pre.insert(0, s.listener("outer", [{"delegate": True}]))
    return s.scenario(
        "generated/PRE-3",
        [s.tool(name, draw(s.body_scripts()))],
        [{"call": s.call("c0", name, draw(s.arguments()), agent=draw(s.AGENTS))}],
        preExecute=pre,
        observers=[s.listener("observer", [])],
    )


focus("PRE-3", _ask_scenarios())
