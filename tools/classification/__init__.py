"""Offline text classification and routing (MiniLM embeddings + calibrated softmax head).

The public surface is re-exported here. Importing this package stays cheap: numpy, onnxruntime,
tokenizers and onnx are only imported once ClassificationService.start() runs. The errors of the
shared encoder it runs on (model files, model cache, a service not ready) are hexmcp.tools.embedding.errors.
"""

from .config import ClassificationConfig
from .errors import CacheDirError, ClassificationError, ClassificationInputError, TaxonomyError
from .service import ClassificationService

__all__ = [
    "CacheDirError",
    "ClassificationConfig",
    "ClassificationError",
    "ClassificationInputError",
    "ClassificationService",
    "TaxonomyError",
]
