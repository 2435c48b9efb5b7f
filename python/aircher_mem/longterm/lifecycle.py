"""The lifecycle of memories: usage feedback (cited, ignored) and the ``gc`` pass
that rescores every active memory, promotes mid-term memories to long-term and
archives the low scoring, the old and those beyond the mid-term capacity."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping
from typing import Literal

from .._core import LexicalIndex
from ..errors import StoreError
from ..results import FeedbackResult, GcReport
from . import checks, documents
from .core import StoreCore, using_db
from .schema import ActionRow, MemoryRow, memory_key
from .scoring import DAY

__all__ = ["gc", "write_gc", "feedback"]


@using_db
def gc(lt: StoreCore, *, dry_run: bool = False) -> GcReport:
    """A lifecycle pass: recompute every active memory's score; promote mid -> long
    (hits >= promote_hits, seen within promote_days); archive mid-term memories
    scoring below archive_score or unseen for archive_days; then archive the
    lowest scoring beyond mid_capacity. ``dry_run`` changes nothing."""
    lt._check_open()
    checks.flag("dry_run", dry_run)
    lt._load()
    now = lt.clock()
    policy = lt.policy
    active = [m for m in lt._memories.values() if m.status == "active"]
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
    lt._write()  # what was pending, so that the rows below are written as they are now
    for m in active:
        m.score = scores[m.id]
    lt._reshape(None)  # the stored scores order the router's levels
    # the actions, as (ids, action, detail) groups: one INSERT each
    groups: dict[tuple[str, str], list[int]] = defaultdict(list)
    for memory_id in promoted:
        memory = lt._memories[memory_id]
        memory.layer = "long"
        groups["promoted", f"hits {memory.hits} >= {policy.promote_hits}"].append(memory_id)
    archived = 0
    for ids, why in ((low, "low score"), (old, "age"), (capacity, "capacity")):
        for memory_id in ids:
            memory = lt._memories[memory_id]
            memory.status = "archived"
            lt._reshape(memory_id)
            if memory.slot is not None and lt._slots.get(memory.slot) == memory_id:
                del lt._slots[memory.slot]
        if ids:
            groups["archived", f"gc: {why}"] = ids
        archived += len(ids)
    if archived > len(active) - archived:  # cheaper to build the merge-check index anew
        lt._dedup = LexicalIndex(stem=True)
        lt._dedup.upsert([documents.dedup_document(m) for m in lt._memories.values() if m.status == "active"])
    else:
        lt._dedup.remove([memory_key(i) for ids in (low, old, capacity) for i in ids])
    for (action, detail), ids in groups.items():
        entry = ActionRow(now, action, detail)  # a tuple: one serves them all
        for memory_id in ids:
            lt._actions[memory_id].append(entry)
    write_gc(lt, active, now, promoted, [i for ids in (low, old, capacity) for i in ids], groups)
    return report


def write_gc(
    lt: StoreCore,
    memories: list[MemoryRow],
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
    policy = lt.policy
    try:
        with lt._transaction("writing a gc pass") as con:
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
    except StoreError:
        # the state in memory is ahead of the file: write those rows whole next time
        lt._dirty.update(m.id for m in memories)
        actions = [(i, now, action, detail) for (action, detail), ids in groups.items() for i in ids]
        lt._new_actions.extend(actions)
        lt._pending += len(memories) + len(actions)
        raise


def feedback(lt: StoreCore, memory_id: int, signal: Literal["cited", "ignored"]) -> FeedbackResult:
    """Usage feedback: the agent cited the memory, or it was shown and ignored."""
    lt._check_open()
    memory = lt._get(memory_id)
    signal = checks.choice("signal", signal, ("cited", "ignored"))  # type: ignore[assignment]
    now = lt.clock()
    if signal == "cited":
        memory.cited += 1
        memory.last_seen = max(memory.last_seen, now)
    else:
        memory.ignored += 1
    lt._touch(memory)
    lt._act(memory.id, now, signal, "")
    lt._commit()
    return FeedbackResult(memory.id, signal, memory.retrieved, memory.cited, memory.ignored)
