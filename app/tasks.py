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
    warn_if_unreachable(args.task_store)


REACH_TIMEOUT_S = 1.0
"""How long start-up waits for the Redis task store's answer: a store that is down delays start by this, once."""


def warn_if_unreachable(url: str) -> None:
    """Ask the Redis task store once at start-up, and say so when it does not answer. A shared store may come
    up after the server (an orchestrator starts both at once), so this is a warning, not a refusal, as for
    an unreachable OAuth issuer, upstream or Qdrant; without it the first task call was the first sign."""
    import redis
    import structlog

    client = redis.Redis.from_url(url, socket_connect_timeout=REACH_TIMEOUT_S, socket_timeout=REACH_TIMEOUT_S)
    try:
        client.ping()
    except (redis.RedisError, OSError) as error:
        structlog.get_logger("hexmcp.app.tasks").warning(
            "the task store does not answer; task-augmented calls fail until it does",
            store=_without_password(url), error=f"{type(error).__name__}: {error}")
    finally:
        client.close()


def _without_password(url: str) -> str:
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    if parts.password is None:
        return url
    return parts._replace(netloc=parts.netloc.replace(f":{parts.password}@", ":***@", 1)).geturl()


def _store_spec(text: str) -> str:
    if text == "memory":
        return text
    if text.startswith(("redis://", "rediss://", "unix://")):
        if (problem := _redis_url_problem(text)) is not None:
            raise argparse.ArgumentTypeError(f"{_without_password(text)!r}: {problem}")
        return text
    raise argparse.ArgumentTypeError(f"{text!r}: expected memory, redis://HOST:PORT/DB, rediss://HOST:PORT/DB (TLS) "
                                     "or unix://PATH")


def _redis_url_problem(url: str) -> str | None:
    """What makes a redis:// or unix:// URL unusable, or None. redis-py reads `redis://` with no host as
    localhost:6379 and a port that is not a number only at the first call: both are refused here instead."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    if parts.scheme == "unix":
        return None if parts.path else "names no socket path (unix:///path/to/redis.sock)"
    if not parts.hostname:
        return "names no host (redis://HOST:PORT/DB)"
    try:
        port = parts.port
    except ValueError:
        return "has a port that is not a number from 0 to 65535"
    if port == 0:
        return "has port 0"
    db = parts.path.strip("/")
    if db and not db.isdigit():
        return f"the database must be a number, got {db!r}"
    return None
