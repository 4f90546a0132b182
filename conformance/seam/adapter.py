"""The adapter seam: every implementation is reached through one small protocol.

An adapter describes itself (name, version, language, the optional
capabilities it supports) and runs one scenario to one trace. Data flows one
way: scenario in, trace out. Adapters never judge; rule predicates never run
implementations.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Protocol, runtime_checkable

from conformance.scenario import stages
from conformance.scenario.schema import (
    calls_of,
    listener_lifecycle,
    listeners_of,
    mutates_registry,
    scripts_of,
)

__all__ = [
    "CAPABILITIES",
    "CLOSED_FORMS",
    "DEFAULT_CLOSED_FORMS",
    "FAILURE_CATEGORIES",
    "PIPELINE_STAGES",
    "STAGE_CAPABILITIES",
    "Adapter",
    "AdapterError",
    "AdapterInfo",
    "ImplementationFailure",
    "ScenarioSkipped",
    "requirements",
    "trim",
]

# Optional capabilities. A rule whose scenarios need one the adapter does not
# declare is reported "not-applicable" with the reason, never "pass"; such a
# scenario is never sent. The stage capabilities (STAGE_CAPABILITIES) say which
# pipeline stages an implementation has at all: an agent framework with no
# finalizer is never judged on a scenario that scripts one. A stage capability's
# description, like all else about its stage, is its row of the stage table
# (conformance.scenario.stages).
CAPABILITIES: Final[Mapping[str, str]] = {
    **{r.capability: r.description for r in stages.rows() if r.capability is not None},
    "scopes": "tools and listeners can be registered for one agent",
    "scheduler": "a batch of calls can be driven through the implementation's scheduler",
    "presentation": "output.presentationMeta can be declared",
    "registry-mutation": "tools can be registered and disposed while a call is in flight",
    "nested-calls": "a tool body can run a nested call and forward its result (step forward)",
    "agentless-calls": "a call can carry no agent at all (PRE-4: no agent to route a question to)",
    "listener-disposers": "listeners, guards and the timeout policy can be registered and "
    "disposed between calls (register / dispose actions with `of`; PIPE-6)",
}


#: The stages of the five-stage pipeline itself (every registry of the spec has them).
PIPELINE_STAGES: Final = stages.pipeline_capabilities()

#: The capabilities that are stages (the portable profile's vocabulary): the stage table's.
STAGE_CAPABILITIES: Final = stages.capabilities()

#: How an implementation tells the caller that a call did not run ("closed"):
#: What an implementation is assumed to close a call with when it declares nothing: an
#: error result only (SPEC section 1, "Closed calls").
DEFAULT_CLOSED_FORMS: Final = frozenset({"error-result"})

CLOSED_FORMS: Final[Mapping[str, str]] = {
    "error-result": "an error result for the call (the spec's own form)",
    "raised": "the run raised (the answer says {'raised': message})",
    "interrupted": "the run stopped waiting for an approval answer ({'interrupted': message})",
}


class AdapterError(Exception):
    """The adapter could not be loaded or started (exit code 2)."""


class ScenarioSkipped(Exception):
    """The implementation cannot express this one scenario (``reason`` says why)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


# Ways an implementation (or its harness) can fail to answer a scenario at all.
# These are the implementation's bugs, reported per scenario; the run goes on.
FAILURE_CATEGORIES: Final[Mapping[str, str]] = {
    "crash": "the harness process exited or closed its output",
    "timeout": "no answer within the response deadline; the harness was killed",
    "protocol": "an answer that breaks the harness protocol (not JSON, wrong seq, wrong type)",
    "errored": "the harness reported it could not interpret the scenario",
}


class ImplementationFailure(Exception):
    """The implementation did not answer a scenario (see :data:`FAILURE_CATEGORIES`).

    ``line`` is the offending output line, when there is one; ``stderr`` the
    harness's stderr while it worked on the scenario.
    """

    def __init__(
        self, category: str, message: str, *, line: str | None = None, stderr: str = ""
    ) -> None:
        assert category in FAILURE_CATEGORIES, category
        super().__init__(f"[{category}] {message}")
        self.category = category
        self.message = message
        self.line = line
        self.stderr = stderr


@dataclass(frozen=True)
class AdapterInfo:
    name: str
    version: str
    language: str = "python"
    capabilities: frozenset[str] = field(default_factory=frozenset)
    # Why each undeclared capability is missing, when the implementation says.
    missing: Mapping[str, str] = field(default_factory=dict)
    # The forms in which the implementation closes a call (CLOSED_FORMS); a rule that
    # requires "closed" accepts each declared form, a rule that requires an error
    # *result* stays strict.
    closed_forms: frozenset[str] = DEFAULT_CLOSED_FORMS

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "version": self.version,
            "language": self.language,
            "capabilities": sorted(self.capabilities),
        }
        if self.missing:
            out["missing"] = dict(sorted(self.missing.items()))
        if self.closed_forms != DEFAULT_CLOSED_FORMS:
            out["closedForms"] = sorted(self.closed_forms)
        return out


@runtime_checkable
class Adapter(Protocol):
    def describe(self) -> AdapterInfo: ...

    def run(self, scenario: Mapping[str, Any]) -> dict[str, Any]:
        """Run one scenario on the implementation and return its trace (JSON).

        May raise :class:`ScenarioSkipped` or :class:`ImplementationFailure`.
        Optional extras the runner uses when present: ``diagnostics() -> dict``
        (transport facts for the report, e.g. captured stderr) and ``close()``.
        """
        ...


def requirements(scenario: Mapping[str, Any]) -> frozenset[str]:
    """The optional capabilities a scenario needs."""
    needs: set[str] = {
        row.capability
        for row in stages.rows()
        if row.capability is not None and row.scripted is not None and _scripts(scenario, row)
    }
    if scenario.get("registry", {}).get("mode", "native") != "native":
        needs.add("code-mode")
    if any(t.get("scope") is not None for t in scenario.get("tools", [])) or any(
        entry.get("scope") is not None for entry in listeners_of(scenario)
    ):
        needs.add("scopes")
    if "approval" in scenario and any(call.get("agent") is None for call in calls_of(scenario)):
        needs.add("agentless-calls")  # PRE-4: a question with no agent to route it to
    if any("batch" in action for action in scenario.get("actions", [])):
        needs.add("scheduler")
    if any("presentationMeta" in t.get("output", {}) for t in scenario.get("tools", [])):
        needs.add("presentation")
    if mutates_registry(scenario):
        needs.add("registry-mutation")
    if any("forward" in step for script in scripts_of(scenario) for step in script):
        needs.add("nested-calls")
    if listener_lifecycle(scenario) is not None:
        needs.add("listener-disposers")
    return frozenset(needs)


def _scripts(scenario: Mapping[str, Any], row: stages.StageRow) -> bool:
    """Does the scenario script ``row``'s stage: a tool with its key, or the scenario's key
    present and not off (an empty list, ``false``)?"""
    assert row.scripted is not None
    at, key = row.scripted
    if at == "tool":
        return any(key in t for t in scenario.get("tools", []))
    return scenario.get(key) not in (None, False, [])


_INERT_STEPS: Final = frozenset({"observe", "yield"})


def _inert(steps: Any, ending: Mapping[str, Any] | None) -> bool:
    """Only looks (observe, yield), then hands on: removing it changes no outcome."""
    steps = list(steps)
    if ending is not None:
        if not steps or steps[-1] != ending:
            return False
        steps = steps[:-1]
    return all(isinstance(s, Mapping) and set(s) <= _INERT_STEPS for s in steps)


def trim(scenario: Mapping[str, Any], capabilities: frozenset[str]) -> Mapping[str, Any]:
    """The scenario without the inert scripts of stages the implementation lacks.

    A generated scenario scripts every stage, most of them only to look on (observe, then
    hand on). For an implementation without such a stage (an agent framework with no
    finalizer, say) those onlookers are dropped, with what a fixture's ``expect`` block
    says of them, so the scenario still runs and is judged on the stages it has; a
    script of a missing stage that *does* something keeps the scenario's requirement, and
    it is reported not-applicable. The same object comes back when nothing is dropped.
    Which stages may be trimmed, and how their onlookers end, is the stage table's
    ``trim`` column.
    """
    if capabilities >= stages.capabilities():
        return scenario
    out = dict(scenario)
    dropped: list[stages.StageRow] = []
    for row in stages.rows():
        if not row.trimmed or row.capability in capabilities or not _scripts(scenario, row):
            continue
        assert row.scripted is not None
        at, key = row.scripted
        if at == "tool":
            tools = []
            for tool in out["tools"]:
                steps = tool.get(key)
                if steps is not None and _inert(steps, row.ending):
                    tool = {k: v for k, v in tool.items() if k != key}
                    if row not in dropped:
                        dropped.append(row)
                tools.append(tool)
            out["tools"] = tools
            continue
        kept = [e for e in scenario[key] if not _inert(e.get("steps", ()), row.ending)]
        if len(kept) < len(scenario[key]):
            dropped.append(row)
        if kept:
            out[key] = kept
        else:
            del out[key]
    if not dropped:
        return scenario
    if scenario.get("expect"):
        out["expect"] = {
            call_id: _unexpect(want, dropped) for call_id, want in scenario["expect"].items()
        }
    return out


def _unexpect(want: Mapping[str, Any], dropped: list[stages.StageRow]) -> dict[str, Any]:
    """An ``expect`` entry without what it said of the stages ``trim`` dropped."""
    out = dict(want)
    names = {row.stage for row in dropped}
    for key in ("stagesEntered", "stagesNotEntered"):
        if key in out:
            out[key] = [stage for stage in out[key] if stage not in names]
    for row in dropped:
        for key in row.expect:
            out.pop(key, None)
    return out
