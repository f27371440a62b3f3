"""The `list_categories` answer every stdio benchmark server returns, taken from the product itself.

The SDK reference and the blocking-loop ceiling must send exactly what `hexmcp stdio` sends, so they ask
the classification service for it (taxonomy only; the embedding model is never loaded).
"""

from __future__ import annotations

import asyncio
from typing import Any

from hexmcp.tools.classification import ClassificationService
from hexmcp.tools.classification.config import ClassificationConfig


def list_categories_answer() -> dict[str, Any]:
    service = ClassificationService.from_config(ClassificationConfig())
    asyncio.run(service.ensure_taxonomy())
    return service.list_categories()
