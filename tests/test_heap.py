"""The cyclic garbage collector paused for bulk work (aircher_mem.heap)."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from aircher_mem import heap
from aircher_mem.longterm import LongTermMemory


@pytest.fixture(autouse=True)
def collector_on() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    yield
    if was:
        gc.enable()
    else:
        gc.disable()


def test_paused_turns_the_collector_off_and_on_again_after_the_outermost_block() -> None:
    with heap.paused():
        assert not gc.isenabled()
        with heap.paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer block still runs
    assert gc.isenabled()


def test_a_collector_turned_off_before_stays_off() -> None:
    gc.disable()
    with heap.paused():
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_an_error_in_the_block_turns_the_collector_on_again() -> None:
    with pytest.raises(ValueError, match="boom"), heap.paused():
        raise ValueError("boom")
    assert gc.isenabled()


def test_what_the_block_made_goes_to_the_oldest_generation() -> None:
    with heap.paused():
        made = [[i] for i in range(50_000)]  # tracked objects, meant to live
        assert gc.get_count()[0] >= 50_000  # young, uncollected while paused
    # not left young for the next collections to walk, one generation after another
    oldest = {id(o) for o in gc.get_objects(generation=2)}
    assert id(made[0]) in oldest and id(made[-1]) in oldest


def test_objects_a_program_froze_stay_frozen() -> None:
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with heap.paused():
            made = [[i] for i in range(1_000)]
        assert gc.get_freeze_count() == frozen
        assert len(made) == 1_000
    finally:
        gc.unfreeze()


def test_the_collector_is_on_again_once_the_last_thread_is_done() -> None:
    inside, release = threading.Barrier(3), threading.Event()

    def work() -> None:
        with heap.paused():
            inside.wait()
            release.wait()

    threads = [threading.Thread(target=work) for _ in range(2)]
    for t in threads:
        t.start()
    inside.wait()
    assert not gc.isenabled()
    release.set()
    for t in threads:
        t.join()
    assert gc.isenabled()


def test_a_load_and_a_consolidation_leave_the_collector_as_they_found_it(tmp_path: Path) -> None:
    lt = LongTermMemory(tmp_path / "m.duckdb", clock=lambda: 1_700_000_000.0)
    lt.add_turn(session_id="s", role="user", text="We moved the queue to Redis.", at=1_700_000_000.0)
    lt.close()
    lt = LongTermMemory(tmp_path / "m.duckdb", clock=lambda: 1_700_000_000.0)
    assert lt.counts()["turns"] == 1  # the load
    assert gc.isenabled()
    report = lt.consolidate(now=1_700_000_000.0 + 30 * 86_400)
    assert report.episodes == 1
    assert gc.isenabled()
    lt.close()
