"""aircher-mem: memory for LLM coding agents.

A Rust-pruned context window (:class:`ContextWindow`, :class:`DynamicContextManager`),
a policy with every tunable number (:class:`Policy`) and offline token counting.
"""

from ._core import (
    ContextItem,
    ContextItemType,
    ContextPolicy,
    ContextWindow,
    PruneResult,
    __version__,
)
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
