"""Names a package re-exports, loaded on first use: importing the package (finding the installed tool
packs imports each pack's package, for instance) must not import what the names live in."""

from __future__ import annotations

import importlib
from typing import Any, Callable, Mapping


def lazy_exports(package: str, homes: Mapping[str, str]) -> Callable[[str], Any]:
    """A module `__getattr__` for `package`: each name in `homes` imported from its module (absolute, or
    relative to the package) the first time it is asked for, then kept in the package's namespace."""
    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home, package), name)
        setattr(importlib.import_module(package), name, value)
        return value

    return __getattr__
