"""What every framework adapter does as its framework's *host*, written once.

An agent framework (pydantic-ai, the OpenAI Agents SDK, Google's ADK, LangGraph) runs the
calls itself; the adapter is the host that starts a run, consumes it and answers the kit.
The pieces each framework adapter had its own copy of:

* :class:`FrameworkAdapter`: ``describe()`` and ``run()`` (the scenario gating, then one
  event loop per scenario, on the scenario loops' counted clock);
* :func:`gap`: the scenarios a host cannot map onto its framework, each skipped
  with a reason in the framework's own words (:class:`Gaps`);
* :func:`register_tools`: each registered tool built, and its registration's answer;
* :class:`HostDriver`: a ``call`` or ``batch`` action is one model turn of one run;
* :class:`TaskController` and :func:`consume`: the caller's abort cancels the task that
  consumes the run; a run that raised or was cancelled answers each of its calls;
* :class:`Observers`: the host's own loop handing one per-result notification to each
  of the scenario's observers in turn;
* :func:`success` / :func:`failure`: the kit's result JSON of a framework's result.

The action loop and the decision-shape test are :mod:`conformance.adapters.runner`'s.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

from conformance.adapters.reference.loop import run_in_a_new_loop
from conformance.adapters.runner import Driver, answer_raised
from conformance.interpreter.session import JSON, Session, jsonable
from conformance.scenario.schema import calls_of, scripts_of
from conformance.seam.adapter import AdapterInfo, ScenarioSkipped

__all__ = [
    "CLOSED_FORMS",
    "FrameworkAdapter",
    "Gaps",
    "HostDriver",
    "Observers",
    "RunFailed",
    "TaskController",
    "consume",
    "failure",
    "gap",
    "post_returns",
    "register_tools",
    "success",
]

T = TypeVar("T")

#: The closed forms a hosted framework answers with: a result it flags as an error, a
#: run that raised, a call left waiting for an approval.
CLOSED_FORMS = frozenset({"error-result", "raised", "interrupted"})

#: The answer of each call of a run the caller's abort cancelled.
CANCELLED: JSON = {"raised": "CancelledError: the run was cancelled"}

#: The listener stages whose registration could be scoped to an agent.
_LISTENERS = ("preExecute", "guards", "postExecute", "observers")


# --------------------------------------------------------------------------- gating


@dataclass(frozen=True)
class Gaps:
    """Why a host cannot map a kind of scenario onto its framework: one text per gap it
    has, in the framework's own words (None: the framework has no such gap).

    ``pre_chain`` and ``post_chain`` may name the number of listeners as ``{n}``."""

    #: a script steps ``deferContext`` or ``concludeTurn``
    contexts: str
    #: a call has ``afterInvoke`` / ``afterResult`` writes (the caller is the host's loop)
    caller_writes: str | None = None
    #: more than one pre-execute listener (the framework has one hook per tool)
    pre_chain: str | None = None
    #: more than one post-execute listener
    post_chain: str | None = None
    #: a listener, guard or observer scoped to an agent
    scoped: str | None = None
    #: an observer that raises (the host's own loop would meet it, not the framework)
    observer_raises: str | None = None
    #: an observer that does more than look, followed by another one
    observers_write: str | None = None


def gap(scenario: Mapping[str, Any], gaps: Gaps) -> str | None:
    """The first of ``gaps`` this scenario falls into (its reason to skip), or None."""
    steps = {k for script in scripts_of(scenario) for step in script for k in step}
    if steps & {"deferContext", "concludeTurn"}:
        return gaps.contexts
    writes = any(c.get("afterInvoke") or c.get("afterResult") for c in calls_of(scenario))
    if writes and gaps.caller_writes is not None:
        return gaps.caller_writes
    for key, chain in (("preExecute", gaps.pre_chain), ("postExecute", gaps.post_chain)):
        if chain is not None and len(scenario.get(key) or []) > 1:
            return chain.format(n=len(scenario[key]))
    listeners = [e for k in _LISTENERS for e in scenario.get(k, [])]
    if gaps.scoped is not None and any(e.get("scope") is not None for e in listeners):
        return gaps.scoped
    observers = scenario.get("observers", [])
    raises = any("throw" in step for o in observers for step in o.get("steps", []))
    if raises and gaps.observer_raises is not None:
        return gaps.observer_raises
    if gaps.observers_write is not None and not all(map(_looks_on, observers[:-1])):
        return gaps.observers_write
    return None


def post_returns(scenario: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The decisions the scenario's post-execute scripts return (a host maps each onto its
    framework's answer, or skips the scenario for one it has no counterpart for)."""
    steps = [step for spec in scenario.get("postExecute", []) for step in spec["steps"]]
    returns = [step.get("return") for step in steps if isinstance(step, Mapping)]
    return [r for r in returns if isinstance(r, Mapping)]


def _looks_on(spec: Mapping[str, Any]) -> bool:
    """A script that only records what it sees (``observe`` steps): it changes nothing."""
    return all(set(step) == {"observe"} for step in spec.get("steps", []))


class FrameworkAdapter:
    """``describe()`` and ``run()`` of a framework adapter: ``run`` skips a scenario
    :meth:`unsupported` names a reason for, else runs :meth:`run_async` on a new loop."""

    dist: ClassVar[str]  #: the distribution whose version is reported
    capabilities: ClassVar[frozenset[str]]
    missing: ClassVar[Mapping[str, str]]

    def __init__(self) -> None:
        self._info = AdapterInfo(
            name=self.dist,
            version=importlib.metadata.version(self.dist),
            language="python",
            capabilities=self.capabilities,
            missing=dict(self.missing),
            closed_forms=CLOSED_FORMS,
        )

    def describe(self) -> AdapterInfo:
        return self._info

    def unsupported(self, scenario: Mapping[str, Any]) -> str | None:
        """Why the framework cannot express this scenario, when it cannot."""
        return None

    def run(self, scenario: Mapping[str, Any]) -> dict[str, Any]:
        reason = self.unsupported(scenario)
        if reason is not None:
            raise ScenarioSkipped(reason)
        # a fresh loop per scenario, ended as asyncio.run ends its own, whose clock counts turns:
        # a framework's timer races (a tool timeout against a body's yields) come out the same
        # on a loaded machine (conformance/adapters/reference/loop.py)
        return run_in_a_new_loop(self.run_async(scenario))

    async def run_async(self, scenario: Mapping[str, Any]) -> dict[str, Any]:
        raise NotImplementedError


# --------------------------------------------------------------------------- building


def register_tools(
    scenario: Mapping[str, Any], build: Callable[[Mapping[str, Any]], T]
) -> tuple[list[tuple[Mapping[str, Any], T]], list[dict[str, Any]]]:
    """Each registered tool of the scenario built by ``build``: the (spec, tool) pairs, and
    each registration's answer (``ok``, or the error ``build`` raised; a skip leaves)."""
    built: list[tuple[Mapping[str, Any], T]] = []
    registrations: list[dict[str, Any]] = []
    for spec in scenario.get("tools", []):
        if not spec.get("registered", True):
            continue
        key = spec.get("key", spec["name"])
        try:
            built.append((spec, build(spec)))
            registrations.append({"key": key, "ok": True})
        except ScenarioSkipped:
            raise
        except Exception as e:
            registrations.append({"key": key, "ok": False, "error": f"{e}"})
    return built, registrations


# --------------------------------------------------------------------------- running


class HostDriver(Driver):
    """A driver whose ``call`` and ``batch`` actions are each one model turn with those
    calls, one run of the framework (:meth:`turn`); any exception of the run that is no
    deadline leaves the scenario (the run's own failures are answered by :func:`consume`).
    """

    answers_raises = False
    #: the framework's name in the skip reason of an action it has no counterpart for
    framework: ClassVar[str | None] = None

    async def turn(self, calls: list[Mapping[str, Any]], max_parallel: int | None) -> list[JSON]:
        """One model turn with these calls (``max_parallel`` None: a lone call's turn); one
        answer per call."""
        raise NotImplementedError

    async def call(self, call: Mapping[str, Any]) -> JSON:
        (answer,) = await self.turn([call], None)
        return answer

    async def batch(self, calls: list[Mapping[str, Any]], max_parallel: int) -> JSON:
        """A batch lists results; a call that did not close with a result keeps its form."""
        answers = await self.turn(calls, max_parallel)
        return {"results": [answer.get("result", answer) for answer in answers]}

    def unsupported(self, action: Mapping[str, Any]) -> Any:
        if self.framework is None:
            return super().unsupported(action)
        raise ScenarioSkipped(f"action {sorted(action)} has no {self.framework} counterpart")


class TaskSignal:
    """A caller's signal as the host keeps it; no framework stage is handed it."""

    def __init__(self) -> None:
        self.aborted = False
        self._event = asyncio.Event()

    async def wait(self) -> None:
        await self._event.wait()


class TaskController:
    """The caller's abort: cancels the task consuming the framework's run (:func:`consume`).

    ``cancel_once``: a host that answers a cancel by cleaning up (draining a stream) is
    cancelled once, not again while it does."""

    cancel_once: ClassVar[bool] = False

    def __init__(self) -> None:
        self.signal = TaskSignal()
        self.task: asyncio.Task[Any] | None = None

    def abort(self, reason: str) -> None:
        self.signal.aborted = True
        self.signal._event.set()
        task = self.task
        if task is None or task.done() or (self.cancel_once and task.cancelling()):
            return
        task.cancel(reason)


class RunFailed(Exception):
    """A run that ended without results: each of its calls is answered :attr:`answer`."""

    def __init__(self, answer: JSON) -> None:
        super().__init__(answer)
        self.answer = answer


async def consume(run: Awaitable[T], controllers: list[TaskController]) -> T:
    """Consume one framework run as a task the calls' controllers cancel (at once, for a
    call aborted before the run). A run cancelled or raising -> :class:`RunFailed`; a
    skip leaves the scenario."""
    task = asyncio.ensure_future(run)
    for controller in controllers:
        controller.task = task
        if controller.signal.aborted:
            task.cancel("aborted before the run")
    try:
        return await task
    except ScenarioSkipped:
        raise
    except asyncio.CancelledError:
        raise RunFailed(CANCELLED) from None
    except Exception as e:
        raise RunFailed(answer_raised(e)) from e


class Observers:
    """The scenario's observers behind a host's own loop: the framework hands the host one
    per-result notification and the host hands it to each observer in turn (which is why
    :class:`Gaps` skips a raising observer, or a writing one followed by another)."""

    def __init__(self, session: Session) -> None:
        self._each = [session.observer(o) for o in session.scenario.get("observers", [])]

    async def __call__(self, execution: Any, result: Any) -> None:
        for observer in self._each:
            await observer(execution, result)


def success(value: Any, text: str) -> JSON:
    """The kit's result of a framework's success: its value, and the text the model gets."""
    return {"isError": False, "value": jsonable(value), "content": [{"type": "text", "text": text}]}


def failure(text: str, code: str | None = None) -> JSON:
    """The kit's error result: the text the model gets, and the framework's code, if any."""
    error: dict[str, Any] = {"message": text}
    if code is not None:
        error["info"] = {"code": code}
    return {"isError": True, "error": error, "content": [{"type": "text", "text": text}]}
