"""CPU per text of the bare encoder, alone and in padded batches, per precision; and what each precision
does to a text's features (against fp32, and alone against in a batch).

    python -m bench.encoder_batch_cost [--precisions int8,int8row,fp32] [--rounds 2]

Thread CPU time (onnxruntime runs on the calling thread with 1 intra-op thread), medians over the
batches and rounds. Texts: `fixed` (bench/classify.py's prompt repeated: batches without padding),
`short` (the first sentence of each MMLU-Pro stem, at most 80 characters: 5-25 tokens, so batches pad a
little) and `stems` (whole stems, up to 256 tokens, in file order: batches pad to their longest). The
encoder pads a micro-batch by length groups (SentenceEncoder.embed_many); this measures bare padded
passes, the worst case. Figures for ADR 1203 and bench/diaries/classification.md.
"""

from __future__ import annotations

import argparse
import csv
import statistics
import time
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parent / "data" / "mmlu-pro" / "questions.csv"
FIXED = "How do I convert a list of strings to integers in Python quickly?"  # bench/classify.py's prompt
BATCHES = (1, 4, 8, 16, 32)
TEXTS = 64


def samples() -> dict[str, list[str]]:
    with DATA.open(newline="", encoding="utf-8") as handle:
        stems = [row["text"].split(" Options:")[0] for row in csv.DictReader(handle)][:TEXTS]
    return {"fixed": [FIXED] * TEXTS, "short": [stem.split(".")[0][:80] for stem in stems], "stems": stems}


def open_encoders(precisions: list[str]) -> dict:
    from hexmcp.tools.cache_dir import default_cache_dir
    from hexmcp.tools.embedding import model_cache
    from hexmcp.tools.embedding.encoder import SentenceEncoder
    from hexmcp.tools.embedding.model_files import locate_model_files, memoised_sha256

    files = locate_model_files()
    cache = default_cache_dir()
    digest = memoised_sha256(files.weights, cache / "models")
    return {
        precision: SentenceEncoder(model_cache.load_or_build(files, cache, precision, digest), files.tokenizer, 256, 1)
        for precision in precisions
    }


def cpu_per_text(encoder, texts: list[str], size: int, rounds: int) -> list[float]:
    per_text = []
    for _ in range(rounds):
        for start in range(0, len(texts), size):
            feed = encoder.tokenize(texts[start : start + size])
            began = time.thread_time()
            encoder.forward(feed)
            per_text.append((time.thread_time() - began) * 1e3 / len(feed["input_ids"]))
    return per_text


def batch_dependence(encoder, texts: list[str]) -> int:
    """How many texts' token states (both layers) differ between one padded pass of all and their own."""
    feed = encoder.tokenize(texts)
    _, last, mid = encoder.forward(feed)
    lengths = feed["attention_mask"].sum(axis=1)
    differ = 0
    for row, text in enumerate(texts):
        _, alone_last, alone_mid = encoder.forward(encoder.tokenize_one(text))
        n = lengths[row]
        differ += not (np.array_equal(last[row, :n], alone_last[0]) and np.array_equal(mid[row, :n], alone_mid[0]))
    return differ


def cosines(encoder, reference, texts: list[str]) -> tuple[float, float]:
    """Mean and least cosine between a precision's segment rows and fp32's, each text alone."""
    values = []
    for text in texts:
        a, b = encoder.embed_one(text)[1].ravel(), reference.embed_one(text)[1].ravel()
        values.append(float(a @ b / np.linalg.norm(a) / np.linalg.norm(b)))
    return statistics.fmean(values), min(values)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--precisions", default="int8,int8row,fp32")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    precisions = args.precisions.split(",")
    encoders = open_encoders(sorted(set(precisions) | {"fp32"}))
    texts = samples()
    for encoder in encoders.values():  # warm-up: first passes allocate
        for _ in range(10):
            encoder.forward(encoder.tokenize(texts["short"][:8]))
    print("CPU ms per text (median), batches padded to their longest text")
    print(f"{'texts':<6} {'precision':<9} " + " ".join(f"{'b' + str(size):>7}" for size in BATCHES) + f" {'b1/best':>8}")
    for label, sample in texts.items():
        for precision in precisions:
            medians = [statistics.median(cpu_per_text(encoders[precision], sample, size, args.rounds)) for size in BATCHES]
            print(f"{label:<6} {precision:<9} " + " ".join(f"{m:>7.2f}" for m in medians) + f" {medians[0] / min(medians):>8.2f}")
    mix = texts["short"][:32] + texts["stems"][:8]
    print(f"\ntexts whose token states differ in one padded pass of {len(mix)} (short and long) from their own pass;")
    print("segment rows' cosine to fp32 (64 texts, each alone):")
    for precision in precisions:
        mean, least = cosines(encoders[precision], encoders["fp32"], texts["short"][:32] + texts["stems"][:32])
        print(f"  {precision:<9} differ {batch_dependence(encoders[precision], mix):>2}/{len(mix)}   cosine mean {mean:.4f} least {least:.4f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
