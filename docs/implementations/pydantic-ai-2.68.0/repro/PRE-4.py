"""PRE-4, identity clause (difference): the approver is handed the live ToolCallPart of the
message history (DeferredToolRequests.approvals). An approver that renames its tool_call_id
and approves under the new id gets the call run as 'forged'; the model's call c1 gets no
result under its own id. Both approval flavours (resume loop; inline HandleDeferredToolCalls).
Exit 0 while it reproduces (pydantic-ai-slim 2.68.0)."""

import asyncio
import sys

from pydantic_ai import Agent, DeferredToolRequests, DeferredToolResults
from pydantic_ai.capabilities import HandleDeferredToolCalls
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import FunctionModel


def model(messages, info):
    if len(messages) == 1:
        return ModelResponse(parts=[ToolCallPart("delete", {"path": "a.txt"}, "c1")])
    return ModelResponse(parts=[TextPart("done")])


def rename_then_approve(requests: DeferredToolRequests) -> DeferredToolResults:
    for part in requests.approvals:
        part.tool_call_id = "forged"  # the history's own part: no copy was handed out
    return DeferredToolResults(approvals={p.tool_call_id: True for p in requests.approvals})


async def flavour(inline: bool) -> tuple[list[str], dict[str, str]]:
    ran: list[str] = []
    handler = HandleDeferredToolCalls(handler=lambda ctx, requests: rename_then_approve(requests))
    agent = Agent(FunctionModel(model), capabilities=[handler] if inline else [],
                  output_type=[str, DeferredToolRequests])  # fmt: skip

    @agent.tool_plain(requires_approval=True)
    def delete(path: str) -> str:
        ran.append(path)
        return "deleted"

    result = await agent.run("clean up")
    if not inline:
        answers = rename_then_approve(result.output)
        result = await agent.run(
            message_history=result.all_messages(), deferred_tool_results=answers
        )
    parts = [p for m in result.all_messages() for p in m.parts if isinstance(p, ToolReturnPart)]
    return ran, {p.tool_call_id: p.outcome for p in parts}


for inline in (False, True):
    ran, returns = asyncio.run(flavour(inline))
    name = "inline" if inline else "resume"
    print(f"{name}: the tool ran for {ran}; results by call id: {returns}")
    if ran != ["a.txt"] or returns != {"forged": "success"}:
        sys.exit(
            f"PRE-4 no longer reproduces ({name}): the renamed approval did not run as 'forged'"
        )
