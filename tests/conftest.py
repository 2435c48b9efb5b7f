from __future__ import annotations

import contextlib
import dataclasses
import importlib.util
import os
import signal
import subprocess
import sys
import time
import types
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

import aircher_mem as am
import pytest
from aircher_mem.engine import ContextItem, ContextItemType
from aircher_mem.longterm import LongTermMemory
from hypothesis import HealthCheck, settings
from pg_cluster import database, pg_server, pg_url  # noqa: F401 (fixtures: a PostgreSQL server, a database of its own)

# The properties hold whatever the machine's load: no time limit per example and no
# complaint about slow generation, which parallel workers on a loaded machine cause.
settings.register_profile("aircher", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("aircher")


def pytest_configure(config: pytest.Config) -> None:
    """Under ``pytest -n`` (pytest-xdist), each test module runs whole in one worker,
    in file order (test_http_schema's last test reads what the tests before it saw):
    ``-n`` alone (``--dist load``) becomes ``--dist loadfile``."""
    if getattr(config.option, "dist", "no") == "load":
        config.option.dist = "loadfile"


NOW = 1_700_000_000.0

T = ContextItemType


def make_item(
    id: str, kind: ContextItemType | None = None, *, age_s: float = 0.0, tokens: int = 10, **kw: Any
) -> ContextItem:
    return ContextItem(
        id, f"content {id}", kind or T.ToolResult("bash"), token_cost=tokens, timestamp=NOW - age_s, **kw
    )


DATA_ENV = "AIRCHER_DATA"


def needs_data(name: str, what: str, source: str) -> Path:
    """The data set ``name`` (a file or folder) from the folder named by
    ``$AIRCHER_DATA``, else from ``shared/data`` beside the repository. Without it the
    test skips with a message that says what is missing (``what``), where it comes
    from (``source``) and where to put it."""
    configured = os.environ.get(DATA_ENV)
    folder = Path(configured).expanduser() if configured else Path(__file__).resolve().parents[2] / "shared" / "data"
    path = folder / name
    if not path.exists():
        where = f" ({DATA_ENV} is {configured}, which does not hold it)" if configured else ""
        pytest.skip(f"needs {what}: set {DATA_ENV} to a folder holding {name} ({source}){where}")
    return path


class FakeEmbedder:
    """Vectors by text: near-duplicates point the same way, the rest elsewhere;
    ``embedded`` collects every text it was asked for."""

    VECTORS: ClassVar[dict[str, list[float]]] = {
        "The deploy script lives in tools/release.sh": [1.0, 0.0, 0.0, 0.0],
        "Releases are shipped by running tools/release.sh": [0.9, 0.435889894, 0.0, 0.0],  # cosine 0.9
        "Lunch is at noon": [0.0, 0.0, 1.0, 0.0],
        "lunch": [0.0, 0.0, 1.0, 0.0],
    }
    embedded: ClassVar[list[str]] = []

    def embed(self, texts: list[str]) -> object:
        import numpy as np

        FakeEmbedder.embedded.extend(texts)
        return np.array([self.VECTORS.get(t, [0.0, 0.0, 0.0, 1.0]) for t in texts], dtype=np.float32)


#: Texts too different to merge into one memory, each with a slot for a marker word.
DISTINCT_TEXTS = [
    "We deploy with {} on Fridays only.",
    "The billing service talks to Stripe through {}.",
    "Use {} to format the Go code before review.",
    "Our staging database is reset nightly by {}.",
    "Never log customer emails; {} scrubs them.",
    "The mobile app builds with {} on the CI runners.",
    "Ann owns the search ranking code in {}.",
    "We chose {} for feature flags because it is self-hosted.",
]


class Clock:
    """A clock to hand a store (``clock=``): it says ``now``, which a test moves."""

    def __init__(self, now: float = NOW) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> list[float]:
    """A settable clock: tests move time by assigning clock[0]."""
    return [NOW]


# A small repository the Memory, CLI and MCP tests index: known definitions and calls,
# an empty __init__.py, a .gitignore'd folder and a non-source file.
PROJECT = {
    "app/__init__.py": "",
    "app/models.py": "class Base:\n    pass\n\nclass User(Base):\n    def save(self):\n        return store(self)\n\ndef store(obj):\n    return obj\n",
    "app/views.py": "from app.models import User\n\ndef create():\n    user = User()\n    user.save()\n    return user\n",
    "app/util.py": "def helper():\n    return 1\n",
    "generated/gen.py": "def generated():\n    pass\n",
    ".gitignore": "generated/\n",
    "README.md": "# fixture\n",
}
PROJECT_SOURCES = ["app/__init__.py", "app/models.py", "app/util.py", "app/views.py"]


def write_files(root: Path, files: Mapping[str, str | bytes]) -> Path:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    return root


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A fresh copy of PROJECT (not indexed)."""
    return write_files(tmp_path / "repo", PROJECT)


@contextlib.contextmanager
def duckdb_held_by_another_process(path: Path) -> Iterator[None]:
    """Another process opens the DuckDB file ``path`` (taking its write lock) and
    keeps it open until the block ends."""
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import duckdb, sys; c = duckdb.connect(sys.argv[1]); print('ready', flush=True); sys.stdin.read()",
            str(path),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
        yield
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=30)
        assert holder.stdout is not None
        holder.stdout.close()


@pytest.fixture(autouse=True)
def _no_dense_channel(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Search results do not depend on whether the `embeddings` extra happens to be
    installed: the dense channel is off unless a test is marked `dense`."""
    if request.node.get_closest_marker("dense") is None:
        import aircher_mem.embeddings as embeddings

        monkeypatch.setattr(embeddings, "available", lambda: (False, "dense channel disabled in tests"))


@pytest.fixture(autouse=True)
def _hook_servers(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Path]]:
    """A hook run in this process that would start a server for its project
    (``[hooks] start_server``) notes the project here instead, unless the test is
    marked `hook_servers`; after the test, every `serve --yields` a hook process
    started for a project under the test's folders is stopped (each would otherwise
    wait ``server_idle_seconds`` for a request)."""
    from aircher_mem.interfaces import hooks

    started: list[Path] = []
    if request.node.get_closest_marker("hook_servers") is None:
        monkeypatch.setattr(hooks, "_start_server", lambda root, idle: started.append(root))
    yield started
    base = str(request.config._tmp_path_factory.getbasetemp())  # type: ignore[attr-defined]
    for pid in yielding_servers(base):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)


def yielding_servers(under: str) -> list[int]:
    """The pids of the `aircher-mem serve --yields` processes (a hook's servers)
    serving a project under the folder ``under``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                argv = f.read().decode("utf-8", "replace").split("\0")
        except OSError:
            continue
        if "serve" in argv and "--yields" in argv and "--root" in argv:
            root = argv[argv.index("--root") + 1]
            if root.startswith(under):
                found.append(int(entry))
    return found


@dataclasses.dataclass
class Served:
    """A server started by :func:`serving`: its server.json and the (method, path)
    of every request it received."""

    info: Any
    requests: list[tuple[str, str]]


@contextlib.contextmanager
def serving(memory: am.Memory) -> Iterator[Served]:
    """``memory`` served over real HTTP on 127.0.0.1 (a free port) by uvicorn in a
    thread of this process, with ``<root>/.aircher/server.json`` written as ``serve``
    writes it, so the CLI, the MCP server and the hooks find it and become its
    clients. Yields a :class:`Served`; the file is removed when the block ends. (The
    real ``aircher-mem serve`` in a subprocess has its own tests in test_http.py.)"""
    import os
    import secrets
    import socket
    import threading

    import uvicorn
    from aircher_mem.interfaces import client as remote
    from aircher_mem.interfaces import http

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    port = sock.getsockname()[1]
    token = secrets.token_urlsafe(32)
    inner = http.build_app(memory, token=token, hosts=http._hosts(port))
    requests: list[tuple[str, str]] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"] != "/health":  # not the clients' proofs
            requests.append((scope["method"], scope["path"]))
        await inner(scope, receive, send)

    server = uvicorn.Server(uvicorn.Config(app, log_config=None, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    info = remote.ServerInfo("127.0.0.1", port, os.getpid(), token)
    path = remote.server_file(memory.root)
    http._write_info(path, info)
    try:
        client = remote.Client(info.host, info.port, info.token, timeout=10)
        for _ in range(500):  # until uvicorn accepts
            if server.started:
                break
            threading.Event().wait(0.01)
        assert client.request("GET", "/health")["ok"] is True
        requests.clear()
        yield Served(info, requests)
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()
        path.unlink(missing_ok=True)


def start_serve(root: Path) -> tuple[subprocess.Popen[str], Any]:
    """``aircher-mem serve --port 0`` for ``root`` (the installed console script) and
    its server.json once written."""
    from aircher_mem.interfaces import client as remote

    script = str(Path(sys.executable).with_name("aircher-mem"))
    proc = subprocess.Popen(
        [script, "serve", "--root", str(root), "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    for _ in range(1200):
        info = remote.discover(root)
        if info is not None and info.pid == proc.pid:
            return proc, info
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    proc.kill()
    raise AssertionError("aircher-mem serve wrote no server.json")


def stop_serve(proc: subprocess.Popen[str]) -> None:
    """Stops a server started by :func:`start_serve`: a clean exit, no traceback."""
    proc.send_signal(signal.SIGTERM)
    _, errors = proc.communicate(timeout=60)
    assert proc.returncode == 0 and "Traceback" not in errors, errors


@pytest.fixture
def rules(tmp_path: Path) -> Path:
    """A project with a store holding one important rule ("Never push to main"),
    hooks given 30 s (a loaded machine can take over the default 2 s to start Python)
    and starting no server (each hook a process of its own, as its test expects)."""
    root = tmp_path / "repo"
    (root / "app").mkdir(parents=True)
    (root / "app" / "util.py").write_text("def helper():\n    return 1\n")
    with am.Memory.open(root) as memory:
        assert memory.remember("Never push to main", importance=1).memory_id == 1
    (root / ".aircher" / "config.toml").write_text("[hooks]\ndeadline_seconds = 30\nstart_server = false\n")
    return root


def hook_event(name: str, root: Path, **fields: Any) -> str:
    """A Claude Code hook's JSON payload for event ``name`` in project ``root``."""
    import json

    return json.dumps({"session_id": "s1", "cwd": str(root), "hook_event_name": name, **fields})


def run_with_stdin_held(argv: list[str], text: str) -> tuple[int, str, str]:
    """Runs ``argv`` with ``text`` written to its stdin, which is left open until
    the process exits (at most 30 s; it must exit within 20): its exit code,
    stdout and stderr."""
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdin is not None
    try:
        proc.stdin.write(text)
        proc.stdin.flush()
        started = time.monotonic()
        code = proc.wait(timeout=30)
        assert time.monotonic() - started < 20
    finally:
        proc.stdin.close()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.stdout is not None and proc.stderr is not None
    out, err = proc.stdout.read(), proc.stderr.read()
    proc.stdout.close()
    proc.stderr.close()
    return code, out, err


def assert_prompt_and_read_recorded(served: Any, memory: am.Memory) -> None:
    """What a UserPromptSubmit ("Can I push to main now?") then a PostToolUse of a
    Read of lines 1-2 of ``app/util.py`` send a server and leave in its store."""
    assert served.requests == [
        ("POST", "/assemble"),
        ("POST", "/add-turn"),
        ("POST", "/record-tool-call"),
        ("POST", "/record-file-interaction"),
    ]
    assert [t.text for t in memory.longterm.turns("s1")] == ["Can I push to main now?"]
    history = memory.file_history("app/util.py").interactions
    assert [(i.operation, i.line_range) for i in history] == [("read", (1, 2))]


def git(root: Path, *args: str) -> str:
    """Runs git in ``root`` as a test's author (on branch main), its output stripped."""
    done = subprocess.run(
        ["git", "-c", "user.name=T", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main", *args],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def bench_script(name: str) -> types.ModuleType:
    """The benchmark script ``benches/<name>.py`` imported as ``<name>_bench`` (kept
    in ``sys.modules``: its dataclasses look their module up), so a test can run its
    scoring on small inputs."""
    path = Path(__file__).resolve().parents[1] / "benches" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"{name}_bench", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[f"{name}_bench"] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(params=["duckdb", "postgres"])
def new_store_url(request: pytest.FixtureRequest) -> Iterator[Callable[[], str]]:
    """Each call says where a new store goes: "" on the DuckDB run (the test's own
    path), the URL of a new, empty PostgreSQL database on the server run (dropped
    after the test)."""
    if request.param == "duckdb":
        yield lambda: ""
        return
    server = request.getfixturevalue("pg_server")
    with contextlib.ExitStack() as made:
        yield lambda: made.enter_context(database(server))


#: Makes a long-term store (see make_store).
Store = Callable[..., LongTermMemory]


@pytest.fixture
def make_store(new_store_url: Callable[[], str]) -> Iterator[Store]:
    """Makes a long-term store, its clock at NOW: in memory (or at a path given), and
    on the server run each store given no path in a database of its own. A test holds
    one store at a time: each call closes the store the call before made (a
    property test makes one an example), and the test's end the last."""
    made: list[LongTermMemory] = []

    def make(path: Path | str = ":memory:", **kwargs: Any) -> LongTermMemory:
        while made:
            made.pop().close()
        kwargs.setdefault("clock", Clock(NOW))
        made.append(LongTermMemory(path, url=new_store_url() if path == ":memory:" else "", **kwargs))
        return made[-1]

    yield make
    while made:
        made.pop().close()
