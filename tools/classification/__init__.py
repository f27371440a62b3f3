"""Offline text classification and routing (MiniLM embeddings + calibrated softmax head).

The public surface is re-exported here. Importing this package stays cheap: numpy, onnxruntime,
tokenizers and onnx are only imported once ClassificationService.start() runs. The errors of the
shared encoder it runs on (model files, model cache, a service not ready) are hexmcp.tools.embedding.errors.
"""

from hexmcp._lazy import lazy_exports

# Loaded on first use: finding the installed packs imports this package (for its pack module), and a
# server started with --no-classifier must not pay for the service.
_EXPORTS = {
    "CacheDirError": ".errors",
    "ClassificationConfig": ".config",
    "ClassificationError": ".errors",
    "ClassificationInputError": ".errors",
    "ClassificationService": ".service",
    "TaxonomyError": ".errors",
}
__all__ = sorted(_EXPORTS)
__getattr__ = lazy_exports(__name__, _EXPORTS)
