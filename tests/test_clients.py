"""The CLI and the MCP server as clients of ``aircher-mem serve``: with a server
running for the project they call it over HTTP and give the same output as without
one. In-process (a loopback server in a thread, the clock fixed) the outputs are
compared byte for byte; with the real ``aircher-mem serve`` in a subprocess, the
console script and a real MCP session over stdio (the SDK's client starting
``aircher-mem mcp``) work while the server holds the store, and without it."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import aircher_mem as am
import anyio
import pytest
from aircher_mem.interfaces import cli, command_line, http, wire
from aircher_mem.interfaces import client as http_client
from conftest import PROJECT, serving, start_serve, stop_serve, write_files
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.types import CallToolResult, TextContent

SCRIPT = str(Path(sys.executable).with_name("aircher-mem"))
NOW = 1_700_000_000.0

# Every long-term, code-graph and episodic command, in an order where each finds
# something (ids are those the earlier commands create).
COMMANDS: list[list[str]] = [
    ["add-turn", "s1", "user", "I prefer tabs over spaces."],
    ["add-turn", "s1", "user", "Actually I prefer spaces now.", "--speaker", "ann"],
    ["add-turn", "s1", "assistant", "Noted.", "--no-extract"],
    ["remember", "Deploys go through staging first", "--importance", "1", "--tags", "ops,deploy"],
    ["remember", "The billing module rounds half up", "--kind", "decision", "--domain", "billing"],
    ["conversation", "s1", "-k", "5"],
    ["memories"],
    ["memories", "--layer", "mid", "--sort", "id", "--status", "all"],
    ["recall", "what does the user prefer, tabs or spaces?"],
    ["recall", "deploy", "-k", "3", "--kinds", "fact,turn", "--session-id", "s1"],
    ["explain", "1"],
    ["feedback", "3", "cited"],
    ["update", "3", "--tags", "ops"],
    ["facts", "--level", "L0"],
    ["promote", "4", "L1"],
    ["subtree", "4"],
    ["gc", "--dry-run"],
    ["gc"],
    ["forget", "--text", "rounds half up"],
    ["forget", "3"],
    ["explain", "99"],  # unknown: exit 3, the same error
    ["find-symbol", "User"],
    ["find-symbol", "sa", "--prefix"],
    ["callers", "store"],
    ["callees", "create"],
    ["references", "User"],
    ["neighbourhood", "store", "--hops", "2"],
    ["file-definitions", "app/models.py"],
    ["dependencies", "app/views.py"],
    ["relevant-code", "save a user", "--max-tokens", "200"],
    ["search-code", "save a user", "-k", "3"],
    ["task", "start", "t1", "--description", "Fix the user save"],
    ["file-history", "app/models.py"],
    ["co-edited-files"],
    ["tasks"],
    ["task", "complete", "t1", "--outcome", "save writes once"],
    # (a process excludes its own current task from similar tasks: a server that
    # started t1 would not list it while it runs, a fresh CLI process would)
    ["tasks", "save user"],
    ["patterns"],
    ["preview-context", "where is the user saved?", "--max-tokens", "4000"],
    ["find-symbol", "Nope"],  # unknown: exit 3
]


SESSION = "s-clients"

# Commands that change the memory run once, with --json; the others twice (table, JSON).
CHANGING = {"add-turn", "remember", "feedback", "update", "promote", "gc", "forget", "task"}


def fresh_project(root: Path) -> Path:
    if root.exists():
        shutil.rmtree(root)
    write_files(root, PROJECT)
    with am.Memory.open(root) as memory:
        memory.index()
    # the hooks' 2 s deadline is for an agent's machine: a loaded test machine (parallel
    # workers) can take longer than that to start Python
    config = root / ".aircher" / "config.toml"
    text = config.read_text()
    assert "\ndeadline_seconds = 2.0\n" in text
    text = text.replace("\ndeadline_seconds = 2.0\n", "\ndeadline_seconds = 30.0\n", 1)
    # a hook starts no server of its own: the tests start theirs
    config.write_text(text.replace("\nstart_server = true\n", "\nstart_server = false\n", 1))
    return root


def run_cli(root: Path, argv: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    code = cli.main([*argv, "--root", str(root)], stdout=out)
    return code, out.getvalue()


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[float]]:
    """Memories the CLI opens itself read this clock and record under one session id
    (a task shows the session that started it; a server's memory is given both by
    the test)."""
    now = [NOW]
    opened = cli._open

    def open_with_clock(args: Any) -> Any:
        memory = opened(args)
        if isinstance(memory, am.Memory):
            memory.longterm.clock = memory.episodic.clock = lambda: now[0]
            memory.episodic.session_id = SESSION
        return memory

    monkeypatch.setattr(cli, "_open", open_with_clock)
    yield now


@pytest.mark.slow
def run_thin(root: Path, argv: list[str]) -> tuple[int, str]:
    """The command as the console script runs it with a server: answered by
    :func:`command_line.run`, which must not hand it to the full CLI."""
    out = io.StringIO()
    code = command_line.run([*argv, "--root", str(root)], out)
    assert code is not None, argv
    return code, out.getvalue()


Outputs = list[tuple[int | None, str, int, str]]


def session(
    root: Path, served: Any, clock: list[float], run: Callable[[Path, list[str]], tuple[int, str]] = run_cli
) -> Outputs:
    """Every command of :data:`COMMANDS` in turn, each as a table (those that change
    nothing) and as JSON: their exit codes and output."""
    outputs = []
    for n, argv in enumerate(COMMANDS):
        clock[0] = NOW + 60 * n
        before = len(served.requests) if served else 0
        code, table = run(root, argv) if argv[0] not in CHANGING else (None, "")
        json_code, as_json = run(root, [*argv, "--json"])
        if served is not None:  # each command was requests to the server, none opened the store
            assert len(served.requests) > before, argv
        outputs.append((code, table, json_code, as_json))
    return outputs


def served_session(root: Path, clock: list[float], run: Callable[[Path, list[str]], tuple[int, str]]) -> Outputs:
    fresh_project(root)  # the same path, so every root in the output is the same
    with am.Memory.open(root) as memory:
        memory.longterm.clock = memory.episodic.clock = lambda: clock[0]
        memory.episodic.session_id = SESSION
        with serving(memory) as served:
            return session(root, served, clock, run)


def assert_same(direct: Outputs, remote: Outputs) -> None:
    for argv, want, got in zip(COMMANDS, direct, remote, strict=True):
        assert got[:3] == want[:3], argv
        assert json.loads(got[3]) == json.loads(want[3]), argv
        assert got[3] == want[3], argv


def test_the_cli_prints_the_same_with_and_without_a_server(tmp_path: Path, clock: list[float]) -> None:
    root = tmp_path / "repo"
    fresh_project(root)
    direct = session(root, None, clock)
    assert [c for _, _, c, _ in direct].count(0) == len(COMMANDS) - 2
    assert direct[COMMANDS.index(["explain", "99"])][:3:2] == (wire.EXIT_NOT_FOUND, wire.EXIT_NOT_FOUND)
    assert_same(direct, served_session(root, clock, run_cli))
    # the console script sends each of them to the server without the service: the same output
    assert_same(direct, served_session(root, clock, run_thin))


@pytest.mark.slow
def test_a_command_a_server_answers_loads_neither_the_service_nor_its_stores(tmp_path: Path) -> None:
    root = fresh_project(tmp_path / "repo")
    code = (
        "import sys; from aircher_mem.interfaces import dispatch; code = dispatch.main(sys.argv[1:]); "
        "print('\\n'.join(sorted(sys.modules)), file=sys.stderr); sys.exit(code)"
    )
    proc, _ = start_serve(root)
    try:
        for argv in (["recall", "tabs"], ["search-code", "save a user", "--json"], ["explain", "99"]):
            done = subprocess.run(
                [sys.executable, "-c", code, *argv, "--root", str(root)], capture_output=True, text=True, timeout=120
            )
            loaded = set(done.stderr.splitlines())
            assert done.returncode == (wire.EXIT_NOT_FOUND if argv[0] == "explain" else 0), done.stderr
            assert "aircher_mem.interfaces.command_line" in loaded and "aircher_mem.results" in loaded
            heavy = {
                "aircher_mem.memory",
                "aircher_mem.config",
                "aircher_mem.interfaces.cli",
                "duckdb",
                "_duckdb",
                "numpy",
            }
            assert loaded & (heavy | {"tiktoken", "aircher_mem.episodic", "aircher_mem.longterm"}) == set(), argv
        # a bad argument, --help: the full CLI answers, as before
        done = subprocess.run(
            [SCRIPT, "recall", "tabs", "-k", "x", "--root", str(root)], capture_output=True, text=True
        )
        assert (done.returncode, done.stdout) == (wire.EXIT_USAGE, "")
        assert done.stderr.endswith("aircher-mem recall: error: argument -k: 'x' is not an integer\n")
        done = subprocess.run([SCRIPT, "recall", "--help", "--root", str(root)], capture_output=True, text=True)
        assert done.returncode == 0 and done.stdout.startswith("usage: aircher-mem recall [-h]")
    finally:
        stop_serve(proc)


def test_index_and_init_go_to_the_server(tmp_path: Path) -> None:
    root = fresh_project(tmp_path / "repo")
    (root / "app" / "extra.py").write_text("def extra():\n    return helper()\n")
    with am.Memory.open(root) as memory, serving(memory) as served:
        out = io.StringIO()
        assert cli.main(["index", str(root), "--json"], stdout=out) == 0
        assert json.loads(out.getvalue())["added"] == ["app/extra.py"]
        # besides the polls of its progress line
        assert [r for r in served.requests if r != ("GET", "/index-progress")] == [("POST", "/index")]
        out = io.StringIO()
        assert cli.main(["create-store", str(root), "--json"], stdout=out) == 0
        assert json.loads(out.getvalue()) == {"root": str(root), "store": str(root / ".aircher"), "created": False}
        assert memory.find_symbol("extra").symbols[0].path == "app/extra.py"


def test_remote_memory_binds_arguments_as_the_verb_does(tmp_path: Path) -> None:
    root = fresh_project(tmp_path / "repo")
    with am.Memory.open(root) as memory, serving(memory):
        remote = http_client.connect(root)
        assert isinstance(remote, http_client.RemoteMemory) and remote.root == root
        assert remote.find_symbol("User", prefix=False) == memory.find_symbol("User")
        # a verb's parameter named like call's own (name, verb) is the verb's
        assert remote.find_symbol(name="User") == memory.find_symbol("User")
        assert remote.call("callers", name="store") == memory.callers("store")
        with pytest.raises(TypeError):
            remote.find_symbol("User", True)  # prefix is keyword-only, on a Memory too
        with pytest.raises(am.InvalidInputError, match="progress cannot be sent"):
            remote.index(progress=lambda done, total: None)
        with pytest.raises(AttributeError):
            remote.longterm  # not a verb
        with pytest.raises(am.UnknownSymbolError):
            remote.find_symbol("Nope")
    assert isinstance(http_client.connect(root), am.Memory)  # no server: the store itself


# -- the real server, the console script and a real MCP session ---------------------------


def console(root: Path, *argv: str) -> tuple[int, str, str]:
    done = subprocess.run([SCRIPT, *argv, "--root", str(root)], capture_output=True, text=True, timeout=120)
    return done.returncode, done.stdout, done.stderr


@pytest.mark.slow
def test_the_console_script_while_the_server_holds_the_store_and_after(tmp_path: Path) -> None:
    root = fresh_project(tmp_path / "repo")
    proc, _ = start_serve(root)
    try:
        with pytest.raises(am.StoreLockedError):  # the server holds the store: a direct open would fail
            with am.Memory.open(root) as memory:
                memory.remember("a direct write")
        code, out, err = console(root, "add-turn", "s", "user", "I prefer tabs.")
        assert (code, err) == (0, "") and out.startswith("turn 1 added to session s: 1 memory extracted")
        code, out, _ = console(root, "recall", "tabs?", "--json")
        assert code == 0 and [(h["kind"], h["id"]) for h in json.loads(out)["hits"]][:1] == [("fact", 1)]
        code, out, _ = console(root, "file-history", "app/models.py", "--json")
        assert code == 0 and json.loads(out) == {"path": "app/models.py", "interactions": [], "failed_tool_runs": []}
        code, out, err = console(root, "explain", "7")
        assert (code, out) == (wire.EXIT_NOT_FOUND, "") and err.startswith("aircher-mem explain: ")
        assert json.loads(console(root, "stats", "--json")[1])["longterm"]["memories"] == 1
    finally:
        stop_serve(proc)
    assert http_client.discover(root) is None
    code, out, _ = console(root, "memories", "--json")  # no server: the store itself, with what the server stored
    assert code == 0 and [m["content"] for m in json.loads(out)["memories"]] == ["I prefer tabs."]


def text(result: CallToolResult) -> str:
    [block] = result.content
    assert isinstance(block, TextContent)
    return block.text


async def mcp_session(root: Path) -> list[tuple[bool, Any]]:
    """A short agent session over stdio: remember, recall, cite, explain, look up code,
    record an edit and read it back, and one error."""
    params = StdioServerParameters(command=SCRIPT, args=["mcp", "--root", str(root)], cwd=str(root))
    calls: list[tuple[str, dict[str, Any]]] = [
        ("remember", {"content": "Tests run with pytest -x because CI is slow", "tags": ["ci"]}),
        ("add_turn", {"session_id": "s", "role": "user", "text": "I prefer tabs.", "at": "2023-11-14T22:13:20Z"}),
        ("recall", {"query": "how are tests run?", "kinds": ["fact"]}),
        ("feedback", {"memory_id": 1, "signal": "cited"}),
        ("find_symbol", {"name": "User"}),
        ("callers", {"name": "store"}),
        ("record_file_interaction", {"path": "app/util.py", "operation": "read", "line_range": [1, 2]}),
        ("file_history", {"path": "app/util.py"}),
        ("explain", {"memory_id": 42}),
        ("forget", {"text": "pytest -x"}),
    ]
    answers: list[tuple[bool, Any]] = []
    with open(root.parent / "mcp-stderr.txt", "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                for tool, arguments in calls:
                    result = await session.call_tool(tool, arguments)
                    answers.append((bool(result.is_error), json.loads(text(result))))
    return answers


def stable(answers: list[tuple[bool, Any]]) -> list[tuple[bool, Any]]:
    """The answers without what depends on the wall clock (times and scores)."""
    out: list[tuple[bool, Any]] = []
    for is_error, data in answers:
        if isinstance(data, dict) and "hits" in data:
            data = [(h["kind"], h["id"], h["content"]) for h in data["hits"]]
        elif isinstance(data, dict) and "interactions" in data:
            data = [(i["operation"], i["line_range"]) for i in data["interactions"]]
        out.append((is_error, data))
    return out


@pytest.mark.slow
def test_a_real_mcp_session_with_and_without_the_server(tmp_path: Path) -> None:
    root = fresh_project(tmp_path / "repo")
    without = anyio.run(mcp_session, root)
    assert stable(without) == [
        (False, {"memory_id": 1, "action": "created", "superseded": None}),
        (False, {"turn_id": 1, "session_id": "s", "extracted": [without[1][1]["extracted"][0]], "notes": []}),
        (False, [("fact", 1, "Tests run with pytest -x because CI is slow")]),
        (False, {"memory_id": 1, "signal": "cited", "retrieved": 1, "cited": 1, "ignored": 0}),
        (False, without[4][1]),
        (False, without[5][1]),
        (False, {"what": "file_interaction", "graph_stale": False, "notes": []}),
        (False, [("read", [1, 2])]),
        (True, {"error": {"code": "unknown_memory", "type": "UnknownMemoryError", "message": "no memory 42"}}),
        (False, {"ids": [1], "turns": []}),
    ]
    assert [s["path"] for s in without[4][1]["symbols"]] == ["app/models.py"]

    root = fresh_project(tmp_path / "repo")
    proc, _ = start_serve(root)
    try:
        served = anyio.run(mcp_session, root)
        assert "using the server at http://127.0.0.1:" in (tmp_path / "mcp-stderr.txt").read_text()
        code, out, _ = console(
            root, "memories", "--status", "all", "--json"
        )  # the server's store has the session's work
        assert code == 0 and [m["content"] for m in json.loads(out)["memories"]] == ["I prefer tabs."]
    finally:
        stop_serve(proc)
    assert stable(served) == stable(without)


@pytest.mark.slow
def test_an_mcp_session_goes_on_when_the_server_stops(tmp_path: Path) -> None:
    """The server stops mid-session: the next tool call finds nothing listening
    (the request was not sent), so the MCP server opens the store itself and goes
    on, with what the server had stored."""
    root = fresh_project(tmp_path / "repo")
    proc, _ = start_serve(root)
    params = StdioServerParameters(command=SCRIPT, args=["mcp", "--root", str(root)], cwd=str(root))
    answers: list[Any] = []

    async def session() -> None:
        with open(tmp_path / "mcp-stderr.txt", "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write) as mcp:
                    await mcp.initialize()
                    made = await mcp.call_tool("remember", {"content": "Deploys go through staging first"})
                    answers.append(json.loads(text(made)))
                    stop_serve(proc)
                    found = await mcp.call_tool("recall", {"query": "how do deploys go?", "kinds": ["fact"]})
                    answers.append((found.is_error, json.loads(text(found))))
                    again = await mcp.call_tool("remember", {"content": "Releases are tagged on Fridays"})
                    answers.append(json.loads(text(again)))

    try:
        anyio.run(session)
    finally:
        if proc.poll() is None:
            stop_serve(proc)
    assert answers[0] == {"memory_id": 1, "action": "created", "superseded": None}
    is_error, found = answers[1]
    assert not is_error and [(h["kind"], h["id"]) for h in found["hits"]] == [("fact", 1)]
    assert answers[2] == {"memory_id": 2, "action": "created", "superseded": None}
    assert "no aircher-mem server answers for" in (tmp_path / "mcp-stderr.txt").read_text()
    with am.Memory.open(root) as memory:
        assert [m.content for m in memory.memories(sort="id").memories] == [
            "Deploys go through staging first",
            "Releases are tagged on Fridays",
        ]


def test_a_refused_connection_is_server_gone_and_nothing_was_sent() -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # bound, not listening: connections are refused
        with pytest.raises(http_client.ServerGoneError, match="the request was not sent"):
            http_client.Client("127.0.0.1", port, "token", timeout=5).request("GET", "/health")
    assert issubclass(http_client.ServerGoneError, http_client.ServerUnavailableError)


@pytest.mark.slow
def test_a_server_json_naming_a_live_pid_but_no_server_falls_back_to_the_store(tmp_path: Path) -> None:
    """server.json left by a killed server whose pid now belongs to another process:
    nothing listens on its port, so the console script and the hooks use the store."""
    import os
    import socket

    root = fresh_project(tmp_path / "repo")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # bound, never listening: connections are refused
        http._write_info(
            http_client.server_file(root), http_client.ServerInfo("127.0.0.1", port, os.getppid(), "stale")
        )
        assert http_client.discover(root) is not None  # the pid lives (this test's parent)
        code, out, err = console(root, "remember", "Deploys go through staging first", "--json")
        assert (code, json.loads(out)["memory_id"]) == (0, 1)
        assert f"server.json names pid {os.getppid()} at 127.0.0.1:{port} but nothing there proves the token" in err
        assert "stale; ignored (no aircher-mem server listens at" in err
        code, out, _ = console(root, "memories", "--json")
        assert code == 0 and [m["content"] for m in json.loads(out)["memories"]] == ["Deploys go through staging first"]


# -- a stale server.json: the pid lives on, a stranger listens on the port ------------------


class Stranger:
    """A plain TCP server on a free loopback port, not aircher-mem: it records every
    byte it receives and answers each connection with a 200 and ``{}``, as any small
    HTTP service would."""

    def __init__(self) -> None:
        import socket
        import threading

        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port: int = self.sock.getsockname()[1]
        self.received = bytearray()
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(2)
                data = b""
                try:
                    while b"\r\n\r\n" not in data:
                        chunk = conn.recv(65536)
                        if not chunk:
                            break
                        data += chunk
                    head, _, rest = data.partition(b"\r\n\r\n")
                    for line in head.split(b"\r\n"):
                        if line.lower().startswith(b"content-length:"):
                            while len(rest) < int(line.split(b":")[1]):
                                chunk = conn.recv(65536)
                                if not chunk:
                                    break
                                rest += chunk
                    data = head + b"\r\n\r\n" + rest
                except OSError:
                    pass
                self.received += data
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")

    def close(self) -> None:
        self.sock.close()


@pytest.mark.slow
def test_a_stale_server_json_never_sends_the_token_or_the_text_to_a_stranger(tmp_path: Path) -> None:
    """server.json names a live pid (this test's process) and a port where another
    program listens: the CLI and a hook send it neither the token nor any text,
    treat the file as stale and use the store; ``doctor`` says so, ``serve``
    replaces the file."""
    import os

    root = fresh_project(tmp_path / "repo")
    stranger = Stranger()
    token = "stale-token-" + "s" * 30
    try:
        http._write_info(
            http_client.server_file(root), http_client.ServerInfo("127.0.0.1", stranger.port, os.getpid(), token)
        )
        assert http_client.discover(root) is not None  # the pid lives
        secret = "I prefer tabs over spaces, says zebra-quartz."
        code, out, err = console(root, "add-turn", "s", "user", secret, "--json")
        assert (code, json.loads(out)["turn_id"]) == (0, 1), err
        assert f"names pid {os.getpid()} at 127.0.0.1:{stranger.port} but nothing there proves the token" in err
        payload = json.dumps(
            {
                "session_id": "s",
                "hook_event_name": "UserPromptSubmit",
                "cwd": str(root),
                "prompt": "zebra-quartz again?",
            }
        )
        done = subprocess.run([SCRIPT, "hook", "UserPromptSubmit"], input=payload, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        code, out, _ = console(root, "conversation", "s", "--json")
        assert code == 0 and [t["text"] for t in json.loads(out)["short_term"]] == [secret, "zebra-quartz again?"]
        code, out, _ = console(root, "doctor", "--json")
        [check] = [c for c in json.loads(out)["checks"] if c["check"] == "server"]
        assert check == {
            "check": "server",
            "status": "warn",
            "detail": f"server.json names pid {os.getpid()} at 127.0.0.1:{stranger.port} "
            "but nothing there proves the token: stale",
        }
        received = bytes(stranger.received)
        assert token.encode() not in received and b"zebra-quartz" not in received and b"tabs" not in received
        assert received.count(b"GET /health?challenge=") >= 3  # all it saw: the challenges
        proc, info = start_serve(root)  # serve replaces the stale file (no exit 4)
        try:
            assert info.pid == proc.pid and info.port != stranger.port
            code, out, _ = console(root, "doctor", "--json")
            [check] = [c for c in json.loads(out)["checks"] if c["check"] == "server"]
            assert check == {
                "check": "server",
                "status": "ok",
                "detail": f"pid {proc.pid} serves this project at http://127.0.0.1:{info.port}",
            }
        finally:
            stop_serve(proc)
    finally:
        stranger.close()
    assert token.encode() not in bytes(stranger.received)


@pytest.mark.slow
def test_the_cli_and_a_hook_beside_aircher_mem_mcp_go_through_it(tmp_path: Path) -> None:
    """``aircher-mem mcp`` holding the store serves it as ``aircher-mem serve``
    would: server.json names it, a CLI command and a hook in other processes are
    answered by it, and what they stored is what its tools recall; the file is
    gone when it exits."""
    root = fresh_project(tmp_path / "repo")
    params = StdioServerParameters(command=SCRIPT, args=["mcp", "--root", str(root), "--no-index"], cwd=str(root))
    seen: dict[str, Any] = {}
    payload = json.dumps(
        {
            "session_id": "h",
            "hook_event_name": "UserPromptSubmit",
            "cwd": str(root),
            "prompt": "Releases are tagged on Fridays.",
        }
    )

    async def session() -> None:
        with open(tmp_path / "mcp-stderr.txt", "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write) as mcp:
                    await mcp.initialize()
                    made = await mcp.call_tool("remember", {"content": "Deploys go through staging first"})
                    seen["remember"] = json.loads(text(made))
                    seen["info"] = http_client.discover(root)
                    argv = ("add-turn", "s", "user", "I prefer tabs over spaces.")
                    seen["cli"] = await anyio.to_thread.run_sync(lambda: console(root, *argv, "--json"))
                    seen["hook"] = await anyio.to_thread.run_sync(
                        lambda: subprocess.run(
                            [SCRIPT, "hook", "UserPromptSubmit"], input=payload, capture_output=True, text=True
                        )
                    )
                    found = await mcp.call_tool("recall", {"query": "tabs spaces releases fridays", "kinds": ["turn"]})
                    seen["recall"] = json.loads(text(found))

    anyio.run(session)
    info = seen["info"]
    assert seen["remember"] == {"memory_id": 1, "action": "created", "superseded": None}
    assert info is not None and info.pid != __import__("os").getpid()
    assert (
        f"serving the store to other processes at http://127.0.0.1:{info.port}"
        in (tmp_path / "mcp-stderr.txt").read_text()
    )
    code, out, err = seen["cli"]
    assert (code, err) == (0, "") and json.loads(out)["turn_id"] == 1
    assert seen["hook"].returncode == 0 and seen["hook"].stderr == ""
    assert sorted(h["content"] for h in seen["recall"]["hits"]) == [
        "I prefer tabs over spaces.",
        "Releases are tagged on Fridays.",
    ]
    assert not http_client.server_file(root).exists()  # removed at exit
    code, out, _ = console(root, "conversation", "h", "--json")  # the store is free again
    assert code == 0 and [t["text"] for t in json.loads(out)["short_term"]] == ["Releases are tagged on Fridays."]


def test_a_first_index_in_the_server_reports_progress_and_answers_from_its_first_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import re
    import threading

    from aircher_mem.config import GraphPolicy
    from aircher_mem.results import PartialIndex

    root = write_files(
        tmp_path / "repo",
        {f"pkg/m{i:03d}.py": f"def f{i}():\n    return {i}\n\n\ndef g{i}():\n    return f{i}()\n" for i in range(61)},
    )
    policy = am.Policy(graph=GraphPolicy(first_batch_files=10, first_batch_share=0.5))
    with am.Memory.open(root, policy=policy) as memory, http.serve_in_thread(memory):
        reached, release = threading.Event(), threading.Event()
        phase = memory._tracker.phase

        def held_at_linking(name: str) -> None:  # the whole build waits there until the test has looked
            phase(name)
            if name == "linking":
                reached.set()
                release.wait(60)

        monkeypatch.setattr(memory._tracker, "phase", held_at_linking)
        err, out, codes = io.StringIO(), io.StringIO(), []
        monkeypatch.setattr(sys, "stderr", err)  # not a terminal: plain progress lines
        indexing = threading.Thread(target=lambda: codes.append(cli.main(["index", str(root), "--json"], stdout=out)))
        indexing.start()
        try:
            assert reached.wait(60)
            remote = http_client.connect(root)
            assert isinstance(remote, http_client.RemoteMemory)
            status = remote.index_progress()
            assert (status.running, status.phase, status.done, status.total, status.unit) == (
                True,
                "linking",
                61,
                61,
                "files",
            )
            found = remote.find_symbol("f3")  # answered from the first 10 files, and says so
            assert found.partial == PartialIndex(10, 61) and [s.path for s in found.symbols] == ["pkg/m003.py"]
            assert wire.to_json(found)["partial"] == {"files": 10, "total": 61}
            with pytest.raises(am.UnknownSymbolError, match="in the first 10 of 61 files"):
                remote.find_symbol("f42")  # not among the first files
            hits = remote.search_code("g7 calls f7", k=3)
            assert hits.partial == PartialIndex(10, 61) and hits.hits[0].path == "pkg/m007.py"
            for _ in range(600):  # the CLI polls and says where the index is
                if "linking" in err.getvalue():
                    break
                threading.Event().wait(0.05)
        finally:
            release.set()
            indexing.join(60)
        assert codes == [0] and json.loads(out.getvalue())["files"] == 61
        lines = err.getvalue().splitlines()
        assert re.fullmatch(r"indexing \d+ s: linking", lines[-1]), lines
        assert all(
            re.fullmatch(r"indexing \d+ s: [a-z ]+( \d+/61 files(, [\d,]+ files/s)?(, .* left)?)?", x) for x in lines
        )
        whole = remote.find_symbol("f42")
        assert whole.partial is None and [s.path for s in whole.symbols] == ["pkg/m042.py"]
        done = remote.index_progress()
        assert (done.running, done.phase, done.done, done.total) == (False, "saving", 61, 61)


def test_the_cli_waits_for_a_long_index_in_the_server_past_the_client_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    root = write_files(tmp_path / "repo", {"a.py": "def f():\n    return 1\n"})
    with am.Memory.open(root) as memory, http.serve_in_thread(memory):
        (root / ".aircher/config.toml").write_text("[server]\nclient_timeout_seconds = 0.3\n")
        phase = memory._tracker.phase

        def slow_linking(name: str) -> None:  # an index longer than the client's timeout
            phase(name)
            if name == "linking":
                threading.Event().wait(1.0)

        monkeypatch.setattr(memory._tracker, "phase", slow_linking)
        out = io.StringIO()
        assert cli.main(["index", str(root), "--json", "--quiet"], stdout=out) == 0
        assert json.loads(out.getvalue())["files"] == 1
        remote = http_client.connect(root)
        assert isinstance(remote, http_client.RemoteMemory) and remote.index_timeout == 86_400.0
        assert remote.client.timeout == 0.3
