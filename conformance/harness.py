"""A stdio harness for any in-process adapter -- by default the bundled reference.

    python -m conformance.harness                      # the reference registry
    python -m conformance.harness --adapter python:mypkg.adapter:make

It speaks the harness protocol (docs/protocol.md) on stdin/stdout: one JSON
request per line in, one JSON answer per line out. It is both the end-to-end
test of the stdio transport and the worked example for harness authors in
other languages: read a line, answer it, flush, repeat; keep stdout for
protocol lines only (anything the implementation prints goes to stderr).

    toolreg-conformance run --adapter "stdio:python -m conformance.harness"
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import sys
from collections.abc import Sequence

from conformance.adapters import load_adapter
from conformance.seam.adapter import AdapterError
from conformance.transport.protocol import HarnessSession

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m conformance.harness",
        description="Serve an in-process adapter over the stdio harness protocol.",
    )
    parser.add_argument(
        "--adapter",
        default="reference",
        help="reference | python:MODULE:FACTORY (default: reference)",
    )
    args = parser.parse_args(argv)
    if args.adapter.startswith(("stdio:", "http://", "https://")):
        parser.error("the harness serves an in-process adapter (reference or python:...)")
    protocol_out = sys.stdout
    # Keep stdout for protocol lines only: stray prints and logs go to stderr.
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    try:
        with contextlib.redirect_stdout(sys.stderr):
            session = HarnessSession(load_adapter(args.adapter))
    except AdapterError as e:
        print(f"harness: {e}", file=sys.stderr)
        return 2
    for line in sys.stdin:
        if not line.strip():
            continue
        with contextlib.redirect_stdout(sys.stderr):
            answer = session.handle_line(line)
        protocol_out.write(answer + "\n")
        protocol_out.flush()
        if answer == '{"type":"stopped"}':
            break
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
