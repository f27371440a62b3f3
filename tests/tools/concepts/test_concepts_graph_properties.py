"""Properties of the concept graph: queryGraph's depth and limit bounds, no dangling edges, and ids and
edges that a rebuild (in any document order) gives back unchanged."""

from __future__ import annotations

import networkx as nx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hexmcp.tools.concepts.graph import ConceptGraph
from hexmcp.tools.concepts.model import Edge
from hexmcp.tools.knowledge.readers import parse_text
from tests.tools.concepts.support import base_over

NODES = [f"n{i}" for i in range(12)]
RELATIONS = ["broader", "co-occurs-with", "similar-to", "uses"]

edges_strategy = st.lists(st.builds(
    Edge, source=st.sampled_from([*NODES, "ghost"]), target=st.sampled_from([*NODES, "ghost"]),
    relation=st.sampled_from(RELATIONS), weight=st.floats(0.01, 1.0)), max_size=40)


def _graph(edges: list[Edge], present: int) -> ConceptGraph:
    return ConceptGraph({n: ("concept", n.upper()) for n in NODES[:present]}, edges)


@settings(max_examples=300, deadline=None)
@given(edges=edges_strategy, present=st.integers(1, 12), depth=st.integers(1, 3), limit=st.integers(1, 15),
       relations=st.none() | st.frozensets(st.sampled_from(RELATIONS), min_size=1))
def test_neighbourhoods_respect_depth_and_limit_and_never_dangle(edges, present, depth, limit, relations) -> None:
    graph = _graph(edges, present)
    found = graph.neighbourhood("n0", depth, relations, limit)
    assert found.nodes[0] == "n0" and len(found.nodes) <= limit and len(set(found.nodes)) == len(found.nodes)
    walkable = nx.Graph()
    walkable.add_nodes_from(graph.graph.nodes)
    walkable.add_edges_from((e.source, e.target) for e in graph.edges() if relations is None or e.relation in relations)
    distance = nx.single_source_shortest_path_length(walkable, "n0", cutoff=depth)
    for node in found.nodes:
        assert found.depth_of[node] == distance[node] <= depth
    assert found.truncated == (len(distance) > limit)
    if not found.truncated:
        assert set(found.nodes) == set(distance)
    chosen = set(found.nodes)
    for edge in found.edges:
        assert edge.source in chosen and edge.target in chosen and 0 < edge.weight <= 1
        assert relations is None or edge.relation in relations
    assert all(e.source in graph and e.target in graph and e.source != e.target for e in graph.edges())


@settings(max_examples=200, deadline=None)
@given(edges=edges_strategy)
def test_metrics_are_unit_scores_over_concepts_only(edges) -> None:
    from hexmcp.tools.concepts.vocabulary import Metric

    graph = _graph(edges, 12)
    for metric in Metric:
        scores = graph.scores(metric)
        assert {s.node for s in scores} == set(NODES)
        assert all(0 <= s.score <= 1 for s in scores)


WORDS = ["storage", "socket", "relay", "snapshot", "ledger", "cursor", "shard", "quota", "beacon", "lattice"]
heading = st.lists(st.sampled_from(WORDS), min_size=1, max_size=3, unique=True).map(lambda w: " ".join(w).capitalize())


@st.composite
def documents(draw):
    count = draw(st.integers(2, 4))
    texts = {}
    for number in range(count):
        parts = [f"# {draw(heading)}\n"]
        for _ in range(draw(st.integers(1, 3))):
            a, b = draw(st.sampled_from(WORDS)), draw(st.sampled_from(WORDS))
            parts.append(f"## {draw(heading)}\n\nThe **{a} {b}** is where the {a} keeps its {b}. "
                         f"A {b} {a} (see [{a}](doc{(number + 1) % count}.md)) is not the {b} beacon.\n")
        texts[f"doc{number}.md"] = "\n".join(parts)
    return [parse_text(name, text, ".md") for name, text in texts.items()]


@pytest.mark.slow
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(corpus=documents())
def test_a_rebuild_in_any_order_gives_the_same_ids_and_edges(embedder, corpus) -> None:
    first = base_over(corpus, embedder)
    again = base_over(list(reversed(corpus)), embedder)
    assert first.order == again.order
    assert sorted(map(_edge_key, first.graph.edges())) == sorted(map(_edge_key, again.graph.edges()))
    for concept_id in first.order:
        assert first.get(concept_id) == again.get(concept_id)
    assert all(e.source in first.graph and e.target in first.graph for e in first.graph.edges())


def _edge_key(edge: Edge) -> tuple[str, str, str, float]:
    return (edge.source, edge.target, edge.relation, round(edge.weight, 3))
