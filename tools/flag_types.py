"""argparse types for the limits and deadlines of every command (serve, stdio, the client commands): a
value that would refuse every message or cut every connection is a usage error (exit 2), not a server
that never works."""

from __future__ import annotations

import argparse


def positive_int(text: str) -> int:
    """argparse type for limits: an integer above zero (0 or -1 would refuse every message)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {value}")
    return value


def port_number(text: str) -> int:
    """argparse type for a port to listen on: 0 (any free one) to 65535. Checked when parsed, so every path
    that binds (one server, or --workers' parent) gets the same one line, not OverflowError from bind()."""
    return _int_between(text, 0, 65535, "a port number (0-65535)")


def positive_seconds(text: str) -> float:
    """argparse type for deadlines: a number of seconds above zero (0 would cut every connection)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {text}")
    return value


def seconds_or_off(text: str) -> float:
    """argparse type for a deadline that may be switched off: 0 (no limit) or a positive number of seconds."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be 0 (no limit) or a positive number of seconds, got {text!r}") from None
    if not (value == 0 or 0 < value < float("inf")):
        raise argparse.ArgumentTypeError(f"must be 0 (no limit) or a positive number of seconds, got {text}")
    return value


def tolerance_seconds(text: str) -> float:
    """argparse type for a tolerance (clock skew): 0 or a finite positive number of seconds. An infinite one
    would make every token's expiry meaningless; `nan` compares false with everything, to the same effect."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be 0 or a finite positive number of seconds, got {text!r}") from None
    if not 0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be 0 or a finite positive number of seconds, got {text}")
    return value


def nice_increment(text: str) -> int:
    """argparse type for a niceness increment: 0 (unchanged) to 19 (the lowest priority there is)."""
    return _int_between(text, 0, 19, "an integer from 0 to 19")


def _int_between(text: str, low: int, high: int, what: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be {what}, got {text!r}") from None
    if not low <= value <= high:
        raise argparse.ArgumentTypeError(f"must be {what}, got {value}")
    return value
