"""Levers on int8row's MMLU-Pro accuracy, each judged on the training split only (issue 31).

    python -m bench.int8row_levers [--every 3] [--seeds 2] [--top 3] [--test]

int8row (per-row int8, tools/embedding/onnx_rowwise.py) read 78.3 % on the test split against fp32's
79.1 % and int8's 80.1 %. Before any change is kept, this asks the training split (even rows) two things:

1. Fidelity: the mean cosine of each text's head features ([last | layer 3] segment means) to the same
   graph with every dense product in fp32, for int8, int8row, int8row with ONE product left in fp32 (all
   24 in turn, on every `--every`-th training text), and int8row with SmoothQuant-style per-input-channel
   smoothing (x / s, s * W: static, so per-row scales stay batch-invariant; s from activation maxima of the
   texts hexmcp ships, the built-in taxonomy and routing exemplars, never MMLU-Pro) at alpha 0.25/0.5/0.75.
2. Accuracy: stratified 5-fold cross-validation of the default head (softmax regression on segment rows,
   each text weighing one) on the training split, `--seeds` fold assignments, for each precision, for the
   candidates chosen by (1) and for int8row's L2 penalty over a grid.

`--test` then prints the test split's figure once per candidate, with paired counts against int8row (the
questions only one of the two gets right, and McNemar's exact two-sided p). Decisions are made on (1) and
(2); bench/diaries/classification.md has the run that made them.
"""

from __future__ import annotations

import argparse
import math
import sys
import time

import numpy as np
from hexmcp.tools.cache_dir import default_cache_dir
from hexmcp.tools.classification import ClassificationConfig
from hexmcp.tools.classification.engine import train_classifier
from hexmcp.tools.classification.head import standardiser, stratified_folds
from hexmcp.tools.classification.routing import load_exemplars
from hexmcp.tools.classification.softmax_regression import fit, logits
from hexmcp.tools.classification.taxonomy import load_taxonomy
from hexmcp.tools.embedding import model_cache
from hexmcp.tools.embedding.encoder import SentenceEncoder
from hexmcp.tools.embedding.model_files import locate_model_files
from hexmcp.tools.embedding.onnx_export import build_encoder_graph
from hexmcp.tools.embedding.onnx_rowwise import RowwiseInt8Builder
from hexmcp.tools.embedding.segments import EncodedTexts
from onnx import TensorProto, helper

from bench.accuracy import DEFAULT_DATA, macro_f1, read_split, taxonomy_from

L2_GRID = (1e-5, 3e-5, 1e-4, 3e-4, 1e-3)
ALPHAS = (0.25, 0.5, 0.75)
DEFAULT_L2 = ClassificationConfig().l2_penalty


class VariantBuilder(RowwiseInt8Builder):
    """int8row with some products left in fp32 and/or inputs smoothed per channel; records every product's
    input tensor (to expose it as an output for calibration)."""

    def __init__(self, float_products=(), smoothing: dict | None = None) -> None:
        super().__init__()
        self.float_products = set(float_products)
        self.smoothing = smoothing or {}
        self.inputs: dict[str, str] = {}

    def int8_product(self, x: str, w: np.ndarray, bias: np.ndarray, name: str) -> str:
        self.inputs[name] = x
        if name in self.float_products:
            product = self.op("MatMul", [x, self.const(f"{name}.weight_t", w)])
            return self.op("Add", [product, self.const(f"{name}.bias", bias)])
        s = self.smoothing.get(name)
        if s is not None:
            x = self.op("Mul", [x, self.const(f"{name}.smooth_inverse", (1.0 / s).astype(np.float32))])
            w = (w * s[:, None]).astype(np.float32)
        return super().int8_product(x, w, bias, name)


class Levers:
    def __init__(self) -> None:
        from safetensors.numpy import load_file

        self.files = locate_model_files()
        self.weights = load_file(str(self.files.weights))
        self.config = self.files.bert_config()
        layers = int(self.config["num_hidden_layers"])
        parts = ("attention.self.qkv", "attention.output.dense", "intermediate.dense", "output.dense")
        self.products = [f"encoder.layer.{n}.{p}" for n in range(layers) for p in parts]

    def graph(self, float_products=(), smoothing=None, record: bool = False) -> tuple[bytes, list[str]]:
        builder = VariantBuilder(float_products, smoothing)
        model = build_encoder_graph(self.weights, self.config, builder)
        inputs = [builder.inputs[name] for name in self.products]
        if record:
            model.graph.output.extend(helper.make_tensor_value_info(t, TensorProto.FLOAT, None) for t in inputs)
        return model.SerializeToString(), inputs

    def encode(self, model: bytes | object, texts: list[str]) -> EncodedTexts:
        return SentenceEncoder(model, self.files.tokenizer, 256, 1).encode(texts, workers=2)

    def weight_rows_absmax(self, name: str) -> np.ndarray:
        """max |W| per input channel of the product `name` ([in, out] as the graph multiplies it)."""
        if name.endswith(".qkv"):
            base = name[: -len(".qkv")]
            w = np.concatenate([self.weights[f"{base}.{p}.weight"] for p in ("query", "key", "value")])
        else:
            w = self.weights[f"{name}.weight"]
        return np.abs(w.astype(np.float32)).max(axis=0)

    def activation_absmax(self, texts: list[str]) -> dict[str, np.ndarray]:
        """max |x| per input channel of every product, over the tokens of `texts`, in fp32."""
        data, inputs = self.graph(float_products=self.products, record=True)
        encoder = SentenceEncoder(data, self.files.tokenizer, 256, 1)
        maxima = {name: np.zeros(1, dtype=np.float32) for name in self.products}
        for text in texts:
            for name, values in zip(self.products, encoder.session.run(inputs, encoder.tokenize_one(text))):
                maxima[name] = np.maximum(maxima[name], np.abs(values).reshape(-1, values.shape[-1]).max(axis=0))
        return maxima

    def smoothing(self, maxima: dict[str, np.ndarray], alpha: float) -> dict[str, np.ndarray]:
        """SmoothQuant's s = max|x|^alpha / max|W|^(1 - alpha), per input channel."""
        return {
            name: (np.maximum(maxima[name], 1e-5) ** alpha
                   / np.maximum(self.weight_rows_absmax(name), 1e-5) ** (1 - alpha)).astype(np.float32)
            for name in self.products
        }


def shipped_texts() -> list[str]:
    """Calibration text that is not MMLU-Pro: the built-in taxonomy's examples and the routing exemplars."""
    texts, _ = load_taxonomy().examples_with_labels()
    return list(texts) + [t for group in load_exemplars().values() for t in group]


def cosine_to(reference: EncodedTexts, other: EncodedTexts) -> tuple[float, float]:
    a, b = reference.text_features(), other.text_features()
    cosine = np.einsum("ij,ij->i", a, b) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
    return float(cosine.mean()), float(cosine.min())


def subset(encoded: EncodedTexts, picked: list[int]) -> EncodedTexts:
    o = encoded.offsets
    return EncodedTexts.from_texts(encoded.sentences[picked], [encoded.segments[o[i]:o[i + 1]] for i in picked])


def cv_accuracy(encoded: EncodedTexts, labels: np.ndarray, n_classes: int, l2: float, seeds: int, folds: int = 5) -> float:
    """Out-of-fold accuracy of the head's fit (z-scored segment rows, each text weighing one), averaged
    over `seeds` stratified fold assignments. The temperature changes no argmax, so it is not fitted."""
    owners = encoded.owners()
    rows = encoded.segments.astype(np.float64)
    features = encoded.text_features()
    row_weights = 1.0 / np.bincount(owners)[owners]
    scores = []
    for seed in range(seeds):
        assignment = stratified_folds(labels, folds, seed)
        predicted = np.empty(len(labels), dtype=np.int64)
        for fold in range(folds):
            held = assignment == fold
            kept = ~held[owners]
            mean, scale = standardiser(rows[kept])
            w = fit((rows[kept] - mean) / scale, labels[owners][kept], n_classes, l2, row_weights[kept])
            predicted[held] = logits(w, (features[held] - mean) / scale).argmax(axis=1)
        scores.append(float((predicted == labels).mean()))
    return float(np.mean(scores))


def mcnemar(truth: np.ndarray, a: np.ndarray, b: np.ndarray) -> tuple[int, int, float]:
    """(questions only a gets right, only b, exact two-sided p of that split under no difference)."""
    only_a = int(((a == truth) & (b != truth)).sum())
    only_b = int(((a != truth) & (b == truth)).sum())
    n = only_a + only_b
    tail = sum(math.comb(n, k) for k in range(min(only_a, only_b) + 1)) / 2**n if n else 0.5
    return only_a, only_b, min(1.0, 2 * tail)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--every", type=int, default=3, help="per-product fidelity on every N-th training text")
    parser.add_argument("--seeds", type=int, default=2, help="fold assignments per cross-validation (0: skip it)")
    parser.add_argument("--top", type=int, default=3, help="products left in fp32 by the fidelity ranking")
    parser.add_argument("--test", action="store_true", help="then the test split, once per candidate")
    args = parser.parse_args()

    train_x, train_y, test_x, test_y = read_split(DEFAULT_DATA)
    taxonomy = taxonomy_from(train_x, train_y)
    names = taxonomy.names
    ytr = np.array([names.index(label) for label in train_y])
    k = len(names)
    levers = Levers()
    cache_dir = default_cache_dir()
    digest = None
    started = time.perf_counter()

    def stored(quantization: str):
        return model_cache.load_or_build(levers.files, cache_dir, quantization, digest)

    print(f"train split: {len(train_x)} texts; fidelity = cosine of head features to int8row's graph with fp32 products")
    float_graph, _ = levers.graph(float_products=levers.products)
    reference = levers.encode(float_graph, train_x)
    models: dict[str, object] = {"fp32": stored("fp32"), "int8": stored("int8"), "int8row": levers.graph()[0]}
    train: dict[str, EncodedTexts] = {name: levers.encode(model, train_x) for name, model in models.items()}
    for name, encoded in train.items():
        print(f"  {name:<28} mean {cosine_to(reference, encoded)[0]:.5f}  least {cosine_to(reference, encoded)[1]:.5f}")

    picked = list(range(0, len(train_x), args.every))
    texts = [train_x[i] for i in picked]
    reference_subset = subset(reference, picked)
    base = cosine_to(reference_subset, subset(train["int8row"], picked))[0]
    gains = {}
    for product in levers.products:
        gains[product] = cosine_to(reference_subset, levers.encode(levers.graph(float_products=[product])[0], texts))[0] - base
    print(f"one product in fp32 ({len(texts)} texts; int8row {base:.5f}): gain in mean cosine, largest first")
    ranked = sorted(gains, key=gains.get, reverse=True)
    for product in ranked[:6]:
        print(f"  {product:<40} {gains[product]:+.5f}")
    print(f"  ... least {ranked[-1]} {gains[ranked[-1]]:+.5f}")

    maxima = levers.activation_absmax(shipped_texts())
    by_alpha = {}
    for alpha in ALPHAS:
        by_alpha[alpha] = cosine_to(reference_subset, levers.encode(levers.graph(smoothing=levers.smoothing(maxima, alpha))[0], texts))[0]
        print(f"  smoothing alpha {alpha}: mean cosine {by_alpha[alpha]:.5f}")
    alpha = max(by_alpha, key=by_alpha.get)

    top = ranked[: args.top]
    models[f"int8row, top {args.top} fp32"] = levers.graph(float_products=top)[0]
    models[f"int8row, smoothed {alpha}"] = levers.graph(smoothing=levers.smoothing(maxima, alpha))[0]
    for name in list(models)[3:]:
        train[name] = levers.encode(models[name], train_x)
        print(f"  {name:<28} mean {cosine_to(reference, train[name])[0]:.5f} (whole train split)")

    if args.seeds:
        print(f"cross-validation on the train split, 5 folds x {args.seeds} assignments, L2 {DEFAULT_L2:g}")
        for name, encoded in train.items():
            print(f"  {name:<28} {cv_accuracy(encoded, ytr, k, DEFAULT_L2, args.seeds):.1%}")
        print("int8row's L2 penalty")
        for l2 in L2_GRID:
            print(f"  {l2:<8g} {cv_accuracy(train['int8row'], ytr, k, l2, args.seeds):.1%}")
    print(f"({time.perf_counter() - started:.0f} s)")

    if args.test:
        yte = np.array([names.index(label) for label in test_y])
        config = ClassificationConfig(general_category=None)
        predicted = {}
        print("test split, once per candidate: the default head (bench/accuracy.py's first row)")
        for name, model in models.items():
            head, _ = train_classifier(train[name], ytr, taxonomy, config)
            predicted[name] = head.probabilities(levers.encode(model, test_x).text_features()).argmax(axis=1)
        for name in models:
            only, other, p = mcnemar(yte, predicted[name], predicted["int8row"])
            print(f"  {name:<28} {(predicted[name] == yte).mean():.1%}  F1 {macro_f1(yte, predicted[name], k):.3f}"
                  f"  right where int8row is wrong {only}, wrong where it is right {other}, p {p:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
