"""The gateway error map: an HTTP status or a transport exception to the design's error kind.

One table (`STATUS_KINDS`) and one classifier per source of failure, so the same upstream behaviour
always becomes the same code. Messages are built here from what we know (status, the gateway's own
one-line message) and passed through `Redactor`, so a gateway that echoes the API key back cannot leak
it into a tool error or a log line.
"""

from __future__ import annotations

import email.utils
import time
from typing import Mapping
from urllib.parse import urlsplit

import aiohttp

from ..port import GatewayErrorKind, GatewayFailure
from .retry import RetryableFailure

# Statuses with a kind of their own; any other 4xx is a refusal (PROVIDER_UNAVAILABLE, not retried),
# any 5xx is PROVIDER_UNAVAILABLE and retried.
STATUS_KINDS: dict[int, tuple[GatewayErrorKind, bool]] = {
    401: (GatewayErrorKind.AUTHENTICATION, False),
    403: (GatewayErrorKind.AUTHENTICATION, False),
    404: (GatewayErrorKind.MODEL_NOT_FOUND, False),
    408: (GatewayErrorKind.TIMEOUT, True),
    429: (GatewayErrorKind.RATE_LIMITED, True),
}
UPSTREAM_MESSAGE_CHARS = 300  # the gateway's own explanation, quoted up to this length


class Redactor:
    """Replaces every secret it was given with `***` (the API key; never logged, never returned)."""

    def __init__(self, *secrets: str | None) -> None:
        self._secrets = tuple(s for s in secrets if s)

    def __call__(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return text


def for_status(status: int, upstream_message: str | None, headers: Mapping[str, str], *, model: str | None,
               redact: Redactor) -> GatewayFailure | RetryableFailure:
    """A non-2xx answer: a final failure, or a retryable one (with the Retry-After it named)."""
    kind, retryable = STATUS_KINDS.get(status, (GatewayErrorKind.PROVIDER_UNAVAILABLE, status >= 500))
    if status == 400 and model and upstream_message and "model" in upstream_message.lower():
        kind = GatewayErrorKind.MODEL_NOT_FOUND  # LiteLLM and some vLLM builds answer 400 for an unknown model
    if 300 <= status < 400:
        return GatewayFailure(kind=kind, status=status, message=redact(
            f"the gateway answered a redirect (HTTP {status} to {_where(headers.get('location'))}), which is "
            "not followed: the API key never goes to another address; set the gateway URL to the final one"))
    quoted = f": {upstream_message[:UPSTREAM_MESSAGE_CHARS]}" if upstream_message else ""
    what = {
        GatewayErrorKind.AUTHENTICATION: "the gateway refused the configured credentials",
        GatewayErrorKind.MODEL_NOT_FOUND: f"the gateway does not serve the model {model!r}" if model
        else "the gateway has no such endpoint",
        GatewayErrorKind.TIMEOUT: "the gateway timed out",
        GatewayErrorKind.RATE_LIMITED: "the gateway is rate limiting requests",
        GatewayErrorKind.PROVIDER_UNAVAILABLE: "the provider is unavailable" if status >= 500
        else "the gateway refused the request",
    }[kind]
    failure = GatewayFailure(kind=kind, message=redact(f"{what} (HTTP {status}){quoted}"), status=status)
    return RetryableFailure(failure, retry_after(headers)) if retryable else failure


def _where(location: str | None) -> str:
    """A redirect's target without its query or credentials (both may carry secrets)."""
    if not location:
        return "nowhere"
    try:
        parts = urlsplit(location)
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return "an unreadable address"
    host = parts.hostname or ""
    return f"{parts.scheme}://{host}{port}{parts.path}" if parts.scheme else parts.path


def for_exception(error: aiohttp.ClientError | TimeoutError, redact: Redactor) -> RetryableFailure:
    """A transport failure: timeouts and broken connections are always worth another attempt."""
    if isinstance(error, TimeoutError):  # aiohttp's socket timeouts are TimeoutErrors too
        if isinstance(error, aiohttp.ConnectionTimeoutError):
            where = "connecting, or waiting for a free connection"
        elif isinstance(error, aiohttp.SocketTimeoutError):
            where = "waiting for the answer"
        else:
            where = "waiting for the whole answer"
        return RetryableFailure(GatewayFailure(kind=GatewayErrorKind.TIMEOUT,
                                               message=f"the gateway did not answer in time ({where})"))
    reason = type(error).__name__
    detail = str(error).splitlines()[0] if str(error) else ""
    message = f"could not reach the gateway ({reason}{': ' + detail if detail else ''})"
    return RetryableFailure(GatewayFailure(kind=GatewayErrorKind.NETWORK, message=redact(message)))


def unusable(message: str, status: int | None, redact: Redactor) -> GatewayFailure:
    """A 2xx answer we cannot use (too large, not JSON, not the expected shape): not retried."""
    return GatewayFailure(kind=GatewayErrorKind.PROVIDER_UNAVAILABLE, message=redact(message), status=status)


def retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds from `retry-after-ms` (OpenAI's), or `Retry-After` as seconds or an HTTP date."""
    raw_ms = headers.get("retry-after-ms")
    if raw_ms:
        try:
            return max(float(raw_ms) / 1000.0, 0.0)
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if not raw:
        return None
    try:
        return max(float(raw), 0.0)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    return max(when.timestamp() - time.time(), 0.0)
