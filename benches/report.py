"""Prints the benchmark tables (markdown) from a pytest-benchmark JSON file:

    python benches/report.py bench.json

Prune groups get Rust/Python ratios; every other group, its cases side by side."""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from typing import Any


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3f} ms" if seconds < 0.01 else f"{seconds * 1e3:.1f} ms"


def prune_table(benchmarks: list[dict[str, Any]]) -> None:
    rows: dict[int, dict[str, dict[str, float]]] = defaultdict(dict)
    for b in benchmarks:
        rows[b["extra_info"]["items"]][b["extra_info"]["impl"]] = b["stats"]
    print("| items | Rust median | Rust min | Python median | Python min | speed-up (medians) | speed-up (mins) |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for n in sorted(rows):
        r, p = rows[n].get("rust"), rows[n].get("python")
        if r and p:
            print(
                f"| {n:,} | {ms(r['median'])} | {ms(r['min'])} | {ms(p['median'])} | {ms(p['min'])} "
                f"| {p['median'] / r['median']:.0f}x | {p['min'] / r['min']:.0f}x |"
            )


def main(path: str) -> None:
    data = json.load(open(path))
    machine = data["machine_info"]
    print(f"Machine: {machine.get('cpu', {}).get('brand_raw', '?')}, Python {machine['python_version']}")
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for b in data["benchmarks"]:
        groups[b["group"]].append(b)
    prune = [b for g, bs in groups.items() if g.startswith("prune ") for b in bs]
    if prune:
        print("\n### score + prune\n")
        prune_table(prune)
    for group, bs in groups.items():
        if group.startswith("prune "):
            continue
        print(f"\n### {group}\n\n| case | median | min | rounds |\n|---|---:|---:|---:|")
        for b in sorted(bs, key=lambda b: b["stats"]["median"]):
            print(
                f"| {b['extra_info'].get('impl', b['name'])} | {ms(b['stats']['median'])} | {ms(b['stats']['min'])} "
                f"| {b['stats']['rounds']} |"
            )


if __name__ == "__main__":
    main(sys.argv[1])
