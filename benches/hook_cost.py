"""Wall time of one ``aircher-mem hook`` process, as Claude Code pays it on every
prompt (``UserPromptSubmit``) and every tool call (``PostToolUse``), with
``aircher-mem serve`` running for the project and without one (the hook opens the
store itself); also ``aircher-mem --version`` and the interpreter alone
(``python -c pass``). Two copies of one project (50 turns, a rule, a task): a server
runs for the first, none for the second. The cases run interleaved, one run of each
in turn, ``--runs`` times; min, median, p95 (nearest rank) and max of the wall
milliseconds, and the median CPU milliseconds (user + system: on a busy machine the
wall time also holds the waits for a core).
Every run must exit 0 with nothing on stderr, ``PostToolUse`` print nothing and the
first ``UserPromptSubmit`` inject the rule (later ones recall it too, but the stored
prompts outscore it); ``[hooks] deadline_seconds`` is 30, so a slow start on a busy machine is
measured rather than cut short.

    python benches/hook_cost.py [--runs 40]
"""

from __future__ import annotations

import argparse
import json
import math
import resource
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


def project(root: Path) -> None:
    root.mkdir()
    (root / "app.py").write_text("def login(user):\n    return user\n", encoding="utf-8")
    with am.Memory.open(root) as memory:
        for i in range(50):
            memory.add_turn("s", "user", f"I prefer tool number {i} for the build.")
        memory.remember("Never push to main", importance=1)
        memory.task("start", "t1", description="Fix the login check")
    # a busy machine can take over the default 2 s to start Python: no run cut short
    (root / ".aircher" / "config.toml").write_text("[hooks]\ndeadline_seconds = 30\n", encoding="utf-8")


def events(root: Path) -> dict[str, str]:
    common = {"session_id": "s", "transcript_path": "/nonexistent.jsonl", "cwd": str(root)}
    patch = [
        {"oldStart": 2, "oldLines": 1, "newStart": 2, "newLines": 1, "lines": ["-    return user", "+    return 1"]}
    ]
    return {
        "UserPromptSubmit": json.dumps(
            {**common, "hook_event_name": "UserPromptSubmit", "prompt": "Can I push to main now?"}
        ),
        "PostToolUse": json.dumps(
            {
                **common,
                "hook_event_name": "PostToolUse",
                "tool_name": "Edit",
                "tool_input": {"file_path": str(root / "app.py"), "old_string": "user", "new_string": "1"},
                "tool_response": {"filePath": str(root / "app.py"), "structuredPatch": patch},
            }
        ),
    }


def cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def run(argv: list[str], stdin: str | None, cwd: Path, expect: str | None) -> tuple[float, float]:
    """Wall and CPU milliseconds of one run of ``argv``; RuntimeError when it
    fails, warns on stderr or prints other than ``expect`` (None: anything)."""
    start, spent = time.perf_counter(), cpu()
    done = subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=120, cwd=cwd)
    took = 1000 * (time.perf_counter() - start), 1000 * (cpu() - spent)
    wrong = (expect is not None and expect not in done.stdout) or (expect == "" and done.stdout)
    if done.returncode != 0 or done.stderr or wrong:
        raise RuntimeError(f"{argv}: exit {done.returncode}: {done.stdout!r} {done.stderr!r}")
    return took


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[math.ceil(0.95 * len(ordered)) - 1]


def main(runs: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        served, alone = Path(tmp) / "served", Path(tmp) / "alone"
        project(served)
        project(alone)
        cases: list[tuple[str, list[str], str | None, Path, str | None]] = [
            ("python -c pass", [sys.executable, "-c", "pass"], None, alone, None),
            ("aircher-mem --version", [SCRIPT, "--version"], None, alone, f"aircher-mem {am.__version__}"),
        ]
        for where, label in ((served, "server"), (alone, "no server")):
            for name, payload in events(where).items():
                expect = "Never push to main" if name == "UserPromptSubmit" else ""
                cases.append((f"hook {name}, {label}", [SCRIPT, "hook", name], payload, where, expect))
        proc = subprocess.Popen(
            [SCRIPT, "serve", "--root", str(served), "--port", "0"], stderr=subprocess.PIPE, text=True
        )
        try:
            end = time.monotonic() + 120
            while (info := http_client.discover(served)) is None or info.pid != proc.pid:
                if proc.poll() is not None or time.monotonic() > end:
                    raise RuntimeError(f"the server did not start: {proc.communicate()[1]}")
                time.sleep(0.05)
            for _, argv, stdin, cwd, expect in cases:  # warm the page cache once
                run(argv, stdin, cwd, expect)
            took: dict[str, list[tuple[float, float]]] = {name: [] for name, *_ in cases}
            for _ in range(runs):
                for name, argv, stdin, cwd, expect in cases:
                    took[name].append(run(argv, stdin, cwd, None if "UserPromptSubmit" in name else expect))
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.communicate(timeout=60)
    print(f"{runs} runs each, interleaved; milliseconds")
    print(f"{'case':36} {'min':>7} {'median':>7} {'p95':>7} {'max':>7} {'CPU':>7}")
    for name, pairs in took.items():
        wall, used = [w for w, _ in pairs], [c for _, c in pairs]
        low, mid, high, top = min(wall), statistics.median(wall), p95(wall), max(wall)
        print(f"{name:36} {low:7.1f} {mid:7.1f} {high:7.1f} {top:7.1f} {statistics.median(used):7.1f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=40)
    main(parser.parse_args().runs)
