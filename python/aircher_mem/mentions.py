"""The file paths a text names: a tool's output (``grep -rn`` results, a
traceback, ``ls``), a command line, an error or a prompt. The predictive engine
expects the files a tool just named to be opened next.

It imports nothing (the hooks call it on every tool call, some without a server),
so it splits by hand instead of with :mod:`re`.
"""

from __future__ import annotations

__all__ = ["SOURCE_SUFFIXES", "paths_in"]

#: What a named file must end with to count: source, build and documentation files.
SOURCE_SUFFIXES = frozenset(
    (
        "py pyi pyx pxd c h cc cpp cxx hpp hh rs go java kt kts scala rb php js jsx mjs cjs ts tsx"
        " cs swift m mm lua pl pm sh bash zsh r jl ex exs erl hs ml mli clj dart vue svelte"
        " toml cfg ini yaml yml json xml html css scss md rst txt in sql proto gradle cmake mk"
    ).split()
)
_CUT = frozenset("\"'`()[]{}<>,;:=|&!?*$#\\ \t\r\n\f\v")
_MAX_CHARS = 300


def paths_in(text: str, *, limit: int = 50) -> list[str]:
    """The distinct relative or absolute file paths ``text`` names, in order of
    first appearance, at most ``limit``: tokens between quotes, brackets,
    colons, spaces and shell operators, with a suffix in :data:`SOURCE_SUFFIXES`,
    no ``..`` part and at most 300 characters. A leading ``./`` goes, and so do
    ``a/`` and ``b/`` before a path in a diff header."""
    found: dict[str, None] = {}
    start = -1
    for i in range(len(text) + 1):
        if i < len(text) and text[i] not in _CUT:
            if start < 0:
                start = i
            continue
        if start >= 0:
            path = _path(text[start:i])
            start = -1
            if path is not None and path not in found:
                found[path] = None
                if len(found) >= limit:
                    break
    return list(found)


def _path(token: str) -> str | None:
    token = token.rstrip(".").lstrip("-")
    if not token or len(token) > _MAX_CHARS:
        return None
    while token.startswith("./"):
        token = token[2:]
    if token.startswith(("a/", "b/")) and token.count("/") > 1:
        token = token[2:]
    name = token.rsplit("/", 1)[-1]
    stem, dot, suffix = name.rpartition(".")
    if not dot or not stem or suffix.lower() not in SOURCE_SUFFIXES:
        return None
    parts = token.split("/")
    if ".." in parts or any(not part for part in parts[1:]):
        return None
    return token
