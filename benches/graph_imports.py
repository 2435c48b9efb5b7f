"""What a tree's imports link to, with the installed wheel: for comparing two wheels
on the same tree (run it with each one's interpreter).

For every import statement that names a package or namespace rather than a class
(Java/Kotlin ``import a.b.*``, Scala ``import a.b._``, C# ``using A.B;``: told apart by
its text, not by the graph), the number of files its ``imports`` edges reach, and how
many of those the importing file uses (a call, type, base or use edge from the file's
definitions into that file). Also every file's dependencies (``get_dependencies``) and
the build time.

    python benches/graph_imports.py ROOT

Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import time
from collections import defaultdict
from pathlib import Path

from aircher_mem.engine import KnowledgeGraph

# An import node's label is "<file>:import <module>"; its statement is read from the file.
PACKAGE_STATEMENT = re.compile(r"^\s*(import\s+[\w.]+\.(\*|_)\s*;?|using\s+[\w.]+\s*;)\s*$")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("root", type=Path)
    args = parser.parse_args()
    start = time.perf_counter()
    graph = KnowledgeGraph.build(args.root)
    seconds = time.perf_counter() - start
    edges = graph.edges()

    def file_of(node: str) -> str:  # labels are "<file>" and "<file>:<name>"
        return node.split(":", 1)[0]

    used: dict[str, set[str]] = defaultdict(set)
    for source, kind, target in edges:
        if kind not in ("contains", "imports"):
            used[file_of(source)].add(file_of(target))
    lines: dict[str, list[str]] = {}
    reached = reached_used = 0
    for source, kind, target in edges:
        if kind != "imports":
            continue
        path = file_of(source)
        if path not in lines:
            lines[path] = (args.root / path).read_text(errors="replace").splitlines()
        module = source.split(":import ", 1)[1]
        if not any(module in line and PACKAGE_STATEMENT.match(line) for line in lines[path]):
            continue
        reached += 1
        reached_used += target in used[path]
    dependencies = [len(graph.get_dependencies(p)) for p in graph.files]
    print(
        json.dumps(
            {
                "root": str(args.root),
                "files": graph.file_count,
                "nodes": graph.node_count,
                "edges": graph.edge_count,
                "build_seconds": round(seconds, 2),
                "imports_edges": sum(1 for _, kind, _ in edges if kind == "imports"),
                "package_import_edges": reached,
                "package_import_edges_to_used_files": reached_used,
                "dependencies_mean": round(statistics.mean(dependencies), 2) if dependencies else 0,
                "dependencies_max": max(dependencies, default=0),
            }
        )
    )


if __name__ == "__main__":
    main()
