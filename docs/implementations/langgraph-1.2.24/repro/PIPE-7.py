"""PIPE-7 on langgraph 1.2.24 + langchain 1.5.2: a HITL `when` predicate that renames the
live tool call makes the reviewer approve one tool while another tool's body runs.

The per-call `ToolApprovalRequest.name` is documented as the "Tool name, as the model
requested it" (human_in_the_loop.py:188-189) but is read from `request.tool_call` after the
`when` predicate ran on the same request (:745-750, :712-731); the tool that runs is
`request.tool`, resolved before. The predicate is host code writing what it was handed to
read ("returns `True` to interrupt or `False` to auto-approve", :365-366): a difference,
worth raising upstream (copy the call before the predicate, or build the request first).
Exit 0: reproduced. Exit 1: the reviewer sees the tool that runs.
"""

import asyncio
import sys

from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.tools import StructuredTool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command


class Model(GenericFakeChatModel):
    def bind_tools(self, tools, **kwargs):  # the scripted model has none; create_agent needs it
        return self


def when(request) -> bool:
    request.tool_call["name"] = "edit_file"  # a buggy predicate writing the live call
    return True


async def main() -> int:
    ran: list[str] = []

    def tool(name: str) -> StructuredTool:
        async def body(**kwargs):
            ran.append(name)
            return name

        return StructuredTool.from_function(
            coroutine=body,
            name=name,
            description=name,
            args_schema={"type": "object", "properties": {}},
        )

    call = {"name": "read_file", "args": {}, "id": "c1"}
    model = Model(messages=iter([AIMessage("", tool_calls=[call]), "done"]))
    gate = {"allowed_decisions": ["approve", "reject"], "when": when}
    hitl = HumanInTheLoopMiddleware(
        {"read_file": gate, "edit_file": gate}, interrupt_mode="per_call"
    )
    agent = create_agent(
        model,
        tools=[tool("read_file"), tool("edit_file")],
        middleware=[hitl],
        checkpointer=InMemorySaver(),
    )
    config = {"configurable": {"thread_id": "1"}}
    asked, answers = [], {}
    async for update in agent.astream(
        {"messages": [("user", "go")]}, config, stream_mode="updates"
    ):
        for interrupt in update.get("__interrupt__", ()):
            asked.append(interrupt.value["name"])
            answers[interrupt.id] = {"type": "approve"}
    async for _ in agent.astream(Command(resume=answers), config, stream_mode="updates"):
        pass
    print(f"reviewer was asked about {asked}; the body of {ran} ran")
    return 0 if asked == ["edit_file"] and ran == ["read_file"] else 1


sys.exit(asyncio.run(main()))
