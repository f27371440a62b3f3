"""The knowledge pack's tools/list entries and resource template, as clients see them: the same as when
their schemas were written by hand (data/tools_list.json, recorded before the tools moved to the
decorators), so ChatGPT connectors and deep research keep calling `search` and `fetch` as they did. Since
recorded: the query's `maxLength`, the limit the tools always enforced at run time, now declared."""

from __future__ import annotations

import json
from pathlib import Path

from hexmcp.core import McpServer
from hexmcp.core.convert import to_wire
from hexmcp.core.registrar import Registrar
from hexmcp.core.versions import LATEST_VERSION
from hexmcp.tools.knowledge.mcp_tools import register_knowledge_tools
from hexmcp.tools.knowledge.service import KnowledgeConfig

RECORDED = Path(__file__).parent / "data" / "tools_list.json"


def test_tool_definitions_and_template_are_unchanged() -> None:
    server = McpServer("t", "0")
    register_knowledge_tools(Registrar(server), KnowledgeConfig())
    recorded = json.loads(RECORDED.read_text(encoding="utf-8"))
    assert [to_wire(d, LATEST_VERSION) for d in server.tools.definitions()] == recorded["tools"]
    templates = server.resources.template_definitions()
    assert [to_wire(t, LATEST_VERSION) for t in templates] == recorded["resourceTemplates"]


def test_tools_keep_their_registration_flags() -> None:
    server = McpServer("t", "0")
    register_knowledge_tools(Registrar(server), KnowledgeConfig())
    tools = {d.name: server.tools.get(d.name) for d in server.tools.definitions()}
    assert [name for name, tool in tools.items() if tool.long_running is not None] == ["indexDocuments"]
    assert not any(tool.output_checked_in_tests for tool in tools.values())
