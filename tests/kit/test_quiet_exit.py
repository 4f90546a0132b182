"""What an in-process implementation leaves behind never reaches the terminal, nor holds the
kit's exit up: the loops of ``run_in_a_new_loop`` report a pending task without its repr
(``plain_report``), and after the command its records go nowhere (``leave_quietly``)."""

from __future__ import annotations

import asyncio
import logging
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.adapters.reference import plain_report, run_in_a_new_loop

ROOT = Path(__file__).resolve().parents[2]


class _Unprintable:
    def __repr__(self) -> str:
        raise AssertionError("the task's repr was asked for")


def test_the_loops_report_a_task_without_its_repr(caplog: pytest.LogCaptureFixture) -> None:
    async def handler() -> object:
        return asyncio.get_running_loop().get_exception_handler()

    assert run_in_a_new_loop(handler()) is plain_report
    loop = asyncio.new_event_loop()
    try:
        with caplog.at_level(logging.ERROR, logger="asyncio"):
            context = {"message": "Task was destroyed but it is pending!", "task": _Unprintable()}
            plain_report(loop, context)
            plain_report(loop, {"message": "boom", "exception": ValueError("v")})
    finally:
        loop.close()
    assert [r.getMessage() for r in caplog.records] == [
        "Task was destroyed but it is pending!",
        "boom",
    ]
    assert caplog.records[1].exc_info is not None


def test_a_run_that_leaves_runaway_tasks_behind_exits_quietly_and_soon(tmp_path: Path) -> None:
    command = [
        sys.executable, "-m", "conformance", "run", "-q", "-j", "1", "--rules", "PRE-1",
        "--adapter", "python:tests.kit.leaves_tasks:make_adapter", "--report", str(tmp_path),
    ]  # fmt: skip
    done = subprocess.run(
        command, cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr[-2000:]
    assert "Task was destroyed" not in done.stderr
    assert len(done.stderr.splitlines()) < 20, done.stderr[-2000:]


def test_the_implementation_log_is_bounded(tmp_path: Path) -> None:
    from conformance.cli.common import CapturedLogs

    handler = CapturedLogs(tmp_path / "implementation.log")
    handler.LOG_FILE_LIMIT = 10_000
    log = logging.getLogger("flooding")
    log.propagate, log.handlers = False, [handler]

    def ping(n: int) -> None:  # two frames in turn: no "previous line repeated" folding
        if n:
            pong(n - 1)
        raise RuntimeError("at the bottom")

    def pong(n: int) -> None:
        ping(n - 1)

    try:
        try:
            ping(200)
        except RuntimeError:
            log.exception("a deep failure")
        for turn in range(500):
            log.error("flood %d", turn)
    finally:
        log.handlers = []
        handler.close()
    text = (tmp_path / "implementation.log").read_text(encoding="utf-8")
    assert handler.count == 501  # every record counted
    assert text.count("\n  File ") == 30  # the traceback's last frames only
    assert len(text) < 10_000 + 500 and text.endswith("the rest counted, not kept)\n")
