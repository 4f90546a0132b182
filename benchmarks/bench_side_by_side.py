"""Run + judge and evaluate, before and after, alternately in one sitting (issue 26).

    python benchmarks/bench_side_by_side.py BEFORE_ROOT AFTER_ROOT [--rounds 2]

Each root is a checkout (``git archive REV | tar -x -C DIR`` makes one). Every round runs
each root in a fresh interpreter, one after the other, so both see the same machine load;
each measures, on the same 300 derandomized general scenarios (``bench_inprocess.corpus``),
the process's CPU seconds of ``judge(s, adapter.run(s))`` (run + judge) and of
``evaluate(adapter, s)`` (run + trace validation + judge), median of 3 repeats, after a
warm-up. Scenarios per CPU second hold steadier than wall time on a shared machine; the
load average is printed before each round.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

MEASURE = r"""
import statistics, sys, time
root = sys.argv[1]
sys.path[:0] = [root, root + "/benchmarks"]
import conformance
assert conformance.__file__.startswith(root), conformance.__file__
from bench_inprocess import corpus
from conformance.adapters import load_adapter
from conformance.judging.evaluate import evaluate, judge
adapter = load_adapter("reference")
drawn = corpus(300)
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


def measure(root: Path) -> tuple[int, int]:
    """(run + judge, evaluate) in scenarios per CPU second, for the checkout at ``root``."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        [sys.executable, "-c", MEASURE, str(root.resolve())],
        capture_output=True,
        text=True,
        check=True,
        env=env,
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
    for n in range(1, args.rounds + 1):
        load = os.getloadavg()[0]
        before, after = measure(args.before), measure(args.after)
        print(f"| {n} | {load:.2f} | {before[0]}/s | {after[0]}/s | {before[1]}/s | {after[1]}/s |")


if __name__ == "__main__":
    main()
