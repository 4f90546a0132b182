"""The catalogue's ``pre.ask-without-service-allows`` mutant as a loadable adapter.

Used by the CLI / report / expect / plugin tests as
``--adapter python:broken_registry:adapter`` (with tests/kit/ on sys.path).
The bug itself lives in ``conformance/adapters/reference/mutants/pre.py`` (one home); this module
only gives it the stable implementation name those tests expect.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from conformance.adapters.reference import ReferenceAdapter
from conformance.adapters.reference.mutants.pre import AskWithoutServiceAllows
from reference import Registry


def _factory(scenario: Mapping[str, Any]) -> Registry:
    return AskWithoutServiceAllows(mode=scenario.get("registry", {}).get("mode", "native"))


def adapter() -> ReferenceAdapter:
    return ReferenceAdapter(_factory, name="asks-without-service")
