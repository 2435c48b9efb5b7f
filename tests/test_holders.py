"""One process holds a project's store; every other process goes through it or gets a
typed error. The matrix: holders (``aircher-mem serve``, ``aircher-mem mcp``, a Python
``Memory`` that serves its store with ``http.serve_in_thread``, and one that does not)
by callers (a CLI write and read, a Python write and read through
``client.connect``, a Claude Code hook), each in its own process. Afterwards the store
holds exactly what was acknowledged, and every read saw every write made before it:
no stale read, no lost write, only ``StoreLockedError`` (exit 4) where nothing serves."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import aircher_mem as am
import pytest
from aircher_mem.interfaces import client as http_client
from aircher_mem.interfaces import wire

SCRIPT = str(Path(sys.executable).with_name("aircher-mem"))

pytestmark = pytest.mark.slow  # every test starts holders and callers as processes

PYTHON_HOLDER = """
import sys
import aircher_mem as am
from aircher_mem.interfaces.http import serve_in_thread
memory = am.Memory.open(sys.argv[1])
memory.add_turn("holder", "user", "The holder says releases happen on Fridays.")
running = serve_in_thread(memory) if sys.argv[2] == "served" else None
print("ready", flush=True)
sys.stdin.readline()
if running is not None:
    running.stop()
memory.close()
"""

PYTHON_CALLER = """
import json, sys
import aircher_mem as am
from aircher_mem.interfaces.client import connect
try:
    with connect(sys.argv[1]) as memory:
        if sys.argv[2] == "write":
            print(json.dumps({"turn_id": memory.add_turn("python", "user", "python wrote: lint with ruff").turn_id}))
        else:
            print(json.dumps({"texts": [h.content for h in memory.recall("wrote", k=20, kinds=["turn"]).hits]}))
except am.StoreLockedError as exc:
    print(json.dumps({"error": exc.code}))
"""

HOLDERS = ["serve", "mcp", "python-served", "python-plain"]


def start_holder(root: Path, holder: str) -> subprocess.Popen[str]:
    if holder == "serve":
        argv = [SCRIPT, "serve", "--root", str(root), "--port", "0"]
    elif holder == "mcp":
        argv = [SCRIPT, "mcp", "--root", str(root), "--no-index"]
    else:
        argv = [sys.executable, "-c", textwrap.dedent(PYTHON_HOLDER), str(root), holder.removeprefix("python-")]
    process = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=root
    )
    deadline = time.monotonic() + 60
    if holder == "python-plain":
        assert process.stdout is not None and process.stdout.readline().strip() == "ready"
        return process
    while time.monotonic() < deadline:  # served: server.json names it and it proves the token
        info = http_client.discover(root)
        if info is not None and info.pid == process.pid and http_client.Client.discover(root) is not None:
            return process
        assert process.poll() is None, process.communicate()
        time.sleep(0.05)
    process.kill()
    raise AssertionError(f"{holder} did not serve within 60 s")


def stop_holder(process: subprocess.Popen[str], holder: str) -> None:
    if holder == "serve":
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=60)
    else:  # mcp: its stdin closes; the Python holders read a line
        process.communicate("\n", timeout=60)
    assert process.returncode == 0


def cli(root: Path, *argv: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([SCRIPT, *argv], input=stdin, capture_output=True, text=True, cwd=root, timeout=120)


def python(root: Path, verb: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(PYTHON_CALLER), str(root), verb],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    answer: dict[str, object] = json.loads(done.stdout)
    return answer


def hook(root: Path) -> subprocess.CompletedProcess[str]:
    payload = {
        "session_id": "hook",
        "hook_event_name": "UserPromptSubmit",
        "cwd": str(root),
        "prompt": "hook wrote: tests run with pytest",
    }
    return cli(root, "hook", "UserPromptSubmit", stdin=json.dumps(payload))


@pytest.mark.parametrize("holder", HOLDERS)
def test_every_caller_goes_through_the_holder_or_gets_store_locked(tmp_path: Path, holder: str) -> None:
    root = tmp_path / "project"
    root.mkdir()
    with am.Memory.open(root) as memory:  # the store exists before the holder starts
        memory.add_turn("before", "user", "Before anything: the repo uses tabs.")
    process = start_holder(root, holder)
    try:
        cli_write = cli(
            root,
            "add-turn",
            "--root",
            str(root),
            "cli",
            "user",
            "cli wrote: deploy with helm",
            "--json",
        )
        py_write = python(root, "write")
        hooked = hook(root)
        cli_read = cli(root, "recall", "wrote", "--root", str(root), "--kinds", "turn", "-k", "20", "--json")
        py_read = python(root, "read")
    finally:
        stop_holder(process, holder)
    with am.Memory.open(root) as memory:
        stored = sorted(t.text for s in ("before", "holder", "cli", "python", "hook") for t in memory.longterm.turns(s))
    wrote = ["cli wrote: deploy with helm", "hook wrote: tests run with pytest", "python wrote: lint with ruff"]
    if holder == "python-plain":  # nothing serves: typed refusals, nothing half-done
        assert (cli_write.returncode, cli_read.returncode) == (wire.EXIT_LOCKED, wire.EXIT_LOCKED)
        assert "StoreLockedError" in cli_write.stderr or "held by another process" in cli_write.stderr
        assert py_write == {"error": "store_locked"} and py_read == {"error": "store_locked"}
        assert hooked.returncode == 0 and hooked.stdout == ""  # a hook never blocks the agent
        assert stored == ["Before anything: the repo uses tabs.", "The holder says releases happen on Fridays."]
        return
    assert cli_write.returncode == 0, cli_write.stderr
    assert json.loads(cli_write.stdout)["turn_id"] > 0 and isinstance(py_write["turn_id"], int)
    assert hooked.returncode == 0, hooked.stderr
    assert cli_read.returncode == 0, cli_read.stderr
    seen_by_cli = sorted(h["content"] for h in json.loads(cli_read.stdout)["hits"])
    assert seen_by_cli == wrote  # every write before it, through the holder
    assert sorted(py_read["texts"]) == wrote  # type: ignore[arg-type]
    expected = sorted(["Before anything: the repo uses tabs.", *wrote])
    if holder.startswith("python"):
        expected = sorted([*expected, "The holder says releases happen on Fridays."])
    assert stored == expected
