"""aircher-mem: memory for LLM coding agents.

``Memory.open(root)`` is the entry point: one project's store in ``<root>/.aircher/``
with its pieces wired together, and every verb the interfaces offer (``aircher-mem``
is its CLI, ``aircher-mem mcp`` its MCP server; both in ``aircher_mem.interfaces``).
An agent loop calls ``Memory.prepare_context(message)`` before each model call and
``Memory.record_tool_call(...)`` after each tool call.

Here: :class:`Memory`, the :class:`Policy` with every tunable number, the chat
:data:`Message` type, :func:`redact`, and the errors a user catches (every error is
in :mod:`aircher_mem.errors`). Verbs return the typed results of
:mod:`aircher_mem.results`; the raw engine (context window, code graph, episodic and
long-term memory, retrieval, token counting) is :mod:`aircher_mem.engine`.
"""

from ._core import __version__
from .config import Policy
from .context import Message
from .errors import (
    AircherError,
    EncodingUnavailableError,
    InvalidInputError,
    NotIndexedError,
    PolicyError,
    SchemaVersionError,
    StoreCorruptError,
    StoreError,
    StoreLockedError,
    StoreNotFoundError,
    UnknownMemoryError,
    UnknownSymbolError,
    UnknownTaskError,
)
from .memory import Memory
from .redact import redact

__all__ = [
    "__version__",
    "Memory",
    "Policy",
    "Message",
    "redact",
    "AircherError",
    "InvalidInputError",
    "StoreError",
    "StoreLockedError",
    "StoreCorruptError",
    "StoreNotFoundError",
    "NotIndexedError",
    "UnknownSymbolError",
    "UnknownMemoryError",
    "UnknownTaskError",
    "PolicyError",
    "EncodingUnavailableError",
    "SchemaVersionError",
]
