"""Replay real agent trajectories through DynamicContextManager and measure what
pruning costs the agent.

Each trajectory (mini-swe-agent JSONL, see ../shared/data/README.md) is fed event by
event: the system prompt (sticky), the task statement, every assistant action
(preceded by ``maybe_prune``, as before a model call), and every tool output, as a
CodeSnippet when it showed file lines and as a ToolResult otherwise. An edit of a
file makes everything shown of it before stale.

Measured per strategy and budget:

- re-reads held: reads of lines already shown since the file's last edit, for which
  the window still held at least half of those lines (the agent could have skipped
  the call); reported as a share of all such re-reads;
- edits without view: edits of a file of which the window held no current lines
  (edits in this data carry no line range, so the file is the target);
- tokens in the window at each model call, prunes, and the time ``maybe_prune``
  takes per model call.

Run it::

    python -m aircher_mem.replay ../shared/data/trajectories-mini-swe-agent-gemini3pro.tar.gz \
        --budget 4000 8000 16000 32000
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import sys
import tarfile
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from .config import Policy
from .context import DynamicContextManager
from .tokens import TokenCounter

__all__ = ["STRATEGIES", "ReplayResult", "load_trajectories", "replay", "summarize", "main"]

Event = dict[str, Any]

STRATEGIES: dict[str, Callable[[int], Policy]] = {
    "fifo": lambda budget: Policy.fifo(max_tokens=budget),
    "unweighted": lambda budget: Policy.unweighted(max_tokens=budget),
    "default": lambda budget: Policy(max_tokens=budget),
}
SECONDS_PER_EVENT = 30.0


def load_trajectories(path: str | Path, limit: int | None = None) -> Iterator[tuple[str, list[Event]]]:
    """(instance id, events) from a .tar.gz of JSONL files or a folder of them, in
    name order (an archive is read whole first, in one pass)."""
    path = Path(path)
    if path.is_dir():
        files = sorted(path.glob("**/*.jsonl"))[:limit]
        for file in files:
            with file.open(encoding="utf-8") as lines:
                yield file.stem, [json.loads(line) for line in lines if line.strip()]
        return
    # One pass in the archive's order ("r|*": a stream, no seeking back, which would
    # make gzip start again from the top for each member), then name order.
    found: dict[str, bytes] = {}
    with tarfile.open(path, "r|*") as tar:
        for member in tar:
            if member.isfile() and member.name.endswith(".jsonl"):
                stream = tar.extractfile(member)
                if stream is not None:
                    found[member.name] = stream.read()
    for name in sorted(found)[:limit]:
        yield Path(name).stem, [json.loads(line) for line in found[name].splitlines() if line.strip()]


class _CachedCounter(TokenCounter):
    """Counts each distinct text once across all replays."""

    def __init__(self, encoding: str = "cl100k_base") -> None:
        super().__init__(encoding)
        self._cache: dict[str, int] = {}

    def count(self, text: str) -> int:
        n = self._cache.get(text)
        if n is None:
            n = self._cache[text] = super().count(text)
        return n


@dataclasses.dataclass
class ReplayResult:
    instance: str
    strategy: str
    budget: int
    model_calls: int = 0
    rereads: int = 0
    rereads_held: int = 0
    edits: int = 0
    edits_without_view: int = 0
    tokens_at_calls: int = 0
    prunes: int = 0
    prune_seconds: list[float] = dataclasses.field(default_factory=list)


class _Shown:
    """What the agent has seen of each file, and which window items show it."""

    def __init__(self) -> None:
        self.epoch: dict[str, int] = {}
        self.since_edit: dict[str, set[int]] = {}
        self.views: dict[str, list[tuple[str, int, int, int]]] = {}  # file -> (item id, epoch, lo, hi)

    def held(self, manager: DynamicContextManager, path: str) -> set[int]:
        """Current lines of ``path`` that window items still show."""
        epoch = self.epoch.get(path, 0)
        lines: set[int] = set()
        for item_id, item_epoch, lo, hi in self.views.get(path, ()):
            if item_epoch == epoch and item_id in manager.window:
                lines.update(range(lo, hi + 1))
        return lines

    def edited(self, path: str) -> None:
        self.epoch[path] = self.epoch.get(path, 0) + 1
        self.since_edit[path] = set()


def _known(span: Any) -> bool:
    """A usable line range: [lo, hi] with 0 <= lo <= hi (some reads have no end)."""
    return (
        isinstance(span, list) and len(span) == 2 and all(isinstance(n, int) for n in span) and 0 <= span[0] <= span[1]
    )


def replay(
    events: Sequence[Event],
    policy: Policy,
    *,
    instance: str = "",
    strategy: str = "",
    tokens: TokenCounter | None = None,
) -> ReplayResult:
    """Feeds one trajectory through a fresh DynamicContextManager."""
    clock = [1_700_000_000.0]
    manager = DynamicContextManager(policy, session_id=instance or "replay", clock=lambda: clock[0], tokens=tokens)
    result = ReplayResult(instance, strategy, policy.max_tokens)
    shown = _Shown()
    for event in events:
        clock[0] += SECONDS_PER_EVENT
        kind, text = event.get("kind"), event.get("text") or ""
        if kind == "system":
            manager.add_system_prompt(text)
        elif kind == "task":
            manager.set_current_task("task")
            manager.add_user_message(text)
        elif kind == "action":
            started = time.perf_counter()
            pruned = manager.maybe_prune()
            result.prune_seconds.append(time.perf_counter() - started)
            result.prunes += pruned is not None
            result.model_calls += 1
            result.tokens_at_calls += manager.window.token_count
            manager.add_assistant_response(text, tool_calls=[event.get("tool") or "bash"])
            for write in event.get("writes") or []:
                path = write["file_path"]
                if event.get("op") == "edit":
                    result.edits += 1
                    result.edits_without_view += not shown.held(manager, path)
                shown.edited(path)
                manager.file_edited(path)
        elif kind == "observation":
            ranged = [r for r in event.get("reads") or [] if r.get("ok", True) and _known(r.get("line_range"))]
            for read in ranged:
                path, (lo, hi) = read["file_path"], read["line_range"]
                lines = set(range(lo, hi + 1))
                already = lines & shown.since_edit.get(path, set())
                if already:
                    result.rereads += 1
                    result.rereads_held += 2 * len(already & shown.held(manager, path)) >= len(already)
                shown.since_edit.setdefault(path, set()).update(lines)
            if ranged:
                first = ranged[0]
                item = manager.add_code_snippet(
                    text, file_path=first["file_path"], line_range=(first["line_range"][0], first["line_range"][1])
                )
                for read in ranged:
                    path = read["file_path"]
                    shown.views.setdefault(path, []).append(
                        (item.id, shown.epoch.get(path, 0), read["line_range"][0], read["line_range"][1])
                    )
            else:
                manager.add_tool_result(text, tool_name=event.get("tool") or "bash", file_path=event.get("file_path"))
    return result


@dataclasses.dataclass(frozen=True)
class Summary:
    strategy: str
    budget: int
    trajectories: int
    rereads: int
    rereads_held: int
    edits: int
    edits_without_view: int
    mean_tokens: float
    prunes: int
    prune_ms_mean: float
    prune_ms_p99: float

    @property
    def held_share(self) -> float:
        return self.rereads_held / self.rereads if self.rereads else 1.0


def summarize(results: Iterable[ReplayResult]) -> list[Summary]:
    groups: dict[tuple[str, int], list[ReplayResult]] = {}
    for r in results:
        groups.setdefault((r.strategy, r.budget), []).append(r)
    out = []
    for (strategy, budget), rs in sorted(groups.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        times = sorted(t for r in rs for t in r.prune_seconds) or [0.0]
        calls = sum(r.model_calls for r in rs) or 1
        out.append(
            Summary(
                strategy,
                budget,
                len(rs),
                sum(r.rereads for r in rs),
                sum(r.rereads_held for r in rs),
                sum(r.edits for r in rs),
                sum(r.edits_without_view for r in rs),
                sum(r.tokens_at_calls for r in rs) / calls,
                sum(r.prunes for r in rs),
                statistics.fmean(times) * 1e3,
                times[min(len(times) - 1, int(len(times) * 0.99))] * 1e3,
            )
        )
    return out


def table(summaries: Sequence[Summary]) -> str:
    lines = [
        "| budget | strategy | re-reads held | edits without view | mean tokens at call | prunes "
        "| maybe_prune mean | p99 |",
        "|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    for s in summaries:
        lines.append(
            f"| {s.budget:,} | {s.strategy} | {s.held_share:.1%} ({s.rereads_held}/{s.rereads}) "
            f"| {s.edits_without_view}/{s.edits} | {s.mean_tokens:,.0f} | {s.prunes:,} "
            f"| {s.prune_ms_mean:.3f} ms | {s.prune_ms_p99:.3f} ms |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m aircher_mem.replay", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("path", help="a .tar.gz of trajectory JSONL files, or a folder of them")
    parser.add_argument("--budget", type=int, nargs="+", default=[4000, 8000, 16000, 32000])
    parser.add_argument("--strategy", nargs="+", choices=sorted(STRATEGIES), default=list(STRATEGIES))
    parser.add_argument("--limit", type=int, help="replay only the first N trajectories")
    parser.add_argument(
        "--half",
        choices=["all", "first", "second"],
        default="all",
        help="trajectories in name order: the first half (fitting) or the second (reporting)",
    )
    args = parser.parse_args(argv)
    if not Path(args.path).exists():
        parser.error(f"{args.path}: no such file or folder")
    trajectories = list(load_trajectories(args.path, args.limit))
    middle = len(trajectories) // 2
    trajectories = {"all": trajectories, "first": trajectories[:middle], "second": trajectories[middle:]}[args.half]
    counter = _CachedCounter()
    results = []
    started = time.perf_counter()
    for n, (instance, events) in enumerate(trajectories, 1):
        for budget in args.budget:
            for strategy in args.strategy:
                results.append(
                    replay(events, STRATEGIES[strategy](budget), instance=instance, strategy=strategy, tokens=counter)
                )
        if n % 50 == 0 or n == len(trajectories):
            print(
                f"replayed {n}/{len(trajectories)} trajectories ({time.perf_counter() - started:.0f} s)",
                file=sys.stderr,
            )
    print(f"{len(trajectories)} trajectories ({args.half}), {SECONDS_PER_EVENT:.0f} s per event\n")
    print(table(summarize(results)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
