"""Contradiction detection between two memories: recall and precision of
``aircher_mem.longterm.contradict.detect`` against a word-overlap baseline, in the
same run, on labelled pairs.

Each pair is labelled ``contradiction``, ``agree`` (a paraphrase that agrees),
``detail`` (a near-duplicate that adds or changes a detail without contradicting,
or speaks of another subject) or ``unrelated``. Only ``contradiction`` is a
positive; recall and precision are for it. Sources:

- ``hand``: ``benches/data/contradictions.jsonl``, pairs a coding agent would store
  (settings, tools, versions, conventions, decisions, corrections), written for this
  benchmark (the repository's licence).
- ``tune2``: ``benches/data/contradictions_tune2.jsonl``, 240 pairs about a software
  project and about a person's life (paraphrased subjects, values with and without a
  copula, word numbers and units, corrections and changes of state), written for this
  benchmark (the repository's licence) before reading the rules; all ``tune``.
- ``tune3``: ``benches/data/contradictions_tune3.jsonl``, 420 more such pairs (170
  contradictions; values of one kind named in other words, amounts in other units,
  policies and their negation, corrections, people), written for this benchmark (the
  repository's licence) by an author who saw neither the rules nor the other pairs;
  all ``tune``: the rules were then adjusted on them.
- ``tune4``: ``benches/data/contradictions_tune4.jsonl``, 400 more (160 contradictions,
  a fifth of them needing a little world knowledge; agree and detail pairs that look
  like contradictions to a word matcher), written the same way; all ``tune``.
- ``heldout``: ``benches/data/contradictions_heldout.jsonl``, 277 pairs about a
  software project and about a person's life, written for this benchmark (the
  repository's licence) by an author who saw neither the rules, nor the ``hand``
  pairs, nor the tests. All of them are ``report``: no rule was adjusted on them.
- ``locomo``: facts that change or hold over time in the LoCoMo conversations
  (``locomo-dev.json``; CC BY-NC 4.0, research and testing use only, cite the
  LoCoMo paper). The pairs are built when the script runs, from the conversations'
  ``observation`` facts and ``event_summary`` events: the labelled pairs below name
  their two statements by conversation, turn (``D<session>:<turn>``) or session
  (``E<session>``) and a phrase the statement holds; ``detail`` pairs are added for
  every two facts drawn from one turn, and ``unrelated`` pairs from facts of different
  sessions with few words in common (both chosen by a hash, so every run builds the
  same set). No text of the data set is stored in the repository; without the data
  the source is skipped with a message.

No package on PyPI was found that ships NLI statement pairs (SNLI, MultiNLI, SICK)
inside the package in a usable number (the nearest, allennlp 0.9.0, holds four SNLI
pairs among its test fixtures), so none is used.

Each pair falls in the ``tune`` or the ``report`` half by a hash of its two texts,
unless its line names a ``split``: pairs written later to have more to fit the
rules on say ``"split": "tune"``. Rules are adjusted on ``tune`` only; ``report``
is for the figures.

- ``baseline``: the two texts' word sets (lower case, ``\\w+``) have a Jaccard
  overlap >= 0.5 and exactly one of them holds a negation word.
- ``detect``: the rules of ``aircher_mem.longterm.contradict``.

Latency is per pair, per call of ``detect``: cold (the module's caches cleared
before the pair) and warm (the same pair again); and per scan: one text against 20
others, as when a new memory is checked against its nearest ones, caches cleared
before each scan.

    python benches/contradictions.py [--split tune|report|all] [--data PATH] [--errors] [--in-store [--dense]]
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import itertools
import json
import re
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

HAND = Path(__file__).resolve().parent / "data" / "contradictions.jsonl"
HELDOUT = HAND.with_name("contradictions_heldout.jsonl")
TUNE2 = HAND.with_name("contradictions_tune2.jsonl")
TUNE3 = HAND.with_name("contradictions_tune3.jsonl")
TUNE4 = HAND.with_name("contradictions_tune4.jsonl")
LABELS = ("contradiction", "agree", "detail", "unrelated")
SPLITS = ("tune", "report")
SCAN_CANDIDATES = 20  # the memories a new one is compared with
NEGATION_WORDS = frozenset(
    "not no never none nothing nobody without cannot cant dont doesnt isnt arent wont n't don't doesn't isn't "
    "aren't won't can't shouldn't".split()
)


@dataclasses.dataclass(frozen=True)
class Pair:
    a: str
    b: str
    label: str
    source: str
    fixed_split: str | None = None  # a pair written to fit the rules on is tune whatever its hash

    @property
    def split(self) -> str:
        if self.fixed_split is not None:
            return self.fixed_split
        digest = hashlib.sha256(f"{self.a}\x00{self.b}".encode()).digest()
        return SPLITS[digest[0] % 2]


# -- the sources ---------------------------------------------------------------------------


def hand_pairs(path: Path = HAND) -> list[Pair]:
    pairs = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            split = row.get("split")
            if split is not None and split not in SPLITS:
                raise ValueError(f"unknown split {split!r} in {path.name}")
            pairs.append(Pair(row["a"], row["b"], row["label"], row["source"], split))
    return pairs


def heldout_pairs(path: Path = HELDOUT) -> list[Pair]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [Pair(row["a"], row["b"], row["label"], "heldout", "report") for row in rows]


# (label, statement, statement); a statement is "<conversation>/<turn or E<session>>/<phrase>"
LOCOMO_PAIRS: tuple[tuple[str, str, str], ...] = (
    # a fact about a person changes between sessions, or two sessions disagree
    ("contradiction", "conv-30/D1:2/banker", "conv-30/D6:4/Jon lost his job at Door Dash"),
    ("contradiction", "conv-30/D5:4/runs his own dance studio", "conv-30/D4:9/searching for a dance studio"),
    ("contradiction", "conv-30/E1/Gina loses her job", "conv-30/E12/part-time job"),
    ("contradiction", "conv-30/E1/Jon loses his job", "conv-30/E18/temporary job"),
    ("contradiction", "conv-30/D13:3/prepping for his own dance studio", "conv-30/D7:7/has a dance studio business"),
    ("contradiction", "conv-30/E15/official opening night", "conv-30/D19:7/working on opening a studio"),
    ("contradiction", "conv-41/E3/fails his military aptitude", "conv-41/E8/retakes the aptitude"),
    ("contradiction", "conv-41/D3:11/failed the military aptitude", "conv-41/E8/positive results"),
    ("contradiction", "conv-41/D25:1/new job", "conv-41/D28:1/lost his job"),
    ("contradiction", "conv-41/D28:1/lost his job", "conv-41/D28:5/found a job"),
    ("contradiction", "conv-41/E19/promoted", "conv-41/E28/loses his job"),
    ("contradiction", "conv-41/E25/joins a new job", "conv-41/E28/loses his job"),
    ("contradiction", "conv-26/D5:4/signed up for a pottery class", "conv-26/D17:8/break from pottery"),
    # the same fact said again
    ("agree", "conv-41/D7:2/running for office again", "conv-41/D14:1/run for office again"),
    ("agree", "conv-41/D17:11/adopting a rescue dog", "conv-41/D31:7/adopting a new pup"),
    ("agree", "conv-30/D9:1/turning his passion", "conv-30/D11:3/dream business"),
    ("agree", "conv-30/D10:2/started her own online clothing store", "conv-30/D14:8/online clothing store"),
    ("agree", "conv-26/D4:11/career in counseling", "conv-26/D5:3/career in counseling"),
    ("agree", "conv-26/D16:8/calming", "conv-26/D14:4/pottery relaxing"),
    ("agree", "conv-41/D17:1/Max", "conv-41/E17/Max"),
    ("agree", "conv-30/D1:4/starting his own dance studio", "conv-30/D3:1/open his dance studio"),
    ("agree", "conv-41/D9:4/graduated", "conv-41/E9/graduates"),
    ("agree", "conv-30/D6:6/online clothes store", "conv-30/E6/opens her online clothing store"),
    ("agree", "conv-41/D10:1/weekend yoga", "conv-41/E10/weekend yoga"),
    ("agree", "conv-26/D19:1/passed the adoption", "conv-26/E19/passes the adoption"),
    ("agree", "conv-30/D12:1/internship", "conv-30/E12/internship"),
    ("agree", "conv-41/D30:1/Coco", "conv-41/E30/Coco"),
    ("agree", "conv-41/D31:2/Shadow", "conv-41/E31/Shadow"),
    ("agree", "conv-26/D7:20/running shoes", "conv-26/E7/running"),
    ("agree", "conv-41/D28:1/lost his job", "conv-41/E28/loses his job"),
    ("agree", "conv-30/D1:2/banker", "conv-30/E1/banker"),
    ("agree", "conv-26/D3:14/husband", "conv-26/D3:16/married"),
    ("agree", "conv-41/D3:11/failed", "conv-41/E3/fails"),
    # related facts that do not contradict
    ("detail", "conv-41/D1:4/kickboxing", "conv-41/D2:28/taekwondo"),
    ("detail", "conv-41/D31:6/did not have any pets", "conv-41/D30:1/Coco"),
    ("detail", "conv-41/D30:1/Coco", "conv-41/D31:2/Shadow"),
    ("detail", "conv-41/D7:16/beginner's yoga", "conv-41/D10:1/weekend yoga"),
    ("detail", "conv-41/D1:3/aerial yoga", "conv-41/D19:3/kundalini"),
    ("detail", "conv-26/D7:18/Luna", "conv-26/D13:4/Bailey"),
    ("detail", "conv-26/D2:8/researching adoption agencies", "conv-26/D19:1/passed"),
    ("detail", "conv-41/D17:1/Max", "conv-41/D31:7/new pup"),
    ("detail", "conv-30/D5:5/online store", "conv-30/D5:1/owns a store"),
    ("detail", "conv-26/D5:8/bowl", "conv-26/D14:4/plate"),
    ("detail", "conv-30/D2:4/ideal spot", "conv-30/D2:8/Marley"),
    ("detail", "conv-41/D13:7/three times a week", "conv-41/D13:5/support"),
)
SAME_TURN_DETAILS = 40  # facts drawn from one turn, paired
UNRELATED = 40  # facts of different sessions with few words in common
_SESSION_KEY = re.compile(r"(?:session|events_session)_(\d+)")


@dataclasses.dataclass(frozen=True)
class Statement:
    conversation: str
    where: str  # "D<session>:<turn>" of an observation, "E<session>" of an event
    session: int
    text: str


def locomo_statements(raw: Sequence[Mapping[str, Any]]) -> list[Statement]:
    out: list[Statement] = []
    for conv in raw:
        cid = conv["sample_id"]
        for key, by_speaker in conv.get("observation", {}).items():
            m = _SESSION_KEY.match(key)
            if m is None:
                continue
            for facts in by_speaker.values():
                for fact in facts:
                    text, ids = fact[0], fact[1]
                    for dia in [ids] if isinstance(ids, str) else ids:
                        out.append(Statement(cid, str(dia).strip(), int(m.group(1)), str(text)))
        for key, events in conv.get("event_summary", {}).items():
            m = _SESSION_KEY.match(key)
            if m is None:
                continue
            for speaker, texts in events.items():
                if speaker == "date":
                    continue
                for text in texts:
                    if text.strip():
                        out.append(Statement(cid, f"E{int(m.group(1))}", int(m.group(1)), str(text)))
    return out


def _find(statements: Sequence[Statement], ref: str) -> Statement:
    conversation, where, phrase = ref.split("/", 2)
    hits = [
        s
        for s in statements
        if s.conversation == conversation and s.where == where and phrase.lower() in s.text.lower()
    ]
    if not hits:
        raise LookupError(f"no statement {ref!r} in the data")
    return hits[0]


def _digest(*parts: str) -> str:
    return hashlib.sha256("\x00".join(parts).encode()).hexdigest()


def _word_set(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.lower()))


def jaccard(a: str, b: str) -> float:
    x, y = _word_set(a), _word_set(b)
    return len(x & y) / len(x | y) if x | y else 0.0


def locomo_pairs(path: Path) -> list[Pair]:
    raw = json.loads(path.read_text(encoding="utf-8"))
    statements = locomo_statements(raw)
    pairs = [
        Pair(_find(statements, x).text, _find(statements, y).text, label, "locomo") for label, x, y in LOCOMO_PAIRS
    ]
    labelled = {frozenset((p.a, p.b)) for p in pairs}
    facts = [s for s in statements if s.where.startswith("D")]
    # two facts drawn from one turn, by one speaker (the first word names the speaker)
    same_turn: list[tuple[str, Pair]] = []
    by_turn: dict[tuple[str, str, str], list[Statement]] = {}
    for s in facts:
        by_turn.setdefault((s.conversation, s.where, s.text.split()[0]), []).append(s)
    for group in by_turn.values():
        for i, x in enumerate(group):
            for y in group[i + 1 :]:
                if x.text != y.text and frozenset((x.text, y.text)) not in labelled:
                    same_turn.append((_digest(x.text, y.text), Pair(x.text, y.text, "detail", "locomo")))
    pairs += [p for _, p in sorted(same_turn, key=lambda t: t[0])[:SAME_TURN_DETAILS]]
    # facts of different sessions with few words in common, picked in hash order
    ordered = sorted(facts, key=lambda s: _digest(s.conversation, s.where, s.text))
    unrelated: list[Pair] = []
    for x, y in itertools.pairwise(ordered):
        if len(unrelated) >= UNRELATED:
            break
        if x.session != y.session and jaccard(x.text, y.text) < 0.15:
            unrelated.append(Pair(x.text, y.text, "unrelated", "locomo"))
    return pairs + unrelated


# -- the systems ---------------------------------------------------------------------------


def baseline(a: str, b: str) -> bool:
    """Word overlap >= 0.5 and exactly one side negated."""
    negated_a = bool(_word_set(a) & NEGATION_WORDS) or "n't" in a.lower()
    negated_b = bool(_word_set(b) & NEGATION_WORDS) or "n't" in b.lower()
    return jaccard(a, b) >= 0.5 and negated_a != negated_b


@dataclasses.dataclass
class Score:
    tp: int = 0
    fp: int = 0
    fn: int = 0
    n: int = 0
    false_positives: dict[str, int] = dataclasses.field(default_factory=dict)

    def add(self, predicted: bool, pair: Pair) -> None:
        self.n += 1
        gold = pair.label == "contradiction"
        if predicted and gold:
            self.tp += 1
        elif predicted:
            self.fp += 1
            self.false_positives[pair.label] = self.false_positives.get(pair.label, 0) + 1
        elif gold:
            self.fn += 1

    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else float("nan")

    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else float("nan")


def percentile(values: Sequence[float], p: float) -> float:
    """Nearest-rank percentile (p in 0-100); NaN for no values."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * p // 100))
    return ordered[min(len(ordered), int(rank)) - 1]


def run(pairs: Iterable[Pair], systems: Mapping[str, Callable[[str, str], bool]]) -> dict[tuple[str, str, str], Score]:
    """Scores keyed by (system, split, source), with "all" for either."""
    scores: dict[tuple[str, str, str], Score] = {}
    for pair in pairs:
        for name, system in systems.items():
            predicted = system(pair.a, pair.b)
            for split in (pair.split, "all"):
                for source in (pair.source, "all"):
                    scores.setdefault((name, split, source), Score()).add(predicted, pair)
    return scores


def nli_systems(
    model: str, label: int | None, threshold: float | None, took_ms: list[float]
) -> tuple[object, dict[str, Callable[[str, str], bool]]]:
    """The rules, then an NLI judge for the pairs they pass over, as the store asks it
    (``contradictions.goes_to_judge`` with the default ``[decisions]``
    ``nli_min_overlap``: "detect+nli"), and with the overlap a prompt judge needs
    (``judge_min_overlap``: "detect+nli, overlap"). Each pair's judgement is made
    once; ``took_ms`` gets its time. Also the judge."""
    from aircher_mem.config import DecisionsPolicy
    from aircher_mem.longterm.contradict import detect
    from aircher_mem.longterm.contradictions import goes_to_judge, min_overlap
    from aircher_mem.nli import DEFAULT_THRESHOLD, NliJudge

    judge = NliJudge.load(model, contradiction=label, threshold=DEFAULT_THRESHOLD if threshold is None else threshold)
    print(f"NLI judge: {judge!r} from {model}")
    answers: dict[tuple[str, str], bool] = {}
    decisions = DecisionsPolicy()
    overlap = min_overlap(judge, decisions)

    def judged(a: str, b: str) -> bool:
        if (a, b) not in answers:
            start = time.perf_counter()
            answers[a, b] = judge.pair(a, b)
            took_ms.append(1e3 * (time.perf_counter() - start))
        return answers[a, b]

    def gated(a: str, b: str) -> bool:
        return detect(a, b) is not None or (goes_to_judge(a, b, overlap) and judged(a, b))

    def overlapping(a: str, b: str) -> bool:
        return detect(a, b) is not None or (goes_to_judge(a, b, decisions.judge_min_overlap) and judged(a, b))

    return judge, {"detect+nli": gated, "detect+nli, overlap": overlapping}


def near_system(
    pairs: Sequence[Pair], judged: Callable[[str, str], bool], min_similarity: float | None
) -> Callable[[str, str], bool]:
    """``judged`` ("detect+nli") for pairs whose embeddings (the dense channel's
    model) have a cosine of at least ``min_similarity`` (default: ``[decisions]
    nli_min_similarity``), the rules alone for the others: as a store with the dense
    channel on asks its NLI judge."""
    import numpy as np
    from aircher_mem.config import DecisionsPolicy
    from aircher_mem.embeddings import Embedder
    from aircher_mem.longterm.contradict import detect

    least = DecisionsPolicy().nli_min_similarity if min_similarity is None else min_similarity
    texts = sorted({t for p in pairs for t in (p.a, p.b)})
    vectors = Embedder.load().embed(texts)
    vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    row = {t: i for i, t in enumerate(texts)}

    def near(a: str, b: str) -> bool:
        if float(vectors[row[a]] @ vectors[row[b]]) >= least:
            return judged(a, b)
        return detect(a, b) is not None

    return near


@dataclasses.dataclass
class InStore:
    """What a store recorded for labelled pairs: contradicting pairs found at the
    write of their second text and after a consolidation pass, other pairs found
    (false alarms), and contradictions between texts of different pairs."""

    contradictions: int = 0
    at_write: int = 0
    after_pass: int = 0
    false_alarms: int = 0
    across: int = 0

    def line(self, name: str) -> str:
        return (
            f"{name}: {self.at_write / self.contradictions:.3f} of {self.contradictions} contradicting pairs found at "
            f"the write, {self.after_pass / self.contradictions:.3f} after a consolidation pass; "
            f"{self.false_alarms} other labelled pairs found; {self.across} between texts of different pairs"
        )


def in_store(
    pairs: Sequence[Pair], judge: object | None = None, *, dense: bool = False, min_similarity: float | None = None
) -> InStore:
    """The pairs' first texts stored, then their second ones (a minute apart), in one
    long-term store (lexical neighbours, the default Policy but for an unbounded
    consolidation scan), as a store finds contradictions rather than as ``detect``
    does: only between a memory and its nearest, a near-duplicate merged, a write
    waiting ``judge_scan_seconds`` for the judge; then one consolidation pass. With
    ``dense``, the dense channel on (the ``embeddings`` extra's model): each text is
    embedded once written (as the next ``recall`` or ``flush`` does) and scanned
    against its nearest by meaning too; ``min_similarity`` is ``[decisions]
    nli_min_similarity`` (default: the Policy's)."""
    import tempfile

    from aircher_mem.config import DecisionsPolicy, RetrievalPolicy
    from aircher_mem.longterm import LongTermMemory

    embedder = None
    if dense:
        from aircher_mem.embeddings import Embedder

        embedder = Embedder.load
    out = InStore(contradictions=sum(p.label == "contradiction" for p in pairs))
    with tempfile.TemporaryDirectory() as folder:
        decisions = DecisionsPolicy(consolidate_scan_seconds=3600.0)
        if min_similarity is not None:
            decisions = dataclasses.replace(decisions, nli_min_similarity=min_similarity)
        lt = LongTermMemory(
            Path(folder) / "pairs.duckdb",
            judge=judge,  # type: ignore[arg-type]
            decisions=decisions,
            retrieval=RetrievalPolicy(dense="on" if dense else "off"),
            embedder=embedder,
        )
        at = 1_700_000_000.0
        first: list[int] = []
        for p in pairs:
            first.append(lt.remember(p.a, at=at).memory_id)
            if dense:  # embedded and scanned by meaning, as the next recall would
                lt.flush()
            at += 60.0
        second: list[int] = []
        for p in pairs:
            second.append(lt.remember(p.b, at=at).memory_id)
            if dense:
                lt.flush()
            at += 60.0

        def found() -> set[frozenset[int]]:
            listed = lt.contradictions("all").contradictions
            return {frozenset((c.memory_a, c.memory_b)) for c in listed}

        written = found()
        lt.consolidate(now=at + 86_400.0)
        after = found()
        lt.close()
    labelled = {frozenset((a, b)) for a, b in zip(first, second, strict=True)}
    for p, a, b in zip(pairs, first, second, strict=True):
        key = frozenset((a, b))
        if p.label == "contradiction":
            out.at_write += key in written
            out.after_pass += key in after
        elif key in after:
            out.false_alarms += 1
    out.across = len(after - labelled)
    return out


def _clear_caches() -> None:
    from aircher_mem.longterm import contradict

    # the caches are the module's own; cold = no text and no word seen before
    for cached in (
        contradict._analyse,
        contradict._stem,
        contradict._clean,
        contradict._polarity,
        contradict._features,
    ):
        cached.cache_clear()


def latencies(pairs: Sequence[Pair]) -> tuple[list[float], list[float]]:
    """Seconds per ``detect`` call: cold (the module's caches cleared) and warm."""
    from aircher_mem.longterm import contradict

    cold, warm = [], []
    for pair in pairs:
        _clear_caches()
        t0 = time.perf_counter()
        contradict.detect(pair.a, pair.b)
        t1 = time.perf_counter()
        contradict.detect(pair.a, pair.b)
        t2 = time.perf_counter()
        cold.append(t1 - t0)
        warm.append(t2 - t1)
    return cold, warm


def scans(pairs: Sequence[Pair], candidates: int = SCAN_CANDIDATES) -> list[float]:
    """Seconds per scan: one text against ``candidates`` others, the caches cleared
    before each scan (every text seen for the first time)."""
    from aircher_mem.longterm import contradict

    texts = sorted({t for p in pairs for t in (p.a, p.b)}, key=lambda t: _digest(t))
    out = []
    for i, new in enumerate(texts):
        others = [texts[(i + 1 + j) % len(texts)] for j in range(min(candidates, len(texts) - 1))]
        _clear_caches()
        t0 = time.perf_counter()
        for other in others:
            contradict.detect(new, other)
        out.append(time.perf_counter() - t0)
    return out


def counts_table(pairs: Sequence[Pair]) -> str:
    sources = sorted({p.source for p in pairs})
    lines = [f"{'source':<8} {'split':<7} " + " ".join(f"{label:>13}" for label in LABELS) + f" {'total':>6}"]
    for source in sources:
        for split in SPLITS:
            rows = [p for p in pairs if p.source == source and p.split == split]
            counts = [sum(p.label == label for p in rows) for label in LABELS]
            lines.append(f"{source:<8} {split:<7} " + " ".join(f"{c:>13}" for c in counts) + f" {len(rows):>6}")
    return "\n".join(lines)


def scores_table(scores: Mapping[tuple[str, str, str], Score], splits: Sequence[str]) -> str:
    lines = [f"{'system':<9} {'split':<7} {'source':<8} {'pairs':>5} {'recall':>7} {'precision':>9}  false positives"]
    for (system, split, source), s in sorted(scores.items()):
        if split not in splits:
            continue
        fps = ", ".join(f"{k} {v}" for k, v in sorted(s.false_positives.items())) or "-"
        lines.append(
            f"{system:<9} {split:<7} {source:<8} {s.n:>5} {s.recall():>7.3f} {s.precision():>9.3f}  "
            f"{s.tp} tp, {s.fp} fp ({fps}), {s.fn} fn"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    from benchdata import DATA_ENV, LOCOMO

    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--split", choices=["tune", "report", "all"], default="all")
    parser.add_argument(
        "--data",
        type=Path,
        help=f"locomo JSON (default: {LOCOMO.name} in ${DATA_ENV} or shared/data beside the repository)",
    )
    parser.add_argument("--errors", action="store_true", help="print the pairs detect gets wrong (tune split only)")
    parser.add_argument("--nli", metavar="MODEL", help="also the rules + an NLI judge (NliJudge.load(MODEL))")
    parser.add_argument("--nli-label", type=int, help="the NLI model's contradiction output (default: its config.json)")
    parser.add_argument("--nli-threshold", type=float, help="NliJudge's threshold (default: its DEFAULT_THRESHOLD)")
    parser.add_argument(
        "--in-store", action="store_true", help="also the independent author's pairs found in a store (in_store)"
    )
    parser.add_argument(
        "--dense",
        action="store_true",
        help="--in-store also with the dense channel on; with --nli, the judge also asked only about pairs near in "
        "meaning ('detect+nli, near')",
    )
    parser.add_argument(
        "--nli-min-similarity", type=float, help="[decisions] nli_min_similarity for --dense (default: the Policy's)"
    )
    args = parser.parse_args(argv)

    from aircher_mem.longterm.contradict import detect

    pairs = hand_pairs() + hand_pairs(TUNE2) + hand_pairs(TUNE3) + hand_pairs(TUNE4) + heldout_pairs()
    data = args.data or LOCOMO.path
    if data.is_file():
        pairs += locomo_pairs(data)
    else:
        print(
            f"locomo pairs skipped: {LOCOMO.missing()}, or pass --data PATH"
            if args.data is None
            else f"skipped: no {data}"
        )
    print(counts_table(pairs))
    print()
    chosen = [p for p in pairs if args.split == "all" or p.split == args.split]
    systems: dict[str, Callable[[str, str], bool]] = {
        "baseline": baseline,
        "detect": lambda a, b: detect(a, b) is not None,
    }
    judge_ms: list[float] = []
    judge: object | None = None
    if args.nli:
        judge, more = nli_systems(args.nli, args.nli_label, args.nli_threshold, judge_ms)
        systems.update(more)
        if args.dense:
            systems["detect+nli, near"] = near_system(chosen, more["detect+nli"], args.nli_min_similarity)
    scores = run(chosen, systems)
    splits = [*SPLITS, "all"] if args.split == "all" else [args.split]
    print(scores_table(scores, splits))
    cold, warm = latencies(chosen)
    print()
    print(
        f"detect latency per pair over {len(chosen)} pairs: cold p50 {1e3 * percentile(cold, 50):.3f} ms, "
        f"p95 {1e3 * percentile(cold, 95):.3f} ms; warm p50 {1e3 * percentile(warm, 50):.3f} ms, "
        f"p95 {1e3 * percentile(warm, 95):.3f} ms"
    )
    if judge_ms:
        print(
            f"NLI judge latency per pair (both orders) over {len(judge_ms)} pairs: "
            f"p50 {percentile(judge_ms, 50):.1f} ms, p95 {percentile(judge_ms, 95):.1f} ms"
        )
    per_scan = scans(chosen)
    print(
        f"scan of one text against {SCAN_CANDIDATES} others, cold, over {len(per_scan)} scans: "
        f"p50 {1e3 * percentile(per_scan, 50):.3f} ms, p95 {1e3 * percentile(per_scan, 95):.3f} ms"
    )
    if args.in_store:
        held = [p for p in pairs if p.source == "heldout"]
        print()
        print(in_store(held).line("the rules in a store"))
        if judge is not None:
            print(in_store(held, judge).line("the rules and the NLI judge in a store"))
        if args.dense:
            print(in_store(held, dense=True).line("the rules in a store, dense channel on"))
            if judge is not None:
                print(
                    in_store(held, judge, dense=True, min_similarity=args.nli_min_similarity).line(
                        "the rules and the NLI judge in a store, dense channel on"
                    )
                )
    if args.errors:
        if args.split != "tune":
            print("--errors prints the tune split only", file=sys.stderr)
            return 2
        print()
        for p in chosen:
            verdict = detect(p.a, p.b)
            if (verdict is not None) != (p.label == "contradiction"):
                print(f"[{p.source} {p.label}] {p.a!r} | {p.b!r} -> {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
