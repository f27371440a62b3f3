"""The tasks extension's flags (`--task-store`, `--task-ttl`, `--task-poll-interval`, `--max-tasks-per-client`)
and the store they name, for the composition root (cli.py)."""

from __future__ import annotations

import argparse

from hexmcp.core import McpServer, TaskLimits
from hexmcp.core.tasks.memory_store import MemoryTaskStore

from hexmcp.tools.flag_types import positive_int

DEFAULTS = TaskLimits()


def add_task_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--task-store", default="memory", type=_store_spec, metavar="SPEC",
                        help="where long-running tool calls (tasks) live: memory (default, this process) or "
                             "redis://HOST:PORT/DB (rediss:// for TLS), shared by --stateless replicas")
    parser.add_argument("--task-ttl", type=positive_int, default=DEFAULTS.ttl_ms, metavar="MS",
                        help=f"how long a finished task's result is kept (default {DEFAULTS.ttl_ms} ms)")
    parser.add_argument("--task-poll-interval", type=positive_int, default=DEFAULTS.poll_interval_ms, metavar="MS",
                        help=f"the pollIntervalMs suggested to clients (default {DEFAULTS.poll_interval_ms} ms)")
    parser.add_argument("--max-tasks-per-client", type=positive_int, default=DEFAULTS.max_active_per_client,
                        metavar="N", help="unfinished tasks one client may have at once; one more is refused as busy "
                                          f"(default {DEFAULTS.max_active_per_client})")


def configure_tasks(server: McpServer, args: argparse.Namespace) -> None:
    limits = TaskLimits(ttl_ms=args.task_ttl, poll_interval_ms=args.task_poll_interval,
                        max_active_per_client=args.max_tasks_per_client)
    if args.task_store == "memory":
        server.use_task_store(MemoryTaskStore(), limits)
        return
    from .extras import require

    require(f"--task-store {args.task_store.split(':', 1)[0]}://", "redis", ("redis",))
    from hexmcp.adapters.task_store_redis import RedisTaskStore

    server.use_task_store(RedisTaskStore(args.task_store), limits)


def _store_spec(text: str) -> str:
    if text == "memory" or text.startswith(("redis://", "rediss://", "unix://")):
        return text
    raise argparse.ArgumentTypeError(f"{text!r}: expected memory, redis://HOST:PORT/DB, rediss://HOST:PORT/DB (TLS) "
                                     "or unix://PATH")
