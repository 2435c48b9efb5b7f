"""The one context assembly: what goes into an agent's context, in what order,
within which budget, and rendered how. Every caller that assembles context goes
through here:

- the window before a model call (``DynamicContextManager.prepare_context``, and so
  ``Memory.prepare_context``): :func:`window_pieces` says what is added, in order,
  and :func:`item_to_message` renders each item as a chat message;
- the preview of that window (``Memory.preview_context``): :func:`preview`;
- a conversation's context (``LongTermMemory.get_context``): :func:`conversation`;
- the text the Claude Code hooks inject (``SessionStart``, ``UserPromptSubmit``):
  :func:`session_brief` and :func:`prompt_brief`, built from the verbs' JSON answers
  (the hooks may be a server's clients), within a character budget.

This module only decides and renders: the window itself scores and prunes (the
Rust :class:`ContextWindow`), the callers fetch what is offered.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import NamedTuple

from ._core import ContextItem, ContextItemType, ContextWindow, PruneResult

# the hooks' text, in a module that imports nothing (a hook loads it on every prompt)
from .brief import MARKER, Brief, memory_line, one_line, prompt_brief, session_brief, task_query

# The results and the token counter load when a window is assembled. (Not
# typing.TYPE_CHECKING: type checkers treat any name TYPE_CHECKING as true.)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from .results import (
        ContextPreview,
        Conversation,
        MemoryRecord,
        RecallHit,
        RelevantCode,
        Task,
        Turn,
    )
    from .tokens import TokenCounter

__all__ = [
    "Message",
    "CodeProvider",
    "HistoryProvider",
    "MemoryProvider",
    "Piece",
    "window_pieces",
    "item_to_message",
    "describe",
    "preview",
    "conversation",
    "MARKER",
    "Brief",
    "one_line",
    "memory_line",
    "task_query",
    "session_brief",
    "prompt_brief",
]

Message = dict[str, str]

CodeProvider = Callable[[str], Iterable["RelevantCode"]]
"""``provider(user_message)`` -> snippets relevant to it (the knowledge graph)."""

HistoryProvider = Callable[[str, int], Iterable["Task"]]
"""``provider(user_message, limit)`` -> similar past tasks (episodic memory)."""

MemoryProvider = Callable[[str], Iterable["RecallHit"]]
"""``provider(user_message)`` -> recalled memories, best first (long-term memory)."""

# -- the window before a model call ----------------------------------------------------


class Piece(NamedTuple):
    """One item to add to the window: its text, its kind and its relevance."""

    content: str
    item_type: ContextItemType
    relevance: float = 1.0


def window_pieces(
    message: str,
    *,
    code: CodeProvider | None,
    history: HistoryProvider | None,
    similar_tasks: int,
    memories: MemoryProvider | None,
    memory_budget: int,
    recalled_relevance: float,
    tokens: TokenCounter,
) -> Iterator[Piece]:
    """What goes into the window for ``message``, in this order: the message
    itself; the code relevant to it, best first; one summary of the similar past
    tasks ("Relevant past work:" and a "- description: outcome" line each); the
    recalled memories, one item each ("Memory <id> (<kind>): <content>", so the
    agent can cite them), best first while they fit ``memory_budget`` tokens. The
    summary and each memory get ``recalled_relevance`` (``[longterm]
    recalled_relevance``).

    Each provider is asked only when the pieces before its own have been taken, so
    a caller that adds each piece as it comes sees the same order of effects."""
    yield Piece(message, ContextItemType.UserMessage(None))
    if code is not None:
        for snippet in code(message):
            yield Piece(
                snippet.content,
                ContextItemType.CodeSnippet(snippet.file_path, snippet.line_range),
                snippet.relevance,
            )
    if history is not None:
        past = list(history(message, similar_tasks))
        if past:
            summary = "Relevant past work:\n" + "\n".join(f"- {t.description}: {t.outcome or ''}" for t in past)
            yield Piece(summary, ContextItemType.AssistantResponse([]), recalled_relevance)
    if memories is not None:
        used = 0
        for hit in memories(message):
            text = f"Memory {hit.id} ({hit.kind}): {hit.content}"
            cost = tokens.count(text)
            if used + cost > memory_budget:
                break
            used += cost
            yield Piece(text, ContextItemType.AssistantResponse([]), recalled_relevance)


def item_to_message(item: ContextItem) -> Message:
    """Chat roles: system prompt -> system, assistant turns -> assistant, everything
    else the agent was shown (user text, tool output, code, task state, graph answers)
    -> user, with a one-line header saying what it is."""
    kind = item.item_type
    if isinstance(kind, ContextItemType.SystemPrompt):
        return {"role": "system", "content": item.content}
    if isinstance(kind, ContextItemType.AssistantResponse):
        return {"role": "assistant", "content": item.content}
    if isinstance(kind, ContextItemType.UserMessage):
        return {"role": "user", "content": item.content}
    if isinstance(kind, ContextItemType.ToolResult):
        where = f" on {kind.file_path}" if kind.file_path else ""
        header = f"[tool result: {kind.tool_name}{where}]"
    elif isinstance(kind, ContextItemType.CodeSnippet):
        header = f"[code: {kind.file_path} lines {kind.line_range[0]}-{kind.line_range[1]}]"
    elif isinstance(kind, ContextItemType.TaskState):
        return {"role": "user", "content": f"[current task {kind.task_id}] {kind.description}"}
    else:
        assert isinstance(kind, ContextItemType.KnowledgeGraphQuery)
        header = f"[code graph: {kind.query}]"
    return {"role": "user", "content": f"{header}\n{item.content}"}


def describe(item: ContextItem) -> str:
    """One short line naming an item: a code view's file and lines, else the start
    of its text."""
    kind = item.item_type
    if isinstance(kind, ContextItemType.CodeSnippet):
        return f"{kind.file_path}:{kind.line_range[0]}-{kind.line_range[1]}"
    one = " ".join(item.content.split())
    return one if len(one) <= 60 else one[:57] + "..."


def preview(
    message: str,
    window: ContextWindow,
    messages: Sequence[Message],
    pruned: PruneResult | None,
    *,
    now: float,
    code_tokens: int,
    notes: list[str],
) -> ContextPreview:
    """The window after ``prepare_context(message)`` returned ``messages``: every
    item with its score at ``now``, tokens and message, and the items the last prune
    (``pruned``) removed that are not back in the window."""
    from .results import ContextEntry, ContextPreview

    items = window.items()
    scores = window.scores(now)
    kept = {item.id for item in items}
    removed = (
        []
        if pruned is None
        else [
            ContextEntry(it.type_name, None, it.token_cost, float(s), describe(it), None)
            for it, s in zip(pruned.removed, pruned.removed_scores)
            if it.id not in kept
        ]
    )
    entries = [
        ContextEntry(it.type_name, m["role"], it.token_cost, float(s), describe(it), m["content"])
        for it, s, m in zip(items, scores, messages)
    ]
    return ContextPreview(
        message,
        window.max_tokens,
        window.threshold,
        code_tokens,
        window.token_count,
        entries,
        removed,
        sum(r.tokens for r in removed),
        notes,
    )


# -- a conversation's context ------------------------------------------------------------


def conversation(session_id: str, turns: Sequence[Turn], ranked: Sequence[MemoryRecord]) -> Conversation:
    """A conversation's context: the session's short-term window (its last turns,
    oldest first, as given) and the top memories by score (as ranked)."""
    from .results import Conversation

    return Conversation(session_id, list(turns), list(ranked))
