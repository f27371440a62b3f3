"""MDX's syntax cleaned from what the retrievers read of a Markdown passage (its passage text stays the exact
source slice that `fetch` and citations show), as rst_markup.py does for reST (ADR 0607).

Cleaned, by its own syntax, keeping the text a reader of the built page sees: a paragraph that opens with an
`import`/`export` statement goes; JSX and HTML tags go, keeping their visible attributes (title, label, alt) and
the text between a tag pair; `{/* comments */}` go, as do Docusaurus' `{#heading-id}` anchors; `:::note Title`
admonition fences keep their title. Left as written: Markdown's own markup, links, HTML comments and Hugo
shortcodes (cleaning those cost Kubernetes; the forms measured are bench/markdown_markup_variants.py's), and
code, found by markdown-it-py's block map (users search for commands and option names).

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
SHORTCODE = re.compile(r"\{\{[<%]\s*(/?)\s*([A-Za-z_][\w-]*)(.*?)\s*[>%]\}\}", re.DOTALL)
_ATTRIBUTE = re.compile(r"""([A-Za-z_:][\w:.-]*)\s*=\s*(?:"([^"]*)"|'([^']*)'|\{([^{}]*)\}|([^\s"'=<>`{}]+))""")
#: Attributes whose value a reader sees on the built page (a tag's or a shortcode's).
_VISIBLE = frozenset({"text", "title", "caption", "alt", "label", "prepend", "file", "state", "for_k8s_version"})

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
# Every construct clean_mdx changes begins with one of these; a passage with none of them would come
# out of it with only its whitespace changed, which neither MiniLM's tokenizer nor BM25's reads.
_MDX_HINT = re.compile(r"<[A-Za-z/]|\{/\*|:::|\{#|^[ \t]*(?:import|export)\b", re.MULTILINE)


def may_hold_mdx_syntax(text: str) -> bool:
    """False when clean_mdx(text) could change nothing but whitespace: chunking then skips its parse."""
    return _MDX_HINT.search(text) is not None


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


def clean_mdx(text: str, open_fence: str = "") -> str:
    """`text` without MDX's syntax, Markdown and shortcodes as written. `open_fence`: the fence of the code block
    `text` starts inside of, if it does (open_fences)."""
    return with_shortcodes_held(text, lambda held: _clean_mdx(held, open_fence))


def with_shortcodes_held(text: str, clean: Callable[[str], str]) -> str:
    """`clean(text)` with Hugo's shortcodes set aside and put back as written, so that neither Markdown nor the
    tag pattern reads them ({{<note>}} is no tag)."""
    mark = next(chr(c) for c in range(0xE000, 0xF900) if chr(c) not in text)  # a private-use character
    held: list[str] = []

    def hold(match: re.Match[str]) -> str:
        held.append(match.group(0))
        return f"{mark}{len(held) - 1}{mark}"

    cleaned = clean(SHORTCODE.sub(hold, text))
    return re.sub(f"{mark}(\\d+){mark}", lambda m: held[int(m.group(1))], cleaned)


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


def _attributes(source: str) -> list[tuple[str, str]]:
    """(name, value) of each attribute given a string; a JSX {expression} shows no text of its own."""
    return [(m.group(1), next((g for g in (m.group(2), m.group(3), m.group(5)) if g is not None), ""))
            for m in _ATTRIBUTE.finditer(source)]


def _visible_values(source: str, visible: frozenset[str]) -> list[str]:
    return [value for name, value in _attributes(source) if name.lower() in visible]


def _tag_text(match: re.Match[str]) -> str:
    values = [v for v in _visible_values(match.group(0), _VISIBLE) if v.strip()]
    return " ".join(values) + " " if values else ""
