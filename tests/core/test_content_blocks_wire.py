"""Content blocks in a result take a shortcut to the wire (convert.py `_content_blocks`, ADR 0012 addendum):
it must give exactly what cattrs' own list walk and union dispatch give, for every version and every kind
of block."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from hexmcp.core import models, versions
from hexmcp.core.convert import to_wire, unstructure_converter

from ..support.strategies import model_strategy

BLOCKS = st.lists(st.one_of([model_strategy(kind) for kind in (models.TextContent, models.ImageContent,
                                                              models.AudioContent, models.ResourceLink,
                                                              models.EmbeddedResource)]), max_size=4)


@settings(max_examples=300, deadline=None)
@given(version=st.sampled_from(versions.SUPPORTED_VERSIONS), blocks=BLOCKS)
def test_a_results_blocks_go_out_as_the_union_would_send_each(version: str, blocks: list) -> None:
    converter = unstructure_converter(version)
    # cattrs' generic path for one block: the union hook, which dispatches on the block's runtime class.
    union = converter.get_unstructure_hook(models.ContentBlock)
    expected = [union(block) for block in blocks]
    assert to_wire(models.CallToolResult(content=blocks), version)["content"] == expected
    assert to_wire(models.CallToolResult(content=blocks, is_error=True), version)["content"] == expected


def test_blocks_a_version_lacks_still_degrade_to_text() -> None:
    link = models.ResourceLink(uri="file:///notes.md", name="notes")
    audio = models.AudioContent(data="AAAA", mime_type="audio/wav")
    wire = to_wire(models.CallToolResult(content=[link, audio]), versions.V2024_11_05)["content"]
    assert [block["type"] for block in wire] == ["text", "text"]
    assert wire[0]["text"] == "Resource: notes <file:///notes.md>"
    assert to_wire(models.CallToolResult(content=[link]), versions.V2025_06_18)["content"][0]["type"] == "resource_link"
