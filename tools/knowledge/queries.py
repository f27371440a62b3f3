"""The one set of rules every knowledge tool applies to a query (kept free of numpy, so the tools
module can name the limit without paying for the retrieval stack at start-up)."""

from __future__ import annotations

from .errors import QueryError

MAX_QUERY_CHARS = 1000


def clean_query(query: str, max_chars: int = MAX_QUERY_CHARS) -> str:
    """Whitespace runs collapsed; empty, whitespace-only and oversize queries refused."""
    text = " ".join(query.split())
    if not text:
        raise QueryError("the query is empty or whitespace only; give some words to search for")
    if len(query) > max_chars:
        raise QueryError(f"the query is {len(query)} characters long; the limit is {max_chars}")
    return text
