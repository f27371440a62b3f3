"""A tool pack: one source of tools, resources and prompts, and everything the server needs to run it.

Every pack, hexmcp's own and a third party's, is a subclass of `Pack` named in the `hexmcp.packs`
entry-point group of its distribution:

    [project.entry-points."hexmcp.packs"]
    weather = "weather_pack:WeatherPack"

`hexmcp serve`, `hexmcp stdio` and `hexmcp.run()` compose the packs that are installed and enabled in
one loop: each adds its flags (which are config-file keys and `HEXMCP_<FLAG>` variables too), says
whether the settings enable it, registers on the server, offers ports to the packs after it, runs its
start-up work once serving has begun, and reports readiness, warmth, health and metrics. Packs never
import one another: a pack that needs another's work names a port (a Protocol) in `needs`, and the one
that does the work returns an implementation from `ports()`.

This module is the whole contract; it holds no I/O.
"""

from __future__ import annotations

import argparse
from typing import Any, Awaitable, Callable, ClassVar, Iterable, Mapping

import attrs

from .registrar import Registrar
from .server import McpServer
from .startup import ExitCode

ENTRY_POINT_GROUP = "hexmcp.packs"

BackgroundTask = Callable[[], Awaitable[None]]
"""Long-lived work a pack runs beside the server (a file watcher, a periodic refresh)."""
DocumentLookup = Callable[[str], Awaitable["tuple[str, str] | None"]]
"""A document's text and media type by id, or None: what a read-only HTTP document route serves."""


class PackProblem(Exception):
    """Something a pack explains in one line an operator can act on (what is wrong; the fix), and the
    exit code the command ends with: a bad setting or file is `ExitCode.USAGE`."""

    def __init__(self, line: str, exit_code: int = ExitCode.USAGE) -> None:
        super().__init__(line)
        self.line = line
        self.exit_code = int(exit_code)


@attrs.frozen(kw_only=True)
class Sample:
    labels: tuple[str, ...] = ()
    value: float = 0.0
    count: float | None = None  # summaries: how many observations `value` sums


@attrs.frozen(kw_only=True)
class MetricFamily:
    """One metric a pack keeps, read when it is scraped (the telemetry adapter turns it into Prometheus's)."""

    name: str
    help: str
    kind: str  # "counter", "gauge" or "summary"
    label_names: tuple[str, ...] = ()
    samples: tuple[Sample, ...] = ()
    unit: str = ""


@attrs.frozen(kw_only=True)
class Setup:
    """What a pack is handed when it registers."""

    server: McpServer
    settings: argparse.Namespace
    ports: Mapping[type, Any]
    """Implementations other packs offer, by port: only those named in `needs` or `uses`."""
    transport: str  # "http" or "stdio": where documents get their URLs, say
    http_base: str | None = None  # "http://HOST:PORT" when serving HTTP

    @property
    def registrar(self) -> Registrar:
        """The decorators a user's `hexmcp.Server` has (`@registrar.tool()`...), on this server."""
        return Registrar(self.server)


class Pack:
    """The base every pack subclasses; each hook's default is what a pack without it needs."""

    name: ClassVar[str]
    """Its name: the heading of its flags in `--help`, its block in /health, how errors name it."""
    extra: ClassVar[str | None] = None
    """The `pip install 'hexmcp[EXTRA]'` extra that brings its third-party dependencies, if any."""
    extra_modules: ClassVar[tuple[str, ...]] = ()
    """The top-level modules that extra installs: when one is missing, a pack the settings merely leave on
    is skipped with one line saying how to install it, and one they ask for stops start-up with that line."""
    offers: ClassVar[tuple[type, ...]] = ()
    """Ports it offers to other packs: `ports()` returns an implementation of each."""
    needs: ClassVar[tuple[type, ...]] = ()
    """Ports it cannot work without: without a pack offering each, it is not composed."""
    uses: ClassVar[tuple[type, ...]] = ()
    """Ports it uses when some pack offers them."""
    health_top_level: ClassVar[bool] = False
    """Its /health fields go at the top level instead of under its name (the classifier's: routers read them)."""
    order: ClassVar[int] = 100
    """Where it stands among packs with no port between them (lower first): tools/list order."""

    def add_flags(self, flags: argparse._ArgumentGroup) -> None:
        """Add its flags (serve and stdio) to `flags`, the argument group under its name."""

    def enabled(self, settings: argparse.Namespace) -> bool:
        """Whether these settings compose it (a `--no-NAME` switch, say)."""
        return True

    def requested(self, settings: argparse.Namespace) -> bool:
        """Whether these settings ask for it explicitly (a `--docs` path, say), beyond leaving it on."""
        return False

    def register(self, setup: Setup) -> None:
        """Check its settings and register its tools, resources and prompts on `setup.server`. A bad
        setting raises PackProblem here, before anything is served."""

    def ports(self) -> Mapping[type, Any]:
        """Implementations of ports it offers to the packs composed after it (called after `register`)."""
        return {}

    async def start(self) -> None:
        """Its start-up work (loading a model, building an index), run once serving has begun. A failure
        it can explain raises PackProblem: the server reports it and exits 1."""

    def background(self) -> list[BackgroundTask]:
        """Work it runs beside the server for as long as it serves."""
        return []

    def ready(self) -> bool:
        """Whether it can answer now: /health says `starting` (503) until every pack is ready."""
        return True

    def warm(self) -> bool:
        """Whether its start-up work is over (/health's `warm`): measure the server only after it."""
        return True

    def health(self) -> Mapping[str, Any] | None:
        """Its block in /health (under its name), or None."""
        return None

    def documents(self) -> Mapping[str, DocumentLookup]:
        """Read-only document routes it serves over HTTP, by path prefix (`/docs/`)."""
        return {}

    def metrics(self) -> Iterable[MetricFamily]:
        """Its metrics, read at each scrape from counters it keeps (no cost per call)."""
        return ()

    def versions(self) -> Mapping[str, Any]:
        """What the audit trail records of it (a model's digest, an index version)."""
        return {}

    def explain(self, error: Exception) -> PackProblem | None:
        """An error its own code raised on purpose, as the one line an operator reads; None for a bug."""
        return None

    def close(self) -> None:
        """Release what it holds (threads, files) once every answer is out."""
