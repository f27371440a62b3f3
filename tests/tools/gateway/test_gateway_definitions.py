"""listModels, routeCompletion, the prompts and the catalogue resources list as they did when their
schemas were written by hand (a nullable type is now spelled `anyOf`, a string enum carries its type: the same values)."""

from __future__ import annotations

from types import SimpleNamespace

from hexmcp.core import McpServer
from hexmcp.tools.gateway.mcp_tools import register_gateway_tools
from hexmcp.tools.gateway.service import GatewaySettings
from tests.support.definitions import listed, spelled_as_derived, snapshot


def registered_server() -> McpServer:
    """Every prompt registered: with routing (routed_prompt) and a knowledge base (ask_about_document)."""
    server = McpServer("t", "1")
    routing = SimpleNamespace(default_model="m", fallback_model=None)
    register_gateway_tools(server, None, routing, GatewaySettings(), documents=dict, document_uri=str)
    return server


def test_the_tools_prompts_and_resources_list_as_before() -> None:
    assert listed(registered_server()) == spelled_as_derived(snapshot("gateway"))
