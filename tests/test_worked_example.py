"""The seed's worked example (steps 8-10), via reference.example's building blocks."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

from conftest import call, text_of

from reference import example, thaw


def test_step_8_read_file_runs_the_whole_pipeline() -> None:
    """Step 8: file policy delegates, guard passes, timeout wraps, body, render."""
    outcome = asyncio.run(example.step_8_read_file())
    assert not outcome.result.is_error
    value = thaw(outcome.result.value)
    assert value["path"] == "package.json"
    assert json.loads(value["content"])["name"] == "demo"
    assert text_of(outcome.result) == value["content"]  # output.render
    assert outcome.trace == [
        "pre-execute:file-policy",
        "pre-execute:permission",
        "guard",
        "execute:timeout-wrapped",
        "body",
        "post-execute",
        "tools/result",
    ]


def test_step_8_result_lands_in_the_session_log() -> None:
    """Step 8: tool/result lands in the log with the result JSON."""
    world = example.World()
    registry = example.build_registry(world, example.RecordingApproval("allowed-once"))

    result = asyncio.run(registry.execute(call("read_file", {"path": "package.json"})))
    (entry,) = world.session_log
    assert entry["type"] == "tool/result"
    assert entry["result"] == result.to_json()


def test_step_9_diff_rides_meta_and_replay_is_identical() -> None:
    """Step 9: the edit attaches a diff to meta; presentResult on replay gives the same view."""
    outcome = asyncio.run(example.step_9_edit_file())
    assert not outcome.result.is_error
    diff = thaw(outcome.result.meta)["diff"]
    assert "-A demo project." in diff and "+A demo project, edited." in diff
    assert outcome.live_view == outcome.replayed_view
    assert outcome.live_view["diff"] == diff


def test_step_9_present_result_is_pure() -> None:
    """Step 9: presentResult depends only on its inputs (same output, inputs untouched)."""
    args = {"path": "README.md", "old": "a", "new": "b"}
    result = {"isError": False, "value": {"changed": True}, "meta": {"diff": "d"}}
    snapshot = json.dumps([args, result], sort_keys=True)
    first = example.present_result_edit(args, result)
    second = example.present_result_edit(args, result)
    assert first == second
    assert json.dumps([args, result], sort_keys=True) == snapshot


def test_step_10_allowed_once_runs_and_caps_content() -> None:
    """Step 10: ask, allowed-once, guards, timeout, body, post, finalize (capped), result."""
    outcome = asyncio.run(example.step_10_bash("allowed-once"))
    assert not outcome.result.is_error
    assert thaw(outcome.result.value)["exitCode"] == 0
    assert outcome.bash_runs == ["pnpm lint"]
    shown = text_of(outcome.result)
    full = "exit code 0\n" + thaw(outcome.result.value)["stdout"]
    assert len(full) > example.MAX_BASH_CONTENT
    assert shown.startswith(full[: example.MAX_BASH_CONTENT]) and len(shown) < len(full)
    assert outcome.trace == [
        "pre-execute:file-policy",
        "pre-execute:permission",
        "approval:allowed-once",
        "guard",
        "execute:timeout-wrapped",
        "body",
        "post-execute",
        "finalize",
        "tools/result",
    ]


def test_step_10_approval_request_has_call_id_and_no_arguments() -> None:
    """Step 10: the approval request carries the call id and the reason, not the arguments."""
    outcome = asyncio.run(example.step_10_bash("allowed-once"))
    (request,) = outcome.approval_requests
    assert request.call_id == "call_10"
    assert request.reason == "side-effecting command"
    assert not hasattr(request, "arguments")
    assert "pnpm lint" not in repr(request)


def test_step_10_unavailable_denies_and_body_never_runs() -> None:
    """Step 10: had the approval service been unavailable, the call is denied, not allowed."""
    outcome = asyncio.run(example.step_10_bash("unavailable"))
    assert outcome.result.is_error
    assert outcome.bash_runs == []
    assert "body" not in outcome.trace and "guard" not in outcome.trace
    assert text_of(outcome.result) == "Error: " + outcome.result.message


def test_module_runs_and_exits_zero() -> None:
    """`python -m reference.example` prints the narrative and exits 0."""
    done = subprocess.run(
        [sys.executable, "-m", "reference.example"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    for marker in ("step 8", "step 9", "step 10", "live view == replayed view: True"):
        assert marker in done.stdout
    assert example.main() == 0
