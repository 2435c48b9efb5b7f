"""The relevance formula and pruning rule in plain Python.

This is the readable specification the Rust core is tested against (scores and
pruning decisions must be identical on random windows) and the baseline the
benchmarks compare it with. It is not used on any hot path.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

from ._core import ContextItem, ContextItemType, ContextPolicy

__all__ = ["RefItem", "ref_items", "relevance_scores", "pruned_ids"]

_TYPE_WEIGHT = {
    "SystemPrompt": "weight_system_prompt",
    "TaskState": "weight_task_state",
    "UserMessage": "weight_user_message",
    "ToolResult": "weight_tool_result",
    "CodeSnippet": "weight_code_snippet",
    "KnowledgeGraphQuery": "weight_graph_query",
}


@dataclasses.dataclass(frozen=True)
class RefItem:
    id: str
    type_name: str
    has_tool_calls: bool
    timestamp: float
    relevance_score: float
    token_cost: int
    task_id: str | None
    dependencies: tuple[str, ...]
    sticky: bool


def ref_items(items: Sequence[ContextItem]) -> list[RefItem]:
    out = []
    for it in items:
        kind = it.item_type
        tool_calls = isinstance(kind, ContextItemType.AssistantResponse) and bool(kind.tool_calls)
        out.append(
            RefItem(
                it.id,
                it.type_name,
                tool_calls,
                it.timestamp,
                it.relevance_score,
                it.token_cost,
                it.task_id,
                tuple(it.dependencies),
                it.sticky,
            )
        )
    return out


def _weight(policy: ContextPolicy, item: RefItem) -> float:
    if item.type_name == "AssistantResponse":
        return policy.weight_assistant_tool_calls if item.has_tool_calls else policy.weight_assistant_text
    return float(getattr(policy, _TYPE_WEIGHT[item.type_name]))


def relevance_scores(
    items: Sequence[RefItem], policy: ContextPolicy, current_task: str | None, now: float
) -> list[float]:
    present = {it.id for it in items}
    dependents = dict.fromkeys(present, 0)
    for it in items:
        for dep in set(it.dependencies):
            if dep in present:
                dependents[dep] += 1
    decay, boost, dep_boost, top = (
        policy.decay_minutes,
        policy.current_task_boost,
        policy.dependent_boost,
        policy.max_score,
    )
    scores = []
    for it in items:
        age_minutes = max(float(math.trunc((now - it.timestamp) / 60.0)), 0.0)  # whole minutes, as chrono
        score = 1.0
        score *= math.exp(-age_minutes / decay)
        if current_task is not None and it.task_id == current_task:
            score *= boost
        score *= 1.0 + dependents[it.id] * dep_boost
        score *= _weight(policy, it)
        score *= it.relevance_score
        scores.append(min(max(score, 0.0), top))
    return scores


def pruned_ids(
    items: Sequence[RefItem], policy: ContextPolicy, current_task: str | None, now: float, max_tokens: int
) -> list[str]:
    """Ids a prune removes (lowest score first; ties: older first, then id), listed
    in window order."""
    scores = relevance_scores(items, policy, current_task, now)
    tokens = sum(it.token_cost for it in items)
    threshold = int(max_tokens * policy.prune_threshold)
    target = max(int(tokens * policy.prune_fraction), tokens - threshold)
    candidates = sorted(
        (i for i, it in enumerate(items) if not it.sticky),
        key=lambda i: (scores[i], items[i].timestamp, items[i].id),
    )
    removed, removed_tokens = [], 0
    for i in candidates:
        if removed_tokens >= target:
            break
        removed_tokens += items[i].token_cost
        removed.append(i)
    return [items[i].id for i in sorted(removed)]
