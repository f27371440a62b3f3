"""Settings of the classification service. Pure data: building one loads nothing."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import attrs
from attrs import validators as v

from hexmcp.tools.embedding import QUANTIZATIONS

if TYPE_CHECKING:
    from hexmcp.tools.embedding.config import EncoderConfig


# Precisions under which a text's features come out of a padded batch bit for bit as they do alone
# (property-tested: test_classification_batch_invariance.py).
BATCH_INVARIANT = ("fp32", "int8row")


def _optional_path(value: object) -> Path | None:
    return None if value is None else Path(value).expanduser()


@attrs.frozen(kw_only=True)
class ClassificationConfig:
    # What to classify into. None: the built-in taxonomy (math, science, technology, history, general).
    taxonomy_path: Path | None = attrs.field(default=None, converter=_optional_path)
    # Embedding model. int8 by default: much faster than fp32, with accuracy in the same band.
    quantization: str = attrs.field(default="int8", validator=v.in_(QUANTIZATIONS))
    max_tokens: int = attrs.field(default=256, validator=[v.instance_of(int), v.ge(3), v.le(512)])
    max_text_chars: int = attrs.field(default=20_000, validator=[v.instance_of(int), v.ge(1)])
    # onnxruntime intra-op threads. 1: the inference pool's workers keep the cores busy, a pass each.
    threads: int = attrs.field(default=1, validator=[v.instance_of(int), v.ge(1)])
    # None: $HEXMCP_CACHE_DIR, else ~/.cache/hexmcp (resolved at start()).
    cache_dir: Path | None = attrs.field(default=None, converter=_optional_path)
    # Routing (routing.py).
    default_model: str = "llama-3.1-8b-instruct"  # for categories whose policy names no model
    low_confidence_threshold: float = attrs.field(default=0.5, validator=[v.ge(0.0), v.le(1.0)])
    fallback_model: str | None = None  # recommended instead when confidence is low; None: keep
    # A catch-all category that absorbs texts unlike any domain example; None disables the gate.
    general_category: str | None = "general"
    general_similarity_quantile: float = attrs.field(default=0.02, validator=[v.gt(0.0), v.lt(0.5)])
    # Classifier head (head.py).
    l2_penalty: float = attrs.field(default=1e-4, validator=v.gt(0.0))
    calibration_folds: int = attrs.field(default=5, validator=[v.instance_of(int), v.ge(2)])
    seed: int = 0
    # Inference pool (embedding/inference_pool.py). None: one worker per `threads` cores, so both cores of the
    # target machine each run a text.
    workers: int | None = attrs.field(default=None, validator=v.optional([v.instance_of(int), v.ge(1)]))
    max_queue: int = attrs.field(default=256, validator=[v.instance_of(int), v.ge(1)])
    # Places in that queue one client (ToolContext.client_id: a token digest or an address) may hold.
    # None: a quarter of max_queue.
    max_queue_per_client: int | None = attrs.field(default=None, validator=v.optional([v.instance_of(int), v.ge(1)]))
    request_timeout_s: float = attrs.field(default=10.0, validator=v.gt(0.0))
    # Nice steps the inference workers run below the event loop (Linux; 0: the same priority). Under load
    # the loop then gets a core at once to read requests and write answers, but on a machine shared with
    # other busy processes the workers also yield to those: off by default.
    worker_nice_increment: int = attrs.field(default=0, validator=[v.instance_of(int), v.ge(0), v.le(19)])

    # Micro-batching (ADR 1201, 1203): a worker runs up to `max_batch` requests that queued while it was
    # busy in shared passes, waiting at most `batch_window_ms` for more. Only with a batch-invariant model
    # (BATCH_INVARIANT): int8's per-tensor activation scales make an answer depend on its batch-mates, so
    # with int8 every text keeps a pass of its own whatever this says.
    max_batch: int = attrs.field(default=32, validator=[v.instance_of(int), v.ge(1), v.le(256)])  # flags.MAX_BATCH
    batch_window_ms: float = attrs.field(default=0.0, validator=[v.ge(0.0), v.le(50.0)])

    def batches(self) -> bool:
        """Whether requests share passes: only where a text's answer cannot depend on its batch-mates."""
        return self.quantization in BATCH_INVARIANT and self.max_batch > 1

    def encoder_config(self) -> EncoderConfig:
        from hexmcp.tools.embedding.config import EncoderConfig  # the encoder's settings load with the encoder

        return EncoderConfig(quantization=self.quantization, max_tokens=self.max_tokens, threads=self.threads)

    def pool_workers(self) -> int:
        if self.workers is not None:
            return self.workers
        return max(1, (os.cpu_count() or 1) // self.threads)
