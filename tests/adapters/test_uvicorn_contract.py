"""What `adapters/http/uvicorn_protocol.py` relies on in uvicorn's internals: fails loudly when a release
moves it. The live tests (test_http_admission.py, test_http_slowloris.py) check the behaviour; this
names the exact hook that went missing, so an upgrade's failure says what to re-read."""

from __future__ import annotations

import inspect

import httptools
import pytest
import uvicorn.server
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from hexmcp.adapters.http.uvicorn_protocol import GuardedHttpToolsProtocol

OVERRIDDEN = ["connection_made", "connection_lost", "data_received", "eof_received", "on_message_begin",
              "on_headers_complete", "handle_websocket_upgrade"]


@pytest.mark.parametrize("hook", OVERRIDDEN)
def test_every_hook_we_override_is_a_method_of_uvicorns_protocol(hook: str) -> None:
    assert callable(getattr(HttpToolsProtocol, hook, None)), f"uvicorn's HttpToolsProtocol lost {hook}()"
    assert hook in vars(GuardedHttpToolsProtocol), f"{hook} is listed but not overridden"


def test_we_override_nothing_else_of_uvicorns_protocol() -> None:
    ours = {name for name in vars(GuardedHttpToolsProtocol) if not name.startswith("_")}
    assert ours & set(dir(HttpToolsProtocol)) == set(OVERRIDDEN)


def test_uvicorn_builds_the_protocol_with_the_keywords_we_pass_through() -> None:
    parameters = inspect.signature(HttpToolsProtocol.__init__).parameters
    assert {"config", "server_state", "app_state", "_loop"} <= set(parameters)
    startup = inspect.getsource(uvicorn.server.Server.startup)
    assert "config.http_protocol_class(" in startup, "uvicorn no longer builds http_protocol_class per connection"


def test_the_parser_calls_the_hooks_the_head_deadline_needs() -> None:
    """httptools calls on_message_begin at a request's first byte and on_headers_complete at its head's end,
    before it raises HttpParserUpgrade for a WebSocket (so the deadline is off before the hand-over)."""
    calls: list[str] = []

    class Recorder:
        def on_message_begin(self) -> None:
            calls.append("begin")

        def on_headers_complete(self) -> None:
            calls.append("head")

    parser = httptools.HttpRequestParser(Recorder())
    parser.feed_data(b"G")
    assert calls == ["begin"]
    with pytest.raises(httptools.HttpParserUpgrade):
        parser.feed_data(b"ET /ws HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n")
    assert calls == ["begin", "head"]

