"""What is wrong with a client's answer to a question the server asked it (sampling, elicitation, roots).

Every way a question travels uses this one judgement: a live server-to-client request (handshake
versions), an `inputResponses` entry (2026-07-28), a task's input. A client that answers with the wrong
shape must not reach the tool: an elicitation `action` outside the enum, accepted `content` that does not
match the `requestedSchema` the tool sent, a sampling result without its message, roots without URIs. The
tool would otherwise crash on it (an opaque "failed unexpectedly") or, worse, act on it.
"""

from __future__ import annotations

from typing import Any

from .echo import clip_text
from .json_types import json_type

ELICIT_ACTIONS = ("accept", "decline", "cancel")
SAMPLING_ROLES = ("user", "assistant")


def answer_problem(kind: str, params: dict[str, Any], answer: Any) -> str | None:
    """Why `answer` is not a valid answer to the `kind` question asked with `params`; None when it is."""
    if not isinstance(answer, dict):
        return f"the result is {_json_type(answer)}, not an object"
    if kind == "elicitation":
        return _elicitation_problem(params, answer)
    if kind == "sampling":
        return _sampling_problem(answer)
    return _roots_problem(answer)


def _elicitation_problem(params: dict[str, Any], answer: dict[str, Any]) -> str | None:
    action = answer.get("action")
    if action not in ELICIT_ACTIONS:
        return f"action is {_shown(action)}; it must be one of accept, decline, cancel"
    content = answer.get("content")
    if content is not None and not isinstance(content, dict):
        return f"content is {_json_type(content)}, not an object"
    schema = params.get("requestedSchema")
    if action != "accept" or not isinstance(schema, dict):
        return None  # declined or cancelled: no content to check; URL mode asks for none
    return _content_problem(schema, content if content is not None else {})


def _content_problem(schema: dict[str, Any], content: dict[str, Any]) -> str | None:
    from .schemas.validation import best_error, compile_validator, describe_error, json_path

    try:
        validator = compile_validator(schema)
    except Exception:  # the tool's own schema is not JSON Schema: nothing to hold the client to
        return None
    error = best_error(validator, content)
    if error is None:
        return None
    return describe_error(f"content at {json_path(error)}", error)


def _sampling_problem(answer: dict[str, Any]) -> str | None:
    if answer.get("role") not in SAMPLING_ROLES:
        return f"role is {_shown(answer.get('role'))}; it must be user or assistant"
    content = answer.get("content")
    if isinstance(content, dict) or (isinstance(content, list) and content and all(isinstance(c, dict) for c in content)):
        return None
    return "content is missing" if content is None else f"content is {_json_type(content)}, not a content block"


def _roots_problem(answer: dict[str, Any]) -> str | None:
    roots = answer.get("roots")
    if not isinstance(roots, list):
        return "roots is missing" if roots is None else f"roots is {_json_type(roots)}, not an array"
    for index, root in enumerate(roots):
        if not isinstance(root, dict) or not isinstance(root.get("uri"), str):
            return f"roots[{index}] has no uri string"
    return None


def _json_type(value: Any) -> str:
    name = json_type(value)
    return name if name == "null" else ("an " if name[0] in "aeiou" else "a ") + name


def _shown(value: Any) -> str:
    return clip_text(repr(value), 80) if value is not None else "missing"
