"""The agent loop's working memory: DynamicContextManager.

The agent calls :meth:`DynamicContextManager.prepare_context` before every model call
and the ``add_*`` helpers as the conversation grows. The Rust :class:`ContextWindow`
holds the items, scores them and prunes; this class counts tokens once per item,
adds what :mod:`aircher_mem.assembly` says goes in (relevant code and the assembled
context from pluggable providers), and reports every prune to an optional episodic sink.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from ._core import ContextItem, ContextItemType, ContextWindow, PruneResult
from .assembly import CodeProvider, ContextProvider, Message, Piece, item_to_message, window_pieces
from .config import Policy
from .tokens import TokenCounter

__all__ = [
    "DynamicContextManager",
    "CodeProvider",
    "ContextProvider",
    "EpisodicSink",
    "Message",
    "item_to_message",
]

log = logging.getLogger("aircher_mem.context")


class EpisodicSink(Protocol):
    """Where pruned items and snapshots go
    (:class:`aircher_mem.engine.EpisodicMemory` implements this)."""

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
    ) -> object: ...

    def store_snapshot(self, snapshot: dict[str, Any]) -> None: ...


class DynamicContextManager:
    """Keeps an agent's context window under budget.

    ``clock`` returns Unix seconds; inject one to make scoring reproducible.
    """

    def __init__(
        self,
        policy: Policy | None = None,
        *,
        session_id: str | None = None,
        code_provider: CodeProvider | None = None,
        context_provider: ContextProvider | None = None,
        episodic: EpisodicSink | None = None,
        clock: Callable[[], float] = time.time,
        tokens: TokenCounter | None = None,
    ) -> None:
        self.policy = policy or Policy()
        self.window = ContextWindow(self.policy.max_tokens, self.policy.context)
        self.tokens = tokens or TokenCounter(self.policy.encoding)
        self.session_id = session_id or os.urandom(16).hex()
        self.code_provider = code_provider
        self.context_provider = context_provider
        self.episodic = episodic
        self.clock = clock
        self.last_prune: PruneResult | None = None
        # file path -> ids of the CodeSnippet items showing it, oldest first
        self._views: dict[str, list[str]] = {}

    # -- adding items -----------------------------------------------------------------

    def add(
        self,
        content: str,
        item_type: ContextItemType,
        *,
        relevance: float = 1.0,
        sticky: bool = False,
        dependencies: Sequence[str] = (),
        task_id: str | None = None,
    ) -> ContextItem:
        """Adds one item, counting its tokens once; returns it (its ``id`` is new)."""
        item = ContextItem(
            os.urandom(16).hex(),
            content,
            item_type,
            token_cost=self.tokens.count(content),
            timestamp=self.clock(),
            relevance_score=relevance,
            task_id=task_id if task_id is not None else self.window.current_task,
            dependencies=list(dependencies),
            sticky=sticky,
        )
        self.window.add(item)
        return item

    def add_system_prompt(self, text: str, *, sticky: bool = True) -> ContextItem:
        return self.add(text, ContextItemType.SystemPrompt(), sticky=sticky)

    def add_user_message(self, text: str, *, intent: str | None = None) -> ContextItem:
        return self.add(text, ContextItemType.UserMessage(intent))

    def add_assistant_response(self, text: str, *, tool_calls: Sequence[str] = ()) -> ContextItem:
        return self.add(text, ContextItemType.AssistantResponse(list(tool_calls)))

    def add_tool_result(
        self, text: str, *, tool_name: str, file_path: str | None = None, dependencies: Sequence[str] = ()
    ) -> ContextItem:
        return self.add(text, ContextItemType.ToolResult(tool_name, file_path), dependencies=dependencies)

    def add_code_snippet(
        self, text: str, *, file_path: str, line_range: tuple[int, int], relevance: float = 1.0
    ) -> ContextItem:
        """Adds lines of a file; with ``Policy.supersede_views``, older views of the
        file that these lines cover are dropped (the agent sees the same lines once)."""
        if self.policy.supersede_views:
            start, end = line_range
            self._drop_views(file_path, lambda shown: start <= shown[0] and shown[1] <= end)
        item = self.add(text, ContextItemType.CodeSnippet(file_path, line_range), relevance=relevance)
        self._views.setdefault(file_path, []).append(item.id)
        return item

    def file_edited(self, file_path: str) -> list[ContextItem]:
        """Tells the manager a file changed. With ``Policy.drop_stale_views`` the code
        views of it shown before are dropped (they no longer match the file);
        returns what was dropped."""
        if not self.policy.drop_stale_views:
            self._views.pop(file_path, None)
            return []
        return self._drop_views(file_path, lambda shown: True)

    def _drop_views(self, file_path: str, covered: Callable[[tuple[int, int]], bool]) -> list[ContextItem]:
        dropped, kept = [], []
        for item_id in self._views.get(file_path, []):
            if item_id not in self.window:
                continue
            kind = self.window.get(item_id).item_type
            assert isinstance(kind, ContextItemType.CodeSnippet)
            if covered(kind.line_range):
                dropped.append(self.window.remove(item_id))
            else:
                kept.append(item_id)
        self._views[file_path] = kept
        return dropped

    def add_task_state(self, task_id: str, description: str) -> ContextItem:
        return self.add(description, ContextItemType.TaskState(task_id, description), task_id=task_id)

    def add_graph_query(self, query: str, result_summary: str) -> ContextItem:
        return self.add(result_summary, ContextItemType.KnowledgeGraphQuery(query, result_summary))

    # -- tasks and pruning ------------------------------------------------------------

    def set_current_task(self, task_id: str | None, description: str | None = None) -> None:
        """Switches task (items of the current task score higher) and snapshots."""
        self.window.set_current_task(task_id)
        if task_id is not None and description is not None:
            self.add_task_state(task_id, description)
        if self.episodic is not None:
            self.snapshot_context("task_switch")

    def maybe_prune(self) -> PruneResult | None:
        """Prunes if the window is over its threshold; reports the removed items."""
        before = self.window.token_count
        result = self.window.maybe_prune(self.clock())
        if result is None:
            return None
        log.info(
            "context at %d%%, pruned %d items, %d -> %d tokens",
            before * 100 // self.window.max_tokens,
            len(result.removed),
            result.tokens_before,
            result.tokens_after,
        )
        for item in result.removed:
            self.record_pruned(item)
        if self.episodic is not None:
            self.snapshot_context("pruning", result)
        self.last_prune = result
        return result

    def prepare_context(self, user_message: str) -> list[Message]:
        """The step before each model call: prune if needed, add the message,
        the relevant code and the context assembled for the message (in the order
        and form of :func:`aircher_mem.assembly.window_pieces`), and return the chat
        messages.

        The assembled context gets ``[assembly] window_share`` of ``max_tokens``:
        one item per tier that holds anything, with the tier's relevance
        (``[assembly] critical_relevance`` and so on); memories show as ``[memory
        <id>] (<kind>) <content>``, so the agent can cite them (``Memory.feedback``).

        A second ``maybe_prune`` after adding keeps the returned list under the
        threshold even when the new material pushed the window over it. The message
        being prepared always survives that prune: if it was among the lowest
        scored, it is put back (the window may then exceed its threshold by it).
        """
        self.maybe_prune()
        pieces = window_pieces(
            user_message,
            code=self.code_provider,
            context=self.context_provider,
            budget=int(self.policy.max_tokens * self.policy.assembly.window_share),
            relevance=self.policy.assembly.window_relevance(),
        )
        message = self._add_piece(next(pieces))
        for piece in pieces:
            self._add_piece(piece)
        pruned = self.maybe_prune()
        if pruned is not None and message.id not in self.window:
            self.window.add(message)
        return self.messages()

    def _add_piece(self, piece: Piece) -> ContextItem:
        kind = piece.item_type
        if isinstance(kind, ContextItemType.CodeSnippet):
            return self.add_code_snippet(
                piece.content, file_path=kind.file_path, line_range=kind.line_range, relevance=piece.relevance
            )
        return self.add(piece.content, kind, relevance=piece.relevance)

    def messages(self) -> list[Message]:
        """The window as chat messages, in the order items were added."""
        return [item_to_message(item) for item in self.window.items()]

    # -- episodic hooks ---------------------------------------------------------------

    def record_pruned(self, item: ContextItem) -> None:
        """Records a pruned item in the episodic store: a code snippet as a "viewed"
        file interaction (its lines, tokens and task); other items are only logged
        (tool results and assistant turns are recorded where they happened)."""
        kind = item.item_type
        if isinstance(kind, ContextItemType.CodeSnippet):
            if self.episodic is not None:
                self.episodic.record_file_interaction(
                    kind.file_path,
                    "viewed",
                    line_range=kind.line_range,
                    success=True,
                    context=f"Lines {kind.line_range[0]}-{kind.line_range[1]} pruned from context "
                    f"({item.token_cost} tokens)",
                    task_id=item.task_id,
                    session_id=self.session_id,
                )
        else:
            log.debug("pruned %s: %.200s", item.type_name, item.content)

    def snapshot_context(self, reason: str, pruned: PruneResult | None = None) -> dict[str, Any]:
        """The window as a snapshot (``timestamp``, ``session_id``, ``task_id``,
        ``total_tokens``, ``item_count``, ``items``, ``pruned_items``, ``reason``);
        stored when an episodic sink is set."""
        now = self.clock()
        items = self.window.items()
        scores = self.window.scores(now)
        snapshot: dict[str, Any] = {
            "timestamp": now,
            "session_id": self.session_id,
            "task_id": self.window.current_task,
            "total_tokens": self.window.token_count,
            "item_count": len(items),
            "items": [
                {
                    "id": it.id,
                    "type": it.type_name,
                    "tokens": it.token_cost,
                    "relevance": float(score),
                    "age_minutes": int((now - it.timestamp) // 60),
                }
                for it, score in zip(items, scores)
            ],
            "pruned_items": [
                {"id": it.id, "type": it.type_name, "tokens": it.token_cost, "relevance": score}
                for it, score in zip(pruned.removed, pruned.removed_scores)
            ]
            if pruned is not None
            else [],
            "reason": reason,
        }
        if self.episodic is not None:
            self.episodic.store_snapshot(snapshot)
        return snapshot
