"""Time to live (seed 000, "TTL Manager"): how long a memory holds before it is
marked stale, archived or deleted, and which file changes start its time again.

A memory's TTL is four fields of its row: ``ttl_seconds`` (how long),
``ttl_refresh`` (a glob of project files whose change starts the time again),
``ttl_on_expire`` (``mark_stale``, ``archive`` or ``delete``) and ``ttl_from``
(when the time last started: creation, :func:`set_ttl` or a refresh); a memory
marked stale has ``stale_since``.

How a memory gets its TTL:

- **By default, when it is created** (``remember`` and extraction alike:
  :func:`aircher_mem.longterm.memories.ingest`, the one place a memory is made,
  calls :func:`apply_default`): the first of its tags equal to ``architecture``,
  ``api``, ``implementation`` or ``session`` (in that order) picks the
  ``[lifecycle]`` default (:func:`default_for`). A memory with none of them has no TTL. A merge into an
  existing memory changes nothing of the existing memory's TTL.
- **On purpose**, with :func:`set_ttl` (the ``set_ttl`` verb), which also clears
  it.

What happens to it:

- :func:`refresh`: a change to a project file matching a memory's
  ``ttl_refresh`` (:func:`glob_matches`) starts its time again and clears
  ``stale_since``. The service calls it when it learns that files changed (an
  index that found files added, updated or removed; a recorded write or edit).
- :func:`expire`: once more than ``ttl_seconds`` passed since ``ttl_from``
  (``created_at`` without one), ``mark_stale`` sets ``stale_since`` (the memory
  stays active and recalled, with a note), ``archive`` archives it (no longer
  recalled, kept), ``delete`` deletes the memory for good
  (:func:`aircher_mem.longterm.forget.erase`) but never the conversation turns it
  came from. Consolidation runs it; no read verb does.
- :func:`stale`: the memories marked stale, and those past a ``mark_stale`` TTL
  not marked yet.

The rules that need only a memory's row (the defaults, :func:`expired_at`, the
TTL in words) live in :mod:`aircher_mem.longterm.ttl_rules`, below ``memories``
and ``recall``, which use them; they are named here too.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import math
import re
from collections.abc import Iterable

from ..checks import MAX_TTL_SECONDS, short, unix_time
from ..errors import InvalidInputError
from ..plain import Plain
from ..results import Expiry, MemoryList, MemoryRecord
from . import checks, forget, memories
from .core import StoreCore, using_db
from .schema import MemoryRow
from .ttl_rules import (
    DEFAULT_TAGS,
    ON_EXPIRE,
    Default,
    OnExpire,
    ago,
    apply_default,
    default_for,
    describe,
    expired_at,
    expiry_action,
    notes_of,
    outlook,
    span,
)

__all__ = [
    "ON_EXPIRE",
    "DEFAULT_TAGS",
    "MAX_GLOB_CHARS",
    "MAX_TTL_SECONDS",
    "OnExpire",
    "Default",
    "default_for",
    "apply_default",
    "check_glob",
    "compile_glob",
    "glob_matches",
    "set_ttl",
    "has_triggers",
    "refresh",
    "expired_at",
    "expire",
    "stale",
    "describe",
    "outlook",
    "span",
    "notes_of",
]


# -- globs ------------------------------------------------------------------------


#: The longest refresh glob accepted.
MAX_GLOB_CHARS = 1000

_ANY = None  # a "**" segment: any number of segments, none included


def check_glob(field: str, pattern: object) -> str:
    """A refresh glob as given (stripped): text of 1 to :data:`MAX_GLOB_CHARS`
    characters without NUL; :class:`InvalidInputError` naming ``field``
    otherwise."""
    if not isinstance(pattern, str):
        raise InvalidInputError(f"{field} must be a glob such as '**/api/**', got {short(pattern)}")
    cleaned = pattern.strip()
    if not cleaned or len(cleaned) > MAX_GLOB_CHARS or "\x00" in cleaned:
        raise InvalidInputError(
            f"{field} must be a glob of 1 to {MAX_GLOB_CHARS} characters without NUL, got {short(pattern)}"
        )
    return cleaned


@dataclasses.dataclass(frozen=True, slots=True, eq=False, repr=False)
class _Segment(Plain):
    """One segment of a glob (no ``/``), compiled: its runs of characters between
    ``*``s, each a regex without a quantifier (``?`` is ``.``, everything else
    itself), their widths, and whether it has a ``*`` at all."""

    runs: tuple[re.Pattern[str], ...]
    widths: tuple[int, ...]
    star: bool

    @classmethod
    def of(cls, segment: str) -> _Segment:
        runs = segment.split("*")
        compiled = tuple(re.compile("".join("." if c == "?" else re.escape(c) for c in run), re.DOTALL) for run in runs)
        return cls(compiled, tuple(len(run) for run in runs), len(runs) > 1)

    def matches(self, name: str) -> bool:
        """Whether the path segment ``name`` matches: the first run at its start,
        the last at its end, and each run between at its first occurrence after
        the one before (the segment matches if and only if the first occurrences
        do). No backtracking: time in the order of ``name``'s length times the
        pattern's, whatever the pattern."""
        if not self.star:
            return self.runs[0].fullmatch(name) is not None
        end = len(name) - self.widths[-1]
        if end < self.widths[0] or self.runs[0].match(name) is None:
            return False
        at = self.widths[0]
        for run, width in zip(self.runs[1:-1], self.widths[1:-1]):
            if width == 0:
                continue
            found = run.search(name, at, end)
            if found is None:
                return False
            at = found.end()
        return self.runs[-1].fullmatch(name, end) is not None


@functools.lru_cache(maxsize=512)
def compile_glob(pattern: str) -> tuple[_Segment | None, ...]:
    """A glob over project-relative POSIX paths, compiled: one :class:`_Segment`
    per segment (``/``-separated; empty and ``.`` segments dropped), None for a ``**``
    segment (any number of segments, none included; ``**`` inside a segment is
    ``*``). Cached; :class:`InvalidInputError` for a pattern
    :func:`check_glob` refuses."""
    pattern = check_glob("a refresh glob", pattern)
    out: list[_Segment | None] = []
    for segment in pattern.split("/"):
        if segment in ("", "."):
            continue
        if segment == "**":
            if not out or out[-1] is not _ANY:  # "**/**" is "**"
                out.append(_ANY)
            continue
        out.append(_Segment.of(re.sub(r"\*+", "*", segment)))
    return tuple(out)


def _segments(path: str) -> list[str]:
    return [s for s in path.replace("\\", "/").split("/") if s not in ("", ".")]


def glob_matches(pattern: str, path: str) -> bool:
    """Whether the project-relative ``path`` matches the glob ``pattern``: ``*``
    any characters within a segment, ``?`` one character, ``**`` as a whole
    segment any number of segments (none included: ``**/api/**`` matches
    ``api/x.py`` and ``src/api/v1/h.py``, not ``src/apix/a.py``). Segments are
    matched with the two-pointer wildcard walk (back to the last ``**`` only),
    in at most (path segments x pattern segments) segment matches."""
    parts = compile_glob(pattern)
    segments = _segments(path)
    p = s = 0
    star, resume = -1, 0
    while s < len(segments):
        if p < len(parts):
            part = parts[p]
            if part is _ANY:
                star, resume = p, s
                p += 1
                continue
            if part.matches(segments[s]):
                p += 1
                s += 1
                continue
        if star < 0:
            return False
        resume += 1  # the last "**" takes one more segment
        s, p = resume, star + 1
    return all(part is _ANY for part in parts[p:])


# -- the verbs --------------------------------------------------------------------


def _ttl_seconds(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidInputError(f"ttl_seconds must be a number of seconds or None, got {short(value)}")
    try:
        seconds = float(value)
    except OverflowError:
        seconds = math.inf
    if not (math.isfinite(seconds) and 0 < seconds <= MAX_TTL_SECONDS):
        raise InvalidInputError(
            f"ttl_seconds must be more than 0 and at most {MAX_TTL_SECONDS:.0e} seconds, got {short(value)}"
        )
    return seconds


def _when(lt: StoreCore, now: float | dt.datetime | None) -> float:
    return lt.clock() if now is None else unix_time("now", now)


def set_ttl(
    lt: StoreCore,
    memory_id: int,
    ttl_seconds: float | None,
    *,
    refresh_trigger: str | None = None,
    on_expire: str = "mark_stale",
    now: float | dt.datetime | None = None,
) -> MemoryRecord:
    """Gives a memory a TTL of ``ttl_seconds`` (more than 0, finite, at most
    :data:`MAX_TTL_SECONDS`) starting ``now`` (default: the clock's now), what
    expiry does (``on_expire``: mark_stale, archive or delete) and the glob of the
    project files whose change starts it again (``refresh_trigger``, or none);
    it is no longer stale. ``ttl_seconds`` None clears the TTL (no refresh, no
    expiry, not stale). Logged as a "ttl" action. :class:`InvalidInputError` for
    a bad argument, :class:`UnknownMemoryError` for an unknown memory."""
    lt._check_open()
    seconds = None if ttl_seconds is None else _ttl_seconds(ttl_seconds)
    action = expiry_action(on_expire)
    glob = None if refresh_trigger is None else check_glob("refresh_trigger", refresh_trigger)
    if seconds is None and refresh_trigger is not None:
        raise InvalidInputError("refresh_trigger needs a ttl_seconds (None clears the TTL)")
    when = _when(lt, now)
    memory = lt._get(memory_id)
    if seconds is None:
        memory.ttl_seconds = memory.ttl_refresh = memory.ttl_on_expire = memory.ttl_from = None
        memory.stale_since = None
        detail = "cleared"
    else:
        memory.ttl_seconds, memory.ttl_refresh, memory.ttl_on_expire = seconds, glob, action
        memory.ttl_from, memory.stale_since = when, None
        detail = f"{span(seconds)}, then {action}" + (f"; refreshed by changes to {glob}" if glob else "")
    lt._touch(memory)
    lt._act(memory.id, when, "ttl", detail)
    lt._commit()
    return memories.record(lt, memory, when)


@using_db
def has_triggers(lt: StoreCore) -> bool:
    """Whether an active memory has a refresh glob: from the rows held when they
    are loaded, else one query on the file (nothing loaded for it)."""
    lt._check_open()
    if lt._loaded:
        return any(m.ttl_refresh is not None and m.status == "active" for m in lt._memories.values())
    from .. import store

    duckdb = store.engine()

    try:
        row = lt._con.execute(
            "SELECT EXISTS (SELECT 1 FROM memories WHERE ttl_refresh IS NOT NULL AND status = 'active')"
        ).fetchone()
    except duckdb.Error as exc:
        raise store.corrupt_or_error(lt.path, exc, "reading long-term memory") from None
    return bool(row and row[0])


def refresh(lt: StoreCore, paths: Iterable[str], now: float | dt.datetime | None = None) -> list[int]:
    """Starts the TTL of every active memory whose ``ttl_refresh`` glob matches one
    of the project-relative ``paths`` again at ``now`` (default: the clock's
    now), and clears its ``stale_since``; each logged as "ttl_refreshed" with the
    first path that matched; one commit. Returns their ids, in order."""
    lt._check_open()
    wanted = [p for p in dict.fromkeys(paths) if isinstance(p, str) and p and "\x00" not in p]
    when = _when(lt, now)
    if not wanted:
        return []
    lt._load()
    done: list[int] = []
    for memory in sorted(lt._memories.values(), key=lambda m: m.id):
        if memory.status != "active" or memory.ttl_refresh is None or memory.ttl_seconds is None:
            continue
        try:
            path = next((p for p in wanted if glob_matches(memory.ttl_refresh, p)), None)
        except InvalidInputError:  # a glob written to the file by hand: it refreshes nothing
            continue
        if path is None:
            continue
        memory.ttl_from, memory.stale_since = when, None
        lt._touch(memory)
        lt._act(memory.id, when, "ttl_refreshed", path)
        done.append(memory.id)
    if done:
        lt._commit()
    return done


def expire(
    lt: StoreCore, now: float | dt.datetime | None = None, *, dry_run: bool = False, commit: bool = True
) -> list[Expiry]:
    """Applies every active memory's expired TTL (:func:`expired_at`) at ``now``
    (default: the clock's now), by id: ``mark_stale`` sets ``stale_since`` (once:
    a memory marked already is left out; it stays active), ``archive`` archives
    it, ``delete`` deletes it for good with the memories merged into it
    (:func:`aircher_mem.longterm.forget.erase`; the turns it came from stay).
    Each is logged ("ttl_expired", "archived"; a deleted memory keeps no log).
    ``dry_run`` changes nothing and says what it would do. Without ``commit`` (a
    consolidation pass that commits its rows at once), the changes stay pending and
    the memories to delete are left to the caller (the "delete" entries)."""
    lt._check_open()
    checks.flag("dry_run", dry_run)
    when = _when(lt, now)
    lt._load()
    found: list[Expiry] = []
    deleting: dict[int, MemoryRow] = {}
    for memory in sorted(lt._memories.values(), key=lambda m: m.id):
        if memory.status != "active":
            continue
        over = expired_at(memory, when)
        if over is None:
            continue
        action = memory.ttl_on_expire if memory.ttl_on_expire in ON_EXPIRE else "mark_stale"
        if action == "mark_stale" and memory.stale_since is not None:
            continue
        assert memory.ttl_seconds is not None
        reason = f"TTL {span(memory.ttl_seconds)} expired {ago(over)} ago"
        found.append(Expiry(memory.id, action, reason))
        if action == "delete":
            deleting[memory.id] = memory
    copies = sorted(forget.merged_into(lt, set(deleting)) - set(deleting))
    found = [e for e in found if e.memory_id not in copies]
    found += [Expiry(i, "delete", "merged into a memory whose TTL expired") for i in copies]
    if dry_run:
        return found
    for entry in found:
        memory = lt._memories[entry.memory_id]
        if entry.memory_id in deleting or entry.memory_id in copies:
            continue
        if entry.action == "mark_stale":
            memory.stale_since = when
            lt._touch(memory)
            lt._act(memory.id, when, "ttl_expired", f"stale: {entry.reason}")
        else:
            memories.archive(lt, memory, when, entry.reason)
    if not commit:
        return found
    lt._commit()
    if deleting:
        forget.erase(lt, set(deleting) | set(copies))
    return found


def stale(lt: StoreCore, now: float | dt.datetime | None = None) -> MemoryList:
    """The active memories marked stale, and those whose ``mark_stale`` TTL has
    expired at ``now`` (default: the clock's now) without being marked yet;
    oldest first (by when they went, or would have gone, stale; then id).
    Changes nothing."""
    lt._check_open()
    when = _when(lt, now)
    lt._load()
    found: list[tuple[float, int, MemoryRow]] = []
    for memory in lt._memories.values():
        if memory.status != "active":
            continue
        if memory.stale_since is not None:
            found.append((memory.stale_since, memory.id, memory))
            continue
        if (memory.ttl_on_expire or "mark_stale") != "mark_stale":
            continue
        over = expired_at(memory, when)
        if over is not None:
            found.append((when - over, memory.id, memory))
    found.sort(key=lambda f: (f[0], f[1]))
    return MemoryList([memories.record(lt, m, when) for _since, _id, m in found])
