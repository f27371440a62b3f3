"""Fuzzy spelling over concept names (rapidfuzz): the resolver's third stage and the hint an unknown id
gets. Kept apart from both the resolver and the concept base, which each need it, so neither imports
the other."""

from __future__ import annotations

from typing import Sequence

FUZZY_CUTOFF = 0.84  # rapidfuzz ratio / 100 below which two spellings are not the same name


def spelled_like(choices: Sequence[str], owners: Sequence[str], term: str, limit: int) -> list[tuple[str, float, str]]:
    """(owner id, similarity 0..100, the name it matched), best first, one per owner, at most `limit`."""
    from rapidfuzz import fuzz, process, utils

    query = term.strip().lower()
    if len(query) < 3 or not choices:
        return []
    found = process.extract(query, choices, scorer=fuzz.ratio, processor=utils.default_process,
                            limit=limit * 3, score_cutoff=FUZZY_CUTOFF * 100)
    best: dict[str, tuple[str, float, str]] = {}
    for choice, similarity, position in found:
        owner = owners[position]
        if owner not in best:
            best[owner] = (owner, similarity, choice)
    return sorted(best.values(), key=lambda m: (-m[1], m[0]))[:limit]


def nearest_ids(choices: Sequence[str], owners: Sequence[str], order: Sequence[str], term: str, limit: int) -> list[str]:
    """Ids that look like `term` (an unknown id's hint): spelled alike, else sharing its first three
    characters; none when nothing does (the first ids in alphabetical order would be no hint at all)."""
    spelled = [owner for owner, _, _ in spelled_like(choices, owners, term.replace("-", " "), limit)]
    prefix = term.strip()[:3].lower()
    return spelled or (sorted(i for i in order if i.startswith(prefix))[:limit] if len(prefix) == 3 else [])
