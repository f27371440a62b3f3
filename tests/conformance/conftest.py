"""Fixtures of the property suite: `target` (parametrized by `--target`, or hexmcp's own transports)."""

from __future__ import annotations

from typing import Iterator

import pytest

from . import deadlines, targets


def configured(config: pytest.Config) -> list[str]:
    return list(config.getoption("--target") or [])


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "transports(*names): the hexmcp transports a property runs on by default")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """Each property runs under its deadline (deadlines.py); one that finds its target hung marks it, so
    the properties after it fail at once instead of each waiting out the hang again."""
    deadlines.PROPERTY.start(item.nodeid)
    try:
        outcome = yield
    finally:
        deadlines.PROPERTY.stop()
    error = outcome.excinfo[1] if outcome.excinfo else None
    target = getattr(item, "funcargs", {}).get("target")
    if isinstance(error, deadlines.ServerHung) and isinstance(target, targets.Target) and target.hung is None:
        target.hung = f"{str(error).splitlines()[0]} (in {item.name})"


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "target" in metafunc.fixturenames:
        marker = metafunc.definition.get_closest_marker("transports")
        names = configured(metafunc.config) or list(marker.args if marker else targets.STREAM_TARGETS)
        metafunc.parametrize("target", names, indirect=True, scope="session")


@pytest.fixture(scope="session")
def hexmcp_servers() -> Iterator[targets.HexmcpServers]:
    servers = targets.HexmcpServers()
    yield servers
    servers.stop()


@pytest.fixture(scope="session")
def target_pool(hexmcp_servers: targets.HexmcpServers) -> Iterator[dict[str, targets.Target]]:
    pool: dict[str, targets.Target] = {}
    yield pool
    for target in pool.values():
        target.close()


@pytest.fixture(scope="session")
def target(request: pytest.FixtureRequest, target_pool: dict[str, targets.Target],
           hexmcp_servers: targets.HexmcpServers) -> targets.Target:
    name = request.param
    if name not in target_pool:
        external = bool(configured(request.config))
        target_pool[name] = targets.from_spec(name) if external else hexmcp_servers.target(name)
    return target_pool[name]


@pytest.fixture(scope="session")
def hexmcp_only(request: pytest.FixtureRequest) -> None:
    if configured(request.config):
        pytest.skip("differential testing compares hexmcp's own transports; it does not run with --target")
