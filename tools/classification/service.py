"""ClassificationService: the async surface the MCP tools call.

Importing this module is cheap (no numpy, onnxruntime, tokenizers or onnx): they are imported by
start(), which runs the heavy work in a worker thread so the event loop keeps serving.
"""

from __future__ import annotations

import asyncio
import collections
import os
from typing import TYPE_CHECKING, Any

import attrs

from hexmcp.tools.embedding.errors import ServiceNotReadyError

from .config import ClassificationConfig
from .validation import validate_flag, validate_text

if TYPE_CHECKING:
    from hexmcp.tools.embedding.inference_pool import InferencePool

    from .engine import ClassifierEngine
    from .taxonomy import Taxonomy


@attrs.frozen(kw_only=True)
class ClassifierCounters:
    """Counts since start-up, for metrics."""

    by_category: dict[str, int]
    """Classifications answered, by the category chosen."""
    queue_depth: int
    """Classifications submitted and not yet answered (queued or running)."""
    workers: int
    completed: int
    """Passes the workers finished (answered or failed)."""
    dropped: int
    """Queued work dropped because nobody waited for it any more."""
    model_seconds: float
    """Time the workers spent in the model and the head, summed."""


class ClassificationService:
    def __init__(self, config: ClassificationConfig) -> None:
        self.config = config
        self._engine: ClassifierEngine | None = None
        self._pool: InferencePool | None = None
        self._taxonomy: Taxonomy | None = None
        self._listing: tuple[Taxonomy, dict[str, Any]] | None = None  # list_categories' answer, per taxonomy
        # Answers per category index, for metrics read at scrape time (one dict increment per answer).
        self._answers: collections.Counter[int] = collections.Counter()
        self._start_lock = asyncio.Lock()
        self._taxonomy_lock = asyncio.Lock()

    @classmethod
    def from_config(cls, config: ClassificationConfig) -> ClassificationService:
        return cls(config)

    @property
    def ready(self) -> bool:
        return self._pool is not None

    async def start(self) -> None:
        """Loads (or converts) the model, embeds the taxonomy and trains the head. Idempotent;
        concurrent callers wait for the one start in progress."""
        if self.ready:
            return
        async with self._start_lock:
            if self.ready:
                return
            engine = await asyncio.to_thread(self._build)
            from hexmcp.tools.embedding.inference_pool import InferencePool

            self._engine = engine
            self._pool = InferencePool(
                engine.classify,
                workers=self.config.pool_workers(),
                max_queue=self.config.max_queue,
                timeout=self.config.request_timeout_s,
                max_per_owner=self.config.max_queue_per_client,
                nice_increment=self.config.worker_nice_increment,
                **self._batching(engine),
            )

    def _batching(self, engine: ClassifierEngine) -> dict[str, Any]:
        """The pool's micro-batching options: none for int8, whose answers depend on their batch-mates.
        With them every request goes through classify_many, a lone one too, so its answer is one function
        of its text."""
        if not self.config.batches():
            return {}
        return {"process_batch": engine.classify_many, "max_batch": self.config.max_batch,
                "batch_window_s": self.config.batch_window_ms / 1000}

    def prepare_model(self) -> None:
        """Checks the model package and the cache directory and converts the model if it is not cached
        yet (blocking: call it before serving). Raises ModelFilesError, CacheDirError or ModelCacheError,
        so a machine that can never load the model fails at start-up instead of at the first call."""
        from .preflight import prepare_model

        prepare_model(self.config)

    @property
    def taxonomy_loaded(self) -> bool:
        """Whether `taxonomy` answers without waiting (a check cheaper than awaiting `ensure_taxonomy`)."""
        return self._taxonomy is not None or self._engine is not None

    async def ensure_taxonomy(self) -> Taxonomy:
        """The taxonomy alone, loaded (once) without the model: list_categories needs nothing more,
        so it can answer while the model is still loading. Raises TaxonomyError like start()."""
        if self._taxonomy is None:
            async with self._taxonomy_lock:
                if self._taxonomy is None:
                    from .taxonomy import load_taxonomy

                    loaded = await asyncio.to_thread(load_taxonomy, self.config.taxonomy_path)
                    # start()'s worker thread may have loaded it meanwhile: keep the one the engine uses.
                    if self._taxonomy is None:
                        self._taxonomy = loaded
        return self._taxonomy

    def _build(self) -> ClassifierEngine:
        # OpenBLAS threads spin after every small matmul of the head and steal the cores onnxruntime
        # needs, slowing every batch. Must be set before numpy is imported;
        # setdefault keeps an operator's explicit choice.
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
        from .engine import build_engine

        # Reuse the taxonomy list_categories (or the CLI) may already have loaded, so both always agree.
        return build_engine(self.config, self.load_taxonomy_now())

    async def close(self) -> None:
        await asyncio.to_thread(self.shutdown)

    def shutdown(self) -> None:
        """Stops the inference workers (blocking; for the end of the process, off any event loop)."""
        if self._pool is not None:
            pool, self._pool = self._pool, None
            pool.close()

    def load_taxonomy_now(self) -> Taxonomy:
        """Loads the taxonomy synchronously, so a bad file fails start-up (TaxonomyError) rather than
        the first tool call; the model still loads later."""
        if self._taxonomy is None:
            from .taxonomy import load_taxonomy

            self._taxonomy = load_taxonomy(self.config.taxonomy_path)
        return self._taxonomy

    def _require_engine(self) -> ClassifierEngine:
        if self._engine is None:
            raise ServiceNotReadyError("the classification service has not been started")
        return self._engine

    @property
    def taxonomy(self) -> Taxonomy:
        if self._engine is None and self._taxonomy is not None:
            return self._taxonomy  # loaded by ensure_taxonomy(); the model may still be loading
        return self._require_engine().taxonomy

    def model_version(self) -> str | None:
        """The model answering now (id, weights digest, converter version, precision), None while it loads:
        what an audit line records so a classification can be reproduced."""
        return self._engine.stats.model_id if self._engine is not None else None

    def describe(self) -> dict[str, Any]:
        if self._engine is None:
            return {
                "ready": False,
                "model": "sentence-transformers/all-MiniLM-L6-v2",
                "quantization": self.config.quantization,
                "categories": [],
                "index_size": 0,
            }
        engine = self._engine
        stats = engine.stats
        return {
            "ready": self.ready,
            "model": stats.model_id,
            "quantization": self.config.quantization,
            "categories": engine.taxonomy.names,
            "index_size": stats.examples,
            "taxonomy_source": engine.taxonomy.source,
            "max_tokens": self.config.max_tokens,
            "threads": self.config.threads,
            "workers": self.config.pool_workers(),
            "worker_nice_increment": self.config.worker_nice_increment,
            "max_batch": self.config.max_batch if self.config.batches() else 1,
            "method": "softmax-regression[last|mid-layer segments]+temperature",
            "temperature": round(stats.temperature, 4),
            "general_gate": engine.gate is not None,
            "startup_seconds": {
                "model": round(stats.model_seconds, 3),
                "embed": round(stats.embed_seconds, 3),
                "train": round(stats.train_seconds, 3),
            },
        }

    def counters(self) -> ClassifierCounters:
        """What metrics read when scraped: answers per category and the inference pool's state."""
        pool = self._pool
        names = self._engine.taxonomy.names if self._engine is not None else []
        # dict() copies in one C call: a scrape on another thread (stdio's metrics server) never iterates
        # the counter while the event loop adds a category to it.
        by_category = {names[index] if index < len(names) else str(index): count
                       for index, count in dict(self._answers).items()}
        if pool is None:
            return ClassifierCounters(by_category=by_category, queue_depth=0, workers=0, completed=0, dropped=0,
                                      model_seconds=0.0)
        return ClassifierCounters(by_category=by_category, queue_depth=pool.waiting, workers=pool.workers,
                                  completed=pool.completed, dropped=pool.dropped, model_seconds=pool.busy_seconds)

    def list_categories(self) -> dict[str, Any]:
        """The taxonomy as list_categories answers it. Built once per taxonomy and shared by every call
        (a taxonomy never changes once loaded): callers must treat it as read-only."""
        taxonomy = self.taxonomy
        listing = self._listing
        if listing is None or listing[0] is not taxonomy:
            listing = self._listing = (taxonomy, {
                "categories": taxonomy.names,
                "category_system_prompts": {c.name: c.system_prompt for c in taxonomy.categories},
                "category_descriptions": {c.name: c.description for c in taxonomy.categories},
            })
        return listing[1]

    async def classify(self, text: str, with_probabilities: bool = False, client: str | None = None) -> dict[str, Any]:
        """`client` (`ToolContext.client_id`) bounds how much of the shared queue one client may hold."""
        text = validate_text(text, self.config.max_text_chars)
        with_probabilities = validate_flag(with_probabilities, "with_probabilities")
        if not self.ready:
            await self.start()
        assert self._pool is not None
        prediction = await self._pool.submit(text, client)
        self._answers[prediction.class_index] += 1
        result: dict[str, Any] = {
            "class": prediction.class_index,
            "confidence": prediction.confidence,
            "model": prediction.model,
            "use_reasoning": prediction.use_reasoning,
        }
        if with_probabilities:
            result["probabilities"] = list(prediction.probabilities)
            result["entropy"] = prediction.entropy  # nats
        return result
