"""CODE-1..4: Code Mode."""

from __future__ import annotations

import json
from typing import Any

import pytest
from conftest import Approval, asynctest, call, code_of, execute, text_of, tool

from conformance.adapters.reference import code_runtime
from reference import RegistrationError, Registry, ask, thaw


def program(*steps: dict[str, Any]) -> dict[str, str]:
    return {"code": json.dumps({"steps": list(steps)}), "description": "test program"}


def code_registry(entered: list[str], mode: str = "code") -> Registry:
    r = Registry(mode=mode, code_runtime=code_runtime())  # type: ignore[arg-type]
    r.register(tool("read_file", lambda a, c: entered.append(a.get("path")) or {"text": "hi"}))
    return r


def test_CODE_1_direct_native_call_is_unknown_before_policy() -> None:
    """CODE-1: parent-less native call: UNKNOWN_TOOL; no listener/approval/guard sees it."""
    entered: list[str] = []
    seen: list[str] = []
    approval = Approval()
    r = code_registry(entered)
    r.approval = approval
    r.on("tools/pre-execute", lambda e, n: seen.append("pre") or ask("?"))
    r.guard(lambda e: seen.append("guard"))
    result = execute(r, "read_file", {"path": "x"})
    assert code_of(result) == "UNKNOWN_TOOL"
    assert seen == [] and approval.requests == [] and entered == []


def test_CODE_1_message_points_to_run_code() -> None:
    """CODE-1: the UNKNOWN_TOOL message points the model to run_code."""
    result = execute(code_registry([]), "read_file", {"path": "x"})
    assert "run_code" in result.message
    assert "run_code" in text_of(result)


def test_CODE_2_nested_call_runs_through_the_full_pipeline() -> None:
    """CODE-2: a call with a parent executes any visible tool through the full pipeline."""
    entered: list[str] = []
    stages: list[tuple[str, str, bool]] = []
    r = code_registry(entered)
    r.on(
        "tools/pre-execute",
        lambda e, n: stages.append(("pre", e.name, e.parent is not None)) or n(),
    )
    r.guard(lambda e: stages.append(("guard", e.name, e.parent is not None)))
    r.on(
        "tools/post-execute",
        lambda e, res, n: stages.append(("post", e.name, e.parent is not None)) or n(),
    )
    result = execute(r, "run_code", program({"call": "read_file", "arguments": {"path": "a"}}))
    assert not result.is_error
    assert entered == ["a"]
    nested = [s for s in stages if s[1] == "read_file"]
    assert nested == [
        ("pre", "read_file", True),
        ("guard", "read_file", True),
        ("post", "read_file", True),
    ]
    assert thaw(result.value)["result"] == [{"ok": {"text": "hi"}}]


@asynctest
async def test_CODE_2_parent_is_the_outer_executions_token() -> None:
    """CODE-2: the nested call's parent is the opaque token of the enclosing run_code execution."""
    tokens: dict[str, Any] = {}
    r = code_registry([])
    r.on("tools/pre-execute", lambda e, n: tokens.__setitem__(e.name, (e.token, e.parent)) or n())
    await r.execute(call("run_code", program({"call": "read_file", "arguments": {}})))
    outer_token, outer_parent = tokens["run_code"]
    _, nested_parent = tokens["read_file"]
    assert outer_parent is None
    assert nested_parent is outer_token


def test_CODE_2_nested_call_policy_applies() -> None:
    """CODE-2: nested calls face the same policy (a deny inside a program is a failed sub-call)."""
    entered: list[str] = []
    r = code_registry(entered)
    r.on(
        "tools/pre-execute",
        lambda e, n: {"kind": "deny", "reason": "no reads"} if e.name == "read_file" else n(),
    )
    result = execute(r, "run_code", program({"call": "read_file", "arguments": {}}))
    assert entered == []
    (outcome,) = thaw(result.value)["result"]
    assert "error" in outcome


@pytest.mark.parametrize("mode", ["native", "both"])
def test_CODE_2_native_and_both_execute_direct_native_calls(mode: str) -> None:
    """CODE-2: under native and both, model-direct native calls execute."""
    entered: list[str] = []
    result = execute(code_registry(entered, mode), "read_file", {"path": "x"})
    assert not result.is_error and entered == ["x"]


def test_CODE_2_both_mode_also_offers_run_code() -> None:
    """CODE-2: under both, run_code is callable directly too."""
    entered: list[str] = []
    r = code_registry(entered, "both")
    assert not execute(
        r, "run_code", program({"call": "read_file", "arguments": {"path": "y"}})
    ).is_error
    assert entered == ["y"]


def test_CODE_3_dispatch_log_changes_only_the_durable_copy() -> None:
    """CODE-3: code-dispatch-log changes only the log copy; value and result unchanged."""
    r = code_registry([])
    baseline = code_registry([])
    r.on("tools/code-dispatch-log", lambda rec, n: [{"type": "text", "text": "[redacted]"}])
    args = program({"call": "read_file", "arguments": {"path": "a"}})
    result, expected = execute(r, "run_code", args), execute(baseline, "run_code", args)
    assert [e["content"] for e in r.log] == [[{"type": "text", "text": "[redacted]"}]]
    assert [e["content"] for e in baseline.log] != [e["content"] for e in r.log]
    assert result.to_json() == expected.to_json()
    assert thaw(result.value)["result"] == [{"ok": {"text": "hi"}}]


def test_CODE_3_throwing_listener_falls_back_to_original() -> None:
    """CODE-3: a throwing code-dispatch-log listener falls back to the original content."""
    r = code_registry([])
    baseline = code_registry([])

    def boom(rec: Any, n: Any) -> Any:
        raise RuntimeError("log redactor bug")

    r.on("tools/code-dispatch-log", boom)
    args = program({"call": "read_file", "arguments": {"path": "a"}})
    result, expected = execute(r, "run_code", args), execute(baseline, "run_code", args)
    assert r.log == baseline.log
    assert result.to_json() == expected.to_json()


def test_CODE_3_listener_cannot_mutate_the_record() -> None:
    """CODE-3: the listener's record is read-only; its content is frozen."""
    refused: list[str] = []

    def listener(rec: Any, n: Any) -> Any:
        for attempt in (
            lambda: setattr(rec, "content", ()),
            lambda: rec.content[0].__setitem__("text", "x"),
        ):
            try:
                attempt()
            except (TypeError, AttributeError):
                refused.append("refused")
        return n()

    r = code_registry([])
    r.on("tools/code-dispatch-log", listener)
    result = execute(r, "run_code", program({"call": "read_file", "arguments": {}}))
    assert refused == ["refused", "refused"]
    assert thaw(result.value)["result"] == [{"ok": {"text": "hi"}}]


@pytest.mark.parametrize("scope", [None, "agent-a"])
def test_CODE_4_run_code_cannot_be_registered(scope: str | None) -> None:
    """CODE-4: run_code is reserved: it cannot be registered or shadowed (globally or per agent)."""
    for mode in ("native", "code", "both"):
        r = Registry(mode=mode)  # type: ignore[arg-type]
        with pytest.raises(RegistrationError):
            r.register(tool("run_code"), scope=scope)


def test_CODE_4_run_code_stays_the_builtin() -> None:
    """CODE-4: after a refused registration the built-in run_code is still what runs."""
    r = code_registry([])
    with pytest.raises(RegistrationError):
        r.register(tool("run_code", lambda a, c: "hijacked"), scope="main")
    result = execute(r, "run_code", program({"return": 7}))
    assert thaw(result.value) == {"logs": [], "result": 7}
