"""RES-1..3: tools/result."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import Counter, code_of, execute, text_of, tool

from reference import Registry, ToolError, deny

N_OUT = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


def throw(*a: Any) -> Any:
    raise ToolError("disk full", code="ENOSPC")


@pytest.mark.parametrize("outcome", ["success", "body-error", "deny", "unknown-tool"])
def test_RES_1_exactly_one_notification_after_finalization(outcome: str) -> None:
    """RES-1: exactly one tools/result per execution, after finalization."""
    events: list[str] = []
    r = Registry()
    body = throw if outcome == "body-error" else (lambda a, c: {"n": 1})
    r.register(
        tool(
            "t",
            body,
            output_schema=N_OUT,
            finalize_content=lambda e, res: (
                events.append("finalize") or [{"type": "text", "text": "finalized"}]
            ),
        )
    )
    if outcome == "deny":
        r.on("tools/pre-execute", lambda e, n: deny("no"))
    seen: list[str] = []
    r.on("tools/result", lambda e, res: events.append("result") or seen.append(text_of(res)))
    execute(r, "nope" if outcome == "unknown-tool" else "t")
    assert events.count("result") == 1
    if outcome != "unknown-tool":
        assert events == ["finalize", "result"]
        assert seen == ["finalized"]


def test_RES_1_execution_and_result_are_deep_frozen_for_observers() -> None:
    """RES-1: observers cannot change the execution or the result, at any depth."""
    refused: list[str] = []
    mutated: list[str] = []

    def observer(execution: Any, result: Any) -> None:
        attempts = {
            "result.value": lambda: setattr(result, "value", 1),
            "result.value[k]": lambda: result.value.__setitem__("n", 2),
            "result.content": lambda: setattr(result, "content", ()),
            "result.content[0][text]": lambda: result.content[0].__setitem__("text", "x"),
            "result.content.append": lambda: result.content.append({}),
            "result.contexts.append": lambda: result.additional_contexts.append("x"),
            "result.meta[k]": lambda: result.meta.__setitem__("m", 2),
            "execution.name": lambda: setattr(execution, "name", "x"),
            "execution.arguments[k]": lambda: execution.arguments.__setitem__("path", "x"),
            "execution.arguments.nested": lambda: execution.arguments["o"]["l"].append(1),
        }
        for name, attempt in attempts.items():
            try:
                attempt()
            except (TypeError, AttributeError):
                refused.append(name)
            else:
                mutated.append(name)

    def body(a: Any, c: Any) -> Any:
        c.defer_context("ctx")
        return {"n": 1}

    definition = tool("t", body, output_schema=N_OUT, parameters={"type": "object"})
    definition["output"]["presentation_meta"] = lambda a, v: {"m": 1}
    r = Registry()
    r.register(definition)
    r.on("tools/result", observer)
    result = execute(r, "t", {"path": "p", "o": {"l": []}})
    assert mutated == []
    assert len(refused) == 10
    assert result.to_json()["value"] == {"n": 1}


def test_RES_1_observer_exception_is_contained() -> None:
    """RES-1: an observer's exception is contained; later observers still run."""
    later = Counter()
    r = Registry()
    r.register(tool("t", lambda a, c: {"n": 1}, output_schema=N_OUT))
    r.on("tools/result", lambda e, res: 1 / 0)
    r.on("tools/result", later)
    result = execute(r, "t")
    assert not result.is_error
    assert result.to_json()["value"] == {"n": 1}
    assert later.count == 1


def test_RES_2_execute_returns_what_observers_received() -> None:
    """RES-2: what execute returns is the same authoritative result observers received."""
    seen = Counter()
    r = Registry()
    r.register(tool("t"))
    r.on("tools/result", seen)
    result = execute(r, "t")
    assert seen.calls[0][1] is result


def test_RES_3_success_shape() -> None:
    """RES-3: success is {isError, value, content, meta?, additionalContexts?, concludesTurn?}."""
    r = Registry()
    r.register(tool("t", lambda a, c: {"n": 1}, output_schema=N_OUT))
    out = execute(r, "t").to_json()
    assert out == {
        "isError": False,
        "value": {"n": 1},
        "content": [{"type": "text", "text": '{"n": 1}'}],
    }

    def body(a: Any, c: Any) -> Any:
        c.defer_context("later")
        c.conclude_turn()
        return {"n": 2}

    definition = tool("u", body, output_schema=N_OUT)
    definition["output"]["presentation_meta"] = lambda a, v: {"m": v["n"]}
    r.register(definition)
    out = execute(r, "u").to_json()
    assert set(out) == {
        "isError",
        "value",
        "content",
        "meta",
        "additionalContexts",
        "concludesTurn",
    }
    assert out["meta"] == {"m": 2} and out["additionalContexts"] == ["later"]


@pytest.mark.parametrize(
    "outcome", ["body-error", "deny", "invalid-args", "unknown-tool", "output"]
)
def test_RES_3_failure_shape_and_error_content(outcome: str) -> None:
    """RES-3: failure: {isError, error{message, info?}, content}, no value, "Error: <message>"."""
    r = Registry()
    body = throw if outcome == "body-error" else (lambda a, c: {"n": "bad"})
    r.register(tool("t", body, output_schema=N_OUT))
    if outcome == "deny":
        r.on("tools/pre-execute", lambda e, n: deny("nope"))
    args = {"path": 1} if outcome == "invalid-args" else {}
    result = execute(r, "missing" if outcome == "unknown-tool" else "t", args)
    out = result.to_json()
    assert out["isError"] is True
    assert "value" not in out
    assert set(out) <= {"isError", "error", "content", "meta", "additionalContexts"}
    assert "concludesTurn" not in out
    assert isinstance(out["error"]["message"], str) and out["error"]["message"]
    assert set(out["error"]) <= {"message", "info"}
    if "info" in out["error"]:
        assert set(out["error"]["info"]) == {"name", "code"}
    assert out["content"] == [{"type": "text", "text": "Error: " + out["error"]["message"]}]


def test_RES_3_error_code_lives_at_info_code() -> None:
    """RES-3: a body's routable code is reported at error.info.code."""
    r = Registry()
    r.register(tool("t", throw))
    result = execute(r, "t")
    assert code_of(result) == "ENOSPC"
    assert result.to_json()["error"] == {
        "message": "disk full",
        "info": {"name": "ToolError", "code": "ENOSPC"},
    }
