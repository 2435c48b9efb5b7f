"""Wall time of one hook process, as Claude Code pays it on every prompt
(``UserPromptSubmit``) and every tool call (``PostToolUse``), with ``aircher-mem
serve`` running for the project and without one (``UserPromptSubmit`` opens the
store itself, and first writes the journal into it; ``PostToolUse`` appends to the
hooks' journal once a full hook wrote hooks.json, as the warm-up run's do):
the command ``aircher-mem hooks install`` writes (``<python> -I -S
.../aircher_mem/hook.py EVENT``) and the console script's ``aircher-mem hook
EVENT``; also ``aircher-mem --version``, the interpreter alone (``python -c
pass``, ``python -I -S -c pass``), the import of the service alone (``import
aircher_mem.memory``, what a hook without a server pays before it opens the store),
and a CLI command the server answers
(``aircher-mem recall``) against the full CLI's path for it. With ``--baseline VENV`` the console script of
another environment (an older build of the package) runs the same hooks against
copies of the projects its own package made, with its own server, as a baseline in
the same run. Two copies of one project
(50 turns, a rule, a task): a server runs for the first, none for the second. The
cases run interleaved, one run of each in turn, ``--runs`` times; min, median, p95
(nearest rank) and max of the wall milliseconds, and the median CPU milliseconds
(user + system: on a busy machine the wall time also holds the waits for a core).
Then the server's share: the median milliseconds of each request the two hooks
send, made from this process (a new connection each, as a hook makes them).
Every run must exit 0 with nothing on stderr, ``PostToolUse`` print nothing and the
first ``UserPromptSubmit`` inject the rule (later ones assemble it too, but the stored
prompts outscore it); ``[hooks] deadline_seconds`` is 30, so a slow start on a busy machine is
measured rather than cut short, and ``[hooks] start_server`` is off, so a hook without a
server does not start one for the next runs (with it on, the first hook of a session
pays the cost without a server and the next ones the cost with one).

With ``--parts``, also what each part of ``UserPromptSubmit`` without a server adds:
the console script's hook with ``assemble``, ``add_turn`` or both replaced by no-ops.

    python benches/hook_cost.py [--runs 40] [--baseline /path/to/venv] [--parts]
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
HOOK_FILE = str(Path(am.__file__).with_name("hook.py"))


# The project, made by the package of the interpreter that runs it (the baseline's
# makes its own: a store another version migrated may be one it cannot read).
PROJECT = r"""
import sys
from pathlib import Path
import aircher_mem as am
root = Path(sys.argv[1])
root.mkdir()
(root / "app.py").write_text("def login(user):\n    return user\n", encoding="utf-8")
with am.Memory.open(root) as memory:
    for i in range(50):
        memory.add_turn("s", "user", f"I prefer tool number {i} for the build.")
    memory.remember("Never push to main", importance=1)
    memory.task("start", "t1", description="Fix the login check")
# a busy machine can take over the default 2 s to start Python: no run cut short; the
# hooks without a server stay without one (no server of their own, started for the next)
config = "[hooks]\ndeadline_seconds = 30\nstart_server = false\n"
(root / ".aircher" / "config.toml").write_text(config, encoding="utf-8")
"""


FULL_CLI = "import sys; from aircher_mem.interfaces.cli import main; sys.exit(main(sys.argv[1:]))"

# The console script's hook with the verbs the first argument names replaced by no-ops
# (``assemble``, ``add_turn``, both or none): what each part of a UserPromptSubmit
# without a server adds, its imports and the store's opening included.
PARTS = """
import sys
from aircher_mem.interfaces import dispatch, thin
for verb in sys.argv.pop(1).split(","):
    if verb == "assemble":
        thin.Verbs.assemble = lambda self, *args, **kwargs: {}
    elif verb == "add_turn":
        thin.Verbs.add_turn = lambda self, *args, **kwargs: None
dispatch.console()
"""
PART_CASES = (
    ("no verb", "assemble,add_turn"),
    ("assemble only", "add_turn"),
    ("add_turn only", "assemble"),
)


def project(root: Path, python: str = sys.executable) -> None:
    subprocess.run([python, "-c", PROJECT, str(root)], check=True, timeout=300)


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


def server_share(root: Path, runs: int) -> dict[str, float]:
    """Median milliseconds of each request the hooks send the server for the events
    of :func:`events` (a new connection each; the proof before each request)."""
    client = http_client.Client.discover(root)
    assert client is not None
    app = str(root / "app.py")
    bodies: list[tuple[str, str, dict[str, object] | None]] = [
        ("GET /health (the proof)", "", None),
        ("POST /assemble", "/assemble", {"budget": 1000, "query": "Can I push to main now?", "branch": None}),
        ("POST /add-turn", "/add-turn", {"session_id": "b", "role": "user", "text": "Can I push?", "metadata": {}}),
        (
            "POST /record-tool-call",
            "/record-tool-call",
            {"tool_name": "Edit", "parameters": {}, "success": True, "file_path": app},
        ),
        (
            "POST /record-file-interaction",
            "/record-file-interaction",
            {"path": app, "operation": "edit", "line_range": [2, 2], "changes_summary": "Edit: +1 -1 lines"},
        ),
    ]
    took: dict[str, list[float]] = {name: [] for name, *_ in bodies}
    for _ in range(runs):
        for name, path, body in bodies:
            start = time.perf_counter()
            if body is None:
                client.prove()
            else:
                client.request("POST", path, json=body)
            took[name].append(1000 * (time.perf_counter() - start))
    return {name: statistics.median(values) for name, values in took.items()}


def main(runs: int, baseline: Path | None, parts: bool = False) -> None:
    builds = [("", sys.executable, SCRIPT)]
    if baseline is not None:
        builds.append(("baseline ", str(baseline / "bin" / "python"), str(baseline / "bin" / "aircher-mem")))
    with tempfile.TemporaryDirectory() as tmp:
        cases: list[tuple[str, list[str], str | None, Path, str | None]] = []
        servers: list[tuple[str, Path]] = []
        for prefix, python, script in builds:
            served, alone = Path(tmp) / f"{prefix}served", Path(tmp) / f"{prefix}alone"
            project(served, python)
            project(alone, python)
            servers.append((script, served))
            if not prefix:
                cases += [
                    ("python -c pass", [sys.executable, "-c", "pass"], None, alone, None),
                    ("python -I -S -c pass", [sys.executable, "-I", "-S", "-c", "pass"], None, alone, None),
                    ("aircher-mem --version", [SCRIPT, "--version"], None, alone, f"aircher-mem {am.__version__}"),
                    # what the full path pays before it opens the store
                    ("import the service", [sys.executable, "-c", "import aircher_mem.memory"], None, alone, None),
                ]
                commands = [
                    ("hook.py", [sys.executable, "-I", "-S", HOOK_FILE]),
                    ("aircher-mem hook", [SCRIPT, "hook"]),
                ]
                # a CLI command the server answers: the console script (no service
                # imported), and the full CLI, which builds its parser from the service
                recall = ["recall", "push to main", "--root", str(served)]
                cases += [
                    ("aircher-mem recall, server", [SCRIPT, *recall], None, served, "hit(s) for 'push to main'"),
                    ("full CLI recall, server", [sys.executable, "-c", FULL_CLI, *recall], None, served, "hit(s) for"),
                ]
            else:
                commands = [(f"{prefix}aircher-mem hook", [script, "hook"])]
                importing = [python, "-c", "import aircher_mem.memory"]
                cases.append((f"{prefix}import the service", importing, None, alone, None))
            for where, label in ((served, "server"), (alone, "no server")):
                for name, payload in events(where).items():
                    expect = "Never push to main" if name == "UserPromptSubmit" else ""
                    for command, argv in commands:
                        cases.append((f"{command} {name}, {label}", [*argv, name], payload, where, expect))
            if parts and not prefix:
                prompt = events(alone)["UserPromptSubmit"]
                for name, skipped in PART_CASES:
                    argv = [sys.executable, "-c", PARTS, skipped, "hook", "UserPromptSubmit"]
                    cases.append((f"hook UserPromptSubmit, {name}, no server", argv, prompt, alone, None))
        procs = [
            (
                subprocess.Popen(
                    [script, "serve", "--root", str(root), "--port", "0"], stderr=subprocess.PIPE, text=True
                ),
                root,
            )
            for script, root in servers
        ]
        try:
            end = time.monotonic() + 120
            for proc, root in procs:
                while (info := http_client.discover(root)) is None or info.pid != proc.pid:
                    if proc.poll() is not None or time.monotonic() > end:
                        raise RuntimeError(f"the server did not start: {proc.communicate()[1]}")
                    time.sleep(0.05)
            prompted: set[Path] = set()  # the first prompt recalls the rule; the stored prompts outscore it after
            for name, argv, stdin, cwd, expect in cases:  # warm the page cache once
                later = "UserPromptSubmit" in name and cwd in prompted
                if "UserPromptSubmit" in name:
                    prompted.add(cwd)
                run(argv, stdin, cwd, None if later else expect)
            took: dict[str, list[tuple[float, float]]] = {name: [] for name, *_ in cases}
            for _ in range(runs):
                for name, argv, stdin, cwd, expect in cases:
                    took[name].append(run(argv, stdin, cwd, None if "UserPromptSubmit" in name else expect))
            share = server_share(servers[0][1], runs)
        finally:
            for proc, _ in procs:
                proc.send_signal(signal.SIGTERM)
            for proc, _ in procs:
                proc.communicate(timeout=60)
    print(f"{runs} runs each, interleaved; milliseconds")
    print(f"{'case':52} {'min':>7} {'median':>7} {'p95':>7} {'max':>7} {'CPU':>7}")
    for name, pairs in took.items():
        wall, used = [w for w, _ in pairs], [c for _, c in pairs]
        low, mid, high, top = min(wall), statistics.median(wall), p95(wall), max(wall)
        print(f"{name:52} {low:7.1f} {mid:7.1f} {high:7.1f} {top:7.1f} {statistics.median(used):7.1f}")
    print("the server's share, median milliseconds of one request (connection and answer)")
    for name, value in share.items():
        print(f"{name:52} {value:7.1f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--baseline", type=Path, help="a virtual environment with another build of the package")
    parser.add_argument(
        "--parts", action="store_true", help="also the UserPromptSubmit hook without a server with a verb left out"
    )
    arguments = parser.parse_args()
    main(arguments.runs, arguments.baseline, arguments.parts)
