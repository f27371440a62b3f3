"""The encoder graph with int8 dense products whose activation scales are per row (per token).

onnxruntime's dynamic quantization scales each activation tensor by ONE number computed over the whole
tensor, i.e. over every text of a batch: a text's features then depend on its batch-mates. Here every
dense product quantizes each token's activation row by that row's own absolute maximum (symmetric,
scale = max|row| / 127), multiplies it in integers by weights quantized per output column (symmetric
int8), and scales the exact integer sums back to float, adding the bias in the same kernel
(`MatMulIntegerToFloat`). A token's result depends on that token's row alone, whatever else is in the
batch, however long the padding.

Between the layers' products the token states are kept as a [batch * seq, hidden] matrix, so a row is a
token and `QuantizeLinear` can take one scale per row (its per-axis form needs a 1-D scale); only
self-attention sees [batch, seq, hidden]. Attention's own products (scores, softmax, context) stay
float32: the query/key/value projection is a per-row int8 product like the others, and onnxruntime's
`MultiHeadAttention` takes the three projected tensors. The embedding tables stay float32 (a lookup).
"""

from __future__ import annotations

import numpy as np
from onnx import helper, numpy_helper

from .onnx_export import CONTRIB_DOMAIN, MASK_FILL, GraphBuilder

# Activations are symmetric int8 values carried as uint8 around this zero point: u8 x s8 is the integer
# product that VNNI and AMX run natively (s8 x s8 measured ~60x slower in onnxruntime 1.32 on this CPU).
ACTIVATION_ZERO_POINT = 128
LEVELS = 127.0


def quantize_columns(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric int8 per output column of a [in, out] matrix: (int8 weights, float32 scales [out])."""
    absmax = np.abs(w).max(axis=0)
    scale = np.where(absmax > 0, absmax / LEVELS, 1.0).astype(np.float32)
    return np.clip(np.rint(w / scale), -LEVELS, LEVELS).astype(np.int8), scale


class RowwiseInt8Builder(GraphBuilder):
    """GraphBuilder whose dense products and attention projection are per-row int8 (see the module)."""

    def __init__(self) -> None:
        super().__init__()
        self.const("levels", np.array(LEVELS, dtype=np.float32))
        self.const("row_tiny", np.array(1e-12, dtype=np.float32))
        self.const("act_zero_point", np.array(ACTIVATION_ZERO_POINT, dtype=np.uint8))
        self._tokens_shape = ""
        self._row_zero_points = ""

    def to_rows(self, x: str, hidden: int) -> str:
        self._tokens_shape = self.op("Shape", [x])
        rows = self.op("Reshape", [x, self.const("rows_shape", np.array([-1, hidden], dtype=np.int64))])
        # QuantizeLinear's per-axis form wants a zero point per row too: all 128, made once per pass.
        self._row_zero_points = self.op(
            "ConstantOfShape", [self.op("Shape", [rows], end=1)],
            value=numpy_helper.from_array(np.array([ACTIVATION_ZERO_POINT], dtype=np.uint8)),
        )
        return rows

    def to_tokens(self, x: str) -> str:
        return self.op("Reshape", [x, self._tokens_shape])

    def quantize_rows(self, x: str) -> tuple[str, str]:
        """(uint8 rows, float scales [rows, 1]) of the float matrix `x`: each row by its own maximum."""
        absmax = self.op("ReduceMax", [self.op("Abs", [x])], axes=[1], keepdims=0)
        scale = self.op("Div", [self.op("Max", [absmax, "row_tiny"]), "levels"])
        rows = self.op("QuantizeLinear", [x, scale, self._row_zero_points], axis=0)
        return rows, self.op("Unsqueeze", [scale, "axis_1"])

    def int8_product(self, x: str, w: np.ndarray, bias: np.ndarray, name: str) -> str:
        """x [rows, in] @ w [in, out] + bias through per-row int8 activations and per-column int8 weights."""
        wq, w_scale = quantize_columns(w)
        rows, row_scale = self.quantize_rows(x)
        inputs = [rows, self.const(f"{name}.weight_q", wq), row_scale, self.const(f"{name}.weight_scale", w_scale), "act_zero_point"]
        self._count += 1
        product = f"matmulintegertofloat_{self._count}"
        self.nodes.append(helper.make_node("MatMulIntegerToFloat", inputs, [product], name=product, domain=CONTRIB_DOMAIN))
        # The bias is added apart: onnxruntime 1.32's kernel, given a scale per row, multiplies its own
        # bias input by that scale too ((sums * column scale + bias) * row scale).
        return self.op("Add", [product, self.const(f"{name}.bias", bias)])

    def dense(self, x: str, weights: dict, name: str) -> str:
        w = np.ascontiguousarray(weights[f"{name}.weight"].T)
        return self.int8_product(x, w, weights[f"{name}.bias"], name)

    def attention(self, x: str, weights: dict, name: str, mask_i32: str, heads: int) -> str:
        parts = ("query", "key", "value")
        w = np.ascontiguousarray(np.concatenate([weights[f"{name}.{n}.weight"] for n in parts]).T)
        b = np.concatenate([weights[f"{name}.{n}.bias"] for n in parts])
        qkv_rows = self.int8_product(x, w, b, f"{name}.qkv")
        hidden = w.shape[1] // 3
        qkv = self.op("Reshape", [qkv_rows, self._qkv_shape(hidden)])
        self._count += 1
        q, k, v = (f"split_{self._count}_{n}" for n in parts)
        split = self.const(f"{name}.qkv.split", np.array([hidden] * 3, dtype=np.int64))
        self.nodes.append(helper.make_node("Split", [qkv, split], [q, k, v], name=f"split_{self._count}", axis=-1))
        self._count += 1
        output = f"attention_{self._count}"
        # The query projection already carries 1/sqrt(head_dim) (onnx_export), hence scale 1.
        self.nodes.append(
            helper.make_node(
                "MultiHeadAttention", [q, k, v, "", mask_i32], [output], name=output, domain=CONTRIB_DOMAIN,
                num_heads=heads, scale=1.0, mask_filter_value=MASK_FILL,
            )
        )
        return self.op("Reshape", [output, "rows_shape"])

    def _qkv_shape(self, hidden: int) -> str:
        """[batch, seq, 3 * hidden], computed once per pass."""
        if not any(n.output[0] == "qkv_tokens_shape" for n in self.nodes):
            width = self.const("qkv_width", np.array([3 * hidden], dtype=np.int64))
            self.nodes.append(helper.make_node("Concat", [self.op("Shape", ["input_ids"]), width], ["qkv_tokens_shape"], axis=0))
        return "qkv_tokens_shape"
