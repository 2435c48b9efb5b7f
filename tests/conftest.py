from __future__ import annotations

from typing import Any

import pytest

import aircher_mem as am

NOW = 1_700_000_000.0

T = am.ContextItemType


def make_item(id: str, kind: am.ContextItemType | None = None, *, age_s: float = 0.0, tokens: int = 10, **kw: Any) -> am.ContextItem:
    return am.ContextItem(id, f"content {id}", kind or T.ToolResult("bash"), token_cost=tokens, timestamp=NOW - age_s, **kw)


@pytest.fixture
def clock() -> list[float]:
    """A settable clock: tests move time by assigning clock[0]."""
    return [NOW]
