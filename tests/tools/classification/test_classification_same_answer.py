"""'Same text, same answer' over random mixes of concurrent texts, on the real model and pool.

A text's answer must not depend on what runs beside it (issue 14, ADR 0104/0105). The pool runs one
text per encoder pass, so the tolerance is zero: every probability must match bit for bit. A change
that coalesced texts into shared passes would have to pass this test as well.
"""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.slow

WORDS = (
    "integral proof theorem enzyme photosynthesis compiler database kernel empire treaty revolution "
    "dinner weather poem derivative protein galaxy network pharaoh parliament algorithm the of and"
).split()

# Prompt-like texts (vocabulary the taxonomy knows) and arbitrary Unicode, short and long.
worded = st.lists(st.sampled_from(WORDS), min_size=1, max_size=120).map(" ".join)
arbitrary = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=400)
texts = st.one_of(worded, arbitrary).filter(lambda text: text.strip() != "")


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(target=texts, crowd=st.lists(texts, min_size=1, max_size=12), position=st.integers(min_value=0))
def test_a_texts_answer_does_not_depend_on_the_texts_beside_it(service, event_loop_runner, target, crowd, position):
    alone = event_loop_runner.run(service.classify(target, True))
    mix = list(crowd)
    mix.insert(position % (len(mix) + 1), target)

    async def all_at_once():
        return await asyncio.gather(*(service.classify(text, True) for text in mix))

    answers = event_loop_runner.run(all_at_once())
    for text, answer in zip(mix, answers):
        if text == target:
            assert answer == alone  # class, confidence, every probability, entropy, route: exactly
