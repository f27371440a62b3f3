"""Identity only from what was authenticated; /health details only for the operator; OPTIONS no way round auth.

Hostile inputs: a new `Authorization: Bearer` value on every request to a server with no authentication
(it used to name a new client each time, so rate limits, task caps and queue shares never applied);
`X-Forwarded-For` from a client that is not a proxy (believed, it would do the same); an anonymous
GET /health (it showed the gateway URL, upstream errors, the pid); an OPTIONS request without
credentials (it skipped auth on every path).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import httpx
from hypothesis import given
from hypothesis import strategies as st

from hexmcp.adapters.http.client_identity import client_identity
from hexmcp.adapters.http.forwarded import TrustedProxies
from hexmcp.adapters.http.request import HttpRequest
from hexmcp.adapters.limits.bucket import BucketRate
from hexmcp.adapters.limits.observer import RateLimiter, RateLimits
from hexmcp.core import McpServer

from .http_live import live_server
from .oauth_servers import Callers

TRUSTED = TrustedProxies(["10.1.0.0/16", "fd00::/8"])
TOKEN = "op-secret"


def _request(headers: list[tuple[bytes, bytes]], client: tuple[str, int] | None = ("10.0.0.7", 50000),
             proxies: TrustedProxies | None = None) -> HttpRequest:
    request = HttpRequest({"type": "http", "headers": headers, "client": client})
    request.proxies = proxies
    return request


@given(st.binary(min_size=1, max_size=64).filter(lambda t: t.strip() == t and b" " not in t))
def test_a_bearer_value_does_not_name_the_client_when_no_auth_is_configured(token: bytes) -> None:
    assert client_identity(_request([(b"authorization", b"Bearer " + token)])) == "address:10.0.0.7"


# The client our proxy appended is an address outside our proxies; a chain of our own proxies (where the
# header's leftmost trusted hop is the origin) is in FORWARDED_CASES.
@given(st.lists(st.one_of(st.ip_addresses().map(str), st.text(max_size=20)), max_size=6),
       st.ip_addresses().filter(lambda address: not TRUSTED.trusts(str(address))))
def test_forwarded_for_is_believed_from_a_trusted_proxy_only(hops: list[str], client) -> None:
    header = ", ".join([*hops, str(client)]).encode("utf-8", "replace")
    # From a client that is not a proxy of ours, whatever it writes in the header is ignored.
    assert client_identity(_request([(b"x-forwarded-for", header)], proxies=TRUSTED)) == "address:10.0.0.7"
    # From our proxy, the address it appended names the client, whatever the client wrote to its left.
    assert client_identity(_request([(b"x-forwarded-for", header)], client=("10.1.0.1", 1),
                                    proxies=TRUSTED)) == f"address:{client}"


FORWARDED_CASES = [  # (peer, X-Forwarded-For values, the client)
    ("10.1.0.1", [b"203.0.113.9"], "203.0.113.9"),
    ("10.1.0.1", [b"198.51.100.66, 203.0.113.9"], "203.0.113.9"),  # the client wrote the left one itself
    ("10.1.0.1", [b"203.0.113.9, 10.1.0.2"], "203.0.113.9"),  # two proxies of ours
    ("10.1.0.1", [b"203.0.113.9", b"10.1.0.2"], "203.0.113.9"),  # the header sent twice
    ("10.1.0.1", [b"203.0.113.9, not-an-address"], "10.1.0.1"),  # nothing left of junk can be believed
    ("10.1.0.1", [], "10.1.0.1"),
    ("fd00::5", [b"2001:db8::7"], "2001:db8::7"),
    ("10.1.0.1", [b"fd00::"], "fd00::"),  # every hop is ours: the leftmost, where the request began
    ("10.1.0.1", [b"203.0.113.9, fd00::"], "203.0.113.9"),  # our proxy behind another of ours
    ("10.1.0.1", [b"not-an-address, fd00::5"], "fd00::5"),
]


def test_forwarded_for_from_a_trusted_proxy_names_the_nearest_untrusted_hop() -> None:
    for peer, forwarded, client in FORWARDED_CASES:
        headers = [(b"x-forwarded-for", value) for value in forwarded]
        assert client_identity(_request(headers, client=(peer, 1), proxies=TRUSTED)) == f"address:{client}", forwarded


def _limited_server(**config) -> tuple[McpServer, Callers]:
    server = McpServer("identity-trust", "1.0.0")
    callers = Callers()
    server.add_observer(callers)
    server.add_observer(RateLimiter(RateLimits(default=BucketRate(rate=0.5, burst=2))))
    return server, callers


def _ping(base: str, *, address: str = "127.0.0.1", headers: dict[str, str] | None = None) -> httpx.Response:
    with httpx.Client(base_url=base, timeout=30, transport=httpx.HTTPTransport(local_address=address)) as http:
        return http.post("/mcp/ping", headers=headers or {})


def test_a_new_bearer_on_every_request_does_not_escape_the_rate_limit() -> None:
    server, callers = _limited_server()
    with live_server(server) as live:
        answers = [_ping(live.base, headers={"authorization": f"Bearer forged-{n}"}) for n in range(10)]
    statuses = [answer.status_code for answer in answers]
    assert statuses.count(200) <= 3 and statuses.count(429) >= 7, statuses
    assert {client for _, _, client in callers.seen} == {"address:127.0.0.1"}


def test_behind_a_trusted_proxy_each_forwarded_client_spends_its_own_budget() -> None:
    server, callers = _limited_server()
    with live_server(server, trusted_proxies=["127.0.0.2"]) as live:
        def via_proxy(client: str) -> int:
            return _ping(live.base, address="127.0.0.2", headers={"x-forwarded-for": client}).status_code

        with ThreadPoolExecutor(1) as pool:  # in order, one at a time
            first = list(pool.map(via_proxy, ["203.0.113.1", "203.0.113.1", "203.0.113.2", "203.0.113.2"]))
        assert first == [200, 200, 200, 200]  # two clients, two budgets
        assert via_proxy("203.0.113.1") == 429
        # Not a proxy of ours: its forwarded addresses are its own inventions, and its budget is its own.
        direct = [_ping(live.base, address="127.0.0.3", headers={"x-forwarded-for": f"198.51.100.{n}"}).status_code
                  for n in range(6)]
        assert direct.count(429) >= 3, direct
    clients = {client for _, _, client in callers.seen}
    assert {"address:203.0.113.1", "address:203.0.113.2", "address:127.0.0.3"} == clients


HEALTH_DETAILS = {"gateway": {"url": "http://gateway.internal:4000", "error": "upstream refused"}}


def test_health_shows_its_details_only_to_an_authenticated_caller() -> None:
    with live_server(McpServer("health", "1.0.0"), auth_token=TOKEN, health=lambda: HEALTH_DETAILS) as live:
        with httpx.Client(base_url=live.base) as http:
            for headers in ({}, {"authorization": "Bearer wrong"}):
                anonymous = http.get("/health", headers=headers)
                assert anonymous.status_code == 200 and anonymous.json() == {"status": "ok"}
            operator = http.get("/health", headers={"authorization": f"Bearer {TOKEN}"}).json()
            assert operator["gateway"] == HEALTH_DETAILS["gateway"] and "pid" in operator and operator["status"] == "ok"


def test_without_auth_health_details_stay_on_this_machine() -> None:
    with live_server(McpServer("health", "1.0.0"), trusted_proxies=["127.0.0.2"], health=lambda: HEALTH_DETAILS) as live:
        local = httpx.get(live.base + "/health").json()
        assert local["gateway"] == HEALTH_DETAILS["gateway"]
        with httpx.Client(base_url=live.base, transport=httpx.HTTPTransport(local_address="127.0.0.2")) as proxy:
            remote = proxy.get("/health", headers={"x-forwarded-for": "203.0.113.50"})
        assert remote.status_code == 200 and remote.json() == {"status": "ok"}


def test_options_needs_credentials_unless_it_is_a_cors_preflight() -> None:
    with live_server(McpServer("options", "1.0.0"), auth_token=TOKEN) as live:
        for path in ("/mcp", "/mcp/tools/call", "/anything"):
            refused = httpx.options(live.base + path)
            assert refused.status_code == 401 and refused.headers["www-authenticate"].startswith("Bearer"), path
    origin = "https://app.example"
    with live_server(McpServer("options", "1.0.0"), auth_token=TOKEN, cors_origins=[origin]) as live:
        preflight = httpx.options(live.base + "/mcp", headers={"origin": origin, "access-control-request-method": "POST",
                                                               "access-control-request-headers": "authorization"})
        assert preflight.status_code == 200 and preflight.headers["access-control-allow-origin"] == origin
        assert httpx.options(live.base + "/mcp", headers={"origin": origin}).status_code == 401
