"""How the shared encoder runs: what a pack hands `open_encoder`. Pure data: building one loads nothing."""

from __future__ import annotations

import attrs
from attrs import validators as v

from . import QUANTIZATIONS


@attrs.frozen(kw_only=True)
class EncoderConfig:
    # int8 by default: much faster than fp32, with accuracy in the same band.
    quantization: str = attrs.field(default="int8", validator=v.in_(QUANTIZATIONS))
    max_tokens: int = attrs.field(default=256, validator=[v.instance_of(int), v.ge(3), v.le(512)])
    # onnxruntime intra-op threads. 1: the inference pool's workers keep the cores busy, a pass each.
    threads: int = attrs.field(default=1, validator=[v.instance_of(int), v.ge(1)])
