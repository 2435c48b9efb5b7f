"""RSS of the code graph of CPython's standard library, from Python.

Each case runs in a fresh interpreter: ``KnowledgeGraph.build`` (the graph and its
lexical index, as ``Memory`` builds them), then ``save``; then, in another process,
``KnowledgeGraph.load`` of that file. Printed per case: the RSS (VmRSS) before and
after, the peak (``ru_maxrss``) by then, and for the build the peak once saved.
Run it with the interpreter whose wheel is measured::

    python benches/graph_memory.py [ROOT]

The Rust side's breakdown (graph alone, live heap, parts) is
``examples/graph_memory.rs``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

__all__ = ["main"]

CASE = """
import json, resource, sys, time
from aircher_mem.engine import KnowledgeGraph

def rss():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0

mode, root, path = sys.argv[1:4]
before = rss()
start = time.perf_counter()
if mode == "build":
    g = KnowledgeGraph.build(root)
else:
    g = KnowledgeGraph.load(path)
seconds = time.perf_counter() - start
after = rss()
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
out = {
    "case": mode,
    "seconds": round(seconds, 2),
    "rss_before_mb": round(before),
    "rss_after_mb": round(after),
    "peak_rss_mb": round(peak),
    "nodes": g.node_count,
}
if mode == "build":
    g.save(path)
    out["peak_rss_with_save_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
print(json.dumps(out))
"""


def main() -> None:
    root = sys.argv[1] if len(sys.argv) > 1 else sysconfig.get_paths()["stdlib"]
    with tempfile.TemporaryDirectory() as scratch:
        path = str(Path(scratch) / "stdlib.graph")
        for mode in ("build", "load"):
            out = subprocess.run(
                [sys.executable, "-c", CASE, mode, root, path], capture_output=True, text=True, check=True
            )
            print(json.dumps(json.loads(out.stdout)))


if __name__ == "__main__":
    main()
