"""``toolreg-conformance doctor``: does the adapter deliver what it declares? (issue 23).

One short probe scenario per declared capability (:mod:`conformance.running.doctor`),
judged from its trace; for each, what is wrong and the hook that fixes it. Exit 0 when
nothing declared is undelivered, 2 when something is (an adapter defect, never a verdict
on the implementation).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any, TextIO

from conformance.cli.common import EXIT_OK, EXIT_USAGE, load, opened

__all__ = ["add_command", "main"]


def add_command(sub: Any, transport_options: Callable[[argparse.ArgumentParser], None]) -> None:
    """The ``doctor`` subcommand."""
    doctor = sub.add_parser(
        "doctor",
        help="prove the adapter delivers every capability it declares (exit 2 when one is not)",
    )
    doctor.add_argument(
        "--adapter",
        default="reference",
        help="reference | python:MODULE:FACTORY | 'stdio:COMMAND ARGS...' | http://HOST:PORT "
        "(default: reference)",
    )
    transport_options(doctor)


def main(args: argparse.Namespace, out: TextIO) -> int:
    from conformance.running.doctor import diagnose, render

    with opened(load(args)) as adapter:
        info = adapter.describe()
        diagnoses = diagnose(adapter)
    print(f"doctor: {info.name} {info.version} ({info.language})", file=out)
    print(render(diagnoses), file=out)
    broken = [d.probe.name for d in diagnoses if d.broken]
    if broken:
        print(f"ADAPTER DEFECT: {', '.join(broken)} not delivered (see fix: above)", file=out)
        return EXIT_USAGE
    print("doctor: every declared capability the probes can see is delivered", file=out)
    return EXIT_OK
