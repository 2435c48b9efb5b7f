"""The documents the lexical indexes hold: a turn's, a memory's, a session's, and the
merge-check document of an active memory. They depend only on the rows held in
memory (a turn's on the turns next to it), so a load that builds the indexes from
the rows makes the same documents as the writes that kept them up to date. Bump
:data:`aircher_mem.longterm.schema.DOCUMENTS_VERSION` whenever one of them changes."""

from __future__ import annotations

import datetime as dt
import functools
import itertools
import math
from collections.abc import Iterable
from typing import Protocol

from .dialogue import party, questions, unaddressed
from .schema import EpisodeRow, MemoryRow, TurnRow, memory_key, session_key, turn_key

__all__ = [
    "Document",
    "Rows",
    "date_words",
    "neighbours",
    "unaddressed_text",
    "turn_document",
    "memory_document",
    "speakers",
    "session_documents",
    "dedup_document",
]

SPEAKER_LINKS = 32  # a memory's document names the speakers of this many of its turns
SESSION_CHARS = 200_000  # a session's document holds at most its last this many characters

Document = tuple[str, str, str, dict[str, str]]
"""(kind, key, group, fields) as :meth:`aircher_mem._core.LexicalIndex.upsert` takes it."""


class Rows(Protocol):
    """The rows in memory the documents are made from (the store core has them)."""

    _turns: dict[int, TurnRow]
    _sessions: dict[str, list[int]]  # turn ids in order of arrival
    _position: dict[int, int]  # turn id -> its place in its session
    _sources: dict[int, dict[int, str]]  # memory -> {turn: reason}
    _episodes: dict[int, EpisodeRow]  # episode memory -> what it keeps


def date_words(at: float) -> str:
    """The words a question may use for when something was said: "7 May 2023 Sunday"."""
    return _day_words(math.floor(at / 86_400.0)) if math.isfinite(at) else ""


@functools.lru_cache(maxsize=4096)
def _day_words(day: int) -> str:
    try:
        moment = dt.datetime.fromtimestamp(day * 86_400.0, dt.timezone.utc)
    except (OverflowError, ValueError, OSError):
        return ""
    return f"{moment.day} {moment.strftime('%B')} {moment.year} {moment.strftime('%A')}"


def neighbours(rows: Rows, turn: TurnRow) -> tuple[TurnRow | None, TurnRow | None]:
    """The turns before and after ``turn`` in its session (None at an end)."""
    session = rows._sessions[turn.session_id]
    at = rows._position[turn.id]
    before = rows._turns[session[at - 1]] if at > 0 else None
    after = rows._turns[session[at + 1]] if at + 1 < len(session) else None
    return before, after


def unaddressed_text(rows: Rows, turn: TurnRow) -> str:
    """The turn's text without the names of the parties of the turns next to it
    (``dialogue.unaddressed``): "Thanks, Caroline!" is said to Caroline, not about
    her."""
    around = [t.speaker for t in neighbours(rows, turn) if t is not None]
    return unaddressed(turn.text, around, turn.speaker)


def turn_document(rows: Rows, turn: TurnRow) -> Document:
    """A turn's fields: its text (without the names it addresses: ``dialogue``), its
    speaker and date words, as ``question`` the questions of the turn it replies to
    (when another party said it), and as ``context`` the turns before and after it
    in its session (an answer often sits in the reply to a question). The question
    is a field of its own, not appended to the text, so a long question never
    dilutes the reply's own words. Depends on the turns next to it only, so
    ``add_turn`` re-indexes the turn before a new one and a load rebuilds the same
    documents."""
    before, after = neighbours(rows, turn)
    fields = {
        "text": unaddressed_text(rows, turn),
        "speaker": turn.speaker or "",
        "date": date_words(turn.at),
        "context": " ".join(t.text for t in (before, after) if t is not None),
    }
    if before is not None and party(before.speaker, before.role) != party(turn.speaker, turn.role):
        asked = questions(unaddressed_text(rows, before))
        if asked:
            fields["question"] = asked
    return ("turn", turn_key(turn.id), turn.session_id, fields)


def speakers(rows: Rows, memory_id: int) -> set[str]:
    """Who said the first ``SPEAKER_LINKS`` source turns of a memory."""
    sources = itertools.islice(rows._sources.get(memory_id, {}), SPEAKER_LINKS)
    return {rows._turns[t].speaker or "" for t in sources if t in rows._turns}


def memory_document(rows: Rows, memory: MemoryRow) -> Document:
    """A memory's fields: its content, tags, the speakers of its turns, the date
    words of when it became valid. An episode's text is its headline, summary, key
    points, decisions, outcome and files (its raw turns have documents of their own)."""
    episode = rows._episodes.get(memory.id)
    if episode is not None:
        parts = [memory.content, memory.summary, *episode.key_points, *episode.decisions]
        parts += [episode.outcome or "", " ".join(episode.files)]
        return (
            "memory",
            memory_key(memory.id),
            "",
            {
                "text": "\n".join(p for p in parts if p),
                "tags": " ".join(memory.tags),
                "date": date_words(memory.valid_from),
            },
        )
    return (
        "memory",
        memory_key(memory.id),
        "",
        {
            "text": memory.content,
            "tags": " ".join(memory.tags),
            "speaker": " ".join(sorted(speakers(rows, memory.id))),
            "date": date_words(memory.valid_from),
        },
    )


def session_documents(rows: Rows, sessions: Iterable[str]) -> list[Document]:
    """The documents of ``sessions``: each session's turns, the most recent
    ``SESSION_CHARS`` characters of them."""
    documents = []
    for session in sessions:
        texts: list[str] = []
        size = 0
        for turn_id in reversed(rows._sessions[session]):
            text = rows._turns[turn_id].text
            size += len(text) + 1
            if size > SESSION_CHARS:
                break
            texts.append(text)
        documents.append(("session", session_key(session), session, {"text": "\n".join(reversed(texts))}))
    return documents


def dedup_document(memory: MemoryRow) -> Document:
    """An active memory's document in the merge-check index: its content only."""
    return ("memory", memory_key(memory.id), "", {"text": memory.content})
