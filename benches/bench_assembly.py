"""What ``assemble`` and ``predict`` cost on a full store: a copy of CPython's standard
library indexed, N turns and N memories (``bench_longterm.py``'s texts: LoCoMo's
turns, cycled; memories of two turns' texts, every kind, a third in one of eight
domains at L1 and a third about a stdlib module at L2), and N file interactions
and N/4 tool calls (one in five failed) over 200 past tasks on the stdlib's files.
N is 10,000 (2,000 in quick mode; ``AIRCHER_BENCH_ASSEMBLY_N`` sets it).

Against a baseline in the same run:

- ``assemble(budget=8000, query, current_file, activity)``, the questions of LoCoMo
  in turn, against what an agent calls today for the same context: ``recall``,
  ``search_code`` and ``tasks(query)`` one after the other;
- ``predict(current_file)`` against ``file_history(current_file)``, one
  episodic lookup.

    pytest benches/bench_assembly.py --benchmark-json=assembly.json && python benches/report.py assembly.json
"""

from __future__ import annotations

import itertools
import os
import random
import shutil
import sys
import sysconfig
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aircher_mem as am
import pytest

sys.path.insert(0, str(Path(__file__).parent))
import locomo
from benchdata import LOCOMO

STDLIB = Path(sysconfig.get_paths()["stdlib"])
DOMAINS = ("auth", "billing", "storage", "network", "parsing", "search", "ui", "build")
DAY = 86_400.0


@pytest.fixture(scope="module")
def size(request: pytest.FixtureRequest) -> int:
    env = os.environ.get("AIRCHER_BENCH_ASSEMBLY_N")
    if env:
        return int(env)
    return 2_000 if request.config.getoption("benchmark_disable") else 10_000


@pytest.fixture(scope="module")
def memory(size: int, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[am.Memory, list[str], list[str]]]:
    if not LOCOMO.path.is_file():
        pytest.skip(LOCOMO.missing())
    from bench_longterm import Texts

    texts = Texts(locomo.load(LOCOMO.path))
    root = tmp_path_factory.mktemp("assembly") / "lib"
    shutil.copytree(STDLIB, root, ignore=shutil.ignore_patterns("site-packages", "__pycache__", "test"), symlinks=True)
    memory = am.Memory.open(root)
    memory.index()
    files = sorted(str(p.relative_to(root)) for p in root.glob("*.py"))[:400]
    rng = random.Random(35)
    now = time.time()
    lt = memory.longterm
    with lt.batch():
        for i in range(size):
            lt.add_turn(**texts.turn(i))
        made = i = 0
        while made < size and i < 2 * size:
            spec = texts.memory(i, rng, now)
            if i % 3 == 1:
                spec.update(level="L1", domain=DOMAINS[i % len(DOMAINS)])
            elif i % 3 == 2:
                spec.update(level="L2", domain=DOMAINS[i % len(DOMAINS)], module=files[i % len(files)])
            made += lt.remember(**spec).action != "merged"
            i += 1
    with memory.batch():
        for task in range(200):
            tid = f"task-{task}"
            memory.task("start", tid, description=texts.questions[task % len(texts.questions)])
            for step in range(size // 200):
                at = now - (200 - task) * DAY / 10 + step * 30
                path = files[(task * 7 + rng.randrange(12)) % len(files)]
                memory.record_file_interaction(path, "edit" if step % 4 == 0 else "read", task_id=tid, at=at)
                if step % 4 == 1:
                    memory.record_tool_call(
                        "bash", {"command": f"pytest {path}"}, success=step % 20 != 1, task_id=tid, at=at + 1
                    )
            memory.task("complete", tid, outcome="done")
    questions = texts.questions
    yield memory, files, questions
    memory.close()


def _cycle(items: list[str]) -> Iterator[str]:
    return itertools.cycle(items)


def test_assemble(benchmark: Any, memory: tuple[am.Memory, list[str], list[str]]) -> None:
    mem, files, questions = memory
    benchmark.group = "assembly: a context for a question"
    benchmark.extra_info.update(impl="assemble(budget=8000, query, current_file, activity)")
    asked, opened = _cycle(questions), _cycle(files)

    def run() -> int:
        return mem.assemble(budget=8000, query=next(asked), current_file=next(opened), activity="feature").token_count

    assert benchmark.pedantic(run, rounds=50, warmup_rounds=2) > 0


def test_separate_calls(benchmark: Any, memory: tuple[am.Memory, list[str], list[str]]) -> None:
    mem, _, questions = memory
    benchmark.group = "assembly: a context for a question"
    benchmark.extra_info.update(impl="recall + search_code + tasks (baseline)")
    asked = _cycle(questions)

    def run() -> int:
        q = next(asked)
        return (
            len(mem.recall(q, k=30).hits)
            + len(mem.search_code(q, k=3, code=False).hits)
            + len(mem.tasks(query=q).tasks)
        )

    assert benchmark.pedantic(run, rounds=50, warmup_rounds=2) >= 0


def test_predict(benchmark: Any, memory: tuple[am.Memory, list[str], list[str]]) -> None:
    mem, files, _ = memory
    benchmark.group = "assembly: predict for the file opened"
    benchmark.extra_info.update(impl="predict(current_file)")
    opened = _cycle(files)

    def run() -> int:
        return len(mem.predict(current_file=next(opened)).files)

    assert benchmark.pedantic(run, rounds=100, warmup_rounds=2) > 0


def test_file_history(benchmark: Any, memory: tuple[am.Memory, list[str], list[str]]) -> None:
    mem, files, _ = memory
    benchmark.group = "assembly: predict for the file opened"
    benchmark.extra_info.update(impl="file_history(current_file) (baseline)")
    opened = _cycle(files)

    def run() -> int:
        return len(mem.file_history(next(opened)).interactions)

    assert benchmark.pedantic(run, rounds=100, warmup_rounds=2) >= 0


# Last: these store memories of their own.
@pytest.mark.parametrize("anew", [False, True], ids=["placed", "grouped-anew"])
def test_assemble_after_a_new_memory(
    benchmark: Any, memory: tuple[am.Memory, list[str], list[str]], anew: bool
) -> None:
    """``assemble`` right after a memory is stored (a turn's extraction, a remember),
    the router's hierarchy kept with the new memory placed in it; the baseline
    groups every active memory again, as a new hierarchy is."""
    mem, files, questions = memory
    benchmark.group = "assembly: a context right after a memory is stored"
    how = "every active memory grouped again (baseline)" if anew else "the new memory placed in the kept hierarchy"
    benchmark.extra_info.update(impl=f"remember, then assemble(budget=8000, query, current_file): {how}")
    asked, opened, count = _cycle(questions), _cycle(files), itertools.count()

    def setup() -> tuple[tuple[()], dict[str, Any]]:
        n = next(count)
        domain = DOMAINS[n % len(DOMAINS)]
        mem.remember(f"Memory {n} {'anew' if anew else 'placed'}: {next(asked)}", domain=domain, level="L1")
        if anew:
            mem._known.clear()
        return (), {}

    def run() -> int:
        return mem.assemble(budget=8000, query=next(asked), current_file=next(opened)).token_count

    assert benchmark.pedantic(run, setup=setup, rounds=50, warmup_rounds=2) > 0
