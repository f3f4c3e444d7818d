"""An app on the MCP Python SDK v2 client (PyPI `mcp`, `mcp.client.Client`),
the Python counterpart of clients/programs/node/mcp-client.mjs: it connects
over Streamable HTTP (or starts the server over stdio), lists, reads,
subscribes, waits for notifications/resources/updated and reads again; then
the catalog steps of lab_app.py.

2025: Client(mode="legacy") (a plain initialize), then
client.subscribe_resource(uri), a resources/subscribe; the update and the
list changes come to the Client's message_handler. 2026-07-28: the Client's
default mode "auto" (server/discover), then client.listen(…), which opens a
subscriptions/listen and yields typed events: one listen at connect asks for
the three lists' changes, and the subscribe step opens another naming the
URI.
"""

from __future__ import annotations

import asyncio
import sys
import warnings
from contextlib import AsyncExitStack

from mcp import types
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.subscriptions import (
    PromptsListChanged,
    ResourcesListChanged,
    ResourceUpdated,
    Subscription,
    ToolsListChanged,
)
from mcp.shared.exceptions import MCPDeprecationWarning

from lab_app import URI, Notified, Options, era_of, parse_options, run_app

# The 2025 path is deprecated in the SDK (resources/subscribe is gone in
# 2026-07-28); the app takes it on purpose, so its warning is noise here.
warnings.filterwarnings("ignore", category=MCPDeprecationWarning)

_LIST_EVENTS = {
    ToolsListChanged: "tools",
    PromptsListChanged: "prompts",
    ResourcesListChanged: "resources",
}
_LIST_NOTIFICATIONS = {
    types.ToolListChangedNotification: "tools",
    types.PromptListChangedNotification: "prompts",
    types.ResourceListChangedNotification: "resources",
}


class PythonSdkApp:
    package = "mcp"

    def __init__(self, options: Options, notified: Notified) -> None:
        self.era = options.era
        self.notified = notified
        self.stack = AsyncExitStack()
        self.readers: list[asyncio.Task[None]] = []
        server: str | StdioServerParameters = (
            StdioServerParameters(command=options.server[0], args=options.server[1:])
            if options.server
            else options.url or ""
        )
        legacy = options.era == "2025"
        self.client = Client(
            server,
            mode="legacy" if legacy else "auto",
            message_handler=self.on_message if legacy else None,
            client_info=types.Implementation(
                name="lab-library-python-sdk", version="1.0.0"
            ),
        )
        if legacy:
            self.subscribe_call = "client.subscribe_resource(uri)"
            self.update_via = "Client(message_handler=…) ResourceUpdatedNotification"
        else:
            self.subscribe_call = "client.listen(resource_subscriptions=[uri])"
            self.update_via = "client.listen(…) ResourceUpdated event"

    def changed_via(self, kind: str) -> str:
        if self.era == "2025":
            return f"Client(message_handler=…) {kind} list_changed notification"
        return f"client.listen({kind}_list_changed=True) event"

    async def on_message(self, message: types.ServerNotification | Exception) -> None:
        """The 2025 era's hook: every notification the session surfaces."""
        if isinstance(message, types.ResourceUpdatedNotification):
            if message.params.uri == URI:
                self.notified.updated.set()
        elif type(message) in _LIST_NOTIFICATIONS:
            self.notified.changed[_LIST_NOTIFICATIONS[type(message)]].set()

    async def read_events(self, subscription: Subscription) -> None:
        """The 2026-07-28 era's hook: a listen's events, until it ends."""
        async for event in subscription:
            if isinstance(event, ResourceUpdated):
                if event.uri == URI:
                    self.notified.updated.set()
            elif type(event) in _LIST_EVENTS:
                self.notified.changed[_LIST_EVENTS[type(event)]].set()

    async def listen(self, **subscription_filter: object) -> None:
        subscription = await self.stack.enter_async_context(
            self.client.listen(**subscription_filter)  # type: ignore[arg-type]
        )
        self.readers.append(asyncio.create_task(self.read_events(subscription)))

    async def connect(self) -> str:
        await self.stack.enter_async_context(self.client)
        era = era_of(self.client.protocol_version)
        if era == "2026-07-28":
            # In 2026-07-28 a list change reaches only a listen asking for it.
            await self.listen(
                tools_list_changed=True,
                prompts_list_changed=True,
                resources_list_changed=True,
            )
        return era

    async def list(self, kind: str) -> list[str]:
        if kind == "tools":
            return [tool.name for tool in (await self.client.list_tools()).tools]
        if kind == "prompts":
            return [p.name for p in (await self.client.list_prompts()).prompts]
        listed = await self.client.list_resources()
        return [str(resource.uri) for resource in listed.resources]

    async def read(self, uri: str) -> str:
        contents = (await self.client.read_resource(uri)).contents
        first = contents[0] if contents else None
        return first.text if isinstance(first, types.TextResourceContents) else ""

    async def subscribe(self) -> None:
        if self.era == "2025":
            await self.client.subscribe_resource(URI)
        else:
            await self.listen(resource_subscriptions=[URI])

    async def use(self, kind: str, name: str) -> None:
        if kind == "tools":
            result = await self.client.call_tool(name, {})
            if getattr(result, "is_error", False):
                raise RuntimeError("the tool answered with isError")
        elif kind == "prompts":
            await self.client.get_prompt(name)
        else:
            await self.client.read_resource(name)

    async def close(self) -> None:
        for reader in self.readers:
            reader.cancel()
        await self.stack.aclose()


async def main() -> int:
    options = parse_options("python_sdk_app.py", sys.argv[1:])
    notified = Notified()
    return await run_app(PythonSdkApp(options, notified), notified, options)


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
