"""The one DuckDB file of a project (``.aircher/memory.duckdb``): connecting, lock
detection, and a migration registry every component's tables register with.

DuckDB lets one process write a file. A second process gets
:class:`StoreLockedError` naming the file (and DuckDB's word on the holder). A file
that is not a readable DuckDB database (empty, truncated, random bytes, a SQLite
database, a directory at that path) raises :class:`StoreCorruptError` with a
one-line message naming the file, and the file is left byte for byte as it was: its
header is checked before DuckDB opens it, and read errors DuckDB reports later (while
migrating, say) are mapped by :func:`corrupt_or_error`. No extension is ever
installed or loaded from the network.

Privacy: the store's folder is created 0700, a database file :func:`connect`
creates is made 0600, and its write-ahead log (``<file>.wal``, which DuckDB creates
anew after every checkpoint) is made 0600 by :func:`protect` (run at connect and
after every write of the episodic store).

Migrations: a component (``"episodic"``; long-term memory next) registers numbered
steps with :func:`register`; :func:`migrate` applies the steps its file lacks inside
one transaction and records the component's version in ``schema_versions``. A file
written by a newer aircher-mem (a higher version than registered) raises
:class:`SchemaVersionError` and is left untouched. Never edit a released step: add
a new one.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import InvalidInputError, SchemaVersionError, StoreCorruptError, StoreError, StoreLockedError

if TYPE_CHECKING:
    import duckdb

__all__ = [
    "connect",
    "protect",
    "corrupt_or_error",
    "register",
    "migrate",
    "schema_version",
    "latest_version",
    "registered",
]

log = logging.getLogger("aircher_mem.store")

_REGISTRY: dict[str, dict[int, tuple[str, ...]]] = {}

# Before the registry, episodic memory kept its version in a one-row schema_meta.
_LEGACY_TABLE = {"episodic": "schema_meta"}


def register(component: str, steps: Mapping[int, Sequence[str]]) -> None:
    """Registers ``component``'s migration steps (1, 2, ... without gaps; each a list
    of SQL statements). Registering the same steps again is a no-op."""
    numbers = sorted(steps)
    if numbers != list(range(1, len(numbers) + 1)):
        raise ValueError(f"{component}: migration steps must be numbered 1..n, got {numbers}")
    frozen = {n: tuple(steps[n]) for n in numbers}
    if component in _REGISTRY and _REGISTRY[component] != frozen:
        raise ValueError(f"{component}: registered twice with different steps")
    _REGISTRY[component] = frozen


def registered() -> list[str]:
    """The components with registered migrations."""
    return sorted(_REGISTRY)


def latest_version(component: str) -> int:
    return max(_REGISTRY[component], default=0)


# DuckDB's file layout: a 4096-byte main header ("DUCK" at offset 8), two 4096-byte
# database headers, then the blocks.
_HEADER = 3 * 4096
_MAGIC_OFFSET = 8
_SQLITE_MAGIC = b"SQLite format 3\x00"
_WAL_SUFFIX = ".wal"


def _one_line(text: str, limit: int = 300) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _check_file(path: Path) -> None:
    """Refuses, before DuckDB touches it, a path that cannot be a DuckDB database:
    a directory, an empty file, a SQLite database, foreign bytes, a file shorter than
    DuckDB's headers. (The block count in the header does not give the file's size:
    DuckDB cuts free blocks off the end and keeps the count.)"""
    if path.is_dir():
        raise StoreCorruptError(f"{path} is a directory, not a DuckDB database file")
    try:
        size = path.stat().st_size
        with path.open("rb") as f:
            head = f.read(_HEADER)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise StoreError(f"cannot read {path}: {_one_line(exc.strerror or str(exc))}") from None
    if size == 0:
        raise StoreCorruptError(f"{path} is an empty file, not a DuckDB database")
    if head.startswith(_SQLITE_MAGIC):
        raise StoreCorruptError(f"{path} is a SQLite database, not a DuckDB one")
    if head[_MAGIC_OFFSET : _MAGIC_OFFSET + 4] != b"DUCK":
        raise StoreCorruptError(f"{path} is not a DuckDB database (no DuckDB header)")
    if size < _HEADER:
        raise StoreCorruptError(f"{path} is truncated ({size} bytes, shorter than DuckDB's {_HEADER}-byte header)")


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def corrupt_or_error(path: str, exc: Exception, doing: str) -> StoreError:
    """The typed error for DuckDB's ``exc`` on the file at ``path`` while ``doing``
    (a phrase: "migrating it"): :class:`StoreCorruptError` when DuckDB could not read
    the file (truncated, damaged), else :class:`StoreError`; one line either way."""
    message = _one_line(str(exc))
    lowered = message.lower()
    if any(word in lowered for word in _UNREADABLE):
        return StoreCorruptError(f"{path} is damaged or truncated (while {doing}): {message}")
    return StoreError(f"{path}: {doing} failed: {message}")


_UNREADABLE = ("could not read", "not a valid duckdb", "corrupt", "checksum", "malformed", "failed to read")


def protect(path: str | Path) -> None:
    """Makes the write-ahead log of the store at ``path`` private (0600) when there
    is one; a no-op for ``":memory:"``."""
    text = str(path)
    if text == ":memory:":
        return
    wal = text + _WAL_SUFFIX
    try:
        if os.stat(wal).st_mode & 0o077:
            os.chmod(wal, 0o600)
    except OSError:  # no WAL (the usual case after a checkpoint), or it just went away
        pass


def connect(path: str | Path) -> duckdb.DuckDBPyConnection:
    """Opens (creating) the DuckDB file at ``path`` (``":memory:"`` for a private
    in-memory store). The folder is created private to the user (0700), and a file
    created here is made 0600 (its WAL too, see :func:`protect`)."""
    import duckdb  # imported on first use: most callers of the package never open a store

    text = str(path)
    created = False
    if text != ":memory:":
        if "\x00" in text or not _encodable(text):
            raise InvalidInputError(f"a store path must be text without NUL or lone surrogates, got {text!r}")
        file = Path(text)
        try:
            file.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        except OSError as exc:
            raise StoreError(f"cannot create the folder of {text}: {_one_line(exc.strerror or str(exc))}") from None
        _check_file(file)
        created = not file.exists()
    # JSON is built in; never fetch extensions (no network at run time).
    config: dict[str, str | bool | int | float | list[str]] = {
        "autoinstall_known_extensions": False,
        "autoload_known_extensions": False,
    }
    try:
        con = duckdb.connect(text, config=config)
    except duckdb.IOException as exc:
        message = _one_line(str(exc))
        if "lock" in message.lower():
            raise StoreLockedError(
                f"{text} is open in another process (DuckDB allows one writer per file); "
                f"close it there or go through its server. DuckDB said: {message}"
            ) from None
        if "not a valid DuckDB database" in message:
            raise StoreCorruptError(f"{text} is not a DuckDB database: {message}") from None
        raise corrupt_or_error(text, exc, "opening it") from None
    except duckdb.Error as exc:
        raise StoreCorruptError(f"cannot open {text}: {_one_line(str(exc))}") from None
    # No progress bar: DuckDB draws it on stdout for a query over 2 s (a 100K-row load
    # on a busy machine), which is the MCP server's protocol channel and a CLI's JSON.
    try:
        con.execute("SET enable_progress_bar = false")
    except duckdb.Error as exc:
        con.close()
        raise StoreCorruptError(f"cannot open {text}: {_one_line(str(exc))}") from None
    if created:
        try:
            os.chmod(text, 0o600)
        except OSError as exc:
            con.close()
            raise StoreError(f"cannot make {text} private: {_one_line(exc.strerror or str(exc))}") from None
    protect(text)
    return con


def _has_table(con: duckdb.DuckDBPyConnection, table: str) -> bool:
    row = con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = ?", [table]).fetchone()
    return bool(row and row[0])


def _recorded(con: duckdb.DuckDBPyConnection, component: str) -> bool:
    if not _has_table(con, "schema_versions"):
        return False
    return con.execute("SELECT count(*) FROM schema_versions WHERE component = ?", [component]).fetchone() == (1,)


def schema_version(con: duckdb.DuckDBPyConnection, component: str) -> int:
    """The version of ``component``'s tables in this file (0: none yet); for a
    component that kept its version in a table of its own before the registry, the
    higher of the two (an older aircher-mem may have written only that one)."""
    version = 0
    if _has_table(con, "schema_versions"):
        row = con.execute("SELECT version FROM schema_versions WHERE component = ?", [component]).fetchone()
        version = int(row[0]) if row else 0
    legacy = _LEGACY_TABLE.get(component)
    if legacy and _has_table(con, legacy):
        row = con.execute(f"SELECT version FROM {legacy}").fetchone()
        version = max(version, int(row[0]) if row else 0)
    return version


def migrate(con: duckdb.DuckDBPyConnection, component: str, *, path: str = "store") -> int:
    """Brings ``component``'s tables to the latest registered version in one
    transaction; returns the version. A failed step rolls back and raises StoreError."""
    import duckdb

    latest = latest_version(component)
    try:
        version = schema_version(con, component)
        recorded = _recorded(con, component)
    except duckdb.Error as exc:  # the first read of a damaged file
        raise corrupt_or_error(path, exc, f"reading its {component} schema version") from None
    if version > latest:
        raise SchemaVersionError(
            f"{path} has {component} schema version {version}, newer than this aircher-mem's {latest}; "
            "upgrade aircher-mem to open it (the file was not changed)"
        )
    if version == latest and recorded:
        return version
    con.execute("BEGIN TRANSACTION")
    try:
        con.execute(
            "CREATE TABLE IF NOT EXISTS schema_versions (component VARCHAR PRIMARY KEY, version INTEGER NOT NULL)"
        )
        for step in range(version + 1, latest + 1):
            for statement in _REGISTRY[component][step]:
                con.execute(statement)
        con.execute("INSERT OR REPLACE INTO schema_versions VALUES (?, ?)", [component, latest])
        legacy = _LEGACY_TABLE.get(component)
        if legacy and _has_table(con, legacy):  # what an older aircher-mem reads
            con.execute(f"UPDATE {legacy} SET version = ?", [latest])
        con.execute("COMMIT")
    except duckdb.Error as exc:
        try:
            con.execute("ROLLBACK")
        except duckdb.Error:
            pass
        raise corrupt_or_error(path, exc, f"migrating {component} from schema version {version}") from None
    if version:
        log.info("migrated %s (%s) from schema version %d to %d", path, component, version, latest)
    return latest
