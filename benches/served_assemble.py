"""What a prompt costs the server of a large store: ``aircher-mem serve`` on a copy of a
long-term store (``bench_longterm.py``'s, e.g. its 100K-memory one kept with
``AIRCHER_BENCH_LONGTERM_CACHE``), then, each round, the requests a
``UserPromptSubmit`` hook and the next prompt send: ``POST /assemble`` for a
question, ``POST /add-turn`` of a turn whose extraction keeps a decision, and
``POST /assemble`` again (the first after a memory was stored). The first
``/assemble``, made as soon as the server answers, loads the store and is reported
on its own.

With ``--baseline VENV``, the interpreter of another environment (an older build
of the package) serves its own copy of the store, the two servers asked in turn,
one round each.

    python benches/served_assemble.py STORE [--rounds 20] [--baseline /path/to/venv]

Prints one JSON object: per build, the load's milliseconds and per request the
median and the 95th percentile (nearest rank) in milliseconds.
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from aircher_mem.interfaces import client as http_client
from aircher_mem.longterm.core import INDEX_SUFFIXES

__all__ = ["main", "project"]

CASES = ("assemble", "add-turn", "assemble after a kept memory")


def project(store: Path, root: Path) -> None:
    """A project at ``root`` whose store is a copy of ``store`` and of the indexes
    saved beside it."""
    folder = root / ".aircher"
    folder.mkdir(parents=True)
    shutil.copyfile(store, folder / "memory.duckdb")
    for suffix in INDEX_SUFFIXES:
        saved = Path(f"{store}{suffix}")
        if saved.exists():
            shutil.copyfile(saved, folder / f"memory.duckdb{suffix}")


class Served:
    """``aircher-mem serve`` for ``root`` run by ``python``."""

    def __init__(self, python: str, root: Path) -> None:
        self.process = subprocess.Popen(
            [python, "-m", "aircher_mem", "serve", "--root", str(root), "--port", "0"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 300
        found = None
        while found is None:
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the server for {root} did not start")
            time.sleep(0.2)
            found = http_client.Client.discover(root)
        found.timeout = 600
        self.client = found

    def post(self, path: str, body: dict[str, object]) -> float:
        start = time.perf_counter()
        self.client.request("POST", path, json=body)
        return 1000 * (time.perf_counter() - start)

    def close(self) -> None:
        self.process.terminate()
        self.process.wait(60)


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[math.ceil(0.95 * len(ordered)) - 1]


def main(store: Path, rounds: int, baseline: Path | None) -> dict[str, object]:
    builds = {"this build": sys.executable}
    if baseline is not None:
        builds["baseline"] = str(baseline / "bin" / "python")
    with tempfile.TemporaryDirectory() as tmp:
        servers: dict[str, Served] = {}
        try:
            loads: dict[str, float] = {}
            for name, python in builds.items():  # one at a time: a server loads the store alone
                root = Path(tmp) / name.replace(" ", "-")
                project(store, root)
                served = servers[name] = Served(python, root)
                loads[name] = served.post("/assemble", {"budget": 1000, "query": "what do we know?"})
            took: dict[str, dict[str, list[float]]] = {name: {case: [] for case in CASES} for name in servers}
            for i in range(rounds):
                for name, served in servers.items():
                    cases = took[name]
                    cases["assemble"].append(served.post("/assemble", {"budget": 1000, "query": f"Can I push {i}?"}))
                    decided = f"We decided to run service {i} on Nomad because the cluster is tiny"
                    turn = {"session_id": "bench", "role": "user", "text": decided, "metadata": {}}
                    cases["add-turn"].append(served.post("/add-turn", turn))
                    again = {"budget": 1000, "query": f"Which scheduler runs service {i}?"}
                    cases["assemble after a kept memory"].append(served.post("/assemble", again))
        finally:
            for served in servers.values():
                served.close()
    return {
        "store": str(store),
        "rounds": rounds,
        "builds": {
            name: {
                "load_ms": round(loads[name], 1),
                **{
                    case: {"median_ms": round(statistics.median(v), 1), "p95_ms": round(p95(v), 1)}
                    for case, v in cases.items()
                },
            }
            for name, cases in took.items()
        },
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("store", type=Path, help="a long-term store file (bench_longterm.py's)")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--baseline", type=Path, help="a virtual environment with another build of the package")
    args = parser.parse_args()
    print(json.dumps(main(args.store, args.rounds, args.baseline), indent=2))
