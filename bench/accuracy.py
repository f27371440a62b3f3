"""Accuracy and macro-F1 on the MMLU-Pro fixed split: default method vs baselines, int8 and fp32.

    python bench/accuracy.py [--data PATH]   (default: bench/data/mmlu-pro/questions.csv)

Train = even rows, test = odd rows (see the data README). Everything is fitted on train only; the
test split is touched once, for the numbers printed here. Embeddings go through the same on-disk
cache as the service, so a second run skips the encoder.
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from pathlib import Path

import numpy as np
from hexmcp.tools.cache_dir import default_cache_dir
from hexmcp.tools.classification import ClassificationConfig, embedding_cache
from hexmcp.tools.classification.engine import train_classifier
from hexmcp.tools.classification.head import HeadSettings, train_head
from hexmcp.tools.classification.softmax_regression import fit, logits
from hexmcp.tools.classification.taxonomy import Category, RoutingPolicy, Taxonomy
from hexmcp.tools.embedding import model_cache
from hexmcp.tools.embedding.converter_version import CONVERTER_VERSION
from hexmcp.tools.embedding.encoder import SentenceEncoder, features_key
from hexmcp.tools.embedding.model_files import MODEL_ID, file_sha256, locate_model_files

DEFAULT_DATA = Path(__file__).resolve().parent / "data" / "mmlu-pro" / "questions.csv"


def read_split(path: Path) -> tuple[list[str], list[str], list[str], list[str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    train, test = rows[0::2], rows[1::2]
    return [r["text"] for r in train], [r["category"] for r in train], [r["text"] for r in test], [r["category"] for r in test]


def taxonomy_from(texts: list[str], labels: list[str]) -> Taxonomy:
    grouped: dict[str, list[str]] = {}
    for text, label in zip(texts, labels):
        grouped.setdefault(label, []).append(text)
    categories = tuple(
        Category(name=n, description=n, system_prompt="", routing=RoutingPolicy(), examples=tuple(t))
        for n, t in grouped.items()
    )
    return Taxonomy(categories=categories, source="mmlu-pro train split")


def knn_scores(query: np.ndarray, reference: np.ndarray, labels: np.ndarray, n_classes: int, k: int = 20) -> np.ndarray:
    """Similarity-weighted vote of the k nearest examples (the baseline to beat)."""
    similarity = query @ reference.T
    nearest = np.argsort(-similarity, axis=1)[:, :k]
    scores = np.zeros((len(query), n_classes))
    for row, neighbours in enumerate(nearest):
        np.add.at(scores[row], labels[neighbours], np.maximum(similarity[row, neighbours], 0.0))
    return scores


def centroid_scores(query: np.ndarray, reference: np.ndarray, labels: np.ndarray, n_classes: int) -> np.ndarray:
    centroids = np.stack([reference[labels == c].mean(axis=0) for c in range(n_classes)])
    return query @ (centroids / np.linalg.norm(centroids, axis=1, keepdims=True)).T


def macro_f1(truth: np.ndarray, predicted: np.ndarray, n_classes: int) -> float:
    scores = []
    for c in range(n_classes):
        tp = np.sum((predicted == c) & (truth == c))
        fp = np.sum((predicted == c) & (truth != c))
        fn = np.sum((predicted != c) & (truth == c))
        scores.append(0.0 if tp == 0 else 2 * tp / (2 * tp + fp + fn))
    return float(np.mean(scores))


def evaluate(quantization: str, data: Path, max_tokens: int, threads: int) -> list[tuple[str, float, float, float]]:
    train_x, train_y, test_x, test_y = read_split(data)
    taxonomy = taxonomy_from(train_x, train_y)
    names = taxonomy.names
    ytr = np.array([names.index(label) for label in train_y])
    yte = np.array([names.index(label) for label in test_y])
    k = len(names)

    files = locate_model_files()
    digest = file_sha256(files.weights)
    cache_dir = default_cache_dir()
    encoder = SentenceEncoder(
        model_cache.load_or_build(files, cache_dir, quantization, digest), files.tokenizer, max_tokens, threads
    )
    model_key = features_key(MODEL_ID, digest, CONVERTER_VERSION, quantization, max_tokens)
    train = embedding_cache.load_or_compute(cache_dir, model_key, train_x, encoder.dimension, encoder.encode)
    test = embedding_cache.load_or_compute(cache_dir, model_key, test_x, encoder.dimension, encoder.encode)
    sentences_train, sentences_test = train.sentences.astype(np.float64), test.sentences.astype(np.float64)

    config = ClassificationConfig(quantization=quantization, max_tokens=max_tokens, general_category=None)
    started = time.perf_counter()
    head, _ = train_classifier(train, ytr, taxonomy, config)
    train_seconds = time.perf_counter() - started
    whole = train_head(train.text_features(), ytr, k, HeadSettings(l2_penalty=config.l2_penalty, folds=2))

    rows = []

    def record(name: str, scores: np.ndarray, seconds: float = float("nan")) -> None:
        predicted = scores.argmax(axis=1)
        rows.append((name, float((predicted == yte).mean()), macro_f1(yte, predicted, k), seconds))

    record("default: LR on segments + T", head.probabilities(test.text_features()), train_seconds)
    record("same head, whole texts", whole.logits(test.text_features()))
    record("kNN k=20 sim-weighted", knn_scores(sentences_test, sentences_train, ytr, k))
    record("nearest centroid", centroid_scores(sentences_test, sentences_train, ytr, k))
    record("LR on sentence emb only", logits(fit(sentences_train, ytr, k, 1e-3), sentences_test))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--max-tokens", type=int, default=256)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--quantization", choices=("int8", "fp32", "int8row", "both", "all"), default="both",
                        help="both: int8 and fp32; all: every precision")
    args = parser.parse_args()
    quantizations = {"both": ("int8", "fp32"), "all": ("int8row", "int8", "fp32")}.get(args.quantization, (args.quantization,))
    print(f"MMLU-Pro test split ({args.data}), max_tokens={args.max_tokens}")
    print(f"{'quant':<6} {'method':<28} {'accuracy':>9} {'macro-F1':>9} {'train s':>8}")
    for quantization in quantizations:
        for name, accuracy, f1, seconds in evaluate(quantization, args.data, args.max_tokens, args.threads):
            print(f"{quantization:<6} {name:<28} {accuracy:>9.1%} {f1:>9.3f} {seconds:>8.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
