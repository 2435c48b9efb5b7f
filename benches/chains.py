"""query_chain end to end: "why did we ...?" answered with the decision's reasons.

Data: ``benches/data/decisions.jsonl`` (see ``benches/chains_extract.py``). Every
record's turns go into one long-term store through ``add_turn`` (its own session,
user and assistant turns as written; the chatter records are distractors), then
each decision record's ``question`` goes to ``query_chain``. The records of
``decisions_tune4.jsonl`` (written apart, some about the same decisions) go into a
store of their own. A question is
answered when the chain's decision came from the record's session and each
canonical reason has overlap >= 0.5 (``chains_extract.overlap``) with some node of
the chain other than the decision.

Baseline, in the same run: BM25 (bm25s) over the same turns; a question is
answered at k when every canonical reason has overlap >= 0.5 with one of the top
k turns of the record's session (k = 1 and 3).

    python benches/chains.py [--split tune|tune2|tune3|tune4|report|all] [--verbose]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from aircher_mem.longterm import LongTermMemory
from chains_extract import DATA, SPLITS, THRESHOLD, load, overlap

START = 1_700_000_000.0


def build(records: Sequence[dict[str, Any]]) -> LongTermMemory:
    lt = LongTermMemory(":memory:", clock=lambda: START + 86_400.0)
    at = START
    for r in records:
        for t in r["turns"]:
            lt.add_turn(session_id=r["id"], role=t["speaker"], text=t["text"], at=at)
            at += 60.0
    return lt


def answered_by_chain(lt: LongTermMemory, r: dict[str, Any], verbose: bool) -> bool:
    chain = lt.query_chain(r["question"])
    root = next((n for n in chain.nodes if n.node_type == "decision" and n.decision_id == chain.decision_id), None)
    said = [n.content for n in chain.nodes if n.node_type != "decision"]
    right = root is not None and root.session_id == r["id"]
    ok = right and all(any(overlap(s, reason) >= THRESHOLD for s in said) for reason in r["reasons"])
    if verbose:
        print(f"[{'ok' if ok else 'miss'}] {r['id']}: {r['question']!r}")
        print("    " + (chain.text or chain.reason).replace("\n", "\n    "))
    return ok


def bm25_baseline(records: Sequence[dict[str, Any]]) -> Any:
    import bm25s
    import numpy as np

    turns = [(r["id"], t["text"]) for r in records for t in r["turns"]]

    def tokenize(texts: list[str]) -> list[list[str]]:
        return bm25s.tokenize(texts, stopwords="en", return_ids=False, show_progress=False)  # type: ignore[no-any-return]

    retriever = bm25s.BM25()
    retriever.index(tokenize([text for _session, text in turns]), show_progress=False)
    vocab = retriever.vocab_dict

    def answered(r: dict[str, Any], k: int) -> bool:
        tokens = [tok for tok in tokenize([r["question"]])[0] if tok in vocab]
        if not tokens:
            return False
        scores = retriever.get_scores(tokens)
        top = [turns[i] for i in np.argsort(-scores, kind="stable")[:k] if scores[i] > 0]
        said = [text for session, text in top if session == r["id"]]
        return all(any(overlap(s, reason) >= THRESHOLD for s in said) for reason in r["reasons"])

    return answered


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", choices=[*SPLITS, "all"], default="all")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--verbose", "-v", action="store_true", help="print every answer")
    args = parser.parse_args(argv)
    records = load(args.data)
    splits = list(SPLITS) if args.split == "all" else [args.split]
    print("split   questions  query_chain  bm25@1  bm25@3")
    # tune4's records were written apart, about some of the same decisions: they make
    # a project of their own, in a store of their own (and the baseline's own index)
    for own in (False, True):
        group = [r for r in records if (r["split"] == "tune4") == own]
        wanted = [split for split in splits if (split == "tune4") == own]
        if not group or not wanted:
            continue
        lt = build(group)
        bm25 = bm25_baseline(group)
        for split in wanted:
            asked = [r for r in group if r["split"] == split and r["decision"] is not None]
            chain = sum(answered_by_chain(lt, r, args.verbose) for r in asked)
            at1 = sum(bm25(r, 1) for r in asked)
            at3 = sum(bm25(r, 3) for r in asked)
            n = max(len(asked), 1)
            print(f"{split:<7} {len(asked):>9}  {chain / n:>11.0%}  {at1 / n:>6.0%}  {at3 / n:>6.0%}")
        lt.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
