"""The long-term store's core: the connection to the DuckDB file, the rows and
indexes held in memory, loading them, and writing.

Every write goes through one transaction helper, :meth:`StoreCore._transaction`
(the verbs' pending rows, ``forget``, a ``gc`` pass, the saved indexes'
generation, the end of a rewrite's debt). A write verb changes the state in memory
and notes its rows as pending (``_act``, ``_link``, ``_edge``, ``_touch``, new turns);
it ends with ``_commit``, which outside :meth:`StoreCore.batch` writes everything
pending (``_write``: the rows taken as statements, run in one transaction, made
pending again if it fails) before the verb returns. :meth:`StoreCore.commit_outside`
does the same without holding the caller's lock while DuckDB writes.

The tables are read once, on first use (``_load``), with the lexical indexes read as
saved beside the file (``INDEX_SUFFIXES``) when the file still records their
generation, and the documents logged as changed since made again (:mod:`.indexlog`),
else built from the rows.
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import functools
import getpass
import json
import logging
import operator
import os
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar, cast

from .. import heap, store
from .._core import LexicalIndex, VectorIndex
from ..config import (
    ChainsPolicy,
    ContradictionsPolicy,
    DecisionsPolicy,
    KnowledgePolicy,
    LifecyclePolicy,
    LongtermPolicy,
    RetrievalPolicy,
)
from ..digest import sha256_hex
from ..errors import InvalidInputError, StoreError, UnknownMemoryError
from . import checks, documents, indexlog
from .schema import (
    CAUSAL_NODE_FIELDS,
    CONTRADICTION_FIELDS,
    DELETE_CONTRADICTIONS,
    DELETE_EPISODES,
    DELETE_MEMORIES,
    DOCUMENTS_VERSION,
    EPISODE_FIELDS,
    EPISODE_LINK,
    EPISODE_LISTS,
    INDEX_LOG,
    INDEX_SUFFIXES,
    INSERT_ACTIONS,
    INSERT_CAUSAL_EDGES,
    INSERT_CONTRADICTIONS,
    INSERT_EDGES,
    INSERT_EPISODES,
    INSERT_KEYS,
    INSERT_LINKS,
    INSERT_MEMORIES,
    INSERT_NODES,
    INSERT_TURNS,
    JSON_FIELDS,
    MEMORY_FIELDS,
    RULES_AT,
    TAGS_AT,
    TURN_COLUMNS,
    UNLOG,
    UNSAVE,
    ActionRow,
    CausalNodeRow,
    ContradictionRow,
    EpisodeRow,
    Extractor,
    Judge,
    MemoryRow,
    Summarizer,
    TurnRow,
    check_judge,
    episode_row,
    json_list,
    memory_key,
    one_row,
    slices,
    visible,
)

if TYPE_CHECKING:
    import duckdb

    from .. import postgres
    from ..embeddings import Embedder

__all__ = ["StoreCore", "using_db", "team_verb", "log"]

log = logging.getLogger("aircher_mem.longterm")

VECTOR_SLICE = 16_384  # stored vectors are read this many rows at a time
LOAD_SLICE = 8_192  # rows are read, and documents indexed, this many at a time
CHANGES_KEPT = 16_384  # the changed memories StoreCore.changes can name; past it, a new log
#: Where the JSON columns are in a memory row.
_JSON_AT = tuple(MEMORY_FIELDS.index(name) for name in JSON_FIELDS)
#: A memory row's values in MEMORY_FIELDS' order.
_MEMORY_ROW = operator.attrgetter(*MEMORY_FIELDS)


def _json(values: list[str]) -> str:
    """A list column's JSON (most lists are empty)."""
    return json.dumps(values) if values else "[]"


_Core = TypeVar("_Core", bound="StoreCore")
_P = ParamSpec("_P")
_R = TypeVar("_R")


def using_db(function: Callable[Concatenate[_Core, _P], _R]) -> Callable[Concatenate[_Core, _P], _R]:
    """Runs a method of the store (or a function taking it first) holding its
    connection's lock (``_db``)."""

    @functools.wraps(function)
    def run(core: _Core, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        with core._db:
            return function(core, *args, **kwargs)

    return run


def _login() -> str:
    try:
        return getpass.getuser()
    except (OSError, KeyError):  # no name for this uid (a container, say)
        return f"uid {os.getuid()}"


def team_verb(function: Callable[Concatenate[_Core, _P], _R]) -> Callable[Concatenate[_Core, _P], _R]:
    """A verb of the store: on a team's store it runs as :meth:`StoreCore.acting`."""

    @functools.wraps(function)
    def run(core: _Core, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        if not core.team:
            return function(core, *args, **kwargs)
        with core.acting():
            return function(core, *args, **kwargs)

    return run


@dataclasses.dataclass
class _Taken:
    """One transaction's worth of pending writes: its statements, and what they came
    from (to make it pending again if it fails)."""

    statements: list[tuple[str, list[Any]]]
    turns: list[int]
    dirty: set[int]
    links: list[tuple[int, int, str, float]]
    edges: list[tuple[int, int, str, float]]
    actions: list[tuple[int, float, str, str]]
    vectors: dict[str, list[float]]
    contradictions: set[int]
    nodes: set[int]
    causal_edges: set[tuple[int, int, str]]
    keys: dict[str, tuple[int, float]]
    rows: int
    # the (part, key) of the documents the rows change (see indexlog), or None when
    # the saved indexes do not describe the rows before them
    logged: list[tuple[int, str]] | None

    def changes(self) -> str:
        """What the transaction writes, as a team's change log says it (JSON): the
        turns added, the memories written, the memories whose links, edges, actions
        and causal edges it adds (they start from), the contradictions, causal nodes
        and vectors written (see :mod:`aircher_mem.longterm.catchup`)."""
        return json.dumps(
            {
                "turns": sorted(set(self.turns)),
                "memories": sorted(self.dirty),
                "links": sorted({row[0] for row in self.links}),
                "edges": sorted({row[0] for row in self.edges}),
                "actions": sorted({row[0] for row in self.actions}),
                "contradictions": sorted(self.contradictions),
                "nodes": sorted(self.nodes),
                "causal": sorted({row[0] for row in self.causal_edges}),
                "vectors": sorted(self.vectors),
            },
            separators=(",", ":"),
        )


class StoreCore(store.StoreHolder):
    """The state every concern of :class:`aircher_mem.longterm.LongTermMemory` works
    on (the connection, the rows held in memory, the indexes, what is pending), and
    the one transaction helper every write goes through. See LongTermMemory for the
    arguments."""

    _store_name = "long-term memory"
    _exit_log = log

    def __init__(
        self,
        path: str | Path = ":memory:",
        *,
        policy: LongtermPolicy | None = None,
        retrieval: RetrievalPolicy | None = None,
        lifecycle: LifecyclePolicy | None = None,
        decisions: DecisionsPolicy | None = None,
        knowledge: KnowledgePolicy | None = None,
        chains: ChainsPolicy | None = None,
        contradiction_rules: ContradictionsPolicy | None = None,
        clock: Callable[[], float] = time.time,
        embedder: Callable[[], Embedder] | None = None,
        dense_note: str = "",
        extractor: Extractor | None = None,
        summarizer: Summarizer | None = None,
        judge: Judge | None = None,
        url: str = "",
        lock_seconds: float = 30.0,
        changes_days: float = 7.0,
        user: str | None = None,
        pool_size: int = 8,
    ) -> None:
        if not callable(clock):
            raise InvalidInputError(f"clock must be callable, got {checks.short(clock)}")
        if user is not None and not url:
            raise InvalidInputError("user is for a team's store ([store] url): a file's rows are its login's")
        if extractor is not None and not callable(extractor):
            raise InvalidInputError(f"extractor must be callable, got {checks.short(extractor)}")
        if summarizer is not None and not callable(summarizer):
            raise InvalidInputError(f"summarizer must be callable, got {checks.short(summarizer)}")
        if judge is not None:
            check_judge(judge)
        self.policy = policy or LongtermPolicy()
        self.retrieval = retrieval or RetrievalPolicy()
        self.lifecycle = lifecycle or LifecyclePolicy()
        self.decisions = decisions or DecisionsPolicy()
        self.knowledge = knowledge or KnowledgePolicy()
        self.chains = chains or ChainsPolicy()
        self.contradiction_rules = contradiction_rules or ContradictionsPolicy()
        self.clock = clock
        self.extractor = extractor
        self.summarizer = summarizer
        self.judge = judge
        self._judged: dict[tuple[int, int], bool] = {}  # the judge's answers, by pair (a, b)
        #: A team's store on a PostgreSQL server (``url``), else the DuckDB file at ``path``.
        self.team = bool(url)
        if url:  # not at import: a hook that opens the file never loads psycopg's side
            from .. import postgres
        self.path = postgres.shown(url) if url else str(path)
        self._embedder_factory = embedder
        self._embedder: Embedder | None = None
        self.dense_note = dense_note if embedder is None else ""
        # Held by whoever uses the connection (it is not shared between threads):
        # writes, forget, gc, loading, closing (see commit_outside).
        self._db = threading.RLock()
        if url:
            # the server answers what the store asks of a DuckDB connection (postgres.Connection)
            team = postgres.Connection(url, lock_seconds=lock_seconds, changes_days=changes_days, pool_size=pool_size)
            self._con = cast("duckdb.DuckDBPyConnection", team)
            try:
                team.migrate("longterm", where=self.path)
            except BaseException:
                team.close()
                raise
        else:
            self._con = store.connect(self.path, self)
            try:
                store.migrate(self._con, "longterm", path=self.path)
            except BaseException:
                store.disconnect(self._con, self.path, self)
                raise
        #: Who this store's rows are by, and whose user-private rows it sees: ``user``
        #: on a team's store when given (a server acting for its users), else the role
        #: the team's server knows this process as; the login on a file.
        self.user = user if user is not None else self._team().user() if url else _login()
        # A team's store: who this process is in the change log, the last change its
        # state includes, how deep its verbs are nested (acting) and whether it holds
        # the write lock.
        self._writer = os.urandom(8).hex()
        self._seen = 0
        self._acting = 0
        self._locked = False
        self._closed = False
        self._batch_depth = 0  # inside batch(): writes wait for its end (or batch_rows)
        self._holding = 0  # inside holding(): writes wait for its end, whatever their number
        self._reset()
        atexit.register(self._close_at_exit)
        self._opened()

    def _reset(self) -> None:
        """The state in memory, empty (before a load; a team's store reloads)."""
        self._loaded = False
        self._hidden = 0  # rows the load left out: other users' user-private ones
        self._turns: dict[int, TurnRow] = {}
        self._sessions: dict[str, list[int]] = defaultdict(list)  # turn ids in order of arrival
        self._position: dict[int, int] = {}  # turn id -> its place in its session
        self._stale_sessions: set[str] = set()  # session documents to rebuild before a recall
        self._memories: dict[int, MemoryRow] = {}
        self._sources: dict[int, dict[int, str]] = defaultdict(dict)  # memory -> {turn: reason}
        self._memories_of: dict[int, set[int]] = defaultdict(set)  # turn -> memories
        self._edges: dict[int, list[tuple[str, int]]] = defaultdict(list)  # memory -> (relation, other)
        self._actions: dict[int, list[ActionRow]] = defaultdict(list)
        self._children: dict[int, set[int]] = defaultdict(set)
        self._episodes: dict[int, EpisodeRow] = {}  # episode memory id -> what it keeps
        self._episode_turns: dict[int, list[int]] = defaultdict(list)  # episode -> its raw turns, in order
        self._episode_of: dict[int, int] = {}  # turn -> its episode
        # see memories._places: (its place in the change log, place -> memories, memory -> places)
        self._places: tuple[tuple[list[int], int], dict[str, set[int]], dict[int, tuple[str, ...]]] | None = None
        self._shape = 0  # counts the changes of a memory's content, level, status, stored score, or of the set
        self._changes: list[int] = []  # the memories changed, in order (see changes)
        self._slots: dict[tuple[str, str], int] = {}
        self._contradictions: dict[int, ContradictionRow] = {}
        self._next_contradiction = 1
        # the (a, b) pairs of _contradictions, and what they were taken from (see
        # contradictions._pair)
        self._pairs_of: tuple[tuple[int, int, int], set[tuple[int, int]]] | None = None
        self._nodes: dict[int, CausalNodeRow] = {}
        self._causal: dict[tuple[int, int, str], float] = {}  # (from, to, edge type) -> strength
        self._chain_of: dict[int, list[int]] = defaultdict(list)  # decision memory -> its nodes
        self._next_node = 1
        self._lexical = LexicalIndex(stem=True)  # prose: Snowball English stems
        # Session documents in their own index: they never change the corpus
        # statistics turns and memories are scored with (nor does the moment they
        # are rebuilt).
        self._session_lexical = LexicalIndex(stem=True)
        self._dedup = LexicalIndex(stem=True)  # the content of active memories only (merge checks)
        # Whether the rows are as the indexes saved beside the file (INDEX_SUFFIXES)
        # and the log of the changes since (longterm_index_log) describe them: a
        # write of the pending rows logs what it changes while the log has room (see
        # indexlog), any other write first deletes those files, their generation
        # and the log.
        self._saved_indexes = False
        self._logged = 0  # rows in longterm_index_log
        self.index_source = ""  # after the load: "saved" or "rebuilt" (see _load)
        self._vectors: VectorIndex | None = None
        self._unembedded: set[str] = set()
        self._next_turn = 1
        self._next_memory = 1
        # Pending writes.
        self._new_turns: list[int] = []
        self._dirty: set[int] = set()
        self._new_links: list[tuple[int, int, str, float]] = []
        self._new_edges: list[tuple[int, int, str, float]] = []
        self._new_actions: list[tuple[int, float, str, str]] = []
        self._new_vectors: dict[str, list[float]] = {}
        self._dirty_contradictions: set[int] = set()
        self._dirty_nodes: set[int] = set()
        self._new_causal: set[tuple[int, int, str]] = set()
        self._new_keys: dict[str, tuple[int, float]] = {}  # idempotency key digest -> (turn, when)
        self._pending = 0

    def _opened(self) -> None:
        """Runs once the state is set up (a subclass finishes what a crash cut short)."""

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError(f"the long-term memory in {self.path} is closed")

    def _get(self, memory_id: object) -> MemoryRow:
        key = checks.positive_id("memory_id", memory_id)
        self._load()
        memory = self._memories.get(key)
        if memory is None:
            raise UnknownMemoryError(f"no memory {key}")
        return memory

    def counts(self) -> dict[str, int]:
        """Turns, sessions, memories (active, archived, pending; mid, long)."""
        self._check_open()
        self._load()
        active = [m for m in self._memories.values() if m.status == "active"]
        return {
            "turns": len(self._turns),
            "sessions": len(self._sessions),
            "memories": len(self._memories),
            "active": len(active),
            "archived": sum(1 for m in self._memories.values() if m.status == "archived"),
            "pending": sum(1 for m in self._memories.values() if m.status == "pending"),
            "mid": sum(1 for m in active if m.layer == "mid"),
            "long": sum(1 for m in active if m.layer == "long"),
        }

    @using_db
    def _load(self) -> None:
        """Reads every row into memory and builds the indexes (the cyclic garbage
        collector paused meanwhile: :mod:`aircher_mem.heap`). A team's store also
        catches up: see :meth:`_sync`."""
        if self.team:
            self._sync()
            return
        if self._loaded:
            return
        with heap.paused():
            self._read_all()

    def _team(self) -> postgres.Connection:
        return cast("postgres.Connection", self._con)

    def _sync(self) -> None:
        """A team's store, before a verb reads or writes: while :meth:`acting`, the
        write lock first (held to the verb's end); then, in one snapshot, what
        other processes wrote since this state was read: their rows read again one
        by one (:mod:`.catchup`), or all of them when a write says nothing of what
        it wrote (a forget, a gc pass) or nothing was read yet. Before it waits for
        the lock, it catches up once without it: under the lock there is then only
        what was written meanwhile to read, and the others wait less."""
        team = self._team()
        if self._acting and not self._locked:
            self._read_others(team)
            team.lock()
            self._locked = True
        self._read_others(team)

    def _read_others(self, team: postgres.Connection) -> None:
        """What other processes wrote since this state was read (see :meth:`_sync`)."""
        if self._loaded and team.last_change() == self._seen:
            return
        team.execute("BEGIN TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
        try:
            last = team.last_change()
            current = self._loaded and self._seen >= team.trimmed()  # else entries it needs are gone
            others = [e for e in team.entries_after(self._seen) if e[1] != self._writer] if current else []
            if current and all(changes is not None for _, _, changes in others):
                if others:
                    self._catch_up([c for _, _, c in others if c is not None])
            else:
                unwritten = self._pending or self._new_vectors
                if unwritten:  # not acknowledged (a write failed): the server's rows are what holds
                    log.warning("long-term memory in %s: %d unwritten rows dropped to catch up", self.path, unwritten)
                self._reload()
        finally:
            team.execute("ROLLBACK")
        self._seen = last

    def _catch_up(self, entries: list[str]) -> None:
        """Puts what the change log's ``entries`` say others wrote in the state: here
        by reading every row again (``LongTermMemory`` reads only those rows)."""
        self._reload()

    def _reload(self) -> None:
        """The state read again from every row."""
        self._reset()
        with heap.paused():
            self._read_all()

    @contextlib.contextmanager
    def acting(self) -> Iterator[None]:
        """A verb of a team's store (see :func:`team_verb`): the first read inside takes
        the team's write lock and catches up; the end of the outermost verb writes
        everything pending and gives the lock up, so no other process writes while
        this one acts on what it read. Elsewhere a no-op."""
        if not self.team:
            yield
            return
        with self._db:
            self._acting += 1
            try:
                yield
            finally:
                self._acting -= 1
                if not self._acting and self._locked:
                    try:
                        self._write()
                    except StoreError:
                        self._loaded = False  # the state holds what was not written: read the rows again
                        raise
                    finally:
                        self._team().unlock()
                        self._locked = False

    def _read_all(self) -> None:
        """:meth:`_load`'s work. Rows are fetched, and memory documents indexed,
        ``LOAD_SLICE`` at a time, so that every row as a tuple is never held at once
        next to what is built from them."""
        duckdb = store.engine()

        parsed: dict[str, list[str]] = {}

        def cached_list(text: str) -> list[str]:
            # Tags and rules repeat (a few hundred lists among 100K memories): each
            # text parsed once; every row gets a list of its own.
            found = parsed.get(text)
            if found is None:
                found = parsed[text] = json_list(text)
            return list(found)

        user = self.user
        # the highest ids, hidden rows' too (user-private rows of other users are not read in)
        last_turn = last_memory = hidden = 0
        hidden_turns: set[int] = set()
        try:
            con = self._con
            con.execute(f"SELECT {', '.join(TURN_COLUMNS)} FROM turns ORDER BY id")
            while rows := con.fetchmany(LOAD_SLICE):
                for row in rows:
                    last_turn = row[0]
                    if row[9] == "user-private" and row[8] != user:
                        hidden += 1
                        hidden_turns.add(row[0])
                        continue
                    turn = TurnRow(
                        row[0], row[1], row[2], row[3], row[4], row[5], row[6], cached_list(row[7]), row[8], row[9]
                    )
                    self._turns[turn.id] = turn
                    self._position[turn.id] = len(self._sessions[turn.session_id])
                    self._sessions[turn.session_id].append(turn.id)
            con.execute(f"SELECT {', '.join(MEMORY_FIELDS)} FROM memories ORDER BY id")
            while rows := con.fetchmany(LOAD_SLICE):
                for row in rows:
                    memory = MemoryRow(*row)  # the columns are the dataclass's fields, in order
                    last_memory = memory.id
                    if not visible(memory.owner, memory.scope, user):
                        hidden += 1
                        continue
                    memory.tags = cached_list(row[TAGS_AT])
                    memory.rules = cached_list(row[RULES_AT])
                    self._memories[memory.id] = memory
                    if memory.parent_id is not None:
                        self._children[memory.parent_id].add(memory.id)
                    slot = memory.slot
                    if slot is not None and memory.status == "active" and memory.valid_until is None:
                        self._slots[slot] = memory.id
            con.execute("SELECT memory_id, turn_id, reason FROM memory_links ORDER BY memory_id, turn_id")
            while rows := con.fetchmany(LOAD_SLICE):
                for memory_id, turn_id, reason in rows:
                    if memory_id not in self._memories or turn_id in hidden_turns:
                        continue  # a row hidden from this user
                    if reason == EPISODE_LINK:  # an episode's raw turns are not its sources
                        self._episode_turns[memory_id].append(turn_id)
                        self._episode_of[turn_id] = memory_id
                        continue
                    self._sources[memory_id][turn_id] = reason
                    self._memories_of[turn_id].add(memory_id)
            for turns in self._episode_turns.values():
                turns.sort()
            for row in con.execute(f"SELECT {', '.join(EPISODE_FIELDS)} FROM episodes").fetchall():
                if row[0] in self._memories:
                    self._episodes[row[0]] = episode_row(row)
            memories = self._memories
            for source, target, relation in con.execute(
                "SELECT source_id, target_id, relation FROM memory_edges "
                "ORDER BY source_id, linked_at, target_id, relation"
            ).fetchall():
                if source in memories and target in memories:
                    self._edges[source].append((relation, target))
            last_contradiction = last_node = 0
            for row in con.execute(f"SELECT {', '.join(CONTRADICTION_FIELDS)} FROM contradictions").fetchall():
                last_contradiction = max(last_contradiction, row[0])
                if row[1] in memories and row[2] in memories:
                    self._contradictions[row[0]] = ContradictionRow(*row)
            for row in con.execute(f"SELECT {', '.join(CAUSAL_NODE_FIELDS)} FROM causal_nodes ORDER BY id").fetchall():
                last_node = row[0]
                node = CausalNodeRow(*row)
                if node.decision_id in memories and node.turn_id not in hidden_turns:
                    self._nodes[node.id] = node
                    self._chain_of[node.decision_id].append(node.id)
            for source, target, kind, strength in con.execute(
                "SELECT from_id, to_id, edge_type, strength FROM causal_edges"
            ).fetchall():
                if source in self._nodes and target in self._nodes:
                    self._causal[(source, target, kind)] = strength
            con.execute("SELECT memory_id, done_at, action, detail FROM memory_actions ORDER BY done_at, rowid")
            actions = self._actions
            while rows := con.fetchmany(LOAD_SLICE):
                for memory_id, done_at, action, detail in rows:
                    if memory_id in memories:
                        actions[memory_id].append(ActionRow(done_at, action, detail))
        except duckdb.Error as exc:
            raise store.corrupt_or_error(self.path, exc, "reading long-term memory") from None
        state = dict(self._state())
        self._next_turn = max(last_turn + 1, state.get("next_turn", 1))
        self._next_memory = max(last_memory + 1, state.get("next_memory", 1))
        self._next_contradiction = max(last_contradiction + 1, state.get("next_contradiction", 1))
        self._next_node = max(last_node + 1, state.get("next_node", 1))
        # saved indexes hold every row: a user some are hidden from builds them from the
        # rows it sees, and does not save them (_save_indexes)
        self._hidden = hidden
        saved = None if hidden else self._saved_index_files()
        if saved is not None:
            (self._lexical, self._dedup, self._session_lexical), logged = saved
            indexlog.replay(self, logged)
            self._saved_indexes = True
            self._logged = len(logged)
            self.index_source = "saved"
        else:
            self._stale_sessions = set(self._sessions)
            # one call: into the empty index, the Rust side builds shards in parallel
            self._lexical.upsert([documents.turn_document(self, t) for t in self._turns.values()])
            for chunk in slices(self._memories.values(), LOAD_SLICE):
                self._lexical.upsert([documents.memory_document(self, m) for m in chunk])
                self._dedup.upsert([documents.dedup_document(m) for m in chunk if m.status == "active"])
            self.index_source = "rebuilt"
        if self._embedder_factory is not None:
            self._load_vectors()
        self._loaded = True

    def _load_vectors(self) -> None:
        """The stored vectors of the items that exist, into the ``VectorIndex``: read
        as numpy arrays (never one Python float at a time), ``VECTOR_SLICE`` rows a
        query, one upsert each. Only vectors of the dimension most of them have, with
        every value finite, are kept: the other items are embedded again at the next
        recall."""
        duckdb = store.engine()
        import numpy as np  # not at import: searching code never loads it

        keys = set(self._lexical.keys())
        self._unembedded = set(keys)
        if self.team:
            self._load_server_vectors(keys)
            return
        try:
            found = self._con.execute(
                "SELECT len(vector) AS dim, max(rowid) FROM memory_vectors WHERE len(vector) > 0 "
                "GROUP BY dim ORDER BY count(*) DESC, dim LIMIT 1"
            ).fetchone()
            if found is None:
                return
            dim, last = int(found[0]), int(found[1])
            vectors = VectorIndex(dim)
            for start in range(0, last + 1, VECTOR_SLICE):
                rows = self._con.execute(
                    "SELECT item_key, vector FROM memory_vectors WHERE rowid >= ? AND rowid < ? AND len(vector) = ?",
                    [start, start + VECTOR_SLICE, dim],
                ).fetchnumpy()
                chosen = [i for i, key in enumerate(rows["item_key"]) if key in keys]
                if not chosen:
                    continue
                found_vectors = rows["vector"]
                matrix = np.stack([np.ma.filled(found_vectors[i], np.nan) for i in chosen])
                matrix = matrix.astype(np.float32, copy=False)
                finite = np.asarray(np.isfinite(matrix).all(axis=1))
                kept = [str(rows["item_key"][i]) for i, ok in zip(chosen, finite) if ok]
                vectors.upsert(kept, np.ascontiguousarray(matrix[finite]))
                self._unembedded.difference_update(kept)
        except duckdb.Error as exc:
            raise store.corrupt_or_error(self.path, exc, "reading the stored vectors") from None
        if len(vectors):
            self._vectors = vectors

    def _load_server_vectors(self, keys: set[str]) -> None:
        """:meth:`_load_vectors` on a team's server: the vectors of the most common
        dimension, ``VECTOR_SLICE`` rows at a time."""
        team = self._team()
        # `vector::FLOAT[]`: the column is an array, or pgvector's type (schema step 11)
        found = team.execute(
            "SELECT cardinality(vector::FLOAT[]) AS dim FROM memory_vectors WHERE cardinality(vector::FLOAT[]) > 0 "
            "GROUP BY dim ORDER BY count(*) DESC, dim LIMIT 1"
        ).fetchone()
        if found is None:
            return
        dim = int(found[0])
        vectors = VectorIndex(dim)
        team.execute(
            "SELECT item_key, vector::FLOAT[] FROM memory_vectors WHERE cardinality(vector::FLOAT[]) = ?", [dim]
        )
        while rows := team.fetchmany(VECTOR_SLICE):
            self._keep_vectors(vectors, [(key, vector) for key, vector in rows if key in keys])
        if len(vectors):
            self._vectors = vectors

    def _keep_vectors(self, vectors: VectorIndex, rows: list[tuple[str, list[float | None]]]) -> None:
        """Stored vectors read from a server (``(key, values)``, all of ``vectors``'
        dimension) into ``vectors``, but those with a value missing or not finite:
        those items are embedded again."""
        import numpy as np

        if not rows:
            return
        matrix = np.array([[np.nan if v is None else v for v in vector] for _, vector in rows], dtype=np.float32)
        finite = np.isfinite(matrix).all(axis=1)
        kept = [rows[i][0] for i in np.flatnonzero(finite)]
        vectors.upsert(kept, np.ascontiguousarray(matrix[finite]))
        self._unembedded.difference_update(kept)

    @using_db
    def _state(self) -> list[tuple[str, int]]:
        duckdb = store.engine()

        try:
            return self._con.execute("SELECT name, value FROM longterm_state").fetchall()
        except duckdb.Error as exc:
            raise store.corrupt_or_error(self.path, exc, "reading long-term memory") from None

    def _write_ids(self) -> None:
        """In ``forget``'s transaction: the next ids (the highest may be forgotten;
        other writes only add rows above what the file records)."""
        self._con.execute(
            "INSERT OR REPLACE INTO longterm_state VALUES ('next_turn', ?), ('next_memory', ?), "
            "('next_contradiction', ?), ('next_node', ?)",
            [self._next_turn, self._next_memory, self._next_contradiction, self._next_node],
        )

    def _index_paths(self) -> tuple[Path, ...]:
        """Where the lexical indexes are saved beside the store file (none in memory
        or on a server)."""
        if self.path == ":memory:" or self.team:
            return ()
        return tuple(Path(self.path + suffix) for suffix in INDEX_SUFFIXES)

    def _saved_index_files(
        self,
    ) -> tuple[tuple[LexicalIndex, LexicalIndex, LexicalIndex], list[tuple[int, str]]] | None:
        """The lexical, merge-check and session indexes saved beside the file, when
        the file still says their generation (nothing but logged changes was written
        since), and the (part, key) of each change logged since; else None, and they
        are built from the rows. A file that cannot be read is logged and rebuilt."""
        duckdb = store.engine()

        paths = self._index_paths()
        if not paths or not any(p.exists() for p in paths):
            return None
        try:
            rows = self._con.execute("SELECT generation, documents FROM longterm_indexes").fetchall()
        except duckdb.Error as exc:
            raise store.corrupt_or_error(self.path, exc, "reading long-term memory") from None
        found = None
        if len(rows) == 1 and all(p.exists() for p in paths):
            try:
                lexical, dedup, sessions = (LexicalIndex.load(p) for p in paths)
            except (StoreError, OSError) as exc:
                log.warning("long-term memory in %s: rebuilding its indexes: %s", self.path, exc)
            else:
                generation, version = rows[0]
                indexes = (lexical, dedup, sessions)
                if version == DOCUMENTS_VERSION and all(i.generation == generation and i.stem for i in indexes):
                    found = indexes
        if found is None:
            # Older than the rows (or damaged): they may hold what was forgotten since.
            self._drop_saved_indexes()
            return None
        try:
            logged = self._con.execute(f"SELECT part, key FROM {INDEX_LOG}").fetchall()
        except duckdb.Error as exc:
            raise store.corrupt_or_error(self.path, exc, "reading long-term memory") from None
        return found, logged

    @contextlib.contextmanager
    def _transaction(
        self,
        doing: str,
        *,
        failed: str = "",
        rows: bool = True,
        changes: str | None = None,
        logged: list[tuple[int, str]] | None = None,
    ) -> Iterator[duckdb.DuckDBPyConnection]:
        """The one way this store writes its file: a DuckDB transaction on the
        connection, holding ``_db``, committed when the block ends, rolled back when
        it raises (a DuckDB error becomes the typed error of
        :func:`aircher_mem.store.corrupt_or_error` for ``doing``, with ``failed``
        added to its message; any other error goes on as it is). When the block
        changes ``rows`` (every write but the clearing of a rewrite's debt), the
        saved indexes no longer describe them: their files go first (a crash after
        leaves the file's generation without them: rebuilt), then, in the
        transaction, the generation and the log of changes since it. What ``forget``
        forgets is never left in them. A write that names the (part, key) of every
        document its rows change (``logged``: the verbs' pending rows) adds them to
        that log instead, while the indexes are saved and the log has room
        (``[longterm] index_log_rows``): see :mod:`.indexlog`."""
        duckdb = store.engine()

        with self._db:
            con = self._con
            logging_changes = (
                rows
                and logged is not None
                and self._saved_indexes
                and self._logged + len(logged) <= self.policy.index_log_rows
            )
            try:
                if rows and not logging_changes:
                    self._drop_saved_indexes()
                con.execute("BEGIN TRANSACTION")
                if logging_changes and logged:
                    con.execute(*indexlog.insert(logged))
                elif rows and not logging_changes and not self.team:  # a team's store saves no indexes
                    con.execute(UNSAVE)
                    con.execute(UNLOG)
                noted = self._note_change(changes) if self.team else 0
                yield con
                con.execute("COMMIT")
                if noted:
                    self._seen = noted
                if logging_changes and logged:
                    self._logged += len(logged)
            except BaseException as exc:
                with contextlib.suppress(duckdb.Error):
                    con.execute("ROLLBACK")
                if not isinstance(exc, duckdb.Error):
                    raise
                error = store.corrupt_or_error(self.path, exc, doing)
                if failed:
                    error = type(error)(f"{error} ({failed})")
                raise error from None
            if not self.team:
                store.protect(self.path)

    def _note_change(self, changes: str | None) -> int:
        """In a team's write transaction: the write lock (already held while a verb
        acts), a check that no other process wrote since this state was read (else
        StoreError: nothing is written), and the write's number in the change log."""
        team = self._team()
        if not self._locked:
            team.lock_in_transaction()
            if self._loaded and any(w != self._writer for _, w, _ in team.entries_after(self._seen)):
                self._loaded = False  # read the rows again before the next verb
                raise StoreError(
                    f"long-term memory in {self.path}: another process wrote since this one read; "
                    "nothing was written (write through a verb, which waits for its turn)"
                )
        return team.note(self._writer, changes)

    def _drop_saved_indexes(self) -> None:
        """Deletes the saved indexes' files (see :meth:`_transaction`)."""
        for path in self._index_paths():
            try:
                path.unlink(missing_ok=True)
            except OSError as exc:  # the generation still goes: the file is never read again
                log.warning("long-term memory in %s: could not delete %s: %s", self.path, path, exc)
        self._saved_indexes = False

    def _save_indexes(self) -> None:
        """At close, after the last write: the lexical, merge-check and session
        indexes (the sessions' documents brought up to date first) saved beside the
        file with a new generation, which the file then records in the same
        transaction, so that the next load reads them rather than building them from
        every row. Not when the load left other users' user-private rows out: the
        saved indexes hold every row. A failure is logged (the next load rebuilds
        them)."""
        paths = self._index_paths()
        if not paths or not self._loaded or self._saved_indexes or self._hidden:
            return
        self._refresh_sessions()
        generation = int.from_bytes(os.urandom(8), "little")
        try:
            with self._transaction("saving the indexes") as con:
                for index, path in zip((self._lexical, self._dedup, self._session_lexical), paths):
                    index.save(path, generation=generation)
                con.execute("INSERT INTO longterm_indexes VALUES (?, ?)", [generation, DOCUMENTS_VERSION])
        except (StoreError, OSError) as exc:
            log.warning("long-term memory in %s: its indexes were not saved: %s", self.path, exc)
            return
        self._saved_indexes = True
        self._logged = 0

    def _refresh_sessions(self) -> None:
        """Rebuilds the session documents changed since the last recall."""
        if not self._stale_sessions:
            return
        self._session_lexical.upsert(documents.session_documents(self, sorted(self._stale_sessions)))
        self._stale_sessions.clear()

    def changes(self, since: tuple[list[int], int] | None) -> tuple[tuple[list[int], int], set[int] | None]:
        """Where the log of changed memories is now, and the ids of the memories
        changed since ``since`` (what this returned before): every memory whose
        row changed or was forgotten, and more (a changed counter). None when that
        is not known: the state was loaded again, the log grew past
        ``CHANGES_KEPT`` or a change reached every memory (see :meth:`_reshape`)."""
        now = (self._changes, len(self._changes))
        if since is None or since[0] is not self._changes:
            return now, None
        return now, set(self._changes[since[1] :])

    def _reshape(self, memory_id: int | None) -> None:
        """A memory's content, level, status or stored score changed, or it was
        added or forgotten (None: every memory's stored score, a collection)."""
        self._shape += 1
        self._log_change(memory_id)

    def _log_change(self, memory_id: int | None) -> None:
        if memory_id is None or len(self._changes) >= CHANGES_KEPT:
            self._changes = []  # a new log: whoever held a place in the old one groups again
        else:
            self._changes.append(memory_id)

    @property
    def shape(self) -> int:
        """A number that changes whenever a memory is added or forgotten, or its
        content, level or status changes, or a collection gives the memories new
        stored scores (not when counters change)."""
        return self._shape

    def _track_active(self, memory: MemoryRow) -> None:
        """Keeps the merge-check index to the active memories."""
        self._reshape(memory.id)
        if memory.status == "active":
            self._dedup.upsert([documents.dedup_document(memory)])
        else:
            self._dedup.remove([memory_key(memory.id)])

    def _index_memory(self, memory: MemoryRow) -> None:
        self._lexical.upsert([documents.memory_document(self, memory)])
        self._track_active(memory)
        self._forget_vector(memory_key(memory.id))
        self._unembedded.add(memory_key(memory.id))

    def _forget_vector(self, key: str) -> None:
        self._unembedded.discard(key)
        self._new_vectors.pop(key, None)
        if self._vectors is not None:
            self._vectors.remove([key])

    def _note(self, rows: int = 1) -> None:
        self._pending += rows
        if self._pending >= self.policy.batch_rows and not self._holding:
            self._write()

    def _act(self, memory_id: int, at: float, action: str, detail: str = "") -> None:
        self._actions[memory_id].append(ActionRow(at, action, detail))
        self._new_actions.append((memory_id, at, action, detail))
        self._note()

    def _link(self, memory_id: int, turn_id: int, reason: str, at: float) -> None:
        if turn_id in self._sources[memory_id]:
            return
        self._sources[memory_id][turn_id] = reason
        self._memories_of[turn_id].add(memory_id)
        self._new_links.append((memory_id, turn_id, reason, at))
        self._note()

    def _episode_link(self, episode_id: int, turn_id: int, at: float) -> None:
        """``turn_id`` is one of episode ``episode_id``'s raw turns (not a source)."""
        self._episode_turns[episode_id].append(turn_id)
        self._episode_of[turn_id] = episode_id
        self._new_links.append((episode_id, turn_id, EPISODE_LINK, at))
        self._note()

    def _edge(self, source: int, target: int, relation: str, at: float) -> None:
        self._edges[source].append((relation, target))
        self._new_edges.append((source, target, relation, at))
        self._note()

    def _touch_contradiction(self, row: ContradictionRow) -> None:
        if row.id not in self._dirty_contradictions:
            self._dirty_contradictions.add(row.id)
            self._note()

    def _touch_node(self, node: CausalNodeRow) -> None:
        if node.id not in self._dirty_nodes:
            self._dirty_nodes.add(node.id)
            self._note()

    def _cause(self, source: int, target: int, kind: str, strength: float) -> None:
        """The causal edge ``source`` -> ``target`` of ``kind`` (the stronger of two)."""
        key = (source, target, kind)
        if self._causal.get(key, -1.0) >= strength:
            return
        self._causal[key] = strength
        self._new_causal.add(key)
        self._note()

    def _requested(self, key: str) -> int | None:
        """The turn stored with idempotency key ``key`` (None: none was)."""
        digest = sha256_hex(key.encode("utf-8"))
        pending = self._new_keys.get(digest)
        if pending is not None:
            return pending[0]
        duckdb = store.engine()
        try:
            row = self._con.execute("SELECT turn_id FROM request_keys WHERE digest = ?", [digest]).fetchone()
        except duckdb.Error as exc:
            raise store.corrupt_or_error(self.path, exc, "reading long-term memory") from None
        return None if row is None else int(row[0])

    def _request(self, key: str, turn_id: int, at: float) -> None:
        """Turn ``turn_id`` was stored with idempotency key ``key`` (written with it)."""
        self._new_keys[sha256_hex(key.encode("utf-8"))] = (turn_id, at)
        self._note()

    def _touch(self, memory: MemoryRow) -> None:
        self._log_change(memory.id)
        if memory.id not in self._dirty:  # one row to write, however often it changes
            self._dirty.add(memory.id)
            self._note()

    @contextlib.contextmanager
    def batch(self) -> Iterator[None]:
        """Writes made in the block are committed together at its end (and whenever
        ``batch_rows`` are pending), not one verb at a time: faster for a bulk import,
        but a crash inside the block loses what was not committed yet, although
        each verb returned. Blocks nest; the outermost commits."""
        self._check_open()
        self._batch_depth += 1
        try:
            yield
        finally:
            self._batch_depth -= 1
        if self._batch_depth == 0 and not self._closed:
            self._write()

    @contextlib.contextmanager
    def holding(self) -> Iterator[None]:
        """Every row pending in the block stays pending, however many (``batch_rows``
        does not write them), for one transaction after it: a pass that changes
        most rows (consolidation) commits them at once."""
        self._holding += 1
        try:
            yield
        finally:
            self._holding -= 1

    @contextlib.contextmanager
    def deferring(self) -> Iterator[None]:
        """Write verbs in the block leave their rows pending, for the caller to
        :meth:`commit` (``Memory`` groups the commits of concurrent writers)."""
        self._batch_depth += 1
        try:
            yield
        finally:
            self._batch_depth -= 1

    def commit(self) -> None:
        """Commits everything pending in one transaction (no embedding: see
        :meth:`flush`); StoreError on failure, and it stays pending."""
        self._check_open()
        self._write()

    def _commit(self) -> None:
        """Ends a write verb: what it changed is committed before it returns (outside
        :meth:`batch`). On failure raises StoreError: the verb is not acknowledged,
        and its changes stay pending in memory for the next commit."""
        if self._batch_depth == 0:
            self._write()

    def _write(self) -> None:
        """Writes everything pending in one transaction (never embeds: this runs
        inside ``add_turn`` when a batch is full). On failure raises StoreError and
        keeps it pending."""
        with self._db:
            taken = self._take()
            if taken is None:
                return
            try:
                self._store(taken)
            except StoreError:
                self._restore(taken)
                raise

    def _take(self) -> _Taken | None:
        """What is pending, as the statements of one transaction (every value copied
        now: later changes are pending again), and the pending state emptied; None
        when nothing is pending."""
        if not (self._pending or self._new_vectors):
            return None
        statements: list[tuple[str, list[Any]]] = []
        rows = [self._turns[i] for i in self._new_turns if i in self._turns]
        if rows:
            statements.append(
                (
                    INSERT_TURNS,
                    [
                        [t.id for t in rows],
                        [t.session_id for t in rows],
                        [t.role for t in rows],
                        [t.speaker for t in rows],
                        [t.text for t in rows],
                        [t.at for t in rows],
                        [t.metadata for t in rows],
                        [json.dumps(t.tags) for t in rows],
                        [t.owner for t in rows],
                        [t.scope for t in rows],
                    ],
                )
            )
        dirty = [self._memories[i] for i in sorted(self._dirty) if i in self._memories]
        if dirty:
            columns = [list(column) for column in zip(*map(_MEMORY_ROW, dirty))]
            for at in _JSON_AT:
                columns[at] = [_json(v) for v in columns[at]]
            # DELETE then INSERT: DuckDB takes half the time of INSERT OR REPLACE on these wide rows
            statements.append((DELETE_MEMORIES, [[m.id for m in dirty]]))
            statements.append((INSERT_MEMORIES, columns))
            episodes = [self._episodes[m.id] for m in dirty if m.id in self._episodes]
            if episodes:  # an episode's row changes with its memory's
                values = []
                for name in EPISODE_FIELDS:
                    column = [getattr(e, name) for e in episodes]
                    values.append([json.dumps(v) for v in column] if name in EPISODE_LISTS else column)
                statements.append((DELETE_EPISODES, [[e.memory_id for e in episodes]]))
                statements.append((INSERT_EPISODES, values))
        for sql, rows_ in (
            (INSERT_LINKS, [r for r in self._new_links if r[0] in self._memories]),
            (INSERT_EDGES, [r for r in self._new_edges if r[0] in self._memories and r[1] in self._memories]),
            (INSERT_ACTIONS, [r for r in self._new_actions if r[0] in self._memories]),
        ):
            if rows_:
                statements.append((sql, [list(column) for column in zip(*rows_)]))
        contradictions = [
            self._contradictions[i] for i in sorted(self._dirty_contradictions) if i in self._contradictions
        ]
        if contradictions:
            statements.append((DELETE_CONTRADICTIONS, [[c.id for c in contradictions]]))
            statements.append(
                (INSERT_CONTRADICTIONS, [[getattr(c, name) for c in contradictions] for name in CONTRADICTION_FIELDS])
            )
        nodes = [self._nodes[i] for i in sorted(self._dirty_nodes) if i in self._nodes]
        if nodes:
            statements.append((INSERT_NODES, [[getattr(n, name) for n in nodes] for name in CAUSAL_NODE_FIELDS]))
        causal = sorted(k for k in self._new_causal if k in self._causal)
        if causal:
            columns = [list(column) for column in zip(*causal)] + [[self._causal[k] for k in causal]]
            statements.append((INSERT_CAUSAL_EDGES, columns))
        requests = [(d, t, at) for d, (t, at) in self._new_keys.items() if t in self._turns]
        if requests:
            statements.append((INSERT_KEYS, [list(column) for column in zip(*requests)]))
        if self._new_vectors:
            keys = list(self._new_vectors)
            statements.append(
                (
                    "INSERT OR REPLACE INTO memory_vectors SELECT unnest(?::VARCHAR[]), unnest(?::FLOAT[][])",
                    [keys, [self._new_vectors[k] for k in keys]],
                )
            )
        taken = _Taken(
            statements,
            self._new_turns,
            self._dirty,
            self._new_links,
            self._new_edges,
            self._new_actions,
            self._new_vectors,
            self._dirty_contradictions,
            self._dirty_nodes,
            self._new_causal,
            self._new_keys,
            self._pending,
            indexlog.changed(self, rows, [*self._dirty, *(link[0] for link in self._new_links)])
            if self._saved_indexes
            else None,
        )
        self._new_turns, self._dirty, self._new_links, self._new_edges = [], set(), [], []
        self._new_actions, self._new_vectors, self._pending = [], {}, 0
        self._dirty_contradictions, self._dirty_nodes, self._new_causal = set(), set(), set()
        self._new_keys = {}
        return taken

    def _store(self, taken: _Taken) -> None:
        """Runs a taken transaction; the caller holds ``_db`` (not necessarily the
        memory's other state: :meth:`commit_outside`). StoreError when DuckDB
        refuses, everything rolled back."""
        changes = taken.changes() if self.team else None
        with (
            self._transaction(
                "writing long-term memory",
                failed="nothing was written; the changes are kept in memory",
                changes=changes,
                logged=taken.logged,
            ) as con,
            self._team().pipelined() if self.team else contextlib.nullcontext(),
        ):
            for sql, parameters in taken.statements:
                con.execute(*one_row(sql, parameters))

    def _restore(self, taken: _Taken) -> None:
        """Makes a transaction that failed pending again (before what came since)."""
        self._new_turns[:0] = taken.turns
        self._dirty |= taken.dirty
        self._dirty_contradictions |= taken.contradictions
        self._dirty_nodes |= taken.nodes
        self._new_causal |= taken.causal_edges
        self._new_links[:0] = taken.links
        self._new_edges[:0] = taken.edges
        self._new_actions[:0] = taken.actions
        for key, vector in taken.vectors.items():
            self._new_vectors.setdefault(key, vector)
        for digest, stored in taken.keys.items():
            self._new_keys.setdefault(digest, stored)
        self._pending += taken.rows

    def commit_outside(self, lock: threading.RLock) -> None:
        """Commits what is pending without holding ``lock`` (the lock the caller
        guards this memory's state with, held once by this thread on entry) while
        DuckDB writes: the pending rows are taken under it, written after it is
        released, in the order they were taken. Other threads change the state
        meanwhile; what they add is pending for the next commit. On failure
        (StoreError) the rows are pending again. Returns with ``lock`` held."""
        self._check_open()
        self._db.acquire()
        try:
            taken = self._take()
        except BaseException:
            self._db.release()
            raise
        lock.release()
        failed = False
        try:
            if taken is not None:
                self._store(taken)
        except StoreError:
            failed = True
            raise
        finally:
            self._db.release()
            lock.acquire()
            if failed and taken is not None:
                self._restore(taken)

    @using_db
    def close(self) -> None:
        """Flushes and closes; closing twice is a no-op."""
        if self._closed:
            return
        try:
            self._write()
            self._save_indexes()
        finally:
            self._closed = True
            if self.team:
                self._team().close()
            else:
                store.disconnect(self._con, self.path, self)
            atexit.unregister(self._close_at_exit)
