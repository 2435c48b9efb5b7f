"""Episode boundaries and links: are a conversation's topics told apart, and are
episodes about one topic linked across sessions?

Data: ``benches/data/episodes_topics.jsonl``, 48 sessions in 12 threads (a project
with a coding assistant, two friends chatting, a user with an assistant for work
and life), 20-40 turns each, every turn labelled with its topic by the author who
wrote them (this project's, MIT), who read neither the rules nor their code. A topic
may come back later in the session or in a later session of its thread (the same
label). Threads are split in halves: ``tune`` (thresholds may be chosen on it) and
``report`` (never).

Each thread is stored in a ``Memory`` of its own (its sessions a day apart, a
minute between turns, so no time gap splits them) and consolidated once; the
episodes the pass makes are compared with the labelled segments. Systems, in the
same run:

- ``fixed``: runs of the labelled segments' mean length, cut from each session's
  start (a baseline that knows the answer's mean length);
- ``words``: the default rule (TextTiling over the turns' words), the dense channel off;
- ``words+meaning``: the dense channel on (``[retrieval] dense = "on"``: the turns'
  vectors blend into the similarity, ``[lifecycle] episode_meaning_weight``, and
  episodes alike in meaning are linked, ``link_cosine``).

Boundaries: Pk (Beeferman et al.: the share of turn pairs ``k`` apart, ``k`` half
the mean labelled segment, that one segmentation puts together and the other
apart; lower is better) and boundary precision / recall / F1, exact and within
one turn. Links: the pairs of episodes about one topic (their turns' most common
label is the same) that ``related_to`` joins, precision and recall, against the
pairs a link could join (episodes of one thread).

    python benches/episodes.py [--split tune|report|all] [--system NAME ...] [--set KEY=VALUE ...] [--json OUT]
"""

from __future__ import annotations

import argparse
import collections
import json
import statistics
import sys
import tempfile
from collections.abc import Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

__all__ = ["DATA", "load", "segments", "pk", "boundary_scores", "link_counts", "main"]

DATA = Path(__file__).with_name("data") / "episodes_topics.jsonl"
SYSTEMS = ("fixed", "words", "words+meaning")
START = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)


def load(path: Path = DATA, split: str = "all") -> list[dict[str, Any]]:
    """The sessions of ``split`` ("tune", "report" or "all"), in file order."""
    sessions = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [s for s in sessions if split in ("all", s["split"])]


def segments(labels: Sequence[str]) -> list[int]:
    """Each turn's segment number: a new segment where the label changes."""
    out, number = [], 0
    for i, label in enumerate(labels):
        if i and label != labels[i - 1]:
            number += 1
        out.append(number)
    return out


def starts(numbers: Sequence[object]) -> set[int]:
    return {i for i in range(1, len(numbers)) if numbers[i] != numbers[i - 1]}


def pk(truth: Sequence[Sequence[int]], found: Sequence[Sequence[object]], k: int) -> float:
    """Pk over many sessions: the share of pairs ``k`` turns apart on which the two
    segmentations disagree (together or apart)."""
    wrong = total = 0
    for true, got in zip(truth, found, strict=True):
        for i in range(len(true) - k):
            total += 1
            wrong += (true[i] == true[i + k]) != (got[i] == got[i + k])
    return wrong / total if total else 0.0


def boundary_scores(
    truth: Sequence[Sequence[int]], found: Sequence[Sequence[object]], tolerance: int
) -> dict[str, float]:
    """Precision, recall and F1 of the found segment starts against the true ones,
    each true start matched once by a found start at most ``tolerance`` turns away."""
    hits = n_true = n_found = 0
    for true, got in zip(truth, found, strict=True):
        want, have = sorted(starts(true)), sorted(starts(got))
        n_true, n_found = n_true + len(want), n_found + len(have)
        free = list(have)
        for start in want:
            near = [b for b in free if abs(b - start) <= tolerance]
            if near:
                free.remove(min(near, key=lambda b: abs(b - start)))
                hits += 1
    precision = hits / n_found if n_found else 0.0
    recall = hits / n_true if n_true else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": precision, "recall": recall, "f1": f1}


def fixed_runs(length: int, n: int) -> list[int]:
    return [i // length for i in range(n)]


def consolidated(
    thread: list[dict[str, Any]], root: Path, dense: bool, lifecycle: dict[str, Any]
) -> tuple[list[list[int]], set[tuple[int, int]]]:
    """One thread stored and consolidated: each session's turns' episode ids, and
    the ``related_to`` pairs between its episodes."""
    from aircher_mem import Memory, Policy

    settings = {"retrieval": {"dense": "on" if dense else "off"}, "lifecycle": lifecycle}
    policy = Policy.from_dict(settings, source="episodes.py")
    root.mkdir(parents=True)
    ids: list[list[int]] = []
    with Memory.open(root, policy=policy) as memory:
        last = START
        for session in thread:
            day = START + timedelta(days=3 * (session["session"] - 1))
            sid = f"{session['thread']}-{session['session']}"
            turn_ids = []
            with memory.batch():
                for n, turn in enumerate(session["turns"]):
                    last = day + timedelta(minutes=n)
                    role = "assistant" if turn["speaker"] in ("assistant", "B") else "user"
                    added = memory.add_turn(sid, role, turn["text"], speaker=turn["speaker"], at=last, extract=False)
                    turn_ids.append(added.turn_id)
            ids.append(turn_ids)
        memory.consolidate(now=last + timedelta(days=1))
        lt = memory.longterm
        episodes = [[lt._episode_of[t] for t in turn_ids] for turn_ids in ids]
        mine = {e for session in episodes for e in session}
        links = {
            (min(a, b), max(a, b))
            for a, edges in lt._edges.items()
            for relation, b in edges
            if relation == "related_to" and a in mine and b in mine
        }
    return episodes, links


def link_counts(
    sessions: list[dict[str, Any]], episodes: list[list[int]], links: set[tuple[int, int]]
) -> collections.Counter[str]:
    """Links against the episodes' topics (an episode's topic is its turns' most
    common label): the pairs about one topic, the links, the links between such."""
    votes: dict[int, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for session, ids in zip(sessions, episodes, strict=True):
        for turn, episode in zip(session["turns"], ids, strict=True):
            votes[episode][turn["topic"]] += 1
    topic = {e: c.most_common(1)[0][0] for e, c in votes.items()}
    ordered = sorted(topic)
    wanted = {(a, b) for i, a in enumerate(ordered) for b in ordered[i + 1 :] if topic[a] == topic[b]}
    return collections.Counter({"pairs_wanted": len(wanted), "links": len(links), "right": len(wanted & links)})


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--split", choices=("tune", "report", "all"), default="all")
    parser.add_argument("--system", action="append", choices=SYSTEMS, help="default: all three")
    parser.add_argument("--json", type=Path, help="write the figures here")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="a [lifecycle] setting")
    args = parser.parse_args(argv)
    lifecycle = {key: json.loads(value) for key, value in (item.split("=", 1) for item in args.set)}
    systems = args.system or list(SYSTEMS)
    if "words+meaning" in systems:
        from aircher_mem.embeddings import available

        ok, why = available()
        if not ok:
            print(f"words+meaning skipped: {why}", file=sys.stderr)
            systems.remove("words+meaning")
    splits = ("tune", "report") if args.split == "all" else (args.split,)
    figures: dict[str, Any] = {}
    for split in splits:
        sessions = load(args.data, split)
        truth = [segments([t["topic"] for t in s["turns"]]) for s in sessions]
        lengths = [sum(1 for x in true if x == n) for true in truth for n in set(true)]
        mean = statistics.fmean(lengths)
        k = max(2, round(mean / 2))
        threads: dict[str, list[dict[str, Any]]] = collections.defaultdict(list)
        for s in sessions:
            threads[s["thread"]].append(s)
        row: dict[str, Any] = {
            "sessions": len(sessions),
            "turns": sum(len(s["turns"]) for s in sessions),
            "segments": len(lengths),
            "mean_segment": mean,
            "k": k,
        }
        for system in systems:
            if system == "fixed":
                found = [fixed_runs(max(1, round(mean)), len(true)) for true in truth]
                links = None
            else:
                found, counts = [], collections.Counter[str]()
                with tempfile.TemporaryDirectory(prefix="episodes-") as tmp:
                    for name, thread in threads.items():
                        got, linked = consolidated(thread, Path(tmp) / name, system == "words+meaning", lifecycle)
                        found.extend(got)
                        counts += link_counts(thread, got, linked)
                links = {
                    **counts,
                    "precision": counts["right"] / counts["links"] if counts["links"] else 0.0,
                    "recall": counts["right"] / counts["pairs_wanted"] if counts["pairs_wanted"] else 0.0,
                }
            row[system] = {
                "pk": pk(truth, found, k),
                "exact": boundary_scores(truth, found, 0),
                "within_1": boundary_scores(truth, found, 1),
                "episodes": sum(len(set(f)) for f in found),
                "links": links,
            }
        figures[split] = row
    for split, row in figures.items():
        print(
            f"{split}: {row['sessions']} sessions, {row['turns']} turns, {row['segments']} labelled segments "
            f"(mean {row['mean_segment']:.1f} turns), Pk at k={row['k']}"
        )
        print("  system          Pk     exact P / R / F1     within 1 P / R / F1   episodes   links P / R")
        for system in systems:
            r = row[system]
            e, w = r["exact"], r["within_1"]
            link = "-" if r["links"] is None else f"{r['links']['precision']:.2f} / {r['links']['recall']:.2f}"
            print(
                f"  {system:<14} {r['pk']:.3f}   {e['precision']:.2f} / {e['recall']:.2f} / {e['f1']:.2f}"
                f"     {w['precision']:.2f} / {w['recall']:.2f} / {w['f1']:.2f}     {r['episodes']:>5}   {link}"
            )
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
