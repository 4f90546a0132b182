"""The reference is a good citizen of Python: what it freezes copies, deep-copies and pickles
into equal values, executions hash by identity, and a frozen object refuses every write.

None of this is a rule of SPEC.md; all of it is observable by a listener (one that deep-copies
the arguments it is handed, one that keys its state by the execution), so the reference does it.
"""

from __future__ import annotations

import copy
import dataclasses
import pickle
from collections.abc import Callable
from typing import Any

import pytest

from reference import (
    AbortController,
    ApprovalRequest,
    CodeDispatchLog,
    ExecutionToken,
    ToolExecution,
    ToolExecutionInput,
    ToolSuccess,
    failure,
    materialize,
    text,
)

COPIES: list[Callable[[Any], Any]] = [
    copy.copy,
    copy.deepcopy,
    lambda value: pickle.loads(pickle.dumps(value)),
]
COPY_IDS = ["copy", "deepcopy", "pickle"]


def _execution() -> ToolExecution:
    arguments = materialize({"path": "a", "items": [1, {"k": 2}]})
    signal = AbortController().signal
    return ToolExecution(ExecutionToken(), "c0", "read_file", arguments, signal, "main", None)


@pytest.mark.parametrize("make_copy", COPIES, ids=COPY_IDS)
def test_frozen_json_copies_into_an_equal_frozen_value(make_copy: Callable[[Any], Any]) -> None:
    frozen = materialize({"path": "a", "items": [1, {"k": 2}], "n": None})
    again = make_copy(frozen)
    assert again == frozen
    assert type(again) is type(frozen)
    with pytest.raises(TypeError):
        again["path"] = "b"


@pytest.mark.parametrize("make_copy", COPIES, ids=COPY_IDS)
def test_results_copy_into_equal_results(make_copy: Callable[[Any], Any]) -> None:
    success = ToolSuccess(value=materialize({"k": [1]}), content=text("ok"))
    assert make_copy(success) == success
    error = failure("no such file", "INVALID_ARGS", name="ToolArgsError")
    assert make_copy(error) == error


def test_a_listener_may_deep_copy_the_execution_it_is_handed() -> None:
    execution = _execution()
    mine = copy.deepcopy(execution.arguments)
    assert mine == execution.arguments
    whole = copy.deepcopy(execution)
    assert whole.token is execution.token  # a token's identity is all it is
    assert whole.signal is execution.signal  # one cancellation, never forked
    assert whole.arguments == execution.arguments


def test_executions_hash_and_compare_by_identity() -> None:
    one, other = _execution(), _execution()
    state = {one: "first", other: "second"}
    assert state[one] == "first" and state[other] == "second"
    assert hash(one) == hash(one)
    assert one != other
    assert one != dataclasses.replace(one)  # equal fields, another execution


def test_a_token_never_crosses_a_process_boundary() -> None:
    with pytest.raises(TypeError):
        pickle.dumps(ExecutionToken())


FROZEN = [
    _execution,
    lambda: ToolSuccess(value=materialize({"k": 1}), content=text("ok")),
    lambda: failure("boom", "TOOL_TIMEOUT", name="ToolTimeoutError"),
    lambda: ApprovalRequest("c0", "bash", "main", "why", AbortController().signal),
    lambda: ToolExecutionInput("c0", "bash", {}, AbortController().signal),
    lambda: CodeDispatchLog(ExecutionToken(), "c0", "c0:code:1", "bash", False, text("x")),
]


@pytest.mark.parametrize("make", FROZEN)
def test_frozen_objects_refuse_every_write_even_object_setattr(make: Callable[[], Any]) -> None:
    frozen = make()
    name = dataclasses.fields(frozen)[1].name
    before = getattr(frozen, name)
    for write in (
        lambda: setattr(frozen, name, "rewritten"),
        lambda: object.__setattr__(frozen, name, "rewritten"),
        lambda: delattr(frozen, name),
        lambda: object.__delattr__(frozen, name),
    ):
        with pytest.raises(AttributeError):  # FrozenInstanceError is an AttributeError
            write()
    assert getattr(frozen, name) == before
