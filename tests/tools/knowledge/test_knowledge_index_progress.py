"""`hexmcp index`'s progress lines: what they say, when they are written, and a rate cached passages do not inflate."""

from __future__ import annotations

import io

import pytest

from hexmcp.tools.knowledge.index_progress import LOG_INTERVAL_S, IndexProgress, format_duration


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize(("seconds", "shown"), [(0, "0s"), (44.6, "45s"), (187, "3m07s"), (3599.4, "59m59s"),
                                                (3725, "1h02m"), (-3, "0s")])
def test_durations_are_short_and_exact_where_it_matters(seconds: float, shown: str) -> None:
    assert format_duration(seconds) == shown


def test_the_rate_and_the_eta_count_only_what_this_run_embedded() -> None:
    clock, stream = Clock(), io.StringIO()
    progress = IndexProgress(1000, stream, clock=clock, terminal=False)
    clock.now += 30  # loading the corpus and the model
    progress.advance(400, embedded=0)  # what the cache held, all at once
    assert stream.getvalue() == ""  # no rate yet: nothing to promise
    clock.now += 10
    progress.advance(100, embedded=100)
    # 100 passages in the 10 s since embedding began (not 500 in 40 s); 500 left at 10/s.
    assert stream.getvalue() == "indexing: 500/1000 passages (50%), 10.0 passages/s, ETA 50s\n"


def test_a_log_gets_a_line_per_interval_and_a_last_one_on_close() -> None:
    clock, stream = Clock(), io.StringIO()
    progress = IndexProgress(300, stream, clock=clock, terminal=False)
    for _ in range(10):
        clock.now += LOG_INTERVAL_S / 4
        progress.advance(10, embedded=progress.embedded + 10)
    progress.close()
    lines = stream.getvalue().splitlines()
    assert len(lines) == 1 + 2 + 1  # the first rate, one per interval since, the close
    assert lines[-1] == "indexing: 100/300 passages (33%), 4.0 passages/s, ETA 50s"


def test_a_terminal_line_is_rewritten_in_place_and_padded() -> None:
    clock, stream = Clock(), io.StringIO()
    progress = IndexProgress(10, stream, clock=clock, terminal=True)
    progress.advance(10, embedded=0)
    progress.close()
    first = "indexing: 10/10 passages (100%), all from the cache"
    assert stream.getvalue() == f"\r{first}\r{first}\n"
