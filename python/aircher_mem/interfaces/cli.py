"""``aircher-mem``: the project's memory from the command line.

The first job on any repository::

    aircher-mem index .                      # build the code graph (.aircher/ in the repo)
    aircher-mem preview-context "why does login fail for admins?" --show

Long-term memory, what the agent was told and decided::

    aircher-mem add-turn s1 user "I prefer tabs."
    aircher-mem recall "tabs or spaces?"      # memories and turns, who said them and when
    aircher-mem explain 1                     # every score term, rules, source turns, gc outlook

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
import collections.abc
import dataclasses
import importlib
import inspect
import json
import logging
import math
import os
import sys
import threading
import time
import typing
from collections import Counter
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any, Literal, TextIO

from .. import verbs
from .._core import __version__
from ..checks import Arg, Parse, parse_time
from ..config import CONFIG_FILE, Policy
from ..errors import AircherError, StoreNotFoundError
from ..memory import STORE_DIR, Memory, find_root
from ..results import (
    Assembled,
    Calls,
    CodeResult,
    CodeSearch,
    CoEdits,
    ContextPreview,
    Conversation,
    Dependencies,
    Doctor,
    FeedbackResult,
    FileHistory,
    FileOutline,
    Forgotten,
    GcReport,
    IndexProgress,
    IndexReport,
    InitResult,
    MemoryExplanation,
    MemoryList,
    MemoryRecord,
    Neighbourhood,
    Patterns,
    Prediction,
    Recall,
    Recorded,
    Reference,
    ReferenceList,
    Remembered,
    Routed,
    Stats,
    Symbols,
    Task,
    Tasks,
    Turn,
    TurnAdded,
)
from ..verbs import verb
from . import hook_command, wire
from .client import connect, server_check

log = logging.getLogger("aircher_mem.cli")

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


def _duration(seconds: float) -> str:
    """``seconds`` as "42 s", "3 min 05 s" or "2 h 07 min"."""
    whole = max(round(seconds), 0)
    if whole < 60:
        return f"{whole} s"
    if whole < 3600:
        return f"{whole // 60} min {whole % 60:02d} s"
    return f"{whole // 3600} h {whole % 3600 // 60:02d} min"


def describe_progress(status: IndexProgress) -> str:
    """One line of where an index is: ``indexing 12 s: parsing 1,234/5,678 files,
    950 files/s, 5 s left``; a phase that counts nothing is named alone
    (``indexing 14 s: linking``)."""
    said = f"indexing {_duration(status.seconds)}: {status.phase or 'starting'}"
    if status.phase in ("parsing", "embeddings"):
        said += f" {status.done:,}/{status.total:,} {status.unit}"
        if status.per_second > 0:
            said += f", {status.per_second:,.0f} {status.unit}/s"
        if status.seconds_left is not None:
            said += f", {_duration(status.seconds_left)} left"
    return said


class ProgressLine:
    """The progress of an index (:func:`describe_progress`) on ``stream``: on a
    terminal one line redrawn in place at most every ``redraw`` seconds (and at
    each new phase); elsewhere a plain line every ``every`` seconds (and at each
    new phase). Times come from ``clock``."""

    def __init__(
        self,
        stream: TextIO,
        *,
        redraw: float = 0.1,
        every: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
        tty: bool | None = None,
    ) -> None:
        self.stream = stream
        self.tty = stream.isatty() if tty is None else tty
        self.interval = redraw if self.tty else every
        self.clock = clock
        self.last: float | None = None
        self.phase = ""
        self.width = 0  # of the line drawn last on a terminal

    def show(self, status: IndexProgress) -> None:
        """Draws ``status`` if it is time to (or its phase is new)."""
        now = self.clock()
        if status.phase == self.phase and self.last is not None and now - self.last < self.interval:
            return
        self.last, self.phase = now, status.phase
        line = describe_progress(status)
        if self.tty:
            self.stream.write("\r" + line.ljust(self.width))
            self.width = len(line)
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def finish(self) -> None:
        """Ends the line drawn on a terminal."""
        if self.tty and self.width:
            self.stream.write("\n")
            self.stream.flush()
            self.width = 0


def _index_showing(memory: Verbs, line: ProgressLine, poll: float, **kwargs: Any) -> IndexReport:
    """``memory.index(**kwargs)`` while another thread asks ``memory.index_progress()``
    every ``poll`` seconds and shows what it says on ``line`` (the same for a
    Memory and for a server's: it answers without waiting for the index)."""
    stop = threading.Event()

    def watch() -> None:
        while not stop.wait(poll):
            try:
                status = memory.index_progress()
            except AircherError as exc:  # e.g. a server without the verb: no line, the index goes on
                log.debug("no index progress: %s", exc)
                return
            if status.running and not stop.is_set():
                line.show(status)

    watcher = threading.Thread(target=watch, name="aircher-mem-progress", daemon=True)
    watcher.start()
    try:
        report: IndexReport = memory.index(**kwargs)
        return report
    finally:
        stop.set()
        watcher.join()
        line.finish()


Verbs = Any  # a Memory, or a client.RemoteMemory: the same verbs and results


def _connect(root: Path, *, create: bool) -> Verbs:
    """The project's memory: its server's when one runs (``aircher-mem serve``), so
    this process never opens the store the server holds; else the store itself."""
    return connect(root, create=create)


# -- renderers: one per result type, text only (JSON is wire's) ------------------------------


def show_init(r: InitResult, out: Output) -> None:
    out.line(
        f"{'created' if r.created else 'using existing'} store {r.store} "
        f"(config {CONFIG_FILE}); next: aircher-mem index {r.root}"
    )


def show_index_progress(r: IndexProgress, out: Output) -> None:
    if r.running:
        out.line(describe_progress(r))
    else:
        out.line(f"no index running; the last one: {describe_progress(r)}" if r.phase else "no index running")


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


def _site(c: Reference, kind: str) -> tuple[str, str, str, int, str]:
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


def show_task(r: Task, out: Output) -> None:
    out.line(f"task {r.task_id}: {r.status}")


def show_recorded(r: Recorded, out: Output) -> None:
    stale = "; the code graph refreshes before the next query" if r.graph_stale else ""
    out.line(f"recorded the {r.what.replace('_', ' ')}{stale}")


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


def show_conversation(r: Conversation, out: Output) -> None:
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


def show_prediction(r: Prediction, out: Output) -> None:
    if not r.files:
        out.line("nothing to predict yet: no files read, edited or named")
        return
    out.line(f"{len(r.files)} files likely next (confidence {r.confidence:.2f}):")
    out.table(
        ["confidence", "file", "why"],
        [(f"{f.confidence:.2f}", f.path, ", ".join(dict.fromkeys(x.signal for x in f.reasons))) for f in r.files],
    )
    for m in r.memories:
        out.line(f"[memory {m.id}] ({m.kind}, about {m.path}) {_short(m.content, 100)}")
    for p in r.fixes:
        out.line(f"fix seen {p.observed_count}x: {p.data.get('tool')} on {p.data.get('file')}: {p.data.get('error')}")


def show_routed(r: Routed, out: Output) -> None:
    out.line(r.explanation)
    out.table(
        ["domain", "score", "memories", "loaded"],
        [(d.domain, f"{d.score:.2f}", d.memories, "yes" if d.chosen else "") for d in r.domains],
    )
    out.table(
        ["id", "level", "domain", "memory"],
        [(m.id, m.level, m.domain or "", _short(m.content, 80)) for m in r.memories],
    )


def show_assembled(r: Assembled, out: Output) -> None:
    out.line(f"{r.token_count:,} of {r.budget:,} tokens in four tiers (routing confidence {r.routing.confidence:.2f})")
    out.table(
        ["tier", "budget", "used", "items", "kinds"],
        [
            (
                t.name,
                t.budget,
                t.tokens,
                len(t.items),
                ", ".join(f"{k} {n}" for k, n in Counter(i.kind for i in t.items).items()),
            )
            for t in r.tiers
        ],
    )
    for note in r.notes:
        out.line(f"note: {note}")
    if r.context:
        out.line("")
        out.line(r.context)


# -- commands: arguments in, one verb, the result out ----------------------------------------


@dataclasses.dataclass(frozen=True)
class Run:
    """What a command gets besides its declared arguments: the parsed command line
    (``--root``, ``--json`` and the commands' own presentation options) and where
    it writes."""

    args: argparse.Namespace
    out: Output

    @property
    def root(self) -> Path:
        """``--root``, else the nearest folder with a store, else the current one."""
        if self.args.root is not None:
            return Path(self.args.root)
        try:
            return find_root()
        except StoreNotFoundError:
            return Path.cwd()


def _verb_result(v: verbs.Verb, args: argparse.Namespace) -> Any:
    """Runs the service verb ``v`` with the command line's arguments (checked
    against its declaration) on the project's memory."""
    kwargs = _given(v, args)
    if v.name in ("create_store", "index"):  # they may create the store; PATH names the project
        where = Path(args.path if args.path is not None else args.root if args.root is not None else ".")
        with _connect(where, create=True) as memory:
            local = isinstance(memory, Memory)  # else a server runs for it: the store exists, the server indexes
            if v.name == "create_store":
                if local:
                    return memory.create_store()
                return InitResult(str(memory.root), str(memory.root / STORE_DIR), False)
            if local:  # this process ends with its report: a full build is written, not kept
                kwargs["hold"] = False
            if args.quiet:
                return memory.index(**kwargs)
            graph = Policy.load(where).graph
            line = ProgressLine(sys.stderr, redraw=graph.progress_redraw_seconds, every=graph.progress_line_seconds)
            return _index_showing(memory, line, graph.progress_poll_seconds, **kwargs)
    with _open(args) as memory:
        return getattr(memory, v.name)(**kwargs)


def _open(args: argparse.Namespace) -> Verbs:
    """The memory of ``--root``, else of the nearest folder with a store."""
    return _connect(Path(args.root) if args.root is not None else find_root(), create=False)


RENDER: dict[type, Callable[[Any, Output], None]] = {
    InitResult: show_init,
    IndexReport: show_index,
    IndexProgress: show_index_progress,
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
    Task: show_task,
    Recorded: show_recorded,
    Patterns: show_patterns,
    Stats: show_stats,
    Doctor: show_doctor,
    TurnAdded: show_turn_added,
    Remembered: show_remembered,
    MemoryList: show_memories,
    MemoryRecord: show_memory,
    Conversation: show_conversation,
    Recall: show_recall,
    MemoryExplanation: show_explanation,
    GcReport: show_gc,
    Forgotten: show_forgotten,
    FeedbackResult: show_feedback,
    Prediction: show_prediction,
    Routed: show_routed,
    Assembled: show_assembled,
}


class _Unavailable(Exception):
    """A command whose module is not part of this installation."""


def _unavailable(what: str, exc: ImportError) -> _Unavailable:
    return _Unavailable(f"{what} is not available in this installation ({exc})")


# -- the commands that are not service verbs: they serve, install or check -------------------


@verb(name="doctor", surfaces=("cli",), python_only=("run",))
def cmd_doctor(
    run: Run, *, deep: Annotated[bool, Arg(description="Also compare the graph with a fresh build (slow).")] = False
) -> Doctor:
    """Checks the store, the versions, the encodings and the languages."""
    return Memory.doctor(run.args.root, deep=deep, server=server_check)


@verb(name="mcp", surfaces=("cli",), python_only=("run",))
def cmd_mcp(
    run: Run,
    *,
    index: Annotated[
        bool | None, Arg(description="Refresh the graph at start (default: [server] index_at_start).")
    ] = None,
    refresh_seconds: Annotated[
        float | None,
        Arg(
            ge=0,
            le=86_400,
            description="Look for changed files before a graph query at most this often "
            "(default: [server] refresh_seconds).",
        ),
    ] = None,
) -> int:
    """Serves the memory to an agent over MCP (stdio)."""
    from .mcp import serve  # imports the MCP SDK only when serving

    serve(run.root, index=index, refresh_seconds=refresh_seconds)
    return wire.EXIT_OK


@verb(name="serve", surfaces=("cli",), python_only=("run",))
def cmd_serve(
    run: Run,
    *,
    host: Annotated[str, Arg(description="The address to bind: 127.0.0.1, localhost or ::1.")] = "127.0.0.1",
    port: Annotated[int, Arg(ge=0, le=65_535, description="The port (0: any free port).")] = 8787,
    idle_exit_seconds: Annotated[
        float, Arg(ge=0, description="Exit after this many seconds without a request (0: never).")
    ] = 0.0,
    yields: Annotated[
        bool,
        Arg(description="Give the store up, and exit, when another process opens it (as a hook's server does)."),
    ] = False,
) -> int:
    """Serves the memory over HTTP on 127.0.0.1, the project's one writer."""
    try:
        # Its dependencies load only when serving. (The ignore covers checkouts without the module.)
        from .http import serve  # type: ignore[import-not-found, unused-ignore]
    except ImportError as exc:
        raise _unavailable("the HTTP server", exc) from None
    serve(run.root, host=host, port=port, idle_exit_seconds=idle_exit_seconds, yields=yields)
    return wire.EXIT_OK


@verb(name="hooks", surfaces=("cli",), python_only=("run",))
def cmd_hooks(
    run: Run,
    action: Annotated[Literal["install", "uninstall"], Arg(description="Install or uninstall the hooks.")],
    *,
    scope: Annotated[
        Literal["project", "user"], Arg(description="The project's .claude/settings.json, or the user's.")
    ] = "project",
    settings: Annotated[str | None, Arg(description="This settings file instead.")] = None,
) -> int:
    """Installs or uninstalls aircher-mem's Claude Code hooks."""
    try:
        from .hooks import install, uninstall  # type: ignore[import-not-found, unused-ignore]
    except ImportError as exc:
        raise _unavailable("the Claude Code hooks module", exc) from None
    act = install if action == "install" else uninstall
    summary = act(run.root, scope=scope, settings=None if settings is None else Path(settings))
    if run.out.as_json:
        run.out.json(summary)
    else:
        for key, value in summary.items():
            run.out.line(f"{key}: {value if isinstance(value, str) else wire.dumps(value)}")
    return wire.EXIT_OK


@verb(name="hook", surfaces=("cli",), python_only=("run",))
def cmd_hook(
    run: Run,
    event: Annotated[
        str, Arg(min_length=1, description="The hook event, e.g. SessionStart, UserPromptSubmit, PostToolUse.")
    ],
) -> int:
    """Runs a Claude Code hook: the event's JSON on stdin, the hook's output on stdout.

    Claude Code runs this with the event's JSON on stdin. It never fails or blocks
    the agent's action (exit 2 would block it): stdin not closed within ``[hooks]
    stdin_seconds`` or over ``[hooks] payload_max_bytes`` is a ``HookInputError`` on
    stderr and exit 1, which Claude Code reports as a non-blocking error; anything
    else exits 0 with problems on stderr, and when the hook's work passes ``[hooks]
    deadline_seconds`` it prints nothing and the process exits at once."""
    try:
        hooks = importlib.import_module(f"{__package__}.hooks")
    except ImportError as exc:
        raise _unavailable("the Claude Code hooks module", exc) from None
    root = Path(run.args.root) if run.args.root is not None else None
    return hook_command.run(hooks, event, root, run.out.out)


# -- parsing: each command's arguments from its declaration ----------------------------------


def _json_value(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not JSON: {exc}") from None


def _words(text: str) -> list[str]:
    """A comma-separated list (``a,b``); blanks dropped, so ``""`` is the empty list."""
    return [part.strip() for part in text.split(",") if part.strip()]


class _Extend(argparse.Action):
    """A list option: each use adds its comma-separated values."""

    def __call__(self, parser: Any, namespace: Any, values: Any, option_string: str | None = None) -> None:
        setattr(namespace, self.dest, [*(getattr(namespace, self.dest) or []), *values])


def _kind_of(p: verbs.Param) -> Literal["bool", "list", "json", "value"]:
    base = p.base
    origin = typing.get_origin(base) or base
    if base is bool:
        return "bool"
    if origin in (list, tuple, collections.abc.Sequence) and base is not str:
        args = typing.get_args(base)
        if origin is tuple and args and all(a is not Ellipsis for a in args):
            return "json"  # a pair: [first, last]
        return "list"
    if origin in (dict, collections.abc.Mapping) or base is Any or typing.is_typeddict(base):
        return "json"
    return "value"


def _given(v: verbs.Verb, args: argparse.Namespace) -> dict[str, Any]:
    """The verb's arguments the command line gave (converted and bounded by the
    parser; the verb checks the rest, as for any Python caller). A typed object (a
    snapshot) is checked field by field against its declaration, as the servers
    check it: a bad field is an :class:`InvalidInputError` naming it."""
    given = {p.name: getattr(args, p.name) for p in v.params if getattr(args, p.name, None) is not None}
    for p in v.params:
        if p.name in given and typing.is_typeddict(p.base):
            given[p.name] = v.argument_json(p.name, given[p.name])
    return given


def _converter(p: verbs.Param) -> Callable[[str], Any]:
    """The argument's text as the parameter's type: an integer or a number within
    its declared bounds, a time (ISO-8601 or Unix seconds), or the text itself."""
    base = p.base
    low, high = p.minimum, p.maximum
    if any(isinstance(item, Parse) for item in verbs.metadata(p.annotation)):

        def parse(text: str) -> Any:
            try:
                return parse_time(text)
            except ValueError as exc:
                raise argparse.ArgumentTypeError(str(exc)) from None

        return parse
    if base not in (int, float):
        return str

    def number(text: str) -> Any:
        try:
            value = base(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {'an integer' if base is int else 'a number'}") from None
        if base is float and not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"must be a finite number, got {text!r}")
        if low is not None and value < low:
            raise argparse.ArgumentTypeError(f"must be >= {low}, got {text}")
        if high is not None and value > high:
            raise argparse.ArgumentTypeError(f"must be <= {high}, got {text}")
        return value

    return number


def _add_param(parser: argparse.ArgumentParser, p: verbs.Param) -> None:
    help = p.help or None
    if p.default not in (inspect.Parameter.empty, None, ()) and help is not None:
        help = f"{help} (default: {p.default})"
    kind = _kind_of(p)
    choices = p.choices or None
    if p.positional:
        nargs = None if p.required else "?"
        convert = _json_value if kind == "json" else _converter(p)
        parser.add_argument(p.name, nargs=nargs, choices=choices, type=convert, help=help, metavar=p.name.upper())
        return
    flag = ("-" if len(p.name) == 1 else "--") + p.name.replace("_", "-")
    if kind == "bool":
        parser.add_argument(flag, dest=p.name, action=argparse.BooleanOptionalAction, default=None, help=help)
    elif kind == "list":
        parser.add_argument(
            flag, dest=p.name, action=_Extend, type=_words, metavar="A,B", help=f"{help or ''} (comma-separated)"
        )
    else:
        convert = _json_value if kind == "json" else _converter(p)
        metavar = "JSON" if kind == "json" else None
        parser.add_argument(
            flag, dest=p.name, required=p.required, choices=choices, type=convert, metavar=metavar, help=help
        )


def build_parser() -> argparse.ArgumentParser:
    """The command line: a subcommand per verb of the registry offered on the CLI
    (the name with dashes), its arguments from the verb's parameters."""
    rooted = argparse.ArgumentParser(add_help=False)
    rooted.add_argument(
        "--root",
        metavar="DIR",
        help="the project (default: the nearest folder with .aircher/ from here upward)",
    )
    common = argparse.ArgumentParser(add_help=False, parents=[rooted])
    common.add_argument("--json", action="store_true", help="print JSON (the MCP tools' shapes) instead of tables")
    parser = argparse.ArgumentParser(
        prog="aircher-mem",
        description="Memory for LLM coding agents: code graph, episodic and long-term memory, context.",
        epilog='start with: aircher-mem index .  then: aircher-mem preview-context "<what you are about to do>" '
        "--show; exit codes: 1 error, 2 bad argument or path, 3 not found (no store, not indexed, no such symbol "
        "or memory), 4 store locked",
    )
    parser.add_argument("--version", action="version", version=f"aircher-mem {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for v in verbs.all_verbs("cli"):
        printed = "python" in v.surfaces or v.name in ("doctor", "hooks")  # a result: a table, or --json
        parent = common if printed else rooted
        p = sub.add_parser(v.cli_name, parents=[parent], help=v.summary, description=v.summary)
        if v.name in ("create_store", "index"):
            p.add_argument("path", nargs="?", help="the project folder (default: --root, else .)")
        for param in v.params:
            _add_param(p, param)
        for flag, help in CLI_OPTIONS.get(v.name, ()):
            p.add_argument(flag, action="store_true", help=help)
    return parser


#: Options of a command's presentation, not of its verb.
CLI_OPTIONS: dict[str, tuple[tuple[str, str], ...]] = {
    "index": (("--quiet", "no progress line"),),
    "preview_context": (("--show", "print the messages too"),),
}


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
        v = verbs.get(args.command)
        if "python" not in v.surfaces:  # a command of the CLI itself: it writes its own output
            result = v.function(Run(args, out), **_given(v, args))
            if isinstance(result, int):
                return result
        else:
            result = _verb_result(v, args)
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
