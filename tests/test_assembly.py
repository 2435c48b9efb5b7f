"""The one context assembly: what goes into the window and in which order, the
memory budget, and the hooks' text within its character budget."""

from __future__ import annotations

from typing import Any

from aircher_mem import assembly
from aircher_mem.assembly import Brief, Piece, prompt_brief, session_brief, window_pieces
from aircher_mem.engine import ContextItemType, TokenCounter, item_to_message
from aircher_mem.results import RecallHit, RelevantCode, Task
from hypothesis import given
from hypothesis import strategies as st

TOKENS = TokenCounter("cl100k_base")


def past(description: str, outcome: str | None) -> Task:
    """A finished past task, as a history provider returns it."""
    return Task("t0", "s0", description, None, "completed", 0.0, 1.0, [], {}, outcome)


def hit(memory_id: int, content: str) -> RecallHit:
    return RecallHit("fact", memory_id, content, 1.0, [], [], 0.0, 0.0, 0.0, [])


def test_window_pieces_come_in_order_and_memories_stop_at_their_budget() -> None:
    asked: list[str] = []

    def code(message: str) -> list[RelevantCode]:
        asked.append("code")
        return [RelevantCode("a.py", (1, 2), "def a(): pass", 0.5, 5)]

    def history(message: str, limit: int) -> list[Task]:
        asked.append(f"history {limit}")
        return [past("fix login", "done"), past("add tests", "failed")]

    def memories(message: str) -> list[RecallHit]:
        asked.append("memories")
        return [hit(1, "uses pytest"), hit(2, "word " * 100), hit(3, "short")]

    cost = TOKENS.count("Memory 1 (fact): uses pytest")
    pieces = window_pieces(
        "why?",
        code=code,
        history=history,
        similar_tasks=2,
        memories=memories,
        memory_budget=cost + 5,
        recalled_relevance=0.8,
        tokens=TOKENS,
    )
    first = next(pieces)
    assert asked == []  # the message comes before any provider is asked
    assert first == Piece("why?", ContextItemType.UserMessage(None))
    rest = list(pieces)
    assert asked == ["code", "history 2", "memories"]
    assert [(p.content, p.item_type.__class__.__name__, p.relevance) for p in rest] == [
        ("def a(): pass", "CodeSnippet", 0.5),
        ("Relevant past work:\n- fix login: done\n- add tests: failed", "AssistantResponse", 0.8),
        # the second memory does not fit, and the ones after it are not tried
        ("Memory 1 (fact): uses pytest", "AssistantResponse", 0.8),
    ]
    assert rest[0].item_type == ContextItemType.CodeSnippet("a.py", (1, 2))


def test_window_pieces_without_providers_is_the_message_alone() -> None:
    pieces = window_pieces(
        "hi",
        code=None,
        history=None,
        similar_tasks=3,
        memories=None,
        memory_budget=100,
        recalled_relevance=0.8,
        tokens=TOKENS,
    )
    assert list(pieces) == [Piece("hi", ContextItemType.UserMessage(None))]


def test_the_renderer_is_the_one_the_engine_exports() -> None:
    assert item_to_message is assembly.item_to_message


def test_session_brief_shows_each_memory_once_and_leaves_turns_out() -> None:
    tasks = [{"task_id": "t1", "status": "active", "description": "fix   login\nflow"}]
    ranked = [
        {"id": 1, "content": "always run ruff", "importance": 1},
        {"id": 2, "content": "not important", "importance": 0},
    ]
    facts = [{"id": 1, "content": "always run ruff"}, {"id": 3, "content": "a Django app"}]
    relevant = [
        {"id": 3, "content": "a Django app", "kind": "fact"},
        {"id": 4, "content": "login uses sessions", "kind": "fact"},
        {"id": 5, "content": "we said so", "kind": "turn"},
    ]
    assert session_brief(tasks, ranked, facts, relevant, budget=4000, line_chars=300) == (
        "[aircher-mem] Project memory; cite a memory by its id, e.g. [memory 1].\n"
        "Open tasks:\n"
        "[task t1] (active) fix login flow\n"
        "Project rules and facts:\n"
        "[memory 1] always run ruff\n"
        "[memory 3] a Django app\n"
        "Relevant to the open tasks:\n"
        "[memory 4] login uses sessions\n"
    )
    assert session_brief([], [], [], [], budget=4000, line_chars=300) == ""
    assert assembly.task_query(tasks, 10_000) == "fix   login\nflow"
    assert assembly.task_query(tasks, 5) == "fix  "


def test_prompt_brief_keeps_the_memories_scoring_enough() -> None:
    hits = [
        {"id": 1, "content": "a", "kind": "fact", "score": 0.9},
        {"id": 2, "content": "b", "kind": "fact", "score": 0.1},
        {"id": 3, "content": "c", "kind": "turn", "score": 0.9},
        {"id": 4, "content": "d", "kind": "fact", "score": "high"},
    ]
    assert prompt_brief(hits, budget=4000, min_score=0.5, line_chars=300) == (
        "[aircher-mem] Recalled from project memory; cite a memory by its id, e.g. [memory 1].\n"
        "Memories that may bear on this prompt:\n"
        "[memory 1] a\n"
    )
    assert prompt_brief(hits, budget=4000, min_score=1.0, line_chars=300) == ""


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


def _memory(memory_id: int, content: str) -> dict[str, Any]:
    return {"id": memory_id, "content": content}


def test_memory_lines_are_one_line_and_cut() -> None:
    assert assembly.memory_line(_memory(7, "a\n\tb"), 300) == "[memory 7] a b"
    line = assembly.memory_line(_memory(8, "x" * 400), 300)
    assert line == "[memory 8] " + "x" * 297 + "..."
    assert assembly.memory_line(_memory(9, "y" * 400), 20) == "[memory 9] " + "y" * 17 + "..."
