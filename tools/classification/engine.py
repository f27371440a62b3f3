"""The synchronous classifier: encoder + calibrated head + general gate + router.

Built once by the service (in a worker thread), then called by the inference pool's worker threads
(read-only after the build, so they can share it).
Heavy imports live here, never in modules the server imports at start-up.
"""

from __future__ import annotations

import time

import attrs
import numpy as np
import structlog

from hexmcp.tools.embedding.converter_version import CONVERTER_VERSION
from hexmcp.tools.embedding.encoder import SentenceEncoder, features_key, open_encoder
from hexmcp.tools.embedding.model_files import MODEL_ID, locate_model_files, memoised_sha256
from hexmcp.tools.embedding.segments import EncodedTexts

from . import embedding_cache
from .config import ClassificationConfig
from .general_gate import GeneralGate, build_gate
from .head import HeadSettings, SoftmaxHead, entropy_of, train_head
from .preflight import cache_dir_of
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

    def probabilities(self, encoded: EncodedTexts) -> np.ndarray:
        probabilities = self.head.probabilities(encoded.text_features())
        if self.gate is not None:
            probabilities = self.gate.apply(probabilities, encoded.sentences.astype(np.float64))
        return probabilities / probabilities.sum(axis=1, keepdims=True)

    def classify(self, text: str) -> Prediction:
        """One text in a pass of its own (the int8 model: its answers would depend on batch-mates)."""
        return self.predict(text, *self.encoder.embed_one(text))

    def classify_many(self, texts: list[str]) -> list[Prediction]:
        """A micro-batch of requests in shared passes (fp32, int8row: see SentenceEncoder.embed_many). Each
        text's head runs on its own vector, so its answer is the one it gets in a batch of one."""
        return [self.predict(text, *pair) for text, pair in zip(texts, self.encoder.embed_many(texts))]

    def predict(self, text: str, sentence32: np.ndarray, rows: np.ndarray) -> Prediction:
        """`probabilities` for one text, in as few numpy calls as the arithmetic allows: this runs on
        every request, right after the forward pass, when each call costs several times its warm
        price."""
        features = rows[0].astype(np.float64) if len(rows) == 1 else rows.astype(np.float64).mean(axis=0)
        matrix, offset = self.head.folded
        logits = features @ matrix + offset
        probs = np.exp(logits - logits.max())
        probs /= probs.sum()
        sentence = sentence32.astype(np.float64)
        if self.gate is not None:
            probs = self.gate.apply_one(probs, sentence)
        index = int(np.argmax(probs))
        confidence = float(probs[index])
        route = self.router.decide(index, confidence, text, sentence)
        return Prediction(
            class_index=index,
            confidence=confidence,
            probabilities=tuple(probs.tolist()),
            entropy=entropy_of(probs),
            model=route.model,
            use_reasoning=route.use_reasoning,
        )


def build_engine(config: ClassificationConfig, taxonomy: Taxonomy) -> ClassifierEngine:
    cache_dir = cache_dir_of(config)
    started = time.perf_counter()
    files = locate_model_files()
    digest = memoised_sha256(files.weights, cache_dir / "models")
    encoder = open_encoder(files, cache_dir, digest, config.encoder_config())
    model_key = features_key(MODEL_ID, digest, CONVERTER_VERSION, config.quantization, config.max_tokens)
    loaded = time.perf_counter()
    workers = config.pool_workers()

    def embed(texts: list[str]) -> EncodedTexts:
        return embedding_cache.load_or_compute(
            cache_dir, model_key, texts, encoder.dimension, lambda batch: encoder.encode(batch, workers)
        )

    texts, labels = taxonomy.examples_with_labels()
    examples = embed(texts)
    exemplars = load_exemplars()
    reasoning = embed(exemplars["reasoning"]).sentences.astype(np.float64)
    simple = embed(exemplars["simple"]).sentences.astype(np.float64)
    embedded = time.perf_counter()

    head, gate = train_classifier(examples, np.asarray(labels), taxonomy, config)
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
    examples: EncodedTexts, labels: np.ndarray, taxonomy: Taxonomy, config: ClassificationConfig
) -> tuple[SoftmaxHead, GeneralGate | None]:
    settings = HeadSettings(l2_penalty=config.l2_penalty, folds=config.calibration_folds, seed=config.seed)
    head = train_head(
        examples.text_features(),
        labels,
        len(taxonomy.categories),
        settings,
        rows=(examples.segments, examples.owners()),
    )
    general_index = taxonomy.index_of(config.general_category) if config.general_category else None
    gate = None
    if general_index is not None:
        sentences = examples.sentences.astype(np.float64)
        gate = build_gate(sentences, labels, general_index, config.general_similarity_quantile)
    return head, gate
