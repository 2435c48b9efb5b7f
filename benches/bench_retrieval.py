"""Code search on a copy of CPython's standard library: the hybrid search
(``KnowledgeGraph.search``, what ``Memory.search_code`` runs) at definition and file
level against plain BM25 over whole files (bm25s, the baseline of ``localization.py``)
in the same run, on a fixed list of natural-language queries, tracebacks and error
messages; the relevant code one message brings (``find_relevant_to_query``, 2K
tokens) and ``prepare_context`` with ``graph_code_provider`` against
``prepare_context`` without code; ``update_file`` after appending a function (and
the search finding it); the index's size on disk and the process's RSS.

Each round is one query, so pytest-benchmark's stats are per query; ``extra_info``
adds p50/p95 over all rounds and the median of each query. ``test_search_interleaved``
runs ours (both levels) and BM25 one after the other on each query, so the ratios it
reports are from the same machine state. The tree is copied first because the
``update_file`` cases edit files (restored afterwards).

    pytest benches/bench_retrieval.py --benchmark-json=r.json && python benches/report.py r.json
    python benches/bench_retrieval.py r.json     # the extra_info: p50/p95, ratios, sizes, RSS
"""

from __future__ import annotations

import importlib.util
import itertools
import json
import resource
import shutil
import sys
import sysconfig
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import aircher_mem as am
import pytest
from aircher_mem.engine import (
    DynamicContextManager,
    KnowledgeGraph,
    TokenCounter,
    find_relevant_to_query,
    graph_code_provider,
)

STDLIB = Path(sysconfig.get_paths()["stdlib"])
HAVE_BM25S = importlib.util.find_spec("bm25s") is not None
NO_BM25S = "bm25s is not installed (pip install bm25s): the BM25 baseline is skipped"
ROUNDS = 5  # passes over the queries per case (pytest-benchmark rounds = ROUNDS x queries)

# (query, files that answer it or None when the stdlib has no single answer). {root} is
# the indexed tree, as in a traceback from the project being searched. The expected
# files were written before any run; they are reported as hits@k, not asserted.
QUERIES: list[tuple[str, tuple[str, ...] | None]] = [
    (
        "parse an email address header into display name and address",
        ("email/_header_value_parser.py", "email/utils.py", "email/headerregistry.py"),
    ),
    ("open a zip file and read its members", ("zipfile.py",)),
    ("retry a failed request", None),
    ("decode JSON and report the line and column of a syntax error", ("json/decoder.py",)),
    ("compress data with gzip and write it to a file", ("gzip.py",)),
    (
        'Traceback (most recent call last):\n  File "{root}/json/decoder.py", line 355, in raw_decode\n'
        '    raise JSONDecodeError("Expecting value", s, err.value) from None\n'
        "json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)",
        ("json/decoder.py",),
    ),
    (
        'Traceback (most recent call last):\n  File "{root}/subprocess.py", line 1901, in _execute_child\n'
        "    raise child_exception_type(errno_num, err_msg, err_filename)\n"
        "FileNotFoundError: [Errno 2] No such file or directory: 'gitx'",
        ("subprocess.py",),
    ),
    (
        'File "{root}/asyncio/base_events.py", line 515, in _check_closed\n'
        "    raise RuntimeError('Event loop is closed')\nRuntimeError: Event loop is closed",
        ("asyncio/base_events.py",),
    ),
    ("ssl.SSLCertVerificationError: certificate verify failed: unable to get local issuer certificate", ("ssl.py",)),
    (
        "UnicodeDecodeError: 'utf-8' codec can't decode byte 0xff in position 0: invalid start byte",
        ("codecs.py", "encodings/utf_8.py"),
    ),
    ("RecursionError: maximum recursion depth exceeded while pickling an object", ("pickle.py",)),
    ("sqlite3.OperationalError: database is locked", None),
    ("split a shell command line into arguments respecting quotes", ("shlex.py",)),
    ("wrap long paragraphs of text to a fixed width", ("textwrap.py",)),
    ("parse command line options with subcommands and help messages", ("argparse.py",)),
    ("read and write INI configuration files with sections", ("configparser.py",)),
    ("send an email through an SMTP server with TLS login", ("smtplib.py",)),
    ("compute the difference between two sequences of lines as a unified diff", ("difflib.py",)),
    ("find files matching a wildcard pattern recursively", ("glob.py", "fnmatch.py", "pathlib.py")),
    ("copy a directory tree preserving permissions", ("shutil.py",)),
    ("run coroutines concurrently and wait for the first to finish", ("asyncio/tasks.py",)),
    ("thread pool executor that runs callables in worker threads", ("concurrent/futures/thread.py",)),
    ("cache function results with a least recently used eviction", ("functools.py",)),
    ("format a datetime as ISO 8601 string with timezone offset", ("datetime.py",)),
    ("resolve a hostname and open a TCP connection with a timeout", ("socket.py",)),
    ("serve files over HTTP from the current directory", ("http/server.py",)),
    ("parse a URL into scheme, host, path and query string", ("urllib/parse.py",)),
    ("read a CSV file into dictionaries keyed by the header row", ("csv.py",)),
    ("create a temporary directory that is removed afterwards", ("tempfile.py",)),
    ("log messages to a file that rotates when it gets too large", ("logging/handlers.py",)),
    ("KeyError raised in __getitem__ of a ChainMap when no mapping has the key", ("collections/__init__.py",)),
    ("derive a key from a password and salt with pbkdf2", ("hashlib.py",)),
    ("extract a tar archive safely, rejecting members with absolute paths", ("tarfile.py",)),
]


def rss_mb() -> float:
    """Current resident set size (VmRSS), in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def pct(data: list[float], q: float) -> float:
    """Nearest-rank percentile of ``data`` (seconds) in ms."""
    ordered = sorted(data)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered) + 0.5) - 1))] * 1e3


class Corpus:
    """The copied tree, its graph (built once) and the queries with {root} filled in."""

    def __init__(self, root: Path) -> None:
        self.root = root
        before = rss_mb()
        start = time.perf_counter()
        self.graph = KnowledgeGraph.build(root)
        self.build_seconds = time.perf_counter() - start
        self.rss = {"rss_before_build_mb": round(before), "rss_after_build_mb": round(rss_mb())}
        self.rss["peak_rss_mb"] = round(peak_rss_mb())
        self.params = am.retrieval.search_params(am.Policy())
        self.queries = [(q.replace("{root}", str(root)), expected) for q, expected in QUERIES]
        self.source_bytes = sum((root / f).stat().st_size for f in self.graph.files)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Corpus:
    root = tmp_path_factory.mktemp("retrieval") / "lib"
    shutil.copytree(STDLIB, root, ignore=shutil.ignore_patterns("site-packages", "__pycache__"), symlinks=True)
    return Corpus(root)


@pytest.fixture(scope="module")
def bm25(corpus: Corpus) -> Any:
    if not HAVE_BM25S:
        pytest.skip(NO_BM25S)
    from localization import bm25_files

    return bm25_files(corpus.root, files=[f for f in corpus.graph.files if f.endswith(".py")])


def run_queries(
    benchmark: Any, corpus: Corpus, fn: Callable[[str], Any], rounds: int = ROUNDS
) -> tuple[dict[str, list[float]], dict[str, Any]]:
    """One pytest-benchmark round per query, cycling through the queries ``rounds``
    times after one untimed warm pass; returns each query's times and what each
    query returned last."""
    times: dict[str, list[float]] = {q: [] for q, _ in corpus.queries}
    results: dict[str, Any] = {}
    if not benchmark.disabled:
        for q, _ in corpus.queries:
            fn(q)
    cycle: Iterator[str] = itertools.cycle(q for q, _ in corpus.queries)

    def one() -> None:
        q = next(cycle)
        start = time.perf_counter()
        results[q] = fn(q)
        times[q].append(time.perf_counter() - start)

    benchmark.pedantic(one, rounds=rounds * len(corpus.queries), warmup_rounds=0)
    return times, results


def latency_info(times: dict[str, list[float]]) -> dict[str, Any]:
    every = [t for ts in times.values() for t in ts]
    if not every:
        return {}
    medians = {q[:60]: round(pct(ts, 0.5), 3) for q, ts in times.items() if ts}
    slowest = max(medians, key=lambda q: medians[q])
    return {
        "p50_ms": round(pct(every, 0.5), 3),
        "p95_ms": round(pct(every, 0.95), 3),
        "max_ms": round(max(every) * 1e3, 3),
        "slowest_query": slowest,
        "per_query_median_ms": medians,
    }


def hits_at(ranked: dict[str, list[str]], corpus: Corpus) -> dict[str, str]:
    """Queries with an expected file whose answer is among the top 1 / top 10 files."""
    judged = [(q, set(expected)) for q, expected in corpus.queries if expected is not None and q in ranked]
    out = {}
    for k in (1, 10):
        n = sum(1 for q, expected in judged if expected & set(ranked[q][:k]))
        out[f"hits@{k}"] = f"{n}/{len(judged)}"
    return out


def ours(corpus: Corpus, level: str) -> Callable[[str], Any]:
    graph, params = corpus.graph, corpus.params
    return lambda q: graph.search(q, params, level=level, limit=10)


def ranked_files(results: dict[str, Any]) -> dict[str, list[str]]:
    out = {}
    for q, (hits, _, _) in results.items():
        files: list[str] = []
        for h in hits:
            if h.symbol.path not in files:
                files.append(h.symbol.path)
        out[q] = files
    return out


# -- search -------------------------------------------------------------------------------


@pytest.mark.parametrize("level", ["definition", "file"])
def test_search(benchmark: Any, corpus: Corpus, level: str) -> None:
    benchmark.group = "code search, stdlib, one query"
    times, results = run_queries(benchmark, corpus, ours(corpus, level))
    benchmark.extra_info.update(impl=f"ours, {level} level (top 10)", queries=len(corpus.queries))
    benchmark.extra_info.update(latency_info(times))
    benchmark.extra_info.update(hits_at(ranked_files(results), corpus))
    assert any(hits for hits, _, _ in results.values())


@pytest.mark.skipif(not HAVE_BM25S, reason=NO_BM25S)
def test_search_bm25(benchmark: Any, corpus: Corpus, bm25: Any) -> None:
    benchmark.group = "code search, stdlib, one query"
    times, results = run_queries(benchmark, corpus, lambda q: bm25.rank(q, 10))
    benchmark.extra_info.update(impl="baseline: bm25s over whole files (top 10)", queries=len(corpus.queries))
    benchmark.extra_info.update(index_build_s=round(bm25.seconds, 2), graph_build_s=round(corpus.build_seconds, 2))
    benchmark.extra_info.update(latency_info(times))
    benchmark.extra_info.update(hits_at(results, corpus))


@pytest.mark.skipif(not HAVE_BM25S, reason=NO_BM25S)
def test_search_interleaved(benchmark: Any, corpus: Corpus, bm25: Any) -> None:
    """Each round: one query through ours at definition level, ours at file level and
    BM25, back to back; extra_info has each one's p50/p95 and ours/BM25 ratios."""
    benchmark.group = "code search, interleaved with the baseline"
    engines: dict[str, Callable[[str], Any]] = {
        "definition": ours(corpus, "definition"),
        "file": ours(corpus, "file"),
        "bm25": lambda q: bm25.rank(q, 10),
    }
    times: dict[str, list[float]] = {name: [] for name in engines}

    def all_three(q: str) -> None:
        for name, fn in engines.items():
            start = time.perf_counter()
            fn(q)
            times[name].append(time.perf_counter() - start)

    run_queries(benchmark, corpus, all_three)
    benchmark.extra_info.update(impl="ours (definition + file) then BM25, same query")
    for name, ts in times.items():
        benchmark.extra_info[f"{name}_p50_ms"] = round(pct(ts, 0.5), 3)
        benchmark.extra_info[f"{name}_p95_ms"] = round(pct(ts, 0.95), 3)
    for level in ("definition", "file"):
        for p in ("p50", "p95"):
            ratio = benchmark.extra_info[f"{level}_{p}_ms"] / benchmark.extra_info[f"bm25_{p}_ms"]
            benchmark.extra_info[f"{level}_over_bm25_{p}"] = round(ratio, 2)


# -- context for a message ----------------------------------------------------------------


def test_relevant_code(benchmark: Any, corpus: Corpus) -> None:
    """What prepare_context adds per message: snippets within 2K tokens."""
    benchmark.group = "relevant code per message"
    counter = TokenCounter()
    times, results = run_queries(
        benchmark, corpus, lambda q: find_relevant_to_query(corpus.graph, q, max_tokens=2000, tokens=counter)
    )
    benchmark.extra_info.update(impl="find_relevant_to_query (2K tokens)")
    benchmark.extra_info.update(latency_info(times))
    benchmark.extra_info["mean_snippets"] = round(sum(len(r) for r in results.values()) / len(results), 1)


@pytest.mark.parametrize("window", [8_000, 180_000])
@pytest.mark.parametrize("with_code", [True, False], ids=["code", "no-code"])
def test_prepare_context(benchmark: Any, corpus: Corpus, window: int, with_code: bool) -> None:
    """One session: prepare_context for each query in turn, the window pruning as it
    fills. The code budget is the policy's (a quarter of the window: 2K and 16K
    tokens); without code is the baseline (the window's own work)."""
    benchmark.group = f"prepare_context, {window:,}-token window"
    policy = am.Policy(max_tokens=window)
    counter = TokenCounter(policy.encoding)
    provider = graph_code_provider(corpus.graph, tokens=counter, policy=policy) if with_code else None
    ctx = DynamicContextManager(policy, code_provider=provider, tokens=counter, clock=itertools.count(1e9, 30).__next__)
    ctx.add_system_prompt("You are a careful coding agent working on the Python standard library.")
    ctx.set_current_task("t1", "answer questions about the standard library")
    times, results = run_queries(benchmark, corpus, ctx.prepare_context)
    budget = policy.code_tokens if with_code else 0
    benchmark.extra_info.update(impl=f"prepare_context, {'graph_code_provider' if with_code else 'no code (baseline)'}")
    benchmark.extra_info.update(window=window, code_tokens=budget)
    benchmark.extra_info.update(latency_info(times))
    benchmark.extra_info["mean_messages"] = round(sum(len(r) for r in results.values()) / len(results), 1)


# -- updates --------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["shlex.py", "json/decoder.py", "ftplib.py"])
def test_update_file_append(benchmark: Any, corpus: Corpus, path: str) -> None:
    """Each round appends a new function to ``path`` and runs update_file (timed:
    update_file alone); the next round's setup first checks that a search for the
    function's docstring finds it first (its time is in extra_info)."""
    benchmark.group = "update_file after appending a function"
    file = corpus.root / path
    original = file.read_bytes()
    counter = itertools.count()
    pending: list[str] = []
    searches: list[float] = []

    def check() -> None:
        name = pending.pop()
        start = time.perf_counter()
        hits, _, _ = corpus.graph.search(f"frobnicate the quux widget {name}", corpus.params, limit=5)
        searches.append(time.perf_counter() - start)
        assert hits and hits[0].symbol.name == name and hits[0].symbol.path == path, [h.symbol.name for h in hits]

    def setup() -> tuple[tuple[str], dict[str, Any]]:
        if pending:
            check()
        i = next(counter)
        pending.append(f"frobnicate_quux_widget_{i}")
        with file.open("a") as f:
            f.write(
                f'\n\ndef {pending[0]}(widget):\n    """Frobnicate the quux widget number {i}."""\n    return widget\n'
            )
        return (path,), {}

    try:
        benchmark.pedantic(corpus.graph.update_file, setup=setup, rounds=30, warmup_rounds=1)
        check()
        benchmark.extra_info.update(impl=f"append a function to {path}, update_file", lines=original.count(b"\n"))
        benchmark.extra_info["search_after_median_ms"] = round(pct(searches, 0.5), 3)
    finally:
        file.write_bytes(original)
        corpus.graph.update_file(path)


@pytest.mark.parametrize("edit", [True, False], ids=["append", "unchanged"])
def test_update_file_sample(benchmark: Any, corpus: Corpus, edit: bool) -> None:
    """update_file over every 40th file of the tree in turn (as in bench_graph.py):
    a typical file's cost, lexical index included; each round first appends a
    function to the file (setup, not timed), or leaves it unchanged."""
    benchmark.group = "update_file after appending a function"
    files = corpus.graph.files[::40]
    originals = {f: (corpus.root / f).read_bytes() for f in files} if edit else {}
    benchmark.extra_info.update(impl=f"update_file, {len(files)} files in turn ({'appended' if edit else 'unchanged'})")
    cycle = itertools.cycle(files)
    counter = itertools.count()

    def setup() -> tuple[tuple[str], dict[str, Any]]:
        f = next(cycle)
        if edit:
            with (corpus.root / f).open("a") as out:
                out.write(
                    f'\n\ndef frobnicate_sample_{next(counter)}(widget):\n    """Frobnicate it."""\n    return 1\n'
                )
        return (f,), {}

    try:
        benchmark.pedantic(corpus.graph.update_file, setup=setup, rounds=len(files) * 3, warmup_rounds=0)
    finally:
        for f, data in originals.items():
            (corpus.root / f).write_bytes(data)
            corpus.graph.update_file(f)


# -- sizes --------------------------------------------------------------------------------


def test_save_sizes(benchmark: Any, corpus: Corpus, tmp_path: Path) -> None:
    """Saving the graph (graph.bin + graph.lexical); extra_info: their sizes against
    the source they index, and the RSS measured around the build."""
    benchmark.group = "index on disk"
    path = tmp_path / "graph.bin"
    benchmark.pedantic(corpus.graph.save, args=(path,), rounds=3, warmup_rounds=0)
    lexical = path.with_suffix(".lexical")
    benchmark.extra_info.update(
        impl="save graph.bin + graph.lexical",
        files=corpus.graph.file_count,
        nodes=corpus.graph.node_count,
        source_mb=round(corpus.source_bytes / 1e6, 1),
        graph_bin_mb=round(path.stat().st_size / 1e6, 1),
        graph_lexical_mb=round(lexical.stat().st_size / 1e6, 1),
        lexical_over_source=round(lexical.stat().st_size / corpus.source_bytes, 3),
        graph_build_s=round(corpus.build_seconds, 2),
        **corpus.rss,
    )
    assert KnowledgeGraph.load(path).search("zip file members", corpus.params, limit=1)[0]


# -- summary ------------------------------------------------------------------------------


def summary(path: str) -> None:
    """Prints each case's extra_info (not the per-query medians) from a JSON file."""
    for b in json.load(open(path))["benchmarks"]:
        if "bench_retrieval" not in b["fullname"]:
            continue
        info = {k: v for k, v in b["extra_info"].items() if k != "per_query_median_ms"}
        print(f"{b['name']}: median {b['stats']['median'] * 1e3:.3f} ms; {info}")


if __name__ == "__main__":
    summary(sys.argv[1])
