"""A graph build of one tree by two builds of the package, against universal-ctags,
interleaved: each round builds the tree (``KnowledgeGraph.build``, both cores) in a
fresh process of this interpreter and of ``--baseline``'s (which goes first
alternates), then runs ``ctags -R`` on it (definitions only), so the three see the
same machine. Prints each one's wall seconds (median, min), the ratios to ctags, the
ratio of the two builds, and whether their node and edge counts agree.

    python benches/build_compare.py ROOT --baseline /path/to/venv [--rounds 6] [--languages Python]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

__all__ = ["main"]

BUILD = (
    "import sys, time\n"
    "from aircher_mem._core import KnowledgeGraph\n"
    "start = time.perf_counter()\n"
    "graph = KnowledgeGraph.build(sys.argv[1])\n"
    "print(time.perf_counter() - start, graph.node_count, graph.edge_count)\n"
)


def build(python: str, root: Path) -> tuple[float, int, int]:
    """Seconds, nodes and edges of one build of ``root`` by ``python``'s package."""
    done = subprocess.run([python, "-c", BUILD, str(root)], capture_output=True, text=True, check=True)
    seconds, nodes, edges = done.stdout.split()
    return float(seconds), int(nodes), int(edges)


def ctags(root: Path, languages: str) -> float:
    """Seconds of ``ctags -R`` on ``root`` (definitions only)."""
    found = shutil.which("ctags")
    if found is None:
        sys.exit("universal-ctags is not installed (apt-get install universal-ctags)")
    with tempfile.TemporaryDirectory() as folder:
        command = [found, "-R", f"--languages={languages}", "--exclude=site-packages", "-f", f"{folder}/tags"]
        command.append(str(root))
        start = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True)
        return time.perf_counter() - start


def main(root: Path, baseline: Path, rounds: int, languages: str) -> None:
    pythons = {"this build": sys.executable, "baseline": str(baseline / "bin" / "python")}
    seconds: dict[str, list[float]] = {name: [] for name in [*pythons, "ctags"]}
    counts: dict[str, set[tuple[int, int]]] = {name: set() for name in pythons}
    for n in range(rounds):
        order = list(pythons.items())
        for name, python in order if n % 2 == 0 else order[::-1]:
            took, nodes, edges = build(python, root)
            seconds[name].append(took)
            counts[name].add((nodes, edges))
        seconds["ctags"].append(ctags(root, languages))
    ctags_median = statistics.median(seconds["ctags"])
    for name, values in seconds.items():
        median = statistics.median(values)
        print(f"{name:10s} median {median:7.3f} s  min {min(values):7.3f} s  {median / ctags_median:5.2f}x ctags")
    ratio = statistics.median(seconds["this build"]) / statistics.median(seconds["baseline"])
    print(f"this build / baseline: {ratio:.3f}")
    for name, found in counts.items():
        print(f"{name}: nodes, edges {sorted(found)}")
    print("the same graph size" if counts["this build"] == counts["baseline"] else "the graph sizes differ")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", type=Path)
    parser.add_argument("--baseline", type=Path, required=True, help="a venv with another build of aircher-mem")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--languages", default="Python", help="ctags' --languages")
    args = parser.parse_args()
    main(args.root, args.baseline, args.rounds, args.languages)
