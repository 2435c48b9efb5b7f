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

The names load on first use (PEP 562): ``import aircher_mem`` alone imports nothing
else, so a process that needs one piece (``aircher-mem --version``, a hook talking to
the project's server) does not pay for numpy, DuckDB and the engine.
"""

from __future__ import annotations

# Not typing.TYPE_CHECKING: importing typing alone costs more than the rest of a hook's
# imports; type checkers treat any name TYPE_CHECKING as true.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ._core import __version__
    from .config import Policy
    from .context import Message
    from .errors import (
        AircherError,
        EncodingUnavailableError,
        GitError,
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
    "GitError",
]

#: Where each exported name other than an error is defined (the submodule, relative
#: to this package); the errors of ``__all__`` come from ``.errors``.
_SOURCES = {
    "__version__": "._core",
    "Memory": ".memory",
    "Policy": ".config",
    "Message": ".context",
    "redact": ".redact",
}


def __getattr__(name: str) -> Any:
    """An exported name, imported from its module on first use and kept here."""
    source = _SOURCES.get(name, ".errors" if name in __all__ else None)
    if source is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib  # not at import: a hook that is a server's client never needs it

    value = getattr(importlib.import_module(source, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
