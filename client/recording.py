"""Reproducible workflows: record tool calls with their result digests as JSON lines, replay them later.

A record file is JSON lines. The first line describes the session:
`{"kind": "session", "target", "server": {"name", "version"}, "protocolVersion", "recordedAt", "client"}`;
each further line is one call:
`{"kind": "call", "tool", "arguments", "digest", "isError", "ms", "result"}`.

The digest is the SHA-256 of the result's canonical JSON (sorted keys, no whitespace) without `_meta`,
where servers put per-response facts (server info, timing) that are not part of the answer, and
without a default `isError: false`. Replaying
runs every call again and reports each one whose digest differs, with both results.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import time
from typing import Any, Iterable, Iterator

import attrs

from .errors import ClientError, ClientErrorCode
from .mcp_client import CLIENT_INFO, McpClient

SESSION = "session"
CALL = "call"


def comparable(result: dict[str, Any]) -> dict[str, Any]:
    """The result as compared: without `_meta`, and `isError: false` dropped (it is the default: servers
    that write it and servers that omit it give the same answer)."""
    return {k: v for k, v in result.items() if k != "_meta" and not (k == "isError" and v is False)}


def digest(result: dict[str, Any]) -> str:
    canonical = json.dumps(comparable(result), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()


@attrs.frozen(kw_only=True)
class CallSpec:
    """One call to make: a tool and its arguments."""

    tool: str
    arguments: dict[str, Any] = attrs.field(factory=dict)

    @classmethod
    def from_json(cls, value: Any, where: str) -> CallSpec:
        if not isinstance(value, dict) or not isinstance(value.get("tool"), str):
            raise ClientError(ClientErrorCode.USAGE, f"{where}: expected {{\"tool\": NAME, \"arguments\": {{...}}}}")
        arguments = value.get("arguments", {})
        if not isinstance(arguments, dict):
            raise ClientError(ClientErrorCode.USAGE, f"{where}: 'arguments' must be an object")
        return cls(tool=value["tool"], arguments=arguments)


@attrs.frozen(kw_only=True)
class Difference:
    index: int  # the call's position in the record file, from 1
    tool: str
    arguments: dict[str, Any]
    recorded: dict[str, Any] | None
    replayed: dict[str, Any] | None
    error: str | None = None  # the replayed call failed instead of answering

    def to_json(self) -> dict[str, Any]:
        return attrs.asdict(self)


def read_specs(lines: Iterable[str], source: str) -> Iterator[CallSpec]:
    """Calls to make, one JSON object per line (blank lines and `#` comments skipped)."""
    for number, line in enumerate(lines, 1):
        if line.strip() and not line.lstrip().startswith("#"):
            try:
                value = json.loads(line)
            except ValueError as error:
                raise ClientError(ClientErrorCode.USAGE, f"{source}:{number}: not JSON ({error})") from None
            yield CallSpec.from_json(value, f"{source}:{number}")


async def record(client: McpClient, specs: Iterable[CallSpec], out: Any) -> int:
    """Make each call and write the session line and one line per call to `out`; returns the calls made."""
    info = client.server_info
    header = {"kind": SESSION, "target": str(client.target),
              "server": {"name": info.name, "version": info.version} if info else None,
              "protocolVersion": client.protocol_version,
              "recordedAt": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "client": {"name": CLIENT_INFO.name, "version": CLIENT_INFO.version}}
    _write(out, header)
    made = 0
    for spec in specs:
        started = time.perf_counter()
        result = await client.request("tools/call", {"name": spec.tool, "arguments": spec.arguments})
        elapsed_ms = (time.perf_counter() - started) * 1000
        _write(out, {"kind": CALL, "tool": spec.tool, "arguments": spec.arguments, "digest": digest(result),
                     "isError": bool(result.get("isError")), "ms": round(elapsed_ms, 3),
                     "result": comparable(result)})
        made += 1
    return made


def read_record(lines: Iterable[str], source: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The session line and the call lines of a record file."""
    session: dict[str, Any] | None = None
    calls: list[dict[str, Any]] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except ValueError as error:
            raise ClientError(ClientErrorCode.USAGE, f"{source}:{number}: not JSON ({error})") from None
        kind = value.get("kind") if isinstance(value, dict) else None
        if kind == SESSION and session is None:
            session = value
        elif kind == CALL and isinstance(value.get("digest"), str):
            CallSpec.from_json(value, f"{source}:{number}")
            calls.append(value)
        else:
            raise ClientError(ClientErrorCode.USAGE, f"{source}:{number}: not a session or call line of a record file")
    if session is None:
        raise ClientError(ClientErrorCode.USAGE, f"{source}: no session line: not a record file")
    return session, calls


async def replay(client: McpClient, calls: list[dict[str, Any]]) -> list[Difference]:
    """Every recorded call whose result now differs (or now fails), in order."""
    differences: list[Difference] = []
    for index, call in enumerate(calls, 1):
        try:
            result = await client.request("tools/call", {"name": call["tool"], "arguments": call.get("arguments", {})})
        except ClientError as error:
            if error.code in (ClientErrorCode.UNREACHABLE, ClientErrorCode.UNAUTHORIZED):
                raise  # the target is gone: the remaining calls cannot be judged
            differences.append(Difference(index=index, tool=call["tool"], arguments=call.get("arguments", {}),
                                          recorded=call.get("result"), replayed=None, error=error.message))
            continue
        if digest(result) != call["digest"]:
            differences.append(Difference(index=index, tool=call["tool"], arguments=call.get("arguments", {}),
                                          recorded=call.get("result"),
                                          replayed=comparable(result)))
    return differences


def _write(out: Any, value: dict[str, Any]) -> None:
    out.write(json.dumps(value, ensure_ascii=False, separators=(",", ":")) + "\n")
    out.flush()
