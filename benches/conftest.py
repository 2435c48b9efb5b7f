from __future__ import annotations

import random

import pytest
from aircher_mem.engine import ContextItem, ContextItemType


def pytest_configure(config: pytest.Config) -> None:
    """Under ``pytest -n`` (pytest-xdist), each benchmark module runs whole in one
    worker, so its module-scoped setup (a copied tree, an index, a built store) is made
    once: ``-n`` alone (``--dist load``) becomes ``--dist loadfile``."""
    if getattr(config.option, "dist", "no") == "load":
        config.option.dist = "loadfile"


NOW = 1_700_000_000.0
KINDS = [
    ContextItemType.UserMessage(),
    ContextItemType.AssistantResponse(),
    ContextItemType.AssistantResponse(["bash"]),
    ContextItemType.ToolResult("bash", "src/app.py"),
    ContextItemType.CodeSnippet("src/app.py", (10, 80)),
    ContextItemType.TaskState("t1", "fix"),
    ContextItemType.KnowledgeGraphQuery("callers of f", "g, h"),
]


def agent_like_window(n: int, seed: int = 0) -> tuple[list[ContextItem], int]:
    """n items shaped like an agent session: a sticky system prompt, a mix of item
    types over the last 3 hours, 10 % depending on an earlier item, three tasks.
    Returns the items and a max_tokens that puts them at 90 % of the window, so one
    prune runs the reference policy's path (threshold 80 %, remove 30 %)."""
    rng = random.Random(seed)
    items = [
        ContextItem(
            "sys", "system", ContextItemType.SystemPrompt(), token_cost=500, timestamp=NOW - 3 * 3600, sticky=True
        )
    ]
    for i in range(1, n):
        deps = [items[rng.randrange(i)].id] if rng.random() < 0.1 else []
        items.append(
            ContextItem(
                f"item-{i:07d}",
                "",
                rng.choice(KINDS),
                token_cost=rng.randint(10, 2000),
                timestamp=NOW - rng.uniform(0, 3 * 3600),
                relevance_score=rng.choice([1.0, 1.0, 0.8, 0.5]),
                task_id=rng.choice(["t1", "t2", "t3"]),
                dependencies=deps,
            )
        )
    total = sum(i.token_cost for i in items)
    return items, int(total / 0.9)
