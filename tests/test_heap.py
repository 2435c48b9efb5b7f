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


def full_collections(work) -> int:  # type: ignore[no-untyped-def]
    """How many full collections ran while ``work()`` ran."""
    seen: list[int] = []

    def note(phase: str, info: dict[str, int]) -> None:
        if phase == "start" and info["generation"] == 2:
            seen.append(1)

    gc.callbacks.append(note)
    try:
        work()
    finally:
        gc.callbacks.remove(note)
    return len(seen)


def test_a_block_that_left_many_objects_alive_is_followed_by_one_full_collection() -> None:
    kept: list[list[int]] = []

    def big() -> None:
        with heap.paused():
            kept.extend([i] for i in range(heap.FULL_AFTER + 1_000))  # tracked objects, meant to live
            assert gc.get_count()[0] > heap.FULL_AFTER  # young, uncollected while paused

    assert full_collections(big) == 1
    oldest = {id(o) for o in gc.get_objects(generation=2)}
    assert id(kept[0]) in oldest and id(kept[-1]) in oldest  # not left young for the next calls to walk

    def small() -> None:
        with heap.paused():
            kept.extend([i] for i in range(100))

    gc.collect()
    assert full_collections(small) == 0


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
