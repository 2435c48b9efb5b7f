"""Build time and `update_file` latency on CPython's standard library, in one
process, for comparing two wheels run alternately: the stdlib graph is built once,
then each of four files is updated 25 times with its content unchanged, then every
40th file twice in turn; medians are printed.

    python benches/graph_update_cost.py LABEL
"""

from __future__ import annotations

import statistics
import sys
import sysconfig
import time

from aircher_mem.engine import KnowledgeGraph


def main() -> None:
    root = sysconfig.get_paths()["stdlib"]
    started = time.perf_counter()
    graph = KnowledgeGraph.build(root)
    out: dict[str, float] = {"build s": round(time.perf_counter() - started, 2)}
    for path in ["os.py", "asyncio/tasks.py", "json/decoder.py", "typing.py"]:
        times = []
        for _ in range(25):
            started = time.perf_counter()
            graph.update_file(path)
            times.append((time.perf_counter() - started) * 1000)
        out[f"{path} ms"] = round(statistics.median(times), 2)
    files = graph.files[::40]
    times = []
    for path in files * 2:
        started = time.perf_counter()
        graph.update_file(path)
        times.append((time.perf_counter() - started) * 1000)
    out[f"{len(files)} files in turn ms"] = round(statistics.median(times), 2)
    print(sys.argv[1] if len(sys.argv) > 1 else "", out, flush=True)


if __name__ == "__main__":
    main()
