"""Recall of call edges for common method names: of the lines where grep finds
`.NAME(` in a tree's Python files, how many the graph links to a definition named
NAME (from that file and line), and how many to exactly one. A method called on an
object of unknown type is linked only when its name has few definitions (see
`KnowledgeGraph.from_files`) or its receiver's class is known.

    python benches/graph_recall.py ROOT NAME [NAME...]
"""

from __future__ import annotations

import re
import sys
import time
from collections import defaultdict
from pathlib import Path

from aircher_mem.engine import KnowledgeGraph


def recall(root: Path, names: list[str]) -> list[tuple[str, int, int, int]]:
    """(name, grep sites, linked, linked to one definition) per name."""
    graph = KnowledgeGraph.build(root)
    files = [p for p in graph.files if p.endswith(".py")]
    wanted = set(names)
    targets: dict[tuple[str, int, str], int] = defaultdict(int)
    for path in files:
        for _, ref in graph.get_references_from(path):
            if ref.kind == "calls" and ref.symbol.name in wanted:
                targets[(path, ref.line, ref.symbol.name)] += 1
    pattern = re.compile(r"\.(" + "|".join(map(re.escape, names)) + r")\s*\(")
    sites: dict[str, set[tuple[str, int]]] = defaultdict(set)
    for path in files:
        text = (root / path).read_text(encoding="utf-8", errors="replace")
        for number, line in enumerate(text.splitlines(), 1):
            for m in pattern.finditer(line):
                sites[m.group(1)].add((path, number))
    out = []
    for name in names:
        found = sites[name]
        linked = [s for s in found if targets.get((s[0], s[1], name))]
        single = [s for s in linked if targets[(s[0], s[1], name)] == 1]
        out.append((name, len(found), len(linked), len(single)))
    return out


def main() -> None:
    root, names = Path(sys.argv[1]), sys.argv[2:]
    started = time.perf_counter()
    rows = recall(root, names)
    print(f"{root} ({time.perf_counter() - started:.1f} s)")
    print("| method | grep sites | linked | to one definition |")
    print("|---|---:|---:|---:|")
    total = [0, 0, 0]
    for name, found, linked, single in rows:
        total = [total[0] + found, total[1] + linked, total[2] + single]
        print(f"| {name} | {found} | {linked} ({linked / max(found, 1):.1%}) | {single} |")
    print(f"| all | {total[0]} | {total[1]} ({total[1] / max(total[0], 1):.1%}) | {total[2]} |")


if __name__ == "__main__":
    main()
