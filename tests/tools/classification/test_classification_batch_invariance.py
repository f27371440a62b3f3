"""Micro-batching may not change an answer: a text's class and probabilities, alone or among up to 32
batch-mates, on the real fp32 model (ADR 1201).

The tolerance is zero for everything, class and every probability: the fp32 encoder gives a text the
same token states bit for bit in any padded batch (its sentence vector is pooled from those states
alone), and the head runs per text. The int8 model fails this (its activation scales span the batch),
which is why it never batches; the last test shows that the check can see the difference.
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


@pytest.fixture(scope="module")
def fp32_service(model_cache_dir, event_loop_runner):
    service = ClassificationService.from_config(ClassificationConfig(cache_dir=model_cache_dir, quantization="fp32"))
    event_loop_runner.run(service.start())
    yield service
    event_loop_runner.run(service.close())


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(target=texts, crowd=st.lists(texts, min_size=1, max_size=31), position=st.integers(min_value=0))
def test_a_texts_answer_is_the_same_alone_and_in_any_batch(fp32_service, target, crowd, position):
    engine = fp32_service._engine
    alone = engine.classify_many([target])[0]
    mix = list(crowd)
    mix.insert(position % (len(mix) + 1), target)
    for text, answer in zip(mix, engine.classify_many(mix)):
        if text == target:
            assert answer == alone  # class, confidence, every probability, entropy, route: bit for bit


def test_concurrent_requests_share_passes_and_keep_their_answers(fp32_service, event_loop_runner):
    prompts = [" ".join(WORDS[i: i + 3 + i % 7]) for i in range(len(WORDS) - 10)] * 2
    alone = [event_loop_runner.run(fp32_service.classify(text, True)) for text in prompts]
    batches_before = fp32_service._pool.batches

    async def all_at_once():
        return await asyncio.gather(*(fp32_service.classify(text, True) for text in prompts))

    assert event_loop_runner.run(all_at_once()) == alone
    # Fewer passes than requests: the workers took what queued while they were busy.
    assert fp32_service._pool.batches - batches_before < len(prompts)
    assert fp32_service.describe()["max_batch"] == 32


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
    assert [sorted(lengths[group].tolist()) for group in groups] == [[3, 9, 10, 12], [30, 31], [199, 200]]
