"""The tally of a run: every scenario run and judged, its verdicts counted per rule.

:class:`Tally` runs one unit of work (some fixtures, or one rule's property under
hypothesis, with its profile), records each verdict (a defect or a difference, by the
contract), keeps the shrunk failures as replayable counterexamples, and gives each rule
its status at the end. Worker processes (:mod:`conformance.running.parallel`) hand back
a :class:`Partial` that merges in plan order.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import hypothesis
from hypothesis import HealthCheck, Phase, given, settings

from conformance._version import __version__
from conformance.judging.contract import Contract, classify
from conformance.judging.evaluate import Evaluation, KitError, NoTrace, evaluate
from conformance.judging.rule_sets import Selection, stages_of
from conformance.judging.rules import FOCUS, RULES, Focus, Verdict
from conformance.running.interrupt import interrupted
from conformance.running.outcomes import Failure, RuleOutcome, pointers
from conformance.running.plan import Unit
from conformance.scenario.cases import CASES_DIR, case_text
from conformance.scenario.schema import FixtureError
from conformance.scenario.surface import attempted
from conformance.seam.adapter import Adapter, AdapterInfo, requirements, trim
from conformance.vocab import Status

__all__ = [
    "MAX_FAILURES_KEPT",
    "PROFILES",
    "SEED_SALT",
    "Partial",
    "StopEarly",
    "Tally",
    "cache_dir",
    "counterexample",
    "keep_hypothesis_out_of_the_cwd",
    "stable_seed",
]


PROFILES: Mapping[str, Mapping[str, Any]] = {
    "quick": {"max_examples": 30, "derandomize": True},
    "ci": {"max_examples": 100, "derandomize": True},
    "thorough": {"max_examples": 1000, "derandomize": False},
}


MAX_FAILURES_KEPT = 3


SEED_SALT = ""  # see stable_seed


def counterexample(
    rule_id: str,
    info: AdapterInfo,
    scenario: Mapping[str, Any],
    trace: Mapping[str, Any] | None,
    required: list[str],
    verdicts: Sequence[Verdict] = (),
) -> dict[str, Any]:
    """A replayable case: the rule, the kit and the implementation, what was ``required``
    (the violated messages) and, when the ``verdicts`` point at the trace, their
    ``pointers`` (one per message: subject, call, event indices), the scenario, the trace."""
    case: dict[str, Any] = {
        "rule": rule_id,
        "kit": {"name": "toolreg-conformance", "version": __version__},
        "implementation": info.to_json(),
        "required": required,
    }
    found = pointers(verdicts)
    if found:
        case["pointers"] = [p.to_json() for p in found]
    case["scenario"] = scenario
    case["trace"] = trace
    return case


class _PropertyStopped(BaseException):
    """Ends a property once the implementation failed to answer (a BaseException, so
    hypothesis neither records it as a failure nor shrinks it)."""


@dataclass
class Partial:
    """What one unit of work (some fixtures, or one property) found: merged into a Tally."""

    outcomes: dict[str, RuleOutcome]
    kit_errors: list[str]
    scenarios: int
    sources: dict[str, int]
    skips: list[tuple[str, str, bool]]  # (rule, reason, overwrite) in the order noted
    leads: dict[str, Failure]  # a property's shrunk failure, first in its rule's list
    logs: list[tuple[str, int, str]] = field(default_factory=list)  # (logger, level, text)
    attempts: Counter[str] = field(default_factory=Counter)  # attack-surface cell -> attempts
    #: The scenarios judged, for a corpus (``--write-corpus``): (source, targets, scenario).
    recorded: list[tuple[str, tuple[str, ...], Mapping[str, Any]]] = field(default_factory=list)


class StopEarly(Exception):
    """``--fail-fast`` has seen enough: the run stops (not interrupted, not conformant)."""


class Tally:
    """Accumulates verdicts per rule across every scenario of a run."""

    def __init__(
        self,
        rule_ids: Sequence[str] | Selection,
        adapter: Adapter | None,
        report_dir: Path | None,
        info: AdapterInfo | None = None,
        contract: Contract | None = None,
    ) -> None:
        # rule -> the clauses judged (None: all); a plain list of IDs selects whole rules
        self.selection: dict[str, frozenset[str] | None] = (
            dict(rule_ids) if isinstance(rule_ids, Mapping) else dict.fromkeys(rule_ids)
        )
        self.rule_ids = list(self.selection)
        self.contract = contract
        self.adapter = adapter
        self.info = info if info is not None else _describe(adapter)
        self.report_dir = report_dir
        self.outcomes = {rid: self._outcome(rid) for rid in self.rule_ids}
        self.kit_errors: list[str] = []
        self.scenarios = 0
        self.sources: dict[str, int] = {
            rid: 0 for rid in self.rule_ids
        }  # runnable sources per rule
        self.skips: list[tuple[str, str, bool]] = []
        self.leads: dict[str, Failure] = {}
        self.attempts: Counter[str] = Counter()  # attack-surface cells the traces attempted
        #: Recording for a corpus (None: not recording): see :mod:`conformance.scenario.corpus`.
        self.recorded: list[tuple[str, tuple[str, ...], Mapping[str, Any]]] | None = None
        #: ``--fail-fast``: "any" stops at the first problem (a violation, an error or a
        #: timeout) of a selected rule, "all" once every selected rule has a violation (a
        #: mutant is killed only when each target rule fails: an error is no kill).
        self.fail_fast: str | None = None
        #: Rules the adapter doctor found blind (a declared capability not delivered), each
        #: with its message: reported ``error`` (adapter), never ``pass`` nor ``fail``.
        self.adapter_errors: dict[str, str] = {}

    def _outcome(self, rule_id: str) -> RuleOutcome:
        rule = RULES[rule_id]
        outcome = RuleOutcome(rule_id, rule.title, rule.group)
        if rule.clauses:
            chosen = self.selection.get(rule_id)
            outcome.clauses = [c for c in rule.clauses if chosen is None or c in chosen]
        if self.contract is not None:
            outcome.promised = self.contract.promised(rule_id)
        return outcome

    # -------------------------------------------------------------- running

    def missing(self, scenario: Mapping[str, Any]) -> frozenset[str]:
        return requirements(scenario) - self.info.capabilities

    def capability_reason(self, missing: Iterable[str]) -> str:
        """``needs capability X`` plus, when the implementation said, why it lacks X."""
        parts = []
        for capability in sorted(missing):
            why = self.info.missing.get(capability)
            parts.append(f"{capability} ({why})" if why else capability)
        return f"needs capability {', '.join(parts)}"

    def skip(self, rule_id: str, reason: str, *, overwrite: bool) -> None:
        """Note why ``rule_id`` could not run a source (kept only if nothing else ran)."""
        outcome = self.outcomes[rule_id]
        outcome.skipped = reason if overwrite else (outcome.skipped or reason)
        self.skips.append((rule_id, reason, overwrite))

    def evaluate(self, scenario: Mapping[str, Any]) -> Evaluation:
        """Run and judge one scenario with every selected rule (KitError if a check crashes)."""
        assert self.adapter is not None
        self.scenarios += 1
        try:
            evaluation = evaluate(self.adapter, scenario, rules=self.selection)
            self.attempts.update(attempted(evaluation.trace))
            return evaluation
        finally:
            if interrupted():  # the implementation swallowed the KeyboardInterrupt
                raise KeyboardInterrupt

    def hunted(self, rule_id: str, verdict: Verdict, scenario_id: str) -> bool:
        """Does ``rule_id``'s property hunt (and shrink) this violation?

        A rule the contract promises (some clause of it) hunts its defects: a difference
        must not end the search for a broken promise. A rule it does not promise hunts
        its differences, so that they too are shown shrunk.
        """
        if self.contract is None or rule_id not in self.contract.promises:
            return True
        return classify(self.contract, rule_id, verdict.clause, scenario_id).defect

    def record(
        self,
        evaluation: Evaluation,
        *,
        targets: Iterable[str],
        keep: Callable[[str, Verdict], bool] = lambda rid, verdict: True,
    ) -> None:
        """Count verdicts; note crashes and timeouts of actions against ``targets``.

        The violations ``keep`` accepts are kept, one failure per clause they judge,
        classified by the contract (a defect, or a difference), up to
        ``MAX_FAILURES_KEPT`` of each kind per rule.
        """
        scenario, trace = evaluation.scenario, evaluation.trace
        scenario_id = str(scenario.get("id"))
        for rid in self.rule_ids:
            found = evaluation.verdicts.get(rid, [])
            outcome = self.outcomes[rid]
            outcome.checks += len(found)
            bad = [v for v in found if not v.ok and keep(rid, v)]
            path: str | None = None
            for clause in dict.fromkeys(v.clause for v in bad):
                these = [v for v in bad if v.clause == clause]
                kind = classify(self.contract, rid, clause, scenario_id)
                bucket = outcome.failures if kind.defect else outcome.differences
                if len(bucket) >= MAX_FAILURES_KEPT:
                    continue
                if path is None:
                    path = self.save(rid, scenario, trace, [v.message for v in bad], bad)
                message = "; ".join(f"{v.subject}: {v.message}" for v in these[:3])
                bucket.append(
                    Failure(message, scenario_id, path, None, clause, kind.why, pointers(these[:3]))
                )
        raised, how = evaluation.raised, evaluation.raised_status
        for rid in targets:
            if rid not in self.outcomes or how is None:
                continue
            outcome = self.outcomes[rid]
            bucket = outcome.timeouts if how is Status.TIMEOUT else outcome.errors
            if len(bucket) < MAX_FAILURES_KEPT:
                path = self.save(rid, scenario, trace, raised)
                message = f"an action raised: {raised[0]}"
                bucket.append(Failure(message, str(scenario.get("id")), path, "raised"))

    def problem(
        self, scenario: Mapping[str, Any], targets: Iterable[str], problem: NoTrace
    ) -> None:
        """Note a scenario that produced no trace against ``targets``."""
        for rid in targets:
            if rid not in self.outcomes:
                continue
            outcome = self.outcomes[rid]
            if problem.status is Status.NOT_APPLICABLE:
                self.skip(rid, problem.message, overwrite=False)
                continue
            bucket = outcome.timeouts if problem.status is Status.TIMEOUT else outcome.errors
            if len(bucket) < MAX_FAILURES_KEPT:
                required = [problem.message]
                if problem.stderr:
                    required.append(f"harness stderr:\n{problem.stderr}")
                path = self.save(rid, scenario, None, required)
                scenario_id = str(scenario.get("id"))
                bucket.append(Failure(problem.message, scenario_id, path, problem.category))

    def save(
        self,
        rule_id: str,
        scenario: Mapping[str, Any],
        trace: Mapping[str, Any] | None,
        required: list[str],
        verdicts: Sequence[Verdict] = (),
    ) -> str | None:
        """Write a self-contained, replayable counterexample (checked against the case
        schema); return its path relative to the report directory, the one base a report's
        case paths have (see :mod:`conformance.scenario.cases`).

        ``verdicts`` (the violations ``required`` says, in its order) add the case's
        ``pointers`` when any of them points at the trace: one per message.
        """
        if self.report_dir is None:
            return None
        case = counterexample(rule_id, self.info, scenario, trace, required, verdicts)
        chosen = self.selection.get(rule_id)
        if chosen is not None:  # judged on some clauses only: a replay judges the same
            case["clauses"] = [c for c in RULES[rule_id].clauses if c in chosen]
        digest = hashlib.sha256(json.dumps(scenario, sort_keys=True).encode()).hexdigest()[:10]
        written = f"{CASES_DIR}/{rule_id}-{digest}.json"
        path = self.report_dir / written
        try:
            text = case_text(case, str(path))  # non-JSON parts: by repr
        except FixtureError as e:
            raise KitError(f"a counterexample breaks case.schema.json: {e}") from None
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return written

    # -------------------------------------------------------------- sources

    def run_fixture(self, fixture: Mapping[str, Any], name: str | None = None) -> None:
        targets = [r for r in fixture.get("rules", []) if r in self.outcomes]
        if self.recorded is not None:  # its own rules, whichever of them this run selected
            rules = tuple(str(r) for r in fixture.get("rules", []))
            self.recorded.append((name or str(fixture.get("id")), rules, fixture))
        fixture = trim(fixture, self.info.capabilities)
        missing = self.missing(fixture)
        if missing:
            for rid in targets:
                self.skip(rid, self.capability_reason(missing), overwrite=True)
            return
        try:
            evaluation = self.evaluate(fixture)
        except KitError as e:
            self.kit_errors.append(str(e))
            for rid in targets:
                self.sources[rid] += 1
            return
        no_trace = evaluation.no_trace
        if no_trace is None or no_trace.status is not Status.NOT_APPLICABLE:
            for rid in targets:
                self.sources[rid] += 1
        if no_trace is not None:
            self.problem(fixture, targets, no_trace)
        else:
            self.record(evaluation, targets=targets)
        if self.fail_fast is not None and self.enough():
            raise StopEarly

    def enough(self) -> bool:
        """Has ``--fail-fast`` seen what it waits for (see :attr:`fail_fast`)?"""
        if self.fail_fast == "any":
            return any(o.problems() for o in self.outcomes.values())
        return all(o.failures for o in self.outcomes.values())

    def stage_gap(self, rule_id: str) -> frozenset[str]:
        """The stages ``rule_id`` is about that the implementation does not have."""
        return stages_of(rule_id) - self.info.capabilities

    def run_property(self, rule_id: str, focus: Focus, profile: str, seed: int | None) -> None:
        missing = focus.needs - self.info.capabilities
        if missing:
            self.skip(rule_id, self.capability_reason(missing), overwrite=True)
            return
        last: dict[str, Any] = {}
        options = dict(PROFILES[profile])
        conf = settings(
            database=None if options.get("derandomize") else _example_database(),
            deadline=None,
            suppress_health_check=list(HealthCheck),
            phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink],
            print_blob=False,
            report_multiple_bugs=False,
            **options,
        )
        # Once the implementation fails to answer (crash, timeout, protocol...), the
        # property stops calling it and ends at once: no later example is generated,
        # run or shrunk, so nothing replays a failure the report already holds, and a
        # harness that keeps hanging costs one deadline per property, not a budget's worth.
        stopped: list[NoTrace] = []

        @conf
        @given(focus.strategy)
        def prop(scenario: dict[str, Any]) -> None:
            if self.recorded is not None and not stopped:
                drawn = {**scenario, "id": f"generated/{rule_id}"}
                self.recorded.append((f"generated/{rule_id}", (rule_id,), drawn))
            scenario = {**trim(scenario, self.info.capabilities), "id": f"generated/{rule_id}"}
            if stopped:
                raise _PropertyStopped
            missing = self.missing(scenario)
            if missing:
                self.skip(rule_id, self.capability_reason(missing), overwrite=False)
                return
            evaluation = self.evaluate(scenario)
            no_trace = evaluation.no_trace
            if no_trace is not None and no_trace.status is Status.NOT_APPLICABLE:
                self.problem(scenario, [rule_id], no_trace)
                hypothesis.reject()
            self.sources[rule_id] = max(self.sources[rule_id], 1)
            if no_trace is not None:
                self.problem(scenario, [rule_id], no_trace)
                stopped.append(no_trace)
                return
            sid = str(scenario["id"])
            self.record(
                evaluation,
                targets=[rule_id],
                keep=lambda rid, v: rid != rule_id or not self.hunted(rid, v, sid),
            )
            bad = [v for v in evaluation.violations(rule_id) if self.hunted(rule_id, v, sid)]
            if bad:
                last["case"] = (scenario, evaluation.trace, bad)
                raise AssertionError(bad[0].message)

        if options.get("derandomize"):
            # hypothesis derives a derandomized run's seed from the test function's
            # source; the rule ID keeps the examples stable across edits of this runner.
            prop = hypothesis.seed(stable_seed(rule_id))(prop)
        elif seed is not None:
            prop = hypothesis.seed(seed)(prop)
        try:
            prop()
        except (AssertionError, hypothesis.errors.Flaky) as e:
            # Flaky: a replay of the failing example behaved differently (a flaky
            # implementation); the failure it showed is still a failure.
            if "case" not in last:  # not our assertion: the kit's fault
                self.kit_errors.append(f"property {rule_id}: {type(e).__name__}: {e}")
                return
            scenario, trace, bad = last["case"]  # the last failing example is the shrunk one
            outcome = self.outcomes[rule_id]
            path = self.save(rule_id, scenario, trace, [v.message for v in bad], bad)
            clause = bad[0].clause
            these = [v for v in bad if v.clause == clause]
            message = "; ".join(f"{v.subject}: {v.message}" for v in these[:3])
            kind = classify(self.contract, rule_id, clause, str(scenario["id"]))
            lead = Failure(
                message, scenario["id"], path, None, clause, kind.why, pointers(these[:3])
            )
            (outcome.failures if kind.defect else outcome.differences).insert(0, lead)
            self.leads[rule_id] = lead
        except (hypothesis.errors.Unsatisfiable, _PropertyStopped):
            pass  # every example was skipped, or the implementation stopped answering: recorded
        except KitError as e:
            self.kit_errors.append(str(e))
        except Exception as e:  # hypothesis itself or a strategy broke: the kit's fault
            self.kit_errors.append(f"property {rule_id}: {type(e).__name__}: {e}")

    def run_unit(self, unit: Unit, profile: str, seed: int | None) -> None:
        """Run one unit of work: some fixture files, or one rule's property."""
        if unit.rule is not None:
            self.run_property(unit.rule, FOCUS[unit.rule], profile, seed)
            return
        for fixture, name in unit.scenarios():
            self.run_fixture(fixture, name)

    # --------------------------------------------------------------- merging

    def partial(self) -> Partial:
        return Partial(
            self.outcomes,
            self.kit_errors,
            self.scenarios,
            self.sources,
            self.skips,
            self.leads,
            attempts=self.attempts,
            recorded=self.recorded or [],
        )

    def merge(self, part: Partial) -> None:
        """Add what a unit found elsewhere, as if it had run here, after what ran so far."""
        self.kit_errors += part.kit_errors
        self.scenarios += part.scenarios
        self.attempts.update(part.attempts)
        if self.recorded is not None:
            self.recorded += part.recorded
        for rid, found in part.outcomes.items():
            outcome = self.outcomes[rid]
            outcome.checks += found.checks
            lead = part.leads.get(rid)
            for mine, theirs in (
                (outcome.failures, [f for f in found.failures if f is not lead]),
                (outcome.differences, [f for f in found.differences if f is not lead]),
                (outcome.errors, found.errors),
                (outcome.timeouts, found.timeouts),
            ):
                mine += theirs[: max(0, MAX_FAILURES_KEPT - len(mine))]
            if lead is not None:
                differs = any(f is lead for f in found.differences)
                (outcome.differences if differs else outcome.failures).insert(0, lead)
            self.sources[rid] += part.sources[rid]
        for rid, reason, overwrite in part.skips:
            self.skip(rid, reason, overwrite=overwrite)

    # --------------------------------------------------------------- result

    def finish(self) -> list[RuleOutcome]:
        for rid, outcome in self.outcomes.items():
            rule = RULES[rid]
            gap = self.stage_gap(rid)
            if rule.check is None:
                outcome.status, outcome.reason = Status.UNTESTED, rule.untested
            elif gap:  # a rule about a stage the implementation lacks is never judged
                outcome.status, outcome.reason = Status.NOT_APPLICABLE, self.capability_reason(gap)
            elif rid in self.adapter_errors:  # the adapter does not deliver what it judges
                outcome.status = Status.ERROR
                message = self.adapter_errors[rid]
                # its violations may be the adapter's: none is reported as the implementation's
                outcome.failures, outcome.differences = [], []
                outcome.errors.insert(0, Failure(message, "doctor", None, "undelivered"))
            elif outcome.failures:
                outcome.status = Status.FAIL
            elif outcome.errors:
                outcome.status = Status.ERROR
            elif outcome.timeouts:
                outcome.status = Status.TIMEOUT
            elif outcome.differences:  # failures, none of them a broken promise
                outcome.status = Status.DIFFERENCE
            elif outcome.checks:
                outcome.status = Status.PASS
            elif outcome.skipped and not self.sources[rid]:
                outcome.status, outcome.reason = Status.NOT_APPLICABLE, outcome.skipped
            else:
                outcome.status, outcome.reason = (
                    Status.NOT_EXERCISED,
                    "no scenario met the rule's premise",
                )
        return list(self.outcomes.values())


def stable_seed(rule_id: str, salt: str = SEED_SALT) -> int:
    """The seed of ``rule_id``'s property in the derandomized profiles (quick, ci)."""
    return int.from_bytes(hashlib.sha256(f"{salt}{rule_id}".encode()).digest()[:8], "big")


def _describe(adapter: Adapter | None) -> AdapterInfo:
    assert adapter is not None, "a Tally needs an adapter or its description"
    return adapter.describe()


def _example_database() -> Any:
    """The thorough profile keeps hypothesis' example database between runs.

    It lives in ``$TOOLREG_CONFORMANCE_CACHE`` (default: ``$XDG_CACHE_HOME`` or
    ``~/.cache``, then ``toolreg-conformance``), never in the current directory.
    """
    from hypothesis.database import DirectoryBasedExampleDatabase

    return DirectoryBasedExampleDatabase(str(cache_dir() / "examples"))


def keep_hypothesis_out_of_the_cwd() -> None:
    """Hypothesis keeps its files (a unicode cache, example databases) in ``./.hypothesis``
    unless told otherwise: the kit's commands put them under :func:`cache_dir`."""
    if not os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY"):
        from hypothesis.configuration import set_hypothesis_home_dir

        set_hypothesis_home_dir(cache_dir() / "hypothesis")


def cache_dir() -> Path:
    """Where the kit keeps what it caches between runs (see :func:`_example_database`)."""
    explicit = os.environ.get("TOOLREG_CONFORMANCE_CACHE")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "toolreg-conformance"
