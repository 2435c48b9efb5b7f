"""What each of the four tiers of an assembled context is offered, gathered from the
stores for a set of signals (:class:`aircher_mem.prediction.Signals`). The tiers
themselves (budgets, placing, rendering) and the router are in
:mod:`aircher_mem.assembly`; :meth:`aircher_mem.Memory.assemble` calls both.

- critical: decisions about the current file and decisions the query recalls (with
  the reasons their causal chains hold); the open contradictions (at most
  ``[assembly] contradictions``, those about what the query recalls first); the
  failed tool calls of the last ``[assembly] error_hours`` and the learned fixes of
  those errors and of the recent errors given;
- relevant: the predicted files and the memories about them, decisions about the
  current file's imports and importers and the predicted files, the collaborator's
  preferences, the memories and turns recall finds and the memories the router
  loads from the query's domains (L1 to L3), the tasks started on the branch,
  similar past tasks, the code search's best hits;
- background: the project's L0 memories (conventions) that are important or that
  the query recalls, the current file's history, the tools run most around this
  time of day, workflows and patterns; then, with what the tiers leave (fillers),
  the other L0 memories as the router ranks them;
- index: the domains and modules memory knows, with counts, and the ids of what
  did not fit, to pass to recall or explain.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence

from .assembly import Candidate, Hierarchy, Routable
from .results import (
    CodeHit,
    FileInteraction,
    LearnedPattern,
    MemoryRecord,
    Prediction,
    Reason,
    RecallHit,
    Routed,
    Task,
    ToolRun,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .config import AssemblyPolicy
    from .longterm import LongTermMemory
    from .prediction import Signals

__all__ = ["gather", "index_of"]


def _memory(
    m: Routable | RecallHit, tier: str, reasons: list[Reason], score: float, because: Sequence[str] = ()
) -> Candidate:
    why = f" (because: {'; '.join(because)})" if because else ""
    return Candidate(tier, m.kind, f"memory:{m.id}", f"[memory {m.id}] ({m.kind}) {m.content}{why}", score, reasons)


def _task(task: Task, name: str, why: Reason) -> Candidate:
    outcome = f" -> {task.outcome}" if task.outcome else ""
    text = f"{name} ({task.status}): {task.description}{outcome}"
    return Candidate("relevant", "task", f"task:{task.task_id}", text, why.confidence, [why])


def _fix(p: LearnedPattern, signal: str) -> Candidate:
    d = p.data
    return Candidate(
        "critical",
        "fix",
        f"fix:{d.get('tool')}:{d.get('file')}:{d.get('error')}",
        f"Fixed before ({p.observed_count}x): {d.get('tool')} on {d.get('file')} failed with "
        f"'{d.get('error')}'; an edit of {d.get('file')} made it pass",
        p.confidence,
        [Reason(signal, "a learned error-then-fix pattern", p.confidence)],
    )


def gather(
    signals: Signals,
    *,
    prediction: Prediction,
    routed: Routed,
    hits: Sequence[RecallHit],
    known: Hierarchy,
    longterm: LongTermMemory,
    similar: Sequence[Task],
    failed: Sequence[ToolRun],
    history: Sequence[FileInteraction],
    fix_patterns: Sequence[LearnedPattern],
    on_branch: Sequence[Task],
    preferences: Sequence[MemoryRecord],
    code: Sequence[CodeHit],
    dependencies: Sequence[str],
    policy: AssemblyPolicy,
) -> dict[str, list[Candidate]]:
    """The candidates of each tier, best first within it (see the module), from what
    the stores gave: ``failed`` the failed tool calls of the last ``[assembly]
    error_hours``, ``history`` the current file's last interactions, newest first,
    ``fix_patterns`` the learned error-fix patterns, ``on_branch`` the tasks started
    on the branch, newest first, ``preferences`` the collaborator's."""
    offered: dict[str, list[Candidate]] = {"critical": [], "relevant": [], "background": [], "index": []}
    critical, relevant, background = offered["critical"], offered["relevant"], offered["background"]
    # critical: decisions about the file at hand (those about its imports, importers
    # and the predicted files are related: relevant), then errors and their fixes
    places = [*([signals.current_file] if signals.current_file else []), *dependencies]
    places += [f.path for f in prediction.files if f.path not in places]
    related: list[Candidate] = []
    for record, path in longterm.about(places, kinds=("decision",)):
        if path == signals.current_file:
            about = [Reason("code-ref", f"about {path}", 1.0)]
            critical.append(_memory(record, "critical", about, record.score, longterm.reasons_of(record.id)))
        else:
            related.append(
                _memory(
                    record, "relevant", [Reason("code-ref", f"about {path}, near the file open", 0.5)], record.score
                )
            )
    for hit in hits:
        if hit.kind == "decision":
            recalled_by = [Reason("query", "a decision the query recalls", 1.0)]
            critical.append(_memory(hit, "critical", recalled_by, hit.score, longterm.reasons_of(hit.id)))
    # open contradictions (seed 001's tier 1): those about what the query recalls first
    recalled = {hit.id for hit in hits}
    for open_one in longterm.first_open_contradictions(recalled, policy.contradictions):
        near = open_one.memory_a in recalled or open_one.memory_b in recalled
        disagree = Reason("contradiction", "two memories disagree" + (", one of them recalled" if near else ""), 1.0)
        critical.append(
            Candidate(
                "critical",
                "contradiction",
                f"contradiction:{open_one.id}",
                f"Open contradiction {open_one.id} ({open_one.rule}: {open_one.evidence}): "
                f"[memory {open_one.memory_a}] {open_one.content_a} / [memory {open_one.memory_b}] "
                f"{open_one.content_b}; settle it with resolve_contradiction",
                1.0 if near else 0.5,
                [disagree],
            )
        )
    for run in failed:
        where = f" on {run.file_path}" if run.file_path else ""
        critical.append(
            Candidate(
                "critical",
                "error",
                None,
                f"Failed {time.strftime('%Y-%m-%d %H:%M', time.gmtime(run.timestamp))}: {run.tool_name}{where}: "
                f"{run.error_message or 'no message'}",
                1.0,
                [Reason("error", f"a failed tool call in the last {policy.error_hours:g} h", 1.0)],
            )
        )
    failed_files = {run.file_path for run in failed if run.file_path}
    fixes = list(prediction.fixes)
    if failed_files:
        fixes += [p for p in fix_patterns if p.data.get("file") in failed_files and p not in fixes]
    critical += [_fix(p, "error") for p in fixes]
    # relevant: the prediction, the router's memories, recall's hits, past tasks, code
    for f in prediction.files:
        why = ", ".join(dict.fromkeys(r.signal for r in f.reasons))
        relevant.append(
            Candidate(
                "relevant",
                "prediction",
                f"file:{f.path}",
                f"Likely next: {f.path} ({f.confidence:.2f}: {why})",
                f.confidence,
                f.reasons,
            )
        )
    relevant += related
    for pm in prediction.memories:
        relevant.append(
            Candidate(
                "relevant",
                pm.kind,
                f"memory:{pm.id}",
                f"[memory {pm.id}] ({pm.kind}, about {pm.path}) {pm.content}",
                pm.confidence,
                [Reason("prediction", f"about {pm.path}, a predicted file", pm.confidence)],
            )
        )
    for m in preferences:
        relevant.append(
            _memory(m, "relevant", [Reason("collaborator", f"a preference of {signals.collaborator}", 1.0)], m.score)
        )
    # what the query finds, best recall score first (the router's memories with the
    # score recall gave them), then the router's memories recall did not score
    found: list[Candidate] = []
    for hit in hits:
        if hit.kind == "turn":
            turn = hit.turns[0] if hit.turns else None
            who = f"{turn.speaker or turn.role} " if turn is not None else ""
            when = f"({time.strftime('%Y-%m-%d', time.gmtime(turn.at))}) " if turn is not None else ""
            text = f"[turn {hit.id}] {who}{when}{hit.content}"
            found.append(
                Candidate(
                    "relevant",
                    "turn",
                    f"turn:{hit.id}",
                    text,
                    hit.score,
                    [Reason("query", "a turn recall finds", hit.score)],
                )
            )
        else:
            found.append(_memory(hit, "relevant", [Reason("query", "a memory recall finds", hit.score)], hit.score))
    at = {c.ref: i for i, c in enumerate(found)}
    unscored = []
    for m in routed.memories:
        if m.level == "L0":
            continue
        routed_why = Reason("route", f"{m.level} memory of domain {m.domain or '-'}", routed.confidence)
        i = at.get(f"memory:{m.id}")
        if i is not None:
            found[i] = found[i]._replace(reasons=[*found[i].reasons, routed_why])
        else:
            unscored.append(_memory(m, "relevant", [routed_why], m.score))
    found.sort(key=lambda c: -c.score)  # stable: recall's order among equal scores
    relevant += found + unscored
    for task in on_branch:
        if task.task_id != signals.task_id:
            on = Reason("branch", f"a task started on branch {signals.branch}", 0.6)
            relevant.append(_task(task, f"Task {task.task_id} on branch {task.branch}", on))
    for task in similar:
        if task.status != "active":  # in progress: not past work
            relevant.append(_task(task, f"Past task {task.task_id}", Reason("task", "a similar past task", 0.5)))
    for c in code:
        relevant.append(
            Candidate(
                "relevant",
                "code",
                f"code:{c.path}:{c.line}",
                f"Code: {c.path}:{c.line} {c.kind} {c.name or ''}".rstrip(),
                c.score,
                [Reason("query", "code the query finds", c.score)],
            )
        )
    # background: conventions (the router's L0 memories: the important ones, those the
    # query recalls that the relevant tier had no room for), the current file's
    # history, workflows, then the rest of the conventions
    recalled = {h.id for h in hits if h.kind != "turn"}
    conventions = [m for m in routed.memories if m.level == "L0"]
    conventions.sort(key=lambda m: (not m.importance, m.id not in recalled))  # stable: the router's order within
    rest = []
    for m in conventions:
        if m.importance or m.id in recalled:
            why = "an important project (L0) memory" if m.importance else "a project (L0) memory the query recalls"
            background.append(_memory(m, "background", [Reason("route", why, 1.0)], m.score))
        else:
            filler = _memory(m, "background", [Reason("route", "a project (L0) memory", 0.5)], m.score)
            rest.append(filler._replace(later=True))
    if signals.current_file and history:
        ops = Counter(i.operation for i in history)
        last = history[0]
        summary = ", ".join(f"{n} {op}{'' if n == 1 else 's'}" for op, n in sorted(ops.items()))
        note = f": {last.changes_summary}" if last.changes_summary else ""
        background.append(
            Candidate(
                "background",
                "history",
                f"history:{signals.current_file}",
                f"History of {signals.current_file}: {summary}; last {last.operation} "
                f"{time.strftime('%Y-%m-%d %H:%M', time.gmtime(last.timestamp))}{note}",
                0.5,
                [Reason("current-file", "what was done with the file open now", 0.5)],
            )
        )
    if prediction.workflows:
        runs = ", ".join(f"{w.tool} ({w.runs})" for w in prediction.workflows)
        background.append(
            Candidate(
                "background",
                "workflow",
                "hour",
                f"Around this time of day the tools run most were: {runs}",
                0.5,
                [Reason("time-of-day", "tools run within an hour of this time of day", 0.5)],
            )
        )
    for flow in known.flows[:10]:
        background.append(
            _memory(flow, "background", [Reason("activity", "a workflow or pattern of the project", 0.5)], flow.score)
        )
    background += rest
    return offered


def index_of(known: Hierarchy, left_out: Sequence[Candidate]) -> list[Candidate]:
    """The index tier: what memory knows about (domains and modules with their
    memory counts), and the ids of the memories, turns and tasks that did not fit."""
    out = []
    domains = Counter({d: len(members) for d, members in known.by_domain.items()})
    modules = known.modules
    if domains or modules:
        topics = [f"{d} ({n})" for d, n in domains.most_common(15)] + [f"{m} ({n})" for m, n in modules.most_common(15)]
        out.append(
            Candidate(
                "index",
                "topics",
                "index:topics",
                "Ask me about: " + ", ".join(topics),
                1.0,
                [Reason("index", "the domains and modules memory holds", 1.0)],
            )
        )
    groups: dict[str, list[str]] = {"memory": [], "turn": [], "task": []}
    for c in left_out:
        kind, _, ident = (c.ref or "").partition(":")
        if kind in groups and ident not in groups[kind]:
            groups[kind].append(ident)
    names = {"memory": "memories", "turn": "turns", "task": "tasks"}
    for kind, idents in groups.items():
        for at in range(0, len(idents), 12):  # in pieces, so a small index takes the first
            out.append(
                Candidate(
                    "index",
                    "pointers",
                    f"index:{kind}:{at}",
                    f"More {names[kind]} (did not fit; recall or explain them): " + ", ".join(idents[at : at + 12]),
                    1.0,
                    [Reason("index", "items the tiers had no room for", 1.0)],
                )
            )
    return out
