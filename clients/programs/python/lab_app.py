"""What the Python library apps share: the command line, the fact lines and
the app's steps in order (the Python counterpart of
clients/programs/node/lab_app.mjs, with the Go app's catalog steps), so each
app holds only its library's calls.

    <app>.py app --url URL [--era 2025|2026-07-28] [--wait SECONDS]
    <app>.py app --stdio [--era …] [--wait …] -- COMMAND [ARGS…]

Every line an app prints is one fact, `key value`; any text from the server
goes through show() first.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from importlib.metadata import version
from typing import Protocol

# The lab's resource.
URI = "test://review/status"
ERAS = ("2025", "2026-07-28")
# The lists an app watches, in the lab's order.
CATALOG_KINDS = ("tools", "prompts", "resources")
# How long a list-changed notification gets to follow the update: the lab
# sends it right after notifications/resources/updated.
LIST_CHANGED_GRACE_SECONDS = 2.0


def show(value: object) -> str:
    """Server text, JSON-quoted (no raw control characters), cut to 200."""
    return json.dumps(str(value), ensure_ascii=False)[:200]


def message_of(error: BaseException) -> str:
    """An error's message: the first failure inside an exception group (anyio's
    task groups wrap them), with its cause when the library wraps one."""
    while getattr(error, "exceptions", None):
        error = error.exceptions[0]  # type: ignore[attr-defined]
    message = str(error) or type(error).__name__
    cause = error.__cause__
    if cause is not None and str(cause) and str(cause) not in message:
        message = f"{message}: {cause}"
    return message


def fact(line: str) -> None:
    # Flushed at once: a run cut short by the harness keeps what was said.
    print(line, flush=True)


@dataclass
class Options:
    url: str | None
    era: str
    wait: float
    # The server's command line over stdio, else None.
    server: list[str] | None


def parse_options(program: str, argv: list[str]) -> Options:
    """The command line, or the usage on stderr and exit 2."""
    own, server = argv, []
    if "--" in argv:
        split = argv.index("--")
        own, server = argv[:split], argv[split + 1 :]
    values: dict[str, str] = {"--era": "2025", "--wait": "15"}
    stdio = False
    usable = len(own) > 0 and own[0] == "app"
    rest = own[1:]
    while usable and rest:
        flag = rest.pop(0)
        if flag == "--stdio":
            stdio = True
        elif flag in ("--url", "--era", "--wait") and rest:
            values[flag] = rest.pop(0)
        else:
            usable = False
    try:
        wait = float(values["--wait"])
    except ValueError:
        wait = 0
    url = values.get("--url")
    usable = (
        usable
        and ((url is not None and not stdio) or (stdio and len(server) > 0))
        and values["--era"] in ERAS
        and wait > 0
    )
    if not usable:
        print(
            f"usage: {program} app --url URL [--era 2025|2026-07-28] [--wait S]\n"
            f"       {program} app --stdio [--era …] [--wait S] -- COMMAND [ARG…]",
            file=sys.stderr,
        )
        sys.exit(2)
    return Options(
        None if stdio else url, values["--era"], wait, server if stdio else None
    )


@dataclass
class Notified:
    """What the library's hooks signal: the update, and each list's change."""

    updated: asyncio.Event = field(default_factory=asyncio.Event)
    changed: dict[str, asyncio.Event] = field(
        default_factory=lambda: {kind: asyncio.Event() for kind in CATALOG_KINDS}
    )


class Library(Protocol):
    """One library's calls; the steps around them are run_app's."""

    # The distribution the `library` line names, with its installed version.
    package: str

    async def connect(self) -> str:
        """Connects; the era it speaks (`2025` or `2026-07-28`)."""
        ...

    async def list(self, kind: str) -> list[str]:
        """A list's names (resources by URI)."""
        ...

    async def read(self, uri: str) -> str:
        """The text of the resource's first content."""
        ...

    # The subscribe call as the `subscribed` line says it, or None where the
    # library has none (`subscribe-api none`).
    subscribe_call: str | None

    async def subscribe(self) -> None: ...

    # The hook that gets the update, as `notification-received … via=` says it.
    update_via: str

    def changed_via(self, kind: str) -> str:
        """The hook that got a list's change."""
        ...

    async def use(self, kind: str, name: str) -> None:
        """Calls a new tool, gets a new prompt or reads a new resource."""
        ...

    async def close(self) -> None: ...


class _Run:
    """One run's state: its exit status, and what each list held at first."""

    def __init__(self, library: Library, notified: Notified) -> None:
        self.library = library
        self.notified = notified
        self.status = 0
        self.first: dict[str, list[str]] = {}

    async def step(self, name: str, run: Callable[[], Awaitable[None]]) -> bool:
        """Runs one step, printing `error <name> …` when it fails."""
        try:
            await run()
            return True
        except Exception as error:  # noqa: BLE001 - every failure is a fact line
            self.status = 1
            fact(f"error {name} {show(message_of(error))}")
            return False

    async def list(self, kind: str) -> list[str]:
        names = await self.library.list(kind)
        self.first.setdefault(kind, names)
        return names

    async def list_at_connect(self) -> None:
        # Tools and prompts before anything changes; resources in the
        # resource steps.
        for kind in CATALOG_KINDS[:2]:

            async def listed(kind: str = kind) -> None:
                fact(f"{kind}-listed {len(await self.list(kind))}")

            await self.step(f"list-{kind}", listed)

    async def resource_steps(self, wait: float) -> None:
        async def listed() -> None:
            found = URI in await self.list("resources")
            fact(f"resource-found {URI if found else 'none'}")

        async def read(label: str) -> None:
            fact(f"{label} {show(await self.library.read(URI))}")

        async def subscribed() -> None:
            await self.library.subscribe()
            fact(f"subscribed {self.library.subscribe_call}")

        await self.step("list", listed)
        await self.step("read", lambda: read("initial"))
        if self.library.subscribe_call is None:
            fact("subscribe-api none")
        else:
            await self.step("subscribe", subscribed)
        # A failed subscribe still waits: an update can come unasked.
        try:
            await asyncio.wait_for(self.notified.updated.wait(), wait)
            fact(f"notification-received {URI} via={self.library.update_via}")
        except asyncio.TimeoutError:
            fact(f"notification-received none after={wait:g}s")
        await self.step("reread", lambda: read("final"))

    async def catalog_steps(self) -> None:
        """Each list changed since connect (its hook ran, or runs within the
        grace), listed again, and whatever is new in it used."""
        deadline = asyncio.get_running_loop().time() + LIST_CHANGED_GRACE_SECONDS
        for kind in CATALOG_KINDS:
            left = max(0.0, deadline - asyncio.get_running_loop().time())
            try:
                await asyncio.wait_for(self.notified.changed[kind].wait(), left)
            except asyncio.TimeoutError:
                fact(f"{kind}-changed none")
                continue
            fact(f"{kind}-changed via={self.library.changed_via(kind)}")
            await self.step(f"relist-{kind}", lambda kind=kind: self.use_new(kind))

    async def use_new(self, kind: str) -> None:
        first = self.first.get(kind, [])
        for name in await self.library.list(kind):
            if name in first:
                continue
            fact(f"{kind}-new {show(name)}")

            async def used(name: str = name) -> None:
                await self.library.use(kind, name)
                fact(f"{kind}-used {show(name)}")

            await self.step(f"use-{kind}", used)


async def run_app(library: Library, notified: Notified, options: Options) -> int:
    """The app's steps in order, one fact line each; the exit status (1 when
    a step the library offers failed)."""
    fact(f"library {library.package}@{version(library.package)}")
    run = _Run(library, notified)

    async def connect() -> None:
        spoken = await library.connect()
        if spoken != options.era:
            raise RuntimeError(f"asked for {options.era}, spoke {spoken}")
        fact(f"connected {'stdio' if options.server else 'http'} {spoken}")

    if await run.step("connect", connect):
        await run.list_at_connect()
        await run.resource_steps(options.wait)
        await run.catalog_steps()
    await run.step("close", library.close)
    return run.status


def era_of(protocol_version: str | None) -> str:
    """The era a negotiated protocol version belongs to."""
    return "2026-07-28" if (protocol_version or "") >= "2026-07-28" else "2025"
