"""A registry that breaks PRE-3: ``ask`` without an approval service is allowed.

Used by the CLI / report / expect / plugin tests as
``--adapter python:broken_registry:adapter`` (with tests/kit/ on sys.path).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from conformance.adapters.reference import ReferenceAdapter
from reference import Registry, ToolExecution


class AsksWithoutService(Registry):
    async def _approve(self, execution: ToolExecution, reason: str | None) -> str | None:
        if self.approval is None:  # the bug: nobody to ask, so the call goes ahead
            return None
        return await super()._approve(execution, reason)


def _factory(scenario: Mapping[str, Any]) -> Registry:
    return AsksWithoutService(mode=scenario.get("registry", {}).get("mode", "native"))


def adapter() -> ReferenceAdapter:
    return ReferenceAdapter(_factory, name="asks-without-service")
