"""PostgreSQL, for a team's shared store: connecting, the registered migrations in
PostgreSQL's dialect, and copying a store between the embedded DuckDB file and a
server, in either direction, verified row for row.

Connecting (:func:`connect`): psycopg 3 (the ``team`` extra), a ``postgresql://``
URL as libpq reads it (``postgresql://user@host:5432/db``, or a Unix socket:
``postgresql://user@/db?host=/run/postgresql``). Messages name the server with its
password masked (:func:`shown`). A server that cannot be reached, or refuses the
user, is a :class:`~aircher_mem.errors.StoreError` naming it.

Migrations (:func:`migrate`): the steps each component registers with
:func:`aircher_mem.store.register` are written in DuckDB's dialect; :func:`translate`
turns their types into PostgreSQL's (``DOUBLE`` -> ``DOUBLE PRECISION``, ``FLOAT`` ->
``REAL``, ``UBIGINT`` -> ``NUMERIC(20)``; ``JSON`` is PostgreSQL's ``json``, which
keeps a document's text as written). A component's steps run in one transaction,
after ``pg_advisory_xact_lock``: two processes starting together migrate once. The
versions go in the same ``schema_versions`` table as in the file; a database written
by a newer aircher-mem raises :class:`~aircher_mem.errors.SchemaVersionError` and is
left as it is.

Copying (:func:`copy_store`): every table the migrations make, but the two that
describe one store's own files (``schema_versions``, which each side keeps for
itself, and ``longterm_indexes``, the generation of the lexical indexes saved beside
a file), row for row, and the position of every id sequence. The target must hold no
aircher-mem store yet: a DuckDB file that does not exist, or a database (its current
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
import logging
import math
import os
import re
import struct
import time
import urllib.parse
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from . import episodic, store
from .errors import InvalidInputError, SchemaVersionError, StoreError
from .longterm import schema as _longterm_schema
from .results import CopiedTable, StoreCopy

if TYPE_CHECKING:
    import duckdb
    import psycopg

__all__ = ["is_url", "shown", "connect", "translate", "migrate", "copy_store", "COPY_BATCH", "NOT_COPIED"]

log = logging.getLogger("aircher_mem.postgres")

# The components whose tables a store holds (imported: they register their migrations).
_COMPONENTS = (episodic.__name__, _longterm_schema.__name__)

#: Rows read and written at a time.
COPY_BATCH = 8_192
#: Tables that describe one store's own files, not its memory: never copied.
NOT_COPIED = ("schema_versions", "longterm_indexes")
_SCHEMES = ("postgresql://", "postgres://")
_CONNECT_SECONDS = 10
# An advisory lock key of migrations ("aircher-m" in ASCII): one process migrates at a time.
_MIGRATE_LOCK = 0x61_69_72_63_68_65_72_6D
_TYPES = tuple(
    (re.compile(rf"\b{duckdb_type}\b"), postgres_type)
    for duckdb_type, postgres_type in (("DOUBLE", "DOUBLE PRECISION"), ("FLOAT", "REAL"), ("UBIGINT", "NUMERIC(20)"))
)
_NEXTVAL = re.compile(r"nextval\('([A-Za-z_][A-Za-z0-9_]*)'\)")


def is_url(text: str) -> bool:
    """Whether ``text`` names a PostgreSQL server (else it is a store file's path)."""
    return text.startswith(_SCHEMES)


def shown(url: str) -> str:
    """``url`` with its password masked (in the user part and in the query)."""
    parts = urllib.parse.urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        user, _, host = netloc.rpartition("@")
        if ":" in user:
            user = user.split(":", 1)[0] + ":***"
        netloc = f"{user}@{host}"
    query = urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
    masked = "&".join(f"{k}={'***' if k == 'password' else v}" for k, v in query)
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, masked, parts.fragment))


def _driver() -> Any:
    try:
        import psycopg
    except ImportError as exc:
        raise StoreError(
            f"a PostgreSQL store needs psycopg 3, which is not installed ({exc}): pip install 'aircher-mem[team]'"
        ) from None
    return psycopg


def connect(url: str) -> psycopg.Connection[Any]:
    """A connection to the server at ``url`` (autocommit: every write in an explicit
    transaction), with ``json`` read as its text; StoreError when it cannot be made."""
    if not isinstance(url, str) or not is_url(url):
        raise InvalidInputError(f"a PostgreSQL store is a postgresql:// URL, got {url!r}")
    driver = _driver()
    options: dict[str, Any] = {"autocommit": True, "application_name": "aircher-mem"}
    try:
        given = driver.conninfo.conninfo_to_dict(url)
    except driver.ProgrammingError as exc:
        raise InvalidInputError(f"{shown(url)} is not a PostgreSQL URL libpq reads: {_line(exc)}") from None
    if "connect_timeout" not in given:
        options["connect_timeout"] = _CONNECT_SECONDS
    try:
        con: psycopg.Connection[Any] = driver.connect(url, **options)
    except driver.Error as exc:
        raise StoreError(f"cannot connect to the PostgreSQL store {shown(url)}: {_line(exc)}") from None
    for name in ("json", "jsonb"):
        con.adapters.register_loader(name, driver.types.string.TextLoader)
    return con


def _line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:300] or type(exc).__name__


def translate(statement: str) -> str:
    """A migration statement of the registry (DuckDB's dialect) in PostgreSQL's."""
    for pattern, replacement in _TYPES:
        statement = pattern.sub(replacement, statement)
    return statement


def _has_table(con: psycopg.Connection[Any], table: str) -> bool:
    row = con.execute("SELECT to_regclass(%s) IS NOT NULL", [table]).fetchone()
    return bool(row and row[0])


def migrate(con: psycopg.Connection[Any], component: str, *, where: str = "PostgreSQL") -> int:
    """Brings ``component``'s tables in the connection's current schema to the latest
    registered version (see the module's docstring); returns the version."""
    latest = store.latest_version(component)
    with con.transaction():
        con.execute("SELECT pg_advisory_xact_lock(%s)", [_MIGRATE_LOCK])
        con.execute(
            "CREATE TABLE IF NOT EXISTS schema_versions (component VARCHAR PRIMARY KEY, version INTEGER NOT NULL)"
        )
        row = con.execute("SELECT version FROM schema_versions WHERE component = %s", [component]).fetchone()
        version = int(row[0]) if row else 0
        if version > latest:
            raise SchemaVersionError(
                f"{where} has {component} schema version {version}, newer than this aircher-mem's {latest}; "
                "upgrade aircher-mem to use it (nothing was changed)"
            )
        for step, statements in sorted(store.steps(component).items()):
            if step > version:
                for statement in statements:
                    con.execute(translate(statement))
        con.execute(
            "INSERT INTO schema_versions VALUES (%s, %s) ON CONFLICT (component) DO UPDATE SET version = %s",
            [component, latest, latest],
        )
    if version and version < latest:
        log.info("migrated %s (%s) from schema version %d to %d", where, component, version, latest)
    return latest


# -- copying ----------------------------------------------------------------------------------


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


class _File:
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

    def clear(self, table: str) -> None:
        self.con.execute(f"DELETE FROM {table}")

    def sequence(self, name: str) -> int | None:
        row = self.con.execute("SELECT last_value FROM duckdb_sequences() WHERE sequence_name = ?", [name]).fetchone()
        return None if row is None or row[0] is None else int(row[0])

    def advance(self, name: str, last: int) -> None:
        # DuckDB has no setval: the sequence is fresh, taken up to `last`
        self.con.execute(f"SELECT max(nextval('{name}')) FROM range(?)", [last]).fetchall()

    def highest(self, table: str, column: str) -> int | None:
        row = self.con.execute(f"SELECT max({column}) FROM {table}").fetchone()
        return None if row is None or row[0] is None else int(row[0])


class _Server:
    def __init__(self, url: str, con: psycopg.Connection[Any]) -> None:
        self.where = shown(url)
        self.con = con

    def rows(self, table: str, columns: Sequence[str]) -> Iterator[list[tuple[Any, ...]]]:
        with self.con.cursor(name=f"aircher_copy_{table}") as cursor:
            cursor.execute(f"SELECT {', '.join(columns)} FROM {table}")
            while batch := cursor.fetchmany(COPY_BATCH):
                yield batch

    def write(self, table: str, columns: Sequence[tuple[str, str]], rows: list[tuple[Any, ...]]) -> None:
        names = ", ".join(name for name, _ in columns)
        with self.con.cursor() as cursor, cursor.copy(f"COPY {table} ({names}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)

    def clear(self, table: str) -> None:
        self.con.execute(f"DELETE FROM {table}")

    def sequence(self, name: str) -> int | None:
        row = self.con.execute(f"SELECT last_value, is_called FROM {name}").fetchone()
        return int(row[0]) if row is not None and row[1] else None

    def advance(self, name: str, last: int) -> None:
        self.con.execute("SELECT setval(%s, %s, true)", [name, last])

    def highest(self, table: str, column: str) -> int | None:
        row = self.con.execute(f"SELECT max({column}) FROM {table}").fetchone()
        return None if row is None or row[0] is None else int(row[0])


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
    """A store file's path: ``text``, or the store of the project folder it names."""
    path = Path(text)
    if path.is_dir():
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
    con = store.connect(path)
    try:
        for component in store.registered():
            store.migrate(con, component, path=path)
        yield con
    except BaseException:
        store.disconnect(con, path)
        if new:
            for leftover in (path, path + ".wal"):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(leftover)
        raise
    store.disconnect(con, path)


@contextlib.contextmanager
def _opened_server(url: str, *, new: bool) -> Iterator[psycopg.Connection[Any]]:
    con = connect(url)
    try:
        if new and _has_table(con, "schema_versions"):
            raise StoreError(
                f"{shown(url)} already holds an aircher-mem store (its schema has schema_versions): "
                "a copy goes into a database without one"
            )
        if not new:
            if not _has_table(con, "schema_versions"):
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
    psycopg = _driver()
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
                f"copying {'into' if into_server else 'from'} {server.where} failed: {_line(exc)}"
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
