"""The version of the ONNX graph `onnx_export` builds: part of every model and feature cache key.

It lives alone so that naming a cached model (model_cache.model_path, run at start-up before anything is
served) does not import numpy and onnx along with the converter. Bump it whenever the graph
changes.
"""

CONVERTER_VERSION = "4"
