"""Regular expressions compiled when first used, not when their module is imported.

A process that runs one command or one hook imports modules holding dozens of
patterns it never applies (the secret detectors, the extraction rules), and
compiling them took a tenth of such a process's import time. :func:`lazy` gives a
:class:`LazyPattern` that compiles on its first use and from then on answers with
the compiled pattern's own methods (kept on the instance: no call in between).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

__all__ = ["LazyPattern", "lazy"]

# The compiled pattern's methods kept on a LazyPattern once it is compiled.
_METHODS = ("search", "match", "fullmatch", "sub", "subn", "split", "findall", "finditer")


class LazyPattern:
    """A regular expression (``pattern``, ``flags``) compiled on first use; any
    attribute of :class:`re.Pattern` reads through to the compiled one."""

    pattern: str
    flags: int

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern = pattern
        self.flags = flags

    def compiled(self) -> re.Pattern[str]:
        """The compiled pattern (compiled now if it was not yet)."""
        compiled = re.compile(self.pattern, self.flags)
        for name in _METHODS:
            # Two threads compiling at once set the same methods: harmless.
            setattr(self, name, getattr(compiled, name))
        self.compiled = lambda: compiled  # type: ignore[method-assign]
        return compiled

    def __getattr__(self, name: str) -> Any:
        # Only for what the instance does not hold yet: the methods before the first
        # use, and the compiled pattern's other attributes (groups, groupindex).
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.compiled(), name)

    def __repr__(self) -> str:
        return f"lazy({self.pattern!r}{f', {self.flags}' if self.flags else ''})"

    if TYPE_CHECKING:  # what __getattr__ provides, as re.Pattern types it

        def search(self, string: str, pos: int = 0, endpos: int = ...) -> re.Match[str] | None: ...
        def match(self, string: str, pos: int = 0, endpos: int = ...) -> re.Match[str] | None: ...
        def fullmatch(self, string: str, pos: int = 0, endpos: int = ...) -> re.Match[str] | None: ...
        def sub(self, repl: str | Callable[[re.Match[str]], str], string: str, count: int = 0) -> str: ...
        def subn(self, repl: str | Callable[[re.Match[str]], str], string: str, count: int = 0) -> tuple[str, int]: ...
        def split(self, string: str, maxsplit: int = 0) -> list[str | Any]: ...
        def findall(self, string: str, pos: int = 0, endpos: int = ...) -> list[Any]: ...
        def finditer(self, string: str, pos: int = 0, endpos: int = ...) -> Iterator[re.Match[str]]: ...


def lazy(pattern: str, flags: int | re.RegexFlag = 0) -> LazyPattern:
    """``re.compile(pattern, flags)``, done when the pattern is first used."""
    return LazyPattern(pattern, int(flags))
