"""Argument checks: the types a verb's parameters are declared with, and the checks
the service runs on a Python caller's arguments.

A verb's signature on :class:`aircher_mem.Memory` is its one declaration: each
parameter's type carries its bounds and a one-line help (``Annotated`` with a
:class:`Arg`). The interfaces validate requests against those types (see
:mod:`aircher_mem.verbs`, which turns them into pydantic models when a server needs
one: importing the package does not import pydantic); the
functions below are the same rules for the Python caller, whose arguments no model
sees.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal, TypedDict

from .errors import InvalidInputError
from .plain import Plain

__all__ = [
    "MAX_INT",
    "MAX_LIMIT",
    "MAX_TTL_SECONDS",
    "Arg",
    "Parse",
    "Schema",
    "short",
    "text",
    "integer",
    "limit",
    "number",
    "flag",
    "parse_time",
    "MIN_TIME",
    "MAX_TIME",
    "RANGE_TEXT",
    "unix_time",
    "Text",
    "Name",
    "FilePath",
    "Limit",
    "Tokens",
    "MemoryId",
    "SessionId",
    "TaskId",
    "Time",
    "Kind",
    "Level",
    "Tags",
    "Files",
    "JsonObject",
    "Snapshot",
]

MAX_INT = 2**63 - 1
"""The largest integer the store holds (BIGINT)."""

MAX_LIMIT = 10_000
"""The most results one call returns (``Limit``'s bound, in every interface's schema)."""

MAX_TTL_SECONDS = 1e12
"""The longest TTL accepted: about 31,700 years (beyond it a TTL is no TTL)."""


def short(value: object) -> str:
    """``repr(value)`` cut to 80 characters, for error messages (a value may be
    10 MB; a ``__repr__`` that raises gives ``<TypeName>``)."""
    try:
        shown = repr(value)
    except Exception:  # a hostile __repr__
        shown = f"<{type(value).__name__}>"
    return shown if len(shown) <= 80 else shown[:79] + "…"


# -- times ---------------------------------------------------------------------------------
#
# The one range of times aircher-mem accepts, and the one check of it.
#
# Every time given to a store (a turn's ``at``, a record's ``timestamp``, ``recall``'s
# ``at``) is Unix seconds, or a :class:`datetime.datetime` turned into them (a naive
# one is UTC, on every machine whatever its time zone). :func:`unix_time` checks it
# once, where it comes in, and anything outside :data:`MIN_TIME` to :data:`MAX_TIME`
# (0001-01-03T00:00:00Z to 9999-12-30T00:00:00Z) is :class:`InvalidInputError`.
#
# The range is years 1 to 9999 less two days at each end, so that every later use of
# an accepted time works: a date in any time zone (offsets reach 16 hours in the time
# zone database's oldest local mean times, and ``datetime.fromtimestamp`` looks a
# further 24 hours back for a fold), a float's rounding near year 9999 (about 30
# microseconds), a day's words in UTC, and DuckDB's TIMESTAMP columns.

_MARGIN = 2 * 86_400.0
MIN_TIME = -62_135_596_800.0 + _MARGIN
"""0001-01-03T00:00:00Z, the earliest time accepted (Unix seconds)."""

MAX_TIME = 253_402_300_800.0 - _MARGIN
"""9999-12-30T00:00:00Z, the latest time accepted (Unix seconds)."""

RANGE_TEXT = "0001-01-03T00:00:00Z to 9999-12-30T00:00:00Z"


def unix_time(field: str, value: object) -> float:
    """``value`` (Unix seconds, or a datetime: naive means UTC) as Unix seconds
    within :data:`MIN_TIME` to :data:`MAX_TIME`; :class:`InvalidInputError` naming
    ``field`` otherwise."""
    if isinstance(value, dt.datetime):
        moment = value if value.tzinfo is not None else value.replace(tzinfo=dt.timezone.utc)
        try:
            seconds = moment.timestamp()
        except (OverflowError, ValueError, OSError, TypeError):
            seconds = math.nan
    elif isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidInputError(f"{field} must be a datetime or Unix seconds, got {short(value)}")
    else:
        try:
            seconds = float(value)
        except OverflowError:
            seconds = math.inf
    if not (math.isfinite(seconds) and MIN_TIME <= seconds <= MAX_TIME):
        raise InvalidInputError(
            f"{field} must be a finite time from {RANGE_TEXT} "
            f"({MIN_TIME:.0f} to {MAX_TIME:.0f} Unix seconds), got {short(value)}"
        )
    return seconds


def text(field: str, value: object, *, max_chars: int | None = 1_000_000, blank: bool = False) -> str:
    """A string that is valid Unicode text (no lone surrogate) of at most
    ``max_chars`` characters (any length when None), and not blank (empty or only
    whitespace) unless ``blank``; else :class:`InvalidInputError` naming ``field``."""
    if not isinstance(value, str):
        raise InvalidInputError(f"{field} must be a string, got {short(value)}")
    if not blank and not value.strip():
        raise InvalidInputError(f"{field} must be a non-empty string, got {short(value)}")
    if max_chars is not None and len(value) > max_chars:
        raise InvalidInputError(f"{field} is longer than {max_chars:,} characters ({len(value):,})")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidInputError(
            f"{field} is not valid text (it holds a lone surrogate at index {exc.start}): {short(value)}"
        ) from None
    return value


def integer(field: str, value: object, minimum: int = 0, maximum: int = MAX_INT) -> int:
    """An integer (not a bool) from ``minimum`` to ``maximum``; else
    :class:`InvalidInputError` naming ``field``."""
    if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= maximum:
        bounds = f">= {minimum} and below 2**63" if maximum == MAX_INT else f"from {minimum} to {maximum}"
        raise InvalidInputError(f"{field} must be an integer {bounds}, got {short(value)}")
    return int(value)


def limit(field: str, value: object, *, maximum: int = MAX_LIMIT) -> int:
    """An integer from 1 to ``maximum``; else :class:`InvalidInputError`."""
    return integer(field, value, 1, maximum)


def number(field: str, value: object, minimum: float = 0.0) -> float:
    """A finite real number (not a bool) >= ``minimum``, as a float; else
    :class:`InvalidInputError` naming ``field``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidInputError(f"{field} must be a number, got {short(value)}")
    try:
        result = float(value)
    except OverflowError:  # an int beyond a float's range
        result = math.inf
    if not math.isfinite(result) or result < minimum:
        raise InvalidInputError(f"{field} must be a finite number >= {minimum:g}, got {short(value)}")
    return result


def flag(field: str, value: object) -> bool:
    """True or False (not 0 or 1); else :class:`InvalidInputError` naming ``field``."""
    if not isinstance(value, bool):
        raise InvalidInputError(f"{field} must be true or false, got {short(value)}")
    return value


_SECONDS = re.compile(r"-?[0-9]+(\.[0-9]+)?")


def parse_time(value: object) -> object:
    """Text as a time: Unix seconds (``"1714557600"``) or ISO-8601 (a date, or a
    date and time; a trailing ``Z`` is UTC; without an offset it is UTC, as the
    store reads it). Anything else is returned as it is, for the type to judge."""
    if not isinstance(value, str):
        return value
    stripped = value.strip()
    if _SECONDS.fullmatch(stripped):
        seconds = float(stripped)
        if not math.isfinite(seconds):
            raise ValueError(f"{short(value)} is out of range")
        return seconds
    if stripped.endswith(("Z", "z")):
        stripped = stripped[:-1] + "+00:00"
    try:
        return dt.datetime.fromisoformat(stripped)
    except ValueError:
        raise ValueError(
            f"must be ISO-8601 (2024-05-01 or 2024-05-01T14:30:00+02:00) or Unix seconds, got {short(value)}"
        ) from None


def _stored_time(value: object) -> object:
    """A time as :func:`parse_time` reads it; :class:`ValueError` for anything
    else (a bool) and for a time outside the range the stores keep
    (:func:`unix_time`)."""
    parsed = parse_time(value)
    if isinstance(parsed, bool) or not isinstance(parsed, (dt.datetime, int, float)):
        raise ValueError(f"must be ISO-8601 text or Unix seconds, got {short(value)}")
    try:
        unix_time("time", parsed)
    except InvalidInputError:
        raise ValueError(f"must be a finite time from {RANGE_TEXT}, got {short(value)}") from None
    return parsed


def _no_nan(value: object) -> object:
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"must be a finite number, got {value}")
    return value


# -- the parameter types ---------------------------------------------------------------


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class Arg(Plain):
    """A parameter's help and bounds, in its ``Annotated`` type: what pydantic's
    ``Field`` would say (the registry makes it one), without importing pydantic."""

    description: str = ""
    ge: int | float | None = None
    le: int | float | None = None
    min_length: int | None = None
    max_length: int | None = None


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class Parse(Plain):
    """A conversion run on a value before it is checked against the type (pydantic's
    ``BeforeValidator``): text to a time, for instance."""

    function: Callable[[object], object]


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class Schema(Plain):
    """The JSON schema of what a parameter accepts, when its type says less than its
    parsing takes (pydantic's ``WithJsonSchema``): a time as Unix seconds in text,
    for instance. Held as JSON text (metadata must hash)."""

    json: str


Text = Annotated[str, Arg(min_length=1, description="Text in plain words.")]
Name = Annotated[
    str,
    Arg(
        min_length=1,
        max_length=10_000,
        description="A function, method, class or constant name, e.g. 'save', or Class.method, e.g. 'User.save'.",
    ),
]
FilePath = Annotated[str | Path, Arg(description="A file path relative to the project root, e.g. 'app/models.py'.")]
Limit = Annotated[int, Arg(ge=1, le=MAX_LIMIT, description="At most this many results.")]
Tokens = Annotated[int, Arg(ge=1, le=2**62, description="A token budget.")]
MemoryId = Annotated[
    int, Arg(ge=1, le=MAX_INT, description="A memory's id, as remember, recall or add_turn returned it.")
]
SessionId = Annotated[str, Arg(min_length=1, description="The conversation's id, the same for each of its turns.")]
TaskId = Annotated[
    str | None,
    Arg(description="The task this belongs to; co-edit patterns are learned from edits within one task."),
]
Time = Annotated[
    dt.datetime | float,
    Parse(parse_time),
    Parse(_no_nan),
    Schema(
        json.dumps(
            {
                "anyOf": [
                    {"type": "number"},
                    {"type": "string", "format": "date-time"},
                    {"type": "string", "format": "date"},
                    {"type": "string", "pattern": r"^\s*-?[0-9]+(\.[0-9]+)?\s*$"},
                ]
            }
        )
    ),
    Arg(description="ISO-8601 (2024-05-01T14:30:00+02:00; without an offset: UTC) or Unix seconds."),
]
Kind = Literal["fact", "decision", "episode", "pattern", "workflow"]
Level = Literal["L0", "L1", "L2", "L3"]
Tags = Annotated[Sequence[str], Arg(description="Tags, e.g. ['style', 'python'].")]
Files = Annotated[Sequence[str], Arg(description="Files you are working on, relative to the project root.")]
JsonObject = Mapping[str, Any]


_Count = Annotated[int, Arg(ge=0, le=MAX_INT)]
_Objects = list[dict[str, Any]]


class _SnapshotFields(TypedDict):
    timestamp: Annotated[
        dt.datetime | float,
        Parse(_stored_time),
        Arg(description="When the window was taken: ISO-8601 (without an offset: UTC) or Unix seconds."),
    ]
    session_id: Annotated[str, Arg(min_length=1, description="The session the window belongs to.")]
    total_tokens: Annotated[_Count, Arg(description="The tokens the window holds.")]
    items: Annotated[_Objects, Arg(description="The window's items, each an object, e.g. {id, type, tokens}.")]
    reason: Annotated[str, Arg(min_length=1, description="Why it was taken, e.g. 'pruning' or 'task_switch'.")]


class Snapshot(_SnapshotFields, total=False):
    """A context window as :meth:`aircher_mem.Memory.record_snapshot` stores it (a
    plain dict; ``task_id``, ``item_count`` and ``pruned_items`` may be left out), as
    :meth:`aircher_mem.context.DynamicContextManager.snapshot_context` builds one.
    Over HTTP, MCP and the CLI a field it does not declare is refused."""

    task_id: Annotated[str | None, Arg(description="The task the agent was on, or null.")]
    item_count: Annotated[_Count, Arg(description="How many items (not stored: the store counts the items).")]
    pruned_items: Annotated[_Objects | None, Arg(description="The items just pruned from the window, each an object.")]
