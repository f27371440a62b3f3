"""What reading documents costs: CPU seconds (median of --rounds) to parse Django's 273 `.txt` pages as
plain text and as reStructuredText, to re-read them unchanged (the parse memo), and to read hostile HTML.

    python -m bench.readers_cost [--rounds N]

CPU time of this process (time.process_time), so figures hold on a shared machine; no network.
The figures: bench/diaries/knowledge.md; the decision: docs/adr/0606-documentation-as-written-rest-txt-and-html.md.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Callable

from hexmcp.tools.knowledge import readers
from hexmcp.tools.knowledge.corpus import CorpusSpec, load_documents
from hexmcp.tools.knowledge.errors import CorpusError
from hexmcp.tools.knowledge.html_reader import MAX_HTML_BYTES, MAX_NESTING, read_html

DJANGO = Path(__file__).resolve().parent / "data" / "corpora" / "django" / "docs"

HOSTILE_HTML = {
    f"{MAX_HTML_BYTES >> 20} MiB of empty elements (</p>)": b"<body>" + b"</p>" * ((MAX_HTML_BYTES - 16) // 4),
    f"{MAX_NESTING - 1} nested <div>s, then 1.5 M <p>x": b"<body>" + b"<div>" * (MAX_NESTING - 1) + b"<p>x" * 1_500_000,
    "100,000 nested <div>s (refused)": b"<body>" + b"<div>" * 100_000,
    "1 MB of random bytes": bytes((i * 2654435761 >> 7) % 255 + 1 for i in range(1_000_000)),
}


def cpu_seconds(work: Callable[[], object], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        started = time.process_time()
        work()
        times.append(time.process_time() - started)
    return statistics.median(times)


def _read_html(data: bytes) -> str:
    try:
        return f"{len(read_html('page.html', data).text):,} characters"
    except CorpusError as error:
        return f"CorpusError: {str(error).split(': ', 1)[1]}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    pages = [(p.relative_to(DJANGO).as_posix(), p.read_text(encoding="utf-8")) for p in sorted(DJANGO.rglob("*.txt"))]
    plain = cpu_seconds(lambda: [readers.parse_plain(i, t) for i, t in pages], args.rounds)
    rest = cpu_seconds(lambda: [readers.parse_txt(i, t) for i, t in pages], args.rounds)
    spec = CorpusSpec(roots=[DJANGO])
    load_documents(spec)
    reread = cpu_seconds(lambda: load_documents(spec), args.rounds)
    print(f"Django, {len(pages)} .txt pages: plain {plain:.2f} s, reST {rest:.2f} s, re-read unchanged {reread:.2f} s")
    for name, data in HOSTILE_HTML.items():
        outcome = _read_html(data)
        print(f"HTML {name}: {cpu_seconds(lambda: _read_html(data), 1):.2f} s ({outcome})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
