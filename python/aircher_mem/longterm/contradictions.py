"""Contradictions between memories (seed 001's scanner) and their resolution.

Every memory stored is checked against its ``[decisions] scan_neighbours`` nearest
active memories (the merge-check index: lexical; by meaning too once embedded), and
with a judge, a consolidation pass checks the memories stored since its last one
again, asking the judge without a write's time limit (``judge_scan_seconds``).
A pair is a contradiction when the offline rules of
:mod:`aircher_mem.longterm.contradict` say so (the same setting with another value,
a negation or an opposite, numbers or versions that differ, an explicit
correction), or, for a pair they pass over that shares enough words, when the
optional judge callable answers yes (seed 001's prompt; its answers kept by pair).

A contradiction stays open until resolved: ``a_wins`` or ``b_wins`` supersede the
loser bi-temporally (valid until the winner became valid: recall as of before still
finds it), ``both_valid`` keeps both, ``merged`` stores a new memory that
supersedes both. A memory that explicitly corrects the other ("actually X, not
Y", "no longer Y") wins at once (b_wins, said in the note); so does a new value of
the same slot (the rule the extractor has always applied, now listed here too).
"""

from __future__ import annotations

import heapq
import json
import time
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, cast

from ..results import Contradiction, ContradictionList
from . import checks
from .core import StoreCore, using_db
from .extract import call_within, token_set
from .schema import ContradictionRow, MemoryRow, memory_key, pair_of

if TYPE_CHECKING:
    import numpy as np

    from ..config import DecisionsPolicy
    from . import contradict

__all__ = [
    "JUDGE_PROMPT",
    "pairs",
    "scan",
    "put",
    "slot_conflict",
    "listed",
    "first_open",
    "settle",
    "about",
    "result",
    "ask_judge",
    "goes_to_judge",
    "min_overlap",
    "stored_vector",
    "close_in_meaning",
    "supersede",
]

#: Seed 001's question, with both memories.
JUDGE_PROMPT = (
    'Are these contradictory? Answer yes or no, or as JSON {{"contradicts": true|false, "why": "..."}}.\nA: {a}\nB: {b}'
)
STATUSES = ("open", "resolved", "all")


def _pairs_state(lt: StoreCore) -> tuple[int, int, int]:
    return (id(lt._contradictions), len(lt._contradictions), lt._next_contradiction)


def _pair(lt: StoreCore) -> set[tuple[int, int]]:
    """The (a, b) pairs of the contradictions recorded, made again only when they
    changed otherwise than by :func:`_add`, which adds its pair (a catch-up adds
    rows, a forget removes rows, a load makes a new dict): a scan of each new
    memory would otherwise walk them all."""
    state = _pairs_state(lt)
    if lt._pairs_of is None or lt._pairs_of[0] != state:
        lt._pairs_of = (state, {(c.memory_a, c.memory_b) for c in lt._contradictions.values()})
    return lt._pairs_of[1]


def put(lt: StoreCore, row: ContradictionRow, *, known: bool = True) -> None:
    """Puts a contradiction (new, or one whose status changed) in the state, and its
    pair in the pairs :func:`_pair` made, when they were current; ``known``: both
    its memories are in the state (else only its id is taken, as a catch-up of a
    row this user does not see)."""
    kept = lt._pairs_of if lt._pairs_of is not None and lt._pairs_of[0] == _pairs_state(lt) else None
    lt._next_contradiction = max(lt._next_contradiction, row.id + 1)
    if known:
        old = lt._contradictions.get(row.id)
        lt._contradictions[row.id] = row
        if old is not None and (old.memory_a, old.memory_b) != (row.memory_a, row.memory_b):
            kept = None  # its old pair may be another's too: made again when next asked
        elif kept is not None:
            kept[1].add((row.memory_a, row.memory_b))
    if kept is not None:
        lt._pairs_of = (_pairs_state(lt), kept[1])


def _neighbours(
    lt: StoreCore, memory: MemoryRow, vector: np.ndarray | None, near: Sequence[str] | None
) -> list[MemoryRow]:
    """The ``scan_neighbours`` active memories nearest ``memory`` (itself
    excluded): in the merge-check index (lexical; ``near``: its keys there, when
    the caller searched already), or, given its ``vector``, by meaning (turns
    share that index: a few times as many are looked at)."""
    k = lt.decisions.scan_neighbours
    found: list[MemoryRow] = []
    if near is not None:
        hits = list(near)
    elif vector is None:
        hits = [key for key, _score, _terms in lt._dedup.search(memory.content, k + 1)]
    elif lt._vectors is not None:
        hits = [key for key, _similarity in lt._vectors.search(vector, 4 * (k + 1)) if key[0] == "m"]
    else:
        hits = []
    for key in hits:
        other = lt._memories.get(int(key[1:]))
        if other is not None and other.id != memory.id and other.status == "active":
            found.append(other)
            if len(found) == k:
                break
    return found


def stored_vector(lt: StoreCore, memory_id: int) -> list[np.ndarray]:
    """The vector ``memory_id`` is embedded as, in a list; empty when it has none."""
    if lt._vectors is None:
        return []
    import numpy as np

    row = lt._vectors.get([memory_key(memory_id)])[0]
    return [] if np.isnan(row).any() else [row]


def _verdict(lt: StoreCore, a: MemoryRow, b: MemoryRow, until: float | None = None) -> contradict.Verdict | None:
    """The rules' verdict on ``a`` and ``b``; else the judge's, when the pair goes
    to it, waited for until ``until`` at most (``time.monotonic()``; None: the
    judge's own timeout; its answer kept by pair)."""
    from . import contradict

    verdict = contradict.detect(a.content, b.content, settings=lt.contradiction_rules)
    if verdict is not None or lt.judge is None:
        return verdict
    key = (a.id, b.id)
    if key in lt._judged:
        return _judge_verdict(lt, key)
    timeout = lt.decisions.judge_timeout_seconds
    if until is not None:
        timeout = min(timeout, until - time.monotonic())
    if timeout <= 0 or not goes_to_judge(a.content, b.content, min_overlap(lt.judge, lt.decisions)):
        return None
    if not close_in_meaning(lt, a.id, b.id):
        return None  # not asked: too far apart, or asked once both are embedded
    answer = ask_judge(lt, a.content, b.content, timeout)
    if answer is None:
        return None  # failed or late: asked again next time
    lt._judged[key] = answer
    return _judge_verdict(lt, key)


def _judge_verdict(lt: StoreCore, key: tuple[int, int]) -> contradict.Verdict | None:
    from . import contradict

    return contradict.Verdict("judge", "the judge said they contradict", 1.0) if lt._judged[key] else None


def min_overlap(judge: object, decisions: DecisionsPolicy) -> float:
    """The word overlap a pair needs to be asked of ``judge``: ``nli_min_overlap``
    for a judge given the two texts (``pair``), ``judge_min_overlap`` for one given
    the prompt."""
    return decisions.nli_min_overlap if pair_of(judge) is not None else decisions.judge_min_overlap


def close_in_meaning(lt: StoreCore, a: int, b: int) -> bool | None:
    """Whether memories ``a`` and ``b`` may go to a judge given the two texts (an NLI
    model) by their meaning: the cosine of their stored vectors reaches ``[decisions]
    nli_min_similarity``. None while either waits to be embedded (the check by
    meaning after its embedding, or consolidation, asks then); True without the
    dense channel, for a judge given the prompt, or when either has no vector."""
    least = lt.decisions.nli_min_similarity
    if least <= -1.0 or lt._embedder_factory is None or pair_of(lt.judge) is None:
        return True
    if memory_key(a) in lt._unembedded or memory_key(b) in lt._unembedded:
        return None
    va, vb = stored_vector(lt, a), stored_vector(lt, b)
    if not va or not vb:
        return True
    import numpy as np  # (loaded with the vectors)

    norms = float(np.linalg.norm(va[0]) * np.linalg.norm(vb[0]))
    return norms > 0.0 and float(np.dot(va[0], vb[0])) / norms >= least


def goes_to_judge(a: str, b: str, min_overlap: float) -> bool:
    """Whether a pair the rules pass over is asked of the judge: both texts have
    words, and the share of their words they have in common (Jaccard) reaches
    ``min_overlap`` (the judge's: :func:`min_overlap`)."""
    ta, tb = token_set(a), token_set(b)
    return bool(ta and tb) and len(ta & tb) / len(ta | tb) >= min_overlap


def ask_judge(lt: StoreCore, a: str, b: str, timeout: float | None = None) -> bool | None:
    """The judge's answer about ``a`` and ``b`` (seed 001's prompt, or the two texts
    to a judge with a ``pair`` method): True, False, or None when it failed, was
    late (``timeout``, default ``judge_timeout_seconds``; a late call goes on in its
    thread) or said nothing readable."""
    judge = lt.judge
    if judge is None:
        return None
    pair = pair_of(judge)
    if pair is not None:
        asked: Callable[[str], object] = lambda _prompt: pair(a, b)  # noqa: E731
    else:
        asked = cast("Callable[[str], object]", judge)
    wait = lt.decisions.judge_timeout_seconds if timeout is None else timeout
    called = call_within(asked, JUDGE_PROMPT.format(a=a, b=b), wait, "aircher-judge")
    out = called.out
    if isinstance(out, str):
        text = out.strip()
        try:
            out = json.loads(text)
        except ValueError:
            word = text.split(None, 1)[0].strip(".,!:;\"'").lower() if text else ""
            return True if word == "yes" else False if word == "no" else None
    if isinstance(out, dict):
        out = out.get("contradicts")
    return out if isinstance(out, bool) else None


def _add(
    lt: StoreCore, a: MemoryRow, b: MemoryRow, rule: str, evidence: str, at: float, origin: str
) -> ContradictionRow:
    row = ContradictionRow(lt._next_contradiction, a.id, b.id, at, rule, evidence, origin)
    put(lt, row)
    lt._touch_contradiction(row)
    lt._act(b.id, at, "contradicts", f"memory {a.id}: {rule}, {evidence}")
    return row


def pairs(
    lt: StoreCore,
    memory: MemoryRow,
    vector: np.ndarray | None = None,
    near: Sequence[str] | None = None,
    judge_until: float | None = None,
) -> list[tuple[MemoryRow, MemoryRow, contradict.Verdict]]:
    """The contradictions between ``memory`` and its nearest active memories
    (lexical; by meaning given its embedding ``vector``) not known yet: (a, b,
    verdict), a the older. Records nothing. The judge is asked, the nearest first,
    and waited for until ``judge_until`` (``time.monotonic()``; None: no limit but
    each answer's ``judge_timeout_seconds``)."""

    if memory.status != "active":
        return []
    known, found = _pair(lt), set()
    out = []
    for other in _neighbours(lt, memory, vector, near):
        a, b = (other, memory) if (other.valid_from, other.id) <= (memory.valid_from, memory.id) else (memory, other)
        if any(pair in known or pair in found for pair in ((a.id, b.id), (b.id, a.id))):
            continue
        verdict = _verdict(lt, a, b, judge_until)
        if verdict is not None:
            out.append((a, b, verdict))
            found.add((a.id, b.id))
    return out


def scan(
    lt: StoreCore,
    memory: MemoryRow,
    at: float,
    *,
    origin: str = "write",
    vector: np.ndarray | None = None,
    near: Sequence[str] | None = None,
    judge_until: float | None = None,
) -> list[int]:
    """Records the contradictions :func:`pairs` finds for ``memory``; one where a
    memory explicitly corrects the other is resolved for the corrector when
    ``auto_resolve_corrections``. Returns the ids of the memories it superseded.
    A write's scan waits for the judge until ``judge_until`` (``time.monotonic()``;
    default: ``[decisions] judge_scan_seconds`` from now); the pairs left are asked
    in consolidation (``origin="consolidation"``: no limit), which checks the
    memories stored since its last pass again."""
    from . import contradict

    if origin == "consolidation":
        judge_until = None
    elif judge_until is None:
        judge_until = time.monotonic() + lt.decisions.judge_scan_seconds
    superseded: list[int] = []
    for a, b, verdict in pairs(lt, memory, vector, near, judge_until):
        if a.status != "active" or b.status != "active":
            continue  # settled by a correction found before
        row = _add(lt, a, b, verdict.rule, verdict.evidence, at, origin)
        corrected = contradict.correction(b.content, settings=lt.contradiction_rules)
        if lt.decisions.auto_resolve_corrections and corrected and _mentions(a.content, corrected):
            settle(lt, row, "b_wins", f"an explicit correction ({corrected!r} taken back)", at)
            superseded.append(a.id)
    return superseded


def _mentions(text: str, phrase: str) -> bool:
    """Whether ``text`` holds every word of ``phrase`` (the value a correction took back)."""
    wanted = token_set(phrase)
    return bool(wanted) and wanted <= token_set(text)


def slot_conflict(lt: StoreCore, old: MemoryRow, new: MemoryRow, at: float) -> None:
    """``new`` took ``old``'s slot with another value: listed as a contradiction
    resolved b_wins at once (the newer value holds)."""
    evidence = f"{old.slot_attribute}: {old.slot_value} vs {new.slot_value}"
    row = _add(lt, old, new, "slot", evidence, at, "slot")
    row.resolved_at, row.resolution = at, "b_wins"
    row.resolution_note = "the same slot, a newer value"


def supersede(
    lt: StoreCore, loser: MemoryRow, winner: MemoryRow, now: float, why: str, winner_why: str | None = None
) -> None:
    """``winner`` supersedes ``loser``: the loser stays, archived, valid until the
    winner became valid (or never, if the winner is older), with edges and
    actions both ways (``why`` on the loser's, ``winner_why`` or ``why`` on the
    winner's)."""
    loser.valid_until = max(loser.valid_from, winner.valid_from)
    loser.superseded_by = winner.id
    loser.status = "archived"
    if loser.slot is not None and lt._slots.get(loser.slot) == loser.id:
        del lt._slots[loser.slot]
    if winner.slot is not None and winner.status == "active" and winner.slot not in lt._slots:
        lt._slots[winner.slot] = winner.id
    lt._track_active(loser)
    lt._touch(loser)
    lt._edge(winner.id, loser.id, "supersedes", now)
    lt._act(loser.id, now, "superseded", f"by memory {winner.id}: {why}")
    lt._act(winner.id, now, "supersedes", f"memory {loser.id}: {winner_why or why}")


def settle(lt: StoreCore, row: ContradictionRow, resolution: str, note: str, now: float) -> None:
    a, b = lt._memories[row.memory_a], lt._memories[row.memory_b]
    if resolution == "a_wins":
        supersede(lt, b, a, now, note or "contradiction resolved: a wins")
    elif resolution == "b_wins":
        supersede(lt, a, b, now, note or "contradiction resolved: b wins")
    row.resolved_at, row.resolution, row.resolution_note = now, resolution, note
    lt._touch_contradiction(row)


def result(lt: StoreCore, row: ContradictionRow) -> Contradiction:
    a, b = lt._memories.get(row.memory_a), lt._memories.get(row.memory_b)
    return Contradiction(
        row.id,
        row.memory_a,
        row.memory_b,
        a.content if a is not None else "",
        b.content if b is not None else "",
        row.detected_at,
        row.rule,
        row.evidence,
        row.origin,
        "open" if row.resolution is None else "resolved",
        row.resolution,
        row.resolved_at,
        row.resolution_note,
    )


def _ordered(lt: StoreCore, rows: Iterable[ContradictionRow]) -> list[Contradiction]:
    return [result(lt, r) for r in sorted(rows, key=lambda r: (r.resolution is not None, -r.detected_at, -r.id))]


@using_db
def listed(lt: StoreCore, status: str = "open", memory_id: int | None = None) -> ContradictionList:
    """The contradictions with ``status`` (open, resolved or all), of ``memory_id``
    only when given; open first, then the newest."""
    lt._check_open()
    status = checks.choice("status", status, STATUSES)
    if memory_id is not None:
        memory_id = checks.positive_id("memory_id", memory_id)
    lt._load()
    rows = [
        r
        for r in lt._contradictions.values()
        if (status == "all" or (r.resolution is None) == (status == "open"))
        and (memory_id is None or memory_id in (r.memory_a, r.memory_b))
    ]
    return ContradictionList(_ordered(lt, rows))


@using_db
def first_open(lt: StoreCore, recalled: Iterable[int], limit: int) -> list[Contradiction]:
    """The first ``limit`` open contradictions in :func:`listed`'s order, those
    that ``recalled`` memories are part of ahead of the rest: what assembly shows,
    made into results without making all of them (a store can hold thousands)."""
    lt._check_open()
    lt._load()
    wanted = set(recalled)
    rows = heapq.nsmallest(
        max(0, limit),
        (r for r in lt._contradictions.values() if r.resolution is None),
        key=lambda r: (r.memory_a not in wanted and r.memory_b not in wanted, -r.detected_at, -r.id),
    )
    return [result(lt, r) for r in rows]


def about(lt: StoreCore, memory_ids: Iterable[int], *, open_only: bool = False) -> list[Contradiction]:
    """The contradictions any of ``memory_ids`` is part of (open ones only with
    ``open_only``), open first."""
    wanted = set(memory_ids)
    rows = [
        r
        for r in lt._contradictions.values()
        if (r.memory_a in wanted or r.memory_b in wanted) and not (open_only and r.resolution is not None)
    ]
    return _ordered(lt, rows)
