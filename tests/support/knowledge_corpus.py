"""The small corpus the knowledge tests index: four documents, one per reader (front matter, Markdown,
reStructuredText, plain text). A module of its own because two test folders have a `conftest` and
`from conftest import ...` would get whichever was imported first."""

CORPUS = {
    "guide/install.md": "---\ntitle: Installing Widgetd\n---\n# Installing\n\nRun `pip install widgetd` in a "
                        "virtual environment.\n\n## Upgrading\n\nUpgrade with pip and restart the daemon.\n",
    "guide/storage.md": "# Storage\n\nWidgetd keeps its data in a SQLite file under the state directory.\n\n"
                        "## Backups\n\nCopy the database file while the daemon is stopped to back it up.\n",
    "notes/cooking.rst": "Cooking\n=======\n\nBoil the pasta in salted water for nine minutes.\n",
    "notes/weather.txt": "Tomorrow will be rainy with strong winds from the north.\n",
}
