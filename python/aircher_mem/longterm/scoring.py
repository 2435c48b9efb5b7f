"""The memories' score and the gc rules, as plain functions (the store runs the same
arithmetic in SQL for a whole table; the tests hold both to these).

    score = w_freq ln(1 + hits) + w_recency exp(-lambda age_days) + w_importance importance

``age_days`` counts from the memory's last sighting (its creation, or the last turn
merged into it): a fact heard again is fresh again.
"""

from __future__ import annotations

import math

from ..config import LongtermPolicy
from ..results import ScoreTerm

__all__ = ["DAY", "age_days", "score_terms", "score", "gc_outlook", "recency", "usage"]

DAY = 86_400.0


def age_days(last_seen: float, now: float) -> float:
    """Days from ``last_seen`` to ``now`` (0 if ``last_seen`` is in the future)."""
    return max(0.0, (now - last_seen) / DAY)


def recency(age: float, policy: LongtermPolicy) -> float:
    """``exp(-lambda age_days)``: 1 now, 0.5 after ln 2 / lambda days (about 14 at
    the default 0.05)."""
    return math.exp(-policy.decay_lambda * max(0.0, age))


def score_terms(hits: int, age: float, importance: int, policy: LongtermPolicy) -> list[ScoreTerm]:
    """The three terms of the score (frequency, recency, importance)."""
    values = (
        ("frequency", policy.w_freq, math.log1p(max(0, hits))),
        ("recency", policy.w_recency, recency(age, policy)),
        ("importance", policy.w_importance, float(importance)),
    )
    return [ScoreTerm(name, weight, value, weight * value) for name, weight, value in values]


def score(hits: int, age: float, importance: int, policy: LongtermPolicy) -> float:
    return sum(term.contribution for term in score_terms(hits, age, importance, policy))


def usage(cited: int, ignored: int) -> float:
    """The usage signal in (-1, 1): (cited - ignored) / (cited + ignored + 1)."""
    return (cited - ignored) / (cited + ignored + 1)


def gc_outlook(layer: str, status: str, hits: int, age: float, value: float, policy: LongtermPolicy) -> str:
    """What a gc pass would do to one memory, by the gc rules (capacity aside, which
    depends on the others): "promote", "archive: score", "archive: age" or "keep"."""
    if status != "active":
        return f"none ({status})"
    if layer == "long":
        return "keep (long-term)"
    if hits >= policy.promote_hits and age <= policy.promote_days:
        return "promote to long-term"
    if value < policy.archive_score:
        return f"archive: score {value:.3f} < {policy.archive_score}"
    if age > policy.archive_days:
        return f"archive: not seen for {age:.1f} days > {policy.archive_days}"
    return "keep"
