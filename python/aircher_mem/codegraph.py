"""Relevant code for a message, from the knowledge graph, within a token budget.

The definitions named in the message (identifiers and file paths it mentions) and
the files already in focus seed a personalized PageRank over the graph; the best
ranked functions and classes are read from disk and taken in order while they fit.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ._core import KnowledgeGraph
from .context import CodeProvider, RelevantCode
from .tokens import TokenCounter

__all__ = ["find_relevant_to_query", "graph_code_provider"]

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")
_PATH = re.compile(r"[\w.-]+(?:/[\w.-]+)*\.\w+")
MAX_SNIPPET_LINES = 120


def find_relevant_to_query(
    graph: KnowledgeGraph,
    text: str,
    *,
    max_tokens: int,
    focus_files: Sequence[str] = (),
    tokens: TokenCounter | None = None,
) -> list[RelevantCode]:
    """Code snippets (path, line range, content, relevance in (0, 1]) relevant to
    ``text``, best first, whose token counts add up to at most ``max_tokens``.

    A snippet overlapping one already taken (a method of a taken class, a class
    around a taken method) is skipped;
    snippets longer than 120 lines are cut there. Files that cannot be read any more
    are skipped."""
    counter = tokens or TokenCounter()
    names = sorted(set(_IDENTIFIER.findall(text)))
    files = sorted(set(_PATH.findall(text)) | set(focus_files))
    ranked = graph.rank(names, files, limit=200)
    top = ranked[0][1] if ranked else 1.0
    chosen: list[RelevantCode] = []
    budget = max_tokens
    lines_cache: dict[str, list[str] | None] = {}
    for symbol, score in ranked:
        if symbol.kind not in ("function", "class"):
            continue
        if any(c.file_path == symbol.path and c.line_range[0] <= symbol.end_line and symbol.line <= c.line_range[1]
               for c in chosen):
            continue
        if symbol.path not in lines_cache:
            try:
                lines_cache[symbol.path] = (graph.root / symbol.path).read_text(encoding="utf-8", errors="replace").splitlines()
            except OSError:
                lines_cache[symbol.path] = None
        lines = lines_cache[symbol.path]
        if lines is None:
            continue
        end = min(symbol.end_line, symbol.line + MAX_SNIPPET_LINES - 1, len(lines))
        content = "\n".join(lines[symbol.line - 1:end])
        cost = counter.count(content)
        if cost > budget:
            continue
        budget -= cost
        chosen.append(RelevantCode(symbol.path, (symbol.line, end), content, min(1.0, score / top)))
        if budget <= 0:
            break
    return chosen


def graph_code_provider(graph: KnowledgeGraph, *, max_tokens: int = 2000,
                        tokens: TokenCounter | None = None) -> CodeProvider:
    """A ``code_provider`` for :class:`DynamicContextManager`: each message brings in
    up to ``max_tokens`` of the code most relevant to it."""
    counter = tokens or TokenCounter()

    def provide(message: str) -> list[RelevantCode]:
        return find_relevant_to_query(graph, message, max_tokens=max_tokens, tokens=counter)

    return provide
