"""Routing policy: which model to recommend, and whether to turn reasoning on.

Decision order:
1. The category's policy may force reasoning on or off (`use_reasoning: true/false`).
2. Otherwise ("auto") the prompt is scored: embedding similarity to exemplars of reasoning-heavy
   prompts minus similarity to simple ones, plus small lexical and length cues. Keywords alone
   misfire ("explain" can be trivial; "solve" can be one step), which is why the embedding leads.
3. Low classifier confidence overrides both: reasoning on, and the fallback model if one is set,
   because a prompt we cannot place is one we should not under-serve.

The design and its trade-offs: docs/adr/0103-routing-policy.md.
"""

from __future__ import annotations

import importlib.resources
import re

import attrs
import numpy as np
import yaml

from .taxonomy import Taxonomy

EXEMPLARS_FILE = "routing_exemplars.yaml"
TOP_K = 3  # mean of the k closest exemplars: less brittle than the single nearest one

# Cue words of multi-step work. Each hit adds CUE_WEIGHT; the embedding term is usually ±0.1-0.3.
MULTI_STEP_CUES = re.compile(
    r"\b(prove|proof|derive|derivation|step[- ]by[- ]step|design|architect\w*|compare|comparison|"
    r"analy[sz]e|analysis|evaluate|trade-?offs?|optimi[sz]e|justify|differential|integral|"
    r"in detail|pros and cons|plan)\b",
    re.IGNORECASE,
)
CUE_WEIGHT = 0.08
MAX_CUE_BONUS = 0.16
LONG_PROMPT_WORDS = 60
SHORT_PROMPT_WORDS = 6
LENGTH_WEIGHT = 0.05


def load_exemplars() -> dict[str, list[str]]:
    text = (importlib.resources.files(__package__) / EXEMPLARS_FILE).read_text(encoding="utf-8")
    data = yaml.safe_load(text)
    return {"reasoning": list(data["reasoning"]), "simple": list(data["simple"])}


@attrs.frozen(kw_only=True)
class RoutingSettings:
    default_model: str
    low_confidence_threshold: float
    fallback_model: str | None


@attrs.frozen(kw_only=True)
class RouteDecision:
    model: str
    use_reasoning: bool


def _top_k_mean(similarities: np.ndarray) -> float:
    k = min(TOP_K, similarities.shape[-1])
    return float(np.add.reduce(np.sort(similarities)[-k:])) / k  # ndarray.mean's arithmetic, bit for bit


def reasoning_score(text: str, embedding: np.ndarray, reasoning: np.ndarray, simple: np.ndarray) -> float:
    """> 0 means the prompt looks like multi-step work."""
    score = _top_k_mean(reasoning @ embedding) - _top_k_mean(simple @ embedding)
    cues = len(MULTI_STEP_CUES.findall(text))
    score += min(MAX_CUE_BONUS, CUE_WEIGHT * cues)
    words = len(text.split())
    if words >= LONG_PROMPT_WORDS:
        score += LENGTH_WEIGHT
    elif words <= SHORT_PROMPT_WORDS and not cues:
        # Brevity suggests a lookup, unless the prompt names multi-step work ("Prove that √2 is irrational").
        score -= LENGTH_WEIGHT
    return score


@attrs.frozen(kw_only=True, eq=False)
class Router:
    taxonomy: Taxonomy
    settings: RoutingSettings
    reasoning_exemplars: np.ndarray  # unit sentence embeddings
    simple_exemplars: np.ndarray

    def decide(self, category_index: int, confidence: float, text: str, embedding: np.ndarray) -> RouteDecision:
        policy = self.taxonomy.categories[category_index].routing
        model = policy.model or self.settings.default_model
        if confidence < self.settings.low_confidence_threshold:
            return RouteDecision(model=self.settings.fallback_model or model, use_reasoning=True)
        if isinstance(policy.use_reasoning, bool):
            return RouteDecision(model=model, use_reasoning=policy.use_reasoning)
        score = reasoning_score(text, embedding, self.reasoning_exemplars, self.simple_exemplars)
        return RouteDecision(model=model, use_reasoning=score > 0.0)
