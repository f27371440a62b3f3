"""A pure-numpy forward pass of the MiniLM BERT encoder.

This is the yardstick the ONNX converter is checked against: it is written straight from the BERT
equations, one sentence at a time and without padding, so it shares no shortcut (folded constants,
attention masks) with the graph it verifies. Too slow for serving; used at conversion time and in tests.
"""

from __future__ import annotations

import math

import numpy as np


def _layer_norm(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gamma + beta


def _gelu(x: np.ndarray) -> np.ndarray:
    erf = np.vectorize(math.erf, otypes=[np.float64])
    return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))


def _dense(x: np.ndarray, weights: dict, name: str) -> np.ndarray:
    # Linear layers store weight as (out, in), as in PyTorch.
    return x @ weights[f"{name}.weight"].T + weights[f"{name}.bias"]


def encode_tokens(weights: dict, config: dict, token_ids: list[int]) -> np.ndarray:
    """Mean-pooled, L2-normalised sentence embedding (float64) of one unpadded token sequence."""
    w = {name: value.astype(np.float64) for name, value in weights.items()}
    eps = config["layer_norm_eps"]
    heads = config["num_attention_heads"]
    hidden = config["hidden_size"]
    head_dim = hidden // heads
    length = len(token_ids)

    x = (
        w["embeddings.word_embeddings.weight"][token_ids]
        + w["embeddings.position_embeddings.weight"][:length]
        + w["embeddings.token_type_embeddings.weight"][0]
    )
    x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], eps)

    for layer in range(config["num_hidden_layers"]):
        prefix = f"encoder.layer.{layer}"

        def split_heads(t: np.ndarray) -> np.ndarray:
            return t.reshape(length, heads, head_dim).transpose(1, 0, 2)

        q = split_heads(_dense(x, w, f"{prefix}.attention.self.query"))
        k = split_heads(_dense(x, w, f"{prefix}.attention.self.key"))
        v = split_heads(_dense(x, w, f"{prefix}.attention.self.value"))
        scores = q @ k.transpose(0, 2, 1) / math.sqrt(head_dim)
        scores -= scores.max(axis=-1, keepdims=True)
        probs = np.exp(scores)
        probs /= probs.sum(axis=-1, keepdims=True)
        context = (probs @ v).transpose(1, 0, 2).reshape(length, hidden)
        attention = _dense(context, w, f"{prefix}.attention.output.dense")
        x = _layer_norm(
            attention + x,
            w[f"{prefix}.attention.output.LayerNorm.weight"],
            w[f"{prefix}.attention.output.LayerNorm.bias"],
            eps,
        )
        intermediate = _gelu(_dense(x, w, f"{prefix}.intermediate.dense"))
        output = _dense(intermediate, w, f"{prefix}.output.dense")
        x = _layer_norm(
            output + x,
            w[f"{prefix}.output.LayerNorm.weight"],
            w[f"{prefix}.output.LayerNorm.bias"],
            eps,
        )

    pooled = x.mean(axis=0)
    return pooled / np.linalg.norm(pooled)
