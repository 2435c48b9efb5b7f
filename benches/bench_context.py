"""Score + prune of agent-like windows: the Rust core against the plain-Python
reference of the same formula, in the same run. Each round prunes a fresh copy."""

from __future__ import annotations

from typing import Any

import pytest
from aircher_mem import _reference as reference
from aircher_mem.engine import ContextItem, ContextPolicy, ContextWindow
from conftest import NOW, agent_like_window

SIZES = [1_000, 10_000, 100_000]
_cache: dict[int, tuple[list[ContextItem], int]] = {}


def window_items(n: int) -> tuple[list[ContextItem], int]:
    if n not in _cache:
        _cache[n] = agent_like_window(n)
    return _cache[n]


@pytest.mark.parametrize("n", SIZES)
def test_prune_rust(benchmark: Any, n: int) -> None:
    items, max_tokens = window_items(n)
    base = ContextWindow(max_tokens)
    base.set_current_task("t1")
    base.extend(items)
    benchmark.group = f"prune {n:,} items"
    benchmark.extra_info.update(items=n, impl="rust")
    result = benchmark.pedantic(
        lambda w: w.maybe_prune(NOW),
        setup=lambda: ((base.copy(),), {}),
        rounds=max(20, 1_000_000 // n),
        warmup_rounds=2,
    )
    assert result is not None and result.tokens_after <= result.threshold


@pytest.mark.parametrize("n", SIZES)
def test_prune_python_reference(benchmark: Any, n: int) -> None:
    items, max_tokens = window_items(n)
    refs = reference.ref_items(items)
    policy = ContextPolicy()
    benchmark.group = f"prune {n:,} items"
    benchmark.extra_info.update(items=n, impl="python")

    def prune() -> list[reference.RefItem]:
        removed = set(reference.pruned_ids(refs, policy, "t1", NOW, max_tokens))
        return [it for it in refs if it.id not in removed]

    kept = benchmark.pedantic(prune, rounds=max(5, 100_000 // n), warmup_rounds=1)
    rust = ContextWindow(max_tokens)
    rust.set_current_task("t1")
    rust.extend(items)
    rust.maybe_prune(NOW)
    assert [it.id for it in kept] == [it.id for it in rust.items()]
