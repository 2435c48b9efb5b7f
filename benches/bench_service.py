"""What the service layer costs on top of the graph, on a copy of CPython's standard
library indexed by ``Memory``: each verb against the bare ``KnowledgeGraph`` call it
wraps, in the same run.

- one-shot: ``Memory.open`` + ``callers`` (as one CLI command: the first graph verb
  looks for changed files once) against ``KnowledgeGraph.load`` + ``get_callers``
  (what a CLI command did before the service existed);
- warm: an open ``Memory`` whose refresh is not due (a server between refreshes)
  against ``get_callers`` on a loaded graph: the lock, the argument checks, the
  definition lookup and the conversion to results.
"""

from __future__ import annotations

import dataclasses
import shutil
import sysconfig
from pathlib import Path
from typing import Any

import aircher_mem as am
import pytest
from aircher_mem.engine import KnowledgeGraph

STDLIB = Path(sysconfig.get_paths()["stdlib"])
NAME = "raw_decode"


@pytest.fixture(scope="module")
def stdlib(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("service") / "lib"
    shutil.copytree(STDLIB, root, ignore=shutil.ignore_patterns("site-packages", "__pycache__"), symlinks=True)
    with am.Memory.open(root) as memory:
        memory.index()
    return root


def test_one_shot_service(benchmark: Any, stdlib: Path) -> None:
    benchmark.group = "service: one-shot callers"
    benchmark.extra_info.update(impl="Memory.open + callers (refreshes once)")

    def run() -> int:
        with am.Memory.open(stdlib, create=False) as memory:
            return len(memory.callers(NAME).calls)

    assert benchmark.pedantic(run, rounds=5, warmup_rounds=1) > 0


def test_one_shot_graph(benchmark: Any, stdlib: Path) -> None:
    benchmark.group = "service: one-shot callers"
    benchmark.extra_info.update(impl="KnowledgeGraph.load + get_callers (baseline)")

    def run() -> int:
        return len(KnowledgeGraph.load(stdlib / ".aircher" / "graph.bin").get_callers(NAME))

    assert benchmark.pedantic(run, rounds=5, warmup_rounds=1) > 0


def test_warm_service(benchmark: Any, stdlib: Path) -> None:
    benchmark.group = "service: warm callers"
    benchmark.extra_info.update(impl="Memory.callers, refresh not due")
    policy = am.Policy.load(stdlib)
    policy = dataclasses.replace(policy, server=dataclasses.replace(policy.server, refresh_seconds=86_400.0))
    with am.Memory.open(stdlib, create=False, policy=policy) as memory:
        memory.callers(NAME)  # loads and refreshes once
        assert len(benchmark(memory.callers, NAME).calls) > 0


def test_warm_graph(benchmark: Any, stdlib: Path) -> None:
    benchmark.group = "service: warm callers"
    benchmark.extra_info.update(impl="KnowledgeGraph.get_callers (baseline)")
    graph = KnowledgeGraph.load(stdlib / ".aircher" / "graph.bin")
    assert len(benchmark(graph.get_callers, NAME)) > 0
