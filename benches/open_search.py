"""Open a stored index and answer a first question, each round in a fresh process
(as one CLI command or a hook does), on a tree indexed beforehand
(``aircher-mem index ROOT --quiet --full``):

- ``memory``: the import of the service (``aircher_mem.memory``) + ``Memory.open(ROOT,
  create=False)`` + ``search_code(QUERY)``, what a user waits for; the same without
  the import (the store opened and searched by a process that has the service); and
  the same process's second ``search_code``;
- ``find``, with ``--symbol NAME``: the same for ``find_symbol(NAME)``, then
  ``file_definitions`` of the file of its first definition;
- ``related``, with ``--symbol NAME``: the same for ``callers(NAME)``, then
  ``references(NAME)``, ``dependencies`` of the file of its first definition and
  ``neighbourhood(NAME)`` (one hop);
- ``phases``: the parts of it, each timed on its own: ``KnowledgeGraph.load`` of the
  saved graph (the lexical index left in its file), the first ``search`` (which reads
  the lexical index, then searches), a second ``search`` (the search proper); the
  saved graph searched in place instead (``GraphView.open``, its first and second
  ``search``: what ``search_code`` reads in a process that has not loaded the graph,
  absent from a package without it); the walk
  of the tree for its source files (``tracked_files``), the look at the tree through
  the walk an index kept (``graph.walk``: each folder, ignore file and indexed file
  stated, absent from a package without it) and a look at each indexed
  file's time and size (``os.lstat``), and the freshness check a graph verb makes
  on a graph loaded (``GraphIndex.index`` of the unchanged tree: the manifest read,
  the walk, which ``lstat``s each file it finds, and the comparison).

    python benches/open_search.py ROOT [--rounds 20] [--query TEXT] [--symbol NAME] [--out FILE]

Prints one JSON object: per measure, the median and the 95th percentile (the
nearest-rank one) in milliseconds, with the load average before and after.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
from pathlib import Path

__all__ = ["main", "percentile"]

# What a round's process begins with (before MEMORY, FIND or RELATED): the import of
# the service, timed, and its arguments (the root and what is asked).
OPEN = r"""
import json, sys, time
start = time.perf_counter()
import aircher_mem as am
import aircher_mem.memory
imported = time.perf_counter()
root, asked = sys.argv[1], sys.argv[2]
"""

MEMORY = r"""
with am.Memory.open(root, create=False) as memory:
    memory.search_code(asked)
    searched = time.perf_counter()
    memory.search_code(asked)
    again = time.perf_counter()
print(json.dumps({
    "import + open + first search_code": searched - start,
    "import of the service": imported - start,
    "open + first search_code": searched - imported,
    "second search_code": again - searched,
}))
"""

FIND = r"""
with am.Memory.open(root, create=False) as memory:
    found = memory.find_symbol(asked)
    first = time.perf_counter()
    memory.file_definitions(found.symbols[0].path)
    outlined = time.perf_counter()
print(json.dumps({
    "import + open + first find_symbol": first - start,
    "open + first find_symbol": first - imported,
    "then file_definitions": outlined - first,
}))
"""

PHASES = r"""
import json, os, sys, time
from pathlib import Path
from aircher_mem import _core
from aircher_mem._core import KnowledgeGraph
from aircher_mem.config import Policy
from aircher_mem.graph import GraphIndex, tracked_files
from aircher_mem.retrieval import search_params
root, query = Path(sys.argv[1]), sys.argv[2]
params = search_params(Policy())
start = time.perf_counter()
graph = KnowledgeGraph.load(root / ".aircher" / "graph.bin", root=root)
loaded = time.perf_counter()
graph.search(query, params)
first = time.perf_counter()
graph.search(query, params)
second = time.perf_counter()
tracked, _ = tracked_files(root)
walked = time.perf_counter()
looked = {}
if "record" in (KnowledgeGraph.tracked.__text_signature__ or ""):  # (an older package walks each time)
    looking = time.perf_counter()
    KnowledgeGraph.tracked(root, record=root / ".aircher" / "graph.walk")
    looked = {"look at the tree through its kept walk (tracked, record=graph.walk)": time.perf_counter() - looking}
statted_from = time.perf_counter()
for rel in graph.files:
    try:
        os.lstat(os.path.join(root, rel))
    except OSError:
        pass
statted = time.perf_counter()
index = GraphIndex(root, root / ".aircher", Policy.load(root))
index.load("when_needed")
checking = time.perf_counter()
index.index()
checked = time.perf_counter()
viewed = {}
if hasattr(_core, "GraphView"):  # (an older package has none)
    opening = time.perf_counter()
    view = _core.GraphView.open(root / ".aircher" / "graph.bin", root=root)
    opened = time.perf_counter()
    view.search(query, params)
    searched = time.perf_counter()
    view.search(query, params)
    viewed = {
        "view open (GraphView.open)": opened - opening,
        "first search of the view": searched - opened,
        "second search of the view": time.perf_counter() - searched,
    }
print(json.dumps({
    "graph load (lexical index left in its file)": loaded - start,
    "first search (reads the lexical index)": first - loaded,
    "second search": second - first,
    "walk the tree (tracked_files)": walked - second,
    **looked,
    "lstat every indexed file": statted - statted_from,
    "freshness check (index of the unchanged tree)": checked - checking,
    **viewed,
}))
"""


RELATED = r"""
with am.Memory.open(root, create=False) as memory:
    calls = memory.callers(asked)
    first = time.perf_counter()
    memory.references(asked)
    referred = time.perf_counter()
    memory.dependencies(calls.definitions[0].path)
    depended = time.perf_counter()
    memory.neighbourhood(asked)
    near = time.perf_counter()
print(json.dumps({
    "import + open + first callers": first - start,
    "open + first callers": first - imported,
    "then references": referred - first,
    "then dependencies": depended - referred,
    "then neighbourhood": near - depended,
}))
"""


def percentile(values: list[float], fraction: float) -> float:
    """The nearest-rank percentile of ``values`` (not empty)."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(fraction * len(ordered)) - 1)]


def load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def rounds_of(script: str, root: Path, query: str, rounds: int) -> dict[str, dict[str, float]]:
    """Runs ``script`` ``rounds`` times, each in a fresh interpreter; per measure,
    its median and p95 in milliseconds."""
    rows: list[dict[str, float]] = []
    for _ in range(rounds):
        done = subprocess.run(
            [sys.executable, "-c", script, str(root), query], capture_output=True, text=True, check=True
        )
        rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
    return {
        name: {
            "p50_ms": round(percentile([r[name] * 1e3 for r in rows], 0.5), 2),
            "p95_ms": round(percentile([r[name] * 1e3 for r in rows], 0.95), 2),
        }
        for name in rows[0]
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", type=Path, help="a tree indexed beforehand (ROOT/.aircher/graph.bin)")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--query", default="queryset filter annotate aggregate")
    parser.add_argument("--symbol", help="a name to find and follow (find_symbol, callers...) in fresh processes")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    root = args.root.resolve()
    if not (root / ".aircher" / "graph.bin").is_file():
        parser.error(f"{root} has no stored index: run `aircher-mem index {root} --quiet --full` first")
    before = load_average()
    result = {
        "root": str(root),
        "rounds": args.rounds,
        "query": args.query,
        "lexical file bytes": os.path.getsize(root / ".aircher" / "graph.lexical"),
        "graph file bytes": os.path.getsize(root / ".aircher" / "graph.bin"),
        "memory": rounds_of(OPEN + MEMORY, root, args.query, args.rounds),
        **({"find": rounds_of(OPEN + FIND, root, args.symbol, args.rounds)} if args.symbol else {}),
        **({"related": rounds_of(OPEN + RELATED, root, args.symbol, args.rounds)} if args.symbol else {}),
        "phases": rounds_of(PHASES, root, args.query, args.rounds),
        "load average before / after": [before, load_average()],
    }
    text = json.dumps(result, indent=2)
    print(text)
    if args.out is not None:
        args.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
