"""Run + judge and evaluate, before and after, alternately in one sitting (issue 26).

    python benchmarks/bench_side_by_side.py BEFORE_ROOT AFTER_ROOT [--rounds 2]

Each root is a checkout (``git archive REV | tar -x -C DIR`` makes one). Every round runs
each root in a fresh interpreter, one after the other, so both see the same machine load;
each measures, on the same 300 derandomized general scenarios, the process's CPU seconds
of ``judge(s, adapter.run(s))`` (run + judge) and of
``evaluate(adapter, s)`` (run + trace validation + judge), median of 3 repeats, after a
warm-up. Scenarios per CPU second hold steadier than wall time on a shared machine; the
load average is printed before each round.

The scenarios are drawn once, by the *after* root's ``bench_inprocess.corpus``, and handed to
both as a file: Hypothesis mixes literals of the code under test into what it draws, so two
checkouts that differ in a constant draw different "same" scenarios.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

MEASURE = r"""
import json, statistics, sys, time
root = sys.argv[1]
sys.path[:0] = [root]
import conformance
assert conformance.__file__.startswith(root), conformance.__file__
from conformance.adapters import load_adapter
from conformance.judging.evaluate import evaluate, judge
adapter = load_adapter("reference")
with open(sys.argv[2], encoding="utf-8") as drawn_file:
    drawn = json.load(drawn_file)
for s in drawn[:30]:
    evaluate(adapter, s)
run_judge, evaluated = [], []
for _ in range(3):
    started = time.process_time()
    for s in drawn:
        judge(s, adapter.run(s))
    run_judge.append(len(drawn) / (time.process_time() - started))
    started = time.process_time()
    for s in drawn:
        evaluate(adapter, s)
    evaluated.append(len(drawn) / (time.process_time() - started))
print(f"{statistics.median(run_judge):.0f} {statistics.median(evaluated):.0f}")
"""


DRAW = r"""
import json, sys
root = sys.argv[1]
sys.path[:0] = [root, root + "/benchmarks"]
from bench_inprocess import corpus
with open(sys.argv[2], "w", encoding="utf-8") as out:
    json.dump(corpus(300), out)
"""


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


def draw(root: Path, path: Path) -> None:
    """Write the 300 scenarios both roots are measured on, drawn by the checkout at ``root``."""
    command = [sys.executable, "-c", DRAW, str(root.resolve()), str(path)]
    subprocess.run(command, check=True, env=_env())


def measure(root: Path, drawn: Path) -> tuple[int, int]:
    """(run + judge, evaluate) in scenarios per CPU second, for the checkout at ``root``, on
    the scenarios in the file ``drawn``."""
    done = subprocess.run(
        [sys.executable, "-c", MEASURE, str(root.resolve()), str(drawn)],
        capture_output=True,
        text=True,
        check=True,
        env=_env(),
    )
    run_judge, evaluated = done.stdout.split()
    return int(run_judge), int(evaluated)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    print("| round | load (1 min) | before: run + judge | after: run + judge "
          "| before: evaluate | after: evaluate |")  # fmt: skip
    print("|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as scratch:
        drawn = Path(scratch) / "drawn.json"
        draw(args.after, drawn)
        for n in range(1, args.rounds + 1):
            load = os.getloadavg()[0]
            before, after = measure(args.before, drawn), measure(args.after, drawn)
            print(
                f"| {n} | {load:.2f} | {before[0]}/s | {after[0]}/s "
                f"| {before[1]}/s | {after[1]}/s |"
            )


if __name__ == "__main__":
    main()
