"""``toolreg-conformance``: run the kit, replay a counterexample, list the rules.

Exit codes (conformance/cli/common.py): 0 conformant (or exactly as expected),
1 not conformant / still failing, 2 usage, adapter, fixture or expect-file
errors and crashes of the kit itself, 130 interrupted.
"""

from __future__ import annotations

import argparse
import sys
import traceback
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TextIO

from conformance._version import __version__
from conformance.cli.common import (
    EXIT_FAIL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    RunProgress,
    UsageError,
    capture_logs,
    close_adapter,
    debug_enabled,
    leave_quietly,
    progress_printer,
    writable_dir,
)
from conformance.cli.common import load as _load_adapter
from conformance.running.tally import keep_hypothesis_out_of_the_cwd
from conformance.scenario.schema import FixtureError, load_json, validate
from conformance.seam.adapter import FAILURE_CATEGORIES, Adapter, AdapterError
from conformance.vocab import Status

if TYPE_CHECKING:
    from conformance.cli.common import CapturedLogs
    from conformance.judging.contract import Contract
    from conformance.reporting.expectations import Expectations
    from conformance.running.outcomes import RunResult
    from conformance.running.shard import Shard
    from conformance.scenario.corpus import Corpus

__all__ = ["main"]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # argparse's usage errors: exit 2, no SystemExit
        raise UsageError(f"{self.prog}: {message}")


def _parser() -> argparse.ArgumentParser:
    from conformance.running.tally import PROFILES

    parser = _Parser(
        prog="toolreg-conformance",
        description="Check a tool-registry implementation against SPEC.md, rule by rule.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    run = sub.add_parser("run", help="run the suite against an adapter")
    run.add_argument(
        "--adapter",
        default="reference",
        help="reference | python:MODULE:FACTORY | 'stdio:COMMAND ARGS...' | http://HOST:PORT "
        "(default: reference)",
    )
    _transport_options(run)
    run.add_argument("--profile", choices=list(PROFILES), default="ci", help="default: ci")
    run.add_argument(
        "--rules",
        help="comma-separated rule IDs, globs, ID:clause+clause (a rule judged on those of its "
        "named clauses only: toolreg-conformance rules lists them) or a named set, e.g. "
        "'PRE-*,FIN-2' or 'portable'",
    )
    run.add_argument(
        "--report", metavar="DIR", help="write report.json, report.md, junit.xml, report.html"
    )
    run.add_argument("--expect", metavar="FILE", help="gate against known failures")
    _contract_option(run)
    run.add_argument(
        "--update-expect",
        action="store_true",
        help="rewrite the --expect FILE from this run's outcomes",
    )
    run.add_argument("--seed", type=int, help="hypothesis seed (profile thorough)")
    run.add_argument(
        "--write-corpus",
        metavar="FILE",
        help="also record every scenario judged into FILE (a frozen corpus, JSON lines)",
    )
    run.add_argument(
        "--corpus",
        metavar="FILE",
        help="replay a frozen corpus instead of drawing: no generation, no shrinking",
    )
    run.add_argument(
        "--fail-fast",
        action="store_true",
        help="with --corpus: stop at the first failure (one process)",
    )
    run.add_argument(
        "-j",
        "--jobs",
        type=int,
        metavar="N",
        help="worker processes for an in-process adapter (default: the machine's cores; "
        "stdio/HTTP harnesses run in one)",
    )
    run.add_argument(
        "--shard",
        metavar="K/N",
        help="run only shard K of N (a stable split of the units by name); merge the N "
        "reports with `merge`",
    )
    _progress_options(run)
    merge = sub.add_parser(
        "merge", help="one report of the reports (or their directories) of `run --shard K/N`"
    )
    merge.add_argument("reports", metavar="REPORT", nargs="+")
    merge.add_argument(
        "--report", metavar="DIR", help="write report.json, report.md, junit.xml, report.html"
    )
    merge.add_argument("--expect", metavar="FILE", help="gate against known failures")
    merge.add_argument("-q", "--quiet", action="store_true", help="no progress at all")

    replay = sub.add_parser("replay", help="re-run a saved counterexample or a scenario file")
    replay.add_argument("files", metavar="FILE", nargs="+")
    replay.add_argument(
        "--expect-fail",
        action="store_true",
        help="exit 0 only if every case still fails (checks that published counterexamples "
        "still reproduce)",
    )
    replay.add_argument("--adapter", default="reference", help="default: reference")
    _contract_option(
        replay,
        "say of each violation whether it is a defect or a difference from DSH (the exit "
        "code still says whether the case reproduces)",
    )
    _transport_options(replay)

    publish = sub.add_parser(
        "publish",
        help="run, then write DIR/report.json, cases/, expect.json, README.md",
    )
    publish.add_argument("--adapter", required=True)
    publish.add_argument("--dir", required=True, metavar="DIR")
    publish.add_argument("--profile", choices=list(PROFILES), default="ci", help="default: ci")
    publish.add_argument(
        "--rules", help="as run --rules, e.g. 'portable' for an agent framework (default: all)"
    )
    _contract_option(publish, "default: DIR/contract.json when it exists")
    _progress_options(publish)
    _transport_options(publish)

    render = sub.add_parser(
        "render", help="Markdown from a report.json (plus the findings of an --expect file)"
    )
    render.add_argument("report", metavar="REPORT_JSON")
    render.add_argument("--expect", metavar="FILE", help="add its entries as findings")
    _contract_option(
        render,
        "classify the report's failures by this contract (a report run without one, or "
        "with another)",
    )
    render.add_argument("-o", "--output", metavar="FILE", help="default: stdout")
    render.add_argument(
        "--html",
        action="store_true",
        help="a self-contained HTML page (findings by root cause, trace timelines), not Markdown",
    )

    compare = sub.add_parser(
        "compare",
        help="rules x implementations (or releases) from several reports, changes first",
    )
    compare.add_argument(
        "reports", nargs="+", metavar="REPORT", help="a report.json, or a directory holding one"
    )
    compare.add_argument("-o", "--output", metavar="FILE", help="Markdown (default: stdout)")
    compare.add_argument("--json", metavar="FILE", help="also write the comparison as JSON")
    compare.add_argument("--html", metavar="FILE", help="also write the comparison as HTML")
    compare.add_argument("--title", help="the page's heading (default: Conformance comparison)")
    compare.add_argument(
        "--contract",
        metavar="FILE",
        action="append",
        default=[],
        help="classify the failures of every report of the contract's implementation by it "
        "(repeatable; a report keeps the classification it was run with otherwise)",
    )
    compare.add_argument(
        "--check",
        action="store_true",
        help="write nothing: exit 1 (showing the difference) unless -o FILE already says this",
    )

    rules = sub.add_parser("rules", help="list every rule and how it is tested")
    rules.add_argument(
        "--rules", help="only these (as run --rules: IDs, globs, ID:clause+clause, a named set)"
    )
    explain = sub.add_parser(
        "explain",
        help="a rule's SPEC text, each fixture on the reference and on a mutant that breaks it",
    )
    explain.add_argument("rule", metavar="RULE", help="a rule ID, e.g. PRE-3")
    explain.add_argument(
        "--all",
        action="store_true",
        help="every fixture that names the rule (default: its own, plus one of another rule "
        "when none of its own shows a mutant breaking it)",
    )
    explain.add_argument("--spec", metavar="FILE", help="SPEC.md (default: the checkout's)")
    _add_selftest(sub, list(PROFILES))

    from conformance.cli.http import add_commands as add_http_commands

    add_http_commands(sub, _transport_options)  # serve, fuzz-protocol
    from conformance.cli.doctor import add_command as add_doctor

    add_doctor(sub, _transport_options)
    from conformance.cli.init import add_command as add_init

    add_init(sub)
    return parser


def _contract_option(parser: argparse.ArgumentParser, extra: str = "") -> None:
    """``--contract FILE``: what the implementation promises (contract.schema.json)."""
    parser.add_argument(
        "--contract",
        metavar="FILE",
        help="the implementation's contract (fixtures/schema/contract.schema.json): a "
        "failure of a promised rule and clause is a defect (fail), any other a difference "
        "from DSH, shown apart and never failing the run; without one every rule is "
        "promised" + (f"; {extra}" if extra else ""),
    )


def _progress_options(parser: argparse.ArgumentParser) -> None:
    """``run`` and ``publish``: a live status line on a terminal, lines when asked, or nothing."""
    parser.add_argument(
        "--progress",
        action="store_true",
        help="when stderr is not a terminal (CI logs, pipes), a progress line per finished "
        "unit (rules and units done / total, scenarios, elapsed, ETA); a terminal always gets "
        "one live status line",
    )
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress at all")


def _transport_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--validate-protocol",
        action="store_true",
        help="validate every harness message against fixtures/schema/protocol.schema.json",
    )
    parser.add_argument(
        "--deadline",
        type=float,
        metavar="SECONDS",
        help="per-answer deadline of a stdio/HTTP harness, plus what the scenario itself "
        "waits for (default: 5)",
    )


def command() -> int:
    """The ``toolreg-conformance`` command (and ``python -m conformance``): :func:`main` on the
    process's arguments, then :func:`~conformance.cli.common.leave_quietly` before exit."""
    try:
        return main()
    finally:
        leave_quietly()


def main(argv: Sequence[str] | None = None) -> int:
    keep_hypothesis_out_of_the_cwd()
    try:
        args = _parser().parse_args(argv)
        if args.command == "run":
            return _run(args, sys.stdout, sys.stderr)
        if args.command == "merge":
            return _merge(args, sys.stdout, sys.stderr)
        if args.command == "replay":
            return _replay(args, sys.stdout)
        if args.command == "selftest":
            return _selftest(args, sys.stdout, sys.stderr)
        if args.command == "render":
            return _render(args, sys.stdout)
        if args.command == "publish":
            return _publish(args, sys.stdout, sys.stderr)
        if args.command == "compare":
            return _compare(args, sys.stdout)
        if args.command == "explain":
            return _explain(args, sys.stdout)
        if args.command == "init":
            from conformance.cli.init import main as init_main

            return init_main(args, sys.stdout)
        if args.command == "doctor":
            from conformance.cli.doctor import main as doctor_main

            return doctor_main(args, sys.stdout)
        if args.command in ("serve", "fuzz-protocol"):
            from conformance.cli.http import main as http_main

            return http_main(args, sys.stdout, sys.stderr)
        return _rules(args, sys.stdout)
    except UsageError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except AdapterError as e:
        print(f"adapter error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except FixtureError as e:
        print(f"malformed file: {e}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as e:  # a crash of the kit itself: one line, exit 2, never 1
        if debug_enabled():
            traceback.print_exc()
        where = traceback.extract_tb(e.__traceback__)[-1] if e.__traceback__ else None
        at = f" (at {Path(where.filename).name}:{where.lineno})" if where else ""
        print(
            f"kit error: {type(e).__name__}: {e}{at}; this is a bug in the kit, not a verdict "
            "on the implementation (TOOLREG_CONFORMANCE_DEBUG=1 shows the traceback)",
            file=sys.stderr,
        )
        return EXIT_USAGE


# ------------------------------------------------------------------------ run


def _run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from conformance.adapters import load_adapter
    from conformance.reporting.expectations import load_expectations
    from conformance.running.interrupt import interruptible
    from conformance.running.plan import select_rules
    from conformance.running.runner import default_jobs, run_suite

    if args.update_expect and not args.expect:
        raise UsageError("--update-expect needs --expect FILE")
    if args.update_expect and args.rules:
        raise UsageError(
            "--update-expect refuses a filtered run (--rules): it would drop every rule not run"
        )
    try:
        select_rules(args.rules)
    except ValueError as e:
        raise UsageError(str(e)) from None
    if args.jobs is not None and args.jobs < 1:
        raise UsageError(f"--jobs must be at least 1, got {args.jobs}")
    corpus = _corpus_options(args)
    shard = _shard_option(args)
    expectations: Expectations | None = None
    if args.expect and not (args.update_expect and not Path(args.expect).exists()):
        expectations = load_expectations(args.expect)
    contract = _load_contract(args.contract)
    report_dir = writable_dir(args.report)
    adapter = _load_adapter(args)

    progress = RunProgress(err, quiet=args.quiet, lines=args.progress)
    info = adapter.describe()
    progress.note(f"{info.name} {info.version} ({info.language}), profile {args.profile}")
    if contract is not None:
        progress.note(f"contract {contract.source}: {len(contract.promises)} rules promised")
    with interruptible() as stop:
        try:
            with progress, capture_logs(report_dir) as logs:  # the live line ends, come what may
                stop.on_stuck = lambda: _stuck(args, logs, report_dir, expectations, out, err)
                try:  # the doctor's probes run interruptible too (a harness may hang in them)
                    blind = _preflight(adapter, err, select_rules(args.rules))
                except KeyboardInterrupt:
                    blind = {}  # the run below sees the interrupt and stops before any unit
                result = run_suite(
                    adapter,
                    profile=args.profile,
                    rules=args.rules,
                    report_dir=report_dir,
                    seed=args.seed,
                    progress=progress,
                    jobs=args.jobs if args.jobs is not None else default_jobs(),
                    adapter_spec=str(args.adapter),
                    load=load_adapter,
                    tick=progress.tick,
                    contract=contract,
                    corpus=corpus,
                    write_corpus=Path(args.write_corpus) if args.write_corpus else None,
                    fail_fast="any" if args.fail_fast else None,
                    shard=shard,
                    adapter_errors=blind,
                )
                stop.settle()  # the run has its thread back: it finishes, not the watchdog
        finally:
            close_adapter(adapter)
        if contract is not None:
            result.notes += contract.notes_for(info.name, info.version)
        return _finish_run(args, result, logs, report_dir, expectations, out, err)


def _shard_option(args: argparse.Namespace) -> Shard | None:
    """``--shard K/N``, checked (a sharded run neither stops early nor writes a corpus)."""
    from conformance.running.shard import parse_shard

    if args.shard is None:
        return None
    if args.fail_fast or args.write_corpus or args.update_expect:
        raise UsageError(
            "--shard: --fail-fast, --write-corpus and --update-expect need a whole run"
        )
    try:
        return parse_shard(args.shard)
    except ValueError as e:
        raise UsageError(str(e)) from None


def _merge(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``merge REPORT...``: the whole run's result of its shards' reports, told and written
    as ``run`` tells and writes it (exit 2 for reports that do not make one run)."""
    from conformance.reporting.expectations import load_expectations
    from conformance.running.shard import adopt_counterexamples, merge

    reports = []
    for given in args.reports:
        path = Path(given) / "report.json" if Path(given).is_dir() else Path(given)
        document = load_json(path, "report")
        reports.append((str(path), document))
    try:
        result = merge(reports)
    except ValueError as e:
        raise UsageError(f"merge: {e}") from None
    report_dir = writable_dir(args.report)
    missing = adopt_counterexamples(result, [Path(name).parent for name, _ in reports], report_dir)
    for case in missing:
        print(f"note: counterexample {case} not found beside any shard's report", file=err)
    expectations = load_expectations(args.expect) if args.expect else None
    args.update_expect, args.progress = False, False
    with capture_logs(None) as logs:
        return _finish_run(args, result, logs, report_dir, expectations, out, err)


def _preflight(adapter: Adapter, err: TextIO, rules: Sequence[str]) -> dict[str, str]:
    """The doctor's probes, before the first rule: the rules a declared capability the
    adapter does not deliver would leave blind, each with the doctor's message. Only the
    probes some selected rule depends on run (cheap, and a run of PRE-1 sends nothing it
    does not judge)."""
    from conformance.running.doctor import PROBES, broken_rules, diagnose

    selected = set(rules)
    probes = [p for p in PROBES if selected & set(p.rules)]
    if not probes:
        return {}
    try:
        diagnoses = diagnose(adapter, probes)
    except Exception as e:  # the run itself reports an adapter that cannot run scenarios
        print(f"doctor: the probes could not run ({type(e).__name__}: {e})", file=err)
        return {}
    for d in diagnoses:
        if d.broken:
            print(
                f"adapter defect ({d.probe.name}): {d.detail}; fix: {d.probe.hook}; "
                f"reported error: {', '.join(d.probe.rules)} (toolreg-conformance doctor)",
                file=err,
            )
    return broken_rules(diagnoses)


def _corpus_options(args: argparse.Namespace) -> Corpus | None:
    """The corpus ``--corpus`` names (read and checked), after the options' own checks."""
    from conformance.scenario.corpus import read_corpus

    if args.fail_fast and not args.corpus:
        raise UsageError("--fail-fast needs --corpus FILE (a property cannot stop half-way)")
    if args.corpus and args.write_corpus:
        raise UsageError("--corpus and --write-corpus: a replay draws nothing new to record")
    if args.write_corpus:
        writable_dir(str(Path(args.write_corpus).parent), "--write-corpus")
    return read_corpus(args.corpus) if args.corpus else None


def _stuck(
    args: argparse.Namespace,
    logs: CapturedLogs,
    report_dir: Path | None,
    expectations: Expectations | None,
    out: TextIO,
    err: TextIO,
) -> None:
    """The interrupt watchdog's last act for a run stuck in its implementation: the partial
    report, as an interrupted run writes it (the process exits 130 right after)."""
    from conformance.running.runner import partial_result

    result = partial_result()
    if result is not None:
        _finish_run(args, result, logs, report_dir, expectations, out, err)


def _load_contract(path: str | None) -> Contract | None:
    """The ``--contract FILE`` (a malformed one: FixtureError, exit 2), or None."""
    if path is None:
        return None
    from conformance.judging.contract import load_contract

    return load_contract(path)


def _finish_run(
    args: argparse.Namespace,
    result: RunResult,
    logs: CapturedLogs,
    report_dir: Path | None,
    expectations: Expectations | None,
    out: TextIO,
    err: TextIO,
) -> int:
    """Tell what a run found, write its reports and say its exit code (130: interrupted)."""
    from conformance.reporting.expectations import (
        apply_expectations,
        updated_expectations,
        write_expectations,
    )
    from conformance.reporting.report import group_counts, write_reports
    from conformance.reporting.verdicts import verdict_words

    info = result.implementation

    progress = RunProgress(err, quiet=args.quiet, lines=args.progress)
    if logs.summary():
        print(f"note: {logs.summary()}", file=err)
    progress.note(f"{result.scenarios} scenarios in {result.duration_s:.1f} s")
    if result.incomplete:
        print(f"interrupted: {len(result.not_run)} rules did not run in full", file=err)
    if args.update_expect and not result.incomplete:
        updated = updated_expectations(result, expectations)
        write_expectations(args.expect, updated)
        updated.source = args.expect
        print(f"wrote {args.expect} ({len(updated.expected)} expected failures)", file=err)
        expectations = updated
    if expectations is not None:
        apply_expectations(result, expectations)

    rows = group_counts(result)
    width = max([5, *(len(g) for g, *_ in rows)])
    print(f"{'group':<{width}}  {'pass':>4}  {'fail':>4}  {'differ':>6}  {'other':>5}", file=out)
    for group, passed, failing, differing, other in rows:
        print(f"{group:<{width}}  {passed:>4}  {failing:>4}  {differing:>6}  {other:>5}", file=out)
    if result.coverage is not None:
        cov = result.coverage
        never = len(cov["notAttempted"])
        print(
            f"attack surface: {cov['attemptedCells']} of {cov['cells']} cells attempted"
            + (f" ({never} never: see the report's coverage section)" if never else "")
            + (f", {len(cov['excluded'])} excluded by capabilities" if cov["excluded"] else ""),
            file=out,
        )
    quiet = (Status.PASS, Status.UNTESTED, Status.NOT_APPLICABLE, Status.EXPECTED_FAIL)
    listed = [o for o in result.rules if o.status not in quiet]
    if listed:
        print(file=out)
    shown: set[str] = set()
    for o in listed:
        failures = o.problems()
        why = failures[0].message if failures and o.status != Status.UNEXPECTED_PASS else o.reason
        path = next((result.case_file(f) for f in failures if f.counterexample), None)
        status = f"{o.status} (not a defect)" if o.status == Status.DIFFERENCE else o.status
        line = f"{o.id}  {status}  {why or ''}"
        print(line + (f"  [{path}]" if path else ""), file=out)
        shown.add(f"{o.id}: {why}")
    for note in result.notes:
        if note not in shown:
            print(f"note: {note}", file=out)
    for kit_error in result.kit_errors:
        print(f"KIT ERROR (a bug in the kit, not the implementation): {kit_error}", file=out)
    if report_dir is not None:
        paths = write_reports(result, report_dir, args.expect)
        print(f"reports: {', '.join(str(p) for p in paths)}", file=err)
    verdict = verdict_words(
        conformant=result.conformant,
        known=sum(o.status == Status.EXPECTED_FAIL for o in result.rules),
        differing=sum(o.status == Status.DIFFERENCE for o in result.rules),
        incomplete=result.incomplete,
        contract=result.contract["file"] if result.contract is not None else None,
    )
    counts = {s: sum(o.status == s for o in result.rules) for s in {o.status for o in result.rules}}
    summary = ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
    print(f"\n{verdict}: {info.name} {info.version}: {summary}", file=out)
    if result.incomplete:
        return EXIT_INTERRUPTED
    return EXIT_OK if result.conformant else EXIT_FAIL


# --------------------------------------------------------------------- replay


def _prefixed(e: FixtureError, source: str, prefix: str) -> FixtureError:
    return FixtureError(source, prefix + e.path[1:], e.message)


def load_case(path: str) -> tuple[Mapping[str, Any], str | None, list[str]]:
    """(scenario, rule ID or None, what the case says was required) from a case or scenario file."""
    from conformance.judging.rules import RULES

    document = load_json(path)
    if isinstance(document, dict) and "scenario" in document and "rule" in document:
        rule = document["rule"]
        if not isinstance(rule, str) or rule not in RULES:
            raise FixtureError(path, "$.rule", f"{rule!r} is not a known rule ID")
        if not isinstance(document["scenario"], dict):
            raise FixtureError(path, "$.scenario", "a counterexample's scenario must be an object")
        try:
            validate(document["scenario"], "scenario", path)
        except FixtureError as e:
            raise _prefixed(e, path, "$.scenario") from None
        validate(document, "case", path)  # the rest of the case format (case.schema.json)
        required = document.get("required") or []
        return document["scenario"], rule, [str(r) for r in required]
    validate(document, "scenario", path)
    return document, None, []


def _case_clauses(path: str, document: Any, rule: str | None) -> frozenset[str] | None:
    """The clauses a counterexample was judged on (its ``clauses``), checked; None: all."""
    from conformance.judging.rules import RULES

    clauses = document.get("clauses") if isinstance(document, dict) else None
    if clauses is None or rule is None:
        return None
    declared = RULES[rule].clauses
    if not isinstance(clauses, list) or not all(c in declared for c in clauses):
        known = ", ".join(declared) or "none"
        raise FixtureError(
            path, "$.clauses", f"not a list of clauses of {rule} (it declares {known})"
        )
    return frozenset(clauses)


def _replay(args: argparse.Namespace, out: TextIO) -> int:
    cases = [(path, *load_case(path), load_json(path)) for path in args.files]  # read all first
    selections = [_case_clauses(path, doc, rule) for path, _, rule, _, doc in cases]
    contract = _load_contract(args.contract)
    adapter = _load_adapter(args)
    outcomes: list[tuple[int, bool]] = []
    try:
        for (path, scenario, rule, required, document), clauses in zip(
            cases, selections, strict=True
        ):
            if len(cases) > 1:
                print(f"== {path}", file=out)
            outcomes.append(_replay_one(adapter, scenario, rule, required, out, clauses, contract))
            _note_other_implementation(adapter, document, out)
    finally:
        close_adapter(adapter)
    codes = [code for code, _ in outcomes]
    if EXIT_USAGE in codes:
        return EXIT_USAGE
    if not args.expect_fail:
        return max(codes)
    # A case reproduces only as it was recorded: a case with a trace needs a trace whose
    # rule (or expect block) still fails -- an implementation that crashes now proves nothing.
    broken = 0
    for (code, traced), (_, _, _, _, document) in zip(outcomes, cases, strict=True):
        if code == EXIT_FAIL and not traced and document.get("trace") is not None:
            broken += 1
    fixed = sum(code == EXIT_OK for code in codes)
    if broken:
        print(f"\n{broken} of {len(codes)} cases produced no trace: cannot tell", file=out)
        return EXIT_USAGE
    if fixed:
        print(f"\n{fixed} of {len(codes)} cases no longer fail", file=out)
        return EXIT_FAIL
    print(f"\nall {len(codes)} cases still fail, as expected", file=out)
    return EXIT_OK


def _note_other_implementation(adapter: Adapter, document: Any, out: TextIO) -> None:
    """Say so when a case recorded on one implementation is replayed on another."""
    impl = document.get("implementation") if isinstance(document, dict) else None
    recorded = impl.get("name") if isinstance(impl, dict) else None
    name = adapter.describe().name
    if recorded is not None and recorded != name:
        print(f"  note: this case was recorded on {recorded!r}, replayed on {name!r}", file=out)


def _replay_one(
    adapter: Adapter,
    scenario: Mapping[str, Any],
    rule: str | None,
    required: list[str],
    out: TextIO,
    clauses: frozenset[str] | None = None,
    contract: Contract | None = None,
) -> tuple[int, bool]:
    """(exit code, whether the implementation produced a trace).

    The exit code says whether the case still shows what it showed (1: still failing),
    a defect or a difference alike; with a contract each violation says which it is.
    """
    from conformance.judging.contract import classify
    from conformance.judging.evaluate import KitError, evaluate

    info = adapter.describe()
    who = f"{info.name} {info.version}"
    target = rule or "every rule"
    if clauses is not None:
        target += f", clauses {', '.join(sorted(clauses))}"
    print(f"replaying {scenario.get('id')} ({target}) on {who}", file=out)
    for line in required:
        print(f"  originally: {line}", file=out)
    try:
        evaluation = evaluate(adapter, scenario, rules={rule: clauses} if rule else None)
    except KitError as e:
        print(f"KIT ERROR (a bug in the kit, not the implementation): {e}", file=out)
        return EXIT_USAGE, True
    trace, no_trace = evaluation.trace, evaluation.no_trace
    problems: list[str] = []
    if no_trace is not None:
        if no_trace.status is Status.NOT_APPLICABLE:
            print(f"SKIPPED: {who} cannot express this scenario: {no_trace.reason}", file=out)
            return EXIT_USAGE, False
        if no_trace.category in FAILURE_CATEGORIES:
            problems.append(f"the implementation failed to answer: {no_trace.message}")
        else:
            problems.append(no_trace.message)
        if no_trace.stderr:
            problems.append("its stderr:\n" + no_trace.stderr)
    checks = 0
    differences: list[str] = []
    scenario_id = str(scenario.get("id"))
    for rid, found in evaluation.verdicts.items():
        checks += len(found)
        for v in found:
            if v.ok:
                continue
            kind = classify(contract, rid, v.clause, scenario_id)
            clause = f" [clause {v.clause}]" if v.clause else ""
            line = f"{rid}{clause} {v.subject}: {v.message}"
            if kind.defect:
                problems.append(line + (" (a defect)" if contract is not None else ""))
            else:
                differences.append(f"{line} (a difference: {kind.why})")
    problems += [f"an action raised: {raised}" for raised in evaluation.raised]
    if problems or differences:
        if problems:
            print(f"still FAILING: {target} on {who}", file=out)
        else:
            print(f"still DIFFERS from DSH (not a defect): {target} on {who}", file=out)
        for problem in [*problems, *differences]:
            print(f"  - {problem}", file=out)
        return EXIT_FAIL, trace is not None
    note = "" if checks else " (the rule's premise did not hold: 0 checks)"
    print(f"FIXED: {target} holds on {who} ({checks} checks){note}", file=out)
    return EXIT_OK, True


# -------------------------------------------------------------------- publish


def _publish(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from conformance.reporting.publish import publish
    from conformance.running.plan import select_rules

    try:
        select_rules(args.rules)
    except ValueError as e:
        raise UsageError(str(e)) from None
    if args.contract is not None:
        _load_contract(args.contract)  # a malformed one is refused before the adapter starts
    adapter = _load_adapter(args)
    try:
        with RunProgress(err, quiet=args.quiet, lines=args.progress) as progress:
            expectations, matches = publish(
                adapter,
                args.dir,
                spec=args.adapter,
                profile=args.profile,
                rules=args.rules,
                progress=progress,
                tick=progress.tick,
                contract=args.contract,
            )
    finally:
        close_adapter(adapter)
    entries = expectations.expected
    listed = ", ".join(r for r in sorted(entries) if entries[r]["status"] != "difference")
    differing = ", ".join(r for r in sorted(entries) if entries[r]["status"] == "difference")
    print(f"published {args.dir}: expected failures: {listed or 'none'}", file=out)
    if differing:
        print(f"differences from DSH (not defects): {differing}", file=out)
    if not matches:
        print("the run has kit errors: see the report", file=out)
    return EXIT_OK if matches else EXIT_FAIL


# --------------------------------------------------------------------- render


def _compare(args: argparse.Namespace, out: TextIO) -> int:
    import json

    from conformance.reporting.compare import compare, comparison_markdown

    if args.check and not args.output:
        raise UsageError("--check needs -o FILE (the committed comparison)")
    from conformance.judging.contract import load_contract

    comparison = compare(args.reports, [load_contract(path) for path in args.contract])
    base = Path(args.output).resolve().parent if args.output else Path.cwd()
    text = comparison_markdown(comparison, base, title=args.title)
    if args.check:
        import difflib

        path = Path(args.output)
        old = path.read_text(encoding="utf-8") if path.exists() else ""
        if old == text:
            return EXIT_OK
        out.writelines(
            difflib.unified_diff(
                old.splitlines(keepends=True), text.splitlines(keepends=True), str(path), "now"
            )
        )
        out.write(f"{path} is out of date: rerun without --check\n")
        return EXIT_FAIL
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    else:
        out.write(text)
    if args.json:
        Path(args.json).write_text(
            json.dumps(comparison.to_json(), indent=2) + "\n", encoding="utf-8"
        )
    if args.html:
        from conformance.reporting.html import comparison_html

        page = comparison_html(comparison, Path(args.html).resolve().parent, title=args.title)
        Path(args.html).write_text(page, encoding="utf-8")
    return EXIT_OK


def _render(args: argparse.Namespace, out: TextIO) -> int:
    import os

    from conformance.reporting.expectations import load_expectations
    from conformance.reporting.report import findings_markdown, report_markdown, result_from_json

    document = load_json(args.report, "report")
    if "rules" not in document:  # fuzz-protocol's report alone
        from conformance.cli.http import protocol_only_markdown

        protocol_text = protocol_only_markdown(document["protocolConformance"])
        if args.output:
            Path(args.output).write_text(protocol_text, encoding="utf-8")
        else:
            out.write(protocol_text)
        return EXIT_OK
    contract = _load_contract(args.contract)
    if contract is not None:
        from conformance.reporting.classify import reclassified

        document = reclassified(document, contract)
    result = result_from_json(document)
    result.report_dir = Path(args.report).parent  # its case paths are relative to it
    if args.html:
        return _render_html(args, result, out)
    findings: list[str] = []
    expect = None
    if args.expect:
        expectations = load_expectations(args.expect)
        expect = expectations.to_json()
        # counterexample paths are relative to the expect file; show them from the output's dir
        where = Path(args.output).parent if args.output else Path.cwd()
        base = os.path.relpath(Path(args.expect).parent, where)
        findings = findings_markdown(expectations.expected, "" if base == "." else base + "/")
    text = report_markdown(result, document.get("expectFile"), findings, expect=expect)
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    else:
        out.write(text)
    return EXIT_OK


def _render_html(args: argparse.Namespace, result: RunResult, out: TextIO) -> int:
    from conformance.reporting.cases import load_cases
    from conformance.reporting.expectations import load_expectations
    from conformance.reporting.html import report_html

    expect = load_expectations(args.expect).to_json() if args.expect else None
    # the report's case paths are relative to its directory, the expect file's to its own
    expect_dir = Path(args.expect).parent if args.expect else None
    page_dir = Path(args.output).parent if args.output else Path.cwd()
    files = load_cases(result, expect, Path(args.report).parent, expect_dir, page_dir)
    page = report_html(result, expect, files.cases, links=files.links, missing=files.missing)
    if args.output:
        Path(args.output).write_text(page, encoding="utf-8")
    else:
        out.write(page)
    return EXIT_OK


# ---------------------------------------------------------------------- rules


def _rules(args: argparse.Namespace, out: TextIO) -> int:
    from conformance.judging.rules import FOCUS, RULES
    from conformance.running.plan import select
    from conformance.scenario.schema import FIXTURES

    try:
        selection = select(args.rules)
    except ValueError as e:
        raise UsageError(str(e)) from None
    selected = list(selection)
    rows = []
    for rid in selected:
        rule = RULES[rid]
        kind = "predicate" if rule.check is not None else f"untested: {rule.untested}"
        focus = FOCUS.get(rid)
        needs = ",".join(sorted(focus.needs)) if focus and focus.needs else "-"
        fixtures = len(list((FIXTURES / "rules" / rid).glob("*.json")))
        prop = "property" if focus else "no property"
        rows.append((rid, rule.title, needs, f"{fixtures} fixtures, {prop}", kind))
    rows.insert(0, ("ID", "TITLE", "NEEDS", "TESTED BY", "KIND"))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    for row in rows:
        cells = [row[i].ljust(widths[i]) for i in range(4)]
        print("  ".join([*cells, row[4]]).rstrip(), file=out)
    clauses = [(rid, RULES[rid].clauses, selection[rid]) for rid in selected if RULES[rid].clauses]
    if clauses:  # what --rules ID:clause+clause and a contract's "clauses" may name
        print("\nclauses (--rules ID:clause+clause):", file=out)
        for rid, declared, chosen in clauses:
            for name, text in declared.items():
                mark = "" if chosen is None or name in chosen else " (not selected)"
                print(f"  {rid}:{name}  {text}{mark}", file=out)
    tested = sum(RULES[r].check is not None for r in selected)
    print(
        f"\n{len(selected)} rules: {tested} with a predicate, {len(selected) - tested} untested",
        file=out,
    )
    return EXIT_OK


# -------------------------------------------------------------------- explain


def _explain(args: argparse.Namespace, out: TextIO) -> int:
    from conformance.judging.rules import RULES
    from conformance.reporting.teach import explain_text, spec_sections

    rule_id = str(args.rule)
    if rule_id not in RULES:
        known = ", ".join(sorted(RULES))
        raise UsageError(f"explain: {rule_id!r} is not a rule ID of SPEC.md (one of {known})")
    spec = None
    if args.spec is not None:
        path = Path(args.spec)
        if not path.is_file():
            raise UsageError(f"explain: --spec {args.spec}: no such file")
        spec = spec_sections(path)
    out.write(explain_text(rule_id, every=args.all, spec=spec))
    return EXIT_OK


# ------------------------------------------------------------------- selftest


def _add_selftest(sub: Any, profiles: list[str]) -> None:
    selftest = sub.add_parser(
        "selftest",
        help="run the kit against the mutant catalogue, the reference and the correct variants",
    )
    selftest.add_argument("--profile", choices=profiles, default="quick", help="default: quick")
    selftest.add_argument(
        "--full", action="store_true", help="run every rule against each mutant, not its targets"
    )
    selftest.add_argument(
        "-j", "--jobs", type=int, default=1, metavar="N", help="worker processes (default: 1)"
    )
    selftest.add_argument(
        "--mutants", metavar="LIST", help="only mutants matching these name globs or rule IDs"
    )
    selftest.add_argument(
        "--no-baseline",
        action="store_true",
        help="skip the reference and the correct variants (no false-positive check)",
    )
    selftest.add_argument(
        "--no-corpus",
        action="store_true",
        help="draw anew for every entry instead of replaying the reference's corpus",
    )
    selftest.add_argument("--markdown", metavar="FILE", help="also write the report as Markdown")
    selftest.add_argument("-q", "--quiet", action="store_true", help="no progress lines")


def _selftest(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from conformance.adapters.reference.mutants import CATALOGUE
    from conformance.selftest import format_markdown, format_table, run_selftest, select_mutants

    if args.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    try:
        names = select_mutants(args.mutants)
    except ValueError as e:
        raise UsageError(str(e)) from None

    from conformance.running.interrupt import interruptible

    progress = progress_printer(args.quiet, err)
    with interruptible():
        result = run_selftest(
            profile=args.profile,
            full=args.full,
            jobs=args.jobs,
            mutants={name: CATALOGUE[name] for name in names},
            baseline=not args.no_baseline,
            corpus=False if args.no_corpus else None,
            coverage=not args.mutants,
            progress=progress,
        )
        format_table(result, out)
        if args.markdown:
            with open(args.markdown, "w", encoding="utf-8") as md:
                format_markdown(result, md)
            print(f"wrote {args.markdown}", file=err)
    if result.incomplete:
        return EXIT_INTERRUPTED
    return EXIT_OK if result.ok else EXIT_FAIL


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
