"""Run the suite against one adapter and tally, rule by rule, what held.

Sources of scenarios, in order: the hand-written fixtures (``fixtures/rules``,
``fixtures/examples``), the regression corpus (``fixtures/regressions``), and one
hypothesis property per rule with a focused strategy. Every scenario, from
any source, is judged against *every* rule predicate; a rule's ``checks`` count
how often its premise held. A failing property is shrunk by hypothesis and the
minimal scenario is saved as a replayable counterexample.

Statuses: ``pass`` (checked, no violation), ``fail`` (a violation),
``error`` (the implementation raised or its trace was malformed),
``timeout`` (an action hit its deadline), ``skipped`` (needs a capability the
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
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import hypothesis
from hypothesis import HealthCheck, Phase, given, settings

from conformance import __version__
from conformance.core.adapter import (
    Adapter,
    AdapterInfo,
    ImplementationFailure,
    ScenarioSkipped,
    requirements,
)
from conformance.core.rules import FOCUS, RULES, Focus, Verdict
from conformance.core.scenario import FIXTURES, FixtureError, load_json, validate

__all__ = ["PROFILES", "RuleOutcome", "RunResult", "Tally", "judge", "run_suite"]


PROFILES: Mapping[str, Mapping[str, Any]] = {
    "quick": {"max_examples": 30, "derandomize": True},
    "ci": {"max_examples": 100, "derandomize": True},
    "thorough": {"max_examples": 1000, "derandomize": False},
}
MAX_FAILURES_KEPT = 3


class KitError(Exception):
    """A bug in the kit itself (a predicate or strategy crashed), never the implementation's."""


@dataclass
class Failure:
    message: str
    scenario_id: str
    counterexample: str | None = None  # path of the saved replayable case
    # For errors and timeouts, what kind: an action "raised" inside a trace, a
    # "malformed-trace", the in-process "adapter-raised", or a transport
    # failure category (crash, timeout, protocol, errored).
    category: str | None = None


@dataclass
class Problem:
    """Why a scenario produced no trace: skipped, or an error/timeout of the implementation."""

    kind: str  # "skipped" | "error" | "timeout"
    message: str
    category: str
    stderr: str = ""


@dataclass
class RuleOutcome:
    id: str
    title: str
    group: str
    status: str = "not-exercised"
    checks: int = 0
    reason: str | None = None
    failures: list[Failure] = field(default_factory=list)
    errors: list[Failure] = field(default_factory=list)
    timeouts: list[Failure] = field(default_factory=list)
    skipped: str | None = None
    expected: dict[str, Any] | None = None  # the --expect entry that listed this rule, if any

    def problems(self) -> list[Failure]:
        """Every kept failure, error and timeout, in that order."""
        return [*self.failures, *self.errors, *self.timeouts]

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "title": self.title,
            "group": self.group,
            "status": self.status,
            "checks": self.checks,
        }
        if self.reason:
            out["reason"] = self.reason
        if self.expected is not None:
            out["expected"] = dict(self.expected)
        out["failures"] = [
            {
                "kind": kind,
                "message": f.message,
                "scenario": f.scenario_id,
                "counterexample": f.counterexample,
                **({"category": f.category} if f.category else {}),
            }
            for kind, items in (
                ("fail", self.failures),
                ("error", self.errors),
                ("timeout", self.timeouts),
            )
            for f in items
        ]
        return out


@dataclass
class RunResult:
    implementation: AdapterInfo
    profile: str
    seed: int | None
    rules: list[RuleOutcome]
    kit_errors: list[str]
    duration_s: float
    scenarios: int
    notes: list[str] = field(default_factory=list)  # hints added after the run (e.g. by --expect)
    transport: dict[str, Any] | None = None  # the adapter's diagnostics(), if it has any
    protocol: dict[str, Any] | None = None  # fuzz-protocol's section, merged in afterwards

    def failing(self, outcome: RuleOutcome) -> bool:
        """Whether this rule's outcome makes the run non-conformant."""
        bad = {"fail", "error", "timeout", "unexpected-pass"}
        if self.profile == "ci":
            bad.add("not-exercised")
        return outcome.status in bad

    @property
    def conformant(self) -> bool:
        return not self.kit_errors and not any(self.failing(r) for r in self.rules)

    def to_json(self) -> dict[str, Any]:
        return {
            "kit": {"name": "toolreg-conformance", "version": __version__},
            "implementation": self.implementation.to_json(),
            "profile": self.profile,
            "seed": self.seed,
            "durationSeconds": round(self.duration_s, 3),
            "scenarios": self.scenarios,
            "conformant": self.conformant,
            "kitErrors": self.kit_errors,
            "notes": self.notes,
            **({"transport": self.transport} if self.transport is not None else {}),
            **({"protocolConformance": self.protocol} if self.protocol is not None else {}),
            "rules": [r.to_json() for r in self.rules],
        }


def judge(
    scenario: Mapping[str, Any], trace: Mapping[str, Any], rule_ids: Iterable[str] | None = None
) -> dict[str, list[Verdict]]:
    """Every selected rule's verdicts on one (scenario, trace); KitError if a predicate crashes."""
    out: dict[str, list[Verdict]] = {}
    for rule_id in rule_ids if rule_ids is not None else RULES:
        rule = RULES[rule_id]
        if rule.check is None:
            continue
        try:
            out[rule_id] = list(rule.check(scenario, trace))
        except Exception as e:
            where = f"predicate {rule_id} crashed on scenario {scenario.get('id')!r}"
            raise KitError(f"{where}: {type(e).__name__}: {e}") from e
    return out


class Tally:
    """Accumulates verdicts per rule across every scenario of a run."""

    def __init__(self, rule_ids: Sequence[str], adapter: Adapter, report_dir: Path | None) -> None:
        self.rule_ids = list(rule_ids)
        self.info = adapter.describe()
        self.adapter = adapter
        self.report_dir = report_dir
        self.outcomes = {
            rid: RuleOutcome(rid, RULES[rid].title, RULES[rid].group) for rid in self.rule_ids
        }
        self.kit_errors: list[str] = []
        self.scenarios = 0
        self.sources: dict[str, int] = {
            rid: 0 for rid in self.rule_ids
        }  # runnable sources per rule

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

    def execute(self, scenario: Mapping[str, Any]) -> tuple[dict[str, Any] | None, Problem | None]:
        """Run one scenario: (trace, None) or (None, why there is no trace)."""
        self.scenarios += 1
        try:
            trace = self.adapter.run(scenario)
        except ScenarioSkipped as e:
            return None, Problem("skipped", f"the implementation skipped it: {e.reason}", "skipped")
        except ImplementationFailure as e:
            kind = "timeout" if e.category == "timeout" else "error"
            return None, Problem(kind, str(e), e.category, e.stderr)
        except Exception as e:
            why = f"the adapter raised {type(e).__name__}: {e}"
            return None, Problem("error", why, "adapter-raised")
        try:
            validate(trace, "trace", f"trace of {scenario.get('id')}")
        except FixtureError as e:
            return None, Problem("error", f"malformed trace: {e}", "malformed-trace")
        return trace, None

    def record(
        self,
        scenario: Mapping[str, Any],
        trace: Mapping[str, Any],
        verdicts: Mapping[str, list[Verdict]],
        *,
        targets: Iterable[str],
        keep_failures_of: Callable[[str], bool] = lambda rid: True,
    ) -> None:
        """Count verdicts; note crashes and timeouts of actions against ``targets``."""
        for rid in self.rule_ids:
            found = verdicts.get(rid, [])
            outcome = self.outcomes[rid]
            outcome.checks += len(found)
            bad = [v for v in found if not v.ok]
            if bad and keep_failures_of(rid) and len(outcome.failures) < MAX_FAILURES_KEPT:
                message = "; ".join(f"{v.subject}: {v.message}" for v in bad[:3])
                path = self.save(rid, scenario, trace, [v.message for v in bad])
                outcome.failures.append(Failure(message, str(scenario.get("id")), path))
        raised = [a.get("raised") for a in trace.get("actions", []) if a.get("raised")]
        for rid in targets:
            if rid not in self.outcomes or not raised:
                continue
            outcome = self.outcomes[rid]
            bucket = outcome.timeouts if "deadline" in str(raised[0]) else outcome.errors
            if len(bucket) < MAX_FAILURES_KEPT:
                path = self.save(rid, scenario, trace, [str(r) for r in raised])
                message = f"an action raised: {raised[0]}"
                bucket.append(Failure(message, str(scenario.get("id")), path, "raised"))

    def problem(
        self, scenario: Mapping[str, Any], targets: Iterable[str], problem: Problem
    ) -> None:
        """Note a scenario that produced no trace against ``targets``."""
        for rid in targets:
            if rid not in self.outcomes:
                continue
            outcome = self.outcomes[rid]
            if problem.kind == "skipped":
                outcome.skipped = outcome.skipped or problem.message
                continue
            bucket = outcome.timeouts if problem.kind == "timeout" else outcome.errors
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
    ) -> str | None:
        """Write a self-contained, replayable counterexample; return its path."""
        if self.report_dir is None:
            return None
        case = {
            "rule": rule_id,
            "kit": {"name": "toolreg-conformance", "version": __version__},
            "implementation": self.info.to_json(),
            "required": required,
            "scenario": scenario,
            "trace": trace,
        }
        digest = hashlib.sha256(json.dumps(scenario, sort_keys=True).encode()).hexdigest()[:10]
        path = self.report_dir / "counterexamples" / f"{rule_id}-{digest}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(case, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        return str(path)

    # -------------------------------------------------------------- sources

    def run_fixture(self, fixture: Mapping[str, Any]) -> None:
        targets = [r for r in fixture.get("rules", []) if r in self.outcomes]
        missing = self.missing(fixture)
        if missing:
            for rid in targets:
                self.outcomes[rid].skipped = self.capability_reason(missing)
            return
        trace, problem = self.execute(fixture)
        if problem is None or problem.kind != "skipped":
            for rid in targets:
                self.sources[rid] += 1
        if trace is None:
            assert problem is not None
            self.problem(fixture, targets, problem)
            return
        try:
            verdicts = judge(fixture, trace, self.rule_ids)
        except KitError as e:
            self.kit_errors.append(str(e))
            return
        from conformance.core.fixture_checks import check_expect

        for rid, found in check_expect(fixture, trace).items():
            if rid in verdicts:
                verdicts[rid] = verdicts[rid] + found
        self.record(fixture, trace, verdicts, targets=targets)

    def run_property(self, rule_id: str, focus: Focus, profile: str, seed: int | None) -> None:
        missing = focus.needs - self.info.capabilities
        if missing:
            self.outcomes[rule_id].skipped = self.capability_reason(missing)
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
        # property stops calling it: later examples are rejected, never run, so neither
        # generation nor shrinking replays a failure the report already holds.
        stopped: list[Problem] = []

        @conf
        @given(focus.strategy)
        def prop(scenario: dict[str, Any]) -> None:
            scenario = {**scenario, "id": f"generated/{rule_id}"}
            if stopped:
                hypothesis.reject()
            if self.missing(scenario):
                return
            trace, problem = self.execute(scenario)
            if problem is not None and problem.kind == "skipped":
                self.problem(scenario, [rule_id], problem)
                hypothesis.reject()
            self.sources[rule_id] = max(self.sources[rule_id], 1)
            if trace is None:
                assert problem is not None
                self.problem(scenario, [rule_id], problem)
                stopped.append(problem)
                return
            verdicts = judge(scenario, trace, self.rule_ids)
            self.record(
                scenario,
                trace,
                verdicts,
                targets=[rule_id],
                keep_failures_of=lambda rid: rid != rule_id,
            )
            bad = [v for v in verdicts.get(rule_id, []) if not v.ok]
            if bad:
                last["case"] = (scenario, trace, bad)
                raise AssertionError(bad[0].message)

        if seed is not None and not options.get("derandomize"):
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
            path = self.save(rule_id, scenario, trace, [v.message for v in bad])
            message = "; ".join(f"{v.subject}: {v.message}" for v in bad[:3])
            outcome.failures.insert(0, Failure(message, scenario["id"], path))
        except hypothesis.errors.Unsatisfiable:
            pass  # every example was skipped or came after a failure to answer: recorded
        except KitError as e:
            self.kit_errors.append(str(e))
        except Exception as e:  # hypothesis itself or a strategy broke: the kit's fault
            self.kit_errors.append(f"property {rule_id}: {type(e).__name__}: {e}")

    # --------------------------------------------------------------- result

    def finish(self) -> list[RuleOutcome]:
        for rid, outcome in self.outcomes.items():
            rule = RULES[rid]
            if rule.check is None:
                outcome.status, outcome.reason = "untested", rule.untested
            elif outcome.failures:
                outcome.status = "fail"
            elif outcome.errors:
                outcome.status = "error"
            elif outcome.timeouts:
                outcome.status = "timeout"
            elif outcome.checks:
                outcome.status = "pass"
            elif outcome.skipped and not self.sources[rid]:
                outcome.status, outcome.reason = "skipped", outcome.skipped
            else:
                outcome.status, outcome.reason = (
                    "not-exercised",
                    "no scenario met the rule's premise",
                )
        return list(self.outcomes.values())


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


def select_rules(patterns: str | None) -> list[str]:
    """The rule IDs ``patterns`` (``None``: every rule) names, in SPEC order.

    Every comma-separated item must name at least one rule: a misspelt ID is an
    error, never silently dropped, and an empty list selects nothing, so it is
    an error too.
    """
    if patterns is None:
        return list(RULES)
    wanted = [p.strip() for p in patterns.split(",") if p.strip()]
    if not wanted:
        raise ValueError(f"--rules {patterns!r} names no rule (e.g. 'PRE-*,FIN-2')")
    unmatched = [p for p in wanted if not any(fnmatch.fnmatchcase(rid, p) for rid in RULES)]
    if unmatched:
        names = ", ".join(repr(p) for p in unmatched)
        raise ValueError(
            f"--rules: {names} matches no rule ID (toolreg-conformance rules lists them)"
        )
    return [rid for rid in RULES if any(fnmatch.fnmatchcase(rid, p) for p in wanted)]


def run_suite(
    adapter: Adapter,
    *,
    profile: str = "ci",
    rules: str | None = None,
    report_dir: Path | None = None,
    seed: int | None = None,
    progress: Callable[[str], None] = lambda line: None,
) -> RunResult:
    if profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r}; expected one of {', '.join(PROFILES)}")
    started = time.monotonic()
    rule_ids = select_rules(rules)
    tally = Tally(rule_ids, adapter, report_dir)
    for path in fixture_files(rule_ids):
        document = load_json(path)
        if path.parent.name == "regressions":  # a saved counterexample case
            fixture = {**document["scenario"], "rules": [document["rule"]]}
        else:
            fixture = document
        validate(fixture, "scenario", str(path))
        progress(f"fixture {_shown(path)}")
        tally.run_fixture(fixture)
    for rid in rule_ids:
        focus = FOCUS.get(rid)
        if focus is not None:
            progress(f"property {rid}")
            tally.run_property(rid, focus, profile, seed)
    diagnostics = getattr(adapter, "diagnostics", None)
    return RunResult(
        transport=diagnostics() if callable(diagnostics) else None,
        implementation=tally.info,
        profile=profile,
        seed=seed,
        rules=tally.finish(),
        kit_errors=tally.kit_errors,
        duration_s=time.monotonic() - started,
        scenarios=tally.scenarios,
    )
