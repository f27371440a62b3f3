"""The refusals of an OAuth resource server, with the `WWW-Authenticate` challenges clients act on
(RFC 6750 §3, RFC 9728 §5.1): 401 with `resource_metadata` (where to learn which authorization server
to ask) when there is no usable token, `error="invalid_token"` when the token was refused, and 403
`error="insufficient_scope"` naming the scopes the request needs."""

from __future__ import annotations

import re
from typing import Iterable

from hexmcp.core import ErrorCode

from ..guard import Refusal

_UNSAFE = re.compile(r'[^\x20\x21\x23-\x5b\x5d-\x7e]')  # RFC 6750 §3: what error_description may hold


def _param(name: str, value: str) -> str:
    return f'{name}="{_UNSAFE.sub("?", value)}"'


class Challenges:
    def __init__(self, *, metadata_url: str | None, scopes: Iterable[str] = ()) -> None:
        self._metadata = [_param("resource_metadata", metadata_url)] if metadata_url else ['realm="hexmcp"']
        offered = " ".join(sorted(scopes))
        params = [*self._metadata, *([_param("scope", offered)] if offered else [])]
        self.missing = self._refusal(ErrorCode.UNAUTHORIZED, "Unauthorized: a valid bearer token is required", params)

    @staticmethod
    def _refusal(code: ErrorCode, message: str, params: list[str]) -> Refusal:
        return Refusal(code=code, message=message, headers=((b"www-authenticate", ("Bearer " + ", ".join(params)).encode()),))

    def invalid(self, description: str) -> Refusal:
        params = [_param("error", "invalid_token"), _param("error_description", description), *self._metadata]
        return self._refusal(ErrorCode.UNAUTHORIZED, f"Unauthorized: {description}", params)

    def insufficient(self, needed: frozenset[str], granted: frozenset[str] | None) -> Refusal:
        """403 naming what the request needs together with what was granted already, so a client that
        re-authorizes with these scopes keeps the permissions it had (the MCP spec's recommended approach)."""
        scope = " ".join(sorted(needed | (granted or frozenset())))
        missing = " ".join(sorted(needed - (granted or frozenset())))
        params = [_param("error", "insufficient_scope"), _param("scope", scope), *self._metadata,
                  _param("error_description", f"this request needs scope {missing}")]
        return self._refusal(ErrorCode.FORBIDDEN, f"Forbidden: this request needs scope {missing}", params)
