"""aider's tag extraction over a tree, timed: ``RepoMap.get_tags`` on every C and C++
file (the extensions our graph parses as C/C++, at most ``--max-bytes`` each), with
a fresh tags cache, one process, as aider's repo map does on its first run. Run by
the Python of a virtual environment holding aider-chat (``kernel_scale.py`` calls
it); prints one JSON line: files, bytes, wall and CPU seconds, tags (definitions,
references).

    AIDER_VENV/bin/python benches/aider_tags.py ROOT
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

EXTENSIONS = {".c", ".h", ".cc", ".cpp", ".cxx", ".hpp", ".hh", ".hxx"}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("root")
    parser.add_argument("--max-bytes", type=int, default=1_000_000)
    args = parser.parse_args()
    from aider.io import InputOutput
    from aider.repomap import RepoMap

    root = Path(args.root).resolve()
    files = sorted(
        p
        for p in root.rglob("*")
        if p.suffix in EXTENSIONS
        and p.is_file()
        and not p.is_symlink()
        and not any(part.startswith(".") for part in p.relative_to(root).parts)
        and p.stat().st_size <= args.max_bytes
    )
    # The tags cache goes to a scratch folder (not the tree), empty: a first run.
    scratch = Path(tempfile.mkdtemp(prefix="aider-tags-"))
    cwd = os.getcwd()
    try:
        os.chdir(scratch)
        repo_map = RepoMap(root=str(scratch), io=InputOutput(yes=True, pretty=False, fancy_input=False))
        start, cpu = time.perf_counter(), time.process_time()
        definitions = references = 0
        for path in files:
            for tag in repo_map.get_tags(str(path), str(path.relative_to(root))):
                if tag.kind == "def":
                    definitions += 1
                else:
                    references += 1
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    finally:
        os.chdir(cwd)
        shutil.rmtree(scratch, ignore_errors=True)
    size = sum(p.stat().st_size for p in files)
    print(
        json.dumps(
            {
                "files": len(files),
                "bytes": size,
                "seconds": seconds,
                "cpu_seconds": cpu,
                "definitions": definitions,
                "references": references,
            }
        )
    )


if __name__ == "__main__":
    main()
