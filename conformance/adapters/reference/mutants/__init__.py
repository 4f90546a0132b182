"""The mutant catalogue: known-bad registries the kit must catch, rule by rule.

Each module of this package (one per rule group, named after it) holds small
variants of the bundled reference, each making *one* realistic mistake and
declaring the rule(s) of SPEC.md that must catch it::

    @mutant("PRE-3", "ask is allowed when no approval service is mounted")
    class AskWithoutServiceAllows(Registry):
        ...

Read a module next to its rules module (``conformance/judging/rules/pre.py``): the
mutant is the bug, the predicate is what catches it. ``variants.py`` holds the
opposite: registries that differ from the reference only where the spec
leaves a choice open, which the kit must pass.

``toolreg-conformance selftest`` runs the kit against every entry.

* ``CATALOGUE``: mutant name -> :class:`Mutant`, ordered by name.
* ``VARIANTS``: variant name -> :class:`Variant`, ordered by name.
"""

from __future__ import annotations

import importlib
import pkgutil

from conformance.adapters.reference.mutants._base import (
    CATALOGUE,
    VARIANTS,
    Mutant,
    Variant,
    mutant,
    variant,
)

__all__ = ["CATALOGUE", "VARIANTS", "Mutant", "Variant", "mutant", "variant"]


def _load() -> None:
    for module in pkgutil.iter_modules(__path__):
        if not module.name.startswith("_"):
            importlib.import_module(f"{__name__}.{module.name}")
    mutants, variants = sorted(CATALOGUE.items()), sorted(VARIANTS.items())
    CATALOGUE.clear()
    CATALOGUE.update(mutants)
    VARIANTS.clear()
    VARIANTS.update(variants)


_load()
