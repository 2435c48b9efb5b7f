"""Episodic store: what an agent loop pays per record_* call (batched) against a
plain per-call INSERT, and query latency on a store of 100K file interactions,
with and without an index on file_path."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import duckdb
import pytest
from aircher_mem.engine import EpisodicMemory
from conftest import NOW

CALLS = 2_000
ROWS = 100_000
FILES = [f"src/pkg{n % 40}/module_{n}.py" for n in range(2_000)]


def test_record_batched(benchmark: Any, tmp_path: Path) -> None:
    store = EpisodicMemory(tmp_path / "batched.duckdb")
    benchmark.group = "record_file_interaction x 2000"
    benchmark.extra_info.update(impl="batched", calls=CALLS)

    def record() -> None:
        for n in range(CALLS):
            store.record_file_interaction(FILES[n % len(FILES)], "read", line_range=(n, n + 40))
        store.flush()

    benchmark.pedantic(record, rounds=5, warmup_rounds=1)
    store.close()


def test_record_insert_per_call(benchmark: Any, tmp_path: Path) -> None:
    """Baseline: one INSERT statement per call, as a naive recorder would do."""
    con = duckdb.connect(str(tmp_path / "naive.duckdb"))
    con.execute(
        "CREATE TABLE file_interactions (timestamp TIMESTAMP, session_id VARCHAR, file_path VARCHAR, "
        "operation VARCHAR, line_range JSON, success BOOLEAN)"
    )
    benchmark.group = "record_file_interaction x 2000"
    benchmark.extra_info.update(impl="insert-per-call", calls=CALLS)

    def record() -> None:
        for n in range(CALLS):
            con.execute(
                "INSERT INTO file_interactions VALUES (now(), 's', ?, 'read', ?, true)",
                [FILES[n % len(FILES)], f'{{"start": {n}, "end": {n + 40}}}'],
            )

    benchmark.pedantic(record, rounds=3, warmup_rounds=0)
    con.close()


@pytest.fixture(scope="module")
def big_store(tmp_path_factory: pytest.TempPathFactory) -> EpisodicMemory:
    rng = random.Random(7)
    store = EpisodicMemory(tmp_path_factory.mktemp("episodic") / "big.duckdb", batch_size=10_000)
    words = "login session cache parser export search token render upload retry timeout schema".split()
    for t in range(200):
        store.start_task(f"t{t}", " ".join(rng.sample(words, 4)))
        store.complete_task(f"t{t}", " ".join(rng.sample(words, 3)))
    for n in range(ROWS):
        store.record_file_interaction(
            rng.choice(FILES),
            rng.choice(["read", "read", "edit", "search"]),
            task_id=f"t{n // 100}",
            timestamp=NOW + n * 5,
        )
    for n in range(ROWS // 5):
        store.record_tool_execution(
            rng.choice(["bash", "read_file", "edit_file", "pytest"]),
            success=rng.random() < 0.8,
            duration_ms=rng.randint(5, 500),
            timestamp=NOW + n * 25,
        )
    store.flush()
    return store


QUERIES = {
    "file_history": lambda m: m.file_history(FILES[123]),
    "last_interactions": lambda m: m.last_interactions("pkg7/"),
    "co_edited_files": lambda m: m.co_edited_files(),
    "tool_stats": lambda m: m.tool_stats(days=7, now=NOW + ROWS * 5),
    "open_tasks": lambda m: m.open_tasks(),
    "find_similar_tasks": lambda m: m.find_similar_tasks("session login timeout"),
}


@pytest.mark.parametrize("query", sorted(QUERIES))
def test_query(benchmark: Any, big_store: EpisodicMemory, query: str) -> None:
    benchmark.group = f"query on {ROWS:,} interactions"
    benchmark.extra_info.update(impl=query)
    benchmark(QUERIES[query], big_store)


@pytest.mark.parametrize("indexed", [True, False])
def test_file_history_index(benchmark: Any, tmp_path: Path, indexed: bool) -> None:
    """Does an index on file_path help DuckDB? Same data, with and without
    (the schema has none: this measurement is why)."""
    rng = random.Random(3)
    store = EpisodicMemory(tmp_path / "idx.duckdb", batch_size=10_000)
    for n in range(ROWS):
        store.record_file_interaction(rng.choice(FILES), "read", timestamp=NOW + n)
    store.flush()
    if indexed:
        store._con.execute("CREATE INDEX idx_file ON file_interactions (file_path)")
    benchmark.group = "file_history, index on file_path"
    benchmark.extra_info.update(impl="indexed" if indexed else "no index")
    benchmark(store.file_history, FILES[77])
    store.close()
