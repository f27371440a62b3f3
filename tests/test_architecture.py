"""The dependency direction is the architecture: check it on the source, not by convention."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SANS_IO_ADAPTERS = {"hexmcp.adapters.jsonrpc", "hexmcp.adapters.lines"}  # what the client may take from the server side
COMPOSITION_ROOT = ROOT / "adapters" / "cli.py"


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def sources(folder: str) -> list[Path]:
    return sorted((ROOT / folder).rglob("*.py"))


@pytest.mark.parametrize("path", sources("core"), ids=lambda p: str(p.relative_to(ROOT)))
def test_core_imports_neither_adapters_nor_tools(path: Path) -> None:
    forbidden = {m for m in imported_modules(path) if m.startswith(("hexmcp.adapters", "hexmcp.tools"))}
    assert not forbidden, f"{path.name} imports {sorted(forbidden)}"


@pytest.mark.parametrize("path", sources("tools"), ids=lambda p: str(p.relative_to(ROOT)))
def test_tools_do_not_import_adapters(path: Path) -> None:
    forbidden = {m for m in imported_modules(path) if m.startswith("hexmcp.adapters")}
    assert not forbidden, f"{path.name} imports {sorted(forbidden)}"


@pytest.mark.parametrize("path", [p for p in sources("adapters") if p != COMPOSITION_ROOT],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_only_the_composition_root_imports_tools(path: Path) -> None:
    forbidden = {m for m in imported_modules(path) if m.startswith("hexmcp.tools")}
    assert not forbidden, f"{path.name} imports {sorted(forbidden)}"


@pytest.mark.parametrize("path", sources("core"), ids=lambda p: str(p.relative_to(ROOT)))
def test_core_does_no_io(path: Path) -> None:
    io_modules = {"socket", "subprocess", "sys", "os", "select", "selectors", "http", "urllib", "starlette",
                  "uvicorn", "websockets"}
    used = {m.split(".")[0] for m in imported_modules(path)} & io_modules
    allowed = {"log.py": {"sys"}}  # logging configuration picks stderr, the only stream the core names
    assert used <= allowed.get(path.name, set()), f"{path.name} imports {sorted(used)}"


@pytest.mark.parametrize("path", sources("client"), ids=lambda p: str(p.relative_to(ROOT)))
def test_the_client_uses_only_the_sans_io_framing_of_the_adapters(path: Path) -> None:
    # The client turns the server's codecs around; it never runs server I/O code or tools.
    tree = ast.parse(path.read_text(), filename=str(path))
    imported = imported_modules(path) | {f"{node.module}.{alias.name}" for node in ast.walk(tree)
                                         if isinstance(node, ast.ImportFrom) and node.module == "hexmcp.adapters"
                                         for alias in node.names}
    imported.discard("hexmcp.adapters")  # its __init__ is a docstring; the names taken from it are checked
    forbidden = {m for m in imported if m.startswith("hexmcp.tools")
                 or (m.startswith("hexmcp.adapters") and m not in SANS_IO_ADAPTERS)}
    assert not forbidden, f"{path.name} imports {sorted(forbidden)}"


@pytest.mark.parametrize("path", sources("core") + sources("tools"), ids=lambda p: str(p.relative_to(ROOT)))
def test_core_and_tools_do_not_import_the_client(path: Path) -> None:
    forbidden = {m for m in imported_modules(path) if m.startswith("hexmcp.client")}
    assert not forbidden, f"{path.name} imports {sorted(forbidden)}"
