"""Hostile POST bodies in an honest session: each gets a JSON-RPC answer or a clear refusal, never a 5xx;
giant batches are refused instead of run; non-JSON Content-Types are refused with 415 on both dialects.
After each example the server lives and an honest request succeeds."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from .budget import examples
from .hostile_bodies import giant_batch, hostile_bodies
from .judge import is_rpc_error, leaked
from .live import BATCH_VERSION, JSON_ACCEPT, TOKEN, LiveServer

pytestmark = pytest.mark.slow  # a live `hexmcp serve` subprocess

MAX_BATCH_RUN = 1000
"""More entries than this in one batch must not all run (issue 30: batch size capped); the cap a fix
picks may be lower, never higher."""


def post(live: LiveServer, body: bytes, *, session_id: str | None = None, version: str = "2025-06-18",
         content_type: str = "application/json", path: str = "/mcp") -> httpx.Response:
    return live.http.post(path, content=body, headers={**live.session_headers(session_id, version),
                                                       "content-type": content_type})


def assert_rpc_answer(answer: httpx.Response, what: str) -> None:
    """200/202 with JSON-RPC messages, or a 4xx with a JSON-RPC error; nothing else."""
    marker = leaked(answer.content)
    assert marker is None, f"{what}: {marker!r} in the body: {answer.text[:400]}"
    if answer.status_code == 202:
        assert not answer.content.strip(), f"{what}: 202 with a body {answer.text[:200]}"
        return
    assert answer.status_code == 200 or 400 <= answer.status_code < 500, \
        f"{what}: answered {answer.status_code}: {answer.text[:400]}"
    message: Any = json.loads(answer.content)
    messages = message if isinstance(message, list) else [message]
    assert messages, f"{what}: an empty answer"
    for one in messages:
        assert isinstance(one, dict) and one.get("jsonrpc") == "2.0" and "id" in one, f"{what}: not a response: {one}"
        assert ("result" in one) != ("error" in one), f"{what}: result and error both or neither: {one}"
        if "error" in one:
            assert is_rpc_error(one), f"{what}: malformed error object: {one}"
    if answer.status_code >= 400:
        assert all("error" in one for one in messages), f"{what}: a {answer.status_code} carrying a result"


@examples(80)
@given(body=hostile_bodies())
def test_a_hostile_body_gets_a_json_rpc_answer_or_a_clear_refusal(live: LiveServer, body: bytes) -> None:
    what = f"body {body[:120]!r} ({len(body)} bytes)"
    assert_rpc_answer(post(live, body), what)
    live.assert_alive(what)


@pytest.fixture(scope="module")
def batch_session(live: LiveServer) -> str:
    """A session of the last protocol version that allows JSON-RPC batches."""
    return live.open_session(BATCH_VERSION)


@examples(15)
@given(body=hostile_bodies())
def test_a_hostile_body_in_a_batching_session_is_answered_sanely(live: LiveServer, batch_session: str,
                                                                 body: bytes) -> None:
    what = f"body {body[:120]!r} in a {BATCH_VERSION} session"
    assert_rpc_answer(post(live, body, session_id=batch_session, version=BATCH_VERSION), what)
    live.assert_alive(what)


@examples(4)
@example(entries=10_000, duplicate_ids=False)
@given(entries=st.sampled_from([2_000, 10_000, 30_000]), duplicate_ids=st.booleans())
def test_a_giant_batch_is_refused_not_run(live: LiveServer, batch_session: str, entries: int,
                                          duplicate_ids: bool) -> None:
    what = f"a batch of {entries} tools/list{' with one id' if duplicate_ids else ''}"
    answer = post(live, giant_batch(entries, duplicate_ids=duplicate_ids), session_id=batch_session,
                  version=BATCH_VERSION)
    assert_rpc_answer(answer, what)
    message = answer.json()
    ran = sum("result" in one for one in (message if isinstance(message, list) else [message]))
    assert ran <= MAX_BATCH_RUN, f"{what}: {ran} entries ran ({len(answer.content)} bytes of answer)"
    live.assert_alive(what)


@examples(10)
@example(path="/mcp/tools/list", content_type="text/plain")
@given(path=st.sampled_from(["/mcp", "/mcp/tools/list", "/mcp/tools/call"]),
       content_type=st.sampled_from(["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x",
                                     "application/jsonx", "text/json", ""]))
def test_a_body_that_is_not_declared_json_gets_415(live: LiveServer, path: str, content_type: str) -> None:
    body = b'{"name":"listModels","arguments":{}}' if path != "/mcp" else b'{"jsonrpc":"2.0","id":5,"method":"ping"}'
    answer = live.http.post(path, content=body, headers={
        "authorization": f"Bearer {TOKEN}", "accept": JSON_ACCEPT, "content-type": content_type,
        **live.session_headers()})
    what = f"POST {path} with Content-Type {content_type!r}"
    assert answer.status_code == 415, f"{what}: answered {answer.status_code} {answer.text[:200]}"
    assert leaked(answer.content) is None
    live.assert_alive(what)


CODINGS = st.sampled_from(["gzip", "x-gzip", "deflate", "br", "zstd", "compress", "GZIP", "gzip, identity",
                           "identity, gzip", "aes128gcm", "anything"])


def _compressed(coding: str, body: bytes) -> bytes:
    """What a client compressing with `coding` would send: gzip and deflate for real (a small body that
    would inflate to 50 MiB, in the gzip example), any other coding as the plain bytes it claims to wrap."""
    import gzip
    import zlib
    if "gzip" in coding.lower():
        return gzip.compress(body)
    return zlib.compress(body) if coding == "deflate" else body


@examples(12)
@example(path="/mcp", coding="gzip", bomb=True)
@example(path="/mcp/tools/list", coding="br", bomb=False)
@given(path=st.sampled_from(["/mcp", "/mcp/tools/list", "/mcp/tools/call"]), coding=CODINGS, bomb=st.booleans())
def test_a_compressed_body_gets_415_naming_the_coding(live: LiveServer, path: str, coding: str, bomb: bool) -> None:
    """hexmcp reads bodies as sent (RFC 9110 §8.4: a coding the server does not take is 415), so a
    compressed body is refused as such, never read as JSON that is "not valid UTF-8" or, with a coding that
    wraps nothing, served as though the header were not there; and nothing is ever inflated (a bomb)."""
    body = b'{"name":"listModels","arguments":{}}' if path != "/mcp" else b'{"jsonrpc":"2.0","id":5,"method":"ping"}'
    if bomb and ("gzip" in coding.lower() or coding == "deflate"):  # 50 MiB of padding sent as ~50 KiB
        body = body[:-1] + b',"pad":"' + b" " * (50 << 20) + b'"}'
    answer = live.http.post(path, content=_compressed(coding, body), headers={
        "authorization": f"Bearer {TOKEN}", "accept": JSON_ACCEPT, "content-type": "application/json",
        "content-encoding": coding, **live.session_headers()})
    what = f"POST {path} with Content-Encoding {coding!r}"
    assert answer.status_code == 415, f"{what}: answered {answer.status_code} {answer.text[:200]}"
    assert "Content-Encoding" in answer.text and answer.headers.get("accept-encoding") == "identity", answer.text
    assert leaked(answer.content) is None
    live.assert_alive(what)


@pytest.mark.parametrize("coding", ["identity", "IDENTITY", "identity, identity", ""])
def test_an_identity_coding_is_served(live: LiveServer, coding: str) -> None:
    answer = live.http.post("/mcp", content=b'{"jsonrpc":"2.0","id":6,"method":"ping"}', headers={
        "authorization": f"Bearer {TOKEN}", "accept": JSON_ACCEPT, "content-type": "application/json",
        "content-encoding": coding, **live.session_headers()})
    assert answer.status_code == 200 and answer.json()["result"] == {}, answer.text
