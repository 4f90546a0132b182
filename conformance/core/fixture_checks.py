"""The ``expect`` block of a fixture, judged generically: a checker of the rule table.

Fixtures carry an explicit ``expect`` block so other-language projects can
use ``fixtures/`` without Python. The Python kit checks it too, as one more
entry of the rule table (:func:`~conformance.core.rules.checker`): any
mismatch counts for the fixture's listed rules -- or, when a call's
expectation names ``rules``, for those only -- beside their predicates'
verdicts. (Not to be confused with ``--expect``, the regression gating of
:mod:`conformance.reporting.expectations`.)
"""

from __future__ import annotations

from conformance.core.model import View
from conformance.core.rules import Verdict, checker

__all__ = ["fixture_block"]


# What only an error *result* can show: a call closed in another declared form (the run
# raised, or stopped for approval) is not judged on these.
_RESULT_ONLY = frozenset(
    {"code", "codeOneOf", "value", "content", "concludesTurn", "additionalContexts"}
)


@checker
def fixture_block(view: View) -> dict[str, list[Verdict]]:
    """The verdicts of a fixture's ``expect`` block, per rule ID it speaks for."""
    fixture = view.scenario
    expectations = fixture.get("expect") or {}
    if not expectations:
        return {}
    listed = list(fixture.get("rules", []))
    out: dict[str, list[Verdict]] = {rid: [] for rid in listed}
    by_id = {c.id: c for c in view.calls}
    for call_id, want in expectations.items():
        call = by_id.get(call_id)
        subject = f"expect[{call_id}]"
        speaks_for = [rid for rid in want.get("rules", listed) if rid in out]
        closed_otherwise = call.closed_otherwise() if call is not None else None
        if call is not None and call.raised and closed_otherwise is None:
            continue  # the implementation crashed: recorded as an error, not judged as a fail
        if call is None or not call.answered:
            for rid in speaks_for:
                out[rid].append(Verdict(False, subject, "the call returned no result"))
            continue
        result = call.result or {}
        problems: list[str] = []
        if closed_otherwise is not None:
            # closed in another declared form (portable profile): judged on what it can show
            want = {k: v for k, v in want.items() if k not in _RESULT_ONLY}
            if want.get("isError") is False:
                problems.append(f"it should have succeeded; it closed: {closed_otherwise}")
        elif "isError" in want and call.is_error != want["isError"]:
            problems.append(f"isError should be {want['isError']}")
        if want.get("code") is not None and call.code != want["code"]:
            problems.append(f"error code should be {want['code']}, got {call.code}")
        if "codeOneOf" in want and call.code not in want["codeOneOf"]:
            problems.append(f"error code should be one of {want['codeOneOf']}, got {call.code}")
        if "value" in want and result.get("value") != want["value"]:
            problems.append(f"value should be {want['value']!r}")
        if "content" in want and result.get("content") != want["content"]:
            problems.append("content differs from the expected content")
        if "bodyEntered" in want and call.body_entered != want["bodyEntered"]:
            problems.append(f"body {'should' if want['bodyEntered'] else 'should not'} have run")
        if "finalizerCalls" in want and call.finalizer_calls != want["finalizerCalls"]:
            expected = want["finalizerCalls"]
            problems.append(f"finalizeContent ran {call.finalizer_calls}x, expected {expected}")
        if "resultNotifications" in want:  # RES-1's own business, whatever the fixture is for
            observers = max(1, len(view.listeners("observers", call.spec.get("agent"))))
            seen = call.notifications / observers
            if seen != want["resultNotifications"]:
                out.setdefault("RES-1", []).append(
                    Verdict(
                        False,
                        subject,
                        f"{seen:g} tools/result notifications, expected "
                        f"{want['resultNotifications']}",
                    )
                )
        for stage in want.get("stagesEntered", []):
            if not call.entered(stage) and not (
                stage == "approval" and any(e.get("stage") == "approval" for e in call.events)
            ):
                problems.append(f"stage {stage} should have been entered")
        for stage in want.get("stagesNotEntered", []):
            if any(e.get("stage") == stage for e in call.events):
                problems.append(f"stage {stage} should not have been entered")
        if "concludesTurn" in want and bool(result.get("concludesTurn")) != want["concludesTurn"]:
            problems.append(f"concludesTurn should be {want['concludesTurn']}")
        if (
            "additionalContexts" in want
            and result.get("additionalContexts", []) != want["additionalContexts"]
        ):
            problems.append("additionalContexts differ from the expected ones")
        if "messageContains" in want and want["messageContains"] not in call.message():
            problems.append(f"error.message should mention {want['messageContains']!r}")
        for rid in speaks_for:
            out[rid].append(Verdict(not problems, subject, "; ".join(problems)))
    return out
