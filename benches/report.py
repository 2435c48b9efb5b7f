"""Prints the benchmark table (markdown) with Rust/Python ratios from a
pytest-benchmark JSON file:  python benches/report.py bench.json"""

from __future__ import annotations

import json
import sys
from collections import defaultdict


def main(path: str) -> None:
    data = json.load(open(path))
    rows: dict[int, dict[str, dict[str, float]]] = defaultdict(dict)
    for b in data["benchmarks"]:
        rows[b["extra_info"]["items"]][b["extra_info"]["impl"]] = b["stats"]
    machine = data["machine_info"]
    print(f"Machine: {machine.get('cpu', {}).get('brand_raw', '?')}, Python {machine['python_version']}\n")
    print("| items | Rust median | Rust min | Python median | Python min | speed-up (medians) | speed-up (mins) |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for n in sorted(rows):
        r, p = rows[n].get("rust"), rows[n].get("python")
        if not r or not p:
            continue
        print(
            f"| {n:,} | {r['median'] * 1e3:.3f} ms | {r['min'] * 1e3:.3f} ms | {p['median'] * 1e3:.1f} ms "
            f"| {p['min'] * 1e3:.1f} ms | {p['median'] / r['median']:.0f}x | {p['min'] / r['min']:.0f}x |"
        )


if __name__ == "__main__":
    main(sys.argv[1])
