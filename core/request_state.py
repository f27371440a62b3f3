"""The `requestState` of 2026-07-28 multi round-trip requests: answers gathered so far, sealed.

The server keeps nothing between rounds (any instance behind a load balancer may get the retry), so
the answers the client already gave travel in `requestState`. They are HMAC-signed so a client cannot
forge answers to questions the server never asked; instances that share a secret accept each
other's state.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from typing import Any

from .errors import ErrorCode, ProtocolError


class RequestStateSealer:
    def __init__(self, secret: bytes) -> None:
        self._secret = secret

    def seal(self, answers: dict[str, Any], method: str, name: str | None) -> str:
        payload = json.dumps({"m": method, "n": name, "a": answers}, separators=(",", ":"), sort_keys=True).encode()
        mac = hmac.new(self._secret, payload, hashlib.sha256).digest()[:16]
        return f"{_b64(payload)}.{_b64(mac)}"

    def open(self, state: str, method: str, name: str | None) -> dict[str, Any]:
        try:
            encoded_payload, encoded_mac = state.split(".")
            payload, mac = _unb64(encoded_payload), _unb64(encoded_mac)
        except ValueError:
            raise ProtocolError(ErrorCode.INVALID_PARAMS, "requestState is malformed",
                                {"path": "$.requestState"}) from None
        expected = hmac.new(self._secret, payload, hashlib.sha256).digest()[:16]
        if not hmac.compare_digest(mac, expected):
            raise ProtocolError(ErrorCode.INVALID_PARAMS, "requestState was not issued by this server",
                                {"path": "$.requestState"})
        content = json.loads(payload)
        if content.get("m") != method or content.get("n") != name:
            raise ProtocolError(ErrorCode.INVALID_PARAMS, "requestState belongs to a different request",
                                {"path": "$.requestState"})
        return content["a"]


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
