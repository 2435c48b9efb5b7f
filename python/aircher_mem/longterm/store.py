"""Long-term memory: conversation turns in, memories out, recalled by meaning.

One model for seeds 004, 000, 001 and 003 (``ARCHITECTURE.md``): ``turns`` are the raw
log (004); ``memories`` hold facts, episodes, patterns, workflows and decisions with
the union of the seeds' fields; ``memory_links`` say which turns a memory came from
and why (extracted, merged, conflict, remembered); ``memory_edges`` link memories
(supersedes, parent); ``memory_actions`` keep what was done to each (explain).

How it runs:

- The tables live in the project's DuckDB file. They are read once, on first use,
  into memory (rows, the slot map, a BM25F index in Rust over turns and memories);
  a write verb (``add_turn``, ``remember``, ``update``, ``feedback``, ``promote``,
  ``forget``, ``gc``) changes that state and commits its rows in one transaction
  before it returns: an acknowledged write survives a crash of the process. Inside
  ``batch()`` the commits wait for the block's end (or ``batch_rows`` pending rows),
  one transaction for many turns; a crash inside the block loses what was not
  committed yet. ``recall`` counts what it returned (``retrieved``); those counters
  are committed with the next write (or ``flush()``, ``close()``).
- ``forget`` removes the memories, the turns they came from (and, by text, every
  turn holding the text; by session, the session's turns and the memories only
  they support), their documents in every index and their vectors, then rewrites
  the file (:func:`aircher_mem.store.rewrite`), so that no free block keeps the
  text. Ids are never given twice: the next ids are kept in the file
  (``longterm_ids``), so an id forgotten stays unknown.
- ``close()`` saves the three lexical indexes beside the file (``INDEX_SUFFIXES``,
  mode 0600) under a random generation that the file records (``longterm_indexes``);
  the next load reads them instead of building them from every row when the file
  still records that generation (``index_source`` says "saved" or "rebuilt"; at
  100K turns + 100K memories, 2.1-2.6 s against 6.3-7.1 s). Every write transaction first
  deletes the files and then, in the transaction, the generation: a crash at any
  point leaves either both as they were or nothing to read (rebuilt), and what
  ``forget`` forgets is gone from them at once.
- ``add_turn`` redacts secrets (:func:`aircher_mem.redact.redact`; in the session id
  too, which ``turns``, ``recall`` and ``get_context`` redact alike, so the raw id
  still finds its session) and tags personal data before anything is kept, then
  extracts (heuristic rules, plus an optional
  extractor callable with a timeout, never blocking the write): a candidate with a
  slot (subject, attribute) that holds another value supersedes that memory (the
  old one gets ``valid_until``, ``superseded_by``, status archived: nothing is
  deleted); one whose tokens overlap an existing memory's by ``merge_jaccard``
  merges into it (hits + 1); anything else is a new mid-term memory.
- ``recall`` fuses the lexical channel (and the dense one, with embeddings on) in
  Rust, adds recency, importance and usage, keeps what was valid at ``at``, and
  folds a turn's hit into the hit of a memory that points to it. A turn stating a
  value that a correction superseded by then (one of its memories matching the
  query) ranks right after the memory holding the value now, which takes the
  turn's score if it had less, and is noted "superseded by #N". A turn is indexed
  with its speaker, its date in words, the turns next to it, and as its text: its
  own without the names it addresses, plus the questions of the turn it replies
  to (``dialogue``). Session documents (a turn's session matching too) live in an
  index of their own, so they never change how turns and memories score.
- Embeddings (``[retrieval] dense = "on"`` and the extra installed) are never
  computed in ``add_turn``: new texts are embedded in one batch at the next
  ``recall`` (or ``flush``), and their vectors kept in the store.
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import datetime as dt
import functools
import itertools
import json
import logging
import math
import os
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import numpy as np

from .. import store
from .._core import LexicalIndex, VectorIndex, fuse
from ..config import LongtermPolicy, RetrievalPolicy
from ..errors import InvalidInputError, StoreError, UnknownMemoryError
from ..redact import pii_tags, redact, redact_value
from ..results import (
    ChannelScore,
    ConversationContext,
    Extracted,
    FeedbackResult,
    Forgotten,
    GcReport,
    MemoryAction,
    MemoryEdge,
    MemoryExplanation,
    MemoryLink,
    MemoryList,
    MemoryRecord,
    Recall,
    RecallHit,
    Remembered,
    Turn,
    TurnAdded,
)
from ..times import unix_time as _time
from .dialogue import party, questions, unaddressed
from .extract import Candidate, combine, extract, jaccard, normalize, run_llm, token_set
from .scoring import DAY, age_days, gc_outlook, score_terms
from .scoring import recency as recency_of
from .scoring import score as score_of
from .scoring import usage as usage_of

if TYPE_CHECKING:
    import duckdb

    from ..embeddings import Embedder

__all__ = [
    "LongTermMemory",
    "KINDS",
    "ROLES",
    "LEVELS",
    "LAYERS",
    "STATUSES",
    "SCOPES",
    "Extractor",
    "MAX_TEXT_CHARS",
]

log = logging.getLogger("aircher_mem.longterm")
_R = TypeVar("_R")

KINDS = ("fact", "episode", "pattern", "workflow", "decision")
ROLES = ("user", "assistant")
LEVELS = ("L0", "L1", "L2", "L3")
LAYERS = ("mid", "long")
STATUSES = ("active", "archived")
SCOPES = ("user-private", "project-shared", "system")
MAX_TEXT_CHARS = 1_000_000
MAX_METADATA_CHARS = 100_000
_MAX_K = 1000
_MAX_DEPTH = 64  # subtree walks stop here (a parent chain can be long, never endless)
_SPEAKER_LINKS = 32  # a memory's document names the speakers of this many of its turns
_SESSION_CHARS = 200_000  # a session's document holds at most its last this many characters
_VECTOR_SLICE = 16_384  # stored vectors are read this many rows at a time
_LOAD_SLICE = 8_192  # rows are read, and documents indexed, this many at a time
_COSINE_WINDOW = 1_000  # the cosine merge looks for an older memory among this many nearest items

Extractor = Callable[[str], object]
"""``extractor(turn_text)`` -> seed 004's JSON: a list of ``{content, importance,
tags, action: create|archive, ...}`` (see :func:`aircher_mem.longterm.extract.run_llm`)."""

# Never edit a released step: add a new one.
_MIGRATIONS: dict[int, list[str]] = {
    1: [
        """CREATE TABLE turns (
            id BIGINT PRIMARY KEY,
            session_id VARCHAR NOT NULL,
            role VARCHAR NOT NULL,
            speaker VARCHAR,
            text VARCHAR NOT NULL,
            said_at DOUBLE NOT NULL,
            metadata VARCHAR NOT NULL,
            tags VARCHAR NOT NULL
        )""",
        """CREATE TABLE memories (
            id BIGINT PRIMARY KEY,
            kind VARCHAR NOT NULL,
            content VARCHAR NOT NULL,
            summary VARCHAR NOT NULL,
            compressed VARCHAR NOT NULL,
            index_text VARCHAR NOT NULL,
            level VARCHAR NOT NULL,
            domain VARCHAR,
            module VARCHAR,
            code_ref VARCHAR,
            parent_id BIGINT,
            created_at DOUBLE NOT NULL,
            valid_from DOUBLE NOT NULL,
            valid_until DOUBLE,
            superseded_by BIGINT,
            layer VARCHAR NOT NULL,
            hits BIGINT NOT NULL,
            importance INTEGER NOT NULL,
            status VARCHAR NOT NULL,
            last_seen DOUBLE NOT NULL,
            score DOUBLE NOT NULL,
            retrieved BIGINT NOT NULL,
            cited BIGINT NOT NULL,
            ignored BIGINT NOT NULL,
            scope VARCHAR NOT NULL,
            tier VARCHAR NOT NULL,
            priority DOUBLE NOT NULL,
            is_anchor BOOLEAN NOT NULL,
            last_accessed DOUBLE,
            ttl_seconds DOUBLE,
            ttl_refresh VARCHAR,
            ttl_on_expire VARCHAR,
            tags VARCHAR NOT NULL,
            source VARCHAR NOT NULL,
            confidence DOUBLE NOT NULL,
            slot_subject VARCHAR,
            slot_attribute VARCHAR,
            slot_value VARCHAR,
            rules VARCHAR NOT NULL
        )""",
        """CREATE TABLE memory_links (
            memory_id BIGINT NOT NULL,
            turn_id BIGINT NOT NULL,
            reason VARCHAR NOT NULL,
            linked_at DOUBLE NOT NULL,
            PRIMARY KEY (memory_id, turn_id)
        )""",
        """CREATE TABLE memory_edges (
            source_id BIGINT NOT NULL,
            target_id BIGINT NOT NULL,
            relation VARCHAR NOT NULL,
            linked_at DOUBLE NOT NULL,
            PRIMARY KEY (source_id, target_id, relation)
        )""",
        """CREATE TABLE memory_actions (
            memory_id BIGINT NOT NULL,
            done_at DOUBLE NOT NULL,
            action VARCHAR NOT NULL,
            detail VARCHAR NOT NULL
        )""",
        """CREATE TABLE memory_vectors (
            item_key VARCHAR PRIMARY KEY,
            vector FLOAT[] NOT NULL
        )""",
    ],
    # The generation of the lexical indexes saved beside the file at the last close
    # and the version of the documents in them (at most one row; none when there
    # are none, or the rows changed since).
    2: ["CREATE TABLE longterm_indexes (generation UBIGINT NOT NULL, documents INTEGER NOT NULL)"],
    # The next turn and memory ids (an id is never given twice, even after a forget
    # of the highest), and whether a forget still owes the file its rewrite.
    3: ["CREATE TABLE longterm_state (name VARCHAR PRIMARY KEY, value BIGINT NOT NULL)"],
}
store.register("longterm", _MIGRATIONS)

#: The lexical indexes saved beside a store file at close (``<file><suffix>``): the
#: turns' and memories' documents, the active memories' merge-check index, and the
#: sessions' documents.
INDEX_SUFFIXES = (".longterm-lexical", ".longterm-dedup", ".longterm-sessions")
# The saved indexes' generation goes (first in every write transaction: _begin_write).
_UNSAVE = "DELETE FROM longterm_indexes"
#: What the saved indexes' documents are made by: bump it whenever ``_turn_document``,
#: ``_memory_document``, the merge-check documents or the tokenizer change, so that
#: indexes saved by an older aircher-mem are built again, never read.
DOCUMENTS_VERSION = 1

_TURN_COLUMNS = ("id", "session_id", "role", "speaker", "text", "said_at", "metadata", "tags")
_TURN_TYPES = ("BIGINT", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "DOUBLE", "VARCHAR", "VARCHAR")


@dataclasses.dataclass(slots=True)
class _Turn:
    id: int
    session_id: str
    role: str
    speaker: str | None
    text: str
    at: float
    metadata: str  # JSON
    tags: list[str]

    def result(self) -> Turn:
        return Turn(
            self.id,
            self.session_id,
            self.role,
            self.speaker,
            self.text,
            self.at,
            json.loads(self.metadata),
            list(self.tags),
        )


@dataclasses.dataclass(slots=True)
class _Memory:
    id: int
    kind: str
    content: str
    summary: str = ""
    compressed: str = ""
    index_text: str = ""
    level: str = "L0"
    domain: str | None = None
    module: str | None = None
    code_ref: str | None = None
    parent_id: int | None = None
    created_at: float = 0.0
    valid_from: float = 0.0
    valid_until: float | None = None
    superseded_by: int | None = None
    layer: str = "mid"
    hits: int = 0
    importance: int = 0
    status: str = "active"
    last_seen: float = 0.0
    score: float = 0.0
    retrieved: int = 0
    cited: int = 0
    ignored: int = 0
    scope: str = "project-shared"
    tier: str = "hot"
    priority: float = 0.0
    is_anchor: bool = False
    last_accessed: float | None = None
    ttl_seconds: float | None = None
    ttl_refresh: str | None = None
    ttl_on_expire: str | None = None
    tags: list[str] = dataclasses.field(default_factory=list)
    source: str = "extracted"
    confidence: float = 1.0
    slot_subject: str | None = None
    slot_attribute: str | None = None
    slot_value: str | None = None
    rules: list[str] = dataclasses.field(default_factory=list)

    @property
    def slot(self) -> tuple[str, str] | None:
        if self.slot_subject is None or self.slot_attribute is None:
            return None
        return (self.slot_subject, self.slot_attribute)

    def valid_at(self, at: float) -> bool:
        return self.valid_from <= at and (self.valid_until is None or at < self.valid_until)


_MEMORY_FIELDS = tuple(f.name for f in dataclasses.fields(_Memory))
_JSON_FIELDS = ("tags", "rules")
_TAGS_AT, _RULES_AT = _MEMORY_FIELDS.index("tags"), _MEMORY_FIELDS.index("rules")


def _slices(items: Iterable[Any], size: int) -> Iterable[list[Any]]:
    iterator = iter(items)
    while chunk := list(itertools.islice(iterator, size)):
        yield chunk


def _json_list(text: str) -> list[str]:
    """A stored JSON list of strings (most are empty: no parsing for those)."""
    return [] if text == "[]" else json.loads(text)


_MEMORY_TYPES = {
    "id": "BIGINT",
    "parent_id": "BIGINT",
    "superseded_by": "BIGINT",
    "hits": "BIGINT",
    "retrieved": "BIGINT",
    "cited": "BIGINT",
    "ignored": "BIGINT",
    "importance": "INTEGER",
    "is_anchor": "BOOLEAN",
}
_DOUBLES = (
    "created_at",
    "valid_from",
    "valid_until",
    "last_seen",
    "score",
    "priority",
    "last_accessed",
    "ttl_seconds",
    "confidence",
)


def _memory_type(name: str) -> str:
    return _MEMORY_TYPES.get(name, "DOUBLE" if name in _DOUBLES else "VARCHAR")


def _unnest_insert(verb: str, table: str, columns: Sequence[str], types: Sequence[str]) -> str:
    selects = ", ".join(f"unnest(?::{kind}[])" for kind in types)
    return f"{verb} INTO {table} ({', '.join(columns)}) SELECT {selects}"


_INSERT_TURNS = _unnest_insert("INSERT", "turns", _TURN_COLUMNS, _TURN_TYPES)
_INSERT_MEMORIES = _unnest_insert("INSERT", "memories", _MEMORY_FIELDS, [_memory_type(n) for n in _MEMORY_FIELDS])
_DELETE_MEMORIES = "DELETE FROM memories WHERE id IN (SELECT unnest(?::BIGINT[]))"
_INSERT_LINKS = _unnest_insert(
    "INSERT OR REPLACE",
    "memory_links",
    ("memory_id", "turn_id", "reason", "linked_at"),
    ("BIGINT", "BIGINT", "VARCHAR", "DOUBLE"),
)
_INSERT_EDGES = _unnest_insert(
    "INSERT OR IGNORE",
    "memory_edges",
    ("source_id", "target_id", "relation", "linked_at"),
    ("BIGINT", "BIGINT", "VARCHAR", "DOUBLE"),
)
_INSERT_ACTIONS = _unnest_insert(
    "INSERT", "memory_actions", ("memory_id", "done_at", "action", "detail"), ("BIGINT", "DOUBLE", "VARCHAR", "VARCHAR")
)

# -- argument checks ---------------------------------------------------------------------


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:79] + "…"


def _text(field: str, value: object, *, max_chars: int = MAX_TEXT_CHARS) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidInputError(f"{field} must be a non-empty string, got {_short(value)}")
    if len(value) > max_chars:
        raise InvalidInputError(f"{field} is {len(value)} characters long; the limit is {max_chars}")
    if "\x00" in value:
        raise InvalidInputError(f"{field} must not contain NUL characters")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInputError(f"{field} must be valid Unicode text (it holds a lone surrogate)") from None
    return value


def _optional_text(field: str, value: object, *, max_chars: int = 1000) -> str | None:
    return None if value is None else _text(field, value, max_chars=max_chars).strip()


def _redacted(value: str | None) -> str | None:
    return None if value is None else redact(value)


def _redacted_candidate(candidate: Candidate) -> Candidate:
    """An extractor's candidate with its content, value and tags redacted."""
    return dataclasses.replace(
        candidate,
        content=redact(candidate.content),
        value=_redacted(candidate.value),
        tags=tuple(sorted({redact(tag) for tag in candidate.tags})),
    )


def _choice(field: str, value: object, choices: Sequence[str]) -> str:
    if not isinstance(value, str) or value not in choices:
        raise InvalidInputError(f"{field} must be one of {', '.join(choices)}, got {_short(value)}")
    return value


def _id(field: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value < 2**63:
        raise InvalidInputError(f"{field} must be a positive integer id, got {_short(value)}")
    return value


def _count(field: str, value: object, maximum: int = _MAX_K) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= maximum:
        raise InvalidInputError(f"{field} must be an integer from 1 to {maximum}, got {_short(value)}")
    return value


def _tags(value: object) -> list[str]:
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise InvalidInputError(f"tags must be a sequence of strings, got {_short(value)}")
    out: list[str] = []
    for tag in value:
        text = redact(_text("a tag", tag, max_chars=200)).strip()
        if text not in out:
            out.append(text)
    if len(out) > 100:
        raise InvalidInputError(f"at most 100 tags, got {len(out)}")
    return out


def _metadata(value: object) -> str:
    if value is None:
        return "{}"
    if not isinstance(value, Mapping):
        raise InvalidInputError(f"metadata must be a mapping, got {type(value).__name__}")
    try:
        text = json.dumps(redact_value(dict(value)), allow_nan=False, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError, RecursionError) as exc:
        raise InvalidInputError(f"metadata must be JSON (finite numbers, str keys): {exc}") from None
    if len(text) > MAX_METADATA_CHARS:
        raise InvalidInputError(f"metadata is {len(text)} characters as JSON; the limit is {MAX_METADATA_CHARS}")
    _text("metadata", text, max_chars=MAX_METADATA_CHARS)
    return text


def _date_words(at: float) -> str:
    """The words a question may use for when something was said: "7 May 2023 Sunday"."""
    return _day_words(math.floor(at / 86_400.0)) if math.isfinite(at) else ""


@functools.lru_cache(maxsize=4096)
def _day_words(day: int) -> str:
    try:
        moment = dt.datetime.fromtimestamp(day * 86_400.0, dt.timezone.utc)
    except (OverflowError, ValueError, OSError):
        return ""
    return f"{moment.day} {moment.strftime('%B')} {moment.year} {moment.strftime('%A')}"


def _turn_key(turn_id: int) -> str:
    return f"t{turn_id}"


def _memory_key(memory_id: int) -> str:
    return f"m{memory_id}"


def _mergeable(memory: _Memory, kind: str, slot: tuple[str, str] | None, value: str | None) -> bool:
    """Whether a memory may absorb another of ``kind``, ``slot`` and ``value``: it is
    active, of that kind, and its slot does not hold something else."""
    if memory.status != "active" or memory.kind != kind:
        return False
    if memory.slot is not None and slot is not None and memory.slot != slot:
        return False
    return not (memory.slot is not None and memory.slot == slot and memory.slot_value != value)


def _session_key(session_id: str) -> str:
    return f"s{session_id}"


def _parse_key(key: str) -> tuple[str, int]:
    return ("turn" if key[0] == "t" else "memory"), int(key[1:])


@dataclasses.dataclass(slots=True)
class _Scored:
    key: str
    score: float
    channels: list[ChannelScore]
    matched: list[str]
    recency: float
    importance: float
    usage: float
    absorbed: list[int] = dataclasses.field(default_factory=list)


def _using_db(method: Callable[..., _R]) -> Callable[..., _R]:
    """Runs a method of LongTermMemory holding its connection's lock (``_db``)."""

    @functools.wraps(method)
    def run(self: LongTermMemory, *args: Any, **kwargs: Any) -> _R:
        with self._db:
            return method(self, *args, **kwargs)

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
    rows: int


class LongTermMemory:
    """Turns and memories in the DuckDB file at ``path`` (``":memory:"`` for tests).

    ``index_source`` is "" until the first use loads the store, then "saved" (the
    lexical indexes were read as saved at the last close) or "rebuilt" (built from
    the rows: none saved, or the rows changed since).

    ``embedder`` (a callable returning an :class:`aircher_mem.embeddings.Embedder`)
    turns the dense channel on; ``dense_note`` says why it is off otherwise.
    ``extractor`` is the optional LLM callable (``[longterm] extractor_mode``).
    """

    def __init__(
        self,
        path: str | Path = ":memory:",
        *,
        policy: LongtermPolicy | None = None,
        retrieval: RetrievalPolicy | None = None,
        clock: Callable[[], float] = time.time,
        embedder: Callable[[], Embedder] | None = None,
        dense_note: str = "",
        extractor: Extractor | None = None,
    ) -> None:
        if not callable(clock):
            raise InvalidInputError(f"clock must be callable, got {_short(clock)}")
        if extractor is not None and not callable(extractor):
            raise InvalidInputError(f"extractor must be callable, got {_short(extractor)}")
        self.policy = policy or LongtermPolicy()
        self.retrieval = retrieval or RetrievalPolicy()
        self.clock = clock
        self.extractor = extractor
        self.path = str(path)
        self._embedder_factory = embedder
        self._embedder: Embedder | None = None
        self.dense_note = dense_note if embedder is None else ""
        # Held by whoever uses the connection (it is not shared between threads):
        # writes, forget, gc, loading, closing (see commit_outside).
        self._db = threading.RLock()
        self._con: duckdb.DuckDBPyConnection = store.connect(self.path, self)
        try:
            store.migrate(self._con, "longterm", path=self.path)
        except BaseException:
            store.disconnect(self._con, self.path, self)
            raise
        self._closed = False
        self._loaded = False
        self._turns: dict[int, _Turn] = {}
        self._sessions: dict[str, list[int]] = defaultdict(list)  # turn ids in order of arrival
        self._position: dict[int, int] = {}  # turn id -> its place in its session
        self._stale_sessions: set[str] = set()  # session documents to rebuild before a recall
        self._memories: dict[int, _Memory] = {}
        self._sources: dict[int, dict[int, str]] = defaultdict(dict)  # memory -> {turn: reason}
        self._memories_of: dict[int, set[int]] = defaultdict(set)  # turn -> memories
        self._edges: dict[int, list[tuple[str, int]]] = defaultdict(list)  # memory -> (relation, other)
        self._actions: dict[int, list[MemoryAction]] = defaultdict(list)
        self._children: dict[int, set[int]] = defaultdict(set)
        self._slots: dict[tuple[str, str], int] = {}
        self._lexical = LexicalIndex(stem=True)  # prose: Snowball English stems
        # Session documents in their own index: they never change the corpus
        # statistics turns and memories are scored with (nor does the moment they
        # are rebuilt).
        self._session_lexical = LexicalIndex(stem=True)
        self._dedup = LexicalIndex(stem=True)  # the content of active memories only (merge checks)
        # Whether the rows are as the indexes saved beside the file (INDEX_SUFFIXES)
        # describe them: a write first deletes those files and their generation.
        self._saved_indexes = False
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
        self._pending = 0
        self._batch_depth = 0  # inside batch(): writes wait for its end (or batch_rows)
        atexit.register(self._close_at_exit)
        if ("rewrite", 1) in self._state():  # a forget's rewrite a crash cut short
            self._rewrite()

    # -- loading -------------------------------------------------------------------------

    @_using_db
    def _load(self) -> None:
        """Reads every row into memory and builds the indexes. Rows are fetched, and
        memory documents indexed, ``_LOAD_SLICE`` at a time, so that every row as a
        tuple is never held at once next to what is built from them."""
        if self._loaded:
            return
        import duckdb

        parsed: dict[str, list[str]] = {}

        def json_list(text: str) -> list[str]:
            # Tags and rules repeat (a few hundred lists among 100K memories): each
            # text parsed once; every row gets a list of its own.
            found = parsed.get(text)
            if found is None:
                found = parsed[text] = _json_list(text)
            return list(found)

        try:
            con = self._con
            con.execute(f"SELECT {', '.join(_TURN_COLUMNS)} FROM turns ORDER BY id")
            while rows := con.fetchmany(_LOAD_SLICE):
                for row in rows:
                    turn = _Turn(row[0], row[1], row[2], row[3], row[4], row[5], row[6], json_list(row[7]))
                    self._turns[turn.id] = turn
                    self._position[turn.id] = len(self._sessions[turn.session_id])
                    self._sessions[turn.session_id].append(turn.id)
            con.execute(f"SELECT {', '.join(_MEMORY_FIELDS)} FROM memories ORDER BY id")
            while rows := con.fetchmany(_LOAD_SLICE):
                for row in rows:
                    memory = _Memory(*row)  # the columns are the dataclass's fields, in order
                    memory.tags = json_list(row[_TAGS_AT])
                    memory.rules = json_list(row[_RULES_AT])
                    self._memories[memory.id] = memory
                    if memory.parent_id is not None:
                        self._children[memory.parent_id].add(memory.id)
                    slot = memory.slot
                    if slot is not None and memory.status == "active" and memory.valid_until is None:
                        self._slots[slot] = memory.id
            con.execute("SELECT memory_id, turn_id, reason FROM memory_links")
            while rows := con.fetchmany(_LOAD_SLICE):
                for memory_id, turn_id, reason in rows:
                    self._sources[memory_id][turn_id] = reason
                    self._memories_of[turn_id].add(memory_id)
            for source, target, relation in con.execute(
                "SELECT source_id, target_id, relation FROM memory_edges"
            ).fetchall():
                self._edges[source].append((relation, target))
            con.execute("SELECT memory_id, done_at, action, detail FROM memory_actions ORDER BY done_at, rowid")
            while rows := con.fetchmany(_LOAD_SLICE):
                for memory_id, done_at, action, detail in rows:
                    self._actions[memory_id].append(MemoryAction(done_at, action, detail))
        except duckdb.Error as exc:
            raise store.corrupt_or_error(self.path, exc, "reading long-term memory") from None
        state = dict(self._state())
        self._next_turn = max(max(self._turns, default=0) + 1, state.get("next_turn", 1))
        self._next_memory = max(max(self._memories, default=0) + 1, state.get("next_memory", 1))
        saved = self._saved_index_files()
        if saved is not None:
            self._lexical, self._dedup, self._session_lexical = saved
            self._saved_indexes = True
            self.index_source = "saved"
        else:
            self._stale_sessions = set(self._sessions)
            # one call: into the empty index, the Rust side builds shards in parallel
            self._lexical.upsert([self._turn_document(t) for t in self._turns.values()])
            for chunk in _slices(self._memories.values(), _LOAD_SLICE):
                self._lexical.upsert([self._memory_document(m) for m in chunk])
                self._dedup.upsert(
                    [("memory", _memory_key(m.id), "", {"text": m.content}) for m in chunk if m.status == "active"]
                )
            self.index_source = "rebuilt"
        if self._embedder_factory is not None:
            self._load_vectors()
        self._loaded = True

    def _index_paths(self) -> tuple[Path, ...]:
        """Where the lexical indexes are saved beside the store file (none in memory)."""
        if self.path == ":memory:":
            return ()
        return tuple(Path(self.path + suffix) for suffix in INDEX_SUFFIXES)

    def _saved_index_files(self) -> tuple[LexicalIndex, LexicalIndex, LexicalIndex] | None:
        """The lexical, merge-check and session indexes saved at the last close, when
        the file still says their generation (nothing was written since); else None,
        and they are built from the rows. A file that cannot be read is logged and
        rebuilt."""
        import duckdb

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
                generation, documents = rows[0]
                indexes = (lexical, dedup, sessions)
                if documents == DOCUMENTS_VERSION and all(i.generation == generation and i.stem for i in indexes):
                    found = indexes
        if found is None:
            # Older than the rows (or damaged): they may hold what was forgotten since.
            self._drop_saved_indexes()
        return found

    @_using_db
    def _state(self) -> list[tuple[str, int]]:
        import duckdb

        try:
            return self._con.execute("SELECT name, value FROM longterm_state").fetchall()
        except duckdb.Error as exc:
            raise store.corrupt_or_error(self.path, exc, "reading long-term memory") from None

    def _write_ids(self) -> None:
        """In ``forget``'s transaction: the next ids (the highest may be forgotten;
        other writes only add rows above what the file records)."""
        self._con.execute(
            "INSERT OR REPLACE INTO longterm_state VALUES ('next_turn', ?), ('next_memory', ?)",
            [self._next_turn, self._next_memory],
        )

    def _begin_write(self) -> None:
        """Begins a write transaction (``_write``, ``forget``, ``gc``): the saved
        indexes no longer describe the rows. Their files go first (a crash after
        leaves the file's generation without them: rebuilt), then, in the
        transaction, the generation. What ``forget`` forgets is never left in them."""
        self._drop_saved_indexes()
        self._con.execute("BEGIN TRANSACTION")
        self._con.execute(_UNSAVE)

    def _drop_saved_indexes(self) -> None:
        """Deletes the saved indexes' files (see ``_begin_write``)."""
        for path in self._index_paths():
            try:
                path.unlink(missing_ok=True)
            except OSError as exc:  # the generation still goes: the file is never read again
                log.warning("long-term memory in %s: could not delete %s: %s", self.path, path, exc)
        self._saved_indexes = False

    def _save_indexes(self) -> None:
        """At close, after the last write: the lexical, merge-check and session
        indexes (the sessions' documents brought up to date first) saved beside the
        file with a new generation, which the file then records, so that the next
        load reads them rather than building them from every row. A failure is
        logged (the next load rebuilds them)."""
        import duckdb

        paths = self._index_paths()
        if not paths or not self._loaded or self._saved_indexes:
            return
        self._refresh_sessions()
        generation = int.from_bytes(os.urandom(8), "little")
        try:
            self._con.execute(_UNSAVE)
            for index, path in zip((self._lexical, self._dedup, self._session_lexical), paths):
                index.save(path, generation=generation)
            self._con.execute("INSERT INTO longterm_indexes VALUES (?, ?)", [generation, DOCUMENTS_VERSION])
        except (duckdb.Error, StoreError, OSError) as exc:
            log.warning("long-term memory in %s: its indexes were not saved: %s", self.path, exc)
            return
        self._saved_indexes = True

    def _load_vectors(self) -> None:
        """The stored vectors of the items that exist, into the ``VectorIndex``: read
        as numpy arrays (never one Python float at a time), ``_VECTOR_SLICE`` rows a
        query, one upsert each. Only vectors of the dimension most of them have, with
        every value finite, are kept: the other items are embedded again at the next
        recall."""
        import duckdb

        keys = set(self._lexical.keys())
        self._unembedded = set(keys)
        try:
            found = self._con.execute(
                "SELECT len(vector) AS dim, max(rowid) FROM memory_vectors WHERE len(vector) > 0 "
                "GROUP BY dim ORDER BY count(*) DESC, dim LIMIT 1"
            ).fetchone()
            if found is None:
                return
            dim, last = int(found[0]), int(found[1])
            vectors = VectorIndex(dim)
            for start in range(0, last + 1, _VECTOR_SLICE):
                rows = self._con.execute(
                    "SELECT item_key, vector FROM memory_vectors WHERE rowid >= ? AND rowid < ? AND len(vector) = ?",
                    [start, start + _VECTOR_SLICE, dim],
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

    def _track_active(self, memory: _Memory) -> None:
        """Keeps the merge-check index to the active memories."""
        if memory.status == "active":
            self._dedup.upsert([("memory", _memory_key(memory.id), "", {"text": memory.content})])
        else:
            self._dedup.remove([_memory_key(memory.id)])

    def _neighbours(self, turn: _Turn) -> tuple[_Turn | None, _Turn | None]:
        """The turns before and after ``turn`` in its session (None at an end)."""
        session = self._sessions[turn.session_id]
        at = self._position[turn.id]
        before = self._turns[session[at - 1]] if at > 0 else None
        after = self._turns[session[at + 1]] if at + 1 < len(session) else None
        return before, after

    def _unaddressed(self, turn: _Turn) -> str:
        """The turn's text without the names of the parties of the turns next to
        it (``dialogue.unaddressed``): "Thanks, Caroline!" is said to Caroline, not
        about her."""
        around = [t.speaker for t in self._neighbours(turn) if t is not None]
        return unaddressed(turn.text, around, turn.speaker)

    def _turn_document(self, turn: _Turn) -> tuple[str, str, str, dict[str, str]]:
        """A turn's fields: its text (without the names it addresses:
        ``dialogue``), its speaker and date words, as ``question`` the questions of
        the turn it replies to (when another party said it), and as ``context`` the
        turns before and after it in its session (an answer often sits in the reply
        to a question). The question is a field of its own, not appended to the
        text, so a long question never dilutes the reply's own words. Depends on
        the turns next to it only, so ``add_turn`` re-indexes the turn before a new
        one and ``_load`` rebuilds the same documents."""
        before, after = self._neighbours(turn)
        fields = {
            "text": self._unaddressed(turn),
            "speaker": turn.speaker or "",
            "date": _date_words(turn.at),
            "context": " ".join(t.text for t in (before, after) if t is not None),
        }
        if before is not None and party(before.speaker, before.role) != party(turn.speaker, turn.role):
            asked = questions(self._unaddressed(before))
            if asked:
                fields["question"] = asked
        return ("turn", _turn_key(turn.id), turn.session_id, fields)

    def _refresh_sessions(self) -> None:
        """Rebuilds the session documents (the session's turns, the most recent
        ``_SESSION_CHARS`` characters of them) changed since the last recall."""
        if not self._stale_sessions:
            return
        documents = []
        for session in sorted(self._stale_sessions):
            texts: list[str] = []
            size = 0
            for turn_id in reversed(self._sessions[session]):
                text = self._turns[turn_id].text
                size += len(text) + 1
                if size > _SESSION_CHARS:
                    break
                texts.append(text)
            documents.append(("session", _session_key(session), session, {"text": "\n".join(reversed(texts))}))
        self._session_lexical.upsert(documents)
        self._stale_sessions.clear()

    def _session_scores(self, text: str) -> dict[str, tuple[float, float]]:
        """Session id -> (BM25 score of its session document, that score over the
        best session's). ``recall`` brings the session documents up to date first."""
        if self.policy.recall_session_weight <= 0:
            return {}
        found = self._session_lexical.search(
            text, 100, kinds=("session",), k1=self.retrieval.bm25_k1, b=self.retrieval.bm25_b
        )
        best = max((score for _key, score, _terms in found), default=0.0)
        if best <= 0:
            return {}
        return {key[1:]: (score, score / best) for key, score, _terms in found}

    def _memory_document(self, memory: _Memory) -> tuple[str, str, str, dict[str, str]]:
        speakers = sorted(self._speakers(memory.id))
        return (
            "memory",
            _memory_key(memory.id),
            "",
            {
                "text": memory.content,
                "tags": " ".join(memory.tags),
                "speaker": " ".join(speakers),
                "date": _date_words(memory.valid_from),
            },
        )

    def _speakers(self, memory_id: int) -> set[str]:
        """Who said the first ``_SPEAKER_LINKS`` source turns of a memory."""
        sources = itertools.islice(self._sources.get(memory_id, {}), _SPEAKER_LINKS)
        return {self._turns[t].speaker or "" for t in sources if t in self._turns}

    def _index_memory(self, memory: _Memory) -> None:
        self._lexical.upsert([self._memory_document(memory)])
        self._track_active(memory)
        self._forget_vector(_memory_key(memory.id))
        self._unembedded.add(_memory_key(memory.id))

    # -- writing -------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError(f"the long-term memory in {self.path} is closed")

    def _note(self, rows: int = 1) -> None:
        self._pending += rows
        if self._pending >= self.policy.batch_rows:
            self._write()

    def _act(self, memory_id: int, at: float, action: str, detail: str = "") -> None:
        entry = MemoryAction(at, action, detail)
        self._actions[memory_id].append(entry)
        self._new_actions.append((memory_id, at, action, detail))
        self._note()

    def _link(self, memory_id: int, turn_id: int, reason: str, at: float) -> None:
        if turn_id in self._sources[memory_id]:
            return
        self._sources[memory_id][turn_id] = reason
        self._memories_of[turn_id].add(memory_id)
        self._new_links.append((memory_id, turn_id, reason, at))
        self._note()

    def _edge(self, source: int, target: int, relation: str, at: float) -> None:
        self._edges[source].append((relation, target))
        self._new_edges.append((source, target, relation, at))
        self._note()

    def _touch(self, memory: _Memory) -> None:
        self._dirty.add(memory.id)
        self._note()

    def flush(self) -> None:
        """Embeds the texts not embedded yet (with the dense channel on) and writes
        everything pending in one transaction. On failure raises StoreError and
        keeps it pending."""
        self._check_open()
        if self._embedder_factory is not None and self._loaded:
            self._embed_pending()
        self._write()

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
                    _INSERT_TURNS,
                    [
                        [t.id for t in rows],
                        [t.session_id for t in rows],
                        [t.role for t in rows],
                        [t.speaker for t in rows],
                        [t.text for t in rows],
                        [t.at for t in rows],
                        [t.metadata for t in rows],
                        [json.dumps(t.tags) for t in rows],
                    ],
                )
            )
        dirty = [self._memories[i] for i in sorted(self._dirty) if i in self._memories]
        if dirty:
            columns = []
            for name in _MEMORY_FIELDS:
                values = [getattr(m, name) for m in dirty]
                if name in _JSON_FIELDS:
                    values = [json.dumps(v) for v in values]
                columns.append(values)
            # DELETE then INSERT: DuckDB takes half the time of INSERT OR REPLACE on these wide rows
            statements.append((_DELETE_MEMORIES, [[m.id for m in dirty]]))
            statements.append((_INSERT_MEMORIES, columns))
        for sql, rows_ in (
            (_INSERT_LINKS, [r for r in self._new_links if r[0] in self._memories]),
            (_INSERT_EDGES, [r for r in self._new_edges if r[0] in self._memories and r[1] in self._memories]),
            (_INSERT_ACTIONS, [r for r in self._new_actions if r[0] in self._memories]),
        ):
            if rows_:
                statements.append((sql, [list(column) for column in zip(*rows_)]))
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
            self._pending,
        )
        self._new_turns, self._dirty, self._new_links, self._new_edges = [], set(), [], []
        self._new_actions, self._new_vectors, self._pending = [], {}, 0
        return taken

    def _store(self, taken: _Taken) -> None:
        """Runs a taken transaction; the caller holds ``_db`` (not necessarily the
        memory's other state: :meth:`commit_outside`). StoreError when DuckDB
        refuses, everything rolled back."""
        import duckdb

        con = self._con
        try:
            self._begin_write()
            for sql, parameters in taken.statements:
                con.execute(sql, parameters)
            con.execute("COMMIT")
        except duckdb.Error as exc:
            try:
                con.execute("ROLLBACK")
            except duckdb.Error:
                pass
            error = store.corrupt_or_error(self.path, exc, "writing long-term memory")
            raise type(error)(f"{error} (nothing was written; the changes are kept in memory)") from None
        store.protect(self.path)

    def _restore(self, taken: _Taken) -> None:
        """Makes a transaction that failed pending again (before what came since)."""
        self._new_turns[:0] = taken.turns
        self._dirty |= taken.dirty
        self._new_links[:0] = taken.links
        self._new_edges[:0] = taken.edges
        self._new_actions[:0] = taken.actions
        for key, vector in taken.vectors.items():
            self._new_vectors.setdefault(key, vector)
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

    @_using_db
    def close(self) -> None:
        """Flushes and closes; closing twice is a no-op."""
        if self._closed:
            return
        try:
            self._write()
            self._save_indexes()
        finally:
            self._closed = True
            store.disconnect(self._con, self.path, self)
            atexit.unregister(self._close_at_exit)

    def _suspend_store(self) -> None:
        """For :func:`aircher_mem.store.compact`: closes the connection (what is
        pending stays pending)."""
        self._con.close()

    def _resume_store(self) -> None:
        """For :func:`aircher_mem.store.compact`: the connection again."""
        self._con = store.reopen(self.path)

    def _close_at_exit(self) -> None:
        try:
            self.close()
        except Exception as exc:
            log.warning("long-term memory in %s: closing at exit failed: %s", self.path, exc)

    # -- turns ---------------------------------------------------------------------------

    def add_turn(
        self,
        session_id: str,
        role: str,
        text: str,
        *,
        speaker: str | None = None,
        at: float | dt.datetime | None = None,
        metadata: Mapping[str, Any] | None = None,
        extract: bool = True,
    ) -> TurnAdded:
        """Stores a turn (secrets redacted, personal data tagged) and, for a user turn
        (or any, with ``extract_assistant``), extracts memories from it."""
        self._check_open()
        session = redact(_text("session_id", session_id, max_chars=1000))
        role = _choice("role", role, ROLES)
        raw = _text("text", text)
        who = _redacted(_optional_text("speaker", speaker))
        when = self.clock() if at is None else _time("at", at)
        meta = _metadata(metadata)
        if not isinstance(extract, bool):
            raise InvalidInputError(f"extract must be true or false, got {_short(extract)}")
        self._load()
        clean = redact(raw)
        turn = _Turn(self._next_turn, session, role, who, clean, when, meta, pii_tags(raw))
        self._next_turn += 1
        self._turns[turn.id] = turn
        before = self._sessions[session][-1:]
        self._position[turn.id] = len(self._sessions[session])
        self._sessions[session].append(turn.id)
        # the turn before gains this one as its context
        self._lexical.upsert([self._turn_document(self._turns[i]) for i in (*before, turn.id)])
        self._stale_sessions.add(session)
        self._unembedded.add(_turn_key(turn.id))
        self._new_turns.append(turn.id)
        self._note()
        done: list[Extracted] = []
        notes: list[str] = []
        if extract and (role == "user" or self.policy.extract_assistant):
            candidates, archive, note = self._candidates(clean, role, who)
            if note:
                notes.append(note)
            for candidate in candidates:
                done.append(self._ingest(candidate, turn=turn, at=when, tags=turn.tags))
            for content in archive:
                for memory_id in self._matching(content):
                    self._archive(self._memories[memory_id], when, f"the extractor asked (turn {turn.id})")
        self._commit()
        return TurnAdded(turn.id, session, done, notes)

    def _candidates(self, text: str, role: str, speaker: str | None) -> tuple[list[Candidate], list[str], str]:
        mode = self.policy.extractor_mode
        heuristic = extract(text, role=role, speaker=speaker) if mode != "llm" or self.extractor is None else []
        if self.extractor is None or mode == "heuristic":
            return heuristic, [], ""
        found, archive, error = run_llm(self.extractor, text, timeout=self.policy.llm_timeout_seconds)
        # the extractor's output is stored too: what it says goes through the detector
        found = [_redacted_candidate(c) for c in found]
        archive = [redact(content) for content in archive]
        if error:
            note = f"extractor: {error}; the heuristic rules were used"
            if mode == "llm":
                heuristic = extract(text, role=role, speaker=speaker)
            return combine(heuristic, found, "hybrid") if found else heuristic, archive, note
        return combine(heuristic, found, mode), archive, ""

    def turns(self, session_id: str, *, limit: int | None = None) -> list[Turn]:
        """The last ``limit`` turns of a session (default: the short-term window),
        oldest first."""
        self._check_open()
        session = redact(_text("session_id", session_id, max_chars=1000))
        count = self.policy.short_term_turns if limit is None else _count("limit", limit, 1_000_000)
        self._load()
        ids = self._sessions.get(session, [])
        chosen = sorted(ids, key=lambda i: (self._turns[i].at, i))[-count:]
        return [self._turns[i].result() for i in chosen]

    # -- memories ------------------------------------------------------------------------

    def remember(
        self,
        content: str,
        *,
        kind: str = "fact",
        importance: int = 0,
        tags: Sequence[str] = (),
        level: str | None = None,
        domain: str | None = None,
        module: str | None = None,
        code_ref: str | None = None,
        parent_id: int | None = None,
        at: float | dt.datetime | None = None,
        scope: str = "project-shared",
    ) -> Remembered:
        """Keeps ``content`` as a memory (redacted). Dedup and slot conflicts apply as
        for extracted memories (the rules are run on it to find a slot). ``level``
        defaults to L3 with a code_ref, L2 with a module, L1 with a domain, else L0."""
        self._check_open()
        raw = _text("content", content)
        kind = _choice("kind", kind, KINDS)
        if isinstance(importance, bool) or importance not in (0, 1):
            raise InvalidInputError(f"importance must be 0 or 1, got {_short(importance)}")
        tag_list = _tags(tags)
        domain = _redacted(_optional_text("domain", domain))
        module = _redacted(_optional_text("module", module))
        code_ref = _redacted(_optional_text("code_ref", code_ref))
        if level is None:
            level = "L3" if code_ref else "L2" if module else "L1" if domain else "L0"
        level = _choice("level", level, LEVELS)
        scope = _choice("scope", scope, SCOPES)
        when = self.clock() if at is None else _time("at", at)
        self._load()
        if parent_id is not None and _id("parent_id", parent_id) not in self._memories:
            raise UnknownMemoryError(f"no memory {parent_id} (parent_id)")
        clean = redact(raw)
        slot, value, rules = None, None, ["remember"]
        found = extract(clean, role="user")
        slotted = [c for c in found if c.slot is not None]  # one memory: one slot, if one fact has it
        if len(slotted) == 1:
            slot, value = slotted[0].slot, slotted[0].value
            rules += list(slotted[0].rules)
        candidate = Candidate(
            content=clean.strip(),
            kind=kind,
            category=found[0].category if found else "fact",
            slot=slot,
            value=value,
            rules=tuple(rules),
            importance=importance,
            tags=tuple(tag_list),
        )
        done = self._ingest(
            candidate,
            turn=None,
            at=when,
            tags=pii_tags(raw),
            fields={"level": level, "domain": domain, "module": module, "code_ref": code_ref, "scope": scope},
            parent_id=parent_id,
            source="remember",
        )
        self._commit()
        return Remembered(done.memory_id, done.action, done.superseded)

    def _similar(self, candidate: Candidate) -> int | None:
        """The active memory of the same kind this candidate merges into, if any:
        same slot and value, or no conflicting slot and Jaccard >= merge_jaccard."""
        tokens = token_set(candidate.content)
        if not tokens:
            return None
        best, best_sim = None, 0.0
        for key, _score, _terms in self._dedup.search(candidate.content, 10):
            memory = self._memories.get(int(key[1:]))
            if memory is None or not _mergeable(memory, candidate.kind, candidate.slot, candidate.value):
                continue
            similarity = jaccard(tokens, token_set(memory.content))
            if similarity >= self.policy.merge_jaccard and similarity > best_sim:
                best, best_sim = memory.id, similarity
        return best

    def _ingest(
        self,
        candidate: Candidate,
        *,
        turn: _Turn | None,
        at: float,
        tags: Sequence[str] = (),
        fields: Mapping[str, Any] | None = None,
        parent_id: int | None = None,
        source: str = "extracted",
    ) -> Extracted:
        rules = sorted(set(candidate.rules))
        superseded: _Memory | None = None
        if candidate.slot is not None:
            current_id = self._slots.get(candidate.slot)
            current = self._memories.get(current_id) if current_id is not None else None
            if current is not None and current.status == "active":
                if normalize(current.slot_value or "") == normalize(candidate.value or ""):
                    return self._merge(current, candidate, turn, at, rules)
                superseded = current
        if superseded is None:
            target = self._similar(candidate)
            if target is not None:
                return self._merge(self._memories[target], candidate, turn, at, rules)
        now = self.clock()
        memory = _Memory(
            id=self._next_memory,
            kind=candidate.kind,
            content=candidate.content,
            created_at=now,
            valid_from=at,
            last_seen=at,
            importance=candidate.importance,
            tags=sorted({*candidate.tags, *tags, *(["pii"] if tags else [])}),
            source=source,
            parent_id=parent_id,
            rules=rules,
            slot_subject=candidate.slot[0] if candidate.slot else None,
            slot_attribute=candidate.slot[1] if candidate.slot else None,
            slot_value=candidate.value,
            **(fields or {}),
        )
        self._next_memory += 1
        memory.score = score_of(0, age_days(at, now), memory.importance, self.policy)
        self._memories[memory.id] = memory
        if parent_id is not None:
            self._children[parent_id].add(memory.id)
            self._edge(memory.id, parent_id, "parent", now)
        if turn is not None:
            self._link(memory.id, turn.id, "conflict" if superseded is not None else "extracted", now)
        self._index_memory(memory)
        self._touch(memory)
        self._act(memory.id, now, "created", f"{source}; rules {', '.join(rules)}")
        if candidate.slot is not None:
            self._slots[candidate.slot] = memory.id
        if superseded is not None:
            superseded.valid_until = at
            superseded.superseded_by = memory.id
            superseded.status = "archived"
            self._track_active(superseded)
            self._touch(superseded)
            self._edge(memory.id, superseded.id, "supersedes", now)
            self._act(superseded.id, now, "superseded", f"by memory {memory.id}: {candidate.value!r}")
            self._act(memory.id, now, "supersedes", f"memory {superseded.id}: {superseded.slot_value!r}")
            return Extracted("superseded", memory.id, memory.content, memory.kind, rules, superseded.id)
        return Extracted("created", memory.id, memory.content, memory.kind, rules)

    def _merge(
        self, memory: _Memory, candidate: Candidate, turn: _Turn | None, at: float, rules: list[str]
    ) -> Extracted:
        now = self.clock()
        memory.hits += 1
        memory.last_seen = max(memory.last_seen, at)
        memory.importance = max(memory.importance, candidate.importance)
        memory.rules = sorted({*memory.rules, *rules})
        if turn is not None:
            before = self._speakers(memory.id)
            self._link(memory.id, turn.id, "merged", now)
            if self._speakers(memory.id) != before:  # the document names its speakers
                self._lexical.upsert([self._memory_document(memory)])
        self._touch(memory)
        self._act(memory.id, now, "merged", f"turn {turn.id}" if turn is not None else "remember")
        return Extracted("merged", memory.id, memory.content, memory.kind, rules)

    def _archive(self, memory: _Memory, at: float, why: str) -> None:
        if memory.status == "archived":
            return
        memory.status = "archived"
        self._track_active(memory)
        if memory.slot is not None and self._slots.get(memory.slot) == memory.id:
            del self._slots[memory.slot]
        self._touch(memory)
        self._act(memory.id, at, "archived", why)

    def _get(self, memory_id: object) -> _Memory:
        key = _id("memory_id", memory_id)
        self._load()
        memory = self._memories.get(key)
        if memory is None:
            raise UnknownMemoryError(f"no memory {key}")
        return memory

    def _record(self, memory: _Memory, now: float | None = None) -> MemoryRecord:
        now = self.clock() if now is None else now
        live = score_of(memory.hits, age_days(memory.last_seen, now), memory.importance, self.policy)
        return MemoryRecord(
            id=memory.id,
            kind=memory.kind,
            content=memory.content,
            level=memory.level,
            domain=memory.domain,
            module=memory.module,
            code_ref=memory.code_ref,
            parent_id=memory.parent_id,
            layer=memory.layer,
            status=memory.status,
            importance=memory.importance,
            hits=memory.hits,
            score=live,
            tags=list(memory.tags),
            created_at=memory.created_at,
            valid_from=memory.valid_from,
            valid_until=memory.valid_until,
            superseded_by=memory.superseded_by,
            last_seen=memory.last_seen,
            retrieved=memory.retrieved,
            cited=memory.cited,
            ignored=memory.ignored,
            scope=memory.scope,
            source=memory.source,
            confidence=memory.confidence,
            slot=list(memory.slot) if memory.slot else None,
            value=memory.slot_value,
        )

    def get(self, memory_id: int) -> MemoryRecord:
        self._check_open()
        return self._record(self._get(memory_id))

    def update(
        self,
        memory_id: int,
        *,
        content: str | None = None,
        tags: Sequence[str] | None = None,
        status: str | None = None,
    ) -> MemoryRecord:
        """Changes a memory's content (redacted, re-indexed), tags or status
        (``active``/``archived``); each change is logged for ``explain``."""
        self._check_open()
        memory = self._get(memory_id)
        new_content = None if content is None else redact(_text("content", content)).strip()
        new_tags = None if tags is None else _tags(tags)
        new_status = None if status is None else _choice("status", status, STATUSES)
        now = self.clock()
        if new_content is not None and new_content != memory.content:
            memory.content = new_content
            self._act(memory.id, now, "updated", "content")
        if new_tags is not None and new_tags != memory.tags:
            memory.tags = new_tags
            self._act(memory.id, now, "updated", f"tags {', '.join(new_tags)}")
        if new_status is not None and new_status != memory.status:
            if new_status == "archived":
                self._archive(memory, now, "update")
            else:
                memory.status = "active"
                slot = memory.slot
                if slot is not None and memory.valid_until is None and slot not in self._slots:
                    self._slots[slot] = memory.id
                self._act(memory.id, now, "reactivated", "update")
        self._index_memory(memory)
        self._touch(memory)
        self._commit()
        return self._record(memory, now)

    def feedback(self, memory_id: int, signal: Literal["cited", "ignored"]) -> FeedbackResult:
        """001's usage tracker: the agent cited the memory, or it was shown and ignored."""
        self._check_open()
        memory = self._get(memory_id)
        signal = _choice("signal", signal, ("cited", "ignored"))  # type: ignore[assignment]
        now = self.clock()
        if signal == "cited":
            memory.cited += 1
            memory.last_seen = max(memory.last_seen, now)
        else:
            memory.ignored += 1
        self._touch(memory)
        self._act(memory.id, now, signal, "")
        self._commit()
        return FeedbackResult(memory.id, signal, memory.retrieved, memory.cited, memory.ignored)

    def _matching(self, text: str) -> list[int]:
        """Memories whose normalized content equals ``text``'s, else contains it."""
        wanted = normalize(text)
        if not wanted:
            return []
        equal = [m.id for m in self._memories.values() if normalize(m.content) == wanted]
        if equal:
            return equal
        return [m.id for m in self._memories.values() if wanted in normalize(m.content)]

    @_using_db
    def forget(
        self, memory_id: int | None = None, *, text: str | None = None, session_id: str | None = None
    ) -> Forgotten:
        """Forgets for good, by one of: ``memory_id``; ``text`` (every memory whose
        normalized content equals it, else every one that contains it, and every turn
        whose normalized text contains it); ``session_id`` (the session's turns, and
        the memories that came only from them). Gone with them: the turns the
        forgotten memories came from, memories merged into a forgotten one, their
        links, edges and actions (another memory's action quoting a forgotten value
        keeps only the id), their lexical documents (the turns next to a forgotten
        turn are indexed again without it) and vectors; then the file is rewritten
        so that no free block keeps the text (``store.rewrite``). Ids are not given
        again. Returns the memory and turn ids forgotten."""
        import duckdb

        self._check_open()
        if sum(x is not None for x in (memory_id, text, session_id)) != 1:
            raise InvalidInputError("forget takes one of a memory id, text= or session_id=")
        self._load()
        turn_ids: set[int] = set()
        if memory_id is not None:
            ids = {self._get(memory_id).id}
        elif text is not None:
            wanted = redact(_text("text", text))
            ids = set(self._matching(wanted))
            needle = normalize(wanted)
            if needle:
                turn_ids = {t.id for t in self._turns.values() if needle in normalize(t.text)}
        else:
            session = redact(_text("session_id", session_id, max_chars=1000))
            turn_ids = set(self._sessions.get(session, ()))
            ids = {m for m, sources in self._sources.items() if sources and set(sources) <= turn_ids}
            ids &= set(self._memories)
        ids |= self._merged_into(ids)
        for forgotten in ids:
            turn_ids.update(self._sources.get(forgotten, ()))
        if not ids and not turn_ids:
            return Forgotten([], [])
        self._write()
        con = self._con
        keys = [_memory_key(i) for i in sorted(ids)]
        turn_keys = [_turn_key(i) for i in sorted(turn_ids)]
        id_list, turn_list = sorted(ids), sorted(turn_ids)
        scrubbed = self._scrubbed_actions(ids)
        try:
            self._begin_write()
            con.execute("DELETE FROM memories WHERE id IN (SELECT unnest(?::BIGINT[]))", [id_list])
            if scrubbed:
                con.execute(
                    "UPDATE memory_actions SET detail = v.new FROM (SELECT unnest(?::BIGINT[]) AS id, "
                    "unnest(?::VARCHAR[]) AS action, unnest(?::VARCHAR[]) AS old, unnest(?::VARCHAR[]) AS new) v "
                    "WHERE memory_actions.memory_id = v.id AND memory_actions.action = v.action "
                    "AND memory_actions.detail = v.old",
                    [list(column) for column in zip(*((m, a.action, a.detail, new) for m, _i, a, new in scrubbed))],
                )
            con.execute(
                "DELETE FROM memory_links WHERE memory_id IN (SELECT unnest(?::BIGINT[])) "
                "OR turn_id IN (SELECT unnest(?::BIGINT[]))",
                [id_list, turn_list],
            )
            con.execute(
                "DELETE FROM memory_edges WHERE source_id IN (SELECT unnest(?::BIGINT[])) "
                "OR target_id IN (SELECT unnest(?::BIGINT[]))",
                [id_list, id_list],
            )
            con.execute("DELETE FROM memory_actions WHERE memory_id IN (SELECT unnest(?::BIGINT[]))", [id_list])
            con.execute(
                "DELETE FROM memory_vectors WHERE item_key IN (SELECT unnest(?::VARCHAR[]))", [keys + turn_keys]
            )
            con.execute("DELETE FROM turns WHERE id IN (SELECT unnest(?::BIGINT[]))", [turn_list])
            con.execute(
                "UPDATE memories SET parent_id = NULL WHERE parent_id IN (SELECT unnest(?::BIGINT[]))", [id_list]
            )
            con.execute(
                "UPDATE memories SET superseded_by = NULL WHERE superseded_by IN (SELECT unnest(?::BIGINT[]))",
                [id_list],
            )
            self._write_ids()
            # Until the rewrite below is done: a crash before it, and the next open does it.
            con.execute("INSERT OR REPLACE INTO longterm_state VALUES ('rewrite', 1)")
            con.execute("COMMIT")
        except duckdb.Error as exc:
            try:
                con.execute("ROLLBACK")
            except duckdb.Error:
                pass
            raise store.corrupt_or_error(self.path, exc, "forgetting") from None
        self._drop_memories(ids, scrubbed)
        self._drop_turns(turn_ids)
        self._rewrite()
        return Forgotten(id_list, turn_list)

    def _merged_into(self, ids: set[int]) -> set[int]:
        """The memories merged into any of ``ids`` (their text is a near copy), and
        into those, transitively."""
        into: dict[int, list[int]] = defaultdict(list)
        for source, edges in self._edges.items():
            for relation, target in edges:
                if relation == "merged_into":
                    into[target].append(source)
        found: set[int] = set()
        todo = list(ids)
        while todo:
            for source in into.get(todo.pop(), ()):
                if source not in found and source not in ids:
                    found.add(source)
                    todo.append(source)
        return found

    def _drop_memories(self, ids: set[int], scrubbed: list[tuple[int, int, MemoryAction, str]]) -> None:
        """Forgets ``ids`` in memory (the rows are deleted)."""
        for memory_id_, index, action, new in scrubbed:
            self._actions[memory_id_][index] = dataclasses.replace(action, detail=new)
        for memory_id_ in ids:
            memory = self._memories.pop(memory_id_)
            if memory.slot is not None and self._slots.get(memory.slot) == memory_id_:
                del self._slots[memory.slot]
            for turn_id in self._sources.pop(memory_id_, {}):
                self._memories_of[turn_id].discard(memory_id_)
            self._edges.pop(memory_id_, None)
            self._actions.pop(memory_id_, None)
            self._children.pop(memory_id_, None)
            if memory.parent_id is not None:
                self._children[memory.parent_id].discard(memory_id_)
        for memory in self._memories.values():
            if memory.parent_id in ids:
                memory.parent_id = None
            if memory.superseded_by in ids:
                memory.superseded_by = None
        for edges in self._edges.values():
            edges[:] = [(relation, other) for relation, other in edges if other not in ids]
        keys = [_memory_key(i) for i in ids]
        self._lexical.remove(keys)
        self._dedup.remove(keys)
        for key in keys:
            self._forget_vector(key)

    def _drop_turns(self, turn_ids: set[int]) -> None:
        """Forgets ``turn_ids`` in memory (the rows are deleted): their documents go,
        the turns next to them are indexed again (their context named them), their
        sessions' documents are rebuilt (or removed, when empty), and the memories
        that pointed to them lose the link."""
        if not turn_ids:
            return
        sessions = {self._turns[t].session_id for t in turn_ids}
        neighbours: set[int] = set()
        for turn_id in turn_ids:
            before, after = self._neighbours(self._turns[turn_id])
            neighbours.update(t.id for t in (before, after) if t is not None)
        relinked: set[int] = set()
        for turn_id in turn_ids:
            del self._turns[turn_id]
            self._position.pop(turn_id, None)
            for memory_id in self._memories_of.pop(turn_id, set()):
                self._sources.get(memory_id, {}).pop(turn_id, None)
                relinked.add(memory_id)
        for session in sessions:
            kept = [t for t in self._sessions[session] if t not in turn_ids]
            if kept:
                self._sessions[session] = kept
                self._position.update((t, i) for i, t in enumerate(kept))
                self._stale_sessions.add(session)
            else:
                del self._sessions[session]
                self._stale_sessions.discard(session)
                self._session_lexical.remove([_session_key(session)])
        keys = [_turn_key(t) for t in turn_ids]
        self._lexical.remove(keys)
        for key in keys:
            self._forget_vector(key)
        self._lexical.upsert([self._turn_document(self._turns[t]) for t in sorted(neighbours - turn_ids)])
        kept = sorted(relinked & set(self._memories))
        self._lexical.upsert([self._memory_document(self._memories[m]) for m in kept])

    def _rewrite(self) -> None:
        """Rewrites the file after a forget (``store.compact``: every connection of
        this process to it is closed and opened again), then clears the debt. A
        failure is logged; the next open tries again."""
        import duckdb

        if self.path == ":memory:":
            return
        try:
            store.compact(self.path)
            self._con.execute("DELETE FROM longterm_state WHERE name = 'rewrite'")
        except (StoreError, duckdb.Error) as exc:
            log.warning("long-term memory in %s: the file was not rewritten after a forget: %s", self.path, exc)
        store.protect(self.path)

    def _scrubbed_actions(self, ids: set[int]) -> list[tuple[int, int, MemoryAction, str]]:
        """The actions of other memories that quote a memory being forgotten (a
        supersede names the other memory's value), with what they become: the id
        stays, the value goes. (memory id, index in its actions, action, new detail)"""
        out = []
        quoting = {other for i in ids for relation, other in self._edges.get(i, []) if relation == "supersedes"}
        quoting.update(
            source
            for source, edges in self._edges.items()
            if any(relation == "supersedes" and other in ids for relation, other in edges)
        )
        for memory_id in sorted(quoting - ids):
            for index, action in enumerate(self._actions.get(memory_id, [])):
                if action.action not in ("superseded", "supersedes"):
                    continue
                head, colon, _value = action.detail.partition(": ")
                other = head.removeprefix("by ").removeprefix("memory ")
                if colon and other.isdigit() and int(other) in ids:
                    out.append((memory_id, index, action, f"{head} (forgotten)"))
        return out

    def _forget_vector(self, key: str) -> None:
        self._unembedded.discard(key)
        self._new_vectors.pop(key, None)
        if self._vectors is not None:
            self._vectors.remove([key])

    # -- reading -------------------------------------------------------------------------

    def memories(
        self,
        *,
        layer: str | None = None,
        status: str | None = "active",
        kind: str | None = None,
        limit: int = 50,
        sort: Literal["score", "recent", "id"] = "score",
    ) -> MemoryList:
        """Memories filtered by layer, status and kind, by live score (or most recent
        sighting, or id), at most ``limit``."""
        self._check_open()
        if layer is not None:
            _choice("layer", layer, LAYERS)
        if status is not None:
            _choice("status", status, STATUSES)
        if kind is not None:
            _choice("kind", kind, KINDS)
        sort = _choice("sort", sort, ("score", "recent", "id"))  # type: ignore[assignment]
        limit = _count("limit", limit, 1_000_000)
        self._load()
        now = self.clock()
        chosen = [
            m
            for m in self._memories.values()
            if (layer is None or m.layer == layer)
            and (status is None or m.status == status)
            and (kind is None or m.kind == kind)
        ]
        records = [self._record(m, now) for m in chosen]
        if sort == "score":
            records.sort(key=lambda r: (-r.score, r.id))
        elif sort == "recent":
            records.sort(key=lambda r: (-r.last_seen, r.id))
        else:
            records.sort(key=lambda r: r.id)
        return MemoryList(records[:limit])

    def get_context(self, session_id: str, k: int = 20) -> ConversationContext:
        """004's context: the session's short-term window and the top ``k`` active
        memories by score."""
        short = self.turns(session_id)
        k = _count("k", k)
        return ConversationContext(session_id, short, self.memories(limit=k).memories)

    def facts(self, *, level: str | None = None, domain: str | None = None) -> MemoryList:
        """000's hierarchy: active memories at ``level`` (L0 project ... L3 code) and
        in ``domain``, by level then score."""
        self._check_open()
        if level is not None:
            _choice("level", level, LEVELS)
        domain = _optional_text("domain", domain)
        self._load()
        now = self.clock()
        records = [
            self._record(m, now)
            for m in self._memories.values()
            if m.status == "active" and (level is None or m.level == level) and (domain is None or m.domain == domain)
        ]
        records.sort(key=lambda r: (r.level, -r.score, r.id))
        return MemoryList(records)

    def subtree(self, memory_id: int) -> MemoryList:
        """The memory and its descendants (children by ``parent_id``), breadth first."""
        self._check_open()
        root = self._get(memory_id)
        now = self.clock()
        order, seen, frontier = [root.id], {root.id}, [root.id]
        for _depth in range(_MAX_DEPTH):
            nxt = [c for parent in frontier for c in sorted(self._children.get(parent, ())) if c not in seen]
            if not nxt:
                break
            seen.update(nxt)
            order += nxt
            frontier = nxt
        return MemoryList([self._record(self._memories[i], now) for i in order])

    def promote(self, memory_id: int, level: str) -> MemoryRecord:
        """Moves a memory to another level of 000's hierarchy (L0-L3)."""
        self._check_open()
        memory = self._get(memory_id)
        level = _choice("level", level, LEVELS)
        now = self.clock()
        if level != memory.level:
            self._act(memory.id, now, "level", f"{memory.level} -> {level}")
            memory.level = level
            self._touch(memory)
            self._commit()
        return self._record(memory, now)

    def explain(self, memory_id: int) -> MemoryExplanation:
        """004's why: hits, age, every score term, the rules, the source turns, related
        memories, the last actions and what gc would do."""
        self._check_open()
        memory = self._get(memory_id)
        now = self.clock()
        age = age_days(memory.last_seen, now)
        terms = score_terms(memory.hits, age, memory.importance, self.policy)
        total = sum(t.contribution for t in terms)
        links = [
            MemoryLink(self._turns[t].result(), reason)
            for t, reason in sorted(self._sources.get(memory.id, {}).items())
            if t in self._turns
        ]
        related = [
            MemoryEdge(relation, other, self._memories[other].content)
            for relation, other in self._edges.get(memory.id, [])
            if other in self._memories
        ]
        for source, edges in self._edges.items():
            for relation, other in edges:
                if other == memory.id and source in self._memories:
                    inverse = {"supersedes": "superseded_by", "parent": "child", "merged_into": "merged_from"}.get(
                        relation, relation
                    )
                    related.append(MemoryEdge(inverse, source, self._memories[source].content))
        outlook = gc_outlook(memory.layer, memory.status, memory.hits, age, total, self.policy)
        return MemoryExplanation(
            self._record(memory, now),
            age,
            total,
            terms,
            list(memory.rules),
            links,
            related,
            list(self._actions.get(memory.id, []))[-20:],
            outlook,
        )

    # -- gc ------------------------------------------------------------------------------

    @_using_db
    def gc(self, *, dry_run: bool = False) -> GcReport:
        """004's pass: recompute every active memory's score; promote mid -> long
        (hits >= promote_hits, seen within promote_days); archive mid-term memories
        scoring below archive_score or unseen for archive_days; then archive the
        lowest scoring beyond mid_capacity. ``dry_run`` changes nothing."""
        self._check_open()
        if not isinstance(dry_run, bool):
            raise InvalidInputError(f"dry_run must be true or false, got {_short(dry_run)}")
        self._load()
        now = self.clock()
        policy = self.policy
        active = [m for m in self._memories.values() if m.status == "active"]
        scores: dict[int, float] = {}
        promoted: list[int] = []
        low: list[int] = []
        old: list[int] = []
        w_freq, w_recency, w_importance = policy.w_freq, policy.w_recency, policy.w_importance
        decay, day, log1p, exp = policy.decay_lambda, DAY, math.log1p, math.exp
        promote_hits, promote_days = policy.promote_hits, policy.promote_days
        archive_score, archive_days = policy.archive_score, policy.archive_days
        staying: list[tuple[float, float, int]] = []  # mid-term memories that stay: (score, last seen, id)
        long_active = 0
        for m in active:  # scoring.score, inlined: this loop runs over every memory
            age = (now - m.last_seen) / day
            if age < 0.0:
                age = 0.0
            hits = m.hits
            value = w_freq * log1p(hits if hits > 0 else 0) + w_recency * exp(-decay * age)
            value += w_importance * m.importance
            scores[m.id] = value
            if m.layer != "mid":
                long_active += 1
            elif hits >= promote_hits and age <= promote_days:
                promoted.append(m.id)
            elif value < archive_score:
                low.append(m.id)
            elif age > archive_days:
                old.append(m.id)
            else:
                staying.append((value, m.last_seen, m.id))
        staying.sort()  # the lowest scoring (then least recently seen) go first
        excess = max(0, len(staying) - policy.mid_capacity)
        capacity = [memory_id for _score, _seen, memory_id in staying[:excess]]
        long_active += len(promoted)
        mid_active = len(staying) - excess
        report = GcReport(dry_run, len(active), promoted, low, old, capacity, mid_active, long_active)
        if dry_run:
            return report
        self._write()  # what was pending, so that the rows below are written as they are now
        for m in active:
            m.score = scores[m.id]
        # the actions, as (ids, action, detail) groups: one INSERT each
        groups: dict[tuple[str, str], list[int]] = defaultdict(list)
        for memory_id in promoted:
            memory = self._memories[memory_id]
            memory.layer = "long"
            groups["promoted", f"hits {memory.hits} >= {policy.promote_hits}"].append(memory_id)
        archived = 0
        for ids, why in ((low, "low score"), (old, "age"), (capacity, "capacity")):
            for memory_id in ids:
                memory = self._memories[memory_id]
                memory.status = "archived"
                if memory.slot is not None and self._slots.get(memory.slot) == memory_id:
                    del self._slots[memory.slot]
            if ids:
                groups["archived", f"gc: {why}"] = ids
            archived += len(ids)
        if archived > len(active) - archived:  # cheaper to build the merge-check index anew
            self._dedup = LexicalIndex(stem=True)
            self._dedup.upsert(
                [
                    ("memory", _memory_key(m.id), "", {"text": m.content})
                    for m in self._memories.values()
                    if m.status == "active"
                ]
            )
        else:
            self._dedup.remove([_memory_key(i) for ids in (low, old, capacity) for i in ids])
        for (action, detail), ids in groups.items():
            entry = MemoryAction(now, action, detail)  # frozen: one object serves them all
            for memory_id in ids:
                self._actions[memory_id].append(entry)
        self._write_gc(active, now, promoted, [i for ids in (low, old, capacity) for i in ids], groups)
        return report

    def _write_gc(
        self,
        memories: list[_Memory],
        now: float,
        promoted: list[int],
        archived: list[int],
        groups: Mapping[tuple[str, str], list[int]],
    ) -> None:
        """A gc pass's changes in one transaction, only the columns it changes: the
        score of every active memory recomputed by DuckDB (the same formula; the
        file was brought up to date first), the layer of the promoted and the
        status of the archived joined on their ids, and each group of like actions
        in one INSERT. (The stored score is what gc last computed; nothing reads it
        back for a decision: records and gc use the live score.)"""
        import duckdb

        policy = self.policy
        con = self._con
        try:
            self._begin_write()
            con.execute(
                "UPDATE memories SET score = ? * ln(1 + greatest(hits, 0)) + ? * exp(-? * greatest(0, (? - last_seen) "
                "/ ?)) + ? * importance WHERE status = 'active'",
                [policy.w_freq, policy.w_recency, policy.decay_lambda, now, DAY, policy.w_importance],
            )
            for column, value, ids in (("layer", "long", promoted), ("status", "archived", archived)):
                if ids:
                    con.execute(
                        f"UPDATE memories SET {column} = ? FROM (SELECT unnest(?::BIGINT[]) AS id) v "
                        "WHERE memories.id = v.id",
                        [value, ids],
                    )
            promotions: tuple[list[int], list[str]] = ([], [])  # their details differ: one INSERT of two lists
            for (action, detail), ids in groups.items():
                if action == "promoted":
                    promotions[0].extend(ids)
                    promotions[1].extend([detail] * len(ids))
                    continue
                con.execute(
                    "INSERT INTO memory_actions (memory_id, done_at, action, detail) "
                    "SELECT unnest(?::BIGINT[]), ?, ?, ?",
                    [ids, now, action, detail],
                )
            if promotions[0]:
                con.execute(
                    "INSERT INTO memory_actions (memory_id, done_at, action, detail) "
                    "SELECT unnest(?::BIGINT[]), ?, 'promoted', unnest(?::VARCHAR[])",
                    [promotions[0], now, promotions[1]],
                )
            con.execute("COMMIT")
        except duckdb.Error as exc:
            try:
                con.execute("ROLLBACK")
            except duckdb.Error:
                pass
            # the state in memory is ahead of the file: write those rows whole next time
            self._dirty.update(m.id for m in memories)
            actions = [(i, now, action, detail) for (action, detail), ids in groups.items() for i in ids]
            self._new_actions.extend(actions)
            self._pending += len(memories) + len(actions)
            raise store.corrupt_or_error(self.path, exc, "writing a gc pass") from None
        store.protect(self.path)

    # -- recall --------------------------------------------------------------------------

    def _embed_pending(self) -> None:
        if not self._unembedded or self._embedder_factory is None:
            return
        if self._embedder is None:
            self._embedder = self._embedder_factory()
        keys = sorted(self._unembedded)
        texts = [self._item_text(k) for k in keys]
        vectors = self._embedder.embed(texts)
        if self._vectors is None:
            self._vectors = VectorIndex(vectors.shape[1])
        self._vectors.upsert(keys, vectors)
        for key, row in zip(keys, vectors):
            self._new_vectors[key] = row.tolist()
        self._unembedded.clear()
        for key, row in zip(keys, vectors):
            if key[0] == "m":
                self._merge_near_duplicate(int(key[1:]), row)

    def _merge_near_duplicate(self, memory_id: int, vector: np.ndarray) -> None:
        """000's cosine rule, applied once a memory is embedded (never in
        ``add_turn``): an older active memory of the same kind and no conflicting
        slot at least ``merge_cosine`` similar absorbs it (hits, turns; above
        ``duplicate_cosine`` it is called a duplicate); the newer
        one is archived with a ``merged_into`` edge, so it stays explainable. The
        older memory is looked for among the ``_COSINE_WINDOW`` nearest items (turns
        are in the same index, and a memory's own turns are near it)."""
        memory = self._memories.get(memory_id)
        if memory is None or memory.status != "active" or self._vectors is None:
            return
        for key, similarity in self._vectors.search(vector, _COSINE_WINDOW):
            if similarity < self.policy.merge_cosine:
                return
            if key[0] != "m" or int(key[1:]) >= memory_id:
                continue
            keep = self._memories.get(int(key[1:]))
            if keep is None or not _mergeable(keep, memory.kind, memory.slot, memory.slot_value):
                continue
            now = self.clock()
            keep.hits += 1 + memory.hits
            keep.last_seen = max(keep.last_seen, memory.last_seen)
            keep.importance = max(keep.importance, memory.importance)
            for turn_id in sorted(self._sources.get(memory_id, {})):
                self._link(keep.id, turn_id, "merged", now)
            self._touch(keep)
            cosine = f"(cosine {similarity:.3f})"
            if similarity > self.policy.duplicate_cosine:
                self._act(keep.id, now, "merged", f"memory {memory_id}, a duplicate {cosine}")
                self._archive(memory, now, f"duplicate of memory {keep.id} {cosine}")
            else:
                self._act(keep.id, now, "merged", f"memory {memory_id} {cosine}")
                self._archive(memory, now, f"merged into memory {keep.id} {cosine}")
            if memory.slot is not None and memory.slot not in self._slots:
                self._slots[memory.slot] = keep.id
            self._edge(memory_id, keep.id, "merged_into", now)
            self._lexical.upsert([self._memory_document(keep)])
            return

    def _item_text(self, key: str) -> str:
        kind, item = _parse_key(key)
        if kind == "turn":
            turn = self._turns[item]
            return f"{turn.speaker}: {turn.text}" if turn.speaker else turn.text
        return self._memories[item].content

    def recall(
        self,
        query: str,
        *,
        k: int = 10,
        session_id: str | None = None,
        kinds: Sequence[str] | None = None,
        at: float | dt.datetime | None = None,
    ) -> Recall:
        """Memories and raw turns relevant to ``query``, best first (see the module
        documentation). ``kinds`` limits the hits (memory kinds and "turn");
        ``session_id`` limits turn hits to one session; ``at`` asks what was valid
        then (memories valid at ``at``, turns said by then). Counts ``retrieved`` on
        every memory returned."""
        self._check_open()
        text = _text("query", query, max_chars=100_000)
        k = _count("k", k)
        session = _redacted(_optional_text("session_id", session_id))
        allowed: set[str] | None = None
        if kinds is not None:
            if isinstance(kinds, str) or not isinstance(kinds, Iterable):
                raise InvalidInputError(f"kinds must be a sequence of kinds, got {_short(kinds)}")
            allowed = {_choice("a kind", kind, (*KINDS, "turn")) for kind in kinds}
        when = None if at is None else _time("at", at)
        self._load()
        now = self.clock() if when is None else when
        policy = self.policy
        notes = [] if self._embedder_factory is not None else [self.dense_note] if self.dense_note else []
        if not self._turns and not self._memories:
            return Recall(text, when, [], [], "nothing stored yet: no turns or memories", notes)
        pool = max(100, 10 * k)
        # Session documents share the lexical index: bring them up to date before any
        # search, so every recall (a process's first, or a server's hundredth) scores
        # with the same corpus statistics.
        self._refresh_sessions()
        weights = {
            "text": policy.weight_text,
            "speaker": policy.weight_speaker,
            "date": policy.weight_date,
            "tags": policy.weight_tags,
            "context": policy.weight_context,
            "question": policy.weight_question,
        }
        # Everything that changes the indexes happens before the first search, so that a
        # recall scores as the next one would: the session documents (in an index of
        # their own, so they never change how turns and memories score) and the pending
        # embeddings (their cosine merges re-index memories).
        if policy.recall_session_weight > 0:
            self._refresh_sessions()
        if self._embedder_factory is not None:
            self._embed_pending()
        lexical = self._lexical.search(
            text,
            pool,
            kinds=("turn", "memory"),
            field_weights=weights,
            k1=self.retrieval.bm25_k1,
            b=self.retrieval.bm25_b,
        )
        matched = {key: terms for key, _score, terms in lexical}
        channels = [("lexical", self.retrieval.lexical_weight, [(key, score) for key, score, _ in lexical])]
        used = ["lexical"]
        if self._embedder_factory is not None:
            if self._vectors is not None and len(self._vectors):
                if self._embedder is None:  # every item was embedded before this process
                    self._embedder = self._embedder_factory()
                vector = self._embedder.embed([text])[0]
                if vector is not None:
                    dense = [
                        (key, float(sim))
                        for key, sim in self._vectors.search(vector, pool)
                        if sim >= self.retrieval.dense_min_similarity
                    ]
                    channels.append(("dense", self.retrieval.dense_weight, dense))
                    used.append("dense")
        fused = fuse(channels, self.retrieval.normalization)
        sessions = self._session_scores(text)
        scored: dict[str, _Scored] = {}
        replaced: dict[int, float] = {}  # superseded memories the query matches -> fused score

        def terms(memory: _Memory) -> tuple[float, float, float]:
            return (
                recency_of(age_days(min(memory.last_seen, now), now), policy),
                float(memory.importance),
                usage_of(memory.cited, memory.ignored),
            )

        for key, value, parts in fused:
            kind, item = _parse_key(key)
            channel_scores = [ChannelScore(name, raw, norm, weight) for name, raw, norm, weight in parts]
            if kind == "turn":
                turn = self._turns.get(item)
                if turn is None or (session is not None and turn.session_id != session):
                    continue
                if when is not None and turn.at > when:
                    continue
                recency = recency_of(age_days(turn.at, now), policy)
                importance = usage = 0.0
                if turn.session_id in sessions:
                    raw, share = sessions[turn.session_id]
                    channel_scores.append(ChannelScore("session", raw, share, policy.recall_session_weight))
                    value += share * policy.recall_session_weight
            else:
                memory = self._memories.get(item)
                if memory is None:
                    continue
                if memory.superseded_by is not None:
                    replaced[item] = value
                if when is None and memory.status != "active":
                    continue
                if when is not None and not memory.valid_at(when):
                    continue
                if allowed is not None and memory.kind not in allowed:
                    continue
                recency, importance, usage = terms(memory)
            recency *= policy.recall_recency_weight
            importance *= policy.recall_importance_weight
            usage *= policy.recall_usage_weight
            scored[key] = _Scored(
                key,
                value + recency + importance + usage,
                channel_scores,
                list(matched.get(key, [])),
                recency,
                importance,
                usage,
            )
        # A turn stating a value that a correction superseded (one of its memories
        # that match the query) never ranks above the memory holding the value now:
        # that memory takes the turn's score (as a memory takes its own turn's), the
        # turn comes right after it, noted, and folds into none of its memories.
        corrected: dict[int, str] = {}
        stale = {_turn_key(t) for m in replaced for t in self._sources.get(m, ()) if _turn_key(t) in scored}
        for entry in sorted((scored[key] for key in stale), key=lambda s: (-s.score, s.key)):
            item = _parse_key(entry.key)[1]
            linked = self._memories_of[item]
            said = sorted((m for m in linked if m in replaced), key=lambda m: (-replaced[m], m))
            successor = next(
                (s for s in (self._successor(self._memories[m], when) for m in said) if s is not None), None
            )
            if successor is None or successor.id in linked:  # the turn says the new value too
                continue
            corrected[item] = f"superseded by #{successor.id}"
            target: _Scored | None
            if allowed is None or successor.kind in allowed:
                target = scored.get(_memory_key(successor.id))
                if target is None:
                    recency, importance, usage = terms(successor)
                    target = scored[_memory_key(successor.id)] = _Scored(
                        _memory_key(successor.id),
                        entry.score,
                        entry.channels,
                        list(entry.matched),
                        recency * policy.recall_recency_weight,
                        importance * policy.recall_importance_weight,
                        usage * policy.recall_usage_weight,
                    )
            else:  # memories of its kind are not asked for: the turns that say it
                saying = [scored[_turn_key(t)] for t in self._sources.get(successor.id, {}) if _turn_key(t) in scored]
                target = max(saying, key=lambda s: (s.score, s.key), default=None)
            if target is None:
                continue
            if entry.score > target.score:
                target.score, target.channels = entry.score, entry.channels
                target.matched = entry.matched or target.matched
            entry.score = min(entry.score, math.nextafter(target.score, -math.inf))
        hits = self._aggregate(scored, allowed, {_turn_key(t) for t in corrected})
        if not hits:
            reason = (
                "no stored turn or memory shares a word with the query"
                if not lexical
                else "nothing matching was valid at that time or in that session"
            )
            return Recall(text, when, [], used, reason, notes)
        out: list[RecallHit] = []
        for entry in hits[:k]:
            kind, item = _parse_key(entry.key)
            if kind == "turn":
                turn = self._turns[item]
                out.append(
                    RecallHit(
                        "turn",
                        item,
                        turn.text,
                        entry.score,
                        entry.channels,
                        entry.matched,
                        entry.recency,
                        entry.importance,
                        entry.usage,
                        [turn.result()],
                        [corrected[item]] if item in corrected else [],
                    )
                )
                continue
            memory = self._memories[item]
            memory.retrieved += 1
            memory.last_accessed = self.clock()
            self._touch(memory)
            sources = sorted(self._sources.get(item, {}), key=lambda t: (t not in entry.absorbed, t))
            turns = [self._turns[t].result() for t in sources if t in self._turns]
            out.append(
                RecallHit(
                    memory.kind,
                    item,
                    memory.content,
                    entry.score,
                    entry.channels,
                    entry.matched,
                    entry.recency,
                    entry.importance,
                    entry.usage,
                    turns,
                )
            )
        return Recall(text, when, out, used, "", notes)

    def _successor(self, memory: _Memory, when: float | None) -> _Memory | None:
        """The memory holding ``memory``'s slot at ``when`` (None: now) when a
        correction superseded ``memory`` by then, else None."""
        current = memory
        for _ in range(_MAX_DEPTH):
            if current.superseded_by is None:
                break
            if when is None and current.status == "active":
                break
            if when is not None and (current.valid_until is None or current.valid_until > when):
                break
            following = self._memories.get(current.superseded_by)
            if following is None:
                return None
            current = following
        if current is memory:
            return None
        valid = current.status == "active" if when is None else current.valid_at(when)
        return current if valid else None

    def _aggregate(
        self, scored: dict[str, _Scored], allowed: set[str] | None, corrected: set[str] | None = None
    ) -> list[_Scored]:
        """A turn's hit folds into the best memory hit that points to it (the memory's
        score becomes the higher of the two, and it lists the turn first), except
        the ``corrected`` turns (a correction superseded what they say); the rest
        are listed as they are, best first."""
        ranked = sorted(scored.values(), key=lambda s: (-s.score, s.key))
        out: list[_Scored] = []
        for entry in ranked:
            kind, item = _parse_key(entry.key)
            if kind == "memory":
                out.append(entry)
                continue
            linked = () if corrected is not None and entry.key in corrected else self._memories_of.get(item, ())
            owners = [scored[_memory_key(m)] for m in linked if _memory_key(m) in scored]
            if owners:
                owner = max(owners, key=lambda s: (s.score, s.key))
                owner.absorbed.append(item)
                if entry.score > owner.score:
                    owner.score = entry.score
                    owner.channels = entry.channels
                    owner.matched = entry.matched or owner.matched
                continue
            if allowed is None or "turn" in allowed:
                out.append(entry)
        out.sort(key=lambda s: (-s.score, s.key))
        return out

    # -- maintenance ---------------------------------------------------------------------

    def counts(self) -> dict[str, int]:
        """Turns, sessions, memories (active, archived; mid, long)."""
        self._check_open()
        self._load()
        active = [m for m in self._memories.values() if m.status == "active"]
        return {
            "turns": len(self._turns),
            "sessions": len(self._sessions),
            "memories": len(self._memories),
            "active": len(active),
            "archived": len(self._memories) - len(active),
            "mid": sum(1 for m in active if m.layer == "mid"),
            "long": sum(1 for m in active if m.layer == "long"),
        }

    def __enter__(self) -> LongTermMemory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
