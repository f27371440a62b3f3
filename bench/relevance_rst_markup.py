"""Ablation: reStructuredText passages indexed with their markup kept, measured with bench.relevance.

    python -m bench.relevance_rst_markup [bench.relevance's options, e.g. --set django]

A passage is an exact slice of its source, so a reST page's passages carry roles (:setting:`MIDDLEWARE`),
directive and target lines (`.. versionadded:: 5.1`, `.. _label:`), adornment rows and `::` markers. What
`search` indexes and embeds of a reST passage has that markup cleaned out (tools/knowledge/rst_markup.py,
passed to windows.py too, so a long passage's further windows are cut from the cleaned body). This runs
bench.relevance with every passage's raw text indexed instead (the anchors' too); the vectors' cache keys
follow the text embedded. The figures and the decision: bench/diaries/knowledge.md,
docs/adr/0606-documentation-as-written-rest-txt-and-html.md.
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    from hexmcp.tools.knowledge.passages import Passage

    from . import relevance

    Passage.body_text = lambda self: self.text  # type: ignore[method-assign]
    return relevance.main(argv)


if __name__ == "__main__":
    sys.exit(main())
