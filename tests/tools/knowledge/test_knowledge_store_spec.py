"""A bad `--vector-store` stops start-up (exit 2, one line) instead of failing every later search; a
Qdrant server that is not up is not a start-up error: /health names it and a search says so."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from hexmcp.core.startup import ExitCode
from hexmcp.tools.knowledge.vectors import VectorStoreError, VectorStoreErrorCode, check_vector_store_spec
from hexmcp.tools.knowledge.vectors.collection import DEFAULT_COLLECTION
from hexmcp.tools.knowledge.vectors.factory import StoreKind, parse_vector_store_spec
from tests.support.net import free_port

pytestmark = pytest.mark.timeout(120)

KNOWN_PREFIXES = ("memory", "qdrant+path:", "qdrant-edge+path:", "qdrant+http://", "qdrant+https://")


def _hexmcp(command: str, *args: str, cache: Path) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "hexmcp.app.cli", command, "--no-classifier", *args],
                            env={**os.environ, "HEXMCP_CACHE_DIR": str(cache)}, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _bad_specs(tmp_path: Path) -> dict[str, str]:
    regular_file = tmp_path / "a-file"
    regular_file.write_text("not a folder")
    return {"qdrant+ftp://x": "expected one of", "nonsense": "expected one of", "qdrant+path:": "needs a folder",
            f"qdrant+path:{regular_file}/qdrant": "is not a folder", "qdrant+http://:6333": "names no host",
            "qdrant+http://localhost:99999": "port", "qdrant-edge+path:": "needs a folder",
            f"qdrant-edge+path:{regular_file}/edge": "is not a folder"}


@pytest.mark.parametrize("command", ["serve", "stdio"])
def test_a_bad_spec_exits_2_with_one_line_before_serving(command: str, corpus_dir: Path, tmp_path: Path) -> None:
    for spec, reason in _bad_specs(tmp_path).items():
        extra = ["--port", str(free_port())] if command == "serve" else []
        process = _hexmcp(command, "--docs", str(corpus_dir), "--vector-store", spec, *extra, cache=tmp_path / "cache")
        stdout, stderr = process.communicate(timeout=60)
        assert process.returncode == ExitCode.USAGE, (spec, stderr)
        assert stdout == ""  # nothing served; for stdio, nothing but protocol ever reaches stdout
        lines = stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"hexmcp {command}: unusable vector store"), (spec, stderr)
        assert reason in lines[0] and spec in lines[0]


@given(st.text(max_size=40).filter(lambda text: not text.strip().startswith(KNOWN_PREFIXES)))
def test_anything_but_a_known_form_is_a_bad_spec(text: str) -> None:
    with pytest.raises(VectorStoreError) as raised:
        parse_vector_store_spec(text)
    assert raised.value.code is VectorStoreErrorCode.BAD_SPEC


@given(host=st.from_regex(r"[a-z][a-z0-9-]{0,20}", fullmatch=True), port=st.integers(1, 65535),
       collection=st.one_of(st.none(), st.from_regex(r"[A-Za-z0-9_]{1,20}", fullmatch=True)))
def test_a_server_spec_parses_to_its_url_and_collection(host: str, port: int, collection: str | None) -> None:
    query = "" if collection is None else f"?collection={collection}"
    parsed = parse_vector_store_spec(f"qdrant+http://{host}:{port}{query}")
    assert parsed.kind is StoreKind.QDRANT_SERVER and parsed.location == f"http://{host}:{port}"
    assert parsed.collection == (collection or DEFAULT_COLLECTION)


@pytest.mark.parametrize(("prefix", "kind"), [("qdrant+path:", StoreKind.QDRANT_LOCAL),
                                              ("qdrant-edge+path:", StoreKind.QDRANT_EDGE)])
def test_a_local_folder_that_can_be_made_passes_and_is_not_made(tmp_path: Path, prefix: str, kind: StoreKind) -> None:
    folder = tmp_path / "not" / "yet" / "there"
    assert check_vector_store_spec(f"{prefix}{folder}").kind is kind
    assert not (tmp_path / "not").exists()


@pytest.mark.slow
@pytest.mark.anyio
async def test_an_unreachable_server_shows_in_health_and_searches_fail_cleanly(
        corpus_dir: Path, knowledge_cache: Path, embedder) -> None:
    unreachable = f"qdrant+http://127.0.0.1:{free_port()}"  # nothing listens there
    port = free_port()
    process = _hexmcp("serve", "--docs", str(corpus_dir), "--vector-store", unreachable, "--port", str(port),
                      "--log-level", "warning", cache=knowledge_cache)
    base = f"http://127.0.0.1:{port}"
    try:
        knowledge: dict = {}
        deadline = time.monotonic() + 90
        while "vector_store_error" not in knowledge:
            assert process.poll() is None and time.monotonic() < deadline, "the server exited or never reported"
            try:
                knowledge = httpx.get(base + "/health").json().get("knowledge", {})
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        assert "127.0.0.1" in knowledge["vector_store_error"] and knowledge["ready"] is False
        async with streamable_http_client(base + "/mcp") as streams:
            async with ClientSession(streams[0], streams[1]) as session:
                await session.initialize()
                result = await session.call_tool("search", {"query": "backups"})
        assert result.is_error and "unavailable" in result.content[0].text
        time.sleep(1)
        assert process.poll() is None  # still serving: the server may come up later
    finally:
        process.terminate()
        process.wait(timeout=20)
