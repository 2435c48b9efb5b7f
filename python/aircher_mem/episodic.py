"""Episodic memory: what the agent did, across sessions, in one DuckDB file (or
on a team's PostgreSQL server).

Every tool execution, file interaction, task, context snapshot and learning is
recorded; the queries answer "have I worked on this file before", "which files are
edited together", "how reliable is this tool", "what was I doing" and "have I done
something like this before".

Writes are buffered and inserted in batches (one ``INSERT ... SELECT unnest(...)``
per table: DuckDB's per-row ``executemany`` costs about a millisecond a row), so a
``record_*`` call costs microseconds; ``flush()`` makes them durable, every query
flushes first, and ``close()`` (also run at interpreter exit) flushes and closes.
Task lifecycle changes are written at once.

Every argument is checked against its column AT THE CALL: a value the store could
not hold (an integer outside BIGINT, a time outside :data:`aircher_mem.checks.MIN_TIME`
to :data:`~aircher_mem.checks.MAX_TIME`, NaN, a string with
a lone surrogate, JSON that is not serialisable or nested deeper than
:data:`MAX_JSON_DEPTH`) raises :class:`InvalidInputError` naming the field and
nothing is buffered. Should a buffered row still fail to insert, ``flush()`` finds
it (bisecting the batch), drops it with a logged warning and writes every other
row, so one bad record never blocks later writes or ``close()``.

Secrets never reach the file in clear: tool parameters, results and error
messages, file interaction context and changes summaries, task descriptions and
outcomes, snapshot items, learnings, session ids, task ids and file paths go
through :mod:`aircher_mem.redact` before they are buffered (each secret becomes
``[REDACTED:<kind>:<hash>]``; an id or path that holds one is known by its
redacted form, ``EpisodicMemory.session_id`` and ``current_task_id`` too, and the
id or path as given still finds its rows). E-mail
addresses and phone numbers are kept and tagged: ``"_pii": ["email", "phone"]`` in a
tool execution's stored ``parameters`` and in a learning's ``data``.

Queries check theirs too (limits 1 to :data:`MAX_LIMIT`, ``days`` and seconds
finite and >= 0, strings real ``str`` without lone surrogates): every error a
method raises is an :class:`AircherError`; DuckDB's own become :class:`StoreError`
(:class:`StoreCorruptError` when the file cannot be read).

A NUL character in a text or a JSON string is kept as U+FFFD (PostgreSQL's text
holds none): the same on both backends.

On a team's server (``url``: :mod:`aircher_mem.postgres`) the same tables and
queries serve every process and machine given the URL. A write transaction (a
flush, a task started or changed) holds the episodic write lock (an advisory lock
of its own: long-term writes do not wait for it), so that a row's id orders it and
the co-edit count reads every pair once, and counts itself in ``episodic_writes``.
What this store keeps in memory (the recent files and calls, the tasks of each file,
the tasks' usage, the index of ``find_similar_tasks``) is read again when that count
says another process wrote since. A task's ``files_touched`` and ``tools_used`` are
added to as stored when a flush writes them, so two processes recording under one
task lose neither's.
"""

from __future__ import annotations

import atexit
import contextlib
import heapq
import json
import logging
import math
import os
import re
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar, cast

if TYPE_CHECKING:
    from . import postgres

from . import checks, store
from ._core import LexicalIndex, tokenize
from .checks import MIN_TIME
from .checks import unix_time as _time
from .config import EpisodicPolicy, RetrievalPolicy
from .digest import sha256_hex
from .errors import AircherError, InvalidInputError, StoreError, TaskStateError, UnknownTaskError
from .redact import pii_tags, redact, redact_value
from .results import CoEdit, FileInteraction, LearnedPattern, Task, ToolRun, ToolStats

__all__ = ["EpisodicMemory", "SCHEMA_VERSION", "OPERATIONS", "MAX_JSON_DEPTH", "MAX_LIMIT"]

log = logging.getLogger("aircher_mem.episodic")

T = TypeVar("T")
#: The thread of ``EpisodicMemory.read_aside`` (one for every store: work waits its turn) ...
_READER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="aircher-episodic-aside")
#: ... and, while it runs a store's work, that store and its connection there.
_ASIDE = threading.local()
#: Tasks started or changed, per store file (or team's server), in this process.
_TASKS_CHANGED: Counter[str] = Counter()

OPERATIONS = ("read", "write", "edit", "search", "analyze", "viewed")
"""File operations: the five an agent performs on a file, plus "viewed" for code pruned
from the context."""

# An advisory lock key of a team's episodic writes ("airchere"): one process writes
# them at a time, so that a row's id orders it (the co-edit count reads the rows
# after the last one it counted) and the caches know when another wrote.
_WRITE_LOCK = 0x61_69_72_63_68_65_72_65

TASK_STATUSES = ("active", "paused", "completed", "failed")
INTENTS = ("CodeReading", "CodeWriting", "ProjectFixing", "ProjectExploration")

# Schema migrations, applied in order inside one transaction. Version 1 is the six
# tables; later versions only add. Never edit a released step: add a new one.
#
# No secondary indexes: indexes on (file_path, session+file, operation+time, tool,
# task, status, ...) measurably helped nothing. On 100K file interactions, DuckDB's
# zone maps and vectorized scans answered file_history in 4.5 ms with or without an
# index on file_path, and inserts were no faster (benches/bench_episodic.py keeps the
# comparison). The primary keys and the UNIQUE task_id stay: they are constraints.
_MIGRATIONS: dict[int, list[str]] = {
    1: [
        "CREATE TABLE schema_meta (version INTEGER NOT NULL)",
        "INSERT INTO schema_meta VALUES (0)",
        "CREATE SEQUENCE tool_executions_id",
        """CREATE TABLE tool_executions (
            id BIGINT PRIMARY KEY DEFAULT nextval('tool_executions_id'),
            timestamp TIMESTAMP NOT NULL, session_id VARCHAR NOT NULL, task_id VARCHAR,
            tool_name VARCHAR NOT NULL, parameters JSON NOT NULL, result JSON,
            success BOOLEAN NOT NULL, error_message TEXT, duration_ms INTEGER, context_tokens INTEGER)""",
        "CREATE SEQUENCE file_interactions_id",
        """CREATE TABLE file_interactions (
            id BIGINT PRIMARY KEY DEFAULT nextval('file_interactions_id'),
            timestamp TIMESTAMP NOT NULL, session_id VARCHAR NOT NULL, task_id VARCHAR,
            file_path VARCHAR NOT NULL, operation VARCHAR NOT NULL, line_range JSON,
            success BOOLEAN NOT NULL, context TEXT, changes_summary TEXT)""",
        "CREATE SEQUENCE task_history_id",
        """CREATE TABLE task_history (
            id BIGINT PRIMARY KEY DEFAULT nextval('task_history_id'),
            task_id VARCHAR UNIQUE NOT NULL, session_id VARCHAR NOT NULL, description TEXT NOT NULL,
            intent VARCHAR, status VARCHAR NOT NULL, started_at TIMESTAMP NOT NULL,
            completed_at TIMESTAMP, files_touched JSON, tools_used JSON, outcome TEXT)""",
        "CREATE SEQUENCE context_snapshots_id",
        """CREATE TABLE context_snapshots (
            id BIGINT PRIMARY KEY DEFAULT nextval('context_snapshots_id'),
            timestamp TIMESTAMP NOT NULL, session_id VARCHAR NOT NULL, task_id VARCHAR,
            context_items JSON NOT NULL, total_tokens INTEGER NOT NULL, pruned_items JSON,
            reason VARCHAR NOT NULL)""",
        "CREATE SEQUENCE learned_patterns_id",
        """CREATE TABLE learned_patterns (
            id BIGINT PRIMARY KEY DEFAULT nextval('learned_patterns_id'),
            pattern_type VARCHAR NOT NULL, pattern_data JSON NOT NULL, confidence FLOAT NOT NULL,
            observed_count INTEGER NOT NULL, first_seen TIMESTAMP NOT NULL, last_seen TIMESTAMP NOT NULL)""",
        "CREATE SEQUENCE session_learnings_id",
        """CREATE TABLE session_learnings (
            id BIGINT PRIMARY KEY DEFAULT nextval('session_learnings_id'),
            session_id VARCHAR NOT NULL, learning_type VARCHAR NOT NULL, data JSON NOT NULL,
            confidence FLOAT NOT NULL)""",
    ],
    2: [
        # Incremental pattern updates need a stable key per pattern; version 1's
        # session_learnings has no time.
        "ALTER TABLE learned_patterns ADD COLUMN pattern_key VARCHAR",
        "ALTER TABLE session_learnings ADD COLUMN created_at TIMESTAMP",
    ],
    3: [
        # Durations and token counts are 64-bit: a 25-day tool run or a 2**31-token
        # context is rare but real, and INTEGER made such a row fail every flush.
        "ALTER TABLE tool_executions ALTER COLUMN duration_ms TYPE BIGINT",
        "ALTER TABLE tool_executions ALTER COLUMN context_tokens TYPE BIGINT",
        "ALTER TABLE context_snapshots ALTER COLUMN total_tokens TYPE BIGINT",
    ],
    4: [
        # The hooks' journals written into the store, each in the transaction that
        # wrote its records: a journal found again after a crash is not written twice.
        "CREATE TABLE drained_journals (id VARCHAR PRIMARY KEY, drained_at TIMESTAMP NOT NULL)",
    ],
    5: [
        # The git branch a task was started on: the predictive engine's branch signal.
        "ALTER TABLE task_history ADD COLUMN branch VARCHAR",
    ],
    6: [
        # The idempotency keys of the records stored (a SHA-256 digest of each), each
        # in the transaction that wrote its record: a retry is not stored twice.
        "CREATE TABLE record_keys (digest VARCHAR PRIMARY KEY, stored_at TIMESTAMP NOT NULL)",
    ],
}
store.register("episodic", _MIGRATIONS)
SCHEMA_VERSION = store.latest_version("episodic")

# Column order of each buffered table, and how each value is cast in the batch insert.
_COLUMNS: dict[str, list[tuple[str, str]]] = {
    "tool_executions": [
        ("timestamp", "TIMESTAMP"),
        ("session_id", "VARCHAR"),
        ("task_id", "VARCHAR"),
        ("tool_name", "VARCHAR"),
        ("parameters", "JSON"),
        ("result", "JSON"),
        ("success", "BOOLEAN"),
        ("error_message", "VARCHAR"),
        ("duration_ms", "BIGINT"),
        ("context_tokens", "BIGINT"),
    ],
    "file_interactions": [
        ("timestamp", "TIMESTAMP"),
        ("session_id", "VARCHAR"),
        ("task_id", "VARCHAR"),
        ("file_path", "VARCHAR"),
        ("operation", "VARCHAR"),
        ("line_range", "JSON"),
        ("success", "BOOLEAN"),
        ("context", "VARCHAR"),
        ("changes_summary", "VARCHAR"),
    ],
    "context_snapshots": [
        ("timestamp", "TIMESTAMP"),
        ("session_id", "VARCHAR"),
        ("task_id", "VARCHAR"),
        ("context_items", "JSON"),
        ("total_tokens", "BIGINT"),
        ("pruned_items", "JSON"),
        ("reason", "VARCHAR"),
    ],
    "session_learnings": [
        ("session_id", "VARCHAR"),
        ("learning_type", "VARCHAR"),
        ("data", "JSON"),
        ("confidence", "FLOAT"),
        ("created_at", "TIMESTAMP"),
    ],
    "drained_journals": [
        ("id", "VARCHAR"),
        ("drained_at", "TIMESTAMP"),
    ],
}


class _Refused(StoreError):
    """The store file refused a value of a row."""


def _refused(exc: BaseException) -> bool:
    """Whether ``exc`` is the store refusing a value (as opposed to the file, the
    server, the connection or the SQL failing)."""
    if isinstance(exc, StoreError):
        from . import postgres  # a team's server refuses with postgres.ValueRefused

        return isinstance(exc, (_Refused, postgres.ValueRefused))
    duckdb = store.engine()
    return isinstance(
        exc,
        (
            duckdb.ConversionException,
            duckdb.ConstraintException,
            duckdb.InvalidInputException,
            duckdb.OutOfRangeException,
            duckdb.TypeMismatchException,
        ),
    )


# A JSON text's escaped backslash, or its escape of NUL
_JSON_NUL = re.compile(r"\\\\|\\u0000")


def _stored(text: str) -> str:
    """A text as the store keeps it: a NUL character (PostgreSQL's text holds none)
    as U+FFFD, on either backend."""
    return text.replace("\x00", "\ufffd")


def _batch_insert_sql(table: str) -> str:
    names = ", ".join(name for name, _ in _COLUMNS[table])
    values = ", ".join(
        "make_timestamp(unnest(?::BIGINT[]))"
        if kind == "TIMESTAMP"
        else f"unnest(?::{'VARCHAR' if kind == 'JSON' else kind}[])::{kind}"
        for _, kind in _COLUMNS[table]
    )
    return f"INSERT INTO {table} ({names}) SELECT {values}"


MAX_JSON_DEPTH = 64
"""How deeply a JSON value (parameters, results, snapshot items, learning data) may nest."""

MAX_LIMIT = checks.MAX_LIMIT
"""The largest ``limit`` a query takes."""


def _named(result: Any) -> list[str]:
    """The files a stored tool result names (its ``mentions``)."""
    named = result.get("mentions") if isinstance(result, dict) else None
    return [p for p in named if isinstance(p, str)] if isinstance(named, list) else []


def _micros(seconds: float) -> int:
    return round(seconds * 1_000_000)


def _text(field: str, value: object, *, max_chars: int | None = None, blank: bool = False) -> str:
    """A text checked (:func:`aircher_mem.checks.text`), as the store keeps it."""
    return _stored(checks.text(field, value, max_chars=max_chars, blank=blank))


def _optional_text(field: str, value: object) -> str | None:
    return None if value is None else _text(field, value, blank=True)


def _count(field: str, value: object) -> int | None:
    return None if value is None else checks.integer(field, value)


def _check_json(field: str, value: object) -> None:
    """Checks, without recursion, that ``value`` is plain JSON data the store can
    hold: dicts (keys str, int, float, bool or None), lists, tuples, strs without
    lone surrogates, ints, finite floats, bools, None; at most MAX_JSON_DEPTH deep."""
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            checks.text(field, item, max_chars=None, blank=True)
        elif item is None or isinstance(item, (bool, int)):
            pass
        elif isinstance(item, float):
            if not math.isfinite(item):
                raise InvalidInputError(f"{field} must be JSON-serializable: {item!r} is not a JSON number")
        elif isinstance(item, (dict, list, tuple)):
            if depth >= MAX_JSON_DEPTH:
                raise InvalidInputError(f"{field} is nested deeper than {MAX_JSON_DEPTH} levels")
            if isinstance(item, dict):
                for key, child in item.items():
                    if not (key is None or isinstance(key, (str, int, float))):
                        raise InvalidInputError(
                            f"{field} must be JSON-serializable: keys must be str, int, float, bool or None, "
                            f"not {type(key).__name__}"
                        )
                    stack.append((key, depth + 1))
                    stack.append((child, depth + 1))
            else:
                stack.extend((child, depth + 1) for child in item)
        else:
            raise InvalidInputError(
                f"{field} must be JSON-serializable: Object of type {type(item).__name__} is not JSON serializable"
            )


def _redacted_text(field: str, value: object) -> str | None:
    """An optional text checked, then with its secrets redacted."""
    return None if value is None else redact(_text(field, value, blank=True))


def _key(field: str, value: object, *, written: bool = False) -> str:
    """A session id, task id or file path as the store keeps it and is asked for it:
    checked (not empty when ``written``), its secrets redacted the same way each time,
    so the value given finds its rows."""
    return redact(_text(field, value, blank=not written))


def _redacted(field: str, value: Any) -> Any:
    """A JSON value checked, then with its secrets redacted (tuples become lists)."""
    _check_json(field, value)
    return redact_value(value)


def _json(field: str, value: Any) -> str | None:
    """A JSON value as text (checked; call :func:`_redacted` first for content)."""
    if value is None:
        return None
    _check_json(field, value)
    try:
        text = json.dumps(value, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as exc:
        raise InvalidInputError(f"{field} must be JSON-serializable: {exc}") from None
    if "\\u0000" in text:  # a NUL in a string: kept as U+FFFD (see _stored)
        text = _JSON_NUL.sub(lambda m: m.group(0) if m.group(0) == "\\\\" else "\\ufffd", text)
    return text


# A JSON text's escaped backslash, or its escape of a control character
_JSON_CONTROL = re.compile(r"\\\\|\\u00[0-9a-f]{2}")


def _compact(value: Any) -> str:
    """JSON text as DuckDB's ``to_json`` writes it (no spaces, characters as they
    are but control characters, whose escapes have upper-case digits): a learned
    pattern's key and data."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return _JSON_CONTROL.sub(lambda m: m.group(0)[:2] + m.group(0)[2:].upper(), text)


def _co_edit_key(f1: str, f2: str) -> str:
    """The key of the co-edit pattern of two files (``f1`` < ``f2``)."""
    return "co-edit:" + _compact([f1, f2])


class _Usage(NamedTuple):
    """What one record added to its task's usage: a file touched, a tool called."""

    task_id: str
    file: str | None
    tool: str | None


def _usage(row: Sequence[Any]) -> tuple[list[str], Counter[str]]:
    """A task's ``files_touched`` and ``tools_used`` as stored."""
    return json.loads(row[0] or "[]"), Counter(json.loads(row[1] or "{}"))


class _Recent:
    """What the predictive engine asks on every call, kept in memory: per task (and
    for all tasks: key None) each file worked on with the time and order of its last
    interaction, and the newest tool calls that named files (at most ``KEEP`` a key).
    Loaded from the store on first use, then kept current by the record methods
    (and loaded again after another process wrote to a team's store)."""

    KEEP = 64

    def __init__(self) -> None:
        self.files: dict[str | None, dict[str, tuple[int, int]]] = {}
        self.calls: dict[str | None, list[tuple[int, int, list[str]]]] = {}
        self.cut: set[str | None] = set()  # keys with more calls in the store than kept
        self.seq = 0

    def file(self, task: str | None, path: str, micros: int, seq: int | None = None) -> None:
        if seq is None:
            self.seq += 1
            seq = self.seq
        for key in (None, task) if task is not None else (None,):
            known = self.files.setdefault(key, {})
            if known.get(path, (-1, -1)) < (micros, seq):
                known[path] = (micros, seq)

    def call(self, task: str | None, micros: int, named: list[str], seq: int | None = None) -> None:
        if seq is None:
            self.seq += 1
            seq = self.seq
        for key in (None, task) if task is not None else (None,):
            kept = self.calls.setdefault(key, [])
            kept.append((micros, seq, named))
            if len(kept) > 2 * self.KEEP:
                kept.sort(reverse=True)
                del kept[self.KEEP :]
                self.cut.add(key)

    def recent_files(self, task: str | None, limit: int) -> list[str]:
        known = self.files.get(task, {})
        return [path for path, _ in heapq.nlargest(limit, known.items(), key=lambda kv: kv[1])]

    def recent_calls(self, task: str | None, calls: int) -> list[list[str]] | None:
        """The mentions of the newest ``calls`` calls, newest first; None when more
        are asked than are kept."""
        kept = self.calls.get(task, [])
        if calls > self.KEEP and task in self.cut:
            return None
        return [named for _, _, named in heapq.nlargest(calls, kept)]


class EpisodicMemory(store.StoreHolder):
    """The six tables (tool executions, file interactions, tasks, context snapshots,
    learned patterns, session learnings) in one DuckDB file (``":memory:"`` for tests).

    Opening migrates an older file forward; a newer file raises
    :class:`SchemaVersionError` and is not modified. A file another process holds
    raises :class:`StoreLockedError`; one that is not a DuckDB database,
    :class:`StoreCorruptError`.
    """

    _store_name = "episodic store"
    _exit_log = log

    def __init__(
        self,
        path: str | Path = ":memory:",
        *,
        session_id: str | None = None,
        batch_size: int | None = None,
        clock: Callable[[], float] = time.time,
        policy: EpisodicPolicy | None = None,
        search: RetrievalPolicy | None = None,
        url: str = "",
        lock_seconds: float = 30.0,
        pool_size: int = 8,
    ) -> None:
        """``policy`` sets batch size and co-edit window (``batch_size`` overrides
        it); ``search`` the BM25 constants of :meth:`find_similar_tasks`. ``url``
        keeps the tables on a team's PostgreSQL server instead of the file
        (``[store]`` url, lock_seconds: how long a write waits for another
        process's, and pool_size: the connections the process keeps there)."""
        self.policy = policy or EpisodicPolicy()
        self.search = search or RetrievalPolicy()
        if batch_size is None:
            batch_size = self.policy.batch_size
        batch_size = checks.integer("batch_size", batch_size, 1)
        if not isinstance(path, (str, Path)):
            raise InvalidInputError(f"path must be a str or a Path, got {type(path).__name__}")
        if not callable(clock):
            raise InvalidInputError(f"clock must be callable, got {checks.short(clock)}")
        #: On a team's PostgreSQL server (``url``), else in the DuckDB file at ``path``.
        self.team = bool(url)
        if url:  # not at import: a hook that opens the file never loads psycopg's side
            from . import postgres
        self.path = postgres.shown(url) if url else str(path)
        # 128 random bits, as uuid4().hex gives (importing uuid costs a hook 3 ms)
        self.session_id = _redacted_text("session_id", session_id) or os.urandom(16).hex()
        self.batch_size = batch_size
        self.clock = clock
        self.current_task_id: str | None = None
        self._url, self._lock_seconds, self._pool_size = url, lock_seconds, pool_size
        self._con = self._connect() if url else store.connect(self.path, self)
        # a team's store: the number of writes to the tables that the caches below
        # (_task_usage, _touched, _recent, _task_index) hold (see _fresh)
        self._generation = -1
        self._pending: dict[str, list[tuple[Any, ...]]] = {table: [] for table in _COLUMNS}
        self._whole = 0  # depth of whole() blocks
        self._pending_rows = 0
        # task_id -> (files touched in order, tool counts) as stored and recorded since ...
        self._task_usage: dict[str, tuple[list[str], Counter[str]]] = {}
        # ... and what was recorded since the last flush (added to the stored at the
        # next): the records that touched each file, the calls of each tool
        self._usage_added: dict[str, tuple[Counter[str], Counter[str]]] = {}
        # (task_id, file_path) -> (tool, error) of a failed call not yet fixed; then
        # whether the file was edited since.
        self._open_errors: dict[tuple[str | None, str], tuple[str, str, bool]] = {}
        self._touched: tuple[dict[str, set[str]], dict[str, set[str]]] | None = None  # see _companions
        self._recent: _Recent | None = None  # see _recency
        self._fixes: list[tuple[str, str, str, float]] = []
        # the digests of the idempotency keys of records buffered, with the record's
        # table, row and what it added to its task's usage (see _keep), and those
        # _write found stored already (the record is not written)
        self._pending_keys: dict[str, tuple[str, tuple[Any, ...], _Usage | None]] = {}
        self._taken_keys: set[str] = set()
        # find_similar_tasks' index: ((excluded task, tasks' generation), index), built
        # again when another task is current or a task is started or changes status
        # or outcome: by any holder of the store in this process (or another process
        # wrote to a team's store: see _fresh).
        self._task_index: tuple[tuple[Any, ...], LexicalIndex] | None = None
        if url:
            self._tasks_key = url
        else:
            self._tasks_key = os.path.realpath(self.path) if self.path != ":memory:" else f":memory:{id(self)}"
        self._aside: Any = None  # the connection of read_aside, made on first use ...
        self._aside_work: Future[Any] | None = None  # ... and the work last started there
        self._closed = False
        if not url:
            try:
                store.migrate(self._con, "episodic", path=self.path)
            except BaseException:
                store.disconnect(self._con, self.path, self)
                raise
        atexit.register(self._close_at_exit)

    # -- opening -----------------------------------------------------------------------

    def _connect(self) -> Any:
        """A connection to the team's server, its tables migrated, and the count of
        writes to them (``episodic_writes``: see :meth:`_fresh`)."""
        team = self._team_connection()
        try:
            team.migrate("episodic", where=self.path)
            team.execute("BEGIN TRANSACTION")
            team.lock_in_transaction(_WRITE_LOCK)
            team.execute("CREATE TABLE IF NOT EXISTS episodic_writes (n BIGINT NOT NULL)")
            team.execute("INSERT INTO episodic_writes SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM episodic_writes)")
            team.execute("COMMIT")
        except BaseException:
            team.close()
            raise
        return team

    def _team_connection(self) -> Any:
        """A connection to the team's server, from the process's pool for it."""
        from . import postgres

        return postgres.Connection(self._url, lock_seconds=self._lock_seconds, pool_size=self._pool_size)

    @property
    def schema_version(self) -> int:
        if self.team:
            row = self._con.execute("SELECT version FROM schema_versions WHERE component = 'episodic'").fetchone()
            return int(row[0]) if row else 0
        return store.schema_version(self._con, "episodic")

    # -- recording ---------------------------------------------------------------------

    def _now(self, timestamp: float | None) -> float:
        return _time("timestamp", self.clock() if timestamp is None else timestamp)

    def _task(self, task_id: str | None) -> str | None:
        return self.current_task_id if task_id is None else _key("task_id", task_id, written=True)

    def _buffer(self, table: str, row: tuple[Any, ...]) -> None:
        self._check_open()
        self._pending[table].append(row)
        self._pending_rows += 1
        if self._pending_rows >= self.batch_size and not self._whole:
            self.flush()

    @contextlib.contextmanager
    def whole(self) -> Iterator[None]:
        """Nothing buffered in the block is flushed before the caller's own
        :meth:`flush`: not every ``batch_size`` rows (what must commit in one
        transaction, such as a journal and its mark)."""
        self._whole += 1
        try:
            yield
        finally:
            self._whole -= 1

    def journal_drained(self, journal_id: str) -> bool:
        """Whether the hooks' journal ``journal_id`` was written into the store."""
        return bool(self._read("SELECT count(*) FROM drained_journals WHERE id = ?", [journal_id])[0][0])

    def mark_journal(self, journal_id: str, *, at: float | None = None) -> None:
        """Buffers the mark that the journal ``journal_id`` is written: it commits
        with the records buffered before the next flush."""
        self._buffer("drained_journals", (_text("journal id", journal_id, max_chars=200), _micros(self._now(at))))

    def record_tool_execution(
        self,
        tool_name: str,
        parameters: Mapping[str, Any] | None = None,
        *,
        result: Any = None,
        success: bool = True,
        error_message: str | None = None,
        duration_ms: int | None = None,
        context_tokens: int | None = None,
        file_path: str | None = None,
        task_id: str | None = None,
        timestamp: float | None = None,
        idempotency_key: str | None = None,
    ) -> bool:
        """One tool call. ``file_path`` (stored in ``parameters``) ties it to a file
        for the error-then-fix pattern. See :meth:`_keep` for ``idempotency_key``
        and what is returned."""
        self._check_open()
        if parameters is not None and not isinstance(parameters, Mapping):
            raise InvalidInputError(f"parameters must be a mapping, got {type(parameters).__name__}")
        params = dict(parameters or {})
        if file_path is not None:
            params.setdefault("file_path", _text("file_path", file_path, blank=True))
        target = params.get("file_path")
        stored_params = _redacted("parameters", params)
        stored_result = _redacted("result", result)
        error = _redacted_text("error_message", error_message)
        tags = pii_tags([stored_params, stored_result, error])
        if tags:
            stored_params["_pii"] = tags
        row = (
            _micros(self._now(timestamp)),
            self.session_id,
            self._task(task_id),
            _text("tool_name", tool_name),
            _json("parameters", stored_params),
            _json("result", stored_result),
            checks.flag("success", success),
            error,
            _count("duration_ms", duration_ms),
            _count("context_tokens", context_tokens),
        )
        digest = self._key_digest(idempotency_key)
        if digest is not None and self._key_stored(digest):
            return False
        task = row[2]
        usage = self._note_usage(task, tool=tool_name)
        named = _named(stored_result)
        if self._recent is not None and named:
            self._recent.call(task, row[0], named)
        if isinstance(target, str):
            self._track_error_fix(task, _key("file_path", target), tool_name, success, error, row[0] / 1e6)
        return self._keep("tool_executions", row, digest, usage)

    def record_file_interaction(
        self,
        file_path: str,
        operation: str,
        *,
        line_range: tuple[int, int] | None = None,
        success: bool = True,
        context: str | None = None,
        changes_summary: str | None = None,
        task_id: str | None = None,
        session_id: str | None = None,
        timestamp: float | None = None,
        idempotency_key: str | None = None,
    ) -> bool:
        """A read, write, edit, search, analyze, or a "viewed" (pruned code). See
        :meth:`_keep` for ``idempotency_key`` and what is returned."""
        self._check_open()
        if not isinstance(operation, str) or operation not in OPERATIONS:
            raise InvalidInputError(f"operation must be one of {', '.join(OPERATIONS)}, got {checks.short(operation)}")
        span = None
        if line_range is not None:
            if not isinstance(line_range, (tuple, list)) or len(line_range) != 2:
                raise InvalidInputError(f"line_range must be (start, end), got {checks.short(line_range)}")
            start = checks.integer("line_range start", line_range[0])
            end = checks.integer("line_range end", line_range[1])
            if start > end:
                raise InvalidInputError(
                    f"line_range must be (start, end) with start <= end, got {checks.short(line_range)}"
                )
            span = json.dumps({"start": start, "end": end})
        file_path = _key("file_path", file_path, written=True)
        row = (
            _micros(self._now(timestamp)),
            self.session_id if session_id is None else _key("session_id", session_id, written=True),
            self._task(task_id),
            file_path,
            operation,
            span,
            checks.flag("success", success),
            _redacted_text("context", context),
            _redacted_text("changes_summary", changes_summary),
        )
        digest = self._key_digest(idempotency_key)
        if digest is not None and self._key_stored(digest):
            return False
        task = row[2]
        usage = None
        if success and operation != "viewed":
            usage = self._note_usage(task, file=file_path)
            if self._recent is not None:
                self._recent.file(task, file_path, row[0])
            if self._touched is not None and task is not None:
                self._touched[0].setdefault(file_path, set()).add(task)
                self._touched[1].setdefault(task, set()).add(file_path)
        if success and operation in ("write", "edit") and (task, file_path) in self._open_errors:
            tool, error, _ = self._open_errors[(task, file_path)]
            self._open_errors[(task, file_path)] = (tool, error, True)
        return self._keep("file_interactions", row, digest, usage)

    @staticmethod
    def _key_digest(key: object) -> str | None:
        """An idempotency key (checked) as the store keeps it: its SHA-256 in hex."""
        if key is None:
            return None
        return sha256_hex(checks.text("idempotency_key", key, max_chars=1000).encode("utf-8"))

    def _key_stored(self, digest: str) -> bool:
        """Whether a record was stored with the key ``digest`` (what is buffered is
        written first: the record goes after it)."""
        self.flush()
        return bool(self._read("SELECT count(*) FROM record_keys WHERE digest = ?", [digest])[0][0])

    def _keep(self, table: str, row: tuple[Any, ...], digest: str | None, usage: _Usage | None = None) -> bool:
        """Buffers a record and returns True. With an ``idempotency_key`` (its
        ``digest``) the record is written at once, the digest in the same transaction
        (should that fail, the two stay buffered together). A record whose key was
        stored before (by this process or another: a retry after a lost answer) is
        not stored again: False (also when another process stored it between the
        check and the write; then what it added to its task's ``usage`` is taken
        back)."""
        if digest is None:
            self._buffer(table, row)
            return True
        self._pending[table].append(row)
        self._pending_rows += 1
        self._pending_keys[digest] = (table, row, usage)
        self.flush()
        if digest in self._taken_keys:
            self._taken_keys.discard(digest)
            return False
        return True

    def store_snapshot(self, snapshot: Mapping[str, Any]) -> None:
        """A context-window snapshot as ``DynamicContextManager`` builds them on every
        prune and task switch: ``timestamp``, ``session_id``, ``items``,
        ``total_tokens`` and ``reason``; ``task_id`` and ``pruned_items`` optional."""
        self._check_open()
        if not isinstance(snapshot, Mapping):
            raise InvalidInputError(f"snapshot must be a mapping, got {type(snapshot).__name__}")
        try:
            items = snapshot["items"]
            tokens = snapshot["total_tokens"]
            if items is None:
                raise InvalidInputError("snapshot items must be a list, got None")
            if tokens is None:
                raise InvalidInputError("total_tokens must be an integer, got None")
            row = (
                _micros(_time("timestamp", snapshot["timestamp"])),
                _key("session_id", snapshot["session_id"], written=True),
                _redacted_text("task_id", snapshot.get("task_id")),
                _json("items", _redacted("items", items)),
                _count("total_tokens", tokens),
                _json("pruned_items", _redacted("pruned_items", snapshot.get("pruned_items"))),
                _text("reason", snapshot["reason"]),
            )
        except KeyError as exc:
            raise InvalidInputError(f"snapshot lacks {checks.short(exc.args[0])}") from None
        self._buffer("context_snapshots", row)

    def record_learning(self, learning_type: str, data: Mapping[str, Any], confidence: float) -> None:
        """A cross-session learning ("file_purpose", "common_error", "workflow", ...)."""
        self._check_open()
        if checks.number("confidence", confidence) > 1.0:
            raise InvalidInputError(f"confidence must be in [0, 1], got {checks.short(confidence)}")
        if not isinstance(data, Mapping):
            raise InvalidInputError(f"data must be a mapping, got {type(data).__name__}")
        stored = _redacted("data", dict(data))
        tags = pii_tags(stored)
        if tags:
            stored["_pii"] = tags
        row = (
            self.session_id,
            _text("learning_type", learning_type),
            _json("data", stored),
            checks.number("confidence", confidence),
            _micros(self._now(None)),
        )
        self._buffer("session_learnings", row)

    # -- tasks -------------------------------------------------------------------------

    def start_task(
        self, task_id: str, description: str, *, intent: str | None = None, branch: str | None = None
    ) -> None:
        """Starts a task (on git ``branch``, when given) and makes it current;
        record_* calls default to it."""
        self._check_open()
        if intent is not None and (not isinstance(intent, str) or intent not in INTENTS):
            raise InvalidInputError(f"intent must be one of {', '.join(INTENTS)}, got {checks.short(intent)}")
        task_id = _key("task_id", task_id, written=True)
        values = [
            task_id,
            self.session_id,
            redact(_text("description", description)),
            intent,
            _micros(self._now(None)),
            None if branch is None else redact(_text("branch", branch, max_chars=1000)),
        ]
        with self._transaction("starting a task in it"):
            if self._con.execute("SELECT count(*) FROM task_history WHERE task_id = ?", [task_id]).fetchall()[0][0]:
                raise TaskStateError(f"task {task_id!r} already exists; resume it instead")
            self._con.execute(
                "INSERT INTO task_history (task_id, session_id, description, intent, status, started_at, "
                "branch, files_touched, tools_used) "
                "VALUES (?, ?, ?, ?, 'active', make_timestamp(?), ?, '[]', '{}')",
                values,
            )
        _TASKS_CHANGED[self._tasks_key] += 1
        self._task_usage[task_id] = ([], Counter())
        self.current_task_id = task_id

    def _set_status(self, task_id: str, allowed: Sequence[str], status: str, outcome: str | None = None) -> None:
        outcome = _redacted_text("outcome", outcome)
        when = _micros(self._now(None))
        done = status in ("completed", "failed")
        with self._transaction(f"marking a task {status} in it"):
            row = self._con.execute("SELECT status FROM task_history WHERE task_id = ?", [task_id]).fetchone()
            if row is None:
                raise UnknownTaskError(f"no task {task_id!r} in {self.path}")
            if row[0] not in allowed:
                raise TaskStateError(f"task {task_id!r} is {row[0]}; cannot mark it {status}")
            self._con.execute(
                "UPDATE task_history SET status = ?, outcome = coalesce(?, outcome), "
                "completed_at = CASE WHEN ? THEN make_timestamp(?) ELSE NULL END WHERE task_id = ?",
                [status, outcome, done, when, task_id],
            )
        _TASKS_CHANGED[self._tasks_key] += 1

    def pause_task(self, task_id: str) -> None:
        task_id = _key("task_id", task_id)
        self._set_status(task_id, ["active"], "paused")
        if self.current_task_id == task_id:
            self.current_task_id = None

    def resume_task(self, task_id: str) -> None:
        task_id = _key("task_id", task_id)
        self._set_status(task_id, ["paused", "active"], "active")
        self.current_task_id = task_id

    def complete_task(self, task_id: str, outcome: str | None = None) -> None:
        task_id = _key("task_id", task_id)
        self._set_status(task_id, ["active", "paused"], "completed", outcome)
        if self.current_task_id == task_id:
            self.current_task_id = None

    def fail_task(self, task_id: str, outcome: str | None = None) -> None:
        task_id = _key("task_id", task_id)
        self._set_status(task_id, ["active", "paused"], "failed", outcome)
        if self.current_task_id == task_id:
            self.current_task_id = None

    def _note_usage(self, task_id: str | None, *, tool: str | None = None, file: str | None = None) -> _Usage | None:
        """Adds a record's file or tool to its task's usage; returns what it added
        (None: no task to add to)."""
        if task_id is None:
            return None
        if task_id not in self._task_usage:
            found = self._read("SELECT files_touched, tools_used FROM task_history WHERE task_id = ?", [task_id])
            if not found:
                return None  # a task id nobody started: the rows keep it, task_history has nothing to update
            self._task_usage[task_id] = _usage(found[0])
        files, tools = self._task_usage[task_id]
        touched, called = self._usage_added.setdefault(task_id, (Counter(), Counter()))
        if file is not None:
            if file not in files:
                files.append(file)
            touched[file] += 1
        if tool is not None:
            tools[tool] += 1
            called[tool] += 1
        return _Usage(task_id, file, tool)

    def _take_back(self, usage: _Usage) -> None:
        """Takes back what a record not stored after all added to its task's usage
        (the cached usage is read again: see _drop_caches)."""
        added = self._usage_added.get(usage.task_id)
        if added is None:
            return
        for counts, key in zip(added, (usage.file, usage.tool)):
            if key is not None:
                counts[key] -= 1
                if counts[key] <= 0:
                    del counts[key]
        if not added[0] and not added[1]:
            del self._usage_added[usage.task_id]

    def _track_error_fix(
        self, task: str | None, path: str, tool: str, success: bool, error: str | None, when: float
    ) -> None:
        key = (task, path)
        if not success:
            signature = (error or "").strip().splitlines()[0][:200] if error and error.strip() else "error"
            self._open_errors[key] = (tool, signature, False)
        elif key in self._open_errors:
            failed_tool, signature, edited = self._open_errors[key]
            if edited and failed_tool == tool:
                self._fixes.append((tool, path, signature, when))
                del self._open_errors[key]

    # -- writing -----------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError(f"the episodic store {self.path} is closed")

    @contextlib.contextmanager
    def _transaction(self, doing: str) -> Iterator[None]:
        """One write transaction (a team's: holding the write lock, the caches
        dropped when another process wrote since they were read, the count of writes
        taken on). An AircherError raised inside is raised as it is; the store's own
        error is a StoreError saying what was being done."""
        con = self._con
        try:
            con.execute("BEGIN TRANSACTION")
            try:
                if self.team:
                    cast("postgres.Connection", con).lock_in_transaction(_WRITE_LOCK)
                    self._fresh()
                yield
                if self.team:
                    (written,) = con.execute("UPDATE episodic_writes SET n = n + 1 RETURNING n").fetchall()
                    self._generation = int(written[0])
                con.execute("COMMIT")
            except BaseException:
                self._rollback()
                raise
        except AircherError:
            raise
        except self._errors() as exc:
            error = store.corrupt_or_error(self.path, exc, doing)
            raise (_Refused(str(error)) if _refused(exc) else error) from None
        if not self.team:
            store.protect(self.path)  # DuckDB creates a new WAL after each checkpoint

    def _errors(self) -> tuple[type[Exception], ...]:
        """The errors of the store's connection: DuckDB's, or a team's StoreError."""
        return (StoreError,) if self.team else (store.engine().Error,)

    def _fresh(self) -> None:
        """On a team's store, drops what the caches hold when another process wrote
        since they were read (they are read again when next asked)."""
        if not self.team or getattr(_ASIDE, "store", None) is self:  # read_aside's work: its caller checks
            return
        row = self._con.execute("SELECT n FROM episodic_writes").fetchone()
        if row is not None and int(row[0]) != self._generation:
            self._generation = int(row[0])
            self._drop_caches()

    def _drop_caches(self) -> None:
        """Forgets what the caches hold (read again from the store when next asked)."""
        self._task_usage.clear()
        self._touched = self._recent = self._task_index = None

    def flush(self) -> None:
        """Writes everything buffered in one transaction. A row the store refuses (none
        should: every field is checked at the call) is found by bisecting its batch,
        dropped with a logged warning, and everything else is written. Any other
        failure raises StoreError and keeps the records in memory."""
        self._check_open()
        if not self._pending_rows and not self._usage_added and not self._fixes:
            return
        try:
            self._write()
        except StoreError as exc:
            # Only an error about a value is looked for row by row: an I/O error
            # would fail every row alone too, and must not drop them.
            if not _refused(exc) or not self._drop_bad_rows():
                raise self._write_error(exc) from None
            try:
                self._write()
            except StoreError as again:
                raise self._write_error(again) from None
        for rows in self._pending.values():
            rows.clear()
        self._pending_rows = 0
        self._pending_keys.clear()
        self._usage_added.clear()
        self._fixes.clear()

    @staticmethod
    def _write_error(error: StoreError) -> StoreError:
        return type(error)(f"{error} (nothing was written; the records are kept in memory)")

    def _rollback(self) -> None:
        with contextlib.suppress(*self._errors()):  # no transaction left to roll back
            self._con.execute("ROLLBACK")

    def _write(self) -> None:
        """Writes what is buffered in one transaction."""
        con = self._con
        with self._transaction("writing to it"):
            if self._pending_keys:
                self._write_keys()
            edited = any(self._may_pair(row) for row in self._pending["file_interactions"])
            first_new_edit = (
                con.execute("SELECT coalesce(max(id), 0) FROM file_interactions").fetchone() if edited else None
            )
            for table, rows in self._pending.items():
                if rows:
                    con.execute(_batch_insert_sql(table), [list(column) for column in zip(*rows)])
            if self._usage_added:
                self._add_usage()
            if edited:
                self._update_co_edits(int(first_new_edit[0]) if first_new_edit else 0)
            self._update_error_fixes()

    def _write_keys(self) -> None:
        """In the write transaction: the digests of the buffered records' idempotency
        keys, but for those stored already (by another process since the check),
        whose records are taken out of the buffer instead."""
        digests = sorted(self._pending_keys)
        for (digest,) in self._con.execute(
            "SELECT digest FROM record_keys WHERE digest IN (SELECT unnest(?::VARCHAR[]))", [digests]
        ).fetchall():
            table, row, usage = self._pending_keys.pop(digest)
            rows = self._pending[table]
            del rows[next(i for i, r in enumerate(rows) if r is row)]
            self._pending_rows -= 1
            self._taken_keys.add(digest)
            if usage is not None:
                self._take_back(usage)
            self._drop_caches()  # they hold what the record said
        if self._pending_keys:
            self._con.execute(
                "INSERT INTO record_keys SELECT unnest(?::VARCHAR[]), make_timestamp(?)",
                [sorted(self._pending_keys), _micros(self._now(None))],
            )

    def _add_usage(self) -> None:
        """In the write transaction: adds the files and tools recorded since the last
        flush to their tasks' ``files_touched`` and ``tools_used`` as stored now
        (another process may have added some)."""
        con, dirty = self._con, sorted(self._usage_added)
        for task, files, tools in con.execute(
            "SELECT task_id, files_touched, tools_used FROM task_history "
            "WHERE task_id IN (SELECT unnest(?::VARCHAR[]))",
            [dirty],
        ).fetchall():
            stored = _usage((files, tools))
            added_files, added_tools = self._usage_added[task]
            stored[0].extend(f for f in added_files if f not in stored[0])
            stored[1].update(added_tools)
            self._task_usage[task] = stored
        known = [t for t in dirty if t in self._task_usage]
        con.execute(
            "UPDATE task_history SET files_touched = v.files::JSON, tools_used = v.tools::JSON "
            "FROM (SELECT unnest(?::VARCHAR[]) AS task_id, unnest(?::VARCHAR[]) AS files, "
            "unnest(?::VARCHAR[]) AS tools) v WHERE task_history.task_id = v.task_id",
            [
                known,
                [json.dumps(self._task_usage[t][0]) for t in known],
                [json.dumps(dict(self._task_usage[t][1])) for t in known],
            ],
        )

    def _insert_fails(self, table: str, rows: list[tuple[Any, ...]]) -> str | None:
        """Tries inserting ``rows`` in a transaction that is rolled back; the store's
        refusal, or None when they would go in."""
        self._con.execute("BEGIN TRANSACTION")
        try:
            self._con.execute(_batch_insert_sql(table), [list(column) for column in zip(*rows)])
        except self._errors() as exc:
            self._rollback()
            if _refused(exc):
                return " ".join(str(exc).split())
            raise store.corrupt_or_error(self.path, exc, "writing to it") from None
        self._rollback()
        return None

    def _drop_bad_rows(self) -> int:
        """Drops from the buffer each row DuckDB refuses on its own (found by
        bisection: a few probes per bad row), with a warning; returns how many."""
        dropped = 0
        for table, rows in self._pending.items():
            if not rows or self._insert_fails(table, rows) is None:
                continue
            bad: list[tuple[int, str]] = []
            ranges = [(0, len(rows))]
            while ranges:
                lo, hi = ranges.pop()
                error = self._insert_fails(table, rows[lo:hi])
                if error is None:
                    continue
                if hi - lo == 1:
                    bad.append((lo, error))
                else:
                    mid = (lo + hi) // 2
                    ranges += [(mid, hi), (lo, mid)]
            for index, error in sorted(bad, reverse=True):
                log.warning("dropped a %s record that %s cannot store: %s", table, self.path, error[:500])
                del rows[index]
            dropped += len(bad)
        self._pending_rows -= dropped
        self._pending_keys = {  # a dropped record's key is not kept either
            digest: kept
            for digest, kept in self._pending_keys.items()
            if any(row is kept[1] for row in self._pending[kept[0]])
        }
        return dropped

    def _upsert_pattern(
        self,
        pattern_type: str,
        key: str,
        data: dict[str, Any],
        observed: int,
        confidence: Callable[[int], float],
        when_us: int,
    ) -> None:
        row = self._con.execute(
            "SELECT id, observed_count FROM learned_patterns WHERE pattern_key = ?", [key]
        ).fetchone()
        if row is None:
            self._con.execute(
                "INSERT INTO learned_patterns (pattern_type, pattern_data, confidence, observed_count, first_seen, "
                "last_seen, pattern_key) VALUES (?, ?, ?, ?, make_timestamp(?), make_timestamp(?), ?)",
                [pattern_type, json.dumps(data), confidence(observed), observed, when_us, when_us, key],
            )
        else:
            total = int(row[1]) + observed
            self._con.execute(
                "UPDATE learned_patterns SET observed_count = ?, confidence = ?, "
                "last_seen = greatest(last_seen, make_timestamp(?)) WHERE id = ?",
                [total, confidence(total), when_us, row[0]],
            )

    def _may_pair(self, row: tuple[Any, ...]) -> bool:
        """Whether a buffered file interaction can make a co-edit pair: a successful
        edit within a task (NULL = NULL is not true) that has touched another file
        (the task's ``files_touched`` holds every file it edited; a task id nobody
        started has none, so it may)."""
        task, operation, success = row[2], row[4], row[6]
        if task is None or operation != "edit" or not success:
            return False
        usage = self._task_usage.get(task)
        return usage is None or len(usage[0]) > 1

    def _update_co_edits(self, last_old_id: int) -> None:
        """Co-edit pairs (edits of two files in the same task within the policy's
        ``co_edit_seconds``), counted incrementally and set-based: only pairs with a row newer
        than ``last_old_id`` are counted, each unordered pair of rows once, in one query;
        when there are any, the patterns are updated with one UPDATE and one INSERT.

        Confidence: co-edits per edit of the less edited file of the pair ("when one
        changes, how often the other does too"), capped at 1."""
        con = self._con
        delta = con.execute(
            f"""WITH pairs AS (
                    SELECT least(a.file_path, b.file_path) AS f1, greatest(a.file_path, b.file_path) AS f2,
                           count(*) AS n, epoch_us(min(greatest(a.timestamp, b.timestamp))) AS first_us,
                           epoch_us(max(greatest(a.timestamp, b.timestamp))) AS last_us
                    FROM file_interactions a JOIN file_interactions b
                      ON a.task_id = b.task_id AND a.file_path <> b.file_path AND b.id < a.id
                     AND abs(epoch(a.timestamp) - epoch(b.timestamp)) <= {self.policy.co_edit_seconds}
                    WHERE a.id > ? AND a.operation = 'edit' AND b.operation = 'edit' AND a.success AND b.success
                    GROUP BY 1, 2),
                edits AS (
                    SELECT file_path, count(*) AS n FROM file_interactions
                    WHERE operation = 'edit' AND success
                      AND file_path IN (SELECT f1 FROM pairs UNION SELECT f2 FROM pairs)
                    GROUP BY 1)
                SELECT p.f1, p.f2, p.n, p.first_us, p.last_us, greatest(1, least(e1.n, e2.n)) AS fewer
                FROM pairs p JOIN edits e1 ON e1.file_path = p.f1 JOIN edits e2 ON e2.file_path = p.f2""",
            [last_old_id],
        ).fetchall()
        if not delta:
            return
        within = self.policy.co_edit_seconds
        columns = [
            [_co_edit_key(f1, f2) for f1, f2, *_ in delta],
            [_compact({"files": [a, b], "operations": ["edit"] * 2, "within_seconds": within}) for a, b, *_ in delta],
            *([int(v) for v in column] for column in list(zip(*delta))[2:]),
        ]
        rows = (
            "SELECT unnest(?::VARCHAR[]) AS key, unnest(?::VARCHAR[]) AS data, "
            "unnest(?::BIGINT[]) AS n, unnest(?::BIGINT[]) AS first_us, unnest(?::BIGINT[]) AS last_us, "
            "unnest(?::BIGINT[]) AS fewer"
        )
        con.execute(
            f"""UPDATE learned_patterns SET
                   observed_count = learned_patterns.observed_count + d.n,
                   confidence = least(1.0, CAST(learned_patterns.observed_count + d.n AS DOUBLE) / d.fewer),
                   last_seen = greatest(learned_patterns.last_seen, make_timestamp(d.last_us))
               FROM ({rows}) d WHERE learned_patterns.pattern_key = d.key""",
            columns,
        )
        con.execute(
            f"""INSERT INTO learned_patterns
                   (pattern_type, pattern_data, confidence, observed_count, first_seen, last_seen, pattern_key)
               SELECT 'co-edit', d.data::JSON, least(1.0, CAST(d.n AS DOUBLE) / d.fewer), d.n,
                      make_timestamp(d.first_us), make_timestamp(d.last_us), d.key
               FROM ({rows}) d
               WHERE d.key NOT IN (SELECT pattern_key FROM learned_patterns WHERE pattern_type = 'co-edit')""",
            columns,
        )

    def _update_error_fixes(self) -> None:
        for tool, path, signature, when in self._fixes:
            data = {"tool": tool, "file": path, "error": signature, "fix": "edit"}
            # Confidence n / (n + 1): one sighting is a hint, repeated ones a habit.
            self._upsert_pattern(
                "error-fix",
                "error-fix:" + json.dumps([tool, path, signature]),
                data,
                1,
                lambda n: n / (n + 1),
                _micros(when),
            )

    def close(self) -> None:
        """Flushes and closes; safe to call twice (also runs at interpreter exit)."""
        if self._closed:
            return
        try:
            self.flush()
        finally:
            self._closed = True
            self._close_aside()
            if self.team:
                self._con.close()
            else:
                store.disconnect(self._con, self.path, self)
            atexit.unregister(self._close_at_exit)

    def __enter__(self) -> EpisodicMemory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- queries -----------------------------------------------------------------------

    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        if getattr(_ASIDE, "store", None) is not self:  # read_aside flushed before it began
            self.flush()
        return self._read(sql, params)

    def _close_aside(self) -> None:
        """Closes read_aside's connection, once its work is done, before the store's
        own: the file stays open while one of its connections is."""
        if self._aside_work is not None:
            with contextlib.suppress(BaseException):  # its caller was told, or gave up on it
                self._aside_work.result()
            self._aside_work = None
        if self._aside is not None:
            with contextlib.suppress(Exception):
                self._aside.close()
            self._aside = None

    def _suspend_store(self) -> None:
        self._close_aside()
        super()._suspend_store()

    def read_aside(self, work: Callable[[EpisodicMemory], T]) -> Callable[[], T]:
        """Starts ``work(self)``, which only reads (``find_similar_tasks``,
        ``failed_runs_since``, ``file_history``, ``patterns``...), in another thread
        on a DuckDB connection of its own, and returns at once a function that waits
        for its answer (or raises what it raised). Pending rows are written first, so
        it reads what this store holds now; the caller may go on reading and writing
        on its own connection meanwhile. Callers keep the two apart: while the work
        runs, nothing else may ask ``find_similar_tasks`` of this store."""
        self._check_open()
        self.flush()
        if self._aside is None:
            if self.team:
                self._aside = self._team_connection()
            else:
                self._aside = self._con.cursor()
        aside = self._aside

        def run() -> T:
            _ASIDE.store, _ASIDE.con = self, aside
            try:
                return work(self)
            finally:
                _ASIDE.store = _ASIDE.con = None

        future: Future[T] = _READER.submit(run)
        self._aside_work = future
        return future.result

    def _read(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Runs one statement; a DuckDB error is a StoreError (StoreCorruptError when
        the file cannot be read)."""
        con = _ASIDE.con if getattr(_ASIDE, "store", None) is self else self._con
        try:
            return con.execute(sql, list(params)).fetchall()
        except AircherError:
            raise
        except self._errors() as exc:
            raise store.corrupt_or_error(self.path, exc, "reading it") from None

    _INTERACTION_COLUMNS = (
        "epoch_us(timestamp), session_id, task_id, file_path, operation, line_range, success, context, changes_summary"
    )

    @staticmethod
    def _interaction(row: tuple[Any, ...]) -> FileInteraction:
        span = json.loads(row[5]) if row[5] else None
        return FileInteraction(
            row[0] / 1e6,
            row[1],
            row[2],
            row[3],
            row[4],
            (span["start"], span["end"]) if span else None,
            row[6],
            row[7],
            row[8],
        )

    def file_history(self, file_path: str, limit: int = 5) -> list[FileInteraction]:
        """ "Have I worked on this file before?": its last interactions, newest first."""
        file_path, limit = _key("file_path", file_path), checks.limit("limit", limit, maximum=MAX_LIMIT)
        rows = self._query(
            f"SELECT {self._INTERACTION_COLUMNS} FROM file_interactions WHERE file_path = ? "
            "ORDER BY timestamp DESC, id DESC LIMIT ?",
            [file_path, limit],
        )
        return [self._interaction(r) for r in rows]

    def failed_tool_runs(self, file_path: str, limit: int = 5) -> list[ToolRun]:
        """Failed tool executions about ``file_path`` (its ``file_path`` parameter),
        newest first."""
        file_path, limit = _key("file_path", file_path), checks.limit("limit", limit, maximum=MAX_LIMIT)
        rows = self._query(
            "SELECT epoch_us(timestamp), session_id, task_id, tool_name, parameters, success, error_message, "
            "duration_ms, json_extract_string(parameters, '$.file_path') FROM tool_executions "
            "WHERE NOT success AND json_extract_string(parameters, '$.file_path') = ? "
            "ORDER BY timestamp DESC, id DESC LIMIT ?",
            [file_path, limit],
        )
        return [self._tool_run(r) for r in rows]

    @staticmethod
    def _tool_run(r: tuple[Any, ...]) -> ToolRun:
        return ToolRun(
            r[0] / 1e6, r[1], r[2], r[3], json.loads(r[4]), bool(r[5]), r[6], None if r[7] is None else int(r[7]), r[8]
        )

    def last_interactions(self, pattern: str, limit: int = 10) -> list[FileInteraction]:
        """ "What did I last do with <pattern>?": interactions with files whose path
        contains ``pattern`` (a plain substring, not a LIKE pattern), newest first."""
        # Stored paths are redacted: a pattern that holds a secret is too.
        pattern, limit = (
            redact(_text("pattern", pattern, blank=True)),
            checks.limit("limit", limit, maximum=MAX_LIMIT),
        )
        rows = self._query(
            f"SELECT {self._INTERACTION_COLUMNS} FROM file_interactions WHERE contains(file_path, ?) "
            "ORDER BY timestamp DESC, id DESC LIMIT ?",
            [pattern, limit],
        )
        return [self._interaction(r) for r in rows]

    def co_edited_files(self, min_count: int | None = None, within_seconds: float | None = None) -> list[CoEdit]:
        """Files edited in the same task within ``within_seconds`` of each other, at
        least ``min_count`` times (the time difference taken in both directions; the
        defaults come from the policy)."""
        min_count = self.policy.co_edit_min_count if min_count is None else checks.integer("min_count", min_count, 1)
        within = (
            self.policy.co_edit_seconds if within_seconds is None else checks.number("within_seconds", within_seconds)
        )
        rows = self._query(
            """SELECT f1.file_path, f2.file_path, count(*) AS n
               FROM file_interactions f1 JOIN file_interactions f2
                 ON f1.task_id = f2.task_id AND f1.file_path < f2.file_path
                AND abs(epoch(f2.timestamp) - epoch(f1.timestamp)) <= ?
               WHERE f1.operation = 'edit' AND f2.operation = 'edit' AND f1.success AND f2.success
               GROUP BY 1, 2 HAVING count(*) >= ? ORDER BY n DESC, 1, 2""",
            [within, min_count],
        )
        return [CoEdit(a, b, int(n)) for a, b, n in rows]

    def recent_files(self, limit: int, *, task_id: str | None = None) -> list[str]:
        """The last ``limit`` distinct files read, written, edited, searched or
        analyzed successfully (only in ``task_id`` when given), newest first."""
        limit = checks.limit("limit", limit, maximum=MAX_LIMIT)
        task = None if task_id is None else _key("task_id", task_id)
        return self._recency().recent_files(task, limit)

    def recent_mentions(self, calls: int, *, task_id: str | None = None) -> list[str]:
        """The files the last ``calls`` tool calls named (their ``mentions``, see
        :meth:`record_tool_execution`; only in ``task_id`` when given), newest call
        first, each file once."""
        calls = checks.limit("calls", calls, maximum=MAX_LIMIT)
        task = None if task_id is None else _key("task_id", task_id)
        kept = self._recency().recent_calls(task, calls)
        if kept is None:
            rows = self._query(
                "SELECT result FROM tool_executions WHERE json_type(result) = 'OBJECT' "
                "AND (CAST(? AS VARCHAR) IS NULL OR task_id = ?) ORDER BY timestamp DESC, id DESC LIMIT ?",
                [task, task, calls],
            )
            kept = [_named(json.loads(r[0])) for r in rows]
        found: dict[str, None] = {}
        for named in kept:
            for path in named:
                found.setdefault(path)
        return list(found)

    def _recency(self) -> _Recent:
        self._fresh()
        if self._recent is None:
            recent = _Recent()
            for task, path, micros, seq in self._query(
                "SELECT task_id, file_path, micros, id FROM (SELECT task_id, file_path, epoch_us(timestamp) AS micros, "
                "id, row_number() OVER (PARTITION BY task_id, file_path ORDER BY timestamp DESC, id DESC) AS rank "
                "FROM file_interactions WHERE success AND operation <> 'viewed') newest WHERE rank = 1"
            ):
                recent.file(task, path, micros, seq)
            keep = recent.KEEP
            for task, micros, seq, result, rank in self._query(
                "SELECT * FROM (SELECT task_id, epoch_us(timestamp), id, result, row_number() OVER "
                "(PARTITION BY task_id ORDER BY timestamp DESC, id DESC) AS rank FROM tool_executions "
                "WHERE json_type(result) = 'OBJECT') newest WHERE rank <= ?",
                [keep + 1],
            ):
                if rank > keep:
                    recent.cut.add(task)
                    continue
                named = _named(json.loads(result))
                if named:
                    for key in (task,) if task is not None else ():
                        recent.calls.setdefault(key, []).append((micros, seq, named))
            for micros, seq, result in self._query(
                "SELECT epoch_us(timestamp), id, result FROM tool_executions WHERE json_type(result) = 'OBJECT' "
                "ORDER BY timestamp DESC, id DESC LIMIT ?",
                [keep + 1],
            ):
                named = _named(json.loads(result))
                if len(recent.calls.setdefault(None, [])) >= keep:
                    recent.cut.add(None)
                elif named:
                    recent.calls[None].append((micros, seq, named))
            recent.seq = max([0, *(s for known in recent.files.values() for _, s in known.values())]) + (1 << 40)
            self._recent = recent
        return self._recent

    def touched_with(
        self, paths: Sequence[str], *, edits_only: bool = False, exclude_task: str | None = None, limit: int = 20
    ) -> list[tuple[str, float]]:
        """Files worked on (read, written, edited, searched, analyzed) in the same
        tasks as any of ``paths``, other tasks than ``exclude_task``, each with the
        share of those tasks it was in, most shared first, then by path.
        ``edits_only``: both files edited within the co-edit window (``[episodic]
        co_edit_seconds``), the share taken of the tasks with such a pair."""
        paths = [_key("file_path", p) for p in paths]
        limit = checks.limit("limit", limit, maximum=MAX_LIMIT)
        if not paths:
            return []
        if edits_only:
            return self._co_edited_with(paths, exclude_task, limit)
        tasks_of, files_of = self._companions()
        seeds = set(paths)
        tasks = set().union(*(tasks_of.get(p, ()) for p in seeds)) - {exclude_task}
        counts: Counter[str] = Counter()
        for task in tasks:
            counts.update(files_of[task] - seeds)
        ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]
        return [(path, n / len(tasks)) for path, n in ranked]

    def _companions(self) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
        """The tasks of each file and the files of each task (successful, not
        "viewed"): read from the store once, then kept up to date by
        :meth:`record_file_interaction` (and read again after another process wrote
        to a team's store)."""
        self._fresh()
        if self._touched is None:
            tasks_of: dict[str, set[str]] = {}
            files_of: dict[str, set[str]] = {}
            for task, path in self._query(
                "SELECT DISTINCT task_id, file_path FROM file_interactions "
                "WHERE success AND task_id IS NOT NULL AND operation <> 'viewed'"
            ):
                tasks_of.setdefault(path, set()).add(task)
                files_of.setdefault(task, set()).add(path)
            self._touched = (tasks_of, files_of)
        return self._touched

    def _co_edited_with(self, paths: list[str], exclude_task: str | None, limit: int) -> list[tuple[str, float]]:
        marks = ", ".join("?" for _ in paths)
        rows = self._query(
            f"""WITH pair AS (
                  SELECT DISTINCT f1.task_id, f2.file_path
                  FROM file_interactions f1 JOIN file_interactions f2 ON f1.task_id = f2.task_id
                    AND abs(epoch(f2.timestamp) - epoch(f1.timestamp)) <= ?
                  WHERE f1.operation = 'edit' AND f2.operation = 'edit' AND f1.file_path IN ({marks})
                    AND f2.file_path NOT IN ({marks}) AND f1.success AND f2.success
                    AND (CAST(? AS VARCHAR) IS NULL OR f1.task_id <> ?))
                SELECT file_path, CAST(count(*) AS DOUBLE) / (SELECT count(DISTINCT task_id) FROM pair)
                FROM pair GROUP BY file_path ORDER BY 2 DESC, 1 LIMIT ?""",
            [self.policy.co_edit_seconds, *paths, *paths, exclude_task, exclude_task, limit],
        )
        return [(r[0], float(r[1])) for r in rows]

    def failed_runs_since(self, since: float, limit: int = 20) -> list[ToolRun]:
        """Failed tool calls at or after ``since`` (unix seconds), newest first."""
        limit = checks.limit("limit", limit, maximum=MAX_LIMIT)
        rows = self._query(
            "SELECT epoch_us(timestamp), session_id, task_id, tool_name, parameters, success, error_message, "
            "duration_ms, json_extract_string(parameters, '$.file_path') FROM tool_executions "
            "WHERE NOT success AND timestamp >= make_timestamp(?) ORDER BY timestamp DESC, id DESC LIMIT ?",
            [_micros(_time("since", since)), limit],
        )
        return [self._tool_run(r) for r in rows]

    def tool_stats(self, days: float = 7.0, now: float | None = None) -> list[ToolStats]:
        """Per tool over the last ``days``: calls, successes, mean duration."""
        span = checks.number("days", days) * 86_400  # inf for a huge finite count of days: everything
        since = _micros(max(self._now(now) - span, MIN_TIME))
        rows = self._query(
            """SELECT tool_name, count(*), count(*) FILTER (WHERE success), avg(duration_ms)
               FROM tool_executions WHERE timestamp > make_timestamp(?) GROUP BY 1 ORDER BY 2 DESC, 1""",
            [since],
        )
        return [
            ToolStats(name, int(total), int(ok), None if avg is None else float(avg)) for name, total, ok, avg in rows
        ]

    _TASK_COLUMNS = (
        "task_id, session_id, description, intent, status, epoch_us(started_at), "
        "epoch_us(completed_at), files_touched, tools_used, outcome, branch"
    )

    @staticmethod
    def _task_record(row: tuple[Any, ...], score: float | None = None) -> Task:
        return Task(
            row[0],
            row[1],
            row[2],
            row[3],
            row[4],
            row[5] / 1e6,
            None if row[6] is None else row[6] / 1e6,
            json.loads(row[7] or "[]"),
            json.loads(row[8] or "{}"),
            row[9],
            score,
            row[10],
        )

    def task(self, task_id: str) -> Task:
        task_id = _key("task_id", task_id)
        rows = self._query(f"SELECT {self._TASK_COLUMNS} FROM task_history WHERE task_id = ?", [task_id])
        if not rows:
            raise UnknownTaskError(f"no task {task_id!r} in {self.path}")
        return self._task_record(rows[0])

    def open_tasks(self) -> list[Task]:
        """ "What was I working on?": active and paused tasks, newest first."""
        rows = self._query(
            f"SELECT {self._TASK_COLUMNS} FROM task_history WHERE status IN ('active', 'paused') "
            "ORDER BY started_at DESC, id DESC"
        )
        return [self._task_record(r) for r in rows]

    def finished_tasks(self, limit: int = 10_000) -> list[tuple[Task, list[str]]]:
        """Completed and failed tasks, oldest first (at most ``limit``), each with the
        error messages of its failed tool runs in order (what went wrong before the
        fix): what consolidation keeps as the agent's own episodes."""
        limit = checks.integer("limit", limit, 0, MAX_LIMIT)
        rows = self._query(
            f"SELECT {self._TASK_COLUMNS} FROM task_history WHERE status IN ('completed', 'failed') "
            "ORDER BY started_at, id LIMIT ?",
            [limit],
        )
        tasks = [self._task_record(r) for r in rows]
        errors: dict[str, list[str]] = {t.task_id: [] for t in tasks}
        if tasks:
            for task_id, message in self._query(
                "SELECT task_id, error_message FROM tool_executions WHERE NOT success AND error_message IS NOT NULL "
                "AND task_id IN (SELECT unnest(?::VARCHAR[])) ORDER BY timestamp, id",
                [list(errors)],
            ):
                if len(errors[task_id]) < 20:
                    errors[task_id].append(str(message)[:500])
        return [(t, errors[t.task_id]) for t in tasks]

    def find_similar_tasks(self, text: str, limit: int = 3) -> list[Task]:
        """Past tasks most like ``text``, best first: BM25 over each task's description
        and outcome (k1 and b from the retrieval policy) by the project's lexical index,
        words stemmed (``"fixing logins"`` finds ``"fix the login"``), identifiers split
        into their parts and stop words left out, as :func:`aircher_mem._core.tokenize`
        does with ``stem=True``. The current task is excluded; only tasks sharing at
        least one term are returned; equal scores go by task id. The index is kept
        between calls until a task is started or changes status or outcome."""
        text, limit = (
            checks.text("text", text, max_chars=None, blank=True),
            checks.integer("limit", limit, 0, MAX_LIMIT),
        )
        if limit <= 0 or not tokenize(text, stem=True):
            return []
        excluded = self.current_task_id or ""
        self._fresh()
        key = (excluded, _TASKS_CHANGED[self._tasks_key])
        if self._task_index is None or self._task_index[0] != key:
            rows = self._query("SELECT task_id, description, outcome FROM task_history WHERE task_id <> ?", [excluded])
            index = LexicalIndex(stem=True)
            index.upsert([("task", r[0], "", {"text": f"{r[1]} {r[2] or ''}"}) for r in rows])
            self._task_index = (key, index)
        _, index = self._task_index
        hits = [
            (task_id, score)
            for task_id, score, _terms in index.search(text, limit, k1=self.search.bm25_k1, b=self.search.bm25_b)
            if score > 0
        ]
        if not hits:
            return []
        # The rows are read afresh: files and tools used change without changing the index.
        # One parameter per id (at most ``limit``): DuckDB's first list parameter in a
        # process imports decimal and uuid (9 ms on a hook's path).
        marks = ", ".join("?" * len(hits))
        rows = self._query(
            f"SELECT {self._TASK_COLUMNS} FROM task_history WHERE task_id IN ({marks})",
            [task_id for task_id, _ in hits],
        )
        stored = {row[0]: row for row in rows}
        return [self._task_record(stored[task_id], score) for task_id, score in hits]

    def tools_at_hour(self, at: float, *, days: float, limit: int = 3) -> list[tuple[str, int, int]]:
        """The tools run most within an hour either side of ``at``'s time of day
        (UTC) over the ``days`` before it: each with its runs and all the runs
        then; most run first."""
        at = _time("at", at)
        hour = time.gmtime(at).tm_hour
        since = _micros(max(at - checks.number("days", days) * 86_400, MIN_TIME))
        rows = self._query(
            "SELECT tool_name, count(*), sum(count(*)) OVER () FROM tool_executions "
            "WHERE timestamp >= make_timestamp(?) AND (hour(timestamp) - ? + 24) % 24 IN (0, 1, 23) "
            "GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT ?",
            [since, hour, checks.limit("limit", limit, maximum=MAX_LIMIT)],
        )
        return [(name, int(n), int(total)) for name, n, total in rows]

    def branch_tasks(self, branch: str, limit: int = 10) -> list[Task]:
        """The tasks started on git ``branch``, newest first."""
        branch, limit = _text("branch", branch, max_chars=1000), checks.limit("limit", limit, maximum=MAX_LIMIT)
        rows = self._query(
            f"SELECT {self._TASK_COLUMNS} FROM task_history WHERE branch = ? ORDER BY started_at DESC, id DESC LIMIT ?",
            [redact(branch), limit],
        )
        return [self._task_record(r) for r in rows]

    def patterns(self, pattern_type: str | None = None, *, min_count: int = 1) -> list[LearnedPattern]:
        """Learned patterns ("co-edit", "error-fix"), most observed first."""
        pattern_type, min_count = _optional_text("pattern_type", pattern_type), checks.integer("min_count", min_count)
        rows = self._query(
            "SELECT pattern_type, pattern_data, confidence, observed_count, epoch_us(first_seen), epoch_us(last_seen) "
            "FROM learned_patterns WHERE (CAST(? AS VARCHAR) IS NULL OR pattern_type = ?) AND observed_count >= ? "
            "ORDER BY observed_count DESC, confidence DESC, id",
            [pattern_type, pattern_type, min_count],
        )
        return [
            LearnedPattern(t, json.loads(d), float(c), int(n), first / 1e6, last / 1e6)
            for t, d, c, n, first, last in rows
        ]

    def snapshots(self, limit: int = 10) -> list[dict[str, Any]]:
        """The latest context snapshots of this store, newest first, in the shape
        :meth:`store_snapshot` takes, with ``item_count`` added."""
        limit = checks.limit("limit", limit, maximum=MAX_LIMIT)
        rows = self._query(
            "SELECT epoch_us(timestamp), session_id, task_id, context_items, total_tokens, pruned_items, reason "
            "FROM context_snapshots ORDER BY timestamp DESC, id DESC LIMIT ?",
            [limit],
        )
        return [
            {
                "timestamp": r[0] / 1e6,
                "session_id": r[1],
                "task_id": r[2],
                "items": json.loads(r[3]),
                "item_count": len(json.loads(r[3])),
                "total_tokens": r[4],
                "pruned_items": json.loads(r[5]) if r[5] else [],
                "reason": r[6],
            }
            for r in rows
        ]

    def learnings(self, learning_type: str | None = None) -> list[dict[str, Any]]:
        learning_type = _optional_text("learning_type", learning_type)
        rows = self._query(
            "SELECT session_id, learning_type, data, confidence FROM session_learnings "
            "WHERE CAST(? AS VARCHAR) IS NULL OR learning_type = ? ORDER BY id",
            [learning_type, learning_type],
        )
        return [
            {"session_id": s, "learning_type": t, "data": json.loads(d), "confidence": float(c)} for s, t, d, c in rows
        ]

    def counts(self) -> dict[str, int]:
        """Rows per table (for stats and tests)."""
        self.flush()
        tables: Iterable[str] = (
            "tool_executions",
            "file_interactions",
            "task_history",
            "context_snapshots",
            "learned_patterns",
            "session_learnings",
        )
        return {t: int(self._read(f"SELECT count(*) FROM {t}")[0][0]) for t in tables}
