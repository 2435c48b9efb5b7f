"""Rust vs plain-Python prune, interleaved: one Rust prune, one Python prune, repeated,
so both see the same machine state (this VM's speed drifts by 2x within minutes,
which separate benchmark runs turn into noise in the ratio).

    python benches/ratio.py [--pairs 30]

Prints, per window size, the median of each side and the median of the per-pair
ratios."""

from __future__ import annotations

import argparse
import statistics
import time

from aircher_mem import _reference as reference
from aircher_mem.engine import ContextPolicy, ContextWindow
from conftest import NOW, agent_like_window


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", type=int, default=30)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    args = parser.parse_args()
    print("| items | Rust median | Python median | median of per-pair ratios |")
    print("|---:|---:|---:|---:|")
    for n in args.sizes:
        items, max_tokens = agent_like_window(n)
        base = ContextWindow(max_tokens)
        base.set_current_task("t1")
        base.extend(items)
        refs = reference.ref_items(items)
        policy = ContextPolicy()
        rust, python, ratios = [], [], []
        for _ in range(args.pairs if n <= 10_000 else max(5, args.pairs // 3)):
            window = base.copy()
            started = time.perf_counter()
            window.maybe_prune(NOW)
            r = time.perf_counter() - started
            started = time.perf_counter()
            removed = set(reference.pruned_ids(refs, policy, "t1", NOW, max_tokens))
            [it for it in refs if it.id not in removed]
            p = time.perf_counter() - started
            rust.append(r)
            python.append(p)
            ratios.append(p / r)
        print(
            f"| {n:,} | {statistics.median(rust) * 1e3:.3f} ms | {statistics.median(python) * 1e3:.1f} ms "
            f"| {statistics.median(ratios):.0f}x |"
        )


if __name__ == "__main__":
    main()
