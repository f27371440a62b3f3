"""Maps the top-level folders onto the `hexmcp` package.

The repository keeps `core/`, `wire/`, `adapters/`, `tools/`, `client/` and `app/` at the top level (the product's
layout), while installed code imports them as `hexmcp.core`, `hexmcp.wire`, `hexmcp.adapters`, `hexmcp.tools`,
`hexmcp.client` and `hexmcp.app`; `hexmcp/__init__.py` is the public API (`from hexmcp import Server`). Subpackages are
discovered here so that adding one never needs an edit to pyproject.toml.
"""

from setuptools import find_packages, setup

TOP_LEVEL = ("core", "wire", "adapters", "tools", "client", "app")
# The knowledge base's default corpus: the ADRs ship from where they live as package data of
# `hexmcp.docs` (pyproject's package-data table lists them; it overrides any package_data given
# here), so there is no copy to drift; the README ships anyway as the distribution's description.
DOCS = "docs"

setup(
    packages=["hexmcp", *(f"hexmcp.{name}" for name in find_packages(include=[f"{top}*" for top in TOP_LEVEL])),
              f"hexmcp.{DOCS}"],
    package_dir={"hexmcp": "hexmcp", **{f"hexmcp.{top}": top for top in (*TOP_LEVEL, DOCS)}},
)
