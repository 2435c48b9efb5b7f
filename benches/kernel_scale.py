"""A full index of a large tree the way a user runs it, against universal-ctags in
the same run (the targets for a kernel-sized tree: build <= 3 min, RSS <= 4 GB, load <= 2 s,
``update_file`` <= 20 ms median).

1. ``ctags -R --languages=C,C++`` over ROOT, before and after our build;
2. ``aircher-mem index ROOT --quiet --full`` in its own process under
   ``/usr/bin/time -v`` (wall time, peak RSS), store in ROOT/.aircher;
3. in a fresh process: ``KnowledgeGraph.load`` of the saved graph (wall time, RSS),
   then ``update_file`` on ``--edits`` real ``.c`` files (every n-th of the sorted
   list), each edited on disk (``--edit comment``: a comment line appended;
   ``--edit function``: a new function calling ``kfree`` appended), updated, restored and
   updated again; the median of the edited updates is reported. The load leaves the
   lexical index in its file until it is needed (``--read-index with_graph``: reads
   it beside the graph): these updates queue their documents. Then a first search
   (which reads the index and indexes what was queued) and a second, timed; then
   the same updates again with the index in memory (``index_read``);
4. with ``--aider-python``: on the subtree ``--subtree`` (the whole kernel takes
   aider tens of minutes), aider's ``RepoMap.get_tags`` (``aider_tags.py``), our
   ``KnowledgeGraph.build`` and ctags, in the same run.

    python benches/kernel_scale.py /work/linux/linux-source-6.1 \\
        --aider-python /work/venv-aider/bin/python --subtree fs

``--skip-index`` skips steps 1 and 2 and loads the store already in ROOT/.aircher
(a full index of the kernel takes minutes and ~10 GB of RAM).

Prints one JSON object (also written to ``--out`` when given).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def ctags(root: Path) -> float:
    with tempfile.TemporaryDirectory() as scratch:
        start = time.perf_counter()
        subprocess.run(
            ["ctags", "-R", "--languages=C,C++", "-f", str(Path(scratch) / "tags"), str(root)],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        return time.perf_counter() - start


def tree_size(root: Path, max_bytes: int = 1_000_000) -> tuple[int, int]:
    """(files, bytes) of the tree's C and C++ sources under the size limit."""
    files = size = 0
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in names:
            if name.endswith((".c", ".h", ".cc", ".cpp", ".hpp")):
                st = os.lstat(os.path.join(folder, name))
                if st.st_size <= max_bytes:
                    files, size = files + 1, size + st.st_size
    return files, size


def time_v(command: list[str]) -> tuple[float, float, str]:
    """(wall seconds, peak RSS in MB, stdout) of a command under /usr/bin/time -v."""
    start = time.perf_counter()
    done = subprocess.run(["/usr/bin/time", "-v", *command], capture_output=True, text=True, check=True)
    wall = time.perf_counter() - start
    peak = re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr)
    return wall, int(peak.group(1)) / 1024 if peak else float("nan"), done.stdout


LOAD_AND_UPDATE = r"""
import json, os, statistics, sys, time
from pathlib import Path
from aircher_mem._core import KnowledgeGraph
from aircher_mem.config import Policy
from aircher_mem.retrieval import search_params

params = search_params(Policy())

def rss():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024

root, graph_path, edits, edit = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4]
read_index = sys.argv[5]
start = time.perf_counter()
graph = KnowledgeGraph.load(graph_path, root=root, read_index=read_index)
load = time.perf_counter() - start
loaded_rss = rss()
files = sorted(f for f in graph.files if f.endswith(".c"))
step = max(1, len(files) // edits)
chosen = files[::step][:edits]

def updates(tag):
    edited, restored = [], []
    for n, rel in enumerate(chosen):
        path = root / rel
        original = path.read_bytes()
        try:
            if edit == "function":
                added = f"\nint aircher_probe_{tag}_{n}(void *p)\n{{\n\tkfree(p);\n\treturn 0;\n}}\n"
            else:
                added = "\n/* aircher-mem kernel_scale edit */\n"
            path.write_bytes(original + added.encode())
            start = time.perf_counter()
            graph.update_file(rel)
            edited.append(time.perf_counter() - start)
        finally:
            path.write_bytes(original)
        start = time.perf_counter()
        graph.update_file(rel)
        restored.append(time.perf_counter() - start)
    return {
        "update_files": len(edited),
        "update_median_ms": statistics.median(edited) * 1000,
        "update_p90_ms": sorted(edited)[int(0.9 * (len(edited) - 1))] * 1000,
        "update_max_ms": max(edited) * 1000,
        "restore_median_ms": statistics.median(restored) * 1000,
        "restore_max_ms": max(restored) * 1000,
        "edited_ms": {rel: round(t * 1000, 2) for rel, t in zip(chosen, edited)},
    }

# With read_index="when_needed" the lexical index is read at the first search (the
# load leaves it in its file): the updates before it queue their documents, those
# after it index them. With "with_graph" the load read it.
before_read = updates("a")
read_before = graph.lexical_read
start = time.perf_counter()
hits, _, _ = graph.search("kfree memory leak", params, limit=10)
first_search = time.perf_counter() - start
start = time.perf_counter()
graph.search("spin lock irq save", params, limit=10)
second_search = time.perf_counter() - start
searched_rss = rss()
after_read = updates("b")
print(json.dumps({
    "load_seconds": load,
    "rss_after_load_mb": loaded_rss,
    "files": len(graph.files),
    "nodes": graph.node_count,
    "edges": graph.edge_count,
    "edit": edit,
    "read_index": read_index,
    "lexical_read_before_search": read_before,
    "first_search_seconds": first_search,
    "first_search_hits": len(hits),
    "second_search_seconds": second_search,
    "rss_after_search_mb": searched_rss,
    **before_read,
    "index_read": after_read,
}))
"""

BUILD_SUBTREE = r"""
import json, sys, time
from aircher_mem._core import KnowledgeGraph
start = time.perf_counter()
graph = KnowledgeGraph.build(sys.argv[1])
print(json.dumps({"seconds": time.perf_counter() - start, "files": graph.file_count}))
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("root", type=Path)
    parser.add_argument("--edits", type=int, default=50)
    parser.add_argument("--edit", choices=["comment", "function"], default="comment")
    parser.add_argument(
        "--read-index",
        choices=["when_needed", "with_graph"],
        default="when_needed",
        help="when the load reads the lexical index (KnowledgeGraph.load's read_index)",
    )
    parser.add_argument("--aider-python", default=None)
    parser.add_argument("--subtree", default="fs")
    parser.add_argument("--skip-full", action="store_true", help="only the subtree comparison")
    parser.add_argument(
        "--skip-index",
        action="store_true",
        help="no ctags and no index: load the store already in ROOT/.aircher, then the updates",
    )
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    root = args.root.resolve()
    cli = Path(sys.executable).with_name("aircher-mem")
    out: dict[str, object] = {"root": str(root), "started": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())}

    if not args.skip_full and not args.skip_index:
        files, size = tree_size(root)
        out["c_cpp_files"], out["c_cpp_mb"] = files, size / 1e6
        out["load_average_before"] = load_average()
        out["ctags_before_seconds"] = ctags(root)
        shutil.rmtree(root / ".aircher", ignore_errors=True)
        out["load_average_index"] = load_average()
        wall, peak, stdout = time_v([str(cli), "index", str(root), "--quiet", "--full", "--json"])
        report = json.loads(stdout)
        out["index"] = {
            "wall_seconds": wall,
            "peak_rss_mb": peak,
            "files": report.get("files"),
            "parsed": report.get("parsed"),
            "skipped": len(report.get("skipped", [])),
            "warnings": len(report.get("warnings", [])),
            "report_seconds": report.get("seconds"),
        }
        out["load_average_after_index"] = load_average()
        out["ctags_after_seconds"] = ctags(root)
    if not args.skip_full:
        graph_path = root / ".aircher" / "graph.bin"
        out["graph_file_mb"] = graph_path.stat().st_size / 1e6
        lexical = graph_path.with_suffix(".lexical")
        if lexical.exists():
            out["lexical_file_mb"] = lexical.stat().st_size / 1e6
        out["load_average_before_load"] = load_average()
        done = subprocess.run(
            [
                sys.executable,
                "-c",
                LOAD_AND_UPDATE,
                str(root),
                str(graph_path),
                str(args.edits),
                args.edit,
                args.read_index,
            ],
            capture_output=True,
            text=True,
            check=True,
        )
        out["load_and_update"] = json.loads(done.stdout)
        out["load_average_end"] = load_average()

    if args.aider_python:
        sub = root / args.subtree
        files, size = tree_size(sub)
        row: dict[str, object] = {"tree": str(sub), "files": files, "mb": size / 1e6, "load_average": load_average()}
        row["ctags_seconds"] = ctags(sub)
        done = subprocess.run(
            [sys.executable, "-c", BUILD_SUBTREE, str(sub)], capture_output=True, text=True, check=True
        )
        row["ours"] = json.loads(done.stdout)
        done = subprocess.run(
            [args.aider_python, str(HERE / "aider_tags.py"), str(sub)], capture_output=True, text=True, check=True
        )
        row["aider"] = json.loads(done.stdout.strip().splitlines()[-1])
        row["ctags_again_seconds"] = ctags(sub)
        row["load_average_end"] = load_average()
        out["subtree"] = row

    text = json.dumps(out, indent=2)
    print(text)
    if args.out is not None:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
