"""False forgetting on LoCoMo: does an aged memory still find what a question needs,
and how much less does it serve?

For each conversation, in the same run, on the same turns (stored as
``benches/locomo.py`` stores them):

- ``bm25``: BM25 over the raw turns (``locomo.bm25_system``), the baseline;
- ``unaged``: ``Memory.open`` with every turn added, then ``recall(question, k=10)``;
- ``aged``: the same turns in a second store, consolidated once with ``now`` = the
  conversation's last turn + ``--days`` (default 120: most sessions warm or cold),
  then the same questions, asked in order (a question that unpacks an episode
  leaves it hot for the next ones, as in use);
- ``served``: aged the same way, with ``[lifecycle] recall_finds_by = "served"``: a
  warm or cold item is found only by what its layer serves (003's lazy unpacking).

Reported per system: recall_all@10 (every evidence turn among the first 10 distinct
turns of the hits, as in ``locomo.py``), and for the memory systems the tokens recall
serves for its top 10 hits (each hit's ``content`` plus the text of each of its
turns that differs from it; cl100k_base), the share of hits served warm, cold or
unpacked, and the consolidation's time and layers.

Episode boundaries are measured too: for every question whose evidence turns (two
or more) are all in one session, whether they fall in one episode, against fixed
runs of the same mean length cut from the session's start (the same number of
pieces without the boundaries' rule).

    python benches/aging.py [--data PATH] [--days 120] [--limit N] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

import locomo

K = 10


def served_tokens(count: Any, hits: Sequence[Any]) -> int:
    total = 0
    for hit in hits:
        total += count(hit.content)
        total += sum(count(t.text) for t in hit.turns if t.text != hit.content)
    return total


def dia_ids(hits: Sequence[Any]) -> list[str]:
    return locomo.distinct_turns(
        [str(t.metadata["dia_id"]) for t in hit.turns if "dia_id" in (t.metadata or {})] for hit in hits
    )


def open_memory(root: Path, conv: Any, finds_by: str = "raw") -> Any:
    import dataclasses

    from aircher_mem import Memory, Policy

    root.mkdir(parents=True, exist_ok=True)
    policy = Policy()
    policy = dataclasses.replace(policy, lifecycle=dataclasses.replace(policy.lifecycle, recall_finds_by=finds_by))
    memory = Memory.open(root, policy=policy)
    with memory.batch():
        for turn in conv.turns:
            locomo.store_turn(memory, conv, turn)
    return memory


def boundaries(memory: Any, conv: Any) -> tuple[int, int, int, float]:
    """(questions with same-session evidence, of those in one episode, in one fixed
    run, mean episode length)."""
    lt = memory.longterm
    by_dia: dict[str, int] = {}
    for turn in lt._turns.values():
        dia = json.loads(turn.metadata).get("dia_id")
        if dia is not None:
            by_dia[str(dia)] = turn.id
    lengths = [len(turns) for turns in lt._episode_turns.values()]
    mean = statistics.fmean(lengths) if lengths else 1.0
    size = max(1, round(mean))
    asked = same_episode = same_run = 0
    for q in conv.questions:
        ids = [by_dia[e] for e in q.evidence if e in by_dia]
        if len(ids) < 2:
            continue
        sessions = {lt._turns[i].session_id for i in ids}
        if len(sessions) != 1:
            continue
        asked += 1
        same_episode += len({lt._episode_of.get(i) for i in ids}) == 1
        same_run += len({lt._position[i] // size for i in ids}) == 1
    return asked, same_episode, same_run, mean


def main(argv: Sequence[str] | None = None) -> int:
    from benchdata import DATA_ENV, LOCOMO

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, help=f"locomo JSON (default: {LOCOMO.name} in ${DATA_ENV})")
    parser.add_argument("--days", type=float, default=120.0, help="age past the last turn (default: %(default)s)")
    parser.add_argument("--limit", type=int, default=0, help="only the first N conversations")
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args(argv)
    data = args.data or LOCOMO.path
    if not data.is_file():
        print(f"skipped: {LOCOMO.missing()}, or pass --data PATH" if args.data is None else f"skipped: no {data}")
        return 0
    try:
        import aircher_mem  # noqa: F401
        from aircher_mem.tokens import TokenCounter
    except ImportError as exc:
        print(f"skipped: aircher_mem is not installed ({exc})", file=sys.stderr)
        return 1
    conversations = locomo.load(data)
    if args.limit:
        conversations = conversations[: args.limit]
    count = TokenCounter("cl100k_base").count
    found = {"bm25": 0, "unaged": 0, "aged": 0, "served": 0}
    tokens = {"unaged": 0, "aged": 0, "served": 0}
    tiers: dict[str, int] = {"hot": 0, "warm": 0, "cold": 0, "unpacked": 0}
    served_tiers: dict[str, int] = dict.fromkeys(tiers, 0)
    consolidations: list[float] = []
    layer_sizes = {"hot": 0, "warm": 0, "cold": 0}
    episodes = questions = 0
    asked = same_episode = same_run = 0
    lengths: list[float] = []
    run = locomo.Run("bm25")
    with tempfile.TemporaryDirectory(prefix="aging-") as tmp:
        for conv in conversations:
            bm25 = locomo.bm25_system(conv, run)
            unaged = open_memory(Path(tmp) / conv.sample_id / "unaged", conv)
            aged = open_memory(Path(tmp) / conv.sample_id / "aged", conv)
            by_served = open_memory(Path(tmp) / conv.sample_id / "served", conv, "served")
            last = max(t.at for t in conv.turns)
            start = time.perf_counter()
            report = aged.consolidate(now=last + timedelta(days=args.days))
            consolidations.append(time.perf_counter() - start)
            by_served.consolidate(now=last + timedelta(days=args.days))
            episodes += report.episodes
            for name, size in report.tiers.items():
                layer_sizes[name] += size
            a, e, r, mean = boundaries(aged, conv)
            asked, same_episode, same_run = asked + a, same_episode + e, same_run + r
            lengths.append(mean)
            try:
                for q in conv.questions:
                    questions += 1
                    found["bm25"] += locomo.recall_all(bm25(q.text, K), q.evidence, (K,))[K]
                    for name, memory in (("unaged", unaged), ("aged", aged), ("served", by_served)):
                        hits = memory.recall(q.text, k=K).hits
                        found[name] += locomo.recall_all(dia_ids(hits), q.evidence, (K,))[K]
                        tokens[name] += served_tokens(count, hits)
                        if name != "unaged":
                            for hit in hits:
                                (tiers if name == "aged" else served_tiers)[
                                    "unpacked" if hit.unpacked else hit.tier
                                ] += 1
            finally:
                unaged.close()
                aged.close()
                by_served.close()
    total_hits = sum(tiers.values()) or 1
    total_served = sum(served_tiers.values()) or 1
    figures = {
        "conversations": len(conversations),
        "questions": questions,
        "days": args.days,
        "recall_all@10": {name: value / max(1, questions) for name, value in found.items()},
        "tokens_per_question": {name: value / max(1, questions) for name, value in tokens.items()},
        "token_drop": 1.0 - tokens["aged"] / max(1, tokens["unaged"]),
        "aged_hits": {name: value / total_hits for name, value in tiers.items()},
        "served_hits": {name: value / total_served for name, value in served_tiers.items()},
        "episodes": episodes,
        "mean_episode_turns": statistics.fmean(lengths) if lengths else 0.0,
        "layers_after": layer_sizes,
        "consolidate_seconds": {"median": statistics.median(consolidations), "max": max(consolidations)},
        "boundaries": {"questions": asked, "one_episode": same_episode, "one_fixed_run": same_run},
    }
    print(f"{figures['conversations']} conversations, {questions} questions, aged {args.days:g} days")
    print()
    print("system    recall_all@10   tokens served / question (top 10)")
    for name in ("bm25", "unaged", "aged", "served"):
        served = f"{figures['tokens_per_question'][name]:.0f}" if name in tokens else "-"
        print(f"{name:<9} {figures['recall_all@10'][name]:>13.3f}   {served}")
    print()
    print(f"tokens served: {100 * figures['token_drop']:.1f} % fewer aged than unaged")
    for name in ("aged", "served"):
        shares = ", ".join(f"{layer} {100 * value:.1f} %" for layer, value in figures[f"{name}_hits"].items())
        print(f"{name} hits: {shares}")
    print(
        f"episodes: {episodes} (mean {figures['mean_episode_turns']:.1f} turns); layers after: "
        + ", ".join(f"{k} {v}" for k, v in layer_sizes.items())
    )
    print(
        f"consolidation: median {figures['consolidate_seconds']['median']:.2f} s, "
        f"max {figures['consolidate_seconds']['max']:.2f} s per conversation"
    )
    if asked:
        print(
            f"boundaries: of {asked} questions with evidence in one session, {same_episode} "
            f"({100 * same_episode / asked:.1f} %) have it in one episode, {same_run} "
            f"({100 * same_run / asked:.1f} %) in one fixed run of the same mean length"
        )
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
