"""Concepts and their graph: concepts derived from the knowledge base's passages and an
optional glossary, typed and weighted relations between them in a networkx graph, and the tools
resolveConcept, explainConcept, queryGraph, analyzeGraph and linkEntities.

The design and its trade-offs: docs/adr/0620-concepts-and-their-graph.md.
"""
