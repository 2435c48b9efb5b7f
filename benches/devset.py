"""A dev set for fitting the code search's weights: find a standard-library function
from the first sentence of its (removed) docstring.

Built from CPython's standard library (``sysconfig.get_paths()["stdlib"]``):

1. Copy every ``.py`` file (not under ``test/``, ``site-packages/``, ``idlelib/`` or
   ``lib2to3/tests/``, none over 1 MB) to a work folder.
2. Candidates: the public functions and methods (every part of the qualified name
   public, not nested in a function) outside test folders, ``idlelib/`` and
   ``lib2to3/``, whose docstring's first sentence has at least 5 words, whose
   docstring sits on lines of its own, whose name is unique in its file, and whose
   first sentence is no other definition's (a copy elsewhere would give the answer away).
3. Sample ``--n`` of them (``--seed``); in the copy, delete their docstrings' lines
   (``...`` when the body would be empty), each file rewritten once.
4. Query = the first sentence. Target = the definition (path, name, lines in the
   modified copy) for ``level="definition"`` (Acc@1/5/10, MRR@10), its file for
   ``level="file"`` (Acc@1/5/10, MRR@10).

Baselines in the same run: ``bm25`` over whole files (one document per file = path +
text, ``re.findall(r"\\w+", text.lower())``, bm25s defaults k1 = 1.5, b = 0.75; see
localization.py) for the file level, and ``bm25-def`` (the same BM25 with one document
per function, method and class = path + qualified name + its source) for the
definition level.

The sample is split in two halves by a hash of ``path:qualname``: "fit" and "check";
both are reported. ``--override key=value`` sets ``[retrieval]`` keys; ``--grid``
evaluates every combination of a small grid on "fit", picks the best by file Acc@5
then definition MRR, and reports it (and the defaults) on "check". The index is built
once (``Memory.index()``) and reused: weights apply at query time, so each combination
only reopens the memory with another policy.

    python benches/devset.py [--n 500] [--seed 0] [--override key=value ...]
    python benches/devset.py --grid rrf_k=30,60 --grid lexical_weight=0.5,1.0
    python benches/devset.py --grid grid.json      # {"key": [v1, v2], ...}
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import itertools
import json
import random
import re
import shutil
import statistics
import sys
import sysconfig
import tempfile
import time
import warnings
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from localization import (
    Bm25,
    Ours,
    bm25_files,
    describe_hit,
    parse_overrides,
    parse_value,
    plain_tokens,
    python_files,
    search_code_available,
    static_tree_policy,
)

KS = (1, 5, 10)
MAX_BYTES = 1_000_000
COPY_EXCLUDED = ("test/", "site-packages/", "idlelib/", "lib2to3/tests/")
CANDIDATE_EXCLUDED_DIRS = {"test", "tests", "idle_test", "idlelib", "lib2to3", "site-packages"}
BUILD_VERSION = 1  # bump when the construction changes: a work folder of another version is rebuilt


@dataclass(frozen=True)
class Target:
    path: str
    qualname: str
    query: str
    line: int  # first line (decorators included) in the modified copy
    def_line: int  # the ``def`` line in the modified copy
    end_line: int
    half: str  # "fit" or "check"

    @property
    def name(self) -> str:
        return self.qualname.rsplit(".", 1)[-1]


# -- building ---------------------------------------------------------------------------


def first_sentence(doc: str) -> str:
    """The docstring's first sentence: its first paragraph, whitespace collapsed, cut
    after the first ``.``, ``!`` or ``?`` followed by a space."""
    paragraph = " ".join(doc.strip().split("\n\n", 1)[0].split())
    match = re.search(r"[.!?](?=\s)", paragraph)
    return paragraph[: match.end()] if match else paragraph


def definitions(tree: ast.Module) -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef, bool]]:
    """(qualname, node, in_function) for every def and class, outermost first."""

    def walk(body: list[ast.stmt], prefix: str, in_function: bool) -> Iterator[Any]:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                qual = f"{prefix}{node.name}"
                yield qual, node, in_function
                yield from walk(node.body, qual + ".", in_function or not isinstance(node, ast.ClassDef))
            else:  # defs under if/try/with at any level
                for field in ("body", "orelse", "finalbody", "handlers"):
                    inner = getattr(node, field, None)
                    if isinstance(inner, list):
                        yield from walk(
                            [n for n in inner if isinstance(n, ast.stmt | ast.ExceptHandler)], prefix, in_function
                        )

    yield from walk(tree.body, "", False)


def parse(source: bytes) -> ast.Module | None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return ast.parse(source)
        except (SyntaxError, ValueError):
            return None


def docstring_lines(node: ast.AST, lines: list[bytes]) -> tuple[int, int] | None:
    """The 1-based line range of the function's docstring when it has lines of its own
    (nothing before it on its first line, nothing but a comment after it on its last)."""
    body = getattr(node, "body", [])
    if not body or not isinstance(body[0], ast.Expr) or not isinstance(body[0].value, ast.Constant):
        return None
    if not isinstance(body[0].value.value, str):
        return None
    doc = body[0]
    assert doc.end_lineno is not None and doc.end_col_offset is not None
    if lines[doc.lineno - 1][: doc.col_offset].strip():
        return None
    tail = lines[doc.end_lineno - 1][doc.end_col_offset :].strip()
    if tail and not tail.startswith(b"#"):
        return None
    if len(body) > 1 and body[1].lineno <= doc.end_lineno:
        return None
    return doc.lineno, doc.end_lineno


def copied_files(stdlib: Path) -> list[str]:
    out = []
    for rel in python_files(stdlib):
        if any(rel.startswith(prefix) for prefix in COPY_EXCLUDED):
            continue
        if (stdlib / rel).stat().st_size > MAX_BYTES:
            continue
        out.append(rel)
    return out


def half_of(path: str, qualname: str) -> str:
    return "fit" if hashlib.sha1(f"{path}:{qualname}".encode()).digest()[0] % 2 == 0 else "check"


def build(stdlib: Path, work: Path, n: int, seed: int, out: Callable[[str], object] = print) -> list[Target]:
    """Copies the stdlib to ``work`` with the sampled docstrings removed; returns the
    targets (also written to ``work/devset.json``)."""
    start = time.perf_counter()
    files = copied_files(stdlib)
    sources = {rel: (stdlib / rel).read_bytes() for rel in files}
    trees = {rel: parse(src) for rel, src in sources.items()}
    sentences: Counter[str] = Counter()
    candidates: list[tuple[str, str, str, tuple[int, int]]] = []
    for rel, tree in trees.items():
        if tree is None:
            continue
        lines = sources[rel].splitlines(keepends=True)
        names = Counter(qual for qual, _, _ in definitions(tree))
        excluded = bool(set(rel.split("/")[:-1]) & CANDIDATE_EXCLUDED_DIRS)
        for qual, node, in_function in definitions(tree):
            doc = ast.get_docstring(node)
            if not doc:
                continue
            sentence = first_sentence(doc)
            sentences[sentence.lower()] += 1
            if excluded or in_function or isinstance(node, ast.ClassDef) or names[qual] > 1:
                continue
            if any(part.startswith("_") for part in qual.split(".")) or len(sentence.split()) < 5:
                continue
            span = docstring_lines(node, lines)
            if span is not None:
                candidates.append((rel, qual, sentence, span))
    unique = [c for c in candidates if sentences[c[2].lower()] == 1]
    unique.sort(key=lambda c: (c[0], c[3][0]))
    sample = random.Random(seed).sample(unique, min(n, len(unique)))
    out(
        f"{len(files)} files copied, {len(candidates)} candidate functions, {len(unique)} with a unique first "
        f"sentence, {len(sample)} sampled"
    )

    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    by_file: dict[str, list[tuple[str, str, tuple[int, int]]]] = {}
    for rel, qual, sentence, span in sample:
        by_file.setdefault(rel, []).append((qual, sentence, span))
    for rel in files:
        dest = work / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        source = sources[rel]
        if rel in by_file:
            source = remove_docstrings(source, [span for _, _, span in by_file[rel]])
        dest.write_bytes(source)

    targets = []
    for rel, items in sorted(by_file.items()):
        tree = parse((work / rel).read_bytes())
        if tree is None:
            raise RuntimeError(f"{rel} no longer parses after removing docstrings")
        nodes = {qual: node for qual, node, _ in definitions(tree)}
        for qual, sentence, _ in items:
            node = nodes[qual]
            assert not isinstance(node, ast.ClassDef) and node.end_lineno is not None
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            targets.append(Target(rel, qual, sentence, first, node.lineno, node.end_lineno, half_of(rel, qual)))
    targets.sort(key=lambda t: (t.path, t.line))
    out(f"built {work} in {time.perf_counter() - start:.1f} s")
    return targets


def remove_docstrings(source: bytes, spans: Sequence[tuple[int, int]]) -> bytes:
    """``source`` without the lines of each span; a body left empty gets ``...``."""
    lines = source.splitlines(keepends=True)
    tree = parse(source)
    assert tree is not None
    bodies = {}
    for _, node, _ in definitions(tree):
        body = getattr(node, "body", [])
        if body and isinstance(body[0], ast.Expr):
            bodies[body[0].lineno] = len(body)
    for first, last in sorted(spans, reverse=True):
        if bodies.get(first, 0) == 1:
            indent = lines[first - 1][: len(lines[first - 1]) - len(lines[first - 1].lstrip())]
            ending = b"\r\n" if lines[last - 1].endswith(b"\r\n") else b"\n"
            lines[first - 1 : last] = [indent + b"..." + ending]
        else:
            del lines[first - 1 : last]
    return b"".join(lines)


def load_or_build(stdlib: Path, work: Path, n: int, seed: int, rebuild: bool) -> list[Target]:
    manifest = work / "devset.json"
    key = {"version": BUILD_VERSION, "stdlib": str(stdlib), "n": n, "seed": seed}
    if manifest.exists() and not rebuild:
        saved = json.loads(manifest.read_text())
        if saved.get("key") == key:
            print(f"reusing {work} ({len(saved['targets'])} targets)")
            return [Target(**t) for t in saved["targets"]]
    targets = build(stdlib, work, n, seed)
    manifest.write_text(json.dumps({"key": key, "targets": [asdict(t) for t in targets]}, indent=1))
    return targets


# -- evaluating -------------------------------------------------------------------------


def def_matches(hit: Any, target: Target) -> bool:
    """A definition hit is the target when it is in the target's file, named like it
    (qualified or not) and its line falls within the target's lines."""
    if hit.path != target.path or hit.line is None:
        return False
    name = str(hit.name or "")
    if name != target.qualname and name.rsplit(".", 1)[-1] != target.name:
        return False
    return target.line <= hit.line <= target.end_line


def first_rank(flags: Sequence[bool]) -> int | None:
    return next((i + 1 for i, ok in enumerate(flags) if ok), None)


def metrics(ranks: Sequence[int | None]) -> dict[str, float]:
    n = len(ranks) or 1
    out = {f"acc@{k}": sum(1 for r in ranks if r is not None and r <= k) / n for k in KS}
    out["mrr@10"] = sum(1 / r for r in ranks if r is not None and r <= 10) / n
    return out


def evaluate_ours(ours: Ours, targets: Sequence[Target], k: int = 10) -> dict[str, Any]:
    file_ranks, def_ranks, rows, seconds = [], [], [], []
    for t in targets:
        start = time.perf_counter()
        files = ours.search(t.query, k, "file")
        defs = ours.search(t.query, k, "definition")
        seconds.append((time.perf_counter() - start) / 2)
        file_rank = first_rank([h.path == t.path for h in files.hits])
        def_rank = first_rank([def_matches(h, t) for h in defs.hits])
        file_ranks.append(file_rank)
        def_ranks.append(def_rank)
        rows.append(
            {
                "target": f"{t.path}:{t.qualname}",
                "file_rank": file_rank,
                "def_rank": def_rank,
                "files": [h.path for h in files.hits[:3]],
                "defs": [describe_hit(h) for h in defs.hits[:3]],
                "reason": (files.reason, defs.reason),
            }
        )
    return {
        "file": metrics(file_ranks),
        "definition": metrics(def_ranks),
        "mean_query_ms": 1000 * statistics.fmean(seconds) if seconds else 0.0,
        "rows": rows,
    }


def evaluate_bm25(files: Bm25, defs: Bm25 | None, targets: Sequence[Target], k: int = 10) -> dict[str, Any]:
    file_ranks, def_ranks, rows, seconds = [], [], [], []
    for t in targets:
        start = time.perf_counter()
        ranked = files.rank(t.query, k)
        seconds.append(time.perf_counter() - start)
        file_ranks.append(first_rank([p == t.path for p in ranked]))
        row: dict[str, Any] = {"target": f"{t.path}:{t.qualname}", "file_rank": file_ranks[-1], "files": ranked[:3]}
        if defs is not None:
            top = defs.rank(t.query, k)
            def_ranks.append(first_rank([p == t.path and t.line <= line <= t.end_line for p, _, line in top]))
            row["def_rank"] = def_ranks[-1]
            row["defs"] = [f"{p}:{line} {q}" for p, q, line in top[:3]]
        rows.append(row)
    out: dict[str, Any] = {"file": metrics(file_ranks), "rows": rows}
    out["mean_query_ms"] = 1000 * statistics.fmean(seconds) if seconds else 0.0
    if defs is not None:
        out["definition"] = metrics(def_ranks)
    return out


def bm25_definitions(work: Path, files: Sequence[str]) -> Bm25:
    """One document per function, method and class: path + qualified name + source (a
    class's without its methods and nested classes, which have documents of their own)."""
    docs = []
    for rel in files:
        source = (work / rel).read_bytes()
        tree = parse(source)
        if tree is None:
            continue
        lines = source.decode("utf-8", errors="replace").splitlines()
        for qual, node, _ in definitions(tree):
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            keep = list(range(first, (node.end_lineno or node.lineno) + 1))
            if isinstance(node, ast.ClassDef):  # the class without its methods and nested classes
                inner = {
                    i
                    for child in node.body
                    if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                    for i in range(
                        min([child.lineno] + [d.lineno for d in child.decorator_list]),
                        (child.end_lineno or child.lineno) + 1,
                    )
                }
                keep = [i for i in keep if i not in inner]
            text = "\n".join(lines[i - 1] for i in keep if i <= len(lines))
            docs.append(((rel, qual, node.lineno), f"{rel} {qual}\n{text}"))
    return Bm25(docs, plain_tokens)


def split(targets: Sequence[Target]) -> dict[str, list[Target]]:
    return {half: [t for t in targets if t.half == half] for half in ("fit", "check")}


def row(label: str, result: Mapping[str, Any], n: int) -> str:
    def cells(level: str) -> str:
        m = result.get(level)
        if m is None:
            return " | ".join(["–"] * 4)
        return " | ".join([*(f"{m[f'acc@{k}']:.1%}" for k in KS), f"{m['mrr@10']:.3f}"])

    return f"| {label} | {n} | {cells('file')} | {cells('definition')} | {result['mean_query_ms']:.1f} ms |"


HEADER = (
    "| ranker | queries | file Acc@1 | file Acc@5 | file Acc@10 | file MRR | def Acc@1 | def Acc@5 | def Acc@10 "
    "| def MRR | mean query |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
)


def parse_grid(items: Sequence[str]) -> dict[str, list[Any]]:
    grid: dict[str, list[Any]] = {}
    for item in items:
        if Path(item).is_file():
            loaded = json.loads(Path(item).read_text())
            if not isinstance(loaded, dict):
                raise SystemExit(f"{item}: a grid file holds an object {{key: [values]}}")
            grid.update({k: v if isinstance(v, list) else [v] for k, v in loaded.items()})
            continue
        key, sep, values = item.partition("=")
        if not sep:
            raise SystemExit(f"--grid wants key=v1,v2,... or a JSON file, got {item!r}")
        grid[key.strip()] = [parse_value(v.strip()) for v in values.split(",") if v.strip()]
    return grid


def objective(result: Mapping[str, Any]) -> tuple[float, float]:
    return result["file"]["acc@5"], result["definition"]["mrr@10"]


def show_misses(result: Mapping[str, Any], targets: Sequence[Target], count: int) -> None:
    shown = 0
    for t, r in zip(targets, result["rows"]):
        if shown >= count:
            break
        if r.get("def_rank") is None:
            shown += 1
            print(f"\nmissed: {t.path}:{t.def_line} {t.qualname}\n  query: {t.query}")
            print(f"  file rank {r['file_rank']}; top files {r['files']}")
            for d in r.get("defs", []):
                print(f"    {d}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--stdlib", type=Path, default=Path(sysconfig.get_paths()["stdlib"]))
    parser.add_argument("--n", type=int, default=500, help="functions sampled (default 500)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--work",
        type=Path,
        help="the modified copy (default <tmp>/aircher-bench/devset-n<N>-s<SEED>); reused when it matches",
    )
    parser.add_argument("--rebuild", action="store_true", help="rebuild the copy (and so the index)")
    parser.add_argument("--override", action="append", default=[], metavar="KEY=VALUE", help="[retrieval] key")
    parser.add_argument(
        "--grid", action="append", default=[], metavar="KEY=V1,V2|FILE.json", help="grid search on the fit half"
    )
    parser.add_argument("--no-bm25", action="store_true", help="skip the BM25 baselines")
    parser.add_argument("--misses", type=int, default=0, metavar="N", help="print N definition-level misses of ours")
    parser.add_argument("--json", type=Path, metavar="OUT")
    args = parser.parse_args(argv)

    work = args.work or Path(tempfile.gettempdir()) / "aircher-bench" / f"devset-n{args.n}-s{args.seed}"
    if not args.stdlib.is_dir():
        print(f"no standard library at {args.stdlib}; pass --stdlib", file=sys.stderr)
        return 2
    timings: dict[str, float] = {}
    start = time.perf_counter()
    targets = load_or_build(args.stdlib, work, args.n, args.seed, args.rebuild)
    timings["build_devset"] = time.perf_counter() - start
    halves = split(targets)
    print(f"{len(targets)} targets: fit {len(halves['fit'])}, check {len(halves['check'])}")
    report: dict[str, Any] = {"work": str(work), "n": len(targets), "timings": timings, "results": {}}
    lines = [HEADER]

    if not args.no_bm25:
        start = time.perf_counter()
        files = bm25_files(work, plain_tokens)
        defs = bm25_definitions(work, files.keys)
        timings["bm25_index"] = time.perf_counter() - start
        print(f"bm25: {len(files.keys)} files, {len(defs.keys)} definitions, indexed in {timings['bm25_index']:.1f} s")
        for half, items in halves.items():
            result = evaluate_bm25(files, defs, items)
            report["results"][f"bm25/{half}"] = result
            lines.append(row(f"bm25 (files) / bm25-def, {half}", result, len(items)))

    if not search_code_available():
        print("note: the installed aircher_mem has no Memory.search_code; only the BM25 baselines ran", file=sys.stderr)
    else:
        overrides = parse_overrides(args.override)
        start = time.perf_counter()
        ours = Ours(work, static_tree_policy(work, overrides))
        index = ours.index()
        ours.close()
        timings["ours_index"] = time.perf_counter() - start
        took = timings["ours_index"]
        print(f"ours: index {index.files} files ({index.parsed} parsed, full={index.full}) in {took:.1f} s")
        from aircher_mem.graph import tracked_files

        indexed = set(tracked_files(work)[0])
        unindexed = sorted({t.path for t in targets} - indexed)
        report["targets_in_unindexed_files"] = unindexed
        if unindexed:
            print(f"note: targets in files the graph does not index (ours cannot find them): {unindexed}")
        store = work / ".aircher"
        stamps = {p: p.stat().st_mtime_ns for p in store.iterdir() if p.is_file() and p.suffix != ".toml"}

        def evaluate(values: Mapping[str, Any], items: Sequence[Target]) -> dict[str, Any]:
            ours = Ours(work, static_tree_policy(work, values))
            try:
                return evaluate_ours(ours, items)
            finally:
                ours.close()

        grid = parse_grid(args.grid)
        if grid:
            start = time.perf_counter()
            tried = []
            for combo in itertools.product(*grid.values()):
                values = {**overrides, **dict(zip(grid, combo))}
                result = evaluate(values, halves["fit"])
                tried.append((objective(result), values, result))
                f, d = objective(result)
                print(f"  fit: file Acc@5 {f:.1%}  def MRR {d:.3f}  {values}")
            tried.sort(key=lambda t: t[0], reverse=True)
            best = tried[0][1]
            timings["grid"] = time.perf_counter() - start
            report["grid"] = [{"values": v, "file": r["file"], "definition": r["definition"]} for _, v, r in tried]
            report["best"] = best
            print(f"best on fit: {best}")
            lines.append(row(f"ours best {best}, fit", tried[0][2], len(halves["fit"])))
            for label, values in ((str(overrides or "defaults"), overrides), (f"best {best}", best)):
                result = evaluate(values, halves["check"])
                report["results"][f"ours {label}/check"] = result
                lines.append(row(f"ours {label}, check", result, len(halves["check"])))
        else:
            start = time.perf_counter()
            label = f"ours {overrides}" if overrides else "ours"
            for half, items in halves.items():
                result = evaluate(overrides, items)
                report["results"][f"{label}/{half}"] = result
                lines.append(row(f"{label}, {half}", result, len(items)))
                if args.misses and half == "fit":
                    show_misses(result, items, args.misses)
            timings["ours_queries"] = time.perf_counter() - start
        changed = [p.name for p, t in stamps.items() if not p.exists() or p.stat().st_mtime_ns != t]
        if changed:
            print(f"WARNING: querying rewrote the index files {changed} (it should only read them)", file=sys.stderr)
        report["index_rewritten_by_queries"] = changed

    print("\n" + "\n".join(lines))
    print("\ntimings (s): " + ", ".join(f"{k} {v:.1f}" for k, v in timings.items()))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
