"""The knowledge base: documents in, cited passages out (corpus, index, hybrid retrieval, MCP tools)."""
