"""Rule predicates, one per rule ID, and the focused strategy of each rule's property.

``RULES`` maps every rule ID of SPEC.md to its predicate (or to the reason it
cannot be checked black-box); ``FOCUS`` maps a rule ID to the hypothesis
strategy that makes its premise hold often, with the capabilities it needs.
Each group lives in its own module, named after the group.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from conformance.judging.rules._base import CHECKERS, RULES, Rule, Verdict, checker, rule, untested
from conformance.scenario.stages import stages_of

__all__ = [
    "CHECKERS",
    "FOCUS",
    "RULES",
    "Focus",
    "Rule",
    "Verdict",
    "checker",
    "focus",
    "rule",
    "untested",
]


@dataclass(frozen=True)
class Focus:
    strategy: st.SearchStrategy[dict[str, Any]]
    #: The capabilities the strategy's scenarios need beyond the stages the rule is about.
    extra: frozenset[str] = field(default_factory=frozenset)
    rule_id: str = ""

    @property
    def needs(self) -> frozenset[str]:
        """Every capability the property needs: its extras, and the stages its rule is about
        (the stage table's ``rules`` column, one home)."""
        return self.extra | stages_of(self.rule_id)


FOCUS: dict[str, Focus] = {}


def focus(rule_id: str, strategy: st.SearchStrategy[dict[str, Any]], *needs: str) -> None:
    """Register the focused strategy of ``rule_id``'s property."""
    if rule_id in FOCUS:
        raise ValueError(f"focus for {rule_id} registered twice")
    FOCUS[rule_id] = Focus(strategy, frozenset(needs), rule_id)


def _load() -> None:
    import importlib
    import pkgutil

    for module in pkgutil.iter_modules(__path__):
        if not module.name.startswith("_"):
            importlib.import_module(f"{__name__}.{module.name}")


_load()
