"""A harness that misbehaves on purpose, one way per MODE (the transport's self-tests).

    python tests/transport/fake_harness.py MODE

It answers like ``python -m conformance.harness`` (the reference), except on
the run with ``seq == 2`` of each process (of the first process only, when
the environment names a ONCE_DIR), or as the mode says, where it:

    hang          never answers
    crash         writes half a line, then dies with exit code 3
    exit          exits cleanly without answering
    garble        prints a line that is not JSON
    binary        prints bytes that are not UTF-8
    split         prints its (correct) answer split over two lines
    wrong-seq     answers with seq + 1
    wrong-type    answers the run with a "started" message
    errored       answers errored {context}
    noisy         never misbehaves, but writes plenty to stderr on every request
    skip-approval answers skipped {reason} for every scenario with an approval service
    old-protocol  answers start with protocol 0
    no-start      exits before the handshake
    crash-always  dies on every run
    hang-generated  never answers a generated scenario (id "generated/..."), answers fixtures
    changeling    describes a different implementation after a restart (needs STATE_DIR)
    bad-utf8      answers a JSON line with a byte that is not UTF-8 inside a string
    deep          answers a trace holding a list nested 900 deep
    very-deep     answers a trace holding a list nested 100,000 deep (raw text)
    long-line     prints a 2 MB line without a newline, then hangs
    partial-hang  prints half its answer, then hangs
    stderr-flood  writes 20 MB to stderr without a newline, then answers correctly
    grandchild    starts a child that inherits stdout and sleeps, then exits unanswered
    escapee       the same, but the child leaves the process group (setsid) first
    grandchild-hang  starts such a child and hangs itself
    ignore-term   ignores SIGTERM and never answers
    hang-fifth    answers four runs per process and hangs on the fifth (seq 5), always
    escapee-always  on every run, starts a child that leaves the process group (setsid) and
                  sleeps (its command line carries the argument after MODE), then exits
                  unanswered

With FAKE_MISBEHAVING_FIFO naming a FIFO, the harness writes one line to it as it starts
to misbehave, so a test can wait for that moment without sleeping.

A child's pid is printed to stderr as ``child pid N``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from conformance.adapters.reference import ReferenceAdapter
from conformance.transport.protocol import HarnessSession, encode


def first_time() -> bool:
    """With ONCE_DIR set, misbehave in the first process only (restarts then behave)."""
    once = os.environ.get("ONCE_DIR")
    if once is None:
        return True
    marker = Path(once) / "misbehaved"
    if marker.exists():
        return False
    marker.touch()
    return True


def main() -> None:
    mode = sys.argv[1]
    session = HarnessSession(ReferenceAdapter())
    out = sys.stdout
    if mode == "no-start":
        print("fake harness: refusing to start", file=sys.stderr)
        sys.exit(4)
    for line in sys.stdin:
        request = json.loads(line)
        answer = session.handle(request)
        kind, seq = request["type"], request.get("seq")
        if mode == "noisy":
            for n in range(50):
                print(f"fake harness: noise {n} for {kind} {seq}", file=sys.stderr)
        if kind == "start" and mode == "old-protocol":
            answer["protocol"] = 0
        if kind == "start" and mode == "changeling":
            marker = Path(os.environ["STATE_DIR"]) / "started-once"
            if marker.exists():
                answer["implementation"]["name"] = "someone-else"
            marker.touch()
        if kind == "run" and mode == "hang-fifth" and seq == 5:
            threading.Event().wait()
        if kind == "run" and mode == "escapee-always":
            subprocess.Popen(
                [sys.executable, "-c", "import time, sys; time.sleep(600)", sys.argv[2]],
                start_new_session=True,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            os._exit(5)
        if kind == "run" and (seq == 2 or mode == "crash-always") and first_time():
            print(f"fake harness: misbehaving ({mode}) on seq {seq}", file=sys.stderr)
            sys.stderr.flush()
            fifo = os.environ.get("FAKE_MISBEHAVING_FIFO")
            if fifo:
                with open(fifo, "w") as signal_fifo:
                    signal_fifo.write(f"misbehaving {mode}\n")
            if mode == "hang":
                threading.Event().wait()
            if mode in ("crash", "crash-always"):
                out.write(encode(answer)[:10])
                out.flush()
                os._exit(3)
            if mode == "exit":
                sys.exit(0)
            if mode == "garble":
                out.write("this is not JSON\n")
                out.flush()
                continue
            if mode == "binary":
                out.buffer.write(b"\xff\xfe\x00garbage\n")
                out.flush()
                continue
            if mode == "split":
                text = encode(answer)
                out.write(text[: len(text) // 2] + "\n" + text[len(text) // 2 :] + "\n")
                out.flush()
                continue
            if mode == "bad-utf8":
                answer["trace"]["note"] = "MARK"
                out.buffer.write(encode(answer).encode().replace(b"MARK", b"\xffMARK") + b"\n")
                out.flush()
                continue
            if mode in ("deep", "very-deep"):
                depth = 900 if mode == "deep" else 100_000
                nested = "[" * depth + "]" * depth
                text = f'{{"type":"trace","seq":{seq},"trace":{{"deep":{nested}}}}}'
                out.write(text + "\n")
                out.flush()
                continue
            if mode == "long-line":
                out.write("x" * 2_000_000)
                out.flush()
                threading.Event().wait()
            if mode == "partial-hang":
                out.write(encode(answer)[:20])
                out.flush()
                threading.Event().wait()
            if mode == "stderr-flood":
                block = "e" * 1_000_000
                for _ in range(20):
                    sys.stderr.write(block)
                sys.stderr.flush()
            if mode in ("grandchild", "escapee", "grandchild-hang"):
                child = subprocess.Popen(
                    [sys.executable, "-c", "import time; time.sleep(600)"],
                    start_new_session=mode == "escapee",
                )  # stdout and stderr inherited
                print(f"fake harness: child pid {child.pid}", file=sys.stderr, flush=True)
                if mode == "grandchild-hang":
                    threading.Event().wait()
                os._exit(5)
            if mode == "ignore-term":
                signal.signal(signal.SIGTERM, signal.SIG_IGN)
                threading.Event().wait()
            if mode == "wrong-seq":
                answer["seq"] = seq + 1
            if mode == "wrong-type":
                answer = session.start({})
            if mode == "errored":
                answer = {"type": "errored", "seq": seq, "context": "fake: cannot map this"}
        scenario_id = str(request.get("scenario", {}).get("id", ""))
        if kind == "run" and mode == "hang-generated" and scenario_id.startswith("generated/"):
            threading.Event().wait()
        if kind == "run" and mode == "skip-approval" and "approval" in request["scenario"]:
            answer = {"type": "skipped", "seq": seq, "reason": "fake: no approval seam"}
        out.write(encode(answer) + "\n")
        out.flush()
        if kind == "stop":
            return


if __name__ == "__main__":
    main()
