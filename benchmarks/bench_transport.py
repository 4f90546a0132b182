"""Scenarios per second through each transport, beside in-process (a benchmark, not a test).

    python benchmarks/bench_transport.py                          # reference: in-process vs stdio
    python benchmarks/bench_transport.py --adapter "stdio:node harnesses/dsh/harness.mjs"
    python benchmarks/bench_transport.py --profile ci --adapter "stdio:node harnesses/dsh/..."

One fixed corpus of generated scenarios (drawn once, derandomized) runs on
each adapter; the per-scenario cost of a transport is its time minus the
in-process time on the same corpus. ``--profile`` also times a whole run of
the kit in that profile on the given adapter. README quotes the figures.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import time
from typing import Any

from bench_inprocess import corpus  # type: ignore[import-not-found,unused-ignore]

from conformance.adapters import load_adapter
from conformance.running.runner import run_suite
from conformance.seam.adapter import (
    Adapter,
    ImplementationFailure,
    ScenarioSkipped,
    requirements,
    trim,
)


def per_scenario_ms(adapter: Adapter, drawn: list[dict[str, Any]], rounds: int) -> float:
    """Median over ``rounds`` of the mean wall time per scenario (ms); skips count as runs."""
    adapter.describe()  # start outside the clock
    for s in drawn[:20]:  # warm up
        _run(adapter, s)
    samples = []
    for _ in range(rounds):
        started = time.perf_counter()
        for s in drawn:
            _run(adapter, s)
        samples.append((time.perf_counter() - started) * 1000 / len(drawn))
    return statistics.median(samples)


def runnable(adapter: Adapter, drawn: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The corpus as the kit would send it to ``adapter``: each scenario trimmed to the
    stages it declares, and only those it can run (an agent framework lacks stages)."""
    capabilities = adapter.describe().capabilities
    out = []
    for scenario in drawn:
        trimmed = dict(trim(scenario, capabilities))
        if requirements(trimmed) <= capabilities:
            out.append(trimmed)
    return out


def _run(adapter: Adapter, scenario: dict[str, Any]) -> None:
    with contextlib.suppress(ScenarioSkipped, ImplementationFailure):
        adapter.run(scenario)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--adapter",
        action="append",
        help="adapters to compare (default: reference over stdio)",
    )
    parser.add_argument("--scenarios", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--profile", help="also time a whole kit run in this profile")
    args = parser.parse_args()
    drawn = corpus(args.scenarios)
    reference = load_adapter("reference")
    baseline = per_scenario_ms(reference, drawn, args.rounds)
    print(f"{len(drawn)} scenarios; in-process reference: {baseline:.3f} ms/scenario")
    specs = args.adapter or [f"stdio:{sys.executable} -m conformance.harness"]
    for spec in specs:
        adapter = load_adapter(spec)
        try:
            mine = runnable(adapter, drawn)
            base = baseline
            if len(mine) < len(drawn):  # fewer stages: the reference on the same corpus
                base = per_scenario_ms(reference, mine, args.rounds)
                print(f"  {spec}: {len(mine)} of the scenarios run, trimmed to its stages")
            ms = per_scenario_ms(adapter, mine, args.rounds)
            overhead = f"{ms - base:+.3f} ms vs in-process reference ({base:.3f} ms)"
            print(f"{spec}: {ms:.3f} ms/scenario ({1000 / ms:.0f}/s), {overhead}")
            if args.profile:
                started = time.perf_counter()
                result = run_suite(adapter, profile=args.profile)
                wall = time.perf_counter() - started
                counts: dict[str, int] = {}
                for outcome in result.rules:
                    counts[outcome.status] = counts.get(outcome.status, 0) + 1
                print(
                    f"  profile {args.profile}: {wall:.1f} s wall, {result.scenarios} scenarios, "
                    f"{counts}"
                )
        finally:
            close = getattr(adapter, "close", None)
            if callable(close):
                close()


if __name__ == "__main__":
    main()
