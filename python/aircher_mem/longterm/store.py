"""Long-term memory: conversation turns in, memories out, recalled by meaning.

``turns`` are the raw log of what was said, by session; ``memories`` hold facts,
episodes, patterns, workflows and decisions; ``memory_links`` say which turns a
memory came from and why (extracted, merged, conflict, remembered);
``memory_edges`` link memories (supersedes, parent); ``memory_actions`` keep what
was done to each (explain). :class:`LongTermMemory` is assembled from one module per
concern, each a set of functions taking the store's state (:class:`StoreCore`):

- ``schema``: the tables, their migrations, the rows held in memory.
- ``core``: the connection, loading, the one transaction helper every write goes
  through, pending writes, ``batch()``, ``commit()``, ``close()``.
- ``documents``: what the lexical indexes hold for a turn, a memory, a session.
- ``turns``: ``add_turn``, a session's window, the conversation context.
- ``memories``: ``remember``, merges and slots, ``update``, ``promote``, the
  hierarchy, the listings, ``explain``.
- ``recall``: search and the scoring of hits.
- ``lifecycle``: ``feedback`` and the ``gc`` pass.
- ``episodes``, ``layers``, ``compress``, ``consolidate``: how memories age (seeds
  001, 003): episodes, the hot/warm/cold layers and lazy unpacking, the four
  compression levels, the consolidation pass.
- ``chains_extract``, ``chains``: decisions with their reasons, consequences and
  constraints (seed 000's causal chains), said in turns or recorded; ``query_chain``.
- ``contradict``, ``contradictions``: the offline rules that find two memories
  disagreeing, the scan of every memory stored, the listing and the resolutions.
- ``knowledge``: facts from the code (changes, cold start) kept after seed 000's
  dedup, pending review below the approval confidence; ``review_fact``.
- ``forget``: ``forget``, ``erase`` and the rewrite of the file after them.
- ``ttl``: the TTLs (seed 000): defaults by tag, ``set_ttl``, refresh by file
  globs, ``expire`` and the ``stale`` listing.

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
  100K turns + 100K memories, 2.1-2.6 s against 6.3-7.1 s). A write of the verbs'
  rows logs the keys of the documents they change in its own transaction
  (``longterm_index_log``: :mod:`.indexlog`), and the next load makes those again
  from the rows; close saves the indexes anew only when a write could not log
  (``[longterm] index_log_rows``). Every other write transaction first deletes the
  files and then, in the transaction, the generation and the log: a crash at any
  point leaves either all as they were or nothing to read (rebuilt), and what
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

from typing import TYPE_CHECKING

from . import catchup as _catchup
from . import chains as _chains
from . import consolidate as _consolidate
from . import contradictions as _contradictions
from . import decisions as _decisions
from . import forget as _forget
from . import knowledge as _knowledge
from . import lifecycle as _lifecycle
from . import memories as _memories
from . import recall as _recall
from . import ttl as _ttl
from . import turns as _turns
from .core import StoreCore, team_verb
from .schema import (
    DOCUMENTS_VERSION,
    INDEX_SUFFIXES,
    KINDS,
    LAYERS,
    LEVELS,
    MAX_TEXT_CHARS,
    ROLES,
    SCOPES,
    STATUSES,
    Extractor,
    Judge,
    Summarizer,
)

if TYPE_CHECKING:
    pass

__all__ = [
    "LongTermMemory",
    "KINDS",
    "ROLES",
    "LEVELS",
    "LAYERS",
    "STATUSES",
    "SCOPES",
    "Extractor",
    "Summarizer",
    "Judge",
    "MAX_TEXT_CHARS",
    "INDEX_SUFFIXES",
    "DOCUMENTS_VERSION",
]


class LongTermMemory(StoreCore):
    """Turns and memories in the DuckDB file at ``path`` (``":memory:"`` for tests).

    ``index_source`` is "" until the first use loads the store, then "saved" (the
    lexical indexes were read as saved at the last close) or "rebuilt" (built from
    the rows: none saved, or the rows changed since).

    ``embedder`` (a callable returning an :class:`aircher_mem.embeddings.Embedder`)
    turns the dense channel on; ``dense_note`` says why it is off otherwise.
    ``extractor`` is the optional LLM callable (``[longterm] extractor_mode``);
    ``summarizer`` the optional LLM callable that forms episodes (seed 003's prompts);
    ``judge`` the optional LLM callable asked whether two memories contradict.

    ``url`` keeps them on a team's PostgreSQL server instead (``[store]`` url,
    lock_seconds, changes_days, pool_size); ``user`` is who this store acts for
    there: the owner of its rows, whose user-private rows it sees (default: the
    server's name for the login, its ``session_user``).
    """

    def _catch_up(self, entries: list[str]) -> None:
        _catchup.apply(self, _catchup.merged(entries))

    def _opened(self) -> None:
        if ("rewrite", 1) in self._state():  # a forget's rewrite a crash cut short
            _forget.rewrite(self)

    # turns
    add_turn = team_verb(_turns.add_turn)
    turns = team_verb(_turns.session_turns)
    get_context = team_verb(_turns.get_context)
    # memories and their links
    remember = team_verb(_memories.remember)
    get = team_verb(_memories.get)
    update = team_verb(_memories.update)
    memories = team_verb(_memories.listed)
    facts = team_verb(_memories.facts)
    about = team_verb(_memories.about)
    said_by = team_verb(_memories.said_by)
    active = team_verb(_memories.active)
    active_of = team_verb(_memories.active_of)
    records = team_verb(_memories.records)
    subtree = team_verb(_memories.subtree)
    promote = team_verb(_memories.promote)
    explain = team_verb(_memories.explain)
    # recall
    recall = team_verb(_recall.recall)
    # lifecycle
    feedback = team_verb(_lifecycle.feedback)
    gc = team_verb(_lifecycle.gc)
    consolidate = team_verb(_consolidate.consolidate)
    last_consolidated = team_verb(_consolidate.last_pass)
    # decisions: causal chains and contradictions
    record_decision = team_verb(_decisions.record)
    query_chain = team_verb(_decisions.query)
    reasons_of = team_verb(_chains.reasons_of)
    contradictions = team_verb(_contradictions.listed)
    first_open_contradictions = team_verb(_contradictions.first_open)
    resolve_contradiction = team_verb(_decisions.resolve)
    # facts from the code
    keep_facts = team_verb(_knowledge.keep)
    review_fact = team_verb(_knowledge.review)
    pending_facts = team_verb(_knowledge.pending_count)
    # forget
    forget = team_verb(_forget.forget)
    erase = team_verb(_forget.erase)
    # TTL
    set_ttl = team_verb(_ttl.set_ttl)
    refresh_ttl = team_verb(_ttl.refresh)
    expire = team_verb(_ttl.expire)
    stale = team_verb(_ttl.stale)

    def flush(self) -> None:
        """Embeds the texts not embedded yet (with the dense channel on) and writes
        everything pending in one transaction. On failure raises StoreError and
        keeps it pending."""
        self._check_open()
        if self._embedder_factory is not None and self._loaded:
            _recall.embed_pending(self)
        self._write()

    def __enter__(self) -> LongTermMemory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
