"""Rate limits as an observer of the core: per client, per transport, per tool.

The design and its trade-offs: docs/adr/0921-rate-limits.md.
"""

from .bucket import Admission, BucketRate, TokenBuckets
from .observer import RateLimiter, RateLimits

__all__ = ["Admission", "BucketRate", "RateLimiter", "RateLimits", "TokenBuckets"]
