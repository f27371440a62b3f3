"""Rate limits as an observer of the core (ADR 0921): per client, per transport, per tool."""

from .bucket import Admission, BucketRate, TokenBuckets
from .observer import RateLimiter, RateLimits

__all__ = ["Admission", "BucketRate", "RateLimiter", "RateLimits", "TokenBuckets"]
