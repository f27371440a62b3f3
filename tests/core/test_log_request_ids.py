"""`current_request_ids`: the ids a line logged here would carry, whichever way they were bound."""

from __future__ import annotations

import contextvars

import structlog

from hexmcp.core.log import bind_request_ids, current_request_ids


def test_the_adapters_ids_and_structlogs_bound_ones_are_both_read() -> None:
    def run() -> None:
        assert current_request_ids() == (None, None)
        bind_request_ids("s-1", "t-1")  # what `serve_request` does for every request
        assert current_request_ids() == ("s-1", "t-1")
        with structlog.contextvars.bound_contextvars(traceId="w3c"):  # structlog's take precedence, as in a line
            assert current_request_ids() == ("s-1", "w3c")

    contextvars.Context().run(run)
