"""Memories and their links: ``remember``, the merge of a candidate into a memory
that says the same (same slot and value, or enough words in common, or, once
embedded, a near vector), the slot a memory holds (a new value supersedes the old
memory: it gets ``valid_until``, ``superseded_by``, status archived; nothing is
deleted), ``update``, ``promote``, the hierarchy (``subtree``, ``facts``), the
listings and ``explain``."""

from __future__ import annotations

import datetime as dt
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from ..checks import unix_time as _time
from ..errors import InvalidInputError, UnknownMemoryError
from ..redact import pii_tags, redact
from ..results import (
    Episode,
    Extracted,
    MemoryAction,
    MemoryEdge,
    MemoryExplanation,
    MemoryLink,
    MemoryList,
    MemoryRecord,
    Remembered,
)
from . import checks, documents, layers, ttl_rules
from .core import StoreCore
from .extract import Candidate, extract, jaccard, normalize, token_set
from .schema import EPISODE_LINK, KINDS, LAYERS, LEVELS, MAX_DEPTH, SCOPES, STATUSES, MemoryRow, TurnRow
from .scoring import age_days, gc_outlook, score_terms
from .scoring import score as score_of

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "mergeable",
    "remember",
    "similar",
    "ingest",
    "create",
    "merge",
    "archive",
    "record",
    "get",
    "update",
    "matching",
    "listed",
    "facts",
    "subtree",
    "promote",
    "explain",
    "merge_near_duplicate",
    "absorb",
]


def mergeable(
    lt: StoreCore,
    memory: MemoryRow,
    kind: str,
    slot: tuple[str, str] | None,
    value: str | None,
    content: str | None = None,
) -> bool:
    """Whether a memory may absorb another of ``kind``, ``slot`` and ``value``: it is
    active, of that kind, its slot does not hold something else, and (given the
    other's ``content``) the two do not contradict each other."""
    from . import contradict

    if memory.status != "active" or memory.kind != kind:
        return False
    if memory.slot is not None and slot is not None and memory.slot != slot:
        return False
    if memory.slot is not None and memory.slot == slot and memory.slot_value != value:
        return False
    return content is None or contradict.detect(memory.content, content, settings=lt.contradiction_rules) is None


def remember(
    lt: StoreCore,
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
    lt._check_open()
    raw = checks.text("content", content)
    kind = checks.choice("kind", kind, KINDS)
    if isinstance(importance, bool) or importance not in (0, 1):
        raise InvalidInputError(f"importance must be 0 or 1, got {checks.short(importance)}")
    tag_list = checks.tags(tags)
    domain = checks.redacted(checks.optional_text("domain", domain))
    module = checks.redacted(checks.optional_text("module", module))
    code_ref = checks.redacted(checks.optional_text("code_ref", code_ref))
    if level is None:
        level = "L3" if code_ref else "L2" if module else "L1" if domain else "L0"
    level = checks.choice("level", level, LEVELS)
    scope = checks.choice("scope", scope, SCOPES)
    when = lt.clock() if at is None else _time("at", at)
    lt._load()
    if parent_id is not None and checks.positive_id("parent_id", parent_id) not in lt._memories:
        raise UnknownMemoryError(f"no memory {parent_id} (parent_id)")
    clean = redact(raw)
    slot, value, rules = None, None, ["remember"]
    found = extract(clean, role="user", policy=lt.policy)
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
    done = ingest(
        lt,
        candidate,
        turn=None,
        at=when,
        tags=pii_tags(raw),
        fields={"level": level, "domain": domain, "module": module, "code_ref": code_ref, "scope": scope},
        parent_id=parent_id,
        source="remember",
    )
    lt._commit()
    return Remembered(done.memory_id, done.action, done.superseded)


MERGE_WINDOW = 10  # the merge-check index's best this many are the merge candidates


def nearest(lt: StoreCore, content: str) -> list[str]:
    """The keys of the active memories nearest ``content`` in the merge-check index:
    enough for the merge check and the contradiction scan, one search for both."""
    wanted = max(MERGE_WINDOW, lt.decisions.scan_neighbours + 1)
    return [key for key, _score, _terms in lt._dedup.search(content, wanted)]


def similar(lt: StoreCore, candidate: Candidate, near: Sequence[str] | None = None) -> int | None:
    """The active memory of the same kind this candidate merges into, if any:
    same slot and value, or no conflicting slot and Jaccard >= merge_jaccard, and
    no contradiction between them. ``near``: the :func:`nearest` keys, if known."""
    from . import contradict

    tokens = token_set(candidate.content)
    if not tokens:
        return None
    best, best_sim = None, 0.0
    for key in (nearest(lt, candidate.content) if near is None else near)[:MERGE_WINDOW]:
        memory = lt._memories.get(int(key[1:]))
        if memory is None or not mergeable(lt, memory, candidate.kind, candidate.slot, candidate.value):
            continue
        similarity = jaccard(tokens, token_set(memory.content))
        if similarity < lt.policy.merge_jaccard or similarity <= best_sim:
            continue
        if contradict.detect(memory.content, candidate.content, settings=lt.contradiction_rules) is None:
            best, best_sim = memory.id, similarity
    return best


def ingest(
    lt: StoreCore,
    candidate: Candidate,
    *,
    turn: TurnRow | None,
    at: float,
    tags: Sequence[str] = (),
    fields: Mapping[str, Any] | None = None,
    parent_id: int | None = None,
    source: str = "extracted",
) -> Extracted:
    from . import contradictions

    # a memory from a user-private turn is user-private too; none merges across scopes
    scope = (fields or {}).get("scope") or (turn.scope if turn is not None else None) or "project-shared"
    fields = {**(fields or {}), "scope": scope}
    rules = sorted(set(candidate.rules))
    superseded: MemoryRow | None = None
    if candidate.slot is not None:
        current_id = lt._slots.get(candidate.slot)
        current = lt._memories.get(current_id) if current_id is not None else None
        if current is not None and current.status == "active" and current.scope == scope:
            if normalize(current.slot_value or "") == normalize(candidate.value or ""):
                return merge(lt, current, candidate, turn, at, rules)
            superseded = current
    near = nearest(lt, candidate.content)
    if superseded is None:
        target = similar(lt, candidate, near)
        if target is not None and lt._memories[target].scope == scope:
            return merge(lt, lt._memories[target], candidate, turn, at, rules)
    memory = create(
        lt,
        candidate.content,
        kind=candidate.kind,
        at=at,
        source=source,
        importance=candidate.importance,
        tags=sorted({*candidate.tags, *tags, *(["pii"] if tags else [])}),
        rules=rules,
        slot=candidate.slot,
        value=candidate.value,
        parent_id=parent_id,
        fields=fields,
        turn=None if turn is None else (turn.id, "conflict" if superseded is not None else "extracted"),
    )
    now = memory.created_at
    if candidate.slot is not None:
        lt._slots[candidate.slot] = memory.id
    if superseded is not None:
        contradictions.slot_conflict(lt, superseded, memory, now)
        contradictions.supersede(lt, superseded, memory, now, repr(candidate.value), repr(superseded.slot_value))
    corrected = contradictions.scan(lt, memory, now, near=near)
    if superseded is None and corrected:
        superseded = lt._memories[corrected[0]]
    if superseded is not None:
        return Extracted("superseded", memory.id, memory.content, memory.kind, rules, superseded.id)
    return Extracted("created", memory.id, memory.content, memory.kind, rules)


def create(
    lt: StoreCore,
    content: str,
    *,
    kind: str,
    at: float,
    source: str,
    status: str = "active",
    importance: int = 0,
    tags: Sequence[str] = (),
    rules: Sequence[str] = (),
    slot: tuple[str, str] | None = None,
    value: str | None = None,
    parent_id: int | None = None,
    confidence: float = 1.0,
    fields: Mapping[str, Any] | None = None,
    turn: tuple[int, str] | None = None,
) -> MemoryRow:
    """The one place a memory is made: a new row (valid from ``at``) with its
    default TTL, score, parent edge, link to the turn it came from (``turn``: its
    id and the reason), documents and "created" log entry. Merges, slots and the
    contradiction scan are the caller's."""
    now = lt.clock()
    memory = MemoryRow(
        id=lt._next_memory,
        kind=kind,
        content=content,
        created_at=now,
        valid_from=at,
        last_seen=at,
        importance=importance,
        tags=list(tags),
        source=source,
        status=status,
        confidence=confidence,
        parent_id=parent_id,
        rules=list(rules),
        slot_subject=slot[0] if slot else None,
        slot_attribute=slot[1] if slot else None,
        slot_value=value,
        owner=lt.user,
        **(fields or {}),
    )
    lt._next_memory += 1
    ttl_rules.apply_default(memory, lt.lifecycle)
    memory.score = score_of(0, age_days(at, now), memory.importance, lt.policy)
    lt._memories[memory.id] = memory
    if parent_id is not None:
        lt._children[parent_id].add(memory.id)
        lt._edge(memory.id, parent_id, "parent", now)
    if turn is not None:
        lt._link(memory.id, turn[0], turn[1], now)
    lt._index_memory(memory)
    lt._touch(memory)
    lt._act(memory.id, now, "created", f"{source}; rules {', '.join(rules)}" if rules else source)
    return memory


def merge(
    lt: StoreCore, memory: MemoryRow, candidate: Candidate, turn: TurnRow | None, at: float, rules: list[str]
) -> Extracted:
    now = lt.clock()
    memory.hits += 1
    memory.last_seen = max(memory.last_seen, at)
    memory.importance = max(memory.importance, candidate.importance)
    memory.rules = sorted({*memory.rules, *rules})
    if turn is not None:
        before = documents.speakers(lt, memory.id)
        lt._link(memory.id, turn.id, "merged", now)
        if documents.speakers(lt, memory.id) != before:  # the document names its speakers
            lt._lexical.upsert([documents.memory_document(lt, memory)])
    lt._touch(memory)
    lt._act(memory.id, now, "merged", f"turn {turn.id}" if turn is not None else "remember")
    return Extracted("merged", memory.id, memory.content, memory.kind, rules)


def archive(lt: StoreCore, memory: MemoryRow, at: float, why: str) -> None:
    if memory.status == "archived":
        return
    memory.status = "archived"
    lt._track_active(memory)
    if memory.slot is not None and lt._slots.get(memory.slot) == memory.id:
        del lt._slots[memory.slot]
    lt._touch(memory)
    lt._act(memory.id, at, "archived", why)


def record(lt: StoreCore, memory: MemoryRow, now: float | None = None) -> MemoryRecord:
    now = lt.clock() if now is None else now
    live = score_of(memory.hits, age_days(memory.last_seen, now), memory.importance, lt.policy)
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
        tier=memory.tier,
        priority=memory.priority,
        is_anchor=memory.is_anchor,
        last_accessed=memory.last_accessed,
        summary=memory.summary,
        compressed=memory.compressed,
        index_text=memory.index_text,
        ttl_seconds=memory.ttl_seconds,
        ttl_refresh=memory.ttl_refresh,
        ttl_on_expire=memory.ttl_on_expire,
        ttl_from=memory.ttl_from,
        stale_since=memory.stale_since,
    )


def get(lt: StoreCore, memory_id: int) -> MemoryRecord:
    lt._check_open()
    return record(lt, lt._get(memory_id))


def update(
    lt: StoreCore,
    memory_id: int,
    *,
    content: str | None = None,
    tags: Sequence[str] | None = None,
    status: str | None = None,
) -> MemoryRecord:
    """Changes a memory's content (redacted, re-indexed; its summary, compressed
    and index forms dropped with the old text), tags or status
    (``active``/``archived``); each change is logged for ``explain``."""
    lt._check_open()
    memory = lt._get(memory_id)
    new_content = None if content is None else redact(checks.text("content", content)).strip()
    new_tags = None if tags is None else checks.tags(tags)
    new_status = None if status is None else checks.choice("status", status, STATUSES)
    now = lt.clock()
    if new_content is not None and new_content != memory.content:
        memory.content = new_content
        # its forms were of the old text: made again when next placed or served
        memory.summary = memory.compressed = memory.index_text = ""
        lt._act(memory.id, now, "updated", "content")
    if new_tags is not None and new_tags != memory.tags:
        memory.tags = new_tags
        lt._act(memory.id, now, "updated", f"tags {', '.join(new_tags)}")
    if new_status is not None and new_status != memory.status:
        if new_status == "archived":
            archive(lt, memory, now, "update")
        else:
            memory.status = "active"
            slot = memory.slot
            if slot is not None and memory.valid_until is None and slot not in lt._slots:
                lt._slots[slot] = memory.id
            lt._act(memory.id, now, "reactivated", "update")
    lt._index_memory(memory)
    lt._touch(memory)
    lt._commit()
    return record(lt, memory, now)


def matching(lt: StoreCore, text: str) -> list[int]:
    """Memories whose normalized content equals ``text``'s, else contains it."""
    wanted = normalize(text)
    if not wanted:
        return []
    equal = [m.id for m in lt._memories.values() if normalize(m.content) == wanted]
    if equal:
        return equal
    return [m.id for m in lt._memories.values() if wanted in normalize(m.content)]


def listed(
    lt: StoreCore,
    *,
    layer: str | None = None,
    status: str | None = "active",
    kind: str | None = None,
    limit: int = 50,
    sort: Literal["score", "recent", "id"] = "score",
) -> MemoryList:
    """Memories filtered by layer, status and kind, by live score (or most recent
    sighting, or id), at most ``limit``."""
    lt._check_open()
    if layer is not None:
        checks.choice("layer", layer, LAYERS)
    if status is not None:
        checks.choice("status", status, STATUSES)
    if kind is not None:
        checks.choice("kind", kind, KINDS)
    sort = checks.choice("sort", sort, ("score", "recent", "id"))  # type: ignore[assignment]
    limit = checks.count("limit", limit, 1_000_000)
    lt._load()
    now = lt.clock()
    chosen = [
        m
        for m in lt._memories.values()
        if (layer is None or m.layer == layer)
        and (status is None or m.status == status)
        and (kind is None or m.kind == kind)
    ]
    records = [record(lt, m, now) for m in chosen]
    if sort == "score":
        records.sort(key=lambda r: (-r.score, r.id))
    elif sort == "recent":
        records.sort(key=lambda r: (-r.last_seen, r.id))
    else:
        records.sort(key=lambda r: r.id)
    return MemoryList(records[:limit])


def active(lt: StoreCore) -> list[MemoryRow]:
    """The active memories as stored (no live score: see :func:`records`), by id."""
    lt._check_open()
    lt._load()
    return [m for m in lt._memories.values() if m.status == "active"]


def active_of(lt: StoreCore, memory_ids: Iterable[int]) -> dict[int, MemoryRow | None]:
    """Each of ``memory_ids`` -> its row as stored while it is active, else None."""
    lt._check_open()
    lt._load()
    found = {i: lt._memories.get(i) for i in memory_ids}
    return {i: m if m is not None and m.status == "active" else None for i, m in found.items()}


def records(lt: StoreCore, rows: Sequence[MemoryRow]) -> list[MemoryRecord]:
    """``rows`` as results, each with its score now."""
    now = lt.clock()
    return [record(lt, m, now) for m in rows]


def about(
    lt: StoreCore, paths: Sequence[str], *, kinds: Collection[str] | None = None, limit: int | None = None
) -> list[tuple[MemoryRecord, str]]:
    """Active memories (of ``kinds``, when given) about the files ``paths``: their
    ``code_ref`` is the file or a place in it (``path:Name``, ``path#L10-24``), or their ``module``
    is the file or the folder it is in; each with the first of ``paths`` it is
    about, in the order of ``paths``, then by stored score; the first ``limit``."""
    lt._check_open()
    if not paths:
        return []
    lt._load()
    places = _places(lt)
    found: dict[int, tuple[int, MemoryRow, str]] = {}
    for i, path in enumerate(paths):
        folder = path.rsplit("/", 1)[0] if "/" in path else None
        for memory_id in [*places.get(path, ()), *(places.get(folder, ()) if folder else ())]:
            m = lt._memories.get(memory_id)
            if m is None or m.status != "active" or memory_id in found or (kinds is not None and m.kind not in kinds):
                continue
            found[memory_id] = (i, m, path)
    ranked = sorted(found.values(), key=lambda f: (f[0], -f[1].score, f[1].id))[:limit]
    now = lt.clock()
    return [(record(lt, m, now), path) for _, m, path in ranked]


def said_by(lt: StoreCore, speaker: str, *, tags: Collection[str], limit: int) -> list[MemoryRecord]:
    """Active memories tagged with one of ``tags`` that come from a turn ``speaker``
    said (the turn's speaker, case and spacing aside), best stored score first; the
    first ``limit``."""
    lt._check_open()
    lt._load()
    who = " ".join(speaker.split()).casefold()
    wanted = set(tags)
    found = []
    for m in lt._memories.values():
        if m.status != "active" or not wanted.intersection(m.tags):
            continue
        turns = (lt._turns.get(t) for t in lt._sources.get(m.id, ()))
        if any(t is not None and " ".join((t.speaker or "").split()).casefold() == who for t in turns):
            found.append(m)
    found.sort(key=lambda m: (-m.score, m.id))
    now = lt.clock()
    return [record(lt, m, now) for m in found[:limit]]


def _places(lt: StoreCore) -> dict[str, set[int]]:
    """The memories of each file (their ``code_ref``'s) and module: those changed
    since the last call placed again (see :meth:`StoreCore.changes`), all of them
    when the store cannot name them."""
    log, changed = lt.changes(lt._places[0] if lt._places is not None else None)
    if lt._places is None or changed is None:
        places: dict[str, set[int]] = {}
        of: dict[int, tuple[str, ...]] = {}
        for m in lt._memories.values():
            if m.code_ref or m.module:
                of[m.id] = _places_of(m)
                for place in of[m.id]:
                    places.setdefault(place, set()).add(m.id)
    else:
        _, places, of = lt._places
        for memory_id in changed:
            for place in of.pop(memory_id, ()):
                places[place].discard(memory_id)
                if not places[place]:
                    del places[place]
            row = lt._memories.get(memory_id)
            if row is not None and (row.code_ref or row.module):
                of[memory_id] = _places_of(row)
                for place in of[memory_id]:
                    places.setdefault(place, set()).add(memory_id)
    lt._places = (log, places, of)
    return places


def _places_of(m: MemoryRow) -> tuple[str, ...]:
    where = (m.code_ref or "").split(":", 1)[0].split("#", 1)[0]  # path:Name, path#L1-9
    return tuple({where, m.module or ""} - {""})


def facts(lt: StoreCore, *, level: str | None = None, domain: str | None = None) -> MemoryList:
    """The hierarchy of facts: active memories at ``level`` (L0 project ... L3 code) and
    in ``domain``, by level then score."""
    lt._check_open()
    if level is not None:
        checks.choice("level", level, LEVELS)
    domain = checks.optional_text("domain", domain)
    lt._load()
    now = lt.clock()
    records = [
        record(lt, m, now)
        for m in lt._memories.values()
        if m.status == "active" and (level is None or m.level == level) and (domain is None or m.domain == domain)
    ]
    records.sort(key=lambda r: (r.level, -r.score, r.id))
    return MemoryList(records)


def subtree(lt: StoreCore, memory_id: int) -> MemoryList:
    """The memory and its descendants (children by ``parent_id``), breadth first."""
    lt._check_open()
    root = lt._get(memory_id)
    now = lt.clock()
    order, seen, frontier = [root.id], {root.id}, [root.id]
    for _depth in range(MAX_DEPTH):
        nxt = [c for parent in frontier for c in sorted(lt._children.get(parent, ())) if c not in seen]
        if not nxt:
            break
        seen.update(nxt)
        order += nxt
        frontier = nxt
    return MemoryList([record(lt, lt._memories[i], now) for i in order])


def promote(lt: StoreCore, memory_id: int, level: str) -> MemoryRecord:
    """Moves a memory to another level of the hierarchy (L0 project ... L3 code)."""
    lt._check_open()
    memory = lt._get(memory_id)
    level = checks.choice("level", level, LEVELS)
    now = lt.clock()
    if level != memory.level:
        lt._act(memory.id, now, "level", f"{memory.level} -> {level}")
        memory.level = level
        lt._reshape(memory.id)
        lt._touch(memory)
        lt._commit()
    return record(lt, memory, now)


def explain(lt: StoreCore, memory_id: int) -> MemoryExplanation:
    """Why a memory is where it is: hits, age, every score term, the rules, the source turns, related
    memories, the last actions, what gc would do and its TTL."""
    from . import chains, contradictions

    lt._check_open()
    memory = lt._get(memory_id)
    now = lt.clock()
    age = age_days(memory.last_seen, now)
    terms = score_terms(memory.hits, age, memory.importance, lt.policy)
    total = sum(t.contribution for t in terms)
    links = [
        MemoryLink(lt._turns[t].result(), reason)
        for t, reason in sorted(lt._sources.get(memory.id, {}).items())
        if t in lt._turns
    ]
    links += [
        MemoryLink(lt._turns[t].result(), EPISODE_LINK) for t in lt._episode_turns.get(memory.id, ()) if t in lt._turns
    ]
    tier, value, why = layers.placement(memory, now, lt.lifecycle)
    kept = lt._episodes.get(memory.id)
    episode = (
        None
        if kept is None
        else Episode(
            kept.session_id,
            kept.origin,
            kept.started_at,
            kept.ended_at,
            kept.headline,
            list(kept.key_points),
            list(kept.entities),
            list(kept.decisions),
            list(kept.questions),
            list(kept.files),
            kept.outcome,
        )
    )
    related = [
        MemoryEdge(relation, other, lt._memories[other].content)
        for relation, other in lt._edges.get(memory.id, [])
        if other in lt._memories
    ]
    for source, edges in lt._edges.items():
        for relation, other in edges:
            if other == memory.id and source in lt._memories:
                inverse = {"supersedes": "superseded_by", "parent": "child", "merged_into": "merged_from"}.get(
                    relation, relation
                )
                related.append(MemoryEdge(inverse, source, lt._memories[source].content))
    outlook = gc_outlook(memory.layer, memory.status, memory.hits, age, total, lt.policy)
    return MemoryExplanation(
        record(lt, memory, now),
        age,
        total,
        terms,
        list(memory.rules),
        links,
        related,
        [MemoryAction(*a) for a in lt._actions.get(memory.id, [])[-20:]],
        outlook,
        ttl_rules.outlook(memory, now),
        f"{memory.tier} now; belongs in {tier} ({why}; priority {value:.3f})",
        layers.priority_terms(memory, now, lt.lifecycle),
        episode,
        contradictions.about(lt, [memory.id]),
        chains.of_decision(lt, memory.id),
    )


def merge_near_duplicate(lt: StoreCore, memory_id: int, vector: np.ndarray) -> None:
    """The cosine merge, applied once a memory is embedded (never in
    ``add_turn``): an older active memory of the same kind and no conflicting
    slot at least ``merge_cosine`` similar absorbs it (hits, turns; above
    ``duplicate_cosine`` it is called a duplicate); the newer
    one is archived with a ``merged_into`` edge, so it stays explainable. The
    older memory is looked for among the ``cosine_window`` nearest items (turns
    are in the same index, and a memory's own turns are near it)."""
    memory = lt._memories.get(memory_id)
    if memory is None or memory.status != "active" or lt._vectors is None:
        return
    for key, similarity in lt._vectors.search(vector, lt.policy.cosine_window):
        if similarity < lt.policy.merge_cosine:
            return
        if key[0] != "m" or int(key[1:]) >= memory_id:
            continue
        keep = lt._memories.get(int(key[1:]))
        if keep is None or not mergeable(lt, keep, memory.kind, memory.slot, memory.slot_value, memory.content):
            continue
        absorb(lt, keep, memory, f"(cosine {similarity:.3f})", duplicate=similarity > lt.policy.duplicate_cosine)
        return


def absorb(
    lt: StoreCore, keep: MemoryRow, memory: MemoryRow, measure: str, *, duplicate: bool, now: float | None = None
) -> None:
    """``memory`` merges into the older ``keep``: its hits and turns go to
    ``keep``, it is archived with a ``merged_into`` edge (so it stays
    explainable); ``measure`` says how similar they were."""
    now = lt.clock() if now is None else now
    keep.hits += 1 + memory.hits
    keep.last_seen = max(keep.last_seen, memory.last_seen)
    keep.importance = max(keep.importance, memory.importance)
    for turn_id in sorted(lt._sources.get(memory.id, {})):
        lt._link(keep.id, turn_id, "merged", now)
    lt._touch(keep)
    if duplicate:
        lt._act(keep.id, now, "merged", f"memory {memory.id}, a duplicate {measure}")
        archive(lt, memory, now, f"duplicate of memory {keep.id} {measure}")
    else:
        lt._act(keep.id, now, "merged", f"memory {memory.id} {measure}")
        archive(lt, memory, now, f"merged into memory {keep.id} {measure}")
    if memory.slot is not None and memory.slot not in lt._slots:
        lt._slots[memory.slot] = keep.id
    lt._edge(memory.id, keep.id, "merged_into", now)
    lt._lexical.upsert([documents.memory_document(lt, keep)])
