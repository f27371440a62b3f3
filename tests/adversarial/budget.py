"""Hypothesis budgets for the adversarial suite: few examples, each under a deadline.

Every property runs a modest number of examples with a per-example deadline, so a server that hangs on
an input fails that property by its deadline instead of stalling the suite (issue 30), and the whole
package finishes in a few minutes on two cores. Derandomized: CI sees the same examples every run;
ADVERSARIAL_EXAMPLES_FACTOR=N runs N times as many (and random ones with ADVERSARIAL_RANDOM=1).
"""

from __future__ import annotations

import os
from datetime import timedelta

from hypothesis import HealthCheck, settings

DEADLINE = timedelta(seconds=20)
_FACTOR = int(os.environ.get("ADVERSARIAL_EXAMPLES_FACTOR", "1"))
_PROFILE = settings(deadline=DEADLINE, database=None, derandomize=not os.environ.get("ADVERSARIAL_RANDOM"),
                    print_blob=True, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                                            HealthCheck.large_base_example,
                                                            HealthCheck.filter_too_much])


def examples(count: int) -> settings:
    """Settings for one property: `count` examples (times ADVERSARIAL_EXAMPLES_FACTOR), 20 s each at most."""
    return settings(_PROFILE, max_examples=count * _FACTOR)
