"""A registry tells its listeners once per change a client can see (core/list_changes.py): any sequence of
edits inside one batch is at most one notice per kind, and one iff the listed items differ at its end; an
edit outside a batch is one notice iff it changed the list."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hexmcp.core import McpServer, models, versions
from hexmcp.core.list_changes import ListChanges
from hexmcp.core.registrar import Registrar
from hexmcp.core.subscriptions import META_SUBSCRIPTION_ID

from ..support.peer import CoreClient, stateless_meta

NAMES = ("a", "b", "c")
DESCRIPTIONS = ("one", "two")
SCHEMA = {"type": "object"}


async def _handler(arguments: dict[str, Any], ctx: Any) -> str:
    return "ok"


async def _render() -> str:
    return "hi"


async def _read() -> str:
    return "text"


# An edit: (kind, "add" | "remove", name, description). Names and descriptions are few, so re-adding the
# same item, replacing it with a different one and undoing an edit all happen often.
EDITS = st.tuples(st.sampled_from(("tools", "prompts", "resources", "templates")), st.sampled_from(("add", "remove")),
                  st.sampled_from(NAMES), st.sampled_from(DESCRIPTIONS))


def _apply(server: McpServer, edit: tuple[str, str, str, str]) -> None:
    kind, action, name, description = edit
    if kind == "tools":
        if action == "add":
            server.tools.add(name, _handler, description=description, input_schema=SCHEMA)
        else:
            server.tools.remove(name)
    elif kind == "prompts":
        if action == "add":
            server.prompts.add(models.Prompt(name=name, description=description), _render)
        else:
            server.prompts.remove(name)
    elif kind == "resources":
        if action == "add":
            server.resources.add(models.Resource(uri=f"x://{name}", name=name, description=description), _read)
        else:
            server.resources.remove(f"x://{name}")
    elif action == "add":
        server.resources.remove_template(f"x://{name}/{{id}}")  # as a mount replaces a template
        server.resources.add_template(models.ResourceTemplate(uri_template=f"x://{name}/{{id}}", name=name,
                                                              description=description), _read)
    else:
        server.resources.remove_template(f"x://{name}/{{id}}")


def _listed(server: McpServer) -> dict[str, Any]:
    return {"tools": server.tools.definitions(), "prompts": server.prompts.definitions(),
            "resources": (server.resources.definitions(), server.resources.template_definitions())}


def _counting(server: McpServer) -> dict[str, int]:
    told = {"tools": 0, "prompts": 0, "resources": 0}

    def count(kind: str) -> Any:
        def heard() -> None:
            told[kind] += 1
        return heard

    server.tools.on_change(count("tools"))
    server.prompts.listeners.append(count("prompts"))
    server.resources.listeners.append(count("resources"))
    return told


@given(before=st.lists(EDITS, max_size=8), inside=st.lists(EDITS, max_size=25), nested=st.booleans())
def test_a_batch_of_edits_is_at_most_one_notice_per_kind_and_one_iff_the_list_changed(
        before: list[tuple[str, str, str, str]], inside: list[tuple[str, str, str, str]], nested: bool) -> None:
    server = McpServer("t", "1")
    for edit in before:
        _apply(server, edit)
    told = _counting(server)
    listed = _listed(server)
    with server.tools.batch(), server.prompts.batch(), server.resources.batch():
        for index, edit in enumerate(inside):
            if nested and index == len(inside) // 2:
                with server.tools.batch(), server.resources.batch():  # an inner batch tells nobody itself
                    _apply(server, edit)
            else:
                _apply(server, edit)
        assert told == {"tools": 0, "prompts": 0, "resources": 0}, "told before the batch ended"
    after = _listed(server)
    assert told == {kind: int(after[kind] != listed[kind]) for kind in told}


@given(before=st.lists(EDITS, max_size=8), edits=st.lists(EDITS, max_size=12))
def test_an_edit_outside_a_batch_is_one_notice_iff_it_changed_the_list(
        before: list[tuple[str, str, str, str]], edits: list[tuple[str, str, str, str]]) -> None:
    server = McpServer("t", "1")
    for edit in before:
        _apply(server, edit)
    told = _counting(server)
    expected = {"tools": 0, "prompts": 0, "resources": 0}
    for edit in edits:
        listed = _listed(server)
        _apply(server, edit)
        after = _listed(server)
        if edit[0] == "templates" and edit[1] == "add":
            # a template replaced is two edits (removed, added): each tells, unless batched
            kind_changes = 1 + int(any(t.uri_template == f"x://{edit[2]}/{{id}}" for t in listed["resources"][1]))
            expected["resources"] += kind_changes
        else:
            kind = "resources" if edit[0] == "templates" else edit[0]
            expected[kind] += int(after[kind] != listed[kind])
    assert told == expected


def test_nested_batches_tell_once_at_the_end_of_the_outermost() -> None:
    items: list[int] = []
    heard: list[str] = []
    changes = ListChanges(lambda: list(items))
    changes.listeners.append(lambda: heard.append("told"))
    with changes.batch():
        items.append(1)
        changes.changed()
        with changes.batch():
            items.append(2)
            changes.changed()
        assert heard == []
    assert heard == ["told"]
    with changes.batch():  # an edit undone inside the batch: the list is as it was, nobody is told
        items.append(3)
        changes.changed()
        items.pop()
        changes.changed()
    assert heard == ["told"]


@pytest.mark.anyio
async def test_a_handshake_session_and_a_2026_listener_each_hear_one_notice_for_a_registrar_batch() -> None:
    """Both channels a notice reaches (a session, a `subscriptions/listen`) are told from the registry's one
    notice, so every transport gets one per batch: `Registrar.add_tools` registers many tools as one change."""
    server = McpServer("t", "1")
    session = CoreClient(server, session_id="handshake")
    await session.initialize()
    modern = CoreClient(server, session_id="modern")
    modern.peer.version = versions.LATEST_VERSION
    listen = asyncio.ensure_future(modern.ok("subscriptions/listen", {
        "notifications": {"toolsListChanged": True, "promptsListChanged": True}, "_meta": stateless_meta()},
        key="listen-1"))
    for _ in range(200):
        if modern.peer.notified("notifications/subscriptions/acknowledged"):
            break
        await asyncio.sleep(0.005)
    assert modern.peer.notified("notifications/subscriptions/acknowledged")

    def handler(**arguments: Any) -> str:
        """A tool from an existing registry."""
        return "ok"

    Registrar(server).add_tools((f"t{index}", SCHEMA, handler) for index in range(7))
    Registrar(server).add_tools((f"t{index}", SCHEMA, handler) for index in range(7))  # the same again: no change
    for _ in range(5):
        await asyncio.sleep(0)
    assert len(session.peer.notified("notifications/tools/list_changed")) == 1
    heard = modern.peer.notified("notifications/tools/list_changed")
    assert len(heard) == 1 and heard[0]["_meta"][META_SUBSCRIPTION_ID] == "listen-1"
    assert not modern.peer.notified("notifications/prompts/list_changed")
    await modern.session.close()
    await listen
