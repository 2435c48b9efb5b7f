"""How the CLI shows a result: one renderer per result type (text and tables; JSON
is :mod:`.wire`'s), and the progress line of an index. It imports the result
types and the standard library only, so that a command answered by the project's
server (:mod:`.command_line`) renders without the service."""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, TextIO

from ..results import (
    Assembled,
    Calls,
    CausalChain,
    CodeResult,
    CodeSearch,
    CoEdits,
    ConsolidationReport,
    ContextPreview,
    Contradiction,
    ContradictionList,
    Conversation,
    Dependencies,
    Doctor,
    ExtractedFacts,
    FactReview,
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
    ProjectDiscovery,
    Recall,
    Recorded,
    Reference,
    ReferenceList,
    Remembered,
    Routed,
    Stats,
    StoreCopy,
    Symbols,
    Task,
    Tasks,
    Turn,
    TurnAdded,
    Users,
)
from ..root import CONFIG_NAME, STORE_DIR
from . import wire
from .thin import TOKEN_ENV

__all__ = ["Output", "ProgressLine", "RENDER", "describe_progress", "show", "show_context"]


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


# -- renderers: one per result type, text only (JSON is wire's) ------------------------------


def show_init(r: InitResult, out: Output) -> None:
    out.line(
        f"{'created' if r.created else 'using existing'} store {r.store} "
        f"(config {STORE_DIR}/{CONFIG_NAME}); next: aircher-mem index {r.root}"
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


def show_store_copy(r: StoreCopy, out: Output) -> None:
    out.table(["table", "rows", "digest"], [(t.table, t.rows, t.digest[:16]) for t in r.tables if t.rows])
    out.line(f"copied {r.rows} rows from {r.source} to {r.target} in {_duration(r.seconds)}; verified row for row")


def show_users(r: Users, out: Output) -> None:
    if r.users:
        out.table(["user", "token made"], [(u.name, _when(u.created_at)[:16]) for u in r.users])
    else:
        out.line("no user has a token: requests need server.json's token")
    if r.token is not None:
        out.line(f"the token (shown this once; the server keeps only its SHA-256): {r.token}")
        out.line(f"its holder sets {TOKEN_ENV}=<token> for aircher-mem, or sends Authorization: Bearer <token>")


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
                    _short(h.content, 60)
                    + "".join(f" ({note})" for note in h.notes)
                    + ("" if h.tier == "hot" else f" [{h.tier}]")
                    + (" [unpacked]" if h.unpacked else ""),
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
    if r.contradictions:
        out.line("contradictions:")
        _contradiction_table(r.contradictions, out)
    if r.ttl:
        out.line(f"ttl: {r.ttl}")
    out.line(f"gc outlook: {r.outlook}")


def _contradiction_table(rows: list[Contradiction], out: Output) -> None:
    out.table(
        ["id", "a", "b", "rule", "evidence", "status"],
        [(c.id, c.memory_a, c.memory_b, c.rule, _short(c.evidence, 50), c.resolution or "open") for c in rows],
    )


def show_chain(r: CausalChain, out: Output) -> None:
    if r.decision_id is None:
        out.line(r.reason)
        return
    out.line(r.text)
    out.line("")
    out.line(r.mermaid)


def show_contradictions(r: ContradictionList, out: Output) -> None:
    if not r.contradictions:
        out.line("no contradictions")
        return
    for c in r.contradictions:
        show_contradiction(c, out)


def show_contradiction(c: Contradiction, out: Output) -> None:
    settled = "open" if c.resolution is None else f"resolved {c.resolution} {_when(c.resolved_at or 0.0)}"
    out.line(f"contradiction {c.id} ({settled}): {c.rule}, {c.evidence}; found {_when(c.detected_at)} ({c.origin})")
    out.line(f"  a #{c.memory_a}: {_short(c.content_a, 100)}")
    out.line(f"  b #{c.memory_b}: {_short(c.content_b, 100)}")
    if c.note:
        out.line(f"  note: {c.note}")


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


def show_consolidation(r: ConsolidationReport, out: Output) -> None:
    would = "would " if r.dry_run else ""
    head = "consolidation dry run, nothing changed" if r.dry_run else "consolidated"
    out.line(f"{head} as of {_when(r.now)}")
    out.line(f"episodes: {would}create {r.episodes}, {would}extend {r.extended}; linked {r.linked}")
    left = f" ({r.pending} left for the next pass)" if r.pending else ""
    out.line(
        f"{would}merge {r.deduped}, summarize {r.summarized}, compress {r.compressed}{left}, "
        f"forget {r.forgotten}; TTL expiries {r.expired}; contradictions {r.contradictions_found}"
    )
    layers = ", ".join(f"{name} {count}" for name, count in r.tiers.items())
    out.line(f"layers: {layers} ({r.moved} moved)")
    if r.actions:
        out.table(["memory", "action", "why"], [(a.memory_id or "-", a.action, a.reason) for a in r.actions])


def show_extracted_facts(r: ExtractedFacts, out: Output) -> None:
    if not r.candidates:
        out.line("no facts in these changes")
    else:
        out.table(
            ["memory", "action", "conf", "level", "kind", "fact", "code"],
            [
                (
                    c.memory_id or "",
                    c.action,
                    f"{c.confidence:.2f}",
                    c.level,
                    c.kind,
                    _short(c.content, 70),
                    c.code_ref or "",
                )
                for c in r.candidates
            ],
        )
    more = f"; {r.more} more not kept ([knowledge] max_candidates)" if r.more else ""
    out.line(f"{r.pending_approval} fact(s) wait for review_fact{more}")


def show_project_discovery(r: ProjectDiscovery, out: Output) -> None:
    kinds = ", ".join(f"{t['type']} ({t['file']})" for t in r.types) or "no build file found"
    out.line(f"project: {kinds}")
    if r.frameworks:
        out.line(f"frameworks: {', '.join(r.frameworks)}")
    for kind, command in r.commands.items():
        out.line(f"{kind}: {command}")
    if r.domains:
        out.table(
            ["domain", "path", "files", "score", "main modules"],
            [(d.name, d.path, d.files, d.score, ", ".join(d.main_modules)) for d in r.domains],
        )
    if r.task_files:
        out.line(f"files for the task: {', '.join(r.task_files)}")
    known = len(r.facts) - r.facts_created
    out.line(f"{r.facts_created} fact(s) created, {known} known already; {r.discovery_tokens} tokens")
    if r.partial is not None:
        out.line(f"(from the first {r.partial.files:,} of {r.partial.total:,} files: the first index runs)")


def show_fact_review(r: FactReview, out: Output) -> None:
    if r.memory is None:
        out.line(f"fact {r.memory_id} rejected: forgotten for good, not proposed again")
        return
    out.line(f"fact {r.memory_id} approved: an active memory now")
    show_memory(r.memory, out)


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
    StoreCopy: show_store_copy,
    Users: show_users,
    TurnAdded: show_turn_added,
    Remembered: show_remembered,
    MemoryList: show_memories,
    MemoryRecord: show_memory,
    Conversation: show_conversation,
    Recall: show_recall,
    MemoryExplanation: show_explanation,
    GcReport: show_gc,
    ConsolidationReport: show_consolidation,
    ContradictionList: show_contradictions,
    CausalChain: show_chain,
    Contradiction: show_contradiction,
    Forgotten: show_forgotten,
    ExtractedFacts: show_extracted_facts,
    FactReview: show_fact_review,
    ProjectDiscovery: show_project_discovery,
    FeedbackResult: show_feedback,
    Prediction: show_prediction,
    Routed: show_routed,
    Assembled: show_assembled,
}


def show(result: Any, out: Output, *, show_messages: bool = False) -> None:
    """Writes ``result`` to ``out``: its JSON with ``--json``, else its renderer's
    text (a context preview with its messages when ``show_messages``)."""
    if out.as_json:
        out.json(result)
    elif isinstance(result, ContextPreview):
        show_context(result, out, show=show_messages)
    else:
        RENDER[type(result)](result, out)
