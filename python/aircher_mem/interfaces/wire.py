"""Results to JSON, errors to exit codes and error payloads: the only place either
happens, so every interface gives the same keys for the same result.

A result (any dataclass of :mod:`aircher_mem.results`) becomes a JSON object of its
fields, recursively, plus the computed values its class lists in
``json_properties``; tuples become lists and floats are rounded to 4 decimals.
An error becomes ``{"error": {"code", "type", "message"}}`` where ``code`` is the
error class's stable code.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping
from typing import Any

from ..errors import (
    AircherError,
    FileMissingError,
    InvalidInputError,
    NotIndexedError,
    StoreLockedError,
    StoreNotFoundError,
    UnknownItemError,
    UnknownMemoryError,
    UnknownSymbolError,
    UnknownTaskError,
)

__all__ = [
    "to_json",
    "dumps",
    "error_json",
    "exit_code",
    "EXIT_OK",
    "EXIT_ERROR",
    "EXIT_USAGE",
    "EXIT_NOT_FOUND",
    "EXIT_LOCKED",
    "EXIT_INTERNAL",
    "EXIT_INTERRUPTED",
]

EXIT_OK = 0
EXIT_ERROR = 1  # any other error
EXIT_USAGE = 2  # a bad argument or a path outside the project
EXIT_NOT_FOUND = 3  # no store, not indexed, no such symbol, task or file
EXIT_LOCKED = 4  # the store is open in another process
EXIT_INTERNAL = 70  # a bug: please report it
EXIT_INTERRUPTED = 130


def to_json(value: Any) -> Any:
    """``value`` (a result, or lists/dicts of them) as JSON-ready data."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out = {f.name: to_json(getattr(value, f.name)) for f in dataclasses.fields(value)}
        for name in getattr(value, "json_properties", ()):
            out[name] = to_json(getattr(value, name))
        return out
    if isinstance(value, float):
        return round(value, 4) if math.isfinite(value) else None
    if isinstance(value, (list, tuple)):
        return [to_json(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): to_json(v) for k, v in value.items()}
    return value


def dumps(value: Any) -> str:
    """One line of JSON for ``value`` (a result or an error payload): UTF-8 text, or
    ASCII with escapes when it holds what UTF-8 cannot carry (a lone surrogate from
    a file name or an argument)."""
    data = to_json(value)
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(data, ensure_ascii=True, separators=(",", ":"))
    return text


def error_json(exc: BaseException) -> dict[str, Any]:
    """The error shape every interface returns."""
    code = exc.code if isinstance(exc, AircherError) else "os_error" if isinstance(exc, OSError) else "internal"
    return {"error": {"code": code, "type": type(exc).__name__, "message": str(exc)}}


def exit_code(exc: BaseException) -> int:
    """The CLI's exit code for an error."""
    if isinstance(
        exc,
        (
            StoreNotFoundError,
            NotIndexedError,
            UnknownSymbolError,
            UnknownTaskError,
            UnknownMemoryError,
            UnknownItemError,
            FileMissingError,
        ),
    ):
        return EXIT_NOT_FOUND
    if isinstance(exc, StoreLockedError):
        return EXIT_LOCKED
    if isinstance(exc, InvalidInputError):
        return EXIT_USAGE
    if isinstance(exc, (AircherError, OSError)):
        return EXIT_ERROR
    return EXIT_INTERNAL
