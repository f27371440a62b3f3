"""The dependency direction is the architecture: check it on the source, not by convention.

`tests/support/import_graph.py` reads every module's imports with `ast` (absolute and relative, at
module level and deferred inside functions); these tests hold the rules against that graph, and a
self-test feeds the checker a synthetic bad package, so a checker that stopped seeing would fail too.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .support import import_graph

ROOT = Path(__file__).resolve().parents[1]
RULES = {"core": {"wire", "adapters", "tools", "client", "app"}, "wire": {"adapters", "tools", "client", "app"},
         "tools": {"adapters", "client", "app"}, "adapters": {"tools", "client", "app"},
         "client": {"adapters", "tools", "app"}}
"""Layer -> layers it must not import. Only the composition root (app/) imports tools and adapters, and
nothing imports it. The wire (JSON-RPC framing, lines, SSE, request correlation, deadlines: sans-IO) is what
the server's adapters and the client share; it knows only the core's error codes. The client takes nothing
from the server's adapters."""
ALLOWED = {"hexmcp.tools.upstreams": {"client"}}
"""What a package may import although its layer's rule forbids it: the pack that serves another MCP server's
tools is that server's client (and the only pack that is)."""
SHARED_TOOLS = {"embedding", "ports", "cache_dir", "user_files", "environment", "flag_types"}
"""What several tool packs share under tools/; every other name there is a pack, which imports no other pack."""


@pytest.fixture(scope="module")
def imports() -> list[import_graph.Import]:
    return import_graph.graph(ROOT)


def _described(found: list[import_graph.Import]) -> list[str]:
    return [f"{imp.source} (line {imp.line}) imports {imp.target}" for imp in found]


def test_the_graph_sees_every_layer_and_relative_imports(imports) -> None:
    sources = {import_graph.layer_of(imp.source) for imp in imports}
    assert sources == {"core", "wire", "adapters", "tools", "client", "app"}
    # adapters/http/app.py imports its siblings relatively; the graph must name them in full.
    assert any(imp.source == "hexmcp.adapters.http.app" and imp.target.startswith("hexmcp.adapters.http.")
               for imp in imports)


def test_no_layer_imports_what_it_must_not(imports) -> None:
    found = import_graph.forbidden(imports, RULES, ALLOWED)
    assert _described(found) == []


def test_no_tool_pack_imports_another_and_shared_modules_import_no_pack(imports) -> None:
    # One pack reaches another only through the ports the composition hands it (hexmcp.tools.ports);
    # what several packs run (the encoder, its model cache, the inference pool) is shared.
    assert SHARED_TOOLS <= {import_graph.tools_unit(imp.source) for imp in imports}
    assert _described(import_graph.across_packs(imports, SHARED_TOOLS)) == []


def test_hexmcp_modules_import_one_another_without_cycles(imports) -> None:
    assert import_graph.cycles(imports) == []


@pytest.mark.parametrize("path", sorted([*(ROOT / "core").rglob("*.py"), *(ROOT / "wire").rglob("*.py")]),
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_the_core_and_the_wire_do_no_io(path: Path) -> None:
    io_modules = {"socket", "subprocess", "sys", "os", "select", "selectors", "http", "urllib", "starlette",
                  "uvicorn", "websockets", "aiohttp"}
    module = next(name for name, p in import_graph.modules(ROOT).items() if p == path)
    used = {imp.target.split(".")[0] for imp in import_graph.imports_of(module, path, {})} & io_modules
    allowed = {ROOT / "core" / "log.py": {"sys"}}  # logging configuration picks stderr, the only stream the core names
    assert used <= allowed.get(path, set()), f"{path.name} imports {sorted(used)}"


# --- the checker, checked ------------------------------------------------------------------------

BAD_PACKAGE = {
    "core/__init__.py": "",
    # A relative import from the core into the adapters, at module level.
    "core/leaky.py": "from ..adapters import wire\n",
    # A cycle that only a deferred import closes: circle_a -> circle_b at import, circle_b -> circle_a later.
    "core/circle_a.py": "from . import circle_b\n",
    "core/circle_b.py": "def later():\n    from .circle_a import something\n    return something\n",
    # Importing each other only for annotations: still a circle.
    "core/typed_a.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .typed_b import B\n",
    "core/typed_b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .typed_a import A\n",
    "adapters/__init__.py": "",
    "adapters/wire.py": "",
    "adapters/http/__init__.py": "",
    # Two levels up and into tools, from a subpackage; and an absolute import the old test already saw.
    "adapters/http/deep.py": "from ...tools.engine import run\nimport hexmcp.tools.engine\n",
    "tools/__init__.py": "",
    "tools/engine.py": "from hexmcp.adapters.wire import send\n",
}


def _graph_of(root: Path, files: dict[str, str]) -> list[import_graph.Import]:
    """The import graph of a synthetic package, its files written under `root` first."""
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return import_graph.graph(root)


@pytest.fixture
def bad_package(tmp_path: Path) -> list[import_graph.Import]:
    return _graph_of(tmp_path, BAD_PACKAGE)


def test_the_checker_catches_relative_imports_across_layers(bad_package) -> None:
    found = {(imp.source, imp.target) for imp in import_graph.forbidden(bad_package, RULES)}
    assert found == {
        ("hexmcp.core.leaky", "hexmcp.adapters.wire"),
        ("hexmcp.adapters.http.deep", "hexmcp.tools.engine"),
        ("hexmcp.tools.engine", "hexmcp.adapters.wire"),
    }


def test_an_allowance_covers_its_own_package_only(tmp_path: Path) -> None:
    files = {
        "tools/__init__.py": "",
        "tools/upstreams/__init__.py": "",
        "tools/upstreams/mount.py": "import hexmcp.client.mcp_client\n",
        "tools/upstreams_too.py": "import hexmcp.client.mcp_client\n",  # a name that only starts the same
        "tools/gateway.py": "from hexmcp.client import mcp_client\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    found = {imp.source for imp in import_graph.forbidden(import_graph.graph(tmp_path), RULES, ALLOWED)}
    assert found == {"hexmcp.tools.upstreams_too", "hexmcp.tools.gateway"}


def test_the_checker_catches_cycles_closed_by_deferred_or_typing_only_imports(bad_package) -> None:
    assert sorted(import_graph.cycles(bad_package)) == [["hexmcp.core.circle_a", "hexmcp.core.circle_b"],
                                                        ["hexmcp.core.typed_a", "hexmcp.core.typed_b"]]
    closing = [imp for imp in bad_package if imp.source in ("hexmcp.core.circle_b", "hexmcp.core.typed_a")
               and imp.target.startswith("hexmcp.")]
    assert {(imp.source, imp.deferred, imp.typing_only) for imp in closing} == {
        ("hexmcp.core.circle_b", True, False), ("hexmcp.core.typed_a", False, True)}


def test_the_checker_catches_one_tool_pack_importing_another(tmp_path: Path) -> None:
    files = {
        "tools/__init__.py": "",
        "tools/cache_dir.py": "",
        # A shared module importing a pack, relatively; and one doing it late, absolutely.
        "tools/ports.py": "from .alpha import service\n",
        "tools/embedding/__init__.py": "",
        "tools/embedding/pool.py": "def later():\n    import hexmcp.tools.beta.errors\n",
        "tools/alpha/__init__.py": "",
        "tools/alpha/own.py": "",
        # A pack importing another pack's module by `from package import module`; its own module and the
        # shared ones are allowed.
        "tools/alpha/service.py": ("from ..beta import errors\nfrom ..embedding import pool\n"
                                   "from hexmcp.tools.ports import Protocol\nfrom . import own\n"),
        "tools/beta/__init__.py": "",
        # Back, for annotations only: still an import of the other pack.
        "tools/beta/errors.py": ("from typing import TYPE_CHECKING\nfrom hexmcp.tools.cache_dir import default\n"
                                 "if TYPE_CHECKING:\n    from hexmcp.tools.alpha.service import Service\n"),
    }
    found = {(imp.source, imp.target) for imp in import_graph.across_packs(_graph_of(tmp_path, files), SHARED_TOOLS)}
    assert found == {
        ("hexmcp.tools.ports", "hexmcp.tools.alpha.service"),
        ("hexmcp.tools.embedding.pool", "hexmcp.tools.beta.errors"),
        ("hexmcp.tools.alpha.service", "hexmcp.tools.beta.errors"),
        ("hexmcp.tools.beta.errors", "hexmcp.tools.alpha.service"),
    }


def test_the_checker_sees_a_circle_through_a_packages_init(tmp_path: Path) -> None:
    """Importing a submodule of a sibling package runs that package's `__init__.py` first."""
    files = {
        "adapters/__init__.py": "",
        "adapters/fence.py": "from .http.admission import Ledger\n",
        "adapters/http/__init__.py": "from .runner import run\n",
        "adapters/http/admission.py": "",
        "adapters/http/runner.py": "from ..fence import Guard\n",
    }
    assert import_graph.cycles(_graph_of(tmp_path, files)) == [
        ["hexmcp.adapters.fence", "hexmcp.adapters.http", "hexmcp.adapters.http.runner"]]


def test_the_checker_sees_the_circle_the_core_once_had(tmp_path: Path) -> None:
    """server.py imported session.py inside a function; session.py imported server.py for annotations."""
    (tmp_path / "core").mkdir()
    (tmp_path / "core" / "__init__.py").write_text("")
    (tmp_path / "core" / "server.py").write_text("def open_session():\n    from .session import Session\n")
    (tmp_path / "core" / "session.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .server import McpServer\n")
    assert import_graph.cycles(import_graph.graph(tmp_path)) == [["hexmcp.core.server", "hexmcp.core.session"]]
