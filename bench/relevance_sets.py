"""The public relevance sets (bench/data/questions/*.yaml over bench/data/corpora/*/docs) and the
ranking measures every run reports for them. One of them is held out (HELD_OUT_SETS).

A question lists every acceptable document, version copies included. recall@k: an acceptable document
in the top k; MRR@10: 1/rank of the first one; nDCG@10 with binary gains where a page counts once: an
acceptable document whose page (versions.py's grouping of copies) was already credited gains nothing,
and the ideal list holds each acceptable page once.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Callable, Sequence

import attrs
import yaml

ROOT = Path(__file__).resolve().parent
QUESTIONS = ROOT / "data" / "questions"
#: The sets the ranking levers were chosen on; what every ablation runs by default.
PUBLIC_SETS = ("django", "docusaurus", "jest", "kubernetes")
#: Held out: measured (name it with --set), never used to choose a lever, so it still tells how `search`
#: does on documentation nobody tuned for. Not in any default run, so no ablation looks at it by accident.
HELD_OUT_SETS = ("ansible",)
#: A set's questions over its corpus laid out as a site keeps it with translations: the English pages as `en/`
#: beside the translation folders of `corpora/NAME/docs` (answers stay the English pages). Opt-in, like the
#: held-out set: the language lever (ADR 0617) was chosen on it.
TRANSLATED_SETS = {"kubernetes-i18n": "kubernetes"}
ALL_SETS = PUBLIC_SETS + HELD_OUT_SETS + tuple(TRANSLATED_SETS)
CUTOFFS = (1, 5, 10)


@attrs.frozen(kw_only=True)
class Question:
    text: str
    answers: frozenset[str]
    kind: str = "paraphrase"


@attrs.frozen(kw_only=True)
class RelevanceSet:
    name: str
    corpus: Path
    questions: tuple[Question, ...]
    concepts: tuple[dict[str, Any], ...]
    source: Path  # the folder whose SOURCE.md and LICENSE say where the corpus came from


def load_public_set(name: str) -> RelevanceSet:
    if name in TRANSLATED_SETS:
        return _translated_set(name, load_public_set(TRANSLATED_SETS[name]))
    data = yaml.safe_load((QUESTIONS / f"{name}.yaml").read_text(encoding="utf-8"))
    questions = tuple(Question(text=q["q"], answers=frozenset(q["answers"]), kind=q.get("kind", "paraphrase"))
                      for q in data["questions"])
    corpus = ROOT.parent / data["corpus"]
    return RelevanceSet(name=name, corpus=corpus, questions=questions, concepts=tuple(data.get("concepts", ())),
                        source=corpus.parent)


def _translated_set(name: str, english: RelevanceSet) -> RelevanceSet:
    """`english`'s questions over its pages as `en/` beside the translations kept in corpora/NAME/docs, copied
    into one folder under the system's temporary folder (rebuilt each run: a copy, never a link, so that the
    corpus reader sees the tree a site has)."""
    import shutil
    import tempfile

    corpus = Path(tempfile.gettempdir()) / f"hexmcp-relevance-{name}"
    shutil.rmtree(corpus, ignore_errors=True)
    shutil.copytree(english.corpus, corpus / "en")
    for language in sorted((ROOT / "data" / "corpora" / name / "docs").iterdir()):
        shutil.copytree(language, corpus / language.name)
    questions = tuple(attrs.evolve(q, answers=frozenset(f"en/{a}" for a in q.answers)) for q in english.questions)
    concepts = tuple({**c, **({"defining": [f"en/{d}" for d in c["defining"]]} if "defining" in c else {})}
                     for c in english.concepts)
    return RelevanceSet(name=name, corpus=corpus, questions=questions, concepts=concepts,
                        source=ROOT / "data" / "corpora" / name)


def score_ranking(ranked: Sequence[str], answers: frozenset[str], page_of: Callable[[str], str]) -> dict[str, float]:
    """The measures for one question's top-10 document ids."""
    ranked = list(ranked)[:10]
    first = next((rank for rank, d in enumerate(ranked, 1) if d in answers), None)
    scores = {f"recall@{k}": float(first is not None and first <= k) for k in CUTOFFS}
    scores["mrr@10"] = 1.0 / first if first else 0.0
    credited: set[str] = set()
    dcg = 0.0
    for rank, document_id in enumerate(ranked, 1):
        page = page_of(document_id)
        if document_id in answers and page not in credited:
            credited.add(page)
            dcg += 1.0 / math.log2(rank + 1)
    ideal_pages = len({page_of(d) for d in answers})
    ideal = sum(1.0 / math.log2(rank + 1) for rank in range(1, min(ideal_pages, 10) + 1))
    scores["ndcg@10"] = dcg / ideal if ideal else 0.0
    return scores


def mean_scores(per_question: list[dict[str, float]]) -> dict[str, float]:
    keys = per_question[0].keys() if per_question else ()
    return {k: sum(s[k] for s in per_question) / len(per_question) for k in keys}


MEASURES = ("recall@1", "recall@5", "recall@10", "mrr@10", "ndcg@10")
