"""Maps the top-level folders onto the `hexmcp` package, and compiles the per-request modules when it can.

The repository keeps `core/`, `wire/`, `adapters/`, `tools/`, `client/` and `app/` at the top level (the product's
layout), while installed code imports them as `hexmcp.core`, `hexmcp.wire`, `hexmcp.adapters`, `hexmcp.tools`,
`hexmcp.client` and `hexmcp.app`; `hexmcp/__init__.py` is the public API (`from hexmcp import Server`). Subpackages are
discovered here so that adding one never needs an edit to pyproject.toml.

The modules every request runs through (`COMPILED`) are compiled to C extensions with mypyc when the build has a C
compiler (ADR 0014); the .py files ship beside them and are what runs wherever the compiled ones are not there.
`HEXMCP_COMPILE=0` builds pure Python. A build that cannot compile (no compiler, no Python headers, mypyc refusing
a module) says so in one line and installs pure Python: compiling is never a reason for an install to fail.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from setuptools import find_packages, setup
from setuptools.command.build_ext import build_ext

TOP_LEVEL = ("core", "wire", "adapters", "tools", "client", "app")
# The knowledge base's default corpus: the ADRs ship from where they live as package data of
# `hexmcp.docs` (pyproject's package-data table lists them; it overrides any package_data given
# here), so there is no copy to drift; the README ships anyway as the distribution's description.
DOCS = "docs"

# The path of a tools/call over HTTP (head to answer, uvicorn's hooks aside) and over stdio, by module. Not the
# uvicorn fence: a compiled class deriving from uvicorn's protocol reads uvicorn's attributes more slowly than
# the interpreter does. Not core/params.py: mypyc replaces the annotations of the attrs classes a compiled
# module defines, and cattrs structures requests by those annotations. Not adapters/rpc_connection.py: its tests
# replace `receive` on an instance, which a compiled class does not allow.
COMPILED = (
    "core/handlers.py", "core/json_encoder.py", "core/routing.py", "core/session.py", "core/tools.py",
    "wire/deadlines.py", "wire/jsonrpc.py", "wire/lines.py",
    "adapters/rpc_layer.py", "adapters/slots.py", "adapters/stdio/transport.py",
    "adapters/http/app.py", "adapters/http/body.py", "adapters/http/coalesce.py", "adapters/http/dispatch.py",
    "adapters/http/endpoint.py", "adapters/http/guard.py", "adapters/http/handshake_era.py",
    "adapters/http/head_limit.py", "adapters/http/headers.py", "adapters/http/json_body.py",
    "adapters/http/limits.py", "adapters/http/request.py", "adapters/http/request_headers.py",
    "adapters/http/sessions.py", "adapters/http/sse.py",
)
SWITCH_ENV = "HEXMCP_COMPILE"
ROOT = Path(__file__).resolve().parent
SOURCE_TREE = Path("build") / "mypyc-src"  # relative: mypyc names its generated C files after these paths


def _say(message: str) -> None:
    print(f"hexmcp: {message}", file=sys.stderr)


def _source_tree() -> list[str]:
    """The compiled modules under their installed names (`hexmcp/core/session.py`): mypy names a module after
    its path, and the repository's layout has no `hexmcp/` above `core/`. A copy, so nothing links into the tree."""
    target = ROOT / SOURCE_TREE
    shutil.rmtree(target, ignore_errors=True)
    package = target / "hexmcp"
    shutil.copytree(ROOT / "hexmcp", package, ignore=shutil.ignore_patterns("*.so", "__pycache__"))
    for top in TOP_LEVEL:
        shutil.copytree(ROOT / top, package / top, ignore=shutil.ignore_patterns("*.so", "__pycache__", "*.pyd"))
    return [str(SOURCE_TREE / "hexmcp" / path) for path in COMPILED]


def _pure_python(reason: str) -> list:
    """No extensions, and none left from an earlier editable install: in the tree they would still be imported."""
    _say(f"{reason}: pure Python")
    for top in ("hexmcp", *TOP_LEVEL):  # a module compiled by an earlier build, even one no longer in COMPILED
        for built in (ROOT / top).rglob("*.so"):
            if built.with_name(built.name.split(".")[0] + ".py").exists():
                built.unlink()
    for built in (ROOT / "hexmcp").glob("_compiled__mypyc.*.so"):
        built.unlink()
    return []


def _compiled_extensions() -> list:
    if not {"build_ext", "bdist_wheel", "editable_wheel", "develop", "install"} & set(sys.argv):
        return []  # metadata and sdist steps compile nothing
    if os.environ.get(SWITCH_ENV, "1") == "0":
        return _pure_python(f"{SWITCH_ENV}=0")
    try:
        from mypyc.build import mypycify
    except ImportError:
        return _pure_python("mypyc is not installed in the build environment")
    config = ROOT / SOURCE_TREE.parent / "mypyc.ini"
    previous = os.getcwd()
    os.chdir(ROOT)
    try:
        paths = _source_tree()
        # Only the compiled modules are checked; what they import is read for its types, not checked.
        config.write_text("[mypy]\nfollow_imports = silent\nignore_missing_imports = True\n")
        return mypycify(["--config-file", str(config), *paths], opt_level="3", group_name="hexmcp._compiled")
    except (SystemExit, Exception) as refused:  # mypy's type errors end in SystemExit
        return _pure_python(f"mypyc could not compile the per-request modules ({refused!r})")
    finally:
        os.chdir(previous)


class OptionalBuildExt(build_ext):
    """Compiles what it can; an extension that does not build leaves the install pure Python."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as failed:  # no compiler, no Python.h
            self._give_up(failed)

    def _give_up(self, failed: Exception) -> None:
        _say(f"the compiled modules did not build ({failed}): pure Python")
        # One missing piece of the group would leave the others unable to load: drop all of them.
        for ext in self.extensions:
            built = Path(self.get_ext_fullpath(ext.name))
            built.unlink(missing_ok=True)
        self.extensions = []


setup(
    packages=["hexmcp", *(f"hexmcp.{name}" for name in find_packages(include=[f"{top}*" for top in TOP_LEVEL])),
              f"hexmcp.{DOCS}"],
    package_dir={"hexmcp": "hexmcp", **{f"hexmcp.{top}": top for top in (*TOP_LEVEL, DOCS)}},
    ext_modules=_compiled_extensions(),
    cmdclass={"build_ext": OptionalBuildExt},
)
