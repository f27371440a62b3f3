"""Asking the client: `ctx.elicit` as a live request on handshake versions, a multi round trip on 2026."""

from __future__ import annotations

from typing import Any

import pytest

from hexmcp.core import ErrorCode, versions

from ..support.peer import CoreClient, RecordingPeer, stateless_meta

pytestmark = pytest.mark.anyio

ELICITATION = {"elicitation": {}}
ACCEPTED = {"action": "accept", "content": {"name": "Ada"}}


def ask_name(**extra: Any) -> dict[str, Any]:
    return {"name": "ask_name", "arguments": {}, "_meta": stateless_meta(capabilities=ELICITATION), **extra}


async def test_the_first_round_asks_for_input(client: CoreClient) -> None:
    result = await client.ok("tools/call", ask_name())
    assert result["resultType"] == "input_required"
    [(key, question)] = result["inputRequests"].items()
    assert question["method"] == "elicitation/create"
    assert result["requestState"]
    assert not client.peer.requests, "a stateless request must never send a server-to-client request"


async def test_the_retry_with_answers_completes(client: CoreClient) -> None:
    first = await client.ok("tools/call", ask_name())
    [key] = first["inputRequests"]
    second = await client.ok("tools/call", ask_name(inputResponses={key: ACCEPTED},
                                                    requestState=first["requestState"]))
    assert second["resultType"] == "complete"
    assert second["content"][0]["text"] == "Hello, Ada!"


async def test_a_tampered_request_state_is_invalid_params(client: CoreClient) -> None:
    first = await client.ok("tools/call", ask_name())
    [key] = first["inputRequests"]
    state = first["requestState"]
    tampered = ("A" if state[0] != "A" else "B") + state[1:]
    rejection = await client.rejected("tools/call", ask_name(inputResponses={key: ACCEPTED}, requestState=tampered))
    assert rejection.code is ErrorCode.INVALID_PARAMS
    assert rejection.data["path"] == "$.requestState"


async def test_request_state_for_another_tool_is_invalid_params(client: CoreClient) -> None:
    first = await client.ok("tools/call", ask_name())
    params = {"name": "echo", "arguments": {"text": "x"}, "requestState": first["requestState"],
              "_meta": stateless_meta(capabilities=ELICITATION)}
    assert (await client.rejected("tools/call", params)).code is ErrorCode.INVALID_PARAMS


async def test_without_the_capability_the_request_is_refused(client: CoreClient) -> None:
    params = {"name": "ask_name", "arguments": {}, "_meta": stateless_meta(capabilities={})}
    rejection = await client.rejected("tools/call", params)
    assert rejection.code is ErrorCode.MISSING_CLIENT_CAPABILITY


@pytest.mark.parametrize("version", [v for v in versions.HANDSHAKE_VERSIONS if versions.features(v).elicitation])
async def test_on_a_handshake_version_elicitation_is_a_live_request(demo_server, version: str) -> None:
    async def answer(method: str, params: dict[str, Any]) -> dict[str, Any]:
        return ACCEPTED

    client = CoreClient(demo_server, RecordingPeer(answer))
    await client.initialize(version, capabilities=ELICITATION)
    result = await client.ok("tools/call", {"name": "ask_name", "arguments": {}}, key="call-1")
    assert result["content"][0]["text"] == "Hello, Ada!"
    [sent] = client.peer.requests
    assert sent.method == "elicitation/create"
    assert sent.related == "call-1"


@pytest.mark.parametrize("version", [v for v in versions.HANDSHAKE_VERSIONS if not versions.features(v).elicitation])
async def test_before_elicitation_existed_the_tool_fails_politely(client: CoreClient, version: str) -> None:
    await client.initialize(version, capabilities=ELICITATION)
    result = await client.ok("tools/call", {"name": "ask_name", "arguments": {}})
    assert result["isError"] is True
    assert not client.peer.requests


async def test_a_client_that_cannot_answer_makes_a_tool_error(client: CoreClient) -> None:
    await client.initialize(versions.LATEST_HANDSHAKE_VERSION, capabilities=ELICITATION)
    result = await client.ok("tools/call", {"name": "ask_name", "arguments": {}})  # the peer refuses requests
    assert result["isError"] is True
