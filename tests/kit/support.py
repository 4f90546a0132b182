"""Shared helpers for the kit's tests: the rules of one group, what the reference should get.

The known-bad registries that prove each rule can fail live in the mutant
catalogue (``conformance/adapters/reference/mutants/``) and are run by ``test_mutants.py``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple

from conformance.judging.rules import RULES
from conformance.running.outcomes import RunResult


@contextmanager
def quiet() -> Iterator[None]:
    """Silences logging for the duration of a suite run."""
    logging.disable(logging.CRITICAL)
    try:
        yield
    finally:
        logging.disable(logging.NOTSET)


class ReferenceRun(NamedTuple):
    """The reference's whole quick run, and the frozen corpus it wrote (the session fixture
    ``reference_quick_run`` of tests/conftest.py)."""

    result: RunResult
    corpus: Path


def group_rules(group: str) -> list[str]:
    """The ids of every rule of ``group`` (e.g. ``"PRE"``)."""
    return [rid for rid in RULES if rid.startswith(group + "-")]


def expected_status(rule_id: str) -> str:
    """What the reference should get: "untested" for a rule without a check, else "pass"."""
    return "untested" if RULES[rule_id].check is None else "pass"
