"""The MiniLM sentence encoder that several tool packs share: the bundled model files, their conversion to
ONNX and its cache, the encoder itself, and the inference pool that runs it off the event loop.

Importing this package loads nothing: numpy, onnxruntime, tokenizers and onnx come with `encoder`,
`onnx_export` and the conversion, which only code running after start-up imports.
"""

QUANTIZATIONS = ("int8", "fp32", "int8row")
"""The precisions the model cache builds the model in (`--quantization`): int8 (onnxruntime's dynamic
quantization, one activation scale per tensor), fp32, and int8row (one activation scale per token row,
so a text's features do not depend on its batch-mates: onnx_rowwise.py)."""
