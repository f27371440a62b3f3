"""bench/int8row_features: the layers it exposes are the served graph's, and its segment rows are the head's.

Every variant the bench cross-validates is paired against "today's head" built from these rows; if the
recorded layers or the pooling drifted from what the service computes, the baseline would be some other
classifier and every paired difference meaningless.
"""

from __future__ import annotations

import numpy as np
import pytest

from bench.int8row_features import LAYERS, layered_graph, lexical_matrix, segment_means
from hexmcp.tools.embedding.encoder import SentenceEncoder
from hexmcp.tools.embedding.model_files import locate_model_files
from hexmcp.tools.embedding.segments import SEGMENT_TOKENS, pool_text

TEXTS = ("What is the derivative of x squared?", " ".join(["The court held that the contract was void."] * 9))


@pytest.fixture(scope="module")
def encoder() -> tuple[SentenceEncoder, list[str]]:
    graph, outputs = layered_graph("int8row")
    return SentenceEncoder(graph, locate_model_files().tokenizer, 256, 1), outputs


def test_layers_six_and_three_are_the_served_outputs(encoder) -> None:
    session, outputs = encoder
    assert len(outputs) == LAYERS
    for text in TEXTS:
        feed = session.tokenize_one(text)
        length = feed["input_ids"].shape[1]
        layers = [x.reshape(length, -1) for x in session.session.run(outputs, feed)]
        last, mid = session.session.run(["last_layer_tokens", "mid_layer_tokens"], feed)
        assert np.array_equal(layers[6], last[0]) and np.array_equal(layers[3], mid[0])


def test_segment_means_cut_as_the_head_reads(encoder) -> None:
    session, outputs = encoder
    for text in TEXTS:
        feed = session.tokenize_one(text)
        length = feed["input_ids"].shape[1]
        layers = np.stack([x.reshape(length, -1) for x in session.session.run(outputs, feed)]).astype(np.float64)
        served = pool_text(layers[6].astype(np.float32), layers[3].astype(np.float32), length)
        rows = segment_means(layers[:, 1:-1], SEGMENT_TOKENS)[:, [6, 3]].reshape(len(served), -1)
        np.testing.assert_allclose(rows, served, atol=1e-5)


def test_lexical_rows_count_only_the_vocabulary() -> None:
    vocabulary = np.array([3, 7, 9])
    rows = lexical_matrix([np.array([3, 3, 5]), np.array([9])], vocabulary, np.ones(3))
    assert rows[0, 1] == rows[0, 2] == 0 and rows[0, 0] == pytest.approx(1.0)  # 5 is not in the vocabulary
    assert rows[1].tolist() == [0.0, 0.0, 1.0]
