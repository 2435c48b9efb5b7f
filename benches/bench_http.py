"""Load on the local HTTP server: a real ``serve`` (subprocess, ``--port 0``) on a
copy of this repository's Python sources, 16 concurrent clients (threads, each with
its own stdlib ``Client``, one connection per request) for ``POST /add-turn`` (with
extraction), ``POST /recall`` and ``GET /find-symbol``, and ``GET /health`` (no verb: the
cost of HTTP itself); requests/s and p50/p99 latency
per endpoint, then a check that every acknowledged turn is stored (through the
server, and again from the file after the server stopped). The baseline, in the same
run: the same verbs with the same arguments called in-process on that store (one
thread; the server runs one verb at a time too), as many calls as one client made.

    python benches/bench_http.py [--clients 16] [--requests 200]

Under pytest a small run checks the same invariants.
"""

from __future__ import annotations

import argparse
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import aircher_mem as am
from aircher_mem.interfaces import client as http_client

SOURCES = Path(__file__).resolve().parents[1] / "python"
SERVE = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from aircher_mem.interfaces.http import serve
    serve(Path(sys.argv[1]), port=0)
    """
)
WORDS = ["tabs", "spaces", "vim", "emacs", "postgres", "sqlite", "pytest", "ruff", "docker", "nix"]


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]


def load(
    info: http_client.ServerInfo, clients: int, requests: int, call: Callable[[http_client.Client, int, int], Any]
) -> tuple[float, list[float], list[Any]]:
    """``clients`` threads doing ``requests`` calls each; wall seconds, latencies, answers."""
    latencies: list[float] = []
    answers: list[Any] = []
    lock = threading.Lock()
    errors: list[BaseException] = []

    def worker(n: int) -> None:
        client = http_client.Client(info.host, info.port, info.token, timeout=60)
        mine, got = [], []
        try:
            for i in range(requests):
                start = time.perf_counter()
                got.append(call(client, n, i))
                mine.append(time.perf_counter() - start)
        except BaseException as exc:  # reported after the run
            errors.append(exc)
        with lock:
            latencies.extend(mine)
            answers.extend(got)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(clients)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - start
    if errors:
        raise errors[0]
    return wall, latencies, answers


def add_turn(client: http_client.Client, n: int, i: int) -> int:
    word = WORDS[(n + i) % len(WORDS)]
    body = {"session_id": f"client-{n}", "role": "user", "text": f"I prefer {word} for project {n}-{i}."}
    return int(client.request("POST", "/add-turn", json=body)["turn_id"])


def recall(client: http_client.Client, n: int, i: int) -> int:
    body = {"query": f"what does the user prefer, {WORDS[i % len(WORDS)]}?", "k": 10}
    return len(client.request("POST", "/recall", json=body)["hits"])


def symbols(client: http_client.Client, n: int, i: int) -> int:
    names = ["Memory", "recall", "serve", "to_json", "Policy", "add_turn", "search_code", "Client"]
    try:
        return len(client.request("GET", "/find-symbol", params={"name": names[(n + i) % len(names)]})["symbols"])
    except am.UnknownSymbolError:
        return 0


def baseline(memory: am.Memory, requests: int, echo: Callable[[str], None]) -> dict[str, Any]:
    """The same calls as the clients', on ``memory`` in this process, one at a time."""
    names = ["Memory", "recall", "serve", "to_json", "Policy", "add_turn", "search_code", "Client"]

    def symbol(i: int) -> Any:
        try:
            return memory.find_symbol(names[i % len(names)])
        except am.UnknownSymbolError:
            return None

    calls: list[tuple[str, Callable[[int], Any]]] = [
        (
            "add_turn",
            lambda i: memory.add_turn("baseline", "user", f"I prefer {WORDS[i % len(WORDS)]} for project b-{i}."),
        ),
        ("recall", lambda i: memory.recall(f"what does the user prefer, {WORDS[i % len(WORDS)]}?", k=10)),
        ("symbol", symbol),
    ]
    figures: dict[str, Any] = {}
    for name, call in calls:
        latencies = []
        start = time.perf_counter()
        for i in range(requests):
            begin = time.perf_counter()
            call(i)
            latencies.append(time.perf_counter() - begin)
        wall = time.perf_counter() - start
        figures[name] = {
            "requests": requests,
            "rps": requests / wall,
            "p50_ms": 1000 * statistics.median(latencies),
            "p99_ms": 1000 * percentile(latencies, 99),
        }
        f = figures[name]
        echo(
            f"in-process {name:9} {requests:6} calls {f['rps']:8.1f} calls/s  "
            f"p50 {f['p50_ms']:7.2f} ms  p99 {f['p99_ms']:7.2f} ms"
        )
    return figures


def health(client: http_client.Client, n: int, i: int) -> int:
    """The floor: HTTP, the checks and JSON, no verb."""
    return int(client.request("GET", "/health")["ok"])


def run(clients: int = 16, requests: int = 200, echo: Callable[[str], None] = print) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "repo"
        shutil.copytree(SOURCES, root, ignore=shutil.ignore_patterns("__pycache__", "*.so"))
        proc = subprocess.Popen([sys.executable, "-c", SERVE, str(root)], stderr=subprocess.PIPE, text=True)
        try:
            end = time.monotonic() + 120
            info = http_client.discover(root)
            while info is None or info.pid != proc.pid:
                if proc.poll() is not None or time.monotonic() > end:
                    raise RuntimeError(f"the server did not start: {proc.communicate()[1]}")
                time.sleep(0.05)
                info = http_client.discover(root)
            admin = http_client.Client(info.host, info.port, info.token, timeout=300)
            indexed = admin.request("POST", "/index")
            echo(f"indexed {indexed['files']} files in {indexed['seconds']:.2f} s; {clients} clients x {requests}")
            figures: dict[str, Any] = {}
            acked: list[int] = []
            endpoints = (
                ("POST /add-turn", add_turn),
                ("POST /recall", recall),
                ("GET /find-symbol", symbols),
                ("GET /health", health),
            )
            for name, call in endpoints:
                wall, latencies, answers = load(info, clients, requests, call)
                if call is add_turn:
                    acked = answers
                figures[name] = {
                    "requests": len(latencies),
                    "rps": len(latencies) / wall,
                    "p50_ms": 1000 * statistics.median(latencies),
                    "p99_ms": 1000 * percentile(latencies, 99),
                }
                f = figures[name]
                rate, p50, p99 = f["rps"], f["p50_ms"], f["p99_ms"]
                echo(f"{name:16} {f['requests']:6} req  {rate:8.1f} req/s  p50 {p50:7.2f} ms  p99 {p99:7.2f} ms")
            stored = admin.request("GET", "/stats")["longterm"]["turns"]
            lost_live = len(set(acked)) != len(acked) or stored != len(acked)
        finally:
            proc.send_signal(signal.SIGTERM)
            _, errors = proc.communicate(timeout=120)
        with am.Memory.open(root) as memory:
            longterm = memory.stats().longterm
            after = longterm["turns"] if longterm else -1
            figures["in-process"] = baseline(memory, requests, echo)
        figures["acknowledged_turns"] = len(acked)
        figures["stored_turns"] = after
        figures["lost"] = lost_live or after != len(acked)
        echo(f"turns acknowledged {len(acked)}, stored (live) {stored}, stored (after stop) {after}")
        if proc.returncode != 0 or figures["lost"]:
            raise AssertionError(f"server exit {proc.returncode}, lost {figures['lost']}: {errors[-2000:]}")
        return figures


def test_http_load_small() -> None:
    figures = run(clients=4, requests=10, echo=lambda _: None)
    assert figures["acknowledged_turns"] == figures["stored_turns"] == 40 and not figures["lost"]
    assert set(figures["in-process"]) == {"add_turn", "recall", "symbol"}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--requests", type=int, default=200, help="per client and endpoint")
    args = parser.parse_args()
    run(args.clients, args.requests)
