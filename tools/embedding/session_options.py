"""onnxruntime session options for the encoder, and whether this CPU's int8 products are exact as they are.

x86 CPUs without VNNI run onnxruntime's uint8 x int8 products with an instruction that adds pairs of
products with 16-bit saturation (VPMADDUBSW): a text's vector then depended on the CPU (cosine ~0.99 between
the two kinds), enough to flip near ties in every score built on it. `session.x64quantprecision` makes
onnxruntime use exact uint8 x uint8 products instead, but it does so on every x86 CPU, VNNI and AMX ones
included, where u8 x s8 is exact already: there it made each product ~7x dearer (bench/diaries/
classification.md), half of a short prompt's pass. So the option is set only where a probe shows that the
products are not exact without it; the result is exact integer arithmetic either way, the same everywhere.
"""

from __future__ import annotations

import functools

import numpy as np
import onnxruntime

# Pairs of 255 x 127 add up to 64,770: beyond int16, so a saturating pair-add shows in the sums.
_PROBE_DEPTH = 64
_PROBE_ROWS = (1, 3, 16)  # onnxruntime picks kernels by the number of rows; try the shapes we run


@functools.cache
def integer_products_exact() -> bool:
    """Whether onnxruntime's default u8 x s8 product is exact on this CPU (probed once per process)."""
    from onnx import TensorProto, helper, numpy_helper

    weights = np.full((_PROBE_DEPTH, 4), 127, dtype=np.int8)
    graph = helper.make_graph(
        [helper.make_node("MatMulInteger", ["a", "w"], ["y"])], "probe",
        [helper.make_tensor_value_info("a", TensorProto.UINT8, [None, _PROBE_DEPTH])],
        [helper.make_tensor_value_info("y", TensorProto.INT32, [None, 4])],
        [numpy_helper.from_array(weights, "w")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    session = onnxruntime.InferenceSession(model.SerializeToString(), _base_options(1), providers=["CPUExecutionProvider"])
    expected = 255 * 127 * _PROBE_DEPTH
    return all(
        bool((session.run(None, {"a": np.full((rows, _PROBE_DEPTH), 255, dtype=np.uint8)})[0] == expected).all())
        for rows in _PROBE_ROWS
    )


def _base_options(threads: int) -> onnxruntime.SessionOptions:
    # In stdio mode fd 1 carries the protocol: onnxruntime's C++ logger must stay below warnings.
    onnxruntime.set_default_logger_severity(3)
    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    return options


def quiet_session_options(threads: int) -> onnxruntime.SessionOptions:
    """The encoder's options: quiet, `threads` intra-op threads, full graph optimisation, exact int8."""
    options = _base_options(threads)
    if not integer_products_exact():
        options.add_session_config_entry("session.x64quantprecision", "1")
    return options
