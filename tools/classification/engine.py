"""The synchronous classifier: encoder + calibrated head + general gate + router.

Built once by the service (in a worker thread) and then driven only by the batcher's worker thread.
Heavy imports live here, never in modules the server imports at start-up.
"""

from __future__ import annotations

import time
from pathlib import Path

import attrs
import numpy as np
import structlog

from . import embedding_cache, model_cache
from .config import ClassificationConfig
from .encoder import SentenceEncoder
from .general_gate import GeneralGate, build_gate
from .head import HeadSettings, SoftmaxHead, entropy_nats, train_head
from .model_files import MODEL_ID, file_sha256, locate_model_files
from .onnx_export import CONVERTER_VERSION
from .routing import Router, RoutingSettings, load_exemplars
from .taxonomy import Taxonomy

log = structlog.get_logger(__name__)


@attrs.frozen(kw_only=True)
class Prediction:
    class_index: int
    confidence: float
    probabilities: tuple[float, ...]
    entropy: float
    model: str
    use_reasoning: bool


@attrs.frozen(kw_only=True)
class BuildStats:
    model_seconds: float
    embed_seconds: float
    train_seconds: float
    examples: int
    temperature: float
    model_id: str


@attrs.frozen(kw_only=True, eq=False)
class ClassifierEngine:
    taxonomy: Taxonomy
    encoder: SentenceEncoder
    head: SoftmaxHead
    gate: GeneralGate | None
    router: Router
    stats: BuildStats

    def features(self, texts: list[str]) -> np.ndarray:
        return self.encoder.forward(self.encoder.tokenize(texts)).astype(np.float64)

    def probabilities(self, features: np.ndarray) -> np.ndarray:
        probabilities = self.head.probabilities(features)
        if self.gate is not None:
            probabilities = self.gate.apply(probabilities, features[:, : self.encoder.dimension])
        return probabilities / probabilities.sum(axis=1, keepdims=True)

    def classify(self, texts: list[str]) -> list[Prediction]:
        features = self.features(texts)
        probabilities = self.probabilities(features)
        entropies = entropy_nats(probabilities)
        predictions = []
        for text, row, probs, entropy in zip(texts, features, probabilities, entropies):
            index = int(np.argmax(probs))
            confidence = float(probs[index])
            route = self.router.decide(index, confidence, text, row[: self.encoder.dimension])
            predictions.append(
                Prediction(
                    class_index=index,
                    confidence=confidence,
                    probabilities=tuple(float(p) for p in probs),
                    entropy=float(entropy),
                    model=route.model,
                    use_reasoning=route.use_reasoning,
                )
            )
        return predictions


def build_engine(config: ClassificationConfig, taxonomy: Taxonomy) -> ClassifierEngine:
    cache_dir = Path(config.cache_dir) if config.cache_dir else model_cache.default_cache_dir()
    started = time.perf_counter()
    files = locate_model_files()
    digest = file_sha256(files.weights)
    model_path = model_cache.load_or_build(files, cache_dir, config.quantization, digest)
    try:
        encoder = SentenceEncoder(model_path, files.tokenizer, config.max_tokens, config.threads)
    except Exception as exc:  # verified bytes that onnxruntime still rejects: say so plainly
        raise model_cache.ModelCacheError(f"onnxruntime cannot load {model_path}: {exc}") from exc
    model_key = f"{MODEL_ID}@{digest[:16]}-c{CONVERTER_VERSION}-{config.quantization}-t{config.max_tokens}"
    loaded = time.perf_counter()

    def embed(texts: list[str]) -> np.ndarray:
        return embedding_cache.load_or_compute(cache_dir, model_key, texts, encoder.width, encoder.encode)

    texts, labels = taxonomy.examples_with_labels()
    features = embed(texts).astype(np.float64)
    exemplars = load_exemplars()
    reasoning = embed(exemplars["reasoning"])[:, : encoder.dimension].astype(np.float64)
    simple = embed(exemplars["simple"])[:, : encoder.dimension].astype(np.float64)
    embedded = time.perf_counter()

    head, gate = train_classifier(features, np.asarray(labels), taxonomy, config, encoder.dimension)
    trained = time.perf_counter()

    router = Router(
        taxonomy=taxonomy,
        settings=RoutingSettings(
            default_model=config.default_model,
            low_confidence_threshold=config.low_confidence_threshold,
            fallback_model=config.fallback_model,
        ),
        reasoning_exemplars=reasoning,
        simple_exemplars=simple,
    )
    stats = BuildStats(
        model_seconds=loaded - started,
        embed_seconds=embedded - loaded,
        train_seconds=trained - embedded,
        examples=len(texts),
        temperature=head.temperature,
        model_id=model_key,
    )
    log.info("classifier ready", **attrs.asdict(stats))
    return ClassifierEngine(taxonomy=taxonomy, encoder=encoder, head=head, gate=gate, router=router, stats=stats)


def train_classifier(
    features: np.ndarray, labels: np.ndarray, taxonomy: Taxonomy, config: ClassificationConfig, dimension: int
) -> tuple[SoftmaxHead, GeneralGate | None]:
    settings = HeadSettings(l2_penalty=config.l2_penalty, folds=config.calibration_folds, seed=config.seed)
    head = train_head(features, labels, len(taxonomy.categories), settings)
    general_index = taxonomy.index_of(config.general_category) if config.general_category else None
    gate = None
    if general_index is not None:
        gate = build_gate(features[:, :dimension], labels, general_index, config.general_similarity_quantile)
    return head, gate
