"""Features, heads and token caps for int8row's classifier, each judged on the training split only (issue 31).

    python -m bench.int8row_features [--seeds 8] [--caps 256,192,160,128] [--quantization int8row]
                                     [--test NAME ...]

bench/int8row_levers.py showed that int8row's features are as faithful to fp32 as they can usefully be, and
that fp32, int8 and int8row share one plateau of ~80 % under 5-fold cross-validation on the training split.
This asks whether the plateau itself moves with what the head reads from the same encoder pass, still
pooled per text from its own unpadded token states (so batch invariance holds as it does today):

1. Every text of the training split runs alone through int8row's graph with the output of every layer
   (embeddings = 0, transformer layers 1-6) exposed, once per token cap (`--caps`); per layer the script keeps
   16-token segment means (as segments.py cuts them), 8- and 32-token ones, the whole-text mean, the max over
   tokens and [CLS], each unit length, plus the word-piece ids. Cached beside the embedding cache.
2. Stratified 5-fold cross-validation, `--seeds` fold assignments, of the variants in VARIANTS, each paired
   against today's head (softmax regression on z-scored `[last | layer 3]` 16-token segment rows, each text
   weighing one, read through the mean of its rows) on the same folds: the mean accuracy, the mean paired
   difference and its standard error over the assignments (which covers the folds, not the sampling of
   the 497 texts: under ~1 point is noise).

`--test NAME ...` then reads the test split once per named variant, printing its accuracy, macro-F1 and
McNemar's exact p against the current default (int8, today's head), and against int8row with today's head.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable

import attrs
import numpy as np
from hexmcp.tools.cache_dir import default_cache_dir
from hexmcp.tools.classification.head import standardiser, stratified_folds
from hexmcp.tools.classification.softmax_regression import fit, logits
from hexmcp.tools.embedding import model_cache
from hexmcp.tools.embedding.encoder import SentenceEncoder
from hexmcp.tools.embedding.model_files import locate_model_files
from hexmcp.tools.embedding.onnx_export import GraphBuilder, build_encoder_graph
from hexmcp.tools.embedding.onnx_rowwise import RowwiseInt8Builder
from onnx import TensorProto, helper

from bench.accuracy import DEFAULT_DATA, macro_f1, read_split, taxonomy_from
from bench.int8row_levers import mcnemar

LAYERS = 7  # embeddings + 6 transformer layers
DEFAULT_L2 = 1e-4
FEATURE_FORMAT = "1"  # bump when what `dump` stores changes


def recording(base: type[GraphBuilder]) -> type[GraphBuilder]:
    """`base` that remembers every layer's output (the LayerNorm that closes it) to expose it."""

    class Recording(base):  # type: ignore[misc, valid-type]
        def __init__(self) -> None:
            super().__init__()
            self.layer_outputs: list[str] = []

        def layer_norm(self, x: str, weights: dict, name: str, eps: float) -> str:
            out = super().layer_norm(x, weights, name, eps)
            if name == "embeddings.LayerNorm" or name.endswith(".output.LayerNorm") and ".attention." not in name:
                self.layer_outputs.append(out)
            return out

    return Recording


def layered_graph(quantization: str) -> tuple[bytes, list[str]]:
    """The encoder graph with every layer's token states as extra outputs ([batch * seq, hidden] or
    [batch, seq, hidden]: a lone text reshapes to [seq, hidden] either way)."""
    from safetensors.numpy import load_file

    files = locate_model_files()
    builder = recording(RowwiseInt8Builder if quantization == "int8row" else GraphBuilder)()
    model = build_encoder_graph(load_file(str(files.weights)), files.bert_config(), builder)
    assert len(builder.layer_outputs) == LAYERS, builder.layer_outputs
    model.graph.output.extend(helper.make_tensor_value_info(t, TensorProto.FLOAT, None) for t in builder.layer_outputs)
    return model.SerializeToString(), builder.layer_outputs


def _unit(x: np.ndarray) -> np.ndarray:
    return x / np.maximum(np.linalg.norm(x, axis=-1, keepdims=True), 1e-12)


def segment_means(states: np.ndarray, tokens: int) -> np.ndarray:
    """[layers, n, hidden] content tokens → unit-length segment means [segments, layers, hidden], cut as
    segments.py cuts them, with `tokens` in place of SEGMENT_TOKENS."""
    n = states.shape[1]
    count = max(1, (n + tokens // 2) // tokens)
    edges = (np.arange(count) * n) // count
    sizes = np.diff(edges, append=n)[None, :, None]
    return _unit(np.add.reduceat(states, edges, axis=1) / sizes).transpose(1, 0, 2).astype(np.float32)


@attrs.frozen
class Dump:
    """Per-layer pooled states of a list of texts."""

    seg: dict[int, np.ndarray]  # segment tokens -> [rows, layers, hidden]
    offsets: dict[int, np.ndarray]  # segment tokens -> [texts + 1]
    mean: np.ndarray  # [texts, layers, hidden], unit length
    maxed: np.ndarray  # [texts, layers, hidden], unit length
    cls: np.ndarray  # [texts, layers, hidden], unit length
    ids: list[np.ndarray]  # word-piece ids without [CLS]/[SEP]

    def rows(self, layers: tuple[int, ...], tokens: int = 16) -> tuple[np.ndarray, np.ndarray]:
        """([rows, len(layers) * hidden] segment rows, owner text of each row)."""
        seg, offsets = self.seg[tokens], self.offsets[tokens]
        rows = seg[:, list(layers)].reshape(len(seg), -1)
        return rows, np.repeat(np.arange(len(offsets) - 1), np.diff(offsets))


def dump(quantization: str, cap: int, texts: list[str], name: str) -> Dump:
    path = default_cache_dir() / "bench" / f"int8row-features-{FEATURE_FORMAT}-{quantization}-t{cap}-{name}.npz"
    if path.exists():
        z = np.load(path, allow_pickle=False)
        return Dump(
            seg={t: z[f"seg{t}"] for t in (8, 16, 32)}, offsets={t: z[f"off{t}"] for t in (8, 16, 32)},
            mean=z["mean"], maxed=z["maxed"], cls=z["cls"],
            ids=np.split(z["ids"], z["ids_offsets"][1:-1]),
        )
    graph, outputs = layered_graph(quantization)
    encoder = SentenceEncoder(graph, locate_model_files().tokenizer, cap, 1)
    seg: dict[int, list[np.ndarray]] = {8: [], 16: [], 32: []}
    mean, maxed, cls, ids = [], [], [], []
    for text in texts:
        feed = encoder.tokenize_one(text)
        length = feed["input_ids"].shape[1]
        states = np.stack([s.reshape(length, -1) for s in encoder.session.run(outputs, feed)]).astype(np.float64)
        start, stop = (1, length - 1) if length > 2 else (0, length)
        content = states[:, start:stop]
        for tokens in seg:
            seg[tokens].append(segment_means(content, tokens))
        mean.append(_unit(content.mean(axis=1)))
        maxed.append(_unit(content.max(axis=1)))
        cls.append(_unit(states[:, 0]))
        ids.append(feed["input_ids"][0, start:stop])
    arrays = {f"seg{t}": np.concatenate(v) for t, v in seg.items()}
    arrays |= {f"off{t}": np.concatenate([[0], np.cumsum([len(r) for r in v])]).astype(np.int64) for t, v in seg.items()}
    arrays |= {"mean": np.stack(mean).astype(np.float32), "maxed": np.stack(maxed).astype(np.float32),
               "cls": np.stack(cls).astype(np.float32), "ids": np.concatenate(ids),
               "ids_offsets": np.concatenate([[0], np.cumsum([len(i) for i in ids])]).astype(np.int64)}
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez(path, **arrays)
    return dump(quantization, cap, texts, name)


# A view: (training rows, owner of each row, query features per text). The head is fitted on the rows
# (z-scored, each text weighing one) and reads a text through its query features.
View = tuple[np.ndarray, np.ndarray, np.ndarray]


def segment_view(d: Dump, layers: tuple[int, ...] = (6, 3), tokens: int = 16, extra: np.ndarray | None = None) -> View:
    rows, owners = d.rows(layers, tokens)
    if extra is not None:  # a per-text vector appended to each of its rows
        rows = np.hstack([rows, extra[owners]])
    rows = rows.astype(np.float64)
    query = np.add.reduceat(rows, d.offsets[tokens][:-1], axis=0) / np.diff(d.offsets[tokens])[:, None]
    return rows, owners, query


def multiscale_view(d: Dump, layers: tuple[int, ...] = (6, 3), scales: tuple[int, ...] = (8, 16, 32)) -> View:
    """Segment rows of several lengths as training rows; the query is the 16-token view."""
    parts = [d.rows(layers, t) for t in scales]
    rows = np.vstack([r for r, _ in parts]).astype(np.float64)
    owners = np.concatenate([o for _, o in parts])
    return rows, owners, segment_view(d, layers)[2]


def lexical_matrix(ids: list[np.ndarray], vocabulary: np.ndarray, idf: np.ndarray) -> np.ndarray:
    """Unit-length tf-idf rows over `vocabulary` (sorted word-piece ids), sublinear term frequency."""
    out = np.zeros((len(ids), len(vocabulary)))
    for row, text_ids in enumerate(ids):
        present, counts = np.unique(text_ids, return_counts=True)
        where = np.searchsorted(vocabulary, present)
        keep = (where < len(vocabulary)) & (vocabulary[np.minimum(where, len(vocabulary) - 1)] == present)
        out[row, where[keep]] = (1 + np.log(counts[keep])) * idf[where[keep]]
    return _unit(out)


def fit_predict(rows: np.ndarray, owners: np.ndarray, labels: np.ndarray, train_texts: np.ndarray,
                query: np.ndarray, k: int, l2: float, initial: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(log-probabilities of `query`, weights) of a head fitted on the rows of `train_texts` (a boolean
    mask), the solver started from `initial` (the same problem's minimum does not depend on it)."""
    kept = train_texts[owners]
    weights = 1.0 / np.bincount(owners)[owners]
    mean, scale = standardiser(rows[kept])
    w = fit((rows[kept] - mean) / scale, labels[owners][kept], k, l2, weights[kept], initial)
    return log_softmax(logits(w, (query - mean) / scale)), w


def log_softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(axis=1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=1, keepdims=True))


def lexical_fit_predict(ids_train: list[np.ndarray], labels: np.ndarray, ids_query: list[np.ndarray], k: int, l2: float) -> np.ndarray:
    """Log-probabilities from softmax regression on tf-idf word pieces, vocabulary and idf from the
    training texts (pieces in at least two of them)."""
    df: dict[int, int] = {}
    for text_ids in ids_train:
        for i in np.unique(text_ids).tolist():
            df[i] = df.get(i, 0) + 1
    vocabulary = np.array(sorted(i for i, n in df.items() if n >= 2), dtype=np.int64)
    idf = np.array([math.log(len(ids_train) / df[i]) + 1 for i in vocabulary.tolist()])
    x = lexical_matrix(ids_train, vocabulary, idf)
    mean, scale = standardiser(x)
    w = fit((x - mean) / scale, labels, k, l2)
    return log_softmax(logits(w, (lexical_matrix(ids_query, vocabulary, idf) - mean) / scale))


# A component: given (train dumps by cap, training labels, mask of texts to fit on, query dumps by cap, k,
# warm start or None), (log-probabilities of the query texts, weights to warm-start the next fit or None).
Component = Callable[..., tuple[np.ndarray, np.ndarray | None]]


def head_on(view: Callable[[Dump], View], cap: int = 256, l2: float = DEFAULT_L2) -> Component:
    def run(train, labels, fitted, query, k, initial=None):
        rows, owners, _ = view(train[cap])
        return fit_predict(rows, owners, labels, fitted, view(query[cap])[2], k, l2, initial)
    return run


def lexical(cap: int = 256, l2: float = 1e-3) -> Component:
    def run(train, labels, fitted, query, k, initial=None):
        ids = [i for i, keep in zip(train[cap].ids, fitted) if keep]
        return lexical_fit_predict(ids, labels[fitted], query[cap].ids, k, l2), None
    return run


def two_caps(query_cap: int, caps: tuple[int, int] = (256, 128)) -> Component:
    """Training rows from two caps' views of each text; the query read at `query_cap`."""
    def run(train, labels, fitted, query, k, initial=None):
        views = [segment_view(train[c]) for c in caps]
        rows = np.vstack([v[0] for v in views])
        owners = np.concatenate([v[1] for v in views])
        return fit_predict(rows, owners, labels, fitted, segment_view(query[query_cap])[2], k, DEFAULT_L2, initial)
    return run


def base(cap: int = 256, l2: float = DEFAULT_L2) -> Component:
    return head_on(segment_view, cap, l2)


TODAY = "[6|3] seg16"
COMPONENTS: dict[str, tuple[Callable[[], Component], tuple[int, ...]]] = {  # name: (component, caps it reads)
    TODAY: (lambda: base(), (256,)),
    "[6|3] seg16 + CLS6 per row": (lambda: head_on(lambda d: segment_view(d, extra=d.cls[:, 6])), (256,)),
    "[6|3] seg16 + mean of 6 per row": (lambda: head_on(lambda d: segment_view(d, extra=d.mean[:, 6])), (256,)),
    "[6|3] seg16 + max-pool 3 per row": (lambda: head_on(lambda d: segment_view(d, extra=d.maxed[:, 3])), (256,)),
    "multi-scale rows 8+16+32": (lambda: head_on(multiscale_view), (256,)),
    "[6|2] seg16": (lambda: head_on(lambda d: segment_view(d, (6, 2))), (256,)),
    "[5|4] seg16": (lambda: head_on(lambda d: segment_view(d, (5, 4))), (256,)),
    "[6|1] seg16": (lambda: head_on(lambda d: segment_view(d, (6, 1))), (256,)),
    "[6|3] seg8": (lambda: head_on(lambda d: segment_view(d, tokens=8)), (256,)),
    "lexical tf-idf": (lambda: lexical(), (256,)),
    "cap 192": (lambda: base(192), (192,)),
    "cap 160": (lambda: base(160), (160,)),
    "cap 128": (lambda: base(128), (128,)),
    "train 256+128 views, query 256": (lambda: two_caps(256), (256, 128)),
    "train 256+128 views, query 128": (lambda: two_caps(128), (256, 128)),
}
# A variant: log-probabilities of components, weighted and summed.
VARIANTS: dict[str, list[tuple[str, float]]] = {name: [(name, 1.0)] for name in COMPONENTS} | {
    "ens [6|3] + [6|2]": [(TODAY, 1.0), ("[6|2] seg16", 1.0)],
    "ens [6|3] + [5|4]": [(TODAY, 1.0), ("[5|4] seg16", 1.0)],
    "ens [6|3] + [6|1]": [(TODAY, 1.0), ("[6|1] seg16", 1.0)],
    "ens [6|3] + [6|3] seg8": [(TODAY, 1.0), ("[6|3] seg8", 1.0)],
    "ens [6|3] + lexical 0.25": [(TODAY, 1.0), ("lexical tf-idf", 0.25)],
    "ens [6|3] + lexical 0.5": [(TODAY, 1.0), ("lexical tf-idf", 0.5)],
    "ens [6|3] + lexical 1.0": [(TODAY, 1.0), ("lexical tf-idf", 1.0)],
    "ens [6|3] + cap 128": [(TODAY, 1.0), ("cap 128", 1.0)],
}


def cross_validate(component: Component, train: dict[int, Dump], labels: np.ndarray, k: int, seeds: int,
                   folds: int = 5) -> np.ndarray:
    """Out-of-fold log-probabilities [seeds, texts, k]; every fold's solver starts from the fit on the
    whole training split (as head.train_head's folds do), which changes where it starts, not its minimum."""
    everything = np.ones(len(labels), dtype=bool)
    _, whole = component(train, labels, everything, train, k)
    out = np.empty((seeds, len(labels), k))
    for seed in range(seeds):
        assignment = stratified_folds(labels, folds, 100 + seed)
        for fold in range(folds):
            held = assignment == fold
            held_query = {cap: subset_dump(d, np.flatnonzero(held)) for cap, d in train.items()}
            out[seed, held] = component(train, labels, ~held, held_query, k, whole)[0]
    return out


def subset_dump(d: Dump, picked: np.ndarray) -> Dump:
    seg, offsets = {}, {}
    for t in d.seg:
        o = d.offsets[t]
        parts = [d.seg[t][o[i]:o[i + 1]] for i in picked]
        seg[t] = np.concatenate(parts)
        offsets[t] = np.concatenate([[0], np.cumsum([len(p) for p in parts])]).astype(np.int64)
    return Dump(seg=seg, offsets=offsets, mean=d.mean[picked], maxed=d.maxed[picked], cls=d.cls[picked],
                ids=[d.ids[i] for i in picked])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=8)
    parser.add_argument("--caps", default="256,192,160,128")
    parser.add_argument("--quantization", choices=("int8row", "fp32"), default="int8row")
    parser.add_argument("--only", nargs="*", help="cross-validate only these variants (and today's head)")
    parser.add_argument("--test", nargs="*", default=[], help="then the test split, once per named variant")
    args = parser.parse_args()

    train_x, train_y, test_x, test_y = read_split(DEFAULT_DATA)
    names = taxonomy_from(train_x, train_y).names
    ytr = np.array([names.index(label) for label in train_y])
    k = len(names)
    caps = [int(c) for c in args.caps.split(",")]
    started = time.perf_counter()
    train = {cap: dump(args.quantization, cap, train_x, "train") for cap in caps}
    print(f"{args.quantization}, train split {len(train_x)} texts, dumped in {time.perf_counter() - started:.0f} s; "
          f"5-fold CV x {args.seeds} assignments, paired against today's head")

    chosen = [TODAY] + [n for n in args.only if n != TODAY] if args.only else list(VARIANTS)
    if args.seeds:
        out_of_fold: dict[str, np.ndarray] = {}
        for name in chosen:
            parts = VARIANTS[name]
            if not all(set(COMPONENTS[c][1]) <= set(caps) for c, _ in parts):
                continue
            t0 = time.perf_counter()
            for component, _ in parts:
                if component not in out_of_fold:
                    out_of_fold[component] = cross_validate(COMPONENTS[component][0](), train, ytr, k, args.seeds)
            predicted = sum(w * out_of_fold[c] for c, w in parts).argmax(axis=2)
            acc = (predicted == ytr).mean(axis=1)
            delta = acc - (out_of_fold[TODAY].argmax(axis=2) == ytr).mean(axis=1)
            se = delta.std(ddof=1) / math.sqrt(len(delta)) if len(delta) > 1 else float("nan")
            print(f"  {name:<36} {acc.mean():6.1%}  paired {100 * delta.mean():+5.2f} ± {100 * se:.2f}  "
                  f"({time.perf_counter() - t0:.0f} s)", flush=True)

    if args.test:
        yte = np.array([names.index(label) for label in test_y])
        test = {cap: dump(args.quantization, cap, test_x, "test") for cap in caps}
        everything = np.ones(len(ytr), dtype=bool)

        def predict(name: str) -> np.ndarray:
            return sum(w * COMPONENTS[c][0]()(train, ytr, everything, test, k)[0] for c, w in VARIANTS[name]).argmax(axis=1)

        today = predict(TODAY)
        default = default_predictions(test_x, train_x, train_y, ytr)
        print(f"test split ({len(test_x)}), once per variant; McNemar against int8 today (the default, "
              f"{(default == yte).mean():.1%}) and {args.quantization} today ({(today == yte).mean():.1%})")
        for name in args.test:
            predicted = predict(name)
            a, b, p = mcnemar(yte, predicted, default)
            c, d, q = mcnemar(yte, predicted, today)
            print(f"  {name:<36} {(predicted == yte).mean():6.1%}  F1 {macro_f1(yte, predicted, k):.3f}  "
                  f"vs int8 +{a}/-{b} p {p:.2f}  vs {args.quantization} today +{c}/-{d} p {q:.2f}")
    return 0


def default_predictions(test_x: list[str], train_x: list[str], train_y: list[str], ytr: np.ndarray) -> np.ndarray:
    """The service's default today: int8 (dynamic), today's head, through the shipped code path."""
    from hexmcp.tools.classification import ClassificationConfig, embedding_cache
    from hexmcp.tools.classification.engine import train_classifier
    from hexmcp.tools.embedding.converter_version import CONVERTER_VERSION
    from hexmcp.tools.embedding.encoder import features_key
    from hexmcp.tools.embedding.model_files import MODEL_ID, file_sha256

    files = locate_model_files()
    digest = file_sha256(files.weights)
    cache_dir = default_cache_dir()
    encoder = SentenceEncoder(model_cache.load_or_build(files, cache_dir, "int8", digest), files.tokenizer, 256, 2)
    key = features_key(MODEL_ID, digest, CONVERTER_VERSION, "int8", 256)
    train = embedding_cache.load_or_compute(cache_dir, key, train_x, encoder.dimension, encoder.encode)
    test = embedding_cache.load_or_compute(cache_dir, key, test_x, encoder.dimension, encoder.encode)
    config = ClassificationConfig(quantization="int8", general_category=None)
    head, _ = train_classifier(train, ytr, taxonomy_from(train_x, train_y), config)
    return head.probabilities(test.text_features()).argmax(axis=1)


if __name__ == "__main__":
    sys.exit(main())
