"""Recall on a team's PostgreSQL store against the same store as a DuckDB file, in
one run: the long-term store ``--store`` (the file ``bench_longterm.py`` builds:
``AIRCHER_BENCH_LONGTERM_CACHE=DIR pytest benches/bench_longterm.py`` keeps it as
``DIR/longterm-100000.duckdb``) is copied into a fresh database (``copy-store``,
verified); each is opened as ``Memory.longterm`` opens it and loaded (timed), then
LoCoMo's questions are recalled from both, interleaved, ``--passes`` times. A recall
on the server also asks it for the change log's last number (and takes the team's
write lock: recall counts what it serves), so the difference is that round trip.

The server: ``--url`` (a database where this may create one), else a private
cluster started for the run (tests/pg_cluster.py).

    python benches/team_recall.py --store DIR/longterm-100000.duckdb [--passes 2] [--url URL]
"""

from __future__ import annotations

import argparse
import math
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
import aircher_mem as am
import locomo
import pg_cluster
from aircher_mem import transfer
from aircher_mem.longterm import LongTermMemory
from benchdata import LOCOMO


def opened(path: str, url: str = "") -> tuple[LongTermMemory, float]:
    policy = am.Policy()
    start = time.perf_counter()
    lt = LongTermMemory(path, url=url, policy=policy.longterm, retrieval=policy.retrieval, lifecycle=policy.lifecycle)
    lt.counts()  # first use: reads everything, builds the indexes
    return lt, time.perf_counter() - start


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", required=True, help="a long-term store file (bench_longterm.py's)")
    parser.add_argument("--passes", type=int, default=2)
    parser.add_argument("--url", help="a server's database to create the run's database from")
    args = parser.parse_args()
    if not LOCOMO.path.is_file():
        raise SystemExit(LOCOMO.missing())
    questions = [q.text for c in locomo.load(LOCOMO.path) for q in c.questions]
    with pg_cluster.scratch(args.url) as (url, _), tempfile.TemporaryDirectory() as folder:
        local = str(Path(folder) / "store.duckdb")
        shutil.copy(args.store, local)  # the copy migrates it if it must: the given file stays as it is
        copied = transfer.copy_store(local, url)
        print(f"copied {copied.rows} rows in {copied.seconds:.1f} s (verified)")
        file_store, file_load = opened(local)
        team_store, team_load = opened("", url)
        print(f"load: file {file_load:.2f} s (its indexes {file_store.index_source}), server {team_load:.2f} s")
        times: dict[str, list[float]] = {"file": [], "server": []}
        for _ in range(args.passes):
            for q in questions:
                for label, lt in (("file", file_store), ("server", team_store)):
                    start = time.perf_counter()
                    lt.recall(q, k=10)
                    times[label].append(1000 * (time.perf_counter() - start))
        same = sum(
            [h.id for h in file_store.recall(q, k=10).hits] == [h.id for h in team_store.recall(q, k=10).hits]
            for q in questions[:100]
        )
        for label, values in times.items():
            print(
                f"recall on the {label}: p50 {statistics.median(values):.2f} ms, "
                f"p95 {quantile(values, 0.95):.2f} ms ({len(values)} recalls)"
            )
        print(f"same top 10 for {same} of the first 100 questions")
        file_store.close()
        team_store.close()


if __name__ == "__main__":
    main()
