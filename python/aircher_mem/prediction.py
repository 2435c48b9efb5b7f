"""The predictive engine: from what the agent just did to what it will need next.

Signals (:class:`Signals`) are what a caller knows now: the message, the current
file, recent errors, the activity, the branch, the task. The engine adds what the
episodic store recorded: the files read and edited lately, the files the last tool
calls named (a ``grep`` result, a traceback), the files worked on together with
them in past tasks, and the files the tasks started on the branch touched; and, with
a code graph, the current file's imports and importers. Each source gives a file a
confidence (its ``[assembly]`` weight, less for older evidence), and a file's confidence is ``1 - prod(1 - c)`` over its
reasons. The memories whose ``code_ref`` or ``module`` is a predicted file come
with it, and the learned error-then-fix patterns whose error the recent errors
share words with.

Measured on real agent trajectories by ``benches/prediction.py``.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from ._core import tokenize
from .errors import UnknownItemError
from .mentions import paths_in
from .plain import Plain
from .results import LearnedPattern, PredictedFile, PredictedMemory, PredictedWorkflow, Prediction, Reason

# Only for type checkers. (Not typing.TYPE_CHECKING: type checkers treat any name
# TYPE_CHECKING as true.)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from ._core import GraphView, KnowledgeGraph
    from .config import AssemblyPolicy
    from .episodic import EpisodicMemory
    from .longterm import LongTermMemory

__all__ = ["ACTIVITIES", "Signals", "predict", "workflows_of", "neighbours", "error_fixes"]

ACTIVITIES = ("debugging", "feature", "review", "refactor", "exploring")


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class Signals(Plain):
    """What the caller knows now; every field optional. ``current_file`` is
    project-relative; ``recent_errors`` are error texts (a traceback, a failing
    test's output)."""

    query: str | None = None
    current_file: str | None = None
    recent_errors: tuple[str, ...] = ()
    activity: str | None = None
    branch: str | None = None
    task_id: str | None = None
    collaborator: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in dataclasses.asdict(self).items() if v}


class _Files:
    """Files and their reasons, combined as ``1 - prod(1 - c)``."""

    def __init__(self) -> None:
        self.reasons: dict[str, list[Reason]] = {}

    def add(self, path: str, signal: str, detail: str, confidence: float) -> None:
        if confidence > 0.0:
            self.reasons.setdefault(path, []).append(Reason(signal, detail, round(min(confidence, 1.0), 6)))

    def ranked(self, limit: int) -> list[PredictedFile]:
        files = []
        for path, reasons in self.reasons.items():
            miss = 1.0
            for reason in reasons:
                miss *= 1.0 - reason.confidence
            files.append(PredictedFile(path, round(1.0 - miss, 6), sorted(reasons, key=lambda r: -r.confidence)))
        files.sort(key=lambda f: (-f.confidence, f.path))
        return files[:limit]


def predict(
    signals: Signals,
    *,
    episodic: EpisodicMemory,
    longterm: LongTermMemory | None,
    graph: KnowledgeGraph | GraphView | None,
    exists: Callable[[str], bool],
    policy: AssemblyPolicy,
    limit: int | None = None,
    workflows: Sequence[PredictedWorkflow] = (),
) -> Prediction:
    """The files, memories and fixes ``signals`` predict (see the module's
    docstring), with ``workflows`` (:func:`workflows_of`). ``exists(path)`` says
    whether a project-relative path is a file of the project: a named file that is
    not, and was never opened, is not predicted."""
    limit = policy.predict_files if limit is None else limit
    files = _Files()
    task = signals.task_id
    recent = episodic.recent_files(policy.predict_recent, task_id=task) if policy.predict_recent else []
    if signals.current_file:
        files.add(signals.current_file, "current-file", "the file open now", 1.0)
    weight = policy.recent_weight
    for path in recent:
        files.add(path, "recent", "read or edited lately", weight)
        weight *= policy.recent_decay
    known = set(recent)
    named = episodic.recent_mentions(policy.predict_calls, task_id=task) if policy.predict_calls else []
    for text in (signals.query, *signals.recent_errors):
        if text:
            named = [*paths_in(text), *named]
    weight = policy.mention_weight
    taken = 0
    for path in dict.fromkeys(named):
        if taken >= policy.predict_mentions:
            break
        if path in known or exists(path):
            files.add(path, "mentioned", "named by a recent tool call, error or message", weight)
            weight *= policy.mention_decay
            taken += 1
    seeds = ([signals.current_file] if signals.current_file else []) + [p for p in recent if p != signals.current_file]
    seeds = seeds[: policy.predict_companions_of]
    if seeds and policy.companion_weight > 0.0:
        for path, share in episodic.touched_with(seeds, exclude_task=task, limit=limit):
            files.add(
                path,
                "co-touched",
                f"worked on with {seeds[0]} in past tasks ({share:.0%})",
                policy.companion_weight * share,
            )
    if signals.branch and policy.branch_tasks and policy.branch_weight > 0.0:
        on_branch = [t for t in episodic.branch_tasks(signals.branch, policy.branch_tasks) if t.task_id != task]
        touched = Counter(path for t in on_branch for path in dict.fromkeys(t.files_touched))
        for path, n in touched.most_common(limit):
            files.add(
                path,
                "branch",
                f"worked on in {n} of {len(on_branch)} tasks on branch {signals.branch}",
                policy.branch_weight * n / len(on_branch),
            )
    if graph is not None and seeds and policy.graph_weight > 0.0:
        first = seeds[0]
        imports, importers = neighbours(graph, first)
        for path in imports[:limit]:
            files.add(path, "imports", f"imported by {first}", policy.graph_weight)
        for path in importers[:limit]:
            files.add(path, "imported-by", f"imports {first}", policy.graph_weight)
    ranked = files.ranked(limit)
    memories: list[PredictedMemory] = []
    if longterm is not None and ranked and policy.predict_memories:
        confidence = {f.path: f.confidence for f in ranked}
        for record, path in longterm.about([f.path for f in ranked], limit=policy.predict_memories):
            memories.append(PredictedMemory(record.id, record.kind, record.content, path, confidence[path]))
    fixes = error_fixes(episodic, signals.recent_errors) if signals.recent_errors else []
    mean = sum(f.confidence for f in ranked) / len(ranked) if ranked else 0.0
    return Prediction(signals.to_dict(), ranked, memories, fixes, list(workflows), round(mean, 6))


def workflows_of(at_hour: Sequence[tuple[str, int, int]], policy: AssemblyPolicy) -> list[PredictedWorkflow]:
    """The tools :meth:`EpisodicMemory.tools_at_hour` found, those run at least
    ``hour_min_runs`` times, each with its share of the runs then."""
    return [
        PredictedWorkflow(tool, runs, round(runs / total, 6))
        for tool, runs, total in at_hour
        if runs >= policy.hour_min_runs
    ]


def neighbours(graph: KnowledgeGraph | GraphView, path: str) -> tuple[list[str], list[str]]:
    """The project files ``path`` imports and those importing it; none for a file
    the graph does not hold (new, or not source)."""
    try:
        return graph.get_dependencies(path), graph.get_dependents(path)
    except UnknownItemError:
        return [], []


def error_fixes(episodic: EpisodicMemory, errors: Sequence[str], *, min_share: float = 0.5) -> list[LearnedPattern]:
    """The learned error-then-fix patterns whose error shares at least
    ``min_share`` of its words with one of ``errors``, most observed first."""
    wanted = [set(tokenize(e, stem=True)) for e in errors if e]
    found = []
    for pattern in episodic.patterns("error-fix"):
        words = set(tokenize(str(pattern.data.get("error", "")), stem=True))
        if words and any(len(words & w) >= min_share * len(words) for w in wanted):
            found.append(pattern)
    return found
