"""The concept graph: concepts and documents as nodes, typed weighted edges, kept in networkx.

Traversal (queryGraph) walks a precomputed adjacency list, strongest edge first, treating every edge
as walkable both ways (a `broader` edge leads to the narrower concept too); it stops at `depth` hops
and at `limit` nodes, and says so. Metrics (analyzeGraph) run networkx on the concept-only graph with
parallel edges summed: PageRank, betweenness (sampled past BETWEENNESS_SAMPLES nodes, fixed seed),
weighted degree and Louvain communities (fixed seed), each cached per graph.
"""

from __future__ import annotations

import collections
from typing import Iterable, Sequence

import attrs
import networkx as nx

from .model import Edge
from .vocabulary import Metric

BETWEENNESS_SAMPLES = 256
SEED = 16


@attrs.frozen(kw_only=True)
class Neighbourhood:
    nodes: tuple[str, ...]  # breadth-first from the centre, strongest edges first
    depth_of: dict[str, int]
    edges: tuple[Edge, ...]
    truncated: bool


@attrs.frozen(kw_only=True)
class NodeScore:
    node: str
    score: float  # 0..1: the metric divided by its largest value (communities: the share of internal weight)
    raw: float
    community: int | None = None


class ConceptGraph:
    def __init__(self, nodes: dict[str, tuple[str, str]], edges: Iterable[Edge]) -> None:
        """`nodes`: id → (kind, title); edges whose ends are not nodes are dropped (never dangling)."""
        self.graph = nx.MultiDiGraph()
        for node, (kind, title) in nodes.items():
            self.graph.add_node(node, kind=kind, title=title)
        self._adjacent: dict[str, list[tuple[float, str, str, Edge]]] = collections.defaultdict(list)
        for edge in edges:
            if edge.source not in nodes or edge.target not in nodes or edge.source == edge.target:
                continue
            if self.graph.has_edge(edge.source, edge.target, key=edge.relation):
                continue
            self.graph.add_edge(edge.source, edge.target, key=edge.relation, weight=edge.weight)
            self._adjacent[edge.source].append((-edge.weight, edge.relation, edge.target, edge))
            self._adjacent[edge.target].append((-edge.weight, edge.relation, edge.source, edge))
        for entries in self._adjacent.values():
            entries.sort(key=lambda entry: entry[:3])
        self._metrics: dict[Metric, list[NodeScore]] = {}

    def __contains__(self, node: str) -> bool:
        return node in self.graph

    def kind(self, node: str) -> str:
        return self.graph.nodes[node]["kind"]

    def title(self, node: str) -> str:
        return self.graph.nodes[node]["title"]

    def relations(self) -> list[str]:
        return sorted({key for _, _, key in self.graph.edges(keys=True)})

    def edges(self) -> list[Edge]:
        return [Edge(source=s, target=t, relation=k, weight=d["weight"]) for s, t, k, d in
                self.graph.edges(keys=True, data=True)]

    def neighbours(self, node: str, relations: frozenset[str] | None = None) -> list[tuple[str, Edge]]:
        return [(other, edge) for _, relation, other, edge in self._adjacent.get(node, ())
                if relations is None or relation in relations]

    def neighbourhood(self, centre: str, depth: int, relations: frozenset[str] | None, limit: int) -> Neighbourhood:
        depth_of = {centre: 0}
        order = [centre]
        frontier = [centre]
        truncated = False
        for level in range(1, depth + 1):
            following = []
            for node in frontier:
                for other, _edge in self.neighbours(node, relations):
                    if other in depth_of:
                        continue
                    if len(order) >= limit:
                        truncated = True
                        break
                    depth_of[other] = level
                    order.append(other)
                    following.append(other)
                if truncated:
                    break
            if truncated or not following:
                break
            frontier = following
        chosen = set(order)
        seen: set[tuple[str, str, str]] = set()
        edges = []
        for node in order:
            for other, edge in self.neighbours(node, relations):
                identity = (edge.source, edge.target, edge.relation)
                if other in chosen and identity not in seen:
                    seen.add(identity)
                    edges.append(edge)
        return Neighbourhood(nodes=tuple(order), depth_of=depth_of, edges=tuple(edges), truncated=truncated)

    def concept_graph(self, nodes: Sequence[str] | None = None) -> nx.Graph:
        """Concepts only, undirected, parallel edges summed: the graph the metrics read."""
        keep = set(nodes) if nodes is not None else {n for n, kind in self.graph.nodes(data="kind") if kind == "concept"}
        simple = nx.Graph()
        simple.add_nodes_from(sorted(n for n in keep if self.graph.nodes[n]["kind"] == "concept"))
        for source, target, weight in self.graph.edges(data="weight"):
            if source in simple and target in simple:
                previous = simple.get_edge_data(source, target, {"weight": 0.0})["weight"]
                simple.add_edge(source, target, weight=previous + weight)
        return simple

    def scores(self, metric: Metric, nodes: Sequence[str] | None = None) -> list[NodeScore]:
        """Best first; over the whole graph (cached) or the concepts of `nodes`."""
        if nodes is None and metric in self._metrics:
            return self._metrics[metric]
        result = compute(metric, self.concept_graph(nodes))
        if nodes is None:
            self._metrics[metric] = result
        return result


def compute(metric: Metric, graph: nx.Graph) -> list[NodeScore]:
    if graph.number_of_nodes() == 0:
        return []
    if metric is Metric.COMMUNITIES:
        return _communities(graph)
    if metric is Metric.PAGERANK:
        raw = nx.pagerank(graph, weight="weight") if graph.number_of_edges() else {n: 1 / len(graph) for n in graph}
    elif metric is Metric.BETWEENNESS:
        sample = BETWEENNESS_SAMPLES if graph.number_of_nodes() > BETWEENNESS_SAMPLES else None
        raw = nx.betweenness_centrality(graph, k=sample, seed=SEED)
    else:
        raw = dict(graph.degree(weight="weight"))
    top = max(raw.values()) or 1.0
    ranked = sorted(raw.items(), key=lambda item: (-item[1], item[0]))
    return [NodeScore(node=node, score=round(min(value / top, 1.0), 6), raw=float(value)) for node, value in ranked]


def _communities(graph: nx.Graph) -> list[NodeScore]:
    found = nx.community.louvain_communities(graph, weight="weight", seed=SEED)
    found = sorted((sorted(c) for c in found), key=lambda members: (-len(members), members[0]))
    label = {node: index for index, members in enumerate(found) for node in members}
    scores = []
    for node in graph:
        total = sum(d["weight"] for _, _, d in graph.edges(node, data=True))
        inside = sum(d["weight"] for _, other, d in graph.edges(node, data=True) if label[other] == label[node])
        share = inside / total if total else 1.0
        scores.append(NodeScore(node=node, score=round(share, 6), raw=share, community=label[node]))
    return sorted(scores, key=lambda s: (s.community, -s.score, s.node))
