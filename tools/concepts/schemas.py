"""The JSON Schemas of the concept tools' result items (`{"items": [...]}` of kinds `concept`, `passage`,
`graph` and `score`; items.py builds them) and the concept URI template.

Plain data, apart from items.py, so the tools' definitions can be registered before the `initialize`
answer without importing what builds the items (ADR 0013).
"""

from __future__ import annotations

from typing import Any

CONCEPT_URI = "concept://{id}"

_STRING = {"type": "string"}
_UNIT = {"type": "number", "minimum": 0, "maximum": 1}
_OFFSETS = {"type": "object", "required": ["start", "end"],
            "properties": {"start": {"type": "integer", "minimum": 0}, "end": {"type": "integer", "minimum": 0}}}
CITATION_SCHEMA = {"type": "object", "required": ["documentId", "path", "passageId", "offsets", "indexVersion"],
                   "properties": {"documentId": _STRING, "path": _STRING, "passageId": _STRING, "offsets": _OFFSETS,
                                  "indexVersion": _STRING}}
CONCEPT_SCHEMA = {"type": "object", "required": ["kind", "id", "title", "aliases", "summary", "citation", "type",
                                                 "confidence"],
                  "properties": {"kind": {"const": "concept"}, "id": _STRING, "title": _STRING, "uri": _STRING,
                                 "aliases": {"type": "array", "items": _STRING}, "summary": _STRING,
                                 "citation": {"anyOf": [CITATION_SCHEMA, {"type": "null"}]}, "type": _STRING,
                                 "confidence": _UNIT, "definedIn": {"type": "array", "items": _STRING},
                                 "score": _UNIT, "matched": {"enum": ["id", "alias", "fuzzy", "semantic"]},
                                 "via": _STRING, "relation": _STRING, "weight": _UNIT,
                                 "spans": {"type": "array", "items": {
                                     "type": "object", "required": ["start", "end", "text", "confidence"],
                                     "properties": {"start": {"type": "integer"}, "end": {"type": "integer"},
                                                    "text": _STRING, "confidence": _UNIT}}}}}
PASSAGE_SCHEMA = {"type": "object", "required": ["kind", "documentId", "passageId", "title", "text", "score", "offsets",
                                                 "citation"],
                  "properties": {"kind": {"const": "passage"}, "documentId": _STRING, "passageId": _STRING,
                                 "title": _STRING, "text": _STRING, "score": _UNIT, "offsets": _OFFSETS,
                                 "headingPath": {"type": "array", "items": _STRING}, "citation": CITATION_SCHEMA,
                                 "defines": {"type": "boolean"}, "mentions": {"type": "integer", "minimum": 0}}}
_EDGE = {"type": "object", "required": ["source", "target", "relation", "weight"],
         "properties": {"source": _STRING, "target": _STRING, "relation": _STRING, "weight": _UNIT}}
_NODE = {"type": "object", "required": ["id", "title", "kind", "depth"],
         "properties": {"id": _STRING, "title": _STRING, "kind": {"enum": ["concept", "document"]},
                        "depth": {"type": "integer", "minimum": 0}}}
GRAPH_SCHEMA = {"type": "object", "required": ["kind", "nodes", "edges", "truncated", "note"],
                "properties": {"kind": {"const": "graph"}, "nodes": {"type": "array", "items": _NODE},
                               "edges": {"type": "array", "items": _EDGE}, "truncated": {"type": "boolean"},
                               "note": {"type": ["string", "null"]}}}
SCORE_SCHEMA = {"type": "object", "required": ["kind", "conceptId", "title", "metric", "score", "rank"],
                "properties": {"kind": {"const": "score"}, "conceptId": _STRING, "title": _STRING,
                               "metric": _STRING, "score": _UNIT, "rank": {"type": "integer", "minimum": 1},
                               "community": {"type": "integer", "minimum": 0}}}


def items_output(*schemas: dict[str, Any], extra: dict[str, Any] | None = None) -> dict[str, Any]:
    item = schemas[0] if len(schemas) == 1 else {"anyOf": list(schemas)}
    return {"type": "object", "required": ["items", *(extra or {})],
            "properties": {"items": {"type": "array", "items": item}, **(extra or {})}}
