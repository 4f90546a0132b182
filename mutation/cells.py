"""Which bundled mutants each attack-surface cell kills (issue 11: every cell kills one).

For every cell of ``conformance/fixtures/schema/attack-surface.json`` the probe
scenario (:func:`conformance.scenario.surface.probe_scenario`) is run against every
mutant of the catalogue and judged by every rule
(:func:`conformance.judging.evaluate.evaluate`); a cell *kills* a mutant when some
rule reports ``fail`` on it -- a crash of the kit or a missing trace is recorded
apart and is no kill. A mutant that dies on more than half of the probes is
*general* (it is wrong whatever the write: a cell that kills it proves nothing
about the write) and is left out of the cell's specific mutants.

    nice -n 19 python mutation/cells.py                        # the whole catalogue (~7 min)
    python mutation/cells.py --mutants 'res.*,pipe.views-*'     # some mutants, to stdout
    python mutation/cells.py --from-json out.json --markdown x.md   # the table again

Writes the matrix as JSON (``--json``: cell id -> [[mutant, [failing rules]], ...])
and as Markdown (``--markdown``; by default ``benchmarks/surface-kills.md`` when
the whole catalogue runs): the cells with the specific mutants they kill, then the
cells that kill none, grouped by the reason in :data:`REASONS`.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import logging
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

ROOT: Final = Path(__file__).resolve().parents[1]
DEFAULT_MARKDOWN: Final = ROOT / "benchmarks" / "surface-kills.md"
GENERAL_SHARE: Final = 0.5

Matrix = dict[str, list[list[Any]]]  # cell id -> [[mutant, [failing rule IDs]], ...]

#: Why a cell kills no specific mutant: (cell-id globs, reason), first match wins.
REASONS: Final[Sequence[tuple[tuple[str, ...], str]]] = (
    (
        ("*/result.meta/delete", "*/result.error/delete"),
        "Nothing to delete: the probe's result is a success of a tool without presentation "
        "metadata, so it has neither `meta` nor `error`; no registry can make deleting an "
        "absent field matter on this probe (a probe with `presentationMeta`, or a failing "
        "body, would be needed).",
    ),
    (
        ("post-execute/result.isError/delete", "finalize/result.isError/delete"),
        "A success whose `isError` is deleted still reads as a success to a tolerant reader "
        "(`res.post-execute-edits-in-place`, `res.finalizer-edits-in-place` read the draft "
        "back that way); a strict reader raises, which the finalize stage contains (FIN-4: "
        "the result is kept) and post-execute turns into a POST-4 failure (a listener "
        "that raised), which is what a correct registry does with a broken listener too.",
    ),
    (
        ("post-execute/result.error/assign",),
        "An `error` added to a success: a reader that discriminates on `isError` "
        "(`res.post-execute-edits-in-place`) ignores it. Only a registry that publishes the "
        "listener's dict itself, with no read-back, would publish a success with an error "
        "(RES-3); not bundled.",
    ),
    (
        ("*/execution.parent/delete",),
        "Nothing to delete: the probe's calls are model-direct, so the execution has no "
        "parent before the write and none after it; no registry can make that matter on this "
        "probe (a nested call, e.g. from a `run_code` program, would be needed).",
    ),
    (
        ("*/execution.new-field/add",),
        "Cannot be seen: a field no registry defines is read by none of its stages, and a "
        "trace's `observe: execution` records only callId, name, agent, hasParent and the "
        "arguments, so even a registry that lets the field stick shows no difference.",
    ),
    (
        ("*/kept.pre-decision/add",),
        "Cannot matter: a reason added to an `allow` decision after the waterfall ended is "
        "read by nobody (PRE-2 reads a deny's reason, PRE-3/PRE-4 an ask's, and both are read "
        "when the waterfall settles).",
    ),
    (
        ("post-execute/kept.pre-decision/*",),
        "Cannot matter: when post-execute runs, every route the pre-execute decision could "
        "choose is taken; what is left (finalizeContent, `tools/result`) is the same for a "
        "denied and a dispatched call (FIN-2, RES-1).",
    ),
    (
        ("*/caller.arguments/assign", "*/caller.name/assign"),
        "Not reachable behind the reference adapter: the caller's input it builds is a frozen "
        "`ToolExecutionInput`, so the write raises before any registry could re-read it; a "
        "registry that re-reads a mutable caller input (dsh-tools' plain objects) is "
        "probed by these cells when its adapter hands one (not bundled).",
    ),
    (
        ("*/execution.signal/replace",),
        "Cannot matter once the body has settled: the caller's abort that follows the write "
        "reaches no body (post-execute, finalizeContent, observers), and a body that replaces "
        "its own signal reads back its own write; the cell is kept for registries that "
        "re-dispatch (a retry wrapper) -- EXEC-1 and CANCEL-1 judge those.",
    ),
)
OPEN: Final = "Open: no bundled registry lets this write take effect yet."


def reason(cell_id: str) -> str:
    """Why ``cell_id`` kills no specific mutant (:data:`REASONS`, else :data:`OPEN`)."""
    for patterns, why in REASONS:
        if any(fnmatch.fnmatchcase(cell_id, p) for p in patterns):
            return why
    return OPEN


def measure(globs: Sequence[str] = ()) -> tuple[Matrix, dict[str, str]]:
    """Every probe against every selected mutant; (matrix, problems by 'mutant cell')."""
    logging.disable(logging.CRITICAL)  # the implementations' own logs
    from conformance.adapters.reference.mutants import CATALOGUE
    from conformance.judging.evaluate import evaluate
    from conformance.scenario import surface

    probes = [(c.id, surface.probe_scenario(c)) for c in surface.cells()]
    matrix: Matrix = {cell_id: [] for cell_id, _ in probes}
    problems: dict[str, str] = {}
    for name, entry in sorted(CATALOGUE.items()):
        if globs and not any(fnmatch.fnmatchcase(name, g) for g in globs):
            continue
        started = time.monotonic()
        adapter = entry.build()
        for cell_id, scenario in probes:
            if scenario is None:
                continue
            try:
                evaluation = evaluate(adapter, scenario)
            except Exception as e:  # a crash of the kit is no kill
                problems[f"{name} {cell_id}"] = f"{type(e).__name__}: {e}"
                continue
            if evaluation.trace is None:
                problems[f"{name} {cell_id}"] = f"no trace: {evaluation.no_trace}"
                continue
            failed = sorted(
                rule
                for rule, verdicts in evaluation.verdicts.items()
                if any(not v.ok for v in verdicts)
            )
            if failed:
                matrix[cell_id].append([name, failed])
        print(f"{name}: {time.monotonic() - started:.1f} s", file=sys.stderr, flush=True)
    return matrix, problems


def general(matrix: Mapping[str, Sequence[Sequence[Any]]]) -> dict[str, int]:
    """The mutants killed by more than :data:`GENERAL_SHARE` of the probes, with their count."""
    counts = Counter(str(kill[0]) for kills in matrix.values() for kill in kills)
    return {m: n for m, n in sorted(counts.items()) if n > GENERAL_SHARE * len(matrix)}


def specific(
    matrix: Mapping[str, Sequence[Sequence[Any]]],
) -> dict[str, list[tuple[str, list[str]]]]:
    """Each cell's kills of mutants that are not general."""
    broad = general(matrix)
    return {
        cell: [(str(k[0]), list(k[1])) for k in kills if k[0] not in broad]
        for cell, kills in matrix.items()
    }


def _measured_at(globs: Sequence[str]) -> str:
    """The commit and the size of the (selected) catalogue, as the report states them."""
    from conformance.adapters.reference.mutants import CATALOGUE

    head = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    names = [n for n in CATALOGUE if not globs or any(fnmatch.fnmatchcase(n, g) for g in globs)]
    return f"commit `{head or 'unknown'}`, {len(names)} mutants"


def markdown(matrix: Mapping[str, Sequence[Sequence[Any]]], command: str, at: str = "") -> str:
    """The report: cells with their specific mutants, then the others grouped by reason."""
    broad = general(matrix)
    kills = specific(matrix)
    killing = {c: k for c, k in kills.items() if k}
    lines = [
        "# Attack-surface cells and the bundled mutants they kill",
        "",
        "Issue 11: every cell of the attack surface should kill at least one bundled mutant. "
        "Each cell's probe scenario (`conformance.scenario.surface.probe_scenario`) is judged by "
        "every rule against every mutant of the catalogue; a cell kills a mutant when a rule "
        "reports `fail` (a crash is no kill). Generated by `mutation/cells.py`:",
        "",
        "```sh",
        command,
        "```",
        "",
        (f"Measured at {at}. " if at else "")
        + f"{len(matrix)} cells; **{len(killing)} kill at least one specific mutant**, "
        f"{len(matrix) - len(killing)} kill none.",
        "",
        f"General mutants (killed by more than {GENERAL_SHARE:.0%} of the probes: wrong "
        "whatever the write, so they are no evidence for a cell): "
        + (", ".join(f"`{m}` ({n})" for m, n in broad.items()) or "none")
        + ".",
        "",
        "## Cells that kill a specific mutant",
        "",
        "| cell | mutants (failing rules) |",
        "| --- | --- |",
    ]
    for cell, found in killing.items():
        said = "; ".join(f"`{m}` ({', '.join(rules)})" for m, rules in found)
        lines.append(f"| `{cell}` | {said} |")
    groups: dict[str, list[str]] = {}
    for cell, found in kills.items():
        if not found:
            groups.setdefault(reason(cell), []).append(cell)
    lines += ["", "## Cells that kill none, by reason", ""]
    for why, cells in sorted(groups.items(), key=lambda g: (g[0] == OPEN, g[0])):
        lines += [f"**{why}** ({len(cells)})", "", *(f"- `{c}`" for c in cells), ""]
    return "\n".join(lines).rstrip() + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--mutants", help="comma-separated name globs (default: every mutant)")
    parser.add_argument("--json", type=Path, help="write the matrix as JSON")
    parser.add_argument("--markdown", type=Path, help="write the Markdown report here")
    parser.add_argument("--from-json", type=Path, help="read the matrix instead of measuring")
    args = parser.parse_args(argv)
    globs = [g.strip() for g in (args.mutants or "").split(",") if g.strip()]
    if args.from_json is not None:
        matrix: Matrix = json.loads(args.from_json.read_text(encoding="utf-8"))
    else:
        matrix, problems = measure(globs)
        for where, problem in sorted(problems.items()):
            print(f"not judged: {where}: {problem}", file=sys.stderr)
    if args.json is not None:
        args.json.write_text(json.dumps(matrix, indent=1) + "\n", encoding="utf-8")
    target = args.markdown or (None if globs else DEFAULT_MARKDOWN)
    if target is not None:
        command = "nice -n 19 python mutation/cells.py" + (
            f" --mutants '{args.mutants}'" if globs else ""
        )
        target.write_text(markdown(matrix, command, _measured_at(globs)), encoding="utf-8")
        print(f"wrote {target}", file=sys.stderr)
    for cell, found in specific(matrix).items():
        if found:
            print(f"{cell}: " + ", ".join(m for m, _ in found))
    return 0


if __name__ == "__main__":
    sys.exit(main())
