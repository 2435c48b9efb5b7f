"""Recall: memories and raw turns relevant to a query, best first.

The lexical channel (and the dense one, with embeddings on) are fused in Rust;
recency, importance and usage are added; what was valid at ``at`` is kept; a turn's
hit folds into the hit of a memory that points to it. A turn stating a value that a
correction superseded by then (one of its memories matching the query) ranks right
after the memory holding the value now, which takes the turn's score if it had
less, and is noted "superseded by #N"; a memory whose TTL marked it stale is
noted "stale since <date>: its TTL expired". Session documents (a turn's session
matching too) live in an index of their own, so they never change how turns and
memories score. Embeddings are never computed in ``add_turn``: new texts are
embedded in one batch at the next ``recall`` (or ``flush``), and their vectors kept
in the store."""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
import time
from collections.abc import Iterable, Sequence

from .._core import VectorIndex, fuse
from ..checks import unix_time as _time
from ..errors import InvalidInputError
from ..results import ChannelScore, Recall, RecallHit, Turn
from . import checks, documents, layers, memories, ttl_rules
from .core import StoreCore
from .schema import KINDS, MAX_DEPTH, MemoryRow, memory_key, parse_key, turn_key
from .scoring import age_days
from .scoring import recency as recency_of
from .scoring import usage as usage_of

#: An episode hit lists at most this many of its raw turns that matched the query.
EPISODE_TURNS = 5

__all__ = ["Scored", "recall", "session_scores", "successor_of", "aggregate", "embed_pending", "item_text"]


@dataclasses.dataclass(slots=True)
class Scored:
    """One turn's or memory's hit while a recall ranks them (``absorbed``: the turn
    hits folded into a memory's)."""

    key: str
    score: float
    channels: list[ChannelScore]
    matched: list[str]
    recency: float
    importance: float
    usage: float
    absorbed: list[int] = dataclasses.field(default_factory=list)


def recall(
    lt: StoreCore,
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
    lt._check_open()
    text = checks.text("query", query, max_chars=100_000)
    k = checks.count("k", k)
    session = checks.redacted(checks.optional_text("session_id", session_id))
    allowed: set[str] | None = None
    if kinds is not None:
        if isinstance(kinds, str) or not isinstance(kinds, Iterable):
            raise InvalidInputError(f"kinds must be a sequence of kinds, got {checks.short(kinds)}")
        allowed = {checks.choice("a kind", kind, (*KINDS, "turn")) for kind in kinds}
    when = None if at is None else _time("at", at)
    lt._load()
    now = lt.clock() if when is None else when
    policy = lt.policy
    notes = [] if lt._embedder_factory is not None else [lt.dense_note] if lt.dense_note else []
    if not lt._turns and not lt._memories:
        return Recall(text, when, [], [], "nothing stored yet: no turns or memories", notes)
    pool = max(100, 10 * k)
    # Session documents share the lexical index: bring them up to date before any
    # search, so every recall (a process's first, or a server's hundredth) scores
    # with the same corpus statistics.
    lt._refresh_sessions()
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
        lt._refresh_sessions()
    if lt._embedder_factory is not None:
        embed_pending(lt)
    lexical = lt._lexical.search(
        text,
        pool,
        kinds=("turn", "memory"),
        field_weights=weights,
        k1=lt.retrieval.bm25_k1,
        b=lt.retrieval.bm25_b,
    )
    matched = {key: terms for key, _score, terms in lexical}
    channels = [("lexical", lt.retrieval.lexical_weight, [(key, score) for key, score, _ in lexical])]
    used = ["lexical"]
    if lt._embedder_factory is not None:
        if lt._vectors is not None and len(lt._vectors):
            if lt._embedder is None:  # every item was embedded before this process
                lt._embedder = lt._embedder_factory()
            vector = lt._embedder.embed([text])[0]
            if vector is not None:
                dense = [
                    (key, float(sim))
                    for key, sim in lt._vectors.search(vector, pool)
                    if sim >= lt.retrieval.dense_min_similarity
                ]
                channels.append(("dense", lt.retrieval.dense_weight, dense))
                used.append("dense")
    fused = fuse(channels, lt.retrieval.normalization)
    sessions = session_scores(lt, text)
    scored: dict[str, Scored] = {}
    replaced: dict[int, float] = {}  # superseded memories the query matches -> fused score

    def terms(memory: MemoryRow) -> tuple[float, float, float]:
        return (
            recency_of(age_days(min(memory.last_seen, now), now), policy),
            float(memory.importance),
            usage_of(memory.cited, memory.ignored),
        )

    by_served = lt.lifecycle.recall_finds_by == "served" and when is None

    def unseen(served: str, key: str) -> bool:
        """Whether what a warm or cold item serves holds none of the query's words it
        matched (``[lifecycle] recall_finds_by = "served"``: not found; a hit of the
        dense channel alone is found by its vector, kept at every layer)."""
        words = matched.get(key, [])
        return bool(words) and not layers.holds_any(served, words)

    for key, value, parts in fused:
        kind, item = parse_key(key)
        channel_scores = [ChannelScore(name, raw, norm, weight) for name, raw, norm, weight in parts]
        if kind == "turn":
            turn = lt._turns.get(item)
            if turn is None or (session is not None and turn.session_id != session):
                continue
            if when is not None and turn.at > when:
                continue
            if by_served:
                episode = lt._memories.get(lt._episode_of.get(item, 0))
                tier = "hot" if episode is None else episode.tier
                if tier != "hot" and unseen(layers.served_turn(turn, tier), key):
                    continue
            recency = recency_of(age_days(turn.at, now), policy)
            importance = usage = 0.0
            if turn.session_id in sessions:
                raw, share = sessions[turn.session_id]
                channel_scores.append(ChannelScore("session", raw, share, policy.recall_session_weight))
                value += share * policy.recall_session_weight
        else:
            memory = lt._memories.get(item)
            if memory is None:
                continue
            if memory.superseded_by is not None:
                replaced[item] = value
            if memory.status == "pending" or (when is None and memory.status != "active"):
                continue
            if when is not None and not memory.valid_at(when):
                continue
            if allowed is not None and memory.kind not in allowed:
                continue
            if allowed is None and item in lt._episodes and lt._episodes[item].origin == "conversation":
                continue  # reached through its turns, each served in its layer (kinds=["episode"] lists it)
            if by_served and memory.tier != "hot" and item not in lt._episodes:
                if unseen(layers.served_memory(lt, memory), key):
                    continue
            recency, importance, usage = terms(memory)
        recency *= policy.recall_recency_weight
        importance *= policy.recall_importance_weight
        usage *= policy.recall_usage_weight
        scored[key] = Scored(
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
    stale = {turn_key(t) for m in replaced for t in lt._sources.get(m, ()) if turn_key(t) in scored}
    for entry in sorted((scored[key] for key in stale), key=lambda s: (-s.score, s.key)):
        item = parse_key(entry.key)[1]
        linked = lt._memories_of[item]
        said = sorted((m for m in linked if m in replaced), key=lambda m: (-replaced[m], m))
        successor = next((s for s in (successor_of(lt, lt._memories[m], when) for m in said) if s is not None), None)
        if successor is None or successor.id in linked:  # the turn says the new value too
            continue
        corrected[item] = f"superseded by #{successor.id}"
        target: Scored | None
        if allowed is None or successor.kind in allowed:
            target = scored.get(memory_key(successor.id))
            if target is None:
                recency, importance, usage = terms(successor)
                target = scored[memory_key(successor.id)] = Scored(
                    memory_key(successor.id),
                    entry.score,
                    entry.channels,
                    list(entry.matched),
                    recency * policy.recall_recency_weight,
                    importance * policy.recall_importance_weight,
                    usage * policy.recall_usage_weight,
                )
        else:  # memories of its kind are not asked for: the turns that say it
            saying = [scored[turn_key(t)] for t in lt._sources.get(successor.id, {}) if turn_key(t) in scored]
            target = max(saying, key=lambda s: (s.score, s.key), default=None)
        if target is None:
            continue
        if entry.score > target.score:
            target.score, target.channels = entry.score, entry.channels
            target.matched = entry.matched or target.matched
        entry.score = min(entry.score, math.nextafter(target.score, -math.inf))
    hits = aggregate(lt, scored, allowed, {turn_key(t) for t in corrected})
    if not hits:
        reason = (
            "no stored turn or memory shares a word with the query"
            if not lexical
            else "nothing matching was valid at that time or in that session"
        )
        return Recall(text, when, [], used, reason, notes)
    out: list[RecallHit] = []
    served_at = lt.clock()
    unpacked: set[int] = set()

    def serve(turn_id: int) -> tuple[Turn, str]:
        """A raw turn as its episode's layer serves it (unpacked when the matched
        words are only in the raw text), and that layer."""
        turn = lt._turns[turn_id]
        episode = lt._memories.get(lt._episode_of.get(turn_id, 0))
        if episode is None or episode.tier == "hot" or when is not None:
            return turn.result(), "hot"
        text = layers.served_turn(turn, episode.tier)
        said = documents.unaddressed_text(lt, turn)  # "Thanks, Caroline!" is not about Caroline
        words = layers.missing(said, text, list(matched.get(turn_key(turn_id), ())))
        if words:
            unpacked.add(episode.id)
            layers.unpack(lt, episode, served_at, words, f"raw turn {turn_id}")
            return turn.result(), "hot"
        return dataclasses.replace(turn.result(), text=text), episode.tier

    for entry in hits[:k]:
        kind, item = parse_key(entry.key)
        if kind == "turn":
            before = lt._memories.get(lt._episode_of.get(item, 0))
            served, tier = serve(item)
            out.append(
                RecallHit(
                    "turn",
                    item,
                    served.text,
                    entry.score,
                    entry.channels,
                    entry.matched,
                    entry.recency,
                    entry.importance,
                    entry.usage,
                    [served],
                    [corrected[item]] if item in corrected else [],
                    tier,
                    before is not None and before.id in unpacked,
                )
            )
            continue
        memory = lt._memories[item]
        memory.retrieved += 1
        memory.last_accessed = served_at
        lt._touch(memory)
        if item in lt._episodes:  # an episode lists its raw turns that matched
            sources = [t for t in lt._episode_turns.get(item, ()) if turn_key(t) in matched][:EPISODE_TURNS]
        else:
            sources = sorted(lt._sources.get(item, {}), key=lambda t: (t not in entry.absorbed, t))
        turns = [serve(t)[0] for t in sources if t in lt._turns]
        content = memory.content if when is not None else layers.served_memory(lt, memory)
        if item not in lt._episodes:
            words = layers.missing(memory.content, content, list(matched.get(entry.key, ())))
            if words:
                layers.unpack(lt, memory, served_at, words, "its full content")
                unpacked.add(item)
                content = memory.content
        out.append(
            RecallHit(
                memory.kind,
                item,
                content,
                entry.score,
                entry.channels,
                entry.matched,
                entry.recency,
                entry.importance,
                entry.usage,
                turns,
                ttl_rules.notes_of(memory) if when is None or (memory.stale_since or math.inf) <= when else [],
                memory.tier if when is None else "hot",
                item in unpacked,
            )
        )
    return Recall(text, when, out, used, "", notes)


def session_scores(lt: StoreCore, text: str) -> dict[str, tuple[float, float]]:
    """Session id -> (BM25 score of its session document, that score over the
    best session's). ``recall`` brings the session documents up to date first."""
    if lt.policy.recall_session_weight <= 0:
        return {}
    found = lt._session_lexical.search(text, 100, kinds=("session",), k1=lt.retrieval.bm25_k1, b=lt.retrieval.bm25_b)
    best = max((score for _key, score, _terms in found), default=0.0)
    if best <= 0:
        return {}
    return {key[1:]: (score, score / best) for key, score, _terms in found}


def successor_of(lt: StoreCore, memory: MemoryRow, when: float | None) -> MemoryRow | None:
    """The memory holding ``memory``'s slot at ``when`` (None: now) when a
    correction superseded ``memory`` by then, else None."""
    current = memory
    for _ in range(MAX_DEPTH):
        if current.superseded_by is None:
            break
        if when is None and current.status == "active":
            break
        if when is not None and (current.valid_until is None or current.valid_until > when):
            break
        following = lt._memories.get(current.superseded_by)
        if following is None:
            return None
        current = following
    if current is memory:
        return None
    valid = current.status == "active" if when is None else current.valid_at(when)
    return current if valid else None


def aggregate(
    lt: StoreCore, scored: dict[str, Scored], allowed: set[str] | None, corrected: set[str] | None = None
) -> list[Scored]:
    """A turn's hit folds into the best memory hit that points to it (the memory's
    score becomes the higher of the two, and it lists the turn first), except
    the ``corrected`` turns (a correction superseded what they say); the rest
    are listed as they are, best first."""
    ranked = sorted(scored.values(), key=lambda s: (-s.score, s.key))
    out: list[Scored] = []
    for entry in ranked:
        kind, item = parse_key(entry.key)
        if kind == "memory":
            out.append(entry)
            continue
        linked = () if corrected is not None and entry.key in corrected else lt._memories_of.get(item, ())
        owners = [scored[memory_key(m)] for m in linked if memory_key(m) in scored]
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


def embed_pending(lt: StoreCore) -> None:
    from . import contradictions

    if not lt._unembedded or lt._embedder_factory is None:
        return
    if lt._embedder is None:
        lt._embedder = lt._embedder_factory()
    keys = sorted(lt._unembedded)
    texts = [item_text(lt, k) for k in keys]
    vectors = lt._embedder.embed(texts)
    if lt._vectors is None:
        lt._vectors = VectorIndex(vectors.shape[1])
    lt._vectors.upsert(keys, vectors)
    for key, row in zip(keys, vectors):
        lt._new_vectors[key] = row.tolist()
    lt._unembedded.clear()
    now = lt.clock()
    # the judge is waited for as at one write, however many memories were embedded
    judge_until = time.monotonic() + lt.decisions.judge_scan_seconds
    for key, row in zip(keys, vectors):
        if key[0] == "m":
            memories.merge_near_duplicate(lt, int(key[1:]), row)
            memory = lt._memories.get(int(key[1:]))
            if memory is not None:  # its nearest by meaning, now that it has a vector
                contradictions.scan(lt, memory, now, vector=row, judge_until=judge_until)


def item_text(lt: StoreCore, key: str) -> str:
    kind, item = parse_key(key)
    if kind == "turn":
        turn = lt._turns[item]
        return f"{turn.speaker}: {turn.text}" if turn.speaker else turn.text
    return lt._memories[item].content
