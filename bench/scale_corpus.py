"""A corpus of real documentation text at a given passage count, for bench/knowledge_scale.py.

Sources, in this order (each optional, whichever exist on the machine): the evaluation corpora under
bench/data/corpora/, the Markdown, reST and text under /usr/share/doc (gzipped pages decompressed),
CMake's reST help, the installed Python packages' documentation, Node's and other vendored docs. No
generated text: files are copied as they are, only filtered for being prose (not data tables, word
lists or licence boilerplate, which repeats nearly word for word across packages) and deduplicated
by content.

Files are copied, one source after another, into a folder of their own until the product's own
reader and chunker (read_document, chunk_document) count `passages` passages; a manifest marks the
folder complete, so the next run at the same size reuses it. The folder at 50,000 passages is a
prefix of the one at 100,000 (same sources, same order).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import shutil
import site
import sys
from pathlib import Path
from typing import Iterator

REPOSITORY = Path(__file__).resolve().parent.parent
MANIFEST = "MANIFEST.json"
RULES = 3  # bump when what counts as a candidate file changes: a kept folder of older rules is rebuilt
MIN_BYTES, MAX_BYTES = 400, 2_000_000
SKIPPED_NAMES = ("license", "licence", "copying", "copyright", "notice", "authors", "record", "requirements",
                 "top_level", "entry_points", "sources", "dependency_links", "installed-files", "vocab", "merges")


def default_sources(extra_corpora: Path | None = None) -> list[tuple[str, Path]]:
    """(tag, root) pairs: the tag prefixes each copied file's path, so two sources never collide."""
    corpora = extra_corpora or REPOSITORY / "bench" / "data" / "corpora"
    sources = [(f"corpora-{d.name}", d / "docs") for d in sorted(corpora.glob("*")) if (d / "docs").is_dir()]
    sources += [("usr-share-doc", Path("/usr/share/doc"))]
    sources += [(f"cmake-{p.parent.name}", p) for p in sorted(Path("/usr/share").glob("cmake*/Help"))]
    sources += [(f"site-packages-{i}", Path(p)) for i, p in enumerate(dict.fromkeys([*site.getsitepackages(),
                                                                                      *sys.path]))
                if p.endswith("site-packages") and Path(p).is_dir()]
    sources += [("node-modules", Path("/usr/lib/node_modules")), ("google-cloud-sdk", Path("/usr/lib/google-cloud-sdk")),
                ("jvm", Path("/usr/lib/jvm"))]
    return [(tag, root) for tag, root in sources if root.is_dir()]


def prose(text: str) -> bool:
    """Whether `text` reads as documentation: mostly letters and spaces, in lines of some length."""
    if not text.strip():
        return False
    letters = sum(1 for c in text if c.isalpha() or c.isspace())
    lines = [line for line in text.splitlines() if line.strip()]
    return letters / len(text) >= 0.8 and sum(map(len, lines)) / max(1, len(lines)) >= 25


def candidates(root: Path) -> Iterator[tuple[str, str]]:
    """(relative path with a reader's suffix, text) for each prose file under root, sorted by path."""
    for path in sorted(root.rglob("*")):
        name = path.name.lower()
        if any(part.startswith(".") for part in path.relative_to(root).parts) or name.startswith(SKIPPED_NAMES):
            continue
        relative = path.relative_to(root).as_posix()
        suffix = next((s for s in (".md", ".mdx", ".rst", ".txt") if name.endswith(s) or name.endswith(s + ".gz")), None)
        if suffix is None and name.endswith(".gz") and root == Path("/usr/share/doc"):
            suffix = ".txt"  # Debian's README.gz, changelog.gz: plain text
        if suffix is None:
            continue
        try:
            if not path.is_file() or not MIN_BYTES <= path.stat().st_size <= MAX_BYTES:
                continue
            data = path.read_bytes()
            data = gzip.decompress(data) if name.endswith(".gz") else data
            text = data.decode("utf-8")
        except (OSError, UnicodeDecodeError, EOFError, gzip.BadGzipFile):
            continue
        if len(text) <= MAX_BYTES and prose(text):
            yield relative.removesuffix(".gz").removesuffix(suffix) + suffix, text


def build_corpus(folder: Path, passages: int, sources: list[tuple[str, Path]]) -> dict:
    """Fill `folder` until its files hold at least `passages` passages; the manifest, as a dict."""
    from hexmcp.tools.knowledge.chunking import chunk_document
    from hexmcp.tools.knowledge.corpus import CorpusSpec
    from hexmcp.tools.knowledge.readers import parse_text

    accepts = CorpusSpec(roots=[folder]).accepts

    manifest_path = folder / MANIFEST
    if manifest_path.exists():
        manifest = json.loads(manifest_path.read_text())
        if (manifest["target"], manifest.get("rules"), manifest.get("requested")) == (
                passages, RULES, [[tag, str(root)] for tag, root in sources]):
            return manifest
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    seen: set[str] = set()
    counted, files, used = 0, 0, []
    for tag, root in sources:
        copied = 0
        for relative, text in candidates(root):
            digest = hashlib.sha256(text.encode()).hexdigest()
            if digest in seen:
                continue
            seen.add(digest)
            document_id = f"{tag}/{relative}"
            if not accepts(document_id):  # e.g. node_modules/: the product's walk would skip it
                continue
            try:
                count = len(chunk_document(parse_text(document_id, text, Path(relative).suffix)))
            except Exception:  # noqa: BLE001 - a file the product's readers refuse is not corpus material
                continue
            if not count:
                continue
            target = folder / document_id
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
            counted, files, copied = counted + count, files + 1, copied + 1
            if counted >= passages:
                break
        used.append({"source": tag, "root": str(root), "files": copied})
        if counted >= passages:
            break
    manifest = {"target": passages, "rules": RULES, "requested": [[tag, str(root)] for tag, root in sources],
                "passages": counted, "files": files, "megabytes": round(
        sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 1e6, 1), "sources": used}
    if counted < passages:
        raise SystemExit(f"only {counted} passages of real text found for {passages}: {used}")
    manifest_path.write_text(json.dumps(manifest, indent=1))
    return manifest
