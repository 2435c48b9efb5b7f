"""The argument checks every verb shares (aircher_mem.checks): each accepts exactly
what its bounds say, returns the value unchanged, and refuses anything else with an
InvalidInputError naming the argument."""

from __future__ import annotations

import math

import pytest
from aircher_mem import checks
from aircher_mem.errors import InvalidInputError
from hypothesis import given
from hypothesis import strategies as st

# Strings with whitespace and lone surrogates among any other code points.
CHARS = st.one_of(
    st.sampled_from([" ", "\t", "\n", "a", "é", "\x00", "\ud800", "\udfff"]), st.integers(0, 0x10FFFF).map(chr)
)
STRINGS = st.lists(CHARS, max_size=12).map("".join)
ANYTHING = st.one_of(
    STRINGS, st.integers(), st.booleans(), st.floats(), st.none(), st.binary(max_size=4), st.lists(st.integers())
)


def encodable(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


@given(ANYTHING, st.one_of(st.none(), st.integers(0, 15)), st.booleans())
def test_text_accepts_exactly_the_strings_its_bounds_allow(value: object, max_chars: int | None, blank: bool) -> None:
    ok = (
        isinstance(value, str)
        and (blank or value.strip() != "")
        and (max_chars is None or len(value) <= max_chars)
        and encodable(value)
    )
    if ok:
        assert checks.text("field", value, max_chars=max_chars, blank=blank) is value
    else:
        with pytest.raises(InvalidInputError) as info:
            checks.text("field", value, max_chars=max_chars, blank=blank)
        assert type(info.value) is InvalidInputError and str(info.value).startswith("field ")


@given(
    st.one_of(st.integers(-5, 2**64), st.booleans(), st.floats(), STRINGS, st.none()),
    st.one_of(st.integers(1, 20), st.integers(1, checks.MAX_INT), st.just(checks.MAX_INT)),
)
def test_limit_accepts_exactly_the_integers_from_1_to_its_maximum(value: object, maximum: int) -> None:
    if type(value) is int and 1 <= value <= maximum:
        assert checks.limit("k", value, maximum=maximum) == value
    else:
        with pytest.raises(InvalidInputError) as info:
            checks.limit("k", value, maximum=maximum)
        bounds = ">= 1 and below 2**63" if maximum == checks.MAX_INT else f"from 1 to {maximum}"
        assert str(info.value) == f"k must be an integer {bounds}, got {checks.short(value)}"


@given(
    st.one_of(st.integers(-(2**64), 2**64), st.booleans(), st.floats(), STRINGS),
    st.integers(-100, 100),
    st.one_of(st.integers(-100, 100), st.just(checks.MAX_INT)),
)
def test_integer_accepts_exactly_the_integers_in_its_bounds(value: object, minimum: int, maximum: int) -> None:
    if type(value) is int and minimum <= value <= maximum:
        assert checks.integer("n", value, minimum, maximum) == value
    else:
        with pytest.raises(InvalidInputError) as info:
            checks.integer("n", value, minimum, maximum)
        bounds = f">= {minimum} and below 2**63" if maximum == checks.MAX_INT else f"from {minimum} to {maximum}"
        assert str(info.value) == f"n must be an integer {bounds}, got {checks.short(value)}"


@given(st.one_of(st.integers(-(2**1100), 2**1100), st.booleans(), st.floats(), STRINGS), st.floats(-10, 10))
def test_number_accepts_exactly_the_finite_reals_from_its_minimum(value: object, minimum: float) -> None:
    real = isinstance(value, (int, float)) and not isinstance(value, bool)
    try:
        as_float = float(value) if isinstance(value, (int, float)) else math.nan
    except OverflowError:  # an int beyond a float's range
        as_float = math.inf
    if real and math.isfinite(as_float) and as_float >= minimum:
        assert checks.number("x", value, minimum) == as_float
    else:
        with pytest.raises(InvalidInputError):
            checks.number("x", value, minimum)


@given(ANYTHING)
def test_flag_accepts_only_true_and_false(value: object) -> None:
    if isinstance(value, bool):
        assert checks.flag("dry_run", value) is value
    else:
        with pytest.raises(InvalidInputError) as info:
            checks.flag("dry_run", value)
        assert str(info.value) == f"dry_run must be true or false, got {checks.short(value)}"


def test_each_refusal_of_text_says_why() -> None:
    cases = [
        (5, {}, "field must be a string, got 5"),
        (" \n", {}, "field must be a non-empty string, got ' \\n'"),
        ("abcd", {"max_chars": 3}, "field is longer than 3 characters (4)"),
        ("a\udc80", {}, "field is not valid text (it holds a lone surrogate at index 1): 'a\\udc80'"),
    ]
    for value, options, message in cases:
        with pytest.raises(InvalidInputError) as info:
            checks.text("field", value, **options)  # type: ignore[arg-type]
        assert str(info.value) == message


def test_short_survives_a_hostile_repr_and_cuts_long_values() -> None:
    class Hostile:
        def __repr__(self) -> str:
            raise RuntimeError("no")

    assert checks.short(Hostile()) == "<Hostile>"
    assert checks.short("x" * 200) == "'" + "x" * 78 + "…"
    assert len(checks.short("x" * 200)) == 80
