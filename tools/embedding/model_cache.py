"""Converts the bundled weights to ONNX once and keeps the result in a cache directory.

Cache layout: `<cache_dir>/models/minilm-<weights sha256[:16]>-c<converter version>-<quantization>.onnx`,
with a `.sha256` sidecar holding the digest of the .onnx bytes. A file whose bytes do not match its
sidecar (truncated, bit-flipped, half-written by a crash) is rebuilt, never trusted. Every write goes
to a temporary file in the same directory and is renamed into place, so readers never see a partial file.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import threading
from pathlib import Path

import structlog

from hexmcp.core.log import quiet_libraries

from . import QUANTIZATIONS
from .converter_version import CONVERTER_VERSION
from .errors import ModelCacheError
from .model_files import ModelFiles, memoised_sha256

log = structlog.get_logger(__name__)

# The classifier and the knowledge base open the same cached model from their own background threads:
# checking, converting, quantizing and discarding it happen one at a time, or two rebuilds of one file
# trip over each other's temporaries.
_CACHE_LOCK = threading.RLock()
MIN_REFERENCE_COSINE = 0.9999
# An int8 graph is checked against the numpy reference too, with room for its rounding: a mistake in the
# graph (a scale applied twice, a misread kernel input) lands far below this; measured ~0.998.
MIN_INT8_REFERENCE_COSINE = 0.99
REFERENCE_SENTENCES = (
    "What is 5 + 3?",
    "The mitochondria produces ATP through oxidative phosphorylation in eukaryotic cells.",
)


def model_path(cache_dir: Path, weights_digest: str, quantization: str) -> Path:
    name = f"minilm-{weights_digest[:16]}-c{CONVERTER_VERSION}-{quantization}.onnx"
    return cache_dir / "models" / name


def atomic_write_bytes(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _sidecar(path: Path) -> Path:
    return path.with_name(path.name + ".sha256")


def is_verified(path: Path) -> bool:
    """True if the file exists and matches its recorded digest (streamed: no 90 MB in memory)."""
    try:
        expected = _sidecar(path).read_text(encoding="ascii").strip()
        actual = memoised_sha256(path, path.parent)
    except OSError:
        return False
    if actual != expected:
        log.warning("cached model does not match its checksum; rebuilding", path=str(path))
        return False
    return True


def store(path: Path, data: bytes) -> None:
    # Model first, sidecar last: a crash in between leaves a mismatch, which means "rebuild".
    atomic_write_bytes(path, data)
    atomic_write_bytes(_sidecar(path), hashlib.sha256(data).hexdigest().encode("ascii"))


def discard(cache_dir: Path, weights_digest: str, quantization: str) -> None:
    """Remove one cached model and its sidecar, so the next load_or_build rebuilds it (int8 from the
    cached fp32, which was checked against the numpy reference when it was converted)."""
    with _CACHE_LOCK:
        _discard(cache_dir, weights_digest, quantization)


def _discard(cache_dir: Path, weights_digest: str, quantization: str) -> None:
    path = model_path(cache_dir, weights_digest, quantization)
    for stale in (path, _sidecar(path)):
        stale.unlink(missing_ok=True)


def convert_fp32(files: ModelFiles) -> bytes:
    """Build the fp32 graph and check it against the numpy reference before anyone uses it."""
    from safetensors.numpy import load_file

    from .onnx_export import build_encoder_graph

    weights = load_file(str(files.weights))
    config = files.bert_config()
    data = build_encoder_graph(weights, config).SerializeToString()
    verify_against_reference(data, weights, config, files)
    return data


def convert_int8_rows(files: ModelFiles) -> bytes:
    """Build the per-row int8 graph (onnx_rowwise) from the weights and check it against the reference."""
    from safetensors.numpy import load_file

    from .onnx_export import build_encoder_graph
    from .onnx_rowwise import RowwiseInt8Builder

    weights = load_file(str(files.weights))
    config = files.bert_config()
    data = build_encoder_graph(weights, config, RowwiseInt8Builder()).SerializeToString()
    verify_against_reference(data, weights, config, files, MIN_INT8_REFERENCE_COSINE)
    return data


def verify_against_reference(data: bytes, weights: dict, config: dict, files: ModelFiles,
                             min_cosine: float = MIN_REFERENCE_COSINE) -> float:
    import numpy as np
    import onnxruntime
    from tokenizers import Tokenizer

    from .bert_reference import encode_tokens
    from .session_options import quiet_session_options

    tokenizer = Tokenizer.from_file(str(files.tokenizer))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    session = onnxruntime.InferenceSession(data, quiet_session_options(1), providers=["CPUExecutionProvider"])
    worst = 1.0
    for sentence in REFERENCE_SENTENCES:
        ids = tokenizer.encode(sentence).ids
        expected = encode_tokens(weights, config, ids)
        feed = {"input_ids": np.array([ids], dtype=np.int64), "attention_mask": np.ones((1, len(ids)), np.int64)}
        got = session.run(None, feed)[0][0].astype(np.float64)
        worst = min(worst, float(got @ expected / np.linalg.norm(got)))
    if worst < min_cosine:
        raise ModelCacheError(f"converted graph disagrees with the numpy reference (cosine {worst:.6f})")
    return worst


def quantize_int8(fp32_path: Path) -> bytes:
    # per_channel matters: per-tensor int8 scales lose too much (the vectors drift far from fp32's).
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    with tempfile.TemporaryDirectory(dir=fp32_path.parent) as tmp:
        out = Path(tmp) / "int8.onnx"
        # onnx's shape inference cannot type the outputs of onnxruntime's own Attention operator; every
        # tensor the quantiser asks about is float32. Its advice to pre-process the graph first and its
        # note on every node (dozens of lines) say nothing an operator could act on.
        with quiet_libraries():
            quantize_dynamic(
                fp32_path, out, per_channel=True, weight_type=QuantType.QInt8,
                extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
            )
        return out.read_bytes()


def load_or_build(files: ModelFiles, cache_dir: Path, quantization: str, weights_digest: str | None = None) -> Path:
    """Path of the verified ONNX model in the cache, converting (and caching) it first if needed.

    A path, not bytes: onnxruntime maps the file itself, so we never hold a second copy (this keeps
    fp32 peak RSS well below what bytes-in-Python plus the session's own copy would cost)."""
    with _CACHE_LOCK:
        return _load_or_build(files, cache_dir, quantization, weights_digest)


def _load_or_build(files: ModelFiles, cache_dir: Path, quantization: str, weights_digest: str | None) -> Path:
    if quantization not in QUANTIZATIONS:
        raise ModelCacheError(f"unknown quantization {quantization!r}; expected one of {QUANTIZATIONS}")
    digest = weights_digest or memoised_sha256(files.weights, cache_dir / "models")
    fp32_path = model_path(cache_dir, digest, "fp32")
    target = model_path(cache_dir, digest, quantization)
    try:
        if is_verified(target):
            return target
        if quantization == "int8row":  # built from the weights: it quantizes them itself
            log.info("converting the weights to ONNX", weights=str(files.weights), target=str(target))
            store(target, convert_int8_rows(files))
            return target
        if not is_verified(fp32_path):
            log.info("converting the weights to ONNX", weights=str(files.weights), target=str(fp32_path))
            store(fp32_path, convert_fp32(files))
        if quantization != "fp32":
            store(target, quantize_int8(fp32_path))
        return target
    except OSError as exc:
        raise ModelCacheError(f"cannot build or write the model cache in {cache_dir}: {exc}") from exc
    except ModelCacheError:
        raise
    except Exception as exc:  # safetensors, onnx and onnxruntime each raise their own types
        raise ModelCacheError(f"cannot convert the embedding model to ONNX: {exc}") from exc
