"""The console script's thin path: ``aircher-mem --version`` and ``aircher-mem hook``
(with a server running for the project) import neither the service nor numpy nor
DuckDB; what the hooks send their server is what ``client.RemoteMemory`` sends; the
HTTP client reads every shape of answer; the hooks' limits come from server.json
only while config.toml is what it describes."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import aircher_mem as am
import pytest
from aircher_mem import memory as service
from aircher_mem.config import HooksPolicy
from aircher_mem.interfaces import client as http_client
from aircher_mem.interfaces import dispatch, hook_command, hooks, thin, wire
from conftest import assert_prompt_and_read_recorded, hook_event, serving

SCRIPT = str(Path(sys.executable).with_name("aircher-mem"))
HEAVY = ("numpy", "duckdb", "_duckdb", "aircher_mem.memory")
LATER = ("chains_extract", "compress", "contradict", "episodes")

# Runs the installed console script as the shell would, then writes the names of
# every module it imported to the file named first.
RUN_SCRIPT = """
import atexit, json, os, runpy, sys
listing = sys.argv[1]
def write():
    open(listing, "w").write(json.dumps(sorted(sys.modules)))
atexit.register(write)
leave = os._exit  # the console script ends at once when nothing is left to finish
os._exit = lambda code: (write(), leave(code))
sys.argv = sys.argv[2:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""

PROMPT_CONTEXT = """\
[aircher-mem] Recalled from project memory; cite a memory by its id, e.g. [memory 1].
Relevant:
[memory 1] (fact) Never push to main
"""


def run_script(tmp_path: Path, args: list[str], stdin: str = "", cwd: Path | None = None) -> tuple[Any, set[str]]:
    listing = tmp_path / "modules.json"
    done = subprocess.run(
        [sys.executable, "-c", RUN_SCRIPT, str(listing), SCRIPT, *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
    )
    return done, set(json.loads(listing.read_text()))


def test_importing_the_package_imports_none_of_its_modules() -> None:
    code = (
        "import sys, aircher_mem; print(sorted(m for m in sys.modules if m.startswith(('aircher_mem', *sys.argv[1:]))))"
    )
    done = subprocess.run([sys.executable, "-c", code, *HEAVY], capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout, done.stderr) == (0, "['aircher_mem']\n", "")


def test_the_service_and_a_code_search_leave_what_they_do_not_use_unimported(tmp_path: Path) -> None:
    # numpy, DuckDB's Python layer and the rules of consolidation, decisions and
    # contradictions load with the verbs that use them, not with the service
    (tmp_path / "app.py").write_text("def login(user):\n    return user\n", encoding="utf-8")
    code = (
        "import sys, aircher_mem as am\n"
        "with am.Memory.open(sys.argv[1]) as memory:\n"
        "    memory.index()\n"
        "    assert memory.search_code('login').hits\n"
        "print(sorted(m for m in sys.argv[2:] if m in sys.modules))"
    )
    lazy = ["numpy", "duckdb", *(f"aircher_mem.longterm.{m}" for m in LATER)]
    # nor the stores of the conversation and the context window's manager
    parts = [f"aircher_mem.{m}" for m in ("longterm", "episodic", "context", "prediction", "offers", "mentions")]
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path), *lazy, *parts], capture_output=True, text=True, timeout=120
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "[]\n", "")
    # and each of them loads when its verb runs
    code = (
        "import sys, aircher_mem as am\n"
        "with am.Memory.open(sys.argv[1]) as memory:\n"
        "    memory.consolidate(dry_run=True)\n"
        "    memory.record_decision('use FastAPI', reasons=['it is async'])\n"
        "    memory.add_turn('s', 'user', 'We chose DuckDB because it is embedded.')\n"
        "print(sorted(m for m in sys.argv[2:] if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path), *lazy], capture_output=True, text=True, timeout=120
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == f"{[f'aircher_mem.longterm.{m}' for m in LATER]}\n"


def test_version_imports_neither_the_service_nor_numpy_nor_duckdb(tmp_path: Path) -> None:
    done, modules = run_script(tmp_path, ["--version"])
    assert (done.returncode, done.stdout, done.stderr) == (0, f"aircher-mem {am.__version__}\n", "")
    assert sorted(m for m in HEAVY if m in modules) == []


@pytest.mark.slow
def test_a_hook_with_a_server_imports_neither_the_service_nor_numpy_nor_duckdb(rules: Path, tmp_path: Path) -> None:
    read = {"type": "text", "file": {"filePath": "x", "content": "", "numLines": 2, "startLine": 1}}
    tool = {"file_path": str(rules / "app" / "util.py")}
    with am.Memory.open(rules) as memory, serving(memory) as served:
        prompt = hook_event("UserPromptSubmit", rules, prompt="Can I push to main now?")
        done, modules = run_script(tmp_path, ["hook", "UserPromptSubmit"], prompt, cwd=rules)
        assert (done.returncode, done.stdout, done.stderr) == (0, PROMPT_CONTEXT, "")
        assert sorted(m for m in HEAVY if m in modules) == []
        payload = hook_event("PostToolUse", rules, tool_name="Read", tool_input=tool, tool_response=read)
        done, modules = run_script(tmp_path, ["hook", "PostToolUse", "--root", str(rules)], payload)
        assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
        assert sorted(m for m in HEAVY if m in modules) == []
        assert_prompt_and_read_recorded(served, memory)


@pytest.mark.slow
def test_the_hooks_take_their_limits_from_server_json_only_while_config_toml_is_unchanged(rules: Path) -> None:
    prompt = hook_event("UserPromptSubmit", rules, prompt="Can I push to main now?", session_id=None)
    with am.Memory.open(rules) as memory, serving(memory):
        snapshot = http_client.snapshot_of(rules)
        assert snapshot is not None and snapshot["config"] == http_client.config_digest(rules)
        assert snapshot["hooks"] == am.Policy.load(rules).hooks.to_dict()
        assert hooks.run_hook("UserPromptSubmit", prompt) == (PROMPT_CONTEXT, 0)
        # nothing scores 100: the new config is read, not the snapshot of the old one
        (rules / ".aircher" / "config.toml").write_text("[hooks]\ndeadline_seconds = 30\nrecall_min_score = 100\n")
        assert http_client.snapshot_of(rules) is None
        assert hooks.run_hook("UserPromptSubmit", prompt) == ("", 0)


class Recorder:
    """A client that records each request and answers ``{}``."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, str, Any, Any]] = []

    def request(
        self, method: str, path: str, *, json: Any = None, params: Any = None, timeout: float | None = None
    ) -> Any:
        self.sent.append((method, path, json, None if params is None else list(params.items())))
        return {}


def test_the_hooks_send_their_server_what_remote_memory_sends(tmp_path: Path) -> None:
    calls: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = [
        ("tasks", (), {"limit": 10}),
        ("assemble", (), {"budget": 1000, "query": "push to main", "branch": "main"}),
        ("assemble", (), {"budget": 50, "query": None, "branch": None}),
        ("add_turn", ("s1", "user", "hi"), {"at": None, "metadata": {"hook": "Stop"}}),
        ("add_turn", ("s1", "assistant", "ok"), {"at": 1.5e9, "metadata": {}}),
        (
            "record_tool_call",
            ("Read", {"limit": 5}),
            {"success": True, "error_message": None, "file_path": "/p/a.py"},
        ),
        ("record_tool_call", ("Bash", {}), {"success": False, "error_message": "boom", "file_path": None}),
        ("record_file_interaction", ("/p/a.py", "edit"), {"line_range": (3, 4), "changes_summary": "+1 -1"}),
        ("record_file_interaction", ("/p/a.py", "read"), {"line_range": None, "changes_summary": None}),
        ("record_snapshot", ({"timestamp": 1.0, "items": []},), {}),
    ]
    theirs, ours = Recorder(), Recorder()
    remote = http_client.RemoteMemory(theirs, tmp_path)  # type: ignore[arg-type]
    thin_remote = thin.Remote(ours, tmp_path, None)  # type: ignore[arg-type]
    for verb, args, kwargs in calls:
        try:
            remote.call(verb, *args, **kwargs)
        except http_client.HTTPError:  # {} is no result: only the request matters here
            pass
        getattr(thin_remote, verb)(*args, **kwargs)
    assert len(ours.sent) == len(calls)
    assert ours.sent == theirs.sent


def test_what_the_thin_path_keeps_is_what_the_service_says() -> None:
    assert hooks.PAYLOAD_MAX_CHARS == HooksPolicy().payload_max_bytes
    assert http_client.STORE_DIR == service.STORE_DIR
    assert (dispatch.EXIT_OK, dispatch.EXIT_INTERNAL, dispatch.EXIT_INTERRUPTED) == (
        wire.EXIT_OK,
        wire.EXIT_INTERNAL,
        wire.EXIT_INTERRUPTED,
    )
    assert (hook_command.EXIT_OK, hook_command.EXIT_ERROR) == (wire.EXIT_OK, wire.EXIT_ERROR)


def test_find_root_is_the_services(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    outer = tmp_path / "outer"
    inner = outer / "a" / "b"
    inner.mkdir(parents=True)
    (outer / ".aircher").mkdir()
    (tmp_path / "bare").mkdir()
    monkeypatch.chdir(inner)
    for start in (None, inner, outer, outer / "a", str(inner / ".." / "b")):
        assert http_client.find_root(start) == service.find_root(start) == outer
    with pytest.raises(am.StoreNotFoundError) as theirs:
        service.find_root(tmp_path / "bare")
    with pytest.raises(am.StoreNotFoundError) as ours:
        http_client.find_root(tmp_path / "bare")
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize(
    ("args", "parsed"),
    [
        (["hook", "Stop"], ("Stop", None)),
        (["hook", "Stop", "--root", "/p"], ("Stop", Path("/p"))),
        (["hook", "--root", "/p", "Stop"], ("Stop", Path("/p"))),
        (["hook", "--root=/p", "Stop"], ("Stop", Path("/p"))),
        (["hook", "Stop", "--root="], ("Stop", Path(""))),
        (["hook"], None),
        (["hook", ""], None),
        (["hook", "-h"], None),
        (["hook", "Stop", "--json"], None),
        (["hook", "Stop", "--ro", "/p"], None),  # argparse's abbreviation: the CLI parses it
        (["hook", "Stop", "--root"], None),
        (["hook", "Stop", "--root", "-x"], None),
        (["hook", "Stop", "--root", "/p", "--root", "/q"], None),
        (["hook", "Stop", "Stop"], None),
        (["hooks", "install"], None),
        (["recall", "x"], None),
    ],
)
def test_the_dispatcher_takes_only_the_plain_forms_of_hook(args: list[str], parsed: Any) -> None:
    assert dispatch.hook_arguments(args) == parsed


def test_every_other_command_line_is_the_clis(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[list[str]] = []

    def cli_main(argv: list[str]) -> int:
        seen.append(argv)
        return 7

    from aircher_mem.interfaces import cli

    monkeypatch.setattr(cli, "main", cli_main)
    assert dispatch.main(["--version", "--json"]) == 7
    assert dispatch.main(["hook", "Stop", "--json"]) == 7
    assert dispatch.main([]) == 7
    assert seen == [["--version", "--json"], ["hook", "Stop", "--json"], []]


@contextmanager
def answering(answer: bytes) -> Iterator[int]:
    """A one-connection server on 127.0.0.1 that reads a request head, sends
    ``answer`` and closes; yields its port."""
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def serve() -> None:
        conn, _ = listener.accept()
        with conn:
            data = b""
            while b"\r\n\r\n" not in data:
                data += conn.recv(65_536)
            conn.sendall(answer)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield port
    finally:
        thread.join(10)
        listener.close()


@pytest.mark.parametrize(
    "answer",
    [
        b'HTTP/1.1 200 OK\r\ncontent-length: 12\r\n\r\n{"ok": true}X',  # past the length: not read
        b'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{"ok"\r\n6\r\n: true\r\n1;x=y\r\n}\r\n0\r\n\r\n',
        b'HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n{"ok": true}',  # to the end of the connection
    ],
    ids=["content-length", "chunked", "to-the-end"],
)
def test_the_client_reads_each_shape_of_answer(answer: bytes) -> None:
    with answering(answer) as port:
        client = http_client.Client("127.0.0.1", port, "t")
        client.proven = True
        assert client.request("GET", "/health") == {"ok": True}


@pytest.mark.parametrize(
    "answer",
    [b"", b"HTTP/1.1 200 OK\r\ncontent-length: 50\r\n\r\n{", b"SSH-2.0-OpenSSH\r\n\r\n"],
    ids=["nothing", "cut-short", "not-http"],
)
def test_an_answer_that_is_not_one_is_the_server_unavailable(answer: bytes) -> None:
    with answering(answer) as port:
        client = http_client.Client("127.0.0.1", port, "t")
        client.proven = True
        with pytest.raises(http_client.ServerUnavailableError, match=f"127.0.0.1:{port} did not answer"):
            client.request("GET", "/health")


# The console script's end: ``main`` replaced by one that leaves what the case names,
# an exit handler that says it ran, then ``console()``.
CONSOLE = """
import atexit, sys, threading, time
import aircher_mem as am
from aircher_mem.interfaces import dispatch
case, root = sys.argv[1], sys.argv[2]
atexit.register(lambda: print("exit handlers ran", flush=True))
def main():
    print("answered", flush=True)
    if case == "store left open":
        am.Memory.open(root).add_turn("s", "user", "kept at exit")
    elif case == "store closed":
        with am.Memory.open(root) as memory:
            memory.add_turn("s", "user", "kept at close")
    elif case == "thread working":
        threading.Thread(target=time.sleep, args=(0.2,)).start()
    return 3
dispatch.main = main
dispatch.console()
"""


@pytest.mark.parametrize(
    ("case", "teardown"),
    [("nothing", False), ("store closed", False), ("store left open", True), ("thread working", True)],
)
def test_the_console_script_ends_at_once_only_when_nothing_is_left_to_finish(
    tmp_path: Path, case: str, teardown: bool
) -> None:
    done = subprocess.run(
        [sys.executable, "-c", CONSOLE, case, str(tmp_path)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 3, done.stderr
    assert done.stdout.splitlines() == ["answered", *(["exit handlers ran"] if teardown else [])]
    if case.startswith("store"):  # closed by the command, or by the exit handlers: on disk
        with am.Memory.open(tmp_path) as memory:
            said = [t.text for t in memory.conversation("s").short_term]
        assert said == (["kept at close"] if case == "store closed" else ["kept at exit"])


def test_version_into_a_closed_pipe_stops_quietly() -> None:
    read, write = os.pipe()
    os.close(read)  # the reader went away: `aircher-mem --version | true`
    try:
        done = subprocess.run([SCRIPT, "--version"], stdout=write, stderr=subprocess.PIPE, text=True, timeout=60)
    finally:
        os.close(write)
    assert (done.returncode, done.stderr) == (141, "")
