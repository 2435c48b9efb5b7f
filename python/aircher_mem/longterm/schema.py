"""The long-term store's schema: its tables and their migrations, the rows as they
are held in memory, the statements that write them, and the keys of the indexes'
documents (``t<turn id>``, ``m<memory id>``, ``s<session id>``).

``turns`` are the raw log of what was said, by session; ``memories`` hold facts,
episodes, patterns, workflows and decisions with every field a memory can have
(content at four levels of detail, a level L0-L3 with domain, module and code
reference, bi-temporal validity, mid/long layer, hot/warm/cold tier, usage counters,
TTL, a slot (subject, attribute) and its value); ``memory_links`` say which turns a
memory came from and why (extracted, merged, conflict, remembered);
``memory_edges`` link memories (supersedes, parent, merged_into);
``memory_actions`` keep what was done to each (``explain``); ``contradictions``
pair two memories that disagree, open until resolved; ``causal_nodes`` and
``causal_edges`` are the decisions' causal chains; ``rejected_facts`` the digests
of the facts from code changes a review rejected.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any, NamedTuple, Protocol

from .. import store
from ..checks import short
from ..errors import InvalidInputError
from ..results import Turn

__all__ = [
    "KINDS",
    "ROLES",
    "LEVELS",
    "LAYERS",
    "STATUSES",
    "SCOPES",
    "MAX_TEXT_CHARS",
    "MAX_METADATA_CHARS",
    "MAX_DEPTH",
    "ActionRow",
    "Extractor",
    "Summarizer",
    "Judge",
    "PairJudge",
    "pair_of",
    "check_judge",
    "MIGRATIONS",
    "INDEX_SUFFIXES",
    "UNSAVE",
    "UNLOG",
    "INDEX_LOG",
    "DOCUMENTS_VERSION",
    "TURN_COLUMNS",
    "visible",
    "TurnRow",
    "MemoryRow",
    "MEMORY_FIELDS",
    "EpisodeRow",
    "EPISODE_FIELDS",
    "EPISODE_LISTS",
    "episode_row",
    "EPISODE_LINK",
    "ContradictionRow",
    "CONTRADICTION_FIELDS",
    "RESOLUTIONS",
    "INSERT_CONTRADICTIONS",
    "DELETE_CONTRADICTIONS",
    "NODE_TYPES",
    "EDGE_TYPES",
    "CausalNodeRow",
    "CAUSAL_NODE_FIELDS",
    "INSERT_NODES",
    "INSERT_CAUSAL_EDGES",
    "JSON_FIELDS",
    "TAGS_AT",
    "RULES_AT",
    "slices",
    "json_list",
    "one_row",
    "INSERT_TURNS",
    "INSERT_MEMORIES",
    "DELETE_MEMORIES",
    "INSERT_LINKS",
    "INSERT_EDGES",
    "INSERT_ACTIONS",
    "INSERT_KEYS",
    "INSERT_EPISODES",
    "DELETE_EPISODES",
    "turn_key",
    "memory_key",
    "session_key",
    "parse_key",
]

KINDS = ("fact", "episode", "pattern", "workflow", "decision")
ROLES = ("user", "assistant")
LEVELS = ("L0", "L1", "L2", "L3")
LAYERS = ("mid", "long")
#: A pending memory (a fact extracted from a code change below the approval
#: confidence) waits for approve_fact or reject_fact: never recalled, never merged into.
STATUSES = ("active", "archived", "pending")
SCOPES = ("user-private", "project-shared", "system")
MAX_TEXT_CHARS = 1_000_000
MAX_METADATA_CHARS = 100_000
MAX_DEPTH = 64  # subtree walks stop here (a parent chain can be long, never endless)

Summarizer = Callable[[str], object]
"""``summarizer(prompt_and_turns)`` -> a JSON object as seed 003's prompts ask for
(see :func:`aircher_mem.longterm.compress.ask_summarizer`)."""


class PairJudge(Protocol):
    """A judge given the two texts (:class:`aircher_mem.nli.NliJudge`)."""

    def pair(self, a: str, b: str, /) -> object:
        """Whether ``a`` and ``b`` contradict: True or False."""
        ...


Judge = Callable[[str], object] | PairJudge
"""``judge(prompt)`` -> whether two memories contradict: True/False, "yes"/"no", or a
JSON object ``{"contradicts": bool, "why": str}`` (seed 001's prompt, see
:func:`aircher_mem.longterm.contradictions.ask_judge`). A judge with a ``pair``
method (:class:`aircher_mem.nli.NliJudge`) is given the two texts instead:
``judge.pair(a, b)`` -> True or False."""


def pair_of(judge: object) -> Callable[[str, str], object] | None:
    """The ``pair`` method of a judge given the two texts; None for one given the prompt."""
    pair = getattr(judge, "pair", None)
    return pair if callable(pair) else None


def check_judge(given: object) -> None:
    """:class:`InvalidInputError` unless ``given`` can be a store's judge: a
    callable, or an object with a ``pair`` method."""
    if not callable(given) and pair_of(given) is None:
        raise InvalidInputError(f"judge must be callable or have a pair method, got {short(given)}")


Extractor = Callable[[str], object]
"""``extractor(turn_text)`` -> a JSON list of ``{content, importance, tags, action:
create|archive, ...}`` (see :func:`aircher_mem.longterm.extract.run_llm`)."""


# Makes memory_vectors.vector pgvector's type when the server has the extension (or it
# is available and the role may create it); else, or when a stored vector is none
# pgvector holds, the column stays an array.
PGVECTOR = """DO $aircher$
DECLARE
    home name;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'vector')
            AND EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector') THEN
        BEGIN
            CREATE EXTENSION vector;
        EXCEPTION WHEN insufficient_privilege THEN
            RAISE NOTICE 'pgvector is available but this role may not create it: vectors stay arrays';
        END;
    END IF;
    SELECT n.nspname INTO home FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
        WHERE e.extname = 'vector';
    IF home IS NOT NULL THEN
        BEGIN
            EXECUTE format('ALTER TABLE memory_vectors ALTER COLUMN vector TYPE %I.vector USING vector::%I.vector',
                home, home);
        EXCEPTION WHEN data_exception OR program_limit_exceeded THEN
            RAISE NOTICE 'a stored vector is none pgvector holds (empty, not finite, too long): vectors stay arrays';
        END;
    END IF;
END
$aircher$"""

# Never edit a released step: add a new one.
MIGRATIONS: dict[int, list[str]] = {
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
    # Lifecycle: when a memory's TTL last started (created or refreshed) and when it
    # went stale; episodes (a memory of kind "episode" each: its session, span,
    # origin, and what it keeps at each layer; its raw turns are memory_links with
    # reason "episode").
    4: [
        "ALTER TABLE memories ADD COLUMN ttl_from DOUBLE",
        "ALTER TABLE memories ADD COLUMN stale_since DOUBLE",
        """CREATE TABLE episodes (
            memory_id BIGINT PRIMARY KEY,
            session_id VARCHAR NOT NULL,
            origin VARCHAR NOT NULL,
            started_at DOUBLE NOT NULL,
            ended_at DOUBLE NOT NULL,
            formed BOOLEAN NOT NULL,
            headline VARCHAR NOT NULL,
            key_points VARCHAR NOT NULL,
            entities VARCHAR NOT NULL,
            decisions VARCHAR NOT NULL,
            questions VARCHAR NOT NULL,
            files VARCHAR NOT NULL,
            outcome VARCHAR
        )""",
    ],
    # Contradictions (seed 001): two memories that disagree, when and how it was
    # found (the rule and its evidence), and, once resolved, how.
    5: [
        """CREATE TABLE contradictions (
            id BIGINT PRIMARY KEY,
            memory_a BIGINT NOT NULL,
            memory_b BIGINT NOT NULL,
            detected_at DOUBLE NOT NULL,
            rule VARCHAR NOT NULL,
            evidence VARCHAR NOT NULL,
            origin VARCHAR NOT NULL,
            resolved_at DOUBLE,
            resolution VARCHAR,
            resolution_note VARCHAR
        )""",
        # the memories stored before: never checked when stored (consolidation does it)
        "INSERT INTO longterm_state SELECT 'unscanned_through', COALESCE(MAX(id), 0) FROM memories",
    ],
    # Causal chains (seed 000): decision, reason, consequence and constraint nodes (a
    # decision node is its decision memory's; every node belongs to the chain of one
    # decision, and came from a turn or not) and the typed, weighted edges between them.
    6: [
        """CREATE TABLE causal_nodes (
            id BIGINT PRIMARY KEY,
            node_type VARCHAR NOT NULL,
            content VARCHAR NOT NULL,
            created_at DOUBLE NOT NULL,
            session_id VARCHAR NOT NULL,
            decision_id BIGINT NOT NULL,
            turn_id BIGINT
        )""",
        """CREATE TABLE causal_edges (
            from_id BIGINT NOT NULL,
            to_id BIGINT NOT NULL,
            edge_type VARCHAR NOT NULL,
            strength DOUBLE NOT NULL,
            PRIMARY KEY (from_id, to_id, edge_type)
        )""",
    ],
    # Facts from code changes that a review rejected: a SHA-256 digest of each one's
    # normalized words (the text itself is forgotten), so it is not proposed again.
    7: ["CREATE TABLE rejected_facts (digest VARCHAR PRIMARY KEY, rejected_at DOUBLE NOT NULL)"],
    # The idempotency keys of the turns stored (a SHA-256 digest of each: the client's
    # key itself is not kept) and the turn each stored: a retry is not stored twice.
    8: ["CREATE TABLE request_keys (digest VARCHAR PRIMARY KEY, turn_id BIGINT NOT NULL, stored_at DOUBLE NOT NULL)"],
    # Who stored a turn or made a memory (the store's user: the login) and a turn's
    # scope (seed 001's; NULL: project-shared): a user-private row is another user's
    # to see only (the store before: no owner, every row shared).
    9: [
        "ALTER TABLE memories ADD COLUMN owner VARCHAR",
        "ALTER TABLE turns ADD COLUMN owner VARCHAR",
        "ALTER TABLE turns ADD COLUMN scope VARCHAR",
    ],
    # A team's catch-up reads a memory's actions by its id: without an index, every
    # catch-up scanned them all.
    10: [store.SERVER_ONLY + "CREATE INDEX memory_actions_memory ON memory_actions (memory_id)"],
    # On a server with pgvector (created here when the role may), the vectors are
    # pgvector's `vector`: readers cast it to an array, writers' arrays are cast to it.
    11: [store.SERVER_ONLY + PGVECTOR],
    # The keys of the documents the writes since the saved indexes' generation
    # changed (a row a change; ``part``: 0 the lexical index, 1 the merge-check index,
    # 2 the sessions'): the next load reads the saved indexes and makes those
    # documents again from the rows (``longterm.noted``).
    12: ["CREATE TABLE IF NOT EXISTS longterm_index_log (part INTEGER NOT NULL, key VARCHAR NOT NULL)"],
}
store.register("longterm", MIGRATIONS)

#: The lexical indexes saved beside a store file at close (``<file><suffix>``): the
#: turns' and memories' documents, the active memories' merge-check index, and the
#: sessions' documents.
INDEX_SUFFIXES = (".longterm-lexical", ".longterm-dedup", ".longterm-sessions")
# The saved indexes' generation goes, with the log of what changed since it (first in
# a write transaction that does not log its changes: StoreCore._transaction).
UNSAVE = "DELETE FROM longterm_indexes"
INDEX_LOG = "longterm_index_log"
UNLOG = f"DELETE FROM {INDEX_LOG}"
#: What the saved indexes' documents are made by: bump it whenever the ``documents``
#: functions, the merge-check documents or the tokenizer change, so that
#: indexes saved by an older aircher-mem are built again, never read.
DOCUMENTS_VERSION = 1

TURN_COLUMNS = ("id", "session_id", "role", "speaker", "text", "said_at", "metadata", "tags", "owner", "scope")
_TURN_TYPES = ("BIGINT", *["VARCHAR"] * 4, "DOUBLE", *["VARCHAR"] * 4)


class ActionRow(NamedTuple):
    """A ``memory_actions`` row as held in memory: what was done to a memory, when,
    with what detail (a tuple: a store holds hundreds of thousands of them, and the
    :class:`~aircher_mem.results.MemoryAction` results are made of the few served)."""

    at: float
    action: str
    detail: str


@dataclasses.dataclass(slots=True)
class TurnRow:
    id: int
    session_id: str
    role: str
    speaker: str | None
    text: str
    at: float
    metadata: str  # JSON
    tags: list[str]
    owner: str | None = None  # who stored it
    scope: str | None = None  # None: project-shared

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
class MemoryRow:
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
    ttl_from: float | None = None
    stale_since: float | None = None
    owner: str | None = None  # who made it

    @property
    def slot(self) -> tuple[str, str] | None:
        if self.slot_subject is None or self.slot_attribute is None:
            return None
        return (self.slot_subject, self.slot_attribute)

    def valid_at(self, at: float) -> bool:
        return self.valid_from <= at and (self.valid_until is None or at < self.valid_until)


@dataclasses.dataclass(slots=True)
class EpisodeRow:
    """What an episode memory keeps beside its row in ``memories`` (``episodes``):
    its session, span and origin ("conversation", or "task" for the agent's own
    work), its warm content (``key_points``, ``entities``, ``decisions``, open
    ``questions``), its cold ``headline``, the ``files`` it touched and, for a
    task, its ``outcome``. Its raw turns are its links with reason "episode".
    Until ``formed`` (consolidation made its forms), its headline is its first
    turn's opening words and the rest is empty."""

    memory_id: int
    session_id: str
    origin: str
    started_at: float
    ended_at: float
    formed: bool = False
    headline: str = ""
    key_points: list[str] = dataclasses.field(default_factory=list)
    entities: list[str] = dataclasses.field(default_factory=list)
    decisions: list[str] = dataclasses.field(default_factory=list)
    questions: list[str] = dataclasses.field(default_factory=list)
    files: list[str] = dataclasses.field(default_factory=list)
    outcome: str | None = None


EPISODE_FIELDS = tuple(f.name for f in dataclasses.fields(EpisodeRow))
EPISODE_LISTS = ("key_points", "entities", "decisions", "questions", "files")


def episode_row(row: Sequence[Any]) -> EpisodeRow:
    """An ``episodes`` row (``EPISODE_FIELDS``, its lists as JSON) as an EpisodeRow."""
    episode = EpisodeRow(*row)
    for name in EPISODE_LISTS:
        setattr(episode, name, json_list(getattr(episode, name)))
    return episode


#: The reason of a link from an episode to one of its raw turns.
EPISODE_LINK = "episode"

#: How a contradiction is resolved (seed 001): the older memory a wins, the newer
#: b wins, both hold (different contexts), or a new memory replaces both.
RESOLUTIONS = ("a_wins", "b_wins", "both_valid", "merged")


@dataclasses.dataclass(slots=True)
class ContradictionRow:
    """Memories ``memory_a`` (the older) and ``memory_b`` disagree: found at
    ``detected_at`` by ``rule`` (``evidence`` says what differs) when ``origin``
    ("write": b was stored; "consolidation": a pass across the store; "slot": b took
    a's slot); open until ``resolution`` (one of RESOLUTIONS) at ``resolved_at``."""

    id: int
    memory_a: int
    memory_b: int
    detected_at: float
    rule: str
    evidence: str
    origin: str
    resolved_at: float | None = None
    resolution: str | None = None
    resolution_note: str | None = None


CONTRADICTION_FIELDS = tuple(f.name for f in dataclasses.fields(ContradictionRow))

#: Seed 000's node and edge types: a reason justifies a decision, a decision leads to
#: a consequence, a constraint blocks (an alternative to) it, one decision causes
#: another (the later one's reason is the earlier one).
NODE_TYPES = ("decision", "reason", "consequence", "constraint")
EDGE_TYPES = ("causes", "justifies", "leads_to", "blocks")


@dataclasses.dataclass(slots=True)
class CausalNodeRow:
    """A node of the causal chain of decision memory ``decision_id`` (a decision
    node: that memory's own), from ``turn_id`` when a turn said it."""

    id: int
    node_type: str
    content: str
    created_at: float
    session_id: str
    decision_id: int
    turn_id: int | None = None


CAUSAL_NODE_FIELDS = tuple(f.name for f in dataclasses.fields(CausalNodeRow))

MEMORY_FIELDS = tuple(f.name for f in dataclasses.fields(MemoryRow))
JSON_FIELDS = ("tags", "rules")
TAGS_AT, RULES_AT = MEMORY_FIELDS.index("tags"), MEMORY_FIELDS.index("rules")


def slices(items: Iterable[Any], size: int) -> Iterable[list[Any]]:
    iterator = iter(items)
    while chunk := list(itertools.islice(iterator, size)):
        yield chunk


def visible(owner: str | None, scope: str | None, user: str) -> bool:
    """Whether ``user`` may see a row of this owner and scope: a user-private row is
    its owner's only."""
    return scope != "user-private" or owner == user


def json_list(text: str) -> list[str]:
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
    "ttl_from",
    "stale_since",
)


def _memory_type(name: str) -> str:
    return _MEMORY_TYPES.get(name, "DOUBLE" if name in _DOUBLES else "VARCHAR")


# An insert of rows given as columns (one list parameter a column) -> the same insert
# of one row given as its values; a delete of a list of ids -> the delete of one.
_ONE_ROW: dict[str, str] = {}


def _unnest_insert(verb: str, table: str, columns: Sequence[str], types: Sequence[str]) -> str:
    head = f"{verb} INTO {table} ({', '.join(columns)}) SELECT "
    sql = head + ", ".join(f"unnest(?::{kind}[])" for kind in types)
    _ONE_ROW[sql] = head + ", ".join(f"?::{kind}" for kind in types)
    return sql


def one_row(sql: str, parameters: Sequence[Any]) -> tuple[str, Sequence[Any]]:
    """An insert of rows given as columns (``_unnest_insert``) that holds one row, as
    the insert of its values (a delete of one memory by id likewise); any other
    statement as it is. The same row, without
    DuckDB's conversion of lists: its first list parameter in a process imports
    decimal and uuid (9 ms on a hook that stores a prompt)."""
    single = _ONE_ROW.get(sql)
    if single is None or not all(len(column) == 1 for column in parameters):
        return sql, parameters
    return single, [column[0] for column in parameters]


INSERT_TURNS = _unnest_insert("INSERT", "turns", TURN_COLUMNS, _TURN_TYPES)
INSERT_MEMORIES = _unnest_insert("INSERT", "memories", MEMORY_FIELDS, [_memory_type(n) for n in MEMORY_FIELDS])
DELETE_MEMORIES = "DELETE FROM memories WHERE id IN (SELECT unnest(?::BIGINT[]))"
_ONE_ROW[DELETE_MEMORIES] = "DELETE FROM memories WHERE id = ?::BIGINT"
INSERT_LINKS = _unnest_insert(
    "INSERT OR REPLACE",
    "memory_links",
    ("memory_id", "turn_id", "reason", "linked_at"),
    ("BIGINT", "BIGINT", "VARCHAR", "DOUBLE"),
)
INSERT_EDGES = _unnest_insert(
    "INSERT OR IGNORE",
    "memory_edges",
    ("source_id", "target_id", "relation", "linked_at"),
    ("BIGINT", "BIGINT", "VARCHAR", "DOUBLE"),
)
INSERT_EPISODES = _unnest_insert(
    "INSERT",
    "episodes",
    EPISODE_FIELDS,
    ("BIGINT", "VARCHAR", "VARCHAR", "DOUBLE", "DOUBLE", "BOOLEAN", *(["VARCHAR"] * (len(EPISODE_FIELDS) - 6))),
)
DELETE_EPISODES = "DELETE FROM episodes WHERE memory_id IN (SELECT unnest(?::BIGINT[]))"
INSERT_CONTRADICTIONS = _unnest_insert(
    "INSERT",
    "contradictions",
    CONTRADICTION_FIELDS,
    ("BIGINT", "BIGINT", "BIGINT", "DOUBLE", "VARCHAR", "VARCHAR", "VARCHAR", "DOUBLE", "VARCHAR", "VARCHAR"),
)
DELETE_CONTRADICTIONS = "DELETE FROM contradictions WHERE id IN (SELECT unnest(?::BIGINT[]))"
INSERT_NODES = _unnest_insert(
    "INSERT OR REPLACE",
    "causal_nodes",
    CAUSAL_NODE_FIELDS,
    ("BIGINT", "VARCHAR", "VARCHAR", "DOUBLE", "VARCHAR", "BIGINT", "BIGINT"),
)
INSERT_CAUSAL_EDGES = _unnest_insert(
    "INSERT OR REPLACE",
    "causal_edges",
    ("from_id", "to_id", "edge_type", "strength"),
    ("BIGINT", "BIGINT", "VARCHAR", "DOUBLE"),
)
INSERT_KEYS = _unnest_insert(
    "INSERT OR IGNORE", "request_keys", ("digest", "turn_id", "stored_at"), ("VARCHAR", "BIGINT", "DOUBLE")
)
INSERT_ACTIONS = _unnest_insert(
    "INSERT", "memory_actions", ("memory_id", "done_at", "action", "detail"), ("BIGINT", "DOUBLE", "VARCHAR", "VARCHAR")
)


def turn_key(turn_id: int) -> str:
    return f"t{turn_id}"


def memory_key(memory_id: int) -> str:
    return f"m{memory_id}"


def session_key(session_id: str) -> str:
    return f"s{session_id}"


def parse_key(key: str) -> tuple[str, int]:
    return ("turn" if key[0] == "t" else "memory"), int(key[1:])
