"""The one DuckDB file of a project (``.aircher/memory.duckdb``): connecting, lock
detection, and a migration registry every component's tables register with.

One process holds a store file at a time: :func:`connect` takes an exclusive lock
on ``<file>.lock`` (``flock``, held until this process's last connection to the
file is closed with :func:`disconnect`, released by the kernel when the process
dies), before DuckDB opens the file. A second process gets
:class:`StoreLockedError` naming the file and the holder's pid before it reads or
accepts anything: never a stale read of rows the holder has not written, never a
second writer. (DuckDB's own lock is not enough: DuckDB 2 lets a second process open
a file another one writes, and refuses it only at its first commit.) A file
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

Forgetting: :func:`rewrite` copies a store into a fresh file and renames it over
the old one, so that the free blocks of deleted rows (which DuckDB keeps in the
file, readable, until later writes reuse them) are gone.

Migrations: a component (``"episodic"``; long-term memory next) registers numbered
steps with :func:`register`; :func:`migrate` applies the steps its file lacks inside
one transaction and records the component's version in ``schema_versions``. A file
written by a newer aircher-mem (a higher version than registered) raises
:class:`SchemaVersionError` and is left untouched. Never edit a released step: add
a new one.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, ClassVar, Protocol, TypeVar

from .errors import InvalidInputError, SchemaVersionError, StoreCorruptError, StoreError, StoreLockedError
from .root import sync_folder

if TYPE_CHECKING:
    import duckdb

__all__ = [
    "connect",
    "open_ahead",
    "SERVER_ONLY",
    "set_threads",
    "disconnect",
    "reopen",
    "compact",
    "Reconnecting",
    "StoreHolder",
    "hold",
    "release",
    "held",
    "offer",
    "withdraw",
    "wanted",
    "offered_by",
    "taken",
    "rewrite",
    "protect",
    "corrupt_or_error",
    "register",
    "migrate",
    "schema_version",
    "latest_version",
    "steps",
    "registered",
]

log = logging.getLogger("aircher_mem.store")
_T = TypeVar("_T")


class Reconnecting(Protocol):
    """A holder of a connection that :func:`compact` can close and open again."""

    def _suspend_store(self) -> None:
        """Closes its connection (what it has pending stays pending)."""

    def _resume_store(self) -> None:
        """Opens its connection again (with :func:`reopen`)."""


class StoreHolder:
    """What a holder of one connection to a store file (``self._con`` to
    ``self.path``, opened with :func:`connect`) shares: :func:`compact` suspends and
    resumes it, and :meth:`_close_at_exit` (registered with :mod:`atexit` by the
    holder) closes it at interpreter exit, logging a failure to ``_exit_log``
    instead of printing a traceback."""

    #: What the holder is, in the message a failed close at exit logs.
    _store_name: ClassVar[str] = "store"
    #: The logger that message goes to.
    _exit_log: ClassVar[logging.Logger] = log

    if TYPE_CHECKING:
        path: str
        _con: duckdb.DuckDBPyConnection

        def close(self) -> None: ...

    def _suspend_store(self) -> None:
        """For :func:`compact`: closes the connection (what is pending stays pending)."""
        self._con.close()

    def _resume_store(self) -> None:
        """For :func:`compact`: the connection again (:func:`reopen`)."""
        self._con = reopen(self.path)

    def _close_at_exit(self) -> None:
        """``close()`` at interpreter exit: a failure is logged, not a traceback."""
        try:
            self.close()
        except Exception as exc:
            self._exit_log.error("closing the %s in %s at exit failed: %s", self._store_name, self.path, exc)


_REGISTRY: dict[str, dict[int, tuple[str, ...]]] = {}

# Before the registry, episodic memory kept its version in a one-row schema_meta.
_LEGACY_TABLE = {"episodic": "schema_meta"}


#: Begins a migration statement that runs on a team's server only (an index that
#: a file's scans do not need, and a server's catch-up reads through).
SERVER_ONLY = "-- on a team's server only\n"


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


def steps(component: str) -> dict[int, tuple[str, ...]]:
    """``component``'s registered migration steps, by number (each its statements, in
    DuckDB's dialect: :mod:`aircher_mem.postgres` translates them for PostgreSQL)."""
    return dict(_REGISTRY[component])


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


# DuckDB's worker threads in the stores this process opens (0: DuckDB's default).
_THREADS = [0]


def set_threads(count: int) -> None:
    """DuckDB's worker threads in the stores this process opens from now on (0:
    DuckDB's default, one per core). A short process that runs small queries (a
    hook) runs them faster on one thread."""
    if isinstance(count, bool) or not isinstance(count, int) or count < 0:
        raise InvalidInputError(f"threads must be an integer >= 0, got {count!r}")
    _THREADS[0] = count


def connect(path: str | Path, owner: Reconnecting | None = None) -> duckdb.DuckDBPyConnection:
    """Opens (creating) the DuckDB file at ``path`` (``":memory:"`` for a private
    in-memory store), holding its lock (:func:`hold`; close with :func:`disconnect`).
    The folder is created private to the user (0700), the store's files are made
    0600 (the WAL too, see :func:`protect`)."""
    text = str(path)
    if text == ":memory:":
        return _open(text, created=False)
    if "\x00" in text or not _encodable(text):
        raise InvalidInputError(f"a store path must be text without NUL or lone surrogates, got {text!r}")
    con = _opened_ahead(text)
    if con is None:
        con = _connect_file(text)
    if owner is not None:
        with _GUARD:
            _OWNERS.setdefault(_lock_key(text), weakref.WeakSet()).add(owner)
    return con


def _connect_file(text: str) -> duckdb.DuckDBPyConnection:
    file = Path(text)
    try:
        file.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as exc:
        raise StoreError(f"cannot create the folder of {text}: {_one_line(exc.strerror or str(exc))}") from None
    hold(text)
    try:
        _check_file(file)
        return _open(text, created=not file.exists())
    except BaseException:
        release(text)
        raise


# A store file's real path -> the thread opening it ahead and, once done, its
# connection or what it raised (see open_ahead)
_AHEAD: dict[str, tuple[threading.Thread, list[object]]] = {}


def open_ahead(path: str | Path) -> None:
    """Starts opening the existing store file at ``path`` on a thread of its own, for
    a short process that opens it next (a hook without a server): DuckDB's engine
    loads and builds its catalog (about 30 ms, the GIL released) while the process
    imports the rest. The next :func:`connect` to the file takes that connection; when
    opening ahead failed (the file held by another process, say), :func:`connect`
    opens it as usual and reports what it finds then. A connection nobody takes stays
    open, its lock held, until the process ends."""
    text = str(path)
    if not os.path.isfile(text):
        return
    key = _lock_key(text)
    box: list[object] = []

    def work() -> None:
        try:
            box.append(_connect_file(text))
        except BaseException as exc:  # connect reports it again when asked
            box.append(exc)

    with _GUARD:
        if key in _AHEAD:
            return
        thread = threading.Thread(target=work, name="aircher-mem-open-ahead", daemon=True)
        _AHEAD[key] = (thread, box)
    thread.start()


def _opened_ahead(text: str) -> duckdb.DuckDBPyConnection | None:
    """The connection :func:`open_ahead` made to ``text`` (its hold on the lock
    included), on the threads :func:`set_threads` asks for now; None when nothing was
    opened ahead or it failed."""
    if not _AHEAD:
        return None
    with _GUARD:
        ahead = _AHEAD.pop(_lock_key(text), None)
    if ahead is None:
        return None
    thread, box = ahead
    thread.join()
    con = box[0] if box else None
    if isinstance(con, BaseException) or con is None:
        return None
    connection: duckdb.DuckDBPyConnection = con  # type: ignore[assignment]
    if _THREADS[0]:
        try:
            connection.execute(f"SET threads = {_THREADS[0]:d}")
        except engine().Error:
            disconnect(connection, text)
            return None
    return connection


def engine() -> ModuleType:
    """DuckDB's engine, imported on first use (most callers of the package never open
    a store): ``_duckdb``, the C++ extension the ``duckdb`` package re-exports (its
    ``connect``, connection and exception classes are the same objects). Importing it
    alone leaves out the package's Python layer (relations, expressions, the version
    lookup through the installed metadata), which every command that opens a store
    would otherwise pay for without using; releases without a top-level ``_duckdb``
    get the package."""
    try:
        import _duckdb
    except ImportError:
        import duckdb

        return duckdb
    return _duckdb


def _open(text: str, *, created: bool) -> duckdb.DuckDBPyConnection:
    db = engine()

    # JSON is built in; never fetch extensions (no network at run time).
    config: dict[str, str | bool | int | float | list[str]] = {
        "autoinstall_known_extensions": False,
        "autoload_known_extensions": False,
    }
    try:
        con: duckdb.DuckDBPyConnection = db.connect(text, config=config)
    except db.IOException as exc:
        message = _one_line(str(exc))
        if "lock" in message.lower():
            raise StoreLockedError(
                f"{text} is open in another process (one process holds a store); "
                f"close it there or go through its server. DuckDB said: {message}"
            ) from None
        if "not a valid DuckDB database" in message:
            raise StoreCorruptError(f"{text} is not a DuckDB database: {message}") from None
        raise corrupt_or_error(text, exc, "opening it") from None
    except db.Error as exc:
        raise StoreCorruptError(f"cannot open {text}: {_one_line(str(exc))}") from None
    # No progress bar: DuckDB draws it on stdout for a query over 2 s (a 100K-row load
    # on a busy machine), which is the MCP server's protocol channel and a CLI's JSON.
    try:
        con.execute("SET enable_progress_bar = false")
        if _THREADS[0]:
            con.execute(f"SET threads = {_THREADS[0]:d}")
    except db.Error as exc:
        con.close()
        raise StoreCorruptError(f"cannot open {text}: {_one_line(str(exc))}") from None
    if text != ":memory:":
        try:
            if created or os.stat(text).st_mode & 0o077:
                os.chmod(text, 0o600)
        except OSError as exc:
            con.close()
            raise StoreError(f"cannot make {text} private: {_one_line(exc.strerror or str(exc))}") from None
    protect(text)
    return con


# -- the process lock ----------------------------------------------------------------

_LOCK_SUFFIX = ".lock"
_GUARD = threading.Lock()
# A store file's real path -> (the lock file's descriptor, how many holds this process has)
_HOLDS: dict[str, tuple[int, int]] = {}
# A store file's real path -> the objects holding a connection to it (see compact)
_OWNERS: dict[str, weakref.WeakSet[Reconnecting]] = {}


def _lock_key(path: str) -> str:
    return os.path.realpath(path)


def _holder(fd: int) -> str:
    try:
        text = os.pread(fd, 64, 0).decode("ascii", "replace").strip()
    except OSError:
        return "another process"
    return f"another process (pid {text})" if text.isdigit() else "another process"


def hold(path: str | Path) -> None:
    """Takes (or, held already by this process, counts once more) the exclusive lock
    of the store file at ``path``; :class:`StoreLockedError` when another process
    holds it. Each ``hold`` is undone by one :func:`release`."""
    import fcntl

    key = _lock_key(str(path))
    with _GUARD:
        found = _HOLDS.get(key)
        if found is not None:
            _HOLDS[key] = (found[0], found[1] + 1)
            return
        lock = key + _LOCK_SUFFIX
        flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
        try:
            fd = os.open(lock, flags, 0o600)
        except OSError as exc:
            raise StoreError(f"cannot open {lock}: {_one_line(exc.strerror or str(exc))}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            who = _holder(fd)
            os.close(fd)
            raise StoreLockedError(
                f"{path} is held by {who} (one process holds a store: an `aircher-mem serve` or `aircher-mem mcp` "
                "serves it to the CLI, the hooks and aircher_mem.interfaces.client.connect(); else close it there)"
            ) from None
        except OSError as exc:
            os.close(fd)
            raise StoreError(f"cannot lock {lock}: {_one_line(exc.strerror or str(exc))}") from None
        try:
            if os.fstat(fd).st_mode & 0o077:
                os.fchmod(fd, 0o600)
            os.ftruncate(fd, 0)
            os.pwrite(fd, str(os.getpid()).encode("ascii"), 0)
        except OSError:  # the pid is only for messages, and offers
            pass
        _HOLDS[key] = (fd, 1)
        if key in _OFFERING:
            _write_offer(key)


def release(path: str | Path) -> None:
    """Undoes one :func:`hold`; the last one releases the lock."""
    key = _lock_key(str(path))
    with _GUARD:
        found = _HOLDS.get(key)
        if found is None:
            return
        fd, count = found
        if count > 1:
            _HOLDS[key] = (fd, count - 1)
            return
        del _HOLDS[key]
        os.close(fd)  # releases the flock


@contextlib.contextmanager
def held(path: str | Path) -> Iterator[None]:
    """The store's lock held for the block (nested in any other hold)."""
    hold(path)
    try:
        yield
    finally:
        release(path)


# -- a holder that gives the store up ------------------------------------------------
#
# A server a hook started holds the store only to spare the next hooks the cost of
# opening it: it offers the store (``<file>.yields``: its pid) and gives it up when
# another process asks (``<file>.wanted``), so a program that opens the project's
# memory itself (``Memory.open``, ``aircher-mem mcp``, ``aircher-mem serve``) takes
# the store instead of failing with StoreLockedError.

_OFFER_SUFFIX = ".yields"
_WANTED_SUFFIX = ".wanted"
_TAKE_POLL_SECONDS = 0.02
_OFFER_SECONDS = 0.05
# The store files this process offers (their real paths), from when it holds them.
_OFFERING: set[str] = set()


def _small_file(path: str) -> str | None:
    """The first bytes of the regular file at ``path`` (no link followed, no FIFO
    waited on), or None."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        import stat

        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return os.pread(fd, 64, 0).decode("ascii", "replace").strip()
    except OSError:
        return None
    finally:
        os.close(fd)


def _remove(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


def offer(path: str | Path) -> None:
    """Says that this process gives the store at ``path`` up when another process
    asks (:func:`wanted`): from the moment it holds the store (at once, if it
    does), the offer names its pid. Undone by :func:`withdraw`."""
    key = _lock_key(str(path))
    with _GUARD:
        _OFFERING.add(key)
        if key in _HOLDS:
            _write_offer(key)


def _write_offer(key: str) -> None:
    tmp = f"{key}{_OFFER_SUFFIX}.{os.getpid()}.tmp"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o600)
        try:
            os.write(fd, str(os.getpid()).encode("ascii"))
        finally:
            os.close(fd)
        os.replace(tmp, key + _OFFER_SUFFIX)
    except OSError as exc:  # the store is held all the same, only not offered
        log.warning("cannot offer %s: %s", key, _one_line(exc.strerror or str(exc)))


def withdraw(path: str | Path) -> None:
    """Undoes :func:`offer` (once the store is closed): this process's offer and
    any request for the store are removed."""
    key = _lock_key(str(path))
    with _GUARD:
        _OFFERING.discard(key)
    if _small_file(key + _OFFER_SUFFIX) == str(os.getpid()):
        _remove(key + _OFFER_SUFFIX)
    _remove(key + _WANTED_SUFFIX)


def wanted(path: str | Path) -> bool:
    """Whether another process asked for the store this process offered."""
    return os.path.lexists(_lock_key(str(path)) + _WANTED_SUFFIX)


def offered_by(path: str | Path) -> int | None:
    """The pid of the process that holds the store at ``path`` and offers to give
    it up: the offer's pid when it is the lock holder's, else None."""
    key = _lock_key(str(path))
    offered, holder = _small_file(key + _OFFER_SUFFIX), _small_file(key + _LOCK_SUFFIX)
    if offered is None or not offered.isdigit() or offered != holder:
        return None
    return int(offered)


def taken(path: str | Path, open_store: Callable[[], _T], wait_seconds: float) -> _T:
    """``open_store()``; when it raises :class:`StoreLockedError` because a holder
    that offered the store (:func:`offer`) has it, asks that holder to give it up
    and tries again until it did or ``wait_seconds`` passed (then the last
    :class:`StoreLockedError`, saying so). ``wait_seconds`` 0 never asks."""
    try:
        return open_store()
    except StoreLockedError:
        if wait_seconds <= 0:
            raise
        if offered_by(path) is None:
            # a holder writes its offer just after it takes the lock: look once more
            time.sleep(_OFFER_SECONDS)
            if offered_by(path) is None:
                raise
    key = _lock_key(str(path))
    log.info("%s is held by a server that gives it up when asked: asking it", path)
    flags = os.O_WRONLY | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        os.close(os.open(key + _WANTED_SUFFIX, flags, 0o600))
    except OSError as exc:
        raise StoreError(f"cannot ask for {path}: {_one_line(exc.strerror or str(exc))}") from None
    deadline = time.monotonic() + wait_seconds
    while True:
        time.sleep(_TAKE_POLL_SECONDS)
        try:
            return open_store()
        except StoreLockedError as exc:
            if time.monotonic() >= deadline:
                raise StoreLockedError(
                    f"{exc} The server holding it was asked to give it up and did not within {wait_seconds:g} s "
                    "([server] yield_wait_seconds)."
                ) from None


def disconnect(con: duckdb.DuckDBPyConnection, path: str | Path, owner: Reconnecting | None = None) -> None:
    """Closes a connection :func:`connect` opened and releases its hold on the lock."""
    try:
        con.close()
    finally:
        if str(path) != ":memory:":
            if owner is not None:
                with _GUARD:
                    _OWNERS.get(_lock_key(str(path)), weakref.WeakSet()).discard(owner)
            release(path)


def reopen(path: str | Path) -> duckdb.DuckDBPyConnection:
    """A connection again, for a holder :func:`compact` suspended (the lock is held)."""
    return _open(str(path), created=False)


def compact(path: str | Path) -> None:
    """Rewrites the store at ``path`` (:func:`rewrite`) while this process holds it:
    every holder of a connection to it is suspended (its connection closed, which
    checkpoints the file), the file rewritten, and every holder resumed, the lock
    held throughout."""
    text = str(path)
    if text == ":memory:":
        return
    key = _lock_key(text)
    with _GUARD:
        owners = list(_OWNERS.get(key, ()))
    with held(text):
        suspended: list[Reconnecting] = []
        try:
            for owner in owners:
                owner._suspend_store()
                suspended.append(owner)
            rewrite(text)
        finally:
            for owner in suspended:
                owner._resume_store()


def rewrite(path: str | Path) -> None:
    """Copies the store at ``path`` into a fresh file and renames it over the old
    one (fsynced, then the folder), so that no free block of the old file, and no
    text of a deleted row in one, is left. The caller holds the lock and has closed
    every connection to the file (a write-ahead log left beside it means one is
    open, or it was not checkpointed: :class:`StoreError`, nothing changed). A crash
    leaves the old file or the new one, whole."""
    duckdb = engine()

    text = str(path)
    if text == ":memory:":
        return
    if os.path.exists(text + _WAL_SUFFIX):
        raise StoreError(f"cannot rewrite {text}: its write-ahead log was not checkpointed (is it open?)")
    fresh = text + ".rewrite"
    for leftover in (fresh, fresh + _WAL_SUFFIX):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(leftover)
    con = duckdb.connect(":memory:", config={"autoinstall_known_extensions": False, "autoload_known_extensions": False})
    try:
        con.execute("SET enable_progress_bar = false")
        con.execute(f"ATTACH {_quoted(text)} AS old_store (READ_ONLY)")
        con.execute(f"ATTACH {_quoted(fresh)} AS new_store")
        con.execute("COPY FROM DATABASE old_store TO new_store")
        con.execute("DETACH new_store")
        con.execute("DETACH old_store")
    except duckdb.Error as exc:
        con.close()
        for leftover in (fresh, fresh + _WAL_SUFFIX):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(leftover)
        raise corrupt_or_error(text, exc, "rewriting it") from None
    con.close()
    try:
        with contextlib.suppress(FileNotFoundError):  # DETACH checkpointed it
            os.unlink(fresh + _WAL_SUFFIX)
        os.chmod(fresh, 0o600)
        fd = os.open(fresh, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(fresh, text)
        sync_folder(os.path.dirname(os.path.abspath(text)))
    except OSError as exc:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(fresh)
        raise StoreError(f"cannot rewrite {text}: {_one_line(exc.strerror or str(exc))}") from None


def _quoted(path: str) -> str:
    """A path as an SQL string literal (ATTACH takes no parameters)."""
    return "'" + path.replace("'", "''") + "'"


def _has_table(con: duckdb.DuckDBPyConnection, table: str) -> bool:
    # duckdb_tables(), not information_schema: its first query in a process took 20 ms
    row = con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = ?", [table]).fetchone()
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
    duckdb = engine()

    latest = latest_version(component)
    # The usual open, of a store this version made or migrated, in one query: the
    # registry says the latest version, and a table of the component's own, if it
    # has one, no later one.
    legacy = _LEGACY_TABLE.get(component)
    own = f", (SELECT max(version) FROM {legacy})" if legacy else ""
    try:
        row = con.execute(
            f"SELECT (SELECT version FROM schema_versions WHERE component = ?){own}", [component]
        ).fetchone()
    except duckdb.CatalogException:  # a table missing: a new file, or an older aircher-mem's
        row = None
    except duckdb.Error as exc:  # the first read of a damaged file
        raise corrupt_or_error(path, exc, f"reading its {component} schema version") from None
    if row is not None and row[0] == latest and all(v is None or v <= latest for v in row[1:]):
        return latest
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
                if not statement.startswith(SERVER_ONLY):
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
    protect(path)  # the migration made the write-ahead log
    if version:
        log.info("migrated %s (%s) from schema version %d to %d", path, component, version, latest)
    return latest
