"""The stdio transport contains every way a harness can misbehave, and reports it as such.

Each fake harness (tests/transport/fake_harness.py) answers like the reference
except on its second run. The scenario before the misbehaviour and the one
after it (a restarted harness) must both come back as good traces; the bad one
is an ImplementationFailure of the right category, naming the offending line.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from conformance.adapters import load_adapter
from conformance.cli.main import main
from conformance.running.runner import run_suite
from conformance.scenario.schema import load_json, validate
from conformance.seam.adapter import AdapterError, ImplementationFailure, ScenarioSkipped
from conformance.transport.policy import Limits, scenario_allowance
from conformance.transport.stdio import StdioAdapter, end_all_harnesses

ROOT = Path(__file__).resolve().parents[2]
FAKE = Path(__file__).with_name("fake_harness.py")
SCENARIO: Mapping[str, Any] = load_json(ROOT / "fixtures/examples/seed-step-08-read-file.json")
DEADLINE_S = 2.0


def fake(mode: str, **options: Any) -> StdioAdapter:
    options.setdefault("deadline_s", DEADLINE_S)
    return StdioAdapter([sys.executable, str(FAKE), mode], **options)


@pytest.fixture
def adapters() -> Iterator[list[StdioAdapter]]:
    made: list[StdioAdapter] = []
    yield made
    for adapter in made:
        adapter.close()


def three_runs(adapter: StdioAdapter) -> ImplementationFailure:
    """Good trace, the failure, good trace again (the harness was restarted)."""
    validate(adapter.run(SCENARIO), "trace")
    with pytest.raises(ImplementationFailure) as caught:
        adapter.run(SCENARIO)
    validate(adapter.run(SCENARIO), "trace")
    return caught.value


@pytest.mark.parametrize(
    ("mode", "category", "says"),
    [
        ("hang", "timeout", f"no answer to run seq 2 within {DEADLINE_S:g} s"),
        ("crash", "protocol", "not JSON"),  # half a line, then death: the half line is garbage
        ("exit", "crash", "exited before answering run seq 2 (exit code 0"),
        ("garble", "protocol", "stdout line 3 (the answer to run seq 2) is not JSON"),
        ("binary", "protocol", "stdout line 3 (the answer to run seq 2) is not UTF-8"),
        ("bad-utf8", "protocol", "is not UTF-8 ('utf-8' codec can't decode byte 0xff"),
        ("deep", "protocol", "is out of bounds: nested deeper than 200 levels (at $.trace.deep"),
        ("very-deep", "protocol", "is out of bounds: nested deeper than 200 levels"),
        ("partial-hang", "timeout", f"no answer to run seq 2 within {DEADLINE_S:g} s"),
        ("split", "protocol", "stdout line 3 (the answer to run seq 2) is not JSON"),
        ("wrong-seq", "protocol", "answer carries seq 3, expected 2"),
        ("wrong-type", "protocol", "got type 'started'"),
    ],
)
def test_a_misbehaving_harness_is_contained_and_restarted(
    adapters: list[StdioAdapter], mode: str, category: str, says: str
) -> None:
    adapter = fake(mode)
    adapters.append(adapter)
    failure = three_runs(adapter)
    assert failure.category == category
    assert says in failure.message
    assert f"misbehaving ({mode}) on seq 2" in failure.stderr  # its stderr, as evidence
    diagnostics = adapter.diagnostics()
    assert diagnostics["starts"] == 2 and diagnostics["failures"] == {category: 1}


def test_the_offending_line_is_quoted(adapters: list[StdioAdapter]) -> None:
    adapter = fake("garble")
    adapters.append(adapter)
    failure = three_runs(adapter)
    assert failure.line == "this is not JSON"
    assert "'this is not JSON'" in failure.message


def test_a_crash_after_a_complete_answer_is_a_crash(adapters: list[StdioAdapter]) -> None:
    adapter = fake("crash-always", max_restarts=2)
    adapters.append(adapter)
    for _ in range(3):  # three starts: the first and two restarts
        with pytest.raises(ImplementationFailure):
            adapter.run(SCENARIO)
    with pytest.raises(ImplementationFailure, match="gave up after 2 restarts"):
        adapter.run(SCENARIO)
    assert adapter.diagnostics()["starts"] == 3


def test_errored_keeps_the_harness(adapters: list[StdioAdapter]) -> None:
    adapter = fake("errored")
    adapters.append(adapter)
    failure = three_runs(adapter)
    assert failure.category == "errored" and "fake: cannot map this" in failure.message
    assert adapter.diagnostics()["starts"] == 1  # in sync: no restart


def test_stderr_noise_is_not_a_failure(adapters: list[StdioAdapter]) -> None:
    adapter = fake("noisy")
    adapters.append(adapter)
    for _ in range(3):
        validate(adapter.run(SCENARIO), "trace")
    adapter.close()  # the harness has exited: every stderr line it wrote has been read
    diagnostics = adapter.diagnostics()
    assert diagnostics["failures"] == {} and diagnostics["starts"] == 1
    assert any("noise 49 for run 3" in line for line in diagnostics["stderrTail"])


def test_a_skipped_scenario_is_skipped(adapters: list[StdioAdapter]) -> None:
    adapter = fake("skip-approval")
    adapters.append(adapter)
    approval = load_json(ROOT / "fixtures/examples/seed-step-10-bash-approved.json")
    with pytest.raises(ScenarioSkipped, match="fake: no approval seam"):
        adapter.run(approval)
    validate(adapter.run(SCENARIO), "trace")


@pytest.mark.parametrize(
    ("mode", "says"),
    [
        ("old-protocol", "the harness speaks protocol 0; this kit speaks 1"),
        ("no-start", "exited before answering start (exit code 4"),
    ],
)
def test_a_harness_that_cannot_shake_hands_is_an_adapter_error(mode: str, says: str) -> None:
    adapter = fake(mode)
    with pytest.raises(AdapterError, match="did not start") as caught:
        adapter.describe()
    assert says in str(caught.value)
    if mode == "no-start":
        assert "refusing to start" in str(caught.value)  # its stderr is shown


def test_a_changed_handshake_after_a_restart_gives_up(
    adapters: list[StdioAdapter], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STATE_DIR", str(tmp_path))
    adapter = StdioAdapter(
        [sys.executable, str(FAKE), "changeling"], deadline_s=DEADLINE_S, env=dict(os.environ)
    )
    adapters.append(adapter)
    adapter.run(SCENARIO)
    adapter._close_session()  # as if it had crashed
    with pytest.raises(ImplementationFailure, match="handshake changed after a failure"):
        adapter.run(SCENARIO)
    with pytest.raises(ImplementationFailure, match="different implementation"):
        adapter.run(SCENARIO)


def test_validate_protocol_checks_every_answer(adapters: list[StdioAdapter]) -> None:
    adapter = fake("noisy", validate_protocol=True)
    adapters.append(adapter)
    validate(adapter.run(SCENARIO), "trace")


def test_load_adapter_parses_the_command() -> None:
    adapter = load_adapter(f"stdio:{sys.executable} -m conformance.harness", deadline_s=3)
    assert isinstance(adapter, StdioAdapter)
    assert adapter.command == [sys.executable, "-m", "conformance.harness"]
    assert adapter.deadline_s == 3
    with pytest.raises(AdapterError, match="needs a command"):
        load_adapter("stdio:")


# ------------------------------------------------------- the run goes on


def test_a_run_reports_the_failure_per_scenario_and_everything_else(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A harness garbling its second answer once: one rule errors (protocol), the rest pass."""
    monkeypatch.setenv("ONCE_DIR", str(tmp_path))
    adapter = fake("garble", env=dict(os.environ))
    try:
        result = run_suite(adapter, profile="quick", rules="PRE-1,PRE-2", report_dir=tmp_path)
    finally:
        adapter.close()
    statuses = {o.id: o.status for o in result.rules}
    errors = [f for o in result.rules for f in o.errors]
    assert sorted(statuses.values()) == ["error", "pass"], statuses
    (failure,) = errors
    assert failure.category == "protocol" and "not JSON" in failure.message
    case = result.case_file(failure)
    assert case is not None
    saved = json.loads(case.read_text())
    assert any("misbehaving (garble)" in line for line in saved["required"])  # stderr kept
    assert result.transport is not None and result.transport["failures"] == {"protocol": 1}
    assert not result.kit_errors


def test_the_cli_writes_the_report_with_the_transport_section(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ONCE_DIR", str(tmp_path))
    command = f"stdio:{sys.executable} {FAKE} hang"
    code = main(
        [
            *("run", "--adapter", command, "--profile", "quick", "--rules", "PRE-1,PRE-2"),
            *("--deadline", "1", "--report", str(tmp_path), "-q"),
        ]
    )
    assert code == 1
    report = json.loads((tmp_path / "report.json").read_text())
    validate(report, "report")
    assert report["transport"]["failures"] == {"timeout": 1}
    timeouts = [f for r in report["rules"] for f in r["failures"] if f["kind"] == "timeout"]
    assert [f["category"] for f in timeouts] == ["timeout"]
    markdown = (tmp_path / "report.md").read_text()
    assert "## Transport" in markdown and "misbehaving (hang) on seq 2" in markdown


def test_skipped_by_the_harness_is_reported_not_applicable_with_its_reason(tmp_path: Path) -> None:
    adapter = fake("skip-approval")
    try:
        result = run_suite(adapter, profile="quick", rules="PRE-4")
    finally:
        adapter.close()
    (outcome,) = result.rules
    assert outcome.status == "not-applicable", outcome
    assert outcome.reason is not None and "fake: no approval seam" in outcome.reason


def test_a_property_stops_calling_an_implementation_that_failed_to_answer() -> None:
    """One timeout per property, never replayed by hypothesis' shrinking: the run goes on."""
    adapter = fake("hang-generated", deadline_s=0.5, max_consecutive=3)
    try:
        result = run_suite(adapter, profile="quick", rules="PRE-1,PRE-2")
    finally:
        adapter.close()
    assert not result.kit_errors, result.kit_errors
    assert result.transport is not None
    assert result.transport["failures"] == {"timeout": 2}  # one per property
    assert result.transport["gaveUp"] is None
    assert {o.id: o.status for o in result.rules} == {"PRE-1": "timeout", "PRE-2": "timeout"}


# ------------------------------------------- bounded in time, memory and processes


def alive(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie is not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


def gone(pid: int, within_s: float = 5.0) -> bool:
    """Whether ``pid`` is dead, or dies within ``within_s`` (a SIGKILL lands asynchronously)."""
    end = time.monotonic() + within_s
    while alive(pid):
        if time.monotonic() > end:
            return False
        time.sleep(0.02)
    return True


def child_pid(stderr: str) -> int:
    match = re.search(r"child pid (\d+)", stderr)
    assert match, stderr
    return int(match.group(1))


def timed_failure(adapter: StdioAdapter) -> tuple[ImplementationFailure, float]:
    """Run a good scenario, then the bad one: its failure and how long it took."""
    validate(adapter.run(SCENARIO), "trace")
    started = time.monotonic()
    with pytest.raises(ImplementationFailure) as caught:
        adapter.run(SCENARIO)
    return caught.value, time.monotonic() - started


def test_a_child_that_outlives_the_harness_cannot_hold_a_read(adapters: list[StdioAdapter]) -> None:
    """The harness exits, its child keeps stdout open: a crash at once, and the child is killed."""
    adapter = fake("grandchild", deadline_s=30)
    adapters.append(adapter)
    failure, took = timed_failure(adapter)
    assert failure.category == "crash", failure
    assert "exited before answering run seq 2 (exit code 5" in failure.message
    assert took < 10  # found by the exit, not by the 30 s deadline
    assert gone(child_pid(failure.stderr))  # the whole process group was ended
    validate(adapter.run(SCENARIO), "trace")  # restarted


def test_a_child_that_left_the_group_cannot_hold_a_read_either(
    adapters: list[StdioAdapter],
) -> None:
    """A child that left the process group (setsid) is out of the group kill's reach, but
    it carries the harness's tag: ending the harness ends it too (conformance.processes)."""
    adapter = fake("escapee", deadline_s=30)
    adapters.append(adapter)
    failure, took = timed_failure(adapter)
    pid = child_pid(failure.stderr)
    try:
        assert failure.category == "crash" and took < 10, (failure, took)
        assert gone(pid)  # ended by its tag, and reaped (the kit is its subreaper)
        validate(adapter.run(SCENARIO), "trace")
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def test_a_timeout_ends_the_harness_and_its_children(adapters: list[StdioAdapter]) -> None:
    adapter = fake("grandchild-hang", deadline_s=1)
    adapters.append(adapter)
    failure, _ = timed_failure(adapter)
    assert failure.category == "timeout", failure
    assert gone(child_pid(failure.stderr))


def test_a_harness_ignoring_sigterm_is_killed_after_the_grace(
    adapters: list[StdioAdapter],
) -> None:
    adapter = fake("ignore-term", deadline_s=1, limits=Limits(kill_grace_s=0.2))
    adapters.append(adapter)
    failure, took = timed_failure(adapter)
    assert failure.category == "timeout" and took < 1 + 0.2 + 3, (failure, took)
    validate(adapter.run(SCENARIO), "trace")


def test_the_kit_exiting_ends_every_harness_group(tmp_path: Path) -> None:
    """No close(): the kit's exit still ends the harness and its child."""
    script = tmp_path / "kit.py"
    script.write_text(
        "import sys\n"
        "from conformance.transport.stdio import StdioAdapter\n"
        f"adapter = StdioAdapter([sys.executable, {str(FAKE)!r}, 'grandchild-hang'])\n"
        "adapter.describe()\n"
        "print(adapter._process.popen.pid, flush=True)\n"
    )
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, cwd=ROOT, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert gone(int(done.stdout))


def test_stderr_without_newlines_is_kept_as_a_capped_tail(adapters: list[StdioAdapter]) -> None:
    adapter = fake("stderr-flood", limits=Limits(stderr_tail_bytes=4096))
    adapters.append(adapter)
    for _ in range(3):  # 20 MB of stderr on the second: still three good traces
        validate(adapter.run(SCENARIO), "trace")
    process = adapter._process
    assert process is not None
    assert process.stderr_total > 20_000_000 and len(process.stderr_tail) <= 4096
    assert "[... " in process.stderr_since(0)  # says how much was not kept
    assert adapter.diagnostics()["failures"] == {}


def test_a_line_over_the_limit_is_a_protocol_failure_quoting_its_start(
    adapters: list[StdioAdapter],
) -> None:
    adapter = fake("long-line", deadline_s=30, limits=Limits(max_message_bytes=64 * 1024))
    adapters.append(adapter)
    failure, took = timed_failure(adapter)
    assert failure.category == "protocol", failure
    assert "stdout line 3 (the answer to run seq 2) is longer than 65536 bytes" in failure.message
    assert "it begins b'xxxxxxxx" in failure.message and took < 10
    validate(adapter.run(SCENARIO), "trace")


def test_repeated_timeouts_give_up_even_when_not_in_a_row(adapters: list[StdioAdapter]) -> None:
    """Four answers, then a hang, after every restart: given up after max_timeouts."""
    adapter = fake("hang-fifth", deadline_s=0.5, max_timeouts=3)
    adapters.append(adapter)
    answered = 0
    for _ in range(3):
        for _ in range(4):
            validate(adapter.run(SCENARIO), "trace")
            answered += 1
        with pytest.raises(ImplementationFailure, match="no answer to run seq 5"):
            adapter.run(SCENARIO)
    with pytest.raises(ImplementationFailure, match=r"not run: gave up after 3 timeouts \(last"):
        adapter.run(SCENARIO)
    diagnostics = adapter.diagnostics()
    assert diagnostics["failures"] == {"timeout": 3} and diagnostics["starts"] == 3


@pytest.mark.parametrize("deadline", [0, -1, math.inf, math.nan])
def test_a_deadline_that_is_not_positive_is_refused_at_construction(deadline: float) -> None:
    with pytest.raises(AdapterError, match="the deadline must be a positive number of seconds"):
        fake("noisy", deadline_s=deadline)
    with pytest.raises(AdapterError, match="the start deadline must be a positive"):
        fake("noisy", start_deadline_s=deadline)


def test_bad_limits_are_refused() -> None:
    with pytest.raises(AdapterError, match="max_message_bytes must be a positive integer"):
        Limits(max_message_bytes=0)
    with pytest.raises(AdapterError, match="kill_grace_s must be a non-negative"):
        Limits(kill_grace_s=-1)
    with pytest.raises(AdapterError, match="max_timeouts must be an integer of at least 1"):
        fake("noisy", max_timeouts=0)


def test_the_deadline_grows_with_what_the_scenario_awaits() -> None:
    adapter = fake("noisy", deadline_s=2)
    assert adapter.deadline_for(SCENARIO) == 2  # nothing to wait for
    waiting = {**SCENARIO, "tools": [{"name": "t", "body": [{"waitForAbort": {}}]}]}
    assert scenario_allowance(waiting) == len(SCENARIO["actions"]) * 1.0
    assert adapter.deadline_for(waiting) == 2 + scenario_allowance(waiting)
    many = {**waiting, "actions": [{"call": {}}] * 100}
    assert scenario_allowance(many) == 10.0  # capped


def test_a_run_against_a_harness_that_keeps_hanging_is_bounded() -> None:
    """Four answers, a hang, after every restart: the run gives up and reports the rest not run."""
    adapter = fake("hang-fifth", deadline_s=0.5, max_timeouts=2)
    started = time.monotonic()
    try:
        result = run_suite(adapter, profile="quick", rules="PRE-1,PRE-2,PRE-3")
    finally:
        adapter.close()
    assert time.monotonic() - started < 30
    assert result.transport is not None and result.transport["failures"] == {"timeout": 2}
    assert str(result.transport["gaveUp"]).startswith("gave up after 2 timeouts")
    not_run = [f for o in result.rules for f in o.errors if "not run: gave up" in f.message]
    assert not_run and not result.kit_errors


@pytest.mark.long(26)
@pytest.mark.slow
def test_the_quick_profile_against_a_harness_that_keeps_hanging_ends_within_a_minute() -> None:
    adapter = StdioAdapter([sys.executable, str(FAKE), "hang-fifth"])  # the default deadlines
    started = time.monotonic()
    try:
        result = run_suite(adapter, profile="quick")
    finally:
        adapter.close()
    assert result.transport is not None and result.transport["gaveUp"]
    assert time.monotonic() - started < 60


def test_end_all_harnesses_ends_every_live_group(adapters: list[StdioAdapter]) -> None:
    """What the kit's exit runs (and an interrupt may run with no grace)."""
    first, second = fake("noisy"), fake("noisy")
    adapters += [first, second]
    pids = []
    for adapter in (first, second):
        adapter.describe()
        assert adapter._process is not None
        pids.append(adapter._process.popen.pid)
    end_all_harnesses(grace_s=0)
    assert all(gone(pid) for pid in pids)


def test_a_trace_too_deep_is_the_implementations_protocol_failure_not_a_kit_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ONCE_DIR", str(tmp_path))
    adapter = fake("deep", env=dict(os.environ))
    try:
        result = run_suite(adapter, profile="quick", rules="PRE-1,PRE-2")
    finally:
        adapter.close()
    assert not result.kit_errors, result.kit_errors
    (failure,) = [f for o in result.rules for f in o.errors]
    assert failure.category == "protocol" and "nested deeper than 200 levels" in failure.message


def test_an_interrupt_during_a_run_ends_the_harness_group(adapters: list[StdioAdapter]) -> None:
    """Ctrl-C while the harness hangs: the interrupt propagates and the group is ended."""
    adapter = fake("grandchild-hang", deadline_s=60)
    adapters.append(adapter)
    validate(adapter.run(SCENARIO), "trace")
    assert adapter._process is not None
    leader = adapter._process.popen.pid

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, 2.0)  # the harness hangs for good
    try:
        with pytest.raises(KeyboardInterrupt):
            adapter.run(SCENARIO)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert adapter._process is None and gone(leader)
    (child,) = [int(pid) for pid in re.findall(r"child pid (\d+)", "\n".join(adapter._stderr_tail))]
    assert gone(child)
