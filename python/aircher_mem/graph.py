"""The project's code graph kept on disk and up to date: ``graph.bin`` (and, saved
with it, the lexical index of its code, ``graph.lexical``, and its view,
``graph.view``, what a search reads of it) plus a manifest (``files.json``).

Which files changed is decided by the manifest: each indexed file's modification
time, size and SHA-256. A file whose time or size moved is hashed, and re-parsed
only if its content differs. The manifest names the graph file it belongs to (its
size and time), so a graph written by another process is never paired with a stale
manifest: that case, a missing or damaged manifest and a damaged graph file all lead
to a full rebuild. The manifest also keeps the scan's count of files in languages
the graph does not parse, so ``stats`` and ``doctor`` can say what was left out.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import os
import stat
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from operator import itemgetter
from pathlib import Path
from typing import Literal, NamedTuple

from ._core import Definition, GraphView, KnowledgeGraph, read_project_file, relative_path
from .config import Policy
from .errors import AircherError, InvalidInputError, NotIndexedError, SchemaVersionError, StoreCorruptError, StoreError
from .results import IndexProgress, IndexReport
from .root import stamp

__all__ = ["GraphIndex", "IndexTracker", "Phase", "read_source", "tracked_files", "write_atomic"]

GRAPH_FILE = "graph.bin"
MANIFEST_FILE = "files.json"
#: What a search reads of the graph, saved beside it (see :class:`GraphView`).
VIEW_FILE = "graph.view"
#: The last walk of the tree, kept so that a look at an unchanged tree stats its
#: files instead of walking it (see :meth:`KnowledgeGraph.tracked`).
WALK_FILE = "graph.walk"
#: The manifest's layout: 3 keeps its files in columns, the paths in one string
#: (joined by NULs, in path order) and the hashes in another (joined by commas), and
#: the summary's skipped files and warnings in columns too: few objects to make,
#: check and collect. Read too: 2 (each column a list, the summary's pairs lists),
#: 1 (an object of [time, size, hash] per path).
MANIFEST_VERSION = 3
_MANIFEST_VERSIONS = (1, 2, 3)
_COLUMNS = ("paths", "mtimes", "sizes", "digests")

Progress = Callable[[int, int], object]
#: Called with a phase's name as it begins ("scanning", "parsing", ...).
Phase = Callable[[str], object]
#: When a loaded graph reads its lexical index (:meth:`KnowledgeGraph.load`).
ReadIndex = Literal["when_needed", "with_graph"]
Fingerprint = tuple[int, int, str]

log = logging.getLogger("aircher_mem.graph")


def _keep_definitions(graph: KnowledgeGraph, rel: str, into: dict[str, list[Definition]]) -> None:
    """The definitions ``graph`` holds of the file ``rel`` into ``into`` (none for a
    file it does not hold: one skipped when last indexed)."""
    try:
        into[rel] = graph.get_file_contents(rel)
    except AircherError:
        pass


def tracked_files(root: Path) -> tuple[list[str], dict[str, int]]:
    """The files the graph's scan walks to, relative to ``root`` with ``/``, sorted
    (every source file of a supported language that .gitignore, the hidden and the
    vendored-folder rules let through, whatever its size or content), and the count
    of files in other languages, by language."""
    listed, unsupported = _tracked(root)
    return listed.paths, unsupported


class Listed(NamedTuple):
    """Files as a walk lists them, in path order, in columns: their paths and each
    one's (mtime_ns, size) as the walk saw it (``lstat``, as :func:`_stat`). Two
    listings compare at C speed and no tuple per file is made (a kernel's 56,000
    in tuples and dicts cost a tenth of a second, much of it collecting them)."""

    paths: list[str]
    mtimes: list[int]
    sizes: list[int]

    def stats(self) -> dict[str, tuple[int, int]]:
        """(mtime_ns, size) by path."""
        return dict(zip(self.paths, zip(self.mtimes, self.sizes)))


def _tracked(root: Path, record: Path | None = None) -> tuple[Listed, dict[str, int]]:
    """:func:`tracked_files`, each file with its (mtime_ns, size) as the walk saw it:
    one walk, no second look at each file; with ``record``, through the walk kept
    there (:data:`WALK_FILE`)."""
    paths, mtimes, sizes, unsupported = KnowledgeGraph.tracked(root, record=record)
    return Listed(paths, mtimes, sizes), dict(unsupported)


def read_source(root: Path, relative: str, max_bytes: int) -> bytes | None:
    """A project file's bytes, read the one way project files are read
    (:func:`aircher_mem._core.read_project_file`: no symlink followed, nothing but a
    regular file opened, never outside the root); None when it cannot be read so."""
    try:
        return read_project_file(root, relative, max_bytes=max_bytes)
    except (InvalidInputError, StoreError):  # FileMissingError is a StoreError too
        return None


def _stat(path: Path) -> tuple[int, int] | None:
    """(mtime_ns, size) of a regular file, not following a symlink; None otherwise."""
    try:
        info = os.lstat(path)
    except (OSError, ValueError):
        return None
    return (info.st_mtime_ns, info.st_size) if stat.S_ISREG(info.st_mode) else None


def _not_a_file(path: Path) -> str:
    """What ``path`` is when it is there but not a regular file ("a symlink", "a
    FIFO", ...), not following a symlink; "" for a regular file or nothing."""
    try:
        mode = os.lstat(path).st_mode
    except (OSError, ValueError):
        return ""
    if stat.S_ISREG(mode):
        return ""
    if stat.S_ISLNK(mode):
        return "a symlink"
    return "a folder" if stat.S_ISDIR(mode) else "not a regular file"


def _fingerprint(root: Path, relative: str, max_hash_bytes: int) -> Fingerprint | None:
    """(mtime_ns, size, sha256) of a regular file, taken before the graph reads it;
    None if it is gone or is not a regular file. Files too large to index are not
    hashed (their size is what matters)."""
    before = _stat(root / relative)
    if before is None:
        return None
    digest = ""
    if before[1] <= max_hash_bytes:
        data = read_source(root, relative, max_hash_bytes)
        if data is None:
            return None
        from hashlib import sha256  # OpenSSL's loading: only when a file is read

        digest = sha256(data).hexdigest()
    return before[0], before[1], digest


# Files a thread fingerprints per task: large enough that handing out tasks costs
# little against reading and hashing them.
_FINGERPRINT_BATCH = 256


def _fingerprints(root: Path, paths: list[str], max_hash_bytes: int) -> dict[str, Fingerprint]:
    """:func:`_fingerprint` of each of ``paths``, in that order, leaving out those that
    are gone or not regular files. On one thread per core: the read (in Rust) and
    the hash run without the GIL, and on a large tree (the Linux kernel: 56,000
    files) one thread spent 5-6 s of a full index here."""

    def batch(part: list[str]) -> list[tuple[str, Fingerprint | None]]:
        return [(rel, _fingerprint(root, rel, max_hash_bytes)) for rel in part]

    parts = [paths[i : i + _FINGERPRINT_BATCH] for i in range(0, len(paths), _FINGERPRINT_BATCH)]
    workers = min(len(parts), os.cpu_count() or 1)
    if workers <= 1:
        done = [batch(part) for part in parts]
    else:
        with ThreadPoolExecutor(workers) as pool:
            done = list(pool.map(batch, parts))
    return {rel: fp for part in done for rel, fp in part if fp is not None}


# The fingerprint of a file that changed while it was being indexed: it matches no
# file on disk, so the next index parses the file again.
UNSETTLED: Fingerprint = (-1, -1, "")


# What marks a path that is not one inside the project, the path wrapped in NULs:
# empty, a leading or trailing "/", a "//" (two separators in a row), or a part "."
# or ".." (these only after a "/." or a NUL and a ".", looked for first).
_SEPARATORS = ("\0\0", "\0/", "/\0", "//")
_DOTS = ("/./", "/../", "\0./", "\0../", "/.\0", "/..\0", "\0.\0", "\0..\0")


def _outside(wrapped: str) -> bool:
    """Whether ``wrapped`` (paths each wrapped in NULs, one after another) holds one
    that is not inside the project: a scan for each mark, at C speed."""
    if any(mark in wrapped for mark in _SEPARATORS):
        return True
    return ("/." in wrapped or "\0." in wrapped) and any(mark in wrapped for mark in _DOTS)


def _all_of(kind: type, values: Iterable[object]) -> bool:
    """Whether every one of ``values`` is exactly of ``kind`` (not a subclass: a bool is
    no int here); checked at C speed, for the manifest's tens of thousands."""
    return set(map(type, values)) <= {kind}


def _paths_inside(paths: list[str]) -> None:
    """Raises ValueError naming the first of ``paths`` (strings) that is not a path
    inside the project (see :func:`_outside`), all checked in one string at C speed."""
    joined = "\0".join(paths)
    if joined.count("\0") == max(len(paths) - 1, 0) and not (paths and _outside(f"\0{joined}\0")):
        return
    bad = next(p for p in paths if "\0" in p or _outside(f"\0{p}\0"))
    raise ValueError(f"{bad!r} is not a path inside the project")


def _split(joined: str, separator: str, count: int) -> list[str]:
    """The ``count`` parts of ``joined`` (a manifest's column joined by
    ``separator``); ValueError when it holds another number."""
    parts = joined.split(separator) if count else []
    if len(parts) != count or (not count and joined):
        raise ValueError(f"a column of {count} values holds {len(parts) if joined else 0}")
    return parts


class _Files:
    """The manifest's files as read, in columns in the order it lists them (path
    order, as :func:`_manifest_columns` writes them): the paths joined by NULs, each
    one's mtime_ns and size, the hashes joined by commas. Compared as they are with
    a walk's listing (:meth:`same_as`: a tree indexed as it is, the usual case, is
    found so at C speed); checked and made a dict by path only for an index that
    finds a change (:meth:`fingerprints`: the kernel's 56,000 files took a tenth of
    a second). Only read once made."""

    __slots__ = ("_by_path", "_ordered", "digests", "mtimes", "paths", "sizes")

    def __init__(self, paths: str, mtimes: list[int], sizes: list[int], digests: str, *, ordered: bool) -> None:
        if len(mtimes) != len(sizes):
            raise ValueError("the columns of files differ in length")
        self.paths, self.mtimes, self.sizes, self.digests = paths, mtimes, sizes, digests
        self._ordered = ordered  # (paths in order, each once: layout 3 writes them so)
        self._by_path: dict[str, Fingerprint] | None = None

    def same_as(self, listed: Listed) -> bool:
        """Whether ``listed`` lists exactly these files, each with its time and size
        (its paths are then the walk's: inside the project, in order, each once), and
        holds one hash for each."""
        count = len(listed.mtimes)
        hashes = self.digests.count(",") == count - 1 if count else not self.digests
        return (
            hashes
            and self.mtimes == listed.mtimes
            and self.sizes == listed.sizes
            and self.paths == "\0".join(listed.paths)
        )

    def fingerprints(self) -> dict[str, Fingerprint]:
        """Each path's (mtime_ns, size, sha256 or ""); ValueError when a path is not
        one inside the project, is listed twice (or out of order, in layout 3) or a
        value is not what it should be (the manifest is then not trusted)."""
        if self._by_path is not None:
            return self._by_path
        count = len(self.mtimes)
        paths, digests = _split(self.paths, "\0", count), _split(self.digests, ",", count)
        if paths and _outside(f"\0{self.paths}\0"):
            _paths_inside(paths)  # (names the first)
        if self._ordered and any(map(str.__ge__, paths, paths[1:])):
            raise ValueError("the paths are not in order, or a path is listed twice")
        if not self._ordered and len(set(paths)) != count:
            raise ValueError("a path is listed twice")
        mtimes, sizes = self.mtimes, self.sizes
        if not (_all_of(int, mtimes) and _all_of(int, sizes)):
            at = next(i for i in range(count) if not type(mtimes[i]) is type(sizes[i]) is int)
            raise ValueError(f"{paths[at]!r}: {[mtimes[at], sizes[at]]!r} is not [mtime_ns, size]")
        self._by_path = dict(zip(paths, zip(mtimes, sizes, digests)))
        return self._by_path


def _manifest_files(raw: object, version: int = MANIFEST_VERSION) -> _Files:
    """The manifest's ``files`` (of layout ``version``), as :class:`_Files` (which
    checks the values when they are first wanted); ValueError when the columns are
    not there, not of their types or of different lengths (the manifest is then not
    trusted: a full rebuild)."""
    if version == 1:
        if not isinstance(raw, dict):
            raise ValueError(f"files is a {type(raw).__name__}, not an object")
        paths, values = list(raw), list(raw.values())
        if not (_all_of(list, values) and set(map(len, values)) <= {3}):
            bad = next(v for v in values if type(v) is not list or len(v) != 3)
            raise ValueError(f"{paths[values.index(bad)]!r}: {bad!r} is not [mtime_ns, size, sha256]")
        mtimes, sizes, digests = (list(map(itemgetter(i), values)) for i in range(3))
    elif version == 2:
        if not (isinstance(raw, dict) and all(type(raw.get(k)) is list for k in _COLUMNS)):
            raise ValueError(f"files is not an object of the lists {', '.join(_COLUMNS)}")
        paths, mtimes, sizes, digests = (raw[k] for k in _COLUMNS)
        if len(paths) != len(mtimes) or len(digests) != len(mtimes):
            raise ValueError("the lists of files differ in length")
    else:
        kinds = (str, list, list, str)
        if not (isinstance(raw, dict) and all(type(raw.get(k)) is t for k, t in zip(_COLUMNS, kinds))):
            raise ValueError("files is not an object of the columns paths, mtimes, sizes, digests")
        return _Files(raw["paths"], raw["mtimes"], raw["sizes"], raw["digests"], ordered=True)
    if not _all_of(str, paths):
        raise ValueError(f"{next(p for p in paths if type(p) is not str)!r} is not a path")
    _paths_inside(paths)  # (a NUL in a path would split it in two when joined)
    if not _all_of(str, digests) or any("," in d for d in digests):
        raise ValueError(f"{next(d for d in digests if type(d) is not str or ',' in d)!r} is not a sha256")
    return _Files("\0".join(paths), mtimes, sizes, ",".join(digests), ordered=False)


def _manifest_columns(files: dict[str, Fingerprint]) -> dict[str, str | list[int]]:
    """``files`` as the manifest keeps them (see :func:`_manifest_files`), in path order."""
    ordered = sorted(files.items())
    return {
        "paths": "\0".join(p for p, _ in ordered),
        "mtimes": [fp[0] for _, fp in ordered],
        "sizes": [fp[1] for _, fp in ordered],
        "digests": ",".join(fp[2] for _, fp in ordered),
    }


class Scanned(NamedTuple):
    """A walk of the tree (:meth:`GraphIndex.scan`): the manifest's stamp before it,
    each source file with its (mtime_ns, size) as the walk saw it, and the count of
    files in other languages, by language."""

    manifest: tuple[int, int] | None
    files: Listed
    unsupported: dict[str, int]


#: What the graph an index saved holds, as it reported it: the files in it, those
#: skipped and those indexed in part, each with why.
Summary = tuple[int, list[tuple[str, str]], list[tuple[str, str]]]


class _Manifest(NamedTuple):
    """The manifest as read: its files (None when it cannot be trusted, ``why``
    saying why), the unsupported-language counts, the summary of the graph saved
    with it (None when it has none: written by an older version), and whether it
    is in the layout this version writes (else the next index writes it so). Kept
    for the next read of the same file: its files are only read, callers get copies
    of the rest (:func:`_copied`)."""

    files: _Files | None
    unsupported: dict[str, int]
    why: str
    summary: Summary | None
    current: bool = True


def _copied(manifest: _Manifest) -> _Manifest:
    """``manifest`` with its own copies of what a caller may change (its files are
    only read)."""
    summary = manifest.summary
    return manifest._replace(
        unsupported=dict(manifest.unsupported),
        summary=None if summary is None else (summary[0], list(summary[1]), list(summary[2])),
    )


def _summary(raw: object, version: int = MANIFEST_VERSION) -> Summary | None:
    """The manifest's ``summary`` (of layout ``version``), validated; None when it
    is absent or not what :meth:`GraphIndex._save` writes (the index then loads the
    graph to report). Its skipped files and warnings: in layout 3 each [count,
    paths, reasons], the paths and the reasons each joined by NULs (see
    :func:`_summary_columns`); before, a list of [path, reason] pairs."""
    if not isinstance(raw, dict):
        return None
    files, skipped, warnings = raw.get("files"), raw.get("skipped"), raw.get("warnings")
    if type(files) is not int or files < 0:
        return None
    pairs = []
    for found in (skipped, warnings):
        if version >= 3:
            if not (type(found) is list and len(found) == 3 and type(found[0]) is int):
                return None
            count, paths, reasons = found
            if not (type(paths) is str and type(reasons) is str):
                return None
            try:
                firsts, seconds = _split(paths, "\0", count), _split(reasons, "\0", count)
            except ValueError:
                return None
        elif not (type(found) is list and _all_of(list, found) and set(map(len, found)) <= {2}):
            return None
        else:
            firsts, seconds = list(map(itemgetter(0), found)), list(map(itemgetter(1), found))
            if not (_all_of(str, firsts) and _all_of(str, seconds)):
                return None
        pairs.append(list(zip(firsts, seconds)))
    return files, pairs[0], pairs[1]


def _summary_columns(found: list[tuple[str, str]]) -> list[int | str]:
    """A summary's skipped files or warnings as the manifest keeps them (see
    :func:`_summary`). A reason with a NUL in it (none is made so) would make the
    summary unreadable: the next index loads the graph to report."""
    return [len(found), "\0".join(path for path, _ in found), "\0".join(why for _, why in found)]


#: A graph file loaded, with the stamp (time, size) it had before the load.
_Loaded = tuple[KnowledgeGraph, tuple[int, int] | None]


class _Loading:
    """A graph file's load on a daemon thread of its own: waited for
    (:meth:`result`) when the graph is wanted; else it finishes unwaited and its
    graph is dropped (a process may exit meanwhile)."""

    def __init__(self, load: Callable[[ReadIndex], _Loaded], read_index: ReadIndex) -> None:
        self._done = threading.Event()
        self._found: _Loaded | None = None
        self._error: BaseException | None = None
        threading.Thread(target=self._run, args=(load, read_index), name="aircher-mem-graph-load", daemon=True).start()

    def _run(self, load: Callable[[ReadIndex], _Loaded], read_index: ReadIndex) -> None:
        try:
            self._found = load(read_index)
        except BaseException as exc:  # handed to whoever waits; nobody may
            self._error = exc
        finally:
            self._done.set()

    def result(self) -> _Loaded:
        self._done.wait()
        if self._error is not None:
            raise self._error
        assert self._found is not None
        return self._found


def _remove_stale_temporaries(path: Path) -> None:
    """Removes ``.<name>.<pid>.tmp`` files left beside ``path`` by writers that died
    (their process is gone); a live writer's file is left alone."""
    for tmp in path.parent.glob(f".{path.name}.*.tmp"):
        pid = tmp.name[len(path.name) + 2 : -len(".tmp")]
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            tmp.unlink(missing_ok=True)
        except OSError:
            pass  # alive, or not ours to signal


def _same(a: Fingerprint, b: Fingerprint) -> bool:
    """Same content: equal hashes, or for files too large to hash, equal time and size."""
    return a[2] == b[2] if a[2] and b[2] else a == b


def _parsed(skipped: list[tuple[str, str]], tried: Iterable[str]) -> int:
    """How many of the files ``tried`` were parsed: those ``skipped`` (too large,
    binary, unreadable) were not."""
    left_out = {path for path, _ in skipped}
    return sum(1 for rel in tried if rel not in left_out)


def write_atomic(path: Path, text: str) -> None:
    """Writes ``text`` to a temporary file beside ``path`` (private to the user:
    0600) and renames it over; leftovers of writers that died are removed."""
    _remove_stale_temporaries(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.replace(tmp, path)


#: The phases whose files (or documents) are counted, with the unit counted.
COUNTED = {"parsing": "files", "embeddings": "documents"}


class IndexTracker:
    """Where an index is, for whoever asks while it runs (another thread: the
    server's ``index_progress``): :meth:`begin`, then :meth:`phase` as each phase
    begins and the tracker called as ``progress(done, total)``, then :meth:`end`.
    Each report is passed on to the ``progress`` given to :meth:`begin`. Times
    come from ``clock`` (seconds)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._lock = threading.Lock()
        self._running = False
        self._phase = ""
        self._unit = "files"
        self._done = self._total = 0
        self._began = self._counting_since = 0.0
        self._counted_until: float | None = None  # when the counted phase ended
        self._ended: float | None = None
        self._forward: Progress | None = None

    def begin(self, progress: Progress | None = None) -> None:
        with self._lock:
            self._running, self._phase, self._unit = True, "", "files"
            self._done = self._total = 0
            self._began = self._counting_since = self.clock()
            self._counted_until = self._ended = None
            self._forward = progress

    def phase(self, name: str) -> None:
        """The index is in phase ``name`` from now on (the same again: nothing)."""
        with self._lock:
            if name == self._phase:
                return
            now = self.clock()
            if self._phase in COUNTED and self._counted_until is None:
                self._counted_until = now
            self._phase = name
            if name in COUNTED:
                self._unit, self._done, self._total = COUNTED[name], 0, 0
                self._counting_since, self._counted_until = now, None

    def __call__(self, done: int, total: int) -> None:
        with self._lock:
            self._done, self._total = done, total
            forward = self._forward
        if forward is not None:
            forward(done, total)

    def end(self) -> None:
        with self._lock:
            self._ended = self.clock()
            if self._phase in COUNTED and self._counted_until is None:
                self._counted_until = self._ended
            self._running, self._forward = False, None

    def snapshot(self) -> IndexProgress:
        """Where the index is now."""
        with self._lock:
            now = self.clock()
            until = now if self._counted_until is None else self._counted_until
            spent = until - self._counting_since
            rate = self._done / spent if spent > 0 else 0.0
            left: float | None = None
            if self._running and self._phase in COUNTED and rate > 0:
                left = max(self._total - self._done, 0) / rate
            return IndexProgress(
                running=self._running,
                phase=self._phase,
                done=self._done,
                total=self._total,
                unit=self._unit,
                seconds=(now if self._ended is None else self._ended) - self._began if self._phase else 0.0,
                per_second=rate,
                seconds_left=left,
            )


def _once(phase: Phase | None) -> Phase | None:
    """``phase``, called only when the phase named differs from the last one."""
    if phase is None:
        return None
    last = [""]

    def report(name: str) -> None:
        if name != last[0]:
            last[0] = name
            phase(name)

    return report


class GraphIndex:
    """The graph of ``root`` stored in ``store`` (the ``.aircher/`` folder): loaded
    on first use, refreshed by :meth:`index`."""

    def __init__(self, root: Path, store: Path, policy: Policy) -> None:
        self.root = root
        self.store = store
        self.policy = policy
        self._graph: KnowledgeGraph | None = None
        self._stamp: tuple[int, int] | None = None  # graph.bin as last loaded or saved here
        # The manifest as last read here, by the (inode, time, size) of its file and
        # the graph file's stamp: a look that finds it unchanged does not parse it again.
        self._manifest: tuple[tuple[int, int, int], tuple[int, int] | None, _Manifest] | None = None
        # The view last opened here, with the graph file's stamp then (see _open_view).
        self._viewed: tuple[tuple[int, int], GraphView] | None = None

    @property
    def max_file_bytes(self) -> int:
        return self.policy.graph.max_file_bytes

    @property
    def graph_path(self) -> Path:
        return self.store / GRAPH_FILE

    @property
    def manifest_path(self) -> Path:
        return self.store / MANIFEST_FILE

    @property
    def loaded(self) -> bool:
        """Whether the graph is loaded (or built) in this process."""
        return self._graph is not None

    @property
    def indexed(self) -> bool:
        return self._graph is not None or self.graph_path.is_file()

    def relative(self, path: str | os.PathLike[str]) -> str:
        """``path`` (relative to the root, or absolute) as a root-relative path with
        ``/``; a path that leads outside the root raises :class:`InvalidInputError`."""
        if not isinstance(path, (str, os.PathLike)):
            raise InvalidInputError(f"path must be a string, got {type(path).__name__}")
        return relative_path(self.root, path)

    @property
    def graph(self) -> KnowledgeGraph:
        """The code graph as last indexed (loaded on first use, its lexical index read
        when first needed). Raises :class:`NotIndexedError` before the first index, and
        :class:`StoreCorruptError` / :class:`SchemaVersionError` for a graph file
        that cannot be read (``index()`` rebuilds it)."""
        return self.load("when_needed")

    def load(self, read_index: ReadIndex) -> KnowledgeGraph:
        """:attr:`graph`, loaded first if it is not yet, reading its lexical index as
        ``read_index`` says (:meth:`KnowledgeGraph.load`): ``"with_graph"`` for a caller
        about to search."""
        if self._graph is None:
            if not self.graph_path.is_file():
                raise NotIndexedError(f"{self.root} has not been indexed yet: run `aircher-mem index {self.root}`")
            self._graph, self._stamp = self._load_file(read_index)
        return self._graph

    def view(self) -> GraphView | None:
        """The saved graph searched where it lies (:class:`GraphView`), for a process
        that has not loaded the graph: None when the graph is loaded here, or has no
        readable view (written by an older version, damaged, a save cut short:
        logged; the graph is loaded then)."""
        return None if self._graph is not None else self._open_view()

    def _open_view(self) -> GraphView | None:
        """The view of the graph file as it is now: opened once for each graph file
        saved (by its stamp), however many looks and searches ask for it."""
        current = self._file_stamp()
        if current is None:
            return None
        if self._viewed is not None and self._viewed[0] == current:
            return self._viewed[1]
        self._viewed = None
        try:
            view = GraphView.open(self.graph_path, root=self.root)
        except (AircherError, OSError) as exc:
            log.info("the saved graph of %s cannot be searched in place (%s)", self.root, exc)
            return None
        self._viewed = (current, view)
        return view

    def drop_view(self) -> None:
        """Removes the graph's view (found damaged): the next index saves the graph
        again, with a new one."""
        self._viewed = None
        with contextlib.suppress(FileNotFoundError):
            (self.store / VIEW_FILE).unlink()

    def _unviewed(self) -> bool:
        """Whether the graph file has no view a search can read (see :meth:`view`)."""
        return self.graph_path.is_file() and self._open_view() is None

    def scan(self) -> Scanned:
        """The walk of the tree an index makes, with the manifest's stamp before it:
        changes nothing, so it may run on any thread, for :meth:`index`'s
        ``scanned``."""
        manifest = stamp(self.manifest_path)
        files, unsupported = _tracked(self.root, self.store / WALK_FILE)
        return Scanned(manifest, files, unsupported)

    def _load_file(self, read_index: ReadIndex) -> _Loaded:
        """The graph file loaded, with its stamp before the load; kept by the caller
        (nothing changes here: it may run on another thread)."""
        before = self._file_stamp()
        graph = KnowledgeGraph.load(
            self.graph_path, root=self.root, max_file_bytes=self.max_file_bytes, read_index=read_index
        )
        return graph, before

    def _file_stamp(self) -> tuple[int, int] | None:
        return stamp(self.graph_path)

    # -- the manifest -----------------------------------------------------------------

    def _read_manifest(self) -> _Manifest:
        """The manifest's files, unsupported-language counts and summary, or None and
        why it cannot be trusted. The same file (inode, time and size; the graph
        file's stamp too) is read once: its parsed files are kept, a copy given."""
        try:
            info = os.stat(self.manifest_path)
            key: tuple[int, int, int] | None = (info.st_ino, info.st_mtime_ns, info.st_size)
        except OSError:
            key = None
        cached = self._manifest
        graph = self._file_stamp()
        if key is not None and cached is not None and cached[:2] == (key, graph):
            return _copied(cached[2])
        found = self._parse_manifest(graph)
        if key is not None and found.files is not None:
            self._manifest = (key, graph, _copied(found))
        return found

    def _parse_manifest(self, graph: tuple[int, int] | None) -> _Manifest:
        """:meth:`_read_manifest` of the file as it is now, ``graph`` the graph
        file's stamp."""
        try:
            # (bytes: a text read's newline handling took a third of the JSON's time)
            data = json.loads(self.manifest_path.read_bytes())
        except FileNotFoundError:
            why = "first index" if not self.graph_path.exists() else "no manifest of the indexed files"
            return _Manifest(None, {}, why, None)
        except (OSError, ValueError) as exc:
            return _Manifest(None, {}, f"unreadable manifest ({exc})", None)
        try:
            version = data["version"]
            if type(version) is not int or version not in _MANIFEST_VERSIONS or data["root"] != str(self.root):
                return _Manifest(None, {}, "manifest of another version or project root", None)
            if graph is None:
                return _Manifest(None, {}, "graph file missing", None)
            if data["graph"] != list(graph):
                return _Manifest(None, {}, "graph file written since the manifest (by another process?)", None)
            files = _manifest_files(data["files"], version)
            unsupported = {str(k): int(v) for k, v in data.get("unsupported", {}).items()}
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            return _Manifest(None, {}, f"damaged manifest ({exc})", None)
        return _Manifest(files, unsupported, "", _summary(data.get("summary"), version), version == MANIFEST_VERSION)

    def problem(self) -> str:
        """Why the next :meth:`index` will rebuild the whole graph; "" if it will not."""
        manifest = self._read_manifest()
        try:
            if manifest.files is not None:
                manifest.files.fingerprints()
        except ValueError as exc:
            return f"damaged manifest ({exc})"
        return manifest.why

    def mismatches(self) -> list[str]:
        """The manifest's files that are not on disk as it records them, each with
        how ("a.py: changed", "b.py: a symlink now", "c.py: gone"), in path order: what
        the next :meth:`index` updates. Only ``lstat`` is used: nothing is read."""
        found = self._read_manifest().files
        try:
            files = {} if found is None else found.fingerprints()
        except ValueError:  # (not trusted: the next index rebuilds)
            files = {}
        out = []
        for rel, fingerprint in sorted(files.items()):
            now = _stat(self.root / rel)
            if now is None:
                what = _not_a_file(self.root / rel)
                out.append(f"{rel}: {what} now" if what else f"{rel}: gone")
            elif now != fingerprint[:2]:
                out.append(f"{rel}: changed")
        return out

    def unsupported(self) -> dict[str, int]:
        """Files of languages the graph does not parse, by language, as of the last index."""
        return self._read_manifest().unsupported

    def _save(
        self,
        graph: KnowledgeGraph | None,
        files: dict[str, Fingerprint],
        unsupported: dict[str, int],
        summary: Summary,
    ) -> None:
        """Saves ``graph`` (None: saved already) and the manifest of ``files``, with
        the ``summary`` of the graph saved (its file count, skipped files and
        warnings): what an index that finds nothing changed reports without
        loading the graph."""
        self.store.mkdir(parents=True, exist_ok=True)
        if graph is not None:
            graph.save(self.graph_path)
        self._stamp = self._file_stamp()
        if self._stamp is None:
            raise StoreError(f"{self.graph_path} vanished right after it was written")
        manifest = {
            "version": MANIFEST_VERSION,
            "root": str(self.root),
            "graph": list(self._stamp),
            "files": _manifest_columns(files),
            "unsupported": dict(sorted(unsupported.items())),
            "summary": {
                "files": summary[0],
                "skipped": _summary_columns(summary[1]),
                "warnings": _summary_columns(summary[2]),
            },
        }
        write_atomic(self.manifest_path, json.dumps(manifest, separators=(",", ":")))

    # -- indexing ---------------------------------------------------------------------

    def index(
        self,
        *,
        full: bool = False,
        progress: Progress | None = None,
        phase: Phase | None = None,
        hold: bool = True,
        read_index: ReadIndex = "when_needed",
        publish: Callable[[KnowledgeGraph, int], object] | None = None,
        before: dict[str, list[Definition]] | None = None,
        scanned: Scanned | None = None,
        load: bool = True,
    ) -> IndexReport:
        """Builds the graph, or updates it with only the files added, changed
        (modification time or size moved *and* content hash differs) or removed since
        the last index; saves graph and manifest when anything changed.
        ``phase(name)`` is called as each phase begins ("scanning", "parsing",
        and on a full build "lexical index", "linking"; "saving" when anything is
        written), ``progress(done, total)`` as files are parsed. With ``hold=False``
        a full build is written to the store without being kept
        (:meth:`KnowledgeGraph.build_into`: less memory at its peak) and is loaded
        when next used, and an index that finds nothing changed reports from the
        manifest's summary of the graph without loading it (the graph is loaded
        only once the walk finds a change): for a caller that only indexes, as
        ``aircher-mem index``.
        A graph loaded to be updated reads its lexical index as ``read_index`` says
        (:meth:`load`). With ``publish``, a full build held in memory begins with
        the graph of the first ``[graph] first_batch_share`` of the files (at most
        ``first_batch_files``; in path order; phase "first files"), handed to
        ``publish(graph, total)`` to answer questions from while the whole graph
        is built. ``before``, on an update, is given the definitions the graph
        held of each file it reads again or removes, by path (their text before
        is gone: :func:`aircher_mem.longterm.changes.extract_refresh` compares
        them with the text now). ``scanned``: the walk of the tree (:meth:`scan`)
        made before, by a caller that walks without holding what the index
        changes; walked again when the manifest was written since (a file indexed
        meanwhile would be missing from it); a file that changed since is found by
        the next index. With ``load=False`` (and ``hold=False``), a graph not loaded
        yet is not loaded beside the walk, nor at all when nothing changed: for a
        caller that answers from the saved graph (:meth:`view`) when it is current."""
        start = time.perf_counter()
        phase = _once(phase)
        if phase is not None:
            phase("scanning")
        # The walk of the tree and the graph's load (both in Rust, without the GIL)
        # run beside the manifest's read: an index of an unchanged tree waits for
        # the longest of the three, not for all. The load is begun before the
        # manifest says whether the graph is wanted when the caller keeps it
        # (``hold``); else only once a change needs it: a load beside the read
        # (the kernel's: 1.8 GB taken in page faults) slowed the read of a process
        # that then only reported, from 0.6 s to 2 s, one run in two.
        loading: _Loading | None = None
        if not full:
            if self._graph is not None and self._stamp != self._file_stamp():
                self._graph = None  # another process indexed since: its graph goes with the manifest read
            if self._graph is None and self.graph_path.is_file() and load and hold:
                loading = _Loading(self._load_file, read_index)
        if scanned is not None and scanned.manifest == stamp(self.manifest_path):
            manifest = self._read_manifest()
            listed, unsupported = scanned.files, scanned.unsupported
        else:
            with ThreadPoolExecutor(1) as pool:
                walking = pool.submit(_tracked, self.root, self.store / WALK_FILE)
                manifest = self._read_manifest()
                listed, unsupported = walking.result()
        old_unsupported, reason = manifest.unsupported, manifest.why
        unloaded = self._graph is None
        summary = manifest.summary
        graph: KnowledgeGraph | None = None
        if (
            not full
            and manifest.files is not None
            and manifest.files.same_as(listed)
            and summary is not None
            and manifest.current
            and unsupported == old_unsupported
            and not self._unviewed()
        ):
            # Each file as the manifest has it: nothing to parse or save, and nothing
            # made per file (a kernel's 56,000 in dicts took a tenth of a second). The
            # report from the manifest's summary when the graph is not wanted, else
            # from the graph (one that cannot be loaded is rebuilt, below).
            try:
                if hold or not unloaded:
                    if loading is not None:
                        self._graph, self._stamp = loading.result()
                    graph = self.load(read_index)
                    summary = (graph.file_count, graph.skipped, graph.warnings)
            except (StoreCorruptError, SchemaVersionError):
                pass
            else:
                return IndexReport(
                    root=str(self.root),
                    full=False,
                    reason="",
                    files=summary[0],
                    parsed=0,
                    added=[],
                    updated=[],
                    removed=[],
                    skipped=summary[1],
                    warnings=summary[2],
                    unsupported=unsupported,
                    unsettled=[],
                    seconds=time.perf_counter() - start,
                )
        old = None
        if manifest.files is not None:
            try:
                old = manifest.files.fingerprints()
            except ValueError as exc:
                reason = f"damaged manifest ({exc})"
        stats = listed.stats()
        tracked = list(stats)
        fingerprints: dict[str, Fingerprint] = {}
        changed: list[str] = []
        unchanged: Summary | None = None  # nothing changed, the graph not loaded: what it holds
        if full:
            reason = "full rebuild requested"
        elif old is not None:
            changed = self._changed(stats, old, fingerprints)
            if not (hold or changed) and unloaded and fingerprints.keys() == old.keys():
                unchanged = manifest.summary  # (None for an older manifest: the graph is loaded)
            if unchanged is None:
                try:
                    if loading is not None:
                        self._graph, self._stamp = loading.result()
                    graph = self.load(read_index)
                except (StoreCorruptError, SchemaVersionError) as exc:
                    reason = f"graph file unreadable ({exc})"
        elif loading is not None:
            # the manifest is not trusted: a full build replaces what was loaded
            with contextlib.suppress(AircherError, OSError):
                loading.result()
        if unchanged is not None:
            old_files = old or {}
            rebuilt = False
            counted, skipped, warnings = unchanged
            parsed, unsettled = 0, []
        elif graph is None or old is None:
            # Taken before parsing: a later edit is seen next time.
            fingerprints = _fingerprints(self.root, tracked, self.max_file_bytes)
            share = math.ceil(len(fingerprints) * self.policy.graph.first_batch_share)
            first = min(self.policy.graph.first_batch_files, share)
            if hold and publish is not None and len(fingerprints) > first:
                graph = self._build_in_two_steps(fingerprints, first, progress, phase, publish)
                counted, skipped, warnings = graph.file_count, graph.skipped, graph.warnings
            elif hold:
                graph = KnowledgeGraph.build(
                    self.root, max_file_bytes=self.max_file_bytes, progress=progress, phase=phase
                )
                counted, skipped, warnings = graph.file_count, graph.skipped, graph.warnings
            else:
                self._graph = graph = None
                self.store.mkdir(parents=True, exist_ok=True)
                counted, skipped, warnings = KnowledgeGraph.build_into(
                    self.root, self.graph_path, max_file_bytes=self.max_file_bytes, progress=progress, phase=phase
                )
            parsed = _parsed(skipped, fingerprints)
            unsettled = self._settle(fingerprints, list(fingerprints))
            old_files = old or {}
            rebuilt = True
        else:
            old_files = old
            rebuilt = False
            if phase is not None:
                phase("parsing")
            for done, rel in enumerate(changed, 1):
                if before is not None and rel in old:
                    _keep_definitions(graph, rel, before)
                graph.update_file(rel)
                if progress is not None:
                    progress(done, len(changed))
            for rel in sorted(old.keys() - fingerprints.keys()):
                if before is not None:
                    _keep_definitions(graph, rel, before)
                graph.remove_file(rel)
            counted, skipped, warnings = graph.file_count, graph.skipped, graph.warnings
            parsed = _parsed(skipped, changed)
            unsettled = self._settle(fingerprints, changed)
        added = sorted(fingerprints.keys() - old_files.keys())
        removed = sorted(old_files.keys() - fingerprints.keys())
        for rel in removed:
            what = _not_a_file(self.root / rel)
            if what:
                log.warning("%s is %s now: skipped, not read (removed from the graph)", rel, what)
        # (a file not parsed again has the fingerprint it had: only those parsed can differ)
        parsed_now = fingerprints.keys() & old_files.keys() if rebuilt else old_files.keys() & changed
        updated = sorted(p for p in parsed_now if not _same(fingerprints[p], old_files[p]))
        # The graph is saved when it changed; the manifest also when only times moved,
        # or it has no summary yet (written by an older version).
        graph_changed = bool(rebuilt or added or removed or updated)
        if not graph_changed and self._unviewed():
            # saved by an older version, or its view or lexical index damaged: saved
            # again, so that a search reads it in place (see view)
            if graph is None:
                graph = loading.result()[0] if loading is not None else self.load(read_index)
            graph_changed = True
        if (
            graph_changed
            or fingerprints != old_files
            or unsupported != old_unsupported
            or manifest.summary is None
            or not manifest.current
        ):
            if phase is not None:
                phase("saving")
            self._save(graph if graph_changed else None, fingerprints, unsupported, (counted, skipped, warnings))
        if unchanged is None:
            self._graph = graph
        return IndexReport(
            root=str(self.root),
            full=rebuilt,
            reason=reason if rebuilt else "",
            files=counted,
            parsed=parsed,
            added=added,
            updated=updated,
            removed=removed,
            skipped=skipped,
            warnings=warnings,
            unsupported=unsupported,
            unsettled=unsettled,
            seconds=time.perf_counter() - start,
        )

    def _build_in_two_steps(
        self,
        fingerprints: dict[str, Fingerprint],
        first: int,
        progress: Progress | None,
        phase: Phase | None,
        publish: Callable[[KnowledgeGraph, int], object],
    ) -> KnowledgeGraph:
        """The graph of the project, built twice: on the ``first`` files (in path
        order) of those ``fingerprints`` names, handed to ``publish(graph, total)``
        (``total``: the files indexable), then on all of them (the build reports
        to ``progress`` and ``phase``). A per-file update of the others instead
        made the whole index 5x slower on the stdlib: each update relinks; a
        graph of its first 200 files (of 1,802) first added 6-7 %."""
        files = [rel for rel, fp in fingerprints.items() if fp[1] <= self.max_file_bytes]
        if phase is not None:
            phase("first files")
        head = KnowledgeGraph.build(self.root, max_file_bytes=self.max_file_bytes, only=files[:first])
        publish(head, len(files))
        return KnowledgeGraph.build(self.root, max_file_bytes=self.max_file_bytes, progress=progress, phase=phase)

    def _settle(self, fingerprints: dict[str, Fingerprint], parsed: list[str]) -> list[str]:
        """Looks at the ``parsed`` files again after parsing: one whose time or size
        moved since its fingerprint (it changed while being read) gets the UNSETTLED
        fingerprint, so the next index parses it again. Returns those files."""
        unsettled = []
        for rel in parsed:
            if _stat(self.root / rel) != fingerprints[rel][:2]:
                fingerprints[rel] = UNSETTLED
                unsettled.append(rel)
        return sorted(unsettled)

    def compare_with_fresh_build(self) -> str:
        """Builds the graph afresh (in memory) and says how the stored one differs:
        "" when files and edges are the same."""
        fresh = KnowledgeGraph.build(self.root, max_file_bytes=self.max_file_bytes)
        stored = self.graph
        problems = []
        extra, missing = sorted(set(stored.files) - set(fresh.files)), sorted(set(fresh.files) - set(stored.files))
        if extra:
            problems.append(f"{len(extra)} file(s) no longer there or indexable ({', '.join(extra[:3])})")
        if missing:
            problems.append(f"{len(missing)} file(s) not in the graph ({', '.join(missing[:3])})")
        edges_stored, edges_fresh = set(stored.edges()), set(fresh.edges())
        if edges_stored != edges_fresh:
            problems.append(
                f"{len(edges_stored - edges_fresh)} edge(s) a fresh build does not have, "
                f"{len(edges_fresh - edges_stored)} it has that the graph lacks"
            )
        return "; ".join(problems)

    def _changed(
        self, stats: dict[str, tuple[int, int]], old: dict[str, Fingerprint], fingerprints: dict[str, Fingerprint]
    ) -> list[str]:
        """The tracked files (with their (mtime_ns, size) as the walk saw them) whose
        content differs from ``old`` (fills ``fingerprints``)."""
        if stats == dict(zip(old, map(itemgetter(0, 1), old.values()))):  # (at C speed: the usual case)
            fingerprints.update(old)
            return []
        moved: list[str] = []
        for rel, now in stats.items():
            before = old.get(rel)
            if before is not None and before[:2] == now:
                fingerprints[rel] = before
            else:
                moved.append(rel)
        changed: list[str] = []
        for rel, fp in _fingerprints(self.root, moved, self.max_file_bytes).items():
            fingerprints[rel] = fp
            before = old.get(rel)
            if before is None or not _same(before, fp):
                changed.append(rel)
        return changed
