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
- `self.f()` inside a class whose body defines `f`;
- `self.f()` where `f` is inherited: the first class in the method resolution
  order (C3, over classes of the tree whose bases are all known) defining it;
- `x.f()` where `x` is bound once in the function, by `x = C(...)` or `x: C`
  ("typed variable"), or is a parameter annotated `x: C` and never rebound
  ("typed parameter"), with `C` a class of the tree named directly, by a
  from-import or as `m.C`; `f` found in `C`'s method resolution order;
- `self.x.f()` where `self.x = C(...)` is the class's only assignment to
  `self.x`, in its `__init__` ("self.attr").
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

from aircher_mem.engine import KnowledgeGraph


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


ClassKey = tuple[str, str]  # (path, class name)


@dataclass
class ClassInfo:
    methods: dict[str, int]
    bases: list[ClassKey | None]  # None: a base outside the tree or not resolvable


def linearize(key: ClassKey, classes: dict[ClassKey, ClassInfo], depth: int = 0) -> list[ClassKey] | None:
    """C3 linearization over the tree's classes; None when a base is unknown or C3 fails."""
    info = classes.get(key)
    if info is None or depth > 30 or any(b is None for b in info.bases):
        return None
    parents = [b for b in info.bases if b is not None]
    sequences: list[list[ClassKey]] = []
    for base in parents:
        line = linearize(base, classes, depth + 1)
        if line is None:
            return None
        sequences.append(line)
    sequences.append(list(parents))
    out = [key]
    while any(sequences):
        for seq in sequences:
            if not seq:
                continue
            head = seq[0]
            if not any(head in other[1:] for other in sequences):
                break
        else:
            return None
        out.append(head)
        sequences = [[c for c in seq if c != head] for seq in sequences]
    return out


def resolve_method(key: ClassKey, name: str, classes: dict[ClassKey, ClassInfo]) -> tuple[str, int] | None:
    order = linearize(key, classes)
    for k in order or []:
        if name in classes[k].methods:
            return (k[0], classes[k].methods[name])
    return None


def function_scope(func: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.AST]:
    """The nodes of a function's body, not those of functions or classes nested in it."""
    out: list[ast.AST] = []
    todo: list[ast.AST] = list(func.body)
    while todo:
        node = todo.pop()
        out.append(node)
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                todo.append(child)
    return out


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
    imports: dict[str, tuple[dict[str, tuple[str, str]], dict[str, str]]] = {}
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
        imports[rel] = (names, mods)
    top_classes = {(rel, n.name): n for rel, tree in trees.items() for n in tree.body if isinstance(n, ast.ClassDef)}

    def class_named(rel: str, expr: ast.expr) -> ClassKey | None:
        """The tree's top-level class an expression names in file `rel`, if any."""
        names, mods = imports[rel]
        if isinstance(expr, ast.Name):
            if (rel, expr.id) in top_classes:
                return (rel, expr.id)
            if expr.id in names and names[expr.id] in top_classes and expr.id not in tops[rel]:
                return names[expr.id]
        elif isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id in mods:
            key = (mods[expr.value.id], expr.attr)
            if key in top_classes:
                return key
        return None

    classes: dict[ClassKey, ClassInfo] = {}
    for (rel, name), node in top_classes.items():
        methods = {n.name: n.lineno for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        bases = [class_named(rel, b) for b in node.bases if not (isinstance(b, ast.Name) and b.id == "object")]
        classes[(rel, name)] = ClassInfo(methods, bases)
    sites: list[Site] = []
    for rel, tree in trees.items():
        names, mods = imports[rel]
        own = tops[rel]

        def visit(node: ast.AST, cls: ast.ClassDef | None) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.ClassDef):
                    visit(child, child)
                    continue
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    typed_sites(child, cls)
                if isinstance(child, ast.Call):
                    site = classify(child, cls)
                    if site is not None:
                        sites.append(site)
                visit(child, cls)

        def typed_sites(func: ast.FunctionDef | ast.AsyncFunctionDef, cls: ast.ClassDef | None) -> None:
            """Calls on a variable or parameter bound once to a known class, and on an
            attribute of `self` set once, in `__init__`, to one."""
            scope = function_scope(func)
            stores: Counter[str] = Counter()
            for node in scope:
                if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
                    stores[node.id] += 1
                elif isinstance(node, (ast.Global, ast.Nonlocal)):
                    for n in node.names:
                        stores[n] += 2
            args = func.args
            params = args.posonlyargs + args.args + args.kwonlyargs + [a for a in (args.vararg, args.kwarg) if a]
            known: dict[str, tuple[ClassKey, str]] = {}
            for a in params:
                stores[a.arg] += 1
                key = class_named(rel, a.annotation) if a.annotation is not None else None
                if key is not None and a not in (args.vararg, args.kwarg):
                    known[a.arg] = (key, "typed parameter")
            for node in scope:
                target, key = None, None
                if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.value, ast.Call):
                    target, key = node.targets[0], class_named(rel, node.value.func)
                elif isinstance(node, ast.AnnAssign):
                    target, key = node.target, class_named(rel, node.annotation)
                if isinstance(target, ast.Name) and key is not None:
                    known[target.id] = (key, "typed variable")
            attrs: dict[str, ClassKey] = {}
            if cls is not None:
                assigned: Counter[str] = Counter()
                for n in ast.walk(cls):
                    if isinstance(n, ast.Attribute) and isinstance(n.ctx, (ast.Store, ast.Del)):
                        if isinstance(n.value, ast.Name) and n.value.id == "self":
                            assigned[n.attr] += 1
                for m in cls.body:
                    if isinstance(m, ast.FunctionDef) and m.name == "__init__":
                        for n in ast.walk(m):
                            if (
                                isinstance(n, ast.Assign)
                                and len(n.targets) == 1
                                and isinstance(n.targets[0], ast.Attribute)
                                and isinstance(n.targets[0].value, ast.Name)
                                and n.targets[0].value.id == "self"
                                and isinstance(n.value, ast.Call)
                                and assigned[n.targets[0].attr] == 1
                            ):
                                key = class_named(rel, n.value.func)
                                if key is not None:
                                    attrs[n.targets[0].attr] = key
            for node in scope:
                if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                    continue
                value, line = node.func.value, node.func.end_lineno or node.func.lineno
                found: tuple[ClassKey, str] | None = None
                if isinstance(value, ast.Name) and value.id in known and stores[value.id] == 1:
                    found = known[value.id]
                elif (
                    isinstance(value, ast.Attribute)
                    and isinstance(value.value, ast.Name)
                    and value.value.id == "self"
                    and value.attr in attrs
                ):
                    found = (attrs[value.attr], "self.attr")
                if found is None:
                    continue
                target = resolve_method(found[0], node.func.attr, classes)
                if target is not None:
                    sites.append(Site(rel, line, node.func.attr, target, found[1]))

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
                    if (rel, cls.name) in classes and top_classes.get((rel, cls.name)) is cls:
                        target = resolve_method((rel, cls.name), func.attr, classes)
                        if target is not None:
                            return Site(rel, line, func.attr, target, "self.inherited")
            return None

        visit(tree, None)
    return sites


CATEGORIES = (
    "same file",
    "from-import",
    "module.attr",
    "self.method",
    "self.inherited",
    "typed variable",
    "typed parameter",
    "self.attr",
    "all",
)


def measure(root: Path, graph: KnowledgeGraph | None = None) -> dict[str, Counter[str]]:
    started = time.perf_counter()
    graph = graph or KnowledgeGraph.build(root)
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
    for bucket in CATEGORIES:
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
