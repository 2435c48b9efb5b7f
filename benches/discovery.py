"""What cold start costs on a real tree: the time and tokens of ``discover_project``.

    python benches/discovery.py ROOT [--hint "the first task"] [--runs 3] [--json out.json]

ROOT gets a store (``.aircher/``) and is indexed first if it is not (that time is
reported apart, it is the first index's). Then ``discover_project`` runs ``--runs``
times: the first keeps its facts (the cold start), the next ones find them known
(what a second session pays). Beside it, in the same run, the baseline an agent has
without it: reading the project's top-level README and build files, in tokens of the
same encoding, and the listing of the root folder.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from aircher_mem import Memory

#: What an agent would read first to learn the same (those present at the root).
BASELINE_FILES = (
    "README",
    "README.md",
    "README.rst",
    "README.txt",
    "pyproject.toml",
    "setup.py",
    "setup.cfg",
    "package.json",
    "Cargo.toml",
    "go.mod",
    "pom.xml",
    "build.gradle",
    "Makefile",
    "CMakeLists.txt",
    "Kconfig",
)


def baseline_tokens(mem: Memory, root: Path) -> tuple[int, int, list[str]]:
    """The tokens of the root's README and build files (and which were read), and of
    the listing of the root's folder (what ``ls`` shows an agent first)."""
    read = [name for name in BASELINE_FILES if (root / name).is_file()]
    texts = [(root / name).read_text(encoding="utf-8", errors="replace") for name in read]
    listing = "\n".join(sorted(p.name + ("/" if p.is_dir() else "") for p in root.iterdir() if p.name != ".aircher"))
    return sum(mem.tokens.count_many(texts)), mem.tokens.count(listing), read


def measure(root: Path, hint: str | None, runs: int) -> dict[str, object]:
    with Memory.open(root) as mem:
        started = time.perf_counter()
        indexed = not mem.rebuild_reason()  # "": an index is there and up to date enough to update
        if not indexed:
            mem.index(hold=False)
        index_seconds = time.perf_counter() - started
        times, tokens, created = [], [], []
        first = None
        for _ in range(runs):
            t0 = time.perf_counter()
            found = mem.discover_project(task_hint=hint)
            times.append(time.perf_counter() - t0)
            tokens.append(found.discovery_tokens)
            created.append(found.facts_created)
            first = first or found
        base, listing, files = baseline_tokens(mem, root)
        count = mem.graph.file_count
    assert first is not None
    return {
        "root": root.name,
        "files": count,
        "index_seconds": None if indexed else round(index_seconds, 2),
        "project_type": first.project_type,
        "frameworks": first.frameworks,
        "commands": first.commands,
        "domains": [(d.name, d.files, d.score) for d in first.domains],
        "task_files": first.task_files,
        "facts_created": created,
        "discovery_tokens": tokens[0],
        "first_seconds": round(times[0], 3),
        "again_seconds_median": round(statistics.median(times[1:]), 3) if len(times) > 1 else None,
        "baseline_tokens": base,
        "baseline_files": files,
        "listing_tokens": listing,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("root", type=Path)
    parser.add_argument("--hint", default=None, help="a task hint for progressive discovery")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    out = measure(args.root.resolve(), args.hint, max(1, args.runs))
    text = json.dumps(out, indent=2)
    print(text)
    if args.json is not None:
        args.json.write_text(text + "\n")


if __name__ == "__main__":
    main()
