"""DynamicContextManager: the agent loop's calls, providers and episodic hooks."""

from __future__ import annotations

from typing import Any

import aircher_mem as am
import pytest
from aircher_mem.engine import DynamicContextManager
from aircher_mem.results import RelevantCode, Tier, TierItem
from conftest import NOW


def tiers(*filled: tuple[str, list[str]]) -> list[Tier]:
    """The four tiers, those named in ``filled`` holding items with these texts."""
    texts = dict(filled)
    return [
        Tier(name, 100, 0, [TierItem("fact", None, t, 1, 1.0, []) for t in texts.get(name, [])])  # type: ignore[arg-type]
        for name in ("critical", "relevant", "background", "index")
    ]


class Sink:
    def __init__(self) -> None:
        self.interactions: list[tuple[Any, ...]] = []
        self.snapshots: list[dict[str, Any]] = []

    def record_file_interaction(
        self,
        file_path: str,
        operation: str,
        *,
        line_range: tuple[int, int] | None = None,
        success: bool = True,
        context: str | None = None,
        task_id: str | None = None,
        session_id: str | None = None,
    ) -> None:
        self.interactions.append((session_id, task_id, file_path, operation, line_range, success))

    def store_snapshot(self, snapshot: dict[str, Any]) -> None:
        self.snapshots.append(snapshot)


def manager(clock: list[float], max_tokens: int = 1000, **kw: Any) -> DynamicContextManager:
    return DynamicContextManager(am.Policy(max_tokens=max_tokens), session_id="s1", clock=lambda: clock[0], **kw)


def test_add_helpers_count_tokens_once_and_tag_the_task(clock: list[float]) -> None:
    m = manager(clock)
    sys = m.add_system_prompt("You are a careful coding agent.")
    assert sys.sticky and sys.token_cost == m.tokens.count("You are a careful coding agent.")
    m.set_current_task("t1", "fix the login bug")
    tool = m.add_tool_result("ok", tool_name="bash", file_path="a.py")
    code = m.add_code_snippet("def login(): ...", file_path="auth.py", line_range=(3, 9))
    m.add_assistant_response("reading auth.py", tool_calls=["read_file"])
    m.add_graph_query("callers of login", "views.py:12")
    m.add_user_message("also check logout", intent="CodeReading")
    assert tool.task_id == "t1" and code.task_id == "t1" and code.timestamp == NOW
    kinds = [i.type_name for i in m.window.items()]
    assert kinds == [
        "SystemPrompt",
        "TaskState",
        "ToolResult",
        "CodeSnippet",
        "AssistantResponse",
        "KnowledgeGraphQuery",
        "UserMessage",
    ]
    assert m.window.token_count == sum(i.token_cost for i in m.window.items())


def test_prepare_context_returns_chat_messages_with_code_and_the_assembled_tiers(clock: list[float]) -> None:
    seen: list[tuple[str, int]] = []

    def code(msg: str) -> list[RelevantCode]:
        return [RelevantCode("auth.py", (10, 12), "def login(user):\n    ...", 0.9)]

    def context(msg: str, budget: int) -> list[Tier]:
        seen.append((msg, budget))
        return tiers(("relevant", ["Past task t0 (completed): fix session expiry -> patched auth.py:40"]))

    m = manager(clock, code_provider=code, context_provider=context)
    m.add_system_prompt("You are an agent.")
    messages = m.prepare_context("Why does login fail?")
    assert seen == [("Why does login fail?", 50)]  # [assembly] window_share 0.05 of 1,000 tokens
    assert messages == [
        {"role": "system", "content": "You are an agent."},
        {"role": "user", "content": "Why does login fail?"},
        {"role": "user", "content": "[code: auth.py lines 10-12]\ndef login(user):\n    ..."},
        {
            "role": "assistant",
            "content": "## Relevant\n- Past task t0 (completed): fix session expiry -> patched auth.py:40",
        },
    ]
    snippet = m.window.items()[2]
    assert snippet.relevance_score == 0.9 and m.window.items()[3].relevance_score == 0.8


def test_prepare_context_keeps_the_window_under_budget(clock: list[float]) -> None:
    sink = Sink()
    m = manager(clock, max_tokens=300, episodic=sink)
    m.add_system_prompt("system rules")
    for n in range(20):
        clock[0] = NOW + n * 60
        m.add_code_snippet("x = 1\n" * 20, file_path=f"f{n}.py", line_range=(1, 20))
        m.prepare_context(f"step {n}")
        assert m.window.token_count <= m.window.threshold
    assert m.window.pruning_count > 0
    assert m.messages()[0] == {"role": "system", "content": "system rules"}
    # Pruned snippets were reported as "viewed" interactions with their line ranges.
    assert sink.interactions and all(i[3] == "viewed" and i[4] == (1, 20) and i[0] == "s1" for i in sink.interactions)
    assert [s["reason"] for s in sink.snapshots].count("pruning") == m.window.pruning_count


def test_snapshot_has_the_seed_shape(clock: list[float]) -> None:
    sink = Sink()
    m = manager(clock, max_tokens=100, episodic=sink)
    m.set_current_task("t9")
    assert sink.snapshots[-1]["reason"] == "task_switch" and sink.snapshots[-1]["task_id"] == "t9"
    first = m.add_tool_result("word " * 50, tool_name="bash")
    clock[0] = NOW + 3600
    m.add_user_message("word " * 40)
    result = m.maybe_prune()
    assert result is not None and [i.id for i in result.removed] == [first.id]
    snap = sink.snapshots[-1]
    assert set(snap) == {
        "timestamp",
        "session_id",
        "task_id",
        "total_tokens",
        "item_count",
        "items",
        "pruned_items",
        "reason",
    }
    assert (snap["reason"], snap["session_id"], snap["task_id"], snap["item_count"]) == ("pruning", "s1", "t9", 1)
    assert snap["total_tokens"] == m.window.token_count
    assert snap["items"][0]["type"] == "UserMessage" and snap["items"][0]["age_minutes"] == 0
    assert snap["pruned_items"] == [
        {
            "id": first.id,
            "type": "ToolResult",
            "tokens": first.token_cost,
            "relevance": pytest.approx(0.8 * 2.0 * 2.718281828459045**-1),
        }
    ]
    assert m.last_prune is result


def test_messages_render_every_item_type(clock: list[float]) -> None:
    m = manager(clock)
    m.add_tool_result("3 passed", tool_name="pytest", file_path="tests/")
    m.add_task_state("t2", "add caching")
    m.add_graph_query("find_symbol cache", "cache.py:4")
    assert [msg["content"].splitlines()[0] for msg in m.messages()] == [
        "[tool result: pytest on tests/]",
        "[current task t2] add caching",
        "[code graph: find_symbol cache]",
    ]


def test_bad_provider_output_is_rejected_without_corrupting_the_window(clock: list[float]) -> None:
    def code(msg: str) -> list[RelevantCode]:
        return [RelevantCode("a.py", (9, 1), "x")]

    m = manager(clock, code_provider=code)
    with pytest.raises(am.InvalidInputError, match="line_range"):
        m.prepare_context("hi")
    assert [i.type_name for i in m.window.items()] == ["UserMessage"]
    assert m.window.token_count == m.window.items()[0].token_cost


def test_supersede_and_stale_views(clock: list[float]) -> None:
    m = manager(clock)
    old = m.add_code_snippet("lines 1-50", file_path="a.py", line_range=(1, 50))
    part = m.add_code_snippet("lines 60-70", file_path="a.py", line_range=(60, 70))
    other = m.add_code_snippet("b", file_path="b.py", line_range=(1, 50))
    wide = m.add_code_snippet("lines 1-80", file_path="a.py", line_range=(1, 80))  # covers old and part
    assert [i.id for i in m.window.items()] == [other.id, wide.id]
    assert [i.id for i in m.file_edited("a.py")] == [wide.id]
    assert [i.id for i in m.window.items()] == [other.id]
    assert old.id not in m.window and part.id not in m.window


def test_the_unweighted_policy_keeps_every_view(clock: list[float]) -> None:
    m = DynamicContextManager(am.Policy.unweighted(max_tokens=1000), clock=lambda: clock[0])
    m.add_code_snippet("x", file_path="a.py", line_range=(1, 50))
    m.add_code_snippet("y", file_path="a.py", line_range=(1, 80))
    assert m.file_edited("a.py") == [] and len(m.window) == 2


def test_each_tier_gets_its_relevance_and_a_zero_share_assembles_nothing(clock: list[float]) -> None:
    asked: list[int] = []

    def context(message: str, budget: int) -> list[Tier]:
        asked.append(budget)
        return tiers(("critical", ["a"]), ("relevant", ["b"]), ("background", ["c"]), ("index", ["d"]))

    policy = am.Policy.from_dict(
        {
            "context": {"max_tokens": 2000},
            "assembly": {"window_share": 0.1, "relevant_relevance": 0.25, "index_relevance": 0.0},
        }
    )
    m = DynamicContextManager(policy, clock=lambda: clock[0], context_provider=context)
    m.prepare_context("how do we test?")
    assert asked == [200]
    assert [(i.content, i.relevance_score) for i in m.window.items()[1:]] == [
        ("## Critical\n- a", 1.0),
        ("## Relevant\n- b", 0.25),
        ("## Background\n- c", 0.6),
        ("## Index\n- d", 0.0),
    ]
    shut = DynamicContextManager(
        am.Policy.from_dict({"assembly": {"window_share": 0.0}}), clock=lambda: clock[0], context_provider=context
    )
    assert shut.prepare_context("how do we test?") == [{"role": "user", "content": "how do we test?"}]
    assert asked == [200]
