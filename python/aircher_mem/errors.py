"""The exception hierarchy. Every error aircher-mem raises on purpose is an
``AircherError``; most also derive from the stdlib class a caller would catch anyway
(``ValueError`` for bad input, ``KeyError`` for unknown ids).

Each class has a stable ``code`` (a short snake_case string): the JSON error shape
of every interface carries it, so scripts and agents can branch on it without parsing
messages. Codes never change once released; a subclass has its own.

The Rust core raises these same classes (it imports them from here).
"""

from __future__ import annotations

__all__ = [
    "AircherError",
    "InvalidInputError",
    "DuplicateItemError",
    "UnknownDependencyError",
    "UnknownItemError",
    "PolicyError",
    "EncodingUnavailableError",
    "StoreError",
    "StoreLockedError",
    "StoreCorruptError",
    "StoreNotFoundError",
    "FileMissingError",
    "NotIndexedError",
    "SchemaVersionError",
    "UnknownTaskError",
    "UnknownSymbolError",
    "TaskStateError",
    "UnknownMemoryError",
    "GitError",
]


class AircherError(Exception):
    """Root of every aircher-mem error."""

    #: Stable machine-readable name of the error class (see the module docstring).
    code: str = "error"


class InvalidInputError(AircherError, ValueError):
    """A value is out of range, not finite, or malformed."""

    code = "invalid_input"


class DuplicateItemError(InvalidInputError):
    """An item id is already in the context window."""

    code = "duplicate_item"


class UnknownDependencyError(InvalidInputError):
    """An item depends on an id that is not in the context window."""

    code = "unknown_dependency"


class UnknownItemError(AircherError, KeyError):
    """No item with this id."""

    code = "unknown_item"

    def __str__(self) -> str:  # KeyError would show the message quoted
        return str(self.args[0]) if self.args else ""


class PolicyError(InvalidInputError):
    """A policy value or configuration file is invalid."""

    code = "policy"


class EncodingUnavailableError(AircherError, RuntimeError):
    """A token encoding cannot be loaded without the network."""

    code = "encoding_unavailable"


class StoreError(AircherError):
    """The episodic store cannot be opened, read or written."""

    code = "store"


class StoreLockedError(StoreError):
    """Another process has the store open for writing (DuckDB allows one writer)."""

    code = "store_locked"


class StoreCorruptError(StoreError):
    """The store file is not a readable DuckDB database."""

    code = "store_corrupt"


class StoreNotFoundError(StoreError, FileNotFoundError):
    """No ``.aircher/`` store in the project (create one with ``Memory.open`` or
    ``aircher-mem create-store``)."""

    code = "store_not_found"


class FileMissingError(StoreError, FileNotFoundError):
    """A file the graph or the store refers to is not on disk (any more)."""

    code = "file_missing"


class NotIndexedError(StoreError):
    """The project's code graph has not been built yet (``Memory.index()``,
    ``aircher-mem index``)."""

    code = "not_indexed"


class SchemaVersionError(StoreError):
    """The store was written by a newer aircher-mem; it is left untouched."""

    code = "schema_version"


class UnknownTaskError(AircherError, KeyError):
    """No task with this id."""

    code = "unknown_task"

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class UnknownSymbolError(AircherError, LookupError):
    """No definition with this name (or ``Class.method``) in the code graph."""

    code = "unknown_symbol"


class TaskStateError(InvalidInputError):
    """A task lifecycle step that its current status does not allow."""

    code = "task_state"


class UnknownMemoryError(AircherError, KeyError):
    """No memory with this id (never stored, or forgotten)."""

    code = "unknown_memory"

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class GitError(AircherError):
    """Git could not say what changed: it is not installed, the folder is not a git
    work tree, or a git command failed or timed out."""

    code = "git_error"
