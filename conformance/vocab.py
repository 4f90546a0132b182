"""The kit's vocabulary, defined once: statuses, error codes, stage and listener keys.

Every module that says ``"fail"``, ``"INVALID_ARGS"``, ``"run_code"`` or
``"pre-execute"`` takes the word from here, so a status cannot be added in one
place and forgotten in five, and a timeout is recognized by what the trace
format says it is -- never by a substring hunt.

The step table (step kinds, the stages each may appear in) is data:
``fixtures/schema/steps.json``. The scenario keys that hold listeners are
:data:`conformance.scenario.schema.LISTENER_KEYS`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from enum import StrEnum
from typing import Any, Final

__all__ = [
    "ACTION_DEADLINE_MESSAGE",
    "ACTION_DEADLINE_S",
    "FAILING",
    "NOT_CALLABLE",
    "NOT_RUN",
    "RUNAWAY_PREFIX",
    "RUN_CODE",
    "STAGES",
    "STAGE_KEYS",
    "STATUSES",
    "ErrorCode",
    "Status",
    "action_deadline",
    "is_action_timeout",
    "mode_of",
]


class Status(StrEnum):
    """A rule's outcome in a run. A ``str``: ``Status.FAIL == "fail"``, and JSON says ``fail``."""

    PASS = "pass"
    FAIL = "fail"  # a violation of a promised rule (a defect); a shrunk counterexample is saved
    # a violation of a rule (or clause, or scenario) the implementation's contract does not
    # promise: a difference from DSH, shown apart, never a defect and never failing a run
    DIFFERENCE = "difference"
    ERROR = "error"  # the implementation raised, returned a malformed trace or broke its harness
    TIMEOUT = "timeout"  # an action, or a harness answer, hit its deadline
    NOT_APPLICABLE = "not-applicable"  # needs a capability (a stage) the adapter does not declare
    UNTESTED = "untested"  # not black-box checkable
    NOT_EXERCISED = "not-exercised"  # no scenario met the rule's premise
    EXPECTED_FAIL = "expected-fail"  # --expect: failing exactly as listed
    UNEXPECTED_PASS = "unexpected-pass"  # --expect: listed, but it passes

    def fails_run(self, profile: str) -> bool:
        """Does this outcome make a run with ``profile`` non-conformant?

        ``not-exercised`` fails the ``ci`` profile only (it promises every rule
        is exercised); the other profiles report it.
        """
        if self is Status.NOT_EXERCISED:
            return profile == "ci"
        return self in (Status.FAIL, Status.ERROR, Status.TIMEOUT, Status.UNEXPECTED_PASS)

    @property
    def is_problem(self) -> bool:
        """The implementation failed the rule: a violation, an error or a timeout.

        A ``difference`` is not a problem: the implementation does not promise the rule.
        """
        return self in FAILING

    @property
    def not_run(self) -> bool:
        """Nothing was judged: skipped, untested or not exercised."""
        return self in NOT_RUN


STATUSES: Final = tuple(Status)
FAILING: Final = (Status.FAIL, Status.ERROR, Status.TIMEOUT)
NOT_RUN: Final = (Status.NOT_APPLICABLE, Status.UNTESTED, Status.NOT_EXERCISED)


class ErrorCode:
    """The ``error.info.code`` values SPEC.md routes on (reference/_types.py spells the same).

    Plain strings (not an Enum), so a message quoting a set of codes reads as the codes.
    """

    UNKNOWN_TOOL: Final = "UNKNOWN_TOOL"
    INVALID_ARGS: Final = "INVALID_ARGS"
    INVALID_TOOL_OUTPUT: Final = "INVALID_TOOL_OUTPUT"
    ABORTED: Final = "ABORTED"
    ABORTED_BEFORE_DISPATCH: Final = "ABORTED_BEFORE_DISPATCH"
    TOOL_TIMEOUT: Final = "TOOL_TIMEOUT"


# The projection kind for a definition field that holds no function (scenario.schema.json
# ``projection``): the interpreters put this very string where a function belongs (DEF-3).
NOT_CALLABLE: Final = "not-callable"

# The code-mode entry point: the one tool name a scenario never defines itself.
RUN_CODE: Final = "run_code"

# Event stages of one call, in pipeline order.
STAGES: Final = (
    "pre-execute",
    "approval",
    "guard",
    "wrapper",
    "body",
    "post-execute",
    "finalize",
    "result",
)

# Event stage -> the scenario key of the listeners that record it.
STAGE_KEYS: Final[Mapping[str, str]] = {
    "pre-execute": "preExecute",
    "guard": "guards",
    "wrapper": "wrappers",
    "post-execute": "postExecute",
    "result": "observers",
}

#: The per-action deadline of an in-process adapter's runner (conformance.adapters.runner):
#: an action still pending after it is answered ``raised`` with :func:`action_deadline`.
ACTION_DEADLINE_S: Final = 5.0
# What a trace's ``actions[i].raised`` says when the action hit the per-action
# deadline (trace.schema.json): the reference adapter and every harness write it so.
ACTION_DEADLINE_MESSAGE: Final = "deadline of {seconds:g} s exceeded"
#: How a trace's ``actions[i].raised`` starts when the kit's interpreter stopped a runaway (one
#: scripted callable entered again and again for one call: ``conformance.interpreter.session``'s
#: ``Runaway``). Like the deadline, a timeout: the call would never have ended by itself.
RUNAWAY_PREFIX: Final = "runaway:"
_ACTION_TIMEOUT: Final = re.compile(r"deadline of [0-9.e+-]+ s exceeded|^runaway: ")


def action_deadline(seconds: float) -> str:
    """The ``raised`` text of an action that hit a ``seconds`` deadline."""
    return ACTION_DEADLINE_MESSAGE.format(seconds=seconds)


def is_action_timeout(raised: Any) -> bool:
    """Was an action's ``raised`` the per-action deadline, or a runaway the kit stopped (a
    timeout, not an error)?"""
    return isinstance(raised, str) and _ACTION_TIMEOUT.search(raised) is not None


def mode_of(scenario: Mapping[str, Any]) -> str:
    """The registry mode a scenario sets up: ``native`` (the default), ``code`` or ``both``."""
    return str(scenario.get("registry", {}).get("mode", "native"))
