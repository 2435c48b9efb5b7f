"""The hot, warm and cold layers (seed 003): a memory's priority, the layer it
belongs in, what recall serves of it there, and lazy unpacking.

Priority (003 §8) = recency (0-``recency_weight``: halves every
``recency_half_life_days`` since the last access) + frequency
(0-``frequency_weight``: ln(1 + uses) / ln(1 + ``frequency_saturation``), capped;
uses = retrieved + 2 cited - ignored, at least 0) + ``anchor_weight`` for an
anchor + relevance to the query (0-``relevance_weight``; 0 outside a recall).

The layer (003 §2, §6): hot while the last access is less than ``hot_days`` ago,
warm until ``warm_days``, cold after; a priority above ``priority_hot`` keeps a
memory hot and one above ``priority_cold`` keeps it warm at least; an anchor never
goes cold. Anchors (003 §7): memories of importance 1 ("always worth keeping") or
tagged "anchor".

What recall serves (001's levels as 003's contents): a hot memory its content, a
warm one its summary, a cold one its compressed form (made by the consolidation
pass that placed it there). An episode serves its summary
when hot or warm and its headline when cold; a raw turn of a warm episode serves
its key point, of a cold one its compressed form. Raw turns are never changed:
when the query's words that matched a turn or memory are missing from what it
would serve, recall unpacks it (serves it whole) and its episode (or the memory)
moves back to hot (:func:`unpack`).
"""

from __future__ import annotations

import math

from .._core import tokenize
from ..config import LifecyclePolicy
from ..results import ScoreTerm
from .core import StoreCore
from .schema import MemoryRow, TurnRow
from .scoring import DAY

__all__ = [
    "TIERS",
    "is_anchor",
    "uses",
    "last_access",
    "priority_terms",
    "priority",
    "placement",
    "served_memory",
    "served_turn",
    "missing",
    "holds_any",
    "unpack",
]

TIERS = ("hot", "warm", "cold")
#: A cold turn serves at most this many of its key words (fillers kept: a
#: question may ask what someone loves or likes).
COLD_WORDS = 48


def is_anchor(memory: MemoryRow) -> bool:
    return memory.is_anchor or memory.importance >= 1 or "anchor" in memory.tags


def uses(memory: MemoryRow) -> int:
    return max(0, memory.retrieved + 2 * memory.cited - memory.ignored)


def last_access(memory: MemoryRow) -> float:
    """When the memory was last seen (said, merged) or served."""
    return max(memory.last_seen, memory.last_accessed or memory.last_seen)


def _terms(memory: MemoryRow, now: float, policy: LifecyclePolicy, relevance: float) -> tuple[float, ...]:
    """003's four terms of ``memory``'s priority at ``now``, each in 0..1: recency,
    frequency, anchor, relevance (the order of :func:`priority_terms`)."""
    age = max(0.0, (now - last_access(memory)) / DAY)
    return (
        0.5 ** (age / policy.recency_half_life_days),
        min(1.0, math.log1p(uses(memory)) / math.log1p(policy.frequency_saturation)),
        1.0 if is_anchor(memory) else 0.0,
        min(1.0, max(0.0, relevance)),
    )


def _weights(policy: LifecyclePolicy) -> tuple[float, ...]:
    return (policy.recency_weight, policy.frequency_weight, policy.anchor_weight, policy.relevance_weight)


def priority_terms(memory: MemoryRow, now: float, policy: LifecyclePolicy, relevance: float = 0.0) -> list[ScoreTerm]:
    values = _terms(memory, now, policy, relevance)
    return [
        ScoreTerm(name, weight, value, weight * value)
        for name, weight, value in zip(("recency", "frequency", "anchor", "relevance"), _weights(policy), values)
    ]


def priority(memory: MemoryRow, now: float, policy: LifecyclePolicy, relevance: float = 0.0) -> float:
    """The sum of :func:`priority_terms`' contributions."""
    return sum(weight * value for weight, value in zip(_weights(policy), _terms(memory, now, policy, relevance)))


def placement(memory: MemoryRow, now: float, policy: LifecyclePolicy) -> tuple[str, float, str]:
    """The layer ``memory`` belongs in at ``now``, its priority, and why."""
    value = priority(memory, now, policy)
    age = max(0.0, (now - last_access(memory)) / DAY)
    if value > policy.priority_hot:
        return "hot", value, f"priority {value:.2f} > {policy.priority_hot:g}"
    if age < policy.hot_days:
        return "hot", value, f"last access {age:.1f} days ago (< {policy.hot_days:g})"
    if age < policy.warm_days:
        return "warm", value, f"last access {age:.1f} days ago ({policy.hot_days:g} to {policy.warm_days:g})"
    if value > policy.priority_cold:
        return "warm", value, f"priority {value:.2f} > {policy.priority_cold:g} keeps it warm"
    if is_anchor(memory):
        return "warm", value, "an anchor never goes cold"
    return "cold", value, f"last access {age:.1f} days ago (>= {policy.warm_days:g})"


def served_memory(lt: StoreCore, memory: MemoryRow) -> str:
    """What recall serves of ``memory`` in its layer. A consolidation pass makes a
    warm or cold memory's summary and compressed forms; one changed since (its forms
    dropped with its old text) has them made here, the first time it is served so."""
    from . import compress

    if memory.id in lt._episodes:
        if memory.tier == "cold":
            return memory.content
        return memory.summary or memory.content
    if memory.tier == "hot":
        return memory.content
    if not memory.summary:
        made = compress.levels(memory.content, sentences=lt.lifecycle.summary_sentences)
        memory.summary, memory.compressed, memory.index_text = made.summary, made.compressed, made.index
        lt._touch(memory)
    if memory.tier == "warm":
        return memory.summary or memory.content
    return memory.compressed or memory.summary or memory.content


def served_turn(turn: TurnRow, tier: str) -> str:
    """What recall serves of a raw turn whose episode is in ``tier``."""
    from . import compress

    if tier == "warm":
        return compress.key_point(turn.text) or turn.text
    if tier == "cold":
        return compress.compress(turn.text, max_words=COLD_WORDS, fillers=True) or turn.text
    return turn.text


def missing(full: str, served: str, matched: list[str]) -> list[str]:
    """The query's ``matched`` words that ``full`` holds and ``served`` does not."""
    if not matched or served == full:
        return []
    wanted = set(matched) & set(tokenize(full, stem=True))
    if not wanted:
        return []
    kept = set(tokenize(served, stem=True))
    return sorted(wanted - kept)


def holds_any(served: str, matched: list[str]) -> bool:
    """Whether ``served`` holds any of the query's ``matched`` words (stemmed)."""
    return not set(matched).isdisjoint(tokenize(served, stem=True))


def unpack(lt: StoreCore, memory: MemoryRow, now: float, words: list[str], what: str) -> None:
    """Moves ``memory`` (an episode or a memory recall unpacked) back to hot:
    last access now, priority updated, the move in its history."""
    before = memory.tier
    memory.tier = "hot"
    memory.last_accessed = max(memory.last_accessed or 0.0, now)
    memory.priority = priority(memory, now, lt.lifecycle)
    lt._touch(memory)
    shown = ", ".join(repr(w) for w in words[:5])
    lt._act(memory.id, now, "unpacked", f"{before} -> hot: matched {shown} only in {what}")
