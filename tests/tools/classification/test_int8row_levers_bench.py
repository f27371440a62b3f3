"""bench/int8row_levers: its int8row is the graph the service runs, and its variants change only what they say.

The bench judges levers against "int8row"; if its builder drifted from RowwiseInt8Builder, every figure it
prints would be about some other model.
"""

from __future__ import annotations

import numpy as np
import pytest

from bench.int8row_levers import Levers, mcnemar
from hexmcp.tools.embedding.onnx_export import build_encoder_graph
from hexmcp.tools.embedding.onnx_rowwise import RowwiseInt8Builder


@pytest.fixture(scope="module")
def levers() -> Levers:
    return Levers()


def test_the_bench_int8row_is_the_served_graph(levers: Levers) -> None:
    served = build_encoder_graph(levers.weights, levers.config, RowwiseInt8Builder()).SerializeToString()
    assert levers.graph()[0] == served


def test_variants_change_only_the_products_named(levers: Levers) -> None:
    import onnx

    first = levers.products[0]
    ops = [n.op_type for n in onnx.load_from_string(levers.graph(float_products=[first])[0]).graph.node]
    assert ops.count("MatMul") == 1 and ops.count("MatMulIntegerToFloat") == len(levers.products) - 1
    unit = {name: np.ones(1, dtype=np.float32) for name in levers.products}
    smoothed = [n.op_type for n in onnx.load_from_string(levers.graph(smoothing=unit)[0]).graph.node]
    plain = [n.op_type for n in onnx.load_from_string(levers.graph()[0]).graph.node]
    assert smoothed.count("Mul") == plain.count("Mul") + len(levers.products)


def test_mcnemar_counts_and_p() -> None:
    truth = np.array([0, 0, 0, 0, 1, 1])
    a = np.array([0, 0, 0, 1, 1, 1])  # wrong on question 3 only
    b = np.array([0, 0, 1, 0, 1, 0])  # wrong on questions 2 and 5
    only_a, only_b, p = mcnemar(truth, a, b)
    assert (only_a, only_b) == (2, 1)
    assert p == pytest.approx(1.0)  # 2 against 1 of 3 discordant: no evidence either way
    assert mcnemar(truth, truth, 1 - truth)[2] == pytest.approx(2 / 2**6)
