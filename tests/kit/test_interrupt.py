"""SIGINT/SIGTERM during ``run`` and ``selftest``: a partial report marked incomplete, exit 130.

The run is interrupted from outside once a progress line shows it is under way
(never after a sleep), or from inside a scenario by an adapter that swallows
the KeyboardInterrupt: the run stops all the same.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.scenario.schema import validate

ROOT = Path(__file__).resolve().parents[2]


def _command(*args: str) -> list[str]:
    return [sys.executable, "-m", "conformance", *args]


def _env(**extra: str) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    return {**env, **extra}


def _interrupt_after(command: list[str], marker: str, sig: int, cwd: Path) -> tuple[int, str]:
    """Start ``command``, wait for a stderr line containing ``marker``, send ``sig``."""
    proc = subprocess.Popen(
        command, cwd=cwd, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert proc.stderr is not None
    seen: list[str] = []
    for line in proc.stderr:
        seen.append(line)
        if marker in line:
            proc.send_signal(sig)
            break
    out, rest = proc.communicate(timeout=120)
    return proc.returncode, "".join(seen) + rest + out


def _report(directory: Path) -> dict[str, object]:
    document = json.loads((directory / "report.json").read_text(encoding="utf-8"))
    validate(document, "report")
    assert isinstance(document, dict)
    return document


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_mid_run_writes_a_partial_report_and_exits_130(sig: int, tmp_path: Path) -> None:
    report = tmp_path / "out"
    command = _command(
        "run", "-j", "1", "--profile", "quick", "--report", str(report), "--progress"
    )
    code, output = _interrupt_after(command, "property CANCEL-2", sig, tmp_path)
    assert code == 130, output
    document = _report(report)
    assert document["incomplete"] is True and document["conformant"] is False
    not_run = document["notRun"]
    # the marker is printed when CANCEL-2 finishes: rules far after it cannot have run yet
    assert isinstance(not_run, list) and "SCOPE-2" in not_run
    assert "INCOMPLETE" in (report / "report.md").read_text(encoding="utf-8")
    assert "incomplete" in (report / "report.html").read_text(encoding="utf-8").lower()
    assert "INCOMPLETE (interrupted)" in output


def test_a_signal_mid_parallel_run_writes_a_partial_report(tmp_path: Path) -> None:
    report = tmp_path / "out"
    command = _command(
        "run", "-j", "2", "--profile", "quick", "--report", str(report), "--progress"
    )
    code, output = _interrupt_after(command, "property", signal.SIGINT, tmp_path)
    assert code == 130, output
    document = _report(report)
    assert document["incomplete"] is True and document["notRun"]


def _run_interrupting(factory: str, report: Path) -> subprocess.CompletedProcess[str]:
    """``run`` with an adapter of tests/kit/interrupting.py that interrupts itself."""
    adapter = f"python:tests.kit.interrupting:{factory}"
    command = _command("run", "-j", "1", "--adapter", adapter, "--report", str(report))
    return subprocess.run(
        command, cwd=report.parent, env=_env(), capture_output=True, text=True, timeout=120
    )


def test_a_swallowed_keyboard_interrupt_still_stops_the_run(tmp_path: Path) -> None:
    report = tmp_path / "out"
    done = _run_interrupting("make_swallowing", report)
    assert done.returncode == 130, done.stderr
    document = _report(report)
    assert document["incomplete"] is True
    assert document["scenarios"] == 3  # it stopped at the scenario that swallowed the interrupt


def test_a_second_interrupt_exits_at_once(tmp_path: Path) -> None:
    report = tmp_path / "out"
    done = _run_interrupting("make_twice", report)
    assert done.returncode == 130, done.stderr
    assert "interrupted again" in done.stderr
    assert not (report / "report.json").exists()  # it did not wait to write one


def test_selftest_interrupted_says_so_and_exits_130(tmp_path: Path) -> None:
    command = _command("selftest", "-j", "1", "--no-baseline")
    code, output = _interrupt_after(command, "mutant ", signal.SIGINT, tmp_path)
    assert code == 130, output
    assert "SELFTEST INCOMPLETE (interrupted)" in output
    assert "entries did not run" in output


def test_ending_a_pool_whose_terminate_never_returns_is_bounded() -> None:
    """A worker killed while it held a pool queue's lock, or stuck in an implementation that
    ignores SIGTERM, leaves the pool's shutdown waiting forever (a ``run -j 2`` whose worker
    raised hung so): ending the pool gives up after its grace and kills the workers instead."""
    import multiprocessing
    import threading
    import time

    from conformance.running import parallel

    class StuckPool:
        def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
            threading.Event().wait()  # a lock nobody will release

    worker = multiprocessing.get_context("spawn").Process(target=time.sleep, args=(60,))
    worker.start()
    started = time.monotonic()
    parallel._end(StuckPool(), grace_s=0.2)
    assert time.monotonic() - started < 3.0
    worker.join(10)
    assert worker.exitcode is not None and worker.exitcode < 0  # killed, not left running


@pytest.mark.parametrize("at", [1, 40])
def test_a_worker_that_dies_outright_ends_the_run_with_a_partial_report(
    at: int, tmp_path: Path
) -> None:
    """An implementation that ends its worker's process (``os._exit``, a crash in native code)
    takes that worker's unit with it: the run stops (it used to wait for the lost unit
    forever), the units that finished are kept, and the report says what was lost."""
    report = tmp_path / "out"
    adapter = "python:tests.kit.dying:make"
    command = _command(
        "run", "-j", "2", "--profile", "quick", "--adapter", adapter, "--report", str(report)
    )
    done = subprocess.run(
        command,
        cwd=tmp_path,
        env=_env(TOOLREG_TEST_DIE_AT=str(at)),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 130, done.stderr
    document = _report(report)
    assert document["incomplete"] is True and document["notRun"]
    notes = document["notes"]
    assert isinstance(notes, list)
    assert any("ended abruptly" in str(n) and "property " in str(n) for n in notes), notes
    assert "ended abruptly" in done.stdout
    if at > 1:  # some units finished before the worker died: their scenarios are kept
        scenarios = document["scenarios"]
        assert isinstance(scenarios, int) and scenarios > 0
