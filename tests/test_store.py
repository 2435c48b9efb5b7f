"""The store file: what is refused before DuckDB touches it (and left byte for byte
as it was), the typed one-line errors, and the file modes of a new store."""

from __future__ import annotations

import hashlib
import logging
import os
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import aircher_mem as am
import duckdb
import pytest
from aircher_mem import store
from aircher_mem.engine import EpisodicMemory, LongTermMemory
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def real_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real, closed store with a few thousand rows (several blocks); tests copy
    its bytes (a path: hypothesis would print the bytes of a failing example)."""
    path = tmp_path_factory.mktemp("real") / "memory.duckdb"
    with EpisodicMemory(path, session_id="s") as m:
        for i in range(3000):
            m.record_file_interaction(f"src/file{i}.py", "read", context="x" * 100)
        m.start_task("t1", "a task")
    assert not Path(str(path) + ".wal").exists()
    return path


def open_and_read(path: Path) -> None:
    with EpisodicMemory(path) as m:
        m.counts()
        m.file_history("src/file7.py")


def assert_refused(path: Path, error: type[am.StoreError], match: str) -> str:
    before = digest(path) if path.is_file() else None
    with pytest.raises(error) as info:
        EpisodicMemory(path)
    message = str(info.value)
    assert type(info.value) is error
    assert "\n" not in message and str(path) in message and match in message
    if before is not None:
        assert digest(path) == before
    assert not Path(str(path) + ".wal").exists()
    return message


# Cut in the headers (refused before DuckDB opens it), in the first blocks (DuckDB
# fails while opening or migrating), and in the table data (it fails on a query).
@pytest.mark.parametrize("keep", [1, 100, 4096, 8192, 12287, 12288, 12289, 16384, 143360, 208896, 300000, 471040])
def test_a_truncated_store_is_corrupt_and_untouched(tmp_path: Path, real_store: Path, keep: int) -> None:
    path = tmp_path / "memory.duckdb"
    path.write_bytes(real_store.read_bytes()[:keep])
    before = digest(path)
    with pytest.raises(am.StoreCorruptError) as info:
        open_and_read(path)
    assert type(info.value) is am.StoreCorruptError
    assert "\n" not in str(info.value) and str(path) in str(info.value)
    assert digest(path) == before


def test_truncation_messages(tmp_path: Path, real_store: Path) -> None:
    path = tmp_path / "memory.duckdb"
    path.write_bytes(real_store.read_bytes()[:5000])
    assert assert_refused(path, am.StoreCorruptError, "truncated") == (
        f"{path} is truncated (5000 bytes, shorter than DuckDB's 12288-byte header)"
    )


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(keep=st.integers(min_value=0, max_value=2_200_000))
def test_any_truncation_is_refused_or_read_untouched(tmp_path: Path, real_store: Path, keep: int) -> None:
    """Cut anywhere: StoreCorruptError on opening or reading, or (cut among the free
    blocks at the end, which DuckDB itself trims) read; the bytes never change."""
    path = tmp_path / "cut.duckdb"
    path.write_bytes(real_store.read_bytes()[:keep])
    before = digest(path)
    try:
        open_and_read(path)
    except am.StoreCorruptError as exc:
        assert "\n" not in str(exc) and str(path) in str(exc)
    assert digest(path) == before


def test_a_sqlite_database_is_corrupt_and_untouched(tmp_path: Path) -> None:
    path = tmp_path / "memory.duckdb"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE t (x)")
    con.execute("INSERT INTO t VALUES (1)")
    con.commit()
    con.close()
    assert assert_refused(path, am.StoreCorruptError, "SQLite") == f"{path} is a SQLite database, not a DuckDB one"


def test_random_bytes_are_corrupt_and_untouched(tmp_path: Path) -> None:
    path = tmp_path / "memory.duckdb"
    path.write_bytes(os.urandom(100_000))
    assert assert_refused(path, am.StoreCorruptError, "") == f"{path} is not a DuckDB database (no DuckDB header)"


def test_an_empty_file_is_corrupt_and_untouched(tmp_path: Path) -> None:
    path = tmp_path / "memory.duckdb"
    path.touch()
    assert assert_refused(path, am.StoreCorruptError, "") == f"{path} is an empty file, not a DuckDB database"
    assert path.read_bytes() == b""


def test_a_directory_at_the_path_is_corrupt(tmp_path: Path) -> None:
    path = tmp_path / "memory.duckdb"
    path.mkdir()
    (path / "inside").write_text("kept")
    assert assert_refused(path, am.StoreCorruptError, "") == f"{path} is a directory, not a DuckDB database file"
    assert (path / "inside").read_text() == "kept"


def test_a_damaged_block_read_while_migrating_is_corrupt(tmp_path: Path) -> None:
    """DuckDB opens a file whose header is intact and fails on the first read: that
    error, too, is a one-line StoreCorruptError."""
    error = store.corrupt_or_error(
        "x.duckdb", duckdb.IOException('IO Error: Could not read enough bytes from file\n"x"'), "migrating it"
    )
    assert type(error) is am.StoreCorruptError
    assert str(error) == (
        'x.duckdb is damaged or truncated (while migrating it): IO Error: Could not read enough bytes from file "x"'
    )
    other = store.corrupt_or_error("x.duckdb", duckdb.CatalogException("Catalog Error: no table"), "reading it")
    assert type(other) is am.StoreError and str(other) == "x.duckdb: reading it failed: Catalog Error: no table"


@pytest.mark.parametrize("path", ["a\x00b.duckdb", "\ud800.duckdb"])
def test_an_impossible_path_is_invalid_input(tmp_path: Path, path: str) -> None:
    with pytest.raises(am.InvalidInputError, match="store path"):
        EpisodicMemory(str(tmp_path) + "/" + path)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_new_store_is_private(tmp_path: Path) -> None:
    old = os.umask(0o022)  # a usual umask: DuckDB alone would create 0644 files
    try:
        folder = tmp_path / "project" / ".aircher"
        path = folder / "memory.duckdb"
        m = EpisodicMemory(path)
        assert mode(folder) == 0o700 and mode(path) == 0o600
        m._con.execute("CHECKPOINT")
        m.start_task("t1", "a task")  # written at once, not buffered
        wal = Path(str(path) + ".wal")
        assert wal.exists() and mode(wal) == 0o600
        m._con.execute("CHECKPOINT")
        m.complete_task("t1")
        assert wal.exists() and mode(wal) == 0o600
        m._con.execute("CHECKPOINT")
        m.record_file_interaction("a.py", "edit")
        m.flush()
        assert wal.exists() and mode(wal) == 0o600
        m._con.execute("CHECKPOINT")  # DuckDB drops the WAL and creates a new one on the next write
        m.record_file_interaction("b.py", "edit")
        m.flush()
        assert mode(wal) == 0o600
        m.close()
        assert mode(path) == 0o600
    finally:
        os.umask(old)


def test_an_existing_store_file_is_made_private_its_folder_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "memory.duckdb"
    EpisodicMemory(path).close()
    path.chmod(0o640)
    folder = stat.S_IMODE(tmp_path.stat().st_mode)
    EpisodicMemory(path).close()
    assert mode(path) == 0o600 and mode(tmp_path) == folder
    assert mode(tmp_path / "memory.duckdb.lock") == 0o600


def test_a_projects_existing_store_folder_is_made_private(tmp_path: Path) -> None:
    store = tmp_path / ".aircher"
    store.mkdir(mode=0o755)
    store.chmod(0o755)
    with am.Memory.open(tmp_path) as memory:
        assert mode(store) == 0o700
        memory.add_turn("s", "user", "hello there")
        assert {mode(p) for p in store.iterdir() if p.is_file()} == {0o600}


def test_the_write_ahead_log_is_private_before_the_first_write(tmp_path: Path) -> None:
    """The migration of a new store writes the first WAL: it is 0600 at once."""
    path = tmp_path / "memory.duckdb"
    with LongTermMemory(path):
        wal = tmp_path / "memory.duckdb.wal"
        assert not wal.exists() or mode(wal) == 0o600


def test_the_progress_bar_is_off(tmp_path: Path) -> None:
    """DuckDB draws a progress bar on stdout for a query over 2 s (a 100K-row load
    on a busy machine did): on the MCP server's stdout that breaks the protocol.
    Its default depends on the process (off under pytest, on in a plain one), so a
    plain process reads the flag."""
    import subprocess
    import sys

    script = (
        "import sys\n"
        "from aircher_mem import store\n"
        "for path in (':memory:', sys.argv[1]):\n"
        "    con = store.connect(path)\n"
        "    print(con.execute(\"SELECT current_setting('enable_progress_bar')\").fetchone()[0])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "m.duckdb")], capture_output=True, text=True, check=True
    )
    assert done.stdout == "False\nFalse\n"


@pytest.mark.parametrize(("holder", "name"), [(EpisodicMemory, "episodic store"), (LongTermMemory, "long-term memory")])
def test_a_failed_close_at_exit_is_logged_not_raised(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, holder: type, name: str
) -> None:
    path = tmp_path / "memory.duckdb"
    m = holder(path)
    close = m.close

    def failing() -> None:
        raise OSError("the disk is gone")

    monkeypatch.setattr(m, "close", failing)
    with caplog.at_level(logging.ERROR):
        m._close_at_exit()
    assert [(r.levelno, r.getMessage()) for r in caplog.records] == [
        (logging.ERROR, f"closing the {name} in {path} at exit failed: the disk is gone")
    ]
    close()


def test_compact_suspends_and_resumes_every_holder_of_the_file(tmp_path: Path) -> None:
    path = tmp_path / "memory.duckdb"
    with EpisodicMemory(path, session_id="s") as episodic, LongTermMemory(path) as longterm:
        episodic.record_file_interaction("a.py", "read")
        kept = longterm.remember("The build uses make.").memory_id
        store.compact(path)
        episodic.record_file_interaction("b.py", "edit")
        assert [i.file_path for i in episodic.last_interactions(".py")] == ["b.py", "a.py"]
        longterm.remember("Tests run with pytest.")
        assert sorted(m.id for m in longterm.memories().memories) == [kept, kept + 1]
    with EpisodicMemory(path) as again, LongTermMemory(path) as longterm_again:
        assert again.counts()["file_interactions"] == 2
        assert len(longterm_again.memories().memories) == 2


def test_the_threads_of_the_stores_opened_after_set_threads(tmp_path: Path) -> None:
    def threads(path: Path) -> int:
        con = store.connect(path)
        try:
            return int(con.execute("SELECT current_setting('threads')").fetchone()[0])  # type: ignore[index]
        finally:
            store.disconnect(con, path)

    try:
        store.set_threads(0)  # (a hook run in this process before set it)
        default = threads(tmp_path / "default.duckdb")
        assert default == (os.cpu_count() or 1)
        store.set_threads(1)
        assert threads(tmp_path / "one.duckdb") == 1
        store.set_threads(0)
        assert threads(tmp_path / "again.duckdb") == default
    finally:
        store.set_threads(0)
    for wrong in (-1, 1.5, True, "2"):
        with pytest.raises(am.InvalidInputError, match="threads must be an integer >= 0"):
            store.set_threads(wrong)  # type: ignore[arg-type]


def test_a_store_opened_ahead_is_the_connection_connect_gives(tmp_path: Path) -> None:
    from conftest import duckdb_held_by_another_process

    path = tmp_path / "ahead.duckdb"
    with EpisodicMemory(path) as episodic:
        episodic.record_tool_execution("Bash", {"command": "ls"})
    store.open_ahead(tmp_path / "missing.duckdb")  # no file: nothing opened, nothing created
    assert not (tmp_path / "missing.duckdb").exists()
    try:
        store.set_threads(1)
        store.open_ahead(path)
        store.open_ahead(path)  # once
        assert len(store._AHEAD) == 1
        con = store.connect(path)
        assert not store._AHEAD  # taken
        try:
            assert con.execute("SELECT count(*) FROM tool_executions").fetchone() == (1,)
            assert con.execute("SELECT current_setting('threads')").fetchone() == (1,)  # asked for after it opened
            other = "import sys, aircher_mem as am; from aircher_mem import store\ntry:\n    store.connect(sys.argv[1])\nexcept am.StoreLockedError:\n    print('locked')"
            done = subprocess.run([sys.executable, "-c", other, str(path)], capture_output=True, text=True, timeout=60)
            assert done.stdout == "locked\n", done.stderr  # the lock is held, as by any connect
        finally:
            store.disconnect(con, path)
    finally:
        store.set_threads(0)
    # released: another process takes it
    with duckdb_held_by_another_process(path):
        # opening ahead fails while another process holds it; connect then says so itself
        store.open_ahead(path)
        with pytest.raises(am.StoreLockedError, match="open in another process"):
            store.connect(path)
        assert not store._AHEAD
    # and once the holder is gone, connect opens it as usual
    con = store.connect(path)
    store.disconnect(con, path)
