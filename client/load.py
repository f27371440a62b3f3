"""A quick load figure for operators: one tool called by N concurrent callers for S seconds.

Every caller shares one client (one connection, one session), as an application would; calls are
counted when answered, errors by their code. Latency percentiles are over answered calls.
"""

from __future__ import annotations

import asyncio
import collections
import statistics
import time
from typing import Any

import attrs

from .errors import ClientError
from .mcp_client import McpClient


@attrs.frozen(kw_only=True)
class LoadFigures:
    calls: int
    seconds: float
    calls_per_s: float
    p50_ms: float | None
    p99_ms: float | None
    tool_errors: int  # answered with isError
    errors: dict[str, int]  # failed, by ClientErrorCode value

    def to_json(self) -> dict[str, Any]:
        return attrs.asdict(self)


async def run_load(client: McpClient, tool: str, arguments: dict[str, Any], *, concurrency: int,
                   duration_s: float) -> LoadFigures:
    latencies: list[float] = []
    errors: collections.Counter[str] = collections.Counter()
    tool_errors = 0
    deadline = time.perf_counter() + duration_s

    async def caller() -> None:
        nonlocal tool_errors
        while time.perf_counter() < deadline:
            started = time.perf_counter()
            try:
                result = await client.request("tools/call", {"name": tool, "arguments": arguments})
            except ClientError as error:
                errors[error.code.value] += 1
                continue
            latencies.append(time.perf_counter() - started)
            tool_errors += bool(result.get("isError"))

    started = time.perf_counter()
    await asyncio.gather(*(caller() for _ in range(concurrency)))
    elapsed = time.perf_counter() - started
    ordered = sorted(latencies)
    return LoadFigures(calls=len(ordered), seconds=round(elapsed, 3), calls_per_s=round(len(ordered) / elapsed, 1),
                       p50_ms=round(statistics.median(ordered) * 1000, 3) if ordered else None,
                       p99_ms=round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000, 3) if ordered else None,
                       tool_errors=tool_errors, errors=dict(errors))
