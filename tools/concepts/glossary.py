"""The --glossary file: curated concepts with ids, titles, summaries, aliases, types and typed
relations, merged over the concepts derived from the corpus (a glossary entry wins).

    concepts:
      - id: vector-store            # required: lower-case letters, digits, . _ -
        title: Vector store         # required
        summary: Where passage vectors live.
        aliases: [embedding store]
        type: component
        relations:
          - {relation: part-of, target: knowledge-base, weight: 0.8}   # target: another entry's id

The file is read once, at start-up; anything malformed raises GlossaryError with the file, the line
and the reason. The YAML is walked as nodes (yaml.compose), so every error knows its line.
"""

from __future__ import annotations

import re
from pathlib import Path

import attrs
import yaml

from hexmcp.tools.user_files import read_user_text

from .errors import GlossaryError
from .text import key_of

TOP_KEYS = ("version", "concepts")
CONCEPT_KEYS = ("id", "title", "summary", "aliases", "type", "relations")
RELATION_KEYS = ("relation", "target", "weight")
ID_PATTERN = re.compile(r"^[a-z0-9][a-z0-9._-]{0,79}$")
RELATION_PATTERN = re.compile(r"^[a-z][a-z0-9_-]{0,39}$")
_STR = "tag:yaml.org,2002:str"


@attrs.frozen(kw_only=True)
class GlossaryRelation:
    relation: str
    target: str
    weight: float


@attrs.frozen(kw_only=True)
class GlossaryEntry:
    id: str
    title: str
    summary: str | None
    aliases: tuple[str, ...]
    type: str
    relations: tuple[GlossaryRelation, ...]


@attrs.frozen(kw_only=True)
class Glossary:
    entries: tuple[GlossaryEntry, ...] = ()
    source: str = "<none>"


def load_glossary(path: str | Path) -> Glossary:
    path = Path(path)
    if path.suffix.lower() not in (".yaml", ".yml"):
        raise GlossaryError(path, f"unsupported file type {path.suffix or '(none)'!r}; use .yaml or .yml")
    return parse_glossary(read_user_text(path, GlossaryError), str(path))


def parse_glossary(text: str, source: str) -> Glossary:
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        raise GlossaryError(source, f"invalid YAML: {error.problem or error}", mark.line + 1 if mark else None) from error
    except yaml.YAMLError as error:
        raise GlossaryError(source, f"invalid YAML: {error}") from error
    reader = _Reader(source)
    top = reader.mapping(root, "the top level", TOP_KEYS)
    if "concepts" not in top:
        raise GlossaryError(source, "expected a mapping with a 'concepts' list at the top level", 1)
    entries = [reader.entry(node) for node in reader.sequence(top["concepts"], "'concepts'")]
    _check_references(entries, reader, source)
    return Glossary(entries=tuple(entry for entry, _ in entries), source=source)


def _check_references(entries: list[tuple[GlossaryEntry, int]], reader: _Reader, source: str) -> None:
    ids: dict[str, int] = {}
    keys: dict[str, str] = {}
    for entry, line in entries:
        if entry.id in ids:
            raise GlossaryError(source, f"duplicate concept id {entry.id!r} (first at line {ids[entry.id]})", line)
        ids[entry.id] = line
    for entry, line in entries:
        for name in (entry.title, *entry.aliases):
            other = keys.setdefault(key_of(name), entry.id)
            if other != entry.id:
                raise GlossaryError(source, f"alias {name!r} of {entry.id!r} already names {other!r}", line)
        for relation in entry.relations:
            if relation.target not in ids:
                raise GlossaryError(source, f"relation {relation.relation!r} of {entry.id!r} targets unknown "
                                            f"concept id {relation.target!r}", reader.relation_lines[relation])
            if relation.target == entry.id:
                raise GlossaryError(source, f"{entry.id!r} relates to itself", reader.relation_lines[relation])


class _Reader:
    """Typed access to YAML nodes; every failure names the node's line."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.relation_lines: dict[GlossaryRelation, int] = {}

    def fail(self, node: yaml.Node | None, reason: str) -> GlossaryError:
        return GlossaryError(self.source, reason, node.start_mark.line + 1 if node is not None else 1)

    def mapping(self, node: yaml.Node | None, where: str, allowed: tuple[str, ...]) -> dict[str, yaml.Node]:
        if not isinstance(node, yaml.MappingNode):
            raise self.fail(node, f"{where} must be a mapping")
        result: dict[str, yaml.Node] = {}
        for key_node, value in node.value:
            key = str(key_node.value)
            if key not in allowed:
                raise self.fail(key_node, f"unknown key {key!r} in {where}; allowed: {', '.join(allowed)}")
            if key in result:
                raise self.fail(key_node, f"key {key!r} repeated in {where}")
            result[key] = value
        return result

    def sequence(self, node: yaml.Node, where: str) -> list[yaml.Node]:
        if not isinstance(node, yaml.SequenceNode):
            raise self.fail(node, f"{where} must be a list")
        return list(node.value)

    def string(self, node: yaml.Node, what: str) -> str:
        if not isinstance(node, yaml.ScalarNode) or node.tag != _STR or not str(node.value).strip():
            raise self.fail(node, f"{what} must be a non-empty string")
        return str(node.value).strip()

    def entry(self, node: yaml.Node) -> tuple[GlossaryEntry, int]:
        line = node.start_mark.line + 1
        fields = self.mapping(node, "a concept", CONCEPT_KEYS)
        if "id" not in fields or "title" not in fields:
            raise self.fail(node, "a concept needs 'id' and 'title'")
        concept_id = self.string(fields["id"], "'id'")
        if not ID_PATTERN.match(concept_id):
            raise self.fail(fields["id"], f"id {concept_id!r} must be lower-case letters, digits, '.', '_' or '-' "
                                          "(at most 80, starting with a letter or digit)")
        where = f"concept {concept_id!r}"
        aliases = tuple(self.string(a, f"an alias of {where}") for a in
                        self.sequence(fields["aliases"], f"'aliases' of {where}")) if "aliases" in fields else ()
        relations = tuple(self.relation(r, where) for r in
                          self.sequence(fields["relations"], f"'relations' of {where}")) if "relations" in fields else ()
        return GlossaryEntry(
            id=concept_id, title=self.string(fields["title"], f"'title' of {where}"),
            summary=self.string(fields["summary"], f"'summary' of {where}") if "summary" in fields else None,
            aliases=aliases, type=self.string(fields["type"], f"'type' of {where}") if "type" in fields else "glossary",
            relations=relations), line

    def relation(self, node: yaml.Node, where: str) -> GlossaryRelation:
        fields = self.mapping(node, f"a relation of {where}", RELATION_KEYS)
        if "relation" not in fields or "target" not in fields:
            raise self.fail(node, f"a relation of {where} needs 'relation' and 'target'")
        kind = self.string(fields["relation"], f"'relation' in {where}")
        if not RELATION_PATTERN.match(kind):
            raise self.fail(fields["relation"], f"relation {kind!r} must be a lower-case word (letters, digits, - _)")
        weight = 1.0
        if "weight" in fields:
            raw = fields["weight"]
            try:
                weight = float(raw.value) if isinstance(raw, yaml.ScalarNode) else -1.0
            except ValueError:
                weight = -1.0
            if not 0.0 < weight <= 1.0 or raw.tag == _STR:
                raise self.fail(raw, f"'weight' in {where} must be a number in (0, 1]")
        relation = GlossaryRelation(relation=kind, target=self.string(fields["target"], f"'target' in {where}"),
                                    weight=weight)
        self.relation_lines.setdefault(relation, node.start_mark.line + 1)
        return relation
