"""``aircher-mem``: the project's memory from the command line.

The first job on any repository::

    aircher-mem index .                      # build the code graph (.aircher/ in the repo)
    aircher-mem context "why does login fail for admins?" --show

Long-term memory, what the agent was told and decided::

    aircher-mem add-turn --session s1 --role user --text "I prefer tabs."
    aircher-mem recall "tabs or spaces?"      # memories and turns, who said them and when
    aircher-mem explain --id 1                # every score term, rules, source turns, gc outlook

Tables for people, ``--json`` for scripts (the same JSON the MCP tools return).
When ``aircher-mem serve`` runs for the project, every command is its client over
HTTP (the server is the store's one writer) and gives the same output.
Errors are one line on stderr and an exit code: 1 an error, 2 a bad argument or
path, 3 not found (no store, not indexed, no such symbol or task), 4 the store is
open in another process, 130 interrupted. Every command is one call to a
:class:`aircher_mem.Memory` verb.
"""

from __future__ import annotations

import argparse
import importlib
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
from ..errors import AircherError, InvalidInputError, StoreNotFoundError
from ..longterm.store import KINDS, LAYERS, LEVELS, ROLES, STATUSES
from ..memory import REFERENCE_KINDS, STORE_DIR, TASK_ACTIONS, Memory, find_root
from ..results import (
    Calls,
    CallSite,
    Check,
    CodeResult,
    CodeSearch,
    CoEdits,
    ContextPreview,
    ConversationContext,
    Dependencies,
    Doctor,
    FeedbackResult,
    FileHistory,
    FileOutline,
    Forgotten,
    GcReport,
    IndexReport,
    InitResult,
    MemoryExplanation,
    MemoryList,
    MemoryRecord,
    Neighbourhood,
    Patterns,
    Recall,
    ReferenceList,
    Remembered,
    Stats,
    Symbols,
    Tasks,
    TaskStatus,
    Turn,
    TurnAdded,
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
    """A stored time in local time (every accepted time has one in every time zone:
    :mod:`aircher_mem.times`); one stored before that range was checked prints as
    Unix seconds rather than failing the command."""
    if ts is None:
        return ""
    try:
        return datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M:%S")
    except (OverflowError, ValueError, OSError):
        return f"{ts:.0f}"


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


Verbs = Any  # a Memory, or an http.RemoteMemory: the same verbs and results


def _connect(root: Path, *, create: bool) -> Verbs:
    """The project's memory: its server's when one runs (``aircher-mem serve``), so
    this process never opens the store the server holds; else the store itself."""
    try:
        from .http import connect  # type: ignore[import-not-found, unused-ignore]
    except ImportError:  # a checkout without the HTTP module: the store itself
        return Memory.open(root, create=create)
    return connect(root, create=create)


def _server_check() -> Callable[[Path], Check] | None:
    """``doctor``'s look at server.json (None without the HTTP module)."""
    try:
        from .http import server_check  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        return None
    return server_check  # type: ignore[no-any-return, unused-ignore]


def _open(args: argparse.Namespace) -> Verbs:
    return _connect(Path(args.root) if args.root is not None else find_root(), create=False)


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


# -- long-term memory ------------------------------------------------------------------------


def _said(turns: Sequence[Turn]) -> str:
    """Who said a memory's first source turn and when (``ann 2024-05-01 10:00``),
    and how many more turns back it."""
    if not turns:
        return ""
    first = turns[0]
    more = f" (+{len(turns) - 1})" if len(turns) > 1 else ""
    return f"{first.speaker or first.role} {_when(first.at)[:16]}{more}"


def _ids(ids: Sequence[int]) -> str:
    return ", ".join(str(i) for i in ids) if ids else "none"


def show_turn_added(r: TurnAdded, out: Output) -> None:
    n = len(r.extracted)
    out.line(f"turn {r.turn_id} added to session {r.session_id}: {n} memor{'y' if n == 1 else 'ies'} extracted")
    if r.extracted:
        out.table(
            ["action", "memory", "kind", "content", "rules", "supersedes"],
            [
                (e.action, e.memory_id, e.kind, _short(e.content, 60), ", ".join(e.rules), e.superseded)
                for e in r.extracted
            ],
        )
    for note in r.notes:
        out.line(f"note: {note}")


def show_remembered(r: Remembered, out: Output) -> None:
    if r.action == "merged":
        out.line(f"merged into memory {r.memory_id} (the same memory, seen once more)")
    elif r.action == "superseded":
        out.line(f"remembered as memory {r.memory_id}; it supersedes memory {r.superseded} (archived)")
    else:
        out.line(f"remembered as memory {r.memory_id}")


def _memory_rows(memories: Sequence[MemoryRecord]) -> list[tuple[Any, ...]]:
    return [
        (
            m.id,
            m.kind,
            m.level,
            m.layer,
            m.status,
            f"{m.score:.3f}",
            m.hits,
            ",".join(m.tags),
            _short(m.content, 60),
        )
        for m in memories
    ]


MEMORY_COLUMNS = ["id", "kind", "level", "layer", "status", "score", "hits", "tags", "content"]


def show_memories(r: MemoryList, out: Output) -> None:
    if not r.memories:
        out.line("no memories match")
        return
    out.table(MEMORY_COLUMNS, _memory_rows(r.memories))


def show_memory(r: MemoryRecord, out: Output) -> None:
    out.table(MEMORY_COLUMNS, _memory_rows([r]))


def show_conversation(r: ConversationContext, out: Output) -> None:
    out.line(f"session {r.session_id}: last {len(r.short_term)} turn(s)")
    if r.short_term:
        out.table(
            ["turn", "when", "who", "text"],
            [(t.id, _when(t.at), t.speaker or t.role, _short(t.text, 70)) for t in r.short_term],
        )
    out.line(f"top {len(r.memories)} memor{'y' if len(r.memories) == 1 else 'ies'} by score")
    if r.memories:
        out.table(MEMORY_COLUMNS, _memory_rows(r.memories))


def show_recall(r: Recall, out: Output) -> None:
    if not r.hits:
        out.line(f"nothing recalled for {_short(r.query)!r}: {r.reason}")
    else:
        when = f" as of {_when(r.at)}" if r.at is not None else ""
        out.line(f"{len(r.hits)} hit(s) for {_short(r.query)!r}{when} (channels: {', '.join(r.channels)})")
        out.table(
            ["#", "kind", "id", "score", "content", "said by", "matched"],
            [
                (
                    n,
                    h.kind,
                    h.id,
                    f"{h.score:.3f}",
                    _short(h.content, 60) + "".join(f" ({note})" for note in h.notes),
                    _said(h.turns),
                    ", ".join(h.matched),
                )
                for n, h in enumerate(r.hits, 1)
            ],
        )
    for note in r.notes:
        out.line(f"note: {note}")


def show_explanation(r: MemoryExplanation, out: Output) -> None:
    m = r.memory
    out.line(f"memory {m.id}: {m.content}")
    out.line(f"  {m.kind}, level {m.level}, {m.layer}-term layer, {m.status}, scope {m.scope}")
    facts = [f"source {m.source} (confidence {m.confidence:.2f})"]
    if m.slot is not None:
        facts.append(f"slot {'/'.join(m.slot)} = {m.value}")
    if m.tags:
        facts.append(f"tags {', '.join(m.tags)}")
    for label, value in (("domain", m.domain), ("module", m.module), ("code", m.code_ref), ("parent", m.parent_id)):
        if value is not None:
            facts.append(f"{label} {value}")
    out.line("  " + "; ".join(facts))
    valid = f"valid from {_when(m.valid_from)}" + (f" until {_when(m.valid_until)}" if m.valid_until else "")
    superseded = f"; superseded by memory {m.superseded_by}" if m.superseded_by is not None else ""
    out.line(f"  created {_when(m.created_at)}; {valid}; last seen {_when(m.last_seen)}{superseded}")
    out.line(
        f"  age {r.age_days:.1f} days; hits {m.hits}, importance {m.importance}; "
        f"recalled {m.retrieved}, cited {m.cited}, ignored {m.ignored}"
    )
    out.line(f"score {r.score:.4f} = " + " + ".join(f"{t.name} {t.contribution:.4f}" for t in r.terms))
    out.table(
        ["term", "weight", "value", "contribution"],
        [(t.name, f"{t.weight:g}", f"{t.value:.4f}", f"{t.contribution:.4f}") for t in r.terms],
    )
    out.line(f"rules: {', '.join(r.rules) if r.rules else 'none (kept on purpose)'}")
    if r.links:
        out.line("source turns:")
        out.table(
            ["turn", "why", "session", "who", "when", "text"],
            [
                (
                    lk.turn.id,
                    lk.reason,
                    lk.turn.session_id,
                    lk.turn.speaker or lk.turn.role,
                    _when(lk.turn.at),
                    _short(lk.turn.text, 60),
                )
                for lk in r.links
            ],
        )
    else:
        out.line("source turns: none")
    if r.related:
        out.line("related memories:")
        out.table(
            ["relation", "memory", "content"], [(e.relation, e.memory_id, _short(e.content, 70)) for e in r.related]
        )
    else:
        out.line("related memories: none")
    if r.actions:
        out.line("actions:")
        out.table(["when", "action", "detail"], [(_when(a.at), a.action, _short(a.detail, 70)) for a in r.actions])
    out.line(f"gc outlook: {r.outlook}")


def show_gc(r: GcReport, out: Output) -> None:
    if r.dry_run:
        out.line(
            f"gc dry run, nothing changed: {r.scored} active memories scored; it would leave "
            f"{r.mid_active} mid-term and {r.long_active} long-term"
        )
    else:
        out.line(f"gc: {r.scored} active memories scored; now {r.mid_active} mid-term and {r.long_active} long-term")
    would = "would " if r.dry_run else ""
    out.line(f"{would}promote to long-term: {_ids(r.promoted)}")
    out.line(f"{would}archive, score too low: {_ids(r.archived_low_score)}")
    out.line(f"{would}archive, not seen for too long: {_ids(r.archived_age)}")
    out.line(f"{would}archive, over capacity: {_ids(r.archived_capacity)}")


def show_forgotten(r: Forgotten, out: Output) -> None:
    said = []
    if r.ids:
        said.append(f"{len(r.ids)} memor{'y' if len(r.ids) == 1 else 'ies'}")
    if r.turns:
        said.append(f"{len(r.turns)} turn{'' if len(r.turns) == 1 else 's'}")
    if not said:
        out.line("nothing matches; nothing forgotten")
        return
    ids = [_ids(i) for i in (r.ids, r.turns) if i]
    out.line(f"forgot {' and '.join(said)} for good: {'; turns '.join(ids) if r.ids else ids[0]}")


def show_feedback(r: FeedbackResult, out: Output) -> None:
    out.line(f"memory {r.memory_id} {r.signal}: recalled {r.retrieved}, cited {r.cited}, ignored {r.ignored} times")


# -- commands: arguments in, one verb, the result out ----------------------------------------

Command = Callable[[argparse.Namespace], Any]


def cmd_init(args: argparse.Namespace) -> InitResult:
    with _connect(Path(args.path), create=True) as memory:
        if not isinstance(memory, Memory):  # a server runs for it: the store exists
            return InitResult(str(memory.root), str(memory.root / STORE_DIR), False)
        return memory.init()


def cmd_index(args: argparse.Namespace) -> IndexReport:
    with _connect(Path(args.path), create=True) as memory:
        if not isinstance(memory, Memory):  # the server indexes (no progress line)
            report: IndexReport = memory.index(full=args.full)
            return report
        progress = ProgressLine(sys.stderr) if not args.quiet else None
        try:
            # This process ends with its report: a full build is written, not kept.
            return memory.index(full=args.full, progress=progress, hold=False)
        finally:
            if progress is not None:
                progress.finish()


def cmd_update(memory: Verbs, args: argparse.Namespace) -> MemoryRecord:
    if args.text is None and args.tags is None and args.status is None:
        raise InvalidInputError("update needs --text, --tags or --status")
    record: MemoryRecord = memory.update(args.id, content=args.text, tags=args.tags, status=args.status)
    return record


def _with_memory(verb: Callable[[Verbs, argparse.Namespace], Any]) -> Command:
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
    "doctor": lambda a: Memory.doctor(a.root, deep=a.deep, server=_server_check()),
    # long-term memory
    "add-turn": _with_memory(
        lambda m, a: m.add_turn(a.session, a.role, a.text, speaker=a.speaker, at=a.at, extract=not a.no_extract)
    ),
    "get-context": _with_memory(lambda m, a: m.get_context(a.session, a.k)),
    "remember": _with_memory(
        lambda m, a: m.remember(
            a.text,
            kind=a.kind,
            importance=a.importance,
            tags=a.tags or (),
            level=a.level,
            domain=a.domain,
            module=a.module,
            code_ref=a.code_ref,
            parent_id=a.parent,
        )
    ),
    "list": _with_memory(
        lambda m, a: m.memories(
            layer=a.layer, status=None if a.status == "all" else a.status, kind=a.kind, limit=a.limit, sort=a.sort
        )
    ),
    "forget": _with_memory(lambda m, a: m.forget(a.id, text=a.text, session_id=a.session)),
    "gc": _with_memory(lambda m, a: m.gc(dry_run=a.dry_run)),
    "explain": _with_memory(lambda m, a: m.explain(a.id)),
    "recall": _with_memory(lambda m, a: m.recall(a.query, k=a.k, session_id=a.session, kinds=a.kinds, at=a.at)),
    "feedback": _with_memory(lambda m, a: m.feedback(a.id, a.signal)),
    "update": _with_memory(lambda m, a: cmd_update(m, a)),
    "facts": _with_memory(lambda m, a: m.facts(level=a.level, domain=a.domain)),
    "subtree": _with_memory(lambda m, a: m.subtree(a.id)),
    "promote": _with_memory(lambda m, a: m.promote(a.id, a.level)),
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
    TurnAdded: show_turn_added,
    Remembered: show_remembered,
    MemoryList: show_memories,
    MemoryRecord: show_memory,
    ConversationContext: show_conversation,
    Recall: show_recall,
    MemoryExplanation: show_explanation,
    GcReport: show_gc,
    Forgotten: show_forgotten,
    FeedbackResult: show_feedback,
}


def _project_root(args: argparse.Namespace) -> Path:
    """``--root``, else the nearest folder with a store, else the current one."""
    if args.root is not None:
        return Path(args.root)
    try:
        return find_root()
    except StoreNotFoundError:
        return Path.cwd()


def cmd_mcp(args: argparse.Namespace) -> int:
    from .mcp import serve  # imports the MCP SDK only when serving

    serve(_project_root(args), index=False if args.no_index else None, refresh_seconds=args.refresh_seconds)
    return wire.EXIT_OK


class _Unavailable(Exception):
    """A command whose module is not part of this installation."""


def _unavailable(what: str, exc: ImportError) -> _Unavailable:
    return _Unavailable(f"{what} is not available in this installation ({exc})")


def cmd_serve(args: argparse.Namespace, out: Output) -> int:
    try:
        # Its dependencies load only when serving. (The ignore covers checkouts without the module.)
        from .http import serve  # type: ignore[import-not-found, unused-ignore]
    except ImportError as exc:
        raise _unavailable("the HTTP server", exc) from None
    serve(_project_root(args), host=args.host, port=args.port)
    return wire.EXIT_OK


def cmd_hooks(args: argparse.Namespace, out: Output) -> int:
    try:
        from .hooks import install, uninstall  # type: ignore[import-not-found, unused-ignore]
    except ImportError as exc:
        raise _unavailable("the Claude Code hooks module", exc) from None
    action = install if args.action == "install" else uninstall
    summary = action(_project_root(args), scope=args.scope, settings=args.settings)
    if out.as_json:
        out.json(summary)
    else:
        for key, value in summary.items():
            out.line(f"{key}: {value if isinstance(value, str) else wire.dumps(value)}")
    return wire.EXIT_OK


def cmd_hook(args: argparse.Namespace, out: Output) -> int:
    """Claude Code runs this with the event's JSON on stdin. It never fails or
    blocks the agent's action (exit 2 would block it): stdin not closed within
    ``[hooks] stdin_seconds`` or over ``[hooks] payload_max_bytes`` is a
    ``HookInputError`` on stderr and exit 1, which Claude Code reports as a
    non-blocking error; anything else exits 0 with problems on stderr, and when the
    hook's work passes ``[hooks] deadline_seconds`` it prints nothing and the
    process exits at once."""
    try:
        hooks = importlib.import_module(f"{__package__}.hooks")
    except ImportError as exc:
        raise _unavailable("the Claude Code hooks module", exc) from None
    root = Path(args.root) if args.root is not None else None
    try:
        limits = hooks.input_policy(root)
        stdin = sys.stdin
        if stdin is None:
            payload = ""
        else:
            payload = hooks.read_payload(stdin, seconds=limits.stdin_seconds, max_bytes=limits.payload_max_bytes)
    except hooks.HookInputError as exc:
        _say(f"aircher-mem hook {args.event}: {type(exc).__name__}: {exc}")
        return wire.EXIT_ERROR  # non-blocking: Claude Code shows it and goes on
    except (AircherError, OSError) as exc:
        _say(f"aircher-mem hook {args.event}: {exc}")
        return wire.EXIT_OK
    try:
        text, code = hooks.run_hook(args.event, payload, root=root)
    except (AircherError, OSError, UnicodeDecodeError) as exc:
        _say(f"aircher-mem hook {args.event}: {exc}")
        return wire.EXIT_OK
    if text:
        out.out.write(text)
    out.out.flush()
    abandoned = getattr(hooks, "abandoned", None)
    if callable(abandoned) and abandoned():  # work past the deadline: do not wait for it
        sys.stderr.flush()
        os._exit(int(code))
    return int(code)


# Commands that run a service or write their own output; each returns the exit code.
SERVICES: dict[str, Callable[[argparse.Namespace, Output], int]] = {
    "mcp": lambda a, out: cmd_mcp(a),
    "serve": cmd_serve,
    "hooks": cmd_hooks,
    "hook": cmd_hook,
}


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


def _time(text: str) -> datetime:
    """An ISO-8601 date or time (``2024-05-01``, ``2024-05-01T14:30:00+02:00``, a
    trailing ``Z``); without an offset it is UTC, as :class:`Memory` reads it."""
    try:
        return datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith(("Z", "z")) else text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not an ISO-8601 time (e.g. 2024-05-01 or 2024-05-01T14:30:00+02:00)"
        ) from None


def _words(text: str) -> list[str]:
    """A comma-separated list (``a,b``); blanks dropped, so ``""`` is the empty list."""
    return [part.strip() for part in text.split(",") if part.strip()]


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 0 <= value <= 65_535:
        raise argparse.ArgumentTypeError(f"must be from 0 (any free port) to 65535, got {value}")
    return value


def _longterm_commands(command: Callable[..., argparse.ArgumentParser]) -> None:
    """Seed 004's verbs on turns and memories (and 000's hierarchy)."""
    p = command("add-turn", "store a conversation turn and extract memories from it (facts, decisions, preferences)")
    p.add_argument("--session", required=True, help="the conversation's id")
    p.add_argument("--role", required=True, choices=ROLES)
    p.add_argument("--text", required=True, help="what was said")
    p.add_argument("--speaker", help="who said it (default: the role)")
    p.add_argument("--at", type=_time, help="when it was said, ISO-8601 (default: now; without an offset: UTC)")
    p.add_argument("--no-extract", action="store_true", help="store the turn only")
    p = command("get-context", "a session's last turns and the top memories by score")
    p.add_argument("--session", required=True)
    p.add_argument("--k", type=_positive, default=20, help="how many memories (default: 20)")
    p = command("remember", "keep a memory on purpose: one fact, decision or preference, with the why")
    p.add_argument("--text", required=True, help="the memory, self-contained")
    p.add_argument("--importance", type=int, choices=(0, 1), default=0, help="1: always worth keeping")
    p.add_argument("--tags", type=_words, metavar="A,B", help="comma-separated tags")
    p.add_argument("--kind", choices=KINDS, default="fact")
    p.add_argument("--level", choices=LEVELS, help="L0 project, L1 domain, L2 module, L3 code (default: from the rest)")
    p.add_argument("--domain", help="the domain it belongs to (level L1 and below)")
    p.add_argument("--module", help="the module it belongs to (level L2 and below)")
    p.add_argument("--code-ref", metavar="REF", help="the code it is about, e.g. app/models.py:User.save")
    p.add_argument("--parent", type=_positive, metavar="ID", help="the memory it refines")
    p = command("list", "memories by layer, status and kind, sorted by score, recency or id")
    p.add_argument("--layer", choices=LAYERS, help="mid-term or long-term only")
    p.add_argument("--status", choices=(*STATUSES, "all"), default="active")
    p.add_argument("--kind", choices=KINDS)
    p.add_argument("--sort", choices=("score", "recent", "id"), default="score")
    p.add_argument("--limit", type=_positive, default=50)
    p = command(
        "forget",
        "forget for good a memory, every memory and turn holding a text, or a session; with the turns they came from",
    )
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--id", type=_positive)
    which.add_argument(
        "--text", help="forget the memories whose content is (else contains) this text, and every turn containing it"
    )
    which.add_argument("--session", help="forget the session's turns and the memories that came only from them")
    p = command("gc", "rescore memories, promote mid-term to long-term, archive what decayed")
    p.add_argument("--dry-run", action="store_true", help="show what it would do, change nothing")
    p = command("explain", "why a memory is where it is: score terms, rules, source turns, related, actions")
    p.add_argument("--id", type=_positive, required=True)
    p = command("recall", "the memories and turns most relevant to QUERY, best first, with who said them")
    p.add_argument("query")
    p.add_argument("-k", type=_positive, default=10, help="how many hits (default: 10)")
    p.add_argument("--session", help="favour this session's turns")
    p.add_argument("--kinds", type=_words, metavar="A,B", help=f"only these kinds ({', '.join((*KINDS, 'turn'))})")
    p.add_argument("--at", type=_time, help="as valid at this ISO-8601 time (default: now)")
    p = command("feedback", "tell memory that a recalled memory was cited (used) or ignored")
    p.add_argument("--id", type=_positive, required=True)
    p.add_argument("signal", choices=("cited", "ignored"))
    p = command("update", "change a memory's text, tags or status")
    p.add_argument("--id", type=_positive, required=True)
    p.add_argument("--text", help="the new content")
    p.add_argument("--tags", type=_words, metavar="A,B", help='the new tags ("" clears them)')
    p.add_argument("--status", choices=STATUSES)
    p = command("facts", "active memories at a level of the hierarchy (L0 project ... L3 code)")
    p.add_argument("--level", choices=LEVELS)
    p.add_argument("--domain")
    p = command("subtree", "a memory and the memories refining it")
    p.add_argument("--id", type=_positive, required=True)
    p = command("promote", "move a memory to another level of the hierarchy")
    p.add_argument("--id", type=_positive, required=True)
    p.add_argument("--level", choices=LEVELS, required=True)


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
        description="Memory for LLM coding agents: code graph, episodic and long-term memory, context.",
        epilog='start with: aircher-mem index .  then: aircher-mem context "<what you are about to do>" --show; '
        "exit codes: 1 error, 2 bad argument or path, 3 not found (no store, not indexed, no such symbol or memory), "
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
    _longterm_commands(command)
    p = command("serve", "serve the memory over HTTP on 127.0.0.1, the project's one writer", root_only)
    p.add_argument("--host", default="127.0.0.1", help="the address to bind (default: 127.0.0.1)")
    p.add_argument("--port", type=_port, default=8787, help="the port (default: 8787; 0: any free port)")
    p = command("hooks", "install or uninstall aircher-mem's Claude Code hooks", root_only)
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument("action", choices=("install", "uninstall"))
    scope = p.add_mutually_exclusive_group()
    scope.add_argument(
        "--project",
        dest="scope",
        action="store_const",
        const="project",
        help="the project's .claude/settings.json (default)",
    )
    scope.add_argument("--user", dest="scope", action="store_const", const="user", help="the user's settings")
    p.set_defaults(scope="project")
    p.add_argument("--settings", type=Path, metavar="PATH", help="this settings file instead")
    p = command("hook", "run a Claude Code hook: the event's JSON on stdin, the hook's output on stdout", root_only)
    p.add_argument("event", help="the hook event, e.g. SessionStart, UserPromptSubmit, PostToolUse")
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
        if args.command in SERVICES:
            return SERVICES[args.command](args, out)
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
    except _Unavailable as exc:
        _say(f"aircher-mem {args.command}: {exc}")
        return wire.EXIT_INTERNAL
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
