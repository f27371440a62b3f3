"""What one session may ask to be told about: how many resource URIs, how long each, and that each is a URI.

`resources/subscribe` adds a URI to its session's set and `subscriptions/listen` holds a list of them for
as long as the client listens; without bounds a client pins whatever it sends, in every session it opens.
A URI nobody serves yet is accepted (a resource may appear later: the knowledge base adds its documents
after start-up); one that is not a URI at all, or is longer than `ServerOptions.max_uri_chars`, is
refused with -32602, and a session already holding `ServerOptions.max_subscriptions` is refused with
-32600 until it unsubscribes from something.
"""

from __future__ import annotations

import re
from typing import Collection, Iterable

from .errors import ErrorCode, ProtocolError
from .options import ServerOptions

# A scheme (RFC 3986 §3.1), a colon, then no whitespace or control characters.
_URI = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:[^\s\x00-\x1f\x7f]*")


def check_uri(uri: str, options: ServerOptions, *, path: str = "$.uri") -> None:
    if len(uri) > options.max_uri_chars:
        raise ProtocolError(ErrorCode.INVALID_PARAMS,
                            f"Invalid params: a resource URI of {len(uri)} characters; this server takes at most "
                            f"{options.max_uri_chars}", {"path": path, "limit": options.max_uri_chars})
    if _URI.fullmatch(uri) is None:
        raise ProtocolError(ErrorCode.INVALID_PARAMS, "Invalid params: not a URI (scheme:rest, no whitespace)",
                            {"path": path})


def admit_subscription(held: Collection[str], uri: str, options: ServerOptions) -> None:
    """Refuse (ProtocolError) a `resources/subscribe` to `uri` by a session already subscribed to `held`."""
    check_uri(uri, options)
    if uri not in held and len(held) >= options.max_subscriptions:
        raise ProtocolError(ErrorCode.INVALID_REQUEST,
                            f"Too many subscriptions: this session holds {len(held)}, the most this server keeps; "
                            "unsubscribe from one first", {"limit": options.max_subscriptions})


def check_listen(uris: Iterable[str] | None, options: ServerOptions) -> None:
    """Refuse (ProtocolError) a `subscriptions/listen` whose `resourceSubscriptions` exceed the same bounds."""
    wanted = list(uris or ())
    if len(wanted) > options.max_subscriptions:
        raise ProtocolError(ErrorCode.INVALID_PARAMS,
                            f"Invalid params: {len(wanted)} resource subscriptions; this server keeps at most "
                            f"{options.max_subscriptions} per listener",
                            {"path": "$.notifications.resourceSubscriptions", "limit": options.max_subscriptions})
    for index, uri in enumerate(wanted):
        check_uri(uri, options, path=f"$.notifications.resourceSubscriptions[{index}]")
