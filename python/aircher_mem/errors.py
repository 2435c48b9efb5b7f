"""The exception hierarchy. Every error aircher-mem raises on purpose is an
``AircherError``; most also derive from the stdlib class a caller would catch anyway
(``ValueError`` for bad input, ``KeyError`` for unknown ids).

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
    "NotIndexedError",
    "SchemaVersionError",
    "UnknownTaskError",
    "TaskStateError",
]


class AircherError(Exception):
    """Root of every aircher-mem error."""


class InvalidInputError(AircherError, ValueError):
    """A value is out of range, not finite, or malformed."""


class DuplicateItemError(InvalidInputError):
    """An item id is already in the context window."""


class UnknownDependencyError(InvalidInputError):
    """An item depends on an id that is not in the context window."""


class UnknownItemError(AircherError, KeyError):
    """No item with this id."""

    def __str__(self) -> str:  # KeyError would show the message quoted
        return str(self.args[0]) if self.args else ""


class PolicyError(InvalidInputError):
    """A policy value or configuration file is invalid."""


class EncodingUnavailableError(AircherError, RuntimeError):
    """A token encoding cannot be loaded without the network."""


class StoreError(AircherError):
    """The episodic store cannot be opened, read or written."""


class StoreLockedError(StoreError):
    """Another process has the store open for writing (DuckDB allows one writer)."""


class StoreCorruptError(StoreError):
    """The store file is not a readable DuckDB database."""


class StoreNotFoundError(StoreError, FileNotFoundError):
    """No ``.aircher/`` store in the project (create one with ``Memory.open`` or
    ``aircher-mem init``)."""


class NotIndexedError(StoreError):
    """The project's code graph has not been built yet (``Memory.index()``,
    ``aircher-mem index``)."""


class SchemaVersionError(StoreError):
    """The store was written by a newer aircher-mem; it is left untouched."""


class UnknownTaskError(AircherError, KeyError):
    """No task with this id."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class TaskStateError(InvalidInputError):
    """A task lifecycle step that its current status does not allow."""
