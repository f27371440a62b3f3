"""What `adapters/http/uvicorn_fence.py` relies on in uvicorn's internals (and `adapters/stdio/transport.py` in asyncio's):
fails loudly when a release moves it. The live tests (test_http_admission.py, test_http_slowloris.py,
test_ws_limits.py, the SIGTERM tests) check the behaviour; this names the exact piece that went missing,
so an upgrade's failure says what to re-read."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import re

import httptools
import pytest
import uvicorn
import uvicorn.server
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol, RequestResponseCycle

from hexmcp.adapters.http import uvicorn_fence
from hexmcp.adapters.http.uvicorn_fence import GuardedHttpToolsProtocol, HookedServer

OVERRIDDEN = ["connection_made", "connection_lost", "data_received", "eof_received", "on_message_begin",
              "on_headers_complete", "on_body", "on_message_complete", "on_response_complete",
              "send_400_response", "handle_websocket_upgrade"]


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


def test_connection_lost_marks_the_cycle_whose_scope_carries_the_gone_callback() -> None:
    """The request's `on_client_gone` is found through `self.cycle` (the request being answered): its `scope`,
    and `response_complete` saying whether anyone still waits for the answer."""
    lost = inspect.getsource(HttpToolsProtocol.connection_lost)
    assert "self.cycle" in lost and "response_complete" in lost and "disconnected = True" in lost
    cycle = inspect.getsource(RequestResponseCycle.__init__)
    assert "self.scope = scope" in cycle and "self.response_complete = False" in cycle
    assert "self.cycle = RequestResponseCycle(" in inspect.getsource(HttpToolsProtocol.on_headers_complete)


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


def test_the_parser_hands_over_the_target_and_each_header_before_the_head_is_complete() -> None:
    """The head limit counts, in `on_headers_complete`, the target and the headers (name and value whole) that
    httptools handed to `on_url` and `on_header` before it and uvicorn gathered in `self.url` and `self.headers`;
    a pipelined request's answer ends in `on_response_complete`, which the cycle is given, where a deferred 431
    is sent."""
    calls: list[tuple[str, int]] = []

    class Recorder:
        def on_url(self, url: bytes) -> None:
            calls.append(("url", len(url)))

        def on_header(self, name: bytes, value: bytes) -> None:
            calls.append(("header", len(name) + len(value)))

        def on_headers_complete(self) -> None:
            calls.append(("head", 0))

    parser = httptools.HttpRequestParser(Recorder())
    parser.feed_data(b"GET /abc HTTP/1.1\r\nHost: x\r\nX-Long: " + b"v" * 50)
    parser.feed_data(b"v" * 50 + b"\r\n\r\n")
    assert calls == [("url", 4), ("header", 5), ("header", 106), ("head", 0)]
    assert "self.url += url" in inspect.getsource(HttpToolsProtocol.on_url)
    assert "self.headers.append((name, value))" in inspect.getsource(HttpToolsProtocol.on_header)
    begin = inspect.getsource(HttpToolsProtocol.on_message_begin)
    assert 'self.url = b""' in begin and "self.headers = []" in begin
    assert "on_response=self.on_response_complete" in inspect.getsource(HttpToolsProtocol.on_headers_complete)
    assert "self.on_response()" in inspect.getsource(RequestResponseCycle.send)


def test_a_complete_body_sets_the_event_receive_waits_on() -> None:
    """`body_arrived` (set after uvicorn's on_message_complete) promises that `receive` returns at once: uvicorn
    marks the body complete and sets the event its `receive` waits on, so the wait cannot stall."""
    complete = inspect.getsource(HttpToolsProtocol.on_message_complete)
    assert "self.cycle.more_body = False" in complete and "self.cycle.message_event.set()" in complete
    receive = inspect.getsource(RequestResponseCycle.receive)
    assert "await self.message_event.wait()" in receive
    calls: list[str] = []

    class Recorder:
        def on_body(self, body: bytes) -> None:
            calls.append("body")

        def on_message_complete(self) -> None:
            calls.append("complete")

    httptools.HttpRequestParser(Recorder()).feed_data(b"POST / HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}")
    assert calls == ["body", "complete"]  # in the same feed as the body: before the app's task first runs


def test_a_parse_error_reaches_send_400_response_after_the_hooks_of_the_requests_before_it() -> None:
    """A malformed request's 400 waits for the requests parsed before it: uvicorn hands the parser's failure to
    `send_400_response` (which we override), the parser has by then called the hooks of every request before the
    failure, a pipelined cycle waits in `self.pipeline` (newest on the left, started from the right), and a
    cycle is marked complete before it calls `on_response_complete`."""
    received = inspect.getsource(HttpToolsProtocol.data_received)
    assert re.search(r"except httptools\.HttpParserError:.*?self\.send_400_response\(", received, re.S)
    assert "self.pipeline.appendleft((self.cycle, app))" in inspect.getsource(HttpToolsProtocol.on_headers_complete)
    assert "self.pipeline.pop()" in inspect.getsource(HttpToolsProtocol.on_response_complete)
    send = inspect.getsource(RequestResponseCycle.send)
    assert send.index("self.response_complete = True") < send.index("self.on_response()")
    assert "self.response_started = False" in inspect.getsource(RequestResponseCycle.__init__)
    calls: list[str] = []

    class Recorder:
        def on_message_begin(self) -> None:
            calls.append("begin")

        def on_headers_complete(self) -> None:
            calls.append("head")

        def on_message_complete(self) -> None:
            calls.append("complete")

    with pytest.raises(httptools.HttpParserError):
        httptools.HttpRequestParser(Recorder()).feed_data(b"GET / HTTP/1.1\r\nHost: x\r\n\r\nGARBAGE\r\n\r\n")
    assert calls == ["begin", "head", "complete", "begin"]  # the malformed request began: no head, no cycle


# --- uvicorn's Server: the shutdown hook and the signal handlers -----------------------------------

def test_uvicorn_calls_shutdown_with_the_sockets_when_graceful_shutdown_begins() -> None:
    assert list(inspect.signature(uvicorn.Server.shutdown).parameters) == ["self", "sockets"]
    serve = inspect.getsource(uvicorn.Server._serve)
    assert "await self.shutdown(sockets=sockets)" in serve, "uvicorn no longer calls shutdown(sockets=...)"
    shutdown = inspect.getsource(uvicorn.Server.shutdown)
    # Our hook must run before uvicorn waits on connections and tasks, i.e. first thing in shutdown().
    assert "connection.shutdown()" in shutdown and "_wait_tasks_to_complete" in shutdown


def test_uvicorn_keeps_its_listeners_in_servers_and_reads_its_graceful_timeout_at_shutdown() -> None:
    # The drain closes the listeners before it waits (new connections refused), then shortens the
    # graceful timeout to what is left of the drain deadline.
    assert "self.servers" in inspect.getsource(uvicorn.Server.startup), "uvicorn no longer keeps self.servers"
    shutdown = inspect.getsource(uvicorn.Server.shutdown)
    assert "for server in self.servers" in shutdown and "server.close()" in shutdown
    assert "self.config.timeout_graceful_shutdown" in shutdown
    # The drain builds a protocol for each connection left in the accept queue, as startup does.
    startup = inspect.getsource(uvicorn.Server.startup)
    for piece in ("config=config", "server_state=self.server_state", "app_state=self.lifespan.state", "_loop="):
        assert piece in startup, f"uvicorn's create_protocol no longer passes {piece}"
    assert "self.scope = {" in inspect.getsource(HttpToolsProtocol.on_message_begin), "the scope moved"


def test_uvicorn_installs_signal_handlers_through_capture_signals_around_serve() -> None:
    assert isinstance(inspect.getattr_static(uvicorn.Server, "capture_signals"), object)
    assert "with self.capture_signals():" in inspect.getsource(uvicorn.Server.serve)
    # Read from the source: sse-starlette (the SDK's dependency) replaces Server.handle_exit when imported.
    assert re.search(r"def handle_exit\(self, sig\b[^)]*, frame\b", inspect.getsource(uvicorn.server))


def test_should_exit_is_the_flag_uvicorns_main_loop_stops_on() -> None:
    server = uvicorn.Server(uvicorn.Config(app=None))
    assert server.should_exit is False
    assert "self.should_exit" in inspect.getsource(uvicorn.Server.on_tick)


def test_startup_sets_started_once_its_listeners_accept() -> None:
    """`HookedServer.listening` runs when `startup` returns with `started` set: after the listening
    servers are created (asyncio's create_server starts serving at once), as the last thing it does."""
    assert list(inspect.signature(uvicorn.Server.startup).parameters) == ["self", "sockets"]
    assert "await self.startup(sockets=sockets)" in inspect.getsource(uvicorn.Server._serve)
    startup = inspect.getsource(uvicorn.Server.startup)
    assert "start_serving" not in startup, "uvicorn now creates its listeners without serving on them"
    assert startup.rstrip().endswith("self.started = True")
    assert startup.index("self.servers = [server]") < startup.rindex("self.started = True")


def test_the_fence_server_overrides_only_the_pieces_it_names() -> None:
    ours = {name for name in vars(HookedServer) if not name.startswith("_")}
    assert ours & set(dir(uvicorn.Server)) == {"shutdown", "capture_signals", "startup"}


def test_without_keep_exit_status_uvicorns_own_signal_handling_is_kept() -> None:
    server = HookedServer(uvicorn.Config(app=None))
    assert isinstance(server.capture_signals(), contextlib.AbstractContextManager)


# --- uvicorn's log text ------------------------------------------------------------------------------

def test_uvicorn_still_logs_the_invalid_utf8_message_we_rewrite() -> None:
    from uvicorn.protocols.websockets import websockets_sansio_impl

    source = inspect.getsource(websockets_sansio_impl)
    assert f'self.logger.exception("{uvicorn_fence.INVALID_UTF8_MESSAGE}")' in source
    assert 'logging.getLogger("uvicorn.error")' in source
    assert uvicorn_fence.UVICORN_ERROR_LOGGER == "uvicorn.error"


def test_uvicorn_still_logs_the_unfinished_handshake_error_we_drop_after_an_http_refusal() -> None:
    from uvicorn.protocols.websockets import websockets_sansio_impl

    source = inspect.getsource(websockets_sansio_impl.WebSocketsSansIOProtocol.run_asgi)
    assert f'self.logger.error("{uvicorn_fence.UNFINISHED_HANDSHAKE_MESSAGE}")' in source


# --- asyncio's FlowControlMixin (stdio's wire writer) -------------------------------------------------

def test_the_stdio_writer_can_build_a_stream_writer_on_flow_control_mixin() -> None:
    """`adapters/stdio/transport.py` opens its write pipe with `asyncio.streams.FlowControlMixin` as the protocol:
    not exported, but what `StreamWriter.drain()` needs (it awaits the protocol's `_drain_helper`)."""
    mixin = asyncio.streams.FlowControlMixin
    assert issubclass(mixin, asyncio.Protocol)
    for hook in ("pause_writing", "resume_writing", "connection_lost", "_drain_helper"):
        assert callable(getattr(mixin, hook, None)), f"FlowControlMixin lost {hook}"
    assert "self._protocol._drain_helper()" in inspect.getsource(asyncio.StreamWriter.drain)


def test_a_bind_that_fails_in_uvicorn_is_cannot_listen_with_the_errnos_words_not_uvicorns_exit_status() -> None:
    """uvicorn exits 3 (hexmcp's "model package missing") when it cannot bind: the port can be taken between
    serve's own check and uvicorn's bind, and the fence turns that exit into CannotListen."""
    import errno
    import os
    import socket

    async def app(scope, receive, send):  # pragma: no cover - never reached
        raise AssertionError

    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        server = HookedServer(uvicorn.Config(app, host="127.0.0.1", port=port, lifespan="off", log_config=None))
        with pytest.raises(uvicorn_fence.CannotListen) as caught:
            asyncio.run(server.serve())
    assert caught.value.reason == os.strerror(errno.EADDRINUSE)
