"""Words, keys and ids: the one place that decides when two surface forms name the same thing.

A *key* is a term's words, lower-cased, split at hyphens and punctuation, English-stemmed (Snowball,
via PyStemmer, as the lexical index does) with leading articles dropped: "The Vector Stores" and
"vector-store" share the key "vector store". Keys are what aliases, mentions and the linker compare.
"""

from __future__ import annotations

import functools
import hashlib
import re
import threading
from typing import Iterator

import attrs

WORD = re.compile(r"[^\W_]+(?:[.'’+#][^\W_]+)*[+#]*", re.UNICODE)
_LEADING = frozenset({"a", "an", "the"})
# Words too common to start or end a concept name by themselves ("of the server", "model is").
STOP_WORDS = frozenset(
    "a an and are as at be been but by can could do does for from had has have how if in into is it its may "
    "might must no not of on or our should so such than that the their then there these they this those to "
    "was we were what when where which while who why will with would you your".split())
MAX_TERM_WORDS = 6


_ARTICLE = re.compile(r"^(?:the|an?)\s+", re.IGNORECASE)


@attrs.frozen
class Token:
    text: str
    start: int
    end: int
    stem: str


_per_thread = threading.local()


def _stemmer() -> object:
    """This thread's stemmer: a PyStemmer object must not be used by two threads at once, and concept
    builds, links and resolutions run in worker threads."""
    stemmer = getattr(_per_thread, "stemmer", None)
    if stemmer is None:
        import Stemmer

        stemmer = _per_thread.stemmer = Stemmer.Stemmer("english")
    return stemmer


@functools.lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    return _stemmer().stemWord(word.lower())  # type: ignore[attr-defined]


def tokens(text: str, offset: int = 0) -> list[Token]:
    """Every word of `text` with its character span (shifted by `offset`) and its stem."""
    return [Token(m.group(), m.start() + offset, m.end() + offset, stem(m.group())) for m in WORD.finditer(text)]


def words(text: str) -> list[str]:
    return WORD.findall(text)


def key_of(text: str) -> str:
    """The comparison key of a term ("" when nothing is left, e.g. punctuation only)."""
    stems = [stem(w) for w in WORD.findall(text)]
    while stems and stems[0] in _LEADING:
        stems.pop(0)
    return " ".join(stems)


ACRONYM = re.compile(r"^[A-Z][A-Z0-9]{1,7}s?$")  # "SSR", "PVCs"; not "Pod" or "I"


def initials_of(name: str) -> str:
    """The acronym a name of 2-6 words would have: "server-side rendering" → "SSR" ("" for one word)."""
    parts = [p for p in re.split(r"[\s/-]+", name.strip()) if p and p.lower() not in _MINOR_WORDS]
    return "".join(p[0] for p in parts).upper() if 2 <= len(parts) <= MAX_TERM_WORDS else ""


_MINOR_WORDS = frozenset({"of", "and", "the", "for", "to", "in", "on", "a", "an", "&"})


def squashed(text: str) -> str:
    """Letters and digits only, lower-case: "InferencePool", "inference pool" and "inference-pool" agree."""
    return "".join(words(text)).lower()


def clean_term(text: str) -> str:
    """A term as shown: markup and surrounding punctuation stripped, whitespace collapsed."""
    text = re.sub(r"[`*_]+", "", text)
    text = re.sub(r"\s+", " ", text).strip(" \t.,;:!?-—–()[]{}\"'")
    return _ARTICLE.sub("", text) if len(words(text)) > 1 else text


def plausible_term(text: str) -> bool:
    """Short enough to be a name, has a letter, and does not start or end on a function word."""
    found = text.split()  # "in-process" is one word here, not the stop word "in"
    if not words(text) or len(found) > MAX_TERM_WORDS or not any(c.isalpha() for c in text):
        return False
    return found[0].lower() not in STOP_WORDS and found[-1].lower() not in STOP_WORDS and len(text) >= 2


def slug(text: str) -> str:
    """A readable id fragment: lower-case ASCII words joined by hyphens; a digest when none are left."""
    ascii_words = re.findall(r"[a-z0-9]+", text.lower().replace("+", " plus ").replace("#", " sharp "))
    return "-".join(ascii_words)[:60].strip("-") or "c-" + hashlib.sha256(text.encode()).hexdigest()[:10]


def sentences(text: str) -> Iterator[tuple[int, int]]:
    """Spans of the sentences of `text`, stripped: a line break ends one (lists, tables, headings), and so
    does [.!?] before a space and a capital, digit or markup ("e.g. this" and "v1.2" do not)."""
    for line in re.finditer(r"[^\n]+", text):
        cursor = line.start()
        for stop in [*(m.start() for m in _SENTENCE_END.finditer(text, line.start(), line.end())), line.end()]:
            start, end = cursor, stop
            cursor = stop
            lead = _LINE_LEAD.match(text, start, end)
            start = lead.end() if lead else start
            while end > start and text[end - 1] in " \t|":
                end -= 1
            if end - start >= 2:
                yield start, end


_LINE_LEAD = re.compile(r"[ \t]*(?:[#>|]+[ \t]*|[-*+][ \t]+|\d+[.)][ \t]+)*")  # heading marks, quotes, bullets
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9`*\[(])")
