"""Correct but different registries: the kit must pass every one of them.

Each differs from the reference only where SPEC.md leaves the choice open
(section 9 lists the reference's own choices; section 5's route table marks
the others "choice"). If the kit fails one of these, the predicate that
failed is overfit to the reference -- or the variant is not correct after all,
and SPEC.md says why.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine, Iterator, Mapping, MutableMapping, Sequence
from types import MappingProxyType
from typing import Any

import reference.code_mode as codemod
import reference.registry as regmod
from conformance.adapters.reference import ReferenceAdapter
from conformance.adapters.reference.mutants._base import variant
from conformance.scenario import strategies as s
from reference import (
    ErrorCode,
    ExecutionToken,
    Registry,
    ToolExecution,
    ToolExecutionInput,
    ToolFailure,
    ToolResult,
    ToolSuccess,
    failure,
    run_batch,
    thaw,
)
from reference._json import dumps
from reference.registry import (
    Listener,
    Prepared,
    _code_failure,
    _PolicyFailure,
    _settle,
    _unknown,
)

log = logging.getLogger("conformance.adapters.reference.mutants.variants")

PostOutcome = tuple[ToolResult, bool, Sequence[Any]]

_OBSERVED = [s.listener("log", [{"observe": "result"}])]
_DELEGATE: list[dict[str, Any]] = [{"observe": "result"}, {"delegate": True}]


@variant(
    "denials reach post-execute (as upstream); ABORTED replaces a success before it",
    witness=s.scenario(
        "witness/upstream-routes",
        [s.tool("t", finalizeContent=[{"return": None}])],
        [{"call": s.call("c0", "t", {}, agent="main")}],
        preExecute=[s.listener("policy", [{"return": {"kind": "deny", "reason": "no"}}])],
        postExecute=[s.listener("inspect", _DELEGATE)],
        observers=_OBSERVED,
    ),
)
class UpstreamRoutes(Registry):
    """Three route choices the spec leaves open, taken the other way than the reference:

    * a denial (deny, refused ask, guard objection) reaches post-execute, as upstream does
      (POST-1: "which denials reach post-execute is the implementation's choice");
    * a replacement ``value`` never turns a failure into a success (POST-2: "this spec does
      not fix what a replacement value does to a failure");
    * a success whose caller aborted while the body ran is replaced by ``ABORTED`` *before*
      post-execute, which then sees the failure (section 5, row ``ABORTED``: choice).
    """

    async def complete(self, run: Prepared) -> ToolResult:
        if run.outcome == "denied":
            run.outcome = "dispatched"  # route: post-execute, then finalize
        return await super().complete(run)

    async def dispatch(self, run: Prepared) -> None:
        await super().dispatch(run)
        if (
            isinstance(run.result, ToolSuccess)
            and run.body_entered
            and run.execution.signal.aborted
        ):
            run.result = _code_failure(ErrorCode.ABORTED, "the call was cancelled")

    async def _post_execute(self, run: Prepared, result: ToolResult) -> PostOutcome:
        new, blocked, contexts = await super()._post_execute(run, result)
        if result.is_error and isinstance(new, ToolSuccess):
            return result, blocked, contexts  # a replacement value does not revive a failure
        return new, blocked, contexts


@variant(
    "unknown tools and invalid parameters fail at dispatch, after pre-execute and guards",
    witness=s.scenario(
        "witness/late-resolution",
        [s.tool("t", parameters={"type": "object", "required": ["path"]})],
        [{"call": s.call("c0", "missing", {})}, {"call": s.call("c1", "t", {})}],
        preExecute=[s.listener("policy", [{"delegate": True}])],
        guards=[s.listener("guard", [{"return": None}])],
        observers=_OBSERVED,
    ),
)
class LateResolution(Registry):
    """Resolution and validation at dispatch instead of up front:

    * a name the scope cannot see traverses pre-execute and guards, then fails at dispatch
      with ``UNKNOWN_TOOL`` and reaches post-execute, as upstream does (SCOPE-1 note, POST-1);
      under mode ``code`` a model-direct call is still refused before policy (CODE-1);
    * arguments that violate ``parameters`` are refused at dispatch, as a dispatch result
      that reaches post-execute and the finalizer (PIPE-4: "before policy or at dispatch");
    * under mode ``code`` ``schemas(scope)`` reports the scope's catalog (the SDK's source)
      instead of the presented list (SCOPE-2).
    """

    async def prepare(self, call: ToolExecutionInput) -> Prepared:
        tool = self._resolve(call.name, call.agent, call.parent)
        if tool is None and self.mode == "code" and call.parent is None:
            return await super().prepare(call)  # CODE-1: refused before any policy stage
        arguments, bad_args = self.taken(call)  # the snapshot taken when the call was made
        if bad_args is not None:
            return await super().prepare(call)  # refused before any policy, as the reference does
        self._snapshots.pop(id(call), None)
        execution = ToolExecution(
            ExecutionToken(),
            call.call_id,
            call.name,
            arguments,
            call.signal,
            call.agent,
            call.parent,
        )
        run = Prepared(execution, tool, tool.finalize_content if tool else None)
        if self._cancelled(run):
            return run
        try:
            decision = await self._pre_execute(execution)
        except _PolicyFailure as e:
            if self._cancelled(run):
                return run
            return self._end(run, "policy-failure", failure(str(e)))
        if self._cancelled(run):
            return run
        if decision["kind"] == "deny":
            return self._end(run, "denied", failure(decision["reason"]))
        if decision["kind"] == "ask":
            refusal = await self._approve(execution, decision.get("reason"))
            if self._cancelled(run):
                return run
            if refusal is not None:
                return self._end(run, "denied", failure(refusal))
        objection = self._guards_for(execution)
        if objection is not None:
            return self._end(run, objection[0], failure(objection[1]))
        self._cancelled(run)
        return run

    async def dispatch(self, run: Prepared) -> None:
        ex = run.execution
        if run.tool is None:  # resolved nothing: fails here, as a dispatch result
            self._end(run, "dispatched", _unknown(ex.name, self.mode, ex.parent))
            return
        problems = [e.message for e in run.tool.params_validator.iter_errors(thaw(ex.arguments))]
        if problems:
            message = f"invalid arguments for {ex.name}: " + "; ".join(problems)
            self._end(run, "dispatched", failure(message, ErrorCode.INVALID_ARGS))
            return
        await super().dispatch(run)

    async def _post_execute(self, run: Prepared, result: ToolResult) -> PostOutcome:
        new, blocked, contexts = await super()._post_execute(run, result)
        if result.is_error and isinstance(new, ToolSuccess):
            return result, blocked, contexts  # a replacement value does not revive a failure
        return new, blocked, contexts

    def _normalize(self, run: Prepared, value: Any) -> ToolResult:
        if run.tool is None and run.result is not None:
            return run.result  # nothing resolved: a replacement value has nothing to render
        return super()._normalize(run, value)

    def schemas(self, scope: str | None = None) -> list[dict[str, Any]]:
        if self.mode == "code":
            return self.catalog(scope)  # the SDK's source, documented as such
        return super().schemas(scope)


_REWORDED = {
    "denied": ("ToolDenied", "DENIED", "the call was refused: {}"),
    "policy-failure": (
        "PolicyError",
        "POLICY_FAILED",
        "a policy check broke, so the call was refused ({})",
    ),
}


@variant(
    "every registry-authored message is worded differently; denials carry error.info",
    witness=s.scenario(
        "witness/reworded",
        [s.tool("t")],
        [{"call": s.call("c0", "t", {})}, {"call": s.call("c1", "missing", {})}],
        preExecute=[s.listener("policy", [{"return": {"kind": "deny", "reason": "no"}}])],
        observers=_OBSERVED,
    ),
)
class Reworded(Registry):
    """Message wording and the optional ``error.info`` of denials are the implementation's
    (section 4: "this spec fixes neither their wording nor an error code"; "conformance never
    depends on message wording"). Every message the registry writes is reworded here; denials
    keep their reason inside the message (PRE-2, GUARD-2), approval refusals stay distinct
    (PRE-4), a code-mode refusal still mentions ``run_code`` (CODE-1), and a hidden tool still
    reads exactly like a missing one (SCOPE-1)."""

    async def prepare(self, call: ToolExecutionInput) -> Prepared:
        run = await super().prepare(call)
        result = run.result
        if not isinstance(result, ToolFailure):
            return run
        if run.outcome in _REWORDED:
            name, code, template = _REWORDED[run.outcome]
            run.result = failure(template.format(result.message), code, name=name)
        elif run.outcome == "unknown-tool":
            if self.mode == "code" and call.parent is None:
                text = f"`{call.name}` cannot be called directly here; write a `run_code` program"
            else:
                text = f"there is no tool called `{call.name}`"
            run.result = _code_failure(ErrorCode.UNKNOWN_TOOL, text)
        elif result.info is not None and result.info.code is not None:
            run.result = failure(f"rejected ({result.message})", result.info.code, name="Rejected")
        return run

    async def _approve(self, execution: ToolExecution, reason: str | None) -> str | None:
        refusal = await super()._approve(execution, reason)
        return None if refusal is None else f"approval step said no -- {refusal.upper()}"


@variant(
    "agent-scoped listeners and guards run before global ones; observers run concurrently",
    witness=s.scenario(
        "witness/scoped-first-bookkeeping",
        [s.tool("t")],
        [{"call": s.call("c0", "t", {}, agent="main")}],
        preExecute=[
            s.listener("global", [{"delegate": True}]),
            s.listener("mine", [{"delegate": True}], scope="main"),
        ],
        guards=[s.listener("g-global", [{"return": None}]), s.listener("g-mine", [], "main")],
        observers=[s.listener("first", [{"yield": 2}]), s.listener("second", [])],
    ),
)
class ScopedFirstBookkeeping(Registry):
    """Listener bookkeeping in another order: each agent's listeners, wrappers and guards are
    kept apart and consulted before the global ones (the spec fixes no order between the
    layers: PRE-1, PRE-8, GUARD-3), and ``tools/result`` observers are notified concurrently,
    each one contained (RES-1 asks for one notification each, not for an order)."""

    def _scoped_entries(self, event: str, agent: str | None) -> list[Listener]:
        entries = self._listeners[event]
        scoped = [e.fn for e in entries if e.scope is not None and e.scope == agent]
        ordered = scoped + [e.fn for e in entries if e.scope is None]
        if event != "tools/result" or not ordered:
            return ordered

        async def notify_all(execution: ToolExecution, result: ToolResult) -> None:
            async def notify(observe: Listener) -> None:
                try:
                    await _settle(observe(execution, result))
                except Exception:
                    log.exception("observer failed for %s", execution.call_id)

            await asyncio.gather(*(notify(observe) for observe in ordered))

        return [notify_all]

    def _guards_for(self, execution: ToolExecution) -> tuple[str, str] | None:
        saved = self._guards
        mine = [e for e in saved if e.scope is not None and e.scope == execution.agent]
        self._guards = mine + [e for e in saved if e.scope is None]
        try:
            return super()._guards_for(execution)
        finally:
            self._guards = saved


@variant(
    "the scheduler prepares a whole parallel group first, then pools the bodies",
    replaces="batch",
    witness=s.scenario(
        "witness/prepare-group-first",
        [s.tool("t", [{"yield": 2}, {"return": "ok"}], isConcurrencySafe=[{"return": True}])],
        [{"batch": [s.call("c0", "t", {}), s.call("c1", "t", {})], "maxParallel": 2}],
        preExecute=[s.listener("policy", [{"delegate": True}])],
        observers=_OBSERVED,
    ),
)
def prepare_group_first(
    registry: Registry, calls: Sequence[ToolExecutionInput], *, max_parallel: int = 4
) -> Coroutine[Any, Any, list[ToolResult]]:
    """A different but legal schedule (CONC-2): policy for every call of a parallel group runs
    first, in model order; then the bodies run in a pool bounded by ``max_parallel``; then
    the results complete in model order. Exclusive calls run alone, through the three
    phases, as barriers. A pool of fewer than one is refused up front, worded its own way.
    Like any driver, it snapshots every call's arguments when it is handed the batch."""
    for call in calls:
        registry.snapshot(call)  # PIPE-2: at the moment of the call
    return _prepare_group_first(registry, calls, max_parallel)


async def _prepare_group_first(
    registry: Registry, calls: Sequence[ToolExecutionInput], max_parallel: int
) -> list[ToolResult]:
    if max_parallel <= 0:
        raise RuntimeError(f"refusing a pool of {max_parallel}")
    modes = [registry.execution_mode(call) for call in calls]
    slots = asyncio.Semaphore(max_parallel)

    async def dispatch(run: Prepared) -> None:
        async with slots:
            await registry.dispatch(run)

    results: list[ToolResult] = []
    i = 0
    while i < len(calls):
        j = i + 1
        if modes[i] == "parallel":
            while j < len(calls) and modes[j] == "parallel":
                j += 1
        runs = [await registry.prepare(call) for call in calls[i:j]]
        await asyncio.gather(*(dispatch(run) for run in runs if run.ready))
        results.extend([await registry.complete(run) for run in runs])
        i = j
    return results


@variant(
    "a pool size below one is clamped to one: the batch runs one body at a time",
    replaces="batch",
    witness=s.scenario(
        "witness/pool-clamped-to-one",
        [s.tool("t", [{"yield": 2}, {"return": "ok"}], isConcurrencySafe=[{"return": True}])],
        [{"batch": [s.call("c0", "t", {}), s.call("c1", "t", {})], "maxParallel": 0}],
        preExecute=[s.listener("policy", [{"delegate": True}])],
        observers=_OBSERVED,
    ),
)
async def pool_clamped_to_one(
    registry: Registry, calls: Sequence[ToolExecutionInput], *, max_parallel: int = 4
) -> list[ToolResult]:
    """CONC-2 asks for a *bounded* rolling pool; asked for a pool below one, a driver may
    refuse the batch (as the reference does) or treat the pool as one. This one clamps:
    ``max(1, max_parallel)``, so a configuration slip of 0 runs the batch one body at a
    time -- never a hang on a pool with no slot, never an unbounded pool."""
    return await run_batch(registry, calls, max_parallel=max(1, max_parallel))


class DisposedTwice(RuntimeError):
    """A spent disposer, run again: it removes nothing and says so."""


@variant(
    "a spent disposer run again raises (it removes nothing)",
    witness=s.scenario(
        "witness/spent-disposer-raises",
        [s.tool("grep")],
        [
            {"dispose": "grep"},
            {"register": "grep"},
            {"dispose": "grep", "again": True},
            {"call": s.call("c0", "grep", {})},
        ],
        observers=_OBSERVED,
    ),
)
class SpentDisposerRaises(Registry):
    """DEF-6 asks that a disposer that already ran remove nothing when run again -- above all
    not a later registration of the same definition (a plugin that reloaded). Whether it
    returns quietly, as the reference's does, or tells its caller it already ran is the
    registry's choice: this one raises ``DisposedTwice`` and leaves every registration
    alone."""

    def register(
        self, definition: Mapping[str, Any], scope: str | None = None
    ) -> Callable[[], None]:
        dispose = super().register(definition, scope)
        spent = False

        def once() -> None:
            nonlocal spent
            if spent:
                raise DisposedTwice(f"the disposer of {definition.get('name')!r} already ran")
            spent = True
            dispose()

        return once


class AnnotatedTraceAdapter(ReferenceAdapter):
    """The reference, behind an adapter that adds non-normative extras to every trace."""

    def __init__(self) -> None:
        super().__init__(name="variant-annotated-trace")

    def run(self, scenario: Mapping[str, Any]) -> dict[str, Any]:
        trace = super().run(scenario)
        for seq, event in enumerate(trace["events"]):
            event["seq"] = seq
            event["adapter"] = "annotated"
        for answer in trace["actions"]:
            answer["note"] = "answered by the annotated adapter"
        trace["notes"] = [
            f"{len(trace['events'])} events recorded",
            "seq, adapter and note fields are adapter annotations, not spec data",
        ]
        return trace


@variant(
    "the adapter adds notes and extra fields to every event and answer",
    replaces="adapter",
    witness=s.scenario(
        "witness/annotated-trace",
        [s.tool("t")],
        [{"call": s.call("c0", "t", {})}],
        observers=_OBSERVED,
    ),
)
def annotated_trace() -> AnnotatedTraceAdapter:
    """Extra, non-normative trace data: the schema allows adapter ``notes`` and extra fields on
    events and answers, and predicates must never depend on their absence."""
    return AnnotatedTraceAdapter()


_ORIGINAL_FINALIZE = regmod._finalize


@variant(
    "a finalizeContent that throws anyway: the registry publishes an error of its own",
    replaces="reference.registry:_finalize",
    witness=s.scenario(
        "witness/own-error-after-finalizer-throws",
        [s.tool("t", finalizeContent=[{"throw": "finalizer broke"}])],
        [{"call": s.call("c0", "t", {})}],
        observers=_OBSERVED,
    ),
)
def finalize_or_own_error(finalizer: Any, execution: ToolExecution, result: ToolResult) -> Any:
    """FIN-4 asks only for exactly one published result when an author's finalizer throws
    anyway; which one is the registry's choice. The reference publishes the unfinalized
    result; this variant, like @deepseek-ai/dsh-tools, publishes a failure of its own
    (no value, no contexts, no code), whatever the outcome was."""
    broke: list[Exception] = []

    def watched(execution: ToolExecution, result: ToolResult) -> Any:
        try:
            return finalizer(execution, result)
        except Exception as e:
            broke.append(e)
            raise

    published = _ORIGINAL_FINALIZE(watched, execution, result)
    if broke:
        return failure(f"finalizeContent of {execution.name} broke its contract")
    return published


@variant(
    "a post-execute accept that replaces a failure's value is refused as a post-execute failure",
    witness=s.scenario(
        "witness/value-on-failure-refused",
        [s.tool("t", [{"deferContext": "from body"}, {"throw": "body failed"}])],
        [{"call": s.call("c0", "t", {})}],
        postExecute=[s.listener("revive", [{"return": {"kind": "accept", "value": "revived"}}])],
        observers=_OBSERVED,
    ),
)
class RefusesValueOnFailure(Registry):
    """POST-2 leaves open what a replacement value does to a failure. The reference revives
    it (revalidated, re-rendered: a success); ``UpstreamRoutes`` keeps the failure; this
    variant, like @deepseek-ai/dsh-tools, refuses the decision: the listener's verdict is a
    post-execute failure (POST-4), and the contexts it carried are not applied (POST-5
    does not judge such a call)."""

    async def _post_execute(self, run: Prepared, result: ToolResult) -> PostOutcome:
        new, blocked, contexts = await super()._post_execute(run, result)
        if result.is_error and isinstance(new, ToolSuccess):  # a value would revive it
            raise ValueError("post-execute may not replace the value of a failure")
        return new, blocked, contexts


class _FieldMapping(MutableMapping[str, Any]):
    """An implementation object seen as a mapping of its camelCase fields.

    Reads and writes go to the object's attributes (``callId`` is ``call_id``): a frozen
    execution or request still refuses every write, a dispatch view still lets a wrapper
    replace only its ``signal``.
    """

    def __init__(self, target: Any, fields: Sequence[str]) -> None:
        self._target = target
        self._fields = tuple(fields)

    @staticmethod
    def _attribute(key: str) -> str:
        return "".join(f"_{c.lower()}" if c.isupper() else c for c in key)

    def __getitem__(self, key: str) -> Any:
        if key not in self._fields:
            raise KeyError(key)
        return getattr(self._target, self._attribute(key))

    def __setitem__(self, key: str, value: Any) -> None:
        setattr(self._target, self._attribute(key), value)

    def __delitem__(self, key: str) -> None:
        delattr(self._target, self._attribute(key))

    def __iter__(self) -> Iterator[str]:
        return iter(self._fields)

    def __len__(self) -> int:
        return len(self._fields)


_EXECUTION_FIELDS = ("callId", "name", "arguments", "signal", "agent", "parent")
_REQUEST_FIELDS = ("callId", "toolName", "agent", "reason", "signal")


def _execution_mapping(execution: Any) -> _FieldMapping:
    return _FieldMapping(execution, _EXECUTION_FIELDS)


def _result_mapping(result: ToolResult) -> Mapping[str, Any]:
    """A result as the read-only mapping of its JSON form (a snapshot: writing into it
    changes nothing the registry publishes)."""
    return MappingProxyType(result.to_json())


class _MappingApproval:
    """The approval service, asked with a mapping-shaped request."""

    def __init__(self, service: Any) -> None:
        self._service = service

    def request(self, request: Any) -> Any:
        return self._service.request(_FieldMapping(request, _REQUEST_FIELDS))


@variant(
    "every callable is handed mappings: executions, dispatch views, results, approval requests",
    witness=s.scenario(
        "witness/mapping-shaped-objects",
        [s.tool("t", finalizeContent=[{"observe": "execution"}, {"return": None}])],
        [{"call": s.call("c0", "t", {"x": 1}, agent="main")}],
        preExecute=[s.listener("policy", [{"observe": "execution"}, {"delegate": True}])],
        observers=[
            s.listener(
                "tamper",
                [{"mutate": {"target": "result", "path": ["content", 0, "text"], "value": "x"}}],
            )
        ],
    ),
)
class MappingShaped(Registry):
    """SPEC.md fixes what each stage is handed, not its host shape: here every execution,
    dispatch view, result and approval request reaches a callable as a mapping of its
    camelCase fields (results: a read-only snapshot of their JSON form). The kit must read
    and write them through its binding exactly as it does attribute objects."""

    @property
    def approval(self) -> Any:
        return self._mapping_approval

    @approval.setter
    def approval(self, service: Any) -> None:
        self._mapping_approval = None if service is None else _MappingApproval(service)

    def on(
        self, event: str, listener: Listener, *, scope: str | None = None, prepend: bool = False
    ) -> Callable[[], None]:
        shaped = _shaped_listener(event, listener)
        return super().on(event, shaped, scope=scope, prepend=prepend)

    def use_timeout_policy(self) -> Callable[[], None]:
        """The registry's own timeout wrapper still reads its dispatch views by attribute."""
        from reference.timeout import timeout_wrapper

        return super().on("tools/execute", timeout_wrapper, prepend=True)

    def guard(self, guard: Callable[..., Any], *, scope: str | None = None) -> Callable[[], None]:
        return super().guard(lambda execution: guard(_execution_mapping(execution)), scope=scope)

    def register(
        self, definition: Mapping[str, Any], scope: str | None = None
    ) -> Callable[[], None]:
        finalizer = definition.get("finalize_content")
        if callable(finalizer):

            def finalize(execution: Any, result: ToolResult) -> Any:
                return finalizer(_execution_mapping(execution), _result_mapping(result))

            definition = {**definition, "finalize_content": finalize}
        return super().register(definition, scope)


def _shaped_listener(event: str, listener: Any) -> Any:
    if event in ("tools/pre-execute", "tools/execute"):
        return lambda execution, next_: listener(_execution_mapping(execution), next_)
    if event == "tools/post-execute":
        return lambda execution, result, next_: listener(
            _execution_mapping(execution), _result_mapping(result), next_
        )
    if event == "tools/result":
        return lambda execution, result: listener(
            _execution_mapping(execution), _result_mapping(result)
        )
    return listener  # tools/code-dispatch-log: its record is not an execution


class _DecoratedBodyError(Exception):
    """A body's exception, re-raised with the registry's decoration (its ``code`` kept)."""

    def __init__(self, tool: str, error: Exception) -> None:
        super().__init__(f"{tool!r} raised {type(error).__name__}: {error}")
        code = getattr(error, "code", None)
        if isinstance(code, str) and code:
            self.code = code


@variant(
    "a body error's message is decorated: '<tool>' raised <Type>: <message>",
    witness=s.scenario(
        "witness/decorated-body-errors",
        [s.tool("write_file", [{"throw": "disk full"}])],
        [{"call": s.call("c0", "write_file", {"path": "a"})}],
        postExecute=[s.listener("inspect", _DELEGATE)],
        observers=_OBSERVED,
    ),
)
class DecoratedBodyErrors(Registry):
    """Section 4: a body error carries the thrown error's message, and conformance never
    depends on wording. This registry says which tool raised what: ``disk full`` thrown by
    ``write_file`` becomes ``'write_file' raised ToolError: disk full`` (content ``Error: ``
    plus that message, RES-3; the thrown ``code`` kept in ``error.info``)."""

    def register(
        self, definition: Mapping[str, Any], scope: str | None = None
    ) -> Callable[[], None]:
        body = definition.get("execute")
        if callable(body):
            name = str(definition.get("name"))

            async def execute(arguments: Any, context: Any) -> Any:
                try:
                    return await _settle(body(arguments, context))
                except Exception as e:
                    raise _DecoratedBodyError(name, e) from e

            definition = {**definition, "execute": execute}
        return super().register(definition, scope)


_ORIGINAL_RUN_CODE = codemod.run_code_definition


@variant(
    "run_code's value is {returned, calls, output}: the program's result, its tool calls, its logs",
    replaces="reference.code_mode:run_code_definition",
    witness=s.scenario(
        "witness/run-code-value-shape",
        [s.tool("read_file", [{"return": "text"}])],
        [
            {
                "call": s.call(
                    "c0",
                    "run_code",
                    {
                        "code": '{"steps": [{"call": "read_file", "arguments": {}}]}',
                        "description": "a program",
                    },
                    agent="main",
                )
            }
        ],
        registry={"mode": "code"},
        codeDispatchLog=[s.listener("preview", [{"return": [{"type": "text", "text": "p"}]}])],
        observers=_OBSERVED,
    ),
)
def run_code_returned_calls_output(registry: Registry) -> Mapping[str, Any]:
    """SPEC.md fixes what ``run_code`` does (CODE-1..4), not the shape of its value. The
    reference returns ``{"logs": [...], "result": ...}``; this one returns ``{"returned":
    <the program's result or null>, "calls": <how many tool calls it made>, "output":
    [<log lines>]}`` and renders it as one JSON text block."""
    definition = dict(_ORIGINAL_RUN_CODE(registry))
    run = definition["execute"]

    async def execute(arguments: Any, context: Any) -> Any:
        value = await run(arguments, context)
        calls = sum(
            1
            for entry in registry.log
            if entry.get("type") == "tool/code-dispatch"
            and entry.get("parentCallId") == context.call_id
        )
        return {"returned": value.get("result"), "calls": calls, "output": list(value["logs"])}

    definition["execute"] = execute
    definition["output"] = {
        "schema": {
            "type": "object",
            "properties": {
                "returned": {},
                "calls": {"type": "integer", "minimum": 0},
                "output": {"type": "array", "items": {"type": "string"}},
            },
            "required": ["returned", "calls", "output"],
        },
        "render": lambda _args, value: [{"type": "text", "text": dumps(value)}],
    }
    return definition


# --------------------------------------------------------------- closed forms (portable)
#
# The portable rule set (conformance/judging/rule_sets.py) accepts every way an agent framework
# tells its caller that a call did not run, as long as the adapter declares it. These two
# variants are the reference with its refusals delivered in the other two forms, the way
# agent frameworks end a run: the raise (or the stop) comes *instead of* a result, so no
# finalizer runs and no observer hears of the call. Each passes the portable set (and only
# that set is asked of them: the full spec wants an error result, RES-3, and a finalizer
# for every outcome, FIN-2).

_REFUSALS = frozenset({"denied", "policy-failure"})


class CallRefused(Exception):
    """The run refuses a call: raised out of execute() in place of its error result."""


class _RaisesOnRefusal(Registry):
    """Policy refusals and post-execute failures raise out of ``execute``."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self._post_failure: Exception | None = None  # the call completing now: what post threw

    async def complete(self, run: Prepared) -> ToolResult:
        if run.outcome in _REFUSALS and run.result is not None and run.result.is_error:
            raise CallRefused(f"refused: {run.result.message}")  # no later stage, no observer
        self._post_failure = None
        try:
            result = await super().complete(run)
        finally:
            failure, self._post_failure = self._post_failure, None
        if failure is not None:
            raise CallRefused(f"post-execute failed: {failure}") from failure
        return result

    async def _post_execute(self, run: Prepared, result: ToolResult) -> PostOutcome:
        try:
            return await super()._post_execute(run, result)
        except Exception as e:  # propagates out of the run, as frameworks' hook errors do
            self._post_failure = e
            raise

    def _scoped_entries(self, event: str, agent: str | None) -> list[Listener]:
        if event == "tools/result" and self._post_failure is not None:
            return []  # the run is about to raise: there is no result to observe
        return super()._scoped_entries(event, agent)


@variant(
    "refusals and post-execute failures raise out of execute() (closed form 'raised')",
    witness=s.scenario(
        "witness/closed-by-raising",
        [s.tool("t")],
        [{"call": s.call("c0", "t", {}, agent="main")}],
        preExecute=[s.listener("policy", [{"return": {"kind": "deny", "reason": "no"}}])],
        observers=_OBSERVED,
    ),
    replaces="adapter",
    rules="portable",
)
def closed_by_raising() -> ReferenceAdapter:
    """A denial, a fail-closed ask, a non-grant answer, a malformed decision and a guard's
    objection end the call by raising ``CallRefused`` (its message carries the reason), and
    so does a throwing post-execute listener: the way many agent frameworks end a run. The
    raise takes the result's place, so neither finalizeContent nor any observer sees the
    call. The adapter declares the closed forms error-result and raised."""
    return ReferenceAdapter(
        lambda s: _RaisesOnRefusal(mode=s.get("registry", {}).get("mode", "native")),
        name="variant-closed-by-raising",
        closed_forms=frozenset({"error-result", "raised"}),
    )


class ApprovalPending(Exception):
    """An ask nobody could answer: the run stops, waiting for an approval answer."""


class _WaitsForApproval(Registry):
    async def complete(self, run: Prepared) -> ToolResult:
        result = run.result
        if (
            run.outcome == "denied"
            and result is not None
            and result.is_error
            and "approval" in result.message
        ):  # stops before any later stage: no finalizer, no observer
            raise ApprovalPending(f"waiting for approval: {result.message}")
        return await super().complete(run)


class _InterruptingAdapter(ReferenceAdapter):
    """Reports a call that stopped for approval as ``{"interrupted": message}``."""

    def run(self, scenario: Mapping[str, Any]) -> dict[str, Any]:
        trace = super().run(scenario)
        for answer in trace["actions"]:
            raised = answer.get("raised")
            if isinstance(raised, str) and raised.startswith(ApprovalPending.__name__):
                del answer["raised"]
                answer["interrupted"] = raised
        return trace


@variant(
    "an ask nobody can answer stops the run for approval (closed form 'interrupted')",
    witness=s.scenario(
        "witness/closed-by-interruption",
        [s.tool("t")],
        [{"call": s.call("c0", "t", {}, agent="main")}],
        preExecute=[s.listener("policy", [{"return": {"kind": "ask", "reason": "why"}}])],
    ),
    replaces="adapter",
    rules="portable",
)
def closed_by_interruption() -> ReferenceAdapter:
    """Without an approval service (or without an agent to route the question to), an ask
    does not become an error result: the run stops and reports the call pending, as an
    interrupt-then-resume framework does. The adapter declares error-result and
    interrupted."""
    return _InterruptingAdapter(
        lambda s: _WaitsForApproval(mode=s.get("registry", {}).get("mode", "native")),
        name="variant-closed-by-interruption",
        closed_forms=frozenset({"error-result", "interrupted"}),
    )
