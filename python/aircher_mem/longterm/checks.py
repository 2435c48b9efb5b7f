"""Argument checks of the long-term memory's verbs: each returns the value checked
(or cleaned) or raises :class:`aircher_mem.errors.InvalidInputError` naming the
argument and what it got."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence

from ..checks import flag, limit, short
from ..checks import text as _text
from ..errors import InvalidInputError
from ..redact import redact, redact_value
from .schema import MAX_METADATA_CHARS, MAX_TEXT_CHARS

__all__ = [
    "MAX_K",
    "short",
    "flag",
    "text",
    "optional_text",
    "redacted",
    "choice",
    "positive_id",
    "count",
    "tags",
    "metadata",
]

MAX_K = 1000  # the most hits or records a verb returns at once


def text(field: str, value: object, *, max_chars: int = MAX_TEXT_CHARS) -> str:
    """Text as the service's checks take it (:func:`aircher_mem.checks.text`),
    without NUL characters (a stored text is also searched and shown)."""
    value = _text(field, value, max_chars=max_chars)
    if "\x00" in value:
        raise InvalidInputError(f"{field} must not contain NUL characters")
    return value


def optional_text(field: str, value: object, *, max_chars: int = 1000) -> str | None:
    return None if value is None else text(field, value, max_chars=max_chars).strip()


def redacted(value: str | None) -> str | None:
    return None if value is None else redact(value)


def choice(field: str, value: object, choices: Sequence[str]) -> str:
    if not isinstance(value, str) or value not in choices:
        raise InvalidInputError(f"{field} must be one of {', '.join(choices)}, got {short(value)}")
    return value


def positive_id(field: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value < 2**63:
        raise InvalidInputError(f"{field} must be a positive integer id, got {short(value)}")
    return value


def count(field: str, value: object, maximum: int = MAX_K) -> int:
    """An integer from 1 to ``maximum`` (:func:`aircher_mem.checks.limit`)."""
    return limit(field, value, maximum=maximum)


def tags(value: object) -> list[str]:
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise InvalidInputError(f"tags must be a sequence of strings, got {short(value)}")
    out: list[str] = []
    for tag in value:
        cleaned = redact(text("a tag", tag, max_chars=200)).strip()
        if cleaned not in out:
            out.append(cleaned)
    if len(out) > 100:
        raise InvalidInputError(f"at most 100 tags, got {len(out)}")
    return out


def metadata(value: object) -> str:
    if value is None:
        return "{}"
    if not isinstance(value, Mapping):
        raise InvalidInputError(f"metadata must be a mapping, got {type(value).__name__}")
    try:
        encoded = json.dumps(redact_value(dict(value)), allow_nan=False, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError, RecursionError) as exc:
        raise InvalidInputError(f"metadata must be JSON (finite numbers, str keys): {exc}") from None
    if len(encoded) > MAX_METADATA_CHARS:
        raise InvalidInputError(f"metadata is {len(encoded)} characters as JSON; the limit is {MAX_METADATA_CHARS}")
    text("metadata", encoded, max_chars=MAX_METADATA_CHARS)
    return encoded
