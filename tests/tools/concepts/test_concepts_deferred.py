"""The concept tools registered with their handlers made on first use (first_use.py, ADR 0013): what
clients see is identical to the eager registration, nothing of the implementation is imported to
register them, and a call, a read or a prompt that comes before the start-up hook loads the handlers
answers as the eager tools do."""

from __future__ import annotations

from pathlib import Path

import pytest

from hexmcp.core.registrar import Registrar
from hexmcp.core import McpServer
from hexmcp.tools.concepts.first_use import loaded_on_first_use, register_concept_tools_on_first_use
from hexmcp.tools.concepts.mcp_tools import register_concept_tools
from hexmcp.tools.knowledge.corpus import CorpusSpec
from hexmcp.tools.knowledge.mcp_tools import register_knowledge_tools
from hexmcp.tools.knowledge.service import KnowledgeConfig

from tests.support.fresh_imports import modules_imported_by
from tests.support.peer import CoreClient, RecordingPeer

# What only the handlers need: never imported to register the definitions.
IMPLEMENTATION = ("hexmcp.tools.concepts.mcp_tools", "hexmcp.tools.concepts.items", "hexmcp.tools.concepts.model")


def _served(register, corpus: Path, cache: Path) -> tuple[McpServer, object]:
    server = McpServer("concepts-test", "0")
    knowledge = register_knowledge_tools(Registrar(server), KnowledgeConfig(corpus=CorpusSpec(roots=[corpus]), cache_dir=cache))
    return server, register(server, knowledge)


async def _listed(server: McpServer) -> tuple[list, list, list]:
    client = CoreClient(server, RecordingPeer())
    await client.initialize()
    return ((await client.ok("tools/list", {}))["tools"], (await client.ok("prompts/list", {}))["prompts"],
            (await client.ok("resources/templates/list", {}))["resourceTemplates"])


@pytest.mark.anyio
async def test_definitions_are_listed_exactly_as_the_eager_registration_lists_them(corpus_dir: Path,
                                                                                     concepts_cache: Path) -> None:
    eager, _ = _served(register_concept_tools, corpus_dir, concepts_cache)
    deferred, _ = _served(register_concept_tools_on_first_use, corpus_dir, concepts_cache)
    assert [t.name for t in deferred.tools.definitions()] == [t.name for t in eager.tools.definitions()]
    assert await _listed(deferred) == await _listed(eager)  # names, schemas, descriptions, order; prompts; templates


def test_registering_the_definitions_imports_none_of_the_implementation(corpus_dir: Path) -> None:
    code = ("from hexmcp.core import McpServer\n"
            "from hexmcp.tools.concepts.first_use import register_concept_tools_on_first_use\n"
            "register_concept_tools_on_first_use(McpServer('t', '0'), knowledge=None)")
    assert modules_imported_by(code, IMPLEMENTATION, timeout_s=60) == []


def test_the_handlers_are_made_once() -> None:
    implementation = loaded_on_first_use(service=object())  # type: ignore[arg-type]
    assert implementation() is implementation()


@pytest.mark.anyio
@pytest.mark.slow
async def test_first_calls_before_the_start_up_hook_answer_like_the_eager_tools(corpus_dir: Path, concepts_cache: Path,
                                                                               embedder) -> None:
    """No start-up hook has run: the first call loads the handlers (and waits for the concept base)."""
    answers = []
    for register in (register_concept_tools_on_first_use, register_concept_tools):
        server, _ = _served(register, corpus_dir, concepts_cache)
        client = CoreClient(server, RecordingPeer())
        await client.initialize()
        resolved = await client.ok("tools/call", {"name": "resolveConcept", "arguments": {"term": "WAL"}})
        prompt = await client.ok("prompts/get", {"name": "explain-concept",
                                                 "arguments": {"conceptId": "write-ahead-log"}})
        read = await client.ok("resources/read", {"uri": "concept://write-ahead-log"})
        answers.append((resolved, prompt, read))
    deferred, eager = answers
    assert deferred == eager
    assert deferred[0]["structuredContent"]["items"][0]["id"] == "write-ahead-log" and not deferred[0].get("isError")
