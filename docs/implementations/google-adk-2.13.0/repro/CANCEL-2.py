"""CANCEL-2 on google-adk 2.13.0: a run cancelled in a before_tool_callback still runs the tool.

ADK has no signal of its own: a host cancels a run by cancelling the task that consumes
Runner.run_async. A before_tool_callback that cancels that task (a guard noticing the
caller gave up) returns None, and the tool body runs anyway: between the callbacks and the
tool there is no point where the cancellation is delivered (no await that suspends), so
it lands only after the body ran. The run then ends in CancelledError.
Exit 0: reproduced. Exit 1: the body no longer runs after the cancellation.
"""

import asyncio
import sys

from google.adk.agents import LlmAgent
from google.adk.cli.agent_test_runner import MockModel
from google.adk.runners import InMemoryRunner
from google.genai import types

ran: list[str] = []
task: "asyncio.Task[None] | None" = None


def edit(path: str) -> dict:
    """Edits a file."""
    ran.append(path)
    return {"ok": True}


def cancel_then_allow(tool, args, tool_context):
    assert task is not None
    task.cancel("the caller gave up")  # the host's cancellation, before dispatch
    return None  # no objection


async def consume() -> None:
    call = types.Part(function_call=types.FunctionCall(id="c1", name="edit", args={"path": "a"}))
    model = MockModel.create(
        [
            types.Content(role="model", parts=[call]),
            types.Content(role="model", parts=[types.Part.from_text(text="done")]),
        ]
    )
    agent = LlmAgent(name="main", model=model, tools=[edit], before_tool_callback=cancel_then_allow)
    runner = InMemoryRunner(agent=agent, app_name="repro")
    session = await runner.session_service.create_session(app_name="repro", user_id="u")
    message = types.Content(role="user", parts=[types.Part.from_text(text="go")])
    async for _ in runner.run_async(user_id="u", session_id=session.id, new_message=message):
        pass


async def main() -> int:
    global task
    task = asyncio.ensure_future(consume())
    try:
        await task
        print("the run was not cancelled")
    except asyncio.CancelledError:
        print("the run ended in CancelledError")
    print(f"tool body runs after the cancellation: {len(ran)}")
    if len(ran) != 1:
        print("no longer reproduces: the body did not run", file=sys.stderr)
        return 1
    return 0


sys.exit(asyncio.run(main()))
