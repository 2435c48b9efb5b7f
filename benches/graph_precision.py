"""How often the graph's call edges point at the right definition, measured on the
Python files of a tree (CPython's standard library by default) against a ground
truth computed independently with Python's own `ast`.

The ground truth covers the call sites whose target can be known without running
the code:
- `f()` where `f` is a top-level function or class of the same file;
- `f()` where the file did `from m import f` and `m` (a module in the tree)
  defines `f` at top level;
- `m.f()` where the file did `import m` (or `import m as x`; `x.f()`) and `m`
  defines `f` at top level;
- `self.f()` inside a class whose body defines `f`.
Calls the ast cannot pin down (methods on other objects, builtins, locals) are not
counted. A site counts as linked when the graph has a call edge from that file and
line to a definition named like the callee; it is right when the true definition is
among the targets, and exact when it is the only one.

    python benches/graph_precision.py [ROOT]
"""

from __future__ import annotations

import ast
import sys
import sysconfig
import time
import warnings
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

import aircher_mem as am


@dataclass(frozen=True)
class Site:
    path: str
    line: int
    name: str
    target: tuple[str, int]  # path and line of the true definition
    category: str


def module_files(root: Path, files: list[str]) -> dict[str, str]:
    """Dotted module name -> path, for the tree's Python files."""
    out: dict[str, str] = {}
    for rel in files:
        parts = rel[:-3].split("/")
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if parts:
            out[".".join(parts)] = rel
    return out


def top_level(tree: ast.Module) -> dict[str, int]:
    return {n.name: n.lineno for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}


def absolute(module: str | None, level: int, rel: str) -> str | None:
    if level == 0:
        return module
    package = rel.split("/")[:-1]  # the folder: a module's package, or the package an __init__.py is
    if level - 1 > len(package):
        return None
    base = package[: len(package) - (level - 1)]
    return ".".join(base + ([module] if module else [])) or None


def ground_truth(root: Path, files: list[str]) -> list[Site]:
    modules = module_files(root, files)
    trees: dict[str, ast.Module] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for rel in files:
            try:
                trees[rel] = ast.parse((root / rel).read_bytes())
            except (SyntaxError, ValueError):
                continue
    tops = {rel: top_level(tree) for rel, tree in trees.items()}
    sites: list[Site] = []
    for rel, tree in trees.items():
        names: dict[str, tuple[str, str]] = {}  # local name -> (module file, name)
        mods: dict[str, str] = {}  # local name -> module file
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                source = absolute(node.module, node.level, rel)
                if source in modules:
                    for alias in node.names:
                        names[alias.asname or alias.name] = (modules[source], alias.name)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name in modules and (alias.asname or "." not in alias.name):
                        mods[alias.asname or alias.name] = modules[alias.name]
        own = tops[rel]

        def visit(node: ast.AST, cls: ast.ClassDef | None) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.ClassDef):
                    visit(child, child)
                    continue
                if isinstance(child, ast.Call):
                    site = classify(child, cls)
                    if site is not None:
                        sites.append(site)
                visit(child, cls)

        def classify(call: ast.Call, cls: ast.ClassDef | None) -> Site | None:
            func = call.func
            if isinstance(func, ast.Name):
                if func.id in own:
                    return Site(rel, func.lineno, func.id, (rel, own[func.id]), "same file")
                if func.id in names:
                    path, name = names[func.id]
                    if name in tops.get(path, {}):
                        return Site(rel, func.lineno, name, (path, tops[path][name]), "from-import")
            elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
                line = func.end_lineno or func.lineno
                if func.value.id in mods:
                    path = mods[func.value.id]
                    if func.attr in tops.get(path, {}):
                        return Site(rel, line, func.attr, (path, tops[path][func.attr]), "module.attr")
                elif func.value.id == "self" and cls is not None:
                    methods = {
                        n.name: n.lineno for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                    }
                    if func.attr in methods:
                        return Site(rel, line, func.attr, (rel, methods[func.attr]), "self.method")
            return None

        visit(tree, None)
    return sites


def measure(root: Path, graph: am.KnowledgeGraph | None = None) -> dict[str, Counter[str]]:
    started = time.perf_counter()
    graph = graph or am.KnowledgeGraph.build(root)
    files = sorted({s.path for s in graph.find_symbol("", prefix=True) if s.path.endswith(".py")})
    sites = ground_truth(root, files)
    edges: dict[tuple[str, int, str], list[tuple[str, int]]] = defaultdict(list)
    for path in files:
        for _, ref in graph.get_references_from(path):
            if ref.kind == "calls":
                edges[(path, ref.line, ref.symbol.name)].append((ref.symbol.path, ref.symbol.line))
    stats: dict[str, Counter[str]] = defaultdict(Counter)
    known = {(s.path, s.line, s.name) for s in sites}
    stats["edges"]["sites"] = len(edges)
    stats["edges"]["known"] = sum(1 for key in edges if key in known)
    stats["edges"]["unique"] = sum(1 for targets in edges.values() if len(targets) == 1)
    for site in sites:
        targets = edges.get((site.path, site.line, site.name), [])
        for bucket in (site.category, "all"):
            stats[bucket]["sites"] += 1
            if targets:
                stats[bucket]["linked"] += 1
                stats[bucket]["right"] += site.target in targets
                stats[bucket]["exact"] += targets == [site.target]
    print(
        f"{root}: {len(files)} Python files, {len(sites)} call sites with a known target "
        f"({time.perf_counter() - started:.1f} s)"
    )
    return stats


def main() -> None:
    root = Path(sys.argv[1] if len(sys.argv) > 1 else sysconfig.get_paths()["stdlib"])
    stats = measure(root)
    e = stats["edges"]
    print(
        f"The graph links {e['sites']:,} call sites ({e['unique'] / max(e['sites'], 1):.1%} to a single definition); "
        f"{e['known'] / max(e['sites'], 1):.1%} of them are sites with a known target, below."
    )
    print("| call sites | known | linked | right among targets | exact (only target) |")
    print("|---|---:|---:|---:|---:|")
    for bucket in ("same file", "from-import", "module.attr", "self.method", "all"):
        s = stats[bucket]
        if not s["sites"]:
            continue
        linked = max(s["linked"], 1)
        print(
            f"| {bucket} | {s['sites']:,} | {s['linked'] / s['sites']:.1%} | {s['right'] / linked:.1%} | "
            f"{s['exact'] / linked:.1%} |"
        )


if __name__ == "__main__":
    main()
