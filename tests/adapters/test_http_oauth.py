"""hexmcp as an OAuth 2.1 resource server, against a real authorization server (node-oidc-provider).

The provider issues JWT access tokens for hexmcp's resource URI (RFC 8707 resource indicators), opaque
tokens for a second hexmcp that checks them by introspection (RFC 7662), and runs its development login
and consent pages, which the end-to-end test drives over HTTP for the official SDK client's
authorization-code flow. A second provider with the same signing key but another issuer name mints the
wrong-issuer tokens. Nothing here is minted by the test itself except a token signed with a key no
issuer publishes.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx
import jwt
import pytest

from hexmcp.adapters.http.auth.config import OAuthConfig
from hexmcp.adapters.http.auth.jwks import JwksCache
from hexmcp.adapters.ws import WsConfig, WsEndpoint

from ..support.net import free_port
from ..support.oidc_provider import OTHER_CLIENT, RESOURCE_SERVER, Provider, ProviderUnreachable, drive_login, new_key
from .oauth_servers import serving, tool_server

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

ALL = "mcp:read mcp:tools mcp:admin"
ACCEPT = {"accept": "application/json, text/event-stream"}


class World:
    """Two authorization servers and two hexmcp resource servers (JWT and introspection)."""

    def __init__(self) -> None:
        self.jwt_port, self.intro_port = free_port(), free_port()
        self.resource = f"http://127.0.0.1:{self.jwt_port}/mcp"
        self.short = f"http://127.0.0.1:{self.jwt_port}/short-lived"  # an audience hexmcp also accepts, 1 s tokens
        self.intro_resource = f"http://127.0.0.1:{self.intro_port}/mcp"
        self.other = "http://127.0.0.1:9/another-server"
        self.other_opaque = "http://127.0.0.1:9/another-opaque-server"
        resources = {self.resource: {"scope": ALL}, self.short: {"scope": ALL, "ttl": 1},
                     self.other: {"scope": ALL}, self.other_opaque: {"scope": ALL, "format": "opaque"},
                     self.intro_resource: {"scope": ALL, "format": "opaque"}}
        self.key = new_key()
        self.issuer = Provider(free_port(), resources=resources, keys=[self.key])
        self.impostor = Provider(free_port(), resources=resources, keys=[self.key])  # same key, other issuer


@pytest.fixture(scope="module")
def world():
    try:
        made = World()
    except ProviderUnreachable as error:
        pytest.skip(f"npm cannot reach its registry to install oidc-provider: {error}")
    try:
        yield made
    finally:
        made.issuer.stop()
        made.impostor.stop()


@pytest.fixture(scope="module")
def jwt_server(world: World):
    server, callers, ran = tool_server()
    oauth = OAuthConfig(issuer=world.issuer.issuer, resource=world.resource, audiences=[world.short],
                        scopes={"tool:admin_reset": "mcp:admin"}, leeway_s=0.5, jwks_min_interval_s=0)
    with serving(server, world.jwt_port, oauth=oauth, extra_routes={"/ws": WsEndpoint(server, WsConfig())}) as app:
        yield app, callers, ran


@pytest.fixture(scope="module")
def intro_server(world: World):
    server, callers, ran = tool_server()
    oauth = OAuthConfig(issuer=world.issuer.issuer, resource=world.intro_resource, validation="introspection",
                        client_id=RESOURCE_SERVER["client_id"], client_secret=RESOURCE_SERVER["client_secret"])
    with serving(server, world.intro_port, oauth=oauth) as app:
        yield app, callers, ran


def _bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


def _call(base: str, token: str, tool: str = "echo") -> httpx.Response:
    arguments = {"text": "hi"} if tool == "echo" else {}
    return httpx.post(f"{base}/mcp/tools/call", json={"name": tool, "arguments": arguments}, headers=_bearer(token),
                      timeout=30)


def _challenge(response: httpx.Response) -> dict[str, str]:
    """The parameters of a `WWW-Authenticate: Bearer k="v", ...` header."""
    value = response.headers["www-authenticate"]
    assert value.startswith("Bearer ")
    params = {}
    for part in value[len("Bearer "):].split('", '):
        key, _, quoted = part.partition("=")
        params[key.strip()] = quoted.strip('"')
    return params


def test_without_a_token_the_401_points_at_the_resource_metadata_which_names_the_issuer(world, jwt_server) -> None:
    base = f"http://127.0.0.1:{world.jwt_port}"
    refused = httpx.post(base + "/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, headers=ACCEPT)
    assert refused.status_code == 401
    challenge = _challenge(refused)
    assert challenge["resource_metadata"] == f"{base}/.well-known/oauth-protected-resource/mcp"
    assert set(challenge["scope"].split()) == set(ALL.split())
    for url in (challenge["resource_metadata"], base + "/.well-known/oauth-protected-resource"):
        document = httpx.get(url).json()
        assert document["resource"] == world.resource
        assert document["authorization_servers"] == [world.issuer.issuer]
        assert set(document["scopes_supported"]) == set(ALL.split())


def test_a_jwt_for_this_resource_is_served_and_its_subject_is_the_client(world, jwt_server) -> None:
    app, callers, ran = jwt_server
    token = world.issuer.client_credentials(world.resource, "mcp:read mcp:tools")
    answered = _call(f"http://127.0.0.1:{world.jwt_port}", token)
    assert answered.status_code == 200, answered.text
    assert answered.json()["content"][0]["text"] == "hi"
    # The identity rate limits, task ownership, the classifier's queue share and the audit trail read.
    assert callers.seen[-1] == ("tools/call", "echo", "oauth:hexmcp-tests")


def test_a_token_without_the_scope_gets_403_naming_it_and_nothing_runs(world, jwt_server) -> None:
    app, callers, ran = jwt_server
    base = f"http://127.0.0.1:{world.jwt_port}"
    reader = world.issuer.client_credentials(world.resource, "mcp:read")
    listed = httpx.post(base + "/mcp/tools/list", json={}, headers=_bearer(reader))
    assert listed.status_code == 200 and {tool["name"] for tool in listed.json()["tools"]} == {"echo", "admin_reset"}
    before = list(ran)
    refused = _call(base, reader)
    assert refused.status_code == 403
    challenge = _challenge(refused)
    assert challenge["error"] == "insufficient_scope"
    assert set(challenge["scope"].split()) == {"mcp:read", "mcp:tools"}  # what it needs, with what it has
    assert challenge["resource_metadata"].endswith("/.well-known/oauth-protected-resource/mcp")
    # A tool with a rule of its own: mcp:tools is not enough for it.
    caller = world.issuer.client_credentials(world.resource, "mcp:read mcp:tools")
    admin = _call(base, caller, "admin_reset")
    assert admin.status_code == 403 and "mcp:admin" in _challenge(admin)["scope"].split()
    # In a JSON-RPC batch one request lacking its scope refuses the whole POST.
    batch = [{"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
             {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "x"}}}]
    assert httpx.post(base + "/mcp", json=batch, headers={**ACCEPT, **_bearer(reader),
                                                          "mcp-protocol-version": "2025-03-26"}).status_code == 403
    assert ran == before
    assert _call(base, world.issuer.client_credentials(world.resource, ALL), "admin_reset").status_code == 200


@pytest.mark.parametrize("case", ["another resource", "another issuer", "unknown key", "not a JWT"])
def test_tokens_this_server_must_not_accept_get_401_invalid_token(world, jwt_server, case: str) -> None:
    if case == "another resource":
        token, reason = world.issuer.client_credentials(world.other, "mcp:read mcp:tools"), "not issued for this resource"
    elif case == "another issuer":  # signed with a key hexmcp trusts, by a server it does not
        token, reason = world.impostor.client_credentials(world.resource, "mcp:read mcp:tools"), "another authorization server"
    elif case == "unknown key":
        claims = jwt.decode(world.issuer.client_credentials(world.resource, "mcp:read mcp:tools"),
                            options={"verify_signature": False})
        forger = new_key()
        token = jwt.encode(claims, jwt.PyJWK(forger).key, algorithm="RS256", headers={"kid": forger["kid"]})
        reason = "key the issuer does not publish"
    else:
        token, reason = "not-a-jwt", "not a JWT"
    refused = _call(f"http://127.0.0.1:{world.jwt_port}", token)
    assert refused.status_code == 401
    challenge = _challenge(refused)
    assert challenge["error"] == "invalid_token" and reason in challenge["error_description"]
    assert "resource_metadata" in challenge


def test_an_expired_token_is_refused(world, jwt_server) -> None:
    base = f"http://127.0.0.1:{world.jwt_port}"
    token = world.issuer.client_credentials(world.short, "mcp:read mcp:tools")  # lives 1 s, leeway 0.5 s
    assert _call(base, token).status_code == 200
    time.sleep(2.0)
    refused = _call(base, token)
    assert refused.status_code == 401 and "expired" in _challenge(refused)["error_description"]


def test_a_rotated_signing_key_is_fetched_and_tokens_of_the_old_key_still_work(world, jwt_server) -> None:
    app, callers, ran = jwt_server
    base = f"http://127.0.0.1:{world.jwt_port}"
    old = world.issuer.client_credentials(world.resource, "mcp:read mcp:tools")
    assert _call(base, old).status_code == 200
    keys = app.authenticator.verifier.keys
    fetched = keys.fetches
    new = new_key()
    world.issuer.restart(keys=[new, world.key])  # the issuer signs with the new key, still publishes the old
    token = world.issuer.client_credentials(world.resource, "mcp:read mcp:tools")
    assert jwt.get_unverified_header(token)["kid"] == new["kid"]
    assert _call(base, token).status_code == 200
    assert keys.fetches == fetched + 1  # one fetch for the unknown kid
    assert _call(base, old).status_code == 200 and _call(base, token).status_code == 200
    assert keys.fetches == fetched + 1  # both keys cached now


def test_unknown_key_ids_refresh_the_jwks_at_most_once_per_interval(world) -> None:
    cache = JwksCache(OAuthConfig(issuer=world.issuer.issuer, resource=world.resource, jwks_min_interval_s=60))

    async def forged_kids() -> list[Any]:
        return [await cache.key(f"forged-{n}") for n in range(20)]

    assert asyncio.run(forged_kids()) == [None] * 20
    assert cache.fetches == 1


def test_introspection_accepts_active_tokens_for_this_resource_and_caches_the_answer(world, intro_server) -> None:
    app, callers, ran = intro_server
    base = f"http://127.0.0.1:{world.intro_port}"
    token = world.issuer.client_credentials(world.intro_resource, "mcp:read mcp:tools")
    assert "." not in token  # opaque: only the issuer can say what it is
    introspector = app.authenticator.verifier
    asked = introspector.requests
    assert _call(base, token).status_code == 200 and _call(base, token).status_code == 200
    assert introspector.requests == asked + 1
    assert callers.seen[-1][2] == "oauth:hexmcp-tests"
    reader = world.issuer.client_credentials(world.intro_resource, "mcp:read")
    assert _call(base, reader).status_code == 403
    for bad, reason in ((world.issuer.client_credentials(world.resource, "mcp:read mcp:tools"), "would not introspect"),
                        (world.issuer.client_credentials(world.other_opaque, "mcp:read mcp:tools"),
                         "not issued for this resource"),
                        ("made-up-token", "not active")):
        refused = _call(base, bad)
        assert refused.status_code == 401 and reason in _challenge(refused)["error_description"]


def test_one_address_flooding_made_up_tokens_gets_few_introspections_and_others_are_served(world,
                                                                                           intro_server) -> None:
    """Every made-up token is new, so each was asked about: 64 at once from one address kept the issuer busy
    (one introspection each) and every other client's first request waited behind them. Now one client has
    at most PER_CLIENT_IN_FLIGHT asked or waiting; the rest get 503 + Retry-After at once."""
    from hexmcp.adapters.http.auth.introspection import PER_CLIENT_IN_FLIGHT

    app, _, _ = intro_server
    base = f"http://127.0.0.1:{world.intro_port}"
    introspector = app.authenticator.verifier
    honest_token = world.issuer.client_credentials(world.intro_resource, "mcp:read mcp:tools")

    async def scenario() -> tuple[dict[int, int], set[str], int]:
        flooder = httpx.AsyncClient(timeout=30, transport=httpx.AsyncHTTPTransport(local_address="127.0.0.2"),
                                    limits=httpx.Limits(max_connections=100))
        honest = httpx.AsyncClient(timeout=30, transport=httpx.AsyncHTTPTransport(local_address="127.0.0.3"))
        async with flooder, honest:
            flood = [flooder.post(f"{base}/mcp/ping", json={}, headers=_bearer(f"made-up-{index}"))
                     for index in range(64)]
            answers = await asyncio.gather(*flood, honest.post(f"{base}/mcp/ping", json={},
                                                               headers=_bearer(honest_token)))
        statuses: dict[int, int] = {}
        for answer in answers[:-1]:
            statuses[answer.status_code] = statuses.get(answer.status_code, 0) + 1
        retry = {answer.headers.get("retry-after", "") for answer in answers[:-1] if answer.status_code == 503}
        return statuses, retry, answers[-1].status_code

    asked = introspector.requests
    statuses, retry, honest_status = asyncio.run(scenario())
    assert honest_status == 200
    assert statuses.get(503, 0) > 0 and retry == {"1"}, statuses
    assert statuses.get(401, 0) == introspector.requests - asked - 1 >= PER_CLIENT_IN_FLIGHT  # -1: the honest one


def test_one_address_presenting_new_tokens_one_after_another_is_held_to_a_rate(world, intro_server) -> None:
    """The in-flight cap bounds how many of one client's tokens wait, not how many a second: made-up tokens
    sent one after another each reached the issuer. Now beyond NEW_TOKENS' burst a client gets 429 with when
    to retry, the issuer is not asked, a token already checked is still served from the cache, and another
    address is not affected."""
    from hexmcp.adapters.http.auth.introspection import NEW_TOKENS

    app, _, _ = intro_server
    base = f"http://127.0.0.1:{world.intro_port}"
    introspector = app.authenticator.verifier
    known = world.issuer.client_credentials(world.intro_resource, "mcp:read mcp:tools")
    other = world.issuer.client_credentials(world.intro_resource, "mcp:read mcp:tools")

    async def scenario() -> dict[str, Any]:
        flooder = httpx.AsyncClient(timeout=30, transport=httpx.AsyncHTTPTransport(local_address="127.0.0.4"))
        elsewhere = httpx.AsyncClient(timeout=30, transport=httpx.AsyncHTTPTransport(local_address="127.0.0.5"))
        async with flooder, elsewhere:
            first = (await flooder.post(f"{base}/mcp/ping", json={}, headers=_bearer(known))).status_code
            asked = introspector.requests
            started = time.monotonic()
            answers = [await flooder.post(f"{base}/mcp/ping", json={}, headers=_bearer(f"new-{index}"))
                       for index in range(3 * NEW_TOKENS.burst)]
            elapsed = time.monotonic() - started
            return {"first": first, "asked": introspector.requests - asked, "elapsed": elapsed,
                    "statuses": [answer.status_code for answer in answers],
                    "limited": [answer for answer in answers if answer.status_code == 429][:1],
                    "known again": (await flooder.post(f"{base}/mcp/ping", json={},
                                                       headers=_bearer(known))).status_code,
                    "elsewhere": (await elsewhere.post(f"{base}/mcp/ping", json={},
                                                       headers=_bearer(other))).status_code}

    outcome = asyncio.run(scenario())
    allowed = NEW_TOKENS.burst - 1 + NEW_TOKENS.rate * outcome["elapsed"]  # -1: the known token's check
    assert outcome["first"] == 200 and outcome["known again"] == 200 and outcome["elsewhere"] == 200
    assert set(outcome["statuses"]) == {401, 429}
    assert outcome["statuses"].count(401) == outcome["asked"] <= allowed + 1
    [limited] = outcome["limited"]
    assert int(limited.headers["retry-after"]) >= 1 and "Too many new tokens" in limited.text


def test_the_official_sdk_client_runs_the_authorization_code_flow_end_to_end(world, jwt_server) -> None:
    import httpx2
    from mcp.client.auth import OAuthClientProvider
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

    app, callers, ran = jwt_server

    class Memory:
        def __init__(self) -> None:
            self.tokens: OAuthToken | None = None
            self.client: OAuthClientInformationFull | None = None

        async def get_tokens(self) -> OAuthToken | None:
            return self.tokens

        async def set_tokens(self, tokens: OAuthToken) -> None:
            self.tokens = tokens

        async def get_client_info(self) -> OAuthClientInformationFull | None:
            return self.client

        async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
            self.client = client_info

    redirected: dict[str, str] = {}

    async def redirect_handler(url: str) -> None:  # the "browser": log in as alice and consent
        redirected.update(await asyncio.to_thread(drive_login, url, login="alice"))

    async def callback_handler() -> AuthorizationCodeResult:
        return AuthorizationCodeResult(code=redirected["code"], state=redirected.get("state"),
                                       iss=redirected.get("iss"))

    storage = Memory()
    auth = OAuthClientProvider(
        server_url=world.resource,
        client_metadata=OAuthClientMetadata(client_name="hexmcp e2e", redirect_uris=["http://127.0.0.1:3/callback"],
                                            grant_types=["authorization_code", "refresh_token"],
                                            response_types=["code"], token_endpoint_auth_method="none"),
        storage=storage, redirect_handler=redirect_handler, callback_handler=callback_handler)

    async def session() -> tuple[list[str], str]:
        async with httpx2.AsyncClient(auth=auth, timeout=30) as http:
            async with streamable_http_client(world.resource, http_client=http) as streams:
                async with ClientSession(streams[0], streams[1]) as client:
                    await client.initialize()
                    tools = [tool.name for tool in (await client.list_tools()).tools]
                    result = await client.call_tool("echo", {"text": "through OAuth"})
                    return tools, result.content[0].text

    tools, echoed = asyncio.run(session())
    assert set(tools) == {"echo", "admin_reset"} and echoed == "through OAuth"
    assert "code" in redirected and storage.client is not None  # registered dynamically, then authorized
    claims = jwt.decode(storage.tokens.access_token, options={"verify_signature": False})
    assert claims["aud"] == world.resource and claims["sub"] == "alice"
    assert ("tools/call", "echo", "oauth:alice") in callers.seen


def test_a_session_opened_by_one_subject_is_not_usable_by_another(world, jwt_server) -> None:
    base = f"http://127.0.0.1:{world.jwt_port}"
    owner = world.issuer.client_credentials(world.resource, "mcp:read mcp:tools")
    intruder = world.issuer.client_credentials(world.resource, "mcp:read mcp:tools", client=OTHER_CLIENT)
    opened = httpx.post(base + "/mcp", headers={**ACCEPT, **_bearer(owner)}, json={
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
    assert opened.status_code == 200, opened.text
    session = {"mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": "2025-06-18"}
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "x"}}}
    stolen = httpx.post(base + "/mcp", headers={**ACCEPT, **session, **_bearer(intruder)}, json=call)
    assert stolen.status_code == 404  # as if the session did not exist: ids cannot be probed
    assert httpx.delete(base + "/mcp", headers={**session, **_bearer(intruder)}).status_code == 404
    own = httpx.post(base + "/mcp", headers={**ACCEPT, **session, **_bearer(owner)}, json=call)
    assert own.status_code == 200 and "x" in own.text


def test_a_websocket_needs_a_token_with_every_scope(world, jwt_server) -> None:
    from websockets.asyncio.client import connect
    from websockets.exceptions import InvalidStatus

    url = f"ws://127.0.0.1:{world.jwt_port}/ws"

    async def open_with(token: str | None) -> int:
        try:
            async with connect(url, additional_headers=_bearer(token) if token else {}):
                return 101
        except InvalidStatus as refused:
            return refused.response.status_code

    assert asyncio.run(open_with(None)) == 401
    assert asyncio.run(open_with(world.issuer.client_credentials(world.resource, "mcp:read mcp:tools"))) == 403
    assert asyncio.run(open_with(world.issuer.client_credentials(world.resource, ALL))) == 101


def test_hexmcp_serve_takes_oauth_from_its_flags(world) -> None:
    from .guard_servers import CHEAP_TOOL, OTHER_TOOL, serve

    with serve("--oauth-issuer", world.issuer.issuer, "--oauth-resource", world.resource,
               "--oauth-scopes", f"tool:{OTHER_TOOL}=mcp:admin") as base:
        document = httpx.get(base + "/.well-known/oauth-protected-resource/mcp").json()
        assert document["authorization_servers"] == [world.issuer.issuer] and document["resource"] == world.resource
        token = world.issuer.client_credentials(world.resource, "mcp:read mcp:tools")
        assert _call(base, token, CHEAP_TOOL).status_code == 200
        refused = _call(base, token, OTHER_TOOL)
        assert refused.status_code == 403 and "mcp:admin" in _challenge(refused)["scope"].split()
        assert httpx.get(base + "/health").json() == {"status": "ok"}
        assert "pid" in httpx.get(base + "/health", headers=_bearer(token)).json()


def test_tokens_of_a_withdrawn_key_are_refused_once_the_new_key_set_is_known(world, jwt_server) -> None:
    # Last in the module: it changes the issuer's keys (and puts the first one back at the end).
    base = f"http://127.0.0.1:{world.jwt_port}"
    before = world.issuer.client_credentials(world.resource, "mcp:read mcp:tools")
    assert _call(base, before).status_code == 200  # checked once, then remembered
    try:
        world.issuer.restart(keys=[new_key()])  # every earlier key withdrawn
        after = world.issuer.client_credentials(world.resource, "mcp:read mcp:tools")
        assert _call(base, after).status_code == 200  # its unknown kid brings in the new set
        refused = _call(base, before)
        assert refused.status_code == 401 and "does not publish" in _challenge(refused)["error_description"]
    finally:
        world.issuer.restart(keys=[world.key])
