"""The run + judge speed-ups keep their meaning: a fresh loop per scenario, schema checks cached,
a call's events indexed, a failure's pointers worked out only for a failure."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from jsonschema.validators import Draft202012Validator

from conformance.adapters.reference import run_in_a_new_loop
from conformance.adapters.reference.loop import run_in_a_clean_loop
from conformance.judging.model import CallView, View
from conformance.judging.rules._base import require
from conformance.judging.rules._json import schema_usable


def test_a_new_loop_runs_like_asyncio_run_and_leaves_nothing_behind() -> None:
    seen: dict[str, Any] = {}

    async def forever() -> None:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            seen["cancelled"] = True
            raise

    async def main() -> int:
        seen["loop"] = asyncio.get_running_loop()
        seen["left"] = asyncio.get_running_loop().create_task(forever())
        await asyncio.sleep(0)
        return 42

    assert run_in_a_new_loop(main()) == 42
    assert seen["cancelled"] and seen["left"].cancelled()  # the task left behind was ended
    assert seen["loop"].is_closed()
    assert run_in_a_new_loop(main()) == 42 and seen["loop"].is_closed()  # a new loop each time

    async def broken() -> None:
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        run_in_a_new_loop(broken())


def _loop() -> asyncio.AbstractEventLoop:
    async def main() -> asyncio.AbstractEventLoop:
        return asyncio.get_running_loop()

    return run_in_a_clean_loop(main())


def test_a_clean_scenario_hands_its_loop_on_and_its_timers_never_fire_in_the_next() -> None:
    fired: list[str] = []

    async def schedules() -> asyncio.AbstractEventLoop:
        loop = asyncio.get_running_loop()
        loop.call_later(0.01, fired.append, "late")  # due after this scenario returned
        loop.call_at(loop.time() + 0.01, fired.append, "later")
        return loop

    first = run_in_a_clean_loop(schedules())

    async def waits() -> asyncio.AbstractEventLoop:
        await asyncio.sleep(0.05)  # long past both timers' due time
        return asyncio.get_running_loop()

    assert run_in_a_clean_loop(waits()) is first  # the same loop, reused
    assert fired == []  # the first scenario's timers were cancelled when it ended
    assert not first.is_closed()


def _leaves_a_task() -> None:
    async def main() -> None:
        asyncio.get_running_loop().create_task(asyncio.sleep(3600))

    run_in_a_clean_loop(main())


def _uses_the_executor() -> None:
    async def main() -> None:
        await asyncio.get_running_loop().run_in_executor(None, int)

    run_in_a_clean_loop(main())


def _raises() -> None:
    async def main() -> None:
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        run_in_a_clean_loop(main())


def _interrupted() -> None:
    async def main() -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_in_a_clean_loop(main())


@pytest.mark.parametrize("leave", [_leaves_a_task, _uses_the_executor, _raises, _interrupted])
def test_a_scenario_that_leaves_anything_behind_ends_its_loop(leave: Any) -> None:
    before = _loop()
    seen: dict[str, Any] = {}

    async def note() -> None:
        seen["loop"] = asyncio.get_running_loop()

    run_in_a_clean_loop(note())
    assert seen["loop"] is before  # clean so far: the kept loop
    leave()
    after = _loop()
    assert before.is_closed() and after is not before and not after.is_closed()


def test_another_thread_gets_a_fresh_loop_closed_after_use() -> None:
    import threading

    kept = _loop()
    got: list[asyncio.AbstractEventLoop] = []
    thread = threading.Thread(target=lambda: got.append(_loop()))
    thread.start()
    thread.join()
    assert got[0] is not kept and got[0].is_closed() and _loop() is kept


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object"},
        {"type": "objekt"},
        {"properties": {"a": {"minimum": "1"}}},
        {"type": "string", "minLength": 2},
        [],
        {"type": float("nan")},
        {"enum": [object()]},  # not JSON: checked uncached
    ],
)
def test_schema_usable_is_check_schema(schema: Any) -> None:
    try:
        Draft202012Validator.check_schema(schema)
        expected = True
    except Exception:
        expected = False
    assert schema_usable(schema) is expected
    assert schema_usable(schema) is expected  # and again, from the cache


# ------------------------------------------------- a call's indices, lazy pointers


def _naive_wrote_before(events: list[dict[str, Any]], event: dict[str, Any], target: str) -> bool:
    """CallView.wrote_before as it was first written: a scan up to ``event``."""
    for e in events:
        if e is event:
            return False
        if (
            e.get("stage") == event.get("stage")
            and e.get("id") == event.get("id")
            and e.get("raised") is False
            and str(e.get("mutate", "")).startswith(target)
        ):
            return True
    return False


def test_a_calls_indices_answer_as_a_scan_of_its_events_and_follow_them_as_they_grow() -> None:
    events: list[dict[str, Any]] = [
        {"stage": "pre-execute", "id": "p", "at": "enter"},
        {"stage": "pre-execute", "id": "p", "mutate": "execution['name']", "raised": False},
        {"stage": "pre-execute", "id": "q", "mutate": "execution['name']", "raised": True},
        {"stage": "pre-execute", "id": "p", "what": "execution", "observed": {}},
        {"stage": "guard", "id": "p", "mutate": "result", "raised": False},
        {"stage": "pre-execute", "id": "q", "what": "execution", "observed": {}},
    ]
    twin = dict(events[3])  # equal to an event, but not one of them
    call = CallView({"callId": "c"}, None, None, events=list(events[:4]))
    targets = ("execution[", "execution['name']", "result", "arguments")
    for grown in (4, 6):
        call.events[:] = events[:grown]  # the view appends events after a first question
        for event in [*events[:grown], twin]:
            for target in targets:
                assert call.wrote_before(event, target) == _naive_wrote_before(
                    events[:grown], event, target
                ), (grown, event, target)
        assert [call.index(e) for e in events[:grown]] == list(range(grown))
        with pytest.raises(ValueError, match="not an event of call 'c'"):
            call.index(twin)
    assert call.of_kind("pre-execute", "enter") == [events[0]]


def test_a_pointer_is_worked_out_only_when_read_and_then_once() -> None:
    read: list[int] = []

    def events() -> Iterator[dict[str, Any]]:
        read.append(1)
        yield trace["events"][1]

    trace = {"events": [{"call": "c", "stage": "body", "at": "enter"}, {"call": "c", "at": "x"}]}
    view = View({"actions": [{"call": {"callId": "c"}}]}, {**trace, "actions": [{}]})
    (call,) = view.every_call
    pointing = view.at(call, events())
    assert read == [] and pointing["call"] == "c"
    assert require(True, "c", "holds", **pointing).events == () and read == []
    failed = require(False, "c", "broken", **pointing)
    assert failed.events == (1,) and read == [1]
    assert list(pointing["events"]) == [1] and read == [1]
    # nothing chosen: the call's last event, also worked out when read
    assert require(False, "c", "absent", **view.at(call)).events == (1,)


def test_a_busy_loop_skips_its_polls_and_still_runs_what_other_threads_schedule() -> None:
    """A zero-timeout poll is skipped while only the self-pipe is registered; a callback
    scheduled from another thread runs all the same (it is on the ready queue), and a loop
    that blocks still drains the pipe."""
    import selectors
    import threading

    polls: list[float | None] = []
    real = selectors.DefaultSelector.select

    def counted(self: Any, timeout: float | None = None) -> Any:
        polls.append(timeout)
        return real(self, timeout)

    async def main() -> list[str]:
        loop = asyncio.get_running_loop()
        ran: list[str] = []
        thread = threading.Thread(target=lambda: loop.call_soon_threadsafe(ran.append, "x"))
        thread.start()
        thread.join()
        for _ in range(5):
            await asyncio.sleep(0)  # busy: something is always ready
        await asyncio.sleep(0.001)  # nothing ready: the loop blocks on its selector
        return ran

    patched = pytest.MonkeyPatch()
    patched.setattr(selectors.DefaultSelector, "select", counted)
    try:
        assert run_in_a_new_loop(main()) == ["x"]
    finally:
        patched.undo()
    assert polls and 0 not in polls  # the loop blocked at least once, and never polled


def test_a_loop_with_a_signal_handler_polls_as_asyncio_does() -> None:
    import selectors
    import signal

    polls: list[float | None] = []
    real = selectors.DefaultSelector.select

    def counted(self: Any, timeout: float | None = None) -> Any:
        polls.append(timeout)
        return real(self, timeout)

    async def main() -> None:
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGUSR1, lambda: None)
        try:
            for _ in range(3):
                await asyncio.sleep(0)
        finally:
            loop.remove_signal_handler(signal.SIGUSR1)

    patched = pytest.MonkeyPatch()
    patched.setattr(selectors.DefaultSelector, "select", counted)
    try:
        run_in_a_new_loop(main())
    finally:
        patched.undo()
    assert 0 in polls  # its handler runs when the loop drains the pipe: it polls


def test_an_ok_verdict_is_shared_and_a_failure_is_new() -> None:
    assert require(True, "c", "a") is require(True, "c", "b")
    assert require(True, "c", "a", "x") is not require(True, "c", "a")
    assert require(True, "c", "a", "x").clause == "x"
    assert require(False, "c", "a") is not require(False, "c", "a")


def test_a_value_seen_twice_is_no_cycle_and_a_cycle_is_one() -> None:
    from conformance.interpreter.binding import jsonable

    shared = {"k": [1.0, float("nan")]}
    assert jsonable([shared, shared]) == [{"k": [1.0, {"$special": "nan"}]}] * 2
    loop: dict[str, Any] = {"a": 1}
    loop["self"] = [loop]
    assert jsonable(loop) == {"a": 1, "self": [{"$special": "cycle"}]}


def test_a_call_past_the_action_deadline_answers_the_deadline_in_the_callers_task() -> None:
    from conformance.adapters.runner import Driver, run_actions

    tasks: list[asyncio.Task[Any] | None] = []

    class Hangs(Driver):
        async def call(self, call: Any) -> Any:
            tasks.append(asyncio.current_task())
            await asyncio.sleep(60)

    async def main() -> Any:
        answers = await run_actions(
            {"actions": [{"call": {"callId": "c"}}]}, Hangs(), deadline=0.01
        )
        return answers, asyncio.current_task()

    answers, caller = run_in_a_new_loop(main())
    assert "deadline" in answers[0]["raised"] and tasks == [caller]


def test_a_timer_fires_by_the_turns_the_loop_made_not_by_the_machines_time() -> None:
    """The scenario loop's clock counts turns: 30 slow turns are 30 turns, however slow."""
    import time

    from conformance.adapters.reference.loop import TURN_S

    async def main() -> list[int]:
        fired: list[int] = []
        turns = 0
        asyncio.get_running_loop().call_later(50 * TURN_S, lambda: fired.append(turns))
        while not fired:
            time.sleep(0.001)  # a loaded machine: each turn takes a millisecond
            turns += 1
            await asyncio.sleep(0)
        return fired

    (at,) = run_in_a_new_loop(main())
    assert 40 <= at <= 60  # about 50 turns, not the first turn after 50 * TURN_S of real time


def test_a_wait_for_a_timer_lasts_its_timeout_on_the_clock_and_in_real_time() -> None:
    import time

    async def main() -> tuple[float, float]:
        loop = asyncio.get_running_loop()
        started, real = loop.time(), time.monotonic()
        await asyncio.sleep(0.05)
        return loop.time() - started, time.monotonic() - real

    clock, real = run_in_a_new_loop(main())
    assert 0.05 <= clock < 0.06 and real >= 0.045
    assert real < 0.5  # the wait moved the clock: no waiting on for LAG_S to catch it up


def test_a_scenario_that_spins_keeps_its_clock_within_the_lag_of_real_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A cooperative hang whose turns are slow still meets its deadline in bounded real time."""
    import time

    from conformance.adapters.reference import loop as loops

    monkeypatch.setattr(loops, "LAG_S", 0.02)

    async def main() -> float:
        real = time.monotonic()
        try:
            async with asyncio.timeout(0.05):
                while True:
                    time.sleep(0.01)  # a turn of 10 ms: 0.05 s is thousands of turns away
                    await asyncio.sleep(0)
        except TimeoutError:
            return time.monotonic() - real
        raise AssertionError("unreachable")

    assert run_in_a_new_loop(main()) < 0.5  # at most LAG_S after 0.05 s, plus a turn


def test_a_timed_scenario_gets_the_same_trace_on_a_loaded_machine(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A tool's ``timeoutMs`` against a body of a few dozen turns: the trace does not depend
    on how long each turn takes (it did while the loop read the machine's clock)."""
    from conformance.adapters import load_adapter
    from conformance.scenario import strategies as s

    body = [{"yield": 30}, {"observe": "signal"}, {"return": "done"}]
    scenario = s.scenario(
        "timed",
        [s.tool("grep", body, timeoutMs=1)],
        [{"call": s.call("c0", "grep", {})}],
        timeoutPolicy=True,
    )
    adapter = load_adapter("reference")
    quiet = adapter.run(scenario)
    turn = asyncio.base_events.BaseEventLoop._run_once  # type: ignore[attr-defined]

    def loaded(self: Any) -> None:
        import time

        time.sleep(0.0005)  # each turn half a millisecond slower: 30 turns, 15 ms
        turn(self)

    monkeypatch.setattr(asyncio.base_events.BaseEventLoop, "_run_once", loaded)
    assert adapter.run(scenario) == quiet
    assert quiet["actions"][0]["result"]["isError"] is False  # 30 turns are within 1 ms


def test_a_framework_host_runs_each_scenario_on_a_fresh_loop_with_the_counted_clock() -> None:
    """``FrameworkAdapter.run`` (every hosted framework) gets the scenario loops' clock: a timer
    race inside a framework comes out by turns, as the reference's does."""
    import time

    from conformance.adapters.host import FrameworkAdapter
    from conformance.adapters.reference.loop import TURN_S, ScenarioLoop

    class Host(FrameworkAdapter):
        dist = "jsonschema"  # any installed distribution: only its version is read
        capabilities = frozenset()
        missing: dict[str, str] = {}  # noqa: RUF012

        async def run_async(self, scenario: Any) -> dict[str, Any]:
            loop = asyncio.get_running_loop()
            fired: list[int] = []
            turns = 0
            loop.call_later(50 * TURN_S, lambda: fired.append(turns))
            while not fired:
                time.sleep(0.001)  # a loaded machine
                turns += 1
                await asyncio.sleep(0)
            return {"loop": loop, "at": fired[0]}

    host = Host()
    first, second = host.run({}), host.run({})
    assert isinstance(first["loop"], ScenarioLoop) and first["loop"].is_closed()
    assert first["loop"] is not second["loop"]  # a fresh loop per scenario, ended after
    assert 40 <= first["at"] <= 60
