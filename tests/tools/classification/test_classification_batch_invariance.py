"""Micro-batching may not change an answer: a text's class and probabilities, alone or among up to 32
batch-mates, on the real fp32 and per-row int8 models (ADR 1201, 1203).

The tolerance is zero for everything, class and every probability: the fp32 and int8row encoders give a
text the same token states bit for bit in any padded batch (int8row scales each token's activations by
that token's own maximum and multiplies in exact integers; the sentence vector is pooled from the text's
own states), and the head runs per text. The int8 model fails this (its activation scales span the
batch), which is why it never batches; a test below shows that the check can see the difference.
"""

from __future__ import annotations

import asyncio

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hexmcp.tools.classification import ClassificationConfig, ClassificationService
from hexmcp.tools.embedding.encoder import length_groups

pytestmark = pytest.mark.slow

WORDS = (
    "integral proof theorem enzyme photosynthesis compiler database kernel empire treaty revolution "
    "dinner weather poem derivative protein galaxy network pharaoh parliament algorithm the of and"
).split()

# Prompt-like texts, short to past the 256-token cut, and arbitrary Unicode.
worded = st.lists(st.sampled_from(WORDS), min_size=1, max_size=300).map(" ".join)
arbitrary = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=400)
texts = st.one_of(worded, arbitrary).filter(lambda text: text.strip() != "")


@pytest.fixture(scope="module", params=["fp32", "int8row"])
def batching_service(request, model_cache_dir, event_loop_runner):
    config = ClassificationConfig(cache_dir=model_cache_dir, quantization=request.param)
    service = ClassificationService.from_config(config)
    event_loop_runner.run(service.start())
    yield service
    event_loop_runner.run(service.close())


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(target=texts, crowd=st.lists(texts, min_size=1, max_size=31), position=st.integers(min_value=0))
def test_a_texts_answer_is_the_same_alone_and_in_any_batch(batching_service, target, crowd, position):
    engine = batching_service._engine
    alone = engine.classify_many([target])[0]
    mix = list(crowd)
    mix.insert(position % (len(mix) + 1), target)
    for text, answer in zip(mix, engine.classify_many(mix)):
        if text == target:
            assert answer == alone  # class, confidence, every probability, entropy, route: bit for bit


def test_concurrent_requests_share_passes_and_keep_their_answers(batching_service, event_loop_runner):
    service = batching_service
    prompts = [" ".join(WORDS[i: i + 3 + i % 7]) for i in range(len(WORDS) - 10)] * 2
    alone = [event_loop_runner.run(service.classify(text, True)) for text in prompts]
    batches_before = service._pool.batches

    async def all_at_once():
        return await asyncio.gather(*(service.classify(text, True) for text in prompts))

    assert event_loop_runner.run(all_at_once()) == alone
    # Fewer passes than requests: the workers took what queued while they were busy.
    assert service._pool.batches - batches_before < len(prompts)
    assert service.describe()["max_batch"] == 32


def test_token_states_are_bit_identical_in_a_padded_batch(batching_service):
    # Below the head: every token of every text, in both exposed layers, in one padded pass of mixed
    # lengths (no length groups), against the text's own pass.
    encoder = batching_service._engine.encoder
    mix = [" ".join(WORDS[: 1 + (i * 7) % len(WORDS)]) * (1 + i % 4) for i in range(24)] + ["x", "€ ∫ 𝔽"]
    feed = encoder.tokenize(mix)
    _, last, mid = encoder.forward(feed)
    lengths = feed["attention_mask"].sum(axis=1)
    for row, text in enumerate(mix):
        _, alone_last, alone_mid = encoder.forward(encoder.tokenize_one(text))
        assert np.array_equal(last[row, : lengths[row]], alone_last[0])
        assert np.array_equal(mid[row, : lengths[row]], alone_mid[0])


def test_int8_never_batches_and_would_not_be_invariant(service):
    assert not service.config.batches() and service.describe()["max_batch"] == 1
    encoder = service._engine.encoder
    target = "Prove that the integral of an odd function over a symmetric interval is zero."
    crowd = ["hi", "What caused the fall of the Western Roman Empire and how did the treaty of 476 matter?"]
    alone = encoder.embed_many([target])[0][1]
    batched = encoder.embed_many(crowd + [target])[2][1]
    assert not np.array_equal(alone, batched)  # the same check sees int8's dependence on batch-mates


def test_length_groups_bound_the_padding_and_cover_every_text():
    lengths = np.array([9, 200, 10, 12, 30, 31, 199, 3])
    groups = length_groups(lengths)
    assert sorted(np.concatenate(groups).tolist()) == list(range(len(lengths)))
    for group in groups:
        assert lengths[group].max() <= lengths[group].min() * 1.5 + 8
    # Past SOLO_TOKENS a text runs alone: batching saves nothing there.
    assert [sorted(lengths[group].tolist()) for group in groups] == [[3, 9, 10, 12], [30, 31], [199], [200]]
