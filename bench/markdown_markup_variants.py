"""The forms of Markdown markup cleaning measured beside the served one (ADR 0607): the whole cleaning, and with
`keep_shortcodes` all of it but Hugo's shortcodes; `link_words` adds the words a link's target names. Each gains
Docusaurus and Jest and costs Kubernetes, so only MDX's syntax is cleaned in what is served
(tools/knowledge/markdown_markup.py, whose pieces these forms reuse); bench/relevance_markdown_markup.py
measures them.

What Markdown defines is read from markdown-it-py's own token stream, never re-parsed with regular expressions:
a link keeps its text and loses its URL (with `link_words`, the words of the URL's last path segment and
fragment follow the text, once per passage), an image keeps its alt text, emphasis its words, a table its cells,
a code span and a code block their content; list and quote markers, heading hashes, fences' info strings and
link reference definitions go. Hugo shortcodes go, the values of their visible attributes stay (a glossary
tooltip's `text="Pod"`, else its `term_id`; a figure's caption; a tab's name; a code sample's file), and a
heading shortcode's title; `{{< comment >}}…{{< /comment >}}` is not rendered, so it goes whole. HTML comments
go too, and MDX's syntax as served.
"""

from __future__ import annotations

import re
from typing import Any, Callable

# The served module's private pieces (its parser, patterns and MDX cleaning) are read as `served._name`: these
# forms are the served cleaning plus more, measured, never served.
from hexmcp.tools.knowledge import markdown_markup as served  # noqa: SLF001
from hexmcp.tools.knowledge.markdown_markup import SHORTCODE, clean_mdx, with_shortcodes_held

_COMMENT_SHORTCODE = re.compile(r"\{\{[<%]\s*comment\s*[>%]\}\}.*?\{\{[<%]\s*/comment\s*[>%]\}\}", re.DOTALL)
_POSITIONAL = re.compile(r""""([^"]*)"|'([^']*)'""")
#: Shortcodes that show an attribute only they make visible.
_VISIBLE_BY_SHORTCODE = {"tab": frozenset({"name"})}
#: Shortcodes whose quoted positional argument is their visible text.
_TITLED_SHORTCODES = frozenset({"heading"})

_HTML_COMMENT = re.compile(r"<!--.*?-->|<!--|-->", re.DOTALL)
_PAGE_SUFFIX = re.compile(r"\.(?:mdx?|markdown|html?)$", re.IGNORECASE)
_WORD_BREAK = re.compile(r"[\s\-_.+%=&]+")


def clean_markdown(text: str, open_fence: str = "", link_words: bool = False, keep_shortcodes: bool = False,
                   mdx_only: bool = False) -> str:
    """`text` as each measured form reads it. `open_fence`: the fence of the code block `text` starts inside of,
    if it does (served.open_fences). `mdx_only` is the served cleaning (clean_mdx)."""
    if mdx_only:
        return clean_mdx(text, open_fence)
    if keep_shortcodes:
        return with_shortcodes_held(text, lambda held: _clean_all(held, open_fence, link_words))
    return _clean_all(SHORTCODE.sub(_shortcode_text, _COMMENT_SHORTCODE.sub("", text)), open_fence, link_words)


def _clean_all(text: str, open_fence: str, link_words: bool) -> str:
    if open_fence:
        text = f"{open_fence}\n{text}"
    pieces: list[tuple[str, bool]] = []  # (text, is code): code is kept exactly, the rest is cleaned further
    _blocks(served._markdown().parse(text), pieces.append, set() if link_words else None)
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
    return served._BLANK_RUNS.sub("\n\n", "".join(out)).strip()


def _shortcode_text(match: re.Match[str]) -> str:
    closing, name, arguments = match.group(1), match.group(2), match.group(3)
    if closing:
        return ""
    values = served._visible_values(arguments, served._VISIBLE | _VISIBLE_BY_SHORTCODE.get(name, frozenset()))
    if not values and name == "glossary_tooltip":  # the term's own name is shown
        values = [v.replace("-", " ") for k, v in served._attributes(arguments) if k == "term_id"]
    if name in _TITLED_SHORTCODES:
        bare = served._ATTRIBUTE.sub("", arguments)
        values += [m.group(1) if m.group(1) is not None else m.group(2) for m in _POSITIONAL.finditer(bare)]
    return " ".join(v for v in values if v.strip())


def _clean_prose(text: str) -> str:
    """What is left of the syntaxes markdown-it-py does not know, in the text it did not read as code."""
    return served._mdx_syntax(_HTML_COMMENT.sub("", text))


def _blocks(tokens: list[Any], emit: Callable[[tuple[str, bool]], None], linked: set[str] | None) -> None:
    previous: Any = None
    for token in tokens:
        kind = token.type
        if kind == "inline":
            if not (previous is not None and previous.type == "paragraph_open" and previous.level == 0
                    and served._ESM.match(token.content)):
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
