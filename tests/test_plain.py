"""Plain's ==, hash and repr answer as the methods dataclasses compiles would."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from aircher_mem.config import GraphPolicy, Policy
from aircher_mem.plain import Plain, frozen
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


# frozen: the same fields, one with a default factory, and a __post_init__ that checks
def _checked(self: Any) -> None:
    if self.a == 99:
        raise ValueError("a is 99")


def _body() -> dict[str, Any]:
    return {
        "__annotations__": {"a": "int", "b": "object", "c": "float", "d": "str", "e": "list[int]"},
        "c": dataclasses.field(default=0.0, compare=False),
        "d": dataclasses.field(default="", repr=False),
        "e": dataclasses.field(default_factory=lambda: [1]),
        "__post_init__": _checked,
    }


CompiledInit: Any = dataclasses.dataclass(frozen=True, eq=False, repr=False)(type("CompiledInit", (Plain,), _body()))
SharedInit: Any = frozen(type("SharedInit", (Plain,), _body()))


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


def _made(cls: Any, args: tuple, kwargs: dict) -> Any:  # type: ignore[type-arg]
    try:
        made = cls(*args, **kwargs)
    except (TypeError, ValueError) as exc:
        return type(exc), str(exc).replace(cls.__name__, "C")
    return {f.name: getattr(made, f.name) for f in dataclasses.fields(made)}


@given(
    st.lists(st.integers(-2, 99), max_size=6),
    st.dictionaries(st.sampled_from(["a", "b", "c", "d", "e", "z"]), st.integers(-2, 99), max_size=4),
)
def test_frozen_constructs_as_the_compiled_init(args: list[int], kwargs: dict[str, int]) -> None:
    """The same instances, and the same errors (type and message) where the compiled
    ``__init__`` refuses its arguments: too many, twice given, unknown, missing."""
    shared, compiled = _made(SharedInit, tuple(args), kwargs), _made(CompiledInit, tuple(args), kwargs)
    if isinstance(compiled, tuple) and compiled[0] is TypeError:
        assert shared[0] is TypeError  # the compiled messages name the arguments otherwise
    else:
        assert shared == compiled


def test_frozen_is_a_frozen_dataclass_with_no_method_compiled() -> None:
    made = SharedInit(1, 2)
    assert made.e == [1] and made.e is not SharedInit(1, 2).e  # a new list from the factory each time
    assert [f.name for f in dataclasses.fields(made)] == ["a", "b", "c", "d", "e"]
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field 'a'"):
        made.a = 3
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot delete field 'b'"):
        del made.b
    assert dataclasses.replace(made, a=3) == SharedInit(3, 2) and repr(made).startswith("SharedInit(a=1, b=2,")
    for name in ("__init__", "__setattr__", "__delattr__"):
        assert getattr(SharedInit, name) is getattr(GraphPolicy, name) is vars(SharedInit)[name]
    with pytest.raises(TypeError, match="missing 1 required argument: 'b'"):
        SharedInit(1)
    with pytest.raises(TypeError, match="unexpected keyword argument 'z'"):
        SharedInit(1, 2, z=3)
    with pytest.raises(TypeError, match="not a Plain"):
        frozen(type("NotPlain", (), {"__annotations__": {"a": "int"}}))
    with pytest.raises(TypeError, match="init=False"):
        frozen(type("Hidden", (Plain,), {"__annotations__": {"a": "int"}, "a": dataclasses.field(init=False)}))
