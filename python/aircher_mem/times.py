"""The one range of times aircher-mem accepts, and the one check of it.

Every time given to a store (a turn's ``at``, a record's ``timestamp``, ``recall``'s
``at``) is Unix seconds, or a :class:`datetime.datetime` turned into them (a naive
one is UTC, on every machine whatever its time zone). :func:`unix_time` checks it
once, where it comes in, and anything outside :data:`MIN_TIME` to :data:`MAX_TIME`
(0001-01-03T00:00:00Z to 9999-12-30T00:00:00Z) is :class:`InvalidInputError`.

The range is years 1 to 9999 less two days at each end, so that every later use of
an accepted time works: a date in any time zone (offsets reach 16 hours in the time
zone database's oldest local mean times, and ``datetime.fromtimestamp`` looks a
further 24 hours back for a fold), a float's rounding near year 9999 (about 30
microseconds), a day's words in UTC, and DuckDB's TIMESTAMP columns.
"""

from __future__ import annotations

import datetime as dt
import math

from .checks import short
from .errors import InvalidInputError

__all__ = ["MIN_TIME", "MAX_TIME", "RANGE_TEXT", "unix_time", "short"]

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
