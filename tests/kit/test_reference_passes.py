"""The reference registry passes every rule of every group (or leaves untested ones untested)."""

from __future__ import annotations

import pytest

from conformance.judging.rules import RULES
from tests.kit.support import ReferenceRun, expected_status, group_rules

GROUPS = [
    "FIN",
    "RES",
    "CTX",
    "CANCEL",
    "CODE",
    "CONC",
    "PIPE",
    "OUT",
    "EXEC",
    "POST",
    "PRE",
    "GUARD",
    "SCOPE",
    "DEF",
]


@pytest.mark.parametrize("group", GROUPS)
def test_reference_passes_every_rule_of_group(
    group: str, reference_quick_run: ReferenceRun
) -> None:
    """Judged from the reference's whole quick run (every group's rules, shared with the
    variants' corpus in test_mutants): a rule of the group missing from it fails too."""
    result = reference_quick_run.result
    assert not result.kit_errors
    ids = group_rules(group)
    assert ids
    outcomes = {o.id: o for o in result.rules if o.id.startswith(group + "-")}
    assert {rid: o.status for rid, o in outcomes.items()} == {
        rid: expected_status(rid) for rid in ids
    }, {rid: [f.message for f in o.failures] for rid, o in outcomes.items()}
    for rid in ids:
        if RULES[rid].check is not None:
            assert outcomes[rid].checks > 0, rid
