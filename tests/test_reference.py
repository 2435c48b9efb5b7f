"""Invariants of pruning, and the Rust core against the plain-Python reference."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from aircher_mem import _reference as reference
from aircher_mem.engine import ContextItem, ContextPolicy, ContextWindow
from conftest import NOW, T
from hypothesis import given, settings
from hypothesis import strategies as st

KINDS = st.sampled_from(
    [
        T.SystemPrompt(),
        T.UserMessage(),
        T.UserMessage("CodeWriting"),
        T.AssistantResponse(),
        T.AssistantResponse(["read_file"]),
        T.ToolResult("bash", "a.py"),
        T.CodeSnippet("a.py", (1, 40)),
        T.TaskState("t1", "fix it"),
        T.KnowledgeGraphQuery("callers of f", "g"),
    ]
)
TASKS = st.sampled_from([None, "t1", "t2"])


@dataclass
class Case:
    items: list[ContextItem]
    max_tokens: int
    current_task: str | None
    policy: ContextPolicy

    def window(self) -> ContextWindow:
        w = ContextWindow(self.max_tokens, self.policy)
        w.set_current_task(self.current_task)
        w.extend(self.items)
        return w


@st.composite
def cases(draw: st.DrawFn) -> Case:
    n = draw(st.integers(0, 40))
    items = []
    for i in range(n):
        # Few distinct ages and weights, so that equal scores (ties) are common.
        age = draw(st.one_of(st.sampled_from([0.0, 59.0, 60.0, 3600.0, -120.0]), st.floats(0, 86_400)))
        deps = draw(st.lists(st.integers(0, i - 1), max_size=3)) if i else []
        items.append(
            ContextItem(
                f"item{draw(st.integers(0, 10**6))}-{i}",
                "x",
                draw(KINDS),
                token_cost=draw(st.integers(0, 400)),
                timestamp=NOW - age,
                relevance_score=draw(st.sampled_from([0.0, 0.5, 1.0, 1.5]) | st.floats(0, 2)),
                task_id=draw(TASKS),
                dependencies=[items[d].id for d in deps],
                sticky=draw(st.sampled_from([False, False, False, True])),
            )
        )
    policy = draw(
        st.sampled_from(
            [
                ContextPolicy(),
                ContextPolicy(prune_threshold=0.5, prune_fraction=0.1, decay_minutes=7.0, dependent_boost=1.5),
                ContextPolicy(weight_code_snippet=3.0, current_task_boost=0.5, max_score=1.0),
            ]
        )
    )
    return Case(items, draw(st.integers(1, 8000)), draw(TASKS), policy)


@pytest.mark.slow
@settings(max_examples=200)
@given(cases())
def test_rust_scores_equal_the_reference(case: Case) -> None:
    rust = case.window().scores(NOW).tolist()
    ref = reference.relevance_scores(reference.ref_items(case.items), case.policy, case.current_task, NOW)
    assert rust == ref


@pytest.mark.slow
@settings(max_examples=200)
@given(cases())
def test_rust_prune_decisions_equal_the_reference(case: Case) -> None:
    result = case.window().prune(NOW)
    expected = reference.pruned_ids(
        reference.ref_items(case.items), case.policy, case.current_task, NOW, case.max_tokens
    )
    assert [i.id for i in result.removed] == expected


@pytest.mark.slow
@settings(max_examples=200)
@given(cases())
def test_prune_invariants(case: Case) -> None:
    w = case.window()
    before = {i.id: i for i in w.items()}
    result = w.maybe_prune(NOW)
    kept = w.items()
    kept_ids = {i.id for i in kept}
    # token_count is the sum of what is kept
    assert w.token_count == sum(i.token_cost for i in kept)
    # sticky items are never removed
    assert all(i.id in kept_ids for i in before.values() if i.sticky)
    # under the threshold afterwards, or only sticky items remain
    assert w.token_count <= w.threshold or all(i.sticky for i in kept)
    if result is None:
        assert len(kept) == len(before)
    else:
        removed_ids = [i.id for i in result.removed]
        assert kept_ids.isdisjoint(removed_ids) and kept_ids | set(removed_ids) == set(before)
        assert result.tokens_before - result.tokens_after == sum(i.token_cost for i in result.removed)
        # removed in window order, each with its score at the time
        assert removed_ids == [i for i in before if i in set(removed_ids)]
        scores = dict(zip(before, case.window().scores(NOW).tolist()))
        assert result.removed_scores == [scores[i] for i in removed_ids]
        # the survivors keep their order
        assert [i.id for i in kept] == [i for i in before if i in kept_ids]


@pytest.mark.slow
@given(cases(), st.lists(st.integers(0, 39), max_size=10))
def test_token_count_tracks_removals(case: Case, picks: list[int]) -> None:
    w = case.window()
    for p in picks:
        items = w.items()
        if items:
            w.remove(items[p % len(items)].id)
        assert w.token_count == sum(i.token_cost for i in w.items())
