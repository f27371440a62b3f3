"""One composition for every way hexmcp serves: the server, the packs the settings enable, and what the
adapters need of them (start-up hooks, readiness, /health, document routes, metrics, the audit's versions).

`hexmcp serve`, `hexmcp stdio` and `hexmcp.Server.run()` all compose here, so a pack, a user's tools and
the built-in ones get the same treatment on every transport.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import attrs
import structlog

from hexmcp.core import McpServer
from hexmcp.core.pack import BackgroundTask, DocumentLookup, Pack, PackProblem, Setup
from hexmcp.core.startup import StartupFailure

from .extras import extra_problem, missing

log = structlog.get_logger("hexmcp.app.compose")


@attrs.define
class Composition:
    server: McpServer
    packs: list[Pack]
    command: str

    def start_up_hooks(self) -> list[BackgroundTask]:
        """Each pack's start-up work (a failure it explains becomes one line and a StartupFailure), then
        its background work."""
        hooks: list[BackgroundTask] = []
        for pack in self.packs:
            hooks.append(self._starting(pack))
            hooks.extend(pack.background())
        return hooks

    def _starting(self, pack: Pack) -> BackgroundTask:
        async def start() -> None:
            try:
                await pack.start()
            except Exception as error:
                problem = error if isinstance(error, PackProblem) else pack.explain(error)
                if problem is None:
                    raise
                say(self.command, problem.line)
                raise StartupFailure(problem.line) from error

        return start

    def ready(self) -> bool:
        return all(pack.ready() for pack in self.packs)

    def health(self) -> dict[str, Any]:
        """The top-level fields of a pack that asks for them (the classifier's: the routers' contract), one
        block per other pack, `warm`: every pack's start-up work is over, and `background`: the work running
        now (indexing, concept extraction) with its progress, for a router deciding how much to send."""
        details: dict[str, Any] = {}
        background: list[Any] = []
        for pack in self.packs:
            report = pack.health()
            if report is None:
                continue
            if "background" in report:
                background.append(report["background"])
            if pack.health_top_level:
                details.update(report)
            else:
                details[pack.name] = dict(report)
        details["warm"] = all(pack.warm() for pack in self.packs)
        details["background"] = background
        return details

    def documents(self) -> dict[str, DocumentLookup]:
        routes: dict[str, DocumentLookup] = {}
        for pack in self.packs:
            routes.update(pack.documents())
        return routes

    def versions(self) -> dict[str, Any]:
        found: dict[str, Any] = {}
        for pack in self.packs:
            found.update(pack.versions())
        return found

    def close(self) -> None:
        """Every answer is out: stop the packs' workers before the interpreter finalises."""
        for pack in reversed(self.packs):
            pack.close()


def compose(server: McpServer, settings: argparse.Namespace, packs: list[Pack], *, command: str,
            http_base: str | None = None) -> Composition:
    """Register every enabled pack whose needed ports some earlier pack offers, in order; a pack's
    PackProblem (a bad setting, a missing extra) stops start-up before anything is served."""
    offered: dict[type, Any] = {}
    composed: list[Pack] = []
    for pack in packs:
        if not pack.enabled(settings) or any(port not in offered for port in pack.needs) or \
                not _installed(pack, settings):
            continue
        ports = {port: offered[port] for port in (*pack.needs, *pack.uses) if port in offered}
        setup = Setup(server=server, settings=settings, ports=ports, transport="stdio" if command == "stdio" else "http",
                      http_base=http_base)
        _register(pack, setup)
        offered.update(pack.ports())
        composed.append(pack)
    return Composition(server=server, packs=composed, command=command)


def _installed(pack: Pack, settings: argparse.Namespace) -> bool:
    """Whether its extra is installed. If not: a pack the settings ask for stops start-up (PackProblem);
    one they merely leave on is skipped, with one line saying how to install it."""
    absent = missing(pack.extra_modules)
    if absent is None:
        return True
    problem = extra_problem(f"the {pack.name} pack", pack.extra or pack.name, absent)
    if pack.requested(settings):
        raise problem
    log.warning(f"{pack.name} tools off: {problem.line}")
    return False


def _register(pack: Pack, setup: Setup) -> None:
    try:
        pack.register(setup)
    except ModuleNotFoundError as error:
        if pack.extra is None:
            raise
        raise extra_problem(f"the {pack.name} pack", pack.extra, error.name or "a module") from error
    except PackProblem:
        raise
    except Exception as error:
        problem = pack.explain(error)
        if problem is None:
            raise
        raise problem from error


def say(command: str, line: str) -> None:
    print(f"hexmcp {command}: {line}", file=sys.stderr, flush=True)

