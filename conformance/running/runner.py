"""Run the suite against one adapter and tally, rule by rule, what held.

Sources of scenarios, in order: the hand-written fixtures (``fixtures/rules``,
``fixtures/examples``), the regression corpus (``fixtures/regressions``), and one
hypothesis property per rule with a focused strategy. Every scenario, from
any source, is judged against *every* rule predicate; a rule's ``checks`` count
how often its premise held. A failing property is shrunk by hypothesis and the
minimal scenario is saved as a replayable counterexample.

Statuses: ``pass`` (checked, no violation), ``fail`` (a violation: a defect),
``difference`` (violations only of what the implementation's contract does not promise),
``error`` (the implementation raised or its trace was malformed),
``timeout`` (an action hit its deadline), ``not-applicable`` (needs a capability the
adapter does not declare), ``untested`` (not black-box checkable),
``not-exercised`` (no scenario met the premise). ``--expect`` adds
``expected-fail`` and ``unexpected-pass``.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import hypothesis
from hypothesis import HealthCheck, Phase, given, settings

from conformance import __version__
from conformance.judging.contract import Contract, classify
from conformance.judging.evaluate import Evaluation, KitError, NoTrace, evaluate, judge
from conformance.judging.rule_sets import RULE_SETS, Selection, stages_of
from conformance.judging.rules import FOCUS, RULES, Focus, Verdict
from conformance.running.interrupt import interrupted, interruptible
from conformance.running.outcomes import Failure, RuleOutcome, RunResult, pointers
from conformance.running.parallel import parallel_spec, run_parallel
from conformance.scenario.bounds import counterexample_text
from conformance.scenario.corpus import Corpus, CorpusWriter, Entry
from conformance.scenario.schema import FIXTURES, load_json, validate
from conformance.scenario.surface import attempted, cells, coverage, probe_scenario
from conformance.seam.adapter import Adapter, AdapterInfo, requirements, trim
from conformance.vocab import Status

__all__ = [
    "PROFILES",
    "Failure",
    "KitError",
    "Partial",
    "RuleOutcome",
    "RunResult",
    "StopEarly",
    "Tally",
    "Tick",
    "Ticks",
    "Unit",
    "corpus_units",
    "counterexample",
    "default_jobs",
    "interrupted",
    "interruptible",
    "judge",
    "partial_result",
    "plan",
    "run_suite",
    "select",
    "select_rules",
]


PROFILES: Mapping[str, Mapping[str, Any]] = {
    "quick": {"max_examples": 30, "derandomize": True},
    "ci": {"max_examples": 100, "derandomize": True},
    "thorough": {"max_examples": 1000, "derandomize": False},
}
MAX_FAILURES_KEPT = 3
SEED_SALT = ""  # see stable_seed
FIXTURES_PER_UNIT = 12  # fixtures handed to a worker at once (-j N)
CORPUS_PER_UNIT = 100  # corpus scenarios of one source in one unit


# -------------------------------------------------------------------- the tally


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
        """Write a self-contained, replayable counterexample; return its path.

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
        path = self.report_dir / "counterexamples" / f"{rule_id}-{digest}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(counterexample_text(case), encoding="utf-8")  # non-JSON: by repr
        return str(path)

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
        missing = (focus.needs | stages_of(rule_id)) - self.info.capabilities
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
        names = unit.names or (None,) * len(unit.fixtures)
        for fixture, name in zip(unit.fixtures, names, strict=True):
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


def _shown(path: Path) -> str:
    """A fixture's path as a user would name it: relative to the bundled fixtures if it is one."""
    try:
        return str(Path("fixtures") / path.relative_to(FIXTURES))
    except ValueError:
        return str(path)


def fixture_files(rule_ids: Sequence[str]) -> list[Path]:
    """Fixture files relevant to the selected rules (all examples and regressions always run)."""
    files: list[Path] = []
    for rid in rule_ids:
        files += sorted((FIXTURES / "rules" / rid).glob("*.json"))
    files += sorted((FIXTURES / "examples").glob("*.json"))
    files += sorted((FIXTURES / "regressions").glob("*.json"))
    return files


def select(patterns: str | None) -> dict[str, frozenset[str] | None]:
    """The :data:`~conformance.judging.rule_sets.Selection` ``patterns`` names (``None``: every
    rule, whole), in SPEC order.

    ``patterns`` is comma-separated; each item is

    * a rule ID or a glob (``PRE-3``, ``PRE-*``): those rules, every clause;
    * ``ID:clause+clause`` (one exact rule ID): that rule judged on those clauses only
      (its ``Rule.clauses``; ``toolreg-conformance rules`` lists them);
    * a rule set's name (:data:`~conformance.judging.rule_sets.RULE_SETS`, e.g. ``portable``):
      its rules this kit has, on the clauses the set names.

    A rule named twice gets the union (a whole rule wins over some of its clauses). Every
    item must name at least one rule and every clause must be one its rule declares: a
    misspelt ID or clause is a ValueError, never silently dropped, and so is an empty list.
    """
    if patterns is None:
        return dict.fromkeys(RULES)
    items = [p.strip() for p in patterns.split(",") if p.strip()]
    if not items:
        raise ValueError(f"--rules {patterns!r} names no rule (e.g. 'PRE-*,FIN-2')")
    chosen: dict[str, frozenset[str] | None] = {}

    def add(rule_id: str, clauses: frozenset[str] | None) -> None:
        if rule_id in chosen:
            before = chosen[rule_id]
            chosen[rule_id] = None if before is None or clauses is None else before | clauses
        else:
            chosen[rule_id] = clauses

    unmatched: list[str] = []
    for item in items:
        if item in RULE_SETS:  # a named set stands for its rules this kit has
            for rule_id, clauses in RULE_SETS[item].items():
                if rule_id in RULES:
                    add(rule_id, _clauses(rule_id, clauses, f"rule set {item!r}"))
        elif ":" in item:
            rule_id, _, named = item.partition(":")
            rule_id = rule_id.strip()
            if rule_id not in RULES:
                raise ValueError(
                    f"--rules {item!r}: a clause selection needs one exact rule ID before the "
                    f"':' ({rule_id!r} is none; toolreg-conformance rules lists them)"
                )
            wanted = [c.strip() for c in named.split("+")]
            if not all(wanted):
                raise ValueError(f"--rules {item!r}: name the clauses as ID:clause+clause")
            add(rule_id, _clauses(rule_id, frozenset(wanted), f"--rules {item!r}"))
        else:
            matched = [rid for rid in RULES if fnmatch.fnmatchcase(rid, item)]
            if not matched:
                unmatched.append(item)
            for rule_id in matched:
                add(rule_id, None)
    if unmatched:
        names = ", ".join(repr(p) for p in unmatched)
        raise ValueError(
            f"--rules: {names} matches no rule ID (toolreg-conformance rules lists them)"
        )
    return {rid: chosen[rid] for rid in RULES if rid in chosen}


def _clauses(rule_id: str, clauses: frozenset[str] | None, where: str) -> frozenset[str] | None:
    """``clauses`` of ``rule_id``, each checked against the clauses the rule declares."""
    if clauses is None:
        return None
    declared = RULES[rule_id].clauses
    unknown = sorted(clauses - set(declared))
    if unknown:
        known = ", ".join(declared) or "none"
        raise ValueError(
            f"{where}: {', '.join(repr(c) for c in unknown)} is not a clause of {rule_id} "
            f"(it declares: {known})"
        )
    return clauses


def select_rules(patterns: str | None) -> list[str]:
    """The rule IDs ``patterns`` (``None``: every rule) names, in SPEC order (see
    :func:`select`, which also says which clauses of each)."""
    return list(select(patterns))


@dataclass(frozen=True)
class Unit:
    """One unit of a run's work: some fixtures (``rule`` None) or the property of ``rule``."""

    label: str
    rule: str | None = None
    fixtures: tuple[Mapping[str, Any], ...] = ()
    names: tuple[str, ...] = ()  # the fixtures' paths, as a user names them

    @property
    def targets(self) -> set[str]:
        """The rules whose sources this unit holds."""
        if self.rule is not None:
            return {self.rule}
        return {str(r) for fixture in self.fixtures for r in fixture.get("rules", [])}


def load_fixtures(rule_ids: Sequence[str]) -> list[tuple[str, Mapping[str, Any]]]:
    """(shown path, scenario) of every fixture the selected rules run, validated."""
    out: list[tuple[str, Mapping[str, Any]]] = []
    for path in fixture_files(rule_ids):
        document = load_json(path)
        if path.parent.name == "regressions":  # a saved counterexample case
            fixture = {**document["scenario"], "rules": [document["rule"]]}
        else:
            fixture = document
        validate(fixture, "scenario", str(path))
        out.append((_shown(path), fixture))
    return out


def surface_sweep(
    rule_ids: Sequence[str], capabilities: Iterable[str]
) -> list[tuple[str, Mapping[str, Any]]]:
    """(name, scenario) of the probe of every attack-surface cell the capabilities allow
    and that threatens a selected rule (see :mod:`conformance.scenario.surface`).

    Each probe runs as a fixture: judged against every selected rule, its cell's rules
    counting it as a source. Every profile runs the sweep (about 350 small scenarios),
    so that every cell is attempted at least once whatever the generators draw.
    """
    selected = set(rule_ids)
    out: list[tuple[str, Mapping[str, Any]]] = []
    for cell in cells(capabilities):
        scenario = probe_scenario(cell) if selected & set(cell.rules) else None
        if scenario is not None:
            out.append((f"surface/{cell.id}", scenario))
    return out


def plan(
    rule_ids: Sequence[str], per_unit: int = 1, capabilities: Iterable[str] | None = None
) -> list[Unit]:
    """The run's work in order: the fixtures and the attack-surface sweep (``per_unit``
    to a unit; no sweep when ``capabilities`` is None), then each property."""
    fixtures = load_fixtures(rule_ids)
    if capabilities is not None:
        fixtures += surface_sweep(rule_ids, capabilities)
    units: list[Unit] = []
    for start in range(0, len(fixtures), per_unit):
        chunk = fixtures[start : start + per_unit]
        names = tuple(name for name, _ in chunk)
        label = f"fixture {names[0]}" if len(chunk) == 1 else f"fixtures {names[0]} ..."
        units.append(Unit(label, None, tuple(f for _, f in chunk), names))
    units += [Unit(f"property {rid}", rid) for rid in rule_ids if rid in FOCUS]
    return units


@dataclass(frozen=True)
class Tick:
    """How far a run is: told once as it starts (nothing done) and after every finished unit.

    A rule is done once every unit holding one of its sources has finished (a
    rule no unit holds, e.g. one without a predicate, is done from the start).
    """

    units_done: int
    units_total: int
    rules_done: int
    rules_total: int
    scenarios: int  # run so far
    elapsed_s: float
    unit: str | None = None  # the label of the unit that just finished (None: the run starts)


class Ticks:
    """Counts a run's finished units and tells ``tick`` a :class:`Tick` each time."""

    def __init__(
        self,
        units: Sequence[Unit],
        rule_ids: Sequence[str],
        tick: Callable[[Tick], None] | None,
        started: float | None = None,
    ) -> None:
        self.units = list(units)
        self.tick = tick
        self.started = time.monotonic() if started is None else started
        selected = set(rule_ids)
        self.rules_total = len(selected)
        self.waiting: Counter[str] = Counter()  # rule -> its units not finished yet
        for unit in self.units:
            self.waiting.update(unit.targets & selected)
        self.rules_done = self.rules_total - len(self.waiting)
        self.units_done = 0
        self.scenarios = 0

    def start(self) -> None:
        """Tell the opening tick: nothing done yet."""
        self._tell(None)

    def done(self, index: int, scenarios: int) -> None:
        """Unit ``index`` has finished; ``scenarios`` ran so far in the whole run."""
        unit = self.units[index]
        self.units_done += 1
        self.scenarios = scenarios
        for rid in unit.targets:
            if rid in self.waiting:
                self.waiting[rid] -= 1
                if not self.waiting[rid]:
                    del self.waiting[rid]
                    self.rules_done += 1
        self._tell(unit.label)

    def _tell(self, label: str | None) -> None:
        if self.tick is None:
            return
        elapsed = time.monotonic() - self.started
        self.tick(
            Tick(
                self.units_done,
                len(self.units),
                self.rules_done,
                self.rules_total,
                self.scenarios,
                elapsed,
                label,
            )
        )


def default_jobs() -> int:
    """``run -j``'s default: the machine's cores."""
    return os.cpu_count() or 1


def run_suite(
    adapter: Adapter,
    *,
    profile: str = "ci",
    rules: str | None = None,
    report_dir: Path | None = None,
    seed: int | None = None,
    progress: Callable[[str], None] = lambda line: None,
    jobs: int = 1,
    adapter_spec: str | None = None,
    tick: Callable[[Tick], None] | None = None,
    contract: Contract | None = None,
    corpus: Corpus | None = None,
    write_corpus: Path | None = None,
    fail_fast: str | None = None,
) -> RunResult:
    """Run the selected rules' fixtures and properties against ``adapter``; one result.

    ``rules`` is a selection as :func:`select` reads it (rules, globs, ``ID:clause``, a
    named set); only the selected clauses' verdicts count. ``contract`` classifies every
    violation (:mod:`conformance.judging.contract`): a broken promise is a defect (``fail``),
    anything else a ``difference``; without one every violation is a defect.

    ``corpus`` replays a frozen corpus instead of planning and drawing (see
    :mod:`conformance.scenario.corpus`); ``write_corpus`` records every scenario judged into
    that file; ``fail_fast`` ("any" or "all", corpus replays only, one process) stops once
    a selected rule has a problem ("any") or each one has ("all"): the result then says
    ``stopped_early``.

    ``jobs > 1`` with an ``adapter_spec`` (``reference``, ``python:MODULE:FACTORY``)
    splits the work across that many worker processes, each re-creating the
    adapter from the spec, and merges what they found in plan order: the same
    verdicts as one process. An out-of-process harness (stdio, HTTP) keeps its
    restart and give-up state across scenarios, so it always runs in one process.

    ``progress`` is told each unit's label: as it starts (one process) or as it
    finishes (``jobs > 1``). ``tick`` is told the completion counts (a
    :class:`Tick`) as the run starts and after every unit; without one, a
    ``progress`` that has a callable ``tick`` attribute is told them (so a
    command's progress printer gets the counts through any caller of run_suite).

    A KeyboardInterrupt (see :func:`interruptible`) ends the run early: the
    result is marked ``incomplete`` and ``not_run`` names the rules some of
    whose sources never ran.
    """
    if profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r}; expected one of {', '.join(PROFILES)}")
    started = time.monotonic()
    selection = select(rules)
    rule_ids = list(selection)
    tally = Tally(selection, adapter, report_dir, contract=contract)
    if fail_fast is not None and corpus is None:
        raise ValueError("fail_fast needs a corpus: a property cannot stop half-way")
    if write_corpus is not None:
        tally.recorded = []
    tally.fail_fast = fail_fast
    parallel = jobs > 1 and fail_fast is None and parallel_spec(adapter, adapter_spec)
    per_unit = FIXTURES_PER_UNIT if parallel else 1
    if corpus is not None:
        units = corpus_units(corpus, rule_ids, CORPUS_PER_UNIT)
    else:
        units = plan(rule_ids, per_unit, tally.info.capabilities)
    done: set[int] = set()
    ran_jobs = min(jobs, len(units)) if parallel else 1
    stopped: list[bool] = []

    def result() -> RunResult:
        left = [unit for index, unit in enumerate(units) if index not in done]
        not_run = sorted(set().union(*(u.targets for u in left)) & set(rule_ids)) if left else []
        diagnostics = getattr(adapter, "diagnostics", None)
        return RunResult(
            transport=diagnostics() if callable(diagnostics) else None,
            implementation=tally.info,
            profile=profile,
            seed=seed,
            rules=tally.finish(),
            coverage=coverage(tally.attempts, tally.info.capabilities, rule_ids),
            kit_errors=tally.kit_errors,
            duration_s=time.monotonic() - started,
            scenarios=tally.scenarios,
            incomplete=bool(left) and not stopped,
            not_run=[rid for rid in rule_ids if rid in not_run] if not stopped else [],
            jobs=ran_jobs,
            contract=contract.summary() if contract is not None else None,
            stopped_early=bool(stopped),
        )

    _Current.result = result
    try:
        if parallel:
            assert adapter_spec is not None
            run_parallel(
                tally,
                units,
                done,
                adapter_spec,
                ran_jobs,
                profile,
                seed,
                progress,
                tick=tick,
                started=started,
            )
        else:
            ticks = Ticks(units, rule_ids, tick, started)
            ticks.start()
            for index, unit in enumerate(units):
                progress(unit.label)
                tally.run_unit(unit, profile, seed)
                done.add(index)
                ticks.done(index, tally.scenarios)
    except KeyboardInterrupt:
        pass
    except StopEarly:
        stopped.append(True)
    finally:
        _Current.result = None
    if write_corpus is not None and tally.recorded is not None:
        writer = CorpusWriter(write_corpus, profile=profile, rules=rule_ids, info=tally.info)
        writer.add_all(tally.recorded)
        writer.close()
    return result()


def corpus_units(corpus: Corpus, rule_ids: Sequence[str], per_unit: int) -> list[Unit]:
    """A corpus's scenarios that are a source for a selected rule, or that every run judges
    (examples, regressions), as units: consecutive entries of one source together, at most
    ``per_unit`` to a unit."""
    selected = set(rule_ids)
    units: list[Unit] = []
    chunk: list[Entry] = []

    def flush() -> None:
        if chunk:
            source = chunk[0].source
            label = f"corpus {source}" + (f" ({len(chunk)})" if len(chunk) > 1 else "")
            fixtures = tuple(e.as_fixture() for e in chunk)
            units.append(Unit(label, None, fixtures, tuple(e.source for e in chunk)))
            chunk.clear()

    for entry in corpus.entries:
        if not entry.always and not selected & set(entry.targets):
            continue
        if chunk and (chunk[0].source != entry.source or len(chunk) >= per_unit):
            flush()
        chunk.append(entry)
    flush()
    return units


class _Current:
    """The run in progress: how to build its (partial) result at any moment."""

    result: Callable[[], RunResult] | None = None


def partial_result() -> RunResult | None:
    """The result of the run in progress so far (marked incomplete), or None outside a run.

    For the interrupt watchdog, which calls it from another thread while the run's own
    thread is stuck in an implementation that never returns.
    """
    current = _Current.result
    return None if current is None else current()
