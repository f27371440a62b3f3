"""list_categories' results are not checked against its output schema on every call (ADR 0012): its
answer is the taxonomy's strings, checked when the taxonomy loads. These properties are that check, moved
to test time: whatever taxonomy file loads, YAML or CSV, the tool's answer matches the output schema the
tool declares, and the answer is the taxonomy in class-index order. A taxonomy the loader refuses is out
of scope (it stops start-up with its own error)."""

from __future__ import annotations

import asyncio
import csv
import io
from pathlib import Path

import yaml
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from hexmcp.core import McpServer
from hexmcp.core.schemas.validation import compile_validator
from hexmcp.tools.classification import ClassificationConfig, TaxonomyError
from hexmcp.tools.classification.mcp_tools import register_classification_tools
from hexmcp.tools.classification.taxonomy import load_taxonomy

# Any text a user may put in a taxonomy file, control characters and non-BMP characters included.
TEXT = st.text(st.characters(blacklist_categories=("Cs",)), min_size=0, max_size=40)
WORDS = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=40).map(lambda text: "x" + text)
# What loads (the property is about those; the loader's refusals have tests of their own): any text,
# blank or not, for what the loader defaults when blank.
CATEGORY = st.fixed_dictionaries(
    {"name": WORDS, "examples": st.lists(WORDS, min_size=1, max_size=3)},
    optional={"description": TEXT, "system_prompt": TEXT})
SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                           HealthCheck.filter_too_much])


def answer_for(path: Path) -> dict:
    server = McpServer("t", "1")
    register_classification_tools(server, ClassificationConfig(taxonomy_path=path))
    tool = server.tools.get("list_categories")
    assert tool.output_checked_in_tests  # what this file stands in for
    answer = asyncio.run(tool.handler({}, None))
    validator = compile_validator(tool.definition.output_schema)
    errors = [error.message for error in validator.iter_errors(answer)]
    assert not errors, errors
    return answer


def loaded(path: Path):
    try:
        return load_taxonomy(path)
    except TaxonomyError:
        assume(False)


@SETTINGS
@given(categories=st.lists(CATEGORY, min_size=2, max_size=5))
def test_any_yaml_taxonomy_that_loads_answers_within_the_schema(tmp_path_factory, categories):
    path = tmp_path_factory.mktemp("taxonomy") / "taxonomy.yaml"
    path.write_text(yaml.safe_dump({"categories": categories}, allow_unicode=True), encoding="utf-8")
    taxonomy = loaded(path)
    answer = answer_for(path)
    assert answer["categories"] == [category.name for category in taxonomy.categories]
    assert answer["category_descriptions"] == {c.name: c.description for c in taxonomy.categories}
    assert answer["category_system_prompts"] == {c.name: c.system_prompt for c in taxonomy.categories}


@SETTINGS
@given(rows=st.lists(st.tuples(st.one_of(WORDS, TEXT), st.one_of(WORDS, TEXT)), min_size=2, max_size=8))
def test_any_csv_taxonomy_that_loads_answers_within_the_schema(tmp_path_factory, rows):
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(["category", "text"])
    writer.writerows(rows)
    path = tmp_path_factory.mktemp("taxonomy") / "taxonomy.csv"
    path.write_text(buffer.getvalue(), encoding="utf-8")
    taxonomy = loaded(path)
    answer = answer_for(path)
    assert answer["categories"] == [category.name for category in taxonomy.categories]


def test_the_answer_is_built_once_per_taxonomy_and_the_same_for_every_call():
    server = McpServer("t", "1")
    service = register_classification_tools(server, ClassificationConfig())
    handler = server.tools.get("list_categories").handler
    first, second = asyncio.run(handler({}, None)), asyncio.run(handler({}, None))
    assert first is second and first == service.list_categories()


def test_classify_text_keeps_its_check_on_every_call():
    """Its floats come from the model (a probability may round past 1): the schema is checked per call."""
    server = McpServer("t", "1")
    register_classification_tools(server, ClassificationConfig())
    assert server.tools.get("classify_text").output_checked_at_run_time
