"""A scenario whose implementation never yields is ended by the overrun bound (seam.overrun):
judged a timeout, whatever the implementation catches, and the timer put back after."""

from __future__ import annotations

import json
import signal
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

import conformance.judging.evaluate as evaluation
from conformance.adapters.reference import ReferenceAdapter
from conformance.judging.evaluate import run_scenario
from conformance.running.runner import run_suite
from conformance.scenario.schema import FIXTURES
from conformance.seam import overrun
from conformance.vocab import Status

SCENARIO = json.loads(
    next(iter(sorted((FIXTURES / "rules/PRE-1").glob("*.json")))).read_text(encoding="utf-8")
)


class _Spinning(ReferenceAdapter):
    """Loops in plain Python (no await: no event loop turn, no per-action deadline)."""

    swallow = 0  # how many Overran it catches before one gets through

    def run(self, scenario: Mapping[str, Any]) -> dict[str, Any]:
        caught = 0
        while True:
            try:
                while True:
                    pass
            except BaseException:
                caught += 1
                if caught > self.swallow:
                    raise


@pytest.fixture(autouse=True)
def _short(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(overrun, "SLACK_S", 0.05)
    monkeypatch.setattr(evaluation, "ACTION_DEADLINE_S", 0.02)
    monkeypatch.setattr(overrun, "REPEAT_S", 0.2)


def _timer_is_back() -> None:
    assert signal.getsignal(signal.SIGALRM) == signal.SIG_DFL
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_a_scenario_that_never_yields_is_a_timeout() -> None:
    trace, why = run_scenario(_Spinning(), SCENARIO)
    assert trace is None and why is not None
    assert (why.status, why.category) == (Status.TIMEOUT, "timeout")
    assert "without yielding" in why.message
    _timer_is_back()


def test_an_implementation_that_catches_the_first_gets_another() -> None:
    spinning = _Spinning()
    spinning.swallow = 2
    trace, why = run_scenario(spinning, SCENARIO)
    assert trace is None and why is not None and why.status == Status.TIMEOUT
    _timer_is_back()


def test_a_scenario_that_returns_in_time_is_untouched() -> None:
    trace, why = run_scenario(ReferenceAdapter(), SCENARIO)
    assert why is None and trace is not None
    _timer_is_back()


def test_the_bound_is_every_action_its_deadline_one_more_and_the_slack() -> None:
    assert overrun.budget({"actions": [{}, {}, {}]}, 5.0) == 5.0 * 4 + 0.05
    assert overrun.budget({}, 5.0) == 5.0 + 0.05


def test_another_sigalrm_owner_is_left_alone() -> None:
    def mine(signum: int, frame: Any) -> None:
        raise AssertionError("not the kit's to fire")

    previous = signal.signal(signal.SIGALRM, mine)
    try:
        with overrun.bounded(0.01):
            pass
        assert signal.getsignal(signal.SIGALRM) is mine
        assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    finally:
        signal.signal(signal.SIGALRM, previous)


class _WithTransport(_Spinning):
    deadline_s = 5.0  # a stdio or HTTP adapter: it bounds each answer itself


def test_an_adapter_with_a_transport_is_not_bounded_here() -> None:
    with pytest.raises(KeyboardInterrupt):  # the test's own alarm ends the spin instead
        previous = signal.signal(signal.SIGALRM, signal.default_int_handler)
        try:
            signal.setitimer(signal.ITIMER_REAL, 1.0)
            run_scenario(_WithTransport(), SCENARIO)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)


def test_a_run_against_it_ends_with_the_rule_timed_out(tmp_path: Path) -> None:
    result = run_suite(_Spinning(), profile="quick", rules="PRE-1", report_dir=tmp_path)
    (outcome,) = result.rules
    assert outcome.status == Status.TIMEOUT
    _timer_is_back()
