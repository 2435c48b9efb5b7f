"""Plain's ==, hash and repr answer as the methods dataclasses compiles would."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from aircher_mem.config import GraphPolicy, Policy
from aircher_mem.plain import Plain
from aircher_mem.results import ScoreTerm
from hypothesis import given
from hypothesis import strategies as st

# the same fields made twice: with the methods dataclasses compiles, and lean over Plain
FIELDS = [
    ("a", int),
    ("b", object),
    ("c", float, dataclasses.field(default=0.0, compare=False)),
    ("d", str, dataclasses.field(default="", repr=False)),
]
Compiled: Any = dataclasses.make_dataclass("Compiled", FIELDS, frozen=True)
Lean: Any = dataclasses.make_dataclass("Lean", FIELDS, bases=(Plain,), frozen=True, eq=False, repr=False)
Other: Any = dataclasses.make_dataclass("Other", FIELDS[:2], bases=(Plain,), frozen=True, eq=False, repr=False)


values = st.one_of(st.integers(), st.floats(allow_nan=True), st.text(max_size=5), st.none(), st.tuples(st.integers()))


@given(
    st.tuples(st.integers(-3, 3), values, st.floats(allow_nan=True), st.text(max_size=3)),
    st.tuples(st.integers(-3, 3), values, st.floats(allow_nan=True), st.text(max_size=3)),
)
def test_the_same_answers_as_compiled_methods(x: tuple, y: tuple) -> None:  # type: ignore[type-arg]
    compiled, lean = (Compiled(*x), Compiled(*y)), (Lean(*x), Lean(*y))
    assert (lean[0] == lean[1]) == (compiled[0] == compiled[1])
    assert (lean[0] != lean[1]) == (compiled[0] != compiled[1])
    assert lean[0] == lean[0]  # the same fields (a NaN among them: the same object)
    assert repr(lean[0]) == repr(compiled[0]).replace("Compiled(", "Lean(", 1)
    assert hash(lean[0]) == hash(compiled[0])


def test_only_the_same_class_compares_equal() -> None:
    assert Lean(1, 2) != Other(1, 2) and Lean(1, 2).__eq__(Other(1, 2)) is NotImplemented
    assert Lean(1, 2) == Lean(1, 2, c=5.0) and Lean(1, 2) != Lean(1, 3)
    with pytest.raises(TypeError, match="unhashable"):
        hash(Lean(1, [2]))
    with pytest.raises(dataclasses.FrozenInstanceError):
        Lean(1, 2).a = 3
    assert dataclasses.replace(Lean(1, 2), a=3) == Lean(3, 2)


def test_the_policy_and_the_results_are_plain() -> None:
    assert Policy() == Policy() and hash(Policy().graph) == hash(GraphPolicy())
    assert Policy().graph != dataclasses.replace(GraphPolicy(), pagerank_iterations=5)
    assert repr(GraphPolicy()).startswith("GraphPolicy(max_file_bytes=1000000, pagerank_damping=0.85,")
    term = ScoreTerm("bm25", 1.0, 0.5, 0.5)
    assert term == ScoreTerm("bm25", 1.0, 0.5, 0.5) and repr(term).startswith("ScoreTerm(")
    assert hash(term) == hash(ScoreTerm("bm25", 1.0, 0.5, 0.5))
