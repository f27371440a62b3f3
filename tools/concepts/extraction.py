"""Evidence of concepts in one document: glossary entries, headings (and the titles of plain-text
pages), definitions (bold or plain "X is a ..." sentences), acronyms, link texts and YAKE
key phrases. A pure function of the document and its passages, so its result is cached per document
content and only changed documents are re-read after an index change.

Nothing here knows any corpus's words: a term qualifies by where and how it is written.
"""

from __future__ import annotations

import bisect
import posixpath
import re
from typing import Iterable, Sequence

from hexmcp.tools.ports import KnowledgeDocument, KnowledgePassage

from .glossary_entries import glossary_entries
from .model import Evidence, EvidenceKind
from .plain_titles import plain_titles
from .text import MAX_TERM_WORDS, STOP_WORDS, clean_term, key_of, plausible_term, words

KEYPHRASES_PER_DOCUMENT = 8
KEYPHRASE_TEXT_CHARS = 6_000  # YAKE reads a document's opening only: its cost grows with the text and dominates
_NUMBERING = re.compile(r"^(?:[A-Z]{2,5}[ -])?\d[\d.]*\s*(?:[:.—–-]\s*)?|^(?:step|part|chapter)\s+\d+\s*[:.—–-]\s*",
                        re.IGNORECASE)
_ASIDE = re.compile(r"\s*\([^)]*\)?")  # "(this 2-core VM" and "(optional)" are remarks, not names
# A heading's trailing anchor `{#front-matter}` and type note `\[boolean]` are markup, not words of its name.
_ANNOTATION = re.compile(r"\s*(?:\{#[^}]*\}|\\?\[[^\]]*\]|&lt;.*?&gt;)\s*")
# A page titled "Using Matchers" or "Introduction to MDX" is about matchers, MDX.
_FRAMING = re.compile(r"^(?:using|understanding|about|introducing|introduction to|intro to|an introduction to|"
                      r"overview of|working with|getting started with|configuring|writing|creating|managing)\s+",
                      re.IGNORECASE)
# "A savepoint is a marker ...", "Front matter is used to ...": a sentence that opens by naming what it defines.
_SENTENCE_DEFINED = re.compile(
    r"(?:^|(?<=[.!?:]\s)|(?<=\n))[ \t]*(?:[-*+][ \t]+)?(?:(?:A|An|The)\s+)?"
    r"(?P<term>[`*_]{0,2}[\w][\w.+#/-]*[`*_]{0,2}(?:[ \t]+[`*_]{0,2}[\w][\w.+#/-]*[`*_]{0,2}){0,3}?)[ \t]*"
    r"(?:\((?P<alias>[^)\n]{1,40})\)[ \t]*)?"
    # "is a/an ..." (not "is the slowest step"); "Docblock pragmas are comments that ..."; "are also known as Y"
    r"(?:(?:is|are|refers to|means|denotes|stands for)[ \t]+(?:an?|used|called|simply|essentially)\b"
    r"|(?:is|are)[ \t]+(?:[\w-]+[ \t]+){1,3}?(?:that|which|whose)\b"
    r"|(?:is|are)[ \t]+(?:also[ \t]+)?(?:known as|called)[ \t]+[\"'“*`]*(?P<known>[\w][\w .+/-]{1,40}?)[\"'”*`]*"
    r"(?=[,.;:)]|\s+(?:or|and|because|in)\b))",
    re.MULTILINE)
_NOT_NAMES = frozenset({"here", "each", "every", "one", "all", "some", "both", "another", "other", "such", "following",
                        "result", "default", "goal", "idea", "reason", "problem", "solution", "difference", "answer",
                        "example", "output", "first", "second", "last", "next", "main", "only", "below", "above"})
_PLAIN_ALIAS = re.compile(r"^[\w][\w .+/-]*$")  # "(Q)", "(PWA)"; not a role or a path
PLAIN_DEFINITION_WEIGHT = 0.8
CODE_HEADING_WEIGHT = 0.9
_CODE_SPAN = re.compile(r"^`[^`]+`")
_LINE_OPENING = re.compile(r"[ \t]*(?:[-*+][ \t]+|\d+[.)][ \t]+)?")
_SENTENCE_END = re.compile(r"[.!?]\s+$")  # an unmarked definition sentence is a little less sure than a bold one
_HEADING_PARTS = re.compile(r"\s*(?::|;|\s[—–-]\s|,\s)\s*")
_DEFINED = re.compile(
    r"(?P<mark>\*\*|__|`)(?P<term>[^*_`\n]{2,60}?)(?P=mark)\s*(?:\((?P<alias>[^)\n]{1,20})\))?\s*"
    r"(?:\b(?:is|are|means|refers to|denotes|stands for)\b|[:—–]|-\s)")
_ACRONYM_AFTER = re.compile(r"\((?P<acr>[A-Z][A-Za-z0-9]*[A-Z][A-Za-z0-9]*?)(?:s)?\)")
_ACRONYM_BEFORE = re.compile(r"\b(?P<acr>[A-Z][A-Z0-9]{1,9})s?\s+\((?P<expansion>[A-Za-z][^()\n]{3,80}?)\)")
_LINK = re.compile(r"(?<!!)\[(?P<text>[^\]\n]{2,80})\]\((?P<href>[^)\s]+)(?:\s+\"[^\"]*\")?\)")
_FENCE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)
_CODE_LIKE = re.compile(r"[\"{}\[\]<>=$]")  # JSON, shell and templates in backticks are not names
_GENERIC_FILE_NAMES = frozenset({"readme", "index", "changelog", "changes", "license", "contributing", "summary",
                                 "notes", "todo", "authors", "history", "news", "faq", "main", "intro"})
_MINOR = frozenset({"of", "and", "the", "for", "to", "in", "on", "a", "an", "&"})


def extract(document: KnowledgeDocument, passages: Sequence[KnowledgePassage],
            corpus_ids: frozenset[str] = frozenset()) -> tuple[Evidence, ...]:
    """Every sighting in `document`; `corpus_ids` lets links name the document they point at."""
    if not passages:
        return ()
    locate = _Locator(passages)
    found: list[Evidence] = []
    found.extend(glossary_entries(document, passages, locate.at))
    found.extend(_headings(document, passages))
    found.extend(_plain_titles(document, passages, locate))
    found.extend(_file_name(document, passages[0]))
    for passage in passages:
        body = _FENCE.sub(lambda m: " " * len(m.group()), passage.text)
        found.extend(_definitions(passage, body))
        found.extend(_sentence_definitions(passage, body))
        found.extend(_acronyms(passage, body))
        found.extend(_links(document, passage, body, corpus_ids))
    found.extend(_keyphrases(document, locate))
    return tuple(found)


class _Locator:
    """The passage holding a document offset (passages are in document order)."""

    def __init__(self, passages: Sequence[KnowledgePassage]) -> None:
        self.passages = passages
        self.starts = [p.start for p in passages]

    def at(self, offset: int) -> KnowledgePassage:
        return self.passages[max(0, bisect.bisect_right(self.starts, offset) - 1)]


def heading_terms(heading: str) -> list[tuple[str, float]]:
    """The concept names a heading holds: itself when short, else its parts ("Knowledge base: hybrid
    retrieval" holds both), numbering stripped; the weight says a part is less sure than a whole."""
    text = clean_term(_NUMBERING.sub("", _ASIDE.sub("", _ANNOTATION.sub(" ", heading).strip())))
    if plausible_term(text):
        return [(text, 1.0)]
    return [(part, 0.8) for part in map(clean_term, _HEADING_PARTS.split(text)) if plausible_term(part)]


def _headings(document: KnowledgeDocument, passages: Sequence[KnowledgePassage]) -> Iterable[Evidence]:
    seen: set[tuple[str, ...]] = set()
    for passage in passages:
        paths = [passage.headings[:depth] for depth in range(1, len(passage.headings) + 1)]
        if not passage.headings and document.title and not _title_is_file_name(document):
            paths = [(document.title,)]
        for path in paths:
            if path in seen:
                continue
            seen.add(path)
            heading = path[-1]
            at = document.text.rfind(heading, 0, passage.start + 1)
            start, end = (at, at + len(heading)) if at >= 0 else (passage.start, passage.start)
            titles = len(path) == 1 and heading.strip() == document.title.strip()
            for term, weight in _named(heading, titles):
                yield Evidence(term=term, kind=EvidenceKind.HEADING, document_id=document.document_id,
                               passage_id=passage.passage_id, start=start, end=end, headings=path, weight=weight,
                               titles_page=titles)


def _named(heading: str, titles: bool) -> list[tuple[str, float]]:
    """A heading's terms, and what a framing verb introduces ("Using Matchers" names matchers)."""
    terms = heading_terms(heading)
    framed = _FRAMING.sub("", heading.strip())
    if framed != heading.strip():  # surer of a page's title than of a section's ("Creating presets")
        terms += [((term, (0.95 if titles else 0.9) * weight)) for term, weight in heading_terms(framed)]
    if _CODE_SPAN.match(heading.strip()):  # "`fakeTimers` [object]" names an option more than an idea
        terms = [(term, CODE_HEADING_WEIGHT * weight) for term, weight in terms]
    return terms


def _plain_titles(document: KnowledgeDocument, passages: Sequence[KnowledgePassage], locate: _Locator
                  ) -> Iterable[Evidence]:
    """The underlined titles of a page indexed as plain text (its passages have no heading path): the first
    titles the page; each names the passage its section's text starts in."""
    if any(p.headings for p in passages):
        return
    for number, title in enumerate(plain_titles(document.text)):
        passage = locate.at(title.body)
        for term, weight in _named(title.text, number == 0):
            yield Evidence(term=term, kind=EvidenceKind.HEADING, document_id=document.document_id,
                           passage_id=passage.passage_id, start=title.start, end=title.end, headings=(title.text,),
                           weight=weight, titles_page=number == 0)


def _title_is_file_name(document: KnowledgeDocument) -> bool:
    """A page without a title of its own is titled by its file name (readers.py): _file_name reads that."""
    stem = posixpath.splitext(posixpath.basename(document.document_id))[0]
    return document.title.strip().lower() == re.sub(r"[-_]", " ", stem).strip().lower()


def _file_name(document: KnowledgeDocument, first: KnowledgePassage) -> Iterable[Evidence]:
    """A file named `connection-admission.md` is about connection admission: its name is a heading too."""
    stem = posixpath.splitext(posixpath.basename(document.document_id))[0]
    name = clean_term(re.sub(r"[-_]+", " ", re.sub(r"^[\d._-]+", "", stem)))
    if name.lower() in _GENERIC_FILE_NAMES or not plausible_term(name):
        return
    yield Evidence(term=name, kind=EvidenceKind.HEADING, document_id=document.document_id,
                   passage_id=first.passage_id, start=first.start, end=first.start, weight=0.8,
                   alias=_same_topic(name, heading_terms(document.title)), titles_page=True)


def _same_topic(name: str, title_terms: list[tuple[str, float]]) -> str | None:
    """The part of the document's title that names what its file name names (at least half the file
    name's words, by stem), so the two become one concept: "0602-error-model.md" and "Errors are values"."""
    wanted = set(key_of(name).split())
    best = max(title_terms, key=lambda t: (len(wanted & set(key_of(t[0]).split())), -len(t[0])), default=None)
    if best is None or 2 * len(wanted & set(key_of(best[0]).split())) < len(wanted):
        return None
    return best[0]


def _definitions(passage: KnowledgePassage, body: str) -> Iterable[Evidence]:
    for match in _DEFINED.finditer(body):
        term = clean_term(match.group("term"))
        if not plausible_term(term) or _CODE_LIKE.search(term):
            continue
        weight = 1.0
        # "If `trailingSlash` is true" uses a name in code; a line or a sentence opening on it defines it.
        if match.group("mark") == "`":
            before = body[body.rfind("\n", 0, match.start()) + 1:match.start()]
            if not (_LINE_OPENING.fullmatch(before) or _SENTENCE_END.search(before)):
                continue
            weight = CODE_HEADING_WEIGHT
        alias = match.group("alias")
        alias = clean_term(alias) if alias and plausible_term(clean_term(alias)) else None
        yield Evidence(term=term, kind=EvidenceKind.DEFINITION, document_id=passage.document_id,
                       passage_id=passage.passage_id, start=passage.start + match.start("term"),
                       end=passage.start + match.end("term"), headings=passage.headings, alias=alias, weight=weight)


def _sentence_definitions(passage: KnowledgePassage, body: str) -> Iterable[Evidence]:
    for match in _SENTENCE_DEFINED.finditer(body):
        term = clean_term(match.group("term"))
        if (not plausible_term(term) or _CODE_LIKE.search(term) or term.split()[0].lower() in _NOT_NAMES
                or len(term) < 3):
            continue
        alias = match.group("alias") or match.group("known")
        alias = (clean_term(alias) if alias and _PLAIN_ALIAS.match(alias) and plausible_term(clean_term(alias))
                 and len(words(alias)) <= 4 else None)
        yield Evidence(term=term, kind=EvidenceKind.DEFINITION, document_id=passage.document_id,
                       passage_id=passage.passage_id, start=passage.start + match.start("term"),
                       end=passage.start + match.end("term"), headings=passage.headings, alias=alias,
                       weight=PLAIN_DEFINITION_WEIGHT)


def _initials(candidate: list[str]) -> str:
    letters = []
    for word in candidate:
        letters.extend(part[0] for part in re.split(r"[-/]", word) if part)
    return "".join(letters).lower()


def _expansion_for(acronym: str, before: list[str]) -> list[str] | None:
    """The shortest run of words ending `before` whose initials spell `acronym` (minor words may be skipped)."""
    target = acronym.lower()
    for size in range(1, min(len(before), MAX_TERM_WORDS) + 1):
        candidate = before[-size:]
        if candidate[0].lower() in _MINOR:
            continue
        significant = [w for w in candidate if w.lower() not in _MINOR]
        if _initials(significant) == target or _initials(candidate) == target:
            return candidate
    return None


def _acronyms(passage: KnowledgePassage, body: str) -> Iterable[Evidence]:
    for match in _ACRONYM_AFTER.finditer(body):
        line_start = body.rfind("\n", 0, match.start()) + 1
        before_text = body[line_start:match.start()]
        before = re.findall(r"[\w][\w/-]*", before_text)
        expansion = _expansion_for(match.group("acr"), before[-MAX_TERM_WORDS - 2:])
        if expansion is None:
            continue
        at = before_text.rfind(expansion[0])
        yield _acronym(passage, " ".join(expansion), match.group("acr"), line_start + max(at, 0), match.start())
    for match in _ACRONYM_BEFORE.finditer(body):
        expansion = words(match.group("expansion"))
        if _expansion_for(match.group("acr"), expansion) == expansion:
            yield _acronym(passage, " ".join(expansion), match.group("acr"), match.start("expansion"),
                           match.end("expansion"))


def _acronym(passage: KnowledgePassage, expansion: str, acronym: str, start: int, end: int) -> Evidence:
    return Evidence(term=expansion, kind=EvidenceKind.ACRONYM, document_id=passage.document_id,
                    passage_id=passage.passage_id, start=passage.start + start, end=passage.start + end,
                    headings=passage.headings, alias=acronym)


def _links(document: KnowledgeDocument, passage: KnowledgePassage, body: str, corpus_ids: frozenset[str]
           ) -> Iterable[Evidence]:
    for match in _LINK.finditer(body):
        text = clean_term(match.group("text"))
        target = _link_target(document.document_id, match.group("href"), corpus_ids)
        if not plausible_term(text) or text.lower() in STOP_WORDS or "://" in text:
            continue
        yield Evidence(term=text, kind=EvidenceKind.LINK, document_id=document.document_id,
                       passage_id=passage.passage_id, start=passage.start + match.start("text"),
                       end=passage.start + match.end("text"), headings=passage.headings, target=target)


def _link_target(document_id: str, href: str, corpus_ids: frozenset[str]) -> str | None:
    """The corpus document a relative link points at, or None (external, or not in the corpus)."""
    path = href.split("#", 1)[0].split("?", 1)[0]
    if not path or "://" in href or href.startswith("mailto:"):
        return None
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(document_id), path.lstrip("/")
                                               if not path.startswith("/") else path[1:]))
    for candidate in (joined, joined + ".md", posixpath.join(joined, "README.md"), posixpath.join(joined, "index.md")):
        if candidate in corpus_ids:
            return candidate
    return None


_YAKE: object | None = None


def _keyphrases(document: KnowledgeDocument, locate: _Locator) -> Iterable[Evidence]:
    global _YAKE
    if _YAKE is None:
        import yake

        _YAKE = yake.KeywordExtractor(lan="en", n=3, top=KEYPHRASES_PER_DOCUMENT * 2, dedup_lim=0.8)
    text = _FENCE.sub(" ", document.text[:KEYPHRASE_TEXT_CHARS])
    ranked = 0
    lowered = document.text.lower()
    for phrase, _score in _YAKE.extract_keywords(text):  # type: ignore[attr-defined]
        term = clean_term(phrase)
        if ranked >= KEYPHRASES_PER_DOCUMENT or not plausible_term(term) or len(term) < 3:
            continue
        at = lowered.find(term.lower())
        if at < 0:
            continue
        passage = locate.at(at)
        yield Evidence(term=term, kind=EvidenceKind.KEYPHRASE, document_id=document.document_id,
                       passage_id=passage.passage_id, start=at, end=at + len(term), headings=passage.headings,
                       weight=1.0 - ranked / KEYPHRASES_PER_DOCUMENT)
        ranked += 1
