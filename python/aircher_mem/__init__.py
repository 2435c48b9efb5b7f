"""aircher-mem: memory for LLM coding agents.

A Rust-pruned context window (:class:`ContextWindow`, :class:`DynamicContextManager`),
episodic memory in DuckDB (:class:`EpisodicMemory`), the codebase as a graph
(:class:`KnowledgeGraph`), a policy with every tunable number (:class:`Policy`) and
offline token counting.
"""

from ._core import (
    Reference,
    ContextItem,
    ContextItemType,
    ContextPolicy,
    ContextWindow,
    KnowledgeGraph,
    PruneResult,
    Symbol,
    __version__,
)
from .codegraph import find_relevant_to_query, graph_code_provider
from .config import Policy
from .context import (
    CodeProvider,
    DynamicContextManager,
    EpisodicSink,
    HistoryProvider,
    Message,
    PastTask,
    RelevantCode,
    item_to_message,
)
from .episodic import (
    CoEdit,
    EpisodicMemory,
    FileInteraction,
    LearnedPattern,
    SimilarTask,
    TaskRecord,
    ToolStats,
)
from .errors import (
    AircherError,
    DuplicateItemError,
    EncodingUnavailableError,
    InvalidInputError,
    PolicyError,
    SchemaVersionError,
    StoreCorruptError,
    StoreError,
    StoreLockedError,
    TaskStateError,
    UnknownDependencyError,
    UnknownItemError,
    UnknownTaskError,
)
from .tokens import TokenCounter, available_encodings

__all__ = [
    "__version__",
    "ContextItem",
    "ContextItemType",
    "ContextPolicy",
    "ContextWindow",
    "PruneResult",
    "KnowledgeGraph",
    "Symbol",
    "Reference",
    "find_relevant_to_query",
    "graph_code_provider",
    "Policy",
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
    "SchemaVersionError",
    "UnknownTaskError",
    "TaskStateError",
]
