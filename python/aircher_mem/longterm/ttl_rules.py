"""The rules of a memory's TTL (seed 000) that need nothing but its row: the
default a new memory gets by its tags, when a TTL has expired, and the TTL in
words (for ``explain``, recall's notes and expiry's reasons). The verbs that
change TTLs are in :mod:`aircher_mem.longterm.ttl`; this module is below
``memories`` and ``recall``, which use it."""

from __future__ import annotations

import datetime as dt
from typing import Literal

from ..config import LifecyclePolicy
from ..results import MemoryRecord
from . import checks
from .schema import MemoryRow

__all__ = [
    "OnExpire",
    "ON_EXPIRE",
    "DEFAULT_TAGS",
    "DAY",
    "HOUR",
    "Default",
    "default_for",
    "expiry_action",
    "apply_default",
    "expired_at",
    "span",
    "ago",
    "describe",
    "outlook",
    "notes_of",
    "iso",
]

OnExpire = Literal["mark_stale", "archive", "delete"]
#: What expiry may do to a memory.
ON_EXPIRE: tuple[OnExpire, ...] = ("mark_stale", "archive", "delete")
#: The tags that give a new memory a default TTL, the first found in this order.
DEFAULT_TAGS = ("architecture", "api", "implementation", "session")

DAY = 86_400.0
HOUR = 3_600.0

Default = tuple[float, str | None, OnExpire]
"""A default TTL: (seconds, refresh glob or None, what expiry does)."""


def default_for(memory: MemoryRow, policy: LifecyclePolicy) -> Default | None:
    """The TTL seed 000 gives a memory by its tags: the first of ``architecture``
    (``ttl_architecture_days``), ``api`` (``ttl_api_days``, refreshed by
    ``ttl_api_refresh``), ``implementation`` (``ttl_implementation_days``) and
    ``session`` (``ttl_session_hours``) among its tags, with the policy's
    ``ttl_<tag>_expire`` action; None when it has none of them."""
    tags = set(memory.tags)
    for tag in DEFAULT_TAGS:
        if tag not in tags:
            continue
        if tag == "architecture":
            return (policy.ttl_architecture_days * DAY, None, expiry_action(policy.ttl_architecture_expire))
        if tag == "api":
            return (policy.ttl_api_days * DAY, policy.ttl_api_refresh, expiry_action(policy.ttl_api_expire))
        if tag == "implementation":
            return (policy.ttl_implementation_days * DAY, None, expiry_action(policy.ttl_implementation_expire))
        return (policy.ttl_session_hours * HOUR, None, expiry_action(policy.ttl_session_expire))
    return None


def expiry_action(value: object) -> OnExpire:
    """``value`` as what expiry does (one of :data:`ON_EXPIRE`); InvalidInputError
    naming ``on_expire`` otherwise."""
    return checks.choice("on_expire", value, ON_EXPIRE)  # type: ignore[return-value]


def apply_default(memory: MemoryRow, policy: LifecyclePolicy) -> None:
    """Gives a memory being created its default TTL (:func:`default_for`), its time
    starting at ``created_at``; a memory with a TTL already keeps it."""
    if memory.ttl_seconds is not None:
        return
    found = default_for(memory, policy)
    if found is None:
        return
    memory.ttl_seconds, memory.ttl_refresh, memory.ttl_on_expire = found
    memory.ttl_from = memory.created_at


def expired_at(memory: MemoryRow, now: float) -> float | None:
    """How long ago ``memory``'s TTL expired (seconds, more than 0) at ``now``;
    None if it has none or it has not: at exactly ``ttl_seconds`` it has not."""
    if memory.ttl_seconds is None:
        return None
    start = memory.ttl_from if memory.ttl_from is not None else memory.created_at
    over = (now - start) - memory.ttl_seconds
    return over if over > 0 else None


def span(seconds: float) -> str:
    """A duration in words, in the largest unit it is a whole number of: "7 days",
    "1 day", "36 hours", "90 minutes", "1.5 seconds"."""
    for unit, size in (("day", DAY), ("hour", HOUR), ("minute", 60.0), ("second", 1.0)):
        if seconds >= size and seconds % size == 0:
            count = seconds / size
            return f"{count:g} {unit}" + ("" if count == 1 else "s")
    return f"{seconds:g} seconds"


def ago(seconds: float) -> str:
    """A time past in words, to a tenth of its unit: "2.0 days", "3.5 hours"."""
    for unit, size in (("days", DAY), ("hours", HOUR), ("minutes", 60.0)):
        if seconds >= size:
            return f"{seconds / size:.1f} {unit}"
    return f"{seconds:.1f} seconds"


def describe(memory: MemoryRow | MemoryRecord) -> str:
    """A memory's TTL in words, e.g. "TTL 7 days from 2024-05-01T10:00:00Z, then
    mark_stale; refreshed by changes to **/api/**" ("no TTL" without one)."""
    if memory.ttl_seconds is None:
        return "no TTL"
    start = memory.ttl_from if memory.ttl_from is not None else memory.created_at
    said = f"TTL {span(memory.ttl_seconds)} from {iso(start)}, then {memory.ttl_on_expire or 'mark_stale'}"
    if memory.ttl_refresh:
        said += f"; refreshed by changes to {memory.ttl_refresh}"
    if memory.stale_since is not None:
        said += f"; stale since {iso(memory.stale_since)}"
    return said


def outlook(memory: MemoryRow, now: float) -> str:
    """A memory's TTL for ``explain``: :func:`describe` and when it expires (or
    how long ago it did); "" without one."""
    if memory.ttl_seconds is None:
        return ""
    said = describe(memory)
    over = expired_at(memory, now)
    if over is not None:
        return f"{said}; expired {ago(over)} ago"
    start = memory.ttl_from if memory.ttl_from is not None else memory.created_at
    return f"{said}; expires in {ago(start + memory.ttl_seconds - now)}"


def notes_of(memory: MemoryRow) -> list[str]:
    """The recall notes of a memory hit about its TTL: "stale since <date>: its
    TTL expired" for a memory marked stale."""
    if memory.stale_since is None:
        return []
    return [f"stale since {iso(memory.stale_since)[:10]}: its TTL expired"]


def iso(at: float) -> str:
    """Unix seconds as ISO-8601 UTC to the second: "2024-05-01T10:00:00Z"."""
    return dt.datetime.fromtimestamp(at, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
