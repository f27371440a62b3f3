"""The one percentile every benchmark reports with, so a p99 means the same thing in every table.

Nearest rank on the sorted samples (no interpolation: a reported latency is one that was measured).
"""

from __future__ import annotations

import math
from typing import Iterable


def percentile(samples: Iterable[float], q: float) -> float:
    """The `q`-th percentile (0-100) of `samples`, by nearest rank; NaN when there are none."""
    ordered = sorted(samples)
    if not ordered:
        return math.nan
    rank = math.ceil(q / 100 * len(ordered))
    return ordered[min(max(rank, 1), len(ordered)) - 1]
