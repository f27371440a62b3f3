"""Maps the top-level folders onto the `hexmcp` namespace package.

The repository keeps `core/`, `adapters/` and `tools/` at the top level (the product's layout), while
installed code imports them as `hexmcp.core`, `hexmcp.adapters` and `hexmcp.tools`. Subpackages are
discovered here so that adding one never needs an edit to pyproject.toml.
"""

from setuptools import find_packages, setup

TOP_LEVEL = ("core", "adapters", "tools")

setup(
    packages=[f"hexmcp.{name}" for name in find_packages(include=[f"{top}*" for top in TOP_LEVEL])],
    package_dir={f"hexmcp.{top}": top for top in TOP_LEVEL},
)
