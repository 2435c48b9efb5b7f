"""Every typed result the service (:class:`aircher_mem.Memory`) returns.

All are frozen dataclasses of plain values (str, int, float, bool, None, lists,
tuples, dicts and other results), so one function turns any of them into JSON
(:func:`aircher_mem.interfaces.wire.to_json`): the CLI's ``--json``, the MCP tools
and every later interface give the same keys for the same result. Each is made a
dataclass when it is first used rather than when this module is imported (see
:class:`_Result`): a command or a hook uses a few of them, and making all of them
(compiling each one's methods) was most of the time this module took to import.

Storage and the agent loop share these types (``Task`` is a task as the episodic
store holds it, and what the context manager shows of a similar one;
``FileInteraction`` is a row of the episodic store), so neither imports the other.
"""

from __future__ import annotations

import dataclasses
import threading
from typing import Any, ClassVar, Literal, dataclass_transform

from .plain import Plain

__all__ = [
    "RelevantCode",
    "FileInteraction",
    "ToolRun",
    "ToolStats",
    "CoEdit",
    "Task",
    "LearnedPattern",
    "IndexReport",
    "IndexProgress",
    "PartialIndex",
    "Definition",
    "Reference",
    "Symbols",
    "Calls",
    "ReferenceList",
    "Dependencies",
    "FileOutline",
    "Neighbour",
    "Neighbourhood",
    "CodeResult",
    "ChannelScore",
    "CodeHit",
    "CodeSearch",
    "FileHistory",
    "CoEdits",
    "Tasks",
    "Recorded",
    "Patterns",
    "GraphStats",
    "Stats",
    "ContextEntry",
    "ContextPreview",
    "Check",
    "Doctor",
    "InitResult",
    "CopiedTable",
    "StoreCopy",
    "UserAccount",
    "Users",
    "Turn",
    "Extracted",
    "TurnAdded",
    "MemoryRecord",
    "Remembered",
    "RecallHit",
    "Recall",
    "Reason",
    "PredictedFile",
    "PredictedMemory",
    "PredictedWorkflow",
    "Prediction",
    "DomainScore",
    "Routed",
    "TierItem",
    "Tier",
    "Assembled",
    "ScoreTerm",
    "MemoryLink",
    "MemoryEdge",
    "MemoryAction",
    "MemoryExplanation",
    "GcReport",
    "ConsolidationAction",
    "Episode",
    "Contradiction",
    "ContradictionList",
    "CausalNode",
    "CausalEdge",
    "CausalChain",
    "ConsolidationReport",
    "Conversation",
    "MemoryList",
    "FactCandidate",
    "ExtractedFacts",
    "FactReview",
    "SuggestedDomain",
    "ProjectDiscovery",
    "Forgotten",
    "Expiry",
    "FeedbackResult",
]


# -- made dataclasses when first used ------------------------------------------------------

# What asks a class for what only a dataclass has (dataclasses.fields, is_dataclass,
# a match statement).
_ASKED = frozenset({"__dataclass_fields__", "__dataclass_params__", "__match_args__"})
_MAKING = threading.RLock()
_MADE: set[type] = set()


def _make(cls: type) -> None:
    """Makes ``cls`` a frozen dataclass, once (under a lock: two threads may ask
    at once, and another thread must not see it half made)."""
    if cls in _MADE:
        return
    with _MAKING:
        if cls not in _MADE:
            dataclasses.dataclass(frozen=True, eq=False, repr=False)(cls)
            _MADE.add(cls)


@dataclass_transform(frozen_default=True, field_specifiers=(dataclasses.field,))
class _Frozen(type):
    """The metaclass of the results: a class is made a frozen dataclass
    (:func:`dataclasses.dataclass` with ``frozen=True``: its ``__init__``, frozen
    attributes and ``__match_args__``; ``==``, ``hash`` and ``repr`` are
    :class:`~aircher_mem.plain.Plain`'s) when an instance is first made or
    something asks for its dataclass fields, before either is done; it is one then
    in every respect."""

    def __getattr__(cls, name: str) -> Any:
        if name in _ASKED and cls is not _Result:
            _make(cls)
            return type.__getattribute__(cls, name)
        raise AttributeError(f"type object {cls.__name__!r} has no attribute {name!r}")


class _Result(Plain, metaclass=_Frozen):
    """The base of every result (see :class:`_Frozen`)."""

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        _make(cls)
        return object.__new__(cls)


# -- the agent loop and episodic storage ---------------------------------------------------


class RelevantCode(_Result):
    """A code snippet found relevant to a message: ``tokens`` is its token count
    (0 when the provider did not count it)."""

    file_path: str
    line_range: tuple[int, int]
    content: str
    relevance: float = 1.0
    tokens: int = 0


class FileInteraction(_Result):
    """A read, write, edit, search, analysis or pruned view of a file."""

    timestamp: float
    session_id: str
    task_id: str | None
    file_path: str
    operation: str
    line_range: tuple[int, int] | None
    success: bool
    context: str | None
    changes_summary: str | None


class ToolRun(_Result):
    """One recorded tool execution."""

    timestamp: float
    session_id: str
    task_id: str | None
    tool_name: str
    parameters: Any
    success: bool
    error_message: str | None
    duration_ms: int | None
    file_path: str | None


class ToolStats(_Result):
    tool_name: str
    total: int
    successes: int
    avg_duration_ms: float | None

    json_properties: ClassVar[tuple[str, ...]] = ("success_rate",)

    @property
    def success_rate(self) -> float:
        return self.successes / self.total if self.total else 0.0


class CoEdit(_Result):
    """Two files edited within one task close together in time, ``count`` times."""

    file1: str
    file2: str
    count: int


class Task(_Result):
    """A task as the episodic store holds it: ``status`` is ``active``, ``paused``,
    ``completed`` or ``failed``; times are Unix seconds; ``tools_used`` counts the
    tool runs recorded under the task by tool name. ``score`` is set only when the
    task was found by similarity to a query (BM25 over description and outcome);
    ``branch`` is the git branch it was started on, when known."""

    task_id: str
    session_id: str
    description: str
    intent: str | None
    status: str
    started_at: float
    completed_at: float | None
    files_touched: list[str]
    tools_used: dict[str, int]
    outcome: str | None
    score: float | None = None
    branch: str | None = None


class LearnedPattern(_Result):
    pattern_type: str
    data: dict[str, Any]
    confidence: float
    observed_count: int
    first_seen: float
    last_seen: float


# -- the code graph ------------------------------------------------------------------------


class IndexReport(_Result):
    """What one ``Memory.index()`` did. ``added``/``updated``/``removed`` compare
    the files indexed now with those of the previous index (every file is "added"
    when there is no manifest to trust); ``parsed`` counts the files parsed (all of
    them on a full build). ``unsupported`` counts the files of languages the graph
    does not parse, by language; ``unsettled`` lists the files that changed while
    they were being indexed (the next index parses them again)."""

    root: str
    full: bool
    reason: str
    files: int
    parsed: int
    added: list[str]
    updated: list[str]
    removed: list[str]
    skipped: list[tuple[str, str]]
    warnings: list[tuple[str, str]]
    unsupported: dict[str, int]
    unsettled: list[str]
    seconds: float
    dense: str = ""

    json_properties: ClassVar[tuple[str, ...]] = ("files_per_second",)

    @property
    def changed(self) -> bool:
        return bool(self.full or self.added or self.updated or self.removed)

    @property
    def files_per_second(self) -> float:
        return self.parsed / self.seconds if self.seconds > 0 else 0.0


class IndexProgress(_Result):
    """Where the index under way is (``running``), or where the last one of this
    process ended. ``phase`` is "scanning", "parsing", "lexical index",
    "linking", "saving", "embeddings" or, first in a server, "first files" (the
    graph of the first files, answering meanwhile: :class:`PartialIndex`) ("" before
    any index); ``done`` of ``total`` counts the ``unit`` ("files", or the
    "documents" embedded) of the phase that counts them last (parsing,
    embeddings), at ``per_second`` since that
    phase began, with ``seconds_left`` of it at that rate (None when unknown or
    not counting). ``seconds`` have passed since the index began."""

    running: bool
    phase: str
    done: int
    total: int
    unit: str
    seconds: float
    per_second: float
    seconds_left: float | None


class PartialIndex(_Result):
    """An answer from part of the project: its first index is under way, and the
    graph that answered holds ``files`` of its ``total`` source files."""

    files: int
    total: int


class Definition(_Result):
    """A definition: ``scope`` is the enclosing class (or impl, interface) and ""
    at module level; ``qualified`` is ``scope.name`` (or ``name``)."""

    name: str
    kind: str
    scope: str
    path: str
    line: int
    end_line: int
    signature: str

    json_properties: ClassVar[tuple[str, ...]] = ("qualified",)

    @property
    def qualified(self) -> str:
        return f"{self.scope}.{self.name}" if self.scope else self.name


class Reference(_Result):
    """The other end of a call (or reference): the definition, where the call is
    (``call_line``), its kind and the confidence of the link (1/n when the name
    matched n definitions)."""

    symbol: Definition
    call_line: int
    kind: str
    confidence: float


class Symbols(_Result):
    """Definitions matching ``query`` (``match``: exact, prefix or fuzzy).
    ``partial``: found in part of the project while its first index is under
    way (how much of it), else None."""

    query: str
    match: Literal["exact", "prefix", "fuzzy"]
    symbols: list[Definition]
    partial: PartialIndex | None = None


class Calls(_Result):
    """Who calls ``name`` (``direction`` "callers") or what it calls ("callees"):
    ``definitions`` are the definitions the name matched."""

    name: str
    direction: Literal["callers", "callees"]
    definitions: list[Definition]
    calls: list[Reference]


class ReferenceList(_Result):
    """Every edge into definitions named ``name`` (``kind``: calls, references,
    inherits, uses or imports; None for all)."""

    name: str
    kind: str | None
    references: list[Reference]


class Dependencies(_Result):
    """The project files ``path`` imports and the files that import it."""

    path: str
    dependencies: list[str]
    dependents: list[str]


class FileOutline(_Result):
    """What a file defines, in line order."""

    path: str
    symbols: list[Definition]


class Neighbour(_Result):
    symbol: Definition
    distance: int


class Neighbourhood(_Result):
    """Definitions within ``hops`` edges of ``name`` (either direction)."""

    name: str
    hops: int
    symbols: list[Neighbour]


class CodeResult(_Result):
    """The code most relevant to ``query`` within ``max_tokens`` (``tokens`` used)."""

    query: str
    max_tokens: int
    tokens: int
    snippets: list[RelevantCode]


class ChannelScore(_Result):
    """What one retrieval channel (``lexical``, ``graph``, ``dense``) gave a hit:
    its raw score, the score normalized over the channel's hits, and the channel's
    fusion weight."""

    channel: str
    raw: float
    normalized: float
    weight: float


class CodeHit(_Result):
    """A code search hit: a definition (``name`` set) or a file (``name`` None,
    ``kind`` "file", ``via`` its best definitions). ``channels`` and ``matched``
    explain the score; ``test`` marks a test or fixture file (scored down);
    ``code`` is the definition's source when asked for."""

    path: str
    name: str | None
    kind: str
    scope: str
    line: int
    end_line: int
    signature: str
    score: float
    channels: list[ChannelScore]
    matched: list[str]
    via: list[Definition]
    test: bool
    code: str | None = None


class CodeSearch(_Result):
    """The code most relevant to ``query`` at ``level`` ("definition" or "file"),
    best first. ``channels`` are the channels used, ``mentioned`` the project files
    the query names, ``reason`` why nothing was found (else ""), ``notes`` what
    was left out (e.g. the dense channel when its extra is not installed).
    ``partial``: found in part of the project while its first index is under
    way (how much of it), else None."""

    query: str
    level: Literal["definition", "file"]
    hits: list[CodeHit]
    channels: list[str]
    mentioned: list[str]
    reason: str
    notes: list[str]
    partial: PartialIndex | None = None


# -- episodic verbs ------------------------------------------------------------------------


class FileHistory(_Result):
    """What was done with a file, newest first, and the failed tool runs on it."""

    path: str
    interactions: list[FileInteraction]
    failed_tool_runs: list[ToolRun]


class CoEdits(_Result):
    """File pairs edited together at least ``min_count`` times (only those with
    ``path`` when it is given), most frequent first."""

    path: str | None
    min_count: int
    pairs: list[CoEdit]


class Tasks(_Result):
    """The open tasks (``query`` None), or past tasks most similar to ``query``."""

    query: str | None
    tasks: list[Task]


class Recorded(_Result):
    """A record_* call was accepted: ``what`` was recorded; ``graph_stale`` when
    the code graph will be refreshed before the next graph query; ``notes`` say
    when nothing was stored (a record with its idempotency key was, before)."""

    what: Literal["tool_call", "file_interaction", "snapshot"]
    graph_stale: bool
    notes: list[str] = dataclasses.field(default_factory=list)


class Patterns(_Result):
    pattern_type: str | None
    min_count: int
    patterns: list[LearnedPattern]


# -- overview ------------------------------------------------------------------------------


class GraphStats(_Result):
    files: int
    nodes: int
    edges: int
    skipped: int
    warnings: int
    unsupported: dict[str, int]


class Stats(_Result):
    """Sizes of the graph and the store. ``graph`` is None before the first index;
    ``episodic`` and ``longterm`` (turns, sessions, memories by status and layer)
    are None, with ``store_busy`` saying why, when another process holds the store."""

    root: str
    supported_languages: list[str]
    graph: GraphStats | None
    episodic: dict[str, int] | None
    tools_7d: list[ToolStats]
    store_busy: str | None
    longterm: dict[str, int] | None = None


class ContextEntry(_Result):
    """One item of a prepared window (``content`` is None for pruned items)."""

    type: str
    role: str | None
    tokens: int
    score: float
    source: str
    content: str | None


class ContextPreview(_Result):
    """What ``prepare_context(message)`` puts in a window of ``max_tokens``:
    ``code_tokens`` is the budget relevant code had."""

    message: str
    max_tokens: int
    threshold: int
    code_tokens: int
    total_tokens: int
    items: list[ContextEntry]
    pruned: list[ContextEntry]
    pruned_tokens: int
    notes: list[str]


class Check(_Result):
    check: str
    status: Literal["ok", "warn", "fail"]
    detail: str


class Doctor(_Result):
    ok: bool
    checks: list[Check]


class InitResult(_Result):
    root: str
    store: str
    created: bool


class CopiedTable(_Result):
    """A table a store copy wrote: its rows, and the digest of their multiset that
    the source and the copy both gave (hex SHA-256 sum, see
    :mod:`aircher_mem.postgres`)."""

    table: str
    rows: int
    digest: str


class StoreCopy(_Result):
    """A store copied between a file and a PostgreSQL server (its password masked),
    verified table by table: every table's rows read back from ``target`` equal
    ``source``'s."""

    source: str
    target: str
    tables: list[CopiedTable]
    rows: int
    seconds: float


class UserAccount(_Result):
    """A user with a token for the project's server: the name and when the token
    was made (Unix seconds)."""

    name: str
    created_at: float


class Users(_Result):
    """The users with a token for the project's server (users.json), and the token
    ``users add`` just made: shown this once, kept nowhere but as its SHA-256."""

    users: list[UserAccount]
    token: str | None


# -- long-term memory ----------------------------------------------------------------------


class Turn(_Result):
    """A conversation turn as stored (secrets redacted): ``at`` is when it was said
    (Unix seconds), ``tags`` the kinds of personal data it holds ("email", "phone")."""

    id: int
    session_id: str
    role: str
    speaker: str | None
    text: str
    at: float
    metadata: dict[str, Any]
    tags: list[str]


class Extracted(_Result):
    """What extraction did with one candidate of a turn: ``created`` a memory,
    ``merged`` it into an existing one (``memory_id``), or ``superseded`` the
    memory ``superseded`` (an older value of the same slot) with a new one."""

    action: Literal["created", "merged", "superseded"]
    memory_id: int
    content: str
    kind: str
    rules: list[str]
    superseded: int | None = None


class TurnAdded(_Result):
    """``add_turn``'s result: the new turn's id and what extraction did; ``notes``
    say what did not run (an extractor that failed or timed out)."""

    turn_id: int
    session_id: str
    extracted: list[Extracted]
    notes: list[str]


class MemoryRecord(_Result):
    """A memory (a fact, episode, pattern, workflow or decision) with its place in the
    hierarchy, validity in time (bi-temporal: ``valid_from``/``valid_until``
    in the world, ``created_at`` in the store), layer, hits, importance and
    score, usage counters, and its slot (subject, attribute) and value when
    the rules could tell one."""

    id: int
    kind: str
    content: str
    level: str
    domain: str | None
    module: str | None
    code_ref: str | None
    parent_id: int | None
    layer: str
    status: str
    importance: int
    hits: int
    score: float
    tags: list[str]
    created_at: float
    valid_from: float
    valid_until: float | None
    superseded_by: int | None
    last_seen: float
    retrieved: int
    cited: int
    ignored: int
    scope: str
    source: str
    confidence: float
    slot: list[str] | None
    value: str | None
    #: Its layer (hot, warm, cold), the priority that placed it there, whether it is
    #: an anchor (never cold) and when recall last served it.
    tier: str = "hot"
    priority: float = 0.0
    is_anchor: bool = False
    last_accessed: float | None = None
    #: Its content at 001's other compression levels ("" until consolidation writes them).
    summary: str = ""
    compressed: str = ""
    index_text: str = ""
    #: Its TTL: seconds from ``ttl_from`` (creation or the last refresh), the glob of
    #: the files whose change refreshes it, what expiry does, and when it went stale.
    ttl_seconds: float | None = None
    ttl_refresh: str | None = None
    ttl_on_expire: str | None = None
    ttl_from: float | None = None
    stale_since: float | None = None


class Remembered(_Result):
    """``remember``'s result: the memory that holds the content now, and whether it
    was ``created``, ``merged`` into an existing one or ``superseded`` another."""

    memory_id: int
    action: Literal["created", "merged", "superseded"]
    superseded: int | None = None


class RecallHit(_Result):
    """A recalled memory (``kind`` its kind) or raw turn (``kind`` "turn").
    ``score`` = the fused retrieval score (``channels``) + ``recency``,
    ``importance`` and ``usage`` terms (each already weighted); ``matched`` the
    query words found; ``turns`` the source turns (a turn hit: itself), a memory
    hit absorbing its turns' own hits (an episode: the raw turns that matched). ``notes`` say what the hit's content no
    longer holds: a turn stating a value that a correction superseded has
    ``"superseded by #N"`` (N the id of the memory holding the value now); a
    memory its TTL marked stale has ``"stale since <date>: its TTL expired"``.
    ``tier`` is the layer it was served from (hot, warm, cold: see
    :mod:`aircher_mem.longterm.layers`): a warm or cold hit's ``content`` and
    turns' ``text`` are their compressed forms, not the raw text; ``unpacked``
    says recall served it whole because the matched words were only in the raw
    text (its episode or memory is hot again)."""

    kind: str
    id: int
    content: str
    score: float
    channels: list[ChannelScore]
    matched: list[str]
    recency: float
    importance: float
    usage: float
    turns: list[Turn]
    notes: list[str] = dataclasses.field(default_factory=list)
    tier: str = "hot"
    unpacked: bool = False


class ConsolidationAction(_Result):
    """One thing a consolidation pass did (or, dry, would do) to a memory, and why."""

    memory_id: int
    action: str
    reason: str


class ConsolidationReport(_Result):
    """What a consolidation pass did at ``now`` (``dry_run``: would do): episodes
    created and extended, facts merged (``deduped``), episodes summarized and
    compressed (and ``pending``: left for the next pass, its time ran out), layer
    moves and the layers' sizes after, contradictions flagged,
    TTL expiries, memories forgotten, links discovered; each action with its
    reason."""

    dry_run: bool
    now: float
    episodes: int
    extended: int
    deduped: int
    summarized: int
    compressed: int
    pending: int
    moved: int
    tiers: dict[str, int]
    contradictions_found: int
    expired: int
    forgotten: int
    linked: int
    actions: list[ConsolidationAction]


class Recall(_Result):
    """Memories and turns relevant to ``query`` (as valid at ``at``, None: now),
    best first; ``reason`` says why there is nothing (else ""), ``notes`` what
    was left out (the dense channel without its extra)."""

    query: str
    at: float | None
    hits: list[RecallHit]
    channels: list[str]
    reason: str
    notes: list[str]


class ScoreTerm(_Result):
    """One term of a memory's score: ``weight`` x ``value`` = ``contribution``."""

    name: str
    weight: float
    value: float
    contribution: float


class MemoryLink(_Result):
    """A source turn of a memory and why: ``extracted``, ``merged``, ``conflict``
    (the turn that superseded an older value) or ``remembered``."""

    turn: Turn
    reason: str


class MemoryEdge(_Result):
    """A link between memories: ``relation`` is ``supersedes``/``superseded_by``
    or ``parent``/``child``."""

    relation: str
    memory_id: int
    content: str


class MemoryAction(_Result):
    """Something done to a memory, when and with what detail."""

    at: float
    action: str
    detail: str


class MemoryExplanation(_Result):
    """Why a memory scores what it does: the memory, its age in days, every term of its score, the rules
    that extracted it, its source turns, related memories, the last actions taken
    on it, what ``gc`` would do to it now, and its TTL."""

    memory: MemoryRecord
    age_days: float
    score: float
    terms: list[ScoreTerm]
    rules: list[str]
    links: list[MemoryLink]
    related: list[MemoryEdge]
    actions: list[MemoryAction]
    outlook: str
    #: Its TTL in words and when it expires ("" without one).
    ttl: str = ""
    #: The layer it belongs in now and why, with its priority's terms (003).
    layer: str = ""
    priority_terms: list[ScoreTerm] = dataclasses.field(default_factory=list)
    #: For an episode: what it keeps beside its row (its raw turns are in ``links``).
    episode: Episode | None = None
    #: The contradictions it is part of, open first.
    contradictions: list[Contradiction] = dataclasses.field(default_factory=list)
    #: For a decision with reasons recorded: its causal chain.
    chain: CausalChain | None = None


class CausalNode(_Result):
    """A node of a causal chain (seed 000): a decision (``decision_id`` is its
    memory), or a reason, consequence or constraint of that decision; the turn that
    said it (``turn_id``) and its session, when one did."""

    id: int
    node_type: Literal["decision", "reason", "consequence", "constraint"]
    content: str
    decision_id: int
    turn_id: int | None
    session_id: str
    created_at: float


class CausalEdge(_Result):
    """``source`` justifies, causes, leads_to or blocks ``target``, with a
    ``strength`` from 0 to 1 (how firmly it was said)."""

    source: int
    target: int
    edge_type: Literal["causes", "justifies", "leads_to", "blocks"]
    strength: float


class CausalChain(_Result):
    """The causal chain of the decision ``query`` is about (its memory
    ``decision_id``; None and ``reason`` saying why when none matches): its nodes,
    nearest first, the edges between them, and the chain as a mermaid ``graph TD``
    and as text."""

    query: str
    decision_id: int | None
    nodes: list[CausalNode]
    edges: list[CausalEdge]
    mermaid: str
    text: str
    reason: str


class Contradiction(_Result):
    """Two memories that disagree (seed 001): ``memory_a`` (the older, its
    ``content_a``) and ``memory_b``, found at ``detected_at`` by ``rule`` (slot,
    value, negation, number, correction, judge, ...) with ``evidence`` saying what
    differs, when ``origin`` ("write": b was stored; "slot": b took a's slot;
    "consolidation": a pass across the store). ``status`` is open until resolved:
    ``resolution`` a_wins, b_wins (the loser superseded: it stays queryable as of
    before), both_valid or merged (a new memory replaces both), at
    ``resolved_at`` with ``note``."""

    id: int
    memory_a: int
    memory_b: int
    content_a: str
    content_b: str
    detected_at: float
    rule: str
    evidence: str
    origin: str
    status: Literal["open", "resolved"]
    resolution: str | None = None
    resolved_at: float | None = None
    note: str | None = None


class ContradictionList(_Result):
    """Contradictions, open first, then the newest first."""

    contradictions: list[Contradiction]


class Episode(_Result):
    """What an episode keeps (seed 003): its session (``task:<id>`` for the agent's
    own task), origin ("conversation" or "task"), span, cold headline, warm key
    points, entities, decisions and open questions, the files it touched and a
    task's outcome."""

    session_id: str
    origin: str
    started_at: float
    ended_at: float
    headline: str
    key_points: list[str]
    entities: list[str]
    decisions: list[str]
    questions: list[str]
    files: list[str]
    outcome: str | None


class GcReport(_Result):
    """What a gc pass did (or, ``dry_run``, would do): memories scored, promoted
    mid -> long, archived (by reason: low score, age, capacity)."""

    dry_run: bool
    scored: int
    promoted: list[int]
    archived_low_score: list[int]
    archived_age: list[int]
    archived_capacity: list[int]
    mid_active: int
    long_active: int


class Conversation(_Result):
    """A conversation as an agent resuming it should see it first: the session's last
    turns (oldest first) and the top memories by score."""

    session_id: str
    short_term: list[Turn]
    memories: list[MemoryRecord]


class MemoryList(_Result):
    """Memories, in the order asked for."""

    memories: list[MemoryRecord]


class FactCandidate(_Result):
    """A fact about the code (seed 000's candidate) and what became of it:
    ``action`` created (kept, active), pending (kept, waiting for review_fact:
    ``confidence`` below the approval threshold), merged (it updated memory
    ``memory_id``), skipped (memory ``memory_id`` says it already) or
    rejected_before (a review rejected it once). ``kind`` is what changed (new_file,
    removed_file, moved_file, new_symbol, removed_symbol, renamed_symbol,
    moved_symbol, signature, import, config, refactor, readme) or what cold start
    found (template, readme, domain, module_purpose, module_outline), ``level``
    L0-L3 with ``code_ref`` ``path#Lstart-end`` for a symbol, ``source`` git_diff,
    file_change, ast_analysis or cold_start."""

    content: str
    confidence: float
    approved: bool
    action: Literal["created", "pending", "merged", "skipped", "rejected_before"]
    memory_id: int | None
    kind: str
    level: str
    domain: str | None
    code_ref: str | None
    source: str
    commit: str | None = None


class ExtractedFacts(_Result):
    """The facts extracted from code changes (``candidates``, in the order found),
    how many were found beyond the ``[knowledge] max_candidates`` kept
    (``more``), and how many facts wait for review in the store
    (``pending_approval``)."""

    candidates: list[FactCandidate]
    pending_approval: int
    more: int = 0


class SuggestedDomain(_Result):
    """A domain cold start suggests: a top-level package or folder (``path``) of the
    product code, its ``files``, its ``score`` (files plus the files importing them)
    and its most imported files (``main_modules``)."""

    name: str
    path: str
    files: int
    score: int
    main_modules: list[str]


class ProjectDiscovery(_Result):
    """What cold start found (seed 000's discover_project): the primary
    ``project_type`` and every type with the build file that says so
    (``types``: [{type, language, file}]), ``frameworks``, ``test_runners``,
    ``commands`` (test, build, lint), the facts it kept (``facts``; a fact already
    known is skipped; ``facts_created`` counts the new ones), the tokens those
    facts and domains take (``discovery_tokens``), the ``suggested_domains`` by
    name and in detail (``domains``), the files a ``task_hint`` led to
    (``task_files``), and ``partial`` ({files, total}) while the first index runs."""

    project_type: str | None
    types: list[dict[str, str]]
    frameworks: list[str]
    test_runners: list[str]
    commands: dict[str, str]
    facts_created: int
    facts: list[FactCandidate]
    discovery_tokens: int
    suggested_domains: list[str]
    domains: list[SuggestedDomain]
    task_files: list[str]
    partial: PartialIndex | None = None


class FactReview(_Result):
    """A pending fact reviewed: approved (``memory`` is the active memory it
    became) or rejected (forgotten for good; ``memory`` None)."""

    memory_id: int
    verdict: Literal["approve", "reject"]
    memory: MemoryRecord | None


class Forgotten(_Result):
    """What a forget removed for good: the memories (``ids``) and the conversation
    turns (``turns``), with their links, index entries and vectors."""

    ids: list[int]
    turns: list[int]


class Expiry(_Result):
    """What a memory's expired TTL did (or, in a dry run, would do) to it:
    ``action`` "mark_stale" (marked stale, still active), "archive" or "delete"
    (deleted for good, its conversation turns kept), and why, e.g. "TTL 7 days
    expired 2.0 days ago"."""

    memory_id: int
    action: Literal["mark_stale", "archive", "delete"]
    reason: str


class FeedbackResult(_Result):
    """A memory's usage counters after ``feedback``."""

    memory_id: int
    signal: Literal["cited", "ignored"]
    retrieved: int
    cited: int
    ignored: int


# -- prediction and assembly -----------------------------------------------------------------


class Reason(_Result):
    """Why something was predicted or assembled: the ``signal`` that brought it
    (``recent``, ``mentioned``, ``co-touched``, ``co-edited``, ``imports``,
    ``imported-by``, ``current-file``, ``code-ref``, ``query``, ``error``,
    ``task``, ``route``, ``cross-reference``...), what it said (``detail``)
    and the confidence it gives (0 to 1)."""

    signal: str
    detail: str
    confidence: float


class PredictedFile(_Result):
    """A file the agent will likely open next: ``confidence`` combines the
    reasons' (1 - the product of their complements)."""

    path: str
    confidence: float
    reasons: list[Reason]


class PredictedMemory(_Result):
    """A memory about a predicted file, with that file's confidence."""

    id: int
    kind: str
    content: str
    path: str
    confidence: float


class PredictedWorkflow(_Result):
    """A tool run often at this time of day: ``runs`` within an hour of it over the
    last days, and ``confidence``, its share of all the runs then."""

    tool: str
    runs: int
    confidence: float


class Prediction(_Result):
    """What the signals say will be needed next: files (best first), the memories
    about them, the learned error-then-fix patterns matching the recent errors,
    the workflows of this time of day, and ``confidence``, the mean confidence of
    the files predicted (0: none)."""

    signals: dict[str, Any]
    files: list[PredictedFile]
    memories: list[PredictedMemory]
    fixes: list[LearnedPattern]
    workflows: list[PredictedWorkflow]
    confidence: float


class DomainScore(_Result):
    """A domain of the hierarchy scored against a query: the share of the query's
    words its name and memories hold, or (``dense``, when the dense channel is on
    and scores higher) the best cosine similarity of the query with one of its
    memories recall found; ``chosen`` when the router loaded it."""

    domain: str
    score: float
    memories: int
    chosen: bool
    dense: bool = False


class Routed(_Result):
    """The router's answer for ``query``: the memories loaded (L0 always, then the
    chosen domains' L1 and L2 memories within the budget, then cross-references),
    their tokens, the domains' scores, the routing confidence, one paragraph
    saying why, and the cross-references followed ``[from, to]``."""

    query: str
    max_tokens: int
    memories: list[MemoryRecord]
    total_tokens: int
    domains: list[DomainScore]
    confidence: float
    explanation: str
    cross_references: list[list[int]]


class TierItem(_Result):
    """One line of an assembled tier: its ``kind`` (decision, error, fix,
    prediction, memory, turn, task, code, convention, history, workflow, topics,
    pointers), ``ref`` (``memory:12``, ``turn:40``, ``file:path``, ``task:id``,
    or None), the ``text`` as rendered, its tokens, its score and the reasons it
    is there."""

    kind: str
    ref: str | None
    text: str
    tokens: int
    score: float
    reasons: list[Reason]


class Tier(_Result):
    """One of the four tiers: ``budget`` tokens given (its share plus what the
    tiers before left), ``tokens`` used."""

    name: Literal["critical", "relevant", "background", "index"]
    budget: int
    tokens: int
    items: list[TierItem]


class Assembled(_Result):
    """A budgeted context in four tiers: ``context`` is the text to give the
    agent (``token_count`` tokens, at most ``budget``); ``routing`` and
    ``prediction`` are what chose it; ``notes`` what was left out and why."""

    budget: int
    signals: dict[str, Any]
    context: str
    token_count: int
    tiers: list[Tier]
    routing: Routed
    prediction: Prediction
    notes: list[str]
