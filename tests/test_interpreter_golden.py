"""The golden interpreter cases (fixtures/interpreter/*.json) against the Python interpreter.

Each case is language-neutral: scripts, the stage each runs in, the objects its
callable receives (described as JSON), the answers of ``next()``, and the exact
events the interpreter must record and what each callable returns or raises.
``harnesses/js/test/golden.test.mjs`` runs the same cases against the
JavaScript interpreter. This file builds the neutral objects the way the
default :class:`Binding` reads them (snake_case attributes, mappings for
arguments) and the reference adapter's binding supplies the abort controllers.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Mapping
from types import MappingProxyType
from typing import Any, ClassVar

import pytest
from jsonschema.validators import Draft202012Validator

from conformance.adapters.reference import ReferenceBinding
from conformance.interpreter.code_runtime import ScriptedCodeRuntime
from conformance.interpreter.handlers import ThrownValue
from conformance.interpreter.session import (
    ASYNC_STEPS,
    STAGES,
    STEPS,
    SYNC_STEPS,
    ScriptError,
    Session,
    decode,
    jsonable,
)
from conformance.scenario.schema import SCHEMA_DIR, load_json

CASES_DIR = SCHEMA_DIR.parent / "interpreter"
CASE_FILES = sorted(CASES_DIR.glob("*.json"))


def _cases() -> list[Any]:
    out = []
    for path in CASE_FILES:
        document = load_json(path, "steps-cases")
        for case in document["cases"]:
            out.append(pytest.param(case, id=f"{path.stem}:{case['name']}"))
    return out


# ------------------------------------------------------------- neutral objects


class _Frozen(Exception):
    pass


class Obj:
    """An implementation object with attributes (executions, contexts, results, requests)."""

    _frozen: bool
    _deferred: list[Any]
    _concluded: int
    _forwarded: list[Any]
    _keys: list[str]

    def __init__(self, fields: Mapping[str, Any], frozen: bool = False) -> None:
        for key, value in fields.items():
            object.__setattr__(self, key, value)
        object.__setattr__(self, "_frozen", frozen)
        object.__setattr__(self, "_deferred", [])
        object.__setattr__(self, "_concluded", 0)
        object.__setattr__(self, "_forwarded", [])
        if frozen:  # every field a read-only property: object.__setattr__ is refused too
            object.__setattr__(self, "__class__", _sealed(type(self), tuple(fields)))

    def __setattr__(self, key: str, value: Any) -> None:
        if self._frozen:
            raise _Frozen(key)
        object.__setattr__(self, key, value)

    def __delattr__(self, key: str) -> None:
        if self._frozen:
            raise _Frozen(key)
        object.__delattr__(self, key)

    def defer_context(self, message: Any) -> None:
        self._deferred.append(message)

    def conclude_turn(self) -> None:
        object.__setattr__(self, "_concluded", self._concluded + 1)

    def forward(self, result: Any) -> None:
        self._forwarded.append(jsonable(result))


_SEALED: dict[tuple[type, tuple[str, ...]], type] = {}


def _sealed(cls: type, names: tuple[str, ...]) -> type:
    """A subclass of ``cls`` whose fields ``names`` are read-only properties."""
    key = (cls, names)
    if key not in _SEALED:
        props = {n: property(lambda self, n=n: self.__dict__[n]) for n in names}
        _SEALED[key] = type(f"Frozen{cls.__name__}", (cls,), props)
    return _SEALED[key]


class Result(Obj):
    """A result object: camelCase JSON in, snake_case attributes, ``to_json`` back."""

    FIELDS: ClassVar[dict[str, str]] = {
        "isError": "is_error",
        "additionalContexts": "additional_contexts",
        "concludesTurn": "concludes_turn",
    }

    def __init__(self, data: Mapping[str, Any], frozen: bool = False) -> None:
        super().__init__({self.FIELDS.get(k, k): v for k, v in data.items()}, frozen)
        object.__setattr__(self, "_keys", [self.FIELDS.get(k, k) for k in data])

    def to_json(self) -> Any:
        back = {v: k for k, v in self.FIELDS.items()}
        return {back.get(k, k): jsonable(getattr(self, k)) for k in self._keys}


def _freeze(value: Any) -> Any:
    if isinstance(value, dict):
        return MappingProxyType({k: _freeze(v) for k, v in value.items()})
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    return value


class Runner:
    """Builds one case's objects and runs its scripts on a Session."""

    def __init__(self, case: Mapping[str, Any]) -> None:
        self.case = case
        self.session = Session({}, ReferenceBinding(), wait_s=case.get("waitMs", 200) / 1000)
        self.hooks: list[list[str]] = []
        self.contexts: list[Obj] = []
        self.session.register_hook = lambda key: self.hooks.append(["register", key])
        self.session.dispose_hook = lambda key: self.hooks.append(["dispose", key])
        self.nested: list[list[Any]] = []
        self.session.nested_call = self.nested_call
        for call in case.get("callers", []):
            _, arguments = self.session.caller(call)
            given = {"call_id": call["callId"], "name": call["name"], "arguments": arguments}
            self.session.track_caller(call["callId"], Obj(given))

    def signal(self, spec: Mapping[str, Any]) -> Any:
        b = self.session.binding
        kind = spec.get("signal", "caller")
        controller = self.session.controllers.get(spec.get("callId", ""))
        if kind == "caller" and controller is not None:
            return b.controller_signal(controller)
        if kind == "none":
            return None
        fresh = b.new_controller()
        if kind == "aborted":
            b.abort(fresh)
        return b.controller_signal(fresh)

    def execution(self, spec: Mapping[str, Any] | None) -> Any:
        if spec is None:
            return None
        frozen = bool(spec.get("frozen", False))
        arguments = decode(spec.get("arguments", {}))
        fields: dict[str, Any] = {}
        for key, value in spec.items():
            if key not in ("frozen", "shape", "signal", "hasParent", "arguments"):
                fields[key] = value
        if "arguments" in spec:
            fields["arguments"] = _freeze(arguments) if frozen else arguments
        if "hasParent" in spec:
            fields["parent"] = object() if spec["hasParent"] else None
        signal = self.signal(spec)
        if signal is not None:
            fields["signal"] = signal
        if spec.get("shape") == "mapping":
            return MappingProxyType(fields) if frozen else fields
        attribute = self.session.binding.attribute
        return Obj({attribute(k): v for k, v in fields.items()}, frozen)

    def result(self, spec: Mapping[str, Any] | None) -> Any:
        if spec is None:
            return None
        frozen = bool(spec.get("frozen", False))
        data = {k: decode(v) for k, v in spec.items() if k not in ("frozen", "shape")}
        if frozen:
            data = {k: _freeze(v) for k, v in data.items()}
        if spec.get("shape") == "mapping":
            return MappingProxyType(data) if frozen else data
        return Result(data, frozen)

    async def nested_call(self, ctx: Any, call_id: str, name: str, arguments: Any) -> Any:
        """A ``forward`` step's nested call: recorded, answered by the case's ``nested``."""
        answers = self.case.get("nested", [])
        answer = answers[len(self.nested)]
        self.nested.append([call_id, name, jsonable(arguments)])
        if "throw" in answer:
            raise RuntimeError(answer["throw"])
        return self.result(answer["result"])

    def next_(self, answers: list[Mapping[str, Any]]) -> Callable[[], Awaitable[Any]]:
        queue = list(answers)

        async def next_() -> Any:
            answer = queue.pop(0)
            if "throw" in answer:
                raise RuntimeError(answer["throw"])
            if "result" in answer:
                return self.result(answer["result"])
            return decode(answer["return"])

        return next_

    def start(self, run: Mapping[str, Any]) -> Any:
        """The run's callable, called when awaited (a synchronous stage's settles at once)."""
        s = self.session
        stage, ident, steps = run["stage"], run["id"], run["steps"]
        execution = self.execution(run.get("execution"))
        result = self.result(run.get("result"))
        next_ = self.next_(run.get("next", []))
        listener = {"id": ident, "steps": steps}
        if stage == "body":
            if execution is not None:
                self.contexts.append(execution)
            return s.tool_body({"name": ident, "execute": steps})(None, execution)
        if stage == "pre-execute":
            return s.pre_listener(listener)(execution, next_)
        if stage == "wrapper":
            return s.wrapper(listener)(execution, next_)
        if stage == "post-execute":
            return s.post_listener(listener)(execution, result, next_)
        if stage == "result":
            return s.observer(listener)(execution, result)
        if stage == "code-dispatch-log":
            return s.code_dispatch_log(listener)(execution, next_)
        if stage == "approval":
            spec = {"steps": steps, **({"byCall": run["byCall"]} if "byCall" in run else {})}
            return s.approval(spec).request(execution)
        sync: dict[str, Callable[[], Any]] = {
            "classifier": lambda: s.classifier({"name": ident, "isConcurrencySafe": steps})(
                decode(run.get("execution", {}).get("arguments"))
            ),
            "finalize": lambda: s.finalizer({"name": ident, "finalizeContent": steps})(
                execution, result
            ),
            "guard": lambda: s.guard(listener)(execution),
        }
        return _sync(sync[stage])

    async def run_all(self) -> list[Any]:
        """Start every run in order (each runs until it first waits), then await them all."""
        runs = self.case["runs"]
        return list(await asyncio.gather(*(_settle(self.start(run)) for run in runs)))


def _outcome(value: Any = None, error: BaseException | None = None) -> dict[str, Any]:
    if isinstance(error, ScriptError):
        return {"raises": "ScriptError"}
    if isinstance(error, ThrownValue):
        return {"raises": {"value": jsonable(error.value)}}
    if error is not None:
        out: dict[str, Any] = {"error": jsonable(getattr(error, "message", str(error)))}
        if hasattr(error, "code"):
            out["code"] = jsonable(error.code)
        return {"raises": out}
    return {"returns": jsonable(value)}


async def _sync(call: Callable[[], Any]) -> Any:
    return call()


async def _settle(pending: Awaitable[Any]) -> dict[str, Any]:
    try:
        return _outcome(await pending)
    except Exception as e:
        return _outcome(error=e)


def _group(event: Mapping[str, Any]) -> tuple[str, str]:
    return (event["stage"], event.get("id", event.get("tool", "approval")))


def run_case(case: Mapping[str, Any]) -> dict[str, Any]:
    """What the Python interpreter does with one case, in the case's ``expect`` form."""
    if "program" in case:
        return asyncio.run(run_program(case))
    runner = Runner(case)
    outcomes = asyncio.run(runner.run_all())
    out: dict[str, Any] = {"events": runner.session.events, "outcomes": outcomes}
    if runner.hooks:
        out["hooks"] = runner.hooks
    if runner.contexts:
        out["context"] = {
            "deferred": [jsonable(m) for c in runner.contexts for m in c._deferred],
            "concluded": sum(c._concluded for c in runner.contexts),
        }
        forwarded = [r for c in runner.contexts for r in c._forwarded]
        if forwarded:
            out["context"]["forwarded"] = forwarded
    if runner.nested:
        out["nestedCalls"] = runner.nested
    b = runner.session.binding
    if case.get("callers"):
        out["aborted"] = {
            call_id: b.aborted(b.controller_signal(c))
            for call_id, c in runner.session.controllers.items()
        }
    return out


class _Sdk:
    def __init__(self, answers: list[Mapping[str, Any]]) -> None:
        self.answers = list(answers)
        self.calls: list[list[Any]] = []
        self.logs: list[str] = []

    async def call(self, name: str, arguments: Any) -> Any:
        self.calls.append([name, arguments])
        answer = self.answers.pop(0)
        if "error" in answer:
            raise _CallError(name, answer["error"])
        return answer["ok"]

    def log(self, line: str) -> None:
        self.logs.append(line)


class _CallError(Exception):
    def __init__(self, tool_name: str, message: str) -> None:
        super().__init__(message)
        self.tool_name = tool_name
        self.message = message


async def run_program(case: Mapping[str, Any]) -> dict[str, Any]:
    program = case["program"]
    code = program if isinstance(program, str) else json.dumps(program)
    sdk = _Sdk(case.get("answers", []))
    out: dict[str, Any] = {}
    try:
        out["returns"] = await ScriptedCodeRuntime(call_error=_CallError).run(code, sdk)
    except Exception as e:
        out["fails"] = str(e)
    out.update(calls=sdk.calls, logs=sdk.logs)
    return out


def compare(case: Mapping[str, Any], got: Mapping[str, Any]) -> None:
    expect = dict(case["expect"])
    if "fails" in expect and "failsWith" in case:  # the message's tail is the language's
        assert str(got.get("fails", "")).startswith(expect.pop("fails"))
        got = {k: v for k, v in got.items() if k != "fails"}
    if case.get("interleaving") == "any":  # compare each script's events in its own order
        events = expect.pop("events")
        assert len(got["events"]) == len(events)
        for key in {_group(e) for e in events}:
            mine = [e for e in got["events"] if _group(e) == key]
            assert mine == [e for e in events if _group(e) == key], key
        got = {k: v for k, v in got.items() if k != "events"}
    assert dict(got) == expect


@pytest.mark.parametrize("case", _cases())
def test_golden_case(case: Mapping[str, Any]) -> None:
    compare(case, run_case(case))


# ------------------------------------------------------------------- coverage


def _all_cases() -> list[Mapping[str, Any]]:
    return [p.values[0] for p in _cases()]


def test_every_step_kind_and_stage_restriction_is_covered() -> None:
    seen: set[tuple[str, str]] = set()
    for case in _all_cases():
        for run in case.get("runs", []):
            for step in run["steps"]:
                seen.add((next(iter(step)), run["stage"]))
    kinds = {kind for kind, _ in seen}
    assert kinds >= set(STEPS), set(STEPS) - kinds
    for name, step in STEPS.items():
        outside = set(STAGES) - step.stages
        if outside:
            assert any((name, stage) in seen for stage in outside), f"{name} out of place"
        sync_stages = {stage for stage in step.stages if STAGES[stage].sync}
        if not step.sync and sync_stages:
            assert any((name, stage) in seen for stage in sync_stages), f"{name} in a sync script"
    assert {run["stage"] for c in _all_cases() for run in c.get("runs", [])} == set(STAGES)
    assert any("program" in case for case in _all_cases())


def test_recorded_events_match_the_tables_records() -> None:
    """A step's own event carries the fields its table entry says it records."""
    checks = {
        name: Draft202012Validator(step.records)
        for name, step in STEPS.items()
        if step.records is not None
    }
    marker = {"what": None, "barrier": "barrier", "mutate": "mutate", "forward": "forward"}
    found = set()
    for case in _all_cases():
        for event in case["expect"].get("events", []):
            kind = next((k for k in marker if k in event), None)
            if kind is None:
                continue
            own = event.get("what") in ("waitForAbort", "returnKept")  # else an observation's
            name = marker[kind] or (str(event["what"]) if own else "observe")
            found.add(name)
            extra = {k: v for k, v in event.items() if k not in _WHO}
            checks[name].validate(extra)
            records: Mapping[str, Any] = STEPS[name].records or {}
            assert set(records["required"]) <= set(extra) <= set(records["properties"]), event
    assert found == set(checks)


_WHO = {"stage", "id", "call", "tool", "agent", "hasParent"}


def test_the_table_is_the_interpreters_and_the_scenario_schemas() -> None:
    """Handlers exist for exactly the table's kinds; argument shapes equal the scenario schema's."""
    assert set(ASYNC_STEPS) | set(SYNC_STEPS) | {"return", "pick"} == set(STEPS)
    assert {k for k, s in STEPS.items() if s.sync} - {"return", "pick"} == set(SYNC_STEPS)
    scenario = json.loads((SCHEMA_DIR / "scenario.schema.json").read_text(encoding="utf-8"))
    shapes = scenario["$defs"]["step"]["properties"]
    assert set(shapes) == set(STEPS)
    for name, step in STEPS.items():
        shape = {k: v for k, v in shapes[name].items() if k != "description"}
        assert shape == step.argument, name


def test_a_wrong_expectation_fails() -> None:
    """The comparison can fail: one perturbed event of a real case is caught."""
    case = next(c for c in _all_cases() if c["expect"].get("events"))
    expect = json.loads(json.dumps(case["expect"]))
    expect["events"][0]["stage"] = "perturbed"
    with pytest.raises(AssertionError):
        compare({**case, "expect": expect}, run_case(case))
