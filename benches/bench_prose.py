"""The prose engine (``aircher_mem.longterm.compress``, in Rust) against the Python it
replaced (``tests/prose_reference.py``, the baseline, same run), on LoCoMo's dev turns
(``locomo-dev.json``, see ``benchdata.py``; skipped without it):

- ``digest``: every episode of 12 consecutive turns, one at a time (what forming an
  episode reads);
- ``digests``: the same episodes made together on every core (what a consolidation
  pass does, 64 at a time);
- ``compress``: every turn's cold form (48 key words, fillers kept: what recall
  serves of a cold turn).

    pytest benches/bench_prose.py
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from aircher_mem.longterm import compress

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
import locomo
import prose_reference
from benchdata import LOCOMO

EPISODE_TURNS = 12
BATCH = 64


@pytest.fixture(scope="module")
def turns() -> list[str]:
    if not LOCOMO.path.is_file():
        pytest.skip(LOCOMO.missing())
    return [t.content for c in locomo.load(LOCOMO.path) for t in c.turns]


def episodes(turns: list[str]) -> list[list[str]]:
    return [turns[i : i + EPISODE_TURNS] for i in range(0, len(turns), EPISODE_TURNS)]


@pytest.mark.parametrize("impl", ["rust", "python reference"])
def test_digest(benchmark: Any, turns: list[str], impl: str) -> None:
    made = episodes(turns)
    digest = compress.digest if impl == "rust" else prose_reference.digest
    benchmark.group = f"digest of {len(made)} episodes of {EPISODE_TURNS} turns, one at a time"
    benchmark.extra_info.update(impl=impl)
    benchmark(lambda: [digest(texts) for texts in made])


def test_digests_together(benchmark: Any, turns: list[str]) -> None:
    made = episodes(turns)
    benchmark.group = f"digest of {len(made)} episodes of {EPISODE_TURNS} turns, one at a time"
    benchmark.extra_info.update(impl=f"rust, {BATCH} at a time on every core (compress.digests)")
    benchmark(lambda: [compress.digests(made[i : i + BATCH]) for i in range(0, len(made), BATCH)])


@pytest.mark.parametrize("impl", ["rust", "python reference"])
def test_compress_cold(benchmark: Any, turns: list[str], impl: str) -> None:
    form = compress.compress if impl == "rust" else prose_reference.compress
    benchmark.group = f"cold form (48 words, fillers) of {len(turns)} turns"
    benchmark.extra_info.update(impl=impl)
    benchmark(lambda: [form(t, max_words=48, fillers=True) for t in turns])
