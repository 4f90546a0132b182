"""Mutants of the five-stage pipeline (PIPE-1..4).

Read beside ``conformance/judging/rules/pipe.py``. Three of them replace the
reference's ``materialize`` (the one snapshot of the arguments) rather than a
registry method: that is where the mistake would be made.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from jsonschema.validators import Draft202012Validator

from conformance.adapters.reference import ReferenceAdapter
from conformance.adapters.reference.mutants._base import PatchedAdapter, mutant
from reference import (
    FrozenDict,
    Registry,
    ToolExecution,
    ToolExecutionInput,
    materialize,
    run_batch,
)
from reference._types import DispatchExecution
from reference.registry import (
    Prepared,
    ToolRunContext,
    _check_pre_decision,
    _finalize,
    _settle,
)


@mutant("PIPE-1", "finalizeContent runs on the dispatch result, before post-execute")
class FinalizesBeforePostExecute(Registry):
    """Tempting: "Finalize as soon as the body is done": the tool's last mile runs before the
    post-execute policies, which then see (and may replace) finalized content."""

    async def complete(self, run: Prepared) -> Any:
        if run.finalizer is not None and run.result is not None and run.outcome == "dispatched":
            run.result = _finalize(run.finalizer, run.execution, run.result)  # the bug
            run.finalizer = None
        return await super().complete(run)


@mutant("PIPE-1", "next() re-enters the pre-execute listener that called it")
class NextDoesNotMoveOn(Registry):
    """Tempting: "next() is the rest of the chain, from here": a ``next()`` that does not advance
    its index hands a delegating listener its own step again, so it is entered again and again
    and the call never ends. Each entry is a fresh coroutine awaited in the last one's task,
    so the chain grows without a turn of the loop to spare. (Found by cosmic-ray: the reference's
    ``step(i + 1)`` as ``step(i // 1)``; the wrapper chain's ``wrapped(i + 1)`` as
    ``wrapped(i ^ 1)`` is its twin. The kit's interpreter stops the re-entry as a runaway,
    ``conformance.interpreter.session.Runaway``, and PIPE-1 judges the entries.)"""

    async def _pre_execute(self, execution: ToolExecution) -> Mapping[str, Any]:
        listeners = self._scoped_entries("tools/pre-execute", execution.agent)

        async def step(i: int) -> Any:
            if i == len(listeners):
                return {"kind": "allow"}
            return await _settle(listeners[i](execution, lambda: step(i)))  # the bug

        return _check_pre_decision(await step(0))


@mutant(
    "PIPE-2",
    "the caller's arguments are used as given: no snapshot, no freeze, no check",
    replaces="reference.registry:materialize",
)
def arguments_used_as_given(value: Any, path: str = "$") -> Any:
    """A registry that trusts its caller: the arguments object is passed along by reference,
    so the caller (or any stage) can change what the body receives, and a NaN reaches policy."""
    if path == "$.arguments":
        return value  # the bug
    return materialize(value, path)


@mutant(
    "PIPE-2",
    "arguments are checked for losslessness, then used by reference (no snapshot)",
    replaces="reference.registry:materialize",
)
def checked_but_not_snapshotted(value: Any, path: str = "$") -> Any:
    """Validation and snapshot confused: the check runs, its frozen copy is thrown away and the
    caller's own object goes on down the pipeline."""
    checked = materialize(value, path)
    return value if path == "$.arguments" else checked  # the bug


@mutant(
    "PIPE-2",
    "arguments are frozen at the top level only (a shallow freeze)",
    replaces="reference.registry:materialize",
)
def shallow_freeze(value: Any, path: str = "$") -> Any:
    """A private copy whose top level is read-only -- but nested objects and arrays stay
    mutable, so a stage can still change ``args["opts"]["n"]`` for every later stage."""
    frozen = materialize(value, path)
    if path == "$.arguments" and isinstance(value, dict):
        return FrozenDict(copy.deepcopy(value))  # the bug: nested values not frozen
    return frozen


@mutant("PIPE-2", "arguments are snapshotted after pre-execute instead of before")
class SnapshotAfterPolicy(Registry):
    """The snapshot is taken "when the call is actually dispatched": the policy stages see the
    caller's live object, and whatever changed it meanwhile is what the body runs with."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._live: dict[str, Any] = {}

    async def prepare(self, call: ToolExecutionInput) -> Prepared:
        self._live[call.call_id] = call.arguments
        run = await super().prepare(call)
        if run.ready:  # the bug: the snapshot taken only now, after pre-execute and guards
            arguments = materialize(self._live.pop(call.call_id), "$.arguments")
            run.execution = dataclasses.replace(run.execution, arguments=arguments)
        return run

    async def _pre_execute(self, execution: ToolExecution) -> Mapping[str, Any]:
        live = self._live.get(execution.call_id, execution.arguments)
        return await super()._pre_execute(dataclasses.replace(execution, arguments=live))


@mutant("PIPE-3", "the arguments are rewritten on the way in (a tracing id is added)")
class AnnotatesArguments(Registry):
    """A well-meant rewrite: ``_callId`` is added for tracing. What is logged and presented no
    longer equals what ran."""

    async def prepare(self, call: ToolExecutionInput) -> Prepared:
        if isinstance(call.arguments, dict):
            call = dataclasses.replace(
                call,
                arguments={**call.arguments, "_callId": call.call_id},  # the bug
            )
        return await super().prepare(call)


@mutant("PIPE-4", "parameter validation is switched off: every tool accepts any arguments")
class SkipsParameterValidation(Registry):
    """Tempting: "The model follows the schema anyway": a body written against its schema receives
    arguments that violate it."""

    def register(
        self, definition: Mapping[str, Any], scope: str | None = None
    ) -> Callable[[], None]:
        dispose = super().register(definition, scope)
        layer = self._global if scope is None else self._scoped[scope]
        tool = layer[definition["name"]]
        layer[tool.name] = dataclasses.replace(
            tool,
            params_validator=Draft202012Validator(True),  # the bug
        )
        return dispose


@mutant(
    "PIPE-3",
    "the execution every stage shares is a mutable object: a listener can assign its arguments",
    replaces="reference.registry:ToolExecution",
)
@dataclasses.dataclass(eq=False)
class MutableExecution:
    """The snapshot is frozen, but the execution holding it is not: a pre-execute listener
    that assigns ``execution.arguments`` a new object (a top-level write, not one inside the
    frozen arguments) rewrites the call every later stage and the body run -- policy approved
    one call and another one ran (as on @deepseek-ai/dsh-tools 0.1.0-rc.8)."""

    token: Any
    call_id: str
    name: str
    arguments: Any  # the bug: an assignable field of a shared, mutable execution
    signal: Any
    agent: str | None
    parent: Any


@dataclasses.dataclass(eq=False)
class _OneFieldLeaks:
    """The reference's execution, read-only but for one identity field (``LEAKS``): a stage's
    write to that field takes effect on the one object every later stage is handed."""

    LEAKS: ClassVar[str] = ""

    token: Any
    call_id: str
    name: str
    arguments: Any
    signal: Any
    agent: str | None
    parent: Any

    def __setattr__(self, key: str, value: Any) -> None:
        if key != self.LEAKS and key in self.__dict__:
            raise dataclasses.FrozenInstanceError(f"cannot assign to field {key!r}")
        object.__setattr__(self, key, value)

    def __delattr__(self, key: str) -> None:
        if key != self.LEAKS:
            raise dataclasses.FrozenInstanceError(f"cannot delete field {key!r}")
        object.__delattr__(self, key)


@mutant(
    "PIPE-3",
    "a listener can rename the call: the execution's name is assignable",
    replaces="reference.registry:ToolExecution",
)
class NameLeaks(_OneFieldLeaks):
    """Every field of the shared execution is read-only but ``name``: a pre-execute listener
    that assigns it makes every later stage, the body and the observers see another tool than
    the one the caller called (and the one policy judged)."""

    LEAKS = "name"


@mutant(
    "PIPE-3",
    "a listener can re-number the call: the execution's callId is assignable",
    replaces="reference.registry:ToolExecution",
)
class CallIdLeaks(_OneFieldLeaks):
    """``callId`` is left assignable on the shared execution: a stage's write re-labels the call
    for every later stage and observer, so what is logged and correlated under one id ran
    under another."""

    LEAKS = "call_id"


@mutant(
    "PIPE-3",
    "a listener can act for another agent: the execution's agent is assignable",
    replaces="reference.registry:ToolExecution",
)
class AgentLeaks(_OneFieldLeaks):
    """``agent`` is left assignable on the shared execution: a pre-execute listener's write
    moves the call into another agent's scope for the guards, the wrappers, the body and the
    observers (as on @deepseek-ai/dsh-tools 0.1.0-rc.8)."""

    LEAKS = "agent"


@mutant(
    "PIPE-3",
    "a listener can give the call a parent: the execution's parent is assignable",
    replaces="reference.registry:ToolExecution",
)
class ParentLeaks(_OneFieldLeaks):
    """``parent`` is left assignable on the shared execution: a stage's write turns a
    model-direct call into a nested one (or back) for every later stage and observer (as on
    @deepseek-ai/dsh-tools 0.1.0-rc.8)."""

    LEAKS = "parent"


# ------------------------------------------------- the views write through


_WRITABLE: frozenset[str] = frozenset({"call_id", "name", "arguments", "agent", "parent"})


class _WriteThroughDispatch(DispatchExecution):
    """The ``tools/execute`` view, but an identity or arguments write goes to the execution."""

    def __setattr__(self, key: str, value: Any) -> None:
        if key in _WRITABLE:
            setattr(self._execution, key, value)  # the bug: the shared execution changes
            return
        super().__setattr__(key, value)

    def __delattr__(self, key: str) -> None:  # type: ignore[override]
        if key in _WRITABLE:
            delattr(self._execution, key)  # the bug
            return
        super().__delattr__(key)


class _WriteThroughContext(ToolRunContext):
    """The body's run context, but an identity or arguments write goes to the execution."""

    def __setattr__(self, key: str, value: Any) -> None:
        if key not in _WRITABLE:
            super().__setattr__(key, value)  # refused, as in the reference
            return
        setattr(self._execution, key, value)  # the bug

    def __delattr__(self, key: str) -> None:
        if key not in _WRITABLE:
            raise AttributeError(f"{key!r} cannot be deleted")
        delattr(self._execution, key)  # the bug


def _write_through(name: str) -> PatchedAdapter:
    """The reference with a mutable execution behind write-through views (the bug below)."""
    return PatchedAdapter(
        ReferenceAdapter(name=name, batch=run_batch),
        {
            ("reference.registry", "ToolExecution"): MutableExecution,
            ("reference.registry", "DispatchExecution"): _WriteThroughDispatch,
            ("reference.registry", "ToolRunContext"): _WriteThroughContext,
        },
    )


def _views_write_through() -> PatchedAdapter:
    """A registry whose execution is a plain (mutable) record, and whose two views -- the
    dispatch view a ``tools/execute`` wrapper gets and the run context the body gets --
    are convenience proxies that forward attribute writes to it: "the view is read-only"
    was only ever true of its getters. A wrapper or a body that assigns or deletes
    ``name``, ``callId``, ``agent``, ``parent`` or ``arguments`` changes the call every
    later stage, finalizeContent and the observers see."""
    return _write_through("pipe.views-write-through")


mutant(
    "PIPE-3",
    "the wrapper's dispatch view and the body's run context forward writes to the execution",
    replaces="adapter",
    name="views-write-through",
)(_views_write_through)


def _approved_then_rewritten() -> PatchedAdapter:
    """The same writable views, met where it matters most: the approver consented to one
    call, then a ``tools/execute`` wrapper assigns the execution other ``arguments`` and the
    body runs those (pydantic-ai #6968's shape: hooks rewrite after the approval)."""
    return _write_through("pipe.approved-then-rewritten")


mutant(
    "PIPE-5",
    "after the approval, a wrapper's write of the arguments reaches the body",
    replaces="adapter",
    name="approved-then-rewritten",
)(_approved_then_rewritten)


class _ShapeCachedValidator:
    """A parameters validator that remembers its verdict per argument *shape* (the keys)."""

    def __init__(self, inner: Draft202012Validator) -> None:
        self._inner = inner
        self._verdicts: dict[Any, list[Any]] = {}

    def iter_errors(self, instance: Any) -> Any:
        shape = tuple(sorted(instance)) if isinstance(instance, dict) else type(instance).__name__
        if shape not in self._verdicts:  # the bug: the first call's verdict, for every call
            self._verdicts[shape] = list(self._inner.iter_errors(instance))
        return iter(self._verdicts[shape])


@mutant("PIPE-4", "the parameters verdict is cached per argument shape (the keys), not per call")
class ValidationCachedByShape(Registry):
    """Validating every call "is slow", so the verdict is cached by the arguments' keys: the
    first ``{"path": "a"}`` passes, and then ``{"path": 1}`` -- the same keys, a wrong type --
    reaches the body too. Validation is a per-call decision (PIPE-4): every call's own
    arguments are checked."""

    def register(self, definition: Mapping[str, Any], scope: str | None = None) -> Any:
        dispose = super().register(definition, scope)
        layer = self._global if scope is None else self._scoped[scope]
        name = str(definition["name"])
        tool = layer[name]
        cached = _ShapeCachedValidator(tool.params_validator)
        mine = layer[name] = dataclasses.replace(tool, params_validator=cached)  # type: ignore[arg-type]

        def dispose_mine() -> None:
            if layer.get(name) is mine:
                layer[name] = tool
                dispose()

        return dispose_mine


@mutant(
    "PIPE-6", "a listener's disposer deletes the index its registration had, not the registration"
)
class DisposerByStaleIndex(Registry):
    """The disposer remembers *where* its listener went (``index = len(entries)``) and
    deletes that slot. Once an earlier registration is disposed, every later index points at
    a neighbour: disposing one plugin's listener -- or running a spent disposer again --
    silently removes another plugin's (a permission guard, an audit observer)."""

    @staticmethod
    def _add(entries: list[Any], entry: Any, prepend: bool) -> Callable[[], None]:
        index = 0 if prepend else len(entries)
        entries.insert(index, entry)

        def dispose() -> None:
            if index < len(entries):
                del entries[index]  # the bug: a position, not this registration

        return dispose


@mutant("PIPE-6", "the timeout policy's disposer drops whichever wrapper stands first")
class TimeoutDisposerDropsTheHead(Registry):
    """ "The policy is the outermost wrapper, so disposing it drops the head of the list": true
    the first time. Run again -- or after another wrapper was put in front -- the disposer
    removes a wrapper it never registered (a tracing or caching plugin's), and the policy
    may stay."""

    def use_timeout_policy(self) -> Callable[[], None]:
        super().use_timeout_policy()
        wrappers = self._listeners["tools/execute"]

        def dispose() -> None:
            if wrappers:
                del wrappers[0]  # the bug: a position, not this registration

        return dispose


class _ResolvesWhatItRuns(Registry):
    """The definition is looked up again at dispatch, by the name the execution has then
    ("the registry may have changed since the call was prepared"), on the writable
    execution of the write-through mutants: a guard that renames an approved call makes
    another tool's body run under the consent given for the first."""

    async def dispatch(self, run: Prepared) -> None:
        current = self._resolve(run.execution.name, run.execution.agent, run.execution.parent)
        if current is not None:  # the bug: the name as it is now, not the one approved
            run.tool = current
        await super().dispatch(run)


def _approved_then_renamed() -> PatchedAdapter:
    """The approver consented to ``read_file``; a guard then assigns the execution the name
    ``write_file``, and the registry resolves again at dispatch: ``write_file``'s body runs."""
    return PatchedAdapter(
        ReferenceAdapter(
            lambda s: _ResolvesWhatItRuns(mode=s.get("registry", {}).get("mode", "native")),
            name="pipe.approved-then-renamed",
            batch=run_batch,
        ),
        {
            ("reference.registry", "ToolExecution"): MutableExecution,
            ("reference.registry", "DispatchExecution"): _WriteThroughDispatch,
            ("reference.registry", "ToolRunContext"): _WriteThroughContext,
        },
    )


mutant(
    "PIPE-7",
    "after the approval, a guard's rename of the call makes another tool's body run",
    replaces="adapter",
    name="approved-then-renamed",
)(_approved_then_renamed)
