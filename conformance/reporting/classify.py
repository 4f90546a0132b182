"""A report classified again by a contract, after the run (``render`` / ``compare --contract``)."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from conformance.judging.contract import Contract, classify
from conformance.vocab import Status

__all__ = ["reclassified"]


def reclassified(document: Mapping[str, Any], contract: Contract) -> dict[str, Any]:
    """A copy of ``report.json`` whose violations are classified by ``contract``.

    Each kept violation (kind ``fail`` or ``difference``) is classified again from its
    rule, clause and scenario (:func:`~conformance.judging.contract.classify`), and a rule
    that failed becomes ``fail`` if one of them is a defect, else ``difference``; errors,
    timeouts and the other statuses stay. ``conformant`` is computed again, and a note says
    the classification came after the run (from the failures it kept).
    """
    out = copy.deepcopy(dict(document))
    profile = str(out.get("profile", "ci"))
    for rule in out.get("rules", []):
        rid = str(rule["id"])
        rule["promised"] = contract.promised(rid) if rid in contract.promises else False
        violations, others = [], []
        for failure in rule["failures"]:
            if failure["kind"] not in (Status.FAIL, Status.DIFFERENCE):
                others.append(failure)
                continue
            kind = classify(contract, rid, failure.get("clause"), str(failure["scenario"]))
            failure["kind"] = str(Status.FAIL if kind.defect else Status.DIFFERENCE)
            failure.pop("why", None)
            if kind.why:
                failure["why"] = kind.why
            violations.append(failure)
        violations.sort(key=lambda f: f["kind"] != Status.FAIL)  # the bucket order
        rule["failures"] = violations + others
        status = rule["status"]
        expected = (rule.get("expected") or {}).get("status")
        actual = expected if status == Status.EXPECTED_FAIL else status
        if actual in (Status.FAIL, Status.DIFFERENCE) and violations:
            now = Status.FAIL if any(f["kind"] == Status.FAIL for f in violations) else None
            now = now or Status.DIFFERENCE
            if status != Status.EXPECTED_FAIL or now != expected:
                rule["status"] = str(now)
    out["contract"] = contract.summary()
    out["conformant"] = (
        not out.get("incomplete")
        and not out.get("kitErrors")
        and not any(Status(r["status"]).fails_run(profile) for r in out.get("rules", []))
    )
    out["notes"] = [
        *out.get("notes", []),
        f"classified by {contract.source} after the run, from the failures it kept",
    ]
    return out
