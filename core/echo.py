"""Bounds on what an error may echo back of a client's input.

Error messages name the offending value ("unknown passage id '...'", jsonschema's "... is not of type
'string'"), and a client chooses that value's size: without a bound, one 4 MiB argument comes back as a
message of up to twice that (repr escapes a control character in 4 bytes, JSON again in 2 more), is written to
the log at every rejection, and over WebSocket can exceed the frame size the client itself accepts. The
bound keeps the start of the value, which is what a person reading the error needs, and says how long the
rest was.
"""

from __future__ import annotations

from typing import Any

MESSAGE_CHARS = 1024
"""The longest error message (and each string inside its `data`) a rejection carries."""
TOOL_FAILURE_CHARS = 8192
"""The longest text of a tool's own failure (`isError`): the tool wrote it for the model, so more room."""
DATA_ITEMS = 64
"""The most items of one list, or members of one object, in a rejection's `data` (a note of how many more
included)."""
DATA_DEPTH = 8
"""Nesting kept in a rejection's `data`; deeper values are replaced by a note."""


def clip_text(text: str, limit: int = MESSAGE_CHARS) -> str:
    """`text`, or its start and how long it was, in `limit` characters at most: so clipping a clipped text
    (a rejection made again from another's message) changes nothing."""
    if len(text) <= limit:
        return text
    note = f"… ({len(text)} characters in all)"
    return text[:limit - len(note)] + note


def clip_data(value: Any, depth: int = 0) -> Any:
    """`value` (an error's `data`) with every string clipped and every list and object cut to `DATA_ITEMS`."""
    if isinstance(value, str):
        return clip_text(value)
    if isinstance(value, (dict, list)) and depth >= DATA_DEPTH:
        return "… (nested too deeply to show)"
    if isinstance(value, dict):
        if len(value) <= DATA_ITEMS and all(isinstance(v, (int, float, bool, type(None))) or
                                            (isinstance(v, str) and len(v) <= MESSAGE_CHARS) for v in value.values()):
            return value  # the usual small, flat data: kept as the same object
        shown = len(value) if len(value) <= DATA_ITEMS else DATA_ITEMS - 1  # with the note, DATA_ITEMS at most
        kept = {key: clip_data(item, depth + 1) for key, item in list(value.items())[:shown]}
        if shown < len(value):
            kept["…"] = f"{len(value) - shown} more members"
        return kept
    if isinstance(value, list):
        shown = len(value) if len(value) <= DATA_ITEMS else DATA_ITEMS - 1
        kept_items = [clip_data(item, depth + 1) for item in value[:shown]]
        if shown < len(value):
            kept_items.append(f"… {len(value) - shown} more items")
        return kept_items
    return value
