"""One test per rule: ``pytest --pyargs conformance --toolreg-adapter=ADAPTER``.

Select rules with ``-k PRE-3`` / ``-k PRE_3`` / ``-k "PRE and not PRE-8"`` or
with the marker: ``-m rule``. Fixtures come from :mod:`conformance.pytest_plugin`.
"""

from __future__ import annotations

import pytest

from conformance.judging.rules import RULES
from conformance.pytest_plugin import RuleRun


@pytest.mark.parametrize(
    "rule_id", [pytest.param(rid, id=rid, marks=pytest.mark.rule(rid)) for rid in RULES]
)
def test_rule(rule_id: str, toolreg_rule: RuleRun) -> None:
    toolreg_rule(rule_id)
