"""The interleaved build comparison (benches/build_compare.py): two rounds on a small
tree, this build against itself, with the graph's own counts and ctags' time."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from aircher_mem._core import KnowledgeGraph
from conftest import bench_script

bench = bench_script("build_compare")


@pytest.mark.skipif(shutil.which("ctags") is None, reason="universal-ctags is not installed")
def test_two_builds_of_a_tree_against_ctags(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a.py").write_text("def f():\n    return g()\n\ndef g():\n    return 1\n", encoding="utf-8")
    (tmp_path / "b.py").write_text("from a import f\n\nclass C:\n    def m(self):\n        f()\n", encoding="utf-8")
    graph = KnowledgeGraph.build(tmp_path)
    bench.main(tmp_path, Path(sys.prefix), rounds=2, languages="Python")
    out = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in out[:3]] == ["this", "baseline", "ctags"]
    assert out[4:] == [
        f"this build: nodes, edges [({graph.node_count}, {graph.edge_count})]",
        f"baseline: nodes, edges [({graph.node_count}, {graph.edge_count})]",
        "the same graph size",
    ]
    assert out[3].startswith("this build / baseline: ")
