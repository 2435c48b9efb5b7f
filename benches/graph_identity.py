"""Whether two wheels give the same graph, for a change to the graph store that must
not change its results: run it once with each wheel's interpreter and diff the two
outputs.

A copy of CPython's standard library (without tests, idlelib and site-packages,
always at the same path, so the saved root is the same) is built, then a third of
every 50th file gets a function appended, a third is cut in half and a third is
deleted, each followed by ``update_file``; the graph is saved and loaded again.
For each of the three states (built, updated, loaded) it prints: the SHA-256 of the
saved file, the node and edge counts, the sorted edge list's SHA-256, ``rank``
results with scores as ``float.hex`` (bit for bit) and rounded to 12 digits,
``neighbourhood`` and ``get_callers`` results. The built state is deterministic;
after updates the graph's edge order depends on hash iteration order (a random seed
per process), so the saved file and the last bits of the scores differ between two
runs of one wheel: compare those states by the sorted edges and the rounded scores.

    python benches/graph_identity.py OUT.txt
"""

from __future__ import annotations

import hashlib
import shutil
import sys
import sysconfig
from pathlib import Path

from aircher_mem._core import KnowledgeGraph

__all__ = ["main"]

COPY = Path("/tmp/aircher-graph-identity/stdlib")


def digest(graph: KnowledgeGraph, label: str, out: list[object]) -> Path:
    saved = COPY.parent / f"{label}.bin"
    graph.save(str(saved))
    out.append((label, "saved", hashlib.sha256(saved.read_bytes()).hexdigest()))
    out.append((label, "counts", graph.file_count, graph.node_count, graph.edge_count))
    out.append((label, "edges", hashlib.sha256(repr(graph.edges()).encode()).hexdigest()))
    seeds: list[tuple[list[str], list[str]]] = [
        (["join"], []),
        (["open", "read"], ["os.py"]),
        (["Popen"], ["subprocess.py", "shutil.py"]),
        ([], ["typing.py"]),
    ]
    for names, files in seeds:
        ranked = graph.rank(names, files, limit=200)
        out.append((label, "rank", names, files, [(s.path, s.name, s.line, float(x).hex()) for s, x in ranked]))
        out.append((label, "rank~", names, files, [(s.path, s.name, s.line, f"{x:.12g}") for s, x in ranked]))
    for name in ["join", "OrderedDict", "os.py"]:
        near = graph.neighbourhood(name, 2)
        out.append((label, "neighbourhood", name, [(s.path, s.name, s.line, d) for s, d in near]))
    out.append((label, "callers", [repr(r) for r in graph.get_callers("join")]))
    return saved


def main() -> None:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    shutil.rmtree(COPY.parent, ignore_errors=True)
    shutil.copytree(stdlib, COPY, ignore=shutil.ignore_patterns("site-packages", "__pycache__", "test", "idlelib"))
    graph = KnowledgeGraph.build(str(COPY))
    out: list[object] = []
    digest(graph, "built", out)
    files = sorted(f for f in graph.files if f.endswith(".py"))
    for i, rel in enumerate(files[::50]):
        path = COPY / rel
        text = path.read_text(encoding="utf-8", errors="surrogateescape")
        if i % 3 == 2:
            path.unlink()
        else:
            if i % 3 == 0:
                text += f"\n\ndef _probe_{i}():\n    return join('a') + len([]) + OrderedDict()\n"
            else:
                text = text[: len(text) // 2].rsplit("\n", 1)[0] + "\n"
            path.write_text(text, encoding="utf-8", errors="surrogateescape")
        graph.update_file(rel)
    saved = digest(graph, "updated", out)
    digest(KnowledgeGraph.load(str(saved), root=COPY), "loaded", out)
    Path(sys.argv[1]).write_text("\n".join(repr(line) for line in out) + "\n")
    shutil.rmtree(COPY.parent, ignore_errors=True)


if __name__ == "__main__":
    main()
