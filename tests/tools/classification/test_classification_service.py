"""The service surface the MCP tools call, on the real model (one shared, session-scoped service)."""

from __future__ import annotations

import asyncio
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hexmcp.tools.classification import ClassificationConfig, ClassificationInputError, ClassificationService
from hexmcp.tools.classification.head import entropy_nats

from tests.support.fresh_imports import modules_imported_by

pytestmark = pytest.mark.slow

SIMPLE = ["What is 5 + 3?", "What color is the sky?", "What is the capital of France?", "hey, how are you?"]
MULTI_STEP = [
    "Solve the differential equation y'' + y = sin(2x) with y(0) = 0 and y'(0) = 1.",
    "Prove that every finite integral domain is a field.",
    "Design a globally distributed key-value store with strong consistency and explain the failure modes.",
    "Compare the economic and military causes of the fall of the Western Roman Empire, analysing each at length.",
    "Prove that sqrt(2) is irrational",  # short, but a proof: brevity must not switch reasoning off
]


def classify(service, runner, text, with_probabilities=False):
    return runner.run(service.classify(text, with_probabilities))


def test_result_shape_and_invariants(service, event_loop_runner):
    result = classify(service, event_loop_runner, "What is the derivative of x squared?", True)
    assert set(result) == {"class", "confidence", "model", "use_reasoning", "probabilities", "entropy"}
    names = service.list_categories()["categories"]
    assert result["class"] == names.index("math")
    assert len(result["probabilities"]) == len(names)
    assert math.isclose(sum(result["probabilities"]), 1.0, abs_tol=1e-9)
    assert result["confidence"] == max(result["probabilities"])
    assert 0.0 <= result["entropy"] <= math.log(len(names))
    assert set(classify(service, event_loop_runner, "hello")) == {"class", "confidence", "model", "use_reasoning"}


def test_same_text_same_answer_whatever_runs_beside_it(service, event_loop_runner):
    # int8 scales activations per input tensor: when texts shared a batch, long batch-mates flipped
    # the class of "best programming language for math". Now every bit must match.
    texts = ["Who was the first emperor of China?", "best programming language for math", "tell me about Alan Turing"]
    alone = [classify(service, event_loop_runner, text, True) for text in texts]
    filler = "The committee reviewed the quarterly figures, the audit trail and the staffing plan in detail. " * 12

    async def crowd():
        others = [service.classify(f"{filler} Item {i}.") for i in range(12)]
        return (await asyncio.gather(*(service.classify(t, True) for t in texts), *others))[: len(texts)]

    for _ in range(3):
        assert event_loop_runner.run(crowd()) == alone
    assert alone[0]["class"] == service.list_categories()["categories"].index("history")


def test_the_per_request_path_matches_the_batch_reference(service):
    # engine.classify is a lean single-text form of engine.probabilities + entropy_nats: same numbers.
    engine = service._engine
    texts = SIMPLE + MULTI_STEP + ["What should I make for dinner tonight?", "word " * 400]
    for text in texts:
        prediction = engine.classify(text)
        reference = engine.probabilities(engine.encoder.encode([text]))[0]
        np.testing.assert_allclose(prediction.probabilities, reference, rtol=1e-9, atol=1e-12)
        assert prediction.class_index == int(np.argmax(reference))
        assert prediction.entropy == pytest.approx(float(entropy_nats(reference[None])[0]), rel=1e-9, abs=1e-12)


@pytest.mark.parametrize(
    ("text", "category"),
    [
        ("That's interesting, tell me more about it", "general"),
        ("What should I make for dinner tonight?", "general"),
        ("How does a hash table handle collisions?", "technology"),
        ("Why do plants need sunlight?", "science"),
    ],
)
def test_builtin_taxonomy_on_unseen_prompts(service, event_loop_runner, text, category):
    names = service.list_categories()["categories"]
    assert classify(service, event_loop_runner, text)["class"] == names.index(category)


@pytest.mark.parametrize("text", SIMPLE)
def test_simple_prompts_skip_reasoning(service, event_loop_runner, text):
    assert classify(service, event_loop_runner, text)["use_reasoning"] is False


@pytest.mark.parametrize("text", MULTI_STEP)
def test_multi_step_prompts_get_reasoning(service, event_loop_runner, text):
    assert classify(service, event_loop_runner, text)["use_reasoning"] is True


def test_low_confidence_turns_reasoning_on_with_fallback_model(model_cache_dir, event_loop_runner):
    config = ClassificationConfig(cache_dir=model_cache_dir, low_confidence_threshold=1.0, fallback_model="big")
    svc = ClassificationService.from_config(config)
    try:
        result = event_loop_runner.run(svc.classify("What is 5 + 3?"))  # classify() starts on demand
        assert result["use_reasoning"] is True and result["model"] == "big"
    finally:
        event_loop_runner.run(svc.close())


@pytest.mark.parametrize(
    "bad",
    [None, 42, b"bytes", "", "   ", "\n\t", "x" * 20_001],
)
def test_invalid_text_is_rejected_with_field_name(service, event_loop_runner, bad):
    with pytest.raises(ClassificationInputError) as info:
        classify(service, event_loop_runner, bad)
    assert info.value.field == "text"


@settings(max_examples=25, deadline=None)
@given(st.text(alphabet=" \t\n\r\u3000\u00a0", max_size=50))
def test_whitespace_only_is_always_rejected(service, event_loop_runner, text):
    with pytest.raises(ClassificationInputError):
        classify(service, event_loop_runner, text)


def test_with_probabilities_must_be_boolean(service, event_loop_runner):
    with pytest.raises(ClassificationInputError) as info:
        classify(service, event_loop_runner, "hello", "yes")
    assert info.value.field == "with_probabilities"


def test_describe_and_categories(service):
    described = service.describe()
    categories = service.list_categories()
    assert described["categories"] == categories["categories"]
    assert described["index_size"] >= 40 * len(categories["categories"])
    assert described["quantization"] == "int8" and "MiniLM" in described["model"]
    assert set(categories["category_system_prompts"]) == set(categories["categories"])
    assert set(categories["category_descriptions"]) == set(categories["categories"])


def test_importing_the_package_stays_light():
    code = "import hexmcp.tools.classification as c\nc.ClassificationService.from_config(c.ClassificationConfig())"
    assert modules_imported_by(code, ("numpy", "onnxruntime", "tokenizers", "onnx", "safetensors")) == []
