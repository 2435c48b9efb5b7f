"""Natural-language questions on real repositories: does the code search put the file
that answers the question first?

Five packages of different kinds, their sdists downloaded from PyPI (``pip download
--no-deps --no-binary :all:``, pinned versions) and unpacked whole (tests and docs
included) into ``--cache``: click (CLI), starlette (ASGI web framework), requests
(HTTP client), rich (terminal rendering), jinja2 (templates); and one Go package, gin
(HTTP router), whose source Debian ships (``apt-get download
golang-github-gin-gonic-gin-dev=1.8.1-1``, unpacked with ``dpkg -x``; its questions
are left out, with a note, where apt-get is not at hand). Each question lists the
files that answer it, chosen by reading the packages' code; a question is a hit at k
when ANY of its expected files is among the top k files (they are alternatives: the
module to read, or the one beside it). Expected definitions are shown for reference
(a definition hit = a hit named like one of them, or a member of one).

Three questions were posed before the packages' code was read (origin "given"): click's
shell completion, "add rate limiting middleware" on starlette, and gin's radix-tree routing.

Rankers: ``ours`` = ``Memory.open(tree).index()`` then ``search_code(question, k=10,
level="file")`` and ``level="definition"``; ``bm25`` = the plain BM25 over whole files
of localization.py (bm25s defaults k1 = 1.5, b = 0.75, ``\\w+`` lowercased tokens).

    python benches/questions.py [--cache DIR] [--markdown OUT.md] [--json OUT.json]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from localization import Bm25, Ours, bm25_files, describe_hit, search_code_available, static_tree_policy

PACKAGES = {"click": "8.5.1", "starlette": "1.10.0", "requests": "2.34.2", "rich": "15.0.0", "jinja2": "3.1.6"}
# Debian packages of Go source: name -> (package=version, the tree's folder in it).
DEBIAN = {
    "gin": ("golang-github-gin-gonic-gin-dev=1.8.1-1", "usr/share/gocode/src/github.com/gin-gonic/gin"),
}
DEFAULT_CACHE = Path(tempfile.gettempdir()) / "aircher-bench" / "questions"


@dataclass(frozen=True)
class Question:
    package: str
    text: str
    files: tuple[str, ...]  # any of them answers it
    definitions: tuple[str, ...]
    origin: str = "ours"  # "given": posed before the code was read


QUESTIONS = (
    Question(
        "click",
        "how does shell completion work for bash and zsh?",
        ("src/click/shell_completion.py",),
        ("BashComplete", "ZshComplete", "ShellComplete"),
        "given",
    ),
    Question(
        "starlette",
        "add rate limiting middleware",
        ("starlette/middleware/base.py", "starlette/middleware/__init__.py"),
        ("BaseHTTPMiddleware", "Middleware"),
        "given",
    ),
    Question(
        "click",
        "where are option default values read from environment variables?",
        ("src/click/core.py",),
        ("resolve_envvar_value", "value_from_envvar"),
    ),
    Question(
        "click",
        "show a progress bar while iterating over items",
        ("src/click/_termui_impl.py", "src/click/termui.py"),
        ("ProgressBar", "progressbar"),
    ),
    Question(
        "requests",
        "retry failed connections a number of times",
        ("src/requests/adapters.py",),
        ("HTTPAdapter",),
    ),
    Question(
        "requests",
        "drop the Authorization header when redirected to a different host",
        ("src/requests/sessions.py",),
        ("rebuild_auth", "should_strip_auth"),
    ),
    Question(
        "requests",
        "which proxy is used for a URL, honoring NO_PROXY",
        ("src/requests/utils.py",),
        ("should_bypass_proxies", "get_environ_proxies", "select_proxy", "resolve_proxies"),
    ),
    Question(
        "rich",
        "parse console markup tags like [bold red] into styled text",
        ("rich/markup.py",),
        ("render", "_parse"),
    ),
    Question(
        "rich",
        "print a traceback showing the local variables of each frame",
        ("rich/traceback.py",),
        ("Traceback", "install"),
    ),
    Question(
        "rich",
        "update a display in place with automatic refresh in a background thread",
        ("rich/live.py",),
        ("Live", "_RefreshThread"),
    ),
    Question(
        "jinja2",
        "stop templates from reaching unsafe attributes of python objects",
        ("src/jinja2/sandbox.py",),
        ("is_safe_attribute", "is_internal_attribute", "SandboxedEnvironment"),
    ),
    Question(
        "jinja2",
        "shorten a long string to a given length and add an ellipsis",
        ("src/jinja2/filters.py",),
        ("do_truncate",),
    ),
    Question(
        "starlette",
        "convert URL path parameters to integers or UUIDs",
        ("starlette/convertors.py",),
        ("IntegerConvertor", "UUIDConvertor", "Convertor"),
    ),
    Question(
        "starlette",
        "reject requests whose Host header is not in an allowed list",
        ("starlette/middleware/trustedhost.py",),
        ("TrustedHostMiddleware",),
    ),
    Question(
        "gin",
        "how does gin match a request path against its routes (radix tree)?",
        ("tree.go",),
        ("getValue", "addRoute", "node"),
        "given",
    ),
    Question(
        "gin",
        "bind a JSON request body to a struct",
        ("context.go", "binding/json.go"),
        ("ShouldBindJSON", "BindJSON", "jsonBinding"),
    ),
    Question(
        "gin",
        "recover from a panic in a handler and return 500",
        ("recovery.go",),
        ("Recovery", "CustomRecoveryWithWriter"),
    ),
)


def fetch(cache: Path, package: str, version: str) -> Path:
    """The unpacked sdist of ``package==version`` (downloaded and unpacked once)."""
    sdists, src = cache / "sdists", cache / "src"
    sdists.mkdir(parents=True, exist_ok=True)
    src.mkdir(parents=True, exist_ok=True)
    archives = [p for p in sdists.glob(f"{package}-{version}.tar.gz")] or [
        p for p in sdists.glob(f"{package.replace('-', '_')}-{version}.tar.gz")
    ]
    if not archives:
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", "-q", "-d", str(sdists)]
        subprocess.run([*cmd, f"{package}=={version}"], check=True)
        archives = sorted(sdists.glob(f"{package}-{version}.tar*")) or sorted(sdists.glob(f"*{version}.tar*"))
    archive = archives[0]
    with tarfile.open(archive) as tar:
        top = tar.getnames()[0].split("/")[0]
        tree = src / top
        if not (src / f"{top}.unpacked").exists():
            if hasattr(tarfile, "data_filter"):
                tar.extractall(src, filter="data")
            else:  # pragma: no cover - Python < 3.11.4
                tar.extractall(src)
            (src / f"{top}.unpacked").write_text(archive.name)
    return tree


def fetch_debian(cache: Path, package: str) -> Path | None:
    """The Go tree of Debian package ``package`` (downloaded and unpacked once); None,
    with a note, where apt-get or dpkg cannot get it."""
    spec, folder = DEBIAN[package]
    debs, src = cache / "debs", cache / "src" / package
    tree = src / folder
    if (src / ".unpacked").exists():
        return tree
    debs.mkdir(parents=True, exist_ok=True)
    name, version = spec.split("=")
    try:
        if not list(debs.glob(f"{name}_*.deb")):
            subprocess.run(["apt-get", "download", spec], cwd=debs, check=True, capture_output=True)
        deb = sorted(debs.glob(f"{name}_{version}_*.deb"))[0]
        subprocess.run(["dpkg", "-x", str(deb), str(src)], check=True, capture_output=True)
    except (OSError, IndexError, subprocess.CalledProcessError) as err:
        print(f"note: {package}'s questions left out: cannot get {spec} from Debian ({err})", file=sys.stderr)
        return None
    (src / ".unpacked").write_text(deb.name)
    return tree


def def_name_matches(hit: Any, names: Sequence[str]) -> bool:
    """The hit is one of ``names``, or a member of one (its scope names it)."""
    name = str(getattr(hit, "name", None) or "")
    scope = str(getattr(hit, "scope", None) or "")
    parts = {name, name.rsplit(".", 1)[-1], *scope.replace("::", ".").split(".")} - {""}
    return bool(name) and bool(parts & set(names))


def first_rank(flags: Sequence[bool]) -> int | None:
    return next((i + 1 for i, ok in enumerate(flags) if ok), None)


def cell(rank: int | None) -> str:
    return "–" if rank is None else str(rank)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help=f"sdists and trees (default {DEFAULT_CACHE})")
    parser.add_argument("--markdown", type=Path, metavar="OUT", help="also write the Markdown tables here")
    parser.add_argument("--json", type=Path, metavar="OUT")
    args = parser.parse_args(argv)

    with_ours = search_code_available()
    if not with_ours:
        print("note: the installed aircher_mem has no Memory.search_code; only the BM25 baseline runs", file=sys.stderr)
    timings: dict[str, float] = {}
    trees, bm25, ours = {}, {}, {}
    sources = [(package, lambda p=package, v=version: fetch(args.cache, p, v)) for package, version in PACKAGES.items()]
    sources += [(package, lambda p=package: fetch_debian(args.cache, p)) for package in DEBIAN]
    for package, get in sources:
        start = time.perf_counter()
        tree = get()
        if tree is None:
            continue
        trees[package] = tree
        timings[f"fetch {package}"] = time.perf_counter() - start
        go = package in DEBIAN
        bm25[package] = bm25_files(
            tree, files=sorted(f.relative_to(tree).as_posix() for f in tree.rglob("*.go")) if go else None
        )
        timings[f"bm25 index {package}"] = bm25[package].seconds
        if with_ours:
            ours[package] = Ours(trees[package], static_tree_policy(trees[package]))
            report = ours[package].index()
            timings[f"ours index {package}"] = ours[package].index_seconds
            took = ours[package].index_seconds
            print(f"{package}: {report.files} files indexed ({report.parsed} parsed) in {took:.2f} s")

    rows: list[dict[str, Any]] = []
    for q in (q for q in QUESTIONS if q.package in trees):
        print(f"\n[{q.package}] {q.text}\n  expected: {', '.join(q.files)}  ({', '.join(q.definitions)})")
        index: Bm25 = bm25[q.package]
        start = time.perf_counter()
        base = index.rank(q.text, 10)
        row: dict[str, Any] = {
            "package": q.package,
            "question": q.text,
            "origin": q.origin,
            "expected": list(q.files),
            "bm25": {"top": base[:3], "rank": first_rank([p in q.files for p in base])},
            "bm25_ms": 1000 * (time.perf_counter() - start),
        }
        print(f"  bm25 files (rank {cell(row['bm25']['rank'])}): {', '.join(base[:3])}")
        if with_ours:
            mem = ours[q.package]
            start = time.perf_counter()
            files = mem.search(q.text, 10, "file")
            defs = mem.search(q.text, 10, "definition")
            row["ours_ms"] = 1000 * (time.perf_counter() - start) / 2
            row["ours"] = {
                "top": [h.path for h in files.hits[:3]],
                "rank": first_rank([h.path in q.files for h in files.hits]),
                "def_rank": first_rank([def_name_matches(h, q.definitions) for h in defs.hits]),
                "files": [describe_hit(h) for h in files.hits[:3]],
                "defs": [describe_hit(h) for h in defs.hits[:3]],
                "reason": [files.reason, defs.reason],
                "notes": sorted({*getattr(files, "notes", []), *getattr(defs, "notes", [])}),
            }
            if row["ours"]["notes"]:
                print(f"  notes: {row['ours']['notes']}")
            print(f"  ours files (rank {cell(row['ours']['rank'])}):" + (f" [{files.reason}]" if files.reason else ""))
            for line in row["ours"]["files"]:
                print(f"    {line}")
            print(
                f"  ours definitions (rank {cell(row['ours']['def_rank'])}):"
                + (f" [{defs.reason}]" if defs.reason else "")
            )
            for line in row["ours"]["defs"]:
                print(f"    {line}")
        rows.append(row)
    for mem in ours.values():
        mem.close()

    md = markdown(rows, with_ours)
    print("\n" + md)
    print("timings (s): " + ", ".join(f"{k} {v:.2f}" for k, v in timings.items()))
    if args.markdown:
        args.markdown.write_text(md)
    if args.json:
        args.json.write_text(json.dumps({"packages": PACKAGES, "rows": rows, "timings": timings}, indent=1))
    return 0


def markdown(rows: Sequence[dict[str, Any]], with_ours: bool) -> str:
    n = len(rows)

    def hits(key: str, field: str, k: int) -> str:
        count = sum(1 for r in rows if key in r and r[key][field] is not None and r[key][field] <= k)
        return f"{count}/{n}"

    lines = ["| ranker | hits@1 | hits@3 |", "|---|---:|---:|"]
    if with_ours:
        lines.append(f"| ours, files | {hits('ours', 'rank', 1)} | {hits('ours', 'rank', 3)} |")
        lines.append(f"| ours, definitions | {hits('ours', 'def_rank', 1)} | {hits('ours', 'def_rank', 3)} |")
    lines.append(f"| BM25 over files | {hits('bm25', 'rank', 1)} | {hits('bm25', 'rank', 3)} |")
    lines += [
        "",
        "| package | question | expected | ours: rank, top file | BM25: rank, top file |",
        "|---|---|---|---|---|",
    ]
    for r in rows:
        question = r["question"] + (" (given)" if r["origin"] == "given" else "")
        ours = f"{cell(r['ours']['rank'])}, `{(r['ours']['top'] or ['–'])[0]}`" if "ours" in r else "n/a"
        base = f"{cell(r['bm25']['rank'])}, `{(r['bm25']['top'] or ['–'])[0]}`"
        expected = ", ".join(f"`{p}`" for p in r["expected"])
        lines.append(f"| {r['package']} | {question} | {expected} | {ours} | {base} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
