"""The mutant catalogue, one test per entry: every mutant is killed, every variant passes.

The catalogue lives in ``conformance/adapters/reference/mutants/`` (one module per rule group); this
file only runs it. A mutant is killed when each rule it targets reports ``fail``
in the quick profile -- not ``error`` or ``timeout``, and with no kit error.
A correct variant must pass the whole kit in the quick profile.
"""

from __future__ import annotations

import json

import pytest

from conformance.adapters.reference import ReferenceAdapter
from conformance.adapters.reference.mutants import CATALOGUE, VARIANTS
from conformance.judging.evaluate import judge
from conformance.judging.rules import RULES
from conformance.running.plan import select_rules
from conformance.scenario.schema import validate
from conformance.selftest import run_mutant, run_variant
from tests.kit.support import ReferenceRun


@pytest.fixture(scope="session")
def reference_corpus(reference_quick_run: ReferenceRun) -> str:
    """The reference's quick run, which passes, writing the frozen corpus the mutants and the
    variants replay (as `selftest` does: the same scenarios, without drawing them again per
    entry)."""
    result, path = reference_quick_run
    assert result.conformant and not result.kit_errors
    return str(path)


@pytest.mark.parametrize("name", list(CATALOGUE))
def test_mutant_is_killed_by_its_target_rule(name: str, reference_corpus: str) -> None:
    """Killed by the replay of the reference's corpus, as `selftest` judges it: the scenarios
    the quick profile's properties draw, which hypothesis draws alike for any implementation
    until the first failure. The property run itself (drawing and shrinking) is each mutant's
    in tests/kit/test_pointers.py's sweep and in the installed package's `selftest
    --no-baseline` (CI)."""
    row = run_mutant(CATALOGUE[name], corpus=reference_corpus)
    assert row.killed, row.why()


@pytest.mark.long(4)
@pytest.mark.slow  # the whole kit per variant (the reference's corpus replayed)
@pytest.mark.parametrize("name", list(VARIANTS))
def test_correct_variant_passes_the_whole_kit(name: str, reference_corpus: str) -> None:
    row = run_variant(VARIANTS[name], corpus=reference_corpus)
    assert row.ok, row.why()


def test_every_rule_with_a_predicate_has_a_mutant() -> None:
    targeted = {t for m in CATALOGUE.values() for t in m.targets}
    missing = [rid for rid, r in RULES.items() if r.check is not None and rid not in targeted]
    assert not missing
    assert len(CATALOGUE) >= 60


def test_every_entry_teaches_the_bug() -> None:
    for entry in [*CATALOGUE.values(), *VARIANTS.values()]:
        assert entry.description and "\n" not in entry.description
        assert len(entry.doc) > 40, entry.name
        path, _, attr = entry.where.partition(".py:")
        assert path.startswith("conformance/adapters/reference/mutants/") and attr, entry.where
    for m in CATALOGUE.values():
        assert m.name.split(".")[0] == m.where.split("/")[-1].split(".")[0].rstrip("_")


@pytest.mark.parametrize("name", list(VARIANTS))
def test_variant_differs_from_the_reference_on_its_witness(name: str) -> None:
    """A variant identical to the reference would prove nothing about overfitting: on its
    witness scenario its trace differs from the reference's, and both traces pass every rule
    the variant answers to (each judged with the closed forms its own adapter declares)."""
    v = VARIANTS[name]
    validate(v.witness, "scenario", f"witness of {name}")
    adapters = (ReferenceAdapter(), v.build())
    traces = [adapter.run(v.witness) for adapter in adapters]
    assert json.dumps(traces[0], sort_keys=True) != json.dumps(traces[1], sort_keys=True)
    rules = select_rules(v.rules) if v.rules else None
    for adapter, trace in zip(adapters, traces, strict=True):
        validate(trace, "trace", f"trace of the witness of {name}")
        verdicts = judge(v.witness, trace, rules, closed_forms=adapter.describe().closed_forms)
        assert not [(rid, x) for rid, found in verdicts.items() for x in found if not x.ok]
