"""Equality, hashing and ``repr`` for frozen dataclasses, from their fields, without
code compiled for each class.

``dataclasses.dataclass`` compiles each method it adds, for every class, when the
class is made: about 0.15 ms a method here, six for a frozen class, so the Policy's
sections and the results a command uses cost a hook tens of milliseconds before it
does anything. A class decorated with ``dataclass(frozen=True, eq=False,
repr=False)`` over :class:`Plain` gets its ``__init__`` and frozen attributes from
``dataclasses`` and these three from here: the same answers as the generated ones
(the fields that compare, in order; instances of one class only)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from operator import attrgetter
from typing import Any

__all__ = ["Plain"]

# class -> the values of an instance's fields that compare, that hash, that show in
# repr: each a tuple, made in C (operator.attrgetter) where the fields are two or more
_Values = Callable[[Any], tuple[Any, ...]]
_SHAPES: dict[type, tuple[_Values, _Values, tuple[str, ...]]] = {}


def _values(names: tuple[str, ...]) -> _Values:
    if len(names) >= 2:
        return attrgetter(*names)
    if names:
        one = attrgetter(names[0])
        return lambda obj: (one(obj),)
    return lambda obj: ()


def _shape(cls: type) -> tuple[_Values, _Values, tuple[str, ...]]:
    shape = _SHAPES.get(cls)
    if shape is None:
        fields = dataclasses.fields(cls)
        compared = _values(tuple(f.name for f in fields if f.compare))
        hashed = _values(tuple(f.name for f in fields if (f.compare if f.hash is None else f.hash)))
        shape = _SHAPES[cls] = (compared, hashed, tuple(f.name for f in fields if f.repr))
    return shape


class Plain:
    """The base of a frozen dataclass made with ``eq=False, repr=False`` (see the
    module): ``==`` compares the fields of two instances of the same class, ``hash``
    hashes them, ``repr`` shows them as ``Name(field=value, ...)``."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        values = _shape(self.__class__)[0]
        return values(self) == values(other)

    def __hash__(self) -> int:
        return hash(_shape(self.__class__)[1](self))

    def __repr__(self) -> str:
        shown = ", ".join(f"{n}={getattr(self, n)!r}" for n in _shape(self.__class__)[2])
        return f"{self.__class__.__qualname__}({shown})"
