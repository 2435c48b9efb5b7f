"""The service: one project's memory in ``<root>/.aircher/``, and every verb the
interfaces (CLI, MCP server) offer.

``Memory.open(root)`` creates or opens the store: the episodic store
(``memory.duckdb``), the code graph (``graph.bin`` + ``files.json``) and the policy
(``config.toml``). Each verb returns a typed result from :mod:`aircher_mem.results`;
the interfaces only turn arguments into a call and the result into JSON or a table.

Verbs run one at a time (one lock: DuckDB's connection takes one caller at a time,
and servers run tools on worker threads). Graph verbs first refresh an indexed graph
(incrementally: only changed files are parsed) when ``[server] refresh_seconds``
passed since the last look or a recorded edit made it stale, so a long-running server
follows the agent's edits; a one-shot command looks once.

The episodic store and the graph are opened on first use, so graph lookups work
while another process (an MCP server) holds the DuckDB file, which allows one writer.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import functools
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, ParamSpec, TypeVar, get_args

from . import _core, assembly, journal
from ._core import GraphView, KnowledgeGraph, __version__
from .checks import (
    MAX_INT,
    MAX_TTL_SECONDS,
    Arg,
    FilePath,
    Files,
    JsonObject,
    Kind,
    Level,
    Limit,
    MemoryId,
    Name,
    SessionId,
    Snapshot,
    Tags,
    TaskId,
    Time,
    Tokens,
    unix_time,
)
from .checks import flag as _flag
from .checks import limit as _limit
from .checks import text as _text
from .config import CONFIG_FILE, Policy
from .errors import (
    AircherError,
    InvalidInputError,
    NotIndexedError,
    PolicyError,
    StoreCorruptError,
    StoreError,
    StoreLockedError,
    StoreNotFoundError,
    UnknownSymbolError,
)
from .graph import GraphIndex, IndexTracker, Progress, ReadIndex, Scanned, read_source, write_atomic
from .results import (
    Assembled,
    Calls,
    CausalChain,
    Check,
    CodeHit,
    CodeResult,
    CodeSearch,
    CoEdits,
    ConsolidationReport,
    ContextPreview,
    Contradiction,
    ContradictionList,
    Conversation,
    Definition,
    Dependencies,
    Doctor,
    ExtractedFacts,
    FactReview,
    FeedbackResult,
    FileHistory,
    FileOutline,
    Forgotten,
    GcReport,
    GraphStats,
    IndexProgress,
    IndexReport,
    InitResult,
    MemoryExplanation,
    MemoryList,
    MemoryRecord,
    Neighbour,
    Neighbourhood,
    PartialIndex,
    Patterns,
    PredictedWorkflow,
    Prediction,
    ProjectDiscovery,
    Recall,
    RecallHit,
    Recorded,
    Reference,
    ReferenceList,
    RelevantCode,
    Remembered,
    Routed,
    Stats,
    Symbols,
    Task,
    Tasks,
    Tier,
    TurnAdded,
)
from .retrieval import (
    LEVELS,
    VECTORS_SUFFIX,
    DenseIndex,
    dense_channel,
    dense_embedder,
    find_relevant_to_query,
    search_code,
)
from .root import STORE_DIR, find_root, git_branch
from .store import taken
from .verbs import verb

# What only some verbs use is imported by them (each a few milliseconds of patterns
# and dataclasses at import): a command that searches code does not load the long-term
# store's rules, nor a hook the embeddings.
if TYPE_CHECKING:
    from .context import DynamicContextManager, Message
    from .episodic import EpisodicMemory
    from .longterm import LongTermMemory
    from .longterm.store import Extractor, Judge, Summarizer
    from .prediction import Signals
    from .tokens import TokenCounter

#: Those of them that annotations name, with their modules: the verb registry
#: evaluates a verb's annotations with them (:mod:`aircher_mem.verbs`).
LAZY_NAMES = {
    "DynamicContextManager": ".context",
    "Message": ".context",
    "EpisodicMemory": ".episodic",
    "LongTermMemory": ".longterm",
    "Extractor": ".longterm.store",
    "Judge": ".longterm.store",
    "Summarizer": ".longterm.store",
    "Signals": ".prediction",
    "TokenCounter": ".tokens",
}

__all__ = ["Memory", "STORE_DIR", "TASK_ACTIONS", "REFERENCE_KINDS", "find_root"]

log = logging.getLogger("aircher_mem.memory")

DB_FILE = "memory.duckdb"
#: The longest text before an edit ``extract_facts`` takes: a file longer than what the
#: parser reads of one (``changes.MAX_FILE_BYTES``) gives no facts anyway.
MAX_EDIT_CHARS = 1_000_000
# The memories changed since the router's hierarchy was grouped that are placed
# again one by one; more, and they are all grouped again (about as fast then).
HIERARCHY_PLACED = 256
TaskAction = Literal["start", "pause", "resume", "complete", "fail"]
ReferenceKind = Literal["calls", "references", "inherits", "uses", "imports"]
# The signals of predict and assemble.
Query = Annotated[str | None, Arg(description="The message or question at hand.")]
CurrentFile = Annotated[str | None, Arg(description="The file open now, relative to the root.")]
RecentErrors = Annotated[Sequence[str], Arg(description="Recent error texts (a traceback, a failing test's output).")]
Branch = Annotated[str | None, Arg(description="The git branch checked out.")]
Activity = Annotated[
    Literal["debugging", "feature", "review", "refactor", "exploring"] | None,
    Arg(description="What the agent is doing: debugging, feature, review, refactor or exploring."),
]
Scope = Annotated[
    Literal["project-shared", "user-private"],
    Arg(description="project-shared: every user of the store; user-private: this user's only (on a team's store)."),
]
IdempotencyKey = Annotated[
    str | None,
    Arg(
        min_length=1,
        max_length=1000,
        description="The client's key for this request: a retry with the same key is not stored twice.",
    ),
]
Operation = Literal["read", "write", "edit", "search", "analyze"]  # "viewed" is the window's own
TASK_ACTIONS: tuple[str, ...] = get_args(TaskAction)
REFERENCE_KINDS: tuple[str, ...] = get_args(ReferenceKind)

#: A record's note when its idempotency key was stored before.
_STORED_BEFORE = "stored before with this idempotency key: not stored again"

P = ParamSpec("P")
R = TypeVar("R")
_S = TypeVar("_S")

#: Who the long-term verbs act for in this thread (:meth:`Memory.as_user`); None:
#: the store's own user.
_ACTING: contextvars.ContextVar[str | None] = contextvars.ContextVar("aircher_mem_acting", default=None)


def _verb(method: Callable[P, R]) -> Callable[P, R]:
    """Runs a verb under the memory's lock, refusing a closed memory."""

    @functools.wraps(method)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        self = args[0]
        assert isinstance(self, Memory)
        with self._lock:
            self._check_open()
            with self._team_verb():
                return method(*args, **kwargs)

    return run


def _durable(method: Callable[P, R]) -> Callable[P, R]:
    """A long-term write verb: runs under the memory's lock like :func:`_verb`, and
    returns only once what it wrote is committed. Commits are grouped: the verb's
    rows wait, outside the lock, for one commit of everything pending, made by the
    first writer to get there, so concurrent writers (the server's threads) share a
    transaction; a lone writer commits its own at once. Inside :meth:`Memory.batch`
    the batch commits."""

    @functools.wraps(method)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        self = args[0]
        assert isinstance(self, Memory)
        with self._lock:
            self._check_open()
            longterm = self.longterm
            self._depth += 1
            try:
                with longterm.acting(), longterm.deferring():
                    result = method(*args, **kwargs)
            finally:
                self._depth -= 1
            if self._batching:
                return result
            self._written += 1
            ticket = self._written
            if self._depth:  # called from within another verb: this thread holds the lock
                self._commit(ticket)
                return result
        with self._committing:
            self._commit(ticket)
        return result

    return run


def _symbol(s: _core.Definition) -> Definition:
    return Definition(s.name, s.kind, s.scope, s.path, s.line, s.end_line, s.signature)


def _call(c: _core.Reference) -> Reference:
    return Reference(_symbol(c.symbol), c.line, c.kind, c.confidence)


def _flat(value: object, depth: int = 0) -> str:
    """The strings inside a tool's parameters, one per line (nesting bounded)."""
    if isinstance(value, str):
        return value
    if depth > 8:
        return ""
    if isinstance(value, dict):
        return "\n".join(_flat(v, depth + 1) for v in list(value.values())[:100])
    if isinstance(value, (list, tuple)):
        return "\n".join(_flat(v, depth + 1) for v in value[:100])
    return ""


def _name(value: object) -> str:
    return _text("name", value, max_chars=10_000).strip()


def _named(field: str, value: str | None) -> str | None:
    """A signal that names something (a branch, a task, a person): text of at most
    1,000 characters, or None."""
    return None if value is None else _text(field, value, max_chars=1000, blank=True)


def _dense_domains(hits: Sequence[RecallHit], known: assembly.Hierarchy) -> dict[str, float]:
    """Each domain's best dense similarity among the memories recall found (the
    dense channel's raw cosine; none when the channel is off)."""
    best: dict[str, float] = {}
    for hit in hits:
        memory = known.by_id.get(hit.id) if hit.kind != "turn" else None
        if memory is None or not memory.domain:
            continue
        for channel in hit.channels:
            if channel.channel == "dense" and channel.raw > best.get(memory.domain, 0.0):
                best[memory.domain] = channel.raw
    return best


class Memory:
    """A project's memory: ``Memory.open(root)``, use, ``close()`` (or ``with``).

    ``episodic`` and ``graph`` open on first use; ``window`` is the session's
    :class:`DynamicContextManager`, whose code comes from the graph and whose prunes,
    snapshots and similar past tasks go to and come from the episodic store.
    """

    def __init__(
        self,
        root: Path,
        policy: Policy,
        *,
        created: bool = False,
        extractor: Extractor | None = None,
        summarizer: Summarizer | None = None,
        judge: Judge | None = None,
    ) -> None:
        self.root = root
        self.extractor = extractor
        self.summarizer = summarizer
        self.judge = judge
        self.store = root / STORE_DIR
        self.policy = policy
        self.created = created
        self._index = GraphIndex(root, self.store, policy)
        self._tracker = IndexTracker()
        #: A first index lets other threads read its graph as it grows (see
        #: :meth:`index`); the HTTP server sets it for the memory it serves.
        self.partial_answers = False
        #: Whether opening the store asks a server that offers it (one a hook
        #: started) to give it up, waiting ``[server] yield_wait_seconds``
        #: (:func:`store.taken`); the hooks themselves never do.
        self.take_offered_store = True
        self._building: threading.Event | None = None  # set when a first index in two steps is over
        self._published = threading.Event()  # set once its first part can be read
        self._partial: tuple[KnowledgeGraph, PartialIndex] | None = None
        self._episodic: EpisodicMemory | None = None
        self._longterm: LongTermMemory | None = None
        self._acting_for: dict[str, LongTermMemory] = {}  # as_user's stores, by user
        self._window: DynamicContextManager | None = None
        self._tokens: TokenCounter | None = None
        self._lock = threading.RLock()
        self._checked: float | None = None  # when the graph was last refreshed (monotonic)
        self._stale = False
        self._refreshing: threading.Thread | None = None  # a refresh after an answer (_refresh_after)
        self._view: GraphView | None = None  # the saved graph searched in place (see _searchable)
        # see _hierarchy; by as_user's user: (shape, place in the change log, the hierarchy)
        self._known: dict[str | None, tuple[int, tuple[list[int], int], assembly.Hierarchy]] = {}
        self._dense_channel: tuple[DenseIndex | None, str] | None = None
        self._closed = False
        self._batching = 0  # depth of batch() blocks
        # Group commit (_durable): writes counted, the count committed, who commits.
        self._written = 0
        self._committed = 0
        self._committing = threading.Lock()
        self._depth = 0  # durable verbs running on the thread holding the lock
        self._listener: Any = None  # watch_team's

    @classmethod
    def open(
        cls,
        root: str | os.PathLike[str] = ".",
        *,
        create: bool = True,
        policy: Policy | None = None,
        extractor: Extractor | None = None,
        summarizer: Summarizer | None = None,
        judge: Judge | None = None,
    ) -> Memory:
        """Opens ``<root>/.aircher/``; creates it (with a default ``config.toml``) if
        ``create``, else raises :class:`StoreNotFoundError` when it is absent.
        ``policy`` overrides the project's ``config.toml``; ``extractor`` is an
        optional LLM callable for long-term memory (``[longterm] extractor_mode``);
        ``summarizer`` an optional LLM callable that forms episodes with seed 003's
        prompts (``[lifecycle] summarizer_timeout_seconds``; the extractive forms
        when it fails or is late); ``judge`` an optional LLM callable asked whether
        two memories contradict (seed 001's prompt; ``[decisions]``), for the pairs
        the offline rules pass over, or an NLI model (:class:`aircher_mem.nli.NliJudge`)."""
        if not isinstance(root, (str, os.PathLike)) or not os.fspath(root):
            raise InvalidInputError(f"root must be a folder's path, got {root!r:.80}")
        try:
            os.fsencode(root)
        except (UnicodeEncodeError, TypeError):
            raise InvalidInputError(f"root {root!r:.80} is not a valid path") from None
        path = Path(root).expanduser()
        if not path.is_dir():
            raise InvalidInputError(f"{path} is not a directory")
        path = path.resolve()
        store = path / STORE_DIR
        created = not store.is_dir()
        if not created:
            try:  # the store is the user's alone, whoever made the folder
                if store.stat().st_mode & 0o077:
                    store.chmod(0o700)
            except OSError as exc:
                raise StoreError(f"cannot make {store} private: {exc}") from None
        if created:
            if not create:
                raise StoreNotFoundError(
                    f"no aircher-mem store in {path} (no {STORE_DIR}/ folder); "
                    f"create it with `aircher-mem index {path}`"
                )
            try:
                store.mkdir(mode=0o700)
            except OSError as exc:
                raise StoreError(f"cannot create {store}: {exc}") from None
        config = path / CONFIG_FILE
        if not config.exists():
            try:
                write_atomic(config, Policy().to_toml())
            except OSError as exc:
                raise StoreError(f"cannot write {config}: {exc}") from None
        for name, given in (("extractor", extractor), ("summarizer", summarizer)):
            if given is not None and not callable(given):
                raise InvalidInputError(f"{name} must be callable, got {given!r:.80}")
        if judge is not None:
            from .longterm.schema import check_judge

            check_judge(judge)
        return cls(
            path,
            policy or Policy.load(path),
            created=created,
            extractor=extractor,
            summarizer=summarizer,
            judge=judge,
        )

    # -- paths and pieces -------------------------------------------------------------

    @property
    def db_path(self) -> Path:
        return self.store / DB_FILE

    @property
    def graph_path(self) -> Path:
        return self._index.graph_path

    @property
    def manifest_path(self) -> Path:
        return self._index.manifest_path

    def relative(self, path: str | os.PathLike[str]) -> str:
        """``path`` (relative to the root, or absolute) as a root-relative path with
        ``/``; a path that leads outside the root (``..``, another absolute path, a
        symlink pointing out) raises :class:`InvalidInputError`."""
        return self._index.relative(path)

    def _project_files(self, paths: Sequence[str], limit: int = 50) -> list[str]:
        """The root-relative paths of the regular files of the project among
        ``paths`` (relative or absolute), each once, in order, at most ``limit``."""
        if isinstance(paths, str):
            raise InvalidInputError("mentions must be a list of paths, not one string")
        found: dict[str, None] = {}
        for path in paths:
            if len(found) >= limit:
                break
            if not isinstance(path, str) or not path or "\0" in path:
                continue
            try:
                rel = self.relative(path)
            except InvalidInputError:
                continue
            if rel not in found and self._is_file(rel):
                found[rel] = None
        return list(found)

    def _is_file(self, rel: str) -> bool:
        """Whether the root-relative ``rel`` is a regular file of the project (not
        under the store folder; a symlink counts when it stays inside)."""
        if rel == STORE_DIR or rel.startswith(STORE_DIR + "/"):
            return False
        try:
            return os.path.isfile(self.root / rel)
        except (OSError, ValueError):
            return False

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError(f"the memory of {self.root} is closed")

    @property
    def episodic(self) -> EpisodicMemory:
        """The episodic store (opened on first use, in the project's DuckDB file,
        :class:`StoreLockedError` if another process has it open; or on the team's
        server: ``[store] url``). Opening it writes the hooks' journal into it first
        (:mod:`aircher_mem.journal`)."""
        from .episodic import EpisodicMemory

        self._check_open()
        if self._episodic is None:
            with self._lock:
                if self._episodic is None:
                    team = self.policy.store

                    def open_store() -> EpisodicMemory:
                        return EpisodicMemory(
                            self.db_path,
                            url=team.url,
                            lock_seconds=team.lock_seconds,
                            pool_size=team.pool_size,
                            policy=self.policy.episodic,
                            search=self.policy.retrieval,
                        )

                    self._episodic = self._taken(open_store)
                    journal.drain(self)
        return self._episodic

    @property
    def longterm(self) -> LongTermMemory:
        """Long-term memory: turns and memories (opened on first use, in the same
        DuckDB file as the episodic store, or on the team's server: ``[store] url``);
        within :meth:`as_user`, that user's view of the team's store."""
        self._check_open()
        user = _ACTING.get()
        if user is not None and user not in self._acting_for:
            self._acting_for[user] = self._open_longterm(user)
        if user is not None:
            return self._acting_for[user]
        if self._longterm is None:
            self._longterm = self._open_longterm(None)
        return self._longterm

    def _open_longterm(self, user: str | None) -> LongTermMemory:
        from .longterm import LongTermMemory
        from .nli import configured as nli_judge

        embedder, why = dense_embedder(self.policy)
        team = self.policy.store

        def open_store() -> LongTermMemory:
            return LongTermMemory(
                self.db_path,
                url=team.url,
                lock_seconds=team.lock_seconds,
                changes_days=team.changes_days,
                pool_size=team.pool_size,
                user=user,
                policy=self.policy.longterm,
                retrieval=self.policy.retrieval,
                lifecycle=self.policy.lifecycle,
                decisions=self.policy.decisions,
                knowledge=self.policy.knowledge,
                chains=self.policy.chains,
                contradiction_rules=self.policy.contradictions,
                embedder=embedder,
                dense_note=why,
                extractor=self.extractor,
                summarizer=self.summarizer,
                judge=self.judge if self.judge is not None else nli_judge(self.policy.decisions),
            )

        return self._taken(open_store)

    def _taken(self, open_store: Callable[[], _S]) -> _S:
        """``open_store()``, after a server that offers the store file gave it up (on
        a team's server every process opens it: at once)."""
        if self.policy.store.url:
            return open_store()
        wait = self.policy.server.yield_wait_seconds if self.take_offered_store else 0.0
        return taken(self.db_path, open_store, wait)

    @property
    def indexed(self) -> bool:
        return self._index.indexed

    @property
    def graph(self) -> KnowledgeGraph:
        """The code graph as last indexed (loaded on first use; not refreshed).
        Raises :class:`NotIndexedError` before the first ``index()``."""
        self._check_open()
        return self._index.graph

    @property
    def tokens(self) -> TokenCounter:
        if self._tokens is None:
            from .tokens import TokenCounter

            self._tokens = TokenCounter(self.policy.encoding)
        return self._tokens

    @property
    def window(self) -> DynamicContextManager:
        """The session's context window and its manager: relevant code from the graph
        (once indexed), prunes and snapshots recorded in the episodic store."""
        if self._window is None:
            self._window = self.new_window()
        return self._window

    def new_window(
        self,
        *,
        max_tokens: int | None = None,
        code_tokens: int | None = None,
        record: bool = True,
        history: bool = True,
    ) -> DynamicContextManager:
        """A new context window (and its manager) over this memory, apart from
        :attr:`window`. The code budget per message is
        ``code_tokens``, by default the policy's share of ``max_tokens``.
        ``record=False`` writes nothing to the episodic store (for previews);
        ``history=False`` assembles no context either (:meth:`assemble`: memories,
        past tasks, recent errors), so the store is not opened."""
        policy = self.policy if max_tokens is None else dataclasses.replace(self.policy, max_tokens=max_tokens)
        budget = policy.code_tokens if code_tokens is None else _limit("code_tokens", code_tokens, maximum=2**62)

        def code(message: str) -> list[RelevantCode]:
            if not self.indexed:
                return []
            graph = self._index.view() or self._index.load("with_graph")  # (not loaded: searched in place)
            return find_relevant_to_query(graph, message, max_tokens=budget, tokens=self.tokens, policy=self.policy)

        def assembled(message: str, size: int) -> list[Tier]:
            from .prediction import Signals

            signals = Signals(query=message, task_id=manager.window.current_task)
            try:
                return self._assemble(size, signals, code_hits=False).tiers
            except AircherError as exc:  # the window goes on without it
                log.warning("no assembled context for the window of %s: %s", self.root, exc)
                return []

        episodic = self.episodic if record or history else None  # a held store raises here, not later
        from .context import DynamicContextManager

        manager = DynamicContextManager(
            policy,
            code_provider=code,
            context_provider=assembled if history else None,
            episodic=episodic if record else None,
            tokens=self.tokens,
        )
        return manager

    # -- indexing ---------------------------------------------------------------------

    @verb(python_only=("progress", "hold"))
    def index(
        self,
        *,
        full: Annotated[bool, Arg(description="Rebuild everything.")] = False,
        progress: Progress | None = None,
        hold: bool = True,
    ) -> IndexReport:
        """Builds the graph, or updates it with only the files added, changed or
        removed since the last index (see :class:`aircher_mem.graph.GraphIndex`);
        ``hold=False``: a full build is saved without being kept (less memory at
        its peak), and loaded when next used; an index that finds nothing changed
        reports what the manifest says of the graph without waiting for its load.
        While it runs, :meth:`index_progress` says where it is (from any thread). With :attr:`partial_answers` (a
        server's memory), a first index held in memory lets other threads in once
        the graph of its first files is built (``[graph] first_batch_share`` of
        them, at most ``first_batch_files``):
        ``find_symbol`` and ``search_code`` answer from it (their ``partial`` says
        so) while the whole graph is built; the other graph verbs wait for that."""
        while True:
            with self._lock:
                self._check_open()
                building = self._building
                if building is None:
                    if not (self.partial_answers and hold and not self._index.indexed):
                        return self._index_now(full=full, progress=progress, hold=hold, publish=None)
                    building = self._begin_first_index()
                    break
            building.wait()  # the first index another thread runs; then this one (an update)
        return self._first_index(building, full=full, progress=progress)

    def _begin_first_index(self) -> threading.Event:
        """Marks a first index under way (the caller holds the lock and runs
        :meth:`_first_index` next, in this thread or another)."""
        self._building = building = threading.Event()
        self._published.clear()
        return building

    def _first_index(
        self, building: threading.Event, *, full: bool = False, progress: Progress | None = None
    ) -> IndexReport:
        try:
            # Outside the lock: the other verbs go on; graph verbs read the graph
            # published (see _graph).
            return self._index_now(full=full, progress=progress, hold=True, publish=self._publish)
        finally:
            self._partial = None
            self._building = None
            self._published.set()
            building.set()

    def _index_in_background(self) -> None:
        """Starts a first index in a thread of its own (the caller holds the lock;
        a server's memory): graph verbs answer from its first files meanwhile, and
        :meth:`index_progress` follows it. A failure is logged."""
        building = self._begin_first_index()

        def run() -> None:
            try:
                self._first_index(building)
            except (AircherError, OSError) as exc:
                log.warning("the first index of %s failed: %s", self.root, exc)

        threading.Thread(target=run, name="aircher-mem-first-index", daemon=True).start()

    def _publish(self, graph: KnowledgeGraph, total: int) -> None:
        """The graph of the first files of a first index (of ``total``), for
        ``find_symbol`` and ``search_code`` to answer from while the whole graph
        is built."""
        self._partial = (graph, PartialIndex(graph.file_count, total))
        self._published.set()

    def _index_now(
        self,
        *,
        full: bool,
        progress: Progress | None,
        hold: bool,
        publish: Callable[[KnowledgeGraph, int], object] | None,
    ) -> IndexReport:
        tracker = self._tracker
        tracker.begin(progress)
        before = self._definitions_before()
        try:
            report = self._index.index(
                full=full, progress=tracker, phase=tracker.phase, hold=hold, publish=publish, before=before
            )
            self._checked, self._stale = time.monotonic(), False
            if publish is not None:  # the whole graph is the index's now: the waiting verbs go on
                self._partial = None
                self._building, building = None, self._building
                if building is not None:
                    building.set()
            with self._lock:
                self._index_changed(report, before, open_store=True)
                dense, why = self._dense()
                if dense is None:
                    return dataclasses.replace(report, dense=why)
                tracker.phase("embeddings")
                embedded, dropped = dense.sync(self._index.graph, tracker)
        finally:
            tracker.end()
        said = f"dense channel: {embedded} documents embedded, {dropped} vectors dropped, {len(dense)} in all"
        return dataclasses.replace(report, dense=said)

    @verb(http="GET")
    def index_progress(self) -> IndexProgress:
        """Where the index under way is: its phase ("scanning", "parsing",
        "lexical index", "linking", "saving", "embeddings"; "first files" first
        in a server, see :meth:`index`), files (or documents) done of all, their
        rate and the time left at it; ``running`` false once it is over (the last
        index's figures, or none yet). Answers at once, without waiting for the
        index: poll it while ``index`` runs (the CLI draws its progress line so,
        also through ``aircher-mem serve``).

        For an agent: Whether the project is being indexed and how far: JSON
        {running, phase, done, total, unit, seconds, per_second, seconds_left}."""
        self._check_open()
        return self._tracker.snapshot()

    def _definitions_before(self) -> dict[str, list[_core.Definition]] | None:
        """Where an index refresh keeps the definitions the graph held of the files it
        reads again or removes, when ``[knowledge] facts_on_index`` asks for facts
        from them (else None)."""
        return {} if self.policy.knowledge.facts_on_index else None

    def _index_changed(
        self, report: IndexReport, before: dict[str, list[_core.Definition]] | None, *, open_store: bool = False
    ) -> None:
        """The files an index found updated or removed, and added unless it was a
        full build (without an earlier index to compare with, every file is
        "added": none is known to have changed), refresh the TTLs
        (:meth:`_files_changed`); with ``before`` (see :meth:`_definitions_before`)
        they become candidate facts (:func:`aircher_mem.longterm.changes.extract_refresh`)."""
        added = [] if report.full else report.added
        self._files_changed([*added, *report.updated, *report.removed], open_store=open_store)
        if before is None or report.full or not (report.added or report.updated or report.removed):
            return
        from .longterm import changes

        limit = self.policy.knowledge.max_candidates
        found = changes.extract_refresh(
            self.root, before, added=report.added, updated=report.updated, removed=report.removed, limit=limit
        )
        longterm = self._longterm_for_files(open_store=True, create=True) if found else None
        if longterm is not None:
            try:
                kept = longterm.keep_facts(found[:limit])
            except AircherError as exc:
                log.warning("the facts of the files changed in %s were not kept: %s", self.root, exc)
            else:
                log.info("index refresh of %s: %d candidate facts kept", self.root, len(kept))

    def _dense(self) -> tuple[DenseIndex | None, str]:
        """The dense channel (loaded once), or None and why not."""
        if self._dense_channel is None:
            self._dense_channel = dense_channel(self.policy, self._index.graph_path)
        return self._dense_channel

    def rebuild_reason(self) -> str:
        """Why the next ``index()`` will rebuild the whole graph; "" if it will not."""
        return self._index.problem()

    def _graph(self, read_index: ReadIndex = "when_needed", *, partial: bool = False) -> KnowledgeGraph:
        """The graph, refreshed first when it is indexed and may be out of date. A
        graph loaded now reads its lexical index as ``read_index`` says
        (``"with_graph"`` for a verb that searches: see :meth:`KnowledgeGraph.load`).
        While a first index is under way in another thread (:meth:`index`): with
        ``partial``, the graph of its first files once there is one (see
        :meth:`_partial_of`), else the whole graph once it is built."""
        building = self._building
        if building is not None:
            if partial:
                self._published.wait()
                first = self._partial
                if first is not None:
                    return first[0]
            building.wait()
        if self._index.indexed:
            due = self._checked is None or time.monotonic() - self._checked >= self.policy.server.refresh_seconds
            if self._stale or self._checked is None or (due and not self.policy.server.refresh_after_answer):
                self._refresh(read_index)
            elif due:
                self._refresh_after(read_index)
        return self._index.load(read_index)

    def _searchable(self, *, partial: bool = False) -> KnowledgeGraph | GraphView:
        """The graph a search reads: in a process that has not loaded the graph, the
        saved graph searched where it lies (:meth:`GraphIndex.view`: the same answers,
        without the load), once a look finds the tree as it was indexed (a look that
        finds changes indexes them, and the graph is loaded for it); else
        :meth:`_graph` (``partial`` as there), which loads it. Looks again once
        ``[server] refresh_seconds`` have passed, or after a recorded edit, always
        before answering (``refresh_after_answer`` applies to a loaded graph)."""
        if self._building is None and self._index.indexed and not self._index.loaded:
            due = self._checked is None or time.monotonic() - self._checked >= self.policy.server.refresh_seconds
            if self._view is None or due or self._stale:
                if self._index.view() is not None:
                    self._refresh("with_graph", load=False)
                    self._view = self._index.view()  # (of the files as the look left them)
                else:
                    self._view = None
            if self._view is not None and not self._index.loaded:
                return self._view
        self._view = None
        return self._graph("with_graph", partial=partial)

    def _in_place(
        self,
        answer: Callable[[KnowledgeGraph | GraphView], _S],
        graph: KnowledgeGraph | GraphView,
        *,
        partial: bool = False,
    ) -> tuple[_S, KnowledgeGraph | GraphView]:
        """``answer`` of ``graph`` (what :meth:`_searchable` gave, ``partial`` as
        there), and the graph that answered. A view that fails a check where the answer
        read it is put aside and the graph, loaded (its file checked as a whole),
        answers; the look before the load saves the graph again, with a view."""
        try:
            return answer(graph), graph
        except StoreCorruptError as exc:
            if not isinstance(graph, GraphView):
                raise
            log.warning("the saved graph of %s cannot be searched in place (%s): loading it", self.root, exc)
            self._view = None
            self._index.drop_view()
            self._stale = True
            graph = self._graph("with_graph", partial=partial)
            return answer(graph), graph

    def _refresh(self, read_index: ReadIndex, scanned: Scanned | None = None, *, load: bool = True) -> None:
        """Looks for changed files and indexes them (the caller holds the lock;
        ``scanned``: the walk of the tree made before, else made now; ``load=False``:
        the graph is loaded only when something changed, see :meth:`GraphIndex.index`)."""
        try:
            before = self._definitions_before()
            report = self._index.index(read_index=read_index, before=before, scanned=scanned, hold=load, load=load)
            self._index_changed(report, before)
        except (AircherError, OSError) as exc:  # answer from the graph as it is
            log.warning("could not refresh the code graph of %s: %s", self.root, exc)
        self._checked, self._stale = time.monotonic(), False

    def _refresh_after(self, read_index: ReadIndex) -> None:
        """:meth:`_refresh` on a thread of its own, after the verb that found it due
        has answered; one at a time. The walk of the tree, most of a look, runs
        without the lock (the verbs go on meanwhile, answering from the graph as it
        is); the indexing of what it found, under it."""
        if self._refreshing is not None and self._refreshing.is_alive():
            return
        self._checked = time.monotonic()  # (not due again before this one has run)

        def run() -> None:
            try:
                scanned = self._index.scan()
            except (AircherError, OSError) as exc:
                log.warning("could not refresh the code graph of %s: %s", self.root, exc)
                return
            with self._lock:
                if not self._closed:  # an edit recorded since the walk began: walked again
                    self._refresh(read_index, None if self._stale else scanned)

        self._refreshing = threading.Thread(target=run, name="aircher-mem-graph-refresh", daemon=True)
        self._refreshing.start()

    # -- the code graph ---------------------------------------------------------------

    def _partial_of(self, graph: KnowledgeGraph | GraphView) -> PartialIndex | None:
        """How much of the project ``graph`` holds when it is the graph of a first
        index's first files (see :meth:`index`); None for the whole graph (a saved
        graph's view is always whole)."""
        first = self._partial
        return first[1] if first is not None and first[0] is graph else None

    def _definitions(
        self, graph: KnowledgeGraph | GraphView, name: str, partial: PartialIndex | None = None
    ) -> list[_core.Definition]:
        found = graph.find_symbol(name)
        if not found:
            if partial is not None:
                raise UnknownSymbolError(
                    f"no definition named {name!r} in the first {partial.files:,} of {partial.total:,} files "
                    "(the first index of the project is under way: ask again when it is done)"
                )
            base = name.replace("::", ".").rsplit(".", 1)[-1]
            seen = {s.name for s in graph.find_symbol(base[:2], prefix=True)}
            seen.update(s.name for s in graph.find_symbol(base, fuzzy=True))
            import difflib  # (an error message: not worth importing for every process)

            near = difflib.get_close_matches(base, sorted(seen), n=5, cutoff=0.6)
            hint = f"; did you mean: {', '.join(near)}?" if near else ""
            raise UnknownSymbolError(f"no definition named {name!r} in the code graph{hint}")
        return found

    @verb(http="GET")
    @_verb
    def find_symbol(
        self,
        name: Name,
        *,
        prefix: Annotated[bool, Arg(description="Every definition whose name starts with name.")] = False,
        fuzzy: Annotated[
            bool, Arg(description="Names holding the letters of name in order, any case, best first.")
        ] = False,
    ) -> Symbols:
        """Where ``name`` (or ``Class.method``) is defined; ``prefix``: every name
        starting with it; ``fuzzy``: names holding its letters in order, best first.
        An exact name that nothing defines raises :class:`UnknownSymbolError`.

        For an agent: Where a function, class or module-level constant is defined.
        Returns JSON {query, match, symbols: [{name, kind, scope, path, line, end_line,
        signature, qualified}], partial}; an exact name nothing defines is an
        unknown_symbol error with suggestions. While the project's first index runs,
        the answer comes from its first files: partial is then {files, total}."""
        name = _name(name)
        prefix, fuzzy = _flag("prefix", prefix), _flag("fuzzy", fuzzy)
        if prefix and fuzzy:
            raise InvalidInputError("prefix and fuzzy cannot both be set")

        def answer(graph: KnowledgeGraph | GraphView) -> list[_core.Definition]:
            if prefix or fuzzy:
                return graph.find_symbol(name, prefix=prefix, fuzzy=fuzzy)
            return self._definitions(graph, name, self._partial_of(graph))

        found, graph = self._in_place(answer, self._searchable(partial=True), partial=True)
        partial = self._partial_of(graph)
        match: Literal["exact", "prefix", "fuzzy"] = "prefix" if prefix else "fuzzy" if fuzzy else "exact"
        return Symbols(name, match, [_symbol(s) for s in found], partial)

    @verb(http="GET")
    @_verb
    def callers(self, name: Name) -> Calls:
        """The functions that call ``name`` (or ``Class.method``).

        For an agent: The functions that call `name`: JSON {name, direction,
        definitions, calls: [{symbol, call_line, kind, confidence}]}. confidence < 1
        means the call's name matches several definitions."""
        return self._calls(name, "callers")

    @verb(http="GET")
    @_verb
    def callees(self, name: Name) -> Calls:
        """What ``name`` (or ``Class.method``) calls, resolved in the project.

        For an agent: The functions and classes that `name` calls, resolved in the
        project: JSON {name, direction, definitions, calls: [{symbol, call_line, kind,
        confidence}]}."""
        return self._calls(name, "callees")

    def _calls(self, name: str, direction: Literal["callers", "callees"]) -> Calls:
        name = _name(name)

        def answer(graph: KnowledgeGraph | GraphView) -> tuple[list[_core.Definition], list[_core.Reference]]:
            definitions = self._definitions(graph, name)
            return definitions, graph.get_callers(name) if direction == "callers" else graph.get_callees(name)

        (definitions, found), _ = self._in_place(answer, self._searchable())
        return Calls(name, direction, [_symbol(s) for s in definitions], [_call(c) for c in found])

    @verb(http="GET")
    @_verb
    def references(
        self,
        name: Name,
        *,
        kind: Annotated[ReferenceKind | None, Arg(description="Only edges of this kind.")] = None,
    ) -> ReferenceList:
        """Every edge into the definitions named ``name`` (``kind``: calls,
        references, inherits, uses or imports).

        For an agent: Everything that refers to `name`: calls, base classes (inherits),
        type annotations and `new` (references), imports naming it, reads and writes of
        a variable (uses). Use before renaming or changing a definition. JSON {name,
        kind, references: [{symbol, call_line, kind, confidence}]}."""
        name = _name(name)
        if kind is not None and kind not in REFERENCE_KINDS:
            raise InvalidInputError(f"kind must be one of {', '.join(REFERENCE_KINDS)} or None, got {kind!r:.80}")

        def answer(graph: KnowledgeGraph | GraphView) -> list[_core.Reference]:
            self._definitions(graph, name)
            return graph.get_references(name, kind=kind)

        found, _ = self._in_place(answer, self._searchable())
        return ReferenceList(name, kind, [_call(c) for c in found])

    @verb(http="GET")
    @_verb
    def dependencies(self, path: FilePath) -> Dependencies:
        """The project files ``path`` imports, and those importing it.

        For an agent: The project files that `path` imports ("dependencies") and the
        files that import it ("dependents"): JSON {path, dependencies, dependents}. Use
        before changing a module's interface."""
        rel = self.relative(path)
        (dependencies, dependents), _ = self._in_place(
            lambda graph: (graph.get_dependencies(rel), graph.get_dependents(rel)), self._searchable()
        )
        return Dependencies(rel, dependencies, dependents)

    @verb(http="GET")
    @_verb
    def file_definitions(self, path: FilePath) -> FileOutline:
        """What a source file defines, in line order.

        For an agent: The outline of a source file: its functions, classes and constants
        in line order, as JSON {path, symbols: [{name, kind, scope, path, line,
        end_line, signature, qualified}]}. Cheaper than reading the file; read the lines
        you need afterwards."""
        rel = self.relative(path)
        found, _ = self._in_place(lambda graph: graph.get_file_contents(rel), self._searchable())
        return FileOutline(rel, [_symbol(s) for s in found])

    @verb(http="GET")
    @_verb
    def neighbourhood(
        self, name: Name, *, hops: Annotated[int, Arg(ge=1, le=10, description="How many edges away.")] = 1
    ) -> Neighbourhood:
        """Definitions within ``hops`` edges of ``name``, nearest first.

        For an agent: The definitions within `hops` edges of `name`, in either direction
        (what it calls, what calls it, its class, what it imports or uses), nearest
        first: JSON {name, hops, symbols: [{symbol, distance}]}."""
        name = _name(name)
        hops = _limit("hops", hops, maximum=10)

        def answer(graph: KnowledgeGraph | GraphView) -> list[tuple[_core.Definition, int]]:
            self._definitions(graph, name)
            return graph.neighbourhood(name, hops)

        found, _ = self._in_place(answer, self._searchable())
        return Neighbourhood(name, hops, [Neighbour(_symbol(s), d) for s, d in found])

    @verb()
    @_verb
    def relevant_code(
        self,
        query: Annotated[str, Arg(min_length=1, description="What the code is needed for, in plain words.")],
        *,
        max_tokens: Annotated[
            Tokens | None, Arg(description="The token budget (default: the policy's code budget).")
        ] = None,
        focus_files: Files = (),
    ) -> CodeResult:
        """The code most relevant to ``query`` that fits ``max_tokens`` (default:
        the policy's code budget), best first.

        For an agent: The code most relevant to a task, ranked over the code graph
        (definitions and files the query names, and what they call or are called by),
        cut to fit `max_tokens`. JSON {query, max_tokens, tokens, snippets: [{file_path,
        line_range, content, relevance (0-1], tokens}]}, best first."""
        query = _text("query", query)
        budget = self.policy.code_tokens if max_tokens is None else _limit("max_tokens", max_tokens, maximum=2**62)
        focus = [self.relative(f) for f in focus_files]
        graph = self._searchable()
        found = find_relevant_to_query(
            graph, query, max_tokens=budget, focus_files=focus, tokens=self.tokens, policy=self.policy
        )
        return CodeResult(query, budget, sum(c.tokens for c in found), found)

    @verb()
    @_verb
    def search_code(
        self,
        text: Annotated[str, Arg(min_length=1, description="A question or a task in plain words, or a name.")],
        *,
        k: Annotated[int, Arg(ge=1, le=1000, description="How many hits.")] = 10,
        level: Annotated[
            Literal["definition", "file"], Arg(description="Rank definitions, or whole files.")
        ] = "definition",
        focus_files: Files = (),
        code: Annotated[bool, Arg(description="Include each definition's source.")] = True,
    ) -> CodeSearch:
        """The ``k`` definitions (``level="definition"``) or files (``level="file"``)
        most relevant to ``text``, a question or a task in plain words, best first:
        lexical matches over names, docstrings, bodies and paths, a walk over the
        code graph from them and from the files ``text`` names and ``focus_files``,
        fused with the policy's ``[retrieval]`` weights. Each hit says which channels
        found it and which words matched; with ``code``, a definition carries its
        source. An empty result's ``reason`` says why.

        For an agent: Find code by meaning: the definitions (or files) that answer
        `text`, best first, from words matched in names, docstrings, bodies and paths,
        the code graph around them, and files the text names. JSON {query, level, hits:
        [{path, name, kind, scope, line, end_line, signature, score, channels:
        [{channel, raw, normalized, weight}], matched, via, test, code}], channels,
        mentioned, reason (why nothing was found), notes, partial ({files, total} when
        found in the first files while the project's first index runs, else null)}."""
        text = _text("text", text)
        k = _limit("k", k, maximum=1000)
        if level not in LEVELS:
            raise InvalidInputError(f"level must be 'definition' or 'file', got {level!r}")
        focus = [self.relative(f) for f in focus_files]
        graph = self._searchable(partial=True)
        dense, why = self._dense()
        notes = [why] if why else []
        scores: list[tuple[str, float]] = []
        if dense is not None:
            if len(dense):
                r = self.policy.retrieval
                scores = dense.scores(text, r.candidates, r.dense_min_similarity)
            else:
                notes.append("dense channel empty: run `aircher-mem index` to embed the code")
        search = functools.partial(
            search_code,
            text=text,
            policy=self.policy,
            level=level,
            limit=k,
            focus_files=focus,
            code=bool(code),
            dense=scores,
            notes=notes,
        )
        found, graph = self._in_place(search, graph, partial=True)
        partial = self._partial_of(graph)
        return found if partial is None else dataclasses.replace(found, partial=partial)

    @verb()
    @_verb
    def predict(
        self,
        *,
        query: Query = None,
        current_file: CurrentFile = None,
        recent_errors: RecentErrors = (),
        activity: Activity = None,
        branch: Branch = None,
        task_id: TaskId = None,
        limit: Annotated[int, Arg(ge=1, le=1000, description="Files predicted at most.")] = 10,
    ) -> Prediction:
        """What will be needed next: the files the agent will likely open, each with
        its confidence and reasons (the current file, the files read and edited
        lately, the files the last tool calls named, their companions in past tasks,
        the files the tasks started on ``branch`` touched, the current file's imports
        and importers), the memories about those files, the learned fixes of errors
        like the recent ones, and the tools run most at this time of day
        (``workflows``, each with its share of the runs then).

        For an agent: Predict which files you will need next and what memory says
        about them, from what you just did (recorded tool calls and file reads and
        edits) and the current file or error. JSON {signals, files: [{path,
        confidence, reasons: [{signal, detail, confidence}]}], memories: [{id, kind,
        content, path, confidence}], fixes, workflows: [{tool, runs, confidence}],
        confidence}."""
        signals = self._signals(query, current_file, recent_errors, activity, branch, task_id, None)
        policy = self.policy.assembly
        at_hour = self.episodic.tools_at_hour(time.time(), days=policy.hour_days) if policy.hour_days else []
        from .prediction import workflows_of

        return self._predict(signals, limit, workflows_of(at_hour, policy))

    @verb()
    @_verb
    def assemble(
        self,
        *,
        budget: Annotated[
            int | None, Arg(ge=1, le=10_000_000, description="Tokens (default: [assembly] budget).")
        ] = None,
        query: Query = None,
        current_file: CurrentFile = None,
        recent_errors: RecentErrors = (),
        activity: Activity = None,
        branch: Branch = None,
        task_id: TaskId = None,
        collaborator: Annotated[str | None, Arg(description="Who the agent works with now.")] = None,
    ) -> Assembled:
        """One budgeted context for the signals, in four tiers (seed 001): critical
        (decisions about the code at hand, recent errors and their known fixes),
        relevant (the prediction, the memories the router loads for the query,
        recalled memories and turns, similar past tasks, code), background (project
        conventions, the current file's history, workflows) and index (topics and
        pointers to what did not fit). Each tier gets its share of ``budget``
        (``[assembly]``; debugging gives critical more) and passes what it does not
        use on; every item says why it is there.

        For an agent: Everything memory knows that matters now, in one call, within
        `budget` tokens: pass the user's message as `query`, and the file open, recent
        errors and your activity when you know them. Read `context`; recall or explain
        the ids the index lists when you need more. JSON {budget, signals, context,
        token_count, tiers: [{name, budget, tokens, items: [{kind, ref, text, tokens,
        score, reasons}]}], routing, prediction, notes}."""
        policy = self.policy.assembly
        budget = policy.budget if budget is None else _limit("budget", budget, maximum=10_000_000)
        signals = self._signals(query, current_file, recent_errors, activity, branch, task_id, collaborator)
        return self._assemble(budget, signals)

    def _assemble(self, budget: int, signals: Signals, *, code_hits: bool = True) -> Assembled:
        """:meth:`assemble` for checked ``signals``; ``code_hits=False`` leaves out
        the code search (a window carries its own code views)."""
        from .offers import gather, index_of
        from .prediction import neighbours, workflows_of

        policy = self.policy.assembly
        text = " ".join(t for t in (signals.query, *signals.recent_errors, signals.collaborator) if t)
        now = time.time()
        similar_tasks, since = self.policy.episodic.similar_tasks, now - policy.error_hours * 3600.0
        if self._tokens is None:  # loaded while the store opens (see route below)
            from .tokens import prefetch

            prefetch(self.policy.encoding)
        # the episodic store's lookups run beside the rest (DuckDB lets the GIL go)
        looked_up = self.episodic.read_aside(
            lambda ep: (
                ep.find_similar_tasks(text, similar_tasks) if text.strip() else [],
                ep.failed_runs_since(since, limit=10),
                ep.file_history(signals.current_file, limit=20) if signals.current_file else [],
                ep.patterns("error-fix"),
                ep.branch_tasks(signals.branch, 5) if signals.branch else [],
                ep.tools_at_hour(now, days=policy.hour_days) if policy.hour_days else [],
            )
        )
        prediction = self._predict(signals)
        lt = self.longterm
        hits = lt.recall(text[:100_000], k=policy.recall_k).hits if text.strip() else []
        relevance = {h.id: h.score for h in hits if h.kind != "turn"}
        known = self._hierarchy()
        routed = assembly.route(
            text, known, relevance, budget, policy, self.tokens, lt.records, _dense_domains(hits, known)
        )
        code: list[CodeHit] = []
        dependencies: list[str] = []
        notes = []
        if self.indexed:
            if code_hits and text.strip():
                code = self.search_code(text[:10_000], k=3, code=False).hits
            if signals.current_file:
                current = signals.current_file
                (imports, importers), _ = self._in_place(lambda graph: neighbours(graph, current), self._searchable())
                dependencies = imports + importers
        else:
            notes.append("no code graph: the project is not indexed (aircher-mem index)")
        preferences = []
        if signals.collaborator and policy.collaborator_memories:
            preferences = lt.said_by(signals.collaborator, tags=("preference",), limit=policy.collaborator_memories)
        similar, failed, history, fix_patterns, on_branch, at_hour = looked_up()
        prediction = dataclasses.replace(prediction, workflows=workflows_of(at_hour, policy))
        offered = gather(
            signals,
            prediction=prediction,
            routed=routed,
            hits=hits,
            known=known,
            longterm=lt,
            similar=similar,
            failed=failed,
            history=history,
            fix_patterns=fix_patterns,
            on_branch=on_branch,
            preferences=preferences,
            code=code,
            dependencies=dependencies,
            policy=policy,
        )
        tiers, context, count = assembly.fill_tiers(
            budget,
            policy.shares(signals.activity),
            offered,
            self.tokens,
            policy.line_chars,
            index=lambda left: index_of(known, left),
        )
        return Assembled(budget, signals.to_dict(), context, count, tiers, routed, prediction, notes)

    @verb(http="GET")
    @_verb
    def route_context(
        self,
        query: Annotated[str, Arg(min_length=1, description="What the context is for, in plain words.")],
        *,
        max_tokens: Annotated[int, Arg(ge=1, le=10_000_000, description="The token budget.")] = 2000,
    ) -> Routed:
        """Seed 000's semantic router: the memories of the hierarchy that ``query``
        needs within ``max_tokens``: the project's L0 memories always, then the L1
        and L2 memories of the domains the query matches (widened when the match is
        weak), then the memories those point to, with a confidence and why.

        For an agent: Load the project's knowledge for a question: its L0 memories,
        then those of the domains the question is about, within `max_tokens`. JSON
        {query, max_tokens, memories, total_tokens, domains: [{domain, score,
        memories, chosen, dense}], confidence, explanation, cross_references}."""
        query = _text("query", query)
        max_tokens = _limit("max_tokens", max_tokens, maximum=10_000_000)
        from .longterm.store import KINDS

        lt = self.longterm
        hits = lt.recall(query, k=self.policy.assembly.recall_k, kinds=KINDS).hits
        relevance = {h.id: h.score for h in hits}
        known = self._hierarchy()
        dense = _dense_domains(hits, known)
        return assembly.route(query, known, relevance, max_tokens, self.policy.assembly, self.tokens, lt.records, dense)

    def _hierarchy(self) -> assembly.Hierarchy:
        """The active memories grouped for the router (:class:`assembly.Hierarchy`),
        kept while no memory was added, forgotten, or changed its content, level,
        status or stored score; then the memories changed since are placed again
        (all grouped again when the store cannot name them, or past
        ``HIERARCHY_PLACED``)."""
        lt = self.longterm
        kept = self._known.get(_ACTING.get())
        shape, (log, changed) = lt.shape, lt.changes(kept[1] if kept is not None else None)
        if kept is not None and kept[0] == shape and changed is not None:
            return kept[2]
        if kept is None or changed is None or len(changed) > HIERARCHY_PLACED:
            rows = lt.active()  # loads the store first: its shape and log count from there
            shape, (log, _) = lt.shape, lt.changes(None)
            known = assembly.Hierarchy(rows)
        else:
            # (what a team's catch-up changes meanwhile is after ``log``: placed next time)
            known = kept[2]
            known.place(lt.active_of(sorted(changed)))
        self._known[_ACTING.get()] = (shape, log, known)
        return known

    def _signals(
        self,
        query: str | None,
        current_file: str | None,
        recent_errors: Sequence[str],
        activity: str | None,
        branch: str | None,
        task_id: str | None,
        collaborator: str | None,
    ) -> Signals:
        from .prediction import Signals

        if isinstance(recent_errors, str):
            raise InvalidInputError("recent_errors must be a list of texts, not one string")
        return Signals(
            query=None if query is None else _text("query", query, blank=True),
            current_file=None if current_file is None else self.relative(current_file),
            recent_errors=tuple(_text("recent_errors", e, blank=True) for e in recent_errors),
            activity=activity,
            branch=_named("branch", branch),
            task_id=_named("task_id", task_id),
            collaborator=_named("collaborator", collaborator),
        )

    def _predict(
        self, signals: Signals, limit: int | None = None, workflows: Sequence[PredictedWorkflow] = ()
    ) -> Prediction:
        from .prediction import predict

        def answer(graph: KnowledgeGraph | GraphView | None) -> Prediction:
            return predict(
                signals,
                episodic=self.episodic,
                longterm=self.longterm,
                graph=graph,
                exists=self._is_file,
                policy=self.policy.assembly,
                limit=limit,
                workflows=workflows,
            )

        if not self.indexed:
            return answer(None)
        return self._in_place(answer, self._searchable())[0]

    @verb(surfaces=("python",))
    @_verb
    def prepare_context(
        self, message: Annotated[str, Arg(min_length=1, description="The user's message.")]
    ) -> list[Message]:
        """The one call before a model call: adds ``message`` (the user's text) to
        :attr:`window` with the code relevant to it (once indexed), similar
        past tasks and recalled memories, prunes the window under its threshold
        (pruned code views and a snapshot of each prune are recorded in the episodic
        store, durably), and returns the window as chat messages in the order the
        items were added. Tool outputs come in through :meth:`record_tool_call`."""
        message = _text("message", message)
        if self.indexed:
            self._searchable()  # refreshed first when files changed, as graph verbs do
        messages = self.window.prepare_context(message)
        self._flush_episodic()
        return messages

    @verb()
    @_verb
    def preview_context(
        self,
        message: Annotated[str, Arg(min_length=1, description="The user's message.")],
        *,
        max_tokens: Annotated[Tokens | None, Arg(description="The window's size (default: the policy's).")] = None,
        code_tokens: Annotated[
            Tokens | None, Arg(description="The budget for relevant code (default: a share of max_tokens).")
        ] = None,
    ) -> ContextPreview:
        """What ``prepare_context(message)`` puts in a fresh window of ``max_tokens``
        (default: the policy's): every item with its score and tokens, and what was
        pruned. Nothing is recorded; similar past tasks are left out (with a note)
        when another process holds the store."""
        message = _text("message", message)
        if max_tokens is not None:
            _limit("max_tokens", max_tokens, maximum=2**62)
        notes: list[str] = []
        try:
            ctx = self.new_window(max_tokens=max_tokens, code_tokens=code_tokens, record=False)
        except StoreLockedError:
            ctx = self.new_window(max_tokens=max_tokens, code_tokens=code_tokens, record=False, history=False)
            notes.append("memory left out (no assembled context): the episodic store is open in another process")
        if self.indexed:
            self._searchable()
        else:
            notes.append("no code: the project is not indexed yet (aircher-mem index)")
        messages = ctx.prepare_context(message)
        return assembly.preview(
            message,
            ctx.window,
            messages,
            ctx.last_prune,
            now=ctx.clock(),
            code_tokens=ctx.policy.code_tokens if code_tokens is None else code_tokens,
            notes=notes,
        )

    # -- long-term memory -------------------------------------------------------------

    @verb()
    @_durable
    def add_turn(
        self,
        session_id: SessionId,
        role: Annotated[Literal["user", "assistant"], Arg(description="Who spoke.")],
        text: Annotated[str, Arg(min_length=1, description="What was said, verbatim.")],
        *,
        speaker: Annotated[str | None, Arg(description="The speaker's name (default: the role).")] = None,
        at: Annotated[Time | None, Arg(description="When it was said (default: now).")] = None,
        metadata: Annotated[JsonObject | None, Arg(description="Anything else about the turn.")] = None,
        extract: Annotated[bool, Arg(description="Extract memories from the turn.")] = True,
        idempotency_key: IdempotencyKey = None,
        scope: Scope = "project-shared",
    ) -> TurnAdded:
        """Stores a conversation turn (``role`` "user" or "assistant"; ``at`` when it
        was said, default now) and extracts memories from it (see
        :class:`aircher_mem.longterm.LongTermMemory`).

        For an agent: Store a conversation turn; memory extracts facts, decisions and
        preferences from it by rule (a changed preference supersedes the old one) and
        recall finds the turn itself later. Use it to log the user's messages when your
        client does not; prefer remember for a single thing worth keeping. Give an
        idempotency_key when you may send the same turn again after a timeout. Returns JSON
        {turn_id, session_id, extracted: [{action, memory_id, content, kind, rules,
        superseded}], notes}."""
        return self.longterm.add_turn(
            session_id,
            role,
            text,
            speaker=speaker,
            at=at,
            metadata=metadata,
            extract=extract,
            idempotency_key=idempotency_key,
            scope=scope,
        )

    @verb()
    @_durable
    def remember(
        self,
        content: Annotated[
            str, Arg(min_length=1, description="One self-contained fact, decision or preference, with its why.")
        ],
        *,
        kind: Annotated[Kind, Arg(description="What kind of memory it is.")] = "fact",
        importance: Annotated[int, Arg(ge=0, le=1, description="1: always worth keeping.")] = 0,
        tags: Tags = (),
        level: Annotated[
            Level | None, Arg(description="L0 project, L1 domain, L2 module, L3 code (default: from the rest).")
        ] = None,
        domain: Annotated[str | None, Arg(description="The domain it belongs to (L1 and below).")] = None,
        module: Annotated[str | None, Arg(description="The module it belongs to (L2 and below).")] = None,
        code_ref: Annotated[str | None, Arg(description="The code it is about, e.g. app/models.py:User.save.")] = None,
        parent_id: Annotated[MemoryId | None, Arg(description="The memory it refines.")] = None,
        at: Annotated[Time | None, Arg(description="When it became true (default: now).")] = None,
        scope: Scope = "project-shared",
    ) -> Remembered:
        """Keeps a memory on purpose (dedup and slot conflicts apply).

        For an agent: Keep something for later sessions. Remember when the user states a
        preference, makes or confirms a decision, corrects you, or tells you a fact
        about the project you could not read from the code; not what the code or git
        already says, and not small talk. One memory per fact, decision or preference,
        with the reason. A memory equal to an existing one merges into it; a new value
        for the same thing (a changed preference) supersedes the old one. Returns JSON
        {memory_id, action: created|merged|superseded, superseded}."""
        return self.longterm.remember(
            content,
            kind=kind,
            importance=importance,
            tags=tags,
            level=level,
            domain=domain,
            module=module,
            code_ref=code_ref,
            parent_id=parent_id,
            at=at,
            scope=scope,
        )

    @verb()
    @_verb
    def recall(
        self,
        query: Annotated[str, Arg(min_length=1, description="What to remember, in plain words.")],
        *,
        k: Annotated[int, Arg(ge=1, le=1000, description="How many hits.")] = 10,
        session_id: Annotated[str | None, Arg(description="Favour this conversation's turns.")] = None,
        kinds: Annotated[
            Sequence[Literal["fact", "decision", "episode", "pattern", "workflow", "turn"]] | None,
            Arg(description="Only these memory kinds and/or 'turn' (a raw conversation turn)."),
        ] = None,
        at: Annotated[Time | None, Arg(description="What was valid then (default: now).")] = None,
    ) -> Recall:
        """Memories and raw turns relevant to ``query``, best first, each with its
        source turns and the reasons for its score.

        For an agent: Memories and conversation turns relevant to `query`, best first,
        as valid now (or at `at`). Recall before answering or acting on something the
        user may have told you before. JSON {query, at, hits: [{kind, id, content,
        score, channels, matched, recency, importance, usage, turns: [{session_id, role,
        speaker, text, at}]}], channels, reason (why nothing was found), notes}. When
        you use a hit, say so and cite it (e.g. 'memory 12: ...'), then call
        feedback(id, 'cited'); call feedback(id, 'ignored') for hits that were shown but
        irrelevant. Turn hits (kind 'turn') are raw evidence, not memories."""
        return self.longterm.recall(query, k=k, session_id=session_id, kinds=kinds, at=at)

    @verb()
    @_durable
    def feedback(
        self,
        memory_id: MemoryId,
        signal: Annotated[
            Literal["cited", "ignored"], Arg(description="cited: the memory was used; ignored: shown, not used.")
        ],
    ) -> FeedbackResult:
        """Tells memory that a recalled memory was cited (used) or ignored.

        For an agent: Tell memory how a recalled memory served you, so useful memories
        rise and noise sinks. Call it for the hits of recall you read: 'cited' for each
        one you used, 'ignored' for those that were irrelevant. Returns JSON {memory_id,
        signal, retrieved, cited, ignored}."""
        return self.longterm.feedback(memory_id, signal)

    @verb()
    @_verb
    def forget(
        self,
        memory_id: MemoryId | None = None,
        *,
        text: Annotated[str | None, Arg(description="Forget the memories and turns holding this text.")] = None,
        session_id: Annotated[
            str | None, Arg(description="Forget this conversation's turns and the memories only they support.")
        ] = None,
    ) -> Forgotten:
        """Forgets for good, by one of: a memory id; ``text`` (the memories whose
        content is, else contains, it and every turn that contains it); a
        ``session_id`` (its turns and the memories only they support). The turns the
        forgotten memories came from go too, and the store file is rewritten so
        that no copy of the text stays on disk (see
        :meth:`aircher_mem.longterm.LongTermMemory.forget`).

        For an agent: Forget for good (no undo): when the user asks you to forget
        something, or a memory is wrong. Give one of memory_id, text or session_id. The
        turns a forgotten memory came from go too. A changed preference needs no forget:
        remember the new value and the old one is superseded. Returns JSON {ids, turns}
        (the memories and turns forgotten; empty when nothing matched)."""
        return self.longterm.forget(memory_id, text=text, session_id=session_id)

    @verb()
    @_durable
    def update(
        self,
        memory_id: MemoryId,
        *,
        content: Annotated[str | None, Arg(description="The new content.")] = None,
        tags: Annotated[Tags | None, Arg(description="The new tags (empty: none).")] = None,
        status: Annotated[Literal["active", "archived"] | None, Arg(description="The new status.")] = None,
    ) -> MemoryRecord:
        """Changes a memory's content, tags or status (archived: kept, no longer recalled);
        at least one of them."""
        if content is None and tags is None and status is None:
            raise InvalidInputError("update needs content, tags or status")
        return self.longterm.update(memory_id, content=content, tags=tags, status=status)

    @verb(http="GET")
    @_verb
    def explain(self, memory_id: MemoryId) -> MemoryExplanation:
        """Why a memory is where it is: every score term, its rules, turns and history.

        For an agent: Why a memory ranks where it does: JSON {memory, age_days, score,
        terms: [{name, weight, value, contribution}], rules (what extracted it), links:
        [{turn, reason}] (its source turns), related: [{relation, memory_id, content}]
        (supersedes, superseded_by, parent, child), actions: [{at, action, detail}],
        outlook (what gc would do to it now)}."""
        return self.longterm.explain(memory_id)

    @verb()
    @_verb
    def consolidate(
        self,
        *,
        dry_run: Annotated[bool, Arg(description="Say what it would do; change nothing.")] = False,
        now: Annotated[Time | None, Arg(description="The time to consolidate at (default: now).")] = None,
    ) -> ConsolidationReport:
        """Lets memory age (seeds 001, 003, 000): turns become episodes, the agent's
        finished tasks too; similar facts merge; old memories get their summary and
        compressed forms; TTLs expire; superseded and long-unused memories are
        forgotten (never their raw turns, an anchor or a recently cited memory);
        every memory moves to its hot, warm or cold layer; related episodes are
        linked (see :mod:`aircher_mem.longterm.consolidate`).

        For an agent: Consolidate long-term memory (a server does it on its own every
        day): group turns into episodes, merge duplicates, compress and age old
        memories, forget what was superseded or never used. Use dry_run=true to see what
        it would do. Returns JSON {dry_run, now, episodes, extended, deduped, summarized,
        compressed, moved, tiers: {hot, warm, cold}, contradictions_found, expired,
        forgotten, linked, actions: [{memory_id, action, reason}]}."""
        from .longterm.consolidate import TaskRecord

        tasks = [
            TaskRecord(
                task.task_id,
                task.description,
                task.outcome,
                task.files_touched,
                errors,
                task.started_at,
                task.completed_at or task.started_at,
            )
            for task, errors in self.episodic.finished_tasks()
        ]
        return self.longterm.consolidate(now=now, dry_run=dry_run, tasks=tasks)

    @verb()
    @_durable
    def record_decision(
        self,
        decision: Annotated[str, Arg(min_length=1, description="What was decided, e.g. 'use FastAPI for the API'.")],
        *,
        reasons: Annotated[list[str] | None, Arg(description="Why (each justifies the decision).")] = None,
        consequences: Annotated[list[str] | None, Arg(description="What it leads to.")] = None,
        constraints: Annotated[list[str] | None, Arg(description="What ruled the alternatives out.")] = None,
        session_id: Annotated[str, Arg(description="The conversation it was decided in, if any.")] = "",
        strength: Annotated[float, Arg(ge=0, le=1, description="How firmly the reasons hold, 0 to 1.")] = 1.0,
        at: Annotated[Time | None, Arg(description="When it was decided (default: now).")] = None,
    ) -> CausalChain:
        """Records a decision with its reasons, consequences and constraints (seed
        000's causal chain): the decision is a memory of kind decision (merged into
        one that says the same), the rest are nodes of its chain with typed,
        weighted edges; a reason that says what an earlier decision says joins the
        two chains. Decisions said in turns ("we went with X because Y") are
        recorded the same way by add_turn.

        For an agent: Record a decision and why it was made, so that later
        "why did we ...?" questions get the reasons (query_chain). Returns the
        chain as JSON {query, decision_id, nodes: [{id, node_type, content, ...}],
        edges: [{source, target, edge_type, strength}], mermaid, text, reason}."""
        return self.longterm.record_decision(
            decision, reasons, consequences, constraints, session_id=session_id, strength=strength, at=at
        )

    @verb()
    @_verb
    def query_chain(
        self,
        query: Annotated[
            str, Arg(min_length=1, description="A question about a decision, e.g. 'why did we use FastAPI?'")
        ],
        *,
        max_depth: Annotated[int, Arg(ge=0, le=20, description="How many edges away from the decision to walk.")] = 5,
        at: Annotated[Time | None, Arg(description="Ask about the decisions valid then (default: now).")] = None,
    ) -> CausalChain:
        """The causal chain of the decision a question is about (seed 000's
        query_chain, its MCP tool get_causal_chain): the decision recall finds
        among those with a chain (or the chain sharing most of the question's
        words), with every node within ``max_depth`` edges; as text and as a
        mermaid graph TD.

        For an agent: Ask why something was decided ("why did we choose Postgres?")
        and get the decision with its reasons, consequences and constraints, and
        earlier decisions that caused it. Returns JSON {query, decision_id, nodes,
        edges, mermaid, text, reason} (decision_id null and reason set when no
        recorded decision matches)."""
        return self.longterm.query_chain(query, max_depth=max_depth, at=at)

    @verb(http="GET")
    @_verb
    def contradictions(
        self,
        *,
        status: Annotated[
            Literal["open", "resolved", "all"], Arg(description="Which: open (not resolved yet), resolved, or all.")
        ] = "open",
        memory_id: Annotated[MemoryId | None, Arg(description="Only those this memory is part of.")] = None,
    ) -> ContradictionList:
        """Pairs of memories that disagree (seed 001's scanner), open first: each
        memory stored is checked against its nearest, and a consolidation pass
        checks again; an explicit correction and a new value of the same slot win
        at once (resolved b_wins). Changes nothing.

        For an agent: Memories that contradict each other, e.g. "the database is
        Postgres" and "the database is MySQL". Check which holds and resolve it with
        resolve_contradiction. JSON {contradictions: [{id, memory_a, memory_b,
        content_a, content_b, detected_at, rule, evidence, origin, status,
        resolution, resolved_at, note}]} (a is the older memory)."""
        return self.longterm.contradictions(status, memory_id)

    @verb()
    @_durable
    def resolve_contradiction(
        self,
        contradiction_id: Annotated[
            int, Arg(ge=1, le=MAX_INT, description="The contradiction's id, as contradictions listed it.")
        ],
        resolution: Annotated[
            Literal["a_wins", "b_wins", "both_valid", "merged"],
            Arg(description="a_wins or b_wins (the other is superseded), both_valid, merged (give content)."),
        ],
        *,
        note: Annotated[str, Arg(description="Why, kept with the resolution.")] = "",
        content: Annotated[str | None, Arg(description="With merged: the memory that replaces both.")] = None,
        now: Annotated[Time | None, Arg(description="When it is resolved (default: now).")] = None,
    ) -> Contradiction:
        """Resolves an open contradiction: a_wins or b_wins supersede the other
        memory (bi-temporally: it stays, archived, valid until the winner became
        valid, so recall as of before still finds it), both_valid keeps both,
        merged stores ``content`` as a new memory that supersedes both.

        For an agent: Settle two memories that disagree (ids from contradictions):
        a_wins or b_wins keeps one (the other is no longer recalled), both_valid
        keeps both (they hold in different contexts), merged replaces both with
        your content. Returns the contradiction as JSON {id, memory_a, memory_b,
        ..., status, resolution, resolved_at, note}."""
        return self.longterm.resolve_contradiction(contradiction_id, resolution, note=note, content=content, now=now)

    @_verb
    def last_consolidated(self) -> float | None:
        """When the last consolidation pass ran (its ``now``), None before the first."""
        return self.longterm.last_consolidated()

    @verb()
    @_verb
    def gc(
        self, *, dry_run: Annotated[bool, Arg(description="Say what it would do; change nothing.")] = False
    ) -> GcReport:
        """Rescores memories, promotes mid -> long, archives what decayed."""
        return self.longterm.gc(dry_run=dry_run)

    @verb()
    @_durable
    def set_ttl(
        self,
        memory_id: MemoryId,
        ttl_seconds: Annotated[
            float | None,
            Arg(ge=0, le=MAX_TTL_SECONDS, description="Seconds it holds from now (more than 0); omitted: no TTL."),
        ] = None,
        *,
        refresh_trigger: Annotated[
            str | None, Arg(description="A glob of project files whose change starts it again, e.g. '**/api/**'.")
        ] = None,
        on_expire: Annotated[
            Literal["mark_stale", "archive", "delete"], Arg(description="What expiry does to the memory.")
        ] = "mark_stale",
        now: Annotated[Time | None, Arg(description="When its time starts (default: now).")] = None,
    ) -> MemoryRecord:
        """Gives a memory a time to live, or clears it without ``ttl_seconds``: once
        ``ttl_seconds`` passed since ``now`` (or the last change to a file matching
        ``refresh_trigger``), consolidation marks it stale (still recalled, with a
        note), archives it or deletes it (its conversation turns stay). Memories
        tagged architecture, api, implementation or session get the
        ``[lifecycle]`` default when created.

        For an agent: Say how long a memory stays true: e.g. 604800 seconds (7 days)
        for a fact about an API that changes, with refresh_trigger '**/api/**' so
        that editing those files keeps it fresh; on_expire mark_stale (recalled with
        a 'stale' note), archive (no longer recalled) or delete. Without ttl_seconds
        (or null) its TTL is cleared. Returns the memory as JSON {id, content, ...,
        ttl_seconds, ttl_refresh, ttl_on_expire, ttl_from, stale_since}."""
        return self.longterm.set_ttl(
            memory_id, ttl_seconds, refresh_trigger=refresh_trigger, on_expire=on_expire, now=now
        )

    @verb(http="GET")
    @_verb
    def stale(
        self, *, now: Annotated[Time | None, Arg(description="The time to judge at (default: now).")] = None
    ) -> MemoryList:
        """Active memories whose TTL marked them stale, and those whose mark_stale
        TTL has expired at ``now`` without being marked yet, oldest first. Changes
        nothing.

        For an agent: Memories that may be out of date (their TTL expired): check
        them against the code and update, set_ttl again or forget them. JSON
        {memories: [{id, content, tags, ..., ttl_seconds, ttl_refresh, ttl_on_expire,
        ttl_from, stale_since}]} (stale_since null: expired, not marked yet)."""
        return self.longterm.stale(now)

    @verb()
    @_durable
    def discover_project(
        self,
        task_hint: Annotated[
            str | None, Arg(description="The first task, e.g. 'fix the login redirect': facts about its files.")
        ] = None,
    ) -> ProjectDiscovery:
        """Cold start (seed 000's discover_project): the project's types, frameworks,
        test runners and commands from its build files (every language the graph
        parses), kept as L0 facts from the templates shipped with the package, and
        what its README's first sentence says it is; the domains its code graph
        suggests (top-level packages and folders, ranked by how much of the
        project imports them), kept as L1 facts; with a
        ``task_hint``, the files code search finds for it that no memory is about
        yet, each kept as an L2 fact (its own docstring, else its definitions).
        Facts already known are skipped. A project not indexed yet is indexed
        first (in a server, in the background: the answer then comes from the
        first files and ``partial`` says so).

        For an agent: Call once on a project you do not know: what it is (language,
        framework, how to run its tests), its main areas and, given your first
        task, what the files for it do. JSON {project_type, types, frameworks,
        test_runners, commands, facts_created, facts, discovery_tokens,
        suggested_domains, domains: [{name, path, files, score, main_modules}],
        task_files, partial}."""
        from .longterm import changes, coldstart, discovery

        knowledge = self.policy.knowledge
        profile = coldstart.detect(self.root)
        if not self._index.indexed and self._building is None:
            if self.partial_answers:
                self._index_in_background()
            else:
                self.index()
        graph = self._graph("with_graph", partial=True)
        partial = self._partial_of(graph)
        domains = discovery.domains(graph, knowledge.domains)
        facts: list[discovery.DiscoveredFact] = [
            discovery.DiscoveredFact(t.content, t.level, t.domain, "template", code_ref=None)
            for t in coldstart.template_facts(profile)
        ]
        readme = next((n for n in sorted(os.listdir(self.root)) if changes.is_readme(n)), None)
        raw = None if readme is None else read_source(self.root, readme, self._index.max_file_bytes)
        told = None if raw is None or readme is None else discovery.readme_fact(readme, raw.decode("utf-8", "replace"))
        if told is not None:
            facts.append(told)
        for d in domains:
            main = ", ".join(d.main_modules)
            facts.append(
                discovery.DiscoveredFact(
                    f"Domain {d.name} ({d.path}): {d.files} file(s); main modules {main}", "L1", d.name, "domain"
                )
            )
        task_files: list[str] = []
        if task_hint is not None and knowledge.task_files:
            hint = _text("task_hint", task_hint)
            hits = self.search_code(hint, k=knowledge.task_files, level="file", code=False).hits
            task_files = [h.path for h in hits]
            known = {path for _memory, path in self.longterm.about(task_files)}
            for path in task_files:
                if path in known:
                    continue
                raw = read_source(self.root, path, self._index.max_file_bytes)
                text = None if raw is None else raw.decode("utf-8", "replace")
                fact = discovery.file_fact(graph, path, changes.purpose, text, discovery.domain_of(path, domains))
                if fact is not None:
                    facts.append(fact)
        kept = self.longterm.keep_facts(facts, auto_approve=True)
        created = [c for c in kept if c.action == "created"]
        said = [c.content for c in kept] + [d.name for d in domains]
        return ProjectDiscovery(
            project_type=profile.types[0].name if profile.types else None,
            types=[{"type": t.name, "language": t.language, "file": t.build_file} for t in profile.types],
            frameworks=list(profile.frameworks),
            test_runners=list(profile.test_runners),
            commands=dict(profile.commands),
            facts_created=len(created),
            facts=kept,
            discovery_tokens=sum(self.tokens.count_many(said)),
            suggested_domains=[d.name for d in domains],
            domains=domains,
            task_files=task_files,
            partial=partial,
        )

    @verb()
    @_durable
    def extract_facts(
        self,
        source: Annotated[
            Literal["working", "staged", "commit", "range", "edit"],
            Arg(
                description="working (the work tree against HEAD), staged, one commit (rev), a range (rev A..B), "
                "or edit (one file just saved: path, its text before in before)."
            ),
        ] = "working",
        *,
        rev: Annotated[str | None, Arg(description="The commit, or the range A..B, for those sources.")] = None,
        path: Annotated[FilePath | None, Arg(description="Only this file's changes (edit: the file saved).")] = None,
        before: Annotated[
            str | None,
            Arg(
                max_length=MAX_EDIT_CHARS,
                description="For edit: the file's text before the save (omitted: the save created the file).",
            ),
        ] = None,
        auto_approve: Annotated[bool, Arg(description="Keep every fact, whatever its confidence.")] = False,
    ) -> ExtractedFacts:
        """Facts from code changes (seed 000's auto-extraction), read with git, or
        from one file just saved (``source="edit"``: its text ``before`` against its
        text now, no git needed; the hooks send each edit so): the code graph's
        parser compares each changed file's old and new definitions (new files, new
        and removed functions and classes, signature changes, imports) and build
        files' keys (dependencies, versions), and a change of more than 50 lines is a
        refactor. Each candidate is deduplicated against the memories
        (``[knowledge]`` merge and skip similarities); one with a confidence below
        ``[knowledge] approve_confidence`` waits for review_fact.

        For an agent: After changing code (or to learn a commit), turn the change
        into facts: "Implemented parse_config in app/config.py", "Added dependency
        httpx >=0.27 to pyproject.toml". Facts with low confidence wait for your
        review_fact (approve or reject); memories(status='pending') lists them.
        JSON {candidates: [{content, confidence, approved, action, memory_id, kind,
        level, domain, code_ref, source, commit}], pending_approval, more}."""
        from .longterm import changes

        if source == "edit":
            if path is None or rev is not None:
                raise InvalidInputError("source 'edit' takes the file saved (path) and no rev")
            found = changes.extract_edit(self.root, self.relative(path), before)
        else:
            if before is not None:
                raise InvalidInputError(f"before is for source 'edit', not {source!r}")
            only = () if path is None else (self.relative(path),)
            found = changes.extract(self.root, source=source, rev=rev, paths=only)
        limit = self.policy.knowledge.max_candidates
        kept = self.longterm.keep_facts(found[:limit], auto_approve=auto_approve)
        return ExtractedFacts(kept, self.longterm.pending_facts(), max(0, len(found) - limit))

    @verb()
    @_durable
    def review_fact(
        self,
        memory_id: MemoryId,
        verdict: Annotated[Literal["approve", "reject"], Arg(description="approve (keep it) or reject (forget it).")],
    ) -> FactReview:
        """Reviews a fact waiting for approval (status pending: extracted from a code
        change with a low confidence): approve makes it an active memory (checked
        for contradictions), reject forgets it for good (only a digest of its words
        stays, so that it is not proposed again).

        For an agent: Keep or drop a fact extract_facts could not vouch for (list
        them with memories(status='pending')): approve when it is true and useful,
        reject otherwise. JSON {memory_id, verdict, memory} (memory null once
        rejected)."""
        return self.longterm.review_fact(memory_id, verdict)

    def _files_changed(self, paths: Sequence[str], *, open_store: bool = False) -> list[int]:
        """Tells long-term memory that the project files ``paths`` (root-relative)
        changed: the memories whose TTL refresh glob matches one start their time
        again (:func:`aircher_mem.longterm.ttl.refresh`); their ids. Cheap when no
        memory has a refresh glob (one query, nothing loaded). Long-term memory is
        opened for it only with ``open_store``, when its file exists, and never by
        asking a server that holds it; a failure is logged (the files changed all
        the same)."""
        if not paths:
            return []
        from .longterm import ttl

        try:
            longterm = self._longterm_for_files(open_store=open_store)
            if longterm is None or not ttl.has_triggers(longterm):
                return []
            return longterm.refresh_ttl(paths)
        except AircherError as exc:
            log.warning("the TTLs of %s were not refreshed: %s", self.root, exc)
            return []

    def _longterm_for_files(self, *, open_store: bool, create: bool = False) -> LongTermMemory | None:
        """Long-term memory for what changed files tell it: the open one, else (with
        ``open_store``, when its file exists or ``create`` says to make it) opened
        now, never by asking a server that holds it (None then, and when it cannot be
        opened: logged)."""
        longterm = self._current()
        if longterm is not None or not open_store or not (create or self.db_path.exists()):
            return longterm
        asking, self.take_offered_store = self.take_offered_store, False
        try:
            return self.longterm
        except AircherError as exc:
            log.warning("long-term memory of %s was not opened for the files changed: %s", self.root, exc)
            return None
        finally:
            self.take_offered_store = asking

    @verb(http="GET")
    @_verb
    def conversation(
        self,
        session_id: SessionId,
        *,
        k: Annotated[int, Arg(ge=1, le=1000, description="How many memories.")] = 20,
    ) -> Conversation:
        """A conversation's last turns and the top ``k`` memories by score: what an agent
        resuming the conversation should know first."""
        return self.longterm.get_context(session_id, k)

    @verb(http="GET")
    @_verb
    def memories(
        self,
        *,
        layer: Annotated[Literal["mid", "long"] | None, Arg(description="Mid-term or long-term only.")] = None,
        status: Annotated[
            Literal["active", "archived", "pending", "all"],
            Arg(description="Which memories (pending: facts waiting for review_fact; all: any status)."),
        ] = "active",
        kind: Annotated[Kind | None, Arg(description="Only memories of this kind.")] = None,
        limit: Limit = 50,
        sort: Annotated[
            Literal["score", "recent", "id"], Arg(description="Best score, newest or oldest first.")
        ] = "score",
    ) -> MemoryList:
        """Memories by layer, status and kind, sorted by score, recency or id."""
        chosen = None if status == "all" else status
        return self.longterm.memories(layer=layer, status=chosen, kind=kind, limit=limit, sort=sort)

    @verb(http="GET")
    @_verb
    def facts(
        self,
        *,
        level: Annotated[Level | None, Arg(description="The level (default: every level).")] = None,
        domain: Annotated[str | None, Arg(description="Only this domain.")] = None,
    ) -> MemoryList:
        """Active memories at a level of the hierarchy (L0 project ... L3 code)."""
        return self.longterm.facts(level=level, domain=domain)

    @verb(http="GET")
    @_verb
    def subtree(self, memory_id: MemoryId) -> MemoryList:
        """A memory and its descendants: the memories that refine it (``parent_id``), in
        the hierarchy's order."""
        return self.longterm.subtree(memory_id)

    @verb()
    @_durable
    def promote(
        self, memory_id: MemoryId, level: Annotated[Level, Arg(description="The level it moves to.")]
    ) -> MemoryRecord:
        """Moves a memory to another level of the hierarchy: L0 the whole project, L1 a
        domain, L2 a module, L3 a piece of code."""
        return self.longterm.promote(memory_id, level)

    # -- recording --------------------------------------------------------------------

    @verb()
    @_verb
    def record_tool_call(
        self,
        tool_name: Annotated[str, Arg(min_length=1, description="The tool's name, e.g. 'bash' or 'edit'.")],
        parameters: Annotated[Any, Arg(description="The tool's arguments.")] = None,
        *,
        success: Annotated[bool, Arg(description="Whether the call succeeded.")],
        result: Annotated[
            str | None, Arg(description="The tool's output: it joins the context window as a tool result.")
        ] = None,
        error_message: Annotated[str | None, Arg(description="What went wrong.")] = None,
        duration_ms: Annotated[
            int | None, Arg(ge=0, le=MAX_INT, description="How long it took, in milliseconds.")
        ] = None,
        file_path: Annotated[str | None, Arg(description="The file it worked on.")] = None,
        task_id: TaskId = None,
        at: Annotated[Time | None, Arg(description="When it happened (default: now).")] = None,
        mentions: Annotated[
            Sequence[str] | None,
            Arg(description="Files the call named, e.g. grep's matches (default: those result and parameters name)."),
        ] = None,
        idempotency_key: IdempotencyKey = None,
    ) -> Recorded:
        """The one call after a tool call: remembers it in the episodic store
        (durably: flushed before returning) and, when ``result`` (the tool's output)
        is given, adds that output to :attr:`window` as a tool result of
        ``tool_name`` on ``file_path``, which the next :meth:`prepare_context`
        returns (or prunes). The project files it named (``mentions``, else the
        paths in ``result`` and ``parameters``: see :mod:`aircher_mem.mentions`)
        are kept with it for :meth:`predict`; only files of the project are kept.

        For an agent: Remember a tool call you made (a test run, a build, a search), so
        later sessions know which tools fail and which edits fixed an error. Give an
        idempotency_key when you may send the same call again after a timeout. Returns
        {what, graph_stale, notes}."""
        rel = self.relative(file_path) if file_path is not None else None
        if result is not None:
            result = _text("result", result, blank=True)
        if mentions is None:
            from .mentions import paths_in

            mentions = paths_in(f"{result or ''}\n{_flat(parameters)}")
        named = self._project_files(mentions)
        stored = self.episodic.record_tool_execution(
            tool_name,
            parameters,
            result={"mentions": named} if named else None,
            success=success,
            error_message=error_message,
            duration_ms=duration_ms,
            file_path=rel,
            task_id=task_id,
            timestamp=None if at is None else unix_time("at", at),
            idempotency_key=idempotency_key,
        )
        if not stored:
            return Recorded("tool_call", self._stale, [_STORED_BEFORE])
        self._flush_episodic()
        if result is not None:
            self.window.add_tool_result(result, tool_name=tool_name, file_path=rel)
        return Recorded("tool_call", self._stale)

    @verb()
    @_verb
    def record_file_interaction(
        self,
        path: FilePath,
        operation: Annotated[Operation, Arg(description="What was done with the file.")],
        *,
        line_range: Annotated[
            tuple[Annotated[int, Arg(ge=0, le=MAX_INT)], Annotated[int, Arg(ge=0, le=MAX_INT)]] | None,
            Arg(description="The first and last line it touched."),
        ] = None,
        success: Annotated[bool, Arg(description="Whether it succeeded.")] = True,
        changes_summary: Annotated[str | None, Arg(description="What changed, in a line.")] = None,
        task_id: TaskId = None,
        at: Annotated[Time | None, Arg(description="When it happened (default: now).")] = None,
        idempotency_key: IdempotencyKey = None,
    ) -> Recorded:
        """Remembers a read, write, edit, search or analysis of a file (durably). A
        write or edit makes the graph refresh before the next graph verb, and a
        successful one refreshes the TTLs whose glob matches the file
        (:meth:`_files_changed`).

        For an agent: Remember that you read, wrote, edited, searched or analyzed a
        file, so later sessions find it in file_history and learn which files change
        together. After a write or edit the code graph is refreshed before the next
        query. Give an idempotency_key when you may send the same record again after a
        timeout. Returns {what, graph_stale, notes}."""
        from .episodic import OPERATIONS

        rel = self.relative(path)
        if operation not in OPERATIONS:
            raise InvalidInputError(f"operation must be one of {', '.join(OPERATIONS)}, got {operation!r}")
        stored = self.episodic.record_file_interaction(
            rel,
            operation,
            line_range=line_range,
            success=success,
            changes_summary=changes_summary,
            task_id=task_id,
            timestamp=None if at is None else unix_time("at", at),
            idempotency_key=idempotency_key,
        )
        if not stored:
            return Recorded("file_interaction", self._stale, [_STORED_BEFORE])
        self._flush_episodic()
        if operation in ("write", "edit"):
            self._stale = True
            if success:
                self._files_changed([rel], open_store=True)
        return Recorded("file_interaction", self._stale)

    @verb()
    @_verb
    def record_snapshot(
        self,
        snapshot: Annotated[
            Snapshot,
            Arg(description="The window: timestamp, session_id, task_id, total_tokens, items, pruned_items, reason."),
        ],
    ) -> Recorded:
        """Remembers a context-window snapshot (``timestamp``,
        ``session_id``, ``task_id``, ``total_tokens``, ``items``, ``pruned_items``,
        ``reason``), e.g. an agent's window before it compacts (durably).

        A plain dict of the fields :class:`~aircher_mem.checks.Snapshot` declares.
        Over HTTP, MCP and the CLI a missing, unknown or badly typed field is
        refused, naming it; from Python the store checks the fields it keeps."""
        self.episodic.store_snapshot(snapshot)
        self._flush_episodic()
        return Recorded("snapshot", self._stale)

    @verb()
    @_verb
    def task(
        self,
        action: Annotated[TaskAction, Arg(description="The lifecycle step.")],
        task_id: Annotated[str, Arg(min_length=1, description="The task's id.")],
        *,
        description: Annotated[str | None, Arg(description="For start: what the task is.")] = None,
        outcome: Annotated[str | None, Arg(description="For complete or fail: what came of it.")] = None,
        branch: Annotated[
            str | None, Arg(description="For start: its git branch (default: the one checked out).")
        ] = None,
    ) -> Task:
        """A task lifecycle step: ``start`` (needs ``description``; on ``branch``,
        by default the git branch checked out in the project), ``pause``,
        ``resume``, ``complete`` or ``fail`` (with an optional ``outcome``).

        For an agent: Start a task before working on it and complete (or fail) it when
        done. Records made with its task_id are grouped under it, files edited together
        within a task are learned as co-edited, and later sessions find the task and its
        outcome with tasks(query=...). Returns the task as stored after the step: {task_id,
        session_id, description, intent, status, started_at, completed_at, files_touched,
        tools_used, outcome, score, branch}."""
        store = self.episodic
        if action == "start":
            if not description:
                raise InvalidInputError("starting a task needs a description")
            store.start_task(task_id, description, branch=git_branch(self.root) if branch is None else branch)
        elif action == "pause":
            store.pause_task(task_id)
        elif action == "resume":
            store.resume_task(task_id)
        elif action == "complete":
            store.complete_task(task_id, outcome)
        elif action == "fail":
            store.fail_task(task_id, outcome)
        else:
            raise InvalidInputError(f"action must be one of {', '.join(TASK_ACTIONS)}, got {action!r}")
        store.flush()
        return store.task(task_id)

    # -- episodic queries -------------------------------------------------------------

    @verb(http="GET")
    @_verb
    def file_history(self, path: FilePath, *, limit: Limit = 10) -> FileHistory:
        """What was done with a file in earlier sessions, newest first, and the
        failed tool runs on it.

        For an agent: What was done with a file in earlier sessions, newest first, and
        the failed tool runs on it: JSON {path, interactions: [{timestamp, operation,
        line_range, success, task_id, context, changes_summary, ...}], failed_tool_runs:
        [{timestamp, tool_name, error_message, parameters, task_id, ...}]}."""
        rel = self.relative(path)
        limit = _limit("limit", limit)
        return FileHistory(
            rel, self.episodic.file_history(rel, limit=limit), self.episodic.failed_tool_runs(rel, limit=limit)
        )

    @verb(http="GET")
    @_verb
    def co_edited_files(
        self,
        path: Annotated[FilePath | None, Arg(description="Only pairs with this file.")] = None,
        *,
        min_count: Annotated[
            int | None,
            Arg(ge=1, le=10_000, description="Edited together at least this often (default: the policy's)."),
        ] = None,
    ) -> CoEdits:
        """Files edited together (same task, within the policy's co-edit window), at
        least ``min_count`` times; only pairs with ``path`` when it is given.

        For an agent: Files that were edited together (same task, within 5 minutes) in
        earlier sessions: when you change one, check the other. JSON {path, min_count,
        pairs: [{file1, file2, count}]}, most frequent first."""
        rel = self.relative(path) if path is not None else None
        count = self.policy.episodic.co_edit_min_count if min_count is None else _limit("min_count", min_count)
        pairs = [p for p in self.episodic.co_edited_files(min_count=count) if rel is None or rel in (p.file1, p.file2)]
        return CoEdits(rel, count, pairs)

    @verb(http="GET")
    @_verb
    def tasks(
        self,
        query: Annotated[str | None, Arg(description="Past tasks similar to this (default: the open tasks).")] = None,
        *,
        limit: Limit = 10,
    ) -> Tasks:
        """The open (active or paused) tasks, newest first; with ``query``, the past
        tasks most similar to it, with their outcomes.

        For an agent: Without `query`: the open (active or paused) tasks, newest first.
        With `query`: past tasks most similar to it, with their outcome, so earlier
        solutions can be reused. JSON {query, tasks: [{task_id, session_id, description,
        intent, status, started_at, completed_at, files_touched, tools_used, outcome,
        score, branch}]}; score is set only with `query`."""
        limit = _limit("limit", limit)
        if query:
            query = _text("query", query)
            return Tasks(query, self.episodic.find_similar_tasks(query, limit=limit))
        return Tasks(None, self.episodic.open_tasks()[:limit])

    @verb(http="GET")
    @_verb
    def patterns(
        self,
        pattern_type: Annotated[
            Literal["co-edit", "error-fix"] | None, Arg(description="Only patterns of this type.")
        ] = None,
        *,
        min_count: Annotated[int, Arg(ge=1, le=2**62, description="Observed at least this often.")] = 1,
    ) -> Patterns:
        """Learned patterns ("co-edit", "error-fix"), most observed first."""
        if pattern_type not in (None, "co-edit", "error-fix"):
            raise InvalidInputError(f"pattern_type must be co-edit or error-fix, got {pattern_type!r}")
        min_count = _limit("min_count", min_count, maximum=2**62)
        return Patterns(pattern_type, min_count, self.episodic.patterns(pattern_type, min_count=min_count))

    # -- overview ---------------------------------------------------------------------

    def _graph_stats(self) -> GraphStats | None:
        if not self.indexed:
            return None
        g = self._index.graph
        return GraphStats(
            g.file_count, g.node_count, g.edge_count, len(g.skipped), len(g.warnings), self._index.unsupported()
        )

    @verb(http="GET")
    @_verb
    def stats(self) -> Stats:
        """Sizes of the graph, the episodic store and long-term memory, and tool
        success rates over the last 7 days. While another process holds the store, the graph half is given
        and ``store_busy`` says why."""
        graph = self._graph_stats()
        try:
            store = self.episodic
            counts, tools, busy = store.counts(), store.tool_stats(days=7), None
            longterm: dict[str, int] | None = self.longterm.counts()
        except StoreLockedError as exc:
            counts, tools, busy, longterm = None, [], str(exc), None
        return Stats(str(self.root), KnowledgeGraph.supported_languages(), graph, counts, tools, busy, longterm)

    @verb(surfaces=("python", "cli", "http"))
    @_verb
    def create_store(self) -> InitResult:
        """Creates the episodic store's tables (``open`` created the folder)."""
        self.episodic.flush()
        return InitResult(str(self.root), str(self.store), self.created)

    @classmethod
    def doctor(
        cls,
        root: str | os.PathLike[str] | None = None,
        *,
        deep: bool = False,
        server: Callable[[Path], Check] | None = None,
    ) -> Doctor:
        """Checks the installed packages, the store, the config, the token encoding,
        the episodic store and the graph; every failure is reported, none stops the
        others. A store held by another process is a warning. ``deep`` also builds
        the graph afresh and compares it with the stored one (slow on large trees).
        ``server`` looks at the project's server.json (``aircher-mem doctor`` passes
        ``interfaces.client.server_check``: a stale file is a warning); its check
        follows the store's."""
        checks: list[Check] = []

        def check(name: str, probe: Callable[[], str]) -> None:
            try:
                checks.append(Check(name, "ok", probe()))
            except (StoreLockedError, _Warning) as exc:
                checks.append(Check(name, "warn", str(exc)))
            except Exception as exc:  # doctor reports every failure, it never stops at one
                checks.append(Check(name, "fail", f"{type(exc).__name__}: {exc}"))

        check("versions", _versions)
        memory: Memory | None = None
        config_error: PolicyError | None = None
        try:
            where = find_root() if root is None else Path(root)
            try:
                memory = cls.open(where, create=False)
            except PolicyError as exc:  # a bad config.toml: check the rest with the defaults
                config_error = exc
                memory = cls.open(where, create=False, policy=Policy())
            checks.append(Check("store", "ok", str(memory.store)))
        except AircherError as exc:
            checks.append(Check("store", "fail", str(exc)))
        if server is not None and memory is not None:
            try:
                checks.append(server(memory.root))
            except Exception as exc:  # doctor reports every failure, it never stops at one
                checks.append(Check("server", "fail", f"{type(exc).__name__}: {exc}"))
        policy = memory.policy if memory is not None else Policy()

        def config() -> str:
            if config_error is not None:
                raise config_error
            return (
                f"{CONFIG_FILE}: max_tokens {policy.max_tokens}, encoding {policy.encoding}, "
                f"code budget {policy.code_tokens} tokens"
            )

        check("config", config)
        from .tokens import TokenCounter, available_encodings

        check(
            "encoding",
            lambda: (
                f"{TokenCounter(policy.encoding).encoding} loads offline "
                f"(available: {', '.join(available_encodings())})"
            ),
        )
        if memory is not None:
            with memory:
                check("episodic", memory._doctor_episodic)
                check("long-term", memory._doctor_longterm)
                check("graph", memory._doctor_graph)
                if deep:
                    check("graph (deep)", memory._doctor_deep)
                check("languages", memory._doctor_languages)
                check("search", memory._doctor_search)
        return Doctor(all(c.status != "fail" for c in checks), checks)

    def _doctor_episodic(self) -> str:
        episodic = self.episodic
        counts = episodic.counts()
        where = episodic.path if episodic.team else self.db_path.name
        return f"{where}: schema {episodic.schema_version}, " + ", ".join(f"{k} {v}" for k, v in counts.items())

    def _doctor_longterm(self) -> str:
        lt = self.longterm
        counts = lt.counts()
        where = f"{lt.path} as {lt.user}" if lt.team else f"{self.db_path.name}"
        return f"{where}: {counts['turns']} turns, {counts['memories']} memories ({counts['active']} active)"

    def _doctor_graph(self) -> str:
        stats = self._graph_stats()
        if stats is None:
            raise NotIndexedError("not indexed yet: run aircher-mem index")
        problem = self.rebuild_reason()
        sizes = (
            f"{self.graph_path.name}: {stats.files} files, {stats.nodes} nodes, {stats.edges} edges, "
            f"{stats.skipped} skipped, {stats.warnings} warnings; "
        )
        if problem:
            return sizes + f"next index rebuilds it: {problem}"
        differ = self._index.mismatches()
        if differ:
            shown = "; ".join(differ[:3]) + (f"; {len(differ) - 3} more" if len(differ) > 3 else "")
            raise _Warning(sizes + f"manifest does not match {len(differ)} file(s) ({shown}): run aircher-mem index")
        return sizes + "manifest matches"

    def _doctor_deep(self) -> str:
        if not self.indexed:
            raise NotIndexedError("not indexed yet: run aircher-mem index")
        problems = self._index.compare_with_fresh_build()
        if problems:
            raise _Warning(f"differs from a fresh build: {problems}; run aircher-mem index --full")
        return "the stored graph equals a fresh build (files and edges)"

    def _doctor_languages(self) -> str:
        supported = ", ".join(KnowledgeGraph.supported_languages())
        unsupported = self._index.unsupported()
        if not unsupported:
            return f"parsed: {supported}; no files of other languages"
        others = ", ".join(f"{lang} {n}" for lang, n in sorted(unsupported.items(), key=lambda kv: (-kv[1], kv[0])))
        raise _Warning(f"not in the graph (language not supported): {others} files; parsed: {supported}")

    def _doctor_search(self) -> str:
        """The channels code search uses, and why the dense one is not among them."""
        lexical = self._index.graph_path.with_suffix(".lexical")
        if self.indexed and not lexical.is_file():
            raise _Warning(f"no {lexical.name}: it is rebuilt from the files when the graph loads")
        if self.policy.retrieval.dense == "off":
            return 'channels: lexical, graph (dense off: [retrieval] dense = "on" turns it on)'
        from .embeddings import available

        ok, why = available()
        if not ok:
            raise _Warning(f"[retrieval] dense is on but {why}")
        vectors = self._index.graph_path.with_suffix(VECTORS_SUFFIX)
        if not vectors.is_file():
            raise _Warning("dense channel on but nothing embedded yet: run aircher-mem index")
        return f"channels: lexical, graph, dense ({vectors.name})"

    # -- lifetime ---------------------------------------------------------------------

    @contextlib.contextmanager
    def batch(self) -> Iterator[Memory]:
        """Writes in the block are committed together at its end (and every
        ``[longterm] batch_rows`` / ``[episodic] batch_size`` rows), not one verb at a
        time: much faster for a bulk import (a thousand turns), but a crash inside the
        block loses what was not committed yet, although each verb returned. Outside
        a batch, every write verb commits before it returns. Blocks nest."""
        with self._lock:
            self._check_open()
            self._batching += 1
            longterm = self.longterm
        try:
            with longterm.batch():
                yield self
        finally:
            with self._lock:
                self._batching -= 1
                if not self._batching and self._episodic is not None and not self._closed:
                    self._episodic.flush()

    def _team_verb(self) -> contextlib.AbstractContextManager[None]:
        """A verb on a team's store acts as one (see
        :meth:`aircher_mem.longterm.core.StoreCore.acting`), once the store is open."""
        longterm = self._current()
        if longterm is None or not longterm.team:
            return contextlib.nullcontext()
        return longterm.acting()

    def _current(self) -> LongTermMemory | None:
        """The long-term store this thread's verbs use, when it is open."""
        user = _ACTING.get()
        return self._longterm if user is None else self._acting_for.get(user)

    def _open_stores(self) -> list[LongTermMemory]:
        """The long-term stores open: the store's own user's, then :meth:`as_user`'s."""
        return ([self._longterm] if self._longterm is not None else []) + list(self._acting_for.values())

    def served_users(self) -> list[str]:
        """The users :meth:`as_user` opened a view of the team's store for, by name."""
        with self._lock:
            return sorted(self._acting_for)

    @contextlib.contextmanager
    def as_user(self, user: str) -> Iterator[Memory]:
        """Within the block, this thread's long-term verbs act for ``user`` on the
        team's store (``[store] url``): what they write is ``user``'s, and they see
        ``user``'s user-private memories, not the store's own user's. What a server
        serving several people does for each request (per-user tokens); each user's
        view is opened on first use and kept until :meth:`close`. The rest of the
        memory (the code graph, episodic memory, the window) is the project's, shared.
        InvalidInputError on a store that is a file (its rows are its login's)."""
        name = _text("user", user, max_chars=128).strip()
        if not name:
            raise InvalidInputError("user must not be blank")
        if not self.policy.store.url:
            raise InvalidInputError("as_user needs a team's store ([store] url): a file's rows are its login's")
        token = _ACTING.set(name)
        try:
            yield self
        finally:
            _ACTING.reset(token)

    def _commit(self, ticket: int) -> None:
        """Commits every pending long-term write unless ``ticket`` (a write's number)
        was committed already."""
        with self._lock:
            if self._committed >= ticket:
                return
            target = self._written
            for longterm in self._open_stores():
                # DuckDB writes with the lock released: the next writers' verbs run
                # meanwhile, and their rows make the next commit's group.
                longterm.commit_outside(self._lock)  # StoreError: not acknowledged, still pending
            self._committed = max(self._committed, target)

    def _flush_episodic(self) -> None:
        """Commits what a record verb wrote, unless inside :meth:`batch`."""
        if not self._batching:
            self.episodic.flush()

    def flush(self) -> None:
        """Makes everything recorded durable (the graph is saved by ``index()``)."""
        with self._lock:
            if self._episodic is not None:
                self._episodic.flush()
            for longterm in self._open_stores():
                longterm.flush()

    def watch_team(self) -> None:
        """On a team's store, catch up whenever another process writes (a thread
        woken by the server, :class:`aircher_mem.postgres.Listener`) rather than at
        the next verb: what a long-running server does. Elsewhere a no-op."""
        from . import postgres

        with self._lock:
            if not self.policy.store.url or self._listener is not None:
                return
            self.longterm._load()
            self._listener = postgres.Listener(self.policy.store.url, self._caught_up).start()

    def _caught_up(self) -> None:
        with self._lock:
            if self._closed:
                return
            for longterm in self._open_stores():
                try:
                    longterm._load()
                except AircherError as exc:  # the next verb tries again
                    log.warning("catching up with the team's store failed: %s", exc)

    def close(self) -> None:
        """Flushes and closes; safe to call twice."""
        listener, self._listener = self._listener, None
        if listener is not None:  # before the lock: its thread may be waiting for it
            listener.close()
        with self._lock:
            if self._closed:
                return
            self._closed = True
            try:
                failed: AircherError | None = None
                for longterm in self._open_stores():
                    try:
                        longterm.close()
                    except AircherError as exc:  # the others still close
                        failed = exc
                if failed is not None:
                    raise failed
                self._committed = self._written  # close committed every write still waiting
            finally:
                if self._episodic is not None:
                    self._episodic.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Memory({str(self.root)!r})"


class _Warning(Exception):
    """A doctor check that passed with a caveat worth showing."""


def _versions() -> str:
    from importlib import metadata  # not at import: it loads email, zipfile and more

    found = []
    for package in ("duckdb", "numpy", "mcp"):
        try:
            found.append(f"{package} {metadata.version(package)}")
        except metadata.PackageNotFoundError:
            found.append(f"{package} missing")
    if any(v.endswith("missing") for v in found):
        raise RuntimeError(", ".join(found))
    import platform

    return f"aircher-mem {__version__}, Python {platform.python_version()}, " + ", ".join(found)
