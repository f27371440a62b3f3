"""Corpus → KnowledgeIndex: chunk every document, embed what the cache does not already hold,
fill the vector store.

The on-disk cache holds one .npz per document: its passages' window vectors (windows.py) and how many
windows each passage has, named by a digest of the model key, the window settings and every text the
encoder reads of the document (each passage's indexed text, in order). So whatever changes what is
embedded — an edited file, a reader or chunker that cuts or cleans it otherwise — misses and re-embeds,
with no version number anyone must remember to bump; an unchanged document hits on any machine, and a
run interrupted mid-corpus resumes at the first document it had not finished. Writes are atomic, so an
interruption never leaves a torn file.
"""

from __future__ import annotations

import collections
import hashlib
import io
import time
from pathlib import Path
from typing import Callable, Collection, Sequence

import numpy as np
import structlog

from .chunking import DEFAULT_MAX_CHARS, chunk_document
from .embedder import PASSAGE_MAX_TOKENS
from .errors import IndexingCancelled
from .passages import Passage, SourceDocument
from .retrieval import KnowledgeIndex
from .vectors.port import VectorStore
from .windows import WINDOWS_VERSION, passage_windows, row_id

log = structlog.get_logger(__name__)

#: Passages queued ahead of the oldest unfinished document: enough that both inference workers stay busy
#: across short documents, few enough that Ctrl-C waits about a second for the window to be saved.
WINDOW_PASSAGES = 32

Progress = Callable[[int], None]  # called with the number of passages just embedded or loaded
Publish = Callable[[KnowledgeIndex], None]  # called with each partial index and the final one
Chunked = tuple[SourceDocument, tuple[Passage, ...]]  # a document and its passages


#: The cache file of a document's vectors: `vectors` (one row per window, passage by passage) and `windows`
#: (each passage's count). Before windows it was a .npy of one row per passage; those are never read again.
CACHE_SUFFIX = ".npz"


def vectors_key(model_key: str, passages: Sequence[Passage], windows: bool = True) -> str:
    """The cache key of a document's vectors: what the encoder reads of it and how. `windows`: whether the
    embedder cuts passages into windows (an embedder without a tokenizer does not); the windows themselves
    are a pure function of a passage's indexed text, the model's tokenizer and these settings."""
    digest = hashlib.sha256(f"{model_key}\x1fwindows={WINDOWS_VERSION if windows else 'first'}\x1f"
                            f"tokens={PASSAGE_MAX_TOKENS}\x1f{len(passages)}\x1f".encode())
    for passage in passages:
        text = passage.indexed_text().encode("utf-8")
        digest.update(f"{len(text)}\x1f".encode())  # lengths first: passage boundaries are part of the key
        digest.update(text)
    return digest.hexdigest()[:32]


def cache_path(directory: Path, key: str) -> Path:
    return directory / f"{key}{CACHE_SUFFIX}"


def document_key(embedder: object, passages: Sequence[Passage]) -> str:
    """The cache key of a document's vectors from `embedder`: windowed if it cuts passages (`token_offsets`)."""
    return vectors_key(embedder.model_key, passages,  # type: ignore[attr-defined]
                       getattr(embedder, "token_offsets", None) is not None)


class VectorCache:
    def __init__(self, directory: Path | None, lookups: collections.Counter[str] | None = None) -> None:
        self.directory = directory
        # "hit"/"miss" per document looked up, for the cache's hit rate (/metrics); the caller's to keep.
        self.lookups: collections.Counter[str] = lookups if lookups is not None else collections.Counter()

    def load(self, key: str, passages: int, dimension: int) -> tuple[np.ndarray, np.ndarray] | None:
        """(window vectors, windows per passage) of a document of `passages` passages, or None."""
        held = self._load(key, passages, dimension)
        self.lookups["miss" if held is None else "hit"] += 1
        return held

    def _load(self, key: str, passages: int, dimension: int) -> tuple[np.ndarray, np.ndarray] | None:
        if self.directory is None:
            return None
        try:
            with np.load(cache_path(self.directory, key), allow_pickle=False) as held:
                vectors, windows = held["vectors"], held["windows"]
        except (OSError, ValueError, KeyError):
            return None
        if windows.shape != (passages,) or windows.dtype.kind not in "iu" or (passages and windows.min() < 1):
            return None
        if vectors.shape != (int(windows.sum()), dimension) or vectors.dtype != np.float32:
            return None
        return vectors, windows

    def store(self, key: str, vectors: np.ndarray, windows: np.ndarray) -> None:
        if self.directory is None:
            return
        from hexmcp.tools.embedding.model_cache import atomic_write_bytes

        buffer = io.BytesIO()
        np.savez(buffer, vectors=vectors, windows=windows)
        try:
            atomic_write_bytes(cache_path(self.directory, key), buffer.getvalue())
        except OSError as error:  # a read-only cache costs speed, not correctness
            log.warning("cannot write the passage-vector cache", error=str(error))


def index_version(model_key: str, max_chars: int, chunked: Sequence[Chunked], keys: dict[str, str],
                  text_digest: Callable[[SourceDocument], bytes]) -> str:
    """Changes with any document's text (passages' offsets, which citations give, move with it even where
    the indexed text does not) and with anything that changes what is embedded (`keys`: each document's
    vector-cache key). `text_digest`: a document's text digest (DocumentMemo keeps them)."""
    digest = hashlib.sha256(f"{model_key}\x1f{max_chars}".encode())
    for document, _ in sorted(chunked, key=lambda item: item[0].document_id):
        digest.update(f"{document.document_id}\x1f{keys[document.document_id]}\x1f".encode())
        digest.update(text_digest(document))
    return digest.hexdigest()[:16]


def _text_digest(document: SourceDocument) -> bytes:
    return hashlib.sha256(document.text.encode("utf-8")).digest()


class DocumentMemo:
    """What builds derived from each document — its passages, its vector-cache key, its text's digest — kept
    for the document object they came from. A watched corpus keeps an unchanged file's SourceDocument (the
    corpus reader re-reads only changed paths), so a re-index chunks and hashes only what changed, and the
    unchanged passages are the same objects, whose BM25 terms the next index reuses (lexical.py)."""

    def __init__(self) -> None:
        self._by_id: dict[str, tuple[SourceDocument, tuple[Passage, ...], str, bytes]] = {}
        self._settings: tuple[str, bool, int] | None = None  # what the kept passages and keys depend on

    def chunked(self, documents: Sequence[SourceDocument], embedder: object, max_chars: int
                ) -> tuple[list[Chunked], dict[str, str]]:
        """Each document with its passages, and each one's vector-cache key; derived again only where the
        document is not the object last seen under its id. Documents no longer given are forgotten."""
        settings = (embedder.model_key, getattr(embedder, "token_offsets", None) is not None,  # type: ignore[attr-defined]
                    max_chars)
        kept = self._by_id if settings == self._settings else {}
        by_id: dict[str, tuple[SourceDocument, tuple[Passage, ...], str, bytes]] = {}
        for document in documents:
            entry = kept.get(document.document_id)
            if entry is None or entry[0] is not document:
                chunks = chunk_document(document, max_chars)
                entry = (document, chunks, document_key(embedder, chunks), _text_digest(document))
            by_id[document.document_id] = entry
        self._by_id, self._settings = by_id, settings
        return ([(document, chunks) for document, chunks, _, _ in by_id.values()],
                {document_id: key for document_id, (_, _, key, _) in by_id.items()})

    def text_digest(self, document: SourceDocument) -> bytes:
        entry = self._by_id.get(document.document_id)
        return entry[3] if entry is not None and entry[0] is document else _text_digest(document)


def build_index(documents: Sequence[SourceDocument], embedder: object, store: VectorStore, *,
                cache_dir: Path | None = None, max_chars: int = DEFAULT_MAX_CHARS,
                progress: Progress | None = None, publish: Publish | None = None,
                cancelled: Callable[[], bool] | None = None, stored: Collection[str] = frozenset(),
                cache_lookups: collections.Counter[str] | None = None,
                preferred_version: str | None = None,
                counted: Callable[[int], None] | None = None, memo: DocumentMemo | None = None,
                previous: KnowledgeIndex | None = None) -> KnowledgeIndex:
    """The whole corpus's index. With `publish`, partial indexes are handed out on the way: first
    everything the cache holds, then more as embedding goes on, so serving never waits for the
    slowest document. The version of a partial index says so (`-partial`). `stored` names documents
    whose rows `store` already holds unchanged (a re-index): they are neither loaded nor written.
    `cache_lookups` counts the vector cache's hits and misses (one per document looked up).
    `preferred_version` names the version whose copy of a page answers for it (default: the newest).
    `counted` is told the number of passages once the documents are chunked, before any is indexed.
    `memo`: what earlier builds derived from documents that are unchanged (kept across re-indexes);
    `previous`: the index serving now, whose unchanged passages' BM25 terms are reused."""
    cache = VectorCache(cache_dir / "knowledge" if cache_dir else None, cache_lookups)
    memo = memo if memo is not None else DocumentMemo()  # a fresh one derives everything, as a first build must
    chunked, keys = memo.chunked(documents, embedder, max_chars)
    build = _Build(chunked, embedder, store, cache, max_chars, progress, preferred_version, keys=keys,
                   text_digest=memo.text_digest, previous=previous)
    if counted is not None:
        counted(sum(len(chunks) for _, chunks in chunked))
    pending = build.add_held(chunked, stored)
    publisher = _Publisher(publish, build.snapshot)
    if pending:
        publisher.maybe(force=bool(build.passages))
    build.embed(pending, publisher, cancelled, total=len(chunked))
    final = build.snapshot(final=True)
    if publish is not None:
        publish(final)
    return final


class _Build:
    """One build's progress: the documents indexed so far, in corpus order, with their passages."""

    def __init__(self, chunked: Sequence[Chunked], embedder: object, store: VectorStore,
                 cache: VectorCache, max_chars: int, progress: Progress | None,
                 preferred_version: str | None = None, *, keys: dict[str, str],
                 text_digest: Callable[[SourceDocument], bytes], previous: KnowledgeIndex | None = None) -> None:
        self.embedder, self.store, self.cache, self.progress = embedder, store, cache, progress
        self.preferred_version = preferred_version
        self.model_key: str = embedder.model_key  # type: ignore[attr-defined]
        # Cuts a passage into windows (windows.py); an embedder without a tokenizer embeds each passage once.
        self.token_offsets = getattr(embedder, "token_offsets", None)
        self.dimension: int = embedder.dimension  # type: ignore[attr-defined]
        # Each document's vector-cache key, hashed once: the version, the cache's lookups and its writes read it.
        self.keys = keys
        self.version = index_version(self.model_key, max_chars, chunked, self.keys, text_digest)
        self.previous = previous  # the last index made, whose passages' BM25 terms the next one reuses
        self.passages: list[Passage] = []
        self.done: list[SourceDocument] = []
        # Corpus order: documents complete out of it (what the store or cache holds comes first), and the final
        # index is put back in it, so an index is the same whatever was cached or re-indexed (ties rank alike).
        self.position = {document.document_id: n for n, (document, _) in enumerate(chunked)}
        self.chunks: dict[str, tuple[Passage, ...]] = {}
        self.in_order = True
        # The most rows one passage holds; None once a document the store held already came in (its count unknown).
        self.max_windows: int | None = 1

    def snapshot(self, final: bool) -> KnowledgeIndex:
        if final and not self.in_order:
            self.done.sort(key=lambda document: self.position[document.document_id])
            self.passages = [p for document in self.done for p in self.chunks[document.document_id]]
            self.in_order = True
        index = KnowledgeIndex(self.done, self.passages, self.embedder.embed, self.store,  # type: ignore[attr-defined]
                               self.version if final else f"{self.version}-partial",
                               preferred_version=self.preferred_version, rows=len(self.store),
                               max_windows=self.max_windows, partial=not final, previous=self.previous)
        self.previous = index
        return index

    def add_held(self, chunked: list[Chunked], stored: Collection[str]) -> list[Chunked]:
        """First pass: add what the store or the cache already holds; the rest is returned, to embed."""
        pending: list[Chunked] = []
        for document, chunks in chunked:
            if document.document_id in stored:
                self.add(document, chunks, None)
                continue
            held = self.cache.load(self.keys[document.document_id], len(chunks), self.dimension) if chunks else None
            if chunks and held is None:
                pending.append((document, chunks))
                continue
            self.add(document, chunks, held)
        return pending

    def embed(self, pending: list[Chunked], publisher: _Publisher, cancelled: Callable[[], bool] | None, *,
              total: int) -> None:
        """Second pass: embed, a window of documents in flight at once (the embedder's workers share their
        passages), each saved and added, in order, as soon as it is complete."""
        in_flight: collections.deque[tuple[SourceDocument, tuple[Passage, ...], np.ndarray, object]]
        in_flight = collections.deque()

        def complete_oldest() -> None:
            document, chunks, windows, pending_vectors = in_flight.popleft()
            vectors = pending_vectors.result()  # type: ignore[attr-defined]
            self.cache.store(self.keys[document.document_id], vectors, windows)
            self.add(document, chunks, (vectors, windows))
            publisher.maybe()

        try:
            for document, chunks in pending:
                if cancelled is not None and cancelled():
                    raise _Cancelled
                texts = [self.windows(p) for p in chunks]
                submitted = self.embedder.submit_many([t for ts in texts for t in ts],  # type: ignore[attr-defined]
                                                      passages=len(chunks))
                in_flight.append((document, chunks, np.array([len(ts) for ts in texts], dtype=np.int32), submitted))
                while sum(len(c) for _, c, _, _ in in_flight) > WINDOW_PASSAGES and len(in_flight) > 1:
                    complete_oldest()
            while in_flight:
                complete_oldest()
        except BaseException as stop:  # Ctrl-C, cancellation, a failed document: keep what is finished
            _drain(in_flight, complete_oldest)
            if isinstance(stop, _Cancelled):
                raise IndexingCancelled(f"stopped after {len(self.done)} of {total} documents; "
                                        "the rest resume later") from None
            raise

    def windows(self, passage: Passage) -> list[str]:
        if self.token_offsets is None:
            return [passage.indexed_text()]
        return passage_windows(passage, self.token_offsets, PASSAGE_MAX_TOKENS)

    def add(self, document: SourceDocument, chunks: tuple[Passage, ...],
            held: tuple[np.ndarray, np.ndarray] | None) -> None:
        """`held`: the window vectors and each passage's window count; None when the store holds them already."""
        if chunks and held is not None:
            vectors, windows = held
            rows = [(row_id(p.passage_id, n), p.document_id) for p, count in zip(chunks, windows.tolist())
                    for n in range(count)]
            self.store.upsert([row for row, _ in rows], vectors, [document for _, document in rows])
            if self.max_windows is not None and len(windows):
                self.max_windows = max(self.max_windows, int(windows.max()))
        elif chunks:
            self.max_windows = None
        if self.done and self.position[self.done[-1].document_id] > self.position[document.document_id]:
            self.in_order = False
        self.passages.extend(chunks)
        self.done.append(document)
        self.chunks[document.document_id] = chunks
        if self.progress is not None and chunks:
            self.progress(len(chunks))


class _Cancelled(Exception):
    """Internal: `cancelled()` said stop; raised as IndexingCancelled once the window is drained."""


def _drain(in_flight: collections.deque, complete_oldest: Callable[[], None]) -> None:
    """Finish the documents already queued (at most a window, about a second of work) so an interrupted
    or cancelled build saves them; one that fails is dropped (it re-embeds on the next run)."""
    while in_flight:
        try:
            complete_oldest()
        except Exception:
            log.warning("a document in flight failed while stopping; it re-embeds next time", exc_info=True)


class _Publisher:
    """Hands out partial indexes, no more often than every few seconds and never for more than a
    fifth of the build's time: each snapshot rebuilds BM25 over everything so far. While requests keep
    coming (the foreground gate says busy) a snapshot waits, BUSY_INTERVAL_S or twenty times its cost: it
    is Python holding the GIL and a core for a second or more on a few thousand passages, and requests
    would wait behind it (bench/diaries/background.md)."""

    MIN_INTERVAL_S = 5.0
    BUSY_INTERVAL_S = 30.0

    def __init__(self, publish: Publish | None, snapshot: Callable[[bool], KnowledgeIndex],
                 foreground_busy: Callable[[], bool] | None = None) -> None:
        self.publish, self.snapshot = publish, snapshot
        self.foreground_busy = foreground_busy or _foreground_busy
        self.last = time.perf_counter()
        self.cost = 0.0

    def maybe(self, force: bool = False) -> None:
        if self.publish is None:
            return
        now = time.perf_counter()
        due = max(self.MIN_INTERVAL_S, 4 * self.cost)
        if not force and self.foreground_busy():  # a twentieth of the build's time at most, not a fifth
            due = max(due, self.BUSY_INTERVAL_S, 20 * self.cost)
        if force or now - self.last >= due:
            self.publish(self.snapshot(False))
            self.last = time.perf_counter()
            self.cost = self.last - now


def _foreground_busy() -> bool:
    """Whether requests are coming now: the foreground gate keeps a core for them (foreground_gate.py)."""
    from hexmcp.tools.embedding.foreground_gate import FOREGROUND

    return FOREGROUND.busy()


def new_store(dimension: int, spec: str = "memory") -> VectorStore:
    """A store by its --vector-store spec; the default is in-process (exact while small, ANN beyond)."""
    from .vectors import open_vector_store

    return open_vector_store(spec, dimension)
