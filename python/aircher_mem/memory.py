"""One entry point: a project's memory in ``<root>/.aircher/``.

``Memory.open(root)`` creates or opens the store and hands out the pieces wired
together: the episodic store (``memory.duckdb``), the code graph (``graph.bin``),
the policy (``config.toml``) and a context manager fed by both. ``index()`` builds
the graph, or refreshes only the files that changed since the last index.

Which files changed is decided by a manifest (``files.json``): each indexed file's
modification time, size and SHA-256. A file whose time or size moved is hashed, and
re-parsed only if its content differs. The manifest names the graph file it belongs
to (its size and time), so a graph written by another process is never paired with
a stale manifest: that case, a missing or damaged manifest and a damaged graph file
all lead to a full rebuild.

The episodic store and the graph are opened on first use, so graph lookups work
while another process (an MCP server) holds the DuckDB file, which allows one writer.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ._core import KnowledgeGraph
from .codegraph import find_relevant_to_query
from .config import CONFIG_FILE, Policy
from .context import DynamicContextManager, RelevantCode
from .episodic import EpisodicMemory
from .errors import (
    InvalidInputError,
    NotIndexedError,
    SchemaVersionError,
    StoreCorruptError,
    StoreError,
    StoreNotFoundError,
)
from .tokens import TokenCounter

__all__ = ["Memory", "IndexReport", "STORE_DIR", "tracked_files"]

STORE_DIR = ".aircher"
DB_FILE = "memory.duckdb"
GRAPH_FILE = "graph.bin"
MANIFEST_FILE = "files.json"
MANIFEST_VERSION = 1
_HASH_CHUNK = 1 << 20

Progress = Callable[[int, int], object]


@dataclasses.dataclass(frozen=True)
class IndexReport:
    """What one ``Memory.index()`` did. ``added``/``updated``/``removed`` compare
    the files indexed now with those of the previous index (every file is "added"
    when there is no manifest to trust); ``parsed`` counts the files parsed (all of them on a full build)."""

    full: bool
    reason: str
    files: int
    parsed: int
    added: list[str]
    updated: list[str]
    removed: list[str]
    skipped: list[tuple[str, str]]
    warnings: list[tuple[str, str]]
    seconds: float

    @property
    def changed(self) -> bool:
        return bool(self.full or self.added or self.updated or self.removed)

    @property
    def files_per_second(self) -> float:
        return self.parsed / self.seconds if self.seconds > 0 else 0.0


def tracked_files(root: Path) -> list[str]:
    """The files the graph's scan walks to, relative to ``root`` with ``/``, sorted:
    every source file of a supported language that .gitignore, the hidden and the
    vendored-folder rules let through, whatever its size or content."""
    sources, _ = KnowledgeGraph.discover(root, max_file_bytes=2**64 - 1)
    return sources


def _fingerprint(path: Path, max_hash_bytes: int) -> tuple[int, int, str] | None:
    """(mtime_ns, size, sha256) of a file, taken before it is read; None if it is gone.
    Files too large to index are not hashed (their size is what matters)."""
    try:
        stat = path.stat()
        digest = ""
        if stat.st_size <= max_hash_bytes:
            sha = hashlib.sha256()
            with path.open("rb") as handle:
                while chunk := handle.read(_HASH_CHUNK):
                    sha.update(chunk)
            digest = sha.hexdigest()
    except OSError:
        return None
    return stat.st_mtime_ns, stat.st_size, digest


def _same(a: tuple[int, int, str], b: tuple[int, int, str]) -> bool:
    """Same content: equal hashes, or for files too large to hash, equal time and size."""
    return a[2] == b[2] if a[2] and b[2] else a == b


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


class Memory:
    """A project's memory: ``Memory.open(root)``, use, ``close()`` (or ``with``).

    ``episodic`` and ``graph`` open on first use; ``context`` is a
    :class:`DynamicContextManager` whose code comes from the graph and whose prunes,
    snapshots and similar past tasks go to and come from the episodic store.
    """

    def __init__(self, root: Path, policy: Policy, *, max_file_bytes: int = 1_000_000) -> None:
        self.root = root
        self.store = root / STORE_DIR
        self.policy = policy
        self.max_file_bytes = max_file_bytes
        self._episodic: EpisodicMemory | None = None
        self._graph: KnowledgeGraph | None = None
        self._graph_stamp: tuple[int, int] | None = None  # graph.bin as last loaded or saved here
        self._context: DynamicContextManager | None = None
        self._tokens: TokenCounter | None = None
        self._closed = False

    @classmethod
    def open(cls, root: str | os.PathLike[str] = ".", *, create: bool = True,
             max_file_bytes: int = 1_000_000) -> Memory:
        """Opens ``<root>/.aircher/``; creates it (with a default ``config.toml``) if
        ``create``, else raises :class:`StoreNotFoundError` when it is absent."""
        path = Path(root).expanduser()
        if not path.is_dir():
            raise InvalidInputError(f"{path} is not a directory")
        path = path.resolve()
        store = path / STORE_DIR
        if not store.is_dir():
            if not create:
                raise StoreNotFoundError(
                    f"no aircher-mem store in {path} (no {STORE_DIR}/ folder); "
                    f"create it with `aircher-mem index {path}`")
            try:
                store.mkdir()
            except OSError as exc:
                raise StoreError(f"cannot create {store}: {exc}") from None
        config = path / CONFIG_FILE
        if not config.exists():
            try:
                _write_atomic(config, Policy().to_toml())
            except OSError as exc:
                raise StoreError(f"cannot write {config}: {exc}") from None
        return cls(path, Policy.load(path), max_file_bytes=max_file_bytes)

    # -- paths ------------------------------------------------------------------------

    @property
    def db_path(self) -> Path:
        return self.store / DB_FILE

    @property
    def graph_path(self) -> Path:
        return self.store / GRAPH_FILE

    @property
    def manifest_path(self) -> Path:
        return self.store / MANIFEST_FILE

    def relative(self, path: str | os.PathLike[str]) -> str:
        """``path`` (relative to the root, or absolute) as a root-relative path with
        ``/``; a path that leads outside the root (``..``, another absolute path, a
        symlink pointing out) raises :class:`InvalidInputError`."""
        raw = os.fspath(path)
        if not isinstance(raw, str) or not raw.strip() or "\0" in raw:
            raise InvalidInputError(f"path must be a non-empty string, got {raw!r}")
        candidate = Path(raw).expanduser()
        full = (candidate if candidate.is_absolute() else self.root / candidate).resolve()
        try:
            rel = full.relative_to(self.root)
        except ValueError:
            raise InvalidInputError(f"{raw} is outside the project root {self.root}") from None
        if rel == Path("."):
            raise InvalidInputError(f"{raw} is the project root, not a file in it")
        return rel.as_posix()

    # -- the pieces -------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError(f"the memory of {self.root} is closed")

    @property
    def episodic(self) -> EpisodicMemory:
        """The episodic store (opened on first use; :class:`StoreLockedError` if
        another process has it open)."""
        self._check_open()
        if self._episodic is None:
            self._episodic = EpisodicMemory(self.db_path)
        return self._episodic

    @property
    def indexed(self) -> bool:
        return self._graph is not None or self.graph_path.is_file()

    @property
    def graph(self) -> KnowledgeGraph:
        """The code graph as last indexed (loaded on first use). Raises
        :class:`NotIndexedError` before the first ``index()``, and
        :class:`StoreCorruptError` / :class:`SchemaVersionError` for a graph file
        that cannot be read (``index()`` rebuilds it)."""
        self._check_open()
        if self._graph is None:
            if not self.graph_path.is_file():
                raise NotIndexedError(f"{self.root} has not been indexed yet: run `aircher-mem index {self.root}`")
            stamp = self._stamp()
            self._graph = KnowledgeGraph.load(self.graph_path, root=self.root, max_file_bytes=self.max_file_bytes)
            self._graph_stamp = stamp
        return self._graph

    def _stamp(self) -> tuple[int, int] | None:
        try:
            stat = self.graph_path.stat()
        except OSError:
            return None
        return stat.st_mtime_ns, stat.st_size

    @property
    def tokens(self) -> TokenCounter:
        if self._tokens is None:
            self._tokens = TokenCounter(self.policy.encoding)
        return self._tokens

    @property
    def context(self) -> DynamicContextManager:
        """The session's context manager: relevant code from the graph (once
        indexed), prunes and snapshots recorded in the episodic store."""
        if self._context is None:
            self._context = self.context_manager()
        return self._context

    def context_manager(self, *, max_tokens: int | None = None, code_tokens: int = 2000,
                        record: bool = True, history: bool = True) -> DynamicContextManager:
        """A new context manager over this memory. ``record=False`` writes nothing to
        the episodic store (for previews); ``history=False`` does not look up similar
        past tasks in it either, so the store is not opened."""
        policy = self.policy if max_tokens is None else dataclasses.replace(self.policy, max_tokens=max_tokens)

        def code(message: str) -> list[RelevantCode]:
            return self.relevant_code(message, max_tokens=code_tokens) if self.indexed else []

        episodic = self.episodic if record or history else None
        return DynamicContextManager(
            policy, code_provider=code,
            history_provider=episodic.find_similar_tasks if history and episodic is not None else None,
            episodic=episodic if record else None, tokens=self.tokens)

    def relevant_code(self, query: str, *, max_tokens: int = 2000,
                      focus_files: list[str] | None = None) -> list[RelevantCode]:
        """The code most relevant to ``query`` that fits ``max_tokens`` (see
        :func:`find_relevant_to_query`)."""
        if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens <= 0:
            raise InvalidInputError(f"max_tokens must be a positive integer, got {max_tokens!r}")
        focus = [self.relative(f) for f in focus_files or []]
        return find_relevant_to_query(self.graph, query, max_tokens=max_tokens, focus_files=focus,
                                      tokens=self.tokens)

    # -- indexing ---------------------------------------------------------------------

    def _read_manifest(self) -> tuple[dict[str, tuple[int, int, str]] | None, str]:
        """The manifest's files, or None and why it cannot be trusted."""
        try:
            data = json.loads(self.manifest_path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None, "first index" if not self.graph_path.exists() else "no manifest of the indexed files"
        except (OSError, ValueError) as exc:
            return None, f"unreadable manifest ({exc})"
        try:
            if data["version"] != MANIFEST_VERSION or data["root"] != str(self.root):
                return None, "manifest of another version or project root"
            stamp = self._stamp()
            if stamp is None:
                return None, "graph file missing"
            if data["graph"] != list(stamp):
                return None, "graph file written since the manifest (by another process?)"
            files = {str(p): (int(m), int(s), str(h)) for p, (m, s, h) in data["files"].items()}
        except (KeyError, TypeError, ValueError) as exc:
            return None, f"damaged manifest ({exc!r})"
        return files, ""

    def index_problem(self) -> str:
        """Why the next ``index()`` will rebuild the whole graph; "" if it will not."""
        return self._read_manifest()[1]

    def _save(self, graph: KnowledgeGraph, files: dict[str, tuple[int, int, str]]) -> None:
        graph.save(self.graph_path)
        self._graph_stamp = self._stamp()
        if self._graph_stamp is None:
            raise StoreError(f"{self.graph_path} vanished right after it was written")
        manifest = {"version": MANIFEST_VERSION, "root": str(self.root), "graph": list(self._graph_stamp),
                    "files": {p: list(v) for p, v in sorted(files.items())}}
        _write_atomic(self.manifest_path, json.dumps(manifest, separators=(",", ":")))

    def index(self, *, full: bool = False, progress: Progress | None = None) -> IndexReport:
        """Builds the graph, or updates it with only the files added, changed
        (modification time or size moved *and* content hash differs) or removed since
        the last index; saves graph and manifest when anything changed.
        ``progress(done, total)`` is called as files are parsed."""
        self._check_open()
        start = time.perf_counter()
        old, reason = self._read_manifest()
        graph: KnowledgeGraph | None = None
        if full:
            reason = "full rebuild requested"
        elif old is not None:
            if self._graph is not None and self._graph_stamp != self._stamp():
                self._graph = None  # another process indexed since: its graph goes with the manifest read
            try:
                graph = self.graph
            except (StoreCorruptError, SchemaVersionError) as exc:
                reason = f"graph file unreadable ({exc})"
        tracked = tracked_files(self.root)
        fingerprints: dict[str, tuple[int, int, str]] = {}
        parsed = 0
        if graph is None or old is None:
            for rel in tracked:  # taken before parsing: a later edit is seen next time
                fp = _fingerprint(self.root / rel, self.max_file_bytes)
                if fp is not None:
                    fingerprints[rel] = fp
            graph = KnowledgeGraph.build(self.root, max_file_bytes=self.max_file_bytes, progress=progress)
            parsed = len(fingerprints)
            old_files = old or {}
            rebuilt = True
        else:
            old_files = old
            rebuilt = False
            changed: list[str] = []
            for rel in tracked:
                before = old.get(rel)
                try:
                    stat = (self.root / rel).stat()
                except OSError:
                    continue
                if before is not None and before[:2] == (stat.st_mtime_ns, stat.st_size):
                    fingerprints[rel] = before
                    continue
                fp = _fingerprint(self.root / rel, self.max_file_bytes)
                if fp is None:
                    continue
                fingerprints[rel] = fp
                if before is None or not _same(before, fp):
                    changed.append(rel)
            for done, rel in enumerate(changed, 1):
                graph.update_file(rel)
                if progress is not None:
                    progress(done, len(changed))
            for rel in sorted(old.keys() - fingerprints.keys()):
                graph.remove_file(rel)
            parsed = len(changed)
        added = sorted(fingerprints.keys() - old_files.keys())
        removed = sorted(old_files.keys() - fingerprints.keys())
        updated = sorted(p for p in fingerprints.keys() & old_files.keys() if not _same(fingerprints[p], old_files[p]))
        if rebuilt or added or removed or updated or fingerprints != old_files:
            self._save(graph, fingerprints)
        self._graph = graph
        return IndexReport(
            full=rebuilt, reason=reason if rebuilt else "", files=graph.file_count, parsed=parsed, added=added,
            updated=updated, removed=removed, skipped=graph.skipped, warnings=graph.warnings,
            seconds=time.perf_counter() - start)

    # -- lifetime ---------------------------------------------------------------------

    def flush(self) -> None:
        """Makes everything recorded durable (the graph is saved by ``index()``)."""
        if self._episodic is not None:
            self._episodic.flush()

    def close(self) -> None:
        """Flushes and closes; safe to call twice."""
        if self._closed:
            return
        self._closed = True
        if self._episodic is not None:
            self._episodic.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Memory({str(self.root)!r})"

