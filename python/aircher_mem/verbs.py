"""The verb registry: every verb of the service, declared once.

A verb is a method of :class:`aircher_mem.Memory` (or a command of the CLI, such as
``serve``) marked with :func:`verb`. Its signature is its declaration: the name, each
parameter's type with its bounds and one-line help (``Annotated[..., Field(...)]``,
see :mod:`aircher_mem.checks`), its default, and the result type. Everything else is
derived from it:

* the CLI subcommand (the name with dashes: ``find-symbol``), its arguments and help;
* the MCP tool (the name: ``find_symbol``) with the docstring as its description;
* the HTTP route (``GET /find-symbol`` for a verb that only reads, ``POST`` with a
  JSON body for one that writes) and its OpenAPI description;
* the request model (pydantic) every interface validates arguments with.

Adding a verb is one method with ``@verb(...)`` on :class:`Memory`: the interfaces,
their documentation and the tests that compare them pick it up.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import inspect
import json
import re
import sys
import types
import typing
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Literal, TypeVar

from .checks import Arg, Parse, Schema, short
from .errors import InvalidInputError
from .plain import Plain

if typing.TYPE_CHECKING:  # pydantic is imported when a model is first needed (a server's)
    import pydantic

__all__ = ["Param", "Verb", "Surface", "verb", "get", "all_verbs", "declared", "arguments_model", "plain", "metadata"]

Surface = Literal["python", "cli", "mcp", "http"]
SURFACES: tuple[Surface, ...] = ("python", "cli", "mcp", "http")

F = TypeVar("F", bound=Callable[..., Any])


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class _Mark(Plain):
    http: Literal["GET", "POST"]
    surfaces: tuple[Surface, ...]
    python_only: tuple[str, ...]


_DECLARED: dict[str, Callable[..., Any]] = {}


def verb(
    *,
    name: str | None = None,
    http: Literal["GET", "POST"] = "POST",
    surfaces: tuple[Surface, ...] = SURFACES,
    python_only: tuple[str, ...] = (),
) -> Callable[[F], F]:
    """Declares the method a verb: its HTTP method (``GET`` for a verb that changes
    nothing and takes no long text, so its arguments fit a query string), the
    interfaces that offer it, and the parameters only a Python caller can pass (a
    progress callback); ``name`` when it is not the function's. The function is
    returned as it is."""
    unknown = set(surfaces) - set(SURFACES)
    if unknown:
        raise ValueError(f"unknown surfaces {sorted(unknown)}")

    def mark(method: F) -> F:
        called = name or method.__name__
        if called in _DECLARED and _DECLARED[called] is not method:
            qualname = getattr(_DECLARED[called], "__qualname__", called)
            raise ValueError(f"verb {called!r} is declared twice ({qualname} and {method.__qualname__})")
        method.__aircher_verb__ = _Mark(http, tuple(surfaces), tuple(python_only))  # type: ignore[attr-defined]
        _DECLARED[called] = method
        return method

    return mark


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class Param(Plain):
    """One parameter of a verb: its name, type (with pydantic metadata), default
    (``inspect.Parameter.empty`` when required), one-line help and whether it is
    positional in Python (so, on the command line)."""

    name: str
    annotation: Any
    default: Any
    help: str
    positional: bool

    @property
    def required(self) -> bool:
        return self.default is inspect.Parameter.empty

    @property
    def base(self) -> Any:
        """The type without ``Annotated`` metadata and without ``None``."""
        tp = self.annotation
        while typing.get_origin(tp) is typing.Annotated:
            tp = typing.get_args(tp)[0]
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if _is_union(tp) and len(args) == 1:
            return _strip(args[0])
        return tp

    @property
    def type(self) -> Any:
        """The declared type without its metadata."""
        return _strip(self.annotation)

    @property
    def minimum(self) -> int | float | None:
        return _bound(self.annotation, "ge")

    @property
    def maximum(self) -> int | float | None:
        return _bound(self.annotation, "le")

    @property
    def choices(self) -> tuple[str, ...]:
        base = self.base
        return tuple(typing.get_args(base)) if typing.get_origin(base) is Literal else ()


def _strip(tp: Any) -> Any:
    while typing.get_origin(tp) is typing.Annotated:
        tp = typing.get_args(tp)[0]
    return tp


def metadata(annotation: Any) -> Iterator[Any]:
    """Every metadata item of ``annotation``, outermost first: through
    ``Annotated`` layers and an optional's one type, the pydantic ``FieldInfo``
    items and the constraints they hold."""
    tp = annotation
    while True:
        if typing.get_origin(tp) is typing.Annotated:
            inner, *meta = typing.get_args(tp)
            for item in meta:
                yield item
                yield from getattr(item, "metadata", ())
            tp = inner
            continue
        args = [a for a in typing.get_args(tp) if a is not type(None)] if _is_union(tp) else []
        if len(args) != 1:
            return
        tp = args[0]


def _bound(annotation: Any, name: str) -> int | float | None:
    """The first ``ge``/``le`` bound in ``annotation``'s metadata."""
    for item in metadata(annotation):
        value = getattr(item, name, None)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return value
    return None


def _help(annotation: Any) -> str:
    """The first ``description`` in ``annotation``'s metadata."""
    for item in metadata(annotation):
        described = getattr(item, "description", None)
        if isinstance(described, str) and described:
            return described
    return ""


def _is_union(tp: Any) -> bool:
    return typing.get_origin(tp) in (typing.Union, types.UnionType)


@dataclasses.dataclass(frozen=True, eq=False)
class Verb:
    """A declared verb (see the module's docstring)."""

    name: str
    summary: str
    description: str
    params: tuple[Param, ...]
    result: Any
    http_method: Literal["GET", "POST"]
    surfaces: tuple[Surface, ...]
    function: Callable[..., Any] = dataclasses.field(repr=False, compare=False)

    @property
    def cli_name(self) -> str:
        return self.name.replace("_", "-")

    @property
    def http_path(self) -> str:
        return "/" + self.cli_name

    @property
    def http(self) -> tuple[str, str] | None:
        """The route (method, path), or None when the verb is not served over HTTP."""
        return (self.http_method, self.http_path) if "http" in self.surfaces else None

    @property
    def cli(self) -> bool:
        return "cli" in self.surfaces

    @property
    def mcp(self) -> bool:
        return "mcp" in self.surfaces

    @property
    def results(self) -> tuple[Any, ...]:
        """The result types (the members of a union)."""
        return (
            tuple(a for a in typing.get_args(self.result) if a is not type(None))
            if _is_union(self.result)
            else (self.result,)
        )

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(name)

    def arguments(self, values: Mapping[str, object], *, text: bool = False) -> dict[str, Any]:
        """``values`` checked against the verb's parameters, as its keyword
        arguments: unknown names, missing required ones and values of the wrong
        type are :class:`InvalidInputError`; a value left out (or None for a
        parameter whose default is not None) takes the verb's default. ``text``:
        the values come as text (a query string, a command line) and are converted
        (``"5"`` to 5, ``"true"`` to True); else they are JSON values and must have
        the declared type."""
        import pydantic

        model = arguments_model(self)
        given = {
            k: v for k, v in values.items() if not (v is None and k in model.model_fields and _skips_none(self, k))
        }
        try:
            checked = model.model_validate(given, strict=not text)
        except pydantic.ValidationError as exc:
            raise InvalidInputError(_explain(exc, self)) from None
        return {k: getattr(checked, k) for k in checked.model_fields_set}

    def arguments_json(self, body: bytes) -> dict[str, Any]:
        """A JSON body checked as :meth:`arguments` checks values (strictly)."""
        import pydantic

        model = arguments_model(self)
        try:
            checked = model.model_validate_json(body, strict=True)
        except pydantic.ValidationError as exc:
            raise InvalidInputError(_explain(exc, self)) from None
        out = {k: getattr(checked, k) for k in checked.model_fields_set}
        return {k: value for k, value in out.items() if value is not None or not _skips_none(self, k)}

    def argument_json(self, name: str, value: object) -> Any:
        """One argument, a JSON value (an object the command line parsed), checked
        as :meth:`arguments_json` checks it: the value the verb takes, or
        :class:`InvalidInputError` naming the field at fault."""
        import pydantic

        try:
            body = json.dumps(value, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise InvalidInputError(f"{name} must be JSON: {exc}") from None
        try:
            return _adapter(self.name, name, len(_DECLARED)).validate_json(body, strict=True)
        except pydantic.ValidationError as exc:
            raise InvalidInputError(_explain(exc, self, (name,))) from None


def _skips_none(v: Verb, name: str) -> bool:
    """None for ``name`` means "the default": the parameter's default is not None."""
    try:
        return v.param(name).default is not None
    except KeyError:
        return False


def _explain(exc: pydantic.ValidationError, v: Verb, prefix: tuple[str, ...] = ()) -> str:
    """The errors of a validation in a line a person reads: which argument (or which
    field of it, ``snapshot.total_tokens``), what it must be, what it was.
    ``prefix``: the argument a lone value was (see :meth:`Verb.argument_json`)."""
    parts = []
    for error in exc.errors(include_url=False):
        loc = (*prefix, *error["loc"])
        where = ".".join(str(x) for x in loc) or "the arguments"
        kind, ctx, given = error["type"], error.get("ctx") or {}, error.get("input")
        if kind == "extra_forbidden" and len(loc) > 1:
            fields = _fields_at(v, loc[:-1])
            parts.append(f"unknown field {where}; allowed: {', '.join(fields) or 'none'}")
        elif kind == "extra_forbidden":
            allowed = ", ".join(p.name for p in v.params) or "none"
            parts.append(f"unknown argument {where}; allowed: {allowed}")
        elif kind == "missing":
            parts.append(f"{where} is required")
        elif kind in _MUST:
            parts.append(f"{where} must be {_MUST[kind].format(**ctx)}, got {short(given)}")
        else:
            message = str(error["msg"]).removeprefix("Value error, ")
            parts.append(f"{where} {message}" if message.startswith("must ") else f"{where}: {message}")
    return "; ".join(parts)


def _fields_at(v: Verb, loc: tuple[int | str, ...]) -> tuple[str, ...]:
    """The fields of the typed object (a :class:`typing.TypedDict`) at ``loc`` in
    ``v``'s arguments (``("snapshot",)``); none when there is none there."""
    try:
        tp: Any = v.param(str(loc[0])).annotation
    except KeyError:
        return ()
    for step in loc[1:]:
        tp = _strip_optional(tp)
        if typing.is_typeddict(tp):
            tp = typing.get_type_hints(tp, include_extras=True).get(str(step))
        elif isinstance(step, int) and typing.get_origin(tp) in (list, tuple):
            tp = typing.get_args(tp)[0]
        else:
            return ()
    tp = _strip_optional(tp)
    return tuple(typing.get_type_hints(tp)) if typing.is_typeddict(tp) else ()


def _strip_optional(tp: Any) -> Any:
    """``tp`` without ``Annotated`` metadata, and its one type if it is optional."""
    tp = _strip(tp)
    args = [a for a in typing.get_args(tp) if a is not type(None)]
    return _strip(args[0]) if _is_union(tp) and len(args) == 1 else tp


_MUST = {
    "greater_than_equal": ">= {ge}",
    "greater_than": "> {gt}",
    "less_than_equal": "<= {le}",
    "less_than": "< {lt}",
    "int_parsing": "an integer",
    "int_type": "an integer",
    "int_from_float": "an integer",
    "float_parsing": "a number",
    "float_type": "a number",
    "bool_parsing": "true or false",
    "bool_type": "true or false",
    "string_type": "a string",
    "string_too_short": "at least {min_length} characters long",
    "string_too_long": "at most {max_length} characters long",
    "literal_error": "one of {expected}",
    "list_type": "a list",
    "dict_type": "an object",
    "tuple_type": "a pair [first, last]",
}


def arguments_model(v: Verb) -> type[pydantic.BaseModel]:
    """The pydantic model of ``v``'s parameters (every interface validates with it)."""
    return _model(v.name, len(_DECLARED))


@functools.cache
def _model(name: str, count: int) -> type[pydantic.BaseModel]:
    import pydantic

    v = _one(name, count)
    fields: dict[str, Any] = {}
    for p in v.params:
        default = ... if p.required else p.default
        fields[p.name] = (_pydantic(p.annotation), default)
    config = pydantic.ConfigDict(extra="forbid", arbitrary_types_allowed=False, hide_input_in_errors=False)
    return pydantic.create_model(f"{_camel(v.name)}Arguments", __config__=config, **fields)


@functools.cache
def _adapter(verb_name: str, name: str, count: int) -> pydantic.TypeAdapter[Any]:
    import pydantic

    return pydantic.TypeAdapter(_pydantic(_one(verb_name, count).param(name).annotation))


def _pydantic(tp: Any) -> Any:
    """``tp`` with its :class:`Arg` and :class:`Parse` metadata made pydantic's
    ``Field`` and ``BeforeValidator``, at any depth; a typed object (a
    :class:`typing.TypedDict`) made one that refuses a field it does not declare."""
    import pydantic

    if typing.is_typeddict(tp):
        return _typed_object(tp)
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is typing.Annotated:
        meta = []
        for item in args[1:]:
            if isinstance(item, Arg):
                given = {k: x for k, x in dataclasses.asdict(item).items() if x is not None and x != ""}
                meta.append(pydantic.Field(**given))
            elif isinstance(item, Parse):
                meta.append(pydantic.BeforeValidator(item.function))
            elif isinstance(item, Schema):
                meta.append(pydantic.WithJsonSchema(json.loads(item.json)))
            else:
                meta.append(item)
        return typing.Annotated[(_pydantic(args[0]), *meta)]
    if not args or origin is Literal:
        return tp
    inner = tuple(a if a is Ellipsis else _pydantic(a) for a in args)
    if _is_union(tp):
        return typing.Union[inner]  # noqa: UP007 - built from a tuple
    return origin[inner if len(inner) > 1 else inner[0]]


@functools.cache
def _typed_object(tp: Any) -> Any:
    """The TypedDict ``tp`` as pydantic validates it: its fields' metadata converted
    (:func:`_pydantic`), the same required and optional fields (pydantic reads
    ``typing_extensions``' TypedDict on every Python), no other field allowed."""
    import pydantic
    import typing_extensions

    fields = {
        name: _pydantic(hint) if name in tp.__required_keys__ else typing_extensions.NotRequired[_pydantic(hint)]
        for name, hint in typing.get_type_hints(tp, include_extras=True).items()
    }
    make: Any = typing_extensions.TypedDict  # called with a name known only here
    converted = make(tp.__name__, fields)
    converted.__doc__ = plain(tp.__doc__ or "")  # the schema's description
    converted.__module__ = tp.__module__
    converted.__pydantic_config__ = pydantic.ConfigDict(extra="forbid", hide_input_in_errors=False)
    return converted


def _camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


_ROLE = re.compile(r":(?:class|meth|func|mod|attr|data):`~?([^`]+)`")


def plain(doc: str) -> str:
    """A docstring without reStructuredText markup: roles name their target's last
    part, double backquotes become single ones; paragraphs are kept."""
    text = _ROLE.sub(lambda m: m.group(1).rsplit(".", 1)[-1], doc).replace("``", "`")
    return "\n\n".join(" ".join(p.split()) for p in text.strip().split("\n\n"))


def _summary(doc: str) -> str:
    """The docstring's first sentence."""
    first = plain(doc).split("\n\n", 1)[0]
    found = re.match(r"(.+?[.!?])(\s|$)", first)
    return found.group(1) if found else first


class _LazyNames(dict[str, Any]):
    """The names a module imports only when needed (its ``LAZY_NAMES``: name ->
    module, relative to the module's package), each imported when an annotation
    asks for it: the local namespace its annotations are evaluated in."""

    def __init__(self, module: str) -> None:
        super().__init__()
        self._module = sys.modules[module]
        self._lazy: dict[str, str] = getattr(self._module, "LAZY_NAMES", {})

    def __missing__(self, name: str) -> Any:
        where = self._lazy.get(name)
        if where is None:
            raise KeyError(name)
        value = getattr(importlib.import_module(where, self._module.__package__), name)
        self[name] = value
        return value


def _build(name: str, function: Callable[..., Any]) -> Verb:
    mark: _Mark = function.__aircher_verb__  # type: ignore[attr-defined]
    hints = typing.get_type_hints(function, localns=_LazyNames(function.__module__), include_extras=True)
    signature = inspect.signature(function)
    params = []
    for p in signature.parameters.values():
        if p.name in ("self", "cls") or p.name in mark.python_only:
            continue
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            raise TypeError(f"verb {name}: *args and **kwargs cannot be declared")
        annotation = hints.get(p.name, Any)
        params.append(Param(p.name, annotation, p.default, _help(annotation), p.kind is p.POSITIONAL_OR_KEYWORD))
    doc = inspect.getdoc(function) or ""
    return Verb(name, _summary(doc), doc, tuple(params), hints.get("return", Any), mark.http, mark.surfaces, function)


@functools.cache
def _one(name: str, count: int) -> Verb:
    return _build(name, _DECLARED[name])


@functools.cache
def _registry(count: int) -> dict[str, Verb]:
    return {name: _one(name, count) for name in sorted(_DECLARED)}


def _verbs() -> dict[str, Verb]:
    return _registry(len(_DECLARED))


def all_verbs(surface: Surface | None = None) -> tuple[Verb, ...]:
    """Every declared verb (on ``surface`` when given), by name."""
    return tuple(v for v in _verbs().values() if surface is None or surface in v.surfaces)


def declared(surface: Surface) -> list[str]:
    """The names of the verbs declared on ``surface``, sorted, without making them
    (reading their signatures and types, as :func:`all_verbs` does)."""
    return sorted(name for name, f in _DECLARED.items() if surface in f.__aircher_verb__.surfaces)  # type: ignore[attr-defined]


def get(name: str) -> Verb:
    """The verb named ``name`` (underscores, or the CLI's dashes)."""
    key = name.replace("-", "_")
    if key not in _DECLARED:
        raise InvalidInputError(f"no verb named {name!r}")
    return _one(key, len(_DECLARED))


def __getattr__(name: str) -> Any:
    if name == "VERBS":
        return all_verbs()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
