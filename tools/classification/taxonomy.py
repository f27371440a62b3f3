"""Taxonomies: the categories a text can belong to, with their prompts, routing policy and examples.

Three sources, one model: the built-in YAML shipped in this package, a custom YAML file, or a CSV
file with at least the columns `category,text`. Category order (first appearance) defines class
indices. Anything malformed raises TaxonomyError naming the file, the line and the reason.
"""

from __future__ import annotations

import csv
import hashlib
import importlib.resources
import json
from pathlib import Path

import attrs
import yaml

from hexmcp.tools.user_files import read_user_text

from .errors import TaxonomyError

BUILTIN_NAME = "builtin_taxonomy.yaml"
REASONING_MODES = ("auto", True, False)
REASONING_EFFORTS = ("low", "medium", "high")
MAX_EXAMPLE_CHARS = 20_000
# Keys a YAML taxonomy may use. Anything else is refused: a misplaced key (say `model:` beside
# `name:` instead of under `routing:`) would otherwise be ignored without a word.
TOP_LEVEL_KEYS = ("version", "categories")
CATEGORY_KEYS = ("name", "description", "system_prompt", "routing", "examples")
ROUTING_KEYS = ("model", "use_reasoning", "reasoning_effort")


@attrs.frozen(kw_only=True)
class RoutingPolicy:
    """Per-category routing defaults. `model=None` means: use the service's default model."""

    model: str | None = None
    use_reasoning: str | bool = "auto"  # "auto": decided per prompt by the router
    reasoning_effort: str = "medium"


@attrs.frozen(kw_only=True)
class Category:
    name: str
    description: str
    system_prompt: str
    routing: RoutingPolicy
    examples: tuple[str, ...]


@attrs.frozen(kw_only=True)
class Taxonomy:
    categories: tuple[Category, ...]
    source: str

    @property
    def names(self) -> list[str]:
        return [category.name for category in self.categories]

    def index_of(self, name: str) -> int | None:
        return next((i for i, c in enumerate(self.categories) if c.name == name), None)

    def examples_with_labels(self) -> tuple[list[str], list[int]]:
        texts, labels = [], []
        for index, category in enumerate(self.categories):
            texts.extend(category.examples)
            labels.extend([index] * len(category.examples))
        return texts, labels

    def content_hash(self) -> str:
        """Changes whenever names, order or examples change: the key of the embedding cache."""
        payload = json.dumps([[c.name, list(c.examples)] for c in self.categories], ensure_ascii=False)
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def default_system_prompt(name: str) -> str:
    return f"You are an expert assistant for questions about {name}. Answer accurately and concisely."


def load_taxonomy(path: str | Path | None = None) -> Taxonomy:
    """The built-in taxonomy when `path` is None; otherwise a .csv, .yaml or .yml file."""
    if path is None:
        resource = importlib.resources.files(__package__) / BUILTIN_NAME
        return parse_yaml(resource.read_text(encoding="utf-8"), source=f"<built-in {BUILTIN_NAME}>")
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".yaml", ".yml"):
        raise TaxonomyError(path, f"unsupported file type {suffix or '(none)'!r}; use .csv, .yaml or .yml")
    text = read_user_text(path, TaxonomyError)
    return parse_csv(text, source=str(path)) if suffix == ".csv" else parse_yaml(text, source=str(path))


# ---------------------------------------------------------------- CSV


def parse_csv(text: str, source: str) -> Taxonomy:
    reader = csv.reader(text.splitlines(keepends=True), strict=True)
    try:
        header = next(reader)
    except StopIteration:
        raise TaxonomyError(source, "file is empty; expected a header with at least category,text", 1) from None
    except csv.Error as exc:
        raise TaxonomyError(source, f"malformed CSV: {exc}", 1) from exc
    columns = [name.strip().lower() for name in header]
    missing = [name for name in ("category", "text") if name not in columns]
    if missing:
        raise TaxonomyError(source, f"header lacks column(s) {', '.join(missing)}; found {header}", 1)
    repeated = [name for name in ("category", "text") if columns.count(name) > 1]
    if repeated:  # which one holds the data would be a guess
        raise TaxonomyError(source, f"header repeats column(s) {', '.join(repeated)}; found {header}", 1)
    category_at, text_at = columns.index("category"), columns.index("text")

    examples: dict[str, list[str]] = {}
    while True:
        start = reader.line_num + 1  # a quoted field may span lines: report where the record begins
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            raise TaxonomyError(source, f"malformed CSV: {exc}", start) from exc
        line = start
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(header):
            raise TaxonomyError(source, f"expected {len(header)} fields, found {len(row)}", line)
        name, example = row[category_at].strip(), row[text_at].strip()
        if not name:
            raise TaxonomyError(source, "empty category", line)
        _check_example(example, source, line)
        examples.setdefault(name, []).append(example)

    categories = tuple(
        Category(
            name=name,
            description=name,
            system_prompt=default_system_prompt(name),
            routing=RoutingPolicy(),
            examples=tuple(texts),
        )
        for name, texts in examples.items()
    )
    return _checked(Taxonomy(categories=categories, source=source))


# ---------------------------------------------------------------- YAML


class _Mapping(dict):
    line: int


class _Sequence(list):
    lines: list[int]


class _LineLoader(yaml.SafeLoader):
    """SafeLoader that remembers the line of every mapping and sequence item."""


def _construct_mapping(loader: _LineLoader, node: yaml.MappingNode) -> _Mapping:
    mapping = _Mapping(loader.construct_mapping(node, deep=True))
    mapping.line = node.start_mark.line + 1
    return mapping


def _construct_sequence(loader: _LineLoader, node: yaml.SequenceNode) -> _Sequence:
    sequence = _Sequence(loader.construct_sequence(node, deep=True))
    sequence.lines = [item.start_mark.line + 1 for item in node.value]
    return sequence


_LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
_LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG, _construct_sequence)


def parse_yaml(text: str, source: str) -> Taxonomy:
    try:
        document = yaml.load(text, Loader=_LineLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        raise TaxonomyError(source, f"invalid YAML: {exc.problem or exc}", line) from exc
    except yaml.YAMLError as exc:
        raise TaxonomyError(source, f"invalid YAML: {exc}") from exc
    if not isinstance(document, dict) or not isinstance(document.get("categories"), list):
        raise TaxonomyError(source, "expected a mapping with a 'categories' list at the top level", 1)
    _refuse_unknown_keys(document, TOP_LEVEL_KEYS, "at the top level", source, 1)
    entries = document["categories"]
    seen: set[str] = set()
    categories = []
    for entry, line in zip(entries, entries.lines):
        category = _category_from_yaml(entry, source, line)
        if category.name in seen:
            raise TaxonomyError(source, f"duplicate category {category.name!r}", line)
        seen.add(category.name)
        categories.append(category)
    return _checked(Taxonomy(categories=tuple(categories), source=source))


def _category_from_yaml(entry: object, source: str, line: int) -> Category:
    if not isinstance(entry, dict):
        raise TaxonomyError(source, "each category must be a mapping with name, description, examples", line)
    name = entry.get("name")
    if not isinstance(name, str) or not name.strip():
        raise TaxonomyError(source, "category needs a non-empty string 'name'", line)
    name = name.strip()
    hint = " (routing settings go under 'routing:')" if any(key in ROUTING_KEYS for key in entry) else ""
    _refuse_unknown_keys(entry, CATEGORY_KEYS, f"in category {name!r}", source, line, hint)
    description = _optional_string(entry, "description", source, line) or name
    system_prompt = _optional_string(entry, "system_prompt", source, line) or default_system_prompt(name)
    examples = entry.get("examples")
    if not isinstance(examples, list) or not examples:
        raise TaxonomyError(source, f"category {name!r} needs a non-empty 'examples' list", line)
    for example, example_line in zip(examples, examples.lines):
        if not isinstance(example, str):
            raise TaxonomyError(source, f"example in {name!r} must be a string, got {type(example).__name__}", example_line)
        _check_example(example.strip(), source, example_line)
    return Category(
        name=name,
        description=description,
        system_prompt=system_prompt,
        routing=_routing_from_yaml(entry.get("routing", {}), name, source, line),
        examples=tuple(example.strip() for example in examples),
    )


def _routing_from_yaml(raw: object, name: str, source: str, line: int) -> RoutingPolicy:
    if not isinstance(raw, dict):
        raise TaxonomyError(source, f"'routing' of {name!r} must be a mapping", getattr(raw, "line", line))
    line = getattr(raw, "line", line)
    _refuse_unknown_keys(raw, ROUTING_KEYS, f"in the routing of {name!r}", source, line)
    model = raw.get("model")
    if model is not None and (not isinstance(model, str) or not model.strip()):
        raise TaxonomyError(source, f"routing.model of {name!r} must be a non-empty string", line)
    use_reasoning = raw.get("use_reasoning", "auto")
    if use_reasoning not in REASONING_MODES:
        raise TaxonomyError(source, f"routing.use_reasoning of {name!r} must be auto, true or false", line)
    effort = raw.get("reasoning_effort", "medium")
    if effort not in REASONING_EFFORTS:
        raise TaxonomyError(source, f"routing.reasoning_effort of {name!r} must be one of {REASONING_EFFORTS}", line)
    return RoutingPolicy(model=model.strip() if model else None, use_reasoning=use_reasoning, reasoning_effort=effort)


def _refuse_unknown_keys(
    mapping: dict, allowed: tuple[str, ...], where: str, source: str, line: int, hint: str = ""
) -> None:
    unknown = [str(key) for key in mapping if key not in allowed]
    if unknown:
        raise TaxonomyError(
            source, f"unknown key(s) {', '.join(unknown)} {where}; allowed: {', '.join(allowed)}{hint}", line
        )


def _optional_string(entry: dict, key: str, source: str, line: int) -> str | None:
    value = entry.get(key)
    if value is not None and not isinstance(value, str):
        raise TaxonomyError(source, f"'{key}' must be a string", line)
    return value.strip() if value else None


# ---------------------------------------------------------------- shared checks


def _check_example(example: str, source: str, line: int) -> None:
    if not example:
        raise TaxonomyError(source, "empty example text", line)
    if len(example) > MAX_EXAMPLE_CHARS:
        raise TaxonomyError(source, f"example text longer than {MAX_EXAMPLE_CHARS} characters", line)


def _checked(taxonomy: Taxonomy) -> Taxonomy:
    if len(taxonomy.categories) < 2:
        found = ", ".join(taxonomy.names) or "none"
        raise TaxonomyError(taxonomy.source, f"a taxonomy needs at least 2 categories (found {found})")
    return taxonomy
