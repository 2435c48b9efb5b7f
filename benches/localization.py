"""File localization on the dev split of SWE-bench Lite: rank a repository's files for
an issue's text, and count how often the files the fix touched are at the top.

Acc@k = every gold file is among the top k files ranked for the problem statement.
Two rankers, in the same run, on the same extracted trees:

- ``bm25``: BM25 over whole files (bm25s 0.3, its defaults: Lucene variant, k1 = 1.5,
  b = 0.75), one document per ``.py`` file = its path + its full text, tokenized with
  ``re.findall(r"\\w+", text.lower())`` and nothing else (no identifier splitting, no
  stemming, no stop words). The query is the problem statement, tokenized the same way.
- ``ours``: ``Memory.open(tree).index()``, then
  ``search_code(problem_statement, k=10, level="file")``.

``bm25-split`` (the same BM25 with snake_case/camelCase split into their parts as well)
is available with ``--engines`` as a second lexical reference.

    python benches/localization.py [--data DIR] [--cache DIR] [--only ID] [--override key=value] [--json OUT]

The trees are extracted once into ``--cache`` (default: a fixed folder under the
system's temp dir), and the index ``ours`` builds lives in each extracted tree
(``.aircher/``), so a rerun reuses both.

The helpers here (the BM25 baseline, the adapter for ``Memory.search_code``) are
shared by ``devset.py`` and ``questions.py``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import statistics
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from benchdata import DATA_ENV, SWEBENCH_LITE

DEFAULT_CACHE = Path(tempfile.gettempdir()) / "aircher-bench" / "swebench-lite-dev"
KS = (1, 5, 10)

# -- tokenization and BM25 ----------------------------------------------------------------

_WORD = re.compile(r"\w+")
_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


def plain_tokens(text: str) -> list[str]:
    """The baseline's tokenizer: ``\\w+`` runs, lowercased; nothing else."""
    return _WORD.findall(text.lower())


def split_tokens(text: str) -> list[str]:
    """``\\w+`` runs, lowercased, plus their snake_case / camelCase parts when a run
    has more than one (``getHTTPResponse_code`` -> itself, get, http, response, code)."""
    out: list[str] = []
    for word in _WORD.findall(text):
        out.append(word.lower())
        parts = [p.lower() for chunk in word.split("_") for p in _PART.findall(chunk)]
        if len(parts) > 1:
            out.extend(parts)
    return out


TOKENIZERS: dict[str, Callable[[str], list[str]]] = {"plain": plain_tokens, "split": split_tokens}


class Bm25:
    """BM25 over a fixed list of documents (``bm25s``, its default parameters:
    method "lucene", k1 = 1.5, b = 0.75). ``rank(text)`` returns the keys of the
    documents with a positive score, best first (ties in document order)."""

    def __init__(self, docs: Sequence[tuple[Any, str]], tokenize: Callable[[str], list[str]] = plain_tokens) -> None:
        import bm25s

        start = time.perf_counter()
        self.keys = [key for key, _ in docs]
        self.tokenize = tokenize
        self.model = bm25s.BM25()
        self.model.index([tokenize(text) or [""] for _, text in docs], show_progress=False)
        self.seconds = time.perf_counter() - start

    def scores(self, text: str) -> Any:
        import numpy as np

        tokens = self.tokenize(text)
        if not tokens or not self.keys:
            return np.zeros(len(self.keys))
        return self.model.get_scores(tokens)

    def rank(self, text: str, k: int | None = None) -> list[Any]:
        import numpy as np

        scores = self.scores(text)
        order = np.argsort(-scores, kind="stable")
        if k is not None:
            order = order[:k]
        return [self.keys[i] for i in order if scores[i] > 0]


def python_files(root: Path) -> list[str]:
    """Every ``.py`` file under ``root`` (not in ``.aircher/``), root-relative with ``/``, sorted."""
    out = []
    for path in root.rglob("*.py"):
        rel = path.relative_to(root)
        if rel.parts[0] == ".aircher" or not path.is_file():
            continue
        out.append(rel.as_posix())
    return sorted(out)


def read_text(path: Path) -> str:
    return path.read_bytes().decode("utf-8", errors="replace")


def bm25_files(
    root: Path, tokenize: Callable[[str], list[str]] = plain_tokens, files: Iterable[str] | None = None
) -> Bm25:
    """The baseline over ``root``'s files: one document per file = path + full text."""
    paths = python_files(root) if files is None else list(files)
    return Bm25([(rel, rel + "\n" + read_text(root / rel)) for rel in paths], tokenize)


# -- our engine ---------------------------------------------------------------------------


def search_code_available() -> bool:
    try:
        from aircher_mem import Memory
    except ImportError:
        return False
    return hasattr(Memory, "search_code")


def parse_value(raw: str) -> Any:
    """``key=value`` values: JSON (numbers, true/false), else the raw string."""
    try:
        return json.loads(raw)
    except json.JSONDecodeError:
        return raw


def parse_overrides(items: Iterable[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise SystemExit(f"--override wants key=value, got {item!r}")
        out[key.strip()] = parse_value(value.strip())
    return out


def make_policy(root: Path | None, overrides: Mapping[str, Any] | None = None, **top: Any) -> Any:
    """The project's policy (its ``config.toml`` when there is one, else the defaults)
    with ``[retrieval]`` keys replaced by ``overrides`` and top-level sections by ``top``
    (e.g. ``server=...``). An unknown ``[retrieval]`` key exits, listing the known ones."""
    from aircher_mem import Policy
    from aircher_mem.config import RetrievalPolicy

    base = Policy.load(root) if root is not None and (root / ".aircher" / "config.toml").exists() else Policy()
    overrides = dict(overrides or {})
    unknown = sorted(set(overrides) - set(RetrievalPolicy.keys()))
    if unknown:
        raise SystemExit(f"unknown [retrieval] keys {unknown}; known: {', '.join(RetrievalPolicy.keys())}")
    if overrides:
        base = dataclasses.replace(base, retrieval=dataclasses.replace(base.retrieval, **overrides))
    if top:
        base = dataclasses.replace(base, **top)
    return base


def static_tree_policy(root: Path | None, overrides: Mapping[str, Any] | None = None) -> Any:
    """``make_policy`` for a tree that does not change while the bench runs: the
    server's refresh (a scan of the tree before a graph query every 2 s) is off, so
    query times are the search's own."""
    base = make_policy(root, overrides)
    return dataclasses.replace(base, server=dataclasses.replace(base.server, refresh_seconds=86_400.0))


class Ours:
    """``Memory`` over one tree: ``index()`` once, then ``files()``/``definitions()``
    through ``search_code``."""

    def __init__(self, root: Path, policy: Any = None) -> None:
        from aircher_mem import Memory

        self.root = root
        self.mem = Memory.open(root, create=True, policy=policy)
        self.report: Any = None
        self.index_seconds = 0.0
        self._code_flag: bool | None = None

    def index(self) -> Any:
        start = time.perf_counter()
        self.report = self.mem.index()
        self.index_seconds = time.perf_counter() - start
        return self.report

    def search(self, text: str, k: int, level: str) -> Any:
        """``search_code`` without the hits' source (``code=False``) when it takes that
        flag: the ranking is the same, and a bench does not read the code."""
        if self._code_flag is None:
            import inspect

            self._code_flag = "code" in inspect.signature(self.mem.search_code).parameters  # type: ignore[attr-defined]
        extra = {"code": False} if self._code_flag else {}
        return self.mem.search_code(text, k=k, level=level, **extra)  # type: ignore[attr-defined]

    def files(self, text: str, k: int = 10) -> list[str]:
        return [hit.path for hit in self.search(text, k, "file").hits]

    def close(self) -> None:
        self.mem.close()


def describe_channels(channels: Any) -> str:
    """``lexical:0.82x1`` per channel (normalized score x fusion weight) for a list of
    ``ChannelScore``-like objects, or ``name:value`` for a mapping."""
    if isinstance(channels, Mapping):
        items = list(channels.items())
    else:
        items = [
            (
                getattr(c, "channel", c),
                f"{c.normalized:.2f}x{c.weight:g}" if hasattr(c, "normalized") and hasattr(c, "weight") else "",
            )
            for c in channels
        ]
    return ",".join(f"{k}:{v:.3g}" if isinstance(v, float) else f"{k}:{v}" if v != "" else str(k) for k, v in items)


def describe_hit(hit: Any) -> str:
    """One line for a hit: path[:line] [kind scope.name] score, channels, matched terms."""
    where = hit.path if getattr(hit, "name", None) is None else f"{hit.path}:{hit.line}"
    name = ""
    if getattr(hit, "name", None):
        scope = getattr(hit, "scope", "") or ""
        name = f" {hit.kind} {scope + '.' if scope else ''}{hit.name}"
    score = getattr(hit, "score", None)
    parts = [f"{where}{name}", f"score={score:.4g}" if isinstance(score, (int, float)) else ""]
    if getattr(hit, "test", False):
        parts.append("test")
    channels = getattr(hit, "channels", None)
    if channels:
        parts.append("channels=" + describe_channels(channels))
    matched = getattr(hit, "matched", None)
    if matched:
        shown = list(matched)[:8] if not isinstance(matched, str) else [matched]
        parts.append("matched=" + ",".join(map(str, shown)))
    via = getattr(hit, "via", None)
    if via:
        parts.append("via=" + ",".join(str(getattr(v, "name", v)) for v in list(via)[:3]))
    return "  ".join(p for p in parts if p)


# -- the benchmark ------------------------------------------------------------------------


def rank_of(gold: Sequence[str], ranked: Sequence[str]) -> int | None:
    """The rank (1-based) at which the last gold file appears; None if one is missing."""
    positions = {path: i + 1 for i, path in reversed(list(enumerate(ranked)))}
    ranks = [positions.get(path) for path in gold]
    if not ranks or any(r is None for r in ranks):
        return None
    return max(r for r in ranks if r is not None)


def accuracy(ranks: Sequence[int | None], k: int) -> float:
    return sum(1 for r in ranks if r is not None and r <= k) / len(ranks) if ranks else 0.0


def extract(archive: Path, cache: Path, name: str) -> Path:
    """``archive`` (holding ``<name>/...``) extracted under ``cache`` once; a marker
    file beside the tree says the extraction finished."""
    tree, marker = cache / name, cache / f"{name}.extracted"
    if marker.exists() and tree.is_dir():
        return tree
    cache.mkdir(parents=True, exist_ok=True)
    with tarfile.open(archive) as tar:
        if hasattr(tarfile, "data_filter"):
            tar.extractall(cache, filter="data")
        else:  # pragma: no cover - Python < 3.11.4
            tar.extractall(cache)
    marker.write_text(str(archive))
    return tree


def load_instances(data: Path, only: Sequence[str]) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in (data / "instances.jsonl").read_text().splitlines() if line.strip()]
    if only:
        rows = [r for r in rows if r["instance_id"] in only]
        missing = set(only) - {r["instance_id"] for r in rows}
        if missing:
            raise SystemExit(f"unknown instance ids: {sorted(missing)}")
    return rows


Ranker = Callable[[str], list[str]]
# An engine builds a ranker for one tree: (ranker, seconds to build it, notes).
Engine = Callable[[Path], tuple[Ranker, float, dict[str, Any], Callable[[], None]]]


def bm25_engine(tokenize: Callable[[str], list[str]]) -> Engine:
    def build(tree: Path) -> tuple[Ranker, float, dict[str, Any], Callable[[], None]]:
        index = bm25_files(tree, tokenize)
        return index.rank, index.seconds, {"documents": len(index.keys)}, lambda: None

    return build


def ours_engine(k: int, overrides: Mapping[str, Any] | None = None) -> Engine:
    def build(tree: Path) -> tuple[Ranker, float, dict[str, Any], Callable[[], None]]:
        ours = Ours(tree, static_tree_policy(tree, overrides))
        report = ours.index()
        notes = {"files": report.files, "parsed": report.parsed, "full": report.full, "reason": report.reason}
        return (lambda text: ours.files(text, k)), ours.index_seconds, notes, ours.close

    return build


def run(
    instances: Sequence[Mapping[str, Any]],
    engines: Mapping[str, Engine],
    data: Path,
    cache: Path,
    *,
    out: Callable[[str], object] = print,
) -> dict[str, Any]:
    """Ranks every instance's tree with every engine. Returns per-instance rows and a
    summary per engine (Acc@k, build and query times)."""
    rows: list[dict[str, Any]] = []
    names = list(engines)
    out(f"{'instance':<38} {'gold file':<44} " + " ".join(f"{n:>10}" for n in names))
    for inst in instances:
        tree = extract(data / inst["tree"], cache, inst["instance_id"])
        row: dict[str, Any] = {"instance": inst["instance_id"], "repo": inst["repo"], "gold": inst["gold_files"]}
        for name, engine in engines.items():
            ranker, build_seconds, notes, close = engine(tree)
            try:
                start = time.perf_counter()
                ranked = ranker(inst["problem_statement"])
                query_seconds = time.perf_counter() - start
            finally:
                close()
            row[name] = {
                "rank": rank_of(inst["gold_files"], ranked),
                "top": ranked[:10],
                "build_seconds": build_seconds,
                "query_seconds": query_seconds,
                **notes,
            }
        rows.append(row)
        cells = " ".join(f"{row[n]['rank'] if row[n]['rank'] is not None else '-':>10}" for n in names)
        out(f"{inst['instance_id']:<38} {', '.join(inst['gold_files']):<44.44} {cells}")
    summary: dict[str, Any] = {}
    for name in names:
        ranks = [r[name]["rank"] for r in rows]
        by_repo: dict[str, list[float]] = {}
        for r in rows:
            by_repo.setdefault(r["repo"], []).append(r[name]["build_seconds"])
        summary[name] = {
            **{f"acc@{k}": accuracy(ranks, k) for k in KS},
            "mean_query_seconds": statistics.fmean(r[name]["query_seconds"] for r in rows) if rows else 0.0,
            "build_seconds_by_repo": {repo: statistics.fmean(v) for repo, v in by_repo.items()},
        }
    return {"instances": rows, "summary": summary}


def print_summary(result: Mapping[str, Any], out: Callable[[str], object] = print) -> None:
    summary = result["summary"]
    n = len(result["instances"])
    out("")
    out(f"| ranker ({n} instances) | " + " | ".join(f"Acc@{k}" for k in KS) + " | mean query |")
    out("|---|" + "---:|" * (len(KS) + 1))
    for name, s in summary.items():
        accs = " | ".join(f"{s[f'acc@{k}']:.1%} ({round(s[f'acc@{k}'] * n)})" for k in KS)
        out(f"| {name} | {accs} | {s['mean_query_seconds'] * 1000:.1f} ms |")
    out("")
    out("build time (mean per instance's tree, seconds; a rerun reuses the index):")
    for name, s in summary.items():
        cells = ", ".join(f"{repo.split('/')[-1]} {sec:.2f}" for repo, sec in s["build_seconds_by_repo"].items())
        out(f"  {name}: {cells}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--data",
        type=Path,
        help=f"the {SWEBENCH_LITE.name} folder (default: in ${DATA_ENV} or shared/data beside the repository)",
    )
    parser.add_argument(
        "--cache", type=Path, default=DEFAULT_CACHE, help=f"where trees are extracted (default {DEFAULT_CACHE})"
    )
    parser.add_argument("--only", action="append", default=[], metavar="ID", help="only this instance (repeatable)")
    parser.add_argument("--k", type=int, default=10, help="files asked of search_code (default 10)")
    parser.add_argument(
        "--engines",
        default="bm25,ours",
        help="comma-separated rankers: bm25, bm25-split, ours (default bm25,ours; ours is left out, "
        "with a note, while the installed aircher_mem has no Memory.search_code)",
    )
    parser.add_argument("--override", action="append", default=[], metavar="KEY=VALUE", help="[retrieval] key for ours")
    parser.add_argument("--json", type=Path, metavar="OUT", help="write every row and the summary here")
    args = parser.parse_args(argv)

    if args.data is None:
        args.data = SWEBENCH_LITE.path
        if not (args.data / "instances.jsonl").is_file():
            print(f"{SWEBENCH_LITE.missing()}, or pass --data DIR", file=sys.stderr)
            return 2
    elif not (args.data / "instances.jsonl").is_file():
        print(f"no SWE-bench Lite dev data in {args.data} (expected instances.jsonl and trees/)", file=sys.stderr)
        return 2
    engines: dict[str, Engine] = {}
    for name in (n.strip() for n in args.engines.split(",") if n.strip()):
        if name == "bm25":
            engines[name] = bm25_engine(plain_tokens)
        elif name == "bm25-split":
            engines[name] = bm25_engine(split_tokens)
        elif name == "ours":
            if search_code_available():
                engines[name] = ours_engine(args.k, parse_overrides(args.override))
            else:
                print("note: the installed aircher_mem has no Memory.search_code; 'ours' left out", file=sys.stderr)
        else:
            parser.error(f"unknown engine {name!r}")
    if not engines:
        parser.error("no engine to run")
    instances = load_instances(args.data, args.only)
    start = time.perf_counter()
    result = run(instances, engines, args.data, args.cache)
    print_summary(result)
    result["seconds"] = time.perf_counter() - start
    print(f"\ntotal {result['seconds']:.1f} s")
    if args.json:
        args.json.write_text(json.dumps(result, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
