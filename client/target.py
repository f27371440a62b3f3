"""Where a server is and how to reach it: one value parsed from a command line or a config entry.

Written forms (the command line's TARGET, a record file's header, an `--upstream` value):

- `http://host:port/mcp`, `https://...`: Streamable HTTP (sessions, or stateless 2026-07-28);
- `rest+http://host:port/mcp`: the router's REST dialect (`POST /mcp/{method}`, bare results);
- `ws://host:port/ws`, `ws+mcp://...`: WebSocket, strict JSON-RPC 2.0 with subprotocol `mcp`;
- `ws+chatgpt://host:port/ws`: WebSocket, the ChatGPT dialect (JSON-RPC without the `jsonrpc` member);
- `stdio:command args`: spawn the command and talk over its stdin/stdout.
"""

from __future__ import annotations

import enum
import shlex
from urllib.parse import urlsplit

import attrs

from .errors import ClientError, ClientErrorCode


class Transport(enum.Enum):
    STDIO = "stdio"
    HTTP = "http"
    REST = "rest"
    WS = "ws"
    WS_CHATGPT = "ws+chatgpt"


_WS_SCHEMES = {"ws": ("ws", Transport.WS), "wss": ("wss", Transport.WS), "ws+mcp": ("ws", Transport.WS),
               "wss+mcp": ("wss", Transport.WS), "ws+chatgpt": ("ws", Transport.WS_CHATGPT),
               "wss+chatgpt": ("wss", Transport.WS_CHATGPT)}


@attrs.frozen(kw_only=True)
class Target:
    transport: Transport
    url: str | None = None  # the URL to connect to (plain http(s)/ws(s), prefixes stripped)
    command: tuple[str, ...] = ()  # stdio: the argv to spawn

    @classmethod
    def parse(cls, text: str) -> Target:
        text = text.strip()
        if text.startswith("stdio:"):
            return cls.stdio(text.removeprefix("stdio:"))
        scheme = urlsplit(text).scheme.lower()
        if scheme in ("http", "https"):
            return cls(transport=Transport.HTTP, url=_checked_url(text))
        if scheme in ("rest+http", "rest+https"):
            return cls.rest(text.removeprefix("rest+"))
        if scheme in _WS_SCHEMES:
            plain, transport = _WS_SCHEMES[scheme]
            return cls(transport=transport, url=_checked_url(plain + text[len(scheme):]))
        raise ClientError(ClientErrorCode.USAGE,
                          f"not a target: {text!r} (expected http(s)://..., ws(s)://..., ws+chatgpt://..., "
                          "rest+http(s)://... or stdio:COMMAND)")

    @classmethod
    def rest(cls, url: str) -> Target:
        if urlsplit(url).scheme not in ("http", "https"):
            raise ClientError(ClientErrorCode.USAGE, f"a REST target is an http(s) URL, got {url!r}")
        return cls(transport=Transport.REST, url=_checked_url(url).rstrip("/"))

    @classmethod
    def stdio(cls, command: str) -> Target:
        argv = tuple(shlex.split(command))
        if not argv:
            raise ClientError(ClientErrorCode.USAGE, "a stdio target needs a command to run")
        return cls(transport=Transport.STDIO, command=argv)

    def __str__(self) -> str:
        if self.transport is Transport.STDIO:
            return "stdio:" + shlex.join(self.command)
        if self.transport is Transport.REST:
            return f"rest+{self.url}"
        if self.transport is Transport.WS_CHATGPT:
            scheme, rest = str(self.url).split("://", 1)
            return f"{scheme}+chatgpt://{rest}"
        return str(self.url)


def _checked_url(url: str) -> str:
    parts = urlsplit(url)
    if not parts.hostname:
        raise ClientError(ClientErrorCode.USAGE, f"the URL {url!r} names no host")
    try:
        parts.port
    except ValueError:
        raise ClientError(ClientErrorCode.USAGE, f"the URL {url!r} has a bad port") from None
    return url
