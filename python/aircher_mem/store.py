"""The one DuckDB file of a project (``.aircher/memory.duckdb``): connecting, lock
detection, and a migration registry every component's tables register with.

DuckDB lets one process write a file. A second process gets
:class:`StoreLockedError` naming the file (and DuckDB's word on the holder); a file
that is not a DuckDB database, :class:`StoreCorruptError`. No extension is ever
installed or loaded from the network.

Migrations: a component (``"episodic"``; long-term memory next) registers numbered
steps with :func:`register`; :func:`migrate` applies the steps its file lacks inside
one transaction and records the component's version in ``schema_versions``. A file
written by a newer aircher-mem (a higher version than registered) raises
:class:`SchemaVersionError` and is left untouched. Never edit a released step: add
a new one.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import SchemaVersionError, StoreCorruptError, StoreError, StoreLockedError

if TYPE_CHECKING:
    import duckdb

__all__ = ["connect", "register", "migrate", "schema_version", "latest_version", "registered"]

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


def connect(path: str | Path) -> duckdb.DuckDBPyConnection:
    """Opens (creating) the DuckDB file at ``path`` (``":memory:"`` for a private
    in-memory store). The folder is created private to the user (0700)."""
    import duckdb  # imported on first use: most callers of the package never open a store

    text = str(path)
    if text != ":memory:":
        Path(text).parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    # JSON is built in; never fetch extensions (no network at run time).
    config: dict[str, str | bool | int | float | list[str]] = {
        "autoinstall_known_extensions": False,
        "autoload_known_extensions": False,
    }
    try:
        return duckdb.connect(text, config=config)
    except duckdb.IOException as exc:
        message = str(exc)
        if "lock" in message.lower():
            raise StoreLockedError(
                f"{text} is open in another process (DuckDB allows one writer per file); "
                f"close it there or go through its server. DuckDB said: {message}"
            ) from None
        if "not a valid DuckDB database" in message:
            raise StoreCorruptError(f"{text} is not a DuckDB database: {message}") from None
        raise StoreError(f"cannot open {text}: {message}") from None
    except duckdb.Error as exc:
        raise StoreCorruptError(f"cannot open {text}: {exc}") from None


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
    version = schema_version(con, component)
    if version > latest:
        raise SchemaVersionError(
            f"{path} has {component} schema version {version}, newer than this aircher-mem's {latest}; "
            "upgrade aircher-mem to open it (the file was not changed)"
        )
    if version == latest and _recorded(con, component):
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
        con.execute("ROLLBACK")
        raise StoreError(f"migrating {path} ({component}) from version {version} failed: {exc}") from None
    if version:
        log.info("migrated %s (%s) from schema version %d to %d", path, component, version, latest)
    return latest
