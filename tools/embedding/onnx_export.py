"""Builds an ONNX graph of the MiniLM sentence encoder from its safetensors weights.

numpy + the `onnx` package only (no torch). Standard ONNX operators at opset 17, except self-attention:
onnxruntime's fused `Attention` (com.microsoft domain; its quantiser turns it into `QAttention`), which
does in one kernel what took a dozen nodes per layer. The graph takes `input_ids` and `attention_mask`
(int64, [batch, seq]) and returns:
- `sentence_embedding` (float32 [batch, hidden]): the last layer masked-mean-pooled and
  L2-normalised, i.e. the all-MiniLM-L6-v2 sentence embedding, used for similarity;
- `last_layer_tokens` and `mid_layer_tokens` (float32 [batch, seq, hidden]): the token states of the
  last layer and of layer MID_LAYER, which the classifier pools per segment (segments.py). Middle
  layers keep more lexical, topical detail than the similarity-tuned last layer.

Constant folding done here rather than at runtime, each exact in float32 up to rounding:
- token type ids are always 0 for single sentences, so that embedding row is added to the position
  table once;
- the 1/sqrt(head_dim) attention scale is multiplied into the query projection.
Bump CONVERTER_VERSION (converter_version.py) whenever the graph changes: it is part of the cache key.
"""

from __future__ import annotations

import math

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from .converter_version import CONVERTER_VERSION

MID_LAYER = 3  # 1-based transformer layer exposed as `mid_layer_tokens`
OPSET = 17  # first opset with LayerNormalization
MASK_FILL = -1.0e9  # added to attention scores of padding tokens; exp() of it is exactly 0
CONTRIB_DOMAIN = "com.microsoft"  # onnxruntime's own operators (the fused Attention)


class GraphBuilder:
    """Accumulates nodes and initializers; hands out unique tensor names."""

    def __init__(self) -> None:
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []
        self._count = 0

    def const(self, name: str, value: np.ndarray) -> str:
        self.initializers.append(numpy_helper.from_array(value, name))
        return name

    def op(self, op_type: str, inputs: list[str], **attrs) -> str:
        self._count += 1
        output = f"{op_type.lower()}_{self._count}"
        self.nodes.append(helper.make_node(op_type, inputs, [output], name=output, **attrs))
        return output

    def dense(self, x: str, weights: dict, name: str) -> str:
        # PyTorch stores (out, in); MatMul wants (in, out).
        w = self.const(f"{name}.weight_t", np.ascontiguousarray(weights[f"{name}.weight"].T))
        b = self.const(f"{name}.bias", weights[f"{name}.bias"])
        return self.op("Add", [self.op("MatMul", [x, w]), b])

    def attention(self, x: str, weights: dict, name: str, mask_i32: str, heads: int) -> str:
        """onnxruntime's fused multi-head self-attention (com.microsoft `Attention`): query, key and value
        as one [hidden, 3 * hidden] product, so the int8 graph quantises x once per layer, and the
        reshapes, transposes, score product and softmax in one kernel instead of ~12 nodes. The query
        projection already carries 1/sqrt(head_dim), hence scale 1."""
        parts = ("query", "key", "value")
        w = self.const(f"{name}.qkv.weight_t", np.ascontiguousarray(np.concatenate([weights[f"{name}.{n}.weight"] for n in parts]).T))
        b = self.const(f"{name}.qkv.bias", np.concatenate([weights[f"{name}.{n}.bias"] for n in parts]))
        self._count += 1
        output = f"attention_{self._count}"
        self.nodes.append(
            helper.make_node(
                "Attention", [x, w, b, mask_i32], [output], name=output, domain=CONTRIB_DOMAIN,
                num_heads=heads, scale=1.0, mask_filter_value=MASK_FILL,
            )
        )
        return output

    def layer_norm(self, x: str, weights: dict, name: str, eps: float) -> str:
        gamma = self.const(f"{name}.weight", weights[f"{name}.weight"])
        beta = self.const(f"{name}.bias", weights[f"{name}.bias"])
        return self.op("LayerNormalization", [x, gamma, beta], axis=-1, epsilon=eps)

    def pooled_unit(self, x: str, mask_3d: str, output: str) -> None:
        """Masked mean over the sequence, then L2 normalisation, written to `output`."""
        summed = self.op("ReduceSum", [self.op("Mul", [x, mask_3d]), "axis_1"], keepdims=0)
        counts = self.op("Max", [self.op("ReduceSum", [mask_3d, "axis_1"], keepdims=0), "tiny"])
        pooled = self.op("Div", [summed, counts])
        # ReduceL2 still takes axes as an attribute at opset 17 (ReduceSum moved them to an input at 13).
        norm = self.op("Max", [self.op("ReduceL2", [pooled], axes=[1], keepdims=1), "tiny"])
        self.nodes.append(helper.make_node("Div", [pooled, norm], [output], name=output))

    def to_rows(self, x: str, hidden: int) -> str:
        """The layers' working form of the token states [batch, seq, hidden] (here: unchanged)."""
        return x

    def to_tokens(self, x: str) -> str:
        """Token states [batch, seq, hidden] back from the layers' working form (here: unchanged)."""
        return x

    def name_output(self, x: str, output: str) -> None:
        self.nodes.append(helper.make_node("Identity", [x], [output], name=output))

    def gelu(self, x: str) -> str:
        # Exact (erf) GELU, as BERT uses, spelled the way onnxruntime's GeluFusion matches it
        # (x / sqrt2, not x * 1/sqrt2: that spelling stayed six Erf kernels and their arithmetic).
        scaled = self.op("Div", [x, "sqrt2"])
        one_plus = self.op("Add", [self.op("Erf", [scaled]), "one"])
        return self.op("Mul", [self.op("Mul", [x, one_plus]), "half"])


def build_encoder_graph(weights: dict[str, np.ndarray], config: dict, builder: GraphBuilder | None = None) -> onnx.ModelProto:
    """The encoder graph; `builder` decides how dense products and attention are spelled (fp32 by default)."""
    g = builder or GraphBuilder()
    w = {name: value.astype(np.float32) for name, value in weights.items() if value.dtype != np.int64}
    eps = float(config["layer_norm_eps"])
    heads = int(config["num_attention_heads"])
    hidden = int(config["hidden_size"])

    _add_constants(g)
    x = g.to_rows(_embeddings(g, w, eps), hidden)
    # The attention mask twice: int32 [batch, seq] for the fused Attention kernel (which adds MASK_FILL
    # to padding keys' scores), float [batch, seq, 1] for pooling.
    mask_i32 = g.op("Cast", ["attention_mask"], to=TensorProto.INT32)
    mask_3d = g.op("Unsqueeze", [g.op("Cast", ["attention_mask"], to=TensorProto.FLOAT), "axis_2"])

    layers = int(config["num_hidden_layers"])
    _fold_attention_scale(w, layers, head_dim=hidden // heads)
    for layer in range(layers):
        x = _encoder_layer(g, w, f"encoder.layer.{layer}", x, mask_i32, heads, eps)
        if layer + 1 == MID_LAYER:
            g.name_output(g.to_tokens(x), "mid_layer_tokens")

    tokens = g.to_tokens(x)
    g.pooled_unit(tokens, mask_3d, "sentence_embedding")
    g.name_output(tokens, "last_layer_tokens")
    return _encoder_model(g, hidden)


def _add_constants(g: GraphBuilder) -> None:
    """The scalars and axes the nodes share, by name."""
    g.const("one", np.array(1.0, dtype=np.float32))
    g.const("half", np.array(0.5, dtype=np.float32))
    g.const("sqrt2", np.array(math.sqrt(2.0), dtype=np.float32))
    g.const("tiny", np.array(1e-9, dtype=np.float32))
    g.const("zero_1d", np.array([0], dtype=np.int64))
    g.const("axis_0", np.array([0], dtype=np.int64))
    g.const("axis_1", np.array([1], dtype=np.int64))
    g.const("axis_2", np.array([2], dtype=np.int64))


def _embeddings(g: GraphBuilder, w: dict, eps: float) -> str:
    """Word + (position + token type 0), then LayerNorm."""
    word_table = g.const("word_embeddings", w["embeddings.word_embeddings.weight"])
    position_table = g.const(
        "position_plus_type0",
        w["embeddings.position_embeddings.weight"] + w["embeddings.token_type_embeddings.weight"][0],
    )
    seq_len = g.op("Shape", ["input_ids"], start=1, end=2)
    positions = g.op("Slice", [position_table, "zero_1d", seq_len, "axis_0"])
    x = g.op("Add", [g.op("Gather", [word_table, "input_ids"]), positions])
    return g.layer_norm(x, w, "embeddings.LayerNorm", eps)


def _fold_attention_scale(w: dict, layers: int, head_dim: int) -> None:
    """Multiply 1/sqrt(head_dim) into every layer's query projection (weights and bias, in `w`), so the
    fused Attention runs with scale 1."""
    scale = 1.0 / math.sqrt(head_dim)
    for layer in range(layers):
        query = f"encoder.layer.{layer}.attention.self.query"
        w[f"{query}.weight"] = w[f"{query}.weight"] * scale
        w[f"{query}.bias"] = w[f"{query}.bias"] * scale


def _encoder_layer(g: GraphBuilder, w: dict, p: str, x: str, mask_i32: str, heads: int, eps: float) -> str:
    """One transformer layer `p` (`encoder.layer.N`): self-attention, then the feed-forward block, each
    added to its input and layer-normalised."""
    context = g.attention(x, w, f"{p}.attention.self", mask_i32, heads)
    attention = g.dense(context, w, f"{p}.attention.output.dense")
    x = g.layer_norm(g.op("Add", [attention, x]), w, f"{p}.attention.output.LayerNorm", eps)
    intermediate = g.gelu(g.dense(x, w, f"{p}.intermediate.dense"))
    output = g.dense(intermediate, w, f"{p}.output.dense")
    return g.layer_norm(g.op("Add", [output, x]), w, f"{p}.output.LayerNorm", eps)


def _encoder_model(g: GraphBuilder, hidden: int) -> onnx.ModelProto:
    """The graph of `g`'s nodes with its inputs and outputs, as a checked model."""
    graph = helper.make_graph(
        g.nodes,
        "minilm_sentence_encoder",
        inputs=[
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq"]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "seq"]),
        ],
        outputs=[
            helper.make_tensor_value_info("sentence_embedding", TensorProto.FLOAT, ["batch", hidden]),
            helper.make_tensor_value_info("last_layer_tokens", TensorProto.FLOAT, ["batch", "seq", hidden]),
            helper.make_tensor_value_info("mid_layer_tokens", TensorProto.FLOAT, ["batch", "seq", hidden]),
        ],
        initializer=g.initializers,
    )
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", OPSET), helper.make_opsetid(CONTRIB_DOMAIN, 1)],
        producer_name="hexmcp.tools.classification",
        producer_version=CONVERTER_VERSION,
    )
    model.ir_version = 8  # broadly loadable; onnxruntime >= 1.14
    onnx.checker.check_model(model)
    return model
