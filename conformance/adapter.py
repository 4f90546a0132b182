"""The adapter seam: every implementation is reached through one small protocol.

An adapter describes itself (name, version, language, the optional
capabilities it supports) and runs one scenario to one trace. Data flows one
way: scenario in, trace out. Adapters never judge; rule predicates never run
implementations.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Protocol, runtime_checkable

from .scenario import listeners_of, mutates_registry

__all__ = ["CAPABILITIES", "Adapter", "AdapterError", "AdapterInfo", "load_adapter", "requirements"]

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
}


class AdapterError(Exception):
    """The adapter could not be loaded or started (exit code 2)."""


@dataclass(frozen=True)
class AdapterInfo:
    name: str
    version: str
    language: str = "python"
    capabilities: frozenset[str] = field(default_factory=frozenset)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "version": self.version,
            "language": self.language,
            "capabilities": sorted(self.capabilities),
        }


@runtime_checkable
class Adapter(Protocol):
    def describe(self) -> AdapterInfo: ...

    def run(self, scenario: Mapping[str, Any]) -> dict[str, Any]:
        """Run one scenario on the implementation and return its trace (JSON)."""
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
    return frozenset(needs)


def load_adapter(spec: str) -> Adapter:
    """``reference`` | ``python:module:factory`` | ``stdio:COMMAND...`` | ``http://...``."""
    if spec == "reference":
        from .adapters.reference import ReferenceAdapter

        return ReferenceAdapter()
    if spec.startswith("python:"):
        try:
            _, module_name, factory_name = spec.split(":", 2)
            factory = getattr(importlib.import_module(module_name), factory_name)
        except (ValueError, ImportError, AttributeError) as e:
            raise AdapterError(f"cannot load adapter {spec!r}: {e}") from e
        adapter = factory()
        if not isinstance(adapter, Adapter):
            raise AdapterError(f"{spec!r} did not return an Adapter (describe() and run())")
        return adapter
    if spec.startswith(("stdio:", "http://", "https://")):
        raise AdapterError(
            f"adapter transport of {spec!r} is not available yet (stdio and HTTP come later)"
        )
    raise AdapterError(
        f"unknown adapter {spec!r}; expected reference, python:module:factory, stdio:..., http://..."
    )
