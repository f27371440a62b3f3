"""Optional features and the pip extra that brings each: a feature whose extra is missing says so in one
line with the command that installs it, instead of a traceback."""

from __future__ import annotations

import importlib.util

from hexmcp.core.pack import PackProblem
from hexmcp.tools.environment import CLIENT_MODULES, pip_command

__all__ = ["CLIENT_MODULES", "extra_problem", "missing", "require"]


def missing(modules: tuple[str, ...]) -> str | None:
    """The first of `modules` (top-level names) that is not installed, or None."""
    for name in modules:
        try:
            found = importlib.util.find_spec(name)
        except ModuleNotFoundError:  # a dotted name whose parent package is missing
            found = None
        if found is None:
            return name
    return None


def extra_problem(feature: str, extra: str, module: str) -> PackProblem:
    return PackProblem(f"{feature} requires the '{extra}' extra (no module named {module}); "
                       f"fix: {pip_command()} install 'hexmcp[{extra}]'")


def require(feature: str, extra: str, modules: tuple[str, ...]) -> None:
    """Raise the one-line PackProblem when one of `modules` is missing."""
    absent = missing(modules)
    if absent is not None:
        raise extra_problem(feature, extra, absent)
