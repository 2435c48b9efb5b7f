"""Cold start's view of the code (seed 000's progressive discovery): the domains a
project falls into, ranked by its code graph, and the facts about the files a task
needs.

A domain is a top-level package or folder of the product code (tests, benchmarks,
examples, docs and vendored code left out): folders named only to hold code
(``src``, ``lib``, ``python``, ``packages``, ...) are looked through, and while one
folder holds at least :data:`DOMINANT` of the files, its own folders are the
domains. A domain's score is the number of its files plus the number of product
files that import them; its main modules are its most imported files."""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Callable, Sequence

from .._core import KnowledgeGraph, path_kind
from ..results import SuggestedDomain
from . import changes

__all__ = ["DOMINANT", "CONTAINERS", "DiscoveredFact", "domains", "domain_of", "file_fact", "readme_fact"]

#: A folder holding this share of the files is the project itself: its folders are
#: the domains.
DOMINANT = 0.8
#: Folders that only hold code: looked through.
CONTAINERS = frozenset(
    {"src", "source", "sources", "lib", "libs", "python", "rust", "pkg", "packages", "crates", "internal", "main"}
)
_MAX_DEPTH = 32  # folders looked into (a path is never that deep in practice)
_MAIN_MODULES = 3
#: Files that stand for their folder (a package's ``__init__.py``, Rust's ``mod.rs``
#: and ``lib.rs``, JavaScript's ``index.js``): never a domain or a main module.
_PACKAGE_FILES = frozenset({"__init__", "mod", "lib", "index"})


@dataclasses.dataclass(frozen=True)
class DiscoveredFact:
    """A fact cold start found (a :class:`aircher_mem.longterm.knowledge.CodeFact`)."""

    content: str
    suggested_level: str
    domain: str | None
    kind: str
    code_ref: str | None = None
    confidence: float = 0.9
    source: str = "cold_start"
    commit: str | None = None


def _split(prefix: str, files: list[str], depth: int) -> list[tuple[str, str, list[str]]]:
    """The domains under ``prefix``: (name, path, files)."""
    children: dict[str, list[str]] = defaultdict(list)
    for path in files:
        head = path[len(prefix) :].split("/", 1)[0]
        children[head].append(path)
    found: list[tuple[str, str, list[str]]] = []
    folders: list[tuple[str, str, list[str]]] = []
    for head, under in sorted(children.items()):
        folder = any("/" in p[len(prefix) :] for p in under)
        if folder and head.lower() in CONTAINERS and depth < _MAX_DEPTH:
            found.extend(_split(f"{prefix}{head}/", under, depth + 1))
        elif folder:
            folders.append((head, f"{prefix}{head}", under))
        else:
            found.append((head.rsplit(".", 1)[0] or head, f"{prefix}{head}", under))
    if folders and depth < _MAX_DEPTH:
        biggest = max(folders, key=lambda f: len(f[2]))
        if len(biggest[2]) > 1 and len(biggest[2]) >= DOMINANT * len(files):
            folders.remove(biggest)
            found.extend(_split(f"{biggest[1]}/", biggest[2], depth + 1))
    return found + folders


def _product(graph: KnowledgeGraph) -> list[str]:
    return [path for path in graph.files if path_kind(path) is None]


def domains(graph: KnowledgeGraph, limit: int) -> list[SuggestedDomain]:
    """The project's ``limit`` best domains by the graph, best first."""
    files = _product(graph)
    product = set(files)
    importers = {path: sum(1 for d in graph.get_dependents(path) if d in product) for path in files}
    ranked = []
    for name, path, under in _split("", files, 0):
        if name in _PACKAGE_FILES:  # the package itself, not a part of it
            continue
        score = sum(1 + importers[f] for f in under)
        modules = [f for f in under if f.rsplit("/", 1)[-1].rsplit(".", 1)[0] not in _PACKAGE_FILES] or under
        main = sorted(modules, key=lambda f: (-importers[f], f))[:_MAIN_MODULES]
        ranked.append(SuggestedDomain(name, path, len(under), score, main))
    ranked.sort(key=lambda d: (-d.score, d.path))
    return ranked[:limit]


def domain_of(path: str, suggested: Sequence[SuggestedDomain]) -> str | None:
    """The name of the suggested domain ``path`` is in, if any."""
    for domain in suggested:
        if path == domain.path or path.startswith(domain.path + "/"):
            return domain.name
    return None


def file_fact(
    graph: KnowledgeGraph, path: str, purpose: Callable[[str], str | None], text: str | None, domain: str | None
) -> DiscoveredFact | None:
    """What a file is for, as an L2 fact: its own docstring or leading comment
    (``purpose`` of its ``text``), else the definitions the parser found in it;
    None when it has neither."""
    said = purpose(text) if text is not None else None
    if said:
        return DiscoveredFact(f"{path}: {said}", "L2", domain, "module_purpose", code_ref=path, confidence=0.85)
    top = [d for d in graph.get_file_contents(path) if d.kind in ("function", "class") and not d.scope]
    public = [d for d in top if not d.name.startswith("_")]
    top = public or top
    if not top:
        return None
    names = ", ".join(d.name for d in top[:6]) + (f" and {len(top) - 6} more" if len(top) > 6 else "")
    return DiscoveredFact(f"{path} defines {names}", "L2", domain, "module_outline", code_ref=path)


def readme_fact(name: str, text: str) -> DiscoveredFact | None:
    """What the project is, as the first sentence of its README ``name`` says it (an
    L0 fact); None when it says nothing readable."""
    summary = changes.readme_summary(text)
    if summary is None:
        return None
    return DiscoveredFact(
        f"{name} says the project is: {summary}", "L0", None, "readme", code_ref=name, confidence=changes.README
    )
