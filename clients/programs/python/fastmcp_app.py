"""An app on the FastMCP client (PyPI `fastmcp`, `fastmcp.Client`): it connects
over Streamable HTTP (or starts the server over stdio), lists, reads, waits
for notifications/resources/updated and reads again; then the catalog steps
of lab_app.py.

FastMCP's client has no subscribe call in either era (no resources/subscribe,
no subscriptions/listen): the app subscribes to nothing, and says so. What
it has is a notification hook, a MessageHandler whose on_resource_updated and
on_<kind>_list_changed get whatever the server sends. 2025: Client(mode=
"legacy"), a plain initialize; 2026-07-28: its default mode "auto"
(server/discover).
"""

from __future__ import annotations

import asyncio
import sys
from contextlib import AsyncExitStack

import mcp_types
from fastmcp import Client
from fastmcp.client.messages import MessageHandler
from fastmcp.client.transports import StdioTransport, StreamableHttpTransport

from lab_app import URI, Notified, Options, era_of, parse_options, run_app

_HOOKS = {
    "tools": "on_tool_list_changed",
    "prompts": "on_prompt_list_changed",
    "resources": "on_resource_list_changed",
}


class LabHandler(MessageHandler):
    """FastMCP's hooks, each signalling what it got."""

    def __init__(self, notified: Notified) -> None:
        self.notified = notified

    async def on_resource_updated(
        self, message: mcp_types.ResourceUpdatedNotification
    ) -> None:
        if message.params.uri == URI:
            self.notified.updated.set()

    async def on_tool_list_changed(
        self, message: mcp_types.ToolListChangedNotification
    ) -> None:
        self.notified.changed["tools"].set()

    async def on_prompt_list_changed(
        self, message: mcp_types.PromptListChangedNotification
    ) -> None:
        self.notified.changed["prompts"].set()

    async def on_resource_list_changed(
        self, message: mcp_types.ResourceListChangedNotification
    ) -> None:
        self.notified.changed["resources"].set()


class FastMcpApp:
    package = "fastmcp"
    subscribe_call = None
    update_via = "MessageHandler.on_resource_updated"

    def __init__(self, options: Options, notified: Notified) -> None:
        self.stack = AsyncExitStack()
        transport = (
            StdioTransport(options.server[0], options.server[1:], keep_alive=False)
            if options.server
            else StreamableHttpTransport(options.url or "")
        )
        self.client = Client(
            transport,
            message_handler=LabHandler(notified),
            client_info=mcp_types.Implementation(
                name="lab-library-fastmcp", version="1.0.0"
            ),
            mode="legacy" if options.era == "2025" else "auto",
        )

    def changed_via(self, kind: str) -> str:
        return f"MessageHandler.{_HOOKS[kind]}"

    async def connect(self) -> str:
        await self.stack.enter_async_context(self.client)
        return era_of(self.client.protocol_version)

    async def list(self, kind: str) -> list[str]:
        if kind == "tools":
            return [tool.name for tool in await self.client.list_tools()]
        if kind == "prompts":
            return [prompt.name for prompt in await self.client.list_prompts()]
        return [str(resource.uri) for resource in await self.client.list_resources()]

    async def read(self, uri: str) -> str:
        contents = await self.client.read_resource(uri)
        first = contents[0] if contents else None
        return first.text if isinstance(first, mcp_types.TextResourceContents) else ""

    async def subscribe(self) -> None:
        raise NotImplementedError("fastmcp's client has no subscribe call")

    async def use(self, kind: str, name: str) -> None:
        if kind == "tools":
            # call_tool raises ToolError on an isError result.
            await self.client.call_tool(name, {})
        elif kind == "prompts":
            await self.client.get_prompt(name)
        else:
            await self.client.read_resource(name)

    async def close(self) -> None:
        await self.stack.aclose()


async def main() -> int:
    options = parse_options("fastmcp_app.py", sys.argv[1:])
    notified = Notified()
    return await run_app(FastMcpApp(options, notified), notified, options)


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
