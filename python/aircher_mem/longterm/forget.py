"""Forgetting for good: the memories, the turns they came from, every derived copy
(links, edges, actions quoting them, lexical documents, vectors), then the file
rewritten so that no free block keeps the text. Ids are never given twice: the next
ids are kept in the file, so an id forgotten stays unknown."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection

from .. import store
from ..errors import InvalidInputError, StoreError
from ..redact import redact
from ..results import Forgotten
from . import checks, documents, memories
from .core import StoreCore, log, using_db
from .extract import normalize
from .schema import ActionRow, memory_key, session_key, turn_key

__all__ = ["forget", "erase", "merged_into", "drop_memories", "drop_turns", "rewrite", "scrubbed_actions"]


@using_db
def forget(
    lt: StoreCore, memory_id: int | None = None, *, text: str | None = None, session_id: str | None = None
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
    lt._check_open()
    if sum(x is not None for x in (memory_id, text, session_id)) != 1:
        raise InvalidInputError("forget takes one of a memory id, text= or session_id=")
    lt._load()
    turn_ids: set[int] = set()
    nodes: set[int] = set()
    if memory_id is not None:
        ids = {lt._get(memory_id).id}
    elif text is not None:
        wanted = redact(checks.text("text", text))
        ids = {i for i in memories.matching(lt, wanted) if i not in lt._episodes}  # episodes: made again
        needle = normalize(wanted)
        if needle:
            turn_ids = {t.id for t in lt._turns.values() if needle in normalize(t.text)}
            nodes = {n.id for n in lt._nodes.values() if needle in normalize(n.content)}
    else:
        session = redact(checks.text("session_id", session_id, max_chars=1000))
        turn_ids = set(lt._sessions.get(session, ()))
        ids = {m for m, sources in lt._sources.items() if sources and set(sources) <= turn_ids}
        ids &= set(lt._memories)
    ids |= merged_into(lt, ids)
    for forgotten in ids:
        turn_ids.update(lt._sources.get(forgotten, ()))
        turn_ids.update(lt._episode_turns.get(forgotten, ()))  # an episode's raw turns are what it says
    # an episode left without turns goes with them (the others are made again from the turns left)
    touched = {lt._episode_of[t] for t in turn_ids if t in lt._episode_of}
    ids |= {e for e in touched if set(lt._episode_turns.get(e, ())) <= turn_ids}
    if not ids and not turn_ids and not nodes:
        return Forgotten([], [])
    _delete(lt, ids, turn_ids, touched, nodes)
    return Forgotten(sorted(ids), sorted(turn_ids))


@using_db
def erase(lt: StoreCore, ids: set[int]) -> None:
    """Deletes the memories ``ids`` for good, as :func:`forget` does, but keeps the
    conversation turns they came from (an expired TTL or a consolidation deletes a
    memory, never what was said): their rows, links, edges, actions (another
    memory's action quoting a deleted value keeps only the id), episode rows,
    lexical documents and vectors go, then the file is rewritten. Unknown ids are
    left out."""
    lt._check_open()
    lt._load()
    known = {i for i in ids if i in lt._memories}
    if known:
        _delete(lt, known, set(), set())


def _delete(lt: StoreCore, ids: set[int], turn_ids: set[int], touched: set[int], nodes: Collection[int] = ()) -> None:
    """The memories ``ids`` and turns ``turn_ids`` deleted in one transaction (what
    was pending written first), then in memory, with the causal nodes ``nodes``,
    those of the chains of decisions in ``ids`` and those the turns said; the
    episodes ``touched`` (that lost turns) made again from the turns they have left
    and written; then the file rewritten."""
    from . import episodes

    lt._write()
    nodes = set(nodes) | {
        n.id for n in lt._nodes.values() if n.decision_id in ids or (n.turn_id is not None and n.turn_id in turn_ids)
    }
    node_list = sorted(nodes)
    keys = [memory_key(i) for i in sorted(ids)]
    turn_keys = [turn_key(i) for i in sorted(turn_ids)]
    id_list, turn_list = sorted(ids), sorted(turn_ids)
    scrubbed = scrubbed_actions(lt, ids)
    # the rows are held in memory too: a statement that would find none of them is left out
    # (each scans its table)
    episodes_, edges, contradicted, linked = _referring(lt, ids)
    with lt._transaction("forgetting") as con:
        con.execute("DELETE FROM memories WHERE id IN (SELECT unnest(?::BIGINT[]))", [id_list])
        if episodes_:
            con.execute("DELETE FROM episodes WHERE memory_id IN (SELECT unnest(?::BIGINT[]))", [id_list])
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
        if edges:
            con.execute(
                "DELETE FROM memory_edges WHERE source_id IN (SELECT unnest(?::BIGINT[])) "
                "OR target_id IN (SELECT unnest(?::BIGINT[]))",
                [id_list, id_list],
            )
        con.execute("DELETE FROM memory_actions WHERE memory_id IN (SELECT unnest(?::BIGINT[]))", [id_list])
        if contradicted:
            con.execute(
                "DELETE FROM contradictions WHERE memory_a IN (SELECT unnest(?::BIGINT[])) "
                "OR memory_b IN (SELECT unnest(?::BIGINT[]))",
                [id_list, id_list],
            )
        con.execute("DELETE FROM causal_nodes WHERE id IN (SELECT unnest(?::BIGINT[]))", [node_list])
        con.execute(
            "DELETE FROM causal_edges WHERE from_id IN (SELECT unnest(?::BIGINT[])) "
            "OR to_id IN (SELECT unnest(?::BIGINT[]))",
            [node_list, node_list],
        )
        con.execute("DELETE FROM memory_vectors WHERE item_key IN (SELECT unnest(?::VARCHAR[]))", [keys + turn_keys])
        con.execute("DELETE FROM turns WHERE id IN (SELECT unnest(?::BIGINT[]))", [turn_list])
        if linked:
            con.execute(
                "UPDATE memories SET parent_id = NULL WHERE parent_id IN (SELECT unnest(?::BIGINT[]))", [id_list]
            )
            con.execute(
                "UPDATE memories SET superseded_by = NULL WHERE superseded_by IN (SELECT unnest(?::BIGINT[]))",
                [id_list],
            )
        lt._write_ids()
        # Until the rewrite below is done: a crash before it, and the next open does it.
        con.execute("INSERT OR REPLACE INTO longterm_state VALUES ('rewrite', 1)")
    drop_memories(lt, ids, scrubbed)
    drop_turns(lt, turn_ids)
    drop_nodes(lt, nodes)
    for episode in sorted(touched - ids):  # its texts may quote what went: made again, written before the rewrite
        episodes.rebuild(lt, episode)
    lt._write()
    rewrite(lt)


def _referring(lt: StoreCore, ids: set[int]) -> tuple[bool, bool, bool, bool]:
    """Whether any row refers to the memories ``ids``, by table: an episode row of
    theirs, an edge from or to them, a contradiction of theirs, a memory whose
    parent or successor one of them is (the rows as held in memory, written)."""
    return (
        any(i in lt._episodes for i in ids),
        any(i in lt._edges for i in ids)
        or any(other in ids for edges in lt._edges.values() for _relation, other in edges),
        any(c.memory_a in ids or c.memory_b in ids for c in lt._contradictions.values()),
        any(m.parent_id in ids or m.superseded_by in ids for m in lt._memories.values()),
    )


def drop_nodes(lt: StoreCore, nodes: set[int]) -> None:
    """Forgets the causal ``nodes`` and their edges in memory (the rows are deleted)."""
    for node_id in nodes:
        node = lt._nodes.pop(node_id, None)
        lt._dirty_nodes.discard(node_id)
        if node is not None:
            chain = lt._chain_of.get(node.decision_id, [])
            if node_id in chain:
                chain.remove(node_id)
            if not chain:
                lt._chain_of.pop(node.decision_id, None)
    for key in [k for k in lt._causal if k[0] in nodes or k[1] in nodes]:
        del lt._causal[key]
        lt._new_causal.discard(key)


def merged_into(lt: StoreCore, ids: set[int]) -> set[int]:
    """The memories merged into any of ``ids`` (their text is a near copy), and
    into those, transitively."""
    into: dict[int, list[int]] = defaultdict(list)
    for source, edges in lt._edges.items():
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


def drop_memories(lt: StoreCore, ids: set[int], scrubbed: list[tuple[int, int, ActionRow, str]]) -> None:
    """Forgets ``ids`` in memory (the rows are deleted)."""
    for memory_id_, index, action, new in scrubbed:
        lt._actions[memory_id_][index] = action._replace(detail=new)
    for memory_id_ in ids:
        memory = lt._memories.pop(memory_id_)
        lt._reshape(memory_id_)
        if memory.slot is not None and lt._slots.get(memory.slot) == memory_id_:
            del lt._slots[memory.slot]
        for turn_id in lt._sources.pop(memory_id_, {}):
            lt._memories_of[turn_id].discard(memory_id_)
        lt._edges.pop(memory_id_, None)
        lt._actions.pop(memory_id_, None)
        lt._episodes.pop(memory_id_, None)
        for turn_id in lt._episode_turns.pop(memory_id_, ()):
            if lt._episode_of.get(turn_id) == memory_id_:
                del lt._episode_of[turn_id]
        lt._children.pop(memory_id_, None)
        if memory.parent_id is not None:
            lt._children[memory.parent_id].discard(memory_id_)
    for row in [c for c in lt._contradictions.values() if c.memory_a in ids or c.memory_b in ids]:
        del lt._contradictions[row.id]  # its evidence quotes what went
        lt._dirty_contradictions.discard(row.id)
    for memory in lt._memories.values():
        if memory.parent_id in ids:
            memory.parent_id = None
        if memory.superseded_by in ids:
            memory.superseded_by = None
    for edges in lt._edges.values():
        edges[:] = [(relation, other) for relation, other in edges if other not in ids]
    keys = [memory_key(i) for i in ids]
    lt._lexical.remove(keys)
    lt._dedup.remove(keys)
    for key in keys:
        lt._forget_vector(key)


def drop_turns(lt: StoreCore, turn_ids: set[int]) -> None:
    """Forgets ``turn_ids`` in memory (the rows are deleted): their documents go,
    the turns next to them are indexed again (their context named them), their
    sessions' documents are rebuilt (or removed, when empty), and the memories
    that pointed to them lose the link."""
    if not turn_ids:
        return
    sessions = {lt._turns[t].session_id for t in turn_ids}
    neighbours: set[int] = set()
    for turn_id in turn_ids:
        before, after = documents.neighbours(lt, lt._turns[turn_id])
        neighbours.update(t.id for t in (before, after) if t is not None)
    relinked: set[int] = set()
    for turn_id in turn_ids:
        del lt._turns[turn_id]
        lt._position.pop(turn_id, None)
        for memory_id in lt._memories_of.pop(turn_id, set()):
            lt._sources.get(memory_id, {}).pop(turn_id, None)
            relinked.add(memory_id)
        episode = lt._episode_of.pop(turn_id, None)
        if episode is not None and turn_id in lt._episode_turns.get(episode, ()):
            lt._episode_turns[episode].remove(turn_id)
    for session in sessions:
        kept = [t for t in lt._sessions[session] if t not in turn_ids]
        if kept:
            lt._sessions[session] = kept
            lt._position.update((t, i) for i, t in enumerate(kept))
            lt._stale_sessions.add(session)
        else:
            del lt._sessions[session]
            lt._stale_sessions.discard(session)
            lt._session_lexical.remove([session_key(session)])
    keys = [turn_key(t) for t in turn_ids]
    lt._lexical.remove(keys)
    for key in keys:
        lt._forget_vector(key)
    lt._lexical.upsert([documents.turn_document(lt, lt._turns[t]) for t in sorted(neighbours - turn_ids)])
    kept = sorted(relinked & set(lt._memories))
    lt._lexical.upsert([documents.memory_document(lt, lt._memories[m]) for m in kept])


# The tables a forget deletes from, rewritten on a team's server (VACUUM FULL).
_REWRITTEN = (
    "turns",
    "memories",
    "memory_links",
    "memory_edges",
    "memory_actions",
    "memory_vectors",
    "episodes",
    "contradictions",
    "causal_nodes",
    "causal_edges",
)


def rewrite(lt: StoreCore) -> None:
    """Rewrites the file after a forget (``store.compact``: every connection of
    this process to it is closed and opened again), or on a team's server the
    tables a forget deletes from (``VACUUM FULL``: each table written anew, the old
    file of its rows removed), then clears the debt. A failure is logged; the next
    open tries again."""
    if lt.path == ":memory:":
        return
    try:
        if lt.team:
            lt._team().vacuum(_REWRITTEN)
        else:
            store.compact(lt.path)
        with lt._transaction("clearing the rewrite it owed", rows=False) as con:
            con.execute("DELETE FROM longterm_state WHERE name = 'rewrite'")
    except StoreError as exc:
        log.warning("long-term memory in %s: the file was not rewritten after a forget: %s", lt.path, exc)
    store.protect(lt.path)


def scrubbed_actions(lt: StoreCore, ids: set[int]) -> list[tuple[int, int, ActionRow, str]]:
    """The actions of other memories that quote a memory being forgotten (a
    supersede names the other memory's value, a contradiction what differs), with
    what they become: the id stays, the value goes. (memory id, index in its
    actions, action, new detail)"""
    out = []
    quoting = {other for i in ids for relation, other in lt._edges.get(i, []) if relation == "supersedes"}
    quoting.update(
        source
        for source, edges in lt._edges.items()
        if any(relation == "supersedes" and other in ids for relation, other in edges)
    )
    for row in lt._contradictions.values():
        if row.memory_a in ids or row.memory_b in ids:
            quoting.update((row.memory_a, row.memory_b))
    for memory_id in sorted(quoting - ids):
        for index, action in enumerate(lt._actions.get(memory_id, [])):
            if action.action not in ("superseded", "supersedes", "contradicts"):
                continue
            head, colon, _value = action.detail.partition(": ")
            other = head.removeprefix("by ").removeprefix("memory ")
            if colon and other.isdigit() and int(other) in ids:
                out.append((memory_id, index, action, f"{head} (forgotten)"))
    return out
