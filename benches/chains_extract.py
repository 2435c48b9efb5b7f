"""Decisions and their reasons found in conversation turns (``decisions_in``).

Data: ``benches/data/decisions.jsonl``, coding-agent conversations written for this
bench. A record has ``turns`` (speaker, text), a canonical ``decision`` with its
``reasons`` (null and [] for chatter that decides nothing) and a ``split``: "tune"
(the half the rules were adjusted on), "tune2" (written later for two forms the rules
missed on "tune", adjusted on too), "tune3" (16 decisions and 4 chatter records in
other phrasings, written later still, adjusted on too), "tune4" (60 decisions and 20
chatter records in ``decisions_tune4.jsonl``, written by an author who read neither
the rules nor the other records; adjusted on) or "report" (held out).

Each record's turns are joined one per line and read at once, as a window of the
conversation: a reason given in the next turn can attach to the decision. Matching
uses content words (``token_set``: stemmed, stop words left out) and
``overlap(said, canonical)`` = the share of the canonical text's words that the
said text holds:

- found: some candidate's decision has overlap >= 0.5 with the canonical decision
  (the best such candidate is the match);
- reasons: found, and each canonical reason has overlap >= 0.5 with some link text
  of the matched candidate;
- other: candidates on decision records that match nothing (extra, possibly wrong);
- false: candidates on null records, and how many null records have one.

The overlap is one-sided (a long clause holding the canonical words matches); the
rules keep clauses short, and ``--verbose`` prints every candidate to check by eye.

Chatter at length: with the LoCoMo dev conversations present (``locomo-dev.json``, CC
BY-NC 4.0: friends chatting about their lives, no project in sight), each turn is read
on its own and the candidates it gives are counted per 1,000 turns (with
``--verbose``, printed): a person's own choice ("Last week I decided to run for
office again") is one, encouragement ("Let's keep going!") is not.

    python benches/chains_extract.py [--split tune|tune2|tune3|tune4|report|all] [--verbose]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from aircher_mem.longterm.chains_extract import DecisionCandidate, decisions_in
from aircher_mem.longterm.extract import token_set

DATA = Path(__file__).resolve().parent / "data" / "decisions.jsonl"
TUNE4 = DATA.with_name("decisions_tune4.jsonl")
SPLITS = ("tune", "tune2", "tune3", "tune4", "report")
THRESHOLD = 0.5


def overlap(said: str, canonical: str) -> float:
    want = token_set(canonical)
    return len(token_set(said) & want) / len(want) if want else 0.0


def load(path: Path = DATA) -> list[dict[str, Any]]:
    """The records of ``path``; of the bench's own data, with those of ``TUNE4``."""
    paths = [path, TUNE4] if path == DATA else [path]
    records = []
    for each in paths:
        with each.open(encoding="utf-8") as f:
            records += [json.loads(line) for line in f if line.strip()]
    return records


def best_match(candidates: Sequence[DecisionCandidate], decision: str) -> DecisionCandidate | None:
    scored = [(overlap(c.decision, decision), i) for i, c in enumerate(candidates)]
    hits = [(score, -i) for score, i in scored if score >= THRESHOLD]
    return candidates[-max(hits)[1]] if hits else None


def reasons_recovered(candidate: DecisionCandidate, reasons: Sequence[str]) -> bool:
    return all(any(overlap(link.text, r) >= THRESHOLD for link in candidate.links) for r in reasons)


def evaluate(records: Sequence[dict[str, Any]], verbose: bool) -> dict[str, float | int]:
    decisions = [r for r in records if r["decision"] is not None]
    nulls = [r for r in records if r["decision"] is None]
    found = reasons = other = false = null_hit = 0
    for r in records:
        text = "\n".join(t["text"] for t in r["turns"])
        candidates = decisions_in(text)
        if r["decision"] is None:
            false += len(candidates)
            null_hit += bool(candidates)
            status = "false" if candidates else "ok"
        else:
            match = best_match(candidates, r["decision"])
            found += match is not None
            complete = match is not None and reasons_recovered(match, r["reasons"])
            reasons += complete
            other += len(candidates) - (match is not None)
            status = "complete" if complete else "found" if match is not None else "missed"
        if verbose:
            print(f"[{status}] {r['id']}: {r['decision']!r} {r['reasons']}")
            for c in candidates:
                links = "; ".join(f"{k.kind}/{k.edge}/{k.strength}: {k.text!r}" for k in c.links)
                print(f"    -> {c.decision!r} | {links}")
    n = max(len(decisions), 1)
    return {
        "decisions": len(decisions),
        "found": found / n,
        "reasons": reasons / n,
        "other": other,
        "null_records": len(nulls),
        "false": false,
        "null_records_with_false": null_hit,
    }


def chatter(path: Path, verbose: bool) -> tuple[int, int]:
    """Candidates over the turns of the LoCoMo conversations at ``path``, and the turns."""
    import locomo

    turns = [t for conv in locomo.load(path) for t in conv.turns]
    found = 0
    for turn in turns:
        for c in decisions_in(turn.content):
            found += 1
            if verbose:
                print(f"    locomo {turn.dia_id}: {c.decision!r}")
    return found, len(turns)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", choices=[*SPLITS, "all"], default="all")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--verbose", "-v", action="store_true", help="print every record's candidates")
    args = parser.parse_args(argv)
    records = load(args.data)
    splits = list(SPLITS) if args.split == "all" else [args.split]
    print("split   decisions  found  reasons  other  nulls  false (records)")
    for split in splits:
        chosen = [r for r in records if r["split"] == split]
        m = evaluate(chosen, args.verbose)
        print(
            f"{split:<7} {m['decisions']:>9}  {m['found']:>5.0%}  {m['reasons']:>7.0%}  {m['other']:>5}"
            f"  {m['null_records']:>5}  {m['false']:>5} ({m['null_records_with_false']})"
        )
    from benchdata import LOCOMO

    if LOCOMO.path.is_file():
        found, turns = chatter(LOCOMO.path, args.verbose)
        print(f"locomo chat: {found} candidates over {turns:,} turns ({1000 * found / turns:.1f} per 1,000)")
    else:
        print(f"locomo chat skipped: {LOCOMO.missing()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
