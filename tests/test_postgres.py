"""The PostgreSQL store: migrations in its dialect (next to the embedded file's), and
copying a store to a server and back, verified row for row. Needs a server
(tests/pg_cluster.py starts a private one, or skips saying why)."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aircher_mem as am
import duckdb
import pytest
from aircher_mem import postgres, store, transfer
from aircher_mem.errors import InvalidInputError, SchemaVersionError, StoreError, StoreLockedError
from conftest import duckdb_held_by_another_process
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pg_cluster import database, has_pgvector

psycopg = pytest.importorskip("psycopg", reason="psycopg 3 is not installed (pip install 'aircher-mem[team]')")


def rows_of(path: Path | str) -> dict[str, list[tuple[Any, ...]]]:
    """Every copied table's rows, sorted, as a fresh DuckDB connection reads them
    (NaN as a string: NaN != NaN)."""
    con = duckdb.connect(str(path), read_only=True)
    try:
        tables = [
            t
            for (t,) in con.execute("SELECT table_name FROM duckdb_tables() WHERE NOT internal ORDER BY 1").fetchall()
            if t not in transfer.NOT_COPIED
        ]
        found = {}
        for table in tables:
            rows = con.execute(f"SELECT * FROM {table}").fetchall()
            found[table] = sorted(
                (tuple("NaN" if isinstance(v, float) and math.isnan(v) else v for v in row) for row in rows), key=repr
            )
        return found
    finally:
        con.close()


def a_store(root: Path) -> Path:
    """A project whose store has rows in the long-term and episodic tables."""
    root.mkdir(parents=True, exist_ok=True)
    with am.Memory.open(root, create=True) as m:
        m.add_turn("s1", "user", "We use Postgres for the database. We went with tabs because the team voted.")
        m.add_turn("s1", "assistant", "Noted: tabs, and 'quotes', back\\slashes, tabs\there, ümlauts, 中文, 🙂.")
        m.add_turn("s1", "user", "Actually, the database is MySQL, not Postgres.")
        m.remember("The deploy script lives in tools/deploy.sh", kind="fact")
        m.record_decision("use sessions over JWT", reasons=["tokens grew too large"])
        m.record_tool_call("bash", {"cmd": "pytest -q"}, result="3 passed", success=True, duration_ms=1200)
        m.record_tool_call("edit", {"path": "a.py"}, success=False, error_message="no such file")
        m.record_file_interaction("a.py", "edit", line_range=(3, 9), changes_summary="renamed x")
        m.task("start", "t1", description="fix the login bug")
    return root / ".aircher" / "memory.duckdb"


def test_translate_turns_duckdb_types_into_postgres_types() -> None:
    assert postgres.translate("a DOUBLE NOT NULL, b FLOAT[] , c UBIGINT, d FLOAT, e JSON, f DOUBLE_X") == (
        "a DOUBLE PRECISION NOT NULL, b REAL[] , c NUMERIC(20), d REAL, e JSON, f DOUBLE_X"
    )


def test_shown_masks_the_password_wherever_it_is() -> None:
    assert postgres.shown("postgresql://ann:s3cret@db.example:5432/team") == "postgresql://ann:***@db.example:5432/team"
    assert postgres.shown("postgres://ann@/team?host=/run/pg&password=s3cret") == (
        "postgres://ann@/team?host=/run/pg&password=***"
    )
    assert postgres.shown("postgresql://db/team") == "postgresql://db/team"


# -- migrations, on both backends --------------------------------------------------------------


_PG_TYPES = {
    "BIGINT": {"bigint"},
    "INTEGER": {"integer"},
    "VARCHAR": {"character varying", "text"},
    "DOUBLE": {"double precision"},
    "FLOAT": {"real"},
    "FLOAT[]": {"ARRAY:_float4"},
    "JSON": {"json"},
    "BOOLEAN": {"boolean"},
    "TIMESTAMP": {"timestamp without time zone"},
    "UBIGINT": {"numeric"},
}


def _file_columns(con: duckdb.DuckDBPyConnection) -> dict[str, list[tuple[str, str]]]:
    found: dict[str, list[tuple[str, str]]] = {}
    for table, column, kind in con.execute(
        "SELECT table_name, column_name, data_type FROM duckdb_columns() WHERE NOT internal "
        "AND table_name IN (SELECT table_name FROM duckdb_tables() WHERE NOT internal) "
        "ORDER BY table_name, column_index"
    ).fetchall():
        found.setdefault(table, []).append((column, kind))
    return found


def _server_columns(con: Any) -> dict[str, list[tuple[str, str]]]:
    found: dict[str, list[tuple[str, str]]] = {}
    for table, column, kind, udt in con.execute(
        "SELECT table_name, column_name, data_type, udt_name FROM information_schema.columns "
        "WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position"
    ).fetchall():
        found.setdefault(table, []).append((column, f"{kind}:{udt}" if kind in ("ARRAY", "USER-DEFINED") else kind))
    return found


def test_the_migrations_make_the_same_tables_and_columns_on_both(tmp_path: Path, pg_url: str) -> None:
    con = store.connect(tmp_path / "s.duckdb")
    for component in store.registered():
        store.migrate(con, component)
    expected = _file_columns(con)
    store.disconnect(con, tmp_path / "s.duckdb")
    with postgres.connect(pg_url) as pg:
        for component in store.registered():
            assert postgres.migrate(pg, component) == store.latest_version(component)
        found = _server_columns(pg)
        # the index a server's catch-up reads actions through; a file scans them
        indexes = {r[0] for r in pg.execute("SELECT indexname FROM pg_indexes WHERE indexname NOT LIKE '%pkey'")}
    assert sorted(found) == sorted(expected)
    # the vectors are pgvector's type where the server has it (the test's role may create it)
    vectors = "USER-DEFINED:vector" if has_pgvector(pg_url) else "ARRAY:_float4"
    for table, columns in expected.items():
        assert [name for name, _ in found[table]] == [name for name, _ in columns], table
        for (name, kind), (_, pg_kind) in zip(columns, found[table]):
            assert pg_kind == vectors if (table, name) == ("memory_vectors", "vector") else pg_kind in _PG_TYPES[kind]
    assert "memory_actions_memory" in indexes
    with duckdb.connect(str(tmp_path / "s.duckdb")) as con:
        assert con.execute("SELECT index_name FROM duckdb_indexes()").fetchall() == []


def _migrate(backend: str, where: Any, component: str) -> int:
    if backend == "duckdb":
        return store.migrate(where, component)
    return int(postgres.migrate(where, component))


def _execute(backend: str, where: Any, sql: str) -> list[tuple[Any, ...]]:
    if backend == "duckdb":
        return list(where.execute(sql).fetchall())
    cursor = where.execute(sql)
    return list(cursor.fetchall()) if cursor.description else []


@pytest.fixture(params=["duckdb", "postgres"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, Any]]:
    """A connection to an empty store of each kind."""
    if request.param == "duckdb":
        path = tmp_path / "s.duckdb"
        con = store.connect(path)
        yield "duckdb", con
        store.disconnect(con, path)
        return
    admin = request.getfixturevalue("pg_server")
    with database(admin) as url, postgres.connect(url) as con:
        yield "postgres", con


def test_an_older_schema_is_migrated_step_by_step_to_the_latest(backend: tuple[str, Any]) -> None:
    kind, con = backend
    steps = store.steps("longterm")
    for number in (1, 2, 3):
        for statement in steps[number]:
            _execute(kind, con, statement if kind == "duckdb" else postgres.translate(statement))
    _execute(kind, con, "CREATE TABLE schema_versions (component VARCHAR PRIMARY KEY, version INTEGER NOT NULL)")
    _execute(kind, con, "INSERT INTO schema_versions VALUES ('longterm', 3)")
    _execute(
        kind,
        con,
        "INSERT INTO memories (id, kind, content, summary, compressed, index_text, level, "
        "created_at, valid_from, layer, hits, importance, status, last_seen, score, retrieved, cited, ignored, "
        "scope, tier, priority, is_anchor, tags, source, confidence, rules) VALUES (7, 'fact', 'c', '', '', '', "
        "'L2', 1, 1, 'mid', 0, 5, 'active', 1, 0, 0, 0, 0, 'project-shared', 'warm', 0, false, '[]', 'x', 1, '[]')",
    )
    latest = store.latest_version("longterm")
    assert _migrate(kind, con, "longterm") == latest
    assert _execute(kind, con, "SELECT version FROM schema_versions WHERE component = 'longterm'") == [(latest,)]
    # step 5 recorded the memories stored before it as not yet scanned for contradictions
    assert _execute(kind, con, "SELECT name, value FROM longterm_state") == [("unscanned_through", 7)]
    assert _execute(kind, con, "SELECT count(*) FROM rejected_facts") == [(0,)]
    assert _migrate(kind, con, "longterm") == latest  # again: nothing to do


def test_a_newer_schema_is_refused_and_left_as_it_is(backend: tuple[str, Any]) -> None:
    kind, con = backend
    _migrate(kind, con, "longterm")
    newer = store.latest_version("longterm") + 1
    _execute(kind, con, f"UPDATE schema_versions SET version = {newer} WHERE component = 'longterm'")
    with pytest.raises(SchemaVersionError, match="newer than this aircher-mem"):
        _migrate(kind, con, "longterm")
    assert _execute(kind, con, "SELECT version FROM schema_versions WHERE component = 'longterm'") == [(newer,)]


def test_processes_starting_together_migrate_once(pg_url: str) -> None:
    errors: list[BaseException] = []

    def start() -> None:
        try:
            with postgres.connect(pg_url) as con:
                for component in store.registered():
                    postgres.migrate(con, component)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=start) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    with postgres.connect(pg_url) as con:
        versions = con.execute("SELECT component, version FROM schema_versions ORDER BY 1").fetchall()
    assert versions == [(c, store.latest_version(c)) for c in sorted(store.registered())]


# -- copying -----------------------------------------------------------------------------------


def test_a_store_copied_to_a_server_and_back_has_every_row(tmp_path: Path, pg_url: str) -> None:
    source = a_store(tmp_path / "p")
    into = transfer.copy_store(tmp_path / "p", pg_url)
    back = transfer.copy_store(pg_url, tmp_path / "back.duckdb")
    original = rows_of(source)
    assert rows_of(tmp_path / "back.duckdb") == original
    assert [(t.table, t.rows) for t in into.tables] == [(t, len(r)) for t, r in sorted(original.items())]
    assert [(t.table, t.rows, t.digest) for t in back.tables] == [(t.table, t.rows, t.digest) for t in into.tables]
    assert into.rows == back.rows == sum(len(r) for r in original.values())
    assert into.source == str(source) and into.target == pg_url
    assert {t.table for t in into.tables if t.rows} >= {"turns", "memories", "tool_executions", "file_interactions"}
    with postgres.connect(pg_url) as con:
        assert con.execute("SELECT count(*) FROM turns").fetchone() == (3,)
        assert con.execute("SELECT min(id), max(id) FROM tool_executions").fetchone() == (1, 2)


def test_the_copy_back_serves_and_its_ids_go_on(tmp_path: Path, pg_url: str) -> None:
    a_store(tmp_path / "p")
    transfer.copy_store(tmp_path / "p", pg_url)
    (tmp_path / "q").mkdir()
    transfer.copy_store(pg_url, tmp_path / "q")
    with am.Memory.open(tmp_path / "q", create=False) as m:
        assert "MySQL" in m.recall("which database do we use?").hits[0].content
        assert m.query_chain("why did we use sessions?").decision_id is not None
        m.record_tool_call("grep", {"pattern": "x"}, success=True)
        m.record_file_interaction("b.py", "read")
    con = duckdb.connect(str(tmp_path / "q" / ".aircher" / "memory.duckdb"), read_only=True)
    assert con.execute("SELECT id, tool_name FROM tool_executions ORDER BY id").fetchall() == [
        (1, "bash"),
        (2, "edit"),
        (3, "grep"),
    ]
    assert con.execute("SELECT id FROM file_interactions ORDER BY id").fetchall() == [(1,), (2,)]
    con.close()


_TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=40)
_DOUBLE = st.floats(allow_nan=True, allow_infinity=True)
_REAL = st.floats(width=32, allow_nan=False, allow_infinity=True)
_BIGINT = st.integers(-(2**63), 2**63 - 1)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    actions=st.lists(st.tuples(_BIGINT, _DOUBLE, _TEXT, _TEXT), max_size=12),
    vectors=st.dictionaries(_TEXT, st.lists(_REAL, max_size=6), max_size=6),
    data=st.lists(st.dictionaries(_TEXT, st.one_of(_TEXT, st.integers(), st.booleans()), max_size=3), max_size=4),
)
def test_any_values_come_back_exactly(
    tmp_path_factory: pytest.TempPathFactory,
    pg_server: str,
    actions: list[tuple[int, float, str, str]],
    vectors: dict[str, list[float]],
    data: list[dict[str, Any]],
) -> None:
    import json

    folder = tmp_path_factory.mktemp("values")
    path = folder / "s.duckdb"
    con = store.connect(path)
    for component in store.registered():
        store.migrate(con, component)
    if actions:
        con.executemany("INSERT INTO memory_actions VALUES (?, ?, ?, ?)", actions)
    if vectors:
        con.executemany("INSERT INTO memory_vectors VALUES (?, ?::FLOAT[])", list(vectors.items()))
    for at, item in enumerate(data):
        con.execute(
            "INSERT INTO session_learnings (session_id, learning_type, data, confidence, created_at) "
            "VALUES (?, 'kind', ?, 0.5, TIMESTAMP '2024-05-01 10:00:00.123456')",
            [f"s{at}", json.dumps(item, ensure_ascii=False)],
        )
    store.disconnect(con, path)
    # a role that may not create pgvector: the vectors stay arrays, which hold any float
    with database(pg_server, plain=True) as url:
        transfer.copy_store(path, url)
        with postgres.connect(url) as pg:
            assert _server_columns(pg)["memory_vectors"][1] == ("vector", "ARRAY:_float4")
        transfer.copy_store(url, folder / "back.duckdb")
    assert rows_of(folder / "back.duckdb") == rows_of(path)


@pytest.fixture
def pgvector_url(pg_url: str) -> str:
    if not has_pgvector(pg_url):
        pytest.skip("the server has no pgvector (.ci/run builds it from Debian's source package)")
    return pg_url


def test_pgvector_holds_the_vectors_and_a_copy_keeps_each_float(tmp_path: Path, pgvector_url: str) -> None:
    """On pgvector's type, a copy there and back keeps every 32-bit float exactly
    (signed zero, the smallest and largest, ones a decimal cannot say in few digits)."""
    vectors = {
        "memory:1": [0.1, -0.0, 1e-45, 3.4028234663852886e38, -2.5],
        "turn:2": [1 / 3, 2 / 3, 1.0, 0.0, 7.0],
        "memory:3": [0.5],
    }
    path = tmp_path / "s.duckdb"
    con = store.connect(path)
    for component in store.registered():
        store.migrate(con, component)
    con.executemany("INSERT INTO memory_vectors VALUES (?, ?::FLOAT[])", list(vectors.items()))
    store.disconnect(con, path)
    transfer.copy_store(path, pgvector_url)
    with postgres.connect(pgvector_url) as pg:
        assert _server_columns(pg)["memory_vectors"][1] == ("vector", "USER-DEFINED:vector")
        assert pg.execute("SELECT item_key, vector_dims(vector) FROM memory_vectors ORDER BY item_key").fetchall() == [
            ("memory:1", 5),
            ("memory:3", 1),
            ("turn:2", 5),
        ]
    transfer.copy_store(pgvector_url, tmp_path / "back.duckdb")
    assert rows_of(tmp_path / "back.duckdb") == rows_of(path)


@pytest.mark.parametrize(("vector", "said"), [([1.0, math.inf], "infinite value"), ([], "at least 1 dimension")])
def test_a_vector_pgvector_cannot_hold_fails_the_copy_and_writes_nothing(
    tmp_path: Path, pgvector_url: str, vector: list[float], said: str
) -> None:
    path = tmp_path / "s.duckdb"
    con = store.connect(path)
    for component in store.registered():
        store.migrate(con, component)
    con.execute("INSERT INTO memory_vectors VALUES ('memory:1', ?::FLOAT[])", [vector])
    store.disconnect(con, path)
    with pytest.raises(StoreError, match=f"copying into .* failed: .*{said}"):
        transfer.copy_store(path, pgvector_url)
    with postgres.connect(pgvector_url) as pg:
        assert not postgres.has_table(pg, "schema_versions")


def test_a_server_store_that_holds_such_a_vector_keeps_arrays(pgvector_url: str) -> None:
    """A store migrated before pgvector's step, with a vector pgvector cannot hold:
    the step leaves the column an array, and the store opens and reads it."""
    with postgres.connect(pgvector_url) as pg:
        for component in store.registered():
            postgres.migrate(pg, component)
        pg.execute("ALTER TABLE memory_vectors ALTER COLUMN vector TYPE REAL[] USING vector::REAL[]")
        pg.execute("UPDATE schema_versions SET version = 10 WHERE component = 'longterm'")
        pg.execute("INSERT INTO memory_vectors VALUES ('memory:1', ARRAY['Infinity', 1]::REAL[])")
        pg.commit()
        assert postgres.migrate(pg, "longterm") == store.latest_version("longterm")
        assert _server_columns(pg)["memory_vectors"][1] == ("vector", "ARRAY:_float4")
        assert pg.execute("SELECT vector FROM memory_vectors").fetchall() == [([math.inf, 1.0],)]


def test_a_copy_goes_only_into_an_empty_target(tmp_path: Path, pg_url: str) -> None:
    a_store(tmp_path / "p")
    transfer.copy_store(tmp_path / "p", pg_url)
    with pytest.raises(StoreError, match="already holds an aircher-mem store"):
        transfer.copy_store(tmp_path / "p", pg_url)
    (tmp_path / "taken.duckdb").write_bytes(b"")
    with pytest.raises(StoreError, match="exists: a copy goes into a new store file"):
        transfer.copy_store(pg_url, tmp_path / "taken.duckdb")
    assert (tmp_path / "taken.duckdb").read_bytes() == b""
    with pytest.raises(StoreError, match="exists"):
        transfer.copy_store(pg_url, tmp_path / "p")  # a project that has a store


def test_a_copy_names_one_file_and_one_server(tmp_path: Path, pg_url: str) -> None:
    with pytest.raises(InvalidInputError, match="give one of each"):
        transfer.copy_store(tmp_path / "a.duckdb", tmp_path / "b.duckdb")
    with pytest.raises(InvalidInputError, match="give one of each"):
        transfer.copy_store(pg_url, pg_url)
    with pytest.raises(InvalidInputError, match="libpq"):
        postgres.connect("postgresql://ann@/team?nosuchoption=1")
    with pytest.raises(InvalidInputError, match="postgresql:// URL"):
        postgres.connect("mysql://db/team")
    with pytest.raises(StoreError, match="no such store file"):
        transfer.copy_store(tmp_path / "missing.duckdb", pg_url)
    assert not (tmp_path / "missing.duckdb").exists()


def test_a_command_on_an_unreachable_server_says_so_once(tmp_path: Path) -> None:
    """The pool's workers log their failed attempts; a CLI process that configured no
    logging prints the command's one error, not those records too."""
    (tmp_path / ".aircher").mkdir()
    url = f"postgresql://ann@/team?host={tmp_path}&port=1"  # no server on that socket
    (tmp_path / ".aircher" / "config.toml").write_text(f'[store]\nurl = "{url}"\n', encoding="utf-8")
    script = Path(sys.executable).with_name("aircher-mem")
    done = subprocess.run([str(script), "recall", "hello"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode != 0 and done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("aircher-mem recall: cannot connect to the PostgreSQL store"), lines


def test_an_unreachable_server_is_a_store_error_without_its_password(tmp_path: Path) -> None:
    a_store(tmp_path / "p")
    url = f"postgresql://ann:s3cret@/team?host={tmp_path}&port=1"  # no server on that socket
    with pytest.raises(StoreError) as caught:
        transfer.copy_store(tmp_path / "p", url)
    assert "cannot connect to the PostgreSQL store postgresql://ann:***@/team" in str(caught.value)
    assert "s3cret" not in str(caught.value)


def test_a_source_another_process_holds_is_refused(tmp_path: Path, pg_url: str) -> None:
    source = a_store(tmp_path / "p")
    with duckdb_held_by_another_process(source), pytest.raises(StoreLockedError):
        transfer.copy_store(tmp_path / "p", pg_url)
    with postgres.connect(pg_url) as con:
        assert con.execute("SELECT to_regclass('schema_versions')").fetchone() == (None,)


def test_a_failed_copy_into_a_server_writes_nothing(tmp_path: Path, pg_url: str) -> None:
    source = a_store(tmp_path / "p")
    con = store.connect(source)
    con.execute("INSERT INTO memory_actions VALUES (1, 1.0, 'note', 'a NUL \x00 here')")  # PostgreSQL refuses NUL
    store.disconnect(con, source)
    with pytest.raises(StoreError, match=r"copying into .* failed"):
        transfer.copy_store(tmp_path / "p", pg_url)
    with postgres.connect(pg_url) as pg:
        assert pg.execute("SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()").fetchone() == (0,)


def test_a_copy_that_reads_back_different_is_removed(
    tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    a_store(tmp_path / "p")
    transfer.copy_store(tmp_path / "p", pg_url)
    digest = transfer._digest
    monkeypatch.setattr(
        transfer,
        "_digest",
        lambda side, table, columns: (
            (0, "") if table == "turns" and side.where.endswith(".duckdb") else digest(side, table, columns)
        ),
    )
    with pytest.raises(StoreError, match=r"the copy of turns differs .*0 rows against 3"):
        transfer.copy_store(pg_url, tmp_path / "back.duckdb")
    assert not (tmp_path / "back.duckdb").exists() and not (tmp_path / "back.duckdb.wal").exists()


def test_a_server_newer_than_this_aircher_mem_is_not_copied(tmp_path: Path, pg_url: str) -> None:
    a_store(tmp_path / "p")
    transfer.copy_store(tmp_path / "p", pg_url)
    with postgres.connect(pg_url) as con:
        con.execute("UPDATE schema_versions SET version = version + 1 WHERE component = 'episodic'")
    with pytest.raises(SchemaVersionError):
        transfer.copy_store(pg_url, tmp_path / "back.duckdb")
    assert not (tmp_path / "back.duckdb").exists()


def test_the_command_line_copies_and_says_so(tmp_path: Path, pg_url: str) -> None:
    a_store(tmp_path / "p")
    done = subprocess.run(
        [sys.executable, "-m", "aircher_mem", "copy-store", str(tmp_path / "p"), pg_url],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "verified row for row" in done.stdout and "turns" in done.stdout
    assert "copying turns: 3 rows" in done.stderr
    again = subprocess.run(
        [sys.executable, "-m", "aircher_mem", "copy-store", str(tmp_path / "p"), pg_url],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "NO_COLOR": "1"},
    )
    assert again.returncode == 1 and "already holds an aircher-mem store" in again.stderr


def test_a_copy_into_a_folder_to_be_makes_its_store_and_a_failed_one_leaves_nothing(
    tmp_path: Path, pg_url: str
) -> None:
    a_store(tmp_path / "p")
    transfer.copy_store(tmp_path / "p", pg_url)
    made = transfer.copy_store(pg_url, f"{tmp_path / 'backup'}{os.sep}")
    assert made.target == str(tmp_path / "backup" / ".aircher" / "memory.duckdb")
    assert rows_of(made.target) == rows_of(tmp_path / "p" / ".aircher" / "memory.duckdb")
    (tmp_path / "a-file").write_text("x")
    with pytest.raises(StoreError):
        transfer.copy_store(pg_url, tmp_path / "a-file" / "store.duckdb")  # its folder cannot be made
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file", "backup", "p"]
    assert (tmp_path / "a-file").read_text() == "x"


def test_statements_sent_together_fail_together_and_the_connection_goes_on(pg_url: str) -> None:
    con = postgres.Connection(pg_url)
    try:
        con.execute("CREATE TABLE kept (id BIGINT PRIMARY KEY, note VARCHAR)")
        con.execute("BEGIN TRANSACTION")
        with pytest.raises(StoreError, match="duplicate key"), con.pipelined():
            con.execute("INSERT INTO kept VALUES (?, ?)", [1, "first"])
            con.execute("INSERT INTO kept VALUES (?, ?)", [1, "again"])
            con.execute("INSERT INTO kept VALUES (?, ?)", [2, "after"])
        con.execute("ROLLBACK")
        assert con.execute("SELECT count(*) FROM kept").fetchone() == (0,)
        con.execute("BEGIN TRANSACTION")
        with con.pipelined():
            con.execute("INSERT INTO kept VALUES (?, ?)", [1, "first"])
            con.execute("INSERT OR REPLACE INTO kept VALUES (?, ?)", [1, "replaced"])
        con.execute("COMMIT")
        assert con.execute("SELECT id, note FROM kept").fetchall() == [(1, "replaced")]
    finally:
        con.close()


# -- the pool --------------------------------------------------------------------------------------


def _ours(url: str) -> int:
    """Connections to ``url``'s database from this process's pool (named aircher-mem), as
    the server counts them."""
    with psycopg.connect(url, autocommit=True) as con:
        row = con.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND application_name = 'aircher-mem' AND pid <> pg_backend_pid()"
        ).fetchone()
    return int(row[0]) if row else 0


def _left(url: str, seconds: float = 10.0) -> int:
    """:func:`_ours` once the server has let closed connections go: a backend leaves
    ``pg_stat_activity`` when its process exits, a moment after the client closed it."""
    deadline = time.monotonic() + seconds
    while (count := _ours(url)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return count


def test_the_stores_of_a_process_share_one_pool_that_closes_with_the_last(tmp_path: Path, pg_url: str) -> None:
    """A Memory with five users' views, episodic memory and its second reader keeps at
    most [store] pool_size connections to the server (and its listener's one); closing
    it closes them all."""
    policy = am.Policy.from_dict({"store": {"url": pg_url, "pool_size": 2}})
    with am.Memory.open(tmp_path, policy=policy) as memory:
        for user in ("ann", "bob", "cy", "dee", "eve"):
            with memory.as_user(user):
                memory.remember(f"{user} prefers tabs in the team's Go code")
                assert memory.recall("tabs").hits
        memory.record_tool_call("pytest", success=True)
        memory.episodic.read_aside(lambda e: e.counts())()
        assert len(postgres._POOLS) == 1
        assert _ours(pg_url) <= 2 + 1  # the pool, and the listener's connection
    assert postgres._POOLS == {}
    assert _left(pg_url) == 0


def test_a_transaction_keeps_its_connection_and_gives_it_back_at_its_end(pg_url: str) -> None:
    """With one connection in the pool, a transaction of one store holds it: another
    store's statement waits for it, and is a StoreLockedError after lock_seconds;
    after the COMMIT it runs."""
    one = postgres.Connection(pg_url, lock_seconds=1.0, pool_size=1)
    other = postgres.Connection(pg_url, lock_seconds=1.0, pool_size=1)
    try:
        one.execute("CREATE TABLE pooled (id BIGINT)")
        one.execute("BEGIN TRANSACTION")
        one.execute("INSERT INTO pooled VALUES (1)")
        with pytest.raises(StoreLockedError, match="pool_size"):
            other.execute("SELECT count(*) FROM pooled")
        one.execute("COMMIT")
        assert other.execute("SELECT count(*) FROM pooled").fetchone() == (1,)
        one.lock()  # the write lock keeps it too
        with pytest.raises(StoreLockedError, match="pool_size"):
            other.execute("SELECT 1")
        one.unlock()
        assert other.execute("SELECT 1").fetchone() == (1,)
    finally:
        one.close()
        other.close()
    assert postgres._POOLS == {}


def test_threads_share_a_small_pool_without_losing_a_write(pg_url: str) -> None:
    """Six threads, each with a Connection of its own, write in transactions through a
    pool of two: every write is there, the server never saw more than two of ours,
    and none is left once they closed."""
    setup = postgres.Connection(pg_url, lock_seconds=30.0, pool_size=2)
    setup.execute("CREATE TABLE shared (who BIGINT, n BIGINT)")
    most: list[int] = []
    failed: list[BaseException] = []

    def work(who: int) -> None:
        con = postgres.Connection(pg_url, lock_seconds=30.0, pool_size=2)
        try:
            for n in range(20):
                con.execute("BEGIN TRANSACTION")
                con.execute("INSERT INTO shared VALUES (?, ?)", [who, n])
                con.execute("COMMIT")
                assert con.execute("SELECT count(*) FROM shared WHERE who = ?", [who]).fetchone() == (n + 1,)
            most.append(_ours(pg_url))
        except BaseException as exc:  # reported below
            failed.append(exc)
        finally:
            con.close()

    threads = [threading.Thread(target=work, args=(who,)) for who in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failed == []
    assert setup.execute("SELECT count(*), count(DISTINCT (who, n)) FROM shared").fetchone() == (120, 120)
    assert max(most) <= 2
    setup.close()
    assert postgres._POOLS == {}
    assert _left(pg_url) == 0


def test_rows_are_read_after_the_connection_went_back(pg_url: str) -> None:
    """A statement's rows stay readable once its connection is back in the pool and
    another statement ran there."""
    con = postgres.Connection(pg_url, pool_size=1)
    try:
        first = con.execute("SELECT generate_series(1, 3)")._cursor
        con.execute("SELECT 42")
        assert [r[0] for r in first.fetchall()] == [1, 2, 3]
        assert con.fetchone() == (42,)
    finally:
        con.close()


def test_a_store_on_an_unreachable_server_is_a_store_error_and_leaves_no_pool(tmp_path: Path) -> None:
    url = f"postgresql://ann:s3cret@/team?host={tmp_path}&port=1"  # no server on that socket
    with pytest.raises(StoreError) as caught:
        postgres.Connection(url)
    assert "cannot connect to the PostgreSQL store postgresql://ann:***@/team" in str(caught.value)
    assert "s3cret" not in str(caught.value)
    assert postgres._POOLS == {}


def test_pool_size_is_a_checked_store_setting() -> None:
    assert am.Policy().store.pool_size == 8
    with pytest.raises(am.PolicyError, match="pool_size"):
        am.Policy.from_dict({"store": {"pool_size": 0}})
