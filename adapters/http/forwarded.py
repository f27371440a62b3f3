"""The client's address behind reverse proxies the operator trusts, and only behind those.

A peer in `--trusted-proxies` (CIDRs) speaks for the client in `X-Forwarded-For`; anyone else's header is
ignored, since a client can write any address there. The list is read from the right, the hop the
nearest proxy added first: the first address that is not itself a trusted proxy is the client. Without a
trusted proxy every client behind one proxy would be one address (one rate-limit bucket for everybody);
trusting the header from everyone would let each client pick a new address per request.
"""

from __future__ import annotations

import functools
import ipaddress
from typing import Iterable

from .request import HttpRequest
from .request_headers import header_values


class TrustedProxies:
    def __init__(self, networks: Iterable[str]) -> None:
        self._networks = [ipaddress.ip_network(entry.strip(), strict=False) for entry in networks if entry.strip()]
        if not self._networks:
            raise ValueError("trusted proxies: name at least one address or CIDR")
        self.trusts = functools.lru_cache(maxsize=1024)(self.trusts)  # type: ignore[method-assign]

    def trusts(self, address: str) -> bool:
        try:
            ip = ipaddress.ip_address(address)
        except ValueError:
            return False
        return any(ip in network for network in self._networks)

    def client_address(self, request: HttpRequest) -> str | None:
        """The client's address: the peer's, or the forwarded one when the peer (and every hop after the
        client) is a trusted proxy. None when the server does not know the peer."""
        client = request.scope.get("client")
        peer = client[0] if client else None
        if peer is None or not self.trusts(peer):
            return peer
        hops = [hop.strip() for value in header_values(request.scope, b"x-forwarded-for")
                for hop in value.decode("latin-1").split(",")]
        nearest_trusted = peer
        for hop in reversed(hops):
            try:
                hop = str(ipaddress.ip_address(hop.strip("[]")))
            except ValueError:
                return nearest_trusted  # a malformed entry: nothing to its left can be believed
            if not self.trusts(hop):
                return hop
            nearest_trusted = hop
        return nearest_trusted
