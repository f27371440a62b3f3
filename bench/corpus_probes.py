"""Hostile and odd documentation folders served by real servers, each probe with the answer it must get.

    python -m bench.corpus_probes                  # every group
    python -m bench.corpus_probes --only odd       # one group: odd, watch, during, many, startup, stdio, markup
    python -m bench.corpus_probes --json out.json  # the table as JSON too

Builds folders the way judges' documentation sets look (a git checkout with .git/, node_modules/ and build
output, one page in eight versions) with every odd file in them: Latin-1, Windows-1252, UTF-16 and UTF-32
pages with and without a BOM, a UTF-8 BOM, a binary file named .md, NUL and escape bytes, a 50 MB page, a
2 MB single line, empty and front-matter-only files, unclosed front matter and fences, "billion laughs" and
50,000-deep YAML front matter, CRLF and CR line ends,
symlink loops and links out of the root, a directory named `x.md`, 200 levels of folders, names with spaces,
non-ASCII and a newline, HTML with scripts, reST with unknown directives, MDX with JSX. Then starts `hexmcp
serve` on it and checks over the REST dialect: indexing completes, /health names every skipped file, search
and fetch answers hold no control characters or half-decoded text, nothing outside the root or in .git/ is
served, `indexDocuments` refuses hostile paths; the watcher re-indexes added, broken and removed files and
survives the whole folder being deleted, skips writes into a folder .gitignore names and re-reads a changed
.gitignore; 100,000 tiny files index with bounded memory; a bad --docs is one
line and a non-zero exit; `hexmcp stdio` answers the official `mcp` SDK client over the same folder; each
reader ends within 30 s on pathological markup (in process).

Prints one row a probe (PASS / FAIL and what came back), exits 1 when one failed. Not a benchmark: run it
under the shared lock. Findings: bench/diaries/hostile_probes.md (section "Hostile corpora").
"""

from __future__ import annotations

import argparse
import asyncio
import codecs
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
import unicodedata
from pathlib import Path
from typing import Any, Callable, Iterator

import httpx

from bench import hostile_probes
from bench.hostile_probes import rss_mb
from tests.support.net import free_port

ROOT = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-m", "hexmcp.app.cli"]
ROWS: list[dict[str, Any]] = []
INDEX_DEADLINE_S = 600.0


def record(group: str, probe: str, ok: bool | None, got: Any) -> None:
    """`ok` None: a row that records what happens where no answer is required (INFO), never a failure."""
    text = got if isinstance(got, str) else json.dumps(got, default=repr, ensure_ascii=False)
    text = text.replace("\r", " ").replace("\n", " ")
    ROWS.append({"group": group, "probe": probe, "ok": ok, "got": text[:200]})
    mark = "INFO" if ok is None else "PASS" if ok else "FAIL"
    print(f"{mark}  {group:<8} {probe:<52} {text[:120]}", flush=True)


def unclean(text: str) -> list[str]:
    """The characters no answer should carry: controls but tab and line ends, BOMs, surrogates, U+FFFD."""
    return sorted({f"U+{ord(c):04X}" for c in text
                   if (unicodedata.category(c) in ("Cc", "Cs") and c not in "\t\n\r\f\v") or c in "\ufeff\ufffd"})


def strings_of(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from strings_of(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings_of(item)


# --- the corpus --------------------------------------------------------------------------------------

GOOD = {  # file → (its bytes, a word only it holds, the title its answers must carry)
    "latin1.md": ("# Café Überblick\n\nDie Daten liegen in Zürich; façade naïve quixotelatin.\n".encode("latin-1"),
                  "quixotelatin", "Café Überblick"),
    "cp1252.md": ("# Smart “quotes” — dash\n\nCurly quotes from Word: zephyrwindows.\n".encode("cp1252"),
                  "zephyrwindows", "Smart “quotes” — dash"),
    "utf16.md": (codecs.BOM_UTF16_LE + "# Sixteen page\n\nNotepad saved this: marmosetsixteen.\n".encode("utf-16-le"),
                 "marmosetsixteen", "Sixteen page"),
    "utf16be-nobom.md": ("# Big end page\n\nNo mark at all: ocelotbigend.\n".encode("utf-16-be"), "ocelotbigend",
                         "Big end page"),
    "utf32.md": (codecs.BOM_UTF32_LE + "# Thirty-two page\n\nRare but real: narwhalthirtytwo.\n".encode("utf-32-le"),
                 "narwhalthirtytwo", "Thirty-two page"),
    "bom.md": (codecs.BOM_UTF8 + "# Marked page\n\nPowerShell's UTF-8: pangolinbom.\n".encode(), "pangolinbom",
               "Marked page"),
    "escapes.md": (("# Escape page\n\nColour codes \x1b[31mred\x1b[0m in a pasted terminal log about "
                    "wombatescape, a bell\x07, a NUL\x00 byte." + " Plain words follow." * 20 + "\n").encode(),
                   "wombatescape", "Escape page"),
    "crlf.md": (b"# Windows ends\r\n\r\nLines end in CRLF: tapircrlf.\r\n\r\n## Sub\r\n\r\nMore.\r\n", "tapircrlf",
                "Windows ends"),
    "cr.md": (b"# Old Mac ends\r\rLines end in CR: lemurcr.\r\r## Sub\r\rMore.\r", "lemurcr", "Old Mac ends"),
    "unclosed-fence.md": (b"# Open fence\n\n```python\nprint('koalafence')\n\nnever closed\n", "koalafence",
                          "Open fence"),
    "unclosed-front.md": (b"---\ntitle: never closed\n\n# Open front\n\nbody about ibexfront\n", "ibexfront", None),
    "with space \u00fc.md": (b"# Spaced name\n\nA file name with a space: gerbilspace.\n", "gerbilspace", "Spaced name"),
    "new\nline.md": (b"# Newline name\n\nA file name with a line feed: hamsternewline.\n", "hamsternewline",
                     "Newline name"),
    "page.html": (b"<html><head><title>T</title><style>p{color:red}</style><script>var s='jackalscript';</script>"
                  b"</head><body><nav>menu</nav><main><h1>Built page</h1><p>Visible words: okapihtml&#27;x</p>"
                  b"<script>document.write('jackalscript2')</script></main></body></html>", "okapihtml", "Built page"),
    "odd.rst": (b"Odd directives\n==============\n\n.. sphinxonly:: arg\n   :opt: x\n\n   inner\n\nText with a "
                b":custom:`role` about yakrst.\n\n.. include:: /etc/passwd\n\n.. raw:: html\n\n   <b>raw</b>\n",
                "yakrst", "Odd directives"),
    "jsx.mdx": (b"import Tabs from '@theme/Tabs'\nexport const meta = {a: 1}\n\n# JSX page\n\n<Tabs>\n  <Tab value=\"a\">"
                b"Content about quokkamdx</Tab>\n</Tabs>\n\n{/* a comment */}\n", "quokkamdx", "JSX page"),
}
_LAUGHS = "\n".join(['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]'] + [
    f"a{n}: &a{n} [{', '.join([f'*a{n - 1}'] * 9)}]" for n in range(1, 11)])
GOOD.update({  # front matter built to hang a YAML reader: the page must still be read, by its body
    "laughs.md": (f"---\n{_LAUGHS}\ntitle: *a10\n---\n# Laughing page\n\nA billion laughs: hyenalaughs.\n".encode(),
                  "hyenalaughs", "Laughing page"),
    "deep-front.md": (("---\ntitle: " + "[" * 50_000 + "]" * 50_000 + "\n---\n# Deep front\n\nNested: molefront.\n")
                      .encode(), "molefront", "Deep front"),
})
BAD = {  # file → its bytes: each must be skipped and named in /health
    "binary.md": os.urandom(64 * 1024),
    "png-renamed.md": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + os.urandom(4096),
}
EMPTY = {"empty.md": b"", "front-only.md": b"---\ntitle: Only front matter\n---\n", "blank.txt": b"\n\n   \n"}
BIG_BYTES = 50 * 1024 * 1024
LONG_LINE_BYTES = 2 * 1024 * 1024
VERSIONS = ("v1.0", "v1.1", "v2.0", "v2.1", "v3.0", "v3.1", "v4.0", "latest")


def build_repository(base: Path) -> Path:
    """A checkout-shaped folder with every odd file; returns the docs root."""
    repo = base / "repo"
    docs = repo / "docs"
    docs.mkdir(parents=True)
    for name, (data, _, _) in GOOD.items():
        (docs / name).write_bytes(data)
    for name, data in {**BAD, **EMPTY}.items():
        (docs / name).write_bytes(data)
    with (docs / "huge.md").open("wb") as out:  # 50 MB of real Markdown: over the 16 MiB limit
        paragraph = b"A paragraph of a very long generated page about nothing in particular.\n\n"
        out.write(b"# Huge\n\n" + paragraph * (BIG_BYTES // len(paragraph)))
    words = " ".join(f"w{i}" for i in range(LONG_LINE_BYTES // 8))
    (docs / "one-line.md").write_text(f"# One line\n\nsalamanderline {words}\n", encoding="utf-8")
    os.mkfifo(docs / "pipe.md")  # opened, a FIFO with no writer would block its reader forever
    (docs / "folder.md").mkdir()  # a directory with a page's name
    (docs / "folder.md" / "inside.md").write_text("# Inside a folder named .md\n\nchinchillafolder\n")
    deep = docs.joinpath(*["d"] * 200)
    deep.mkdir(parents=True)
    (deep / "deep.md").write_text("# Deep page\n\nTwo hundred folders down: axolotldeep.\n")
    for version in VERSIONS:
        (docs / version).mkdir()
        (docs / version / "install.md").write_text(
            f"# Installing\n\nInstall release {version} with the installer; platypusversion.\n")
    (docs / os.fsdecode(b"caf\xe9-latin1-name.md")).write_text("# Latin-1 name\n\nA name from an old archive.\n")
    (docs / ".gitignore").write_text("_build/\n")  # as a Sphinx project's checkout names its output
    (docs / "_build" / "html" / "latest").mkdir(parents=True)  # Sphinx's output, left in the checkout
    (docs / "_build" / "html" / "latest" / "install.html").write_text(
        "<html><body><main><h1>Installing</h1><p>Install release latest with the installer; platypusversion."
        "</p></main></body></html>")
    (docs / "loop").symlink_to(".")
    (docs / "loop-a.md").symlink_to("loop-b.md")
    (docs / "loop-b.md").symlink_to("loop-a.md")
    (docs / "dangling.md").symlink_to("missing.md")
    (docs / "passwd.md").symlink_to("/etc/passwd")
    (docs / "etc").symlink_to("/etc")
    (base / "outside.md").write_text("# Outside\n\nsecretoutside\n")
    (docs / "outside-link.md").symlink_to(base / "outside.md")
    for hidden in (".git/info/exclude.md", "node_modules/pkg/README.md", ".github/workflow.md"):
        path = docs / hidden
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("# Hidden\n\nbeetlehidden\n")
    return docs


# --- servers -----------------------------------------------------------------------------------------

@contextlib.contextmanager
def serve(args: list[str], log: Path) -> Iterator[tuple[subprocess.Popen[bytes], int]]:
    with hostile_probes.serve(["--no-classifier", *args], log) as served:
        yield served


class Rest:
    def __init__(self, port: int) -> None:
        self.client = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=120)

    def call(self, tool: str, **arguments: Any) -> tuple[int, Any]:
        answer = self.client.post("/mcp/tools/call", json={"name": tool, "arguments": arguments})
        return answer.status_code, answer.json()

    def structured(self, tool: str, **arguments: Any) -> Any:
        status, body = self.call(tool, **arguments)
        return body.get("structuredContent") if status == 200 and isinstance(body, dict) else body

    def knowledge(self) -> dict[str, Any]:
        body = self.client.get("/health").json()
        return find_key(body, "knowledge") or {}

    def wait_complete(self, deadline_s: float = INDEX_DEADLINE_S, since: str | None = None) -> dict[str, Any]:
        """/health's knowledge report once the build is complete (and, with `since`, a new version)."""
        deadline = time.monotonic() + deadline_s
        while True:
            report = self.knowledge()
            if report.get("complete") and "background" not in report and report.get("index_version") != since:
                return report
            if time.monotonic() > deadline:
                return report
            time.sleep(0.5)


def find_key(value: Any, key: str) -> Any:
    if isinstance(value, dict):
        if key in value:
            return value[key]
        for item in value.values():
            found = find_key(item, key)
            if found is not None:
                return found
    return None


def search_ids(rest: Rest, query: str) -> list[str]:
    """The documents `search` cites, in order (a citation's id is its best passage's; its path is the page)."""
    found = rest.structured("search", query=query)
    return [r.get("metadata", {}).get("path", r["id"]) for r in found.get("results", [])] \
        if isinstance(found, dict) else []


def passages(rest: Rest, query: str, limit: int = 3) -> tuple[int, Any, list[dict[str, Any]]]:
    status, body = rest.call("searchPassages", query=query, limit=limit)
    items = (body.get("structuredContent") or {}).get("items", []) if status == 200 else []
    return status, body, items


def listed_documents(rest: Rest) -> set[str]:
    ids: set[str] = set()
    cursor = None
    while True:
        page = rest.structured("listDocuments", **({"cursor": cursor} if cursor else {})) or {}
        ids.update(d["id"] for d in page.get("documents", []))
        cursor = page.get("nextCursor")
        if not cursor:
            return ids


# --- groups ------------------------------------------------------------------------------------------

def odd_group(scratch: Path) -> None:
    docs = build_repository(scratch / "odd")
    with serve(["--docs", str(docs)], scratch / "odd.log") as (process, port):
        rest = Rest(port)
        started = time.monotonic()
        report = rest.wait_complete()
        record("odd", "indexing completes", bool(report.get("complete")),
               {k: report.get(k) for k in ("documents", "passages", "complete")} | {"s": round(time.monotonic() - started)})
        skipped = {f["document"]: f["reason"] for f in (report.get("skipped") or {}).get("files", [])}
        for name in (*BAD, "huge.md", "caf\\xe9-latin1-name.md"):
            record("odd", f"/health names skipped {name}", name in skipped, skipped.get(name, skipped))
        listed = listed_documents(rest)
        unexpected = sorted(i for i in listed if i.startswith((".", "node_modules", "etc/")) or "outside" in i
                            or i in ("passwd.md", "loop-a.md", "dangling.md") or i.startswith("loop/"))
        record("odd", "nothing from .git/, node_modules/, links out, loops", not unexpected, unexpected or len(listed))
        record("odd", "a FIFO named pipe.md is not read", "pipe.md" not in listed, len(listed))
        record("odd", "a folder named folder.md is walked, not read",
               "folder.md/inside.md" in listed and "folder.md" not in listed, sorted(i for i in listed if "folder" in i))
        record("odd", "200 levels deep is listed", any(i.endswith("/deep.md") for i in listed), len(listed))
        for name, (_, word, title) in GOOD.items():
            status, body, results = passages(rest, word)
            top = results[0] if results else {}
            dirty = sorted({u for s in strings_of(results) for u in unclean(s)})
            ok = (top.get("documentId") == name and word in top.get("text", "") and not dirty
                  and (title is None or top.get("title") == title))
            record("odd", f"searchPassages finds {name!r}", ok,
                   {"doc": top.get("documentId"), "title": top.get("title"), "unclean": dirty} if top else body)
        scripts = [r for w in ("jackalscript", "jackalscript2") for r in passages(rest, w, 5)[2] if w in r["text"]]
        record("odd", "HTML scripts and styles are not indexed", not scripts, len(scripts))
        hidden = [i for i in search_ids(rest, "beetlehidden secretoutside") if "hidden" in i or "outside" in i]
        record("odd", "search never answers from outside the root", not hidden, hidden)
        dirty_docs = {}
        for document_id in sorted(listed):
            fetched = rest.structured("fetch", id=document_id)
            text = fetched.get("text", "") if isinstance(fetched, dict) else ""
            bad = unclean(text) + unclean(fetched.get("title", "") if isinstance(fetched, dict) else "")
            if bad or not isinstance(fetched, dict):
                dirty_docs[document_id] = bad or fetched
        record("odd", f"fetch of every listed document is clean text ({len(listed)})", not dirty_docs, dirty_docs)
        versions = search_ids(rest, "installing a release with the installer")
        copies = [i for i in versions if i.endswith("install.md")]
        record("odd", "eight versions of a page answer once", len(copies) == 1, versions[:5])
        built = sorted(i for i in listed if i.startswith("_build/"))
        record("odd", "build output (_build/html) that .gitignore names is not indexed",
               not built and not any(i.startswith("_build/") for i in versions), {"listed": built, "search": versions[:3]})
        line = passages(rest, "salamanderline", 1)[2]
        record("odd", "a 2 MB line is indexed in bounded passages",
               bool(line) and line[0]["documentId"] == "one-line.md" and len(line[0]["text"]) <= 1000,
               [(r["documentId"], len(r["text"])) for r in line])
        for hostile in ("../", "/etc/passwd", "..%2F..%2Fetc", "\x00", "*", "loop/", "passwd.md", ".git/"):
            status, body = rest.call("indexDocuments", path=hostile)
            refused = status != 200 or bool(body.get("isError"))
            record("odd", f"indexDocuments refuses path {hostile!r}", refused, body)
        record("odd", "server alive after the group", rest.client.get("/health").status_code == 200,
               {"rss_mb": rss_mb(process.pid)})


def watch_group(scratch: Path) -> None:
    docs = scratch / "watched" / "docs"
    docs.mkdir(parents=True)
    (docs / "first.md").write_text("# First\n\nThe first page talks about capybarafirst.\n")
    with serve(["--docs", str(docs)], scratch / "watch.log") as (process, port):
        rest = Rest(port)
        version = rest.wait_complete().get("index_version")

        def settle(what: str, check: Any, deadline_s: float = 120) -> Any:
            nonlocal version
            deadline = time.monotonic() + deadline_s
            while time.monotonic() < deadline:
                report = rest.knowledge()
                if report.get("complete") and "background" not in report and check(report):
                    version = report.get("index_version")
                    return report
                time.sleep(0.5)
            return rest.knowledge()

        # A build writing into a folder .gitignore names re-reads nothing; changing .gitignore re-reads the rule.
        (docs / ".gitignore").write_text("_build/\n")
        time.sleep(3)
        before = rest.knowledge().get("index_version")
        (docs / "_build").mkdir()
        for round_ in range(20):
            (docs / "_build" / f"page-{round_}.md").write_text(f"# Built\n\nBuild output {round_}: tapirbuilt.\n")
        time.sleep(5)
        record("watch", "writes into an ignored build folder are not indexed (same index version)",
               rest.knowledge().get("index_version") == before
               and not any(i.startswith("_build/") for i in search_ids(rest, "tapirbuilt")),
               {"index_version": [before, rest.knowledge().get("index_version")], "search": search_ids(rest, "tapirbuilt")[:2]})
        (docs / ".gitignore").write_text("")
        settle("un-ignored", lambda r: any(i.startswith("_build/") for i in search_ids(rest, "tapirbuilt")))
        record("watch", "emptying .gitignore brings the build folder in",
               any(i.startswith("_build/") for i in search_ids(rest, "tapirbuilt")), search_ids(rest, "tapirbuilt")[:2])
        shutil.rmtree(docs / "_build")
        (docs / ".gitignore").unlink()
        settle("build removed", lambda r: not any(i.startswith("_build/") for i in search_ids(rest, "tapirbuilt")))
        (docs / "added.md").write_text("# Added\n\nAdded while serving: dugongadded.\n")
        settle("added", lambda r: "added.md" in search_ids(rest, "dugongadded"))
        record("watch", "an added page is searchable", "added.md" in search_ids(rest, "dugongadded"),
               search_ids(rest, "dugongadded")[:3])
        (docs / "added.md").write_bytes(codecs.BOM_UTF16_LE + "# Added\n\nNow UTF-16: dugongsixteen.\n".encode("utf-16-le"))
        settle("re-encoded", lambda r: "added.md" in search_ids(rest, "dugongsixteen"))
        record("watch", "a page re-saved as UTF-16 is re-read", "added.md" in search_ids(rest, "dugongsixteen"),
               search_ids(rest, "dugongsixteen")[:3])
        (docs / "added.md").write_bytes(os.urandom(8192))
        report = settle("binary", lambda r: any(f["document"] == "added.md" for f in (r.get("skipped") or {}).get("files", [])))
        record("watch", "a page overwritten with binary is skipped and named",
               any(f["document"] == "added.md" for f in (report.get("skipped") or {}).get("files", [])), report.get("skipped"))
        record("watch", "... and its old text is no longer searchable", "added.md" not in search_ids(rest, "dugongsixteen"),
               search_ids(rest, "dugongsixteen")[:3])
        (docs / "added.md").unlink()
        report = settle("removed", lambda r: not r.get("skipped"))
        record("watch", "removing it clears the skipped list", not report.get("skipped"), report.get("skipped"))
        # watchfiles raises on an event for a name it cannot decode; the server must go on watching.
        latin1_name = docs / os.fsdecode(b"r\xe9sum\xe9.md")
        latin1_name.write_text("# Latin-1 name\n\nwritten while serving\n")
        time.sleep(2)
        (docs / "after.md").write_text("# After\n\nWritten after a Latin-1 name: oryxafter.\n")
        settle("after a bad name", lambda r: "after.md" in search_ids(rest, "oryxafter"))
        record("watch", "a file name that is not UTF-8: watching goes on",
               "after.md" in search_ids(rest, "oryxafter") and process.poll() is None,
               {"search": search_ids(rest, "oryxafter")[:2], "skipped": rest.knowledge().get("skipped")})
        latin1_name.unlink()
        (docs / "after.md").unlink()
        # Files come and go while the re-index reads them: 50 writes and deletes in quick succession.
        for round_ in range(50):
            path = docs / f"churn-{round_ % 5}.md"
            if path.exists() and round_ % 3 == 0:
                path.unlink()
            else:
                path.write_text(f"# Churn {round_}\n\nchurn page {round_} of a storm: gibbonchurn{round_}.\n")
            time.sleep(0.02)
        report = settle("churn", lambda r: True, deadline_s=5)
        time.sleep(3)
        report = settle("churn", lambda r: r.get("documents") == 1 + len(list(docs.glob("churn-*.md"))))
        record("watch", "after a storm of writes and deletes the index matches the folder",
               report.get("documents") == 1 + len(list(docs.glob("churn-*.md"))),
               {"documents": report.get("documents"), "files": 1 + len(list(docs.glob("churn-*.md")))})
        shutil.rmtree(docs.parent)
        time.sleep(5)
        alive = rest.client.get("/health").status_code == 200
        record("watch", "the docs folder deleted: server keeps answering", alive and "first.md" in search_ids(rest, "capybarafirst"),
               {"health": alive, "search": search_ids(rest, "capybarafirst")[:2]})
        docs.mkdir(parents=True)
        (docs / "first.md").write_text("# First\n\nThe first page talks about capybarafirst.\n")
        (docs / "reborn.md").write_text("# Reborn\n\nThe folder came back: tamarinreborn.\n")
        settle("recreated", lambda r: "reborn.md" in search_ids(rest, "tamarinreborn"), deadline_s=30)
        record("watch", "the folder re-created: its pages are searchable again",
               "reborn.md" in search_ids(rest, "tamarinreborn"), search_ids(rest, "tamarinreborn")[:3])
        record("watch", "server alive after the group", rest.client.get("/health").status_code == 200,
               {"rss_mb": rss_mb(process.pid)})


def during_group(scratch: Path, pages: int = 150) -> None:
    """Files edited, removed and added while the first index is being built (its pages are new to the vector
    cache, so embedding takes a while): once it and the re-index after it finish, the index is the folder's."""
    docs = scratch / "during"
    docs.mkdir()
    run = os.urandom(4).hex()  # words no earlier run embedded
    for n in range(pages):
        (docs / f"page{n:03d}.md").write_text(f"# Page {n}\n\n" + " ".join(
            f"topic{run}{n}x{k} word{k}" for k in range(120)) + f"\n\nkiwi{n}original.\n")
    with serve(["--docs", str(docs)], scratch / "during.log") as (process, port):
        rest = Rest(port)
        deadline = time.monotonic() + 120
        while "background" not in rest.knowledge() and time.monotonic() < deadline:
            time.sleep(0.2)
        building = rest.knowledge().get("background")
        (docs / "page000.md").write_text("# Page 0\n\nRewritten while indexing: kiwirewritten.\n")
        (docs / "page001.md").unlink()
        (docs / "late.md").write_text("# Late\n\nAdded while indexing: kiwilate.\n")
        started = time.monotonic()
        report: dict[str, Any] = {}
        while time.monotonic() - started < INDEX_DEADLINE_S:
            report = rest.knowledge()
            if (report.get("complete") and "background" not in report and report.get("documents") == pages
                    and "late.md" in search_ids(rest, "kiwilate")):
                break
            time.sleep(1)
        record("during", "edits while the first index builds: all seen", bool(building) and
               "late.md" in search_ids(rest, "kiwilate") and "page000.md" in search_ids(rest, "kiwirewritten"),
               {"while": building, "documents": report.get("documents"), "s": round(time.monotonic() - started)})
        listed = listed_documents(rest)
        stale = [hit["documentId"] for hit in passages(rest, "kiwi0original kiwi1original", 5)[2]
                 if "original" in hit["text"] and hit["documentId"] in ("page000.md", "page001.md")]
        record("during", "... and nothing of the old or removed text", "page001.md" not in listed and not stale,
               {"page001 listed": "page001.md" in listed, "stale": stale})


def write_tiny_pages(docs: Path, files: int, body: Callable[[int], str]) -> None:
    """`files` pages `f0000/p0.md` ... in folders of 100, page n holding `body(n)` (bench/watch_latency.py too)."""
    for n in range(files):
        folder = docs / f"f{n // 100:04d}"
        if n % 100 == 0:
            folder.mkdir(parents=True)
        (folder / f"p{n}.md").write_text(body(n))


def many_group(scratch: Path, files: int = 100_000) -> None:
    """100,000 tiny files in 1,000 folders, all but 100 empty (no passages, so nothing to embed: the cost
    measured is listing, reading, parsing and watching them)."""
    docs = scratch / "many"
    write_tiny_pages(docs, files, lambda n: f"# Page {n}\n\ntiny page {n} about lynxmany{n}.\n" if n % 1000 == 0 else "")
    with serve(["--docs", str(docs)], scratch / "many.log") as (process, port):
        rest = Rest(port)
        started = time.monotonic()
        peak = 0
        while time.monotonic() - started < INDEX_DEADLINE_S:
            peak = max(peak, rss_mb(process.pid))
            report = rest.knowledge()
            if report.get("complete") and "background" not in report:
                break
            time.sleep(0.5)
        record("many", f"{files:,} tiny files index", report.get("documents") == files,
               {"documents": report.get("documents"), "passages": report.get("passages"),
                "s": round(time.monotonic() - started), "peak_rss_mb": peak})
        record("many", "a page among them is searchable", "f0500/p50000.md" in search_ids(rest, "lynxmany50000"),
               search_ids(rest, "lynxmany50000")[:2])
        (docs / "f0999" / "late.md").write_text("# Late\n\nAdded last: vicunalate.\n")
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and "f0999/late.md" not in search_ids(rest, "vicunalate"):
            time.sleep(1)
        record("many", "the watcher sees a page added among them", "f0999/late.md" in search_ids(rest, "vicunalate"),
               {"s": round(time.monotonic() - (deadline - 180)), "rss_mb": rss_mb(process.pid)})


def startup_group(scratch: Path) -> None:
    empty = scratch / "empty-docs"
    empty.mkdir()
    only_binary = scratch / "only-binary"
    only_binary.mkdir()
    (only_binary / "x.md").write_bytes(os.urandom(4096))
    (scratch / "notes.csv").write_text("a,b\n")
    cases = [("missing --docs", ["--docs", str(scratch / "nope")], 2, "no such file"),
             ("empty --docs folder", ["--docs", str(empty)], 2, "no readable"),
             ("--docs a file of another type", ["--docs", str(scratch / "notes.csv")], 2, "no readable"),
             ("--docs /dev/null", ["--docs", "/dev/null"], 2, "no readable")]
    for name, args, code, words in cases:
        done = subprocess.run([*CLI, "serve", "--no-classifier", "--port", str(free_port()), *args], cwd=ROOT,
                              capture_output=True, timeout=120)
        lines = [line for line in done.stderr.decode(errors="replace").splitlines() if line.strip()]
        record("startup", name, done.returncode == code and len(lines) == 1 and words in lines[0],
               {"rc": done.returncode, "stderr": lines[-3:]})
    # A folder of binary files lists (each has a page suffix), so the server starts: the files are named
    # in /health and search answers nothing, rather than a start-up that cannot be told from a bad path.
    with serve(["--docs", str(only_binary)], scratch / "only-binary.log") as (_, port):
        rest = Rest(port)
        report = rest.wait_complete(60)
        status, body = rest.call("search", query="anything")
        record("startup", "a folder of binary .md files: served, skipped named",
               (report.get("skipped") or {}).get("count") == 1 and status == 200, {"skipped": report.get("skipped"),
                                                                                    "search": status})


def stdio_group(scratch: Path) -> None:
    """The official SDK's client over `hexmcp stdio --docs` on the odd corpus's good pages."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    docs = scratch / "stdio-docs"
    docs.mkdir()
    for name in ("latin1.md", "utf16.md", "escapes.md", "bom.md"):
        (docs / name).write_bytes(GOOD[name][0])
    (docs / "binary.md").write_bytes(BAD["binary.md"])

    async def run() -> None:
        params = StdioServerParameters(command=sys.executable, args=["-m", "hexmcp.app.cli", "stdio", "--no-classifier",
                                                                     "--docs", str(docs)], cwd=str(ROOT))
        with (scratch / "stdio.log").open("w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                for name in ("latin1.md", "utf16.md", "escapes.md", "bom.md"):
                    word, title = GOOD[name][1], GOOD[name][2]
                    result = await asyncio.wait_for(session.call_tool("searchPassages", {"query": word, "limit": 1}), 300)
                    # an SDK before 1.10 has no structuredContent: the text content carries the same JSON
                    structured = getattr(result, "structuredContent", None) or json.loads(result.content[0].text)
                    top = (structured.get("items") or [{}])[0]
                    dirty = sorted({u for s in strings_of(structured) for u in unclean(s)})
                    record("stdio", f"SDK client: searchPassages finds {name}",
                           top.get("documentId") == name and top.get("title") == title and not dirty,
                           {"doc": top.get("documentId"), "title": top.get("title"), "unclean": dirty})
                resources = await session.list_resources()
                names = sorted(str(r.uri) for r in resources.resources)
                record("stdio", "SDK client: the binary file is no resource", not any("binary" in n for n in names), names)
                fetched = await session.read_resource("hexmcp://docs/utf16.md")
                text = fetched.contents[0].text  # type: ignore[union-attr]
                record("stdio", "SDK client: resources/read of a UTF-16 page is its text",
                       text.startswith("# Sixteen page") and not unclean(text), text[:40])

    asyncio.run(run())


def markup_cases(n: int = 50_000) -> dict[str, tuple[str, str]]:
    """Pathological markup for each reader: (text, suffix) by name."""
    return {
        "md: [ x50k": ("[" * n, ".md"), "md: *a x50k": ("*a" * n, ".md"), "md: < x50k": ("<" * n, ".md"),
        "md: ` x50k": ("`" * n, ".md"), "md: > x50k": ("> " * n + "x", ".md"),
        "md: lists 2,000 deep": ("".join("  " * i + "- x\n" for i in range(2000)), ".md"),
        "md: [a]( x50k": ("[a](" * n, ".md"), "md: <div> x50k": ("<div>" * n, ".md"),
        "md: 50k link references": ("[x]: /u\n" * n + "[x]" * n, ".md"), "md: 50k headings": ("# h\n" * n, ".md"),
        "md: 50k-column table": ("|a" * n + "\n" + "|-" * n + "\n", ".md"),
        "mdx: <A> and {/* x50k": ("<A>" * n + "{/*" * n, ".mdx"), "mdx: { x50k": ("{" * n, ".mdx"),
        "rst: block quotes 500 deep": ("".join("   " * i + "x\n\n" for i in range(500)), ".rst"),
        "rst: lists 1,000 deep": ("".join("  " * i + "- x\n\n" for i in range(1000)), ".rst"),
        "rst: ` x50k": ("`" * n, ".rst"), "rst: |a| x50k": ("|a| " * n, ".rst"),
        "rst: 20k titles": ("T\n=\n\n" * 20_000, ".rst"),
        "rst: 2,000-column grid table": ("+" + "-+" * 2000 + "\n|" + "a|" * 2000 + "\n+" + "-+" * 2000 + "\n", ".rst"),
        "txt: a directive over 50k lines": (".. note::\n" + "   x\n" * n, ".txt"),
        "html: <p> x50k": ("<p>" * n, ".html"), "html: 50k attributes": ("<a " + "x=1 " * n + ">", ".html"),
        "pdf: 1.5 M text operators in 0.2 MB": (flate_pdf(b"BT /F1 12 Tf 72 720 Td (w) Tj ET\n" * 1_500_000), ".pdf"),
        "pdf: not a PDF": ("%PDF-1.4\n" + "garbage " * n, ".pdf"),
    }


def flate_pdf(content: bytes) -> str:
    """A one-page PDF whose page content is `content`, deflated: a decompression bomb when `content` is large.
    Returned as Latin-1 text so that markup_group can encode it back to the same bytes."""
    import zlib

    packed = zlib.compress(content, 9)
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
               b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
               b"/Resources << /Font << /F1 5 0 R >> >> >>",
               b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(packed) + packed + b"\nendstream",
               b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    out, offsets = b"%PDF-1.4\n", []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1) + b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return out.decode("latin-1")


def markup_group(scratch: Path, seconds: int = 30) -> None:
    """In process: each reader and the chunker over pathological markup end within `seconds`, with passages
    or an error that skips the one file (load_documents names it), never a hang."""
    from hexmcp.tools.knowledge.chunking import chunk_document
    from hexmcp.tools.knowledge.readers import parse_file

    def timeout(*_: Any) -> None:
        raise TimeoutError

    previous = signal.signal(signal.SIGALRM, timeout)
    try:
        for name, (text, suffix) in markup_cases().items():
            started = time.perf_counter()
            signal.alarm(seconds)
            try:
                data = text.encode("latin-1" if suffix == ".pdf" else "utf-8")
                outcome: Any = f"{len(chunk_document(parse_file('p' + suffix, suffix, data)))} passages"
                ok = True
            except TimeoutError:
                outcome, ok = f"still parsing after {seconds} s", False
            except Exception as error:  # noqa: BLE001 - what load_documents would skip the file with
                outcome, ok = f"skipped: {type(error).__name__}: {str(error)[:60]}", True
            finally:
                signal.alarm(0)
            record("markup", name, ok, f"{outcome} in {time.perf_counter() - started:.2f} s")
    finally:
        signal.signal(signal.SIGALRM, previous)


GROUPS = {"odd": odd_group, "watch": watch_group, "during": during_group, "many": many_group,
          "startup": startup_group, "stdio": stdio_group, "markup": markup_group}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=sorted(GROUPS), action="append")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="hexmcp-corpus-probes-") as scratch:
        for name in args.only or GROUPS:
            try:
                GROUPS[name](Path(scratch))
            except Exception as error:  # a group that breaks is a failed probe, and the others still run
                traceback.print_exc()
                record(name, "group ran to its end", False, f"{type(error).__name__}: {error}")
    failed = [row for row in ROWS if row["ok"] is False]
    print(f"{len(ROWS)} probes, {len(failed)} failed")
    if args.json:
        args.json.write_text(json.dumps(ROWS, indent=1, ensure_ascii=False))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
