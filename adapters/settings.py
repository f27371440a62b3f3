"""Validators and converters shared by the adapters' attrs configuration classes."""

from __future__ import annotations

import attrs


def positive(instance: object, attribute: attrs.Attribute, value: float | None) -> None:
    """attrs validator: None or a number above zero; the message names the class and the setting."""
    if value is not None and value <= 0:
        raise ValueError(f"{type(instance).__name__}.{attribute.name} must be positive, got {value!r}")


def port_number(instance: object, attribute: attrs.Attribute, value: int) -> None:
    """attrs validator: a TCP port, 0 (any free port) to 65535. Checked here because the socket layer does
    not: 99999 would be bound as 99999 % 65536 and the server would listen where nobody looks."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 65535:
        # named as the setting is (`port`, `metrics port`), not as the class holding it: this is the line a user reads
        raise ValueError(f"{attribute.name.replace('_', ' ')} must be a port number (0-65535), got {value!r}")


def string_tuple(value: object) -> tuple[str, ...]:
    """attrs converter: a comma-separated string (as from an environment variable) or any iterable."""
    if value is None:
        return ()
    if isinstance(value, str):
        return tuple(v.strip() for v in value.split(",") if v.strip())
    return tuple(str(v) for v in value)  # type: ignore[union-attr]
