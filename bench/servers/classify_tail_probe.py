"""`hexmcp serve` with a timestamp at every stage of every classify_text request, and every GC pause.

    python bench/servers/classify_tail_probe.py OUT.json serve --port N [serve's other flags]

Used by `bench/classify_tail.py` to find where the slowest requests at 16 callers lose their time. It
runs the real command (`hexmcp.app.cli.main`) of whichever checkout the interpreter imports
`hexmcp` from (this one, or main's for a before/after), after wrapping, for this process only:
- uvicorn's parser callback that begins a request (`arrived`: the event loop has read its first bytes);
- `InferencePool.submit` (`enqueued`, and `resumed`: the caller's coroutine runs again with the answer)
  and the pool's `process` (`started`, `ended` and the worker thread's CPU time for the pass);
- the ASGI send of the response's last body part (`sent`: handed to the transport, written at the end
  of that loop pass);
- `gc.callbacks`: start, duration and generation of every collection, and the thread it ran on.
On SIGTERM the server stops as usual and the records are written to OUT.json at exit.

The wrappers reach into uvicorn and the pool on purpose (a probe, never the product): they add a few
perf_counter calls and one dict of floats per request. Those dicts hold only floats, so the cyclic
collector does not track them and the probe does not feed the collections it measures.
"""

from __future__ import annotations

import atexit
import contextvars
import gc
import json
import sys
import threading
import time
from pathlib import Path
from typing import Any

_clock = time.perf_counter
_records: list[dict[str, float]] = []
_collections: list[tuple[float, float, int, int]] = []  # (start, seconds, generation, native thread id)
_current: contextvars.ContextVar[dict[str, float] | None] = contextvars.ContextVar("probe_record", default=None)
_ARRIVED = "probe.arrived"


def _watch_collections() -> None:
    started: dict[int, float] = {}

    def callback(phase: str, info: dict[str, Any]) -> None:
        thread = threading.get_native_id()
        if phase == "start":
            started[thread] = _clock()
        elif thread in started:
            begin = started.pop(thread)
            _collections.append((begin, _clock() - begin, info["generation"], thread))

    gc.callbacks.append(callback)


def _wrap_http() -> None:
    from uvicorn.protocols.http import httptools_impl

    from hexmcp.adapters.http.uvicorn_fence import GuardedHttpToolsProtocol

    begin = GuardedHttpToolsProtocol.on_message_begin

    def on_message_begin(self: Any) -> None:
        arrived = _clock()
        begin(self)
        self.scope[_ARRIVED] = arrived

    GuardedHttpToolsProtocol.on_message_begin = on_message_begin  # type: ignore[method-assign]

    cycle = httptools_impl.RequestResponseCycle
    run_asgi, send = cycle.run_asgi, cycle.send

    async def run_asgi_recorded(self: Any, app: Any) -> None:
        record = {"arrived": self.scope.get(_ARRIVED, _clock())}
        _current.set(record)  # the request's own task: a copy of the context, seen by the tool call
        await run_asgi(self, app)
        if "enqueued" in record:  # a classification: keep it
            _records.append(record)

    async def send_recorded(self: Any, message: Any) -> None:
        await send(self, message)
        if message["type"] == "http.response.body" and not message.get("more_body", False):
            record = _current.get()
            if record is not None:
                record["sent"] = _clock()

    cycle.run_asgi = run_asgi_recorded  # type: ignore[method-assign]
    cycle.send = send_recorded  # type: ignore[method-assign]


def _wrap_pool() -> None:
    from hexmcp.tools.embedding import inference_pool

    pool_class = inference_pool.InferencePool
    init, submit = pool_class.__init__, pool_class.submit

    def init_recorded(self: Any, process: Any, **options: Any) -> None:
        def timed(entry: Any) -> Any:
            if not (isinstance(entry, tuple) and len(entry) == 2 and isinstance(entry[0], dict)):
                return process(entry)  # start-up work and other callers: not a probed request
            record, item = entry
            record["started"], cpu = _clock(), time.thread_time()
            try:
                return process(item)
            finally:
                record["ended"] = _clock()
                record["pass_cpu"] = time.thread_time() - cpu
                record["worker"] = threading.get_native_id()

        batch = options.get("process_batch")
        if batch is not None:  # micro-batching: each probed request records the pass it shared
            def timed_batch(entries: list[Any]) -> list[Any]:
                probed = [isinstance(e, tuple) and len(e) == 2 and isinstance(e[0], dict) for e in entries]
                records = [e[0] for e, p in zip(entries, probed) if p]
                started, cpu = _clock(), time.thread_time()
                try:
                    return batch([e[1] if p else e for e, p in zip(entries, probed)])
                finally:
                    ended, used = _clock(), time.thread_time() - cpu
                    for record in records:
                        record.update(started=started, ended=ended, pass_cpu=used / len(entries),
                                      worker=threading.get_native_id(), batch=len(entries))

            options = {**options, "process_batch": timed_batch}
        init(self, timed, **options)

    async def submit_recorded(self: Any, item: Any, owner: str | None = None) -> Any:
        record = _current.get()
        if record is None:
            return await submit(self, item, owner)
        record["enqueued"] = _clock()
        record["outstanding"] = self.waiting
        try:
            return await submit(self, (record, item), owner)
        finally:
            record["resumed"] = _clock()

    pool_class.__init__ = init_recorded  # type: ignore[method-assign]
    pool_class.submit = submit_recorded  # type: ignore[method-assign]


def _write(path: Path) -> None:
    path.write_text(json.dumps({"loop_thread": threading.main_thread().native_id, "requests": _records,
                                "collections": _collections, "gc_frozen": gc.get_freeze_count(),
                                "gc_tracked": len(gc.get_objects())}))


def main() -> int:
    out = Path(sys.argv[1])
    from hexmcp.app.cli import main as hexmcp_main  # first: it imports its modules with collection paused

    _watch_collections()
    _wrap_http()
    _wrap_pool()
    atexit.register(_write, out)

    return hexmcp_main(sys.argv[2:])


if __name__ == "__main__":
    sys.exit(main())
