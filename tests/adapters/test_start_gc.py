"""The collector around the command's start (app/start/collector.py, ADR 0011): paused inside the block,
back as it was after it (also when the block raises), and what the block made frozen."""

from __future__ import annotations

import gc

import pytest

from hexmcp.app.start.collector import collection_paused


@pytest.mark.parametrize("enabled_before", [True, False])
def test_collection_is_paused_inside_and_restored_after(enabled_before: bool) -> None:
    was = gc.isenabled()
    (gc.enable if enabled_before else gc.disable)()
    try:
        with collection_paused():
            assert not gc.isenabled()
        assert gc.isenabled() is enabled_before
        with pytest.raises(RuntimeError), collection_paused():
            raise RuntimeError("a failed import")
        assert gc.isenabled() is enabled_before
    finally:
        (gc.enable if was else gc.disable)()


def test_what_the_block_made_is_frozen_so_later_passes_skip_it() -> None:
    frozen_before = gc.get_freeze_count()
    with collection_paused():
        made = [[n] for n in range(1000)]  # lists are always tracked by the collector
    assert gc.get_freeze_count() >= frozen_before + len(made)
    young, _, _ = gc.get_count()
    assert young < len(made)  # nothing of it is left for the next young pass to walk
