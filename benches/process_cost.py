"""Wall time of one ``aircher-mem`` process, as an agent's hook or a person's command
pays it: ``aircher-mem recall ... --json`` and ``aircher-mem hook SessionStart`` on a
copy of this repository's ``python/`` folder (indexed, 50 turns, a rule and a task),
first opening the store themselves, then as clients of ``aircher-mem serve``; the
baseline is ``python -c "import aircher_mem"`` (the interpreter and the package,
nothing else). Medians and minimums of ``--runs`` runs.

    python benches/process_cost.py [--runs 15]
"""

from __future__ import annotations

import argparse
import json
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aircher_mem as am
from aircher_mem.interfaces import client as http_client

SCRIPT = str(Path(sys.executable).with_name("aircher-mem"))
SOURCES = Path(__file__).resolve().parents[1] / "python"


def timed(argv: list[str], stdin: str | None, runs: int) -> tuple[float, float]:
    """Median and minimum wall milliseconds of ``runs`` runs of ``argv``."""
    took = []
    for _ in range(runs):
        start = time.perf_counter()
        done = subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=120)
        took.append(time.perf_counter() - start)
        if done.returncode != 0 or (stdin is not None and not done.stdout):
            raise RuntimeError(f"{argv}: exit {done.returncode}: {done.stderr}")
    return 1000 * statistics.median(took), 1000 * min(took)


def main(runs: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "repo"
        shutil.copytree(SOURCES, root, ignore=shutil.ignore_patterns("__pycache__", "*.so"))
        with am.Memory.open(root) as memory:
            memory.index()
            for i in range(50):
                memory.add_turn("s", "user", f"I prefer tool number {i} for the build.")
            memory.remember("Never push to main", importance=1)
            memory.task("start", "t1", description="Fix the recall ranking")
        event = json.dumps(
            {"session_id": "s", "cwd": str(root), "hook_event_name": "SessionStart", "source": "startup"}
        )
        cases = [
            (
                "aircher-mem recall --json",
                [SCRIPT, "recall", "which tool for the build?", "--root", str(root), "--json"],
                None,
            ),
            ("aircher-mem hook SessionStart", [SCRIPT, "hook", "SessionStart"], event),
        ]
        median, low = timed([sys.executable, "-c", "import aircher_mem"], None, runs)
        print(f"baseline python -c 'import aircher_mem'      median {median:7.1f} ms  min {low:7.1f} ms")
        for name, argv, stdin in cases:
            median, low = timed(argv, stdin, runs)
            print(f"store    {name:35} median {median:7.1f} ms  min {low:7.1f} ms")
        proc = subprocess.Popen(
            [SCRIPT, "serve", "--root", str(root), "--port", "0"], stderr=subprocess.PIPE, text=True
        )
        try:
            end = time.monotonic() + 120
            while (info := http_client.discover(root)) is None or info.pid != proc.pid:
                if proc.poll() is not None or time.monotonic() > end:
                    raise RuntimeError(f"the server did not start: {proc.communicate()[1]}")
                time.sleep(0.05)
            for name, argv, stdin in cases:
                median, low = timed(argv, stdin, runs)
                print(f"server   {name:35} median {median:7.1f} ms  min {low:7.1f} ms")
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.communicate(timeout=60)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=15)
    main(parser.parse_args().runs)
