"""``run --shard K/N`` and ``merge``: one run's units spread over N machines, then one report.

**The split.** A sharded run plans its units one fixture (or surface probe, or corpus
chunk) and one property to a unit, whatever ``-j`` says, and gives a unit to shard
``1 + int(sha256(key)[:8]) % N``, its key being the unit's label (``fixture
fixtures/rules/PRE-1/x.json``, ``fixture surface/CELL``, ``property PRE-3``; a corpus
chunk's label plus its occurrence). So the split depends only on the unit's name and N:
not on dict or file order, on ``-j``, on the machine, or on which other units exist
(adding a fixture moves no other unit).

**The record.** Each shard's report.json says ``shard`` (:func:`record`): its index and
count, the adapter, a digest of the whole run's plan, and for every unit it ran, at its
index in the plan, what that unit found (failures, kept in the unit's own order, the
property's shrunk lead marked; skips; kit errors). Additive counts (checks, sources,
scenarios, attack-surface attempts) are kept per shard.

**The merge** (:func:`merge`) replays the units' findings in plan order through
:meth:`Tally.merge <conformance.running.tally.Tally.merge>`, exactly as ``-j N`` merges
its workers' units, so statuses, kept failures and their order are those of the
unsharded run. It refuses shards of different kits, profiles, seeds, adapters, rule
selections or counts, and overlapping or missing shards (ValueError, naming them).
"""

from __future__ import annotations

import hashlib
import shutil
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance._version import __version__
from conformance.running.outcomes import Failure, RunResult
from conformance.running.plan import Unit
from conformance.running.tally import Partial, Tally
from conformance.scenario.surface import coverage
from conformance.seam.adapter import AdapterInfo

__all__ = [
    "Shard",
    "adopt_counterexamples",
    "merge",
    "parse_shard",
    "record",
    "shard_note",
    "unit_keys",
]


@dataclass(frozen=True)
class Shard:
    """Shard ``index`` (1-based) of ``count``."""

    index: int
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def owns(self, key: str) -> bool:
        """Is the unit named ``key`` this shard's (see the module's docstring)?"""
        digest = hashlib.sha256(key.encode("utf-8")).digest()
        return int.from_bytes(digest[:8], "big") % self.count == self.index - 1


def parse_shard(text: str) -> Shard:
    """``K/N`` (1 <= K <= N) as a Shard; ValueError saying what is wrong otherwise."""
    index, slash, count = text.partition("/")
    try:
        shard = Shard(int(index), int(count))
    except ValueError:
        shard = None
    if not slash or shard is None or not 1 <= shard.index <= shard.count:
        raise ValueError(f"--shard {text!r}: expected K/N with 1 <= K <= N, e.g. 2/3")
    return shard


def unit_keys(units: Sequence[Unit]) -> list[str]:
    """Each unit's key: its label, with ``#n`` added to the n-th repeat of a label."""
    seen: Counter[str] = Counter()
    keys = []
    for unit in units:
        keys.append(unit.label if not seen[unit.label] else f"{unit.label}#{seen[unit.label]}")
        seen[unit.label] += 1
    return keys


def plan_digest(keys: Sequence[str]) -> str:
    """A digest of the whole run's plan: shards of one run have the same."""
    return hashlib.sha256("\n".join(keys).encode("utf-8")).hexdigest()[:16]


def _part_json(index: int, part: Partial) -> dict[str, Any]:
    """What one unit found, as a shard records it (its counts are kept per shard)."""
    rules: dict[str, Any] = {}
    for rid, outcome in part.outcomes.items():
        lead = part.leads.get(rid)
        failures = []
        for kind, bucket in outcome.buckets():
            for f in bucket:
                entry = f.to_json(str(kind))
                if f is lead:
                    entry["lead"] = True
                failures.append(entry)
        if failures:
            rules[rid] = failures
    out: dict[str, Any] = {"unit": index}
    if rules:
        out["failures"] = rules
    if part.skips:
        out["skips"] = [[rid, reason, overwrite] for rid, reason, overwrite in part.skips]
    if part.kit_errors:
        out["kitErrors"] = list(part.kit_errors)
    return out


def record(
    shard: Shard,
    keys: Sequence[str],
    parts: Mapping[int, Partial],
    adapter: str | None,
    tally: Tally,
) -> dict[str, Any]:
    """A shard's ``shard`` section of report.json: ``parts`` are its finished units' findings
    by their index in the whole plan (``keys``, every unit's key in plan order)."""
    return {
        "index": shard.index,
        "count": shard.count,
        "adapter": adapter,
        "plan": plan_digest(keys),
        "units": len(keys),
        "owned": [i for i, key in enumerate(keys) if shard.owns(key)],
        "sources": dict(tally.sources),
        "attempts": dict(sorted(tally.attempts.items())),
        "parts": [_part_json(i, parts[i]) for i in sorted(parts) if _has_findings(parts[i])],
        "ran": sorted(parts),
    }


def _has_findings(part: Partial) -> bool:
    return bool(part.kit_errors or part.skips or any(o.problems() for o in part.outcomes.values()))


def _partial(entry: Mapping[str, Any], rule_ids: Sequence[str]) -> Partial:
    """A unit's findings back as a Partial that merges into a Tally of ``rule_ids``."""
    part = Tally(rule_ids, None, None, AdapterInfo("", "", "", frozenset())).partial()
    for rid, failures in entry.get("failures", {}).items():
        outcome = part.outcomes[rid]
        buckets = {str(kind): bucket for kind, bucket in outcome.buckets()}
        for data in failures:
            failure = Failure.from_json(data)
            buckets[data["kind"]].append(failure)
            if data.get("lead"):
                part.leads[rid] = failure
    part.skips = [(str(r), str(reason), bool(o)) for r, reason, o in entry.get("skips", [])]
    part.kit_errors = list(entry.get("kitErrors", []))
    return part


_SAME = ("kit", "profile", "seed", "implementation", "contract")


def merge(reports: Sequence[tuple[str, Mapping[str, Any]]]) -> RunResult:
    """One run's result from its shards' report.json documents, given as (name, document).

    ValueError (naming the reports) for a report that is no shard, shards of different
    runs, a shard given twice or one missing.
    """
    if not reports:
        raise ValueError("merge needs the reports of a sharded run")
    for name, document in reports:
        if not isinstance(document.get("shard"), Mapping):
            raise ValueError(f"{name}: not a shard's report (run it with --shard K/N)")
    first_name, first = reports[0]
    header = first["shard"]
    for name, document in reports[1:]:
        shard = document["shard"]
        for what in _SAME:
            if document.get(what) != first.get(what):
                raise ValueError(
                    f"{name} and {first_name} are of different runs: their {what} differs "
                    f"({document.get(what)!r} vs {first.get(what)!r})"
                )
        for what in ("count", "adapter", "plan", "units"):
            if shard.get(what) != header.get(what):
                raise ValueError(
                    f"{name} and {first_name} are of different runs: their shard {what} "
                    f"differs ({shard.get(what)!r} vs {header.get(what)!r})"
                )
        if [r["id"] for r in document["rules"]] != [r["id"] for r in first["rules"]]:
            raise ValueError(f"{name} and {first_name} select different rules")
    if first["kit"].get("version") != __version__:
        raise ValueError(
            f"{first_name}: written by kit {first['kit'].get('version')}, this is {__version__}"
        )
    count = int(header["count"])
    by_index: dict[int, str] = {}
    for name, document in reports:
        index = int(document["shard"]["index"])
        if index in by_index:
            raise ValueError(f"shard {index}/{count} given twice: {by_index[index]} and {name}")
        by_index[index] = name
    missing = [f"{i}/{count}" for i in range(1, count + 1) if i not in by_index]
    if missing:
        raise ValueError(f"missing shard(s) {', '.join(missing)} of this run")
    return _merged(reports)


def _merged(reports: Sequence[tuple[str, Mapping[str, Any]]]) -> RunResult:
    shards = [RunResult.from_json(document) for _, document in reports]
    first = shards[0]
    selection = {o.id: frozenset(o.clauses) if o.clauses is not None else None for o in first.rules}
    rule_ids = list(selection)
    tally = Tally(selection, None, None, first.implementation)
    for outcome, given in zip(tally.outcomes.values(), first.rules, strict=True):
        outcome.promised = given.promised
    entries: dict[int, Mapping[str, Any]] = {}
    for _, document in reports:
        for entry in document["shard"]["parts"]:
            entries[int(entry["unit"])] = entry
    for index in sorted(entries):
        tally.merge(_partial(entries[index], rule_ids))
    for (_, document), shard in zip(reports, shards, strict=True):
        tally.scenarios += shard.scenarios
        tally.attempts.update(document["shard"]["attempts"])
        for rid in rule_ids:
            tally.sources[rid] += int(document["shard"]["sources"].get(rid, 0))
        for outcome, theirs in zip(tally.outcomes.values(), shard.rules, strict=True):
            outcome.checks += theirs.checks
    rules = tally.finish()
    incomplete = any(s.incomplete for s in shards)
    not_run = {rid for s in shards for rid in s.not_run}
    return RunResult(
        implementation=first.implementation,
        profile=first.profile,
        seed=first.seed,
        rules=rules,
        kit_errors=tally.kit_errors,
        duration_s=max(s.duration_s for s in shards),  # the shards ran side by side
        scenarios=tally.scenarios,
        incomplete=incomplete,
        not_run=[rid for rid in rule_ids if rid in not_run],
        coverage=(
            coverage(tally.attempts, first.implementation.capabilities, rule_ids)
            if first.coverage is not None
            else None
        ),
        contract=first.contract,
        notes=[n for n in first.notes if not n.endswith(_NOTE)],
    )


_NOTE = "judges only this shard's units, so its statuses are not the run's: merge the shards"


def shard_note(shard: Shard) -> str:
    """The note a shard's own report carries: its statuses are only its part's."""
    return f"shard {shard} {_NOTE}"


def adopt_counterexamples(
    result: RunResult, shard_dirs: Sequence[Path], report_dir: Path | None
) -> list[str]:
    """Point the merged ``result``'s failures at their counterexamples; the paths not found.

    Each shard wrote its cases to its own ``DIR/counterexamples/`` (a case's name is its
    rule and its scenario's digest, the same in every run): the case is looked up there,
    then at the path as recorded. With a ``report_dir`` it is copied to
    ``report_dir/counterexamples/``, as the unsharded run with that ``--report`` would have
    written it, and the failure points there, relative to it (as a run's own failures do:
    ``result.report_dir`` is set); without one, at the file found, as an absolute path.
    """
    missing: list[str] = []
    result.report_dir = report_dir
    for outcome in result.rules:
        for failure in outcome.problems():
            given = failure.counterexample
            if given is None:
                continue
            name = Path(given).name
            candidates = [d / "counterexamples" / name for d in shard_dirs] + [Path(given)]
            found = next((c for c in candidates if c.is_file()), None)
            if found is None:
                missing.append(given)
                continue
            if report_dir is None:
                failure.counterexample = str(found.resolve())
                continue
            target = report_dir / "counterexamples" / name
            target.parent.mkdir(parents=True, exist_ok=True)
            if not (target.exists() and target.samefile(found)):
                shutil.copyfile(found, target)
            failure.counterexample = str(Path("counterexamples") / name)
    return list(dict.fromkeys(missing))
