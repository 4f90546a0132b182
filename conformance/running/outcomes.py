"""What a run found: a rule's outcome (its status, checks and kept failures) and the run's result.

The one report model every renderer reads (Markdown, JUnit, the HTML page, its findings and
timelines). ``report.json`` is :meth:`RunResult.to_json` (schema:
``fixtures/schema/report.schema.json``); :meth:`RunResult.read` (:meth:`RunResult.from_json`)
is its one loader, giving back the same model.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from conformance._version import __version__
from conformance.scenario.schema import load_json
from conformance.seam.adapter import DEFAULT_CLOSED_FORMS, AdapterInfo
from conformance.vocab import Status

if TYPE_CHECKING:
    from conformance.judging.rules import Verdict

__all__ = ["Failure", "Pointer", "RuleOutcome", "RunResult", "pointers"]


@dataclass(frozen=True)
class Pointer:
    """What one violated verdict points at in its trace: the call it is about and the
    indices in ``trace["events"]`` it rests on (``Verdict.call``, ``Verdict.events``)."""

    subject: str
    call: str | None = None
    events: tuple[int, ...] = ()
    #: An action that is no call (a ``schemas`` listing, a ``register``) whose answer the
    #: verdict is about: its index in the scenario's actions (``Verdict.action``).
    action: int | None = None
    #: A set-up registration whose outcome the verdict is about: its index in the trace's
    #: ``registrations`` (``Verdict.registration``).
    registration: int | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "subject": self.subject,
            "call": self.call,
            "events": list(self.events),
        }
        if self.action is not None:
            out["action"] = self.action
        if self.registration is not None:
            out["registration"] = self.registration
        return out

    @classmethod
    def from_json(cls, data: Any) -> Pointer:
        data = data if isinstance(data, dict) else {}
        call = data.get("call")
        events = data.get("events")
        action, registration = data.get("action"), data.get("registration")
        return cls(
            str(data.get("subject", "")),
            None if call is None else str(call),
            tuple(e for e in (events if isinstance(events, list) else []) if isinstance(e, int)),
            action if isinstance(action, int) and not isinstance(action, bool) else None,
            registration
            if isinstance(registration, int) and not isinstance(registration, bool)
            else None,
        )


def pointers(verdicts: Iterable[Verdict]) -> list[Pointer]:
    """The pointers of ``verdicts`` (a failure's joined verdicts), one each, in order; empty
    when none of them points (then the failure marks nothing in the timeline)."""
    found = list(verdicts)
    if not any(v.points for v in found):
        return []
    return [Pointer(v.subject, v.call, tuple(v.events), v.action, v.registration) for v in found]


@dataclass
class Failure:
    message: str
    scenario_id: str
    counterexample: str | None = None  # path of the saved replayable case
    # For errors and timeouts, what kind: an action "raised" inside a trace, a
    # "malformed-trace", the in-process "adapter-raised", or a transport
    # failure category (crash, timeout, protocol, errored).
    category: str | None = None
    # For violations: the clause of the rule the verdicts judged (None: the rule as a
    # whole), and for a difference what makes it one (conformance.judging.contract.classify).
    clause: str | None = None
    why: str | None = None
    #: One per verdict the message joins, in its order, when any of them points at its
    #: trace (the call, the event indices); empty: none does.
    pointers: list[Pointer] = field(default_factory=list)

    def to_json(self, kind: str) -> dict[str, Any]:
        """One entry of a rule's ``failures`` in report.json, of ``kind`` (its bucket)."""
        return {
            "kind": kind,
            "message": self.message,
            "scenario": self.scenario_id,
            "counterexample": self.counterexample,
            **({"category": self.category} if self.category else {}),
            **({"clause": self.clause} if self.clause else {}),
            **({"why": self.why} if self.why else {}),
            **({"pointers": [p.to_json() for p in self.pointers]} if self.pointers else {}),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Failure:
        """A failure back from :meth:`to_json` (its ``kind`` is the caller's to read)."""
        return cls(
            data["message"],
            data["scenario"],
            data["counterexample"],
            data.get("category"),
            data.get("clause"),
            data.get("why"),
            [Pointer.from_json(p) for p in data.get("pointers", [])],
        )


@dataclass
class RuleOutcome:
    id: str
    title: str
    group: str
    status: str = Status.NOT_EXERCISED
    checks: int = 0
    reason: str | None = None
    failures: list[Failure] = field(default_factory=list)  # violations that are defects
    errors: list[Failure] = field(default_factory=list)
    timeouts: list[Failure] = field(default_factory=list)
    skipped: str | None = None
    expected: dict[str, Any] | None = None  # the --expect entry that listed this rule, if any
    # violations the contract does not promise (conformance.judging.contract): differences
    differences: list[Failure] = field(default_factory=list)
    # the rule's named clauses that were judged (None: the rule declares none)
    clauses: list[str] | None = None
    # with a contract: True (the whole rule promised), the promised clauses, or False
    promised: bool | list[str] | None = None

    def problems(self) -> list[Failure]:
        """Every kept failure, difference, error and timeout, in that order."""
        return [*self.failures, *self.differences, *self.errors, *self.timeouts]

    def kept(self) -> list[tuple[str, Failure]]:
        """Every kept failure with its kind (report.json's ``kind``), in report.json's order."""
        return [(str(kind), f) for kind, items in self.buckets() for f in items]

    def buckets(self) -> list[tuple[Status, list[Failure]]]:
        """(kind, kept failures) for defects (``fail``), differences, errors and timeouts,
        in that order."""
        return [
            (Status.FAIL, self.failures),
            (Status.DIFFERENCE, self.differences),
            (Status.ERROR, self.errors),
            (Status.TIMEOUT, self.timeouts),
        ]

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "title": self.title,
            "group": self.group,
            "status": str(self.status),
            "checks": self.checks,
        }
        if self.reason:
            out["reason"] = self.reason
        if self.clauses is not None:
            out["clauses"] = list(self.clauses)
        if self.promised is not None:
            out["promised"] = (
                self.promised if isinstance(self.promised, bool) else list(self.promised)
            )
        if self.expected is not None:
            out["expected"] = dict(self.expected)
        out["failures"] = [f.to_json(kind) for kind, f in self.kept()]
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
    # Interrupted (SIGINT/SIGTERM): the run stopped early; ``not_run`` names the rules
    # some of whose sources (fixtures, property) never ran.
    incomplete: bool = False
    not_run: list[str] = field(default_factory=list)
    jobs: int = 1
    # The attack-surface coverage (conformance.scenario.surface.coverage), when the run kept it.
    coverage: dict[str, Any] | None = None
    # The contract the failures were classified by (Contract.summary()); None: SPEC.md is
    # the contract, every failure a defect.
    contract: dict[str, Any] | None = None
    # --fail-fast stopped the run at the first failure it waited for (a corpus replay).
    stopped_early: bool = False
    # ``run --shard K/N``: this run's part of a sharded run and what ``merge`` needs of it
    # (conformance.running.shard); None: a whole run.
    shard: dict[str, Any] | None = None
    # Where the run wrote its counterexamples (None: nowhere): a failure's counterexample
    # is a path relative to it (never serialized: report.json sits in that directory).
    report_dir: Path | None = None
    # The kit version that wrote the report (this one, for a run of this kit).
    kit_version: str = __version__
    # The expect file that gated the run, as report.json names it (``expectFile``).
    expect_file: str | None = None

    @classmethod
    def read(cls, path: str | Path) -> RunResult:
        """The RunResult of a ``report.json`` on disk (checked against its schema); its
        counterexample paths are relative to the file's directory."""
        result = cls.from_json(load_json(path, "report"))
        result.report_dir = Path(path).parent
        return result

    @classmethod
    def from_json(cls, document: Mapping[str, Any]) -> RunResult:
        """A RunResult back from ``report.json`` (:meth:`to_json`)."""
        impl = document["implementation"]
        info = AdapterInfo(
            name=impl["name"],
            version=impl["version"],
            language=impl["language"],
            capabilities=frozenset(impl["capabilities"]),
            missing=dict(impl.get("missing", {})),
            closed_forms=(
                frozenset(impl["closedForms"]) if "closedForms" in impl else DEFAULT_CLOSED_FORMS
            ),
        )
        rules = []
        for rule in document["rules"]:
            outcome = RuleOutcome(
                rule["id"],
                rule["title"],
                rule["group"],
                status=rule["status"],
                checks=rule["checks"],
                reason=rule.get("reason"),
                expected=rule.get("expected"),
            )
            buckets = {str(kind): bucket for kind, bucket in outcome.buckets()}
            for f in rule["failures"]:
                buckets[f["kind"]].append(Failure.from_json(f))
            outcome.clauses = list(rule["clauses"]) if "clauses" in rule else None
            outcome.promised = rule.get("promised")
            rules.append(outcome)
        return cls(
            implementation=info,
            profile=document["profile"],
            seed=document["seed"],
            rules=rules,
            kit_errors=list(document["kitErrors"]),
            duration_s=float(document.get("durationSeconds", 0.0)),
            scenarios=int(document.get("scenarios", 0)),
            notes=list(document.get("notes", [])),
            transport=document.get("transport"),
            protocol=document.get("protocolConformance"),
            incomplete=bool(document.get("incomplete", False)),
            not_run=list(document.get("notRun", [])),
            coverage=document.get("coverage"),
            contract=document.get("contract"),
            shard=document.get("shard"),
            stopped_early=bool(document.get("stoppedEarly", False)),
            kit_version=str(document.get("kit", {}).get("version", __version__)),
            expect_file=document.get("expectFile"),
        )

    def case_file(self, failure: Failure) -> Path | None:
        """The file of ``failure``'s counterexample (None: it has none, or none was written)."""
        if failure.counterexample is None:
            return None
        if Path(failure.counterexample).is_absolute():
            return Path(failure.counterexample)
        return None if self.report_dir is None else self.report_dir / failure.counterexample

    def failing(self, outcome: RuleOutcome) -> bool:
        """Whether this rule's outcome makes the run non-conformant."""
        return Status(outcome.status).fails_run(self.profile)

    @property
    def conformant(self) -> bool:
        return (
            not self.incomplete
            and not self.stopped_early
            and not self.kit_errors
            and not any(self.failing(r) for r in self.rules)
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "kit": {"name": "toolreg-conformance", "version": self.kit_version},
            "implementation": self.implementation.to_json(),
            "profile": self.profile,
            "seed": self.seed,
            "durationSeconds": round(self.duration_s, 3),
            "scenarios": self.scenarios,
            "conformant": self.conformant,
            "incomplete": self.incomplete,
            **({"notRun": list(self.not_run)} if self.incomplete else {}),
            **({"stoppedEarly": True} if self.stopped_early else {}),
            "kitErrors": self.kit_errors,
            "notes": self.notes,
            **({"contract": dict(self.contract)} if self.contract is not None else {}),
            **({"transport": self.transport} if self.transport is not None else {}),
            **({"protocolConformance": self.protocol} if self.protocol is not None else {}),
            "rules": [r.to_json() for r in self.rules],
            **({"coverage": self.coverage} if self.coverage is not None else {}),
            **({"shard": self.shard} if self.shard is not None else {}),
            **({"expectFile": self.expect_file} if self.expect_file is not None else {}),
        }
