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

import os
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from conformance.judging.contract import Contract
from conformance.running.outcomes import RunResult
from conformance.running.parallel import WorkerDied, parallel_spec, run_parallel
from conformance.running.plan import (
    CORPUS_PER_UNIT,
    FIXTURES_PER_UNIT,
    corpus_units,
    plan,
    select,
)
from conformance.running.progress import Tick, Ticks
from conformance.running.shard import Shard, record, shard_note, unit_keys
from conformance.running.tally import PROFILES, Partial, StopEarly, Tally
from conformance.scenario.corpus import Corpus, CorpusWriter
from conformance.scenario.surface import coverage
from conformance.seam.adapter import Adapter

__all__ = [
    "default_jobs",
    "partial_result",
    "run_suite",
]


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
    load: Callable[[str], Adapter] | None = None,
    tick: Callable[[Tick], None] | None = None,
    contract: Contract | None = None,
    corpus: Corpus | None = None,
    write_corpus: Path | None = None,
    fail_fast: str | None = None,
    shard: Shard | None = None,
    adapter_errors: Mapping[str, str] | None = None,
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

    ``jobs > 1`` with an ``adapter_spec`` (``reference``, ``python:MODULE:FACTORY``) and the
    ``load`` that builds an adapter from it (e.g. :func:`conformance.adapters.load_adapter`)
    splits the work across that many worker processes, each re-creating the
    adapter from the spec, and merges what they found in plan order: the same
    verdicts as one process. An out-of-process harness (stdio, HTTP) keeps its
    restart and give-up state across scenarios, so it always runs in one process.

    ``adapter_errors`` (rule -> message: :func:`conformance.running.doctor.broken_rules`)
    reports those rules ``error`` (adapter) whatever their scenarios show: a declared
    capability the adapter does not deliver leaves them blind.

    ``progress`` is told each unit's label: as it starts (one process) or as it
    finishes (``jobs > 1``). ``tick`` is told the completion counts (a
    :class:`Tick`) as the run starts and after every unit; without one, a
    ``progress`` that has a callable ``tick`` attribute is told them (so a
    command's progress printer gets the counts through any caller of run_suite).

    ``shard`` runs only that shard's units, one fixture or property to a unit (see
    :mod:`conformance.running.shard`), and records in the result's ``shard`` what
    ``merge`` needs to make the whole run's result of the N shards' reports.

    A KeyboardInterrupt (see :func:`interruptible`) ends the run early: the
    result is marked ``incomplete`` and ``not_run`` names the rules some of
    whose sources never ran. So does a worker of ``run -j`` that dies outright
    (:class:`~conformance.running.parallel.WorkerDied`); a note says which units it took.
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
    tally.adapter_errors = dict(adapter_errors or {})
    parallel = (
        jobs > 1 and fail_fast is None and load is not None and parallel_spec(adapter, adapter_spec)
    )
    if shard is not None and (fail_fast is not None or write_corpus is not None):
        raise ValueError("a sharded run neither stops early nor writes a corpus")
    per_unit = FIXTURES_PER_UNIT if parallel and shard is None else 1
    if corpus is not None:
        units = corpus_units(corpus, rule_ids, CORPUS_PER_UNIT)
    else:
        units = plan(rule_ids, per_unit, tally.info.capabilities)
    keys = unit_keys(units)
    owned = list(range(len(units)))  # each unit's index in the whole plan
    if shard is not None:
        owned = [i for i, key in enumerate(keys) if shard.owns(key)]
        units = [units[i] for i in owned]
    parts: dict[int, Partial] | None = {} if shard is not None else None
    done: set[int] = set()
    ran_jobs = min(jobs, len(units)) if parallel else 1
    stopped: list[bool] = []
    died: list[str] = []  # why the run could not finish: a worker process ended outright

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
            notes=died + ([shard_note(shard)] if shard is not None else []),
            shard=(
                record(shard, keys, parts, adapter_spec, tally)
                if shard is not None and parts is not None
                else None
            ),
            report_dir=report_dir,
        )

    _Current.result = result
    try:
        if parallel:
            assert adapter_spec is not None and load is not None
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
                load=load,
                kept=parts,
            )
            if parts is not None:  # by index in the whole plan
                parts = {owned[i]: part for i, part in parts.items()}
        else:
            ticks = Ticks(units, rule_ids, tick, started)
            ticks.start()
            for index, unit in enumerate(units):
                progress(unit.label)
                if parts is None:
                    tally.run_unit(unit, profile, seed)
                else:  # what the unit found alone, as a worker hands it back
                    alone = Tally(tally.selection, adapter, report_dir, tally.info, contract)
                    alone.run_unit(unit, profile, seed)
                    parts[owned[index]] = part = alone.partial()
                    tally.merge(part)
                done.add(index)
                ticks.done(index, tally.scenarios)
    except KeyboardInterrupt:
        pass
    except WorkerDied as e:
        died.append(str(e))
    except StopEarly:
        stopped.append(True)
    finally:
        _Current.result = None
    if write_corpus is not None and tally.recorded is not None:
        writer = CorpusWriter(write_corpus, profile=profile, rules=rule_ids, info=tally.info)
        writer.add_all(tally.recorded)
        writer.close()
    return result()


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
