"""Markdown-family markup cleaned from what the retrievers read of a Markdown passage (its passage text stays
the exact source slice that `fetch` and citations show), as rst_markup.py does for reST.

Served: `mdx_only`, MDX's syntax alone (chunking.py, ADR 0607): it gains Jest and costs no set. The whole
cleaning below (Markdown's own markup, links and Hugo shortcodes too) gains Docusaurus and Jest but costs
Kubernetes, with or without the shortcodes kept; bench/relevance_markdown_markup.py measures every form.

What Markdown defines is read from markdown-it-py's own token stream, never re-parsed with regular expressions:
a link keeps its text and loses its URL (with `link_words`, the words of the URL's last path segment and
fragment follow the text, once per passage: the variant measured), an image keeps its alt text, emphasis its
words, a table its cells, a code span and a code block their content (users search for commands and option
names); list and quote markers, heading hashes, fences' info strings and link reference definitions go.

What is not Markdown, but is in the documentation written for a site generator, is cleaned by its own syntax,
keeping the text a reader of the built page sees:
- Hugo shortcodes, `{{< name args >}}` / `{{% name args %}}` and their closing forms `{{< /name >}}`: the
  shortcode goes, the values of its visible attributes stay (a glossary tooltip's `text="Pod"`, else its
  `term_id`; a figure's caption; a tab's name; a code sample's file), and a heading shortcode's title;
  `{{< comment >}}…{{< /comment >}}` is not rendered, so it goes whole. Hugo expands shortcodes before the
  Markdown is read, and so does this module.
- MDX: a paragraph that opens with an `import`/`export` statement goes; JSX and HTML tags go, keeping their
  visible attributes (title, label, alt) and the text between a tag pair; `{/* comments */}` go, as do
  HTML comments and Docusaurus' `{#heading-id}` anchors.
- `:::note Title` admonition fences keep their title; the type word goes, as Hugo's `{{< note >}}` does.

A passage is a slice of its page, so a tag or fence may open in one passage and close in the next. A passage
that starts inside a fenced code block is read with the fence reopened in front (`open_fences`), or its code
would be read as prose and the prose after the fence's end as code; any other construct cut in two is cleaned
half by half, and what the parser cannot place stays as text (never dropped).
"""

from __future__ import annotations

import bisect
import re
from typing import Any, Callable, Sequence

# A shortcode's delimiters match ({{< … >}} or {{% … %}}); its arguments may span lines (a figure's caption).
_SHORTCODE = re.compile(r"\{\{[<%]\s*(/?)\s*([A-Za-z_][\w-]*)(.*?)\s*[>%]\}\}", re.DOTALL)
_COMMENT_SHORTCODE = re.compile(r"\{\{[<%]\s*comment\s*[>%]\}\}.*?\{\{[<%]\s*/comment\s*[>%]\}\}", re.DOTALL)
_ATTRIBUTE = re.compile(r"""([A-Za-z_:][\w:.-]*)\s*=\s*(?:"([^"]*)"|'([^']*)'|\{([^{}]*)\}|([^\s"'=<>`{}]+))""")
_POSITIONAL = re.compile(r""""([^"]*)"|'([^']*)'""")
#: Attributes whose value a reader sees on the built page (a tag's or a shortcode's).
_VISIBLE = frozenset({"text", "title", "caption", "alt", "label", "prepend", "file", "state", "for_k8s_version"})
#: Shortcodes that show an attribute only they make visible.
_VISIBLE_BY_SHORTCODE = {"tab": frozenset({"name"})}
#: Shortcodes whose quoted positional argument is their visible text.
_TITLED_SHORTCODES = frozenset({"heading"})

_HTML_COMMENT = re.compile(r"<!--.*?-->|<!--|-->", re.DOTALL)
_MDX_COMMENT = re.compile(r"\{/\*.*?\*/\}", re.DOTALL)
# An HTML or JSX tag: attributes with quoted, bare or {expression} values, or a {...spread}.
_TAG = re.compile(r"""</?[A-Za-z][\w.:-]*(?:\s+(?:[A-Za-z_:][\w:.-]*(?:\s*=\s*(?:"[^"]*"|'[^']*'|\{[^{}]*\}"""
                  r"""|[^\s"'=<>`{}]+))?|\{[^{}]*\}))*\s*/?>""")
_ADMONITION = re.compile(r"^([ \t]*):::+[ \t]*(?:[A-Za-z][\w-]*)?(?:\[([^\]\n]*)\])?(?:[ \t]*\{[^}\n]*\})?",
                         re.MULTILINE)
_HEADING_ID = re.compile(r"[ \t]*\{#[\w.:-]+\}")
# MDX's ESM: a paragraph opening with an import or export statement (prose rarely opens with one lower-case).
_ESM = re.compile(r"""^(?:import\s+(?:[\w*{$][^\n]*\bfrom\s*['"]|['"])|export\s+(?:default\b|const\b|let\b|var\b"""
                  r"""|function\b|class\b|async\b|\{|\*))""")
# Every construct the MDX-only cleaning changes begins with one of these; a passage with none of them would come
# out of it with only its whitespace changed, which neither MiniLM's tokenizer nor BM25's reads.
_MDX_HINT = re.compile(r"<[A-Za-z/]|\{/\*|:::|\{#|^[ \t]*(?:import|export)\b", re.MULTILINE)


def may_hold_mdx_syntax(text: str) -> bool:
    """False when clean_markdown(text, mdx_only=True) could change nothing but whitespace: the parse is skipped."""
    return _MDX_HINT.search(text) is not None


_PAGE_SUFFIX = re.compile(r"\.(?:mdx?|markdown|html?)$", re.IGNORECASE)
_WORD_BREAK = re.compile(r"[\s\-_.+%=&]+")
_LINE_BREAK = re.compile(r"\r\n?")
_CODE_SPAN = re.compile(r"(`+)(?!`).*?(?<!`)\1(?!`)", re.DOTALL)
_TRAILING_SPACE = re.compile(r"[ \t]+(?=\n)")
_BLANK_RUNS = re.compile(r"\n[ \t]*(?:\n[ \t]*)+")

_parser: Any = None


def _markdown() -> Any:
    global _parser
    if _parser is None:
        from markdown_it import MarkdownIt

        _parser = MarkdownIt("commonmark").enable(["table", "strikethrough"])
    return _parser


def open_fences(text: str, starts: Sequence[int]) -> list[str]:
    """For each offset of `starts` into the page `text`, the fence (its ``` or ~~~ run) of the fenced code block
    that offset lies inside, past the fence's opening line, or "" where it is in no fenced code block."""
    line_starts = [0, *(m.end() for m in re.finditer(r"\r\n|\r|\n", text))]
    fences = [(token.map[0], token.map[1], token.markup) for token in _markdown().parse(text)
              if token.type == "fence" and token.map]
    opened = []
    for start in starts:
        line = bisect.bisect_right(line_starts, start) - 1
        opened.append(next((markup for first, end, markup in fences if first < line < end), ""))
    return opened


def clean_markdown(text: str, open_fence: str = "", link_words: bool = False, keep_shortcodes: bool = False,
                   mdx_only: bool = False) -> str:
    """`text` as its reader sees it: Markdown read by markdown-it-py, shortcodes, JSX and admonitions cleaned.
    `open_fence`: the fence of the code block `text` starts inside of, if it does (open_fences).
    The two variants measured to find which part of the cleaning costs Kubernetes: `keep_shortcodes`, all of it
    but Hugo's shortcodes, which stay as written; `mdx_only`, MDX's syntax alone (import/export paragraphs,
    JSX/HTML tags, `{/* */}` comments, `{#id}` anchors, `:::` fences), links, shortcodes and Markdown's markers
    left as written."""
    if not (keep_shortcodes or mdx_only):
        return _clean_all(_SHORTCODE.sub(_shortcode_text, _COMMENT_SHORTCODE.sub("", text)), open_fence, link_words)
    # the shortcodes are set aside, so that neither Markdown nor the tag pattern reads them ({{<note>}} is no tag)
    mark = next(chr(c) for c in range(0xE000, 0xF900) if chr(c) not in text)  # a private-use character
    held: list[str] = []

    def hold(match: re.Match[str]) -> str:
        held.append(match.group(0))
        return f"{mark}{len(held) - 1}{mark}"

    text = _SHORTCODE.sub(hold, text)
    cleaned = _clean_mdx(text, open_fence) if mdx_only else _clean_all(text, open_fence, link_words)
    return re.sub(f"{mark}(\\d+){mark}", lambda m: held[int(m.group(1))], cleaned)


def _clean_all(text: str, open_fence: str, link_words: bool) -> str:
    if open_fence:
        text = f"{open_fence}\n{text}"
    pieces: list[tuple[str, bool]] = []  # (text, is code): code is kept exactly, the rest is cleaned further
    _blocks(_markdown().parse(text), pieces.append, set() if link_words else None)
    out: list[str] = []
    prose: list[str] = []
    for piece, is_code in pieces:
        if is_code:
            out.append(_clean_prose("".join(prose)))
            prose.clear()
            out.append(piece)
        else:
            prose.append(piece)
    out.append(_clean_prose("".join(prose)))
    return _BLANK_RUNS.sub("\n\n", "".join(out)).strip()


def _clean_mdx(text: str, open_fence: str) -> str:
    """MDX's syntax out of `text`, line by line, Markdown left as written: markdown-it-py's block map tells the
    lines of code (kept exactly) and of import/export paragraphs (dropped) from the rest, cleaned by _mdx_prose."""
    text = _LINE_BREAK.sub("\n", text)  # as markdown-it-py counts lines
    if open_fence:
        text = f"{open_fence}\n{text}"
    lines = text.split("\n")
    kinds = [""] * len(lines)
    previous: Any = None
    for token in _markdown().parse(text):
        if token.map and token.type in ("fence", "code_block"):
            kinds[token.map[0]:token.map[1]] = ["code"] * (token.map[1] - token.map[0])
        elif (token.map and token.type == "inline" and previous is not None and previous.type == "paragraph_open"
              and previous.level == 0 and _ESM.match(token.content)):
            kinds[token.map[0]:token.map[1]] = ["esm"] * (token.map[1] - token.map[0])
        previous = token
    if open_fence:
        lines, kinds = lines[1:], kinds[1:]
    out: list[str] = []
    prose: list[str] = []
    for line, kind in zip(lines, kinds):
        if kind == "":
            prose.append(line)
            continue
        if prose:
            out.append(_mdx_prose("\n".join(prose)))
            prose.clear()
        if kind == "code":
            out.append(line)
    if prose:
        out.append(_mdx_prose("\n".join(prose)))
    return _BLANK_RUNS.sub("\n\n", "\n".join(out)).strip()


def _mdx_prose(text: str) -> str:
    """_clean_prose's MDX part, code spans kept as written, HTML comments too (Markdown's, not MDX's)."""
    out: list[str] = []
    cursor = 0
    for span in _CODE_SPAN.finditer(text):
        out += [_mdx_syntax(text[cursor:span.start()]), span.group(0)]
        cursor = span.end()
    out.append(_mdx_syntax(text[cursor:]))
    return "".join(out)


def _mdx_syntax(text: str) -> str:
    text = _TAG.sub(_tag_text, _MDX_COMMENT.sub("", text))
    text = _ADMONITION.sub(lambda m: m.group(1) + (m.group(2) or ""), text)
    return _TRAILING_SPACE.sub("", _HEADING_ID.sub("", text))


def _shortcode_text(match: re.Match[str]) -> str:
    closing, name, arguments = match.group(1), match.group(2), match.group(3)
    if closing:
        return ""
    values = _visible_values(arguments, _VISIBLE | _VISIBLE_BY_SHORTCODE.get(name, frozenset()))
    if not values and name == "glossary_tooltip":  # the term's own name is shown
        values = [v.replace("-", " ") for k, v in _attributes(arguments) if k == "term_id"]
    if name in _TITLED_SHORTCODES:
        bare = _ATTRIBUTE.sub("", arguments)
        values += [m.group(1) if m.group(1) is not None else m.group(2) for m in _POSITIONAL.finditer(bare)]
    return " ".join(v for v in values if v.strip())


def _attributes(source: str) -> list[tuple[str, str]]:
    """(name, value) of each attribute given a string; a JSX {expression} shows no text of its own."""
    return [(m.group(1), next((g for g in (m.group(2), m.group(3), m.group(5)) if g is not None), ""))
            for m in _ATTRIBUTE.finditer(source)]


def _visible_values(source: str, visible: frozenset[str]) -> list[str]:
    return [value for name, value in _attributes(source) if name.lower() in visible]


def _tag_text(match: re.Match[str]) -> str:
    values = [v for v in _visible_values(match.group(0), _VISIBLE) if v.strip()]
    return " ".join(values) + " " if values else ""


def _clean_prose(text: str) -> str:
    """What is left of the syntaxes markdown-it-py does not know, in the text it did not read as code."""
    text = _MDX_COMMENT.sub("", _HTML_COMMENT.sub("", text))
    text = _TAG.sub(_tag_text, text)
    text = _ADMONITION.sub(lambda m: m.group(1) + (m.group(2) or ""), text)
    return _TRAILING_SPACE.sub("", _HEADING_ID.sub("", text))


def _blocks(tokens: list[Any], emit: Callable[[tuple[str, bool]], None], linked: set[str] | None) -> None:
    previous: Any = None
    for token in tokens:
        kind = token.type
        if kind == "inline":
            if not (previous is not None and previous.type == "paragraph_open" and previous.level == 0
                    and _ESM.match(token.content)):
                _inline(token.children or [], emit, linked)
        elif kind in ("fence", "code_block"):
            emit((token.content, True))
        elif kind == "html_block":
            emit((token.content, False))  # its tags and comments go in _clean_prose; its text stays
        elif kind in ("th_close", "td_close"):
            emit((" ", False))
        elif kind.endswith("_close") or kind == "hr":
            emit(("\n", False))
        previous = token
    emit(("\n", False))


def _inline(children: list[Any], emit: Callable[[tuple[str, bool]], None], linked: set[str] | None) -> None:
    """`linked`: the link targets whose words this passage has already shown (once each is enough); None: a
    link's target adds no words."""
    targets: list[str] = []
    for child in children:
        kind = child.type
        if kind == "link_open":
            targets.append("" if child.info == "auto" else str(child.attrs.get("href") or ""))
        elif kind == "link_close" and targets:
            words = _target_words(targets.pop())
            if linked is not None and words and words not in linked:
                linked.add(words)
                emit((f" {words}", False))
        elif kind in ("text", "html_inline"):
            emit((child.content, False))
        elif kind == "code_inline":
            emit((child.content, True))
        elif kind in ("softbreak", "hardbreak"):
            emit(("\n", False))
        elif kind == "image":
            _inline(child.children or [], emit, linked)  # its alt text


def _target_words(href: str) -> str:
    """The words a link's target names: its last path segment and its fragment (`/docs/tasks/administer-cluster/
    safely-drain-node/#use-kubectl-drain` → "safely drain node use kubectl drain"); the page a link points to is
    often the topic of the sentence, in words the sentence leaves out."""
    from urllib.parse import unquote, urlsplit

    try:
        parts = urlsplit(href)
    except ValueError:  # a malformed address (an unclosed IPv6 bracket) names no words
        return ""
    segments = (_PAGE_SUFFIX.sub("", s) for s in reversed(unquote(parts.path).split("/")))
    segment = next((s for s in segments if s and "." not in s), "")  # not "..", nor a file as "pod.yaml"
    return " ".join(w for w in _WORD_BREAK.split(f"{segment} {unquote(parts.fragment)}") if w)
