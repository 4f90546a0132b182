"""A registry that re-enters a scripted callable without end is stopped by the interpreter
(``Session``'s runaway bound), answered as a timeout, and judged by PIPE-1 on what it entered.

The class of bug: a middleware chain whose ``next()`` does not move on (``step(i)`` for
``step(i + 1)``, a ``next()`` that dispatches the whole pipeline again). Each entry is a new
coroutine or task awaiting the last, so the chain never settles; thousands deep, not even the
per-action deadline can cancel it (the cancellation recurses down the chain to the
interpreter's limit), and a kit run used to spend the overrun bound's 15 s or more on each
such scenario.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import pytest

from conformance.adapters.reference.mutants import CATALOGUE
from conformance.adapters.runner import Driver, run_actions
from conformance.interpreter.session import RUNAWAY_ENTRIES, Runaway, Session
from conformance.judging.evaluate import evaluate, judge
from conformance.scenario.schema import FIXTURES
from conformance.seam.overrun import bounded
from conformance.vocab import RUNAWAY_PREFIX, Status, is_action_timeout

CALL = {"callId": "c0", "name": "t", "arguments": {}, "agent": "main"}
SCENARIO: dict[str, Any] = {
    "id": "runaway",
    "tools": [{"name": "t", "parameters": {"type": "object"}, "execute": [{"return": "ok"}]}],
    "wrappers": [{"id": "w", "steps": [{"delegate": True}]}],
    "actions": [{"call": CALL}],
}


class _Dispatch:
    """What a wrapper is handed: the reference binding reads it by attribute."""

    def __init__(self) -> None:
        self.call_id = "c0"
        self.name = "t"
        self.agent = "main"
        self.has_parent = False
        self.arguments: dict[str, Any] = {}


def _reentering(session: Session, hops: Callable[[], Awaitable[Any]]) -> Any:
    """A wrapper chain whose next() runs the same wrapper again, via ``hops``."""
    wrapper = session.wrapper(SCENARIO["wrappers"][0])
    dispatch = _Dispatch()

    async def next_() -> Any:
        await hops()
        return await wrapper(dispatch, next_)

    return wrapper(dispatch, next_)


def _run(made: Awaitable[Any]) -> Any:
    """``asyncio.run``, bounded: without the runaway bound these chains never end."""
    with bounded(10.0):
        return asyncio.run(made)  # type: ignore[arg-type]


async def _direct() -> None:
    return None


async def _through_a_task() -> None:
    await asyncio.ensure_future(asyncio.sleep(0))


@pytest.mark.parametrize("hops", [_direct, _through_a_task], ids=["coroutines", "tasks"])
def test_the_entry_past_the_bound_raises_runaway(hops: Callable[[], Awaitable[Any]]) -> None:
    session = Session(SCENARIO)
    with pytest.raises(Runaway) as caught:
        _run(_reentering(session, hops))
    enters = [e for e in session.events if e.get("at") == "enter"]
    assert len(enters) == RUNAWAY_ENTRIES  # every entry before the bound recorded; not the next
    assert {(e["stage"], e["id"], e["call"]) for e in enters} == {("wrapper", "w", "c0")}
    assert str(caught.value).startswith(RUNAWAY_PREFIX)
    assert "'w'" in str(caught.value) and "'c0'" in str(caught.value)
    # it is no Exception: an implementation's `except Exception` lets it through
    assert not isinstance(caught.value, Exception)


def test_entries_are_counted_per_call() -> None:
    """Many calls may each enter the same listener once: only one call's re-entry counts."""
    session = Session(SCENARIO)
    wrapper = session.wrapper(SCENARIO["wrappers"][0])

    async def ok() -> Any:
        return "ok"

    async def many() -> None:
        for n in range(RUNAWAY_ENTRIES * 2):
            dispatch = _Dispatch()
            dispatch.call_id = f"c{n}"
            await wrapper(dispatch, ok)

    _run(many())
    assert len([e for e in session.events if e.get("at") == "exit"]) == RUNAWAY_ENTRIES * 2


class _Reentering(Driver):
    def __init__(self, session: Session) -> None:
        super().__init__()
        self.session = session

    def call(self, call: Mapping[str, Any]) -> Any:
        return _reentering(self.session, _through_a_task)


def test_the_runner_answers_a_runaway_as_a_timeout_at_once() -> None:
    session = Session(SCENARIO)
    started = time.monotonic()
    answers = _run(run_actions(SCENARIO, _Reentering(session)))
    assert time.monotonic() - started < 5.0  # not the per-action deadline
    assert len(answers) == 1 and is_action_timeout(answers[0]["raised"])
    assert answers[0]["raised"].startswith(RUNAWAY_PREFIX)


def _trace(session: Session, answers: list[Any]) -> dict[str, Any]:
    return {"actions": answers, "events": session.events}


def test_pipe1_judges_the_entries_of_a_call_that_never_answered() -> None:
    session = Session(SCENARIO)
    answers = _run(run_actions(SCENARIO, _Reentering(session)))
    verdicts = judge(SCENARIO, _trace(session, answers), ["PIPE-1"])["PIPE-1"]
    assert [v.ok for v in verdicts] == [False]
    assert "repeated entries of ['wrapper:w']" in verdicts[0].message
    # and a call cut short that entered each listener once is not failed for it
    once = Session(SCENARIO)
    once.events.append({"stage": "wrapper", "id": "w", "call": "c0", "at": "enter"})
    cut_short = _trace(once, [{"raised": "deadline of 5 s exceeded"}])
    assert all(v.ok for v in judge(SCENARIO, cut_short, ["PIPE-1"])["PIPE-1"])


def test_a_registry_whose_next_does_not_move_on_fails_pipe1_quickly() -> None:
    """End to end: the bundled mutant (the reference's waterfall with ``step(i)`` for
    ``step(i + 1)``) on a fixture whose pre-execute listener delegates."""
    adapter = CATALOGUE["pipe.next-does-not-move-on"].build()
    path = next(iter(sorted((FIXTURES / "rules/PRE-1").glob("*.json"))))
    scenario = json.loads(path.read_text(encoding="utf-8"))
    assert any(
        step.get("delegate") for entry in scenario.get("preExecute", []) for step in entry["steps"]
    ), f"{path.name}: no delegating pre-execute listener"
    started = time.monotonic()
    evaluation = evaluate(adapter, scenario)
    assert time.monotonic() - started < 5.0
    assert evaluation.raised_status is Status.TIMEOUT
    assert [v.ok for v in evaluation.verdicts["PIPE-1"]].count(False) >= 1


class _Grouped(_Reentering):
    """A framework that runs the call in a task group: the Runaway reaches the runner wrapped
    in a BaseExceptionGroup (anyio's and asyncio.TaskGroup's way)."""

    def call(self, call: Mapping[str, Any]) -> Any:
        async def grouped() -> Any:
            async with asyncio.TaskGroup() as group:
                group.create_task(_reentering(self.session, _through_a_task))

        return grouped()


def test_a_runaway_inside_a_task_group_is_answered_as_one() -> None:
    answers = _run(run_actions(SCENARIO, _Grouped(Session(SCENARIO))))
    assert len(answers) == 1 and answers[0]["raised"].startswith(RUNAWAY_PREFIX)
