"""The handshake lifecycle of one connection, as one table.

Only handshake versions (2024-11-05 … 2025-11-25) have a lifecycle; 2026-07-28 requests carry their
version and capabilities in `_meta` and are served in any state. What must live here: every state,
every kind of incoming message, and the verdict for each pair. What must not: anything about wire
formats or what a method does.
"""

from __future__ import annotations

import enum


class _Member(enum.Enum):
    # Members are singletons: hash them by identity, in C. Enum's own __hash__ is a Python function,
    # and `step` hashes two members on every request.
    __hash__ = object.__hash__


class State(_Member):
    AWAITING_INITIALIZE = "awaiting_initialize"
    INITIALIZING = "initializing"  # initialize answered, `initialized` not yet received
    READY = "ready"
    CLOSED = "closed"


class Event(_Member):
    INITIALIZE = "initialize"
    INITIALIZE_REJECTED = "initialize_rejected"  # the answer to an accepted `initialize` was an error
    INITIALIZED = "initialized"  # the notification
    PING = "ping"
    REQUEST = "request"  # any other request
    NOTIFICATION = "notification"  # any other notification
    CLOSE = "close"  # the transport ended the session (disconnect, DELETE, expiry, shutdown)


class Verdict(_Member):
    ACCEPT = "accept"
    REJECT = "reject"  # requests get invalid_request naming the state
    IGNORE = "ignore"  # notifications that make no sense now are dropped (they cannot be answered)


# (state, event) -> (verdict, next state). Requests after `initialize` but before `initialized` are
# served: clients pipeline them, and the answer to `initialize` already fixed the version. An
# `initialize` answered with an error (invalid params, say) negotiated nothing: the client may retry.
TABLE: dict[tuple[State, Event], tuple[Verdict, State]] = {
    (State.AWAITING_INITIALIZE, Event.INITIALIZE): (Verdict.ACCEPT, State.INITIALIZING),
    (State.AWAITING_INITIALIZE, Event.INITIALIZE_REJECTED): (Verdict.IGNORE, State.AWAITING_INITIALIZE),
    (State.AWAITING_INITIALIZE, Event.INITIALIZED): (Verdict.IGNORE, State.AWAITING_INITIALIZE),
    (State.AWAITING_INITIALIZE, Event.PING): (Verdict.ACCEPT, State.AWAITING_INITIALIZE),
    (State.AWAITING_INITIALIZE, Event.REQUEST): (Verdict.REJECT, State.AWAITING_INITIALIZE),
    (State.AWAITING_INITIALIZE, Event.NOTIFICATION): (Verdict.IGNORE, State.AWAITING_INITIALIZE),
    (State.INITIALIZING, Event.INITIALIZE): (Verdict.REJECT, State.INITIALIZING),
    (State.INITIALIZING, Event.INITIALIZE_REJECTED): (Verdict.ACCEPT, State.AWAITING_INITIALIZE),
    (State.INITIALIZING, Event.INITIALIZED): (Verdict.ACCEPT, State.READY),
    (State.INITIALIZING, Event.PING): (Verdict.ACCEPT, State.INITIALIZING),
    (State.INITIALIZING, Event.REQUEST): (Verdict.ACCEPT, State.INITIALIZING),
    (State.INITIALIZING, Event.NOTIFICATION): (Verdict.ACCEPT, State.INITIALIZING),
    (State.READY, Event.INITIALIZE): (Verdict.REJECT, State.READY),
    (State.READY, Event.INITIALIZE_REJECTED): (Verdict.IGNORE, State.READY),
    (State.READY, Event.INITIALIZED): (Verdict.IGNORE, State.READY),
    (State.READY, Event.PING): (Verdict.ACCEPT, State.READY),
    (State.READY, Event.REQUEST): (Verdict.ACCEPT, State.READY),
    (State.READY, Event.NOTIFICATION): (Verdict.ACCEPT, State.READY),
    (State.CLOSED, Event.INITIALIZE): (Verdict.REJECT, State.CLOSED),
    (State.CLOSED, Event.INITIALIZE_REJECTED): (Verdict.IGNORE, State.CLOSED),
    (State.CLOSED, Event.INITIALIZED): (Verdict.IGNORE, State.CLOSED),
    (State.CLOSED, Event.PING): (Verdict.REJECT, State.CLOSED),
    (State.CLOSED, Event.REQUEST): (Verdict.REJECT, State.CLOSED),
    (State.CLOSED, Event.NOTIFICATION): (Verdict.IGNORE, State.CLOSED),
    # Closing is always allowed, from any state, and closing twice changes nothing.
    (State.AWAITING_INITIALIZE, Event.CLOSE): (Verdict.ACCEPT, State.CLOSED),
    (State.INITIALIZING, Event.CLOSE): (Verdict.ACCEPT, State.CLOSED),
    (State.READY, Event.CLOSE): (Verdict.ACCEPT, State.CLOSED),
    (State.CLOSED, Event.CLOSE): (Verdict.IGNORE, State.CLOSED),
}

REJECTION_REASONS: dict[State, str] = {
    State.AWAITING_INITIALIZE: "the session is not initialized: send 'initialize' first",
    State.INITIALIZING: "the session is already initialized",
    State.READY: "the session is already initialized",
    State.CLOSED: "the session is closed",
}


NAMED_EVENTS: dict[str, Event] = {"initialize": Event.INITIALIZE, "notifications/initialized": Event.INITIALIZED,
                                  "initialized": Event.INITIALIZED, "ping": Event.PING}
"""The methods that are events of their own; any other is a REQUEST or a NOTIFICATION (`classify`)."""


def classify(method: str, is_request: bool) -> Event:
    event = NAMED_EVENTS.get(method)
    if event is not None:
        return event
    return Event.REQUEST if is_request else Event.NOTIFICATION


def step(state: State, event: Event) -> tuple[Verdict, State]:
    return TABLE[(state, event)]
