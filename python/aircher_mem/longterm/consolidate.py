"""Consolidation (seed 001 §3): one pass that lets memory age.

In order: with the dense channel on, the texts not embedded yet are embedded (the
turns' vectors join the topic-shift rule of :mod:`.episodes`); the turns not in an
episode yet become episodes (or extend their session's last one) and the agent's
completed tasks become episodes; similar facts merge (the cosine of their stemmed
content-word sets at least ``merge_similarity``:
:func:`aircher_mem._core.similar_pairs`; with the dense channel on, those at least
``[longterm] merge_cosine`` similar by embedding merge as they do at a recall, the
episodes just made embedded too); episodes older than
``summarize_after_days`` are formed (their summary, key points, entities, decisions
and open questions; their compressed and index forms with it: past
``compress_after_days`` they are counted compressed too), oldest first, in batches
made on every core, for at most ``consolidate_forms_seconds`` a pass (checked
between batches; the rest wait for the next: ``pending``); TTLs expire
(:mod:`.ttl`); superseded memories and memories never cited and unseen for
``forget_unused_days`` are forgotten (their rows, never their raw turns); every
contradiction found since the last pass is reported (each memory is checked when
stored, :mod:`.contradictions`; those stored before that check existed, and with a
judge every memory not checked by a pass yet, are checked here, for at most
``[decisions] consolidate_scan_seconds`` a pass); every memory is
placed in its layer by its priority and age (:mod:`.layers`: usage counts there),
and a memory placed warm or cold gets its summary, compressed and index forms (what
recall serves there) unless it has them; episodes sharing entities, and memories
about the same file, are linked. The rows are committed in one transaction.

Never forgotten: an anchor, a memory cited within ``keep_cited_days``, an
episode, a raw turn. ``dry_run`` reports what a pass would do and changes
nothing. Every step takes ``now``, so tests and replays can age a store.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import time
from collections.abc import Sequence

from .. import heap
from .._core import similar_pairs
from ..checks import unix_time
from ..plain import Plain
from ..results import ConsolidationAction, ConsolidationReport
from . import checks, compress, layers, memories, recall, ttl
from . import forget as _forget
from .core import StoreCore, using_db
from .schema import MemoryRow
from .scoring import DAY

__all__ = ["TaskRecord", "consolidate", "last_pass"]

#: The last pass's time, in the store's state (whole seconds).
LAST_PASS = "consolidated_at"
#: Episodes whose forms are made at a time, on every core (the pass's time for
#: forming is checked between batches).
FORM_BATCH = 64
# the memories stored before contradictions were checked at write: through this id;
# how far consolidation has checked them
UNSCANNED, SCANNED = "unscanned_through", "scanned_through"


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class TaskRecord(Plain):
    """A completed task of the agent's (from the episodic store) to keep as an episode."""

    task_id: str
    description: str
    outcome: str | None
    files: Sequence[str]
    notes: Sequence[str]
    started_at: float
    ended_at: float


def _last_cited(lt: StoreCore, memory_id: int) -> float | None:
    return max((a.at for a in lt._actions.get(memory_id, ()) if a.action == "cited"), default=None)


@using_db
def consolidate(
    lt: StoreCore, *, now: float | dt.datetime | None = None, dry_run: bool = False, tasks: Sequence[TaskRecord] = ()
) -> ConsolidationReport:
    """One consolidation pass at ``now`` (default: the clock); see the module
    documentation. ``tasks``: the agent's completed tasks, kept as episodes. Its
    rows are committed in one transaction at its end."""
    lt._check_open()
    lt._load()
    with heap.paused():  # a pass makes and drops objects by the hundred thousand
        with lt.holding():
            report, doomed, scanned = _pass(lt, now, dry_run, tasks)
        if not dry_run:
            lt._commit()
            if doomed:
                _forget.erase(lt, doomed)
            with lt._transaction("recording the consolidation", rows=False) as con:
                con.execute("INSERT OR REPLACE INTO longterm_state VALUES (?, ?)", [LAST_PASS, int(report.now)])
                con.execute("INSERT OR REPLACE INTO longterm_state VALUES (?, ?)", [SCANNED, scanned])
    return report


def _pass(
    lt: StoreCore, now: float | dt.datetime | None, dry_run: bool, tasks: Sequence[TaskRecord]
) -> tuple[ConsolidationReport, set[int], int]:
    """The pass in memory; its report, the memories to delete for good after its
    rows are committed (forgotten, or a TTL that deletes), and the id through which
    the memories stored before the check at write are checked now."""
    from . import contradictions, episodes

    checks.flag("dry_run", dry_run)
    when = lt.clock() if now is None else unix_time("now", now)
    lt._load()
    policy = lt.lifecycle
    state = dict(lt._state())
    last_pass = float(state.get(LAST_PASS, 0))
    actions: list[ConsolidationAction] = []

    def did(memory_id: int, action: str, reason: str) -> None:
        actions.append(ConsolidationAction(memory_id, action, reason))
        if not dry_run and action not in ("forgotten", "expired"):
            lt._act(memory_id, when, action, reason)

    # 0. with the dense channel on, the texts not embedded yet are (their vectors
    #    tell topic shifts apart; the episodes made from them are, in 2.), and the
    #    cosine merge of embedding (``[longterm] merge_cosine``) runs on them:
    #    reported with the merges in 2.
    embedding = lt._embedder_factory is not None and not dry_run
    before = {m.id for m in lt._memories.values() if m.status == "active"}
    if embedding:
        recall.embed_pending(lt)

    # 1. episodes
    created = extended = 0
    planned: list[tuple[float, int]] = []  # a dry run's episodes to form: (ended at, id or 0)
    unindexed: set[int] = set()  # episodes created or formed here, their documents not indexed yet
    touched: set[int] = set()  # episodes created or extended here (a dry run's are not)
    for plan in episodes.plan(lt):
        if plan.extend is not None:
            extended += 1
            episode_id, turns = plan.extend
            if not dry_run:
                episodes.extend(lt, episode_id, turns, when)
                touched.add(episode_id)
            else:
                planned.append((turns[-1].at, episode_id))
            actions.append(ConsolidationAction(episode_id, "extended", f"{len(turns)} more turns"))
        for turns, why in plan.create:
            created += 1
            if dry_run:
                planned.append((turns[-1].at, 0))
            reason = f"{len(turns)} turns of session {plan.session_id}" + (f" after a {why}" if why else "")
            memory_id = 0
            if not dry_run:  # indexed once formed, or after forming (below)
                memory_id = episodes.create(lt, plan.session_id, turns, why, when, indexed=False).id
                unindexed.add(memory_id)
                touched.add(memory_id)
            actions.append(ConsolidationAction(memory_id, "episode", reason))
    kept = {e.session_id for e in lt._episodes.values() if e.origin == "task"}
    for task in tasks:
        if episodes.task_session(task.task_id) in kept:
            continue
        kept.add(episodes.task_session(task.task_id))
        created += 1
        made = None
        if not dry_run:
            made = episodes.task_episode(
                lt,
                task.task_id,
                task.description,
                task.outcome,
                task.files,
                task.notes,
                task.started_at,
                task.ended_at,
                when,
            )
        actions.append(ConsolidationAction(made.id if made else 0, "episode", f"the agent's task {task.task_id}"))

    # 2. merge similar facts (001: facts; decisions and the rest keep their own wording):
    #    each into the older one most like it
    deduped = 0
    merged: set[int] = set()
    threshold = policy.merge_similarity
    if embedding:
        recall.embed_pending(lt)  # the episodes made above
        for memory_id in sorted(before):
            memory = lt._memories.get(memory_id)
            if memory is None or memory.status == "active":
                continue
            into = [other for relation, other in lt._edges.get(memory_id, ()) if relation == "merged_into"]
            if into:
                deduped += 1
                merged.add(memory_id)
                cosine = f"embedding cosine >= {lt.policy.merge_cosine:g}"
                actions.append(ConsolidationAction(memory_id, "merged", f"into memory {into[-1]} ({cosine})"))
    active = [m for m in lt._memories.values() if m.status == "active" and m.kind == "fact"]
    fresh = {m.id for m in active if m.created_at >= last_pass or m.last_seen >= last_pass}
    active.sort(key=lambda m: m.id)
    found = similar_pairs([m.content for m in active], [m.id in fresh for m in active], threshold)
    for later, earlier, similarity in found:
        memory, other = active[later], active[earlier]
        newer, older = memory.id, other.id
        if (
            newer in merged
            or older in merged
            or not memories.mergeable(lt, other, memory.kind, memory.slot, memory.slot_value, memory.content)
        ):
            continue
        deduped += 1
        merged.add(newer)
        reason = f"into memory {older} (similarity {similarity:.3f} >= {threshold:g})"
        actions.append(ConsolidationAction(newer, "merged", reason))
        if not dry_run:
            memories.absorb(lt, other, memory, f"(similarity {similarity:.3f})", duplicate=False, now=when)

    # 3. form episodes old enough (their summary at 7 days; the compressed forms come with it),
    #    oldest first, while the pass's time for it lasts
    summarized = compressed = pending = 0
    budget = time.perf_counter() + policy.consolidate_forms_seconds
    extending = {memory_id for _at, memory_id in planned}
    waiting = sorted(
        [(e.ended_at, i) for i, e in lt._episodes.items() if not e.formed and i in lt._memories and i not in extending]
        + planned
    )
    waiting = [(at, i) for at, i in waiting if (when - at) / DAY >= policy.summarize_after_days]
    for start in range(0, len(waiting), FORM_BATCH):
        if time.perf_counter() > budget:
            pending = len(waiting) - start
            break
        batch = waiting[start : start + FORM_BATCH]
        formed = episodes.forms_of(lt, [i for _at, i in batch]) if not dry_run else []
        for n, (ended_at, memory_id) in enumerate(batch):
            age = (when - ended_at) / DAY
            summarized += 1
            reason = f"{age:.0f} days old (>= {policy.summarize_after_days:g})"
            if age >= policy.compress_after_days:
                compressed += 1
                reason += f"; compressed too (>= {policy.compress_after_days:g})"
            if not dry_run:
                episodes.form(lt, memory_id, formed[n], indexed=False)
                unindexed.add(memory_id)
            did(memory_id, "summarized", reason)
    if unindexed:  # the episodes made or formed here, their documents in one call
        episodes.index(lt, sorted(unindexed))

    # 4. TTL
    expiries = ttl.expire(lt, when, dry_run=dry_run, commit=False)
    for expiry in expiries:
        actions.append(ConsolidationAction(expiry.memory_id, "expired", f"{expiry.action}: {expiry.reason}"))

    # 5. forget superseded and unused memories (never anchors, episodes, the recently cited, raw turns)
    doomed: dict[int, str] = {}
    keep_cited = policy.keep_cited_days * DAY
    for memory in lt._memories.values():
        if memory.id in lt._episodes or memory.id in merged or layers.is_anchor(memory):
            continue
        cited = _last_cited(lt, memory.id)
        if cited is not None and when - cited <= keep_cited:
            continue
        if memory.superseded_by is not None and memory.status == "archived":
            ended = memory.valid_until if memory.valid_until is not None else memory.last_seen
            if when - ended >= policy.keep_superseded_days * DAY:
                doomed[memory.id] = f"superseded by memory {memory.superseded_by}"
            continue
        unseen = (when - layers.last_access(memory)) / DAY
        if memory.status == "active" and memory.cited == 0 and unseen >= policy.forget_unused_days:
            doomed[memory.id] = f"never cited, unseen for {unseen:.0f} days (>= {policy.forget_unused_days:g})"
    for memory_id, reason in sorted(doomed.items()):
        actions.append(ConsolidationAction(memory_id, "forgotten", reason))

    # 6. contradictions: every memory is checked when stored; those stored before the
    #    check existed are checked here, oldest first, while the pass's time for it
    #    lasts, and with a judge every memory not checked here yet, by words and by
    #    meaning (a write waits judge_scan_seconds for the judge only); every
    #    contradiction found since the last pass is reported
    contradicted = 0
    unscanned = int(state.get(UNSCANNED, 0))
    if lt.judge is not None:
        unscanned = max(unscanned, max(lt._memories, default=0))
    budget = time.perf_counter() + lt.decisions.consolidate_scan_seconds
    scanned_to = int(state.get(SCANNED, 0))
    seen: set[tuple[int, int]] = set()
    for memory_id in sorted(i for i in lt._memories if scanned_to < i <= unscanned):
        if time.perf_counter() > budget:
            break
        memory = lt._memories[memory_id]
        if memory.status == "active" and memory_id not in doomed:
            # with a judge, its nearest by meaning too (embedded: a write judged them
            # only within its wait)
            vectors = [None, *contradictions.stored_vector(lt, memory_id)] if lt.judge is not None else [None]
            for vector in vectors:
                if not dry_run:
                    contradictions.scan(lt, memory, when, origin="consolidation", vector=vector)
                    continue
                for first, second, verdict in contradictions.pairs(lt, memory, vector):
                    if (first.id, second.id) in seen:
                        continue  # found from the other side already
                    seen.add((first.id, second.id))
                    contradicted += 1
                    actions.append(
                        ConsolidationAction(
                            second.id, "contradiction", f"with memory {first.id}: {verdict.rule}, {verdict.evidence}"
                        )
                    )
        scanned_to = memory_id
    for row in sorted(lt._contradictions.values(), key=lambda r: r.id):
        if row.detected_at > last_pass and row.memory_b not in doomed:
            contradicted += 1
            settled = f"; resolved {row.resolution}" if row.resolution else ""
            actions.append(
                ConsolidationAction(
                    row.memory_b, "contradiction", f"with memory {row.memory_a}: {row.rule}, {row.evidence}{settled}"
                )
            )

    # 7. layers
    moved = 0
    tiers = dict.fromkeys(layers.TIERS, 0)
    unformed: list[MemoryRow] = []
    for memory in lt._memories.values():
        if memory.status != "active" or memory.id in doomed:
            continue
        tier, value, why = layers.placement(memory, when, policy)
        tiers[tier] += 1
        if tier != memory.tier:
            moved += 1
            did(memory.id, "tier", f"{memory.tier} -> {tier}: {why}")
        if not dry_run and (tier != memory.tier or abs(value - memory.priority) > 1e-9):
            memory.tier, memory.priority = tier, value
            memory.is_anchor = layers.is_anchor(memory)
            lt._touch(memory)
        if not dry_run and tier != "hot" and not memory.summary and memory.id not in lt._episodes:
            unformed.append(memory)
    # what recall serves of a warm or cold memory, made here, so recall only reads it
    all_forms = compress.levels_of_many([m.content for m in unformed], sentences=policy.summary_sentences)
    for memory, forms in zip(unformed, all_forms, strict=True):
        memory.summary, memory.compressed, memory.index_text = forms.summary, forms.compressed, forms.index
        lt._touch(memory)

    # 8. links: episodes sharing entities or (with vectors) alike in meaning, memories
    #    about the same file
    links = [
        (a, b, f"related to episode {b}: {', '.join(shared[:5])}")
        for a, b, shared in episodes.related(lt, policy.link_shared_entities)
    ]
    joined = {(a, b) for a, b, _reason in links}
    links += [
        (a, b, f"related to episode {b}: alike in meaning (cosine {cosine:.2f}), each the other's nearest")
        for a, b, cosine in episodes.alike(lt, touched, policy.link_cosine)
        if (a, b) not in joined and (b, a) not in joined
    ]
    links += [
        (a, b, f"related to memory {b}: both about {paths[0]}")
        for a, b, paths in episodes.code_related(lt)
        if a not in doomed and b not in doomed
    ]
    for a, b, reason in links:
        actions.append(ConsolidationAction(a, "linked", reason))
        if not dry_run:
            lt._edge(a, b, "related_to", when)
            lt._edge(b, a, "related_to", when)

    erase = set(doomed) | {e.memory_id for e in expiries if e.action == "delete"}
    return (
        ConsolidationReport(
            dry_run,
            when,
            created,
            extended,
            deduped,
            summarized,
            compressed,
            pending,
            moved,
            tiers,
            contradicted,
            len(expiries),
            len(doomed),
            len(links),
            actions,
        ),
        erase,
        scanned_to,
    )


def last_pass(lt: StoreCore) -> float | None:
    """When the last consolidation pass ran (its ``now``), None before the first."""
    lt._check_open()
    value = dict(lt._state()).get(LAST_PASS)
    return None if value is None else float(value)
