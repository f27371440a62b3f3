"""What the client commands print: text for people (bold names on a terminal), or JSON with `--json`.

JSON output is the protocol's own wire form (camelCase, as the server sent it, for the negotiated
version), so a script reads what any MCP tooling would show it. Text output is for reading: a tool's
text content as is (pretty-printed when it is JSON), lists one item per line.
"""

from __future__ import annotations

import json
import sys
from typing import Any, Sequence

from hexmcp.core import models
from hexmcp.core.convert import to_wire


def _emit(value: Any) -> None:
    print(json.dumps(value, ensure_ascii=False, indent=2))


def _bold(text: str) -> str:
    return f"\033[1m{text}\033[0m" if sys.stdout.isatty() else text


def say(line: str, *, as_json: bool, figures: dict[str, Any]) -> None:
    if as_json:
        _emit(figures)
    else:
        print(line)


def call_result(result: models.CallToolResult, version: str | None, *, as_json: bool) -> None:
    if as_json:
        _emit(to_wire(result, version or "2025-11-25"))
        return
    stream = sys.stderr if result.is_error else sys.stdout
    for block in result.content:
        print(_block_text(block), file=stream)
    if not result.content and result.structured_content is not None:
        print(json.dumps(result.structured_content, ensure_ascii=False, indent=2), file=stream)


def _block_text(block: Any) -> str:
    if isinstance(block, models.TextContent):
        try:
            return json.dumps(json.loads(block.text), ensure_ascii=False, indent=2)
        except ValueError:
            return block.text
    if isinstance(block, models.ResourceLink):
        return f"[resource link] {block.uri}" + (f" ({block.title or block.name})" if block.title or block.name else "")
    if isinstance(block, models.EmbeddedResource):
        contents = block.resource
        text = getattr(contents, "text", None)
        return f"[resource {contents.uri}]\n{text}" if text is not None else f"[resource {contents.uri}: binary]"
    mime = getattr(block, "mime_type", "")
    return f"[{type(block).__name__.removesuffix('Content').lower()} {mime}, {len(getattr(block, 'data', ''))} base64 characters]"


def tools(found: Sequence[models.Tool], version: str | None, *, as_json: bool) -> None:
    if as_json:
        _emit({"tools": [to_wire(tool, version or "2025-11-25") for tool in found]})
        return
    for tool in found:
        properties = tool.input_schema.get("properties") or {}
        required = set(tool.input_schema.get("required") or [])
        params = ", ".join(f"{name}{'' if name in required else '?'}" for name in properties)
        print(f"{_bold(tool.name)}({params})" + (f"  {_first_line(tool.description)}" if tool.description else ""))


def resources(found: Sequence[models.Resource], templates: Sequence[models.ResourceTemplate], version: str | None,
              *, as_json: bool) -> None:
    if as_json:
        wire = version or "2025-11-25"
        _emit({"resources": [to_wire(r, wire) for r in found],
               "resourceTemplates": [to_wire(t, wire) for t in templates]})
        return
    for resource in found:
        print(f"{_bold(resource.uri)}  {resource.name}" + (f"  ({resource.mime_type})" if resource.mime_type else ""))
    for template in templates:
        print(f"{_bold(template.uri_template)}  {template.name}  (template)")


def prompts(found: Sequence[models.Prompt], version: str | None, *, as_json: bool) -> None:
    if as_json:
        _emit({"prompts": [to_wire(prompt, version or "2025-11-25") for prompt in found]})
        return
    for prompt in found:
        params = ", ".join(f"{a.name}{'' if a.required else '?'}" for a in prompt.arguments or [])
        print(f"{_bold(prompt.name)}({params})" + (f"  {_first_line(prompt.description)}" if prompt.description else ""))


def read_result(result: models.ReadResourceResult, version: str | None, *, as_json: bool) -> None:
    if as_json:
        _emit(to_wire(result, version or "2025-11-25"))
        return
    for contents in result.contents:
        text = getattr(contents, "text", None)
        print(text if text is not None else f"[{contents.uri}: {len(getattr(contents, 'blob', ''))} base64 characters]")


def load_figures(figures: Any, *, as_json: bool) -> None:
    if as_json:
        _emit(figures.to_json())
        return
    print(f"{figures.calls} calls in {figures.seconds} s: {figures.calls_per_s} calls/s, "
          f"p50 {figures.p50_ms} ms, p99 {figures.p99_ms} ms")
    if figures.tool_errors or figures.errors:
        failed = ", ".join(f"{count} {code}" for code, count in figures.errors.items())
        print(f"tool errors: {figures.tool_errors}" + (f"; failed: {failed}" if failed else ""))


def replay_report(session: dict[str, Any], calls: int, differences: Sequence[Any], *, as_json: bool) -> None:
    if as_json:
        _emit({"recorded": session, "calls": calls, "identical": calls - len(differences),
               "differences": [d.to_json() for d in differences]})
        return
    for difference in differences:
        print(f"call {difference.index}: {difference.tool} {json.dumps(difference.arguments, ensure_ascii=False)} differs")
        print(f"  recorded: {_short(difference.recorded)}")
        print(f"  replayed: {difference.error if difference.error else _short(difference.replayed)}")
    print(f"{calls - len(differences)} of {calls} call(s) replayed identically")


def _short(value: Any, limit: int = 300) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= limit else text[:limit] + "..."


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""
