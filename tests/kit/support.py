"""Shared helpers for the kit's rule tests: run one rule (or one group) on a registry variant."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from conformance.adapters.reference import ReferenceAdapter
from conformance.rules import RULES
from conformance.runner import RuleOutcome, RunResult, run_suite
from conformance.script import Binding
from reference import Registry, run_batch


def factory(cls: type[Registry] = Registry) -> Callable[[Mapping[str, Any]], Registry]:
    """A registry factory building ``cls`` in the mode the scenario asks for."""
    return lambda s: cls(mode=s.get("registry", {}).get("mode", "native"))


def adapter_for(
    cls: type[Registry] = Registry,
    *,
    batch: Callable[..., Any] | None = None,
    binding: Binding | None = None,
    name: str = "bad",
) -> ReferenceAdapter:
    """A reference adapter running ``cls`` (optionally with its own batch driver or binding)."""
    return ReferenceAdapter(
        factory(cls), name=name, batch=run_batch if batch is None else batch, binding=binding
    )


@contextmanager
def quiet() -> Iterator[None]:
    """Silences logging for the duration of a suite run."""
    logging.disable(logging.CRITICAL)
    try:
        yield
    finally:
        logging.disable(logging.NOTSET)


def rule_outcome(
    rule_id: str,
    cls: type[Registry] = Registry,
    *,
    batch: Callable[..., Any] | None = None,
    binding: Binding | None = None,
    strict: bool = False,
) -> RuleOutcome:
    """Runs the single rule ``rule_id`` on ``cls``; ``strict`` also demands no kit errors."""
    with quiet():
        result = run_suite(
            adapter_for(cls, batch=batch, binding=binding), profile="quick", rules=rule_id
        )
    if strict:
        assert not result.kit_errors, result.kit_errors
    (found,) = [o for o in result.rules if o.id == rule_id]
    return found


def rule_status(
    rule_id: str,
    cls: type[Registry] = Registry,
    *,
    batch: Callable[..., Any] | None = None,
    binding: Binding | None = None,
    strict: bool = False,
) -> str:
    """The status of the single rule ``rule_id`` run on ``cls``."""
    return rule_outcome(rule_id, cls, batch=batch, binding=binding, strict=strict).status


def mutant_outcome(cls: type[Registry], rule_id: str) -> RuleOutcome:
    """``rule_outcome`` with the registry first, and no kit errors allowed."""
    return rule_outcome(rule_id, cls, strict=True)


def mutant_status(cls: type[Registry], rule_id: str) -> str:
    """``rule_status`` with the registry first, and no kit errors allowed."""
    return rule_status(rule_id, cls, strict=True)


def group_rules(group: str) -> list[str]:
    """The ids of every rule of ``group`` (e.g. ``"PRE"``)."""
    return [rid for rid in RULES if rid.startswith(group + "-")]


def group_result(group: str) -> RunResult:
    """Runs every rule of ``group`` on the reference registry."""
    with quiet():
        return run_suite(ReferenceAdapter(), profile="quick", rules=f"{group}-*")


def group_statuses(group: str) -> dict[str, str]:
    """The status of every rule of ``group`` run on the reference registry."""
    return {o.id: o.status for o in group_result(group).rules}


def expected_status(rule_id: str) -> str:
    """What the reference should get: "untested" for a rule without a check, else "pass"."""
    return "untested" if RULES[rule_id].check is None else "pass"
