"""The one context assembly: what goes into the window and in which order, the
memory budget, and the hooks' text within its character budget."""

from __future__ import annotations

from typing import Any

from aircher_mem import assembly
from aircher_mem.assembly import Brief, Piece, prompt_brief, session_brief, window_pieces
from aircher_mem.engine import ContextItemType, TokenCounter, item_to_message
from aircher_mem.results import RelevantCode, Tier, TierItem
from hypothesis import given
from hypothesis import strategies as st

TOKENS = TokenCounter("cl100k_base")


def tiers(*filled: tuple[str, list[str]]) -> list[Tier]:
    """The four tiers, those named in ``filled`` holding items with these texts."""
    texts = dict(filled)
    return [
        Tier(name, 100, 0, [TierItem("fact", None, t, 1, 1.0, []) for t in texts.get(name, [])])  # type: ignore[arg-type]
        for name in assembly.TIERS
    ]


RELEVANCE = {"critical": 1.0, "relevant": 0.8, "background": 0.6, "index": 0.4}


def test_window_pieces_come_in_order_one_piece_per_tier_that_holds_anything() -> None:
    asked: list[str] = []

    def code(message: str) -> list[RelevantCode]:
        asked.append("code")
        return [RelevantCode("a.py", (1, 2), "def a(): pass", 0.5, 5)]

    def context(message: str, budget: int) -> list[Tier]:
        asked.append(f"context {message} {budget}")
        return tiers(("critical", ["Failed: pytest", "fix it"]), ("background", ["[memory 2] (fact) uses ruff"]))

    pieces = window_pieces("why?", code=code, context=context, budget=250, relevance=RELEVANCE)
    first = next(pieces)
    assert asked == []  # the message comes before any provider is asked
    assert first == Piece("why?", ContextItemType.UserMessage(None))
    rest = list(pieces)
    assert asked == ["code", "context why? 250"]
    assert [(p.content, p.item_type.__class__.__name__, p.relevance) for p in rest] == [
        ("def a(): pass", "CodeSnippet", 0.5),
        ("## Critical\n- Failed: pytest\n- fix it", "AssistantResponse", 1.0),
        ("## Background\n- [memory 2] (fact) uses ruff", "AssistantResponse", 0.6),
    ]
    assert rest[0].item_type == ContextItemType.CodeSnippet("a.py", (1, 2))


def test_window_pieces_without_providers_or_budget_is_the_message_alone() -> None:
    asked: list[int] = []

    def context(message: str, budget: int) -> list[Tier]:
        asked.append(budget)
        return tiers(("critical", ["x"]))

    alone = [Piece("hi", ContextItemType.UserMessage(None))]
    assert list(window_pieces("hi", code=None, context=None, budget=100, relevance=RELEVANCE)) == alone
    assert list(window_pieces("hi", code=None, context=context, budget=0, relevance=RELEVANCE)) == alone
    assert asked == []


def test_the_renderer_is_the_one_the_engine_exports() -> None:
    assert item_to_message is assembly.item_to_message


def item(kind: str, ref: str | None, text: str, score: float) -> dict[str, Any]:
    return {"kind": kind, "ref": ref, "text": text, "tokens": 1, "score": score, "reasons": []}


ASSEMBLED = {
    "tiers": [
        {"name": "critical", "items": [item("error", None, "Failed: pytest on a.py: 1 failed", 1.0)]},
        {
            "name": "relevant",
            "items": [
                item("prediction", "file:a.py", "Likely next: a.py (0.80: recent)", 0.8),
                item("prediction", "file:b.py", "Likely next: b.py (0.30: graph)", 0.3),
                item("fact", "memory:4", "[memory 4] (fact) login uses sessions", 0.9),
                item("fact", "memory:5", "[memory 5] (fact) weakly related", 0.1),
                item("turn", "turn:5", "[turn 5] we said so", 0.9),
                item("task", "task:t0", "Past task t0 (completed): fix logout", 0.5),
            ],
        },
        {"name": "background", "items": [item("fact", "memory:1", "[memory 1] (fact) always\nrun ruff", 0.2)]},
        {"name": "index", "items": [item("topics", "index:topics", "Ask me about: auth (3)", 1.0)]},
    ]
}


def test_session_brief_shows_the_open_tasks_then_every_tier_but_turns() -> None:
    tasks = [{"task_id": "t1", "status": "active", "description": "fix   login\nflow"}]
    assert session_brief(tasks, ASSEMBLED, budget=4000, line_chars=300) == (
        "[aircher-mem] Project memory; cite a memory by its id, e.g. [memory 1].\n"
        "Open tasks:\n"
        "[task t1] (active) fix login flow\n"
        "Critical now (recent errors, their known fixes, decisions about this code):\n"
        "Failed: pytest on a.py: 1 failed\n"
        "Relevant:\n"
        "Likely next: a.py (0.80: recent)\n"
        "Likely next: b.py (0.30: graph)\n"
        "[memory 4] (fact) login uses sessions\n"
        "[memory 5] (fact) weakly related\n"
        "Past task t0 (completed): fix logout\n"
        "Project conventions and background:\n"
        "[memory 1] (fact) always run ruff\n"
        "Also in memory:\n"
        "Ask me about: auth (3)\n"
    )
    assert session_brief([], None, budget=4000, line_chars=300) == ""
    assert session_brief([], {"tiers": "nonsense"}, budget=4000, line_chars=300) == ""
    assert assembly.task_query(tasks, 10_000) == "fix   login\nflow"
    assert assembly.task_query(tasks, 5) == "fix  "


def test_prompt_brief_keeps_critical_and_relevant_items_that_score_enough() -> None:
    assert prompt_brief(ASSEMBLED, budget=4000, min_score=0.5, line_chars=300, min_confidence=0.5) == (
        "[aircher-mem] Recalled from project memory; cite a memory by its id, e.g. [memory 1].\n"
        "Critical now (recent errors, their known fixes, decisions about this code):\n"
        "Failed: pytest on a.py: 1 failed\n"
        "Relevant:\n"
        "Likely next: a.py (0.80: recent)\n"
        "[memory 4] (fact) login uses sessions\n"
        "Past task t0 (completed): fix logout\n"
    )
    only = {"tiers": [{"name": "relevant", "items": [item("fact", "memory:4", "[memory 4] (fact) x", 0.9)]}]}
    assert prompt_brief(only, budget=4000, min_score=1.0, line_chars=300, min_confidence=0.5) == ""
    assert prompt_brief(None, budget=4000, min_score=0.0, line_chars=300, min_confidence=0.0) == ""
    cut = prompt_brief(only, budget=4000, min_score=0.5, line_chars=12, min_confidence=0.5)
    assert cut.endswith("Relevant:\n[memory 4...\n")


def test_a_brief_cuts_at_the_first_line_that_does_not_fit() -> None:
    out = Brief("H", 20)
    out.section("T:", ["12345", "1234567890", "x"])
    assert out.text() == "H\nT:\n12345\n"  # "x" would fit, but lines stop at the first that does not
    assert Brief("H", 3).text() == ""


@given(
    header=st.text(max_size=30),
    sections=st.lists(st.tuples(st.text(max_size=20), st.lists(st.text(max_size=40), max_size=6)), max_size=5),
    budget=st.integers(0, 300),
)
def test_a_brief_never_exceeds_its_budget(header: str, sections: list[tuple[str, list[str]]], budget: int) -> None:
    out = Brief(header, budget)
    for title, lines in sections:
        out.section(title, lines)
    text = out.text()
    assert len(text) <= budget or text == ""
    if text:
        assert text.startswith(header + "\n") and text.endswith("\n")
