"""The hooks' journal: ``.aircher/journal.jsonl``, where a ``PostToolUse`` hook with
no server writes its records when nobody holds the store, instead of opening it.

Opening the store (DuckDB, the service, numpy) is most of what a hook without a
server costs; appending a line to a file is not. The journal keeps the guarantees
of the store:

* **Durable**: the hook writes its lines and ``fsync``\\s the file (and, when it
  made the file, the folder) before it exits.
* **Private and redacted**: the file is 0600 and holds the records with their
  secrets already redacted (:mod:`aircher_mem.redact`); a record whose file path
  would change under redaction is not journaled (the hook opens the store).
* **One writer**: a hook appends only while it holds the store's lock file
  (``memory.duckdb.lock``, as :func:`aircher_mem.store.hold` takes it) without
  waiting; when a process holds the store (a server, a program), the hook does not
  journal. Whoever opens the store writes the journal into it before anything reads
  the episodic tables (:func:`drain`), so the journal is empty whenever the store is
  held, and every process that opens the store sees the hooks' records.
* **Exactly once**: the journal's first line names it (a random id); the records
  and the mark of that id commit in one transaction, and the file is removed after.
  A journal found again (a crash between the two) is removed unwritten.
* **Bounded**: the hook does not journal past ``[hooks] journal_max_bytes``; a
  line that does not parse (a crash in the middle of an append) is skipped with a
  warning, and the next append starts on a line of its own.

The writer (:func:`append`) imports only C modules of the standard library, for the
hook's thin path; :func:`drain` runs in the service."""

from __future__ import annotations

import os

from .root import sync_folder

TYPE_CHECKING = False  # not typing's: importing typing is a cost on the hook's path
if TYPE_CHECKING:
    from contextlib import AbstractContextManager
    from pathlib import Path
    from typing import Any, Protocol

    from .episodic import EpisodicMemory

    class Service(Protocol):
        """What :func:`drain` uses of :class:`aircher_mem.Memory` (which imports
        this module: no import of it here)."""

        store: Path

        @property
        def db_path(self) -> Path: ...

        @property
        def episodic(self) -> EpisodicMemory: ...

        def batch(self) -> AbstractContextManager[Any]: ...


__all__ = ["ARGUMENTS", "JOURNAL_FILE", "VERSION", "VERBS", "append", "drain"]

#: The journal's name in the store's folder.
JOURNAL_FILE = "journal.jsonl"
#: The format its first line declares.
VERSION = 1
#: The verbs a journal line may name, each with the arguments its lines may carry:
#: those the hooks write (:class:`aircher_mem.interfaces.thin.Journaled`) and the
#: time of the call.
ARGUMENTS: dict[str, frozenset[str]] = {
    "record_tool_call": frozenset(
        ("tool_name", "parameters", "success", "error_message", "file_path", "mentions", "at")
    ),
    "record_file_interaction": frozenset(("path", "operation", "line_range", "changes_summary", "at")),
}
VERBS = tuple(ARGUMENTS)
_LOCK_SUFFIX = ".lock"  # aircher_mem.store's lock file beside the store file
_MAX_READ = 1 << 30  # bytes of a journal read at most (a hook stops far sooner)
_HEAD_BYTES = 512  # bytes in which a journal's first line ends


def _headed(start: bytes) -> bool:
    """Whether a journal starting with ``start`` has its first line whole, as a hook
    writes it (``{"journal":"<id>","version":1}``): a crash while it was written
    leaves a file the drain does not read, to which nothing more is appended."""
    first, newline, _ = start.partition(b"\n")
    return bool(newline) and first.startswith(b'{"journal":') and first.endswith(b"}")


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def append(store_dir: str, db_file: str, lines: list[str], header: str, *, max_bytes: int) -> bool:
    """Appends ``lines`` (JSON texts, one record each) to the journal in
    ``store_dir``, durably, when nobody holds the store file ``db_file`` of that
    folder, the journal is a regular file (or none yet) and it stays within
    ``max_bytes``; ``header`` (a JSON text with a new id) starts a new journal.
    False, with nothing written, otherwise; OSError when the folder cannot be
    written."""
    import errno
    import fcntl

    flags = os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)
    lock_file = os.path.realpath(os.path.join(store_dir, db_file)) + _LOCK_SUFFIX
    lock = os.open(lock_file, os.O_RDWR | os.O_CREAT | flags, 0o600)
    try:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False  # the store is held: its holder is the writer
        path = os.path.join(store_dir, JOURNAL_FILE)
        try:
            fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK | flags, 0o600)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                return False  # a symbolic link: never written through
            raise
        try:
            status = os.fstat(fd)
            if status.st_mode & 0o170000 != 0o100000:  # not a regular file
                return False
            if status.st_mode & 0o077:
                os.fchmod(fd, 0o600)
            size = status.st_size
            text = "".join(line + "\n" for line in lines)
            if size == 0:
                text = header + "\n" + text
            elif not _headed(os.pread(fd, _HEAD_BYTES, 0)):
                return False  # its first line was cut short: the drain sets it aside
            elif os.pread(fd, 1, size - 1) != b"\n":
                text = "\n" + text  # a line cut short by a crash stays alone
            data = text.encode("utf-8")
            if size + len(data) > max_bytes:
                return False
            _write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        if size == 0:
            sync_folder(store_dir, flags)
        return True
    finally:
        os.close(lock)  # releases the lock


def _journal_id(line: bytes) -> str | None:
    import json

    try:
        header = json.loads(line)
    except ValueError:
        return None
    if not isinstance(header, dict) or header.get("version") != VERSION:
        return None
    found = header.get("journal")
    return found if isinstance(found, str) and 0 < len(found) <= 200 else None


def _read(path: str) -> bytes | None:
    """The journal's bytes; None when there is none. Read only as a regular file in
    the store's folder, never through a symbolic link or from a FIFO (which would
    block), and only its first ``_MAX_READ`` bytes: anything else reads as b"",
    which is not a journal."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        return None
    except OSError:  # a symbolic link (ELOOP), or unreadable
        return b""
    try:
        if os.fstat(fd).st_mode & 0o170000 != 0o100000:
            return b""
        chunks: list[bytes] = []
        left = _MAX_READ
        while left > 0 and (chunk := os.read(fd, min(left, 1 << 20))):
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def drain(memory: Service) -> int:
    """Writes the project's journal into ``memory``'s store, once, and removes it;
    how many records were written. The caller holds the store (its episodic store is
    open). A line that does not parse, names another verb or whose arguments the verb
    refuses is skipped with a warning; a journal whose first line is not one (not
    written by a hook) is renamed ``journal.jsonl.unreadable`` with a warning."""
    import json
    import logging

    from .errors import AircherError

    log = logging.getLogger(__name__)
    path = os.path.join(memory.store, JOURNAL_FILE)
    data = _read(path)
    if data is None:
        return 0
    lines = data.split(b"\n")
    journal_id = _journal_id(lines[0])
    if journal_id is None:
        log.warning("%s is not a hooks' journal; renamed %s.unreadable, not read", path, JOURNAL_FILE)
        os.replace(path, path + ".unreadable")
        return 0
    episodic = memory.episodic
    written = 0
    if not episodic.journal_drained(journal_id):
        with memory.batch(), episodic.whole():
            for number, line in enumerate(lines[1:], start=2):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                    name, arguments = record["verb"], record["arguments"]
                    if name not in ARGUMENTS:
                        raise ValueError(f"no verb {name!r:.80} is journaled")
                    if not isinstance(arguments, dict):
                        raise TypeError(f"the arguments are {type(arguments).__name__}, not an object")
                    extra = arguments.keys() - ARGUMENTS[name]
                    if extra:
                        raise ValueError(f"{name} journals no {', '.join(sorted(extra))[:200]}")
                    # The verb checks its arguments as it checks a Python caller's.
                    getattr(memory, name)(**arguments)
                except (ValueError, KeyError, TypeError, RecursionError, AircherError) as exc:
                    log.warning("%s line %d: skipped: %s: %.300s", path, number, type(exc).__name__, exc)
                    continue
                written += 1
            episodic.mark_journal(journal_id)
    os.unlink(path)
    sync_folder(memory.store, os.O_CLOEXEC)
    if written:
        log.info("wrote %d records of the hooks' journal into %s", written, memory.db_path)
    return written
