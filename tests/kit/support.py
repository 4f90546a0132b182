"""Shared helpers for the kit's tests: run the rules of one group on the reference registry.

The known-bad registries that prove each rule can fail live in the mutant
catalogue (``conformance/adapters/reference/mutants/``) and are run by ``test_mutants.py``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

from conformance.adapters.reference import ReferenceAdapter
from conformance.judging.rules import RULES
from conformance.running.outcomes import RunResult
from conformance.running.runner import run_suite


@contextmanager
def quiet() -> Iterator[None]:
    """Silences logging for the duration of a suite run."""
    logging.disable(logging.CRITICAL)
    try:
        yield
    finally:
        logging.disable(logging.NOTSET)


def group_rules(group: str) -> list[str]:
    """The ids of every rule of ``group`` (e.g. ``"PRE"``)."""
    return [rid for rid in RULES if rid.startswith(group + "-")]


def group_result(group: str) -> RunResult:
    """Runs every rule of ``group`` on the reference registry."""
    with quiet():
        return run_suite(ReferenceAdapter(), profile="quick", rules=f"{group}-*")


def expected_status(rule_id: str) -> str:
    """What the reference should get: "untested" for a rule without a check, else "pass"."""
    return "untested" if RULES[rule_id].check is None else "pass"
