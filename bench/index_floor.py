"""Indexing at the machine's limit (issue 31): the fastest bare encoder for passages, and hexmcp's indexing
of the same passages against it, in one run.

    .venv/bin/python -m bench.index_floor [--corpus bench/data/corpora/kubernetes] [--passages 800]
        [--sweep-passages 96] [--rounds 2] [--quantization int8 fp32] [--skip-sweep --floor CONFIG]
        [--drift-passages 128]

Passages: the ones hexmcp itself makes (its reader and chunker) of a fixed subset of a real documentation
corpus's pages: pages are taken in a fixed shuffled order (seed 7) until they hold --passages passages,
and each page is whole, so hexmcp can index exactly those pages end to end.

Part 1, the sweep (the floor): the BARE encoder, an onnxruntime session over the same cached model file
hexmcp opens and `tokenizers` over its tokenizer (truncated at the passage window, 256 tokens), no hexmcp
code in the timed loop: int8 and fp32; batch sizes 1, 8, 16, 32, 64, 128; length bucketing (sorted by
token count, neighbours batched, each batch padded to its longest) against arrival order; and the ways
to fill two cores: one session with 1 or 2 intra-op threads, or two sessions (1 intra-op thread each) on
two Python threads taking batches from one list. The timed loop is the whole job: tokenising every
passage, padding the batches, the passes. Each configuration runs once over the first --sweep-passages
passages (after a warm-up batch); passages/s and tokens/s (real tokens, padding not counted).

Part 2, the comparison: the sweep's fastest configuration (the floor) over all the passages, alternating
per round with hexmcp's own path, per precision (--quantization): the embedding stage alone
(PassageEmbedder.submit_many over every passage text, what build_index calls) and end to end
(`index_corpus`, what `hexmcp index` runs: reading the pages, chunking, embedding, BM25, the store and the
per-document vector cache, written into a fresh cache folder each round). Medians of --rounds; ratios to
the floor's median (target >= 0.8). The summary's token count must equal the floor's: the same passages.

Part 3, answers: how far a passage's vector moves when it is embedded in a bucketed batch rather than
alone (cosine, per precision), over the first --drift-passages passages,
in a batch of DRIFT_BATCH.

Run it as a module from the repository root, under the exclusive machine lock for figures.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

REPOSITORY = Path(__file__).resolve().parents[1]
BATCHES = (1, 8, 16, 32, 64, 128)
#: (sessions, intra-op threads per session): one core, both cores inside one pass, a pass per core.
PLACEMENTS = ((1, 1), (1, 2), (2, 1))
DRIFT_BATCH = 32  # the batch a passage shares in the drift check (bucketed: neighbours by length)


def pick_pages(corpus: Path, passages: int, seed: int = 7) -> tuple[list, list[str], int]:
    """Whole pages in a fixed shuffled order until they hold `passages` passages: (documents, the texts hexmcp
    embeds for their passages, how many passages). A passage longer than the encoder's window is several texts
    (tools/knowledge/windows.py), so the floor does the same work as hexmcp: every window of every passage."""
    from tokenizers import Tokenizer

    from hexmcp.tools.embedding.model_files import locate_model_files
    from hexmcp.tools.knowledge.chunking import chunk_document
    from hexmcp.tools.knowledge.corpus import CorpusSpec, load_documents
    from hexmcp.tools.knowledge.embedder import PASSAGE_MAX_TOKENS
    from hexmcp.tools.knowledge.windows import passage_windows

    tokenizer = Tokenizer.from_file(str(locate_model_files().tokenizer))
    tokenizer.no_truncation()
    tokenizer.no_padding()

    def offsets(text: str) -> list[tuple[int, int]]:
        return tokenizer.encode(text, add_special_tokens=False).offsets

    documents = load_documents(CorpusSpec(roots=[corpus]))
    chosen, texts, count = [], [], 0
    for position in np.random.default_rng(seed).permutation(len(documents)):
        if count >= passages:
            break
        chunks = chunk_document(documents[int(position)])
        if chunks:
            chosen.append(documents[int(position)])
            texts.extend(t for p in chunks for t in passage_windows(p, offsets, PASSAGE_MAX_TOKENS))
            count += len(chunks)
    return chosen, texts, count


def copy_pages(documents: list, corpus: Path, folder: Path) -> Path:
    """The chosen pages as a corpus of their own, at the same relative paths (the same document ids)."""
    for document in documents:
        source = corpus / document.document_id
        target = folder / document.document_id
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
    return folder


class BareEncoder:
    """An onnxruntime session (or two) and a tokenizer over hexmcp's cached model files: nothing else."""

    def __init__(self, model: Path, tokenizer: Path, max_tokens: int, sessions: int, threads: int) -> None:
        import onnxruntime
        from tokenizers import Tokenizer

        # hexmcp's own session options (set-up only, not the timed loop): the floor differs in how it runs.
        from hexmcp.tools.embedding.encoder import quiet_session_options

        self.tokenizer = Tokenizer.from_file(str(tokenizer))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_length=max_tokens)
        options = quiet_session_options(threads)
        self.sessions = [onnxruntime.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
                         for _ in range(sessions)]
        self.dimension = int(self.sessions[0].get_outputs()[0].shape[1])
        self._free = list(self.sessions)
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(sessions) if sessions > 1 else None

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown()

    def embed(self, texts: list[str], batch: int, bucketed: bool) -> tuple[np.ndarray, int]:
        """Unit vectors (float32 [texts, hidden]) in the texts' order, and the real tokens read."""
        encodings = self.tokenizer.encode_batch(texts)
        ids = [e.ids for e in encodings]
        lengths = np.fromiter((len(i) for i in ids), dtype=np.int64, count=len(ids))
        order = np.argsort(lengths, kind="stable") if bucketed else np.arange(len(ids))
        groups = [order[start : start + batch] for start in range(0, len(order), batch)]
        vectors = np.empty((len(texts), self.dimension), dtype=np.float32)

        def run(group: np.ndarray) -> None:
            width = int(lengths[group].max())
            feed_ids = np.zeros((len(group), width), dtype=np.int64)
            mask = np.zeros((len(group), width), dtype=np.int64)
            for row, index in enumerate(group.tolist()):
                feed_ids[row, : lengths[index]] = ids[index]
                mask[row, : lengths[index]] = 1
            session = self._take()
            try:
                vectors[group] = session.run(["sentence_embedding"], {"input_ids": feed_ids, "attention_mask": mask})[0]
            finally:
                self._give(session)

        if self._pool is None:
            for group in groups:
                run(group)
        else:
            list(self._pool.map(run, groups))
        return vectors, int(lengths.sum())

    def _take(self):
        with self._lock:
            return self._free.pop()

    def _give(self, session) -> None:
        with self._lock:
            self._free.append(session)


def model_files(quantization: str) -> tuple[Path, Path]:
    """The cached ONNX model hexmcp opens for `quantization` (built if missing), and the tokenizer."""
    from hexmcp.tools.cache_dir import default_cache_dir
    from hexmcp.tools.embedding import model_cache
    from hexmcp.tools.embedding.model_files import locate_model_files, memoised_sha256

    files = locate_model_files()
    cache = default_cache_dir()
    digest = memoised_sha256(files.weights, cache / "models")
    return model_cache.load_or_build(files, cache, quantization, digest), files.tokenizer


def config_name(quantization: str, batch: int, bucketed: bool, sessions: int, threads: int) -> str:
    order = "bucketed" if bucketed else "arrival"
    return f"{quantization} b{batch} {order} {sessions}x{threads}t"


def sweep(texts: list[str], max_tokens: int) -> list[dict]:
    results = []
    for quantization in ("int8", "fp32"):
        model, tokenizer = model_files(quantization)
        for sessions, threads in PLACEMENTS:
            encoder = BareEncoder(model, tokenizer, max_tokens, sessions, threads)
            # Warm-up: the sessions' first passes at new shapes allocate (a first timed pass ran at 0.6x).
            encoder.embed(texts[:32], 1, False)
            encoder.embed(texts[:64], 32, True)
            for batch in BATCHES:
                for bucketed in (True, False) if batch > 1 else (True,):
                    started = time.perf_counter()
                    _, tokens = encoder.embed(texts, batch, bucketed)
                    seconds = time.perf_counter() - started
                    row = {"config": config_name(quantization, batch, bucketed, sessions, threads),
                           "quantization": quantization, "batch": batch, "bucketed": bucketed,
                           "sessions": sessions, "threads": threads, "passages": len(texts),
                           "passages_per_s": round(len(texts) / seconds, 1),
                           "tokens_per_s": round(tokens / seconds)}
                    results.append(row)
                    print(json.dumps(row), flush=True)
            encoder.close()
    return results


def drift(texts: list[str], max_tokens: int, batch: int) -> dict:
    """Cosine between each passage's vector from a bucketed batch of `batch` and the same passage alone."""
    found = {}
    for quantization in ("int8", "fp32"):
        model, tokenizer = model_files(quantization)
        encoder = BareEncoder(model, tokenizer, max_tokens, 1, 1)
        batched, _ = encoder.embed(texts, batch, True)
        alone, _ = encoder.embed(texts, 1, False)
        cosines = np.einsum("ij,ij->i", batched.astype(np.float64), alone.astype(np.float64))
        found[quantization] = {"batch": batch, "passages": len(texts), "cosine_min": round(float(cosines.min()), 6),
                               "cosine_median": round(float(np.median(cosines)), 6),
                               "identical": int(np.sum(np.all(batched == alone, axis=1)))}
        encoder.close()
    return found


def hexmcp_rounds(documents: list, corpus: Path, texts: list[str], passages: int, floor: dict, max_tokens: int,
                  rounds: int, quantizations: list[str]) -> dict:
    """The floor, then per precision hexmcp's embedding stage and its `index_corpus`, alternating, `rounds` times."""
    from hexmcp.tools.knowledge.corpus import CorpusSpec
    from hexmcp.tools.knowledge.embedder import PassageEmbedder
    from hexmcp.tools.knowledge.indexing import index_corpus

    model, tokenizer = model_files(floor["quantization"])
    bare = BareEncoder(model, tokenizer, max_tokens, floor["sessions"], floor["threads"])
    work = Path(tempfile.mkdtemp(prefix="hexmcp-index-floor-"))
    try:
        pages = copy_pages(documents, corpus, work / "pages")
        cache = work / "cache"  # a fresh passage-vector cache each round; the model comes from the usual cache
        embedders = {q: PassageEmbedder.load(quantization=q) for q in quantizations}
        for embedder in embedders.values():
            embedder.embed_many(texts[:16])  # warm-up: the embedder's threads and session
        bare.embed(texts[:16], floor["batch"], floor["bucketed"])
        tokens = 0
        timings: dict[str, list[float]] = {"floor": []}
        for _ in range(rounds):
            started = time.perf_counter()
            _, tokens = bare.embed(texts, floor["batch"], floor["bucketed"])
            timings["floor"].append(time.perf_counter() - started)
            for quantization, embedder in embedders.items():
                started = time.perf_counter()
                embedder.submit_many(texts, passages=passages).result()
                timings.setdefault(f"{quantization} embedding", []).append(time.perf_counter() - started)
                shutil.rmtree(cache / "knowledge", ignore_errors=True)
                started = time.perf_counter()
                summary = index_corpus(CorpusSpec(roots=[pages]), cache_dir=cache, embedder=embedder)
                timings.setdefault(f"{quantization} end to end", []).append(time.perf_counter() - started)
                # The same passages, all embedded by this run, and the same real tokens as the floor read.
                assert (summary.passages, summary.embedded, summary.tokens) == (passages, passages, tokens), summary
    finally:
        bare.close()
        shutil.rmtree(work, ignore_errors=True)
    result: dict = {"floor_config": floor["config"], "passages": passages, "windows": len(texts), "tokens": tokens,
                    "rounds": rounds}
    floor_s = statistics.median(timings["floor"])
    for stage, seconds in timings.items():
        median = statistics.median(seconds)
        result[stage] = {"seconds": round(median, 2), "passages_per_s": round(passages / median, 1),
                         "tokens_per_s": round(tokens / median), "ratio": round(floor_s / median, 3)}
    return result


def load_average() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    from hexmcp.tools.knowledge.embedder import PASSAGE_MAX_TOKENS

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=REPOSITORY / "bench" / "data" / "corpora" / "kubernetes")
    parser.add_argument("--passages", type=int, default=800, help="passages of the comparison (whole pages)")
    parser.add_argument("--sweep-passages", type=int, default=96, help="passages each sweep configuration runs")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--skip-sweep", action="store_true", help="take --floor as the floor instead")
    parser.add_argument("--floor", default="int8 b32 bucketed 2x1t", help="with --skip-sweep: the floor's config name")
    parser.add_argument("--drift-passages", type=int, default=128)
    parser.add_argument("--quantization", nargs="+", default=["int8", "fp32"], choices=["int8", "fp32"],
                        help="the precisions of hexmcp's indexing to measure against the floor")
    args = parser.parse_args()
    began = time.perf_counter()
    documents, texts, passages = pick_pages(args.corpus, args.passages)
    print(json.dumps({"cpus": os.cpu_count(), "corpus": str(args.corpus.relative_to(REPOSITORY))
                      if args.corpus.is_relative_to(REPOSITORY) else args.corpus.name,
                      "pages": len(documents), "passages": passages, "windows": len(texts), "load": load_average()}),
          flush=True)
    if args.skip_sweep:
        quantization, batch, order, placement = args.floor.split()
        sessions, threads = placement.rstrip("t").split("x")
        floor = {"config": args.floor, "quantization": quantization, "batch": int(batch.lstrip("b")),
                 "bucketed": order == "bucketed", "sessions": int(sessions), "threads": int(threads)}
    else:
        results = sweep(texts[: args.sweep_passages], PASSAGE_MAX_TOKENS)
        floor = max(results, key=lambda row: row["tokens_per_s"])
        print(json.dumps({"floor": floor["config"], "passages_per_s": floor["passages_per_s"],
                          "tokens_per_s": floor["tokens_per_s"], "load": load_average()}), flush=True)
    if args.drift_passages:
        print(json.dumps({"drift": drift(texts[: args.drift_passages], PASSAGE_MAX_TOKENS, DRIFT_BATCH)}), flush=True)
    result = hexmcp_rounds(documents, args.corpus, texts, passages, floor, PASSAGE_MAX_TOKENS, args.rounds,
                           args.quantization)
    print(json.dumps({**result, "load": load_average(), "run_seconds": round(time.perf_counter() - began)}), flush=True)
    floor_figures = result["floor"]
    print(f"floor ({floor['config']}): {floor_figures['passages_per_s']} passages/s, {floor_figures['tokens_per_s']} "
          f"tokens/s over {passages} passages ({len(texts)} windows) of {len(documents)} pages", flush=True)
    for stage, figures in result.items():
        if isinstance(figures, dict) and stage != "floor":
            print(f"hexmcp {stage}: {figures['passages_per_s']} passages/s, {figures['tokens_per_s']} tokens/s "
                  f"= {figures['ratio']:.2f}x the floor (target >= 0.8)", flush=True)

if __name__ == "__main__":
    main()
