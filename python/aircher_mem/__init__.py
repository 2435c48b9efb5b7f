"""aircher-mem: memory for LLM coding agents.

``Memory.open(root)`` is the entry point: one project's store in ``<root>/.aircher/``
with the pieces below wired together, and every verb the interfaces offer
(``aircher-mem`` is its CLI, ``aircher-mem mcp`` its MCP server; both in
``aircher_mem.interfaces``). Verbs return the typed results of ``aircher_mem.results``.

A Rust-pruned context window (:class:`ContextWindow`, :class:`DynamicContextManager`),
episodic memory in DuckDB (:class:`EpisodicMemory`), the codebase as a graph
(:class:`KnowledgeGraph`), a policy with every tunable number (:class:`Policy`) and
offline token counting.
"""

from ._core import (
    CodeHit,
    ContextItem,
    ContextItemType,
    ContextPolicy,
    ContextWindow,
    KnowledgeGraph,
    PruneResult,
    Reference,
    SearchParams,
    Symbol,
    __version__,
)
from .config import EpisodicPolicy, GraphPolicy, Policy, RetrievalPolicy, ServerPolicy
from .context import (
    CodeProvider,
    DynamicContextManager,
    EpisodicSink,
    HistoryProvider,
    Message,
    item_to_message,
)
from .episodic import EpisodicMemory
from .errors import (
    AircherError,
    DuplicateItemError,
    EncodingUnavailableError,
    FileMissingError,
    InvalidInputError,
    NotIndexedError,
    PolicyError,
    SchemaVersionError,
    StoreCorruptError,
    StoreError,
    StoreLockedError,
    StoreNotFoundError,
    TaskStateError,
    UnknownDependencyError,
    UnknownItemError,
    UnknownSymbolError,
    UnknownTaskError,
)
from .memory import Memory
from .redact import pii_tags, redact, redact_value
from .results import (
    ChannelScore,
    CodeSearch,
    CoEdit,
    FileInteraction,
    FoundCode,
    IndexReport,
    LearnedPattern,
    PastTask,
    RelevantCode,
    SimilarTask,
    TaskRecord,
    ToolStats,
)
from .retrieval import find_relevant_to_query, graph_code_provider, search_code
from .tokens import TokenCounter, available_encodings

__all__ = [
    "__version__",
    "Memory",
    "IndexReport",
    "ContextItem",
    "ContextItemType",
    "ContextPolicy",
    "ContextWindow",
    "PruneResult",
    "KnowledgeGraph",
    "SearchParams",
    "CodeHit",
    "Symbol",
    "Reference",
    "find_relevant_to_query",
    "graph_code_provider",
    "search_code",
    "CodeSearch",
    "FoundCode",
    "ChannelScore",
    "Policy",
    "GraphPolicy",
    "EpisodicPolicy",
    "RetrievalPolicy",
    "ServerPolicy",
    "DynamicContextManager",
    "CodeProvider",
    "HistoryProvider",
    "EpisodicSink",
    "Message",
    "PastTask",
    "RelevantCode",
    "item_to_message",
    "EpisodicMemory",
    "FileInteraction",
    "ToolStats",
    "CoEdit",
    "TaskRecord",
    "SimilarTask",
    "LearnedPattern",
    "TokenCounter",
    "available_encodings",
    "redact",
    "redact_value",
    "pii_tags",
    "AircherError",
    "DuplicateItemError",
    "EncodingUnavailableError",
    "InvalidInputError",
    "PolicyError",
    "UnknownDependencyError",
    "UnknownItemError",
    "StoreError",
    "StoreLockedError",
    "StoreCorruptError",
    "StoreNotFoundError",
    "NotIndexedError",
    "FileMissingError",
    "UnknownSymbolError",
    "SchemaVersionError",
    "UnknownTaskError",
    "TaskStateError",
]
