"""The converted graph against the numpy reference, the cache's self-repair, the tokenizer overrides."""

from __future__ import annotations

import numpy as np
import onnxruntime
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from safetensors.numpy import load_file

from hexmcp.tools.embedding import model_cache
from hexmcp.tools.embedding.bert_reference import encode_tokens
from hexmcp.tools.embedding.config import EncoderConfig
from hexmcp.tools.embedding.encoder import SentenceEncoder, load_tokenizer, open_encoder
from hexmcp.tools.embedding.errors import ModelCacheError
from hexmcp.tools.embedding.model_files import file_sha256, locate_model_files

pytestmark = pytest.mark.slow

SENTENCES = ["Prove that the square root of two is irrational.", "hi"]


@pytest.fixture(scope="module")
def files():
    return locate_model_files()


def test_fp32_graph_matches_numpy_reference_even_when_padded(service, files, model_cache_dir):
    path = model_cache.load_or_build(files, model_cache_dir, "fp32")
    encoder = SentenceEncoder(path, files.tokenizer, 256, 1)
    feed = encoder.tokenize(SENTENCES)  # "hi" is padded to the longer sentence
    sentences, last_tokens, mid_tokens = encoder.forward(feed)
    weights, config = load_file(str(files.weights)), files.bert_config()
    for row, sentence in enumerate(SENTENCES):
        ids = [i for i in encoder.tokenizer.encode(sentence).ids if i != 0]
        expected = encode_tokens(weights, config, ids)
        got = sentences[row]
        assert float(got @ expected) / float(np.linalg.norm(got)) >= 0.9999
        # The token outputs are the states the sentence embedding was pooled from...
        pooled = last_tokens[row, : len(ids)].mean(axis=0)
        np.testing.assert_allclose(pooled / np.linalg.norm(pooled), got, atol=1e-5)
        # ...and padding does not leak into real tokens' states, in either layer.
        alone = encoder.forward(encoder.tokenize([sentence]))
        np.testing.assert_allclose(alone[1][0], last_tokens[row, : len(ids)], atol=1e-4)
        np.testing.assert_allclose(alone[2][0], mid_tokens[row, : len(ids)], atol=1e-4)


def test_int8_stays_close_to_fp32(service, files, model_cache_dir):
    fp32 = SentenceEncoder(model_cache.load_or_build(files, model_cache_dir, "fp32"), files.tokenizer, 256, 1)
    int8 = SentenceEncoder(model_cache.load_or_build(files, model_cache_dir, "int8"), files.tokenizer, 256, 1)
    a, b = fp32.encode(SENTENCES), int8.encode(SENTENCES)
    assert np.all(np.sum(a.sentences * b.sentences, axis=1) > 0.97)  # per-tensor int8 falls to ~0.95
    assert np.all(np.sum(a.text_features() * b.text_features(), axis=1) / 2 > 0.95)


def test_int8row_stays_closer_to_fp32_than_int8(service, files, model_cache_dir):
    # Per-row scales lose less than one scale per tensor (measured on 64 MMLU-Pro texts: segment rows'
    # mean cosine to fp32 ~0.998 against ~0.995).
    texts = SENTENCES + ["What caused the fall of the Western Roman Empire?", "Integrate x squared times sin x.",
                         "Which enzyme unwinds DNA during replication, and how does it use ATP?"]
    fp32 = SentenceEncoder(model_cache.load_or_build(files, model_cache_dir, "fp32"), files.tokenizer, 256, 1)
    int8 = SentenceEncoder(model_cache.load_or_build(files, model_cache_dir, "int8"), files.tokenizer, 256, 1)
    rows = SentenceEncoder(model_cache.load_or_build(files, model_cache_dir, "int8row"), files.tokenizer, 256, 1)
    a, b, c = fp32.encode(texts), int8.encode(texts), rows.encode(texts)
    to_rows, to_int8 = np.sum(a.sentences * c.sentences, axis=1), np.sum(a.sentences * b.sentences, axis=1)
    assert np.all(to_rows > 0.98)  # "hi", three tokens, is the farthest: ~0.989
    assert to_rows.mean() > to_int8.mean()


def ops_as_run(files, model_cache_dir, tmp_path, quantization: str) -> list[str]:
    """The operators of the cached model as onnxruntime runs it, after its graph optimisations."""
    import onnx

    from hexmcp.tools.embedding.session_options import quiet_session_options

    options = quiet_session_options(1)
    options.optimized_model_filepath = str(tmp_path / "as-run.onnx")
    path = model_cache.load_or_build(files, model_cache_dir, quantization)
    onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    return [node.op_type for node in onnx.load(str(tmp_path / "as-run.onnx")).graph.node]


def test_int8row_graph_runs_integer_products_only(service, files, model_cache_dir, tmp_path):
    # As onnxruntime runs it: every dense product an int8 one, scaled back per row and column in the kernel;
    # no float MatMul left, no per-tensor quantization (DynamicQuantizeLinear would span the batch).
    ops = ops_as_run(files, model_cache_dir, tmp_path, "int8row")
    layers = files.bert_config()["num_hidden_layers"]
    assert ops.count("MatMulIntegerToFloat") == 4 * layers and ops.count("QuantizeLinear") == 4 * layers
    assert not {"MatMul", "DynamicQuantizeLinear", "DynamicQuantizeMatMul", "QAttention"} & set(ops)


def test_int8_graph_runs_fused_attention_and_gelu(service, files, model_cache_dir, tmp_path):
    # What onnxruntime makes of the graph at load time, as it runs it (ADR 0105): per layer one quantised
    # fused attention (query, key and value one product, no separate reshapes, transposes or softmax),
    # one fused GELU, and three quantised products (attention output, the two feed-forward ones).
    ops = ops_as_run(files, model_cache_dir, tmp_path, "int8")
    layers = files.bert_config()["num_hidden_layers"]
    assert ops.count("QAttention") == layers and not {"Softmax", "Transpose", "Reshape", "MatMul"} & set(ops)
    assert "Erf" not in ops and ops.count("Gelu") == layers
    assert ops.count("DynamicQuantizeMatMul") == 3 * layers


def test_a_texts_features_depend_on_that_text_alone(service, files, model_cache_dir):
    # int8 is the case that matters: its dynamic quantisation would mix batch-mates into the scale.
    encoder = SentenceEncoder(model_cache.load_or_build(files, model_cache_dir, "int8"), files.tokenizer, 256, 1)
    texts = ["a much longer text " * 30, "short", "medium length text here", "x"]
    together = encoder.encode(texts, workers=2)
    for index, text in enumerate(texts):
        sentence, rows = encoder.embed_one(text)
        np.testing.assert_array_equal(together.sentences[index], sentence)
        np.testing.assert_array_equal(together.segments[together.offsets[index] : together.offsets[index + 1]],
                                      rows)
    assert together.counts.tolist() == [8, 1, 1, 1]  # 120 word pieces between [CLS] and [SEP], 16 a segment


def seeded_cache(files, model_cache_dir, tmp_path):
    """A cache of our own holding the session cache's models: no second conversion."""
    cache = tmp_path / "cache"
    (cache / "models").mkdir(parents=True)
    digest = file_sha256(files.weights)
    for quantization in ("fp32", "int8"):
        source = model_cache.model_path(model_cache_dir, digest, quantization)
        target = model_cache.model_path(cache, digest, quantization)
        target.write_bytes(source.read_bytes())
        target.with_name(target.name + ".sha256").write_bytes(source.with_name(source.name + ".sha256").read_bytes())
    return cache, digest


def test_corrupt_cache_file_is_rebuilt(service, files, model_cache_dir, tmp_path):
    cache, digest = seeded_cache(files, model_cache_dir, tmp_path)
    path = model_cache.model_path(cache, digest, "int8")
    good = path.read_bytes()
    path.write_bytes(good[: len(good) // 2])  # truncated, as after a crash
    assert not model_cache.is_verified(path)
    assert model_cache.load_or_build(files, cache, "int8", digest) == path
    assert path.read_bytes() == good and model_cache.is_verified(path)
    onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])


def test_a_cached_model_onnxruntime_refuses_is_rebuilt_once(service, files, model_cache_dir, tmp_path):
    # Bytes that match their sidecar (so no checksum catches them) but are no ONNX model at all.
    cache, digest = seeded_cache(files, model_cache_dir, tmp_path)
    path = model_cache.model_path(cache, digest, "int8")
    good = path.read_bytes()
    model_cache.store(path, b"not an onnx model")
    encoder = open_encoder(files, cache, digest, EncoderConfig())
    assert path.read_bytes() == good and model_cache.is_verified(path)
    assert encoder.embed_one("hi")[0].shape == (encoder.dimension,)


def test_missing_fp32_is_reconverted(files, tmp_path):
    path = model_cache.load_or_build(files, tmp_path, "fp32")
    assert model_cache.is_verified(path)
    path.with_name(path.name + ".sha256").unlink()
    assert not model_cache.is_verified(path)
    model_cache.load_or_build(files, tmp_path, "fp32")
    assert model_cache.is_verified(path)
    assert not list(tmp_path.rglob("*.tmp"))  # atomic writes leave no temporaries


def test_unwritable_cache_gives_a_clear_error(files, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(ModelCacheError, match="cannot build or write the model cache"):
        model_cache.load_or_build(files, blocker, "fp32")


def test_tokenizer_truncates_at_max_tokens_and_pads_to_longest(files):
    tokenizer = load_tokenizer(files.tokenizer, 300)
    long, short = tokenizer.encode_batch(["word " * 1000, "short text"])
    assert len(long.ids) == len(short.ids) == 300  # not the shipped 128
    tokenizer = load_tokenizer(files.tokenizer, 256)
    a, b = tokenizer.encode_batch(["one two", "one two three four"])
    assert len(a.ids) == len(b.ids) == 6  # [CLS] + 4 + [SEP]: the longest in the batch, no more


@pytest.fixture(scope="module")
def int8_encoder(service, files, model_cache_dir):
    return SentenceEncoder(model_cache.load_or_build(files, model_cache_dir, "int8"), files.tokenizer, 64, 1)


@settings(max_examples=60, deadline=None)
@given(st.one_of(st.text(min_size=1, max_size=600), st.lists(st.sampled_from(["word", "proof", "x", "?"]),
                                                            max_size=200).map(" ".join)))
def test_the_single_text_tokenizer_path_feeds_what_the_batch_path_feeds(int8_encoder, text):
    # embed_one tokenizes alone (ADR 0105); it must give the model the same ids and mask as a batch of one,
    # truncation at max_tokens (64 here) included.
    alone, batched = int8_encoder.tokenize_one(text), int8_encoder.tokenize([text])
    for name in ("input_ids", "attention_mask"):
        np.testing.assert_array_equal(alone[name], batched[name])
        assert alone[name].dtype == batched[name].dtype == np.int64
