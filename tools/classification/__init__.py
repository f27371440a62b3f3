"""Offline text classification and routing (MiniLM embeddings + calibrated softmax head).

The public surface is re-exported here. Importing this package stays cheap: numpy, onnxruntime,
tokenizers and onnx are only imported once ClassificationService.start() runs.
"""

from .config import ClassificationConfig
from .errors import (
    CacheDirError,
    ClassificationError,
    ClassificationInputError,
    ModelCacheError,
    ModelFilesError,
    ServiceNotReadyError,
    TaxonomyError,
)
from .service import ClassificationService

__all__ = [
    "CacheDirError",
    "ClassificationConfig",
    "ClassificationError",
    "ClassificationInputError",
    "ClassificationService",
    "ModelCacheError",
    "ModelFilesError",
    "ServiceNotReadyError",
    "TaxonomyError",
]
