"""In-process speed of the kit against the bundled reference (a benchmark, not a test).

    python benchmarks/bench_inprocess.py            # scenarios/s + wall time of quick and ci
    python benchmarks/bench_inprocess.py --profiles ci

Prints one line per measurement; README quotes the figures.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from hypothesis import HealthCheck, given, settings

from conformance.adapters import load_adapter
from conformance.core.runner import judge, run_suite
from conformance.core.strategies import scenarios


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


def scenarios_per_second(n: int = 300) -> tuple[float, float]:
    """(generation + execution + judging, execution + judging only) scenarios per second."""
    adapter = load_adapter("reference")
    started = time.perf_counter()
    drawn = corpus(n)
    generated = time.perf_counter() - started
    started = time.perf_counter()
    for s in drawn:
        judge(s, adapter.run(s))
    executed = time.perf_counter() - started
    return len(drawn) / (generated + executed), len(drawn) / executed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--profiles", default="quick,ci")
    args = parser.parse_args()
    total, run_only = scenarios_per_second()
    print(
        f"in-process, general scenarios: {total:.0f}/s end to end, {run_only:.0f}/s run+judge only"
    )
    for profile in args.profiles.split(","):
        started = time.perf_counter()
        result = run_suite(load_adapter("reference"), profile=profile)
        wall = time.perf_counter() - started
        statuses = {}
        for outcome in result.rules:
            statuses[outcome.status] = statuses.get(outcome.status, 0) + 1
        print(f"profile {profile}: {wall:.1f} s wall, {result.scenarios} scenarios, {statuses}")


if __name__ == "__main__":
    main()
