"""Copying a store between its DuckDB file and a PostgreSQL server, in either
direction, verified row for row.

Every table the migrations make, but the three that describe one store's own files
(``schema_versions``, which each side keeps for itself, ``longterm_indexes``, the
generation of the lexical indexes saved beside a file, and ``longterm_index_log``,
what changed since), row for row, and the position of every id sequence. The target
must hold no aircher-mem store yet: a DuckDB file that does not exist, or a database (its current
schema) without aircher-mem's tables. All of it is written in one transaction; a
failed copy leaves the target as it was (a file it created is removed). Then each
table is read back from the target and compared with the source: the number of rows
and a digest of the multiset of rows (each value in a canonical form of its column's
type; a ``REAL`` compared as the 32-bit float it is). A difference raises
:class:`~aircher_mem.errors.StoreError` and the copy is removed; a returned
:class:`~aircher_mem.results.StoreCopy` was verified. The source is read in one
snapshot (a file is held locked; a server's rows are read in one repeatable-read
transaction while others write).
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import os
import re
import struct
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from . import episodic, store
from .errors import InvalidInputError, StoreError
from .longterm import schema as _longterm_schema
from .postgres import connect, has_table, is_url, line, migrate, shown
from .results import CopiedTable, StoreCopy

if TYPE_CHECKING:
    import duckdb
    import psycopg

__all__ = ["copy_store", "COPY_BATCH", "NOT_COPIED"]

# The components whose tables a store holds (imported: they register their migrations).
_COMPONENTS = (episodic.__name__, _longterm_schema.__name__)

#: Rows read and written at a time.
COPY_BATCH = 8_192
#: Tables that describe one store's own files, not its memory: never copied.
NOT_COPIED = ("schema_versions", "longterm_indexes", "longterm_index_log")
_NEXTVAL = re.compile(r"nextval\('([A-Za-z_][A-Za-z0-9_]*)'\)")


class _Side(Protocol):
    """One end of a copy: a store file or a server's database."""

    where: str

    def rows(self, table: str, columns: Sequence[str]) -> Iterator[list[tuple[Any, ...]]]:
        """The table's rows, ``COPY_BATCH`` at a time."""

    def write(self, table: str, columns: Sequence[tuple[str, str]], rows: list[tuple[Any, ...]]) -> None:
        """Appends rows (values in ``columns``' order; each column its DuckDB type)."""

    def clear(self, table: str) -> None:
        """Deletes the rows the migrations wrote."""

    def sequence(self, name: str) -> int | None:
        """The last value the sequence gave (None: never used)."""

    def advance(self, name: str, last: int) -> None:
        """Makes the sequence's next value ``last + 1`` (it is fresh)."""

    def highest(self, table: str, column: str) -> int | None:
        """The column's highest value (None: no rows)."""


class _Shared:
    """What both ends do in the same SQL."""

    con: Any

    def clear(self, table: str) -> None:
        self.con.execute(f"DELETE FROM {table}")

    def highest(self, table: str, column: str) -> int | None:
        row = self.con.execute(f"SELECT max({column}) FROM {table}").fetchone()
        return None if row is None or row[0] is None else int(row[0])


class _File(_Shared):
    def __init__(self, path: str, con: duckdb.DuckDBPyConnection) -> None:
        self.where = path
        self.con = con

    def rows(self, table: str, columns: Sequence[str]) -> Iterator[list[tuple[Any, ...]]]:
        self.con.execute(f"SELECT {', '.join(columns)} FROM {table}")
        while batch := self.con.fetchmany(COPY_BATCH):
            yield batch

    def write(self, table: str, columns: Sequence[tuple[str, str]], rows: list[tuple[Any, ...]]) -> None:
        values = []
        for at, (_, kind) in enumerate(columns):
            column = [row[at] for row in rows]
            if kind in _INTEGERS:  # a server's NUMERIC arrives as a Decimal
                column = [None if v is None else int(v) for v in column]
            values.append(column)
        parts = [f"unnest(?::VARCHAR[])::{kind}" if kind == "JSON" else f"unnest(?::{kind}[])" for _, kind in columns]
        names = ", ".join(name for name, _ in columns)
        self.con.execute(f"INSERT INTO {table} ({names}) SELECT {', '.join(parts)}", values)

    def sequence(self, name: str) -> int | None:
        row = self.con.execute("SELECT last_value FROM duckdb_sequences() WHERE sequence_name = ?", [name]).fetchone()
        return None if row is None or row[0] is None else int(row[0])

    def advance(self, name: str, last: int) -> None:
        # DuckDB has no setval: the sequence is fresh, taken up to `last`
        self.con.execute(f"SELECT max(nextval('{name}')) FROM range(?)", [last]).fetchall()


class _Server(_Shared):
    def __init__(self, url: str, con: psycopg.Connection[Any]) -> None:
        self.where = shown(url)
        self.con = con
        self._vectors: dict[str, frozenset[str]] = {}

    def vector_columns(self, table: str) -> frozenset[str]:
        """The table's columns of pgvector's type (read as arrays, written in its text)."""
        if table not in self._vectors:
            found = self.con.execute(
                "SELECT a.attname FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid "
                "WHERE a.attrelid = to_regclass(%s) AND a.attnum > 0 AND NOT a.attisdropped AND t.typname = 'vector'",
                [table],
            ).fetchall()
            self._vectors[table] = frozenset(row[0] for row in found)
        return self._vectors[table]

    def rows(self, table: str, columns: Sequence[str]) -> Iterator[list[tuple[Any, ...]]]:
        vectors = self.vector_columns(table)
        selected = ", ".join(f"{name}::REAL[]" if name in vectors else name for name in columns)
        with self.con.cursor(name=f"aircher_copy_{table}") as cursor:
            cursor.execute(f"SELECT {selected} FROM {table}")
            while batch := cursor.fetchmany(COPY_BATCH):
                yield batch

    def write(self, table: str, columns: Sequence[tuple[str, str]], rows: list[tuple[Any, ...]]) -> None:
        names = ", ".join(name for name, _ in columns)
        vectors = [n for n, (name, _) in enumerate(columns) if name in self.vector_columns(table)]
        with self.con.cursor() as cursor, cursor.copy(f"COPY {table} ({names}) FROM STDIN") as copy:
            for row in rows:
                if vectors:
                    row = tuple(_pgvector(v) if n in vectors else v for n, v in enumerate(row))
                copy.write_row(row)

    def sequence(self, name: str) -> int | None:
        row = self.con.execute(f"SELECT last_value, is_called FROM {name}").fetchone()
        return int(row[0]) if row is not None and row[1] else None

    def advance(self, name: str, last: int) -> None:
        self.con.execute("SELECT setval(%s, %s, true)", [name, last])


def _pgvector(value: Sequence[float] | None) -> str | None:
    """An array as pgvector's text (``[1.5,2.0]``), each float exact (``repr``); an
    empty one, or a value that is not finite, is the server's error (pgvector holds
    neither)."""
    return None if value is None else "[" + ",".join(repr(float(v)) for v in value) + "]"


_INTEGERS = ("BIGINT", "INTEGER", "UBIGINT", "SMALLINT", "HUGEINT")


def _canonical(kind: str, value: Any) -> object:
    """``value`` of a column of DuckDB type ``kind`` as both sides give it equal."""
    if value is None:
        return None
    if kind.endswith("[]"):
        return tuple(_canonical(kind[:-2], v) for v in value)
    if kind in ("FLOAT", "REAL"):
        return "nan" if math.isnan(value) else struct.pack("<f", value)
    if kind == "DOUBLE":
        return "nan" if math.isnan(value) else float(value).hex()
    if kind in _INTEGERS:
        return int(value)
    if kind == "BOOLEAN":
        return bool(value)
    if kind == "TIMESTAMP":
        return value.isoformat()
    return str(value)


def _digest(side: _Side, table: str, columns: Sequence[tuple[str, str]]) -> tuple[int, str]:
    """The number of rows and a digest of their multiset (the sum of the rows'
    SHA-256, modulo 2**256: the order rows are read in does not count)."""
    count, total = 0, 0
    kinds = [kind for _, kind in columns]
    for batch in side.rows(table, [name for name, _ in columns]):
        for row in batch:
            canonical = tuple(_canonical(kind, value) for kind, value in zip(kinds, row))
            total += int.from_bytes(hashlib.sha256(repr(canonical).encode("utf-8", "surrogatepass")).digest(), "big")
            count += 1
    return count, format(total % (1 << 256), "064x")


# The columns of a file's own tables (not DuckDB's views of its catalog).
_OWN = (
    "schema_name = 'main' AND NOT internal AND table_name IN "
    "(SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main' AND NOT internal)"
)


def _tables(con: duckdb.DuckDBPyConnection) -> dict[str, list[tuple[str, str]]]:
    """Each table of a migrated file with its columns (name, DuckDB type), in order."""
    found: dict[str, list[tuple[str, str]]] = {}
    for table, column, kind in con.execute(
        "SELECT table_name, column_name, data_type FROM duckdb_columns() "
        f"WHERE {_OWN} ORDER BY table_name, column_index"
    ).fetchall():
        if table not in NOT_COPIED:
            found.setdefault(table, []).append((column, kind))
    return found


def _sequences(con: duckdb.DuckDBPyConnection) -> list[tuple[str, str, str]]:
    """(sequence, table, column) of every column whose default is a sequence."""
    found = []
    for table, column, default in con.execute(
        "SELECT table_name, column_name, column_default FROM duckdb_columns() "
        f"WHERE {_OWN} AND column_default LIKE 'nextval(%' ORDER BY table_name"
    ).fetchall():
        match = _NEXTVAL.fullmatch(default)
        if match is not None and table not in NOT_COPIED:
            found.append((match.group(1), table, column))
    return found


def _file_path(text: str) -> str:
    """A store file's path: ``text``, or the store of the project folder it names
    (a folder, or a path ending in a slash)."""
    path = Path(text)
    if path.is_dir() or text.endswith(os.sep):
        from .root import STORE_DIR

        return str(path / STORE_DIR / "memory.duckdb")
    return text


@contextlib.contextmanager
def _opened_file(path: str, *, new: bool) -> Iterator[duckdb.DuckDBPyConnection]:
    """The store file at ``path``, migrated and locked; ``new``: it must not exist
    yet, and is removed again when the block raises."""
    if new and (os.path.lexists(path) or os.path.lexists(path + ".wal")):
        raise StoreError(f"{path} exists: a copy goes into a new store file")
    if not new and not os.path.exists(path):
        raise StoreError(f"{path}: no such store file")
    con = None
    locked_before = os.path.lexists(path + ".lock")  # another process's: never removed
    try:
        con = store.connect(path)
        for component in store.registered():
            store.migrate(con, component, path=path)
        yield con
    except BaseException:
        if con is not None:
            store.disconnect(con, path)
        if new:
            for leftover in (path, path + ".wal", *([] if locked_before else [path + ".lock"])):
                with contextlib.suppress(FileNotFoundError, IsADirectoryError, NotADirectoryError):
                    os.unlink(leftover)
        raise
    store.disconnect(con, path)


@contextlib.contextmanager
def _opened_server(url: str, *, new: bool) -> Iterator[psycopg.Connection[Any]]:
    con = connect(url)
    try:
        if new and has_table(con, "schema_versions"):
            raise StoreError(
                f"{shown(url)} already holds an aircher-mem store (its schema has schema_versions): "
                "a copy goes into a database without one"
            )
        if not new:
            if not has_table(con, "schema_versions"):
                raise StoreError(f"{shown(url)} holds no aircher-mem store (no schema_versions in its schema)")
            for component in store.registered():
                migrate(con, component, where=shown(url))
        yield con
    finally:
        con.close()


def copy_store(
    source: str | os.PathLike[str],
    target: str | os.PathLike[str],
    *,
    progress: Callable[[str, int], None] | None = None,
) -> StoreCopy:
    """Copies the store at ``source`` into ``target`` and verifies the copy (see the
    module's docstring). Each is a ``postgresql://`` URL, a store file's path, or a
    project folder (its ``.aircher/memory.duckdb``); one of them is a server, the
    other a file. ``progress(table, rows)`` is called as rows are written."""
    source_text, target_text = os.fspath(source), os.fspath(target)
    if is_url(source_text) == is_url(target_text):
        raise InvalidInputError("a copy goes between a store file and a PostgreSQL server: give one of each")
    started = time.perf_counter()
    from .postgres import driver

    psycopg = driver()
    duckdb = store.engine()
    url = source_text if is_url(source_text) else target_text
    path = _file_path(target_text if is_url(source_text) else source_text)
    into_server = is_url(target_text)
    with (
        _opened_file(path, new=not into_server) as file_con,
        _opened_server(url, new=into_server) as server_con,
    ):
        file, server = _File(path, file_con), _Server(url, server_con)
        try:
            with server_con.transaction():
                if into_server:
                    for component in store.registered():
                        migrate(server_con, component, where=server.where)
                    tables = _copy(file, server, file_con, progress)
                else:
                    server_con.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                    file_con.execute("BEGIN TRANSACTION")
                    try:
                        tables = _copy(server, file, file_con, progress)
                    except BaseException:
                        with contextlib.suppress(duckdb.Error):
                            file_con.execute("ROLLBACK")
                        raise
                    file_con.execute("COMMIT")
        except psycopg.Error as exc:
            raise StoreError(
                f"copying {'into' if into_server else 'from'} {server.where} failed: {line(exc)}"
            ) from None
        except duckdb.Error as exc:
            raise store.corrupt_or_error(path, exc, "copying the store") from None
    ends = (file.where, server.where) if into_server else (server.where, file.where)
    return StoreCopy(*ends, tables, sum(t.rows for t in tables), time.perf_counter() - started)


def _copy(
    source: _Side,
    target: _Side,
    file_con: duckdb.DuckDBPyConnection,
    progress: Callable[[str, int], None] | None,
) -> list[CopiedTable]:
    """Copies every table and sequence position, then verifies: run inside the
    target's transaction (which commits only when this returns)."""
    tables = _tables(file_con)
    for table, columns in tables.items():
        target.clear(table)
        written = 0
        for batch in source.rows(table, [name for name, _ in columns]):
            target.write(table, columns, batch)
            written += len(batch)
            if progress is not None:
                progress(table, written)
    for name, table, column in _sequences(file_con):
        last = max(source.sequence(name) or 0, target.highest(table, column) or 0)
        if last:
            target.advance(name, last)
    copied = []
    for table, columns in tables.items():
        rows, digest = _digest(source, table, columns)
        found_rows, found_digest = _digest(target, table, columns)
        if (rows, digest) != (found_rows, found_digest):
            raise StoreError(
                f"the copy of {table} differs from {source.where}'s ({found_rows} rows against {rows}): "
                "nothing was written"
            )
        copied.append(CopiedTable(table, rows, digest))
    return copied
