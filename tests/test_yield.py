"""A hook's server gives the store up: ``aircher-mem serve --yields`` exits as soon
as another process opening the store asks for it, and that process then holds the
store, with everything the server stored. A server that does not yield, a holder
that only pretends to, and the hooks themselves are never asked or never give way."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aircher_mem as am
import pytest
from aircher_mem import store
from aircher_mem.errors import StoreLockedError
from aircher_mem.interfaces import client as http_client
from aircher_mem.interfaces.thin import open_store
from conftest import stop_serve

pytestmark = pytest.mark.slow

SCRIPT = str(Path(sys.executable).with_name("aircher-mem"))


STARTED: list[subprocess.Popen[str]] = []


@pytest.fixture(autouse=True)
def _servers() -> Iterator[None]:
    """Every server a test started is gone after it."""
    yield
    while STARTED:
        proc = STARTED.pop()
        if proc.poll() is None:
            proc.kill()
        proc.communicate()


def serve(root: Path, *extra: str) -> tuple[subprocess.Popen[str], Any]:
    """``aircher-mem serve --port 0 EXTRA`` for ``root``, once it serves (and, with
    ``--yields``, offers the store)."""
    argv = [SCRIPT, "serve", "--root", str(root), "--port", "0", *extra]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    STARTED.append(proc)
    end = time.monotonic() + 120
    while True:
        info = http_client.discover(root)
        if info is not None and info.pid == proc.pid:
            if "--yields" not in extra or store.offered_by(root / ".aircher" / "memory.duckdb") == proc.pid:
                return proc, info
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < end, "the server did not start"
        time.sleep(0.05)


def info_url(info: Any) -> str:
    return f"http://{info.host}:{info.port}"


def files(root: Path) -> list[str]:
    return sorted(p.name for p in (root / ".aircher").iterdir() if p.name.endswith((".yields", ".wanted", ".json")))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "p"
    root.mkdir()
    with am.Memory.open(root) as memory:
        memory.add_turn("s", "user", "The build uses make.")
    return root


def test_memory_open_takes_the_store_from_a_yielding_server_with_what_it_stored(project: Path) -> None:
    proc, _ = serve(project, "--yields")
    assert files(project) == ["memory.duckdb.yields", "server.json"]
    remote = http_client.connect(project)
    remote.add_turn("s", "user", "Deploys go through the staging cluster.")  # acknowledged by the server
    with am.Memory.open(project) as memory:
        turns = [t.text for t in memory.longterm.turns("s")]  # the first read asks for the store
        assert turns == ["The build uses make.", "Deploys go through the staging cluster."]
        assert proc.wait(timeout=30) == 0
        _, errors = proc.communicate()
        assert errors == ""
        assert files(project) == []  # no server.json, offer or request left
        memory.add_turn("s", "user", "Written by the new holder.")
    with am.Memory.open(project) as memory:
        assert len(memory.longterm.turns("s")) == 3


def test_serve_takes_over_from_a_yielding_server_but_not_from_another(project: Path) -> None:
    first, _ = serve(project, "--yields")
    second, info = serve(project)  # asks the first for the store, then serves
    assert first.wait(timeout=30) == 0
    try:
        assert http_client.discover(project) == info
        third = subprocess.run(
            [SCRIPT, "serve", "--root", str(project), "--port", "0"], capture_output=True, text=True, timeout=120
        )
        assert (third.returncode, third.stderr) == (
            4,
            f"aircher-mem serve: a server already runs for this project "
            f"(pid {second.pid}, {info_url(info)}; {project / '.aircher' / 'server.json'}); use it, or stop it first\n",
        )
        with pytest.raises(StoreLockedError) as raised:
            am.Memory.open(project).episodic
        assert "yield_wait_seconds" not in str(raised.value)
        assert second.poll() is None
    finally:
        stop_serve(second)


def test_a_hook_never_asks_the_server_for_the_store(project: Path) -> None:
    proc, _ = serve(project, "--yields")
    try:
        memory = open_store(project, None)
        with pytest.raises(StoreLockedError):
            memory.episodic
        memory.close()
        assert files(project) == ["memory.duckdb.yields", "server.json"]
        assert proc.poll() is None
    finally:
        stop_serve(proc)


@contextlib.contextmanager
def holder(db: Path, *, offers: bool) -> Iterator[int]:
    """Another process holds the store's lock (and, with ``offers``, offers the
    store, but never gives it up) until the block ends; its pid."""
    offer = "store.offer(sys.argv[1]); " if offers else ""
    code = f"import sys; from aircher_mem import store; store.hold(sys.argv[1]); {offer}print('ready', flush=True); "
    proc = subprocess.Popen(
        [sys.executable, "-c", code + "sys.stdin.read()", str(db)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        yield proc.pid
    finally:
        proc.communicate(timeout=30)


def test_an_offer_by_a_pid_that_does_not_hold_the_lock_is_not_asked(project: Path) -> None:
    db = project / ".aircher" / "memory.duckdb"
    (project / ".aircher" / "memory.duckdb.yields").write_text(str(os.getpid()))
    with holder(db, offers=False):
        assert store.offered_by(db) is None  # the lock is the holder's, the offer names this process
        start = time.monotonic()
        with pytest.raises(StoreLockedError):
            am.Memory.open(project).episodic
        assert time.monotonic() - start < 5  # refused at once, not after yield_wait_seconds
        assert not (project / ".aircher" / "memory.duckdb.wanted").exists()


def test_a_holder_that_offers_but_never_gives_way_is_waited_for_yield_wait_seconds(project: Path) -> None:
    db = project / ".aircher" / "memory.duckdb"
    with holder(db, offers=True) as pid:
        assert store.offered_by(db) == pid
        policy = am.Policy.from_dict({"server": {"yield_wait_seconds": 0.5}})
        start = time.monotonic()
        with pytest.raises(StoreLockedError, match=r"did not within 0\.5 s \(\[server\] yield_wait_seconds\)"):
            am.Memory.open(project, policy=policy).episodic
        assert time.monotonic() - start >= 0.5
        assert (project / ".aircher" / "memory.duckdb.wanted").exists()  # it was asked
        no_wait = am.Policy.from_dict({"server": {"yield_wait_seconds": 0}})
        with pytest.raises(StoreLockedError) as raised:
            am.Memory.open(project, policy=no_wait).episodic
        assert "yield_wait_seconds" not in str(raised.value)


def test_a_yielding_server_asked_while_it_indexes_exits_before_serving(project: Path) -> None:
    (project / "app.py").write_text("def f():\n    return 1\n")
    with am.Memory.open(project) as memory:
        memory.index()
    db = project / ".aircher" / "memory.duckdb"
    proc = subprocess.Popen(
        [SCRIPT, "serve", "--root", str(project), "--port", "0", "--yields"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    STARTED.append(proc)
    end = time.monotonic() + 120
    while store.offered_by(db) != proc.pid:
        assert proc.poll() is None and time.monotonic() < end
        time.sleep(0.01)
    with am.Memory.open(project) as memory:
        assert [t.text for t in memory.longterm.turns("s")] == ["The build uses make."]
    assert proc.wait(timeout=30) == 0
    assert files(project) == ["files.json"]


@pytest.mark.parametrize("kind", ["link", "fifo", "folder", "garbage", "huge"])
def test_an_offer_that_is_not_a_small_regular_file_is_never_acted_on(project: Path, kind: str) -> None:
    db = project / ".aircher" / "memory.duckdb"
    offer = project / ".aircher" / "memory.duckdb.yields"
    with holder(db, offers=False) as pid:
        if kind == "link":  # a link to a file naming the holder: not followed
            (project / "pid").write_text(str(pid))
            offer.symlink_to(project / "pid")
        elif kind == "fifo":  # never read from, never waited on
            os.mkfifo(offer)
        elif kind == "folder":
            offer.mkdir()
        elif kind == "garbage":
            offer.write_bytes(b"\xff\x00" + str(pid).encode())
        else:  # the holder's pid after 64 bytes of spaces: only the start is read
            offer.write_text(" " * 64 + str(pid))
        assert store.offered_by(db) is None
        start = time.monotonic()
        with pytest.raises(StoreLockedError):
            am.Memory.open(project).episodic
        assert time.monotonic() - start < 5
        assert not (project / ".aircher" / "memory.duckdb.wanted").exists()
