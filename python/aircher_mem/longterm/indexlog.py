"""The saved lexical indexes kept across writes: the keys of the documents a write
changes, logged in the write's own transaction, and made again at the next load.

A store file's three lexical indexes are saved beside it (``INDEX_SUFFIXES``) under
a generation the file records, so that the next process reads them instead of
indexing every row again. A write of the verbs' pending rows does not delete those
copies: the keys of the documents its rows change go into ``longterm_index_log`` in
the same transaction (:func:`changed`). A load that finds the copies of the recorded
generation reads them, then makes each logged document again from the rows, or
removes it where its row is gone (:func:`replay`). Documents depend only on the rows
(:mod:`.documents`), so the result is what indexes built from every row hold. Close
leaves the copies as they are, and saves them again once the log would pass
``[longterm] index_log_rows`` rows. A forget or a gc pass still deletes the copies,
their generation and the log first: what they remove is never left in a file."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol

from .._core import LexicalIndex
from . import documents
from .schema import INDEX_LOG, MemoryRow, TurnRow, memory_key, session_key, turn_key

__all__ = ["LEXICAL", "DEDUP", "SESSIONS", "Indexed", "changed", "insert", "replay"]

#: ``longterm_index_log.part``: the index a logged key is in.
LEXICAL, DEDUP, SESSIONS = 0, 1, 2
# Up to this many rows an insert names each value (no list parameter: DuckDB's
# conversion of the first list in a process imports decimal and uuid, see
# schema.one_row); more go as two lists.
_VALUES_ROWS = 64


class Indexed(documents.Rows, Protocol):
    """The rows and the three lexical indexes of a store (its core has them)."""

    _memories: dict[int, MemoryRow]
    _lexical: LexicalIndex
    _dedup: LexicalIndex
    _session_lexical: LexicalIndex


def changed(core: Indexed, turns: Iterable[TurnRow], memories: Iterable[int]) -> list[tuple[int, str]]:
    """The (part, key) of every document that new ``turns`` and the written (or
    newly linked) ``memories`` change: each turn's, the turn's before it (its
    context names the new one), its session's; each memory's, in the lexical and
    the merge-check index."""
    keys: dict[str, None] = {}
    sessions: dict[str, None] = {}
    for turn in turns:
        keys[turn_key(turn.id)] = None
        at = core._position.get(turn.id, 0)
        if at > 0:
            keys[turn_key(core._sessions[turn.session_id][at - 1])] = None
        sessions[session_key(turn.session_id)] = None
    ids = sorted(set(memories))
    logged = [(LEXICAL, key) for key in keys]
    logged += [(LEXICAL, memory_key(i)) for i in ids]
    logged += [(DEDUP, memory_key(i)) for i in ids]
    logged += [(SESSIONS, key) for key in sessions]
    return logged


def insert(logged: list[tuple[int, str]]) -> tuple[str, list[Any]]:
    """The statement and parameters that add ``logged`` (part, key) rows to the log."""
    if len(logged) <= _VALUES_ROWS:
        return f"INSERT INTO {INDEX_LOG} VALUES " + ", ".join(["(?, ?)"] * len(logged)), [
            value for row in logged for value in row
        ]
    return f"INSERT INTO {INDEX_LOG} SELECT unnest(?::INTEGER[]), unnest(?::VARCHAR[])", [
        [part for part, _ in logged],
        [key for _, key in logged],
    ]


def replay(core: Indexed, logged: Iterable[tuple[int, str]]) -> None:
    """Makes the documents of the ``logged`` (part, key) pairs again from the rows
    ``core`` holds, in the indexes read from the saved copies: a document whose row
    is gone (in the merge-check index: whose memory is not active) is removed."""
    wanted: list[dict[str, None]] = [{}, {}, {}]
    for part, key in logged:
        if 0 <= part < len(wanted) and key:
            wanted[part][key] = None
    turns, memories, sessions = core._turns, core._memories, core._sessions
    made: list[documents.Document] = []
    gone: list[str] = []
    for key in wanted[LEXICAL]:
        number = _number(key)
        if key[0] == "t" and number in turns:
            made.append(documents.turn_document(core, turns[number]))
        elif key[0] == "m" and number in memories:
            made.append(documents.memory_document(core, memories[number]))
        else:
            gone.append(key)
    _apply(core._lexical, made, gone)
    made, gone = [], []
    for key in wanted[DEDUP]:
        memory = memories.get(_number(key)) if key[0] == "m" else None
        if memory is not None and memory.status == "active":
            made.append(documents.dedup_document(memory))
        else:
            gone.append(key)
    _apply(core._dedup, made, gone)
    present = [key[1:] for key in wanted[SESSIONS] if key[0] == "s" and sessions.get(key[1:])]
    gone = [key for key in wanted[SESSIONS] if key[0] != "s" or not sessions.get(key[1:])]
    _apply(core._session_lexical, documents.session_documents(core, present), gone)


def _number(key: str) -> int:
    """The id in a turn's or memory's key; -1 for a key that holds none."""
    digits = key[1:]
    return int(digits) if digits.isdecimal() and len(digits) <= 20 else -1


def _apply(index: LexicalIndex, made: list[documents.Document], gone: list[str]) -> None:
    if gone:
        index.remove(gone)
    if made:
        index.upsert(made)
