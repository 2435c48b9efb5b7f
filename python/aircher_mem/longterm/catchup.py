"""A team's store catching up with what other processes wrote, row by row.

Each write transaction of a team's store records in the change log what it wrote
(``_Taken.changes`` in :mod:`.core`): the ids of the turns it added, of the memories whose rows it
wrote, of the memories whose links, edges, actions or causal edges it added, of
the contradictions and causal nodes it wrote, and the keys of the vectors it
stored. A process that finds such entries from others reads those rows again and
puts them in its state the way a load would (:func:`apply`): the state after it is
the state a fresh load of the same rows builds (a test holds it to that). A write
that records nothing (a forget, a gc pass, a consolidation's bookkeeping, a review)
makes the others read every row again.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .contradictions import put
from .schema import (
    CAUSAL_NODE_FIELDS,
    CONTRADICTION_FIELDS,
    EPISODE_FIELDS,
    EPISODE_LINK,
    MEMORY_FIELDS,
    RULES_AT,
    TAGS_AT,
    TURN_COLUMNS,
    ActionRow,
    CausalNodeRow,
    ContradictionRow,
    MemoryRow,
    TurnRow,
    episode_row,
    json_list,
    memory_key,
    turn_key,
    visible,
)

if TYPE_CHECKING:
    from .core import StoreCore

__all__ = ["merged", "apply"]

Changes = dict[str, list[Any]]
_KINDS = ("turns", "memories", "links", "edges", "actions", "contradictions", "nodes", "causal", "vectors")


def merged(entries: Iterable[str]) -> Changes:
    """The change log's entries as one set of changes."""
    found: dict[str, set[Any]] = {kind: set() for kind in _KINDS}
    for entry in entries:
        for kind, keys in json.loads(entry).items():
            found[kind].update(keys)
    return {kind: sorted(keys) for kind, keys in found.items()}


def _rows(lt: StoreCore, sql: str, keys: Sequence[Any], kind: str = "BIGINT") -> list[tuple[Any, ...]]:
    return lt._con.execute(sql.replace("(?)", f"(SELECT unnest(?::{kind}[]))"), [list(keys)]).fetchall()


def apply(lt: StoreCore, changes: Mapping[str, Sequence[Any]]) -> None:
    """Reads the rows ``changes`` names and puts them in ``lt``'s state (see the
    module's docstring): turns, memories and their episodes, links (a link needs its
    memory and turn; a memory's document names the speakers of its turns, so the
    memories are indexed after), edges, actions, contradictions, causal nodes and
    edges, vectors."""
    from . import documents

    reindexed: set[int] = set()
    turns = changes.get("turns", [])
    if turns:
        columns = ", ".join(TURN_COLUMNS)
        for row in _rows(lt, f"SELECT {columns} FROM turns WHERE id IN (?) ORDER BY id", turns):
            lt._next_turn = max(lt._next_turn, row[0] + 1)
            if row[0] in lt._turns or not visible(row[8], row[9], lt.user):
                continue
            turn = TurnRow(row[0], row[1], row[2], row[3], row[4], row[5], row[6], json_list(row[7]), row[8], row[9])
            lt._turns[turn.id] = turn
            session = lt._sessions[turn.session_id]
            before = session[-1:]
            lt._position[turn.id] = len(session)
            session.append(turn.id)
            lt._lexical.upsert([documents.turn_document(lt, lt._turns[i]) for i in (*before, turn.id)])
            lt._stale_sessions.add(turn.session_id)
            lt._unembedded.add(turn_key(turn.id))
    written: list[MemoryRow] = []  # indexed once their links are in
    memories = changes.get("memories", [])
    if memories:
        for row in _rows(lt, f"SELECT {', '.join(MEMORY_FIELDS)} FROM memories WHERE id IN (?) ORDER BY id", memories):
            memory = MemoryRow(*row)
            lt._next_memory = max(lt._next_memory, memory.id + 1)
            if not visible(memory.owner, memory.scope, lt.user):
                continue
            memory.tags = json_list(row[TAGS_AT])
            memory.rules = json_list(row[RULES_AT])
            old = lt._memories.get(memory.id)
            if old is not None:
                if old.parent_id is not None:
                    lt._children[old.parent_id].discard(old.id)
                if old.slot is not None and lt._slots.get(old.slot) == old.id:
                    del lt._slots[old.slot]
            lt._memories[memory.id] = memory
            if memory.parent_id is not None:
                lt._children[memory.parent_id].add(memory.id)
            if memory.slot is not None and memory.status == "active" and memory.valid_until is None:
                lt._slots[memory.slot] = memory.id
            written.append(memory)
        for row in _rows(lt, f"SELECT {', '.join(EPISODE_FIELDS)} FROM episodes WHERE memory_id IN (?)", memories):
            if row[0] in lt._memories:
                lt._episodes[row[0]] = episode_row(row)
    linked = changes.get("links", [])
    if linked:
        for memory_id in linked:
            for turn_id in lt._sources.pop(memory_id, {}):
                lt._memories_of[turn_id].discard(memory_id)
            for turn_id in lt._episode_turns.pop(memory_id, []):
                lt._episode_of.pop(turn_id, None)
        for memory_id, turn_id, reason in _rows(
            lt, "SELECT memory_id, turn_id, reason FROM memory_links WHERE memory_id IN (?) ORDER BY turn_id", linked
        ):
            if memory_id not in lt._memories or turn_id not in lt._turns:
                continue  # hidden from this user
            if reason == EPISODE_LINK:
                lt._episode_turns[memory_id].append(turn_id)
                lt._episode_of[turn_id] = memory_id
            else:
                lt._sources[memory_id][turn_id] = reason
                lt._memories_of[turn_id].add(memory_id)
        reindexed.update(linked)
    for memory in written:
        lt._index_memory(memory)
        reindexed.discard(memory.id)
    kept = [lt._memories[m] for m in sorted(reindexed) if m in lt._memories]
    if kept:  # new links of a memory whose row did not change: the speakers in its document
        lt._lexical.upsert([documents.memory_document(lt, m) for m in kept])
    edged = changes.get("edges", [])
    if edged:
        for source in edged:
            lt._edges.pop(source, None)
        for source, target, relation in _rows(
            lt,
            "SELECT source_id, target_id, relation FROM memory_edges WHERE source_id IN (?) "
            "ORDER BY source_id, linked_at, target_id, relation",
            edged,
        ):
            if source in lt._memories and target in lt._memories:
                lt._edges[source].append((relation, target))
    acted = changes.get("actions", [])
    if acted:
        for memory_id in acted:
            lt._actions.pop(memory_id, None)
        for memory_id, done_at, action, detail in _rows(
            lt,
            "SELECT memory_id, done_at, action, detail FROM memory_actions WHERE memory_id IN (?) "
            "ORDER BY done_at, rowid",
            acted,
        ):
            if memory_id in lt._memories:
                lt._actions[memory_id].append(ActionRow(done_at, action, detail))
    found = changes.get("contradictions", [])
    if found:
        columns = ", ".join(CONTRADICTION_FIELDS)
        for row in _rows(lt, f"SELECT {columns} FROM contradictions WHERE id IN (?)", found):
            put(lt, ContradictionRow(*row), known=row[1] in lt._memories and row[2] in lt._memories)
    nodes = changes.get("nodes", [])
    if nodes:
        columns = ", ".join(CAUSAL_NODE_FIELDS)
        for row in _rows(lt, f"SELECT {columns} FROM causal_nodes WHERE id IN (?) ORDER BY id", nodes):
            node = CausalNodeRow(*row)
            lt._next_node = max(lt._next_node, node.id + 1)
            if node.decision_id not in lt._memories or not (node.turn_id is None or node.turn_id in lt._turns):
                continue
            if node.id not in lt._nodes:
                lt._chain_of[node.decision_id].append(node.id)
            lt._nodes[node.id] = node
    causes = changes.get("causal", [])
    if causes:
        for key in [k for k in lt._causal if k[0] in set(causes)]:
            del lt._causal[key]
        for source, target, kind, strength in _rows(
            lt, "SELECT from_id, to_id, edge_type, strength FROM causal_edges WHERE from_id IN (?)", causes
        ):
            if source in lt._nodes and target in lt._nodes:
                lt._causal[(source, target, kind)] = strength
    vectors = changes.get("vectors", [])
    if vectors and lt._embedder_factory is not None:
        _vectors(lt, vectors)
    # (the caches of memories' places and of contradiction pairs see what changed themselves)


def _vectors(lt: StoreCore, keys: Sequence[str]) -> None:
    """The stored vectors of ``keys`` whose items exist, into the vector index (of
    the dimension it has, or theirs when there is none yet)."""
    from .._core import VectorIndex

    live = {memory_key(m) for m in lt._memories} | {turn_key(t) for t in lt._turns}
    rows = [
        (key, vector)
        for key, vector in _rows(
            lt, "SELECT item_key, vector::FLOAT[] FROM memory_vectors WHERE item_key IN (?)", keys, "VARCHAR"
        )
        if key in live and vector
    ]
    if not rows:
        return
    if lt._vectors is None:
        lt._vectors = VectorIndex(len(rows[0][1]))
    lt._keep_vectors(lt._vectors, [(key, vector) for key, vector in rows if len(vector) == lt._vectors.dim])
