"""A sprint board on the Python SDK v2's MCPServer, for the probe.

The board resource changes when the `complete_task` tool marks a task done;
`enable_reports` adds a `sprint_report` tool. Changes are published with
`ctx.notify_resource_updated` and `ctx.notify_tools_changed`, which reach
2026-07-28 `subscriptions/listen` streams through the server's
SubscriptionBus. For 2025 clients the SDK keeps `resources/subscribe` only
as a low-level handler, registered here, with
`ServerSession.send_resource_updated` to the sessions that asked (in this
process: that path never goes through the bus).

Replicas behind a load balancer share the events with `--bus redis://…`
and the board itself with `--store redis://…`: a stream held on one replica
hears of a change made on another only through the first, and its re-read
sees the change only through the second.

`board://secret` is a board nobody may read. With `--gate`, a middleware
refuses a listen or subscribe for a URI the caller may not read (that one,
or one the board does not serve) before the SDK acknowledges it.

Usage: python board_server.py stdio
       python board_server.py http PORT [--bus memory|redis://HOST:PORT]
                              [--store redis://HOST:PORT] [--gate]
       (Streamable HTTP on 127.0.0.1:PORT/mcp)
"""

import asyncio
import json
import logging
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from mcp import types
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.session import ServerSession
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    PromptsListChanged,
    ResourcesListChanged,
    ResourceUpdated,
    ServerEvent,
    SubscriptionBus,
    ToolsListChanged,
)
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_REQUEST, SubscriptionsListenRequestParams
from redis.asyncio import Redis

logger = logging.getLogger(__name__)

BOARDS = {
    "sprint": {"design": False, "build": False, "ship": False},
    "backlog": {"tidy docs": False},
    "secret": {"pick a name": False},
}

# Boards nobody may read (or, with --gate, watch).
UNREADABLE = {"secret"}

# 2025 subscribers: each session that sent resources/subscribe, by URI.
SUBSCRIBERS: dict[str, list[ServerSession]] = {}


def can_read(uri: str) -> bool:
    """The one answer to "may the caller read it?", for reads and watches alike."""
    name = uri.removeprefix("board://")
    return uri.startswith("board://") and name in BOARDS and name not in UNREADABLE


# ---------------------------------------------------------------------------
# The bus across replicas: Redis pub/sub, one channel
# ---------------------------------------------------------------------------

REDIS_CHANNEL = "mcp-subscription-lab:board-events"

# An event is a kind and at most a URI: anything longer is not one of ours.
MAX_EVENT_BYTES = 4096

LIST_EVENTS: dict[str, ServerEvent] = {
    "tools_list_changed": ToolsListChanged(),
    "prompts_list_changed": PromptsListChanged(),
    "resources_list_changed": ResourcesListChanged(),
}


def encode_event(event: ServerEvent) -> bytes:
    if isinstance(event, ResourceUpdated):
        return json.dumps({"kind": "resource_updated", "uri": event.uri}).encode()
    kind = next(kind for kind, listed in LIST_EVENTS.items() if listed == event)
    return json.dumps({"kind": kind}).encode()


def decode_event(data: bytes) -> ServerEvent | None:
    """The event a message carries, or None for one that is not an event."""
    if len(data) > MAX_EVENT_BYTES:
        return None
    try:
        message = json.loads(data)
    except ValueError:
        return None
    if not isinstance(message, dict):
        return None
    kind = message.get("kind")
    if kind == "resource_updated" and isinstance(message.get("uri"), str):
        return ResourceUpdated(uri=message["uri"])
    return LIST_EVENTS.get(kind) if isinstance(kind, str) else None


class RedisSubscriptionBus:
    """SubscriptionBus over one Redis pub/sub channel shared by every replica.

    `publish` only sends to Redis; each replica's reader (`run_reader`, started
    in the server's lifespan) hands what arrives, its own events included, to
    the listeners of this process.
    """

    def __init__(self, url: str) -> None:
        self._redis = Redis.from_url(url)
        self._listeners: dict[object, Callable[[ServerEvent], None]] = {}

    async def publish(self, event: ServerEvent) -> None:
        await self._redis.publish(REDIS_CHANNEL, encode_event(event))

    def subscribe(self, listener: Callable[[ServerEvent], None]) -> Callable[[], None]:
        token = object()
        self._listeners[token] = listener

        def unsubscribe() -> None:
            self._listeners.pop(token, None)

        return unsubscribe

    @asynccontextmanager
    async def reading(self) -> AsyncIterator[None]:
        """Subscribed to the channel before the server serves; reading till it stops."""
        pubsub = self._redis.pubsub(ignore_subscribe_messages=True)
        await pubsub.subscribe(REDIS_CHANNEL)
        reader = asyncio.create_task(self._read(pubsub))
        try:
            yield
        finally:
            reader.cancel()
            await pubsub.aclose()
            await self._redis.aclose()

    async def _read(self, pubsub: Any) -> None:
        async for message in pubsub.listen():
            data = message.get("data")
            event = decode_event(data) if isinstance(data, bytes) else None
            if event is None:
                continue
            for listener in list(self._listeners.values()):
                try:
                    listener(event)
                except Exception:
                    # As the SDK's own bus does: one listener that raises is
                    # logged and must not stop the rest.
                    logger.exception("subscription listener raised; continuing")


class MemoryBoardStore:
    """The tasks done, in this process: each replica its own."""

    async def done(self, name: str) -> set[str]:
        return {task for task, done in BOARDS[name].items() if done}

    async def complete(self, name: str, task: str) -> None:
        BOARDS[name][task] = True


class RedisBoardStore:
    """The tasks done, in a Redis set per board that every replica reads."""

    def __init__(self, url: str) -> None:
        self._redis = Redis.from_url(url)

    async def done(self, name: str) -> set[str]:
        members = await self._redis.smembers(f"mcp-subscription-lab:board-done:{name}")
        return {
            member.decode() for member in members if member.decode() in BOARDS[name]
        }

    async def complete(self, name: str, task: str) -> None:
        await self._redis.sadd(f"mcp-subscription-lab:board-done:{name}", task)


BoardStore = MemoryBoardStore | RedisBoardStore


# ---------------------------------------------------------------------------
# Who may watch: the gate
# ---------------------------------------------------------------------------

NOT_PERMITTED = "not permitted to watch the requested resources"


def watched_uris(ctx: ServerRequestContext[Any]) -> list[str]:
    """The URIs a listen or a subscribe asks to watch, from its raw params."""
    if ctx.method == "subscriptions/listen":
        params = SubscriptionsListenRequestParams.model_validate(
            ctx.params or {}, by_name=False
        )
        return list(params.notifications.resource_subscriptions or ())
    if ctx.method == "resources/subscribe":
        return [str(types.SubscribeRequestParams.model_validate(ctx.params or {}).uri)]
    return []


async def gate_watches(
    ctx: ServerRequestContext[Any], call_next: CallNext
) -> HandlerResult:
    # One message for every refusal, so it never says which URIs exist.
    if not all(can_read(uri) for uri in watched_uris(ctx)):
        raise MCPError(INVALID_REQUEST, NOT_PERMITTED)
    return await call_next(ctx)


# ---------------------------------------------------------------------------
# The board
# ---------------------------------------------------------------------------


def build_server(
    bus: SubscriptionBus | None, store: BoardStore, gate: bool
) -> MCPServer:
    lifespan = None
    if isinstance(bus, RedisSubscriptionBus):
        redis_bus = bus

        @asynccontextmanager
        async def lifespan(_server: MCPServer) -> AsyncIterator[None]:
            async with redis_bus.reading():
                yield

    mcp = MCPServer(
        "Sprint Board",
        subscriptions=bus,
        middleware=[gate_watches] if gate else None,
        lifespan=lifespan,
    )

    @mcp.resource("board://{name}")
    async def board(name: str) -> str:
        if not can_read(f"board://{name}"):
            raise MCPError(INVALID_REQUEST, f"Unknown resource: board://{name}")
        done = await store.done(name)
        return "\n".join(
            f"[{'x' if task in done else ' '}] {task}" for task in BOARDS[name]
        )

    @mcp.tool()
    async def complete_task(board: str, task: str, ctx: Context) -> str:
        if task not in BOARDS[board]:
            raise MCPError(INVALID_REQUEST, f"no task {task!r} on board {board!r}")
        await store.complete(board, task)
        uri = f"board://{board}"
        await ctx.notify_resource_updated(uri)
        for session in list(SUBSCRIBERS.get(uri, [])):
            try:
                await session.send_resource_updated(uri)
            except Exception:
                # A session that cannot be told (its client has gone) is told
                # nothing more; the others still are.
                logger.exception("a 2025 subscriber of %s could not be told", uri)
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

    # MCPServer has no decorator for the 2025 subscription: its low-level server does.
    mcp._lowlevel_server.add_request_handler(
        "resources/subscribe", types.SubscribeRequestParams, subscribe
    )
    mcp._lowlevel_server.add_request_handler(
        "resources/unsubscribe", types.UnsubscribeRequestParams, unsubscribe
    )
    return mcp


async def subscribe(
    ctx: ServerRequestContext[Any], params: types.SubscribeRequestParams
) -> types.EmptyResult:
    sessions = SUBSCRIBERS.setdefault(str(params.uri), [])
    if ctx.session not in sessions:
        sessions.append(ctx.session)
    return types.EmptyResult()


async def unsubscribe(
    ctx: ServerRequestContext[Any], params: types.UnsubscribeRequestParams
) -> types.EmptyResult:
    sessions = SUBSCRIBERS.get(str(params.uri), [])
    if ctx.session in sessions:
        sessions.remove(ctx.session)
    return types.EmptyResult()


USAGE = "usage: board_server.py stdio | http PORT [--bus memory|redis://HOST:PORT] [--store redis://HOST:PORT] [--gate]"


def parse_http_options(
    options: list[str],
) -> tuple[SubscriptionBus | None, BoardStore, bool] | None:
    """The bus (None: the SDK's own), the board's store, whether to gate; None if malformed."""
    bus: SubscriptionBus | None = None
    store: BoardStore = MemoryBoardStore()
    gate = False
    rest = list(options)
    while rest:
        option = rest.pop(0)
        if option == "--gate":
            gate = True
        elif option == "--bus" and rest and rest[0] == "memory":
            rest.pop(0)
            bus = InMemorySubscriptionBus()
        elif option == "--bus" and rest and rest[0].startswith("redis://"):
            bus = RedisSubscriptionBus(rest.pop(0))
        elif option == "--store" and rest and rest[0].startswith("redis://"):
            store = RedisBoardStore(rest.pop(0))
        else:
            return None
    return bus, store, gate


def main(args: list[str]) -> None:
    if args[:1] == ["stdio"] and len(args) == 1:
        build_server(None, MemoryBoardStore(), False).run("stdio")
        return
    parsed = (
        parse_http_options(args[2:])
        if args[:1] == ["http"] and len(args) >= 2
        else None
    )
    if parsed is None or not args[1].isdigit():
        print(USAGE, file=sys.stderr)
        sys.exit(2)
    bus, store, gate = parsed
    build_server(bus, store, gate).run(
        "streamable-http", host="127.0.0.1", port=int(args[1])
    )


if __name__ == "__main__":
    main(sys.argv[1:])
