"""Concepts and their graph (issue 16): concepts derived from the knowledge base's passages and an
optional glossary, typed and weighted relations between them in a networkx graph, and the tools
resolveConcept, explainConcept, queryGraph, analyzeGraph and linkEntities (ADR 0620)."""
