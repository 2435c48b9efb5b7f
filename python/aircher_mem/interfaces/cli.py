"""``aircher-mem``: the project's memory from the command line.

The first job on any repository::

    aircher-mem index .                      # build the code graph (.aircher/ in the repo)
    aircher-mem context "why does login fail for admins?" --show

Tables for people, ``--json`` for scripts (the same JSON the MCP tools return).
Errors are one line on stderr and an exit code: 1 an error, 2 a bad argument or
path, 3 not found (no store, not indexed, no such symbol or task), 4 the store is
open in another process, 130 interrupted. Every command is one call to a
:class:`aircher_mem.Memory` verb.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, TextIO

from .._core import __version__
from ..config import CONFIG_FILE
from ..errors import AircherError, StoreNotFoundError
from ..memory import REFERENCE_KINDS, TASK_ACTIONS, Memory, find_root
from ..results import (
    Calls,
    CallSite,
    CodeResult,
    CodeSearch,
    CoEdits,
    ContextPreview,
    Dependencies,
    Doctor,
    FileHistory,
    FileOutline,
    IndexReport,
    InitResult,
    Neighbourhood,
    Patterns,
    ReferenceList,
    Stats,
    Symbols,
    Tasks,
    TaskStatus,
)
from . import wire

__all__ = ["main", "build_parser"]


class Output:
    """Where a command writes: JSON (``--json``) or text and tables."""

    def __init__(self, as_json: bool, out: TextIO) -> None:
        self.as_json = as_json
        self.out = out

    def json(self, value: Any) -> None:
        self.out.write(wire.dumps(value) + "\n")

    def line(self, text: str = "") -> None:
        try:
            self.out.write(text + "\n")
        except UnicodeEncodeError:  # a lone surrogate (from a file name or an argument): show it escaped
            self.out.write(text.encode("utf-8", "backslashreplace").decode("utf-8") + "\n")

    def table(self, headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
        cells = [[str(h) for h in headers]] + [["" if v is None else str(v) for v in row] for row in rows]
        widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
        for n, row in enumerate(cells):
            self.line("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())
            if n == 0:
                self.line("  ".join("-" * w for w in widths))


def _when(ts: float | None) -> str:
    return "" if ts is None else datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M:%S")


def _short(text: str | None, width: int = 60) -> str:
    one = " ".join((text or "").split())
    return one if len(one) <= width else one[: width - 3] + "..."


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{lang} {n}" for lang, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


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
        self.stream.write(
            f"\rindexing [{'#' * filled}{'.' * (width - filled)}] {done}/{total} files, {rate:,.0f} files/s "
        )
        self.stream.flush()
        self.drawn = True

    def finish(self) -> None:
        if self.drawn:
            self.stream.write("\n")
            self.stream.flush()


def _open(args: argparse.Namespace) -> Memory:
    return Memory.open(Path(args.root) if args.root is not None else find_root(), create=False)


# -- renderers: one per result type, text only (JSON is wire's) ------------------------------


def show_init(r: InitResult, out: Output) -> None:
    out.line(
        f"{'created' if r.created else 'using existing'} store {r.store} "
        f"(config {CONFIG_FILE}); next: aircher-mem index {r.root}"
    )


def show_index(r: IndexReport, out: Output) -> None:
    how = f"full build ({r.reason})" if r.full else "incremental"
    out.line(f"indexed {r.root}: {r.files} files, {how}")
    out.line(
        f"parsed {r.parsed} files in {r.seconds:.2f} s ({r.files_per_second:,.0f} files/s); "
        f"{len(r.added)} added, {len(r.updated)} updated, {len(r.removed)} removed"
    )
    if r.unsupported:
        out.line(f"not parsed (language not supported): {_counts(r.unsupported)} files")
    if r.dense:
        out.line(r.dense)
    for label, remarks in (("skipped", r.skipped), ("warnings", r.warnings)):
        if remarks:
            listed = "; ".join(f"{p or '?'} ({why})" for p, why in remarks[:5])
            out.line(f"{label} {len(remarks)}: {listed}" + (" ..." if len(remarks) > 5 else ""))


def show_symbols(r: Symbols, out: Output) -> None:
    if not r.symbols:
        out.line(f"no definition matches {r.query!r} ({r.match})")
        return
    out.table(
        ["kind", "name", "where", "signature"],
        [(s.kind, s.qualified, f"{s.path}:{s.line}-{s.end_line}", _short(s.signature, 70)) for s in r.symbols],
    )


def _site(c: CallSite, kind: str) -> tuple[str, str, str, int, str]:
    """A table row for one end of a call or reference."""
    return (kind, c.symbol.qualified, f"{c.symbol.path}:{c.symbol.line}", c.call_line, f"{c.confidence:.2f}")


def show_calls(r: Calls, out: Output) -> None:
    where = ", ".join(f"{s.qualified} ({s.path}:{s.line})" for s in r.definitions)
    if not r.calls:
        out.line(
            f"{r.name!r} is defined ({where}) but "
            + ("nothing in the graph calls it" if r.direction == "callers" else "calls nothing in the graph")
        )
        return
    out.line(f"{r.direction} of {r.name!r}, defined at {where}:")
    out.table(["kind", "name", "defined at", "call line", "confidence"], [_site(c, c.symbol.kind) for c in r.calls])


def show_references(r: ReferenceList, out: Output) -> None:
    if not r.references:
        out.line(f"nothing in the graph refers to {r.name!r}" + (f" ({r.kind})" if r.kind else ""))
        return
    out.table(["kind", "from", "defined at", "line", "confidence"], [_site(c, c.kind) for c in r.references])


def show_neighbourhood(r: Neighbourhood, out: Output) -> None:
    out.table(
        ["hops", "kind", "name", "where"],
        [(n.distance, n.symbol.kind, n.symbol.qualified, f"{n.symbol.path}:{n.symbol.line}") for n in r.symbols],
    )


def show_outline(r: FileOutline, out: Output) -> None:
    if not r.symbols:
        out.line(f"{r.path} defines nothing the graph knows of")
        return
    out.table(
        ["line", "kind", "name", "signature"],
        [(f"{s.line}-{s.end_line}", s.kind, s.qualified, _short(s.signature, 70)) for s in r.symbols],
    )


def show_dependencies(r: Dependencies, out: Output) -> None:
    out.line(f"{r.path} imports {len(r.dependencies)} file(s) of the project:")
    for dep in r.dependencies:
        out.line(f"  {dep}")
    out.line(f"{r.path} is imported by {len(r.dependents)} file(s):")
    for dep in r.dependents:
        out.line(f"  {dep}")


def show_code(r: CodeResult, out: Output) -> None:
    out.line(f"{len(r.snippets)} snippet(s), {r.tokens:,} of {r.max_tokens:,} tokens, for {_short(r.query)!r}")
    for c in r.snippets:
        out.line(
            f"\n--- {c.file_path}:{c.line_range[0]}-{c.line_range[1]} "
            f"(relevance {c.relevance:.2f}, {c.tokens} tokens) ---\n{c.content}"
        )


def show_search(r: CodeSearch, out: Output) -> None:
    if not r.hits:
        out.line(f"nothing found for {_short(r.query)!r}: {r.reason}")
    for n, h in enumerate(r.hits, 1):
        why = ", ".join(f"{c.channel} {c.normalized:.2f}" for c in h.channels)
        words = f"; words: {', '.join(h.matched)}" if h.matched else ""
        test = " [test]" if h.test else ""
        if h.name is None:
            best = ", ".join(f"{v.qualified}:{v.line}" for v in h.via)
            out.line(f"{n:>2}. {h.path}{test}  score {h.score:.3f} ({why}{words})")
            if best:
                out.line(f"    best: {best}")
        else:
            name = f"{h.scope}.{h.name}" if h.scope else h.name
            where = f"{h.path}:{h.line}-{h.end_line}{test}"
            out.line(f"{n:>2}. {h.kind} {name}  {where}  score {h.score:.3f} ({why}{words})")
            if h.code is not None:
                out.line(h.code + "\n")
    if r.mentioned:
        out.line(f"files the text names: {', '.join(r.mentioned)}")
    for note in r.notes:
        out.line(f"note: {note}")


def show_history(r: FileHistory, out: Output) -> None:
    if not r.interactions and not r.failed_tool_runs:
        out.line(f"no recorded interactions with {r.path}")
        return
    if r.interactions:
        out.table(
            ["when", "operation", "lines", "ok", "task", "summary"],
            [
                (
                    _when(f.timestamp),
                    f.operation,
                    f"{f.line_range[0]}-{f.line_range[1]}" if f.line_range else "",
                    "yes" if f.success else "no",
                    f.task_id,
                    _short(f.changes_summary or f.context),
                )
                for f in r.interactions
            ],
        )
    if r.failed_tool_runs:
        out.line(f"failed tool runs on {r.path}:")
        out.table(
            ["when", "tool", "task", "error"],
            [(_when(t.timestamp), t.tool_name, t.task_id, _short(t.error_message)) for t in r.failed_tool_runs],
        )


def show_co_edits(r: CoEdits, out: Output) -> None:
    if not r.pairs:
        out.line(f"no files edited together at least {r.min_count} times" + (f" with {r.path}" if r.path else ""))
        return
    out.table(["file", "file", "times"], [(p.file1, p.file2, p.count) for p in r.pairs])


def show_tasks(r: Tasks, out: Output) -> None:
    if not r.tasks:
        out.line(f"no past task shares a word with {r.query!r}" if r.query else "no open tasks")
    elif r.query:
        out.table(
            ["task", "status", "score", "description", "outcome"],
            [
                (t.task_id, t.status, f"{t.score or 0:.2f}", _short(t.description, 40), _short(t.outcome, 40))
                for t in r.tasks
            ],
        )
    else:
        out.table(
            ["task", "status", "started", "description", "files"],
            [
                (t.task_id, t.status, _when(t.started_at), _short(t.description, 50), len(t.files_touched))
                for t in r.tasks
            ],
        )


def show_task(r: TaskStatus, out: Output) -> None:
    out.line(f"task {r.task_id}: {r.status}")


def show_patterns(r: Patterns, out: Output) -> None:
    if not r.patterns:
        out.line("no learned patterns yet")
        return
    out.table(
        ["type", "seen", "confidence", "pattern"],
        [
            (
                p.pattern_type,
                p.observed_count,
                f"{p.confidence:.2f}",
                _short(json.dumps(p.data, separators=(",", ":")), 80),
            )
            for p in r.patterns
        ],
    )


def show_stats(r: Stats, out: Output) -> None:
    out.line(f"project   {r.root}")
    g = r.graph
    out.line(
        "graph     not indexed (run aircher-mem index)"
        if g is None
        else f"graph     {g.files} files, {g.nodes} nodes, {g.edges} edges, {g.skipped} skipped, {g.warnings} warnings"
    )
    out.line(f"languages parsed: {', '.join(r.supported_languages)}")
    if g is not None and g.unsupported:
        out.line(f"          not parsed: {_counts(g.unsupported)} files")
    if r.episodic is None:
        out.line(f"episodic  busy: {r.store_busy}")
    else:
        out.line("episodic  " + ", ".join(f"{k} {v}" for k, v in r.episodic.items()))
    if r.longterm is not None:
        out.line("longterm  " + ", ".join(f"{k} {v}" for k, v in r.longterm.items()))
    if r.tools_7d:
        out.line("tools, last 7 days:")
        out.table(
            ["tool", "calls", "success", "mean ms"],
            [
                (
                    t.tool_name,
                    t.total,
                    f"{t.success_rate:.0%}",
                    "" if t.avg_duration_ms is None else f"{t.avg_duration_ms:.0f}",
                )
                for t in r.tools_7d
            ],
        )


def show_context(r: ContextPreview, out: Output, *, show: bool = False) -> None:
    out.line(
        f"context for {_short(r.message, 60)!r}: {r.total_tokens:,} tokens in {len(r.items)} items "
        f"(budget {r.max_tokens:,}, prune above {r.threshold:,}, code up to {r.code_tokens:,})"
    )
    out.table(
        ["#", "role", "type", "tokens", "score", "what"],
        [(n, k.role, k.type, k.tokens, f"{k.score:.3f}", k.source) for n, k in enumerate(r.items, 1)],
    )
    if r.pruned:
        out.line(f"pruned {len(r.pruned)} items, {r.pruned_tokens:,} tokens:")
        out.table(
            ["type", "tokens", "score", "what"], [(p.type, p.tokens, f"{p.score:.3f}", p.source) for p in r.pruned]
        )
    else:
        out.line("pruned nothing")
    for note in r.notes:
        out.line(f"note: {note}")
    if show:
        for k in r.items:
            out.line(f"\n--- {k.role} ---\n{k.content}")
    else:
        out.line("(--show prints the messages themselves)")


def show_doctor(r: Doctor, out: Output) -> None:
    out.table(["check", "status", "detail"], [(c.check, c.status, c.detail) for c in r.checks])


# -- commands: arguments in, one verb, the result out ----------------------------------------

Command = Callable[[argparse.Namespace], Any]


def cmd_init(args: argparse.Namespace) -> InitResult:
    with Memory.open(args.path) as memory:
        return memory.init()


def cmd_index(args: argparse.Namespace) -> IndexReport:
    progress = ProgressLine(sys.stderr) if not args.quiet else None
    with Memory.open(args.path) as memory:
        try:
            return memory.index(full=args.full, progress=progress)
        finally:
            if progress is not None:
                progress.finish()


def _with_memory(verb: Callable[[Memory, argparse.Namespace], Any]) -> Command:
    def run(args: argparse.Namespace) -> Any:
        with _open(args) as memory:
            return verb(memory, args)

    return run


COMMANDS: dict[str, Command] = {
    "init": cmd_init,
    "index": cmd_index,
    "symbol": _with_memory(lambda m, a: m.symbol(a.name, prefix=a.prefix, fuzzy=a.fuzzy)),
    "callers": _with_memory(lambda m, a: m.callers(a.name)),
    "callees": _with_memory(lambda m, a: m.callees(a.name)),
    "outline": _with_memory(lambda m, a: m.outline(a.path)),
    "refs": _with_memory(lambda m, a: m.references(a.name, kind=a.kind)),
    "near": _with_memory(lambda m, a: m.neighbourhood(a.name, hops=a.hops)),
    "deps": _with_memory(lambda m, a: m.dependencies(a.path)),
    "code": _with_memory(lambda m, a: m.relevant_code(a.query, max_tokens=a.max_tokens)),
    "search": _with_memory(
        lambda m, a: m.search_code(
            a.text, a.k, level="file" if a.files else "definition", focus_files=a.focus or (), code=not a.no_code
        )
    ),
    "history": _with_memory(lambda m, a: m.file_history(a.file, limit=a.limit)),
    "co-edits": _with_memory(lambda m, a: m.co_edited_files(a.path, min_count=a.min_count)),
    "tasks": _with_memory(lambda m, a: m.tasks(a.query, limit=a.limit)),
    "task": _with_memory(lambda m, a: m.task(a.action, a.task_id, description=a.description, outcome=a.outcome)),
    "patterns": _with_memory(lambda m, a: m.patterns(a.type, min_count=a.min_count)),
    "stats": _with_memory(lambda m, a: m.stats()),
    "context": _with_memory(lambda m, a: m.preview_context(a.message, max_tokens=a.budget, code_tokens=a.code_tokens)),
    "doctor": lambda a: Memory.doctor(a.root, deep=a.deep),
}

RENDER: dict[type, Callable[[Any, Output], None]] = {
    InitResult: show_init,
    IndexReport: show_index,
    Symbols: show_symbols,
    Calls: show_calls,
    FileOutline: show_outline,
    ReferenceList: show_references,
    Neighbourhood: show_neighbourhood,
    Dependencies: show_dependencies,
    CodeResult: show_code,
    CodeSearch: show_search,
    FileHistory: show_history,
    CoEdits: show_co_edits,
    Tasks: show_tasks,
    TaskStatus: show_task,
    Patterns: show_patterns,
    Stats: show_stats,
    Doctor: show_doctor,
}


def cmd_mcp(args: argparse.Namespace) -> None:
    from .mcp import serve  # imports the MCP SDK only when serving

    try:
        root = Path(args.root) if args.root is not None else find_root()
    except StoreNotFoundError:
        root = Path.cwd()
    serve(root, index=False if args.no_index else None, refresh_seconds=args.refresh_seconds)


# -- parsing and dispatch ----------------------------------------------------------------------


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be > 0, got {value}")
    return value


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 <= value <= 86_400:
        raise argparse.ArgumentTypeError(f"must be from 0 to 86400 seconds, got {text}")
    return value


def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--json", action="store_true", help="print JSON (the MCP tools' shapes) instead of tables")
    rooted = argparse.ArgumentParser(add_help=False, parents=[common])
    rooted.add_argument(
        "--root", metavar="DIR", help="the project (default: the nearest folder with .aircher/ from here upward)"
    )
    root_only = argparse.ArgumentParser(add_help=False)
    root_only.add_argument(
        "--root",
        metavar="DIR",
        help="the project (default: the nearest folder with .aircher/ from here upward, else the current one)",
    )

    parser = argparse.ArgumentParser(
        prog="aircher-mem",
        description="Memory for LLM coding agents: code graph, episodic memory, context.",
        epilog='start with: aircher-mem index .  then: aircher-mem context "<what you are about to do>" --show; '
        "exit codes: 1 error, 2 bad argument or path, 3 not found (no store, not indexed, no such symbol), "
        "4 store locked",
    )
    parser.add_argument("--version", action="version", version=f"aircher-mem {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, help: str, parent: argparse.ArgumentParser = rooted) -> argparse.ArgumentParser:
        return sub.add_parser(name, parents=[parent], help=help, description=help)

    p = command("init", "create the store (.aircher/) in a project", common)
    p.add_argument("path", nargs="?", default=".", help="the project folder (default: .)")
    p = command("index", "build the code graph, or refresh the files changed since the last index", common)
    p.add_argument("path", nargs="?", default=".", help="the project folder (default: .)")
    p.add_argument("--full", action="store_true", help="rebuild everything")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p = command("symbol", "where a function, class or constant is defined (NAME, Class.method or pkg.module.NAME)")
    p.add_argument("name")
    match = p.add_mutually_exclusive_group()
    match.add_argument("--prefix", action="store_true", help="every definition whose name starts with NAME")
    match.add_argument(
        "--fuzzy", action="store_true", help="names holding NAME's letters in order, any case, best first"
    )
    p = command("callers", "the functions that call NAME (or Class.method)")
    p.add_argument("name")
    p = command("callees", "the functions NAME (or Class.method) calls")
    p.add_argument("name")
    p = command("refs", "every reference to NAME: calls, base classes, type annotations, imports, uses")
    p.add_argument("name")
    p.add_argument("--kind", choices=REFERENCE_KINDS)
    p = command("near", "the definitions within --hops edges of NAME, nearest first")
    p.add_argument("name")
    p.add_argument("--hops", type=_positive, default=1)
    p = command("outline", "what a source file defines, in line order")
    p.add_argument("path")
    p = command("deps", "the project files PATH imports, and those importing it")
    p.add_argument("path")
    p = command("code", "the code most relevant to QUERY, within a token budget")
    p.add_argument("query")
    p.add_argument("--max-tokens", type=_positive, help="token budget (default: the policy's code budget)")
    p = command("search", "find code by meaning: the definitions (or --files) answering TEXT, best first, explained")
    p.add_argument("text")
    p.add_argument("-k", type=_positive, default=10, help="how many hits (default: 10)")
    p.add_argument("--files", action="store_true", help="rank files instead of definitions")
    p.add_argument("--focus", action="append", metavar="PATH", help="a file you are working on (repeatable)")
    p.add_argument("--no-code", action="store_true", help="do not print each definition's code")
    p = command("history", "what the agent did with a file, newest first, and failed tool runs on it")
    p.add_argument("file")
    p.add_argument("--limit", type=_positive, default=10)
    p = command("co-edits", "files edited together in earlier sessions")
    p.add_argument("path", nargs="?", help="only pairs with this file")
    p.add_argument("--min-count", type=_positive, help="edited together at least this often (default: the policy's)")
    p = command("tasks", "open tasks, or past tasks similar to QUERY")
    p.add_argument("query", nargs="?")
    p.add_argument("--limit", type=_positive, default=10)
    p = command("task", "start, pause, resume, complete or fail a task")
    p.add_argument("action", choices=TASK_ACTIONS)
    p.add_argument("task_id")
    p.add_argument("--description", help="for start: what the task is")
    p.add_argument("--outcome", help="for complete or fail: what came of it")
    p = command("patterns", "learned patterns: files edited together, errors and their fixes")
    p.add_argument("--type", choices=["co-edit", "error-fix"])
    p.add_argument("--min-count", type=_positive, default=1)
    command("stats", "sizes of the graph and the episodic store, languages, tool success rates")
    p = command("context", "run prepare_context on MESSAGE: what goes into the window, what is pruned, tokens per item")
    p.add_argument("message")
    p.add_argument(
        "--budget",
        type=_positive,
        help="the window's max_tokens (default: the policy's); relevant code gets "
        "[retrieval] code_share of it, at most max_code_tokens",
    )
    p.add_argument("--code-tokens", type=_positive, help="token budget for relevant code (overrides the share)")
    p.add_argument("--show", action="store_true", help="print the messages too")
    p = command("mcp", "serve the memory to an agent over MCP (stdio)", root_only)
    p.add_argument("--no-index", action="store_true", help="do not refresh the graph at start")
    p.add_argument(
        "--refresh-seconds",
        type=_seconds,
        help="look for changed files before a graph query at most this often (default: [server] refresh_seconds, 2)",
    )
    p = command("doctor", "check the store, the versions, the encodings and the languages")
    p.add_argument("--deep", action="store_true", help="also compare the graph with a fresh build (slow)")
    return parser


def _say(text: str) -> None:
    """One line on stderr; what UTF-8 cannot carry (a lone surrogate) is escaped."""
    sys.stderr.write(text.encode("utf-8", "backslashreplace").decode("utf-8") + "\n")


def _quiet_broken_pipe() -> int:
    """The reader went away (``aircher-mem ... | head``): stop quietly, as Unix tools do."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    return 141  # 128 + SIGPIPE


def main(argv: Sequence[str] | None = None, *, stdout: TextIO | None = None) -> int:
    """Runs one command; returns the exit code (the console script exits with it)."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version, usage errors: argparse has printed
        return int(exc.code) if isinstance(exc.code, int) else wire.EXIT_USAGE
    out = Output(getattr(args, "json", False), stdout or sys.stdout)
    try:
        if args.command == "mcp":
            cmd_mcp(args)
            return wire.EXIT_OK
        result = COMMANDS[args.command](args)
        if out.as_json:
            out.json(result)
        elif isinstance(result, ContextPreview):
            show_context(result, out, show=args.show)
        else:
            RENDER[type(result)](result, out)
        out.out.flush()
        return wire.EXIT_OK if not isinstance(result, Doctor) or result.ok else wire.EXIT_ERROR
    except BrokenPipeError:
        return _quiet_broken_pipe()
    except KeyboardInterrupt:
        _say("aircher-mem: interrupted")
        return wire.EXIT_INTERRUPTED
    except (AircherError, OSError) as exc:
        if out.as_json:
            out.json(wire.error_json(exc))
        _say(f"aircher-mem {args.command}: {exc}")
        return wire.exit_code(exc)
    except Exception as exc:
        if os.environ.get("AIRCHER_DEBUG"):
            raise
        _say(
            f"aircher-mem {args.command}: internal error: {type(exc).__name__}: {exc} "
            "(set AIRCHER_DEBUG=1 for the traceback, and please report it)"
        )
        return wire.EXIT_INTERNAL
