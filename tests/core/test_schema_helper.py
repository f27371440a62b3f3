"""The schema helper itself: it knows every method the core serves, and it does catch bad messages."""

from __future__ import annotations

import pytest

from hexmcp.core import versions
from hexmcp.core.handlers import ROUTES

from ..support import schemas


def test_every_routed_method_has_a_result_definition() -> None:
    assert set(ROUTES) <= set(schemas.RESULT_DEFINITIONS) | set(schemas.TASK_RESULT_DEFINITIONS)


def test_the_task_results_definitions_exist_in_the_extension_schema() -> None:
    for definition in [*schemas.TASK_RESULT_DEFINITIONS.values(), "CreateTaskResult"]:
        assert schemas.schema(schemas.EXT_TASKS).has(definition)


@pytest.mark.parametrize("version", versions.SUPPORTED_VERSIONS)
def test_a_schema_exists_for_every_supported_version(version: str) -> None:
    spec = schemas.schema(version)
    expected = "draft-07" if spec.definitions_key == "definitions" else "2020-12"
    assert expected in spec.document["$schema"]


@pytest.mark.parametrize("version", versions.HANDSHAKE_VERSIONS)
def test_a_result_missing_a_required_field_is_caught(version: str) -> None:
    with pytest.raises(schemas.SchemaViolation):
        schemas.validate_result(version, "tools/list", {"nextCursor": "x"})


def test_a_2026_result_without_result_type_is_caught() -> None:
    with pytest.raises(schemas.SchemaViolation):
        schemas.validate_result(versions.LATEST_VERSION, "tools/list", {"tools": []})
    schemas.validate_result(versions.LATEST_VERSION, "tools/list",
                            {"tools": [], "resultType": "complete", "ttlMs": 0, "cacheScope": "public"})


def test_an_error_with_a_null_id_is_checked_on_its_error_object() -> None:
    schemas.validate_error(versions.V2024_11_05, {"jsonrpc": "2.0", "id": None, "error": {"code": -32700,
                                                                                          "message": "x"}})
    with pytest.raises(schemas.SchemaViolation):
        schemas.validate_error(versions.V2024_11_05, {"jsonrpc": "2.0", "id": None, "error": {"code": "bad"}})


def test_server_requests_do_not_exist_in_2026() -> None:
    request = {"jsonrpc": "2.0", "id": 1, "method": "elicitation/create",
               "params": {"message": "?", "requestedSchema": {"type": "object", "properties": {}}}}
    schemas.validate_server_request(versions.LATEST_HANDSHAKE_VERSION, request)
    with pytest.raises(schemas.SchemaViolation):
        schemas.validate_server_request(versions.LATEST_VERSION, request)


def test_a_transcript_follows_the_negotiated_version() -> None:
    transcript = schemas.Transcript()
    transcript.sent({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}})
    transcript.received({"jsonrpc": "2.0", "id": 1, "result": {
        "protocolVersion": versions.V2024_11_05, "capabilities": {}, "serverInfo": {"name": "s", "version": "1"}}})
    assert transcript.version == versions.V2024_11_05
    with pytest.raises(schemas.SchemaViolation):
        transcript.received({"jsonrpc": "2.0", "id": 99, "result": {}})


def test_the_schema_directory_can_be_overridden(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    monkeypatch.setenv(schemas.SCHEMA_DIR_ENV, str(tmp_path))
    assert schemas.schema_dir() == tmp_path
    with pytest.raises(FileNotFoundError):
        schemas.VersionSchema(versions.LATEST_VERSION)


STRUCTURED = {"content": [{"type": "text", "text": "3"}], "structuredContent": {"sum": 3}}
TITLED_TOOLS = {"tools": [{"name": "add", "title": "Add", "inputSchema": {"type": "object", "additionalProperties": False}}]}


@pytest.mark.parametrize("version", versions.HANDSHAKE_VERSIONS)
def test_the_closed_check_refuses_members_a_version_lacks(version: str) -> None:
    """The published schemas take any extra member, so `validate_result` alone lets these through."""
    has_them = version >= versions.V2025_06_18
    for method, result in (("tools/call", STRUCTURED), ("tools/list", TITLED_TOOLS)):
        schemas.validate_result(version, method, result)
        if has_them:
            schemas.validate_result_members(version, method, result)
        else:
            with pytest.raises(schemas.SchemaViolation, match="Additional properties"):
                schemas.validate_result_members(version, method, result)


def test_the_closed_check_leaves_meta_and_tool_schemas_open() -> None:
    result = {"content": [{"type": "text", "text": "x", "_meta": {"example.com/k": 1}}], "resultType": "complete",
              "_meta": {"example.com/k": 1, "io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}}}
    schemas.validate_result_members(versions.V2026_07_28, "tools/call", result)
    schemas.validate_result_members(versions.V2025_11_25, "tools/list", {"tools": [
        {"name": "t", "inputSchema": {"type": "object", "$schema": "x", "additionalProperties": False}}]})


def test_the_closed_check_knows_notifications_per_version() -> None:
    progress = {"jsonrpc": "2.0", "method": "notifications/progress",
                "params": {"progressToken": "p", "progress": 1, "message": "step 1"}}
    schemas.validate_notification_members(versions.V2025_03_26, progress)  # `message` came in 2025-03-26
    with pytest.raises(schemas.SchemaViolation, match="message"):
        schemas.validate_notification_members(versions.V2024_11_05, progress)
    with pytest.raises(schemas.SchemaViolation, match="no server notification"):
        schemas.validate_notification_members(versions.V2026_07_28, {"jsonrpc": "2.0", "method": "notifications/nope"})
