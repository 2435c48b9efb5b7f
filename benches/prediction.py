"""Next-file prediction on real agent trajectories: replay what a coding agent did into a
store and, at each step, ask which files it will open next.

    python benches/prediction.py [ARCHIVE] [--trees DIR] [--half tune|held-out|all] [--limit N]
                                 [--sets django,sympy] [--set KEY=VALUE ...] [--json OUT]

``ARCHIVE`` is the mini-swe-agent trajectories (default
``../shared/data/trajectories-mini-swe-agent-gemini3pro.tar.gz`` beside the repository, or
in ``$AIRCHER_DATA``), read in one pass with ``tarfile`` (a folder of JSONL files goes to
``aircher_mem.replay.load_trajectories``).

Protocol:

- A *step* is one assistant action (event kind ``action``) and its observation (the
  next ``observation`` event before the following action). The files a step *opens*
  are the observation's ``reads`` with ``ok`` true, plus its ``writes`` when its ``op``
  is ``edit`` (a file created with op ``write`` is not opened). Paths lose a leading
  ``/testbed/`` and ``./``; a path the store refuses as outside its root (``/tmp/...``)
  is counted, neither recorded nor a target.
- A *set* is the repository prefix of the instance id (``django``, ``sympy``, ...).
  Each set has one store, rooted in an empty temp folder or, with ``--trees DIR``, in a
  temp copy of ``DIR/<set>/`` when that exists (so that the named files of the project
  exist, which the store requires of a tool call's ``mentions``). A set's trajectories
  are replayed in name order into its store: companions from earlier tasks count.
- Per trajectory: ``task("start", instance_id, description=<task text>)``, then per
  step, on a synthetic clock (30 s per step, an hour between trajectories):
  ``record_tool_call("bash", {"command": <action text>}, success=<"<returncode>0</returncode>"
  in the observation>, mentions=paths_in(<observation text without "/testbed/"> + "\\n" +
  <action text>), task_id=..., at=...)``, then ``record_file_interaction(path, "read" |
  "edit", ...)`` per opened file. Then, when the next 5 steps open any file, the
  predictors are asked (at most 10 files each) and scored against the *targets*, the
  union of the files opened in those 5 steps. The task is completed at its end.
- Predictors: ``predict`` = ``Memory.predict(task_id=tid, limit=10)``; ``recent`` =
  ``episodic.recent_files(10, task_id=tid)``; ``co-edits`` =
  ``episodic.touched_with(episodic.recent_files(3, task_id=tid), edits_only=True,
  exclude_task=tid, limit=10)``.
- Metrics: held = |prediction & targets| / |targets|, pooled (sum held / sum targets)
  and as the mean over steps of each step's share; ``ceiling`` = the share of the
  targets opened or named (``paths_in`` as above, normalized) in the trajectory up to
  and including the step, the most a predictor that only recalls can hold; the time
  of each ``Memory.predict`` call (median and p95, ms).
- Halves: ``sha256(instance_id).digest()[0] % 2`` is 0 for ``tune``, 1 for
  ``held-out``. ``--half all`` replays every trajectory and reports each half and all;
  ``--half tune`` (or ``held-out``) replays that half only, so the stores then hold no
  task of the other half and its figures differ a little from its row under ``all``.

``--set KEY=VALUE`` overrides ``[assembly]`` keys (``AssemblyPolicy``): the stores open
with ``Policy(assembly=AssemblyPolicy(**overrides))``, else with the default ``Policy()``.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import shutil
import statistics
import sys
import tarfile
import tempfile
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from benchdata import TRAJECTORIES

HALVES = ("tune", "held-out")
HORIZON = 5  # steps whose opened files are the targets
TOP = 10  # files per predictor
STEP_SECONDS = 30.0
TASK_GAP_SECONDS = 3600.0
START = 1_700_000_000.0
PREDICTORS = ("predict", "recent", "co-edits")
TESTBED = "/testbed/"
OK = "<returncode>0</returncode>"


def normalize(path: str) -> str:
    """A trajectory's path without a leading ``/testbed/`` and ``./``."""
    if path.startswith(TESTBED):
        path = path[len(TESTBED) :]
    while path.startswith("./"):
        path = path[2:]
    return path


def half_of(instance: str) -> str:
    return HALVES[hashlib.sha256(instance.encode()).digest()[0] % 2]


def set_of(instance: str) -> str:
    return instance.split("__", 1)[0]


@dataclasses.dataclass(frozen=True)
class Step:
    command: str
    output: str
    success: bool
    reads: tuple[str, ...]
    edits: tuple[str, ...]

    @property
    def opened(self) -> set[str]:
        return {*self.reads, *self.edits}


def steps_of(events: Sequence[Mapping[str, Any]]) -> list[Step]:
    """The trajectory's steps: each action with the observation that follows it."""
    steps = []
    for i, event in enumerate(events):
        if event.get("kind") != "action":
            continue
        observation: Mapping[str, Any] = {}
        for later in events[i + 1 :]:
            if later.get("kind") == "action":
                break
            if later.get("kind") == "observation":
                observation = later
                break
        output = str(observation.get("text") or "")
        reads = tuple(dict.fromkeys(normalize(r["file_path"]) for r in observation.get("reads") or () if r.get("ok")))
        edits: tuple[str, ...] = ()
        if observation.get("op") == "edit":
            edits = tuple(dict.fromkeys(normalize(w["file_path"]) for w in observation.get("writes") or ()))
        steps.append(Step(str(event.get("text") or ""), output, OK in output, reads, edits))
    return steps


def task_text(events: Sequence[Mapping[str, Any]], instance: str) -> str:
    for event in events:
        if event.get("kind") == "task" and event.get("text"):
            return str(event["text"])
    return instance


@dataclasses.dataclass
class Tally:
    """Sums over scored steps."""

    trajectories: int = 0
    steps: int = 0
    scored: int = 0
    targets: int = 0
    held: dict[str, int] = dataclasses.field(default_factory=lambda: dict.fromkeys(PREDICTORS, 0))
    shares: dict[str, float] = dataclasses.field(default_factory=lambda: dict.fromkeys(PREDICTORS, 0.0))
    seen: int = 0
    seen_share: float = 0.0
    predict_ms: list[float] = dataclasses.field(default_factory=list)
    rejected: int = 0

    def add(self, other: Tally) -> None:
        self.trajectories += other.trajectories
        self.steps += other.steps
        self.scored += other.scored
        self.targets += other.targets
        for name in PREDICTORS:
            self.held[name] += other.held[name]
            self.shares[name] += other.shares[name]
        self.seen += other.seen
        self.seen_share += other.seen_share
        self.predict_ms.extend(other.predict_ms)
        self.rejected += other.rejected

    def summary(self) -> dict[str, Any]:
        def pooled(n: float) -> float:
            return n / self.targets if self.targets else 0.0

        def mean(n: float) -> float:
            return n / self.scored if self.scored else 0.0

        ms = sorted(self.predict_ms)
        return {
            "trajectories": self.trajectories,
            "steps": self.steps,
            "scored_steps": self.scored,
            "targets": self.targets,
            **{name: {"held": pooled(self.held[name]), "per_step": mean(self.shares[name])} for name in PREDICTORS},
            "ceiling": {"held": pooled(self.seen), "per_step": mean(self.seen_share)},
            "predict_ms": {
                "median": statistics.median(ms) if ms else 0.0,
                "p95": ms[min(len(ms) - 1, int(0.95 * len(ms)))] if ms else 0.0,
                "max": ms[-1] if ms else 0.0,
            },
            "rejected_paths": self.rejected,
        }


def parse_overrides(items: Iterable[str]) -> dict[str, Any]:
    """``--set KEY=VALUE`` pairs; a value is JSON (numbers, true/false) or else a string.
    An unknown ``[assembly]`` key exits, listing the known ones."""
    from aircher_mem.config import AssemblyPolicy

    out: dict[str, Any] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            raise SystemExit(f"--set wants KEY=VALUE, got {item!r}")
        try:
            out[key.strip()] = json.loads(raw.strip())
        except json.JSONDecodeError:
            out[key.strip()] = raw.strip()
    unknown = sorted(set(out) - set(AssemblyPolicy.keys()))
    if unknown:
        raise SystemExit(f"unknown [assembly] keys {unknown}; known: {', '.join(AssemblyPolicy.keys())}")
    return out


def make_policy(overrides: Mapping[str, Any]) -> Any:
    from aircher_mem import Policy
    from aircher_mem.config import AssemblyPolicy

    return Policy(assembly=AssemblyPolicy(**overrides)) if overrides else Policy()


def replay_set(
    name: str,
    trajectories: Sequence[tuple[str, list[dict[str, Any]]]],
    policy: Any,
    trees: Path | None,
    work: Path,
) -> dict[str, Tally]:
    """Replays one set's trajectories into one store; the tallies per half."""
    from aircher_mem import Memory
    from aircher_mem.errors import InvalidInputError
    from aircher_mem.mentions import paths_in

    root = work / name
    tree = trees / name if trees is not None else None
    if tree is not None and tree.is_dir():
        shutil.copytree(tree, root, ignore=shutil.ignore_patterns(".git", ".aircher"), symlinks=True)
    else:
        root.mkdir()
    tallies = {half: Tally() for half in HALVES}
    clock = START
    with Memory.open(root, policy=policy) as memory:
        episodic = memory.episodic

        def inside(path: str) -> bool:
            try:
                memory.relative(path)
            except InvalidInputError:
                return False
            return True

        for instance, events in trajectories:
            tally = tallies[half_of(instance)]
            tally.trajectories += 1
            steps = steps_of(events)
            tally.steps += len(steps)
            opened: list[set[str]] = []
            for step in steps:
                kept = {p for p in step.opened if inside(p)}
                tally.rejected += len(step.opened) - len(kept)
                opened.append(kept)
            memory.task("start", instance, description=task_text(events, instance))
            seen: set[str] = set()
            for i, step in enumerate(steps):
                at = clock + i * STEP_SECONDS
                named = paths_in(step.output.replace(TESTBED, "") + "\n" + step.command)
                memory.record_tool_call(
                    "bash", {"command": step.command}, success=step.success, mentions=named, task_id=instance, at=at
                )
                for path, operation in [*((p, "read") for p in step.reads), *((p, "edit") for p in step.edits)]:
                    if inside(path):
                        memory.record_file_interaction(path, operation, task_id=instance, at=at)
                seen |= opened[i]
                seen.update(normalize(p) for p in named)
                targets: set[str] = set().union(*opened[i + 1 : i + 1 + HORIZON])
                if not targets:
                    continue
                began = time.perf_counter()
                prediction = memory.predict(task_id=instance, limit=TOP)
                tally.predict_ms.append((time.perf_counter() - began) * 1000)
                recent = episodic.recent_files(TOP, task_id=instance)
                co_edits = episodic.touched_with(
                    episodic.recent_files(3, task_id=instance), edits_only=True, exclude_task=instance, limit=TOP
                )
                guesses = {
                    "predict": [f.path for f in prediction.files],
                    "recent": recent,
                    "co-edits": [path for path, _ in co_edits],
                }
                tally.scored += 1
                tally.targets += len(targets)
                for predictor, files in guesses.items():
                    held = len(targets & set(files[:TOP]))
                    tally.held[predictor] += held
                    tally.shares[predictor] += held / len(targets)
                known = len(targets & seen)
                tally.seen += known
                tally.seen_share += known / len(targets)
            memory.task("complete", instance)
            clock += len(steps) * STEP_SECONDS + TASK_GAP_SECONDS
    return tallies


def load(archive: Path) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """(instance id, events) in name order. A folder goes to
    ``aircher_mem.replay.load_trajectories``; a .tar.gz is read here in one pass
    (``load_trajectories`` opens its members in name order, not archive order, so
    gzip decompresses from the start again for each backward seek: 30 s, not 1.5 s)."""
    if archive.is_dir():
        from aircher_mem.replay import load_trajectories

        yield from load_trajectories(archive)
        return
    found: dict[str, list[dict[str, Any]]] = {}
    with tarfile.open(archive) as tar:
        for member in tar:
            stream = tar.extractfile(member) if member.isfile() and member.name.endswith(".jsonl") else None
            if stream is not None:
                found[member.name] = [json.loads(line) for line in stream if line.strip()]
    for name in sorted(found):
        yield Path(name).stem, found[name]


def run(
    archive: Path,
    *,
    half: str,
    limit: int | None,
    sets: Sequence[str],
    overrides: Mapping[str, Any],
    trees: Path | None,
) -> dict[str, Any]:
    by_set: dict[str, list[tuple[str, list[dict[str, Any]]]]] = {}
    for instance, events in load(archive):
        name = set_of(instance)
        if sets and name not in sets:
            continue
        if half != "all" and half_of(instance) != half:
            continue
        chosen = by_set.setdefault(name, [])
        if limit is None or len(chosen) < limit:
            chosen.append((instance, events))
    policy = make_policy(overrides)
    results: dict[str, dict[str, Tally]] = {}
    with tempfile.TemporaryDirectory(prefix="aircher-prediction-") as work:
        for name in sorted(by_set):
            began = time.perf_counter()
            tallies = replay_set(name, by_set[name], policy, trees, Path(work))
            results[name] = tallies
            both = Tally()
            for tally in tallies.values():
                both.add(tally)
            s = both.summary()
            root = "tree" if trees is not None and (trees / name).is_dir() else "empty root"
            print(
                f"{name}: {s['trajectories']} trajectories, {s['scored_steps']} scored steps, "
                f"predict {s['predict']['held']:.1%}, {root}, {time.perf_counter() - began:.1f} s",
                file=sys.stderr,
            )
    halves = HALVES if half == "all" else (half,)
    report: dict[str, Any] = {"archive": str(archive), "half": half, "overrides": dict(overrides), "halves": {}}
    for which in (*halves, "all") if half == "all" else halves:
        rows: dict[str, Any] = {}
        total = Tally()
        for name, tallies in results.items():
            tally = Tally()
            for h in halves if which == "all" else (which,):
                tally.add(tallies[h])
            if tally.trajectories:
                rows[name] = tally.summary()
                total.add(tally)
        rows["all"] = total.summary()
        report["halves"][which] = rows
    return report


def print_report(report: Mapping[str, Any]) -> None:
    for which, rows in report["halves"].items():
        print(f"\n## {which}  (held: pooled / per-step mean; top {TOP}, next {HORIZON} steps)\n")
        print("| set | traj | steps | scored | targets | predict | recent | co-edits | ceiling | predict ms p50/p95 |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for name, s in rows.items():
            cells = " | ".join(f"{s[k]['held']:.1%} / {s[k]['per_step']:.1%}" for k in (*PREDICTORS, "ceiling"))
            ms = s["predict_ms"]
            label = f"**{name}**" if name == "all" else name
            print(
                f"| {label} | {s['trajectories']} | {s['steps']} | {s['scored_steps']} | {s['targets']} | "
                f"{cells} | {ms['median']:.1f} / {ms['p95']:.1f} |"
            )
    last = list(report["halves"].values())[-1]["all"]
    rejected = last["rejected_paths"]
    print(f"\nopened paths outside the root (not recorded, not targets): {rejected}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "archive", nargs="?", type=Path, default=None, help=f"the trajectories (default {TRAJECTORIES.path})"
    )
    parser.add_argument("--trees", type=Path, help="DIR/<set>/ is a source tree of that set's repository")
    parser.add_argument("--half", choices=("tune", "held-out", "all"), default="all")
    parser.add_argument("--limit", type=int, help="trajectories per set at most (in name order)")
    parser.add_argument("--sets", default="", help="comma-separated sets, e.g. django,sympy (default all)")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--json", type=Path, metavar="OUT", help="write the report here")
    args = parser.parse_args(argv)

    archive = args.archive if args.archive is not None else TRAJECTORIES.path
    if not archive.exists():
        print(TRAJECTORIES.missing() if args.archive is None else f"no trajectories at {archive}", file=sys.stderr)
        return 2
    if args.trees is not None and not args.trees.is_dir():
        parser.error(f"--trees {args.trees} is not a folder")
    overrides = parse_overrides(args.overrides)
    sets = [s.strip() for s in args.sets.split(",") if s.strip()]
    began = time.perf_counter()
    report = run(archive, half=args.half, limit=args.limit, sets=sets, overrides=overrides, trees=args.trees)
    report["seconds"] = time.perf_counter() - began
    print_report(report)
    print(f"\ntotal {report['seconds']:.1f} s")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
