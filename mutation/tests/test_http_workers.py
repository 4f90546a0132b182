"""cosmic-ray's own distributed execution: two HTTP workers on loopback run a tiny session.

The ``http`` distributor (cosmic-ray 8) posts each mutant to a worker URL; the worker
mutates its own copy of the code, runs the test command and answers with the result
(see mutation/README.md, "On several machines"). This runs a three-mutant session of a
two-line module through two workers, each in its own directory, and checks that every
result came back through HTTP, from both workers, with the right verdicts.

The workers are the driver's ``measure.py --http-worker``: cosmic-ray's HTTP worker (its
``handle_mutate_and_test`` route, as ``cosmic-ray http-worker`` serves it, with the
deletion operators registered) bound to a free 127.0.0.1 port it prints; the plain
command binds every interface, which a test on a shared machine must not.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

MODULE = "VALUE = True\nLIMIT = 2\n"  # three mutants: True -> False, 2 -> 1, 2 -> 3
CHECK = """\
import sys
from pathlib import Path

import mod

print("worker", Path.cwd().name)
sys.exit(0 if mod.VALUE is True and mod.LIMIT >= 2 else 1)
"""
MEASURE = Path(__file__).resolve().parents[1] / "measure.py"
DEADLINE = 30.0  # seconds for the whole session, workers' start included


@pytest.fixture
def workers(tmp_path: Path) -> Iterator[list[tuple[Path, str]]]:
    """Two workers, each serving its own copy of the module; killed at the end, come what may."""
    started: list[subprocess.Popen[bytes]] = []
    out: list[tuple[Path, str]] = []
    try:
        for name in ("w1", "w2"):
            home = tmp_path / name
            home.mkdir()
            (home / "mod.py").write_text(MODULE)
            (home / "check.py").write_text(CHECK)
            with (home / "worker.log").open("wb") as log:
                proc = subprocess.Popen(
                    [sys.executable, str(MEASURE), "--http-worker"],
                    cwd=home,
                    stdout=subprocess.PIPE,
                    stderr=log,
                    start_new_session=True,  # its test commands die with it
                )
            started.append(proc)
            assert proc.stdout is not None
            line = proc.stdout.readline().decode()  # "listening on http://127.0.0.1:PORT"
            assert line.startswith("listening on http://127.0.0.1:"), f"{name}: {line!r}"
            out.append((home, line.removeprefix("listening on ").strip()))
        yield out
    finally:
        for proc in started:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


def _cosmic_ray(*args: str, cwd: Path, timeout: float) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "cosmic_ray.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=max(1.0, timeout),
        check=False,
    )
    assert done.returncode == 0, f"cosmic-ray {args[0]}: {done.stderr[-2000:]}"
    return done.stdout


def test_a_session_runs_on_two_http_workers(
    tmp_path: Path, workers: list[tuple[Path, str]]
) -> None:
    until = time.monotonic() + DEADLINE
    home = tmp_path / "controller"
    home.mkdir()
    (home / "mod.py").write_text(MODULE)
    urls = [url for _, url in workers]
    (home / "cr.toml").write_text(
        "[cosmic-ray]\n"
        'module-path = "mod.py"\n'
        "timeout = 10.0\n"
        "excluded-modules = []\n"
        f"test-command = {json.dumps(f'{sys.executable} check.py')}\n"
        "[cosmic-ray.distributor]\n"
        'name = "http"\n'
        "[cosmic-ray.distributor.http]\n"
        f"worker-urls = {json.dumps(urls)}\n"
    )
    _cosmic_ray("init", "cr.toml", "s.sqlite", cwd=home, timeout=until - time.monotonic())
    _cosmic_ray("exec", "cr.toml", "s.sqlite", cwd=home, timeout=until - time.monotonic())
    dumped = _cosmic_ray("dump", "s.sqlite", cwd=home, timeout=until - time.monotonic())
    rows = [json.loads(line) for line in dumped.splitlines() if line.strip()]
    assert len(rows) == 3
    outcomes: dict[tuple[str, int], str] = {}
    served: set[str] = set()
    for item, result in rows:
        assert result is not None, f"no result came back for {item}"
        assert result["worker_outcome"] == "normal", result
        (mutation,) = item["mutations"]
        outcomes[(mutation["operator_name"], mutation["occurrence"])] = result["test_outcome"]
        served |= {w for w in ("w1", "w2") if f"worker {w}" in result["output"]}
    # LIMIT 2 -> 3 still passes CHECK (a survivor), the other two are killed
    assert sorted(outcomes.values()) == ["killed", "killed", "survived"], outcomes
    assert served == {"w1", "w2"}, "both workers got work"
    # the controller's own copy was never mutated: the workers mutate theirs
    assert (home / "mod.py").read_text() == MODULE
    for worker, _ in workers:  # and each worker put its copy back
        assert (worker / "mod.py").read_text() == MODULE
