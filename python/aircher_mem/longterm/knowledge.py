"""Facts from the code itself (seed 000's auto-extraction and cold start) kept as
memories: each candidate is compared with the active memories nearest it and the
facts waiting for review by the cosine of their stemmed words (at least
``[knowledge] skip_similarity``: it is that memory already, skipped; at least
``merge_similarity``: it updates that memory; below: a new memory). A new fact with
at least ``approve_confidence`` (or ``auto_approve``) is kept at once; below, it is
stored with status "pending": never recalled, merged into or scanned for
contradictions until :func:`review` approves it (it becomes active) or rejects it
(forgotten for good; only a SHA-256 digest of its normalized words stays, so the
same fact is not proposed again)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal, Protocol

from .._core import tokenize
from ..digest import sha256_hex
from ..errors import InvalidInputError
from ..redact import redact
from ..results import FactCandidate, FactReview
from . import checks, memories
from .core import StoreCore
from .extract import normalize
from .forget import forget
from .schema import LEVELS, MemoryRow

__all__ = ["CodeFact", "CODE_SOURCES", "similarity", "keep", "review", "pending_count"]

#: Where a fact about the code comes from: a git diff, a file saved, the syntax
#: tree of a change, or cold start's detection of the project.
CODE_SOURCES = ("git_diff", "file_change", "ast_analysis", "cold_start")


class CodeFact(Protocol):
    """A candidate fact about the code (:class:`aircher_mem.longterm.changes.CandidateFact`
    and cold start's template facts have these)."""

    @property
    def content(self) -> str: ...
    @property
    def confidence(self) -> float: ...
    @property
    def source(self) -> str: ...
    @property
    def suggested_level(self) -> str: ...
    @property
    def code_ref(self) -> str | None: ...
    @property
    def domain(self) -> str | None: ...
    @property
    def kind(self) -> str: ...
    @property
    def commit(self) -> str | None: ...


def _words(text: str) -> frozenset[str]:
    return frozenset(tokenize(text, stem=True))


def similarity(a: frozenset[str], b: frozenset[str]) -> float:
    """The cosine of two sets of stemmed words (0.0 when either is empty)."""
    if not a or not b:
        return 0.0
    return len(a & b) / math.sqrt(len(a) * len(b))


def _digest(content: str) -> str:
    return sha256_hex(normalize(content).encode("utf-8", "surrogatepass"))


def _rejected(lt: StoreCore) -> set[str]:
    with lt._db:
        return {row[0] for row in lt._con.execute("SELECT digest FROM rejected_facts").fetchall()}


def pending_count(lt: StoreCore) -> int:
    """How many facts wait for review."""
    lt._check_open()
    lt._load()
    return sum(1 for m in lt._memories.values() if m.status == "pending")


def _match(lt: StoreCore, words: frozenset[str], content: str) -> tuple[MemoryRow | None, float]:
    """The active memory (among the nearest) or pending fact most like ``content``."""
    best, best_sim = None, 0.0
    near = [lt._memories.get(int(key[1:])) for key in memories.nearest(lt, content)]
    waiting = [m for m in lt._memories.values() if m.status == "pending"]
    for memory in (*near, *waiting):
        if memory is None or memory.status == "archived":
            continue
        sim = similarity(words, _words(memory.content))
        if sim > best_sim:
            best, best_sim = memory, sim
    return best, best_sim


def _checked(fact: CodeFact) -> tuple[CodeFact, str, str, str, float]:
    content = redact(checks.text("content", fact.content)).strip()
    if not content:
        raise InvalidInputError("content must not be blank")
    level = checks.choice("level", fact.suggested_level, LEVELS)
    source = checks.choice("source", fact.source, CODE_SOURCES)
    confidence = fact.confidence
    if isinstance(confidence, bool) or not isinstance(confidence, int | float) or not 0.0 <= confidence <= 1.0:
        raise InvalidInputError(f"confidence must be a number within 0-1, got {checks.short(confidence)}")
    return fact, content, level, source, float(confidence)


def keep(
    lt: StoreCore, facts: Sequence[CodeFact], *, auto_approve: bool = False, at: float | None = None
) -> list[FactCandidate]:
    """Keeps ``facts`` (in order, at most ``[knowledge] max_candidates``; the caller
    counts the rest) as memories, each as the module docstring says; one commit."""
    from . import contradictions

    lt._check_open()
    lt._load()
    policy = lt.knowledge
    now = lt.clock() if at is None else at
    checked = [_checked(fact) for fact in facts[: policy.max_candidates]]  # all, before anything is kept
    rejected = _rejected(lt)
    out: list[FactCandidate] = []
    for fact, content, level, source, confidence in checked:
        words = _words(content)
        approved = auto_approve or confidence >= policy.approve_confidence

        if _digest(content) in rejected:
            out.append(_outcome(fact, content, level, source, confidence, False, "rejected_before", None))
            continue
        match, sim = _match(lt, words, content)
        if match is not None and sim >= policy.skip_similarity:
            out.append(_outcome(fact, content, level, source, confidence, approved, "skipped", match))
            continue
        if match is not None and sim >= policy.merge_similarity:
            _update(lt, match, content, fact, confidence, approved, now)
            out.append(_outcome(fact, content, level, source, confidence, approved, "merged", match))
            continue
        memory = memories.create(
            lt,
            content,
            kind="fact",
            at=now,
            source=source,
            status="active" if approved else "pending",
            confidence=confidence,
            tags=sorted({"code", fact.kind}),
            rules=[f"code:{fact.kind}"] + ([f"commit:{fact.commit}"] if fact.commit else []),
            fields={"level": level, "domain": fact.domain, "code_ref": fact.code_ref},
        )
        if approved:
            contradictions.scan(lt, memory, now)
        action = "created" if approved else "pending"
        out.append(_outcome(fact, content, level, source, confidence, approved, action, memory))
    lt._commit()
    return out


def _outcome(
    fact: CodeFact,
    content: str,
    level: str,
    source: str,
    confidence: float,
    approved: bool,
    action: str,
    memory: MemoryRow | None,
) -> FactCandidate:
    return FactCandidate(
        content=content,
        confidence=confidence,
        approved=approved if memory is None else memory.status == "active",
        action=action,  # type: ignore[arg-type]
        memory_id=None if memory is None else memory.id,
        kind=fact.kind,
        level=level,
        domain=fact.domain,
        code_ref=fact.code_ref,
        source=source,
        commit=fact.commit,
    )


def _update(
    lt: StoreCore, memory: MemoryRow, content: str, fact: CodeFact, confidence: float, approved: bool, now: float
) -> None:
    """A candidate in the merge band: the memory it matches is seen again; a fact
    that came from the code takes the candidate's wording and code reference (the
    code says it now), and a pending one is approved when the candidate would be."""
    memory.hits += 1
    memory.last_seen = max(memory.last_seen, now)
    memory.confidence = max(memory.confidence, confidence)
    if memory.source in CODE_SOURCES and (content != memory.content or fact.code_ref != memory.code_ref):
        memory.content = content
        memory.code_ref = fact.code_ref or memory.code_ref
        lt._index_memory(memory)
    if memory.status == "pending" and approved:
        memory.status = "active"
        lt._track_active(memory)
        lt._act(memory.id, now, "approved", f"{fact.source}: {fact.kind}")
    lt._touch(memory)
    lt._act(memory.id, now, "merged", f"{fact.source}: {fact.kind}")


def review(lt: StoreCore, memory_id: int, verdict: Literal["approve", "reject"]) -> FactReview:
    """Approves a pending fact (it becomes an active memory, checked for
    contradictions) or rejects it (forgotten for good, its digest kept so that it
    is not proposed again). InvalidInputError for a memory that is not pending."""
    from . import contradictions

    lt._check_open()
    verdict = checks.choice("verdict", verdict, ("approve", "reject"))  # type: ignore[assignment]
    lt._load()
    memory = lt._get(memory_id)
    if memory.status != "pending":
        raise InvalidInputError(f"memory {memory.id} is {memory.status}, not pending review")
    now = lt.clock()
    if verdict == "reject":
        digest = _digest(memory.content)
        forget(lt, memory.id)
        with lt._transaction("keeping a rejected fact's digest", rows=False) as con:
            con.execute("INSERT OR REPLACE INTO rejected_facts VALUES (?, ?)", [digest, now])
        return FactReview(memory_id, "reject", None)
    memory.status = "active"
    lt._track_active(memory)
    lt._touch(memory)
    lt._act(memory.id, now, "approved", "review")
    contradictions.scan(lt, memory, now)
    lt._commit()
    return FactReview(memory.id, "approve", memories.record(lt, memory, now))
