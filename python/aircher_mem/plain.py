"""Equality, hashing and ``repr`` for frozen dataclasses, from their fields, without
code compiled for each class.

``dataclasses.dataclass`` compiles each method it adds, for every class, when the
class is made: about 0.15 ms a method here, six for a frozen class, so the Policy's
sections and the results a command uses cost a hook tens of milliseconds before it
does anything. A class decorated with ``dataclass(frozen=True, eq=False,
repr=False)`` over :class:`Plain` gets its ``__init__`` and frozen attributes from
``dataclasses`` and these three from here: the same answers as the generated ones
(the fields that compare, in order; instances of one class only).

:func:`frozen` goes further for a class made once and instantiated a few times (the
Policy and its sections): a dataclass with no compiled method at all, its
``__init__`` and frozen attributes shared by every such class."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from operator import attrgetter
from typing import Any, TypeVar, dataclass_transform

__all__ = ["Plain", "frozen"]

_T = TypeVar("_T", bound=type)

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


# class -> its fields' (name, default, default factory), in order
_INITS: dict[type, tuple[tuple[str, Any, Any], ...]] = {}
_MISSING = dataclasses.MISSING


def _init(self: Any, *args: Any, **values: Any) -> None:
    cls = self.__class__
    fields = _INITS[cls]
    if len(args) > len(fields):
        raise TypeError(f"{cls.__name__}() takes {len(fields)} positional arguments but {len(args)} were given")
    for (name, _, _), value in zip(fields, args):
        if name in values:
            raise TypeError(f"{cls.__name__}() got multiple values for argument {name!r}")
        values[name] = value
    given = len(values)
    for name, default, factory in fields:
        if name in values:
            value = values[name]
            given -= 1
        elif default is not _MISSING:
            value = default
        elif factory is not _MISSING:
            value = factory()
        else:
            raise TypeError(f"{cls.__name__}() missing 1 required argument: {name!r}")
        object.__setattr__(self, name, value)
    if given:
        unknown = sorted(set(values) - {name for name, _, _ in fields})
        raise TypeError(f"{cls.__name__}() got an unexpected keyword argument {unknown[0]!r}")
    post_init = getattr(self, "__post_init__", None)
    if post_init is not None:
        post_init()


def _refuse_set(self: Any, name: str, value: Any) -> None:
    raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")


def _refuse_delete(self: Any, name: str) -> None:
    raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")


@dataclass_transform(frozen_default=True, field_specifiers=(dataclasses.field,))
def frozen(cls: _T) -> _T:
    """``cls`` (a subclass of :class:`Plain`) made a frozen dataclass as
    ``dataclass(frozen=True, eq=False, repr=False)`` makes it, without compiling a
    method: ``__init__`` (positional or keyword arguments, defaults, default
    factories, then ``__post_init__``) and the frozen ``__setattr__`` and
    ``__delattr__`` are shared functions reading the class's fields. For classes
    made often and instantiated rarely: each instance costs a few microseconds more
    than with the compiled ``__init__``. Fields with ``init=False`` are not
    supported (a TypeError)."""
    if not issubclass(cls, Plain):
        raise TypeError(f"{cls.__name__} is not a Plain")
    made: Any = dataclasses.dataclass(init=False, eq=False, repr=False)(cls)  # cls itself, given fields
    fields = dataclasses.fields(made)
    if not all(f.init for f in fields):
        raise TypeError(f"{cls.__name__}: frozen does not support fields with init=False")
    _INITS[made] = tuple((f.name, f.default, f.default_factory) for f in fields)
    made.__init__ = _init
    made.__setattr__ = _refuse_set
    made.__delattr__ = _refuse_delete
    return cls
