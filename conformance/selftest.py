"""``toolreg-conformance selftest``: prove the kit can fail -- and that it does not fail wrongly.

Three runs, each with the chosen profile:

* every **mutant** of the catalogue (``conformance/adapters/reference/mutants``)
  against the rules it declares it breaks (``--full``: against every rule).
  A mutant is *killed* only
  when each of its target rules reports ``fail``: a target that errors or times
  out (the mutant crashed or hung) does not count, and neither does a run with
  kit errors (a predicate crashed);
* the unmodified **reference**, against every rule: it must be conformant;
* every correct **variant** (``conformance/adapters/reference/mutants/variants.py``), against every
  rule: each must be conformant too, or a predicate is overfit.

It also checks that every rule with a predicate has at least one mutant.
Output is a table per run, ordered by name (deterministic whatever ``--jobs``).
"""

from __future__ import annotations

import fnmatch
import functools
import logging
import os
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from conformance.adapters.reference.mutants import CATALOGUE, VARIANTS, Mutant, Variant
from conformance.scenario.corpus import Corpus, read_corpus
from conformance.seam.adapter import Adapter

__all__ = [
    "Row",
    "SelftestResult",
    "format_markdown",
    "format_table",
    "run_mutant",
    "run_selftest",
    "run_variant",
    "select_mutants",
]

KILL_TARGET_MEDIAN_S = 2.0
KILL_TARGET_MAX_S = 10.0


@dataclass
class Row:
    """The outcome of one run of the kit: a mutant, the reference or a variant."""

    kind: str  # "mutant" | "reference" | "variant"
    name: str
    description: str
    targets: tuple[str, ...] = ()  # mutants only
    statuses: dict[str, str] = field(default_factory=dict)  # rule -> status, for every rule run
    failing: list[str] = field(default_factory=list)  # rules that made the run non-conformant
    kit_errors: list[str] = field(default_factory=list)
    conformant: bool = False
    seconds: float = 0.0
    detail: str = ""  # the first failure message worth showing

    @property
    def failed(self) -> list[str]:
        """Rules whose status is ``fail`` (a violation found), in rule order."""
        return [rid for rid, status in self.statuses.items() if status == "fail"]

    @property
    def killed(self) -> bool:
        """A mutant is killed when every target rule fails and the kit did not crash."""
        return (
            self.kind == "mutant"
            and not self.kit_errors
            and all(self.statuses.get(t) == "fail" for t in self.targets)
        )

    @property
    def ok(self) -> bool:
        return self.killed if self.kind == "mutant" else self.conformant and not self.kit_errors

    def why(self) -> str:
        """Why a mutant survived or a baseline run failed (empty when ``ok``)."""
        if self.ok:
            return ""
        if self.kit_errors:
            return f"kit error: {self.kit_errors[0]}"
        if self.kind == "mutant":
            survived = [f"{t} {self.statuses.get(t, 'not run')}" for t in self.targets]
            reason = f"target rule(s) did not fail: {', '.join(survived)}"
            return reason + (f" ({self.detail})" if self.detail else "")
        return f"rules {', '.join(self.failing)} failed" + (
            f": {self.detail}" if self.detail else ""
        )


@dataclass
class SelftestResult:
    profile: str
    full: bool
    jobs: int
    mutants: list[Row]
    baseline: list[Row]  # the reference first, then the variants
    uncovered: list[str]  # rules with a predicate and no mutant (when coverage is checked)
    seconds: float
    not_run: list[str] = field(default_factory=list)  # interrupted: entries that never ran

    @property
    def incomplete(self) -> bool:
        """Interrupted (SIGINT/SIGTERM) before every entry ran."""
        return bool(self.not_run)

    @property
    def survivors(self) -> list[Row]:
        return [r for r in self.mutants if not r.killed]

    @property
    def false_positives(self) -> list[Row]:
        return [r for r in self.baseline if not r.ok]

    @property
    def ok(self) -> bool:
        return (
            not self.incomplete
            and not self.survivors
            and not self.false_positives
            and not self.uncovered
        )

    def kill_times(self) -> list[float]:
        return [r.seconds for r in self.mutants if r.killed]


# ------------------------------------------------------------------ running


@contextmanager
def _quiet() -> Iterator[None]:
    """Silence the implementations' logging (a throwing observer is logged, by design)."""
    previous = logging.root.manager.disable
    logging.disable(logging.CRITICAL)
    try:
        yield
    finally:
        logging.disable(previous)


@functools.cache
def _corpus(path: str) -> Corpus:
    """A corpus file, read once per process (every entry of a selftest replays the same)."""
    return read_corpus(path)


def _run(
    kind: str,
    name: str,
    description: str,
    build: Callable[[], Adapter],
    targets: tuple[str, ...],
    profile: str,
    full: bool,
    corpus: str | None = None,
    write_corpus: str | None = None,
) -> Row:
    """Run the kit once on ``build()`` and tally the row.

    With ``corpus`` (a file the reference's run wrote) the entry replays it instead of
    drawing; a mutant's replay stops once each of its target rules has failed (unless
    ``full``), so a killed mutant costs the time to find its faults, not a whole run.
    """
    from conformance.running.runner import run_suite

    # a mutant: its target rules (unless full); a variant: the set it answers to (targets)
    rules = ",".join(targets) if targets and (kind == "variant" or not full) else None
    replay = _corpus(corpus) if corpus is not None else None
    fail_fast = "all" if replay is not None and kind == "mutant" and not full else None
    started = time.perf_counter()
    adapter = build()
    try:
        with _quiet():
            result = run_suite(
                adapter,
                profile=profile,
                rules=rules,
                corpus=replay,
                write_corpus=Path(write_corpus) if write_corpus is not None else None,
                fail_fast=fail_fast,
            )
    finally:
        close = getattr(adapter, "close", None)
        if callable(close):
            close()
    if result.incomplete:  # interrupted: this entry's row would be a guess
        raise KeyboardInterrupt
    seconds = time.perf_counter() - started
    row = Row(
        kind=kind,
        name=name,
        description=description,
        targets=targets,
        statuses={o.id: str(o.status) for o in result.rules},
        failing=[o.id for o in result.rules if result.failing(o)],
        kit_errors=list(result.kit_errors),
        conformant=result.conformant,
        seconds=seconds,
    )
    watched = targets if kind == "mutant" else tuple(row.failing)
    for outcome in result.rules:
        if outcome.id not in watched:
            continue
        problems = outcome.problems()
        if kind == "mutant" and outcome.status == "fail":
            continue  # killed by this rule: nothing to explain
        if problems:
            row.detail = f"{outcome.id} {outcome.status}: {problems[0].message}"
            break
        if outcome.status != "fail":
            row.detail = f"{outcome.id} {outcome.status} ({outcome.checks} checks)"
            break
    return row


def run_mutant(
    m: Mutant, *, profile: str = "quick", full: bool = False, corpus: str | None = None
) -> Row:
    """Run the kit once against one mutant (its target rules; ``full``: every rule)."""
    return _run("mutant", m.name, m.description, m.build, m.targets, profile, full, corpus)


def run_variant(v: Variant, *, profile: str = "quick", corpus: str | None = None) -> Row:
    """Run the whole kit once against one correct variant."""
    targets = (v.rules,) if v.rules else ()
    return _run("variant", v.name, v.description, v.build, targets, profile, True, corpus)


def _run_named(kind: str, name: str, profile: str, full: bool, corpus: str | None) -> Row:
    """Worker entry point: look the entry up by name (picklable arguments only)."""
    kind_, name_, description, build, targets = _entry(kind, name)
    return _run(kind_, name_, description, build, targets, profile, full, corpus)


Entry = tuple[str, str, str, Callable[[], Adapter], tuple[str, ...]]


def _reference() -> Adapter:
    from conformance.adapters.reference import ReferenceAdapter

    return ReferenceAdapter()


def _entry(kind: str, name: str) -> Entry:
    if kind == "reference":
        return kind, "reference", "the bundled reference registry", _reference, ()
    if kind == "variant":
        v = VARIANTS[name]
        return kind, name, v.description, v.build, (v.rules,) if v.rules else ()
    m = CATALOGUE[name]
    return kind, name, m.description, m.build, m.targets


def select_mutants(patterns: str | None) -> list[str]:
    """Catalogue mutants whose name matches one of the comma-separated globs, or that target
    one of the listed rule IDs (all of them when ``patterns`` is empty)."""
    if not patterns:
        return list(CATALOGUE)
    wanted = [p.strip() for p in patterns.split(",") if p.strip()]
    chosen = [
        name
        for name, m in CATALOGUE.items()
        if any(fnmatch.fnmatchcase(name, p) or p in m.targets for p in wanted)
    ]
    if not chosen:
        raise ValueError(f"--mutants {patterns!r} matches no mutant")
    return chosen


def run_selftest(
    *,
    profile: str = "quick",
    full: bool = False,
    jobs: int = 1,
    mutants: Mapping[str, Mutant] | None = None,
    variants: Mapping[str, Variant] | None = None,
    baseline: bool = True,
    coverage: bool = True,
    progress: Callable[[str], None] = lambda line: None,
    corpus: bool | None = None,
) -> SelftestResult:
    """Run the kit against every mutant, the reference and every variant.

    ``mutants`` / ``variants`` default to the whole catalogue; pass other
    mappings (e.g. in tests). ``baseline=False`` skips the reference and the
    variants; ``coverage`` demands a mutant for every rule with a predicate.
    ``jobs > 1`` runs entries in worker processes, which look them up by name:
    only catalogue entries can go there, anything else runs in this process.

    ``corpus`` (default: when the baseline runs, since the reference's run is then made
    anyway; a mutant's own property run, limited to its target rules, is already cheap):
    the reference's run, first and alone, writes a frozen corpus of everything it judged
    (:mod:`conformance.scenario.corpus`); every other entry replays it instead of drawing
    anew, and a mutant's replay stops once each of its target rules failed. A
    derandomized property draws the same examples for any implementation until its first
    failure, so a replay finds every fault the property run finds, and sooner.
    """
    from conformance.running.tally import PROFILES

    if profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r}; expected one of {', '.join(PROFILES)}")
    chosen_mutants = dict(CATALOGUE if mutants is None else mutants)
    chosen_variants = dict(VARIANTS if variants is None else variants) if baseline else {}
    started = time.perf_counter()
    tasks: list[Entry] = []
    if baseline:
        tasks.append(_entry("reference", "reference"))
    for v in sorted(chosen_variants.values(), key=lambda v: v.name):
        tasks.append(("variant", v.name, v.description, v.build, (v.rules,) if v.rules else ()))
    for m in sorted(chosen_mutants.values(), key=lambda m: m.name):
        tasks.append(("mutant", m.name, m.description, m.build, m.targets))
    if corpus is None:
        corpus = baseline
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="toolreg-selftest-") as scratch:
        written = str(Path(scratch) / "corpus.jsonl") if corpus else None
        try:
            if written is not None:  # the reference first, alone: it writes the corpus
                *_, description, build, _ = _entry("reference", "reference")
                row = _run("reference", "reference", description, build, (), profile, full,
                           write_corpus=written)  # fmt: skip
                if baseline:
                    progress(_progress_line(row))
                    rows.append(row)
                tasks = [t for t in tasks if t[0] != "reference"]
            _run_tasks(tasks, rows, jobs, profile, full, written, progress)
        except KeyboardInterrupt:
            pass  # interrupted: what ran is reported, the rest is listed as not run
    if baseline and not any(r.kind == "reference" for r in rows):
        tasks.insert(0, _entry("reference", "reference"))  # for the not-run list
    parallel = jobs > 1 and len(tasks) > 1 and all(_catalogued(t) for t in tasks)
    ran = {(r.kind, r.name) for r in rows}
    not_run = [f"{t[0]} {t[1]}" for t in tasks if (t[0], t[1]) not in ran]

    uncovered: list[str] = []
    if coverage:
        from conformance.judging.rules import RULES

        targeted = {t for m in chosen_mutants.values() for t in m.targets}
        uncovered = [rid for rid, r in RULES.items() if r.check is not None and rid not in targeted]
    return SelftestResult(
        profile=profile,
        full=full,
        jobs=jobs if parallel else 1,
        mutants=sorted((r for r in rows if r.kind == "mutant"), key=lambda r: r.name),
        baseline=sorted((r for r in rows if r.kind != "mutant"), key=_baseline_order),
        uncovered=uncovered,
        seconds=time.perf_counter() - started,
        not_run=not_run,
    )


def _baseline_order(row: Row) -> tuple[int, str]:
    """The reference first, then the variants by name."""
    return (0 if row.kind == "reference" else 1, row.name)


def _run_tasks(
    tasks: Sequence[Entry],
    rows: list[Row],
    jobs: int,
    profile: str,
    full: bool,
    corpus: str | None,
    progress: Callable[[str], None],
) -> None:
    """Run ``tasks`` (in worker processes when ``jobs > 1``), appending each row."""
    parallel = jobs > 1 and len(tasks) > 1 and all(_catalogued(t) for t in tasks)
    if parallel:
        with ProcessPoolExecutor(max_workers=jobs, initializer=_ignore_sigint) as pool:
            futures = [pool.submit(_run_named, t[0], t[1], profile, full, corpus) for t in tasks]
            try:
                for future in futures:
                    row = future.result()
                    progress(_progress_line(row))
                    rows.append(row)
            except KeyboardInterrupt:
                pool.shutdown(wait=True, cancel_futures=True)  # the running ones finish
                raise
        return
    for kind, name, description, build, targets in tasks:
        row = _run(kind, name, description, build, targets, profile, full, corpus)
        progress(_progress_line(row))
        rows.append(row)


def _ignore_sigint() -> None:
    """Workers leave SIGINT to the parent, which stops handing them entries."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _catalogued(task: Entry) -> bool:
    """Can a worker process find this entry by name (it is the catalogue's own)?"""
    kind, name, _, build, _ = task
    if kind == "reference":
        return True
    found = (CATALOGUE if kind == "mutant" else VARIANTS).get(name)
    return found is not None and found.build is build


def _progress_line(row: Row) -> str:
    if row.kind == "mutant":
        verdict = "killed" if row.killed else "SURVIVED"
    else:
        verdict = "conformant" if row.ok else "NOT CONFORMANT"
    return f"{row.kind} {row.name}: {verdict} in {row.seconds:.2f} s"


# ----------------------------------------------------------------- reporting


def _rules(ids: Sequence[str], limit: int = 4) -> str:
    if not ids:
        return "-"
    shown = ", ".join(ids[:limit])
    return shown + (f" +{len(ids) - limit}" if len(ids) > limit else "")


def summary_lines(result: SelftestResult) -> list[str]:
    lines: list[str] = []
    times = result.kill_times()
    killed = len(times)
    total = len(result.mutants)
    if total:
        what = "time per mutant (every rule)" if result.full else "time to kill"
        timing = (
            f"; {what}: median {statistics.median(times):.2f} s, max {max(times):.2f} s"
            if times
            else ""
        )
        lines.append(f"mutants: {killed} of {total} killed by their target rule{timing}")
        if (
            times
            and not result.full
            and (statistics.median(times) > KILL_TARGET_MEDIAN_S or max(times) > KILL_TARGET_MAX_S)
        ):
            lines.append(
                f"note: kill times exceed the targets (median {KILL_TARGET_MEDIAN_S:g} s, "
                f"max {KILL_TARGET_MAX_S:g} s)"
            )
    if result.baseline:
        passed = sum(r.ok for r in result.baseline)
        variants = sum(r.kind == "variant" for r in result.baseline)
        lines.append(
            f"baseline: {passed} of {len(result.baseline)} conformant (the reference and "
            f"{variants} correct variants; a failure here is a false positive)"
        )
    else:
        lines.append("baseline: skipped (no check for false positives)")
    if result.uncovered:
        lines.append(f"coverage: no mutant targets {', '.join(result.uncovered)}")
    if result.incomplete:
        lines.append(f"interrupted: {len(result.not_run)} entries did not run")
    verdict = "SELFTEST PASSED" if result.ok else "SELFTEST FAILED"
    if result.incomplete:
        verdict = "SELFTEST INCOMPLETE (interrupted)"
    lines.append(
        f"{verdict}: profile {result.profile}{', every rule per mutant' if result.full else ''}, "
        f"{result.seconds:.1f} s wall, {result.jobs} job(s)"
    )
    return lines


def format_table(result: SelftestResult, out: TextIO) -> None:
    """The plain-text report: mutants, then the baseline, then problems and the summary."""
    if result.mutants:
        timed = "time (every rule)" if result.full else "time to kill"
        headers: tuple[str, ...] = ("mutant", "target", "killed", "failed rules", timed)
        body: list[tuple[str, ...]] = [
            (
                r.name,
                ",".join(r.targets),
                "yes" if r.killed else "NO",
                _rules(r.failed),
                f"{r.seconds:.2f} s",
            )
            for r in result.mutants
        ]
        _table(headers, body, out)
    if result.baseline:
        print(file=out)
        headers = ("baseline (every rule)", "result", "failing rules", "time")
        body = [
            (
                r.name if r.kind == "reference" else f"variant {r.name}",
                "conformant" if r.ok else "NOT CONFORMANT",
                _rules(r.failing),
                f"{r.seconds:.2f} s",
            )
            for r in result.baseline
        ]
        _table(headers, body, out)
    problems = [r for r in [*result.mutants, *result.baseline] if not r.ok]
    if problems:
        print(file=out)
        for r in problems:
            label = "SURVIVED" if r.kind == "mutant" else "FALSE POSITIVE"
            print(f"{label} {r.name}: {r.why()}", file=out)
    print(file=out)
    for line in summary_lines(result):
        print(line, file=out)


def _table(headers: Sequence[str], body: Sequence[Sequence[str]], out: TextIO) -> None:
    widths = [max(len(str(row[i])) for row in [headers, *body]) for i in range(len(headers))]
    for row in [headers, *body]:
        cells = [str(cell).ljust(widths[i]) for i, cell in enumerate(row)]
        print("  ".join(cells).rstrip(), file=out)


def format_markdown(result: SelftestResult, out: TextIO) -> None:
    """The same report as Markdown (benchmarks/selftest.md is generated with it)."""
    options = f"--profile {result.profile}" + (" --full" if result.full else "")
    print("# Self-test: the mutant catalogue against the kit", file=out)
    print(file=out)
    print(
        f"Generated by `toolreg-conformance selftest {options} -j {result.jobs} --markdown FILE` "
        f"on a {os.cpu_count()}-core machine. Each mutant is a known-bad registry from "
        "`conformance/adapters/reference/mutants/`; *time to kill* is the wall time of "
        "the kit run on it " + ("(every rule)." if result.full else "(its target rules only)."),
        file=out,
    )
    print(file=out)
    print("| mutant | target | killed | failed rules | time to kill (s) | the bug |", file=out)
    print("| --- | --- | --- | --- | ---: | --- |", file=out)
    for r in result.mutants:
        print(
            f"| `{r.name}` | {', '.join(r.targets)} | {'yes' if r.killed else '**no**'} | "
            f"{_rules(r.failed)} | {r.seconds:.2f} | {r.description} |",
            file=out,
        )
    if result.baseline:
        print(file=out)
        print(
            "| baseline (every rule) | result | failing rules | time (s) | what differs |", file=out
        )
        print("| --- | --- | --- | ---: | --- |", file=out)
        for r in result.baseline:
            name = "reference" if r.kind == "reference" else f"variant `{r.name}`"
            verdict = "conformant" if r.ok else "**not conformant**"
            print(
                f"| {name} | {verdict} | {_rules(r.failing)} | {r.seconds:.2f} | {r.description} |",
                file=out,
            )
    print(file=out)
    for line in summary_lines(result):
        print(f"- {line}", file=out)
