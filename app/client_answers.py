"""`--client-request-timeout`, on `serve` and `stdio`: how long a request the server sends its client
(elicitation, sampling, roots) waits for the client's answer before the tool call that asked ends with an
error. The HTTP adapter's `client_request_timeout_s` (WebSocket's follows it), stdio's `peer_timeout_s`."""

from __future__ import annotations

import argparse

from hexmcp.tools.flag_types import positive_seconds

DEFAULT_CLIENT_REQUEST_TIMEOUT_S = 300.0


def add_client_answer_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--client-request-timeout", type=positive_seconds, default=DEFAULT_CLIENT_REQUEST_TIMEOUT_S,
                        metavar="SECONDS",
                        help="how long a question the server asks its client (elicitation, sampling, roots) waits "
                             "for the answer; the tool call that asked then ends with an error "
                             f"(default {DEFAULT_CLIENT_REQUEST_TIMEOUT_S:g})")


def client_request_timeout(settings: argparse.Namespace) -> float:
    # getattr: tests and tools build settings by hand, without every flag.
    return getattr(settings, "client_request_timeout", DEFAULT_CLIENT_REQUEST_TIMEOUT_S)
