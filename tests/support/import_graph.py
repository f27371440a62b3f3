"""hexmcp's import graph, read from the source with `ast`: what every module imports, and the cycles.

Every `import` and `from ... import` counts, wherever it sits: at module level, or deferred inside a
function (it still runs, just later, and still ties the two modules together). Relative imports are
resolved against the importing module's package, so `from ..adapters import x` in `core/` is seen for
what it is. `from pkg import name` counts as importing `pkg.name` when that is a module, else `pkg`.

Importing `a.b.c` also runs the `__init__.py` of every package on the way (`a.b`), unless that package
is one the importing module sits in (it is already being imported): the graph adds those edges, which
is how a module that imports a sibling package's submodule can close a circle through that package's
`__init__.py`.

Imports under `if TYPE_CHECKING:` count too (marked `typing_only`). They never run, so they cannot
deadlock an import; but two modules that need each other's types are one idea split in two, or need a
protocol between them, which is the circle the core once hid (server.py and session.py, one importing
the other late and the other importing back for annotations).
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Iterator

import attrs

PACKAGE = "hexmcp"
TOP_LEVEL = ("core", "wire", "adapters", "tools", "client", "app")  # setup.py maps each folder onto hexmcp.<folder>


@attrs.frozen(kw_only=True)
class Import:
    source: str
    target: str
    line: int
    typing_only: bool
    deferred: bool


def modules(root: Path, top_level: tuple[str, ...] = TOP_LEVEL) -> dict[str, Path]:
    """Every hexmcp module under `root`, by dotted name (a package by its `__init__.py`)."""
    found: dict[str, Path] = {}
    for folder in top_level:
        for path in sorted((root / folder).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join([PACKAGE, *parts])] = path
    return found


def _package_of(module: str, path: Path) -> str:
    return module if path.name == "__init__.py" else module.rpartition(".")[0]


def _resolve(module: str, path: Path, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    base = _package_of(module, path).split(".")
    if node.level > 1:
        base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _walk(node: ast.AST, typing_only: bool, deferred: bool) -> Iterator[tuple[ast.AST, bool, bool]]:
    for child in ast.iter_child_nodes(node):
        child_typing = typing_only or (isinstance(node, ast.If) and _is_type_checking(node.test)
                                       and child in node.body)
        child_deferred = deferred or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        yield child, child_typing, child_deferred
        yield from _walk(child, child_typing, child_deferred)


def imports_of(module: str, path: Path, known: dict[str, Path]) -> list[Import]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found: list[Import] = []
    for node, typing_only, deferred in _walk(tree, False, False):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(module, path, node)
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                targets.append(submodule if submodule in known else base)
        for target in dict.fromkeys(targets):
            found.append(Import(source=module, target=target, line=getattr(node, "lineno", 0),
                                typing_only=typing_only, deferred=deferred))
    return found


def graph(root: Path, top_level: tuple[str, ...] = TOP_LEVEL) -> list[Import]:
    """Every import of every hexmcp module under `root` (targets outside hexmcp included)."""
    known = modules(root, top_level)
    return [imp for module, path in known.items() for imp in imports_of(module, path, known)]


def layer_of(module: str) -> str | None:
    """`core`, `wire`, `adapters`, `tools`, `client` or `app` for a hexmcp module, else None."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == PACKAGE else None


def tools_unit(module: str) -> str | None:
    """The name directly under `hexmcp.tools` a module belongs to (`knowledge` for
    `hexmcp.tools.knowledge.vectors.port`, `ports` for `hexmcp.tools.ports`), else None."""
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[:2] == [PACKAGE, "tools"] else None


def across_packs(imports: list[Import], shared: set[str]) -> list[Import]:
    """Imports from one tool pack into another, and from a shared tools module into any pack. Every name
    directly under `hexmcp.tools` is a pack unless `shared` lists it; a pack may import itself and the
    shared modules, a shared module only the shared modules."""
    found = []
    for imp in imports:
        source, target = tools_unit(imp.source), tools_unit(imp.target)
        if source is not None and target is not None and target not in shared and target != source:
            found.append(imp)
    return found


def cycles(imports: list[Import]) -> list[list[str]]:
    """Each strongly connected group of hexmcp modules that import one another, however (Tarjan)."""
    edges: dict[str, set[str]] = {}
    for imp in imports:
        if layer_of(imp.target) is None:
            continue
        for reached in (imp.target, *_packages_run_by(imp.source, imp.target)):
            if reached != imp.source:
                edges.setdefault(imp.source, set()).add(reached)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return groups


def _packages_run_by(source: str, target: str) -> list[str]:
    """The packages whose `__init__` importing `target` from `source` may run: `target`'s ancestors below
    `hexmcp` that are not `source`'s own (those are mid-import already)."""
    parts = target.split(".")
    ancestors = [".".join(parts[:end]) for end in range(2, len(parts))]
    return [package for package in ancestors if not (source == package or source.startswith(package + "."))]


def forbidden(imports: list[Import], rules: dict[str, set[str]],
              allowed: dict[str, set[str]] | None = None) -> list[Import]:
    """Imports from a layer into a layer its rule forbids (`{"core": {"adapters", "tools"}, ...}`), but for
    what `allowed` grants a package (`{"hexmcp.tools.upstreams": {"client"}}`: it and its modules)."""
    return [imp for imp in imports if layer_of(imp.target) in rules.get(layer_of(imp.source) or "", set())
            and layer_of(imp.target) not in _granted(imp.source, allowed or {})]


def _granted(module: str, allowed: dict[str, set[str]]) -> set[str]:
    return {layer for package, layers in allowed.items()
            if module == package or module.startswith(package + ".") for layer in layers}
