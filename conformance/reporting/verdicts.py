"""The one wording of a run's verdict, for every renderer (report.md, report.html, the terminal)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from conformance.vocab import Status

if TYPE_CHECKING:
    from conformance.running.outcomes import RunResult

__all__ = ["verdict_text", "verdict_words"]


def verdict_text(result: RunResult) -> str:
    """CONFORMANT / NOT CONFORMANT..., saying how many differences there are (never failing)."""
    return verdict_words(
        conformant=result.conformant,
        known=sum(o.status == Status.EXPECTED_FAIL for o in result.rules),
        differing=sum(o.status == Status.DIFFERENCE for o in result.rules),
        incomplete=result.incomplete,
    )


def verdict_words(
    *, conformant: bool, known: int, differing: int, incomplete: bool, contract: str | None = None
) -> str:
    """The one wording of a run's verdict (report.md, report.html, the terminal).

    ``known`` failures (``--expect``'s expected-fail: defects it lists) make a conformant
    run "NOT CONFORMANT, exactly as expected"; differences are counted apart and never
    called defects, whatever else the run found.
    """
    if incomplete:
        return "INCOMPLETE (interrupted)"
    verdict = "CONFORMANT" if conformant and not known else "NOT CONFORMANT"
    if contract is not None:
        verdict += f" to the contract {contract}"
    if conformant and known:
        verdict += ", exactly as expected"
    said = [f"{known} known defect{'s' * (known != 1)}"] if conformant and known else []
    if differing:
        kind = "not a defect" if differing == 1 else "not defects"
        said.append(f"{differing} difference{'s' * (differing != 1)} from DSH, {kind}")
    return verdict + (f" ({'; '.join(said)})" if said else "")
