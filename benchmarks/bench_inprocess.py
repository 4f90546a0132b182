"""In-process speed of the kit against the bundled reference (a benchmark, not a test).

    python benchmarks/bench_inprocess.py            # scenarios/s + wall time of quick and ci
    python benchmarks/bench_inprocess.py --profiles ci --jobs 1,2
    python benchmarks/bench_inprocess.py --cores 2  # run + judge on N processes at once
    PYTHONPATH=/tmp/before python benchmarks/bench_inprocess.py --cores 2  # another checkout

Prints one line per measurement; README quotes the figures.
"""

from __future__ import annotations

import argparse
import multiprocessing
import time
from typing import Any

from hypothesis import HealthCheck, given, settings

from conformance.adapters import load_adapter
from conformance.judging.evaluate import evaluate, judge
from conformance.running.runner import run_suite
from conformance.scenario.strategies import scenarios


def corpus(n: int) -> list[dict[str, Any]]:
    """``n`` general generated scenarios, drawn once, derandomized (the benchmarks' corpus)."""
    drawn: list[dict[str, Any]] = []

    @settings(
        max_examples=n,
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
    )
    @given(scenarios())
    def collect(s: dict[str, Any]) -> None:
        drawn.append(s)

    collect()
    return drawn


def run_and_judge(adapter: Any, drawn: list[dict[str, Any]]) -> None:
    """Run each scenario on ``adapter`` and judge it against every rule (what is timed)."""
    for s in drawn:
        judge(s, adapter.run(s))


def scenarios_per_second(n: int = 300) -> tuple[float, float, float]:
    """Scenarios per second: (generation + execution + judging, execution + judging only,
    execution + trace validation + judging, i.e. the runner's evaluate())."""
    adapter = load_adapter("reference")
    started = time.perf_counter()
    drawn = corpus(n)
    generated = time.perf_counter() - started
    started = time.perf_counter()
    run_and_judge(adapter, drawn)
    executed = time.perf_counter() - started
    started = time.perf_counter()
    for s in drawn:
        evaluate(adapter, s)
    evaluated = time.perf_counter() - started
    return len(drawn) / (generated + executed), len(drawn) / executed, len(drawn) / evaluated


def _run_judge_wall(n: int, repeat: int, ready: Any, out: Any) -> None:
    """One process's part of :func:`run_judge_on_cores`: (started, ended, scenarios) put on
    ``out``, timed from when every process is ready (``ready``, a barrier)."""
    adapter = load_adapter("reference")
    drawn = corpus(n)
    run_and_judge(adapter, drawn[:30])  # warm-up
    ready.wait()
    started = time.time()
    for _ in range(repeat):
        run_and_judge(adapter, drawn)
    out.put((started, time.time(), len(drawn) * repeat))


def run_judge_on_cores(processes: int, n: int = 300, repeat: int = 5) -> float:
    """Run + judge of the same ``n`` scenarios, ``repeat`` times over, in ``processes``
    processes at once, started together once each has drawn its scenarios: scenarios per
    second of wall time, from the first start to the last end (on a machine with that many
    idle cores; per CPU second of one process, :func:`scenarios_per_second`). One pass over
    300 scenarios takes a third of a second: a few make the figure steadier."""
    context = multiprocessing.get_context("fork")
    ready, out = context.Barrier(processes), context.Queue()
    workers = [
        context.Process(target=_run_judge_wall, args=(n, repeat, ready, out))
        for _ in range(processes)
    ]
    for worker in workers:
        worker.start()
    parts: list[tuple[float, float, int]] = [out.get() for _ in workers]
    for worker in workers:
        worker.join()
    wall = max(end for _, end, _ in parts) - min(start for start, _, _ in parts)
    return sum(count for _, _, count in parts) / wall


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--profiles", default="quick,ci")
    parser.add_argument("--jobs", default="1,2", help="worker processes to try, e.g. 1,2")
    parser.add_argument("--cores", type=int, help="only run + judge on this many processes")
    parser.add_argument("--repeat", type=int, default=5, help="passes over the corpus (--cores)")
    args = parser.parse_args()
    if args.cores:
        rate = run_judge_on_cores(args.cores, repeat=args.repeat)
        print(f"run + judge on {args.cores} processes at once: {rate:.0f} scenarios/s wall")
        return
    total, run_only, evaluated = scenarios_per_second()
    print(
        f"in-process, general scenarios: {total:.0f}/s end to end, {run_only:.0f}/s run+judge "
        f"only, {evaluated:.0f}/s run+validate+judge"
    )
    for profile in args.profiles.split(","):
        for jobs in (int(j) for j in args.jobs.split(",")):
            started = time.perf_counter()
            result = run_suite(
                load_adapter("reference"), profile=profile, jobs=jobs, adapter_spec="reference"
            )
            wall = time.perf_counter() - started
            statuses: dict[str, int] = {}
            for outcome in result.rules:
                statuses[str(outcome.status)] = statuses.get(str(outcome.status), 0) + 1
            print(
                f"profile {profile}, -j {jobs}: {wall:.1f} s wall, {result.scenarios} scenarios, "
                f"{statuses}"
            )


if __name__ == "__main__":
    main()
