"""Mutation testing of reference/ with cosmic-ray, the kit's quick run as the killing test.

    nice -n 19 python mutation/measure.py --sample 60 --seed 11   # a seeded sample
    nice -n 19 python mutation/measure.py --sample 30 --seed 11 --gate 0.9  # the CI gate
    nice -n 19 python mutation/measure.py --resume                 # go on where it stopped
    python mutation/measure.py --report-only                       # the tables of the session

What it does, in order (see mutation/README.md):

1. copies ``reference/`` and ``conformance/`` of ``--rev`` (default HEAD) with
   ``git archive`` into a scratch directory (``--work``, default under the system's
   temporary directory): cosmic-ray mutates files in place, and others work in this
   tree;
2. checks that ``reference`` and ``conformance`` import from that copy and that the
   unmutated reference survives (the baseline, timed: the mutants' timeout is
   ``max(60, 4 x baseline)`` s unless ``--timeout`` or ``--min-timeout``/``--timeout-factor``);
3. ``cosmic-ray init`` of every file of ``reference/`` with cosmic-ray's operators and
   the deletion operators of ``mutation/operators`` (registered in-process when that
   package is not installed); mutants inside annotations are skipped (equivalent by
   construction: every module has ``from __future__ import annotations``);
4. draws ``--sample N`` mutants with ``--seed`` (every file gets at least
   ``--min-per-file``, the rest in proportion to the file's mutants; a drawn mutant
   that does not compile, such as cosmic-ray's ``*`` -> ``^`` of a keyword-only
   marker, is replaced by the file's next one) and marks the others skipped; without
   ``--sample`` every mutant that compiles runs;
5. runs them one at a time in the seeded order through cosmic-ray's
   ``mutate_and_test`` with ``mutation/kill.py`` as the test command, recording
   each result in the session (stops after ``--budget`` minutes; ``--resume``
   continues);
6. prints the kill rate per file of ``reference/`` as Markdown (``--markdown FILE``
   writes it too) with every survivor's diff, and writes ``results.json`` in the work
   directory. With ``--gate RATE`` it exits 1 when the kill rate is below RATE.
   With ``--triage FILE`` (mutation/triage.json, see triage.py) the gate judges the
   *non-equivalent* kill rate instead, at the file's floor unless ``--gate`` is given,
   and lists every survivor the file does not triage as equivalent or defensive.
"""

from __future__ import annotations

import argparse
import compileall
import contextlib
import importlib
import io
import itertools
import json
import os
import py_compile
import random
import shlex
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
import warnings
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cosmic_ray.plugins  # type: ignore[import-untyped]
import kill  # the killing test beside this file: its corpus variable
import triage as triaged  # the gate's triaged survivors beside this file
from cosmic_ray.ast import ast_nodes, get_ast_from_path  # type: ignore[import-untyped]
from cosmic_ray.commands import execute as cr_execute  # type: ignore[import-untyped]
from cosmic_ray.commands import init as cr_init
from cosmic_ray.config import load_config, serialize_config  # type: ignore[import-untyped]
from cosmic_ray.modules import filter_paths, find_modules  # type: ignore[import-untyped]
from cosmic_ray.mutating import mutate_and_test, mutate_code  # type: ignore[import-untyped]
from cosmic_ray.testing import run_tests  # type: ignore[import-untyped]
from cosmic_ray.work_db import WorkDB, use_db  # type: ignore[import-untyped]
from cosmic_ray.work_item import (  # type: ignore[import-untyped]
    TestOutcome,
    WorkerOutcome,
    WorkItem,
    WorkResult,
)

Position = tuple[tuple[int, int], tuple[int, int]]
HERE = Path(__file__).resolve().parent
REPO = HERE.parent
CONFIG = HERE / "cosmic-ray.toml"
COPIED = ("reference", "conformance")
DEFAULT_WORK = Path(tempfile.gettempdir()) / "toolreg-mutation"
MIN_TIMEOUT_S = 60.0
TIMEOUT_FACTOR = 4.0
DIFF_LINES = 12  # of a survivor's diff, in the Markdown


@dataclass
class Plan:
    """What a session runs and in which order; kept next to the session for --resume."""

    rev: str
    commit: str
    seed: int | None
    sample: int | None
    timeout: float
    baseline_s: float
    order: list[str]
    mutants_per_file: dict[str, int]
    seconds: dict[str, float] = field(default_factory=dict)
    #: The frozen corpus written from the unmutated reference (None: every mutant draws anew).
    corpus: str | None = None
    workers: int = 1
    wall_s: float = 0.0  # with HTTP workers: the session's wall time (no per-mutant times)

    def save(self, path: Path) -> None:
        path.write_text(json.dumps(self.__dict__, indent=1) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: Path) -> Plan:
        return cls(**json.loads(path.read_text(encoding="utf-8")))


def register_operators() -> None:
    """Make the ``toolreg/`` deletion operators known to cosmic-ray in this process."""
    if "toolreg" in cosmic_ray.plugins.OPERATOR_PROVIDERS:
        return  # installed: pip install -e mutation/operators
    sys.path.insert(0, str(HERE / "operators"))
    operators = importlib.import_module("toolreg_mutation_operators")
    cosmic_ray.plugins.OPERATOR_PROVIDERS["toolreg"] = operators.OperatorProvider()


def git(*args: str) -> bytes:
    return subprocess.run(["git", *args], cwd=REPO, check=True, capture_output=True).stdout


def make_tree(commit: str, tree: Path) -> None:
    """A fresh scratch copy of ``COPIED`` at ``commit``, with the killing test at mutation/.

    Its modules are compiled once, into bytecode checked against each source's hash: every
    kit run in the copy (one per mutant) then compiles only the file its mutant changed (the
    hash no longer matches), about 0.4 s less per mutant than compiling ~110 modules from
    source; and a restored file is never mistaken for its mutant, whatever their sizes and
    times (kill.py writes no bytecode, so these files stay the only ones)."""
    if tree.exists():
        shutil.rmtree(tree)
    tree.mkdir(parents=True)
    with tarfile.open(fileobj=io.BytesIO(git("archive", commit, *COPIED))) as archive:
        archive.extractall(tree, filter="tar")
    (tree / "mutation").mkdir()
    shutil.copy2(HERE / "kill.py", tree / "mutation" / "kill.py")
    for part in COPIED:
        compileall.compile_dir(
            tree / part,
            quiet=1,
            invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH,
        )


def check_imports(tree: Path) -> None:
    """Fail unless ``reference`` and ``conformance`` import from the scratch copy."""
    code = "import conformance, reference; print(reference.__file__); print(conformance.__file__)"
    env = {**os.environ, "PYTHONPATH": str(tree)}
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=tree, env=env, capture_output=True, text=True, check=True
    ).stdout.split()
    strays = [p for p in out if not Path(p).resolve().is_relative_to(tree.resolve())]
    if strays:
        sys.exit(f"the scratch copy does not shadow the installed package: {strays}")


def effective_config(timeout: float) -> Any:
    """mutation/cosmic-ray.toml with this interpreter and the given timeout."""
    config = load_config(str(CONFIG))
    command = shlex.split(config["test-command"])
    if command[0] == "python":
        command[0] = sys.executable
    config["test-command"] = shlex.join(command)
    config["timeout"] = timeout
    return config


def baseline(config: Any) -> float:
    """Seconds the unmutated reference takes; exits when it does not survive."""
    start = time.monotonic()
    outcome, output = run_tests(config["test-command"], config.timeout)
    if outcome != TestOutcome.SURVIVED:
        sys.exit(f"baseline: the unmutated reference does not pass the kit:\n{output}")
    return time.monotonic() - start


def replay_baseline(config: Any, corpus: str) -> None:
    """Exit unless the unmutated copy survives the replay of ``corpus`` too: a kit that
    cannot judge its own corpus (a rule the replay leaves not exercised, say) would kill
    every mutant by error, and the gate would pass on a kit that judged nothing."""
    os.environ[kill.CORPUS_VARIABLE] = corpus
    try:
        outcome, output = run_tests(config["test-command"], config.timeout)
    finally:
        del os.environ[kill.CORPUS_VARIABLE]
    if outcome != TestOutcome.SURVIVED:
        sys.exit(f"baseline: the unmutated reference does not survive the corpus replay:\n{output}")


def sort_key(item: WorkItem) -> tuple[str, str, int]:
    m = item.mutations[0]
    return (str(m.module_path), m.operator_name, m.occurrence)


def quotas(counts: dict[str, int], n: int, min_per_file: int) -> dict[str, int]:
    """How many mutants of each file a sample of about ``n`` takes."""
    total = sum(counts.values())
    return {f: min(c, max(min_per_file, round(n * c / total))) for f, c in sorted(counts.items())}


def draw(
    items: Sequence[WorkItem],
    n: int | None,
    seed: int,
    min_per_file: int,
    valid: Callable[[WorkItem], bool] = lambda _: True,
) -> list[WorkItem]:
    """The seeded sample (every item without ``n``), in the seeded order it runs in.

    A drawn item that is not ``valid`` is replaced by the next one of its file's
    seeded order: the quotas hold valid mutants.
    """
    rng = random.Random(seed)
    ordered = sorted(items, key=sort_key)
    if n is None:
        chosen = [item for item in ordered if valid(item)]
    else:
        by_file: dict[str, list[WorkItem]] = {}
        for item in ordered:
            by_file.setdefault(str(item.mutations[0].module_path), []).append(item)
        counts = {f: len(v) for f, v in by_file.items()}
        chosen = []
        for f, k in quotas(counts, n, min_per_file).items():
            candidates = rng.sample(by_file[f], len(by_file[f]))
            chosen += list(itertools.islice(filter(valid, candidates), k))
    rng.shuffle(chosen)
    return chosen


def annotation_spans(path: Path) -> list[Position]:
    """Where the annotations of a module are (parameters, returns, annotated names)."""
    spans: list[Position] = []
    for node in ast_nodes(get_ast_from_path(path)):
        annotation = None
        if node.type in ("param", "funcdef"):
            annotation = node.annotation
        elif node.type == "annassign":
            annotation = node.children[1]
        if annotation is not None:
            spans.append((annotation.start_pos, annotation.end_pos))
    return spans


def in_annotation(item: WorkItem, spans: dict[str, list[Position]]) -> bool:
    """Whether the mutation lies inside an annotation: equivalent by construction, since
    every module of reference/ has ``from __future__ import annotations`` and nothing
    evaluates them."""
    m = item.mutations[0]
    path = str(m.module_path)
    if path not in spans:
        spans[path] = annotation_spans(Path(path))
    return any(a <= tuple(m.start_pos) and tuple(m.end_pos) <= b for a, b in spans[path])


def start(args: argparse.Namespace, work: Path, tree: Path, session: Path) -> Plan:
    """Copy, check, time the baseline, init the session and draw the sample."""
    commit = git("rev-parse", "--verify", f"{args.rev}^{{commit}}").decode().strip()
    make_tree(commit, tree)
    check_imports(tree)
    os.chdir(tree)
    probe = effective_config(30 * MIN_TIMEOUT_S)  # a mutant's --timeout is no baseline's
    corpus: str | None = None
    if args.corpus:  # the run that writes the corpus is the baseline: one quick run, not two
        started = time.monotonic()
        corpus = write_corpus(tree, work / "corpus.jsonl", jobs=args.workers)
        baseline_s = time.monotonic() - started
        replay_baseline(probe, corpus)
    else:
        baseline_s = baseline(probe)
    timeout = args.timeout or max(args.min_timeout, args.timeout_factor * baseline_s)
    config = effective_config(timeout)
    config["excluded-modules"] = [*config.get("excluded-modules", ()), *args.exclude]
    (work / "cosmic-ray.toml").write_text(serialize_config(config), encoding="utf-8")
    modules = sorted(
        filter_paths(
            find_modules([Path(config["module-path"])]), config.get("excluded-modules", ())
        )
    )
    with use_db(str(session), mode=WorkDB.Mode.create) as db:
        cr_init(modules, db, config.operators_config)
        spans: dict[str, list[Position]] = {}
        annotated = [item for item in db.work_items if in_annotation(item, spans)]
        db.set_multiple_results(
            [item.job_id for item in annotated],
            WorkResult(output="in an annotation", worker_outcome=WorkerOutcome.SKIPPED),
        )
        items = db.pending_work_items
        chosen = draw(items, args.sample, args.seed, args.min_per_file, compiles)
        picked = {item.job_id for item in chosen}
        skipped = [item.job_id for item in items if item.job_id not in picked]
        db.set_multiple_results(
            skipped, WorkResult(output="not in the sample", worker_outcome=WorkerOutcome.SKIPPED)
        )
    per_file = Counter(str(item.mutations[0].module_path) for item in items)
    print(
        f"{len(items)} mutants in {len(per_file)} files (and {len(annotated)} in annotations, "
        "not run); "
        f"running {len(chosen)} "
        f"(seed {args.seed}), baseline {baseline_s:.1f} s, timeout {timeout:.0f} s",
        file=sys.stderr,
    )
    return Plan(
        rev=args.rev,
        commit=commit,
        seed=args.seed if args.sample is not None else None,
        sample=args.sample,
        timeout=timeout,
        baseline_s=baseline_s,
        order=[item.job_id for item in chosen],
        mutants_per_file=dict(sorted(per_file.items())),
        corpus=corpus,
        workers=args.workers,
    )


def write_corpus(tree: Path, path: Path, *, jobs: int = 1) -> str:
    """The kit's quick run against the unmutated copy, recording its corpus into ``path``:
    every mutant's test then replays it with --fail-fast (mutation/kill.py). On ``jobs``
    worker processes (the mutants' workers: nothing else runs yet); the corpus is the same
    on any number, written in plan order."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(tree), os.environ.get("PYTHONPATH", "")]),
    }
    command = [sys.executable, "-m", "conformance", "run", "--profile", "quick", "-q"]
    done = subprocess.run(
        [*command, "-j", str(max(1, jobs)), "--write-corpus", str(path)],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        sys.exit(f"corpus: the unmutated reference does not pass the kit:\n{done.stderr}")
    return str(path)


def execute(plan: Plan, plan_path: Path, session: Path, budget_s: float | None) -> None:
    """Run the plan's pending mutants in order until the budget is spent (one at a time
    here, or on ``plan.workers`` HTTP workers: :func:`execute_distributed`)."""
    if plan.corpus is not None:
        os.environ[kill.CORPUS_VARIABLE] = plan.corpus  # kill.py replays it
    if plan.workers > 1:
        execute_distributed(plan, plan_path, session)
        return
    config = effective_config(plan.timeout)
    began = time.monotonic()
    with use_db(str(session), mode=WorkDB.Mode.open) as db:
        pending = {item.job_id: item for item in db.pending_work_items}
        todo = [job for job in plan.order if job in pending]
        for i, job in enumerate(todo, 1):
            if budget_s is not None and time.monotonic() - began > budget_s:
                print(f"budget spent: {len(todo) - i + 1} mutants not run", file=sys.stderr)
                return
            item = pending[job]
            t0 = time.monotonic()
            result = mutate_and_test(item.mutations, config["test-command"], plan.timeout)
            plan.seconds[job] = round(time.monotonic() - t0, 2)
            db.set_result(job, result)
            plan.save(plan_path)
            m = item.mutations[0]
            print(
                f"[{i}/{len(todo)}] {m.module_path}:{m.start_pos[0]} {m.operator_name} "
                f"-> {outcome(result)[0]} ({plan.seconds[job]:.0f} s)",
                file=sys.stderr,
            )


def execute_distributed(plan: Plan, plan_path: Path, session: Path) -> None:
    """The plan's pending mutants on ``plan.workers`` cosmic-ray HTTP workers on loopback,
    each in a scratch copy of its own, through cosmic-ray's own ``http`` distributor (it
    hands each worker the next pending mutant; cosmic-ray has no notion of the sample's
    order, so the order of completion is its). The mutants that are not in the sample are
    already marked skipped in the session, so the distributor runs exactly the sample."""
    work = session.parent
    workers: list[subprocess.Popen[str]] = []
    urls: list[str] = []
    try:
        for index in range(plan.workers):
            tree = work / f"worker-{index}"
            make_tree(plan.commit, tree)
            worker = subprocess.Popen(
                [sys.executable, str(Path(__file__).resolve()), "--http-worker"],
                cwd=tree,
                stdout=subprocess.PIPE,
                text=True,
                start_new_session=True,
            )
            workers.append(worker)
            assert worker.stdout is not None
            line = worker.stdout.readline()  # "listening on http://127.0.0.1:PORT"
            if "listening on " not in line:
                raise SystemExit(f"HTTP worker {index} did not start: {line!r}")
            urls.append(line.split("listening on ", 1)[1].strip())
        config = effective_config(plan.timeout)
        config["distributor"] = {"name": "http", "http": {"worker-urls": urls}}
        began = time.monotonic()
        with use_db(str(session), mode=WorkDB.Mode.open) as db:
            cr_execute(db, config)
        plan.wall_s = round(plan.wall_s + time.monotonic() - began, 2)
        plan.save(plan_path)
    finally:
        for worker in workers:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(worker.pid, signal.SIGKILL)
            worker.wait()


def serve_http_worker() -> None:
    """``--http-worker``: cosmic-ray's HTTP worker on a loopback port of its own choosing,
    with the deletion operators registered, mutating the copy in the current directory.
    Prints ``listening on URL`` once it listens (the driver reads it)."""
    import socket

    from aiohttp import web  # cosmic-ray's own dependency
    from cosmic_ray.distribution.http import handle_mutate_and_test  # type: ignore[import-untyped]

    register_operators()
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    app = web.Application()
    app.add_routes([web.post("/", handle_mutate_and_test)])
    print(f"listening on http://127.0.0.1:{port}", flush=True)
    web.run_app(app, sock=listener, print=None, handle_signals=True)


def outcome(result: WorkResult) -> tuple[str, str]:
    """(survived | killed | timeout | error-kill | incompetent | no-test, the kill's reason)."""
    if result.worker_outcome == WorkerOutcome.NO_TEST:
        return "no-test", ""
    if result.worker_outcome == WorkerOutcome.EXCEPTION or result.test_outcome in (
        None,
        TestOutcome.INCOMPETENT,
    ):
        return "incompetent", ((result.output or "").strip().splitlines() or [""])[-1]
    if result.test_outcome == TestOutcome.SURVIVED:
        return "survived", ""
    output = result.output or ""
    if output.strip() == "timeout":
        return "timeout", "timeout"
    verdict = next(
        (line for line in reversed(output.splitlines()) if line.startswith("verdict: ")), ""
    )
    reason = verdict.removeprefix("verdict: ")
    if reason.startswith("killed-by-rules "):
        return "killed", reason.removeprefix("killed-by-rules ")
    return "error-kill", reason or output.strip()[-300:]


@dataclass
class FileStats:
    mutants: int = 0
    run: int = 0
    killed: int = 0  # by a rule's verdict
    error_kill: int = 0  # the kit or the import crashed
    timeout: int = 0
    survived: int = 0
    invalid: int = 0  # not Python (cosmic-ray replaced the `*` of keyword-only arguments...)
    other: int = 0  # incompetent / no-test: counted nowhere

    @property
    def dead(self) -> int:
        return self.killed + self.error_kill + self.timeout

    @property
    def rate(self) -> float | None:
        judged = self.dead + self.survived
        return self.dead / judged if judged else None


def collect(
    plan: Plan, session: Path
) -> tuple[dict[str, FileStats], list[dict[str, Any]], Counter[str]]:
    """Per-file stats, every survivor and the count of kills per rule."""
    stats = {f: FileStats(mutants=n) for f, n in plan.mutants_per_file.items()}
    survivors: list[dict[str, Any]] = []
    killers: Counter[str] = Counter()
    with use_db(str(session), mode=WorkDB.Mode.open) as db:
        for item, result in db.completed_work_items:
            if result.worker_outcome == WorkerOutcome.SKIPPED:
                continue
            m = item.mutations[0]
            s = stats[str(m.module_path)]
            s.run += 1
            kind, reason = outcome(result)
            if kind == "killed":
                s.killed += 1
                killers.update(r.split("=")[0] for r in reason.split(","))
            elif kind == "error-kill" and not compiles(item):
                s.invalid += 1
            elif kind == "error-kill":
                s.error_kill += 1
                killers["(error) " + reason[:80]] += 1
            elif kind == "timeout":
                s.timeout += 1
                killers["(timeout)"] += 1
            elif kind == "survived":
                s.survived += 1
                survivors.append(
                    {
                        "file": str(m.module_path),
                        "line": m.start_pos[0],
                        "operator": m.operator_name,
                        "occurrence": m.occurrence,
                        "definition": m.definition_name,
                        "diff": diff_body(result.diff or ""),
                    }
                )
            else:
                s.other += 1
    survivors.sort(key=lambda s: (s["file"], s["line"], s["operator"]))
    return stats, survivors, killers


def compiles(item: WorkItem) -> bool:
    """Whether the item's mutation of the (unmutated) scratch copy is still Python. A mutation
    cosmic-ray itself cannot make (its ExceptionReplacer crashes on some ``except`` clauses
    parso parses into a node without a ``value``) is none: it could not run either."""
    m = item.mutations[0]
    operator = cosmic_ray.plugins.get_operator(m.operator_name)(**m.operator_args)
    try:
        code = mutate_code(Path(m.module_path).read_text(encoding="utf-8"), operator, m.occurrence)
    except Exception:  # any crash of the mutation itself: no mutant
        return False
    try:
        with warnings.catch_warnings():  # `x is "literal"` mutants warn
            warnings.simplefilter("ignore")
            compile(code, str(m.module_path), "exec")
    except SyntaxError:
        return False
    return True


def diff_body(diff: str) -> list[str]:
    """The changed lines of a unified diff, with one line of context."""
    lines = [x for x in diff.splitlines() if x and not x.startswith(("---", "+++", "@@"))]
    changed = [i for i, x in enumerate(lines) if x[0] in "+-"]
    if not changed:
        return []
    return lines[max(0, changed[0] - 1) : changed[-1] + 2][:DIFF_LINES]


def pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def total(stats: Iterable[FileStats]) -> FileStats:
    out = FileStats()
    for s in stats:
        for name in (*FileStats.__dataclass_fields__,):
            setattr(out, name, getattr(out, name) + getattr(s, name))
    return out


def markdown(
    plan: Plan, stats: dict[str, FileStats], survivors: list[dict[str, Any]], killers: Counter[str]
) -> Iterator[str]:
    spent = plan.wall_s or sum(plan.seconds.values())
    how = f"on {plan.workers} HTTP workers" if plan.workers > 1 else "one at a time"
    killing = "the quick run's corpus replayed, fail fast" if plan.corpus else "the quick run"
    yield (
        f"Commit `{plan.commit[:12]}`; sample {plan.sample or 'all'} (seed {plan.seed}); "
        f"baseline {plan.baseline_s:.1f} s, timeout {plan.timeout:.0f} s; killing test: "
        f"{killing}; {len(plan.order)} mutants run {how} in {spent / 60:.1f} min."
    )
    yield ""
    yield (
        "| file | mutants | run | killed (rule) | killed (error) | killed (timeout) "
        "| survived | not Python | other | kill rate |"
    )
    yield "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    for name, s in [*stats.items(), ("**all**", total(stats.values()))]:
        yield (
            f"| {name} | {s.mutants} | {s.run} | {s.killed} | {s.error_kill} | {s.timeout} "
            f"| {s.survived} | {s.invalid} | {s.other} | {pct(s.rate)} |"
        )
    yield ""
    yield "Kills per rule (a mutant killed by several rules counts for each):"
    yield ""
    yield ", ".join(f"{rule} {n}" for rule, n in killers.most_common()) or "(none)"
    yield ""
    yield f"### Survivors ({len(survivors)})"
    for sv in survivors:
        yield ""
        where = f"`{sv['file']}:{sv['line']}`"
        yield f"- {where} {sv['operator']} #{sv['occurrence']} in `{sv['definition']}`"
        yield ""
        yield "  ```diff"
        yield from (f"  {line}" for line in sv["diff"])
        yield "  ```"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rev", default="HEAD", help="the commit whose reference/ is mutated")
    parser.add_argument("--sample", type=int, help="about this many mutants (default: all)")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--min-per-file", type=int, default=3)
    parser.add_argument(
        "--exclude",
        action="append",
        default=[],
        metavar="GLOB",
        help="a module not to mutate, e.g. reference/example.py (repeatable)",
    )
    parser.add_argument(
        "--timeout", type=float, help="seconds per mutant (default: from the baseline)"
    )
    parser.add_argument(
        "--timeout-factor",
        type=float,
        default=TIMEOUT_FACTOR,
        metavar="F",
        help=f"without --timeout: F x the baseline, at least --min-timeout ({TIMEOUT_FACTOR})",
    )
    parser.add_argument(
        "--min-timeout",
        type=float,
        default=MIN_TIMEOUT_S,
        metavar="S",
        help=f"without --timeout: at least S seconds a mutant (default {MIN_TIMEOUT_S:.0f})",
    )
    parser.add_argument(
        "--budget", type=float, help="stop after this many minutes (--resume goes on)"
    )
    parser.add_argument("--resume", action="store_true", help="continue the session in --work")
    parser.add_argument(
        "--report-only", action="store_true", help="report on the session in --work, run nothing"
    )
    parser.add_argument("--work", type=Path, default=DEFAULT_WORK, help=f"default: {DEFAULT_WORK}")
    parser.add_argument("--markdown", type=Path, help="also write the Markdown here")
    parser.add_argument(
        "--gate", type=float, metavar="RATE", help="exit 1 below this kill rate (0..1)"
    )
    parser.add_argument(
        "--triage",
        type=Path,
        metavar="FILE",
        help="gate on the non-equivalent kill rate with this file's triaged survivors and floor",
    )
    parser.add_argument(
        "--no-corpus",
        dest="corpus",
        action="store_false",
        help="every mutant draws anew (default: replay the unmutated run's corpus, fail fast)",
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=1,
        metavar="N",
        help="run the mutants on N cosmic-ray HTTP workers on loopback (default: 1, in process)",
    )
    parser.add_argument("--http-worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.http_worker:
        serve_http_worker()
        return 0
    markdown_path = args.markdown.resolve() if args.markdown else None
    triage = load_triage(args.triage.resolve() if args.triage else None)

    register_operators()
    work = args.work.resolve()
    tree, session, plan_path = work / "tree", work / "session.sqlite", work / "plan.json"
    if args.report_only:  # a copy of its own: the session may still be running in `tree`
        plan = Plan.load(plan_path)
        make_tree(plan.commit, work / "report-tree")
        os.chdir(work / "report-tree")
    elif args.resume:
        plan = Plan.load(plan_path)
        make_tree(plan.commit, tree)  # a killed run may have left a mutated file behind
        os.chdir(tree)
    else:
        work.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            session.unlink()
        plan = start(args, work, tree, session)
        plan.save(plan_path)
    if not args.report_only:
        execute(plan, plan_path, session, None if args.budget is None else args.budget * 60)
    with use_db(str(session), mode=WorkDB.Mode.open) as db:
        pending = {item.job_id for item in db.pending_work_items}
    finished = not pending.intersection(plan.order)

    stats, survivors, killers = collect(plan, session)
    text = "\n".join(markdown(plan, stats, survivors, killers)) + "\n"
    print(text)
    if markdown_path:
        markdown_path.write_text(text, encoding="utf-8")
    rate = total(stats.values()).rate
    summary = {
        "commit": plan.commit,
        "sample": plan.sample,
        "seed": plan.seed,
        "finished": finished,
        "rate": rate,
        "seconds": plan.wall_s or sum(plan.seconds.values()),
        "workers": plan.workers,
        "corpus": plan.corpus is not None,
        "files": {f: {**s.__dict__, "rate": s.rate} for f, s in stats.items()},
        "survivors": survivors,
    }
    (work / "results.json").write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    if triage is not None:
        dead = total(stats.values()).dead
        return gate_non_equivalent(triage, dead, survivors, finished, args.gate)
    if args.gate is not None and (not finished or rate is None or rate < args.gate):
        print(f"gate: kill rate {pct(rate)} is below {pct(args.gate)}", file=sys.stderr)
        return 1
    return 0


def load_triage(path: Path | None) -> triaged.Triage | None:
    """The triage file, or exit with its error (the file and the JSON path)."""
    if path is None:
        return None
    try:
        return triaged.load(path)
    except triaged.TriageError as error:
        sys.exit(f"triage: {error}")


def gate_non_equivalent(
    triage: triaged.Triage,
    dead: int,
    survivors: list[dict[str, Any]],
    finished: bool,
    floor: float | None = None,
) -> int:
    """1 (with the survivors nobody triaged) when the non-equivalent kill rate is below
    ``floor`` (default: the triage file's) or the sample did not finish; else 0."""
    floor = triage.floor if floor is None else floor
    verdict = triaged.judge(dead, survivors, triage)
    rate = verdict.rate
    print(
        f"gate: non-equivalent kill rate {pct(rate)} ({verdict.killed}/{verdict.non_equivalent}:"
        f" {len(verdict.untriaged)} untriaged and {len(verdict.defensive)} defensive survivors);"
        f" floor {pct(floor)} (recorded {pct(triage.recorded)} = "
        f"{triage.killed}/{triage.non_equivalent}, less {triage.margin} mutants)",
        file=sys.stderr,
    )
    if verdict.untriaged:
        print(
            "gate: survivors not triaged equivalent or defensive in mutation/triage.json "
            "(a blind spot of the kit, or triage them in benchmarks/mutation.md and there):",
            file=sys.stderr,
        )
        for survivor in verdict.untriaged:
            print(f"  {triaged.describe(survivor)}", file=sys.stderr)
    if not finished:
        print("gate: the sample did not finish", file=sys.stderr)
        return 1
    if rate is None or rate < floor:
        print(f"gate: FAILED, {pct(rate)} is below the floor {pct(floor)}", file=sys.stderr)
        return 1
    print("gate: passed", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
