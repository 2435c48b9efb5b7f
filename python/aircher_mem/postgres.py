"""PostgreSQL, for a team's shared store: connecting, the registered migrations in
PostgreSQL's dialect, and the store's SQL run on a server (:class:`Connection`).

Connecting (:func:`connect`): psycopg 3 (the ``team`` extra), a ``postgresql://``
URL as libpq reads it (``postgresql://user@host:5432/db``, or a Unix socket:
``postgresql://user@/db?host=/run/postgresql``). Messages name the server with its
password masked (:func:`shown`). A server that cannot be reached, or refuses the
user, is a :class:`~aircher_mem.errors.StoreError` naming it.

Pooling: the stores of one process (long-term memory and each user's view of it,
episodic memory and its second reader) draw their connections from one
``psycopg_pool.ConnectionPool`` per server URL (:class:`Connection`), at most
``[store] pool_size`` of them: a connection is taken for a statement, or for a
transaction, a held write lock or a pipeline, and given back after it. Connections
the server dropped (a restart) are found by the pool's check before use and made
again (one used within the last second is not checked: a statement on it that finds
the server gone fails, and the next one gets a new connection). The pool closes with
the last store of the process using it.

Migrations (:func:`migrate`): the steps each component registers with
:func:`aircher_mem.store.register` are written in DuckDB's dialect; :func:`translate`
turns their types into PostgreSQL's (``DOUBLE`` -> ``DOUBLE PRECISION``, ``FLOAT`` ->
``REAL``, ``UBIGINT`` -> ``NUMERIC(20)``; ``JSON`` is PostgreSQL's ``json``, which
keeps a document's text as written). A component's steps run in one transaction,
after ``pg_advisory_xact_lock``: two processes starting together migrate once. The
versions go in the same ``schema_versions`` table as in the file; a database written
by a newer aircher-mem raises :class:`~aircher_mem.errors.SchemaVersionError` and is
left as it is.
"""

from __future__ import annotations

import contextlib
import logging
import re
import threading
import time
import urllib.parse
import weakref
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from . import store
from .errors import InvalidInputError, SchemaVersionError, StoreError, StoreLockedError

if TYPE_CHECKING:
    import psycopg

__all__ = [
    "is_url",
    "shown",
    "driver",
    "connect",
    "translate",
    "has_table",
    "migrate",
    "line",
    "Connection",
    "ValueRefused",
    "Listener",
    "TRIM_EVERY",
    "CHANNEL",
]

log = logging.getLogger("aircher_mem.postgres")

_SCHEMES = ("postgresql://", "postgres://")
_CONNECT_SECONDS = 10
# An advisory lock key of migrations ("aircherm" in ASCII): one process migrates at a time.
_MIGRATE_LOCK = 0x61_69_72_63_68_65_72_6D
_TYPES = tuple(
    (re.compile(rf"\b{duckdb_type}\b"), postgres_type)
    for duckdb_type, postgres_type in (("DOUBLE", "DOUBLE PRECISION"), ("FLOAT", "REAL"), ("UBIGINT", "NUMERIC(20)"))
)


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


def driver() -> Any:
    try:
        import psycopg
    except ImportError as exc:
        raise StoreError(
            f"a PostgreSQL store needs psycopg 3, which is not installed ({exc}): pip install 'aircher-mem[team]'"
        ) from None
    return psycopg


def _pool_module() -> Any:
    try:
        import psycopg_pool
    except ImportError as exc:
        raise StoreError(
            f"a PostgreSQL store needs psycopg's pool, which is not installed ({exc}): pip install 'aircher-mem[team]'"
        ) from None
    # The pool's workers log each failed connection attempt; the verb that waited
    # raises the failure as a StoreError. Where the application configured no logging,
    # Python's last-resort handler would print those records on stderr too (a CLI or
    # hook process: the same failure twice); a handler of its own stops that, and an
    # application's handlers still get them.
    pool_log = logging.getLogger("psycopg.pool")
    if not pool_log.handlers:
        pool_log.addHandler(logging.NullHandler())
    return psycopg_pool


def connect(url: str) -> psycopg.Connection[Any]:
    """A connection to the server at ``url`` (autocommit: every write in an explicit
    transaction), with ``json`` read as its text; StoreError when it cannot be made."""
    pg = driver()
    try:
        con: psycopg.Connection[Any] = pg.connect(url, **_options(url))
    except pg.Error as exc:
        raise StoreError(f"cannot connect to the PostgreSQL store {shown(url)}: {line(exc)}") from None
    _read_json_as_text(con)
    return con


def _options(url: str) -> dict[str, Any]:
    """The options every connection to ``url`` is made with (InvalidInputError for a
    URL libpq does not read)."""
    if not isinstance(url, str) or not is_url(url):
        raise InvalidInputError(f"a PostgreSQL store is a postgresql:// URL, got {url!r}")
    pg = driver()
    options: dict[str, Any] = {"autocommit": True, "application_name": "aircher-mem"}
    try:
        given = pg.conninfo.conninfo_to_dict(url)
    except pg.ProgrammingError as exc:
        raise InvalidInputError(f"{shown(url)} is not a PostgreSQL URL libpq reads: {line(exc)}") from None
    if "connect_timeout" not in given:
        options["connect_timeout"] = _CONNECT_SECONDS
    return options


def _read_json_as_text(con: psycopg.Connection[Any]) -> None:
    pg = driver()
    for name in ("json", "jsonb"):
        con.adapters.register_loader(name, pg.types.string.TextLoader)


# (url, lock_seconds) -> the pool of this process's connections to that server, and
# how many Connection objects use it
_POOLS: dict[tuple[str, float], tuple[Any, int]] = {}
_POOLS_GUARD = threading.Lock()
# Seconds a statement waits for a free connection before the server is asked directly
# whether it is there at all
_FIRST_WAIT_SECONDS = 0.5
# A connection given back to its pool (by Connection._settle) -> when; one given back
# less than _FRESH_SECONDS ago is handed out again without a round trip to check it
_GIVEN_BACK: weakref.WeakKeyDictionary[Any, float] = weakref.WeakKeyDictionary()
_FRESH_SECONDS = 1.0


def _check(con: psycopg.Connection[Any]) -> None:
    """The pool's check of a connection before it hands it out: an empty statement
    (the server dropped it: it is made again), unless it was in use a moment ago
    (most are, in a busy process; the check would cost each statement a round trip)."""
    given_back = _GIVEN_BACK.get(con)
    if given_back is not None and time.monotonic() - given_back < _FRESH_SECONDS:
        return
    _pool_module().ConnectionPool.check_connection(con)


def _pool(url: str, lock_seconds: float, size: int) -> Any:
    """The process's pool for ``url`` (made on first use, empty: its connections are
    made as they are asked for), counted as used once more (see :func:`_let_go`)."""
    key = (url, lock_seconds)
    with _POOLS_GUARD:
        found = _POOLS.get(key)
        if found is not None:
            _POOLS[key] = (found[0], found[1] + 1)
            return found[0]
        options = _options(url)

        def configure(con: psycopg.Connection[Any]) -> None:
            _read_json_as_text(con)
            con.execute(f"SET lock_timeout = {max(1, int(lock_seconds * 1000))}")

        pool_module = _pool_module()
        pool = pool_module.ConnectionPool(
            url,
            kwargs=options,
            min_size=0,
            max_size=max(1, size),
            open=True,
            configure=configure,
            check=_check,
            timeout=lock_seconds,
            name=f"aircher-mem {shown(url)}",
        )
        _POOLS[key] = (pool, 1)
        return pool


def _let_go(url: str, lock_seconds: float) -> None:
    """One user fewer of the pool :func:`_pool` gave; the last one closes it."""
    key = (url, lock_seconds)
    with _POOLS_GUARD:
        found = _POOLS.get(key)
        if found is None:
            return
        if found[1] > 1:
            _POOLS[key] = (found[0], found[1] - 1)
            return
        del _POOLS[key]
    found[0].close()


def line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:300] or type(exc).__name__


def translate(statement: str) -> str:
    """A migration statement of the registry (DuckDB's dialect) in PostgreSQL's."""
    for pattern, replacement in _TYPES:
        statement = pattern.sub(replacement, statement)
    return statement


def has_table(con: psycopg.Connection[Any], table: str) -> bool:
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


# -- the store's SQL on a server ----------------------------------------------------------------

# An advisory lock key of the team's writes ("aircherw"): one process writes at a time.
_WRITE_LOCK = 0x61_69_72_63_68_65_72_77
_UPSERT = re.compile(r"INSERT OR (REPLACE|IGNORE) INTO (\w+)(?: \(([^)]*)\))?")
_VECTORS = "unnest(?::FLOAT[][])"  # a list of vectors: PostgreSQL's arrays are rectangular
_ROWID = re.compile(r"\browid\b")
# DuckDB's functions the store calls, each as PostgreSQL writes it (its argument
# list as given: ``{0}``, ``{1}`` its parts at the top level)
_FUNCTIONS = {
    "make_timestamp": "aircher_timestamp({0})",  # from microseconds: see _CHANGES
    "epoch_us": "(extract(epoch FROM {0}) * 1000000)::BIGINT",
    "epoch": "extract(epoch FROM {0})",
    "hour": "extract(hour FROM {0})",
    "contains": "(strpos({0}, {1}) > 0)",
    "json_type": "upper(json_typeof(({0})::json))",
    "json_extract_string": "(({0})::json ->> {1})",
}
_CALL = re.compile(r"\b(" + "|".join(_FUNCTIONS) + r")\(")
_JSON_PATH = re.compile(r"'\$\.(\w+)'")
_CHANGES = (
    "CREATE TABLE IF NOT EXISTS team_changes (seq BIGSERIAL PRIMARY KEY, writer VARCHAR NOT NULL, "
    "at DOUBLE PRECISION NOT NULL DEFAULT extract(epoch FROM clock_timestamp()), changes VARCHAR)",
    # the highest number of the entries trimmed from the log (older than changes_days)
    "CREATE TABLE IF NOT EXISTS team_trimmed (through BIGINT NOT NULL)",
    "INSERT INTO team_trimmed SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM team_trimmed)",
    # DuckDB's make_timestamp of microseconds, exact over the whole range: whole days,
    # then the microseconds left (an interval times a float past 2**53 is not)
    "CREATE OR REPLACE FUNCTION aircher_timestamp(micros BIGINT) RETURNS TIMESTAMP LANGUAGE SQL IMMUTABLE "
    "AS $$ SELECT TIMESTAMP 'epoch' + (micros / 86400000000) * INTERVAL '1 day' "
    "+ (micros % 86400000000) * INTERVAL '1 microsecond' $$",
)
#: Every this many writes, the writer trims the log.
TRIM_EVERY = 1000
#: The channel a write's commit notifies (its number as the payload).
CHANNEL = "aircher_changes"


class ValueRefused(StoreError):
    """The server refused a value of a row (a data exception, a broken constraint),
    as opposed to the connection or the SQL failing."""


def _arguments(text: str, start: int) -> tuple[list[str], int]:
    """The top-level arguments of the call whose ``(`` is at ``start``, and where
    its ``)`` is (parentheses inside string literals are not counted: the store's
    SQL has none)."""
    depth, parts, begun = 0, [], start + 1
    for at in range(start, len(text)):
        char = text[at]
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                parts.append(text[begun:at].strip())
                return parts, at
        elif char == "," and depth == 1:
            parts.append(text[begun:at].strip())
            begun = at + 1
    raise InvalidInputError(f"unbalanced parentheses in {text[:200]!r}")


def _functions(text: str) -> str:
    """``text`` with DuckDB's functions of ``_FUNCTIONS`` in PostgreSQL's words, the
    innermost calls too (``json_extract_string``'s path ``'$.key'`` as ``'key'``)."""
    while (call := _CALL.search(text)) is not None:
        name = call.group(1)
        parts, end = _arguments(text, call.end() - 1)
        parts = [_functions(part) for part in parts]
        if name == "json_extract_string":
            parts[1] = _JSON_PATH.sub(r"'\1'", parts[1])
        text = text[: call.start()] + _FUNCTIONS[name].format(*parts) + text[end + 1 :]
    return text


class Connection:
    """The store's SQL, written in DuckDB's dialect, run on a PostgreSQL server: what
    the long-term store asks of its DuckDB connection (``execute`` returning the
    connection, then ``fetchone``, ``fetchall`` or ``fetchmany`` of that statement),
    each statement translated once (:meth:`dialect`). A server error is a
    :class:`~aircher_mem.errors.StoreError` naming the server.

    The team's writes: :meth:`lock` takes the one lock every writer of the database
    holds while it catches up and writes (a session advisory lock, waited for at most
    ``lock_seconds``); each write transaction adds a row to ``team_changes``
    (:meth:`note`), whose sequence number orders the writes (they are serialized by
    the lock, so a number is never committed after a higher one); a process is
    up to date when it has read through the log's last number (:meth:`last_change`),
    and catches up with the entries after its own (:meth:`entries_after`). Every
    ``TRIM_EVERY`` writes, the entries older than ``changes_days`` are deleted
    (:meth:`trimmed`: a process that had not read through them reads every row).

    Its connections come from the process's pool for the URL (see the module's
    docstring; ``pool_size``: how many the pool keeps at most, given by the first
    Connection of the process to that server): one is taken for each statement, and
    kept from ``BEGIN`` to ``COMMIT`` or ``ROLLBACK``, while the write lock is held
    (:meth:`lock`) and through :meth:`pipelined`. All of them taken and none given
    back within ``lock_seconds`` is a StoreLockedError.
    """

    def __init__(self, url: str, *, lock_seconds: float = 30.0, changes_days: float = 7.0, pool_size: int = 8) -> None:
        self.url = url
        self.where = shown(url)
        self.lock_seconds = lock_seconds
        self.changes_days = changes_days
        self._driver = driver()
        self._pool_module = _pool_module()
        self._pool = _pool(url, lock_seconds, pool_size)
        self._held: psycopg.Connection[Any] | None = None  # the connection taken, while kept
        self._holding = False  # the session holds the write lock
        self._in_transaction = False
        self._piped = False
        self._closed = False
        self._cursor: Any = None
        self._sql: dict[str, str] = {}
        self._catalog: dict[str, tuple[list[str], list[str]]] | None = None
        try:
            with self.pinned() as raw, raw.transaction():
                raw.execute("SELECT pg_advisory_xact_lock(%s)", [_MIGRATE_LOCK])
                for statement in _CHANGES:
                    raw.execute(statement)
        except self._driver.Error as exc:
            self.close()
            raise StoreError(f"{self.where}: preparing the change log failed: {line(exc)}") from None
        except BaseException:
            self.close()
            raise

    def _take(self) -> psycopg.Connection[Any]:
        """The connection kept, or one taken from the pool (kept until :meth:`_settle`)."""
        if self._closed:
            raise StoreError(f"{self.where}: the connection is closed")
        if self._held is None:
            timeout = self._pool_module.PoolTimeout
            first = min(self.lock_seconds, _FIRST_WAIT_SECONDS)
            try:
                try:
                    self._held = self._pool.getconn(timeout=first)
                except timeout:
                    # none free: the server may be gone (its own answer at once), or
                    # every connection is taken (wait for one as long as for the lock)
                    connect(self.url).close()
                    self._held = self._pool.getconn(timeout=max(0.0, self.lock_seconds - first))
            except timeout:
                raise StoreLockedError(
                    f"{self.where}: no connection of this process's pool was free within {self.lock_seconds:g} s "
                    "([store] pool_size connections, each taken by a transaction, a held write lock or a statement)"
                ) from None
            except self._driver.Error as exc:
                raise StoreError(f"{self.where}: {line(exc)}") from None
        return self._held

    def _settle(self) -> None:
        """Gives the connection back to the pool unless a transaction, the write lock
        or a pipeline keeps it (one the server dropped is made again there)."""
        if self._held is None or self._in_transaction or self._holding or self._piped:
            return
        held, self._held = self._held, None
        _GIVEN_BACK[held] = time.monotonic()
        with contextlib.suppress(Exception):  # a pool closed at exit: the connection closes with it
            self._pool.putconn(held)

    @contextlib.contextmanager
    def pinned(self) -> Iterator[psycopg.Connection[Any]]:
        """The connection itself for the block (psycopg's, in autocommit), kept
        until it ends."""
        raw = self._take()
        piped, self._piped = self._piped, True
        try:
            yield raw
        finally:
            self._piped = piped
            self._settle()

    def migrate(self, component: str, *, where: str) -> int:
        """:func:`migrate` on one connection of the pool."""
        with self.pinned() as raw:
            return migrate(raw, component, where=where)

    def _tables(self) -> dict[str, tuple[list[str], list[str]]]:
        """Each table's columns and primary key columns, in order."""
        if self._catalog is None:
            catalog: dict[str, tuple[list[str], list[str]]] = {}
            with self.pinned() as raw:
                columns = raw.execute(
                    "SELECT table_name, column_name FROM information_schema.columns "
                    "WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position"
                ).fetchall()
                keys = raw.execute(
                    "SELECT c.table_name, k.column_name FROM information_schema.table_constraints c "
                    "JOIN information_schema.key_column_usage k ON k.constraint_name = c.constraint_name "
                    "AND k.table_schema = c.table_schema WHERE c.constraint_type = 'PRIMARY KEY' "
                    "AND c.table_schema = current_schema() ORDER BY c.table_name, k.ordinal_position"
                ).fetchall()
            for table, column in columns:
                catalog.setdefault(table, ([], []))[0].append(column)
            for table, column in keys:
                catalog.setdefault(table, ([], []))[1].append(column)
            self._catalog = catalog
        return self._catalog

    def dialect(self, sql: str) -> str:
        """``sql`` as PostgreSQL takes it: ``?`` as ``%s``, the types of casts
        (:func:`translate`), ``INSERT OR REPLACE`` / ``OR IGNORE`` as ``ON CONFLICT``
        on the table's primary key, ``rowid`` as ``ctid``, and a list of vectors as
        a list of array texts (see :meth:`execute`), and DuckDB's functions
        ``make_timestamp`` (of microseconds), ``epoch_us``, ``epoch``, ``hour``,
        ``contains``, ``json_type`` and ``json_extract_string`` in PostgreSQL's
        words."""
        found = self._sql.get(sql)
        if found is not None:
            return found
        text = translate(sql.replace("%", "%%").replace(_VECTORS, "unnest(?::TEXT[])::REAL[]"))
        text = _ROWID.sub("ctid", _functions(text))
        upsert = _UPSERT.search(text)
        if upsert is not None:
            how, table, listed = upsert.groups()
            columns, key = self._tables().get(table, ([], []))
            names = [c.strip() for c in listed.split(",")] if listed else columns
            text = text.replace(upsert.group(0), upsert.group(0).replace(f"OR {how} ", ""), 1)
            others = [c for c in names if c not in key]
            if how == "IGNORE" or not others:
                text += " ON CONFLICT DO NOTHING"
            else:
                text += f" ON CONFLICT ({', '.join(key)}) DO UPDATE SET " + ", ".join(
                    f"{c} = EXCLUDED.{c}" for c in others
                )
        text = text.replace("?", "%s")
        self._sql[sql] = text
        return text

    def execute(self, sql: str, parameters: Any = None) -> Connection:
        """Runs ``sql`` (DuckDB's dialect); its rows are this connection's to fetch
        (psycopg keeps them in this process: the connection goes back to the pool
        before they are read)."""
        if parameters is not None and _VECTORS in sql:
            at = sql[: sql.index(_VECTORS)].count("?")
            parameters = list(parameters)
            parameters[at] = ["{" + ",".join(map(repr, vector)) + "}" for vector in parameters[at]]
        ending = sql.startswith(("COMMIT", "ROLLBACK"))
        if sql == "ROLLBACK" and (self._held is None or self._held.closed or self._held.broken):
            self._in_transaction = False  # nothing to roll back: the server ended it with the connection
            self._settle()
            return self
        raw = self._take()
        try:
            self._cursor = raw.execute(self.dialect(sql), parameters)
        except self._driver.Error as exc:
            if sql == "ROLLBACK":  # after the error that made it: that one is reported
                return self
            refused = isinstance(exc, (self._driver.DataError, self._driver.IntegrityError))
            raise (ValueRefused if refused else StoreError)(f"{self.where}: {line(exc)}") from None
        else:
            if sql.startswith("BEGIN"):
                self._in_transaction = True
        finally:
            if ending or raw.closed or raw.broken:
                self._in_transaction = False
            self._settle()
        return self

    @contextlib.contextmanager
    def pipelined(self) -> Iterator[None]:
        """Statements whose rows are not read, sent together (libpq's pipeline mode):
        one round trip at the block's end, where a statement the server refused
        raises StoreError."""
        try:
            with self.pinned() as raw, raw.pipeline():
                yield
        except self._driver.Error as exc:
            raise StoreError(f"{self.where}: {line(exc)}") from None

    def fetchone(self) -> tuple[Any, ...] | None:
        row: tuple[Any, ...] | None = self._cursor.fetchone()
        return row

    def fetchall(self) -> list[tuple[Any, ...]]:
        return list(self._cursor.fetchall())

    def fetchmany(self, size: int) -> list[tuple[Any, ...]]:
        return list(self._cursor.fetchmany(size))

    def close(self) -> None:
        """Gives the connection kept back (a transaction left open is rolled back
        there) and lets the pool go (the process's last user closes it)."""
        if self._closed:
            return
        self._holding = self._in_transaction = self._piped = False
        self._settle()
        self._closed = True
        _let_go(self.url, self.lock_seconds)

    def user(self) -> str:
        """The role this connection logged in as (``session_user``: a URL's
        ``options=-c role=...`` may act as a role that owns the tables)."""
        row = self.execute("SELECT session_user").fetchone()
        assert row is not None
        return str(row[0])

    # the team's writes

    def lock(self) -> None:
        """Waits for the team's write lock (StoreLockedError after ``lock_seconds``);
        the connection is kept until :meth:`unlock`."""
        self._wait_for("SELECT pg_advisory_lock(%s)", _WRITE_LOCK, hold=True)

    def unlock(self) -> None:
        """Gives the write lock up (a connection that broke has given it up already),
        and the connection back."""
        self._holding = False
        held = self._held
        try:
            if held is not None and not (held.closed or held.broken):
                held.execute("SELECT pg_advisory_unlock(%s)", [_WRITE_LOCK])
        except self._driver.Error as exc:
            log.warning("%s: giving the write lock up failed: %s", self.where, line(exc))
        finally:
            self._settle()

    def lock_in_transaction(self, key: int = _WRITE_LOCK) -> None:
        """The write lock (or the lock ``key``) until the transaction under way ends
        (StoreLockedError after ``lock_seconds``)."""
        self._wait_for("SELECT pg_advisory_xact_lock(%s)", key)

    def _wait_for(self, sql: str, key: int, *, hold: bool = False) -> None:
        """Takes an advisory lock: StoreLockedError when another held it for over
        ``lock_seconds`` (the connection's ``lock_timeout``)."""
        raw = self._take()
        try:
            raw.execute(sql, [key])
            self._holding = self._holding or hold
        except self._driver.errors.LockNotAvailable:
            raise StoreLockedError(
                f"{self.where}: another process held the team's write lock for over {self.lock_seconds:g} s"
            ) from None
        except self._driver.Error as exc:
            raise StoreError(f"{self.where}: {line(exc)}") from None
        finally:
            if raw.closed or raw.broken:
                self._in_transaction = False
            self._settle()

    def last_change(self) -> int:
        """The number of the last write committed (0: none yet)."""
        row = self.execute("SELECT coalesce(max(seq), 0) FROM team_changes").fetchone()
        return int(row[0]) if row else 0

    def entries_after(self, seq: int) -> list[tuple[int, str, str | None]]:
        """The change log after change ``seq``: each write's number, writer and what
        it wrote (None: anything)."""
        return [
            (int(n), w, c)
            for n, w, c in self.execute(
                "SELECT seq, writer, changes FROM team_changes WHERE seq > ? ORDER BY seq", [seq]
            ).fetchall()
        ]

    def note(self, writer: str, changes: str | None) -> int:
        """In a write transaction: its entry in the log (``changes``: what it wrote,
        None: anything); returns its number."""
        row = self.execute(
            "INSERT INTO team_changes (writer, changes) VALUES (?, ?) RETURNING seq", [writer, changes]
        ).fetchone()
        assert row is not None
        seq = int(row[0])
        self.execute("SELECT pg_notify(?, ?)", [CHANNEL, str(seq)])  # sent when the write commits
        if seq % TRIM_EVERY == 0:
            self.execute(
                "WITH gone AS (DELETE FROM team_changes WHERE at < extract(epoch FROM clock_timestamp()) - ? "
                "RETURNING seq) UPDATE team_trimmed SET through = greatest(through, (SELECT max(seq) FROM gone)) "
                "WHERE EXISTS (SELECT 1 FROM gone)",
                [self.changes_days * 86_400.0],
            )
        return seq

    def trimmed(self) -> int:
        """The highest number trimmed from the log (older than ``changes_days``): a
        process that read through less than it reads every row again."""
        row = self.execute("SELECT through FROM team_trimmed").fetchone()
        return int(row[0]) if row else 0

    def vacuum(self, tables: tuple[str, ...]) -> None:
        """Rewrites ``tables`` (``VACUUM FULL``): the rows deleted from them leave the
        server's data files (its write-ahead log keeps them until it is recycled)."""
        try:
            with self.pinned() as raw:
                raw.execute(f"VACUUM FULL {', '.join(tables)}")
        except self._driver.Error as exc:
            raise StoreError(f"{self.where}: rewriting the tables after a forget failed: {line(exc)}") from None


class Listener:
    """A thread that calls ``woken()`` after the commit of writes to the team's
    database (``LISTEN`` on :data:`CHANNEL`, on a connection of its own; the
    notifications that arrive together make one call), so that a long-running
    process catches up before anyone asks. A lost connection is made again after
    ``retry_seconds``. :meth:`close` stops it."""

    def __init__(self, url: str, woken: Callable[[], None], *, retry_seconds: float = 1.0) -> None:
        self.url = url
        self.where = shown(url)
        self.woken = woken
        self.retry_seconds = retry_seconds
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="aircher-mem-team-listen", daemon=True)

    def start(self) -> Listener:
        self._thread.start()
        return self

    def _run(self) -> None:
        pg = driver()
        while not self._stop.is_set():
            con = None
            try:
                con = connect(self.url)
                con.execute(f"LISTEN {CHANNEL}")
                while not self._stop.is_set():
                    if any(True for _ in con.notifies(timeout=0.5, stop_after=1)):
                        for _ in con.notifies(timeout=0.0):  # the rest of a burst: one call
                            pass
                        self.woken()
            except (StoreError, pg.Error) as exc:
                log.warning("%s: listening for writes failed, trying again: %s", self.where, line(exc))
                self._stop.wait(self.retry_seconds)
            finally:
                if con is not None:
                    con.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
