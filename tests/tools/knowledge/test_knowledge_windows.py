"""A passage longer than the encoder's window gets a vector per window, and its dense score is its best
window's: the cutting (a property over any text), the cache, and both vector stores."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from hexmcp.tools.knowledge.builder import VectorCache, build_index, vectors_key
from hexmcp.tools.knowledge.chunking import chunk_document
from hexmcp.tools.knowledge.corpus import CorpusSpec, load_documents
from hexmcp.tools.knowledge.embedder import PASSAGE_MAX_TOKENS
from hexmcp.tools.knowledge.fusion import Method
from hexmcp.tools.knowledge.passages import Passage
from hexmcp.tools.knowledge.vectors.memory import MemoryVectorStore
from hexmcp.tools.knowledge.windows import WINDOW_OVERLAP, passage_of_row, passage_windows, row_id


def _words(text: str) -> list[tuple[int, int]]:
    """A stand-in tokenizer: one token per run of non-space characters."""
    return [(m.start(), m.end()) for m in re.finditer(r"\S+", text)]


def _passage(title: str, headings: tuple[str, ...], text: str) -> Passage:
    return Passage(passage_id="p-1", document_id="d.md", title=title, headings=headings, start=0, end=len(text),
                   text=text)


@given(words=st.integers(0, 900), title_words=st.integers(0, 150), max_tokens=st.sampled_from([16, 64, 256]),
       overlap=st.sampled_from([0, 2, 8, 64]))
@example(words=100, title_words=60, max_tokens=64, overlap=0)  # the title and heading fill the window exactly
def test_every_token_of_a_passage_is_in_a_window_no_window_overflows_and_neighbours_overlap(
        words: int, title_words: int, max_tokens: int, overlap: int) -> None:
    text = " ".join(f"w{i}" for i in range(words))
    passage = _passage(" ".join(f"t{i}" for i in range(title_words)), ("Heading",), text)
    windows = passage_windows(passage, _words, max_tokens, overlap)
    room = max_tokens - 2
    assert windows[0] == passage.indexed_text()  # the first window is what was always embedded
    context_tokens = len(_words(passage.indexed_text())) - words
    seen = [set(range(max(0, min(words, room - context_tokens))))]  # the first window, truncated at the window
    for window in windows[1:]:
        assert len(_words(window)) <= room
        body = window[window.rfind("\n") + 1:] if "\n" in window else window
        seen.append({int(token[1:]) for token in body.split()})
    assert set().union(*seen) == set(range(words))
    if len(windows) > 1 and room - context_tokens >= max(2 * overlap, room // 2):
        context = passage.indexed_text()[: passage.indexed_text().index("w0")]
        assert all(window.startswith(context) for window in windows[1:])
    for before, after in zip(seen[1:], seen[2:]):
        assert len(before & after) >= min(overlap, len(before) // 2) and min(after) > min(before)


def test_a_passage_that_fits_is_one_window_and_rows_name_their_passage() -> None:
    assert passage_windows(_passage("T", (), "a short passage"), _words, 256) == ["T\n\na short passage"]
    assert passage_of_row(row_id("p-abc", 0)) == passage_of_row(row_id("p-abc", 3)) == "p-abc"
    assert row_id("p-abc", 0) == "p-abc" and row_id("p-abc", 2) != row_id("p-abc", 1)


def test_the_real_tokenizer_cuts_windows_the_encoder_reads_whole(embedder) -> None:
    text = " ".join(f"Sentence {i} says something about retention policies." for i in range(120))
    passage = _passage("Storage guide", ("Backups", "Retention"), text)
    windows = passage_windows(passage, embedder.token_offsets, PASSAGE_MAX_TOKENS)
    assert len(windows) >= 3
    for window in windows[1:]:
        assert window.startswith("Storage guide > Backups > Retention\n\n")
        assert len(embedder.token_offsets(window)) <= PASSAGE_MAX_TOKENS - 2  # nothing truncated away
    assert windows[-1].endswith("Sentence 119 says something about retention policies.")
    assert WINDOW_OVERLAP < PASSAGE_MAX_TOKENS // 2


# One passage (a section under 1,000 characters) whose last sentence lies far past MiniLM's 256 tokens: the
# code-like filler costs a token or more per character.
_FILLER = " ".join(f"x{i}=y{i}+z{i};" for i in range(55))
_TAIL = "Penguins huddle together on the Antarctic ice to survive the winter."
_LONG = f"# Configuration reference\n\n## Flags\n\n{_FILLER} {_TAIL}\n"


def _long_corpus(root: Path) -> Path:
    root.mkdir()
    (root / "flags.md").write_text(_LONG, encoding="utf-8")
    (root / "birds.md").write_text("# Birds\n\nSparrows nest under roofs in towns and cities.\n", encoding="utf-8")
    (root / "cooking.md").write_text("# Cooking\n\nBoil the pasta in salted water for ten minutes.\n", encoding="utf-8")
    return root


@pytest.mark.parametrize("store_kind", ["memory", "qdrant"])
def test_a_long_passages_tail_is_found_once_in_both_stores_and_comes_back_from_the_cache(
        embedder, tmp_path: Path, store_kind: str) -> None:
    documents = load_documents(CorpusSpec(roots=[_long_corpus(tmp_path / "docs")]))
    (flags,) = [d for d in documents if d.document_id == "flags.md"]
    (passage,) = [p for p in chunk_document(flags) if p.headings[-1] == "Flags"]
    assert len(passage_windows(passage, embedder.token_offsets, PASSAGE_MAX_TOKENS)) >= 2
    assert _TAIL not in embedder.encoder.tokenizer.decode(embedder.encoder.tokenizer.encode(passage.indexed_text()).ids)

    def store():
        if store_kind == "memory":
            return MemoryVectorStore(embedder.dimension)
        from hexmcp.tools.knowledge.vectors.qdrant import QdrantVectorStore

        return QdrantVectorStore(embedder.dimension, path=str(tmp_path / f"qdrant-{len(list(tmp_path.iterdir()))}"))

    cache = tmp_path / "cache"
    first_store = store()
    index = build_index(documents, embedder, first_store, cache_dir=cache)
    assert len(first_store) > len(index.passages)  # the long passage holds more than one row
    hits = index.search_passages("penguins surviving the antarctic winter", 3, method=Method.DENSE, distinct=False)
    assert hits[0].passage.document_id == "flags.md"
    assert len({h.passage.passage_id for h in hits}) == len(hits)  # a passage answers once, whatever its windows
    tail = embedder.embed(_TAIL)
    (nearest, cosine), *_ = index.nearest_passages(tail, 2)
    assert nearest.passage_id == passage.passage_id and cosine > 0.5
    rows, nearest_three = len(first_store), [(p.passage_id, round(s, 5)) for p, s in index.nearest_passages(tail, 3)]
    first_store.close()

    before = embedder.embedded
    second_store = store()
    again = build_index(documents, embedder, second_store, cache_dir=cache)
    assert embedder.embedded == before  # every window came from the cache
    assert len(second_store) == rows
    assert [(p.passage_id, round(s, 5)) for p, s in again.nearest_passages(tail, 3)] == nearest_three
    second_store.close()


def test_a_cache_file_whose_window_counts_do_not_fit_is_embedded_again(embedder, tmp_path: Path) -> None:
    documents = load_documents(CorpusSpec(roots=[_long_corpus(tmp_path / "docs")]))
    cache = VectorCache(tmp_path / "knowledge")
    document = documents[0]
    key = vectors_key(embedder.model_key, chunk_document(document))
    cache.store(key, np.zeros((3, embedder.dimension), dtype=np.float32), np.array([1, 1], dtype=np.int32))
    assert cache.load(key, 2, embedder.dimension) is None  # 3 rows for windows that add up to 2
    assert cache.load(key, 3, embedder.dimension) is None  # a different passage count
    cache.store(key, np.zeros((3, embedder.dimension), dtype=np.float32), np.array([1, 2], dtype=np.int32))
    held = cache.load(key, 2, embedder.dimension)
    assert held is not None and held[1].tolist() == [1, 2]
    assert key != vectors_key(embedder.model_key, chunk_document(document), windows=False)


_TEXTS = st.lists(st.text(max_size=40), min_size=1, max_size=4)


def _passages(bodies: list[str], document_id: str = "a.md", title: str = "T") -> tuple[Passage, ...]:
    return tuple(Passage(passage_id=f"p-{n}", document_id=document_id, title=title, headings=(), start=0,
                         end=len(body), text=body) for n, body in enumerate(bodies))


@given(_TEXTS, _TEXTS)
def test_the_vector_cache_key_is_the_text_embedded_and_nothing_else(first: list[str], second: list[str]) -> None:
    """Two documents share cached vectors exactly when the encoder reads the same texts, passage by
    passage: wherever they sit, and whichever reader or chunker produced them."""
    same_text = [p.indexed_text() for p in _passages(first)] == [p.indexed_text() for p in _passages(second)]
    assert (vectors_key("m", _passages(first)) == vectors_key("m", _passages(second, "b/c.md"))) == same_text
    assert vectors_key("m", _passages(first)) != vectors_key("m", _passages(first), windows=False)
    assert vectors_key("m", _passages(first)) != vectors_key("other", _passages(first))


def test_passages_split_elsewhere_key_apart() -> None:
    assert vectors_key("m", _passages(["ab", "c"])) != vectors_key("m", _passages(["a", "bc"]))


def test_a_reading_that_changes_what_is_embedded_misses_the_cache_with_no_version_bumped(
        embedder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A reader or chunker change that alters the indexed text of the same file re-embeds it; one that
    does not, loads every vector from the cache."""
    import attrs

    from hexmcp.tools.knowledge import builder

    documents = load_documents(CorpusSpec(roots=[_long_corpus(tmp_path / "docs")]))
    cache = tmp_path / "cache"
    build_index(documents, embedder, MemoryVectorStore(embedder.dimension), cache_dir=cache)
    before = embedder.embedded
    build_index(documents, embedder, MemoryVectorStore(embedder.dimension), cache_dir=cache)
    assert embedder.embedded == before

    def read_otherwise(document, max_chars=1000):  # the birds page's body read with a word cleaned out
        passages = chunk_document(document, max_chars)
        if document.document_id != "birds.md":
            return passages
        return tuple(attrs.evolve(p, indexed_body=p.text.replace("Sparrows", "Finches")) for p in passages)

    monkeypatch.setattr(builder, "chunk_document", read_otherwise)
    index = build_index(documents, embedder, MemoryVectorStore(embedder.dimension), cache_dir=cache)
    birds = [p for p in index.passages if p.document_id == "birds.md"]
    assert embedder.embedded - before == len(birds)  # passages embedded: the birds page's alone
    found = index.nearest_passages(embedder.embed("finches nest under roofs"), 1)
    assert found[0][0].document_id == "birds.md"


class _CountingStore(MemoryVectorStore):
    """The in-process store, remembering how many rows each search asked for."""

    def __init__(self, dimension: int) -> None:
        super().__init__(dimension)
        self.depths: list[int] = []

    def search(self, query, limit, **filters):  # type: ignore[override]
        self.depths.append(limit)
        return super().search(query, limit, **filters)


def test_a_partial_index_reads_no_further_than_its_own_passages_need_while_the_store_grows() -> None:
    # A build publishes partial indexes that share the store it goes on filling: rows of passages a snapshot
    # does not know must not send its searches scanning the whole store for rows it would drop.
    rng = np.random.default_rng(7)
    dimension = 16
    store = _CountingStore(dimension)
    known = [Passage(passage_id=f"known.md#{i}", document_id="known.md", title="Known", headings=("Known",),
                     start=0, end=0, text=f"known passage {i}") for i in range(4)]
    rows = [row_id(p.passage_id, w) for p in known for w in range(2)]  # two windows each
    vectors = _unit(rng.normal(size=(len(rows), dimension)))
    store.upsert(rows, vectors, ["known.md"] * len(rows))
    from hexmcp.tools.knowledge.passages import SourceDocument
    from hexmcp.tools.knowledge.retrieval import KnowledgeIndex

    document = SourceDocument(document_id="known.md", title="Known", text="", media_type="text/markdown",
                              sections=())
    snapshot = KnowledgeIndex([document], known, lambda text: None, store, "v-partial", rows=len(store),
                              max_windows=2, partial=True)
    query = _unit(rng.normal(size=(1, dimension)))[0]
    assert len(snapshot.nearest_passages(query, 3)) == 3
    # The build goes on: 400 rows of passages this snapshot never saw, many nearer the query than its own.
    foreign = [f"later.md#{i}" for i in range(400)]
    store.upsert(foreign, _unit(query + 0.05 * rng.normal(size=(400, dimension))), ["later.md"] * 400)
    store.depths.clear()
    snapshot.nearest_passages(query, 3)
    assert max(store.depths) <= 3 * 2  # one read of its own rows' worth, not the whole store
    # A finished index is exact: it reads until it holds `limit` passages, at most limit x their most windows.
    own_store = _CountingStore(dimension)
    own_store.upsert(rows, vectors, ["known.md"] * len(rows))
    final = KnowledgeIndex([document], known, lambda text: None, own_store, "v", rows=len(rows), max_windows=2)
    assert len(final.nearest_passages(query, 4)) == 4 and max(own_store.depths) <= 4 * 2
    # Without a known bound (documents whose window counts the build never saw) it reads on until it is sure.
    unbounded = KnowledgeIndex([document], known, lambda text: None, store, "v", rows=len(rows))
    assert {p.passage_id for p, _ in unbounded.nearest_passages(query, 4)} == {p.passage_id for p in known}


def _unit(matrix: np.ndarray) -> np.ndarray:
    matrix = np.asarray(matrix, dtype=np.float32)
    return matrix / np.linalg.norm(matrix, axis=-1, keepdims=True)
