"""Named rule sets for ``--rules``: ``portable`` and ``smoke``.

``smoke`` (:data:`SMOKE`) is a rule or two of every group, the optional capabilities among
them: enough to show that a transport, an installed package or a harness carries each
group, in a few seconds. It judges nothing the whole run does not.

The portable set judges any agent framework's tool pipeline only on invariants every such
design claims: consent binds what runs; a call that is not granted (a denial, an ask nobody
can answer, every answer but a grant, a malformed decision) does not run; each call has
exactly one outcome; no body runs after a cancellation before dispatch; nothing waits on an
abandoned body; hidden tools look missing; nothing host-only reaches the model. The rest of
SPEC.md describes one design -- a decision waterfall with ``next()``, around-wrappers owning
a signal, a finalizer, deep-frozen arguments and results, typed output declarations, Code
Mode... -- that a framework may simply not have, or do otherwise on purpose: those rules
are listed in :data:`EXCLUDED` with the reason, and the clauses of a portable rule that
encode one design in :data:`EXCLUDED_CLAUSES` (a portable rule judged on some clauses only
is in :data:`PORTABLE_CLAUSES`). The README quotes the table. Rules of a stage an adapter
lacks are not-applicable anyway (its capabilities; which rules are about which stage is the
stage table's ``rules`` column, :func:`conformance.scenario.stages.stages_of`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from conformance.scenario.stages import stages_of

__all__ = [
    "EXCLUDED",
    "EXCLUDED_CLAUSES",
    "PORTABLE",
    "PORTABLE_CLAUSES",
    "RULE_SETS",
    "SMOKE",
    "Selection",
    "stages_of",
]

#: A selection of rules: rule ID -> the clauses selected (``Rule.clauses`` names), or None
#: for the whole rule. Only the selected clauses' verdicts count (a verdict judging the rule
#: as a whole, ``clause=None``, always counts).
Selection = Mapping[str, frozenset[str] | None]

#: The framework-neutral rules, and the invariant each stands for.
PORTABLE: Final[Mapping[str, str]] = {
    "DEF-2": "only name, description and parameters reach the model, and the listed schemas "
    "are no live handle on what the framework sends next",
    "PRE-2": "a denial closes the call with its reason; the body never runs",
    "PRE-3": "an ask nobody can answer does not run",
    "PRE-4": "only an explicit grant runs a gated call; every other answer does not run it",
    "PRE-6": "a malformed decision, or a throwing policy, fails closed (judged on what the "
    "adapter hands the framework in the framework's own terms)",
    "GUARD-1": "a guard's objection is final: no later stage turns it into permission",
    "GUARD-2": "a throwing or malformed guard denies",
    "PIPE-5": "consent binds what runs: the body gets the arguments the approver saw",
    "PIPE-7": "consent binds what runs: the body is the tool the approver was asked about",
    "POST-4": "a throwing post-execute hook does not turn into a success (an error result, or "
    "the run raising where the framework declares it)",
    "RES-1": "each call has exactly one outcome: a result or a declared closed form, and a "
    "result is heard once by each observer",
    "RES-2": "where no observer writes, the observers and the caller agree on the result",
    "CANCEL-2": "no body runs after a cancellation before dispatch",
    "CANCEL-4": "a started body is never abandoned: the call ends after the body settled",
    "SCOPE-1": "a hidden tool is indistinguishable from a missing one",
}

#: Portable rules judged on some of their clauses only (the others encode one design, and
#: :data:`EXCLUDED_CLAUSES` says why). A portable rule not listed here counts whole.
PORTABLE_CLAUSES: Final[Mapping[str, frozenset[str]]] = {
    "PRE-4": frozenset({"answers"}),
    "RES-1": frozenset({"once"}),
    "RES-2": frozenset({"agree"}),
    "CANCEL-2": frozenset({"body"}),
}

#: The clauses of portable rules left out of the set, each with the reason.
EXCLUDED_CLAUSES: Final[Mapping[str, Mapping[str, str]]] = {
    "PRE-4": {
        "reasons": "distinct denial reasons per answer are upstream's contract (rejected, "
        "cancelled, unavailable, no channel); an interrupt-then-resume framework has no "
        "'unavailable' answer to word",
        "identity-rewrite": "a rewritten approval request is the reference's question; where "
        "the approval host owns the message history (pydantic-ai) the history and the "
        "answers it hands back are the host's own, self-consistent record",
    },
    "RES-1": {
        "after-finalization": "finalizeContent is this spec's stage",
        "frozen": "deep-frozen executions and results are promised by no framework: callbacks "
        "get the live objects by design",
        "contained": "an observer's exception propagating out of the run is the frameworks' "
        "convention for hook errors",
    },
    "RES-2": {
        "frozen": "an observer's write reaching the caller is aliasing no framework promises "
        "against (RES-1's frozen clause, seen from the caller)",
    },
    "CANCEL-2": {
        "code": "the ABORTED_BEFORE_DISPATCH result code is this spec's",
        "stages": "which stages an already-aborted entry skips is this spec's routing",
    },
}

#: Every other rule with a predicate, and why it is one design's rather than everyone's.
EXCLUDED: Final[Mapping[str, str]] = {
    "PRE-1": "the waterfall with next() is this spec's listener model",
    "PRE-5": "no arguments in the approval request is this spec's way to PIPE-5; PIPE-5 "
    "judges what matters (the approver sees what runs) whatever the request carries",
    "PRE-7": "async listeners observing exec.signal: this spec's signal model",
    "PRE-8": "scope-filtered listeners: this spec's agent scoping",
    "GUARD-3": "scoped guards: this spec's agent scoping",
    "PIPE-2": "one deep-frozen lossless snapshot, and NaN as INVALID_ARGS before any policy, "
    "are the reference's design: no framework freezes, pydantic and json accept NaN, and "
    "openai-agents asks a human about uninspectable arguments on purpose",
    "PIPE-3": "no stage rewriting the call is the reference's immutable execution: frameworks "
    "hand hooks the live call on purpose (pydantic-ai's argument hooks, Vercel's "
    "refineToolInput and toolApproval, openai-agents' shared ToolContext) and record what "
    "ran; what consent needs -- the approved arguments run -- is PIPE-5",
    "PIPE-4": "the kit's tools are raw JSON Schema, and every framework documents its "
    "raw-schema registration as unvalidated (its typed tools validate): a guaranteed, "
    "uninformative failure",
    "EXEC-1": "around-wrappers owning a replaceable signal: this spec's signal model",
    "EXEC-2": "caller cancellation surviving a replaced signal: this spec's signal model",
    "EXEC-3": "wrapper-authored successes normalized through the output declaration",
    "EXEC-4": "wrapper failures bypassing post-execute: this spec's stage routing",
    "EXEC-5": "the timeout policy as an outermost wrapper: this spec's design",
    "POST-1": "which outcomes post-execute sees: this spec's stage routing",
    "POST-2": "accept with content or value: this spec's decision vocabulary",
    "POST-3": "block with feedback: this spec's decision vocabulary",
    "POST-5": "deferred-context ordering: this spec's context model",
    "FIN-1": "finalizeContent is this spec's stage",
    "FIN-2": "finalizeContent is this spec's stage",
    "FIN-3": "finalizeContent is this spec's stage",
    "FIN-4": "finalizeContent is this spec's stage",
    "CTX-1": "deferred contexts are this spec's model",
    "CTX-2": "concluding the turn is this spec's model",
    "OUT-1": "the canonical value and output schema are this spec's output declaration",
    "OUT-2": "content as a pure render of the output declaration",
    "OUT-3": "presentationMeta is this spec's presentation layer",
    "OUT-5": "rejection of non-lossless values at the output source",
    "RES-3": "the result's exact shape (Error: prefix, error.info) is this spec's wire form",
    "DEF-1": "the three named definition layers (DEF-2 judges what reaches the model)",
    "DEF-3": "the mandatory output declaration",
    "DEF-4": "timeoutMs as a cooperative declaration",
    "DEF-5": "layered registration with agent-scoped shadowing",
    "DEF-6": "register returning a disposer",
    "PIPE-1": "the order of this spec's five stages (wrappers inside the policy stages)",
    "PIPE-6": "a disposer for every listener and guard registration: this spec's registration API",
    "CANCEL-1": "the caller-owned AbortSignal in every stage: this spec's signal model",
    "CANCEL-3": "the ABORTED result code after dispatch",
    "CONC-1": "exclusive by default is this spec's choice; frameworks choose parallel",
    "CONC-2": "the batch scheduler's interface",
    "CODE-1": "Code Mode is this spec's",
    "CODE-2": "Code Mode is this spec's",
    "CODE-3": "Code Mode is this spec's",
    "CODE-4": "Code Mode is this spec's",
    "SCOPE-2": "one visibility view across native and Code Mode",
}

#: A rule or two per group, the optional capabilities among them (see the module's text).
SMOKE: Final = (
    "PRE-1", "PRE-4", "GUARD-1", "SCOPE-1", "DEF-3", "PIPE-1", "OUT-1", "EXEC-1", "POST-1",
    "FIN-2", "RES-1", "CTX-1", "CONC-1", "CANCEL-1", "CODE-1",
)  # fmt: skip

#: ``--rules NAME`` selects a named set.
RULE_SETS: Final[Mapping[str, Selection]] = {
    "portable": {rid: PORTABLE_CLAUSES.get(rid) for rid in PORTABLE},
    "smoke": dict.fromkeys(SMOKE),
}
