from __future__ import annotations

import textwrap

import pytest

from hexmcp.tools.classification import TaxonomyError
from hexmcp.tools.classification.taxonomy import load_taxonomy

BUILTIN_ORDER = ["math", "science", "technology", "history", "general"]


def write(tmp_path, name: str, content: str):
    path = tmp_path / name
    path.write_text(textwrap.dedent(content).lstrip("\n"), encoding="utf-8")
    return path


def test_builtin_taxonomy_order_prompts_and_examples():
    taxonomy = load_taxonomy()
    assert taxonomy.names == BUILTIN_ORDER
    for category in taxonomy.categories:
        assert len(category.examples) >= 40, category.name
        assert len(set(category.examples)) == len(category.examples), category.name
        assert category.system_prompt and category.description and category.routing.model


def test_csv_order_is_first_appearance_and_extra_columns_are_ignored(tmp_path):
    path = write(
        tmp_path,
        "t.csv",
        """
        description,category,text
        ignored,sports,Who won the match?
        ignored,cooking,"How long do I boil an egg,
        for a soft yolk?"
        ,sports,Offside rule explained
        """,
    )
    taxonomy = load_taxonomy(path)
    assert taxonomy.names == ["sports", "cooking"]
    assert taxonomy.categories[0].examples == ("Who won the match?", "Offside rule explained")
    assert "\n" in taxonomy.categories[1].examples[0]


def test_yaml_taxonomy_with_policy(tmp_path):
    path = write(
        tmp_path,
        "t.yaml",
        """
        categories:
          - name: legal
            description: Law questions
            system_prompt: You are a lawyer.
            routing: {model: big-model, use_reasoning: true, reasoning_effort: high}
            examples: ["Is this contract valid?", "What is tort law?"]
          - name: chat
            examples: [hello]
        """,
    )
    taxonomy = load_taxonomy(path)
    assert taxonomy.names == ["legal", "chat"]
    legal, chat = taxonomy.categories
    assert legal.routing.model == "big-model" and legal.routing.use_reasoning is True
    assert chat.routing.model is None and chat.routing.use_reasoning == "auto"
    assert chat.system_prompt  # a default is provided


@pytest.mark.parametrize(
    ("name", "content", "line", "reason"),
    [
        ("no_text.csv", "category,label\na,b\n", 1, "lacks column(s) text"),
        ("empty.csv", "", 1, "empty"),
        ("empty_category.csv", "category,text\na,hello\n,world\n", 3, "empty category"),
        ("empty_text.csv", "category,text\na,hello\nb,  \n", 3, "empty example"),
        ("fields.csv", "category,text\na,hello\nb,world,extra\n", 3, "expected 2 fields"),
        ("multiline.csv", 'category,text\na,"multi\nline"\nb,\n', 4, "empty example"),
        ("one.csv", "category,text\na,hello\na,again\n", None, "at least 2 categories"),
        ("syntax.yaml", "categories:\n  - name: a\n    examples: [x\n  - name: b\n", 4, "invalid YAML"),
        ("top.yaml", "- just a list\n", 1, "'categories' list"),
        ("noname.yaml", "categories:\n  - name: a\n    examples: [x]\n  - description: d\n    examples: [y]\n", 4, "'name'"),
        ("dup.yaml", "categories:\n  - name: a\n    examples: [x]\n  - name: a\n    examples: [y]\n", 4, "duplicate"),
        ("noex.yaml", "categories:\n  - name: a\n    examples: []\n  - name: b\n    examples: [y]\n", 2, "non-empty 'examples'"),
        ("badex.yaml", "categories:\n  - name: a\n    examples:\n      - ok\n      - {x: 1}\n  - name: b\n    examples: [y]\n", 5, "must be a string"),
        ("policy.yaml", "categories:\n  - name: a\n    routing: {use_reasoning: maybe}\n    examples: [x]\n  - name: b\n    examples: [y]\n", 3, "use_reasoning"),
        ("bad.txt", "category,text\n", None, "unsupported file type"),
        ("twice.csv", "category,text,text\na,x,y\nb,z,w\n", 1, "repeats column(s) text"),
        ("flat_model.yaml", "categories:\n  - name: a\n    model: m\n    examples: [x]\n  - name: b\n    examples: [y]\n",
         2, "unknown key(s) model in category 'a'"),
        ("routing_key.yaml", "categories:\n  - name: a\n    routing:\n      modle: m\n    examples: [x]\n"
         "  - name: b\n    examples: [y]\n", 4, "unknown key(s) modle in the routing of 'a'"),
        ("top_key.yaml", "catgories: []\ncategories:\n  - name: a\n    examples: [x]\n  - name: b\n    examples: [y]\n",
         1, "unknown key(s) catgories at the top level"),
    ],
)
def test_bad_files_name_file_line_and_reason(tmp_path, name, content, line, reason):
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    with pytest.raises(TaxonomyError) as info:
        load_taxonomy(path)
    error = info.value
    assert error.path == str(path)
    assert error.line == line
    assert reason in error.reason
    assert str(path) in str(error) and reason in str(error)
    if line is not None:
        assert f"line {line}" in str(error)


def test_missing_and_non_utf8_files(tmp_path):
    with pytest.raises(TaxonomyError, match="cannot read"):
        load_taxonomy(tmp_path / "absent.csv")
    path = tmp_path / "latin1.csv"
    path.write_bytes("category,text\na,caf\xe9\n".encode("latin-1"))
    with pytest.raises(TaxonomyError, match="UTF-8"):
        load_taxonomy(path)


def test_content_hash_tracks_examples_and_order(tmp_path):
    a = write(tmp_path, "a.csv", "category,text\nx,one\ny,two\n")
    b = write(tmp_path, "b.csv", "category,text\ny,two\nx,one\n")
    c = write(tmp_path, "c.csv", "category,text\nx,one\ny,two\n")
    assert load_taxonomy(a).content_hash() == load_taxonomy(c).content_hash()
    assert load_taxonomy(a).content_hash() != load_taxonomy(b).content_hash()


def test_misplaced_routing_key_points_to_routing(tmp_path):
    path = tmp_path / "t.yaml"
    path.write_text("categories:\n  - name: a\n    use_reasoning: false\n    examples: [x]\n"
                    "  - name: b\n    examples: [y]\n", encoding="utf-8")
    with pytest.raises(TaxonomyError, match="routing settings go under 'routing:'"):
        load_taxonomy(path)
