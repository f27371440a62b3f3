"""Markdown-family markup cleaned from what is indexed (MDX's syntax alone is served: tools/knowledge/
markdown_markup.py, ADR 0607; the forms measured beside it: bench/markdown_markup_variants.py): the constructs of
the public sets' real pages (Kubernetes' Hugo shortcodes, Docusaurus' and Jest's MDX), their invariants, the
served chunking, and the bench's switch (bench/relevance_markdown_markup.py)."""

from __future__ import annotations

import itertools
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from hexmcp.tools.knowledge.markdown_markup import may_hold_mdx_syntax
from bench.markdown_markup_variants import clean_markdown
from bench.relevance_markdown_markup import markup_cleaned
from hexmcp.tools.knowledge import builder, chunking
from hexmcp.tools.knowledge.readers import parse_text

# --- the corpora's syntax, construct by construct ----------------------------------------------------------


def test_a_link_keeps_its_text_and_the_words_of_its_target_an_image_its_alt_and_code_its_content() -> None:
    assert clean_markdown("Read [the Pod overview](/docs/concepts/workloads/pods/#pod-os) first.") == \
        "Read the Pod overview first."
    # the variant: a target's words once per passage; an address shown as its own text, a file or a parent adds none
    assert clean_markdown("Read [the Pod overview](/docs/concepts/workloads/pods/#pod-os) first.", link_words=True) \
        == "Read the Pod overview pods pod os first."
    assert clean_markdown("[Drain](/docs/tasks/safely-drain-node/) it, [drain](/docs/tasks/safely-drain-node/) "
                          "again, [up](../), [a file](pod.yaml), <https://kubernetes.io/docs/>.", link_words=True) == \
        "Drain safely drain node it, drain again, up, a file, https://kubernetes.io/docs/."
    assert clean_markdown("[x](Configuration.md#testenvironment-string) [y](https://github.com/shelfio/jest-mongodb)",
                          link_words=True) == "x Configuration testenvironment string y jest mongodb"
    assert clean_markdown("![Pod creation diagram](/images/docs/pod.svg)") == "Pod creation diagram"
    assert clean_markdown("Run `kubectl get pods --all-namespaces` **now**, _then_ ~~never~~.") == \
        "Run kubectl get pods --all-namespaces now, then never."
    assert clean_markdown("See <https://kubernetes.io/docs/>.") == "See https://kubernetes.io/docs/."


def test_code_blocks_keep_their_content_without_fences_or_info_strings() -> None:
    fenced = "Install it:\n\n```shell\nnpm install --save-dev jest\n```\n"
    assert clean_markdown(fenced) == "Install it:\nnpm install --save-dev jest"
    assert clean_markdown("Then:\n\n    kubectl apply -f pod.yaml\n") == "Then:\nkubectl apply -f pod.yaml"
    # markup inside code is the code: kept as written
    assert clean_markdown("```jsx\n<TabItem value=\"npm\">{/* x */}</TabItem>\n```") == \
        '<TabItem value="npm">{/* x */}</TabItem>'
    assert clean_markdown("Use `<Tabs>` here.") == "Use <Tabs> here."


def test_lists_quotes_headings_and_tables_lose_their_markers() -> None:
    assert clean_markdown("## Before you begin\n\n- first item\n- second item\n\n1. one\n\n> a quote") == \
        "Before you begin\nfirst item\n\nsecond item\n\none\n\na quote"
    assert clean_markdown("| Field | Type |\n|---|---|\n| `spec` | object |") == "Field Type\n\nspec object"
    assert clean_markdown("Text<!-- a comment -->\n\n<!-- hidden\nblock -->\n\nMore.") == "Text\n\nMore."


def test_hugo_shortcodes_keep_their_visible_text() -> None:
    assert clean_markdown('A {{< glossary_tooltip text="Pod" term_id="pod" >}} runs on a '
                          '{{< glossary_tooltip term_id="node" >}}.') == "A Pod runs on a node."
    assert clean_markdown('{{< note >}}\nSome **pods** are static.\n{{< /note >}}') == "Some pods are static."
    assert clean_markdown('## {{% heading "prerequisites" %}}\n\n{{< include "task-tutorial-prereqs.md" >}} '
                          '{{< version-check >}}') == "prerequisites"
    assert clean_markdown('{{< feature-state for_k8s_version="v1.24" state="stable" >}}') == "v1.24 stable"
    assert clean_markdown('{{% code_sample file="pods/simple-pod.yaml" %}}') == "pods/simple-pod.yaml"
    assert clean_markdown('{{< tabs name="k8s_install" >}}\n{{% tab name="Linux" %}}\nRun it.\n{{% /tab %}}\n'
                          '{{< /tabs >}}') == "Linux\nRun it."
    assert clean_markdown('{{< figure src="/images/docs/pod.svg" caption="A multi-container [Pod](/p/)" >}}') == \
        "A multi-container Pod"
    assert clean_markdown("Version {{< skew currentVersion >}} and {{< param \"version\" >}}.") == "Version  and ."
    assert clean_markdown("{{< comment >}}\nTODO: not rendered\n{{< /comment >}}\nShown.") == "Shown."


def test_mdx_imports_jsx_admonitions_and_comments_go_and_their_text_stays() -> None:
    page = ("import Tabs from '@theme/Tabs';\nimport TabItem from '@theme/TabItem';\n\n"
            '<Tabs groupId="package-manager">\n<TabItem value="npm" label="npm">\n\n'
            "```bash\nnpm install --save-dev jest\n```\n\n</TabItem>\n</Tabs>\n")
    assert clean_markdown(page) == "npm\nnpm install --save-dev jest"
    assert clean_markdown("export const Highlight = ({children}) => children;\n\nProse.") == "Prose."
    assert clean_markdown(":::note How to upgrade\n\nRead *this*.\n\n:::") == "How to upgrade\nRead this."
    assert clean_markdown(":::tip[Use the CLI]\n\nRun it.\n:::") == "Use the CLI\nRun it."
    assert clean_markdown("Text {/* cSpell:ignore Yhyx */} here.") == "Text  here."
    assert clean_markdown("## Configuring plugins {#configuring-plugins}") == "Configuring plugins"
    assert clean_markdown('<Admonition type="note" title={title}>\nInside text\n</Admonition>') == "Inside text"
    assert clean_markdown("Press <kbd>Ctrl</kbd> + <kbd>C</kbd>.") == "Press Ctrl + C."
    # "import" opening a prose paragraph, or a statement inside code, is not ESM
    assert clean_markdown("import the module first.") == "import the module first."
    assert clean_markdown("```js\nimport {defineConfig} from 'jest';\n```") == "import {defineConfig} from 'jest';"


def test_keep_shortcodes_cleans_all_but_hugo_shortcodes_which_stay_as_written() -> None:
    source = ('## {{% heading "prerequisites" %}}\n\nA {{<glossary_tooltip text="Pod" term_id="pod">}} runs on '
              "[a node](/docs/nodes/) **now**.\n\n{{< note >}}\n<kbd>Ctrl</kbd> `{{< x >}}`\n{{< /note >}}")
    assert clean_markdown(source, keep_shortcodes=True) == \
        ('{{% heading "prerequisites" %}}\nA {{<glossary_tooltip text="Pod" term_id="pod">}} runs on a node now.\n'
         "{{< note >}}\nCtrl {{< x >}}\n{{< /note >}}")
    assert clean_markdown("{{< comment >}}\nTODO\n{{< /comment >}}", keep_shortcodes=True) == \
        "{{< comment >}}\nTODO\n{{< /comment >}}"


def test_mdx_only_cleans_mdx_syntax_and_leaves_markdown_links_and_shortcodes_as_written() -> None:
    page = ("import Tabs from '@theme/Tabs';\nimport TabItem from '@theme/TabItem';\n\n"
            '<Tabs groupId="package-manager">\n<TabItem value="npm" label="npm">\n\n'
            "```bash\nnpm install --save-dev <jest>\n```\n\n</TabItem>\n</Tabs>\n")
    assert clean_markdown(page, mdx_only=True) == "npm\n\n```bash\nnpm install --save-dev <jest>\n```"
    assert clean_markdown(":::tip[Use the CLI]\n\nRun **it**, see [this](/docs/x.md).\n:::", mdx_only=True) == \
        "Use the CLI\n\nRun **it**, see [this](/docs/x.md)."
    assert clean_markdown("## Plugins {#plugins}\n\nText {/* cSpell:ignore x */} <kbd>C</kbd> `<Tabs>`.",
                          mdx_only=True) == "## Plugins\n\nText  C `<Tabs>`."
    assert clean_markdown('A {{<glossary_tooltip text="Pod" term_id="pod">}}. <!-- kept -->', mdx_only=True) == \
        'A {{<glossary_tooltip text="Pod" term_id="pod">}}. <!-- kept -->'
    assert clean_markdown("export const X = 1;\n\nimport the module.", mdx_only=True) == "import the module."
    # a passage that starts inside a code block keeps it, without the fence put in front to read it
    assert clean_markdown("<b>x</b>\n```\n\nText <b>y</b>", open_fence="```", mdx_only=True) == \
        "<b>x</b>\n```\n\nText y"


def test_markdown_passages_are_indexed_without_mdx_syntax_and_cited_as_written() -> None:
    source = ("---\ntitle: Install\n---\nimport Tabs from '@theme/Tabs';\n\n# Install\n\n"
              '<Tabs>\n<TabItem value="npm" label="npm">\n\nRun [it](/docs/x/) {/* note */}:\n\n```bash\n'
              + "npm install <pkg>\n" * 80 + "```\n\n</TabItem>\n</Tabs>\n\n:::note Why\n\nBecause.\n\n:::\n")
    document = parse_text("install.mdx", source, ".mdx")
    passages = chunking.chunk_document(document)
    assert "".join(p.text for p in passages).replace("\n", "") in source.replace("\n", "")  # cited as written
    # a passage of markup alone (the imports before the first heading) keeps its source, as measured
    assert passages[0].indexed_text() == "Install\n\nimport Tabs from '@theme/Tabs';"
    assert passages[1].indexed_text().startswith("Install > Install\n\n# Install\n\nnpm\n\nRun [it](/docs/x/) :")
    indexed = "".join(p.indexed_text() for p in passages[1:])
    assert not any(mdx in indexed for mdx in ("<Tab", "{/*", ":::", "import Tabs"))
    # the passage that starts inside the code block keeps its code as written, the prose after it is cleaned
    last = passages[-1].indexed_text()
    assert "npm install <pkg>" in last and last.endswith("Why\n\nBecause.")
    # plain text is indexed as before
    assert chunking.chunk_document(parse_text("a.txt", "Plain <b>text</b>.", ".txt"))[0].indexed_body is None


def test_the_bench_switch_indexes_markdown_passages_clean_cites_them_as_written_and_undoes_itself() -> None:
    source = ('---\ntitle: Pods\n---\n# Pods\n\nA {{< glossary_tooltip text="Pod" term_id="pod" >}} is the '
              "smallest [deployable unit](/docs/concepts/workloads/).\n\n```yaml\n"
              + "echo [pods](x)\n" * 100 + "```\n")
    document = parse_text("pods.md", source, ".md")
    served = chunking.chunk_document(document)
    restore = markup_cleaned()
    try:
        assert builder.chunk_document is chunking.chunk_document
        passages = chunking.chunk_document(document)
    finally:
        restore()
    assert builder.chunk_document is chunking.chunk_document
    assert [(p.passage_id, p.text, p.start, p.end) for p in passages] == \
        [(p.passage_id, p.text, p.start, p.end) for p in served]  # cited as written
    assert passages[0].indexed_text().startswith(
        "Pods > Pods\n\nPods\nA Pod is the smallest deployable unit.\necho [pods](x)")
    assert not any("```" in p.indexed_text() or "{{<" in p.indexed_text() for p in passages)
    # a passage that starts inside the code block is read as code, not as prose
    assert len(passages) == 2 and passages[-1].indexed_body == passages[-1].text.rstrip("`").strip()
    # a variant's vectors are cached apart exactly when it embeds other text (here MDX-only reads as served)
    readings = {"served": served, "whole": passages}
    for variant in ("mdx_only", "keep_shortcodes"):
        restore = markup_cleaned(variant)
        try:
            readings[variant] = chunking.chunk_document(document)
        finally:
            restore()
    assert "{{< glossary_tooltip" in readings["keep_shortcodes"][0].indexed_text()
    for one, other in itertools.combinations(readings.values(), 2):
        same = [p.indexed_text() for p in one] == [p.indexed_text() for p in other]
        assert (builder.vectors_key("model", one) == builder.vectors_key("model", other)) == same
    assert len({builder.vectors_key("model", reading) for reading in readings.values()}) == 3


# --- invariants --------------------------------------------------------------------------------------------

_WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", min_size=1, max_size=12)
_PROSE_LINE = st.lists(_WORD, min_size=1, max_size=12).map(" ".join)
_PARAGRAPH = st.lists(_PROSE_LINE, min_size=1, max_size=4).map("\n".join)
_PROSE = st.lists(_PARAGRAPH, min_size=1, max_size=5).map("\n\n".join)


def _marked_up(word: str, form: int) -> str:
    """A word inside one of the constructs whose visible text is the word."""
    return (word, f"[{word}](/docs/{word.lower()}/#x)", f"*{word}*", f"**{word}**", f"`{word}`",
            f'{{{{< glossary_tooltip text="{word}" term_id="t" >}}}}', f"<kbd>{word}</kbd>", f"![{word}](i.png)",
            f"{word}{{{{< note >}}}}", f'<TabItem value="v" label="{word}">')[form]


_MARKED_UP = st.lists(st.tuples(_WORD, st.integers(0, 9)).map(lambda t: (t[0], _marked_up(*t))), min_size=1,
                      max_size=20)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=400))
def test_it_never_raises_nor_grows_the_text(text: str) -> None:
    for switch in ({}, {"keep_shortcodes": True}, {"mdx_only": True}):
        assert len(clean_markdown(text, **switch)) <= len(text) + 2


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(["[", "]", "(", ")", "<", ">", "{{<", ">}}", "{{%", "%}}", "/", "`", "```", "*",
                                  ":::", "{/*", "*/}", "<!--", "-->", "\n", "\n\n", " ", "#", "-", "|", "word",
                                  'text="x"', "import ", "from '", "=", "\\", "&amp;", "    "]),
                max_size=60).map("".join))
def test_markup_fragments_never_make_it_raise_nor_grow(text: str) -> None:
    assert len(clean_markdown(text)) <= len(text) + 2
    assert len(clean_markdown(text, link_words=True)) <= len(text) + 2
    assert len(clean_markdown(text, keep_shortcodes=True)) <= len(text) + 2
    assert len(clean_markdown(text, mdx_only=True)) <= len(text) + 2


@settings(max_examples=200, deadline=None)
@given(_PROSE)
def test_plain_prose_keeps_every_word_and_is_left_as_it_is(text: str) -> None:
    cleaned = clean_markdown(text)
    assert cleaned.split() == text.split()
    assert clean_markdown(cleaned) == cleaned


@settings(max_examples=200, deadline=None)
@given(_MARKED_UP)
def test_marked_up_words_keep_their_visible_text_and_cleaning_twice_changes_nothing(
        words: list[tuple[str, str]]) -> None:
    source = " ".join(marked for _, marked in words)
    cleaned = clean_markdown(source)
    assert re.findall(r"\S+", cleaned) == [word for word, _ in words]
    assert clean_markdown(cleaned) == cleaned
    # the variant: a link's target adds its words after the link's text, once per target
    expected: list[str] = []
    targets: set[str] = set()
    for word, marked in words:
        expected.append(word)
        if marked.startswith("[") and word.lower() not in targets:
            targets.add(word.lower())
            expected += [word.lower(), "x"]
    assert re.findall(r"\S+", clean_markdown(source, link_words=True)) == expected


@settings(max_examples=200, deadline=None)
@given(_MARKED_UP)
def test_the_variants_leave_what_they_do_not_clean_as_written(words: list[tuple[str, str]]) -> None:
    source = " ".join(marked for _, marked in words)
    # keep_shortcodes: each shortcode stays, every other construct shows its visible text alone
    kept = re.findall(r"\S+", clean_markdown(source, keep_shortcodes=True))
    assert kept == [part for word, marked in words for part in (marked.split() if "{{<" in marked else [word])]
    # mdx_only: Markdown and shortcodes as written, a JSX/HTML tag by its visible text
    mdx = " ".join(word if marked.startswith("<") else marked for word, marked in words)
    assert clean_markdown(source, mdx_only=True).split() == mdx.split()
    assert clean_markdown(mdx, mdx_only=True).split() == mdx.split()


@given(st.lists(st.sampled_from(["word", " ", "\n", "\n\n", "  \n", "\t", "<", "{", "/", "*", "#", ":", "import",
                                 "export", "`", "```", "-", "[x](y)", "{{< note >}}", "a", "B", "\r\n"]), max_size=40)
       .map("".join))
@settings(max_examples=400, deadline=None)
def test_a_passage_without_an_mdx_hint_would_only_change_in_whitespace(text: str) -> None:
    # chunking skips the MDX-only cleaning of such a passage: it must not have changed a word the retrievers read
    if not may_hold_mdx_syntax(text):
        assert clean_markdown(text, mdx_only=True).split() == text.split()
