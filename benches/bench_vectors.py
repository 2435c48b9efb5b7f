"""The dense vector index (``aircher_mem._core.VectorIndex``, the code search's dense
channel) opened from its file and asked its first question: 100,000 random unit rows
of 384 values (2,000 under ``--benchmark-disable``, as CI runs it), saved once.

- ``mapped``: ``VectorIndex.load`` maps the file and decodes the keys; the first search
  reads the codes and the candidates' rows in place (each 64 KiB block checked against
  its checksum when first read);
- ``read into memory`` (the baseline, same run): the same load, then the first change
  (one row written again), which copies every row into memory, as a load did before
  the index was searched in its file; then the search;
- ``warm``: a later search of the loaded index.

    pytest benches/bench_vectors.py
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from aircher_mem._core import VectorIndex

DIM = 384


@pytest.fixture(scope="module")
def saved(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, np.ndarray]:
    rows = 2_000 if request.config.getoption("benchmark_disable") else 100_000
    rng = np.random.default_rng(1)
    vectors = rng.normal(size=(rows, DIM)).astype(np.float32)
    index = VectorIndex(DIM)
    for start in range(0, rows, 10_000):
        index.upsert([f"k{i}" for i in range(start, min(rows, start + 10_000))], vectors[start : start + 10_000])
    path = tmp_path_factory.mktemp("vectors") / "vectors.bin"
    index.save(path)
    return path, vectors


def queries(vectors: np.ndarray) -> itertools.cycle[np.ndarray]:
    rng = np.random.default_rng(2)
    return itertools.cycle(list(rng.normal(size=(16, DIM)).astype(np.float32)))


@pytest.mark.parametrize("read_into_memory", [False, True], ids=["mapped", "read into memory"])
def test_load_and_first_search(benchmark: Any, saved: tuple[Path, np.ndarray], read_into_memory: bool) -> None:
    path, vectors = saved
    asked = queries(vectors)
    benchmark.group = f"vector index of {len(vectors):,} rows: load + first search"
    benchmark.extra_info.update(
        impl="baseline: load, every row copied into memory (a change), search(k=10)"
        if read_into_memory
        else "VectorIndex.load (mapped) + search(k=10)"
    )

    def first() -> None:
        index = VectorIndex.load(path)
        if read_into_memory:
            index.upsert(["k0"], vectors[:1])
        assert len(index.search(next(asked), 10)) == 10

    benchmark.pedantic(first, rounds=10, warmup_rounds=1)


def test_warm_search(benchmark: Any, saved: tuple[Path, np.ndarray]) -> None:
    path, vectors = saved
    asked = queries(vectors)
    index = VectorIndex.load(path)
    benchmark.group = f"vector index of {len(vectors):,} rows: a later search"
    benchmark.extra_info.update(impl="search(k=10) of the loaded index")
    benchmark(lambda: index.search(next(asked), 10))
