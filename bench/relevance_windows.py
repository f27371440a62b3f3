"""Lever: embed a passage's whole text, not only its first 256 tokens (MiniLM's window).

    python -m bench.relevance_windows [--set NAME ...] [--overlap N] [--verify N] [--json FILE]

A 1,000-character passage can run past the window (a fifth to a half of them on the public sets), and the
tokens past it are never embedded. Here a passage longer than the window gets further window vectors: its
body cut into token windows that overlap by `--overlap` tokens, the last one ending at the body's end, each
embedded with the passage's title and heading path in front, as the first window is. The passage's dense
score is then either the best of its windows' cosines (`max`, several rows per passage in the store) or the
cosine of the normalised mean of its window vectors (`mean`, one row). Both are measured beside the served
pipeline (one vector, the first window) in the same run, with `search`'s hybrid fusion and distinct pages.

The served vectors come from the usual cache; the extra windows are embedded here (cached under
<cache>/windows-lever, keyed by their text). `--verify N` re-embeds N passages per set with today's
encoder path and reports the largest difference from the cached vectors.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import sys
import time
from pathlib import Path
from typing import Any, Collection

import numpy as np

from hexmcp.tools.knowledge.builder import build_index, new_store
from hexmcp.tools.knowledge.corpus import CorpusSpec, load_documents
from hexmcp.tools.knowledge.embedder import PASSAGE_MAX_TOKENS, PassageEmbedder
from hexmcp.tools.knowledge.fusion import Method
from hexmcp.tools.knowledge.passages import Passage
from hexmcp.tools.knowledge.retrieval import KnowledgeIndex
from hexmcp.tools.knowledge.vectors.port import VectorHit

from . import relevance_sets

WINDOW_MARK = "#w"  # a further window's row id: the passage id, the mark, the window's number


def plain_tokenizer(embedder: PassageEmbedder) -> Any:
    """The encoder's tokenizer without truncation or padding: to count and cut a passage's tokens."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_str(embedder.encoder.tokenizer.to_str())
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


def further_windows(passage: Passage, tokenizer: Any, overlap: int, max_tokens: int = PASSAGE_MAX_TOKENS) -> list[str]:
    """The texts of the passage's windows after the first (empty when the passage fits the window)."""
    room = max_tokens - 2  # [CLS] and [SEP]
    if len(tokenizer.encode(passage.indexed_text(), add_special_tokens=False).ids) <= room:
        return []
    context = " > ".join(h for h in (passage.title, *passage.headings) if h)
    prefix = f"{context}\n\n" if context else ""
    budget = room - (len(tokenizer.encode(prefix, add_special_tokens=False).ids) if prefix else 0)
    if budget < 2 * overlap:  # a heading path that eats the window: windows of body alone
        prefix, budget = "", room
    offsets = tokenizer.encode(passage.text, add_special_tokens=False).offsets
    count = len(offsets)
    if count <= budget:  # only the context pushed it past: the body alone fits, once, with its context cut
        return []
    stride = budget - overlap
    starts = [*range(stride, count - budget, stride), count - budget]
    return [prefix + passage.text[offsets[s][0]:offsets[min(s + budget, count) - 1][1]] for s in starts]


class WindowCache:
    """Extra window vectors by the digest of (model key, text), in one .npz per set."""

    def __init__(self, path: Path, model_key: str) -> None:
        self.path, self.model_key = path, model_key
        self.vectors: dict[str, np.ndarray] = {}
        if path.exists():
            with np.load(path, allow_pickle=False) as data:
                self.vectors = {k: data[k] for k in data.files}

    def key(self, text: str) -> str:
        return hashlib.sha256(f"{self.model_key}\x1f{text}".encode()).hexdigest()[:32]

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        buffer = io.BytesIO()
        np.savez(buffer, **self.vectors)
        self.path.write_bytes(buffer.getvalue())


class MaxOfWindows:
    """A store view whose hits are passages scored by their best window (rows `id` and `id#wN`)."""

    def __init__(self, store: Any) -> None:
        self.store, self.dimension = store, store.dimension

    def search(self, query: np.ndarray, limit: int, *, document_id: str | None = None,
               document_ids: Collection[str] | None = None) -> list[VectorHit]:
        best: dict[str, float] = {}
        depth = limit
        while True:
            hits = self.store.search(query, depth * 3, document_id=document_id, document_ids=document_ids)
            for hit in hits:
                best.setdefault(hit.passage_id.split(WINDOW_MARK)[0], hit.score)
            if len(best) >= limit or len(hits) < depth * 3:
                break
            depth *= 3
            best.clear()
        return [VectorHit(passage_id=p, score=s) for p, s in list(best.items())[:limit]]

    def __len__(self) -> int:
        return len(self.store)


def measure(name: str, embedder: PassageEmbedder, cache_dir: Path, overlap: int, verify: int) -> dict[str, Any]:
    relevance_set = relevance_sets.load_public_set(name)
    documents = load_documents(CorpusSpec(roots=[str(relevance_set.corpus)]))
    served_store = new_store(embedder.dimension)
    index = build_index(documents, embedder, served_store, cache_dir=cache_dir)
    passages = index.passages
    ids = [p.passage_id for p in passages]
    documents_of = [p.document_id for p in passages]
    served = np.stack([served_store._matrix[served_store._slot_of[i]] for i in ids])  # noqa: SLF001 - a bench

    result: dict[str, Any] = {"set": name, "passages": len(passages), "questions": len(relevance_set.questions)}
    if verify:
        sample = np.random.default_rng(0).choice(len(passages), size=min(verify, len(passages)), replace=False)
        fresh = embedder.embed_many([passages[i].indexed_text() for i in sample])
        result["verify_max_abs_diff"] = float(np.abs(fresh - served[sample]).max())
        result["verify_passages"] = len(sample)

    tokenizer = plain_tokenizer(embedder)
    started = time.perf_counter()
    windows = [further_windows(p, tokenizer, overlap) for p in passages]
    result["window_cut_seconds"] = round(time.perf_counter() - started, 2)
    cache = WindowCache(cache_dir / "windows-lever" / f"{name}-o{overlap}.npz", embedder.model_key)
    texts = [t for ws in windows for t in ws]
    missing = list(dict.fromkeys(t for t in texts if cache.key(t) not in cache.vectors))
    started = time.perf_counter()
    if missing:
        for text, vector in zip(missing, embedder.embed_many(missing)):
            cache.vectors[cache.key(text)] = vector
        cache.save()
    result["embedded_windows"] = len(missing)
    result["embed_seconds"] = round(time.perf_counter() - started, 1)
    result["long_passages"] = sum(1 for ws in windows if ws)
    result["further_windows"] = len(texts)

    max_store = new_store(embedder.dimension)
    max_store.upsert(ids, served, documents_of)
    extra_ids = [f"{p.passage_id}{WINDOW_MARK}{n}" for p, ws in zip(passages, windows) for n in range(1, len(ws) + 1)]
    extra_docs = [p.document_id for p, ws in zip(passages, windows) for _ in ws]
    if texts:
        max_store.upsert(extra_ids, np.stack([cache.vectors[cache.key(t)] for t in texts]), extra_docs)
    mean = served.copy()
    for row, ws in enumerate(windows):
        if ws:
            total = served[row] + sum(cache.vectors[cache.key(t)] for t in ws)
            mean[row] = total / np.linalg.norm(total)
    mean_store = new_store(embedder.dimension)
    mean_store.upsert(ids, mean, documents_of)
    result["vectors"] = {"served": len(ids), "max": len(max_store), "mean": len(ids)}

    systems = {"served": served_store, "max": MaxOfWindows(max_store), "mean": mean_store}
    page_of = lambda d: index.pages.page(d).key  # noqa: E731
    result["systems"] = {}
    for system, store in systems.items():
        view = KnowledgeIndex(list(index.documents.values()), passages, embedder.embed, store, index.version)
        for method, label in ((Method.HYBRID, system), (Method.DENSE, f"{system}/dense")):
            per_question = []
            for q in relevance_set.questions:
                ranked = [h.document.document_id for h in view.search_documents(q.text, 10, method=method,
                                                                                 distinct=method is Method.HYBRID)]
                per_question.append(relevance_sets.score_ranking(ranked, q.answers, page_of))
            result["systems"][label] = relevance_sets.mean_scores(per_question)
    return result


def print_result(result: dict[str, Any]) -> None:
    print(f"\n{result['set']}: {result['passages']} passages ({result['long_passages']} past the window, "
          f"{result['further_windows']} further windows; {result['embedded_windows']} embedded now in "
          f"{result['embed_seconds']} s), {result['questions']} questions; vectors {result['vectors']}")
    if "verify_max_abs_diff" in result:
        print(f"cached vs re-embedded today, {result['verify_passages']} passages: max |diff| "
              f"{result['verify_max_abs_diff']:.2e}")
    print(f"{'system':<13} " + " ".join(f"{m:>9}" for m in relevance_sets.MEASURES))
    for system, scores in result["systems"].items():
        print(f"{system:<13} " + " ".join(f"{scores[m]:>9.3f}" for m in relevance_sets.MEASURES))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", dest="sets", action="append", default=[])
    parser.add_argument("--overlap", type=int, default=64, help="tokens shared by neighbouring windows")
    parser.add_argument("--verify", type=int, default=0, help="re-embed this many passages per set and compare")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    from hexmcp.tools.cache_dir import default_cache_dir

    embedder = PassageEmbedder.load()
    results = []
    for name in args.sets or relevance_sets.PUBLIC_SETS:
        result = measure(name, embedder, default_cache_dir(), args.overlap, args.verify)
        print_result(result)
        results.append(result)
    if args.json:
        import json

        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
