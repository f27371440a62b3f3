"""Where concepts are mentioned: an index of every alias key, scanned over a text's stemmed words.

Matching is on keys (text.key_of), so "vector stores" mentions the concept "Vector store". Longest
match wins and matches never overlap ("in-process vector store" is one mention, not two). Building
the index is linear in the aliases; a scan is linear in the words times the longest alias.
"""

from __future__ import annotations

from typing import Iterable, Iterator

import attrs

from .text import Token, key_of, tokens


@attrs.frozen(kw_only=True)
class Mention:
    concept_id: str
    start: int  # character offsets in the scanned text (plus the offset it was scanned with)
    end: int
    exact: bool  # the surface words equal an alias (case aside), not only its stems


class AliasIndex:
    def __init__(self, aliases: Iterable[tuple[str, str]]) -> None:
        """`aliases`: (concept id, surface alias) pairs; a key already taken keeps its first concept."""
        self._by_first: dict[str, list[tuple[tuple[str, ...], str]]] = {}
        self._surfaces: set[tuple[str, str]] = set()
        seen: set[tuple[str, ...]] = set()
        for concept_id, alias in aliases:
            stems = tuple(key_of(alias).split())
            self._surfaces.add((concept_id, " ".join(t.text.lower() for t in tokens(alias))))
            if not stems or stems in seen:
                continue
            seen.add(stems)
            self._by_first.setdefault(stems[0], []).append((stems, concept_id))
        for entries in self._by_first.values():
            entries.sort(key=lambda entry: -len(entry[0]))

    def __len__(self) -> int:
        return sum(len(entries) for entries in self._by_first.values())

    def concept_of(self, key: str) -> str | None:
        stems = tuple(key.split())
        for candidate, concept_id in self._by_first.get(stems[0] if stems else "", ()):
            if candidate == stems:
                return concept_id
        return None

    def scan(self, text: str, offset: int = 0) -> Iterator[Mention]:
        words = tokens(text, offset)
        yield from self.scan_tokens(words)

    def scan_tokens(self, words: list[Token]) -> Iterator[Mention]:
        stems = [w.stem for w in words]
        position = 0
        while position < len(words):
            match = self._match_at(stems, position)
            if match is None:
                position += 1
                continue
            length, concept_id = match
            span = words[position:position + length]
            surface = " ".join(w.text.lower() for w in span)
            yield Mention(concept_id=concept_id, start=span[0].start, end=span[-1].end,
                          exact=(concept_id, surface) in self._surfaces)
            position += length

    def _match_at(self, stems: list[str], position: int) -> tuple[int, str] | None:
        for candidate, concept_id in self._by_first.get(stems[position], ()):
            length = len(candidate)
            if tuple(stems[position:position + length]) == candidate:
                return length, concept_id
        return None
