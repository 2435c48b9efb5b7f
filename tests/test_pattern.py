"""Regular expressions compiled on first use (aircher_mem.pattern)."""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from typing import Any

import aircher_mem
import pytest
from aircher_mem.pattern import LazyPattern, lazy
from hypothesis import given
from hypothesis import strategies as st

PACKAGE = Path(aircher_mem.__file__).parent

SOURCES = [
    (r"(?P<word>\w+)@(?P<host>[a-z.]+)", 0),
    (r"^\s*(?:bearer|basic)\s+(\S{2,})", re.I | re.M),
    (r"[.!?]\s+", 0),
]


@given(
    st.sampled_from(SOURCES),
    st.text(alphabet=st.sampled_from(list("ab@.x \n!?Bearer") + ["\ud800", "é"]), max_size=40),
)
def test_answers_as_the_compiled_pattern(source: tuple[str, int], text: str) -> None:
    pattern, flags = source
    compiled = re.compile(pattern, flags)
    made = lazy(pattern, flags)
    span = lambda m: None if m is None else (m.span(), m.groups())  # noqa: E731
    assert span(made.search(text)) == span(compiled.search(text))
    assert span(made.match(text, 1)) == span(compiled.match(text, 1))
    assert span(made.fullmatch(text)) == span(compiled.fullmatch(text))
    assert made.sub("<>", text) == compiled.sub("<>", text)
    assert made.subn(lambda m: m.group(0).upper(), text, 2) == compiled.subn(lambda m: m.group(0).upper(), text, 2)
    assert made.split(text) == compiled.split(text)
    assert made.findall(text) == compiled.findall(text)
    assert [m.span() for m in made.finditer(text, 0, 20)] == [m.span() for m in compiled.finditer(text, 0, 20)]
    assert (made.groups, made.groupindex) == (compiled.groups, compiled.groupindex)


def test_compiles_on_first_use_only() -> None:
    broken = lazy(r"(unclosed")  # not compiled yet: no error
    assert broken.pattern == "(unclosed" and broken.flags == 0
    assert repr(lazy(r"a+", re.I)) == f"lazy('a+', {int(re.I)})"
    with pytest.raises(re.error):
        broken.search("x")


def test_after_first_use_the_methods_are_the_compiled_patterns() -> None:
    made = lazy(r"b+")
    assert "search" not in vars(made)
    assert made.search("abbb") is not None
    compiled = made.compiled()
    assert compiled is re.compile(r"b+")
    assert made.compiled() is compiled
    assert all(getattr(made, name).__self__ is compiled for name in ("search", "sub", "finditer", "split"))


def _lazy_in(value: Any, depth: int = 0) -> list[LazyPattern]:
    if isinstance(value, LazyPattern):
        return [value]
    if depth < 3 and isinstance(value, (list, tuple)):
        return [p for item in value for p in _lazy_in(item, depth + 1)]
    if depth < 3 and type(value).__module__.startswith("aircher_mem.") and hasattr(value, "__dict__"):
        return [p for item in vars(value).values() for p in _lazy_in(item, depth + 1)]
    return []


def test_every_pattern_of_the_package_compiles() -> None:
    """A pattern compiled on first use would hide a mistake until a text reaches it:
    every one held by a module (or by its tables) compiles."""
    found: list[LazyPattern] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if "lazy(" not in path.read_text(encoding="utf-8") or path.name == "pattern.py":
            continue
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        module = importlib.import_module(".".join(parts))
        found += [p for value in vars(module).values() for p in _lazy_in(value)]
    assert len(found) > 140
    for made in found:
        assert isinstance(made.compiled(), re.Pattern), made
