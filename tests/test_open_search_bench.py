"""The open-and-first-search bench (benches/open_search.py): its percentile rule, and
one round on a small indexed project naming every measure it reports."""

from __future__ import annotations

import json
import math
from pathlib import Path

import aircher_mem as am
import pytest
from conftest import bench_script
from hypothesis import given
from hypothesis import strategies as st

bench = bench_script("open_search")


def test_percentile_is_the_nearest_rank() -> None:
    values = [5.0, 1.0, 4.0, 2.0, 3.0]
    assert bench.percentile(values, 0.5) == 3.0
    assert bench.percentile(values, 0.95) == 5.0
    assert bench.percentile(values, 0.2) == 1.0
    assert bench.percentile(values, 0.21) == 2.0
    assert bench.percentile([7.0], 0.95) == 7.0
    assert bench.percentile(list(map(float, range(1, 21))), 0.95) == 19.0


@given(st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=1), st.floats(0.0, 1.0))
def test_percentile_is_a_value_at_its_rank(values: list[float], fraction: float) -> None:
    found = bench.percentile(values, fraction)
    rank = max(1, math.ceil(fraction * len(values)))
    # The rank-th smallest: fewer than `rank` values below it, at least `rank` up to it.
    assert sum(v < found for v in values) < rank <= sum(v <= found for v in values)
    assert bench.percentile(values, 1.0) == max(values)


def test_one_round_reports_every_measure(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "app"
    root.mkdir()
    (root / "orders.py").write_text("def total_price(order):\n    return sum(order.prices)\n")
    with am.Memory.open(root) as memory:
        memory.index()
    out = tmp_path / "result.json"
    asked = ["--rounds", "1", "--query", "total price", "--symbol", "total_price", "--out", str(out)]
    assert bench.main([str(root), *asked]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == json.loads(out.read_text())
    assert printed["rounds"] == 1 and printed["query"] == "total price"
    assert list(printed["memory"]) == [
        "import + open + first search_code",
        "import of the service",
        "open + first search_code",
        "second search_code",
    ]
    assert list(printed["find"]) == [
        "import + open + first find_symbol",
        "open + first find_symbol",
        "then file_definitions",
    ]
    assert list(printed["related"]) == [
        "import + open + first callers",
        "open + first callers",
        "then references",
        "then dependencies",
        "then neighbourhood",
    ]
    assert list(printed["phases"]) == [
        "graph load (lexical index left in its file)",
        "first search (reads the lexical index)",
        "second search",
        "walk the tree (tracked_files)",
        "look at the tree through its kept walk (tracked, record=graph.walk)",
        "lstat every indexed file",
        "freshness check (index of the unchanged tree)",
        "view open (GraphView.open)",
        "first search of the view",
        "second search of the view",
    ]
    for part in ("memory", "find", "related", "phases"):
        for measure in printed[part].values():
            assert list(measure) == ["p50_ms", "p95_ms"]
            assert 0 < measure["p50_ms"] <= measure["p95_ms"]


def test_a_tree_without_an_index_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as exited:
        bench.main([str(tmp_path)])
    assert exited.value.code == 2
