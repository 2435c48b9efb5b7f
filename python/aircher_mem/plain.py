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

__all__ = ["Plain"]

# class -> (the names of its fields that compare, and that hash; that show in repr)
_SHAPES: dict[type, tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]] = {}


def _shape(cls: type) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    shape = _SHAPES.get(cls)
    if shape is None:
        fields = dataclasses.fields(cls)
        compared = tuple(f.name for f in fields if f.compare)
        hashed = tuple(f.name for f in fields if (f.compare if f.hash is None else f.hash))
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
        names = _shape(self.__class__)[0]
        return tuple(getattr(self, n) for n in names) == tuple(getattr(other, n) for n in names)

    def __hash__(self) -> int:
        return hash(tuple(getattr(self, n) for n in _shape(self.__class__)[1]))

    def __repr__(self) -> str:
        shown = ", ".join(f"{n}={getattr(self, n)!r}" for n in _shape(self.__class__)[2])
        return f"{self.__class__.__qualname__}({shown})"
