"""The small corpus the knowledge tests index: four documents, one per reader (front matter, Markdown,
reStructuredText, plain text). A module of its own because two test folders have a `conftest` and
`from conftest import ...` would get whichever was imported first. `write_numbered_corpus` writes the
bigger, generated corpus the long-running indexing tests need."""

from pathlib import Path

CORPUS = {
    "guide/install.md": "---\ntitle: Installing Widgetd\n---\n# Installing\n\nRun `pip install widgetd` in a "
                        "virtual environment.\n\n## Upgrading\n\nUpgrade with pip and restart the daemon.\n",
    "guide/storage.md": "# Storage\n\nWidgetd keeps its data in a SQLite file under the state directory.\n\n"
                        "## Backups\n\nCopy the database file while the daemon is stopped to back it up.\n",
    "notes/cooking.rst": "Cooking\n=======\n\nBoil the pasta in salted water for nine minutes.\n",
    "notes/weather.txt": "Tomorrow will be rainy with strong winds from the north.\n",
}


def write_numbered_corpus(root: Path, documents: int, paragraphs: int) -> Path:
    """`documents` Markdown files doc000.md.. of a title and `paragraphs` sections each (so `paragraphs + 1`
    passages a document): enough of them that a fresh index takes seconds, and a cancellation lands mid-way."""
    root.mkdir(parents=True, exist_ok=True)
    for n in range(documents):
        sections = [f"## Part {p}\n\nDocument {n} part {p} talks about topic {(n * 7 + p) % 23} in some detail: "
                    + " ".join(f"word{(n * p + w) % 97}" for w in range(60)) for p in range(paragraphs)]
        (root / f"doc{n:03}.md").write_text(f"# Document {n}\n\n" + "\n\n".join(sections) + "\n", encoding="utf-8")
    return root
