"""The public relevance sets are what they claim (their judgements name real files, their sources and
licences are recorded, they are large enough), and the ranking measures behave as measures must."""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import yaml

from bench.relevance_sets import (ALL_SETS, HELD_OUT_SETS, PUBLIC_SETS, QUESTIONS, TRANSLATED_SETS, load_public_set,
                                  score_ranking)
from hexmcp.tools.knowledge.corpus import CorpusSpec, discover


@pytest.mark.parametrize("name", ALL_SETS)
def test_every_judgement_names_a_document_of_its_corpus(name: str) -> None:
    relevance_set = load_public_set(name)
    ids = {f.document_id for f in discover(CorpusSpec(roots=[relevance_set.corpus]))}
    assert len(ids) >= 150
    assert all(q.answers and q.answers <= ids for q in relevance_set.questions)
    assert all(set(c["defining"]) <= ids for c in relevance_set.concepts)
    texts = [q.text for q in relevance_set.questions]
    assert len(texts) == len(set(texts))
    folder = relevance_set.source
    source = (folder / "SOURCE.md").read_text(encoding="utf-8").lower()
    assert (folder / "LICENSE").is_file() and ("commit" in source or "sha256" in source) and "licen" in source


def test_the_sets_are_large_and_mix_task_and_paraphrase_questions() -> None:
    sets = [load_public_set(name) for name in PUBLIC_SETS]
    assert sum(len(s.questions) for s in sets) >= 150
    assert sum(len(s.concepts) for s in sets) >= 100
    kinds = Counter(q.kind for s in sets for q in s.questions)
    assert set(kinds) == {"task", "paraphrase"} and min(kinds.values()) >= 0.3 * sum(kinds.values())
    assert {p.stem for p in QUESTIONS.glob("*.yaml")} == set(ALL_SETS) - set(TRANSLATED_SETS)


@pytest.mark.parametrize("name", HELD_OUT_SETS)
def test_a_held_out_set_is_large_enough_says_so_and_stays_out_of_the_tuned_defaults(name: str) -> None:
    relevance_set = load_public_set(name)
    assert name not in PUBLIC_SETS
    assert len(relevance_set.questions) >= 45 and 12 <= len(relevance_set.concepts) <= 15
    kinds = Counter(q.kind for q in relevance_set.questions)
    assert set(kinds) == {"task", "paraphrase"} and min(kinds.values()) >= 0.3 * len(relevance_set.questions)
    assert yaml.safe_load((QUESTIONS / f"{name}.yaml").read_text(encoding="utf-8"))["held_out"] is True
    assert "held out" in (relevance_set.corpus.parent / "SOURCE.md").read_text(encoding="utf-8").lower()


def test_at_least_one_set_keeps_versioned_copies() -> None:
    versioned = [name for name in PUBLIC_SETS
                 if any(len(q.answers) > 1 and len({Path(a).name for a in q.answers}) == 1
                        for q in load_public_set(name).questions)]
    assert len(versioned) >= 1


DOCS = st.sampled_from([f"d{i}" for i in range(12)])


@given(ranked=st.lists(DOCS, max_size=12, unique=True), answers=st.frozensets(DOCS, min_size=1, max_size=4))
def test_the_measures_are_bounded_and_recall_grows_with_the_cutoff(ranked, answers) -> None:
    scores = score_ranking(ranked, answers, page_of=lambda d: d)
    assert all(0.0 <= v <= 1.0 + 1e-9 for v in scores.values())
    assert scores["recall@1"] <= scores["recall@5"] <= scores["recall@10"]
    assert scores["mrr@10"] <= scores["recall@10"]
    assert (scores["recall@1"] == 1.0) == (scores["mrr@10"] == 1.0)
    perfect = score_ranking(sorted(answers), answers, page_of=lambda d: d)
    assert math.isclose(perfect["ndcg@10"], 1.0)


def test_copies_of_one_page_gain_once_in_ndcg() -> None:
    page_of = {"v1/a": "a", "v2/a": "a", "b": "b"}.__getitem__
    flooded = score_ranking(["v1/a", "v2/a", "b"], frozenset({"v1/a", "v2/a", "b"}), page_of)
    distinct = score_ranking(["v2/a", "b"], frozenset({"v1/a", "v2/a", "b"}), page_of)
    assert math.isclose(distinct["ndcg@10"], 1.0) and flooded["ndcg@10"] < distinct["ndcg@10"]


@pytest.mark.parametrize("name", TRANSLATED_SETS)
def test_a_translated_set_is_laid_out_as_a_site_keeps_its_translations(name: str) -> None:
    from hexmcp.tools.knowledge.languages import Translations

    relevance_set = load_public_set(name)
    ids = [f.document_id for f in discover(CorpusSpec(roots=[relevance_set.corpus]))]
    translations = Translations(ids)
    languages = Counter(language for _, language in translations.of.values())
    assert len(languages) >= 3 and languages.most_common(1)[0][0] == "en"
    assert all(answer.startswith("en/") for q in relevance_set.questions for answer in q.answers)
