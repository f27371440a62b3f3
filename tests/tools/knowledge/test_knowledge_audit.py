"""`/docs/` reads in the audit trail of a real `hexmcp serve --docs` (issue 30: they left no line)."""

from __future__ import annotations

from pathlib import Path

import httpx
import orjson
import pytest

from hexmcp.adapters.audit.reader import BadLine, read_trail
from tests.support.docs_server import serve_docs

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]


def test_each_docs_read_gets_a_line_found_or_not(corpus_dir: Path, knowledge_cache: Path, embedder,
                                                 tmp_path: Path) -> None:
    trail = tmp_path / "audit" / "audit.log"
    with serve_docs(corpus_dir, knowledge_cache, "--audit-log", str(trail)) as base:
        assert httpx.get(base + "/docs/notes/weather.txt").status_code == 200
        assert httpx.get(base + "/docs/%2e%2e/secret.md").status_code == 404
        assert httpx.post(base + "/docs/notes/weather.txt").status_code == 405
    lines = [entry for entry in read_trail(trail) if not isinstance(entry, BadLine) and entry["kind"] == "docs"]
    found, missing, posted = lines
    size = len((corpus_dir / "notes/weather.txt").read_text().encode())
    assert (found["documentId"], found["status"], found["bytes"], found["outcome"]) == ("notes/weather.txt", 200,
                                                                                        size, "ok")
    assert (missing["documentId"], missing["status"], missing["outcome"]) == ("../secret.md", 404, "error")
    assert (posted["httpMethod"], posted["status"]) == ("POST", 405)
    assert all(line["client"].startswith("address:") and line["eventId"].startswith("ev-") for line in lines)
    assert b"127.0.0.1" not in trail.read_bytes() and orjson.loads(trail.read_bytes().splitlines()[0])
