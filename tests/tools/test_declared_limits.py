"""Every length or count limit a built-in tool enforces at run time is declared in its inputSchema, so a
client sees it before it calls: classify_text's text (max_text_chars), the knowledge tools' query
(MAX_QUERY_CHARS), and the limits the concepts and gateway packs already declared. The schemas stay
valid JSON Schema (draft 2020-12)."""

from __future__ import annotations

import jsonschema
import pytest

from hexmcp.core import McpServer
from hexmcp.core.registrar import Registrar
from hexmcp.tools.classification import ClassificationConfig
from hexmcp.tools.classification.mcp_tools import register_classification_tools
from hexmcp.tools.knowledge.queries import MAX_QUERY_CHARS


@pytest.fixture(scope="module")
def server() -> McpServer:
    from hexmcp.tools.knowledge.service import KnowledgeConfig
    from hexmcp.tools.knowledge.mcp_tools import register_knowledge_tools

    built = McpServer("t", "1")
    register_classification_tools(built, ClassificationConfig(max_text_chars=1234))
    register_knowledge_tools(Registrar(built), KnowledgeConfig())
    return built


@pytest.mark.parametrize(("tool", "argument", "limit"), [("classify_text", "text", 1234),
                                                         ("search", "query", MAX_QUERY_CHARS),
                                                         ("searchPassages", "query", MAX_QUERY_CHARS)])
def test_a_run_time_length_limit_is_declared(server: McpServer, tool: str, argument: str, limit: int) -> None:
    schema = server.tools.get(tool).definition.input_schema
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["properties"][argument]["maxLength"] == limit
