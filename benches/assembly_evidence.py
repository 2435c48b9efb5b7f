"""Does the assembled context keep the evidence? LoCoMo dev, one memory per conversation.

For each question (categories 1-4 with evidence, as ``benches/locomo.py`` loads them),
in the same run, on the same memory (every turn stored as ``benches/locomo.py`` stores
it, extraction on):

- ``assemble``: ``Memory.assemble(budget=B, query=question)``; the evidence it holds =
  the source turns of every ``turn:N`` and ``memory:N`` item placed in a tier;
- ``recall``: ``Memory.recall(question, k=30)``; each hit rendered as one line (what
  ``assemble`` renders for it: ``[memory N] (kind) content`` or ``[turn N] speaker
  (date) text``), lines taken best first while the text stays within B tokens
  (cl100k_base), skipping a line that does not fit; the evidence it holds = the
  source turns of the hits taken;
- ``bm25``: BM25 over turns (``benches/locomo.py``'s baseline), the turns rendered
  as ``date speaker: text`` and taken the same way within B tokens.

A question counts as kept when every one of its evidence turns is held (``all``), and
``any`` when at least one is. Reported per category and overall, with the tokens used
and the time per question.

    python benches/assembly_evidence.py [--data PATH] [--budget 1000] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from locomo import CATEGORIES, Conversation, Run, Unavailable, bm25_document, load, percentile, store_turn

Held = Callable[[str, int], tuple[set[str], int]]  # question, budget -> evidence turns held, tokens used
RECALL_K = 30


def _greedy(
    lines: Iterable[tuple[str, Sequence[str]]], budget: int, count: Callable[[str], int]
) -> tuple[set[str], int]:
    """The turns of the lines taken best first while the joined text fits ``budget``."""
    taken: list[str] = []
    held: set[str] = set()
    used = 0
    for line, turns in lines:
        cost = count("\n".join([*taken, line])) if taken else count(line)
        if cost > budget:
            continue
        taken.append(line)
        held.update(turns)
        used = cost
    return held, used


def memory_systems(conv: Conversation, tmp: Path) -> tuple[Held, Held, Callable[[], None]]:
    from aircher_mem import Memory
    from aircher_mem.tokens import TokenCounter

    root = tmp / conv.sample_id
    root.mkdir(parents=True, exist_ok=True)
    memory = Memory.open(root)
    dia_of: dict[int, str] = {}
    for turn in conv.turns:
        dia_of[store_turn(memory, conv, turn)] = turn.dia_id
    tokens = TokenCounter()
    sources: dict[int, set[str]] = {}

    def memory_turns(memory_id: int) -> set[str]:
        if memory_id not in sources:
            links = memory.explain(memory_id).links
            sources[memory_id] = {dia_of[link.turn.id] for link in links if link.turn.id in dia_of}
        return sources[memory_id]

    def assembled(question: str, budget: int) -> tuple[set[str], int]:
        got = memory.assemble(budget=budget, query=question)
        held: set[str] = set()
        for tier in got.tiers:
            for item in tier.items:
                kind, _, ident = (item.ref or "").partition(":")
                if kind == "turn" and int(ident) in dia_of:
                    held.add(dia_of[int(ident)])
                elif kind == "memory":
                    held |= memory_turns(int(ident))
        return held, got.token_count

    def recalled(question: str, budget: int) -> tuple[set[str], int]:
        lines = []
        for hit in memory.recall(question, k=RECALL_K).hits:
            turns = [dia_of[t.id] for t in hit.turns if t.id in dia_of]
            if hit.kind == "turn":
                t = hit.turns[0] if hit.turns else None
                who = f"{t.speaker or t.role} " if t is not None else ""
                when = f"({time.strftime('%Y-%m-%d', time.gmtime(t.at))}) " if t is not None else ""
                lines.append((f"- [turn {hit.id}] {who}{when}{' '.join(hit.content.split())}", turns))
            else:
                lines.append((f"- [memory {hit.id}] ({hit.kind}) {' '.join(hit.content.split())}", turns))
        return _greedy(lines, budget, tokens.count)

    return assembled, recalled, memory.close


def bm25_held(conv: Conversation) -> Held:
    from aircher_mem.tokens import TokenCounter
    from locomo import bm25_system

    retrieve = bm25_system(conv, Run("bm25"))
    by_id = {t.dia_id: t for t in conv.turns}
    tokens = TokenCounter()

    def held(question: str, budget: int) -> tuple[set[str], int]:
        ranked = retrieve(question, RECALL_K)
        return _greedy(((f"- {bm25_document(by_id[d])}", [d]) for d in ranked), budget, tokens.count)

    return held


def main(argv: Sequence[str] | None = None) -> int:
    from benchdata import DATA_ENV, LOCOMO

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, help=f"locomo JSON (default: {LOCOMO.name} in ${DATA_ENV} or shared/data)")
    parser.add_argument("--budget", type=int, default=1000, help="tokens (default: %(default)s)")
    parser.add_argument("--json", type=Path, help="write the summary here")
    args = parser.parse_args(argv)
    data = args.data or LOCOMO.path
    if not data.is_file():
        print(f"skipped: {LOCOMO.missing()}, or pass --data PATH" if args.data is None else f"skipped: no {data}")
        return 0
    conversations = load(data)
    systems = ("assemble", "recall", "bm25")
    rows: dict[str, list[tuple[int, bool, bool, int, float]]] = {s: [] for s in systems}
    with tempfile.TemporaryDirectory(prefix="assembly-evidence-") as tmp:
        for conv in conversations:
            print(f"{conv.sample_id}: {len(conv.turns)} turns, {len(conv.questions)} questions", file=sys.stderr)
            try:
                assembled, recalled, close = memory_systems(conv, Path(tmp))
                bm25 = bm25_held(conv)
            except Unavailable as exc:
                print(f"not run: {exc}", file=sys.stderr)
                return 1
            try:
                for q in conv.questions:
                    wanted = set(q.evidence)
                    for name, held_by in zip(systems, (assembled, recalled, bm25)):
                        start = time.perf_counter()
                        held, used = held_by(q.text, args.budget)
                        seconds = time.perf_counter() - start
                        rows[name].append((q.category, wanted <= held, bool(wanted & held), used, seconds))
            finally:
                close()
    summary: dict[str, Any] = {}
    print(f"evidence held within {args.budget} tokens, {len(rows['assemble'])} questions")
    print(f"{'system':<9} {'group':<12} {'n':>4} {'all':>6} {'any':>6} {'tokens':>7} {'p50 ms':>7} {'p95 ms':>7}")
    for name in systems:
        groups = {"all": rows[name]}
        groups.update({label: [r for r in rows[name] if r[0] == cat] for cat, label in CATEGORIES.items()})
        summary[name] = {}
        for label, got in groups.items():
            if not got:
                continue
            ms = [1e3 * r[4] for r in got]
            stats = {
                "n": len(got),
                "all": sum(r[1] for r in got) / len(got),
                "any": sum(r[2] for r in got) / len(got),
                "tokens": statistics.fmean(r[3] for r in got),
                "p50_ms": percentile(ms, 50),
                "p95_ms": percentile(ms, 95),
            }
            summary[name][label] = stats
            print(
                f"{name:<9} {label:<12} {stats['n']:>4} {stats['all']:>6.3f} {stats['any']:>6.3f} "
                f"{stats['tokens']:>7.0f} {stats['p50_ms']:>7.1f} {stats['p95_ms']:>7.1f}"
            )
    if args.json:
        args.json.write_text(json.dumps({"budget": args.budget, "summary": summary}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
