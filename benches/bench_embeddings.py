"""Dense-embedding throughput (texts/s): all-MiniLM-L6-v2 int8 on onnxruntime, embedding
code definitions of 50-200 tokens (functions and classes of CPython's standard library),
batch 32, with one onnxruntime thread and with the default (min(4, cores)); batch 8 as a
comparison point. Skipped without the ``embeddings`` extra.

    pytest benches/bench_embeddings.py        # pytest-benchmark tables
    python benches/bench_embeddings.py        # quick run: prints texts/s
"""

from __future__ import annotations

import ast
import os
import sysconfig
import time
from pathlib import Path
from typing import Any

import pytest
from aircher_mem.embeddings import Embedder, available

STDLIB = Path(sysconfig.get_paths()["stdlib"])
MODULES = ["json/decoder.py", "json/encoder.py", "argparse.py", "textwrap.py", "pathlib.py", "shutil.py", "tarfile.py"]
N_TEXTS = 64


def definitions() -> list[str]:
    """Source of every function and class in MODULES, in file order."""
    out = []
    for name in MODULES:
        path = STDLIB / name
        if not path.is_file():  # pathlib became a package in 3.13
            continue
        source = path.read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                segment = ast.get_source_segment(source, node)
                if segment:
                    out.append(segment)
    return out


def corpus(embedder: Embedder, n: int = N_TEXTS) -> tuple[list[str], float]:
    """The first n definitions of 50-200 tokens ([CLS] and [SEP] included), repeated if
    there are fewer; and their mean token count."""
    lengths = {text: len(embedder._token_ids(text)) for text in definitions()}
    chosen = [text for text, length in lengths.items() if 50 <= length <= 200]
    assert chosen, "no definition of 50-200 tokens in the standard library modules"
    texts = (chosen * (n // len(chosen) + 1))[:n]
    return texts, sum(lengths[t] for t in texts) / len(texts)


@pytest.fixture(scope="module")
def loaded() -> dict[str, Embedder]:
    ok, why = available()
    if not ok:
        pytest.skip(why)
    return {"1": Embedder.load(threads=1), "default": Embedder.load()}


@pytest.mark.parametrize(("threads", "batch_size"), [("1", 32), ("default", 32), ("default", 8)])
def test_embed_code_definitions(benchmark: Any, loaded: dict[str, Embedder], threads: str, batch_size: int) -> None:
    embedder = loaded[threads]
    texts, mean_tokens = corpus(embedder)
    benchmark.group = "embed code definitions (50-200 tokens)"
    benchmark.extra_info.update(
        impl=f"threads={embedder.threads} batch={batch_size}", texts=len(texts), mean_tokens=round(mean_tokens, 1)
    )
    vectors = benchmark.pedantic(embedder.embed, args=(texts,), kwargs={"batch_size": batch_size}, rounds=3)
    assert vectors.shape == (len(texts), embedder.dim)
    if benchmark.stats is not None:  # None under --benchmark-disable
        benchmark.extra_info["texts_per_s"] = round(len(texts) / benchmark.stats.stats.median, 1)


def test_load(benchmark: Any) -> None:
    ok, why = available()
    if not ok:
        pytest.skip(why)
    benchmark.group = "embedder load"
    benchmark.extra_info.update(impl="Embedder.load()")
    embedder = benchmark.pedantic(Embedder.load, rounds=3)
    assert embedder.dim == 384


def main() -> None:
    ok, why = available()
    if not ok:
        raise SystemExit(why)
    start = time.perf_counter()
    default = Embedder.load()
    print(f"load: {time.perf_counter() - start:.2f} s")
    texts, mean_tokens = corpus(default)
    print(f"{len(texts)} code definitions, {mean_tokens:.0f} tokens on average")
    print(f"load average before: {_load_average()}")
    for embedder, batch_size in [(Embedder.load(threads=1), 32), (default, 32), (default, 8)]:
        embedder.embed(texts[:8], batch_size=batch_size)  # warm-up
        best = best_cpu = 0.0
        for _ in range(3):
            start, start_cpu = time.perf_counter(), time.process_time()
            embedder.embed(texts, batch_size=batch_size)
            best = max(best, len(texts) / (time.perf_counter() - start))
            best_cpu = max(best_cpu, len(texts) / (time.process_time() - start_cpu))
        # Texts per CPU-second (all threads) is what other processes on a shared machine
        # change least; texts/s is what a caller sees.
        print(
            f"threads={embedder.threads} batch={batch_size}: {best:.1f} texts/s, "
            f"{best_cpu:.1f} texts per CPU-second (best of 3)"
        )
    print(f"load average after: {_load_average()}")


def _load_average() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


if __name__ == "__main__":
    main()
