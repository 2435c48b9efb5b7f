"""Recall over conversations: a reply is found by the question it answers, a name
said to someone is not what a turn is about, and session documents never change
how turns score (longterm/dialogue.py, LongTermMemory._turn_document)."""

from __future__ import annotations

from aircher_mem.config import LongtermPolicy
from aircher_mem.longterm import LongTermMemory

T0 = 1_700_000_000.0

# Only the turn's own fields count: no neighbouring context, no session evidence.
TEXT_ONLY = LongtermPolicy(weight_context=0.0, recall_session_weight=0.0)


def lexical_scores(ltm: LongTermMemory, query: str) -> dict[int, float]:
    return {h.id: next(c.raw for c in h.channels if c.channel == "lexical") for h in ltm.recall(query).hits}


def test_session_documents_never_change_how_turns_score() -> None:
    said = ["I prefer tabs.", "We use Postgres.", "Our CI runs on GitHub Actions."]
    scores = []
    for weight in (0.0, 0.5):  # 0: no session document is ever built
        with LongTermMemory(":memory:", policy=LongtermPolicy(recall_session_weight=weight), clock=lambda: T0) as ltm:
            for n, text in enumerate(said):
                ltm.add_turn(f"s{n % 2}", "user", text, at=T0, extract=False)
            first = lexical_scores(ltm, "postgres ci")
            assert lexical_scores(ltm, "postgres ci") == first
            scores.append(first)
    assert scores[0] == scores[1]
    assert sorted(scores[0]) == [1, 2, 3]  # 1 by its context: turn 3 is next to it in s0
