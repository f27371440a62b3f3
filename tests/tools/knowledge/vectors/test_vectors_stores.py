"""What only some stores promise: the memory store's switch to its graph and compaction, Qdrant's
persistence in local mode and Qdrant Edge's (with its graph, payload index and folder refusals), thread
safety, and the `--vector-store` spec parser's refusals."""

from __future__ import annotations

import importlib.util
import sys
import threading

import numpy as np
import pytest
import qdrant_edge
from vector_store_kinds import ReferenceRows, open_edge_with_graph

from hexmcp.tools.knowledge.vectors import (
    MemoryVectorStore,
    VectorStoreError,
    VectorStoreErrorCode,
    check_vector_store_spec,
    open_vector_store,
)
from hexmcp.tools.knowledge.vectors.qdrant import QdrantVectorStore

DIMENSION = 16


def rows(count: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((count, DIMENSION)).astype(np.float32)


def test_memory_store_walks_a_graph_past_its_threshold_and_drops_it_after_compacting():
    store = MemoryVectorStore(DIMENSION, ann_threshold=20)
    reference = ReferenceRows()
    data = rows(40)
    ids, docs = [f"p{i}" for i in range(40)], [f"d{i % 4}" for i in range(40)]
    store.upsert(ids[:20], data[:20], docs[:20])
    assert not store.uses_ann
    store.upsert(ids[20:], data[20:], docs[20:])
    reference.upsert(ids, data, docs)
    assert store.wait_for_graph(timeout=60)
    assert store.uses_ann
    query = rows(1, seed=9)[0]
    assert [h.passage_id for h in store.search(query, 5)] == [h.passage_id for h in reference.search(query, 5)]
    # 30 dead slots against 10 live: the store compacts, and 10 rows are below the threshold.
    store.delete(ids[:30])
    reference.delete(ids[:30])
    assert not store.uses_ann and len(store) == 10
    assert [h.passage_id for h in store.search(query, 20)] == [h.passage_id for h in reference.search(query, 20)]


def test_rows_written_while_the_graph_builds_are_found_once_it_takes_over():
    store = MemoryVectorStore(DIMENSION, ann_threshold=1000)
    reference = ReferenceRows()
    first = rows(2000, seed=4)
    store.upsert([f"a{i}" for i in range(2000)], first, ["old"] * 2000)  # starts the build
    late = rows(50, seed=5)
    store.upsert([f"b{i}" for i in range(50)], late, ["new"] * 50)  # most likely while it builds
    store.delete([f"a{i}" for i in range(10)])
    reference.upsert([f"a{i}" for i in range(10, 2000)], first[10:], ["old"] * 1990)
    reference.upsert([f"b{i}" for i in range(50)], late, ["new"] * 50)
    assert store.wait_for_graph(timeout=120) and store.uses_ann
    for index in range(0, 50, 7):
        (best,) = store.search(late[index], 1)
        assert best.passage_id == f"b{index}"
    assert all(hit.passage_id not in {f"a{i}" for i in range(10)} for hit in store.search(first[3], 20))
    query = rows(1, seed=6)[0]
    found = {h.passage_id for h in store.search(query, 10)}
    assert len(found & {h.passage_id for h in reference.search(query, 10)}) >= 8


def test_memory_store_keeps_answering_while_another_thread_writes():
    store = MemoryVectorStore(DIMENSION, ann_threshold=300)
    store.upsert(["fixed"], rows(1, seed=1), ["keep"])
    failures: list[BaseException] = []

    def write() -> None:
        try:
            for batch in range(30):
                store.upsert([f"w{batch}-{i}" for i in range(20)], rows(20, seed=batch + 10), [f"doc{batch}"] * 20)
                if batch % 3 == 0:
                    store.delete_document(f"doc{batch}")
        except BaseException as failure:  # noqa: BLE001 - reported by the main thread's assertion
            failures.append(failure)

    writer = threading.Thread(target=write)
    writer.start()
    while writer.is_alive():
        (hit,) = store.search(rows(1, seed=1)[0], 1, document_id="keep")
        assert hit.passage_id == "fixed"
    writer.join()
    assert not failures
    assert len(store) == 1 + 20 * 20  # ten of the thirty batches were deleted again


def test_qdrant_local_mode_keeps_its_rows_across_a_reopen(tmp_path):
    spec = f"qdrant+path:{tmp_path / 'qdrant'}"
    store = open_vector_store(spec, DIMENSION)
    store.upsert(["a", "b"], rows(2), ["x", "y"])
    before = store.search(rows(1, seed=3)[0], 2)
    store.close()
    reopened = open_vector_store(spec, DIMENSION)
    try:
        assert len(reopened) == 2
        after = reopened.search(rows(1, seed=3)[0], 2)
        assert [h.passage_id for h in after] == [h.passage_id for h in before]
        # Local mode keeps float64 in memory and reloads float32 from disk: equal to float32 precision.
        np.testing.assert_allclose([h.score for h in after], [h.score for h in before], atol=1e-6)
        assert [h.passage_id for h in reopened.search(rows(1)[0], 5, document_id="y")] == ["b"]
    finally:
        reopened.close()


def test_qdrant_refuses_a_collection_of_another_dimension(tmp_path):
    QdrantVectorStore(DIMENSION, path=str(tmp_path)).close()
    with pytest.raises(VectorStoreError) as refused:
        QdrantVectorStore(DIMENSION * 2, path=str(tmp_path))
    assert refused.value.code is VectorStoreErrorCode.UNAVAILABLE
    assert f"dimension {DIMENSION}" in refused.value.message


def test_a_qdrant_server_that_is_not_there_is_reported_as_unavailable():
    # Port 9 (discard) on loopback: nothing listens there, so the connection is refused at once.
    with pytest.raises(VectorStoreError) as refused:
        open_vector_store("qdrant+http://127.0.0.1:9?collection=c", DIMENSION)
    assert refused.value.code is VectorStoreErrorCode.UNAVAILABLE
    assert "127.0.0.1:9" in refused.value.message


def test_the_memory_spec_opens_the_in_process_store():
    store = open_vector_store(" memory ", DIMENSION)
    assert isinstance(store, MemoryVectorStore) and store.dimension == DIMENSION


@pytest.mark.parametrize("spec", ["", "faiss", "qdrant", "qdrant+path:", "qdrant+http://", "milvus://x", "memory:1",
                                  "qdrant-edge", "qdrant-edge+path:", "qdrant-edge:x"])
def test_unusable_specs_are_refused_naming_the_spec(spec):
    with pytest.raises(VectorStoreError) as refused:
        open_vector_store(spec, DIMENSION)
    assert refused.value.code is VectorStoreErrorCode.BAD_SPEC
    assert repr(spec) in refused.value.message


def test_qdrant_edge_keeps_its_rows_and_its_graph_across_a_reopen(tmp_path):
    spec = f"qdrant-edge+path:{tmp_path / 'edge'}"
    store = open_edge_with_graph(DIMENSION, tmp_path / "edge", optimize_after=30)
    data = rows(40)
    store.upsert([f"p{i}" for i in range(20)], data[:20], [f"d{i % 4}" for i in range(20)])
    assert not store.uses_ann  # 20 rows written: not yet optimized, scanned exactly
    store.upsert([f"p{i}" for i in range(20, 40)], data[20:], [f"d{i % 4}" for i in range(20, 40)])
    assert store.uses_ann  # the write that reached 30 rows built Qdrant's HNSW graph
    store.delete(["p0"])
    before = store.search(rows(1, seed=3)[0], 5)
    store.close()
    reopened = open_vector_store(spec, DIMENSION)
    try:
        assert len(reopened) == 39 and reopened.uses_ann
        after = reopened.search(rows(1, seed=3)[0], 5)
        assert [h.passage_id for h in after] == [h.passage_id for h in before]
        np.testing.assert_allclose([h.score for h in after], [h.score for h in before], atol=1e-6)
        assert {h.passage_id for h in reopened.search(rows(1)[0], 20, document_id="d1")} == {f"p{i}" for i in range(1, 40, 4)}
    finally:
        reopened.close()


def test_qdrant_edge_filters_by_document_through_its_payload_index(tmp_path):
    store = open_vector_store(f"qdrant-edge+path:{tmp_path}", DIMENSION)
    try:
        store.upsert(["a", "b"], rows(2), ["x", "y"])
        schema = store._shard.info().payload_schema  # the store's own shard: no other way to see Qdrant's index
        assert schema["document_id"].data_type == qdrant_edge.PayloadSchemaType.Keyword
        assert schema["document_id"].points == 2
    finally:
        store.close()


def test_qdrant_edge_refuses_a_shard_of_another_dimension(tmp_path):
    open_vector_store(f"qdrant-edge+path:{tmp_path}", DIMENSION).close()
    with pytest.raises(VectorStoreError) as refused:
        open_vector_store(f"qdrant-edge+path:{tmp_path}", DIMENSION * 2)
    assert refused.value.code is VectorStoreErrorCode.UNAVAILABLE
    assert f"dimension {DIMENSION}," in refused.value.message and str(tmp_path) in refused.value.message


def test_qdrant_edge_refuses_a_folder_already_open(tmp_path):
    first = open_vector_store(f"qdrant-edge+path:{tmp_path}", DIMENSION)
    try:
        with pytest.raises(VectorStoreError) as refused:
            open_vector_store(f"qdrant-edge+path:{tmp_path}", DIMENSION)
        assert refused.value.code is VectorStoreErrorCode.UNAVAILABLE
        assert "in use" in refused.value.message and str(tmp_path) in refused.value.message
    finally:
        first.close()
    open_vector_store(f"qdrant-edge+path:{tmp_path}", DIMENSION).close()  # released on close


def test_qdrant_edge_refuses_a_folder_of_other_files_at_start_up_and_on_open(tmp_path):
    QdrantVectorStore(DIMENSION, path=str(tmp_path)).close()  # qdrant-client's local mode, not an Edge shard
    spec = f"qdrant-edge+path:{tmp_path}"
    with pytest.raises(VectorStoreError) as at_start:
        check_vector_store_spec(spec)
    with pytest.raises(VectorStoreError) as on_open:
        open_vector_store(spec, DIMENSION)
    assert at_start.value.code is VectorStoreErrorCode.BAD_SPEC and on_open.value.code is VectorStoreErrorCode.UNAVAILABLE
    for refused in (at_start, on_open):
        assert "no Qdrant Edge shard" in refused.value.message and str(tmp_path) in refused.value.message


def test_qdrant_edge_without_its_package_names_the_extra_to_install(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "qdrant_edge", None)  # what a failed import looks like to the store
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *rest: None)
    for check in (lambda: check_vector_store_spec(f"qdrant-edge+path:{tmp_path}"),
                  lambda: open_vector_store(f"qdrant-edge+path:{tmp_path}", DIMENSION)):
        with pytest.raises(VectorStoreError) as refused:
            check()
        assert "pip install 'hexmcp[qdrant-edge]'" in refused.value.message
