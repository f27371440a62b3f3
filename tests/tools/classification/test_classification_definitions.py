"""list_categories and classify_text list as they did when their schemas were written by hand: the
semantic router reads these names, types and bounds."""

from __future__ import annotations

from hexmcp.core import McpServer
from hexmcp.tools.classification import ClassificationConfig
from hexmcp.tools.classification.mcp_tools import register_classification_tools
from tests.support.definitions import listed, snapshot


def registered_server() -> McpServer:
    server = McpServer("t", "1")
    register_classification_tools(server, ClassificationConfig())
    return server


def test_the_tools_list_as_before() -> None:
    assert listed(registered_server()) == snapshot("classification")
