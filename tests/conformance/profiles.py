"""Hypothesis budgets for the conformance suite: `ci` (derandomized, bounded) and `deep` (100x examples).

`HYPOTHESIS_PROFILE=deep` selects the release-check budget; `ci` is the default when `CI` is set, and
`dev` (the ci budget, but random, so local runs keep exploring new examples) otherwise. Each invariant
states its ci example count through `budget(n)`; the profile scales it.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

DEEP_FACTOR = 100
_COMMON = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                                    HealthCheck.filter_too_much], print_blob=True)
settings.register_profile("ci", derandomize=True, database=None, **_COMMON)
settings.register_profile("dev", **_COMMON)
settings.register_profile("deep", **_COMMON)


def profile_name() -> str:
    chosen = os.environ.get("HYPOTHESIS_PROFILE")
    if chosen in ("ci", "dev", "deep"):
        return chosen
    return "ci" if os.environ.get("CI", "").lower() in ("1", "true", "yes") else "dev"


def budget(ci_examples: int, **overrides: object) -> settings:
    """Settings for one property: `ci_examples` examples in ci/dev, 100 times that in deep."""
    name = profile_name()
    examples = ci_examples * (DEEP_FACTOR if name == "deep" else 1)
    return settings(settings.get_profile(name), max_examples=examples, **overrides)
