"""onnxruntime's exact-but-slow integer products are asked for only where the default ones are not exact."""

from __future__ import annotations

import numpy as np
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper

from hexmcp.tools.embedding import session_options
from hexmcp.tools.embedding.session_options import integer_products_exact, quiet_session_options

FLAG = "session.x64quantprecision"


@pytest.fixture
def probe_result(monkeypatch):
    def use(exact: bool) -> None:
        monkeypatch.setattr(session_options, "integer_products_exact", lambda: exact)
    return use


def _flag(options: onnxruntime.SessionOptions) -> str:
    try:
        return options.get_session_config_entry(FLAG)
    except Exception:  # onnxruntime raises for an entry that was never set
        return ""


def test_the_slow_exact_products_only_where_the_default_ones_saturate(probe_result):
    probe_result(False)
    assert _flag(quiet_session_options(1)) == "1"
    probe_result(True)
    assert _flag(quiet_session_options(1)) == ""


def test_the_probe_agrees_with_a_product_that_saturates_16_bit_pairs():
    # Whatever the CPU: with the options the encoder gets, u8 x s8 sums come out exact.
    rng = np.random.default_rng(0)
    weights = rng.integers(-127, 128, size=(384, 8), dtype=np.int8)
    weights[:, 0] = 127
    graph = helper.make_graph(
        [helper.make_node("MatMulInteger", ["a", "w"], ["y"])], "g",
        [helper.make_tensor_value_info("a", TensorProto.UINT8, [None, 384])],
        [helper.make_tensor_value_info("y", TensorProto.INT32, [None, 8])],
        [numpy_helper.from_array(weights, "w")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    session = onnxruntime.InferenceSession(model.SerializeToString(), quiet_session_options(1),
                                           providers=["CPUExecutionProvider"])
    a = rng.integers(0, 256, size=(5, 384), dtype=np.uint8)
    a[0] = 255
    expected = a.astype(np.int64) @ weights.astype(np.int64)
    assert np.array_equal(session.run(None, {"a": a})[0], expected)
    assert isinstance(integer_products_exact(), bool)
