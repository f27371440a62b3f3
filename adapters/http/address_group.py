"""The key one client's held-open places are counted under: IPv6 addresses grouped by /64.

One IPv6 host is routinely given a whole /64 (SLAAC, privacy addresses, a /64 per VM or container), so an
address-keyed cap counted per IPv6 address is no cap at all: a hoarder takes a fresh address for every
few sockets. The /64 is the smallest unit a network hands out, and the one rate limiters and abuse lists
key on (RFC 4291's interface identifier is the low 64 bits). IPv4 addresses, IPv4-mapped IPv6 addresses
(`::ffff:a.b.c.d`, the IPv4 client of a dual-stack socket) and authenticated principals stay as they are.
Only the held-open caps use this key (`held_open.py`): rate limits, sessions, task ownership and the
audit trail keep the full address.
"""

from __future__ import annotations

import ipaddress

ADDRESS = "address:"
PREFIX_BITS = 64


def held_key(identity: str) -> str:
    """`client_identity`'s value, an IPv6 address replaced by its /64 (`address:2001:db8:1:2::/64`)."""
    if not identity.startswith(ADDRESS) or ":" not in identity[len(ADDRESS):]:
        return identity  # a principal, an IPv4 address, or unknown
    try:
        address = ipaddress.IPv6Address(identity[len(ADDRESS):])
    except ValueError:
        return identity
    if address.ipv4_mapped is not None:
        return f"{ADDRESS}{address.ipv4_mapped}"
    network = ipaddress.IPv6Network((int(address) >> PREFIX_BITS << PREFIX_BITS, PREFIX_BITS))
    return f"{ADDRESS}{network}"
