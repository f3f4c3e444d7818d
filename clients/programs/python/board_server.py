"""A sprint board on the Python SDK v2's MCPServer, for the probe.

The board resource changes when the `complete_task` tool marks a task done;
`enable_reports` adds a `sprint_report` tool. Changes are published with
`ctx.notify_resource_updated` and `ctx.notify_tools_changed`, which reach
2026-07-28 `subscriptions/listen` streams. For 2025 clients the SDK keeps
`resources/subscribe` only as a low-level handler, registered here, with
`ServerSession.send_resource_updated` to the sessions that asked.

Usage: python board_server.py stdio
       python board_server.py http PORT   (Streamable HTTP on 127.0.0.1:PORT/mcp)
"""

import sys
from typing import Any

import mcp.types as types
from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.session import ServerSession

mcp = MCPServer("Sprint Board")

BOARDS = {
    "sprint": {"design": False, "build": False, "ship": False},
    "backlog": {"tidy docs": False},
}

# 2025 subscribers: each session that sent resources/subscribe, by URI.
SUBSCRIBERS: dict[str, list[ServerSession]] = {}


@mcp.resource("board://{name}")
def board(name: str) -> str:
    tasks = BOARDS[name]
    return "\n".join(f"[{'x' if done else ' '}] {task}" for task, done in tasks.items())


@mcp.tool()
async def complete_task(board: str, task: str, ctx: Context) -> str:
    BOARDS[board][task] = True
    uri = f"board://{board}"
    await ctx.notify_resource_updated(uri)
    for session in list(SUBSCRIBERS.get(uri, [])):
        try:
            await session.send_resource_updated(uri)
        except Exception:
            # A session whose client has gone: it is told nothing more.
            SUBSCRIBERS[uri].remove(session)
    return f"{task}: done"


def sprint_report() -> str:
    done = sum(done for tasks in BOARDS.values() for done in tasks.values())
    return f"{done} task(s) done"


@mcp.tool()
async def enable_reports(ctx: Context) -> str:
    if "sprint_report" not in {tool.name for tool in await mcp.list_tools()}:
        mcp.add_tool(sprint_report)
    await ctx.notify_tools_changed()
    return "reporting is live"


async def subscribe(ctx: ServerRequestContext[Any], params: types.SubscribeRequestParams) -> types.EmptyResult:
    sessions = SUBSCRIBERS.setdefault(str(params.uri), [])
    if ctx.session not in sessions:
        sessions.append(ctx.session)
    return types.EmptyResult()


async def unsubscribe(ctx: ServerRequestContext[Any], params: types.UnsubscribeRequestParams) -> types.EmptyResult:
    sessions = SUBSCRIBERS.get(str(params.uri), [])
    if ctx.session in sessions:
        sessions.remove(ctx.session)
    return types.EmptyResult()


# MCPServer has no decorator for the 2025 subscription: its low-level server does.
mcp._lowlevel_server.add_request_handler("resources/subscribe", types.SubscribeRequestParams, subscribe)
mcp._lowlevel_server.add_request_handler("resources/unsubscribe", types.UnsubscribeRequestParams, unsubscribe)


def main(args: list[str]) -> None:
    if args[:1] == ["stdio"] and len(args) == 1:
        mcp.run("stdio")
    elif args[:1] == ["http"] and len(args) == 2 and args[1].isdigit():
        mcp.run("streamable-http", host="127.0.0.1", port=int(args[1]))
    else:
        print("usage: board_server.py stdio | http PORT", file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main(sys.argv[1:])
