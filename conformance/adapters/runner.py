"""The one action runner of the Python adapters, and their small shared toolkit.

An adapter is a *binding* (a :class:`conformance.interpreter.session.Binding`: how the
session reads and builds the implementation's objects) plus a *driver* (a :class:`Driver`:
what each kind of action does on the implementation). :func:`run_actions` runs a
scenario's actions in order through the driver, under the one per-action deadline
(:data:`ACTION_DEADLINE_S`, its message :func:`conformance.vocab.action_deadline`), and
makes the caller's ``afterInvoke`` / ``afterResult`` writes at their moments.

The toolkit: :func:`well_formed`, the one test of a decision's shape (SPEC section 2
"Decision", PRE-6) that every adapter asks before it hands a decision to its framework in
the framework's own terms, and :func:`kind_of`, the kind of a well-formed one;
:func:`chain_end`, the ``next()`` of a listener its framework runs alone;
:func:`attempt_write`, the ``schemas`` action's write; and :func:`answer_raised` /
:func:`answer_deadline`, the two closed answers of an action. What a framework adapter
does as its framework's host is :mod:`conformance.adapters.host`.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final, Literal

from conformance.interpreter.session import JSON, Binding, Runaway, jsonable
from conformance.seam.adapter import ScenarioSkipped
from conformance.vocab import ACTION_DEADLINE_S, action_deadline

__all__ = [
    "ACTION_DEADLINE_S",
    "Driver",
    "answer_deadline",
    "answer_raised",
    "attempt_write",
    "chain_end",
    "kind_of",
    "run_actions",
    "well_formed",
]


Stage = Literal["pre-execute", "post-execute"]

#: Each kind of each stage's decisions (SPEC section 2 "Decision"): the keys it must have
#: besides ``kind``, and the keys it may have.
_SHAPES: Final[Mapping[Stage, Mapping[str, tuple[frozenset[str], frozenset[str]]]]] = {
    "pre-execute": {
        "allow": (frozenset(), frozenset()),
        "deny": (frozenset({"reason"}), frozenset({"reason"})),
        "ask": (frozenset(), frozenset({"reason"})),
    },
    "post-execute": {
        "accept": (frozenset(), frozenset({"content", "value", "additionalContexts"})),
        "block": (frozenset({"feedback"}), frozenset({"feedback", "additionalContexts"})),
    },
}


def _text(value: Any) -> bool:
    return isinstance(value, str)


def _feedback(value: Any) -> bool:
    """A block's feedback: a text, or content (a list of blocks, each with a text ``type``)."""
    if isinstance(value, str):
        return True
    blocks = isinstance(value, list) and all(isinstance(b, Mapping) for b in value)
    return blocks and all(isinstance(b.get("type"), str) for b in value)


#: The keys whose value has a form wherever they appear.
_FORMS: Final[Mapping[str, Callable[[Any], bool]]] = {"reason": _text, "feedback": _feedback}


def well_formed(decision: Any, stage: Stage) -> bool:
    """Is ``decision`` a well-formed decision of ``stage``? The one answer every adapter uses.

    SPEC section 2: pre-execute ``{kind:"allow"}``, ``{kind:"deny", reason}``,
    ``{kind:"ask", reason?}``; post-execute ``{kind:"accept", content? | value?,
    additionalContexts?}``, ``{kind:"block", feedback, additionalContexts?}``. The edges:

    * the kind is compared exactly: a near miss (``"Allow"``, ``" deny"``, a lookalike, a
      kind of the other stage, ``"approve"``: fixtures/schema/methods.json ``literals``) is
      an unknown kind, so no decision (PRE-6);
    * a key the kind does not list (``{kind:"allow", reason}``, a stray ``extra``) makes it
      no decision: SPEC lists each kind's keys, and an adapter that dropped the stray key
      would hand on a decision nobody wrote;
    * ``reason`` is a text; ``null`` is no text, so ``{kind:"ask", reason:null}`` and
      ``{kind:"deny", reason:null}`` are no decisions (a deny without a reason, PRE-6);
    * ``feedback`` has two forms: a text, or content (a list of blocks, each with a text
      ``type``: SPEC section 3's content; POST-3 makes it the result's content). Anything
      else (``null``, a bare block, a number) is no feedback. An adapter whose framework
      takes only a text hands a content feedback on as no counterpart;
    * ``{kind:"deny", reason:""}`` IS a deny: the key is there and holds a text. SPEC leaves
      open whether the empty text says anything (methods.json ``nothingVsEmpty``: "open"),
      and both readings close the call, so reading it as a deny never fails open;
    * ``accept`` with both ``content`` and ``value`` is well-formed: POST-2 says the registry
      must not apply it as given, which is the registry's to do, not the adapter's.
    """
    if not isinstance(decision, Mapping):
        return False
    kind = decision.get("kind")
    shape = _SHAPES[stage].get(kind) if isinstance(kind, str) else None
    if shape is None:
        return False
    required, allowed = shape
    keys = set(decision) - {"kind"}
    if not required <= keys <= allowed:
        return False
    return all(_FORMS[k](decision[k]) for k in keys & set(_FORMS))


def kind_of(decision: Any, stage: Stage) -> str | None:
    """The kind of a well-formed decision of ``stage`` (:func:`well_formed`); None when
    ``decision`` is no decision."""
    return str(decision["kind"]) if well_formed(decision, stage) else None


def chain_end(binding: Binding, stage: Stage) -> Callable[[], Awaitable[Any]]:
    """The ``next()`` of a listener its framework runs alone (one hook per tool, no rest of
    a chain to hand on to): the end of a chain, ``allow`` / ``accept`` as the binding
    builds decisions."""

    async def next_() -> Any:
        if stage == "pre-execute":
            return binding.pre_decision({"kind": "allow"})
        return binding.post_decision({"kind": "accept"})

    return next_


def attempt_write(listed: Any, mutate: Mapping[str, Any]) -> None:
    """A caller's write into what ``schemas()`` handed it (a ``schemas`` action's ``mutate``):
    ``mutate["value"]`` at ``mutate["path"]``; a refused write is what a correct registry's
    copies may do, so it is swallowed (DEF-2 judges the re-read, not the write)."""
    target: Any = listed
    path = mutate["path"]
    try:
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = mutate["value"]
    except Exception:
        pass


def answer_raised(error: BaseException) -> JSON:
    """The answer of an action whose call raised: the closed form ``raised``."""
    return {"raised": f"{type(error).__name__}: {error}"}


def answer_deadline(seconds: float) -> JSON:
    """The answer of an action that hit the per-action deadline."""
    return {"raised": action_deadline(seconds)}


class Driver:
    """What each kind of action does on one implementation; override what it has.

    ``call`` and ``batch`` return (an awaitable of) the action's answer: ``{"result": ...}``
    / ``{"results": [...]}``, or a closed form (``{"raised": ...}``, ``{"interrupted":
    ...}``). An action the implementation has no counterpart for goes to
    :meth:`unsupported`, which skips the scenario (``ScenarioSkipped``) with the reason.
    """

    #: The exceptions that are not an action's answer but leave the run (a skip, say).
    passes_through: tuple[type[BaseException], ...] = (ScenarioSkipped,)
    #: Is any other exception of an action its ``raised`` answer (else it leaves the run)?
    answers_raises: bool = True
    #: ``Session.caller_writes`` when the caller's writes are made; None: none are made.
    caller_writes: Callable[[Mapping[str, Any], str], None] | None = None

    def unsupported(self, action: Mapping[str, Any]) -> Any:
        raise ScenarioSkipped(f"action {sorted(action)} has no counterpart")

    def call(self, call: Mapping[str, Any]) -> Awaitable[JSON]:
        return self.unsupported({"call": call})  # type: ignore[no-any-return]

    def batch(self, calls: list[Mapping[str, Any]], max_parallel: int) -> Awaitable[JSON]:
        return self.unsupported({"batch": calls})  # type: ignore[no-any-return]

    def schemas(self, scope: str | None) -> Any:
        """The listed entries (a list, or an awaitable of one): the live objects if they are."""
        return self.unsupported({"schemas": {}})

    def execution_mode(self, call: Mapping[str, Any]) -> Any:
        """``parallel`` or ``exclusive`` (or an awaitable of it)."""
        return self.unsupported({"executionMode": call})

    def register(self, key: str) -> dict[str, Any]:
        return self.unsupported({"register": key})  # type: ignore[no-any-return]

    def dispose(self, key: str, again: bool) -> None:
        self.unsupported({"dispose": key})

    def register_listener(self, kind: str, ident: str) -> None:
        self.unsupported({"register": ident, "of": kind})

    def dispose_listener(self, kind: str, ident: str, again: bool) -> None:
        self.unsupported({"dispose": ident, "of": kind})


async def _value(made: Any) -> Any:
    return await made if inspect.isawaitable(made) else made


async def _invoked(
    pending: Any, writes: Callable[[list[Mapping[str, Any]], str], None], calls: Any
) -> Any:
    """Make the ``afterInvoke`` writes of ``calls`` the moment the caller has control back
    after invoking ``execute`` (or ``batch``), before it awaits the result; returns what to
    await. A JavaScript caller gets control back when the async call reaches its first
    ``await``; a Python coroutine runs only once scheduled, so it is scheduled and run to its
    first wait, then written to (SPEC PIPE-2: "later" counts from the call). A write that
    raises cancels the call."""
    if not any(isinstance(c, Mapping) and c.get("afterInvoke") for c in calls):
        return pending
    if asyncio.iscoroutine(pending):
        pending = asyncio.ensure_future(pending)
        await asyncio.sleep(0)  # the call runs up to its first wait
    try:
        writes(calls, "afterInvoke")
    except BaseException:
        if isinstance(pending, asyncio.Future):
            pending.cancel()
        elif asyncio.iscoroutine(pending):
            pending.close()
        raise
    return pending


async def run_actions(
    scenario: Mapping[str, Any], driver: Driver, *, deadline: float = ACTION_DEADLINE_S
) -> list[JSON]:
    """Run a scenario's actions in order through ``driver``; one answer per action.

    A call's ``afterInvoke`` writes are made right after ``driver.call`` (or ``batch``) is
    invoked and before it is awaited (once the call reached its first wait), its
    ``afterResult`` writes after it answered. A call or batch still pending after
    ``deadline`` seconds is answered :func:`answer_deadline`; one the interpreter stopped as a
    runaway (:class:`~conformance.interpreter.session.Runaway`) is answered with what it says."""

    def writes(calls: list[Mapping[str, Any]], moment: str) -> None:
        if driver.caller_writes is not None:
            for call in calls:
                driver.caller_writes(call, moment)

    answers: list[JSON] = []
    for action in scenario.get("actions", []):
        try:
            answers.append(await _answer(action, driver, writes, deadline))
        except TimeoutError:
            answers.append(answer_deadline(deadline))
        except Runaway as e:  # the interpreter stopped a chain that re-entered without end
            answers.append({"raised": str(e)})
        except BaseExceptionGroup as group:  # a framework's task group wrapped it (anyio)
            runaways = group.subgroup(Runaway)
            if runaways is None:
                raise
            answers.append({"raised": str(_first(runaways))})
        except driver.passes_through:
            raise
        except Exception as e:
            if not driver.answers_raises:
                raise
            answers.append(answer_raised(e))
    return answers


def _first(group: BaseExceptionGroup[Any]) -> BaseException:
    """The first exception of a (nested) group that is no group itself."""
    first = group.exceptions[0]
    return _first(first) if isinstance(first, BaseExceptionGroup) else first


async def _answer(
    action: Mapping[str, Any],
    driver: Driver,
    writes: Callable[[list[Mapping[str, Any]], str], None],
    deadline: float,
) -> JSON:
    if "call" in action or "batch" in action:
        calls = [action["call"]] if "call" in action else list(action["batch"])
        if "call" in action:
            made = driver.call(action["call"])
        else:
            made = driver.batch(calls, action.get("maxParallel", 4))
        pending = await _invoked(made, writes, calls)
        # in this task (as asyncio.wait_for does from Python 3.12): no task of its own
        async with asyncio.timeout(deadline):
            answer = await _value(pending)
        writes(calls, "afterResult")
        return answer
    if "schemas" in action:
        scope = action["schemas"].get("scope")
        listed = await _value(driver.schemas(scope))
        answer = {"schemas": jsonable(listed)}
        if "mutate" in action:
            attempt_write(listed, action["mutate"])
            answer["after"] = jsonable(await _value(driver.schemas(scope)))
        return answer
    if "executionMode" in action:
        return {"mode": await _value(driver.execution_mode(action["executionMode"]))}
    if "register" in action and "of" in action:
        driver.register_listener(action["of"], action["register"])
        return {"ok": True}
    if "dispose" in action and "of" in action:
        driver.dispose_listener(action["of"], action["dispose"], bool(action.get("again")))
        return {}
    if "register" in action:
        outcome = driver.register(action["register"])
        return {k: v for k, v in outcome.items() if k != "key"}
    if "dispose" in action:
        driver.dispose(action["dispose"], bool(action.get("again")))
        return {}
    return driver.unsupported(action)
