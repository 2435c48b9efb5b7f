"""Results to JSON, errors to exit codes and error payloads: the only place either
happens, so every interface gives the same keys for the same result.

A result (any dataclass of :mod:`aircher_mem.results`) becomes a JSON object of its
fields, recursively, plus the computed values its class lists in
``json_properties``; tuples become lists and floats are rounded to 4 decimals.
An error becomes ``{"error": {"code", "type", "message"}}`` where ``code`` is the
error class's stable code. ``from_json(type, data)`` is the way back, for a client
of the HTTP server: ``to_json(from_json(T, to_json(r))) == to_json(r)``.
"""

from __future__ import annotations

import dataclasses
import json
import math
import types
import typing
from collections.abc import Mapping
from typing import Any, Literal

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
    "from_json",
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


def from_json(tp: Any, data: Any) -> Any:
    """``data`` (the JSON of a ``tp``, as :func:`to_json` made it) as a ``tp``: a
    result dataclass built from its fields (its ``json_properties`` are computed,
    not read), lists and tuples as the type says. JSON numbers are kept as they are
    (an int where a float is declared stays an int, so the JSON does not change).
    :class:`TypeError` when ``data`` does not fit ``tp``."""
    return _decode(tp, data, "result")


_SCALARS: dict[Any, tuple[type, ...]] = {str: (str,), int: (int,), float: (int, float), bool: (bool,)}


def _decode(tp: Any, data: Any, where: str) -> Any:
    if tp is Any:
        return data
    if tp is type(None):
        if data is not None:
            raise TypeError(f"{where}: expected null, got {type(data).__name__}")
        return None
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        if not isinstance(data, dict):
            raise TypeError(f"{where}: expected an object for {tp.__name__}, got {type(data).__name__}")
        hints = typing.get_type_hints(tp)
        values: dict[str, Any] = {}
        for field in dataclasses.fields(tp):
            if not field.init:
                continue
            if field.name not in data:
                if field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING:
                    raise TypeError(f"{where}: {tp.__name__} lacks {field.name}")
                continue
            values[field.name] = _decode(hints[field.name], data[field.name], f"{where}.{field.name}")
        return tp(**values)
    if tp in _SCALARS:
        if data is None and tp is float:  # to_json writes a non-finite float as null
            return None
        if not isinstance(data, _SCALARS[tp]) or (tp is not bool and isinstance(data, bool)):
            raise TypeError(f"{where}: expected {tp.__name__}, got {type(data).__name__}")
        return data
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is Literal:
        if data not in args:
            raise TypeError(f"{where}: expected one of {args}, got {data!r:.80}")
        return data
    if origin in (typing.Union, types.UnionType):
        if data is None and type(None) in args:
            return None
        problems = []
        for arg in args:
            if arg is type(None):
                continue
            try:
                return _decode(arg, data, where)
            except TypeError as exc:
                problems.append(str(exc))
        raise TypeError("; ".join(problems))
    if origin in (list, tuple):
        if not isinstance(data, list):
            raise TypeError(f"{where}: expected an array, got {type(data).__name__}")
        if origin is list:
            return [_decode(args[0], v, f"{where}[{n}]") for n, v in enumerate(data)]
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_decode(args[0], v, f"{where}[{n}]") for n, v in enumerate(data))
        if len(data) != len(args):
            raise TypeError(f"{where}: expected {len(args)} items, got {len(data)}")
        return tuple(_decode(a, v, f"{where}[{n}]") for n, (a, v) in enumerate(zip(args, data)))
    if origin in (dict, Mapping):
        if not isinstance(data, dict):
            raise TypeError(f"{where}: expected an object, got {type(data).__name__}")
        return {k: _decode(args[1], v, f"{where}.{k}") for k, v in data.items()}
    raise TypeError(f"{where}: cannot decode {tp!r}")  # pragma: no cover - a new result type


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
