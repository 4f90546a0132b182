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

from conformance.core.scenario import listeners_of, mutates_registry, scripts_of

__all__ = [
    "CAPABILITIES",
    "FAILURE_CATEGORIES",
    "Adapter",
    "AdapterError",
    "AdapterInfo",
    "ImplementationFailure",
    "ScenarioSkipped",
    "requirements",
]

# Optional capabilities. A rule whose scenarios need one the adapter does not
# declare is reported "skipped" with the reason, never "pass".
CAPABILITIES: Final[Mapping[str, str]] = {
    "approval": "an approval service can be mounted and scripted",
    "scopes": "tools and listeners can be registered for one agent",
    "scheduler": "a batch of calls can be driven through the implementation's scheduler",
    "code-mode": "registry modes code/both, run_code and a scripted code runtime",
    "timeout-policy": "the timeout policy wrapper can be installed",
    "presentation": "output.presentationMeta can be declared",
    "registry-mutation": "tools can be registered and disposed while a call is in flight",
    "nested-calls": "a tool body can run a nested call and forward its result (step forward)",
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

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "version": self.version,
            "language": self.language,
            "capabilities": sorted(self.capabilities),
        }
        if self.missing:
            out["missing"] = dict(sorted(self.missing.items()))
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
    needs: set[str] = set()
    if "approval" in scenario:
        needs.add("approval")
    if scenario.get("registry", {}).get("mode", "native") != "native":
        needs.add("code-mode")
    if scenario.get("timeoutPolicy"):
        needs.add("timeout-policy")
    if any(t.get("scope") is not None for t in scenario.get("tools", [])) or any(
        entry.get("scope") is not None for entry in listeners_of(scenario)
    ):
        needs.add("scopes")
    if any("batch" in action for action in scenario.get("actions", [])):
        needs.add("scheduler")
    if any("presentationMeta" in t.get("output", {}) for t in scenario.get("tools", [])):
        needs.add("presentation")
    if mutates_registry(scenario):
        needs.add("registry-mutation")
    if any("forward" in step for script in scripts_of(scenario) for step in script):
        needs.add("nested-calls")
    return frozenset(needs)
