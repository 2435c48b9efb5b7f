"""Conversation turns: ``add_turn`` (secrets redacted, personal data tagged, then
memories extracted: heuristic rules, plus an optional extractor callable with a
timeout that never blocks the write), a session's short-term window, and the
conversation context (the window and the top memories)."""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Mapping
from typing import Any

from .. import assembly
from ..checks import unix_time as _time
from ..redact import pii_tags, redact
from ..results import Conversation, Extracted, Turn, TurnAdded
from . import checks, documents, memories
from .core import StoreCore
from .extract import Candidate, combine, extract, run_llm
from .schema import ROLES, SCOPES, TurnRow, turn_key

__all__ = ["add_turn", "candidates_of", "session_turns", "get_context"]


def redacted_candidate(candidate: Candidate) -> Candidate:
    """An extractor's candidate with its content, value and tags redacted."""
    return dataclasses.replace(
        candidate,
        content=redact(candidate.content),
        value=checks.redacted(candidate.value),
        tags=tuple(sorted({redact(tag) for tag in candidate.tags})),
        links=tuple((kind, redact(text)) for kind, text in candidate.links),
    )


def add_turn(
    lt: StoreCore,
    session_id: str,
    role: str,
    text: str,
    *,
    speaker: str | None = None,
    at: float | dt.datetime | None = None,
    metadata: Mapping[str, Any] | None = None,
    extract: bool = True,
    idempotency_key: str | None = None,
    scope: str = "project-shared",
) -> TurnAdded:
    """Stores a turn (secrets redacted, personal data tagged) and, for a user turn
    (or any, with ``extract_assistant``), extracts memories from it. A turn stored
    before with the same ``idempotency_key`` is not stored again: the result names
    it, and says so in its notes (what was extracted then is not repeated). A
    ``user-private`` turn, and what is extracted from it, is its user's only."""
    from . import decisions

    lt._check_open()
    session = redact(checks.text("session_id", session_id, max_chars=1000))
    role = checks.choice("role", role, ROLES)
    raw = checks.text("text", text)
    who = checks.redacted(checks.optional_text("speaker", speaker))
    when = lt.clock() if at is None else _time("at", at)
    meta = checks.metadata(metadata)
    checks.flag("extract", extract)
    key = checks.optional_text("idempotency_key", idempotency_key, max_chars=1000)
    scope = checks.choice("scope", scope, SCOPES[:2])
    lt._load()
    if key is not None:
        stored = lt._requested(key)
        if stored is not None:
            known = lt._turns.get(stored)
            where = "" if known is not None else " and forgotten since"
            return TurnAdded(
                stored,
                known.session_id if known is not None else session,
                [],
                [f"stored before with this idempotency key{where}: not stored again"],
            )
    clean = redact(raw)
    private = "user-private" if scope == "user-private" else None
    turn = TurnRow(lt._next_turn, session, role, who, clean, when, meta, pii_tags(raw), lt.user, private)
    lt._next_turn += 1
    lt._turns[turn.id] = turn
    before = lt._sessions[session][-1:]
    lt._position[turn.id] = len(lt._sessions[session])
    lt._sessions[session].append(turn.id)
    # the turn before gains this one as its context
    lt._lexical.upsert([documents.turn_document(lt, lt._turns[i]) for i in (*before, turn.id)])
    lt._stale_sessions.add(session)
    lt._unembedded.add(turn_key(turn.id))
    lt._new_turns.append(turn.id)
    lt._note()
    if key is not None:
        lt._request(key, turn.id, when)
    done: list[Extracted] = []
    notes: list[str] = []
    if extract and (role == "user" or lt.policy.extract_assistant):
        candidates, archive, note = candidates_of(lt, clean, role, who)
        if note:
            notes.append(note)
        for candidate in candidates:
            done.append(memories.ingest(lt, candidate, turn=turn, at=when, tags=turn.tags))
            if candidate.links:  # an LLM extractor's reasons for a decision: its chain
                decisions.attach_said(lt, done[-1].memory_id, candidate.links, turn)
        for content in archive:
            for memory_id in memories.matching(lt, content):
                memories.archive(lt, lt._memories[memory_id], when, f"the extractor asked (turn {turn.id})")
    if extract and (role == "user" or lt.decisions.chains_from_assistant):
        ids = lt._sessions[session]  # this turn last
        earlier = ids[max(0, len(ids) - 1 - lt.chains.window_turns) : len(ids) - 1]
        window = [lt._turns[i] for i in earlier if i in lt._turns]
        said = {d.memory_id for d in done}
        done += [d for d in decisions.from_turn(lt, turn, window, done) if d.memory_id not in said]
    lt._commit()
    return TurnAdded(turn.id, session, done, notes)


def candidates_of(lt: StoreCore, text: str, role: str, speaker: str | None) -> tuple[list[Candidate], list[str], str]:
    mode = lt.policy.extractor_mode
    heuristic = (
        extract(text, role=role, speaker=speaker, policy=lt.policy) if mode != "llm" or lt.extractor is None else []
    )
    if lt.extractor is None or mode == "heuristic":
        return heuristic, [], ""
    found, archive, error = run_llm(lt.extractor, text, timeout=lt.policy.llm_timeout_seconds, policy=lt.policy)
    # the extractor's output is stored too: what it says goes through the detector
    found = [redacted_candidate(c) for c in found]
    archive = [redact(content) for content in archive]
    if error:
        note = f"extractor: {error}; the heuristic rules were used"
        if mode == "llm":
            heuristic = extract(text, role=role, speaker=speaker, policy=lt.policy)
        return combine(heuristic, found, "hybrid") if found else heuristic, archive, note
    return combine(heuristic, found, mode), archive, ""


def session_turns(lt: StoreCore, session_id: str, *, limit: int | None = None) -> list[Turn]:
    """The last ``limit`` turns of a session (default: the short-term window),
    oldest first."""
    lt._check_open()
    session = redact(checks.text("session_id", session_id, max_chars=1000))
    count = lt.policy.short_term_turns if limit is None else checks.count("limit", limit, 1_000_000)
    lt._load()
    ids = lt._sessions.get(session, [])
    chosen = sorted(ids, key=lambda i: (lt._turns[i].at, i))[-count:]
    return [lt._turns[i].result() for i in chosen]


def get_context(lt: StoreCore, session_id: str, k: int = 20) -> Conversation:
    """The conversation so far: the session's short-term window and the top ``k``
    active memories by score."""
    short = session_turns(lt, session_id)
    k = checks.count("k", k)
    return assembly.conversation(session_id, short, memories.listed(lt, limit=k).memories)
