"""Episodes (seed 003's atom, seed 001's episode type): a session's turns grouped
by topic or task, each a memory of kind "episode" that keeps its raw turns (links
with reason "episode"), its headline, key points, entities, decisions and open
questions (``episodes``), and edges to the episode it ``continues_from`` and those it
is ``related_to``.

Boundaries come from the conversation itself (:func:`segment_many`): a time gap, a task
switch (the turns' ``task_id`` metadata changes), a topic shift (the turns before a
point share least with those after it) or a size cap; the thresholds are in
``[lifecycle]``. The agent's own completed tasks become episodes too
(:func:`task_episode`), so "how did we fix the auth bug" finds the task.

An episode's texts are derived from its turns: when a turn is forgotten, its
episode is built again from the turns left (:func:`rebuild`), or forgotten with
the last of them, so a forgotten text stays nowhere.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Collection, Sequence
from typing import TYPE_CHECKING

from .._core import segment_sessions
from ..config import LifecyclePolicy
from . import compress, documents
from .core import StoreCore
from .schema import EpisodeRow, MemoryRow, TurnRow, turn_key

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "EpisodePlan",
    "Forms",
    "segment_many",
    "turn_vectors",
    "plan",
    "forms",
    "forms_of_many",
    "forms_of",
    "create",
    "index",
    "extend",
    "form",
    "rebuild",
    "summarized",
    "task_episode",
    "task_session",
    "related",
    "alike",
    "code_related",
]

#: Turns whose text an episode's forms read at most (the rest are still its turns).
FORM_TURNS = 400
#: Episodes whose turns' vectors are read at a time (:func:`alike`).
_MEAN_BATCH = 512


def _task(turn: TurnRow) -> object:
    if turn.metadata in ("{}", ""):
        return None
    try:
        value = json.loads(turn.metadata)
    except ValueError:
        return None
    return value.get("task_id") if isinstance(value, dict) else None


_BREAKS = {"gap": "time gap", "group": "task switch", "size": "size", "topic": "topic shift"}


def segment_many(
    sessions: Sequence[tuple[Sequence[TurnRow], Sequence[TurnRow]]],
    policy: LifecyclePolicy,
    vectors: Callable[[Sequence[TurnRow]], npt.NDArray[np.float32] | None] | None = None,
) -> list[list[tuple[list[TurnRow], str]]]:
    """Each ``(turns, after)`` of ``sessions`` (``turns``: one session's, in order)
    split into episodes, each with why it started ("" for the first): "time gap"
    (more than ``episode_gap_minutes`` after the last turn), "task switch" (its
    ``task_id`` metadata differs), "topic shift" (between those, where the
    ``episode_window`` turns before and after a point are least alike, by
    ``episode_shift_depth`` at least below the most alike points around it, no
    episode under ``episode_min_turns`` turns; alike: their content words' cosine,
    blended by ``episode_meaning_weight`` with their summed vectors' where the turns
    are embedded: ``vectors`` gives a session's rows, NaN for a turn without one) or
    "size" (``episode_max_turns`` reached). ``after``: the turns of the episode they
    follow, never split, which the first group then starts with. The sessions are
    split on every core."""
    rows = [[*after, *turns] for turns, after in sessions]
    inputs = []
    for (_turns, after), session in zip(sessions, rows, strict=True):
        tasks: dict[object, int] = {}
        groups = [tasks.setdefault(_task(t), len(tasks)) for t in session]
        inputs.append(([t.text for t in session], [t.at for t in session], groups, len(after)))
    found = segment_sessions(
        inputs,
        gap=policy.episode_gap_minutes * 60.0,
        min_len=policy.episode_min_turns,
        window=policy.episode_window,
        depth=policy.episode_shift_depth,
        max_len=policy.episode_max_turns,
        vectors=None if vectors is None else [vectors(session) for session in rows],
        meaning=policy.episode_meaning_weight,
    )
    made = []
    for session, starts in zip(rows, found, strict=True):
        out: list[tuple[list[TurnRow], str]] = []
        begin, why = 0, ""
        for at, code in starts:
            out.append((session[begin:at], why))
            begin, why = at, _BREAKS[code]
        out.append((session[begin:], why))
        made.append([(group, reason) for group, reason in out if group])
    return made


def turn_vectors(lt: StoreCore, turns: Sequence[TurnRow]) -> npt.NDArray[np.float32] | None:
    """The embeddings of ``turns`` (a row each, NaN for a turn without one): those
    kept in the store, the others embedded now and not kept (a dry run sees the
    boundaries a pass would make); None when nothing embeds them."""
    import numpy as np

    from .recall import item_text

    keys = [turn_key(t.id) for t in turns]
    rows = lt._vectors.get(keys) if lt._vectors is not None else None
    missing = [i for i in range(len(keys)) if rows is None or np.isnan(rows[i, 0])]
    factory = lt._embedder_factory
    if missing and factory is not None:
        if lt._embedder is None:
            lt._embedder = factory()
        made = np.asarray(lt._embedder.embed([item_text(lt, keys[i]) for i in missing]), dtype=np.float32)
        if rows is None:
            rows = np.full((len(keys), made.shape[1]), np.nan, dtype=np.float32)
        if made.shape[1] == rows.shape[1]:
            rows[missing] = made
    return rows


@dataclasses.dataclass
class EpisodePlan:
    """What a consolidation pass would do with a session's turns not in an episode
    yet: extend the session's last episode with the first of them (``extend``:
    its id and the turns), then create ``create`` (the turns of each new episode
    and why it started)."""

    session_id: str
    extend: tuple[int, list[TurnRow]] | None
    create: list[tuple[list[TurnRow], str]]


def plan(lt: StoreCore) -> list[EpisodePlan]:
    """Every session's turns not in an episode yet, segmented (every session at
    once, :func:`segment_many`): the first group continues the session's last
    episode when no boundary comes between them (its last turn is the one right
    before)."""
    waiting: list[tuple[str, list[TurnRow], int | None, list[TurnRow]]] = []
    for session, turn_ids in lt._sessions.items():
        fresh_at = len(turn_ids)
        while fresh_at > 0 and turn_ids[fresh_at - 1] not in lt._episode_of:
            fresh_at -= 1
        fresh = [lt._turns[t] for t in turn_ids[fresh_at:]]
        if not fresh:
            continue
        last, tail = None, []
        if fresh_at > 0:
            last = lt._episode_of[turn_ids[fresh_at - 1]]
            tail = [lt._turns[t] for t in lt._episode_turns[last] if t in lt._turns]
        waiting.append((session, fresh, last, tail))
    embedded = None if lt._embedder_factory is None else (lambda t: turn_vectors(lt, t))
    found = segment_many([(fresh, tail) for _session, fresh, _last, tail in waiting], lt.lifecycle, embedded)
    plans = []
    for (session, _fresh, last, tail), groups in zip(waiting, found, strict=True):
        extend = None
        if last is not None:
            first_turns, _why = groups.pop(0)
            if len(first_turns) > len(tail):  # the first new turns continue it
                extend = (last, first_turns[len(tail) :])
        plans.append(EpisodePlan(session, extend, groups))
    return plans


@dataclasses.dataclass(frozen=True)
class Forms:
    """An episode's texts derived from its turns (:func:`forms`)."""

    headline: str
    summary: str
    compressed: str
    index_text: str
    key_points: list[str]
    entities: list[str]
    decisions: list[str]
    questions: list[str]
    tags: list[str]


def forms(texts: Sequence[str], policy: LifecyclePolicy) -> Forms:
    """An episode's texts from its turns' ``texts``: its headline (its content:
    the cold form), summary (warm), compressed and index forms, key points (one
    per informative turn), entities, decisions, open questions and tags; the
    first ``FORM_TURNS`` turns are read (:func:`compress.digest`)."""
    return forms_of_many([texts], policy)[0]


def forms_of_many(batches: Sequence[Sequence[str]], policy: LifecyclePolicy) -> list[Forms]:
    """:func:`forms` of each episode's texts in ``batches``, made on every core."""
    made = compress.digests([list(texts[:FORM_TURNS]) for texts in batches], sentences=policy.summary_sentences)
    return [
        Forms(
            headline=m.headline,
            summary=m.summary,
            compressed=m.compressed,
            index_text=m.index,
            key_points=m.key_points[: 4 * policy.summary_sentences],
            entities=m.entities[:32],
            decisions=m.decisions[:8],
            questions=m.questions[:8],
            tags=m.tags,
        )
        for m in made
    ]


#: A provisional headline (an episode not formed yet) is its first turn's first this many words.
PROVISIONAL_WORDS = 20


def _apply(
    lt: StoreCore,
    memory: MemoryRow,
    episode: EpisodeRow,
    turns: Sequence[TurnRow],
    *,
    full: bool,
    made: Forms | None = None,
) -> None:
    """The episode's texts made from ``turns``: all of them (``full``, see
    :func:`forms`; ``made``: those forms, made already), or, until consolidation
    forms it, only a provisional headline (the first turn's first
    ``PROVISIONAL_WORDS`` words) and its span."""
    episode.started_at = min(t.at for t in turns)
    episode.ended_at = max(t.at for t in turns)
    memory.valid_from = episode.started_at
    memory.last_seen = max(memory.last_seen, episode.ended_at)
    episode.formed = full
    if not full:
        words = turns[0].text.split()
        memory.content = " ".join(words[:PROVISIONAL_WORDS]) + ("..." if len(words) > PROVISIONAL_WORDS else "")
        memory.summary = memory.compressed = memory.index_text = ""
        memory.tags = ["episode"]
        episode.headline = memory.content
        episode.key_points, episode.entities, episode.decisions, episode.questions = [], [], [], []
        return
    if made is None:
        made = forms([t.text for t in turns], lt.lifecycle)
    if lt.summarizer is not None:
        made = summarized(lt, made, [t.text for t in turns])
    memory.content = made.headline or "(small talk)"
    memory.summary = made.summary
    memory.compressed = made.compressed
    memory.index_text = made.index_text
    memory.tags = sorted({*made.tags, "episode"})
    episode.headline = memory.content
    episode.key_points = made.key_points
    episode.entities = made.entities
    episode.decisions = made.decisions
    episode.questions = made.questions


def _text(answer: dict[str, str | list[str]], key: str) -> str | None:
    value = answer.get(key)
    return value if isinstance(value, str) and value else None


def _texts(answer: dict[str, str | list[str]], key: str) -> list[str] | None:
    value = answer.get(key)
    return list(value) if isinstance(value, list) else None


def summarized(lt: StoreCore, made: Forms, texts: Sequence[str]) -> Forms:
    """``made`` with what the summarizer callable answers to seed 003's two
    prompts: hot -> warm (summary, key points, entities, decisions, open questions)
    from the turns, warm -> cold (headline, tags) from that summary and its key
    points. A field it leaves out, or a prompt it fails (an error, a timeout, an
    invalid answer: :func:`compress.ask_summarizer`), keeps the extractive form."""
    timeout = lt.lifecycle.summarizer_timeout_seconds
    assert lt.summarizer is not None
    warm = compress.ask_summarizer(lt.summarizer, compress.HOT_TO_WARM_PROMPT, texts, timeout=timeout) or {}
    made = dataclasses.replace(
        made,
        summary=_text(warm, "summary") or made.summary,
        key_points=_texts(warm, "key_points") or made.key_points,
        entities=_texts(warm, "entities") or made.entities,
        decisions=_texts(warm, "decisions") or made.decisions,
        questions=(_texts(warm, "questions") or []) if "questions" in warm else made.questions,
    )
    told = [made.summary, *made.key_points]
    cold = compress.ask_summarizer(lt.summarizer, compress.WARM_TO_COLD_PROMPT, told, timeout=timeout) or {}
    return dataclasses.replace(
        made,
        headline=_text(cold, "headline") or made.headline,
        tags=(_texts(cold, "tags") or made.tags)[:5],
    )


def _changed(lt: StoreCore, memory: MemoryRow, *, index: bool = True) -> None:
    """``memory`` changed: written at the next commit, and its document indexed
    again (without ``index``: by the caller, :func:`index`)."""
    if index:
        lt._lexical.upsert([documents.memory_document(lt, memory)])
    lt._touch(memory)
    lt._reshape(memory.id)


def index(lt: StoreCore, memory_ids: Sequence[int]) -> None:
    """The documents of the episodes ``memory_ids`` indexed again, in one call."""
    lt._lexical.upsert([documents.memory_document(lt, lt._memories[i]) for i in memory_ids])


def create(
    lt: StoreCore, session_id: str, turns: Sequence[TurnRow], why: str, now: float, *, indexed: bool = True
) -> MemoryRow:
    """A new episode of ``turns``, not formed yet (in memory; the caller writes it;
    without ``indexed`` the caller indexes it: :func:`index`)."""
    private = any(t.scope == "user-private" for t in turns)  # an episode of private turns is private
    memory = MemoryRow(
        id=lt._next_memory,
        kind="episode",
        content="",
        created_at=now,
        source="consolidated",
        owner=lt.user,
        scope="user-private" if private else "project-shared",
    )
    lt._next_memory += 1
    episode = EpisodeRow(memory.id, session_id, "conversation", turns[0].at, turns[-1].at)
    _apply(lt, memory, episode, turns, full=False)
    lt._memories[memory.id] = memory
    lt._episodes[memory.id] = episode
    for turn in turns:
        lt._episode_link(memory.id, turn.id, now)
    _changed(lt, memory, index=indexed)
    place = lt._position.get(turns[0].id, 0)
    before = lt._episode_of.get(lt._sessions[session_id][place - 1]) if place > 0 else None
    if before is not None:
        lt._edge(memory.id, before, "continues_from", now)
    started = f"; started by a {why}" if why else ""
    lt._act(memory.id, now, "episode", f"{len(turns)} turns of session {session_id}{started}")
    return memory


def _turns_of(lt: StoreCore, memory_id: int) -> list[TurnRow]:
    return [lt._turns[t] for t in lt._episode_turns.get(memory_id, ()) if t in lt._turns]


def extend(lt: StoreCore, memory_id: int, turns: Sequence[TurnRow], now: float) -> MemoryRow:
    """The episode ``memory_id`` with ``turns`` added at its end; it is formed again
    by a later pass."""
    memory, episode = lt._memories[memory_id], lt._episodes[memory_id]
    for turn in turns:
        lt._episode_link(memory_id, turn.id, now)
    _apply(lt, memory, episode, _turns_of(lt, memory_id), full=False)
    _changed(lt, memory)
    lt._act(memory_id, now, "episode", f"{len(turns)} more turns")
    return memory


def form(lt: StoreCore, memory_id: int, made: Forms | None = None, *, indexed: bool = True) -> MemoryRow:
    """The episode ``memory_id`` formed: its summary, key points, entities,
    decisions, open questions, headline, compressed and index forms made from its
    turns (:func:`forms`; ``made``: :func:`forms_of` it, made already; without
    ``indexed`` the caller indexes it: :func:`index`)."""
    memory, episode = lt._memories[memory_id], lt._episodes[memory_id]
    _apply(lt, memory, episode, _turns_of(lt, memory_id), full=True, made=made)
    _changed(lt, memory, index=indexed)
    return memory


def forms_of(lt: StoreCore, memory_ids: Sequence[int]) -> list[Forms]:
    """:func:`forms` of each episode of ``memory_ids`` from its turns, made on every core."""
    return forms_of_many([[t.text for t in _turns_of(lt, i)] for i in memory_ids], lt.lifecycle)


def rebuild(lt: StoreCore, memory_id: int) -> bool:
    """The episode ``memory_id`` made again from the turns it has left (after a
    forget), as formed as it was; False when none is left (the caller forgets it)."""
    turns = _turns_of(lt, memory_id)
    if not turns:
        return False
    lt._episode_turns[memory_id] = [t.id for t in turns]
    memory, episode = lt._memories[memory_id], lt._episodes[memory_id]
    _apply(lt, memory, episode, turns, full=episode.formed)
    _changed(lt, memory)
    return True


def task_session(task_id: str) -> str:
    """The session id of the agent's task ``task_id``'s episode."""
    return f"task:{task_id}"


def task_episode(
    lt: StoreCore,
    task_id: str,
    description: str,
    outcome: str | None,
    files: Sequence[str],
    notes: Sequence[str],
    started_at: float,
    ended_at: float,
    now: float,
) -> MemoryRow:
    """The agent's completed task ``task_id`` as an episode (origin "task", session
    :func:`task_session`): its description, outcome, the files it touched and its
    notes (errors then fixes). The caller makes sure the task has none yet."""
    session = task_session(task_id)
    texts = [description, *notes, *([f"Outcome: {outcome}"] if outcome else [])]
    memory = MemoryRow(id=lt._next_memory, kind="episode", content="", created_at=now, source="task", owner=lt.user)
    lt._next_memory += 1
    made = forms(texts, lt.lifecycle)
    memory.content = description.strip()[:500] or made.headline
    memory.summary = " ".join(t for t in texts if t)[:2000]
    memory.compressed = made.compressed
    memory.index_text = made.index_text
    memory.tags = sorted({*made.tags, "episode", "task"})
    memory.valid_from, memory.last_seen = started_at, ended_at
    episode = EpisodeRow(
        memory.id,
        session,
        "task",
        started_at,
        ended_at,
        formed=True,
        headline=memory.content,
        key_points=made.key_points,
        entities=made.entities,
        decisions=made.decisions,
        questions=[],
        files=sorted(set(files))[:200],
        outcome=outcome,
    )
    lt._memories[memory.id] = memory
    lt._episodes[memory.id] = episode
    lt._lexical.upsert([documents.memory_document(lt, memory)])
    lt._touch(memory)
    lt._reshape(memory.id)
    lt._act(memory.id, now, "episode", f"task {task_id}")
    return memory


def related(lt: StoreCore, shared: int, limit: int = 5) -> list[tuple[int, int, list[str]]]:
    """Pairs of episodes sharing at least ``shared`` entities, not linked yet:
    (episode, other, the entities), each episode's ``limit`` best."""
    by_entity: dict[str, list[int]] = {}
    for memory_id, episode in lt._episodes.items():
        for entity in {e.lower() for e in episode.entities}:
            by_entity.setdefault(entity, []).append(memory_id)
    counts: dict[tuple[int, int], list[str]] = {}
    for entity, ids in by_entity.items():
        if len(ids) > 50:  # an entity in every episode links nothing
            continue
        for i, a in enumerate(ids):
            for b in ids[i + 1 :]:
                counts.setdefault((min(a, b), max(a, b)), []).append(entity)
    linked = {(s, t) for s, edges in lt._edges.items() for relation, t in edges if relation == "related_to"}
    best: dict[int, list[tuple[int, int, list[str]]]] = {}
    for (a, b), entities in counts.items():
        if len(entities) < shared or (a, b) in linked or (b, a) in linked:
            continue
        best.setdefault(a, []).append((a, b, sorted(entities)))
    out = []
    for a in sorted(best):
        out.extend(sorted(best[a], key=lambda x: (-len(x[2]), x[1]))[:limit])
    return out


def alike(lt: StoreCore, fresh: Collection[int], threshold: float) -> list[tuple[int, int, float]]:
    """Pairs of conversation episodes of different sessions alike in meaning, not
    linked yet: a ``fresh`` episode and its nearest episode of another session, each
    the other's nearest, the cosine of their turns' mean vectors at least
    ``threshold``: (the lower id, the higher, the cosine). Nothing without vectors."""
    if lt._vectors is None or not fresh:
        return []
    import numpy as np

    ids = [i for i in sorted(lt._episodes) if i in lt._memories and lt._episode_turns.get(i)]
    means, kept = [], []
    for start in range(0, len(ids), _MEAN_BATCH):  # the turns' vectors a batch of episodes at a time
        batch = ids[start : start + _MEAN_BATCH]
        keys = [turn_key(t) for i in batch for t in lt._episode_turns[i]]
        owner = np.repeat(np.arange(len(batch)), [len(lt._episode_turns[i]) for i in batch])
        rows = lt._vectors.get(keys)
        present = ~np.isnan(rows[:, 0])
        sums = np.zeros((len(batch), rows.shape[1]), dtype=np.float64)
        np.add.at(sums, owner[present], rows[present])
        norms = np.linalg.norm(sums, axis=1)
        for n in np.flatnonzero(norms > 0):
            means.append(sums[n] / norms[n])
            kept.append(batch[n])
    if len(kept) < 2:
        return []
    matrix = np.array(means, dtype=np.float32)
    _names, sessions = np.unique([lt._episodes[i].session_id for i in kept], return_inverse=True)
    row_of = {episode: row for row, episode in enumerate(kept)}

    def nearest(rows: npt.NDArray[np.int64]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        """Each row's nearest row of another session, and their cosine (in batches)."""
        best = np.zeros(len(rows), dtype=np.int64)
        score = np.full(len(rows), -np.inf, dtype=np.float32)
        for start in range(0, len(rows), _MEAN_BATCH):
            part = rows[start : start + _MEAN_BATCH]
            similarity = matrix[part] @ matrix.T
            similarity[sessions[part][:, None] == sessions[None, :]] = -np.inf
            best[start : start + len(part)] = similarity.argmax(axis=1)
            score[start : start + len(part)] = similarity[np.arange(len(part)), best[start : start + len(part)]]
        return best, score

    asked = np.array(sorted(row_of[e] for e in fresh if e in row_of), dtype=np.int64)
    if not len(asked):
        return []
    others, cosines = nearest(asked)
    back, _ = nearest(others)
    linked = {(s, t) for s, edges in lt._edges.items() for relation, t in edges if relation == "related_to"}
    found: dict[tuple[int, int], float] = {}
    for row, other, cosine, mutual in zip(asked, others, cosines, back == asked, strict=True):
        if cosine < threshold or not mutual:
            continue
        pair = (min(kept[row], kept[other]), max(kept[row], kept[other]))
        if pair not in linked and pair[::-1] not in linked:
            found[pair] = float(cosine)
    return [(a, b, cosine) for (a, b), cosine in sorted(found.items())]


def code_related(lt: StoreCore, limit: int = 5) -> list[tuple[int, int, list[str]]]:
    """Pairs of active memories about the same file, not linked yet: memories whose
    ``code_ref`` names it (``path`` or ``path:Name``) and task episodes that touched
    it; (memory, other, [the file]), each memory's first ``limit``. A file more than
    50 memories are about links nothing."""
    by_file: dict[str, set[int]] = {}
    for memory in lt._memories.values():
        if memory.status != "active":
            continue
        if memory.code_ref:
            by_file.setdefault(memory.code_ref.split(":", 1)[0], set()).add(memory.id)
        episode = lt._episodes.get(memory.id)
        if episode is not None:
            for path in episode.files:
                by_file.setdefault(path, set()).add(memory.id)
    linked = {(s, t) for s, edges in lt._edges.items() for relation, t in edges if relation == "related_to"}
    found: dict[int, list[tuple[int, int, list[str]]]] = {}
    for path in sorted(by_file):
        ids = sorted(by_file[path])
        if len(ids) > 50:
            continue
        for i, a in enumerate(ids):
            for b in ids[i + 1 :]:
                if (a, b) not in linked and (b, a) not in linked and len(found.get(a, ())) < limit:
                    found.setdefault(a, []).append((a, b, [path]))
                    linked.add((a, b))
    return [pair for a in sorted(found) for pair in found[a]]
