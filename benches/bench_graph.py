"""Indexing CPython's standard library: our graph build (definitions, imports and
every edge kind for every file) against universal-ctags (definitions only) on the
same tree in the same run; then load, update_file and query latency."""

from __future__ import annotations

import itertools
import resource
import shutil
import subprocess
import sysconfig
from pathlib import Path
from typing import Any

import aircher_mem as am
import pytest
from aircher_mem.engine import KnowledgeGraph, TokenCounter, find_relevant_to_query
from aircher_mem.retrieval import search_params

STDLIB = Path(sysconfig.get_paths()["stdlib"])
CTAGS = shutil.which("ctags")


def lines_of_python(root: Path) -> int:
    return sum(p.read_bytes().count(b"\n") for p in root.rglob("*.py") if "site-packages" not in p.parts)


@pytest.fixture(scope="module")
def graph(tmp_path_factory: pytest.TempPathFactory) -> tuple[KnowledgeGraph, Path]:
    g = KnowledgeGraph.build(STDLIB)
    path = tmp_path_factory.mktemp("graph") / "stdlib.graph"
    g.save(path)
    return g, path


def test_build_stdlib(benchmark: Any) -> None:
    benchmark.group = "index CPython stdlib"
    g = benchmark.pedantic(KnowledgeGraph.build, args=(STDLIB,), rounds=3, warmup_rounds=0)
    benchmark.extra_info.update(
        impl="aircher-mem graph",
        files=g.file_count,
        nodes=g.node_count,
        edges=g.edge_count,
        lines=lines_of_python(STDLIB),
        peak_rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024,
    )


@pytest.mark.skipif(CTAGS is None, reason="universal-ctags is not installed (apt-get install universal-ctags)")
def test_ctags_stdlib(benchmark: Any, tmp_path: Path) -> None:
    benchmark.group = "index CPython stdlib"
    out = tmp_path / "tags"
    command = [str(CTAGS), "-R", "--languages=Python", "--exclude=site-packages", "-f", str(out), str(STDLIB)]
    benchmark.pedantic(subprocess.run, args=(command,), kwargs={"check": True}, rounds=3, warmup_rounds=0)
    tags = sum(1 for line in out.read_text(errors="replace").splitlines() if not line.startswith("!"))
    benchmark.extra_info.update(impl="universal-ctags", tags=tags)


def test_load(benchmark: Any, graph: tuple[KnowledgeGraph, Path]) -> None:
    """Each round loads with the previous round's graph freed (outside the timing),
    as a process that loads its graph once would. The lexical index stays in its file
    until it is first needed (see test_load_then_search)."""
    benchmark.group = "graph operations"
    benchmark.extra_info.update(impl="load saved graph")
    loaded: list[KnowledgeGraph] = []

    def setup() -> tuple[tuple[Path], dict[str, Any]]:
        loaded.clear()
        return (graph[1],), {}

    benchmark.pedantic(lambda path: loaded.append(KnowledgeGraph.load(path)), setup=setup, rounds=7, warmup_rounds=1)


@pytest.mark.parametrize("read_index", ["when_needed", "with_graph"])
def test_load_then_search(benchmark: Any, graph: tuple[KnowledgeGraph, Path], read_index: str) -> None:
    """A load and a first search: the whole cost of a process that opens the store to
    search it. ``when_needed`` (the default, no argument given) reads the lexical index at
    the search; ``with_graph`` (what Memory's search verbs ask for) beside the graph."""
    benchmark.group = "graph operations"
    benchmark.extra_info.update(impl=f"load saved graph ({read_index}) + first search")
    params = search_params(am.Policy())
    loaded: list[KnowledgeGraph] = []
    kwargs: dict[str, Any] = {} if read_index == "when_needed" else {"read_index": read_index}

    def setup() -> tuple[tuple[Path], dict[str, Any]]:
        loaded.clear()
        return (graph[1],), {}

    def load_and_search(path: Path) -> None:
        loaded.append(KnowledgeGraph.load(path, **kwargs))
        hits, _, _ = loaded[-1].search("json decoder raises JSONDecodeError in raw_decode", params, limit=10)
        assert hits

    benchmark.pedantic(load_and_search, setup=setup, rounds=7, warmup_rounds=1)


@pytest.mark.parametrize("path", ["json/decoder.py", "os.py", "asyncio/tasks.py"])
def test_update_file(benchmark: Any, graph: tuple[KnowledgeGraph, Path], path: str) -> None:
    benchmark.group = "graph operations"
    benchmark.extra_info.update(impl=f"update_file {path}")
    benchmark(graph[0].update_file, path)


def test_update_file_sample(benchmark: Any, graph: tuple[KnowledgeGraph, Path]) -> None:
    """update_file over every 40th file of the tree in turn: the median is a typical file's."""
    benchmark.group = "graph operations"
    files = graph[0].files[::40]
    benchmark.extra_info.update(impl=f"update_file, {len(files)} files in turn")
    cycle = itertools.cycle(files)
    benchmark.pedantic(lambda: graph[0].update_file(next(cycle)), rounds=len(files) * 3, warmup_rounds=0)


@pytest.mark.parametrize("name", ["raw_decode", "urlopen", "dumps"])
def test_get_callers(benchmark: Any, graph: tuple[KnowledgeGraph, Path], name: str) -> None:
    benchmark.group = "graph operations"
    benchmark.extra_info.update(impl=f"get_callers {name}")
    benchmark(graph[0].get_callers, name)


def test_relevant_code(benchmark: Any, graph: tuple[KnowledgeGraph, Path]) -> None:
    benchmark.group = "graph operations"
    benchmark.extra_info.update(impl="find_relevant_to_query (2K tokens)")
    counter = TokenCounter()
    benchmark.pedantic(
        find_relevant_to_query,
        args=(graph[0], "json decoder raises JSONDecodeError in raw_decode"),
        kwargs={"max_tokens": 2000, "tokens": counter},
        rounds=5,
        warmup_rounds=1,
    )


def test_call_precision(graph: tuple[KnowledgeGraph, Path]) -> None:
    """Not timed: call edges against the ast ground truth of graph_precision.py (the
    figures are in benches/README.md); fails if resolution quality drops."""
    from graph_precision import measure

    overall = measure(STDLIB, graph[0])["all"]
    linked = overall["linked"]
    assert linked / overall["sites"] > 0.98 and overall["right"] / linked > 0.99 and overall["exact"] / linked > 0.95
