"""The package's import graph: no cycles, and imports only in the direction of the
architecture (interfaces -> memory -> components -> foundations). Read from the
installed package's sources, every import statement (also those inside functions)."""

from __future__ import annotations

import ast
from pathlib import Path

import aircher_mem
import aircher_mem.engine
import aircher_mem.errors
import aircher_mem.results

PACKAGE = Path(aircher_mem.__file__).parent

# Higher layers may import lower ones (and foundations each other); never upward.
LAYERS = {
    "aircher_mem": 5,
    "aircher_mem.__main__": 5,
    "aircher_mem.hook": 5,
    "aircher_mem.interfaces": 4,
    "aircher_mem.interfaces.cli": 4,
    "aircher_mem.interfaces.mcp": 4,
    "aircher_mem.interfaces.hooks": 4,
    "aircher_mem.interfaces.http": 4,
    "aircher_mem.interfaces.client": 4,
    "aircher_mem.interfaces.accounts": 4,
    "aircher_mem.interfaces.dispatch": 4,
    "aircher_mem.interfaces.hook_command": 4,
    "aircher_mem.interfaces.thin": 4,
    "aircher_mem.interfaces.command_line": 4,
    "aircher_mem.interfaces.render": 4,
    "aircher_mem.interfaces.wire": 3,
    "aircher_mem.memory": 2,
    "aircher_mem.engine": 2,
    "aircher_mem.prediction": 2,
    "aircher_mem.offers": 2,
    "aircher_mem.replay": 2,
    "aircher_mem.journal": 1,
    "aircher_mem.transfer": 1,
    "aircher_mem.assembly": 1,
    "aircher_mem.brief": 1,
    "aircher_mem.mentions": 0,
    "aircher_mem.context": 1,
    "aircher_mem.graph": 1,
    "aircher_mem.retrieval": 1,
    "aircher_mem.embeddings": 1,
    "aircher_mem.nli": 1,
    "aircher_mem.episodic": 1,
    "aircher_mem.longterm": 1,
    "aircher_mem.longterm.store": 1,
    "aircher_mem.longterm.schema": 1,
    "aircher_mem.longterm.checks": 1,
    "aircher_mem.longterm.documents": 1,
    "aircher_mem.longterm.indexlog": 1,
    "aircher_mem.longterm.core": 1,
    "aircher_mem.longterm.turns": 1,
    "aircher_mem.longterm.memories": 1,
    "aircher_mem.longterm.recall": 1,
    "aircher_mem.longterm.lifecycle": 1,
    "aircher_mem.longterm.forget": 1,
    "aircher_mem.longterm.ttl": 1,
    "aircher_mem.longterm.ttl_rules": 1,
    "aircher_mem.longterm.extract": 1,
    "aircher_mem.longterm.chains_extract": 1,
    "aircher_mem.longterm.vocabulary": 1,
    "aircher_mem.longterm.contradict": 1,
    "aircher_mem.longterm.scoring": 1,
    "aircher_mem.longterm.dialogue": 1,
    "aircher_mem.longterm.compress": 1,
    "aircher_mem.longterm.episodes": 1,
    "aircher_mem.longterm.layers": 1,
    "aircher_mem.longterm.consolidate": 1,
    "aircher_mem.longterm.chains": 1,
    "aircher_mem.longterm.contradictions": 1,
    "aircher_mem.longterm.decisions": 1,
    "aircher_mem.longterm.coldstart": 1,
    "aircher_mem.longterm.buildfiles": 1,
    "aircher_mem.longterm.ci": 1,
    "aircher_mem.longterm.changes": 1,
    "aircher_mem.longterm.knowledge": 1,
    "aircher_mem.longterm.discovery": 1,
    "aircher_mem.longterm.catchup": 1,
    "aircher_mem.store": 0,
    "aircher_mem.postgres": 0,
    "aircher_mem.results": 0,
    "aircher_mem.plain": 0,
    "aircher_mem.pattern": 0,
    "aircher_mem.heap": 0,
    "aircher_mem.digest": 0,
    "aircher_mem.config": 0,
    "aircher_mem.errors": 0,
    "aircher_mem.root": 0,
    "aircher_mem.tokens": 0,
    "aircher_mem.redact": 0,
    "aircher_mem.checks": 0,
    "aircher_mem.verbs": 0,
    "aircher_mem._core": 0,
    "aircher_mem._reference": 0,
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path) -> set[str]:
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package
            for _ in range(node.level - 1):
                base = base.rsplit(".", 1)[0]
            module = f"{base}.{node.module}" if node.level and node.module else base if node.level else node.module
            assert module is not None
            # `from . import wire` names a module: it imports that module (the package's
            # __init__ runs first, as for `from .wire import x`, which counts no edge to it)
            submodules = {f"{module}.{alias.name}" for alias in node.names} & set(LAYERS)
            found.update(submodules if len(submodules) == len(node.names) else {module, *submodules})
    return {m for m in found if m.split(".")[0] == "aircher_mem"}


def graph() -> dict[str, set[str]]:
    return {module_name(p): imports_of(p) for p in sorted(PACKAGE.rglob("*.py"))}


def test_every_module_has_a_layer() -> None:
    assert sorted(set(graph()) - set(LAYERS)) == []


def test_imports_go_one_way() -> None:
    wrong = [
        (m, i)
        for m, targets in graph().items()
        for i in sorted(targets)
        if i != m and LAYERS[i] > LAYERS[m] and not (m == "aircher_mem.interfaces" or i == "aircher_mem")
    ]
    assert wrong == []
    # components never import each other's storage or the service
    assert "aircher_mem.context" not in graph()["aircher_mem.episodic"]


def test_no_import_cycle() -> None:
    edges = graph()
    state: dict[str, int] = {}
    cycle: list[str] = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(edges.get(node, ())):
            if nxt == node or nxt not in edges or nxt == "aircher_mem":
                continue
            if state.get(nxt) == 1:
                cycle.extend(path + [nxt])
                return
            if nxt not in state:
                visit(nxt, path + [nxt])
        state[node] = 2

    for start in sorted(edges):
        if start not in state:
            visit(start, [start])
    assert cycle == []


def test_the_cli_pulls_in_nothing_that_imports_it_back() -> None:
    edges = graph()
    seen: set[str] = set()
    todo = ["aircher_mem.interfaces.cli"]
    while todo:
        module = todo.pop()
        for target in edges.get(module, ()):
            if target not in seen and target != "aircher_mem":
                seen.add(target)
                todo.append(target)
    assert not any("aircher_mem.interfaces.cli" in edges.get(m, ()) for m in seen)


def test_the_top_level_is_small_and_every_exported_name_resolves() -> None:
    assert len(aircher_mem.__all__) <= 20
    for module in (aircher_mem, aircher_mem.engine, aircher_mem.results, aircher_mem.errors):
        missing = [name for name in module.__all__ if not hasattr(module, name)]
        assert missing == [], module.__name__
        assert len(set(module.__all__)) == len(module.__all__), module.__name__


def test_every_error_is_in_errors_and_the_top_level_errors_are_the_same_classes() -> None:
    for name in aircher_mem.__all__:
        value = getattr(aircher_mem, name)
        if isinstance(value, type) and issubclass(value, aircher_mem.AircherError):
            assert getattr(aircher_mem.errors, name) is value
    assert sorted(n for n in aircher_mem.__all__ if n.endswith("Error")) == sorted(
        [
            "AircherError",
            "EncodingUnavailableError",
            "GitError",
            "InvalidInputError",
            "NotIndexedError",
            "PolicyError",
            "SchemaVersionError",
            "StoreCorruptError",
            "StoreError",
            "StoreLockedError",
            "StoreNotFoundError",
            "UnknownMemoryError",
            "UnknownSymbolError",
            "UnknownTaskError",
        ]
    )
