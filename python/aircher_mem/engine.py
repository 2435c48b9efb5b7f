"""The raw engine, for those who assemble the pieces themselves.

:class:`aircher_mem.Memory` wires these together over one project's store; import
from here to use a piece alone: the Rust context window and its items
(:class:`ContextWindow`, :class:`ContextItem`, :class:`ContextItemType`,
:class:`ContextPolicy`, :class:`PruneResult`), the code graph and its values
(:class:`KnowledgeGraph`, :class:`GraphView`, :class:`SearchParams`, :class:`CodeHit`,
:class:`Definition`, :class:`Reference`), the context manager of an agent loop
(:class:`DynamicContextManager` and the provider types it takes), episodic and
long-term memory (:class:`EpisodicMemory`, :class:`LongTermMemory`), code retrieval
(:func:`search_code`, :func:`find_relevant_to_query`, :func:`graph_code_provider`),
token counting (:class:`TokenCounter`, :func:`available_encodings`) and the sections of
the :class:`aircher_mem.Policy`.
"""

from ._core import (
    CodeHit,
    ContextItem,
    ContextItemType,
    ContextPolicy,
    ContextWindow,
    Definition,
    GraphView,
    KnowledgeGraph,
    PruneResult,
    Reference,
    SearchParams,
)
from .config import EpisodicPolicy, GraphPolicy, HooksPolicy, LongtermPolicy, RetrievalPolicy, ServerPolicy
from .context import (
    CodeProvider,
    ContextProvider,
    DynamicContextManager,
    EpisodicSink,
    item_to_message,
)
from .episodic import EpisodicMemory
from .longterm import LongTermMemory
from .retrieval import find_relevant_to_query, graph_code_provider, search_code
from .tokens import TokenCounter, available_encodings

__all__ = [
    "ContextWindow",
    "ContextItem",
    "ContextItemType",
    "ContextPolicy",
    "PruneResult",
    "KnowledgeGraph",
    "GraphView",
    "SearchParams",
    "CodeHit",
    "Definition",
    "Reference",
    "DynamicContextManager",
    "CodeProvider",
    "ContextProvider",
    "EpisodicSink",
    "item_to_message",
    "EpisodicMemory",
    "LongTermMemory",
    "TokenCounter",
    "available_encodings",
    "search_code",
    "find_relevant_to_query",
    "graph_code_provider",
    "GraphPolicy",
    "EpisodicPolicy",
    "RetrievalPolicy",
    "LongtermPolicy",
    "ServerPolicy",
    "HooksPolicy",
]
