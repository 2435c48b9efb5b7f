"""Long-term memory: ``LongTermMemory`` on a store of N conversation turns and
N memories (N = 100,000; 2,000 under ``--benchmark-disable``, as CI runs it), each
measure with a baseline in the same run:

- ``add_turn`` (heuristic extraction on) on the full store, one call per round; each
  round's setup also times, on the same turn, ``extract()`` alone and one
  ``INSERT`` of the turn into a bare DuckDB ``turns`` table of N rows (what a naive
  store pays per turn), so the ratios come from the same machine state; besides
  the wall time, the process's CPU time in each call (``add_turn_cpu_*``: the work,
  without the waits for a core, which dominate p99 on a loaded machine);
- ``recall`` (k = 10, LoCoMo's questions) lexical only, interleaved with bm25s
  (``bm25s.tokenize(stopwords="en")``, top 10) over the same texts; and with the
  dense channel on: every stored turn and memory gets a random unit vector
  (384-d, written to ``memory_vectors`` before the store is opened, so no text is
  embedded), the query itself is embedded by MiniLM as in real use;
- ``gc`` (dry run and real) over the N memories, each round on a fresh copy of the
  store loaded in the setup; baseline: one SQL ``UPDATE`` recomputing the memory score of
  every active memory in DuckDB;
- ``consolidate`` (dry run and real) at the last turn + 120 days, each round on a
  fresh copy, against the ``gc`` pass of the same run; and ``recall`` before and
  after that pass, interleaved;
- opening and loading the store (first use reads every row; the lexical indexes are
  read as saved beside the file at the last close, or, ``test_load_rebuilt``, built
  from the rows when there are none), against reading the same rows with DuckDB
  alone; the RSS it takes is measured in a fresh process.

Texts: LoCoMo's 1,451 turns (``locomo-dev.json`` in ``$AIRCHER_DATA``, see
``benchdata.py``; the tests skip without it), cycled: cycle c gets its own session
ids, dates shifted by 40 days a cycle and its own pair of speaker names per
conversation, also substituted in the text (cycle 0 keeps the real names, so
LoCoMo's questions match it). Memories:
``remember`` of two different turns' texts joined (pairs never repeat), kinds in
turn, dates over the last 60 days, one in ten important, until N exist.

    pytest benches/bench_longterm.py --benchmark-json=lt.json && python benches/report.py lt.json
    python benches/bench_longterm.py lt.json      # extra_info: p50/p95/p99, ratios, RSS
    AIRCHER_BENCH_LONGTERM_N=10000 pytest benches/bench_longterm.py    # another size
    AIRCHER_BENCH_LONGTERM_CACHE=/tmp/lt pytest ...   # keep the built store between runs
"""

from __future__ import annotations

import dataclasses
import importlib.util
import itertools
import json
import os
import random
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import aircher_mem as am
import aircher_mem.embeddings
import aircher_mem.retrieval
import duckdb
import numpy as np
import pytest
from aircher_mem.longterm import LongTermMemory, contradictions, memories
from aircher_mem.longterm.extract import extract
from aircher_mem.longterm.store import INDEX_SUFFIXES

sys.path.insert(0, str(Path(__file__).parent))
import locomo
from aircher_mem.results import GcReport
from benchdata import LOCOMO

HAVE_BM25S = importlib.util.find_spec("bm25s") is not None
NO_BM25S = "bm25s is not installed (pip install bm25s): the BM25 baseline is skipped"
FULL_N = 100_000
QUICK_N = 2_000
DIM = 384  # all-MiniLM-L6-v2
DAY = 86_400.0
NAMES = (
    "Avery Blake Casey Dana Elliot Frankie Gray Harper Indigo Jordan Kai Logan Morgan Noel Oakley Parker "
    "Quinn Riley Sage Taylor Umber Vesper Winter Xen Yael Zion Alex Bailey Cameron Drew Emery Finley"
).split()


def pct(data: list[float], q: float) -> float:
    """Nearest-rank percentile of ``data`` (seconds) in ms."""
    ordered = sorted(data)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered) + 0.5) - 1))] * 1e3


def dist(data: list[float], prefix: str = "") -> dict[str, float]:
    if not data:
        return {}
    out = {f"{prefix}p{int(q * 100)}_ms": round(pct(data, q), 3) for q in (0.5, 0.95, 0.99)}
    out[f"{prefix}max_ms"] = round(max(data) * 1e3, 3)
    return out


def load_average() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


# -- the data --------------------------------------------------------------------------------


class Texts:
    """LoCoMo's turns and questions, and the cycled turns/memories built from them."""

    def __init__(self, conversations: list[locomo.Conversation]) -> None:
        self.turns = [(c.sample_id, t) for c in conversations for t in c.turns]
        self.questions = [q.text for c in conversations for q in c.questions]
        self.speakers = {c.sample_id: sorted({t.speaker for t in c.turns}) for c in conversations}

    def turn(self, i: int) -> dict[str, Any]:
        """The i-th cycled turn: add_turn's arguments."""
        conv, t = self.turns[i % len(self.turns)]
        cycle = i // len(self.turns)
        text, speaker = t.content, t.speaker
        if cycle:
            rename = {
                name: NAMES[(cycle * 7 + j * 13 + len(conv)) % len(NAMES)] for j, name in enumerate(self.speakers[conv])
            }
            for old, new in rename.items():
                text = text.replace(old, new)
            speaker = rename.get(speaker, speaker)
        return {
            "session_id": f"{conv}:c{cycle}:s{t.session}",
            "role": "user",
            "text": text,
            "speaker": speaker,
            "at": t.at.timestamp() + cycle * 40 * DAY,
        }

    def memory(self, i: int, rng: random.Random, now: float) -> dict[str, Any]:
        """The i-th memory: two different turns' texts (the pair never repeats)."""
        n = len(self.turns)
        a, cycle = i % n, i // n
        b = (a + 1 + cycle) % n
        return {
            "content": f"{self.turns[a][1].content} {self.turns[b][1].content}",
            "kind": ("fact", "episode", "decision", "pattern", "workflow")[i % 5],
            "importance": int(i % 10 == 0),
            "at": now - rng.uniform(0, 60 * DAY),
        }


@pytest.fixture(scope="module")
def texts() -> Texts:
    if not LOCOMO.path.is_file():
        pytest.skip(LOCOMO.missing())
    return Texts(locomo.load(LOCOMO.path))


@pytest.fixture(scope="module")
def size(request: pytest.FixtureRequest) -> int:
    env = os.environ.get("AIRCHER_BENCH_LONGTERM_N")
    if env:
        return int(env)
    return QUICK_N if request.config.getoption("benchmark_disable") else FULL_N


# -- the store -------------------------------------------------------------------------------


class Store:
    """The built store file (N turns by add_turn, N memories by remember), read-only:
    every test that opens a store opens a copy."""

    def __init__(self, path: Path, n: int, texts: Texts, info: dict[str, Any]) -> None:
        self.path, self.n, self.texts, self.info = path, n, texts, info

    def copy(self, to: Path, *, indexes: bool = True) -> Path:
        """A copy of the store file, with the lexical indexes saved beside it unless
        ``indexes`` is false (then its first load builds them from the rows)."""
        to.mkdir(parents=True, exist_ok=True)
        target = to / self.path.name
        for suffix in ("", ".wal", *(INDEX_SUFFIXES if indexes else ())):
            src = Path(str(self.path) + suffix)
            if src.exists():
                shutil.copyfile(src, Path(str(target) + suffix))
        return target

    def documents(self) -> tuple[list[str], list[str]]:
        """Keys and texts of every turn (``speaker: text``, as the dense channel embeds
        them) and memory, as stored (redacted)."""
        con = duckdb.connect(str(self.path), read_only=True)
        try:
            turns = con.execute("SELECT id, speaker, text FROM turns ORDER BY id").fetchall()
            memories = con.execute("SELECT id, content FROM memories ORDER BY id").fetchall()
        finally:
            con.close()
        keys = [f"t{i}" for i, _, _ in turns] + [f"m{i}" for i, _ in memories]
        docs = [f"{s}: {t}" if s else t for _, s, t in turns] + [c for _, c in memories]
        return keys, docs


def build(path: Path, n: int, texts: Texts) -> dict[str, Any]:
    info: dict[str, Any] = {"load_average_build": load_average()}
    lt = LongTermMemory(path)
    start = time.perf_counter()
    with lt.batch():  # one commit a batch_rows, not one a turn
        for i in range(n):
            lt.add_turn(**texts.turn(i))
    info["build_add_turn_s"] = round(time.perf_counter() - start, 1)
    rng = random.Random(14)
    now = time.time()
    start = time.perf_counter()
    made = i = 0
    with lt.batch():
        while made < n and i < 2 * n:
            done = lt.remember(**texts.memory(i, rng, now))
            made += done.action != "merged"
            i += 1
    info["build_remember_s"] = round(time.perf_counter() - start, 1)
    info["remember_calls"] = i
    info.update(lt.counts())
    lt.close()
    return info


@pytest.fixture(scope="module")
def store(texts: Texts, size: int, tmp_path_factory: pytest.TempPathFactory) -> Store:
    cache = os.environ.get("AIRCHER_BENCH_LONGTERM_CACHE")
    folder = Path(cache) if cache else tmp_path_factory.mktemp("longterm")
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"longterm-{size}.duckdb"
    meta = path.with_suffix(".json")
    if path.exists() and meta.exists():
        info = json.loads(meta.read_text())
    else:
        for stale in (path, Path(f"{path}.wal")):
            stale.unlink(missing_ok=True)
        info = build(path, size, texts)
        meta.write_text(json.dumps(info))
    if not all(Path(f"{path}{suffix}").exists() for suffix in INDEX_SUFFIXES):
        opened(path).close()  # a store built before indexes were saved at close
    info["file_mb"] = round(path.stat().st_size / 1e6, 1)
    return Store(path, size, texts, info)


def opened(path: Path, policy: am.Policy | None = None) -> LongTermMemory:
    """A LongTermMemory on ``path`` as ``Memory.longterm`` opens it, loaded."""
    policy = policy or am.Policy()
    embedder, why = am.retrieval.dense_embedder(policy)
    lt = LongTermMemory(
        path,
        policy=policy.longterm,
        retrieval=policy.retrieval,
        lifecycle=policy.lifecycle,
        embedder=embedder,
        dense_note=why,
    )
    lt.counts()  # first use: reads everything, builds the index
    return lt


# -- open + load -----------------------------------------------------------------------------

RSS_SCRIPT = """
import json, resource, sys, time
from pathlib import Path
def rss():
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
from aircher_mem.longterm import LongTermMemory
before = rss()
start = time.perf_counter()
lt = LongTermMemory(sys.argv[1])
counts = lt.counts()
seconds = time.perf_counter() - start
print(json.dumps({"load_s": round(seconds, 3), "rss_before_mb": round(before), "rss_after_mb": round(rss()),
                  "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}))
"""


def timed_loads(benchmark: Any, path: Path, source: str) -> None:
    """Three rounds of open + first use of the store at ``path``, each on the store as
    the round before left it: its indexes read as saved (``source`` "saved"), or, for
    "rebuilt", built from the rows (the ones each close saves are taken away)."""
    stores: list[LongTermMemory] = []

    def setup() -> tuple[tuple[()], dict[str, Any]]:
        while stores:
            stores.pop().close()
        if source == "rebuilt":
            for suffix in INDEX_SUFFIXES:
                Path(f"{path}{suffix}").unlink(missing_ok=True)
        return (), {}

    def load() -> None:
        lt = opened(path)
        stores.append(lt)
        assert lt.index_source == source

    benchmark.pedantic(load, setup=setup, rounds=3, warmup_rounds=0)
    setup()


def test_load(benchmark: Any, store: Store, tmp_path: Path) -> None:
    """Open + first use (every row read, the lexical indexes read as saved at the last
    close); extra_info: the RSS of a fresh process doing the same, and the build's
    figures."""
    benchmark.group = f"long-term store of {store.n:,} turns + memories: open + load"
    path = store.copy(tmp_path)
    timed_loads(benchmark, path, "saved")
    proc = subprocess.run([sys.executable, "-c", RSS_SCRIPT, str(path)], capture_output=True, text=True, check=True)
    benchmark.extra_info.update(impl="LongTermMemory open + load", load_average=load_average())
    benchmark.extra_info.update(json.loads(proc.stdout))
    benchmark.extra_info.update(store.info)
    _keys, docs = store.documents()
    benchmark.extra_info["text_mb"] = round(sum(len(d.encode()) for d in docs) / 1e6, 1)


def test_load_rebuilt(benchmark: Any, store: Store, tmp_path: Path) -> None:
    """Open + first use without saved indexes (a store closed by a crash, or written
    before they were saved): every row read and the BM25F indexes built from them."""
    benchmark.group = f"long-term store of {store.n:,} turns + memories: open + load"
    path = store.copy(tmp_path, indexes=False)
    timed_loads(benchmark, path, "rebuilt")
    benchmark.extra_info.update(impl="LongTermMemory open + load, indexes built", load_average=load_average())


def test_load_baseline(benchmark: Any, store: Store, tmp_path: Path) -> None:
    """Baseline: the same rows read by DuckDB alone (the turns' and memories' columns
    that load reads), no index."""
    benchmark.group = f"long-term store of {store.n:,} turns + memories: open + load"
    path = store.copy(tmp_path)

    def read() -> int:
        con = duckdb.connect(str(path), read_only=True)
        try:
            return len(con.execute("SELECT * FROM turns").fetchall()) + len(
                con.execute("SELECT * FROM memories").fetchall()
            )
        finally:
            con.close()

    benchmark.extra_info.update(impl="baseline: DuckDB SELECT * of turns and memories", load_average=load_average())
    rows = benchmark.pedantic(read, rounds=3, warmup_rounds=0)
    assert rows >= store.n


# -- recall ----------------------------------------------------------------------------------


class Bm25:
    """bm25s over the store's texts (as ``locomo.py``'s baseline: English stop words)."""

    def __init__(self, keys: list[str], docs: list[str]) -> None:
        import bm25s

        self.bm25s = bm25s
        start = time.perf_counter()
        self.retriever = bm25s.BM25()
        self.retriever.index(self.tokenize(docs), show_progress=False)
        self.seconds = time.perf_counter() - start
        self.keys = keys
        self.vocab = self.retriever.vocab_dict

    def tokenize(self, texts: list[str]) -> Any:
        return self.bm25s.tokenize(texts, stopwords="en", return_ids=False, show_progress=False)

    def rank(self, query: str, k: int = 10) -> list[str]:
        tokens = [t for t in self.tokenize([query])[0] if t in self.vocab]
        if not tokens:
            return []
        scores = self.retriever.get_scores(tokens)
        top = np.argpartition(-scores, k)[:k]
        return [self.keys[i] for i in top[np.argsort(-scores[top])] if scores[i] > 0]


@pytest.fixture(scope="module")
def bm25(store: Store) -> Bm25:
    if not HAVE_BM25S:
        pytest.skip(NO_BM25S)
    return Bm25(*store.documents())


@pytest.fixture(scope="module")
def lexical(store: Store, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LongTermMemory]:
    lt = opened(store.copy(tmp_path_factory.mktemp("lexical")))
    yield lt
    lt.close()


def run_queries(benchmark: Any, queries: list[str], fn: Callable[[str], Any], passes: int) -> None:
    """One round per query, cycling ``passes`` times over them after a warm pass."""
    if not benchmark.disabled:
        for q in queries:
            fn(q)
    cycle = itertools.cycle(queries)
    benchmark.pedantic(lambda: fn(next(cycle)), rounds=passes * len(queries), warmup_rounds=0)


def questions(store: Store, benchmark: Any) -> list[str]:
    return store.texts.questions[:5] if benchmark.disabled else store.texts.questions


def test_recall_lexical(benchmark: Any, store: Store, lexical: LongTermMemory, bm25: Bm25) -> None:
    """Each round: one question through ``recall`` (lexical), then through bm25s; the
    pytest-benchmark stats are both together, extra_info each one's p50/p95."""
    benchmark.group = f"recall on {store.n:,} turns + {store.n:,} memories"
    times: dict[str, list[float]] = {"recall": [], "bm25": [], "recall_cpu": []}

    def both(q: str) -> None:
        start, start_cpu = time.perf_counter(), time.process_time()
        hits = lexical.recall(q, k=10).hits
        times["recall_cpu"].append(time.process_time() - start_cpu)
        middle = time.perf_counter()
        bm25.rank(q, 10)
        times["recall"].append(middle - start)
        times["bm25"].append(time.perf_counter() - middle)
        assert hits or not q

    run_queries(benchmark, questions(store, benchmark), both, passes=2)
    benchmark.extra_info.update(impl="recall (lexical) then bm25s, same question", load_average=load_average())
    benchmark.extra_info.update(dist(times["recall"], "recall_"))
    benchmark.extra_info.update(dist(times["recall_cpu"], "recall_cpu_"))
    benchmark.extra_info.update(dist(times["bm25"], "bm25_"))
    for p in ("p50", "p95"):
        ratio = benchmark.extra_info[f"recall_{p}_ms"] / benchmark.extra_info[f"bm25_{p}_ms"]
        benchmark.extra_info[f"recall_over_bm25_{p}"] = round(ratio, 2)
    benchmark.extra_info["bm25_index_s"] = round(bm25.seconds, 1)


def inject_vectors(path: Path, seed: int = 0) -> int:
    """A random unit vector for every turn and memory in the store at ``path``."""
    con = duckdb.connect(str(path))
    try:
        keys = [f"t{i}" for (i,) in con.execute("SELECT id FROM turns").fetchall()]
        keys += [f"m{i}" for (i,) in con.execute("SELECT id FROM memories").fetchall()]
        rng = np.random.default_rng(seed)
        for start in range(0, len(keys), 5000):
            chunk = keys[start : start + 5000]
            vectors = rng.standard_normal((len(chunk), DIM), dtype=np.float32)
            vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
            con.execute(
                "INSERT OR REPLACE INTO memory_vectors SELECT unnest(?::VARCHAR[]), unnest(?::FLOAT[][])",
                [chunk, vectors.tolist()],
            )
    finally:
        con.close()
    return len(keys)


def test_recall_dense(benchmark: Any, store: Store, tmp_path: Path) -> None:
    """``[retrieval] dense = "on"``: random unit vectors stand in for the stored texts'
    embeddings (same count and dimension, so the same brute-force search); the
    question is embedded by the real model. extra_info: the embedding of the question
    alone, timed right after each recall, and the load with vectors."""
    ok, why = am.embeddings.available()
    if not ok:
        pytest.skip(why)
    benchmark.group = f"recall on {store.n:,} turns + {store.n:,} memories"
    path = store.copy(tmp_path)
    vectors = inject_vectors(path)
    start = time.perf_counter()
    lt = opened(path, am.Policy.from_dict({"retrieval": {"dense": "on"}}))
    load_s = time.perf_counter() - start
    # every item has a vector: the first recall loads the model only to embed the query
    assert "dense" in lt.recall("warm up the model", k=10).channels
    assert lt._embedder is not None and lt._vectors is not None and len(lt._vectors) == vectors
    embedder = lt._embedder
    times: dict[str, list[float]] = {"recall": [], "embed": []}

    def one(q: str) -> None:
        start = time.perf_counter()
        found = lt.recall(q, k=10)
        middle = time.perf_counter()
        embedder.embed([q])
        times["recall"].append(middle - start)
        times["embed"].append(time.perf_counter() - middle)
        assert "dense" in found.channels

    try:
        run_queries(benchmark, questions(store, benchmark), one, passes=1)
    finally:
        lt.close()
    benchmark.extra_info.update(impl="recall, dense on (random stored vectors)", load_average=load_average())
    benchmark.extra_info.update(dist(times["recall"], "recall_"))
    benchmark.extra_info.update(dist(times["embed"], "embed_query_"))
    benchmark.extra_info.update(vectors=vectors, load_with_vectors_s=round(load_s, 2))


# -- add_turn --------------------------------------------------------------------------------


def test_add_turn(benchmark: Any, store: Store, tmp_path: Path) -> None:
    """add_turn (extraction on) on a loaded copy of the store, new turns continuing the
    cycle. Each round's setup times extract() alone and a single-row INSERT of the
    same turn into a bare DuckDB table holding N rows (baselines, same machine state)."""
    benchmark.group = f"add_turn on a store of {store.n:,} turns"
    lt = opened(store.copy(tmp_path / "ours"))
    con = duckdb.connect(str(tmp_path / "naive.duckdb"))
    con.execute(
        "CREATE TABLE turns (id BIGINT PRIMARY KEY, session_id VARCHAR NOT NULL, role VARCHAR NOT NULL, "
        "speaker VARCHAR, text VARCHAR NOT NULL, said_at DOUBLE NOT NULL, metadata VARCHAR NOT NULL, "
        "tags VARCHAR NOT NULL)"
    )
    con.execute(f"INSERT INTO turns SELECT range, 's', 'user', 'x', 'some text', 0, '{{}}', '[]' FROM range({store.n})")
    counter = itertools.count(2 * store.n)  # fresh cycles: new sessions
    base: dict[str, list[float]] = {"extract": [], "insert": []}
    results: list[Any] = []

    def setup() -> tuple[tuple[()], dict[str, Any]]:
        i = next(counter)
        turn = store.texts.turn(i)
        start = time.perf_counter()
        extract(turn["text"], role="user", speaker=turn["speaker"])
        middle = time.perf_counter()
        con.execute(
            "INSERT INTO turns VALUES (?, ?, ?, ?, ?, ?, '{}', '[]')",
            [i, turn["session_id"], "user", turn["speaker"], turn["text"], turn["at"]],
        )
        base["extract"].append(middle - start)
        base["insert"].append(time.perf_counter() - middle)
        return (), turn

    calls = 50 if benchmark.disabled else 3000
    times: list[float] = []
    cpu: list[float] = []  # the process's CPU time in the call: the work, without the waits for a core

    def add(**turn: Any) -> None:
        start, start_cpu = time.perf_counter(), time.process_time()
        results.append(lt.add_turn(**turn))
        cpu.append(time.process_time() - start_cpu)
        times.append(time.perf_counter() - start)

    try:
        benchmark.pedantic(add, setup=setup, rounds=calls, warmup_rounds=0)
    finally:
        lt.close()
        con.close()
    benchmark.extra_info.update(impl="add_turn (extract=True), baselines timed in the setup")
    benchmark.extra_info.update(load_average=load_average(), calls=len(times))
    benchmark.extra_info.update(dist(times, "add_turn_"))
    benchmark.extra_info.update(dist(cpu, "add_turn_cpu_"))
    benchmark.extra_info.update(dist(base["extract"], "extract_"))
    benchmark.extra_info.update(dist(base["insert"], "insert_"))
    for p in ("p50", "p95", "p99"):
        info = benchmark.extra_info
        info[f"add_turn_over_insert_{p}"] = round(info[f"add_turn_{p}_ms"] / info[f"insert_{p}_ms"], 2)
        info[f"add_turn_over_extract_{p}"] = round(info[f"add_turn_{p}_ms"] / info[f"extract_{p}_ms"], 2)
    benchmark.extra_info["memories_touched"] = sum(len(r.extracted) for r in results)


# -- a short-lived writer ------------------------------------------------------------------


def test_short_writer(benchmark: Any, store: Store, tmp_path: Path) -> None:
    """What a process that opens the store to write once pays (a hook or a CLI command
    without a server): open + first use, one add_turn, close. The lexical indexes saved
    beside the file are kept by the log of the documents each write changes (the
    default), against the baseline that saves them anew at every close after a write
    (``[longterm] index_log_rows = 0``): the two interleaved, each on a copy of the
    store, round after round (the log grows as it would; past its limit a close saves)."""
    benchmark.group = f"a short-lived writer on a store of {store.n:,} turns + memories"
    modes = {
        "logged": am.Policy(),
        "saved": am.Policy(longterm=dataclasses.replace(am.Policy().longterm, index_log_rows=0)),
    }
    paths = {mode: store.copy(tmp_path / mode) for mode in modes}
    counter = itertools.count(3 * store.n)
    times: dict[str, list[float]] = {mode: [] for mode in modes}
    closes: dict[str, list[float]] = {mode: [] for mode in modes}

    def write(mode: str) -> None:
        turn = store.texts.turn(next(counter))
        start = time.perf_counter()
        lt = opened(paths[mode], modes[mode])
        lt.add_turn(**turn)
        closing = time.perf_counter()
        lt.close()
        closes[mode].append(time.perf_counter() - closing)
        times[mode].append(time.perf_counter() - start)

    def setup() -> tuple[tuple[()], dict[str, Any]]:
        write("saved")  # the baseline's round, just before ours
        return ("logged",), {}

    rounds = 3 if benchmark.disabled else 12
    benchmark.pedantic(write, setup=setup, rounds=rounds, warmup_rounds=0)
    benchmark.extra_info.update(impl="open + add_turn + close, changes logged", load_average=load_average())
    for mode in modes:
        benchmark.extra_info.update(dist(times[mode], f"{mode}_"))
        benchmark.extra_info.update(dist(closes[mode], f"{mode}_close_"))
    info = benchmark.extra_info
    info["logged_over_saved_p50"] = round(info["logged_p50_ms"] / info["saved_p50_ms"], 3)


# -- contradictions -----------------------------------------------------------------------


def test_contradiction_scan(benchmark: Any, store: Store, lexical: LongTermMemory) -> None:
    """What the contradiction check adds to storing a memory: its ``scan_neighbours``
    nearest (found by the merge check's own search, done in the setup and timed as
    the baseline) each through the offline rules (``contradictions.pairs``), for
    active memories of the store taken as new, evenly spread."""
    benchmark.group = f"contradiction scan in {store.n:,} memories"
    active = sorted(m.id for m in lexical._memories.values() if m.status == "active")
    calls = 50 if benchmark.disabled else 2000
    picked = itertools.cycle(active[:: max(1, len(active) // calls)])
    lookup: list[float] = []
    times: list[float] = []
    found: list[int] = []

    def setup() -> tuple[tuple[Any, list[str]], dict[str, Any]]:
        memory = lexical._memories[next(picked)]
        start = time.perf_counter()
        near = memories.nearest(lexical, memory.content)
        lookup.append(time.perf_counter() - start)
        return (memory, near), {}

    def scan(memory: Any, near: list[str]) -> None:
        start = time.perf_counter()
        found.append(len(contradictions.pairs(lexical, memory, near=near)))
        times.append(time.perf_counter() - start)

    benchmark.pedantic(scan, setup=setup, rounds=calls, warmup_rounds=0)
    benchmark.extra_info.update(impl="contradictions.pairs given the neighbours; their lookup in the setup")
    benchmark.extra_info.update(load_average=load_average(), calls=len(times))
    benchmark.extra_info.update(neighbours=lexical.decisions.scan_neighbours)
    benchmark.extra_info.update(dist(times, "scan_"))
    benchmark.extra_info.update(dist(lookup, "lookup_"))
    info = benchmark.extra_info
    info["scan_over_lookup_p95"] = round(info["scan_p95_ms"] / info["lookup_p95_ms"], 2)
    info["contradictions_found"] = sum(found)


# -- forget ----------------------------------------------------------------------------------


def test_forget(benchmark: Any, store: Store, tmp_path: Path) -> None:
    """forget by id on a loaded copy of the store, a different memory (and the turns
    it came from) each round: rows, indexes, then the file rewritten so no free block
    keeps the text. extra_info: the rewrite's share (``store.rewrite`` timed inside
    the same calls) and, as the baseline, the same DELETEs and a CHECKPOINT in DuckDB
    on another copy (what forgetting cost without the rewrite)."""
    from aircher_mem import store as store_module

    benchmark.group = f"forget on a store of {store.n:,} turns"
    lt = opened(store.copy(tmp_path / "ours"))
    ids = iter(range(1, store.n, max(1, store.n // 40)))
    rewrites: list[float] = []
    real_rewrite = store_module.rewrite

    def timed_rewrite(path: Any) -> None:
        start = time.perf_counter()
        real_rewrite(path)
        rewrites.append(time.perf_counter() - start)

    times: list[float] = []

    def forget(memory_id: int) -> None:
        start = time.perf_counter()
        lt.forget(memory_id)
        times.append(time.perf_counter() - start)

    def setup() -> tuple[tuple[int], dict[str, Any]]:
        memory_id = next(ids)
        while True:
            try:
                lt.get(memory_id)
                return (memory_id,), {}
            except am.UnknownMemoryError:
                memory_id = next(ids)

    store_module.rewrite = timed_rewrite  # type: ignore[assignment]
    try:
        benchmark.pedantic(forget, setup=setup, rounds=3 if benchmark.disabled else 20, warmup_rounds=0)
    finally:
        store_module.rewrite = real_rewrite
        lt.close()
    con = duckdb.connect(str(store.copy(tmp_path / "baseline")))
    base: list[float] = []
    for memory_id in range(2, store.n, max(1, store.n // 10)):
        start = time.perf_counter()
        con.execute("DELETE FROM memories WHERE id = ?", [memory_id])
        con.execute("DELETE FROM memory_links WHERE memory_id = ?", [memory_id])
        con.execute("DELETE FROM memory_actions WHERE memory_id = ?", [memory_id])
        con.execute("CHECKPOINT")
        base.append(time.perf_counter() - start)
    con.close()
    benchmark.extra_info.update(impl="forget(memory_id), file rewritten", load_average=load_average())
    benchmark.extra_info.update(dist(times, "forget_"))
    benchmark.extra_info.update(dist(rewrites, "rewrite_"))
    benchmark.extra_info.update(dist(base, "delete_checkpoint_"))
    benchmark.extra_info["file_mb"] = store.info["file_mb"]


# -- gc --------------------------------------------------------------------------------------


class FreshCopies:
    """A fresh copy of the store for each benchmark round, copied, opened and loaded
    in the round's setup (not timed); the last one stays open until :meth:`close`."""

    def __init__(self, store: Store, tmp_path: Path) -> None:
        self.store, self.tmp_path = store, tmp_path
        self.opened: list[LongTermMemory] = []
        self.rounds = itertools.count()

    def setup(self) -> tuple[tuple[()], dict[str, Any]]:
        self.close()
        self.opened.append(opened(self.store.copy(self.tmp_path / str(next(self.rounds)))))
        return (), {}

    @property
    def current(self) -> LongTermMemory:
        return self.opened[-1]

    def close(self) -> None:
        while self.opened:
            self.opened.pop().close()


@pytest.mark.parametrize("dry_run", [True, False], ids=["dry-run", "real"])
def test_gc(benchmark: Any, store: Store, tmp_path: Path, dry_run: bool) -> None:
    """gc on a fresh copy of the store each round (copied, opened and loaded in the
    setup, not timed). The real pass archives most memories (old, low scoring or
    beyond mid_capacity) and writes them; extra_info: a second gc right after."""
    benchmark.group = f"gc over {store.n:,} memories"
    copies = FreshCopies(store, tmp_path)
    reports: list[GcReport] = []
    benchmark.pedantic(lambda: reports.append(copies.current.gc(dry_run=dry_run)), setup=copies.setup, rounds=3)
    start = time.perf_counter()
    second = copies.current.gc(dry_run=dry_run)
    again = time.perf_counter() - start
    copies.close()
    report = reports[-1]
    benchmark.extra_info.update(impl=f"gc(dry_run={dry_run})", load_average=load_average())
    benchmark.extra_info.update(
        scored=report.scored,
        promoted=len(report.promoted),
        archived_low=len(report.archived_low_score),
        archived_old=len(report.archived_age),
        archived_capacity=len(report.archived_capacity),
        second_gc_ms=round(again * 1e3, 1),
        second_gc_scored=second.scored,
    )
    assert report.scored >= store.n * 0.9


def test_gc_baseline(benchmark: Any, store: Store, tmp_path: Path) -> None:
    """Baseline: the memory score of every active memory recomputed by one SQL UPDATE in
    DuckDB (on a fresh copy each round)."""
    benchmark.group = f"gc over {store.n:,} memories"
    policy = am.Policy().longterm
    cons: list[duckdb.DuckDBPyConnection] = []
    rounds = itertools.count()
    sql = (
        f"UPDATE memories SET score = {policy.w_freq} * ln(1 + hits) + {policy.w_recency} * "
        f"exp(-{policy.decay_lambda} * greatest(0, (? - last_seen) / {DAY})) + {policy.w_importance} * importance "
        "WHERE status = 'active'"
    )

    def setup() -> tuple[tuple[()], dict[str, Any]]:
        while cons:
            cons.pop().close()
        cons.append(duckdb.connect(str(store.copy(tmp_path / str(next(rounds))))))
        return (), {}

    benchmark.pedantic(lambda: cons[-1].execute(sql, [time.time()]), setup=setup, rounds=3)
    while cons:
        cons.pop().close()
    benchmark.extra_info.update(impl="baseline: one SQL UPDATE of every active score", load_average=load_average())


# -- consolidation ---------------------------------------------------------------------------


def aged_now(lt: LongTermMemory) -> float:
    """The time a consolidation ages the store to: its last turn + 120 days."""
    return max(t.at for t in lt._turns.values()) + 120 * DAY


@pytest.mark.parametrize("dry_run", [True, False], ids=["dry-run", "real"])
def test_consolidate(benchmark: Any, store: Store, tmp_path: Path, dry_run: bool) -> None:
    """A first consolidation pass at the last turn + 120 days, on a fresh copy of the
    store each round (copied, opened and loaded in the setup, not timed): the N turns
    become episodes, the N memories are placed in their layers, the unused are
    forgotten (the file rewritten). The baseline is the gc pass of the same run
    (``test_gc``); extra_info: the report's counts and a second pass right after."""
    benchmark.group = f"consolidate {store.n:,} turns + {store.n:,} memories"
    copies = FreshCopies(store, tmp_path)
    reports: list[Any] = []

    def run() -> None:
        lt = copies.current
        reports.append(lt.consolidate(now=aged_now(lt), dry_run=dry_run))

    benchmark.pedantic(run, setup=copies.setup, rounds=2 if not benchmark.disabled else 1)
    lt = copies.current
    start = time.perf_counter()
    second = lt.consolidate(now=aged_now(lt), dry_run=dry_run)
    again = time.perf_counter() - start
    copies.close()
    report = reports[-1]
    benchmark.extra_info.update(impl=f"consolidate(dry_run={dry_run})", load_average=load_average())
    benchmark.extra_info.update(
        episodes=report.episodes,
        summarized=report.summarized,
        pending=report.pending,
        deduped=report.deduped,
        forgotten=report.forgotten,
        tiers=report.tiers,
        linked=report.linked,
        second_pass_ms=round(again * 1e3, 1),
        second_pass_summarized=second.summarized,
        second_pass_pending=second.pending,
    )
    assert report.episodes > 0


def test_recall_before_and_after_consolidation(benchmark: Any, store: Store, tmp_path: Path) -> None:
    """recall (k = 10, LoCoMo's questions) on one copy of the store, interleaved:
    every question is asked before the consolidation pass (at the last turn + 120
    days) and after it; the stats are the questions after, extra_info both p50/p95."""
    benchmark.group = f"recall on {store.n:,} turns + {store.n:,} memories"
    before_store = opened(store.copy(tmp_path / "before"))
    after_store = opened(store.copy(tmp_path / "after"))
    after_store.consolidate(now=aged_now(after_store))
    times: dict[str, list[float]] = {"before": [], "after": []}

    def both(q: str) -> None:
        start = time.perf_counter()
        before_store.recall(q, k=10)
        middle = time.perf_counter()
        after_store.recall(q, k=10)
        times["before"].append(middle - start)
        times["after"].append(time.perf_counter() - middle)

    try:
        run_queries(benchmark, questions(store, benchmark), both, passes=1)
    finally:
        before_store.close()
        after_store.close()
    benchmark.extra_info.update(impl="recall before, then after, one consolidation", load_average=load_average())
    benchmark.extra_info.update(dist(times["before"], "before_"))
    benchmark.extra_info.update(dist(times["after"], "after_"))


# -- summary ---------------------------------------------------------------------------------


def summary(path: str) -> None:
    """Prints each case's median and extra_info from a pytest-benchmark JSON file."""
    for b in json.load(open(path))["benchmarks"]:
        if "bench_longterm" not in b["fullname"]:
            continue
        print(f"{b['name']}: median {b['stats']['median'] * 1e3:.3f} ms; {b['extra_info']}")


if __name__ == "__main__":
    summary(sys.argv[1])
