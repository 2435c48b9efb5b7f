"""Conversation recall on LoCoMo: for each question, are the turns that hold its answer
among the top k turns recalled?

recall_all@k = every evidence turn of a question is among the top k distinct turns
retrieved (categories 1-4: multi-hop, temporal, open-domain, single-hop; category 5,
adversarial, has no evidence and is skipped, as are questions without evidence). Each
conversation is its own memory; its questions are asked of it alone. Two systems, in
the same run, on the same turns:

- ``bm25``: the baseline. BM25 over turns (bm25s, its defaults: Lucene variant,
  k1 = 1.5, b = 0.75), one document per turn, the text
  ``"<session date> <speaker>: <text> [image: <blip_caption>]"`` (the date as written in
  the data, e.g. ``1:56 pm on 8 May, 2023``; the image part only when the turn shared
  one). Documents and questions are tokenized by ``bm25s.tokenize(..., stopwords="en")``:
  lower-cased, tokens = ``\\b\\w\\w+\\b`` runs (two or more word characters), bm25s'
  33 English stop words dropped, no stemming. Documents scoring 0 are not retrieved.
- ``memory``: ``Memory.open(<temp dir>)`` per conversation, every turn stored with
  ``add_turn(f"{conv}:session_{N}", "user", "<text> [image: <caption>]",
  speaker=<speaker>, at=<the session's date as a datetime>, metadata={"dia_id": ...})``,
  then ``recall(question, k=max k)``. Hits map to their source turns (``hit.turns``, by
  their ``metadata["dia_id"]``) in rank order, each turn counted once. ``--dense on``
  opens the memory with ``Policy`` ``[retrieval] dense = "on"``.

Malformed evidence strings (``"D8:6; D9:17"``, ``"D:11:26"``) are normalised; evidence
naming a turn the conversation does not have is dropped (and counted).

    python benches/locomo.py [--data PATH] [--system memory|bm25|both] [--dense on|off]
                             [--k 1,5,10,25] [--json OUT]

Prints, per system, recall_all@k overall and per category, the ingest time per turn and
the recall time per question (p50/p95).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

KS = (1, 5, 10, 25)
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}

# -- the data -------------------------------------------------------------------------------

_EVIDENCE = re.compile(r"D\s*:?\s*(\d+)\s*:\s*(\d+)")
_SESSION = re.compile(r"session_(\d+)")
_DATE = re.compile(r"\s*(\d{1,2}):(\d{2})\s*([ap])\.?m\.?\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})\s*", re.I)
_MONTHS = {
    name: i + 1
    for i, name in enumerate(
        ["january", "february", "march", "april", "may", "june", "july"]
        + ["august", "september", "october", "november", "december"]
    )
}


def normalize_evidence(evidence: str | Iterable[str]) -> tuple[str, ...]:
    """Evidence dia_ids as ``D<session>:<turn>``, in order, each once. A string may hold
    several ids or a malformed one: ``"D8:6; D9:17"`` -> D8:6, D9:17; ``"D:11:26"`` ->
    D11:26; ``"D30:05"`` -> D30:5. Text that holds no id is ignored."""
    items = [evidence] if isinstance(evidence, str) else list(evidence)
    out: dict[str, None] = {}
    for item in items:
        for session, turn in _EVIDENCE.findall(str(item)):
            out[f"D{int(session)}:{int(turn)}"] = None
    return tuple(out)


def parse_session_date(text: str) -> datetime:
    """LoCoMo's session dates: ``"1:56 pm on 8 May, 2023"`` -> 2023-05-08 13:56 (naive,
    as the data gives no zone). ValueError on anything else."""
    m = _DATE.fullmatch(text)
    if m is None:
        raise ValueError(f"not a LoCoMo session date: {text!r}")
    hour, minute, half, day, month, year = m.groups()
    h = int(hour)
    if not 1 <= h <= 12:
        raise ValueError(f"not a LoCoMo session date: {text!r}")
    h = h % 12 + (12 if half.lower() == "p" else 0)
    month_number = _MONTHS.get(month.lower())
    if month_number is None:
        raise ValueError(f"unknown month in {text!r}")
    return datetime(int(year), month_number, int(day), h, int(minute))


def turn_content(text: str, caption: str | None) -> str:
    """A turn's text, with the image it shared (if any) as ``[image: <caption>]``."""
    return f"{text} [image: {caption}]" if caption else text


@dataclasses.dataclass(frozen=True)
class Turn:
    dia_id: str
    session: int
    speaker: str
    content: str  # text plus "[image: caption]"
    date_text: str  # the session's date as written
    at: datetime


@dataclasses.dataclass(frozen=True)
class Question:
    index: int  # position in the conversation's qa list
    text: str
    category: int
    evidence: tuple[str, ...]


@dataclasses.dataclass(frozen=True)
class Conversation:
    sample_id: str
    turns: tuple[Turn, ...]
    questions: tuple[Question, ...]  # categories 1-4 with known evidence
    dropped_evidence: int  # evidence ids naming no turn of the conversation


def load_conversation(raw: Mapping[str, Any]) -> Conversation:
    conv = raw["conversation"]
    sessions = sorted(int(m.group(1)) for key in conv if (m := _SESSION.fullmatch(key)))
    turns: list[Turn] = []
    for n in sessions:
        date_text = conv[f"session_{n}_date_time"]
        at = parse_session_date(date_text)
        for t in conv[f"session_{n}"]:
            (dia_id,) = normalize_evidence(t["dia_id"])
            content = turn_content(t["text"], t.get("blip_caption"))
            turns.append(Turn(dia_id, n, t["speaker"], content, date_text, at))
    known = {t.dia_id for t in turns}
    questions, dropped = [], 0
    for i, qa in enumerate(raw["qa"]):
        if qa["category"] not in CATEGORIES:
            continue
        evidence = normalize_evidence(qa.get("evidence", []))
        kept = tuple(e for e in evidence if e in known)
        dropped += len(evidence) - len(kept)
        if kept:
            questions.append(Question(i, qa["question"], qa["category"], kept))
    return Conversation(raw["sample_id"], tuple(turns), tuple(questions), dropped)


def load(path: Path) -> list[Conversation]:
    return [load_conversation(raw) for raw in json.loads(path.read_text(encoding="utf-8"))]


# -- evaluation (pure) ----------------------------------------------------------------------


def distinct_turns(hits: Iterable[Iterable[str]]) -> list[str]:
    """The turns of ranked hits (each hit: the dia_ids of its source turns), in rank
    order, each turn once (where it first appears)."""
    out: dict[str, None] = {}
    for turns in hits:
        for dia_id in turns:
            out.setdefault(dia_id, None)
    return list(out)


def recall_all(ranked: Sequence[str], evidence: Iterable[str], ks: Sequence[int] = KS) -> dict[int, bool]:
    """For each k: is every evidence turn among the first k of ``ranked`` (distinct
    turns, best first)? An empty evidence set is a ValueError (nothing to recall)."""
    wanted = set(evidence)
    if not wanted:
        raise ValueError("no evidence to recall")
    rank = {dia_id: i for i, dia_id in enumerate(distinct_turns([t] for t in ranked))}
    worst = max(rank.get(e, -1) for e in wanted)
    found = all(e in rank for e in wanted)
    return {k: found and worst < k for k in ks}


@dataclasses.dataclass(frozen=True)
class Outcome:
    conv: str
    index: int
    category: int
    evidence: tuple[str, ...]
    ranked: tuple[str, ...]  # the distinct turns retrieved, best first
    hit: dict[int, bool]  # recall_all@k


def summarize(outcomes: Sequence[Outcome], ks: Sequence[int] = KS) -> dict[str, dict[str, float]]:
    """recall_all@k rates, ``{"all" | category name: {"n": count, "@k": rate}}``;
    categories without questions are left out."""
    groups: dict[str, list[Outcome]] = {"all": list(outcomes)}
    for cat, name in CATEGORIES.items():
        rows = [o for o in outcomes if o.category == cat]
        if rows:
            groups[name] = rows
    out: dict[str, dict[str, float]] = {}
    for name, rows in groups.items():
        if not rows:
            continue
        out[name] = {"n": len(rows), **{f"@{k}": sum(o.hit[k] for o in rows) / len(rows) for k in ks}}
    return out


def percentile(values: Sequence[float], p: float) -> float:
    """Nearest-rank percentile (p in 0-100); NaN for no values."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * p // 100))
    return ordered[min(len(ordered), int(rank)) - 1]


# -- the systems ----------------------------------------------------------------------------


class Unavailable(RuntimeError):
    """The system cannot run here (a missing package or API); the message says why."""


@dataclasses.dataclass
class Run:
    system: str
    outcomes: list[Outcome] = dataclasses.field(default_factory=list)
    ingest_seconds: list[float] = dataclasses.field(default_factory=list)  # per turn
    recall_seconds: list[float] = dataclasses.field(default_factory=list)  # per question


Retrieve = Callable[[str, int], list[str]]  # question, k -> distinct dia_ids, best first


def bm25_document(turn: Turn) -> str:
    return f"{turn.date_text} {turn.speaker}: {turn.content}"


def bm25_system(conv: Conversation, run: Run) -> Retrieve:
    try:
        import bm25s
        import numpy as np
    except ImportError as exc:
        raise Unavailable(f"bm25 needs bm25s and numpy ({exc})") from None

    def tokenize(texts: list[str]) -> list[list[str]]:
        return bm25s.tokenize(texts, stopwords="en", return_ids=False, show_progress=False)  # type: ignore[no-any-return]

    start = time.perf_counter()
    retriever = bm25s.BM25()
    retriever.index(tokenize([bm25_document(t) for t in conv.turns]), show_progress=False)
    per_turn = (time.perf_counter() - start) / max(1, len(conv.turns))
    run.ingest_seconds.extend([per_turn] * len(conv.turns))  # indexed in one batch
    ids = [t.dia_id for t in conv.turns]
    vocab = retriever.vocab_dict

    def retrieve(question: str, k: int) -> list[str]:
        tokens = [tok for tok in tokenize([question])[0] if tok in vocab]
        if not tokens:
            return []
        scores = retriever.get_scores(tokens)
        order = np.argsort(-scores, kind="stable")[:k]
        return [ids[i] for i in order if scores[i] > 0]

    return retrieve


def store_turn(memory: Any, conv: Conversation, turn: Turn) -> int:
    """Stores ``turn`` of ``conv`` as the memory system does (its session, its
    speaker, its date, its dia_id in the metadata); the new turn's id."""
    added = memory.add_turn(
        f"{conv.sample_id}:session_{turn.session}",
        "user",
        turn.content,
        speaker=turn.speaker,
        at=turn.at,
        metadata={"dia_id": turn.dia_id},
    )
    return int(added.turn_id)


def memory_system(conv: Conversation, run: Run, tmp: Path, *, dense: bool) -> Retrieve:
    try:
        from aircher_mem import Memory, Policy
    except ImportError as exc:
        raise Unavailable(f"aircher_mem is not installed ({exc})") from None
    if not (hasattr(Memory, "add_turn") and hasattr(Memory, "recall")):
        raise Unavailable("this aircher_mem has no Memory.add_turn / Memory.recall yet")
    if dense:
        from aircher_mem.embeddings import available

        ok, why = available()
        if not ok:
            raise Unavailable(f"--dense on: {why}")
    policy = Policy.from_dict({"retrieval": {"dense": "on" if dense else "off"}}, source="--dense")
    root = tmp / conv.sample_id
    root.mkdir(parents=True, exist_ok=True)
    memory = Memory.open(root, policy=policy)
    for turn in conv.turns:
        start = time.perf_counter()
        store_turn(memory, conv, turn)
        run.ingest_seconds.append(time.perf_counter() - start)

    def retrieve(question: str, k: int) -> list[str]:
        result = memory.recall(question, k=k)
        return distinct_turns(
            [str(t.metadata["dia_id"]) for t in hit.turns if "dia_id" in (t.metadata or {})] for hit in result.hits
        )

    retrieve.close = memory.close  # type: ignore[attr-defined]
    return retrieve


def evaluate(conv: Conversation, retrieve: Retrieve, run: Run, ks: Sequence[int]) -> None:
    """Asks every question of ``conv`` and appends its outcome and timing to ``run``."""
    depth = max(ks)
    for q in conv.questions:
        start = time.perf_counter()
        ranked = retrieve(q.text, depth)
        run.recall_seconds.append(time.perf_counter() - start)
        run.outcomes.append(
            Outcome(conv.sample_id, q.index, q.category, q.evidence, tuple(ranked), recall_all(ranked, q.evidence, ks))
        )


def run_system(system: str, conversations: Sequence[Conversation], ks: Sequence[int], *, dense: bool) -> Run:
    run = Run(system if system == "bm25" else f"memory{'+dense' if dense else ''}")
    with tempfile.TemporaryDirectory(prefix="locomo-") as tmp:
        for conv in conversations:
            if system == "bm25":
                retrieve = bm25_system(conv, run)
            else:
                retrieve = memory_system(conv, run, Path(tmp), dense=dense)
            try:
                evaluate(conv, retrieve, run, ks)
            finally:
                close = getattr(retrieve, "close", None)
                if close is not None:
                    close()
    return run


# -- the report -----------------------------------------------------------------------------


def table(runs: Sequence[Run], ks: Sequence[int]) -> str:
    heads = ["system", "questions", "n", *(f"@{k}" for k in ks)]
    rows = []
    for run in runs:
        for group, stats in summarize(run.outcomes, ks).items():
            rows.append([run.system, group, str(int(stats["n"])), *(f"{stats[f'@{k}']:.3f}" for k in ks)])
    widths = [max(len(r[i]) for r in [heads, *rows]) for i in range(len(heads))]
    lines = ["  ".join(h.ljust(w) if i < 2 else h.rjust(w) for i, (h, w) in enumerate(zip(heads, widths)))]
    lines += ["  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))) for r in rows]
    lines.append("")
    for run in runs:
        ing, rec = run.ingest_seconds, run.recall_seconds
        lines.append(
            f"{run.system}: ingest {1e3 * statistics.fmean(ing) if ing else float('nan'):.2f} ms/turn "
            f"(p50 {1e3 * percentile(ing, 50):.2f}, p95 {1e3 * percentile(ing, 95):.2f}); "
            f"recall p50 {1e3 * percentile(rec, 50):.2f} ms, p95 {1e3 * percentile(rec, 95):.2f} ms per question"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    # imported here: the tests load this module's pure parts without benches/ on sys.path
    from benchdata import DATA_ENV, LOCOMO

    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument(
        "--data",
        type=Path,
        help=f"locomo JSON (default: {LOCOMO.name} in ${DATA_ENV} or shared/data beside the repository)",
    )
    parser.add_argument("--system", choices=["memory", "bm25", "both"], default="both")
    parser.add_argument("--dense", choices=["on", "off"], default="off", help="the memory's dense channel")
    parser.add_argument("--k", default=",".join(map(str, KS)), help="cut-offs (default: %(default)s)")
    parser.add_argument("--json", type=Path, help="write the summary and every question's outcome here")
    args = parser.parse_args(argv)
    try:
        ks = sorted({int(k) for k in args.k.split(",") if k.strip()})
    except ValueError:
        parser.error(f"--k must be comma-separated integers, got {args.k!r}")
    if not ks or ks[0] < 1:
        parser.error("--k needs positive cut-offs")
    data = args.data or LOCOMO.path
    if not data.is_file():
        print(f"skipped: {LOCOMO.missing()}, or pass --data PATH" if args.data is None else f"skipped: no {data}")
        return 0
    conversations = load(data)
    n_questions = sum(len(c.questions) for c in conversations)
    n_turns = sum(len(c.turns) for c in conversations)
    dropped = sum(c.dropped_evidence for c in conversations)
    print(
        f"{len(conversations)} conversations, {n_turns} turns, {n_questions} questions (categories 1-4 with evidence)"
    )
    if dropped:
        print(f"{dropped} evidence id(s) naming no turn of their conversation were dropped")

    systems = ["bm25", "memory"] if args.system == "both" else [args.system]
    runs: list[Run] = []
    for system in systems:
        try:
            runs.append(run_system(system, conversations, ks, dense=args.dense == "on"))
        except Unavailable as exc:
            print(f"{system}: not run: {exc}", file=sys.stderr)
    if not runs:
        return 1
    print()
    print(table(runs, ks))
    if args.json:
        payload = {
            "data": str(data),
            "ks": ks,
            "runs": [
                {
                    "system": run.system,
                    "summary": summarize(run.outcomes, ks),
                    "ingest_ms_per_turn": {
                        "mean": 1e3 * statistics.fmean(run.ingest_seconds) if run.ingest_seconds else None,
                        "p50": 1e3 * percentile(run.ingest_seconds, 50),
                        "p95": 1e3 * percentile(run.ingest_seconds, 95),
                    },
                    "recall_ms": {
                        "p50": 1e3 * percentile(run.recall_seconds, 50),
                        "p95": 1e3 * percentile(run.recall_seconds, 95),
                    },
                    "questions": [
                        {**dataclasses.asdict(o), "hit": {str(k): v for k, v in o.hit.items()}} for o in run.outcomes
                    ],
                }
                for run in runs
            ],
        }
        args.json.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
        print(f"\nwrote {args.json}")
    return 0 if len(runs) == len(systems) else 1


if __name__ == "__main__":
    sys.exit(main())
