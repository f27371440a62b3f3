"""--glossary: a good file is merged over the derived concepts; a bad one stops start-up with its file,
line and reason and exit code 2, through the real command."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from hexmcp.core.startup import ExitCode
from hexmcp.tools.concepts.errors import GlossaryError
from hexmcp.tools.concepts.glossary import load_glossary, parse_glossary
from tests.tools.concepts.support import base_of

GOOD = """\
concepts:
  - id: snapshot
    title: Snapshot
    summary: A point-in-time copy of the state file.
    aliases: [state copy, backup image]
    type: artefact
    relations:
      - {relation: protects, target: state-file, weight: 0.9}
  - id: state-file
    title: State file
"""

BAD = [
    ("concepts:\n  - id: a\n    title: A\n  - id: a\n    title: B\n", 4, "duplicate concept id 'a'"),
    ("concepts:\n  - id: a\n    title: A\n    colour: red\n", 4, "unknown key 'colour'"),
    ("concepts:\n  - id: a\n", 2, "needs 'id' and 'title'"),
    ("concepts:\n  - id: Not An Id\n    title: A\n", 2, "must be lower-case"),
    ("concepts:\n  - id: a\n    title: A\n    relations:\n      - {relation: uses, target: b}\n", 5,
     "unknown concept id 'b'"),
    ("concepts:\n  - id: a\n    title: A\n    aliases: [x]\n  - id: b\n    title: X\n", 5, "already names 'a'"),
    ("concepts:\n  - id: a\n    title: A\n    relations:\n      - {relation: uses, target: a, weight: 3}\n", 5,
     "must be a number in (0, 1]"),
    ("concepts:\n  - id: a\n    title: [A]\n", 3, "'title' of concept 'a' must be a non-empty string"),
    ("concepts: {a: 1}\n", 1, "'concepts' must be a list"),
    ("concepts:\n  - id: a\n   title: A\n", 3, "invalid YAML"),
    ("version: 1\n", 1, "'concepts' list"),
]


def test_a_good_glossary_parses_with_its_relations() -> None:
    glossary = parse_glossary(GOOD, "g.yaml")
    snapshot, state = glossary.entries
    assert (snapshot.id, snapshot.type, snapshot.aliases) == ("snapshot", "artefact", ("state copy", "backup image"))
    assert [(r.relation, r.target, r.weight) for r in snapshot.relations] == [("protects", "state-file", 0.9)]
    assert state.summary is None and state.type == "glossary"


@pytest.mark.parametrize(("text", "line", "reason"), BAD)
def test_a_bad_glossary_names_file_line_and_reason(text: str, line: int, reason: str) -> None:
    with pytest.raises(GlossaryError) as raised:
        parse_glossary(text, "bad.yaml")
    assert raised.value.line == line and reason in raised.value.reason
    assert str(raised.value).startswith(f"bad.yaml, line {line}: ")


def test_unreadable_and_wrongly_named_files(tmp_path: Path) -> None:
    with pytest.raises(GlossaryError, match="cannot read file"):
        load_glossary(tmp_path / "missing.yaml")
    (tmp_path / "g.json").write_text("{}")
    with pytest.raises(GlossaryError, match="unsupported file type"):
        load_glossary(tmp_path / "g.json")
    (tmp_path / "latin1.yaml").write_bytes(b"concepts: [\xe9]\n")
    with pytest.raises(GlossaryError, match="not valid UTF-8"):
        load_glossary(tmp_path / "latin1.yaml")


@pytest.mark.slow
@pytest.mark.parametrize("command", ["stdio", "serve"])
def test_the_command_exits_2_before_serving(tmp_path: Path, command: str) -> None:
    bad = tmp_path / "glossary.yaml"
    bad.write_text(BAD[1][0])
    out = subprocess.run([sys.executable, "-m", "hexmcp.app.cli", command, "--no-classifier", "--glossary",
                          str(bad), *(["--port", "0"] if command == "serve" else [])],
                         capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert out.returncode == ExitCode.USAGE
    assert f"{bad}, line 4: unknown key 'colour'" in out.stderr and out.stdout == ""


@pytest.mark.slow
def test_glossary_entries_merge_over_derived_concepts(corpus_dir: Path, embedder, tmp_path: Path) -> None:

    base = base_of(corpus_dir, embedder, parse_glossary(GOOD, "g.yaml"))
    snapshot = base.get("snapshot")
    assert snapshot.summary == "A point-in-time copy of the state file." and snapshot.confidence == 1.0
    assert snapshot.type == "artefact" and "state copy" in snapshot.aliases
    assert "guide/widget-storage.md" in snapshot.defined_in  # the corpus's "**snapshot** is" joined the entry
    assert base.aliases.concept_of("state copi") == "snapshot"
    edges = {(e.source, e.target, e.relation, e.weight) for e in base.graph.edges()}
    assert ("snapshot", "state-file", "protects", 0.9) in edges
