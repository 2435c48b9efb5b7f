"""The lexical index's updates where a group is large: long-term memory puts every
memory in one group, so replacing a memory must not cost in proportion to how many
there are. Two indexes of N documents (N = 100,000; 2,000 under
``--benchmark-disable``, as CI runs it), the same texts:

- ``one_group``: every document in group ``""`` (as long-term memory does);
- ``own_groups`` (the baseline): each document in a group of its own (as code
  documents are, a file's few definitions to a group).

Each round replaces one document (upsert of its key with new text), a different one
each round, in each index in turn.

    pytest benches/bench_lexical.py --benchmark-json=lx.json && python benches/report.py lx.json
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from aircher_mem._core import LexicalIndex

WORDS = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi".split()


def size(config: Any) -> int:
    return 2_000 if config.getoption("benchmark_disable") else 100_000


def text(i: int) -> str:
    return " ".join(WORDS[(i * 7 + j * 3) % len(WORDS)] + str(i % 97) for j in range(12))


@pytest.fixture(scope="module", params=["one_group", "own_groups"])
def index(request: pytest.FixtureRequest) -> tuple[str, LexicalIndex, int]:
    n = size(request.config)
    index = LexicalIndex(stem=True)
    shared = request.param == "one_group"
    for start in range(0, n, 10_000):
        index.upsert(
            [
                ("memory", f"m{i}", "" if shared else f"g{i}", {"text": text(i)})
                for i in range(start, min(n, start + 10_000))
            ]
        )
    return request.param, index, n


def test_replace(benchmark: Any, index: tuple[str, LexicalIndex, int]) -> None:
    name, lexical, n = index
    # A different document each round, spread over the whole index.
    keys = itertools.cycle(range(0, n, max(1, n // 997)))
    rounds = itertools.count()

    def replace() -> None:
        i = next(keys)
        group = "" if name == "one_group" else f"g{i}"
        lexical.upsert([("memory", f"m{i}", group, {"text": text(i + next(rounds) + 1)})])

    benchmark.extra_info["documents"] = n
    benchmark(replace)
    # Each upsert replaced a document: none was added or lost.
    assert len(lexical) == n
