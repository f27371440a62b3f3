"""The docs roots' .gitignore files decide what the corpus holds, as git decides what it tracks (ADR 0609):
real folders with nested, negated, directory-only and anchored patterns; the same answers as git itself on
random trees; the watcher ignoring changes in ignored folders; a real server that never searches a build
folder."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
from pathlib import Path

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hexmcp.tools.knowledge.corpus import CorpusSpec, discover
from hexmcp.tools.knowledge.gitignore import IgnoreRules
from hexmcp.tools.knowledge.watch_filter import CorpusChangeFilter
from tests.support.docs_server import serve_docs

GIT = shutil.which("git")
needs_git = pytest.mark.skipif(GIT is None, reason="git is not installed")


def _tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


def _ids(spec: CorpusSpec) -> list[str]:
    return [item.document_id for item in discover(spec)]


CHECKOUT = {
    ".gitignore": "_build/\n/top-only.md\n*.draft.md\n!keep.draft.md\nvenv\n",
    "index.md": "# Index\n",
    "top-only.md": "# Ignored: anchored at the root\n",
    "guide/top-only.md": "# Kept: the anchored pattern names the root's file only\n",
    "guide/notes.draft.md": "# Ignored by a glob\n",
    "guide/keep.draft.md": "# Kept by a negation\n",
    "_build/html/index.html": "<h1>Build output</h1>",
    "guide/_build/page.md": "# Nested build output: a directory-only pattern without a slash matches at any depth\n",
    "venv/lib/site/README.md": "# A virtualenv's vendored README\n",
    "guide/.gitignore": "local.md\n!/shipped/\nshipped/\n",
    "guide/local.md": "# Ignored by the nested .gitignore\n",
    "local.md": "# Kept: the nested .gitignore applies below its folder only\n",
    "guide/shipped/a.md": "# Ignored: the later pattern wins within a file\n",
    "api/.gitignore": "!*.draft.md\n",
    "api/wip.draft.md": "# Kept: the deeper .gitignore re-includes it\n",
    "_build.md": "# Kept: a directory-only pattern does not name a file\n",
}


def test_nested_negated_directory_only_and_anchored_patterns(tmp_path: Path) -> None:
    root = _tree(tmp_path / "checkout", CHECKOUT)
    assert _ids(CorpusSpec(roots=[root])) == [
        "_build.md", "api/wip.draft.md", "guide/keep.draft.md", "guide/top-only.md", "index.md", "local.md"]


def test_a_negation_cannot_reach_into_an_ignored_folder(tmp_path: Path) -> None:
    root = _tree(tmp_path / "docs", {".gitignore": "out/\n!out/keep.md\n", "out/keep.md": "# x\n", "a.md": "# a\n"})
    assert _ids(CorpusSpec(roots=[root])) == ["a.md"]  # git: "not possible to re-include a file if a parent
    # directory of that file is excluded"


def test_turned_off_every_file_is_read_again(tmp_path: Path) -> None:
    root = _tree(tmp_path / "checkout", CHECKOUT)
    ids = _ids(CorpusSpec(roots=[root], gitignore=False))
    assert "_build/html/index.html" in ids and "venv/lib/site/README.md" in ids and "guide/local.md" in ids


def test_a_root_inside_a_work_tree_follows_its_parents_and_info_exclude(tmp_path: Path) -> None:
    repo = _tree(tmp_path / "repo", {".gitignore": "docs/_build/\n", "docs/index.md": "# i\n",
                                     "docs/_build/index.md": "# built\n", "docs/scratch.md": "# mine\n",
                                     ".git/info/exclude": "scratch.md\n"})
    assert _ids(CorpusSpec(roots=[repo / "docs"])) == ["index.md"]
    # A root that is itself ignored by a parent is still what was asked for: its contents are read.
    assert _ids(CorpusSpec(roots=[repo / "docs" / "_build"])) == ["index.md"]


def test_a_gitignore_folder_or_undecodable_rules_do_not_break_the_walk(tmp_path: Path) -> None:
    root = _tree(tmp_path / "docs", {"a.md": "# a\n", "sub/b.md": "# b\n"})
    (root / ".gitignore").mkdir()
    (root / "sub" / ".gitignore").write_bytes(b"\xff\xfe b.md\nb.md\n")
    assert _ids(CorpusSpec(roots=[root])) == ["a.md"]


# --- the same answers as git -------------------------------------------------------------------------

NAMES = ("a", "b", "build", "doc")
PATTERNS = ("a", "b/", "/a", "build/", "*.md", "!a.md", "!b", "doc/*", "**/b", "a/**", "!/doc/", "*.txt",
            "b/a.md", "!build/", "doc/**/a.md", "[ab].md", "\\!x", "a?md", "!a/a.md", "build/**", "!*/")
paths = st.lists(st.tuples(st.sampled_from(NAMES), st.sampled_from(NAMES), st.sampled_from(("", ".md", ".txt")),
                           st.integers(0, 2)), min_size=1, max_size=10)
rules = st.lists(st.tuples(st.sampled_from(("", "a", "doc", "b/a")), st.lists(st.sampled_from(PATTERNS), max_size=4)),
                 max_size=3)


def _git_untracked(repo: Path) -> set[str]:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    out = subprocess.run([GIT, "ls-files", "--others", "--exclude-standard", "-z"], cwd=repo, env=env,
                         capture_output=True, check=True).stdout.decode()
    return {name for name in out.split("\0") if name}


@needs_git
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(files=paths, ignores=rules, excluded=st.lists(st.sampled_from(PATTERNS), max_size=2))
def test_the_rules_match_git_on_random_trees(tmp_path_factory: pytest.TempPathFactory, files, ignores,
                                             excluded) -> None:
    repo = tmp_path_factory.mktemp("repo")
    subprocess.run([GIT, "init", "-q", str(repo)], check=True)
    (repo / ".git" / "info" / "exclude").write_text("\n".join(excluded) + "\n")
    written: set[str] = set()
    for first, second, suffix, depth in files:
        name = "/".join((first, second)[:depth] + (f"{second}{suffix}" if depth < 2 else f"f{suffix}",))
        try:
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            (repo / name).write_text("x")
            written.add(name)
        except (FileExistsError, NotADirectoryError, IsADirectoryError):
            continue  # a file and a folder of the same name: the tree cannot have both
    for folder, patterns in ignores:
        if (repo / folder).is_dir() or not folder:
            (repo / folder / ".gitignore").write_text("\n".join(patterns) + "\n")
    kept = {name for name in written if (repo / name).is_file()}
    expected = _git_untracked(repo) & kept
    ours = {name for name in kept if not IgnoreRules(repo).ignored(name, is_dir=False)}
    assert ours == expected


# --- the watcher ----------------------------------------------------------------------------------------

def test_the_watcher_skips_ignored_folders_and_rereads_changed_rules(tmp_path: Path) -> None:
    from watchfiles import Change

    root = _tree(tmp_path / "docs", {".gitignore": "_build/\n", "a.md": "# a\n", "_build/x.html": "<p>x</p>"})
    relevant = CorpusChangeFilter((root,))
    assert relevant(Change.modified, str(root / "a.md"))
    assert not relevant(Change.modified, str(root / "_build" / "x.html"))
    assert not relevant(Change.added, str(root / "_build" / "deeper" / "y.md"))
    (root / ".gitignore").write_text("other/\n")
    assert relevant(Change.modified, str(root / ".gitignore"))  # the rule itself changed: acted on
    assert relevant(Change.modified, str(root / "_build" / "x.html"))  # and the new rule is in force
    assert not relevant(Change.modified, str(root / ".git" / "index"))  # watchfiles' own defaults still apply


@pytest.mark.anyio
async def test_the_service_watcher_wakes_for_pages_and_rules_not_for_ignored_output(tmp_path: Path) -> None:
    from hexmcp.tools.knowledge.service import KnowledgeConfig, KnowledgeService

    root = _tree(tmp_path / "docs", {".gitignore": "_build/\n", "a.md": "# a\n", "_build/.keep": ""})
    service = KnowledgeService(KnowledgeConfig(corpus=CorpusSpec(roots=[root])))
    wakes: list[int] = []

    async def counted(changed: object = None) -> None:  # what a reload would do is tested elsewhere: only count the wake-ups
        wakes.append(1)

    service._reload_logged = counted  # type: ignore[method-assign]
    stop = asyncio.Event()
    watching = asyncio.ensure_future(service.watch(stop))
    try:
        async with asyncio.timeout(10):  # the watch arms, then reads once: a fixed 0.5 s was not always enough
            while not wakes:
                await asyncio.sleep(0.05)
        assert wakes == [1]  # the read once the watch is armed
        wakes.clear()
        for round_ in range(20):
            (root / "_build" / f"page-{round_}.md").write_text("# built\n")
        await asyncio.sleep(1.5)  # watchfiles batches within 1.6 s at most (its debounce)
        assert wakes == []
        (root / ".gitignore").write_text("")
        async with asyncio.timeout(10):
            while not wakes:
                await asyncio.sleep(0.1)
        wakes.clear()
        (root / "_build" / "page-0.md").write_text("# rebuilt: no longer ignored\n")
        async with asyncio.timeout(10):
            while not wakes:
                await asyncio.sleep(0.1)
    finally:
        stop.set()
        await asyncio.wait_for(watching, 10)


# --- a real server ----------------------------------------------------------------------------------

def _search(base: str, query: str) -> list[str]:
    answer = httpx.post(base + "/mcp/tools/call", headers={"accept": "application/json"}, json={
        "method": "tools/call", "params": {"name": "searchPassages", "arguments": {"query": query}}}).json()
    return [item["documentId"] for item in answer["structuredContent"]["items"]]


@pytest.mark.slow
def test_a_served_corpus_never_searches_an_ignored_build_folder(tmp_path: Path, knowledge_cache: Path,
                                                                embedder) -> None:
    root = _tree(tmp_path / "checkout", {
        ".gitignore": "_build/\n",
        "install.rst": "Installing\n==========\n\nRun the okapiinstaller to install a release.\n",
        "_build/html/install.html": "<main><h1>Installing</h1><p>Run the okapiinstaller to install a release.</p></main>",
    })
    with serve_docs(root, knowledge_cache) as base:
        assert _search(base, "okapiinstaller install a release") == ["install.rst"]
        assert httpx.get(base + "/docs/_build/html/install.html").status_code == 404
    with serve_docs(root, knowledge_cache, "--docs-no-gitignore") as base:
        assert "_build/html/install.html" in _search(base, "okapiinstaller install a release")
