"""The searchable knowledge base: passages, their BM25 index and their vectors in a VectorStore.

Queries go through `clean_query` (one place for the empty/oversize rules every tool shares), then
both retrievers, then `fusion.fuse`. A passage longer than the encoder's window has a vector per window
(windows.py); its dense score is its best window's cosine. Results are distinct: the copies of one page (version folders,
mirrors, identical texts: versions.py) answer as one result, the preferred copy with the others named.
Document search ranks a page by its best passage.
"""

from __future__ import annotations

import math
from collections import Counter
from itertools import takewhile
from typing import Collection, Sequence

import attrs
import numpy as np

from .errors import UnknownIdError
from .fusion import DENSE_WEIGHT, Method, fuse
from .lexical import LexicalIndex
from .passages import Passage, SourceDocument
from .queries import clean_query
from .vectors.port import VectorStore
from .versions import PageCatalog
from .windows import passage_of_row

DENSE_DEPTH = 100  # dense candidates per query before fusion, for a search of one result per passage
PAGE_DEPTH = 300  # passages read to fill a list of distinct pages: copies and siblings take many
#: A copy of the preferred version answers for its page when it scores at least this close to the best copy;
#: a page whose preferred copy lacks what was asked (added in a newer draft, say) answers with the copy that has it.
PREFERRED_MARGIN = 0.05
#: What a page's second and third best passages add to its score (times this, and its square): measured on the
#: public relevance sets (bench/diaries/knowledge.md), 0.1 helped three of four and cost the fourth nothing.
SUPPORT_WEIGHT = 0.1

@attrs.frozen(kw_only=True)
class PassageHit:
    passage: Passage
    score: float
    copies: tuple[str, ...] = ()  # the documents holding the same passage in other versions or forms


@attrs.frozen(kw_only=True)
class DocumentHit:
    document: SourceDocument
    best: PassageHit
    version: str | None = None
    copies: tuple[str, ...] = ()  # the page's other copies (other versions, mirrors), newest first


class KnowledgeIndex:
    """Read-only once built; a rebuilt corpus is a new KnowledgeIndex (swapped in whole)."""

    def __init__(self, documents: Sequence[SourceDocument], passages: Sequence[Passage], embed_query: object,
                 store: VectorStore, version: str, *, preferred_version: str | None = None,
                 rows: int | None = None, max_windows: int | None = None, partial: bool = False,
                 previous: KnowledgeIndex | None = None) -> None:
        """`rows`: how many rows the store holds for these passages (one per window; default one per passage).
        `max_windows`: the most rows any one of these passages holds, when known. `partial`: a snapshot of a
        build still going on, whose store goes on taking rows of passages this index does not know.
        `previous`: an earlier index; the BM25 terms and term ids of passages it holds (the same objects), and the
        places of documents whose passages it holds alike, are reused (ADR 0614)."""
        self.documents = {d.document_id: d for d in documents}
        self.passages = list(passages)
        self.version = version
        self._by_id = {p.passage_id: i for i, p in enumerate(self.passages)}
        reused = previous._numbers_of(self.passages) if previous is not None else None
        # A passage whose terms are reused is not read again: its text would only be built to be ignored.
        self._lexical = LexicalIndex([p.indexed_text() if reused is None or reused[i] is None else ""
                                      for i, p in enumerate(self.passages)],
                                     previous=previous._lexical if previous is not None else None, reused=reused)
        self._embed_query = embed_query
        self._store = store
        self.pages = PageCatalog(documents, preferred_version, previous.pages if previous is not None else None)
        self._document_number = {d: n for n, d in enumerate(self.documents)}
        self._passage_document = np.array([self._document_number.get(p.document_id, -1) for p in self.passages],
                                          dtype=np.int64)
        self._place = _places(self.passages, self.pages, self._passage_document, previous, reused)
        self.dense_weight = DENSE_WEIGHT  # a knob for bench/relevance.py, not a serving setting
        # Rows read per passage wanted from the store: a long passage's further windows take rows too.
        self._rows_per_passage = max(1.0, (rows or 0) / len(self.passages)) if self.passages else 1.0
        self._max_windows = max_windows
        self._partial = partial

    def _numbers_of(self, passages: Sequence[Passage]) -> list[int | None]:
        """For each of `passages`, its number in this index if this index holds it itself (the same object),
        whose BM25 terms and term ids a successor reuses; None for the others."""
        by_id, mine = self._by_id, self.passages
        found: list[int | None] = []
        for passage in passages:
            index = by_id.get(passage.passage_id)
            found.append(index if index is not None and mine[index] is passage else None)
        return found

    def passage(self, passage_id: str) -> Passage:
        try:
            return self.passages[self._by_id[passage_id]]
        except KeyError:
            raise UnknownIdError("passage", passage_id) from None

    def document(self, document_id: str) -> SourceDocument:
        try:
            return self.documents[document_id]
        except KeyError:
            raise UnknownIdError("document", document_id) from None

    def embed_query(self, text: str) -> np.ndarray:
        """The query encoder's vector for `text` (L2-normalised), for callers that search by vector."""
        return self._embed_query(text)  # type: ignore[operator]

    def nearest_passages(self, vector: np.ndarray, limit: int) -> list[tuple[Passage, float]]:
        """The passages whose vectors are nearest `vector`, with their cosines, best first."""
        return [(self.passages[i], score) for i, score in self._nearest(vector, limit, {})]

    def _nearest(self, vector: np.ndarray, limit: int, filters: dict) -> list[tuple[int, float]]:
        """The `limit` passages nearest `vector` as (passage index, best window's cosine), best first. Rows are
        read until `limit` distinct passages are among them: then no passage left out can score higher."""
        if not self.passages or limit <= 0:
            return []
        depth = math.ceil(limit * self._rows_per_passage)
        # Rows of `limit` passages of at most `max_windows` rows each: reading that many is enough.
        enough = None if self._max_windows is None else limit * self._max_windows
        if self._partial:
            # The build adds rows this snapshot drops, so no depth short of the whole store would be sure; a
            # partial index answers from one read, as it did before windows, and the next snapshot catches up.
            enough = depth
        while True:
            hits = self._store.search(vector, depth, **filters)
            best: dict[int, float] = {}
            for hit in hits:  # best first, so a passage's first row is its best window
                index = self._by_id.get(passage_of_row(hit.passage_id))
                if index is not None:
                    best.setdefault(index, hit.score)
            if len(best) >= limit or len(hits) < depth or (enough is not None and depth >= enough):
                return list(best.items())[:limit]
            depth = depth * 2 if enough is None else min(depth * 2, enough)

    def _allowed(self, document_id: str | None, version: str | None, path: str | None) -> set[str] | None:
        if document_id is not None:
            self.document(document_id)
            return {document_id}
        if version is None and path is None:
            return None
        return self.pages.admitted(list(self.documents), version, path)

    def _candidates(self, text: str, depth: int, method: Method, allowed: Collection[str] | None) -> list[tuple[int, float]]:
        """(passage index, fused score) pairs, best first, at most `depth`."""
        if not self.passages or (allowed is not None and not allowed):
            return []
        lexical = self._lexical.scores(text) if method is not Method.DENSE else np.zeros(len(self.passages))
        if allowed is not None:
            admitted = np.zeros(len(self._document_number) + 1, dtype=bool)  # the last slot: -1, no document
            admitted[[self._document_number[d] for d in allowed if d in self._document_number]] = True
            lexical = np.where(admitted[self._passage_document], lexical, 0.0)
        dense: dict[int, float] = {}
        if method is not Method.LEXICAL:
            vector = self._embed_query(text)  # type: ignore[operator]
            filters = ({} if allowed is None else {"document_id": next(iter(allowed))} if len(allowed) == 1
                       else {"document_ids": allowed})
            dense = dict(self._nearest(vector, max(DENSE_DEPTH, depth), filters))
        return fuse(method, dense, lexical, depth, self.dense_weight)

    def search_passages(self, query: str, limit: int = 10, *, document_id: str | None = None,
                        version: str | None = None, path: str | None = None, method: Method = Method.HYBRID,
                        distinct: bool = True) -> list[PassageHit]:
        """The best passages; with `distinct`, a passage that several copies of its page hold answers once."""
        text = clean_query(query)
        allowed = self._allowed(document_id, version, path)
        depth = max(DENSE_DEPTH, limit) if not distinct else max(DENSE_DEPTH, limit * 4)
        ranked = self._candidates(text, depth, method, allowed)
        if not distinct:
            return [self._hit(i, s) for i, s in ranked[:limit]]
        if self.pages.translations:
            ranked = self._main_language_first(ranked)
        groups: dict[tuple, list[tuple[int, float]]] = {}
        for index, score in ranked:
            groups.setdefault(self._place[index], []).append((index, score))
        hits = [self._representative(members) for members in groups.values()]
        return hits[:limit]

    def _main_language_first(self, ranked: list[tuple[int, float]]) -> list[tuple[int, float]]:
        """Without the passages of translations whose page also has passages in the main language among
        `ranked`: a translated section cannot be matched to its original (its headings are translated too), so
        a page found in its main language answers in it, and a translation only where nothing else was found
        (a client's path filter naming a language folder, say)."""
        translations, passages = self.pages.translations, self.passages
        found = {self.pages.page(passages[i].document_id).key for i, _ in ranked
                 if translations.in_main_language(passages[i].document_id)}
        return [(i, s) for i, s in ranked
                if not (passages[i].document_id in translations.of
                        and not translations.in_main_language(passages[i].document_id)
                        and self.pages.page(passages[i].document_id).key in found)]

    def _representative(self, members: list[tuple[int, float]]) -> PassageHit:
        """One passage for the copies of it that were found: the preferred copy's unless it scores clearly worse."""
        best_index, best_score = members[0]
        order = self.pages.page(self.passages[best_index].document_id).documents
        chosen = min((m for m in members if m[1] >= best_score - PREFERRED_MARGIN),
                     key=lambda m: order.index(self.passages[m[0]].document_id)
                     if self.passages[m[0]].document_id in order else len(order))
        copies = tuple(dict.fromkeys(self.passages[i].document_id for i, _ in members
                                     if self.passages[i].document_id != self.passages[chosen[0]].document_id))
        return self._hit(chosen[0], best_score, copies)

    def _hit(self, index: int, score: float, copies: tuple[str, ...] = ()) -> PassageHit:
        return PassageHit(passage=self.passages[index], score=min(max(score, 0.0), 1.0), copies=copies)

    def search_documents(self, query: str, limit: int = 10, *, version: str | None = None, path: str | None = None,
                         method: Method = Method.HYBRID, distinct: bool = True) -> list[DocumentHit]:
        """The best documents, each ranked by its best passage; with `distinct`, one result per page."""
        text = clean_query(query)
        allowed = self._allowed(None, version, path)
        ranked = self._candidates(text, max(PAGE_DEPTH if distinct else DENSE_DEPTH, limit * 10), method, allowed)
        by_document: dict[str, tuple[int, float]] = {}
        for index, score in ranked:
            by_document.setdefault(self.passages[index].document_id, (index, score))
        if not distinct:
            return [DocumentHit(document=self.documents[d], best=self._hit(i, s),
                                version=self.pages.label(d)) for d, (i, s) in list(by_document.items())[:limit]]
        pages: dict[str, list[str]] = {}
        support: dict[str, dict[tuple, float]] = {}  # each page's distinct passages found, best score first
        for index, score in ranked:
            key = self.pages.page(self.passages[index].document_id).key
            support.setdefault(key, {}).setdefault(self._place[index], score)
        for document_id in by_document:
            pages.setdefault(self.pages.page(document_id).key, []).append(document_id)
        order = sorted(pages, key=lambda key: -_page_score(support[key]))
        hits = []
        for key in order[:limit]:
            found = pages[key]
            best_score = by_document[found[0]][1]
            page = self.pages.page(found[0])
            # A page's copy in the corpus's main language answers whenever it was found at all: a translation
            # outscores it on the code and names they share, not because it says more (languages.py).
            close = [d for d in found if by_document[d][1] >= best_score - PREFERRED_MARGIN
                     or self.pages.translations.in_main_language(d)]
            chosen = min(close, key=page.documents.index)
            index = _telling(self.passages, ranked, chosen, by_document[chosen][0])
            hits.append(DocumentHit(document=self.documents[chosen], best=self._hit(index, best_score),
                                    version=page.labels.get(chosen),
                                    copies=tuple(d for d in page.documents if d != chosen)))
        return hits


def _telling(passages: Sequence[Passage], ranked: list[tuple[int, float]], document_id: str, best: int) -> int:
    """The passage a page answers with: its best one, unless that holds only a heading (fetching it would
    give the client one line); then the document's best-ranked passage that says something, or else the
    first such passage after the heading (its section's opening). The page's rank and score stay its best
    passage's."""
    if not passages[best].only_heading():
        return best
    ranked_telling = (i for i, _ in ranked if passages[i].document_id == document_id and not passages[i].only_heading())
    # A document's passages sit together, in document order (builder.py adds each document's chunks at once).
    following = takewhile(lambda i: passages[i].document_id == document_id, range(best + 1, len(passages)))
    return next(ranked_telling, next((i for i in following if not passages[i].only_heading()), best))


def _page_score(places: dict[tuple, float]) -> float:
    """A page's best passage, plus a little for its next best: of two pages that match equally well at
    their best, the one that says more about the question ranks first (SUPPORT_WEIGHT)."""
    scores = sorted(places.values(), reverse=True)[:3]
    return scores[0] + sum(SUPPORT_WEIGHT ** rank * score for rank, score in enumerate(scores[1:], 1))


def _places(passages: Sequence[Passage], pages: PageCatalog, document_of: np.ndarray,
            previous: KnowledgeIndex | None = None, reused: Sequence[int | None] | None = None) -> list[tuple]:
    """Where each passage sits in its page, the same for every copy: page key, heading path, ordinal.

    Worked out a document at a time (`document_of`: each passage's document number; a document's passages
    are consecutive), and a document whose passages `previous` held in the same order, under the same page
    key, takes its places from there: a re-index works out only the changed documents' places."""
    starts = np.flatnonzero(np.diff(document_of)) + 1 if len(document_of) else np.zeros(0, dtype=np.int64)
    bounds = [0, *starts.tolist(), len(passages)] if len(passages) else [0]
    if (document_of < 0).any() or len({passages[start].document_id for start in bounds[:-1]}) != len(bounds) - 1:
        return _places_of(passages, pages)  # a document's passages not in one run: count over the whole list
    places: list[tuple] = []
    for start, end in zip(bounds, bounds[1:]):
        document_id = passages[start].document_id
        key = pages.page(document_id).key
        kept = _kept_run(previous, reused, start, end, key) if previous is not None and reused is not None else None
        places += kept if kept is not None else _places_of(passages[start:end], pages, key)
    return places


def _kept_run(previous: KnowledgeIndex, reused: Sequence[int | None], start: int, end: int, key: str) -> list | None:
    """The places `previous` gave a document's passages [start, end), if it held exactly these, in this order,
    at the head of the document's run, under the same page key (so each ordinal is the same)."""
    first = reused[start]
    if first is None or list(reused[start:end]) != list(range(first, first + end - start)):
        return None
    document_id = previous.passages[first].document_id
    if first > 0 and previous.passages[first - 1].document_id == document_id:
        return None
    if previous.pages.page(document_id).key != key:
        return None
    return previous._place[first:first + end - start]


def _places_of(passages: Sequence[Passage], pages: PageCatalog, key: str | None = None) -> list[tuple]:
    seen: Counter[tuple] = Counter()
    places = []
    for passage in passages:
        where = (key if key is not None else pages.page(passage.document_id).key, passage.headings)
        ordinal = seen[(passage.document_id, passage.headings)]
        seen[(passage.document_id, passage.headings)] += 1
        places.append((*where, ordinal))
    return places
