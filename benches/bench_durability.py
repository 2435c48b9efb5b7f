"""Acknowledged writes under a crash: a real ``serve`` (subprocess, ``--port 0``), or
``aircher-mem mcp`` (which serves the store it holds over HTTP the same way), 32
concurrent writers (threads, each its own stdlib ``Client``) sending ``POST /add-turn``
and ``POST /remember``, and the server killed with SIGKILL while they write. Then the
store is opened again and every turn and memory the server acknowledged (answered
200 with its id) is looked for, by id and text. A trial's figures: acknowledged,
lost, acknowledged per second before the kill. Also, in the same run, the in-process
``add_turn`` one call at a time (each commits) and inside ``Memory.batch()``.

    python benches/bench_durability.py [--holder serve|mcp] [--trials 10] [--writers 32] [--seconds 2]

Under pytest a small run (2 trials, 8 writers) checks that nothing acknowledged is lost.
"""

from __future__ import annotations

import argparse
import random
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import aircher_mem as am
import pytest
from aircher_mem.interfaces import client as http_client

SERVE = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from aircher_mem.interfaces.http import serve
    serve(Path(sys.argv[1]), port=0)
    """
)


HOLDERS = {
    "serve": lambda root: [sys.executable, "-c", SERVE, str(root)],
    # stdin stays open (a pipe nobody writes): the MCP session never ends by itself
    "mcp": lambda root: [sys.executable, "-m", "aircher_mem", "mcp", "--root", str(root), "--no-index"],
}


def start_server(root: Path, holder: str = "serve") -> tuple[subprocess.Popen[bytes], http_client.ServerInfo]:
    root.joinpath(".aircher").mkdir(mode=0o700, exist_ok=True)
    server = subprocess.Popen(
        HOLDERS[holder](root), stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        info = http_client.discover(root)
        if info is not None and info.pid == server.pid:
            return server, info
        time.sleep(0.05)
    server.kill()
    raise RuntimeError("the server did not start within 60 s")


def trial(root: Path, writers: int, seconds: float, seed: int, holder: str = "serve") -> dict[str, Any]:
    """One crash: writers until a random moment within ``seconds`` after the first
    acknowledged write (on a loaded machine the first answer can take seconds), then
    SIGKILL."""
    server, info = start_server(root, holder)
    acknowledged: list[tuple[str, int, str | None]] = []  # (kind, id, text; None: merged, any text)
    lock = threading.Lock()
    stop = threading.Event()
    first = threading.Event()  # set at the first acknowledged write

    def writer(n: int) -> None:
        client = http_client.Client(info.host, info.port, info.token, timeout=30)
        i = 0
        while not stop.is_set():
            i += 1
            text = f"seed {seed} writer {n} note {i} about the flaky parser test"
            try:
                if i % 5:
                    body = {"session_id": f"w{n}", "role": "user", "text": text, "extract": False}
                    answer: tuple[str, int, str | None] = (
                        "turn",
                        int(client.request("POST", "/add-turn", json=body)["turn_id"]),
                        text,
                    )
                else:
                    text = f"seed {seed} writer {n} fact {i}: the build cache lives in cache-{n}-{i}"
                    done = client.request("POST", "/remember", json={"content": text})
                    # a near copy of another writer's fact merges into it: its id is the one to find
                    answer = ("memory", int(done["memory_id"]), None if done["action"] == "merged" else text)
            except am.AircherError:  # the server died under the request: not acknowledged
                return
            with lock:
                acknowledged.append(answer)
            first.set()

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(writers)]
    started = time.perf_counter()
    for t in threads:
        t.start()
    first.wait(60)
    time.sleep(random.Random(seed).uniform(seconds / 2, seconds))
    server.send_signal(signal.SIGKILL)
    server.communicate()
    elapsed = time.perf_counter() - started
    stop.set()
    for t in threads:
        t.join()
    with am.Memory.open(root) as memory:
        lt = memory.longterm
        turns = {t.id: t.text for session in {f"w{n}" for n in range(writers)} for t in lt.turns(session)}
        memories = {m.id: m.content for m in memory.memories(status="all", limit=10_000, sort="id").memories}
    lost = []
    for kind, id_, text in acknowledged:
        found = (turns if kind == "turn" else memories).get(id_)
        if found is None or (text is not None and found != text):
            lost.append((kind, id_, text))
    return {
        "acknowledged": len(acknowledged),
        "lost": len(lost),
        "rate": len(acknowledged) / elapsed,
        "examples": lost[:3],
    }


def in_process(root: Path, n: int) -> dict[str, float]:
    """add_turn one call at a time (each commits), and n calls in one batch."""
    with am.Memory.open(root) as memory:
        memory.add_turn("warm", "user", "warm up")
        start = time.perf_counter()
        for i in range(n):
            memory.add_turn("single", "user", f"single note {i} about the parser", extract=False)
        single = (time.perf_counter() - start) / n
        start = time.perf_counter()
        with memory.batch():
            for i in range(n):
                memory.add_turn("batch", "user", f"batched note {i} about the parser", extract=False)
        batched = (time.perf_counter() - start) / n
    return {"single_ms": 1000 * single, "batch_ms": 1000 * batched}


def run(trials: int, writers: int, seconds: float, echo: Any = print, holder: str = "serve") -> list[dict[str, Any]]:
    results = []
    for seed in range(trials):
        with tempfile.TemporaryDirectory() as folder:
            found = trial(Path(folder), writers, seconds, seed, holder)
        echo(
            f"trial {seed}: {found['acknowledged']} acknowledged ({found['rate']:.0f}/s), "
            f"{found['lost']} lost {found['examples']}"
        )
        results.append(found)
    return results


@pytest.mark.parametrize("holder", sorted(HOLDERS))
def test_nothing_acknowledged_is_lost_when_the_holder_is_killed(holder: str) -> None:
    results = run(2, 8, 1.0, echo=lambda _line: None, holder=holder)
    assert all(r["acknowledged"] > 0 for r in results)
    assert [r["lost"] for r in results] == [0, 0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--holder", choices=sorted(HOLDERS), default="serve")
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--writers", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--calls", type=int, default=300, help="in-process calls for the baseline")
    args = parser.parse_args()
    results = run(args.trials, args.writers, args.seconds, holder=args.holder)
    acknowledged, lost = sum(r["acknowledged"] for r in results), sum(r["lost"] for r in results)
    rates = sorted(r["rate"] for r in results)
    print(
        f"{args.holder}: {args.trials} trials, {args.writers} writers: {acknowledged} acknowledged, {lost} lost; "
        f"acknowledged/s median {rates[len(rates) // 2]:.0f} (min {rates[0]:.0f}, max {rates[-1]:.0f})"
    )
    with tempfile.TemporaryDirectory() as folder:
        figures = in_process(Path(folder), args.calls)
    single, batched = figures["single_ms"], figures["batch_ms"]
    print(f"in-process add_turn: {single:.2f} ms a call committed alone, {batched:.3f} ms in a batch")


if __name__ == "__main__":
    main()
