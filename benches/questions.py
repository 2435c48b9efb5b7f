"""Natural-language questions on real repositories: does the code search put the file,
and the definition, that answers the question first?

The questions live in data files, one TOML file per repository under
``benches/questions/``. Each file has a ``[repository]`` table::

    [repository]
    name = "click"            # the name shown in the report
    language = "Python"       # the language its questions are about
    source = "pypi"           # pypi | crate | debian | debian-source
    spec = "click==8.5.1"     # pinned: see below
    folder = ""               # the tree's folder inside the unpacked source
    extensions = ["py"]       # BM25's documents: the tree's files with these endings

and its questions as ``[[question]]`` tables: ``text`` (what a developer new to the
repository asks), ``files`` (repository-relative paths; ANY of them answers it),
``definitions`` (qualified names like ``Class.method`` or ``func``; any of them
answers it), ``split`` ("tune" or "report") and, optionally, ``origin = "given"`` for
a question posed before the code was read. Every answer was chosen by reading the code.

Sources, fetched once into ``--cache`` and pinned:

- ``pypi``: ``name==version``, the sdist (``pip download --no-deps --no-binary :all:``),
  unpacked whole (tests and docs included); the tree is the sdist's top folder.
- ``crate``: ``name-version`` from crates.io, through ``cargo fetch`` in a throwaway
  project that depends on exactly that version; the crate (or its ``folder``) is copied
  into the cache.
- ``debian``: ``package=version``, a binary package (``apt-get download``, ``dpkg
  -x``); -dev, node-*, ruby-* and php-* packages ship source; ``folder`` is the tree
  inside the package.
- ``debian-source``: ``source=version``, the upstream tarball of a Debian source
  package (``apt-get source --download-only``; needs ``deb-src`` lines in apt's
  sources); ``folder`` is the tree inside the tarball.

A repository whose source cannot be fetched is reported as skipped, with the reason.

**The split rule.** Within each file, questions alternate in file order: the 1st, 3rd,
5th ... are "tune", the 2nd, 4th, 6th ... are "report", so each half covers every
repository. The loader checks each question's ``split`` against the rule.

**Scores.** Hits at k (k = 1 and 5), per split, per language and overall:

- files: a question is a hit at k when any of its ``files`` is among the top k files;
- definitions: a hit at k when a definition among the top k is one of its
  ``definitions``: its qualified name (scope + name, ``::`` read as ``.``) or its name
  equals one, or ends with ``.`` + one, or the definition is a member of one (its
  scope is that name, or ends with ``.`` + it); a definition the graph gives no scope
  (Rust's methods in ``impl`` blocks) answers when its name is the last part of one
  and it is in one of the question's ``files``.

The report also names the questions none of whose ``definitions`` the index records in
their ``files`` (``Memory.file_definitions``): no ranking can hit those at definition
level until the parser records them.

Rankers, in the same run: ``ours`` = ``Memory.open(tree).index()`` then
``search_code(question, k=10, level="file")`` and ``level="definition"``; ``bm25`` =
the plain BM25 of localization.py (bm25s defaults k1 = 1.5, b = 0.75, ``\\w+``
lowercased tokens) over the tree's files with the repository's ``extensions``: one
document per file (path + text) for files, and one per definition (path, qualified
name and the definition's source lines, the spans ``Memory.file_definitions`` gives;
imports left out) for definitions. Everything is deterministic: the same trees give the same figures.

    python benches/questions.py [--cache DIR] [--split tune|report|all] [--only NAME ...]
                                [--markdown OUT.md] [--json OUT.json] [--verbose] [--check]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from localization import (
    Bm25,
    Ours,
    bm25_files,
    describe_hit,
    parse_overrides,
    read_text,
    search_code_available,
    static_tree_policy,
)

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

__all__ = [
    "DATA",
    "KS",
    "Question",
    "Repository",
    "definition_matches",
    "check_answers",
    "load",
    "main",
    "split_for",
    "summarize",
]

DATA = Path(__file__).resolve().parent / "questions"
DEFAULT_CACHE = Path(tempfile.gettempdir()) / "aircher-bench" / "questions"
KS = (1, 5)
SOURCES = ("pypi", "crate", "debian", "debian-source")
SPLITS = ("tune", "report")


class DataError(ValueError):
    """A questions file that does not follow the format of the module doc."""


@dataclass(frozen=True)
class Question:
    repository: str
    text: str
    files: tuple[str, ...]  # any of them answers it
    definitions: tuple[str, ...]  # any of them answers it
    split: str
    origin: str = "ours"  # "given": posed before the code was read


@dataclass(frozen=True)
class Repository:
    name: str
    language: str
    source: str
    spec: str
    folder: str
    extensions: tuple[str, ...]
    questions: tuple[Question, ...]


def split_for(position: int) -> str:
    """The split rule: the question at 0-based ``position`` in its file."""
    return SPLITS[position % 2]


def _strings(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
        raise DataError(f"{where}: wants a non-empty list of non-empty strings, got {value!r}")
    return tuple(value)


def _string(table: dict[str, Any], key: str, where: str, default: str | None = None) -> str:
    value = table.get(key, default)
    if not isinstance(value, str) or (default is None and not value):
        raise DataError(f"{where}: {key!r} wants a string, got {value!r}")
    return value


def load_file(path: Path) -> Repository:
    """One questions file, checked: the fields, the source kind, the split rule."""
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    repo = data.get("repository")
    if not isinstance(repo, dict):
        raise DataError(f"{path.name}: no [repository] table")
    where = f"{path.name} [repository]"
    name = _string(repo, "name", where)
    source = _string(repo, "source", where)
    if source not in SOURCES:
        raise DataError(f"{where}: source {source!r} is not one of {SOURCES}")
    questions = []
    for i, q in enumerate(data.get("question", [])):
        at = f"{path.name} question {i + 1}"
        split = _string(q, "split", at)
        if split != split_for(i):
            raise DataError(f"{at}: split {split!r}, the rule gives {split_for(i)!r}")
        origin = _string(q, "origin", at, "ours")
        if origin not in ("ours", "given"):
            raise DataError(f"{at}: origin {origin!r} is not 'ours' or 'given'")
        questions.append(
            Question(
                name,
                _string(q, "text", at),
                _strings(q.get("files"), f"{at} files"),
                _strings(q.get("definitions"), f"{at} definitions"),
                split,
                origin,
            )
        )
    if not questions:
        raise DataError(f"{path.name}: no [[question]]")
    return Repository(
        name,
        _string(repo, "language", where),
        source,
        _string(repo, "spec", where),
        _string(repo, "folder", where, ""),
        _strings(repo.get("extensions"), f"{where} extensions"),
        tuple(questions),
    )


def load(folder: Path = DATA) -> list[Repository]:
    """Every ``*.toml`` under ``folder``, in name order; names must be unique."""
    repos = [load_file(p) for p in sorted(folder.glob("*.toml"))]
    names = [r.name for r in repos]
    if len(set(names)) != len(names):
        raise DataError(f"repository names repeat: {sorted(names)}")
    return repos


# -- fetching -----------------------------------------------------------------------------


class FetchError(RuntimeError):
    """A source that cannot be fetched here (the reason is the message)."""


def _run(cmd: Sequence[str], cwd: Path | None = None) -> None:
    try:
        subprocess.run(list(cmd), cwd=cwd, check=True, capture_output=True, text=True)
    except FileNotFoundError as err:
        raise FetchError(f"{cmd[0]} is not installed") from err
    except subprocess.CalledProcessError as err:
        tail = (err.stderr or err.stdout or "").strip().splitlines()[-1:]
        raise FetchError(f"{' '.join(cmd[:3])} ... failed: {' '.join(tail) or err.returncode}") from err


def _extract(archive: Path, into: Path) -> None:
    into.mkdir(parents=True, exist_ok=True)
    with tarfile.open(archive) as tar:
        if hasattr(tarfile, "data_filter"):
            tar.extractall(into, filter="data")
        else:  # pragma: no cover - Python < 3.11.4
            tar.extractall(into)


def fetch_pypi(cache: Path, spec: str) -> Path:
    name, version = spec.split("==")
    sdists, src = cache / "sdists", cache / "src"
    stems = {f"{name}-{version}", f"{name.replace('-', '_')}-{version}", f"{name.lower()}-{version}"}
    archives = sorted(p for p in sdists.glob("*.tar.gz") if p.name[: -len(".tar.gz")] in stems)
    if not archives:
        sdists.mkdir(parents=True, exist_ok=True)
        _run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--no-deps",
                "--no-binary",
                ":all:",
                "-q",
                "-d",
                str(sdists),
                spec,
            ]
        )
        archives = sorted(p for p in sdists.glob("*.tar.gz") if p.name[: -len(".tar.gz")] in stems)
        if not archives:
            raise FetchError(f"pip download {spec} gave no {name}-{version}.tar.gz")
    with tarfile.open(archives[0]) as tar:
        top = tar.getnames()[0].split("/")[0]
    if not (src / f"{top}.unpacked").exists():
        _extract(archives[0], src)
        (src / f"{top}.unpacked").write_text(archives[0].name)
    return src / top


def fetch_crate(cache: Path, spec: str, folder: str) -> Path:
    name, version = spec.rsplit("-", 1)
    dest = cache / "src" / spec
    if (cache / "src" / f"{spec}.unpacked").exists():
        return dest / folder if folder else dest
    project = cache / "cargo" / spec
    (project / "src").mkdir(parents=True, exist_ok=True)
    (project / "src" / "lib.rs").write_text("")
    (project / "Cargo.toml").write_text(
        f'[package]\nname = "fetch-{name}"\nversion = "0.0.0"\nedition = "2021"\n\n'
        f'[dependencies]\n{name} = "={version}"\n'
    )
    _run(["cargo", "fetch", "--manifest-path", str(project / "Cargo.toml")])
    home = Path(os.environ.get("CARGO_HOME", Path.home() / ".cargo"))
    found = sorted((home / "registry" / "src").glob(f"*/{spec}"))
    if not found:
        raise FetchError(f"cargo fetch gave no {spec} under {home / 'registry' / 'src'}")
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(found[0], dest)  # the index (.aircher/) goes beside the copy, not into cargo's registry
    (cache / "src" / f"{spec}.unpacked").write_text(str(found[0]))
    return dest / folder if folder else dest


def fetch_debian(cache: Path, spec: str, folder: str) -> Path:
    name, version = spec.split("=", 1)
    debs, dest = cache / "debs", cache / "src" / f"deb-{name}"
    if not (dest / ".unpacked").exists():
        debs.mkdir(parents=True, exist_ok=True)
        file_version = version.split(":", 1)[-1]
        if not list(debs.glob(f"{name}_{file_version}_*.deb")):
            _run(["apt-get", "download", spec], cwd=debs)
        found = sorted(debs.glob(f"{name}_{file_version}_*.deb"))
        if not found:
            raise FetchError(f"apt-get download {spec} gave no {name}_{file_version}_*.deb")
        _run(["dpkg", "-x", str(found[0]), str(dest)])
        (dest / ".unpacked").write_text(found[0].name)
    return dest / folder


def fetch_debian_source(cache: Path, spec: str, folder: str) -> Path:
    name, version = spec.split("=", 1)
    upstream = version.split(":", 1)[-1].rsplit("-", 1)[0]
    dsc, dest = cache / "debsrc", cache / "src" / f"debsrc-{name}"
    if not (dest / ".unpacked").exists():
        dsc.mkdir(parents=True, exist_ok=True)
        if not list(dsc.glob(f"{name}_{upstream}.orig.tar.*")):
            _run(["apt-get", "source", "--download-only", spec], cwd=dsc)
        found = sorted(dsc.glob(f"{name}_{upstream}.orig.tar.*"))
        if not found:
            raise FetchError(f"apt-get source {spec} gave no {name}_{upstream}.orig.tar.*")
        _extract(found[0], dest)
        (dest / ".unpacked").write_text(found[0].name)
    return dest / folder


def fetch(cache: Path, repo: Repository) -> Path:
    """The repository's tree, fetched and unpacked once into ``cache``; FetchError
    (with the reason) when it cannot be had here."""
    if repo.source == "pypi":
        tree = fetch_pypi(cache, repo.spec)
        tree = tree / repo.folder if repo.folder else tree
    elif repo.source == "crate":
        tree = fetch_crate(cache, repo.spec, repo.folder)
    elif repo.source == "debian":
        tree = fetch_debian(cache, repo.spec, repo.folder)
    else:
        tree = fetch_debian_source(cache, repo.spec, repo.folder)
    if not tree.is_dir():
        raise FetchError(f"{repo.spec} has no folder {repo.folder!r}")
    return tree


def check_answers(tree: Path, repo: Repository) -> list[str]:
    """What is wrong with ``repo``'s answers in ``tree``: an expected file that is not
    there, or an expected definition whose name (its last part) is not a word of any of
    its question's files."""
    problems = []
    for q in repo.questions:
        texts = []
        for rel in q.files:
            path = tree / rel
            if not path.is_file():
                problems.append(f"{repo.name}: {q.text!r}: no file {rel}")
            else:
                texts.append(path.read_text(encoding="utf-8", errors="replace"))
        for want in q.definitions:
            last = want.replace("::", ".").rsplit(".", 1)[-1]
            pattern = re.compile(
                r"(?<![\w$])" + re.escape(last) + r"(?![\w$?])" if last[-1:] != "?" else re.escape(last)
            )
            if texts and not any(pattern.search(text) for text in texts):
                problems.append(f"{repo.name}: {q.text!r}: {want} is in none of {', '.join(q.files)}")
    return problems


def check(cache: Path, repos: Sequence[Repository]) -> int:
    """``--check``: every repository's answers against its tree; 1 if any is wrong."""
    problems = []
    for repo in repos:
        try:
            tree = fetch(cache, repo)
        except FetchError as err:
            print(f"skipped {repo.name}: {err}")
            continue
        found = check_answers(tree, repo)
        problems += found
        print(f"{repo.name}: {len(repo.questions)} questions, {len(found)} problems")
    for line in problems:
        print(line)
    return 1 if problems else 0


# -- scoring ------------------------------------------------------------------------------


def definition_matches(
    name: str, scope: str, expected: Iterable[str], path: str = "", files: Iterable[str] = ()
) -> bool:
    """A definition hit (``name`` in ``scope``) answers when its qualified name or its
    name equals an expected name or ends with ``.`` + it, or it is a member of one
    (its scope is that name or ends with ``.`` + it). ``::`` reads as ``.``. A hit
    with no scope (the graph records none for some methods, e.g. Rust's in ``impl``
    blocks) also answers when its name is an expected name's last part and its
    ``path`` is one of the question's ``files``."""
    name, scope = name.replace("::", "."), scope.replace("::", ".")
    if not name:
        return False
    qualified = f"{scope}.{name}" if scope else name
    in_files = path in set(files)
    for want in expected:
        want = want.replace("::", ".")
        for have in (qualified, name, scope):
            if have and (have == want or have.endswith("." + want)):
                return True
        if not scope and in_files and want.rsplit(".", 1)[-1] == name:
            return True
    return False


def first_rank(flags: Iterable[bool]) -> int | None:
    return next((i + 1 for i, ok in enumerate(flags) if ok), None)


def source_files(tree: Path, extensions: Sequence[str]) -> list[str]:
    """The tree's files ending in ``.ext`` for one of ``extensions`` (not under
    ``.aircher/``), tree-relative with ``/``, sorted."""
    ends = tuple("." + e for e in extensions)
    out = []
    for path in tree.rglob("*"):
        rel = path.relative_to(tree)
        if rel.parts[0] == ".aircher" or not path.name.endswith(ends) or not path.is_file():
            continue
        out.append(rel.as_posix())
    return sorted(out)


RANKS = (("ours", "files"), ("ours", "definitions"), ("bm25", "files"), ("bm25", "definitions"))
COLUMNS = (("ours", "files"), ("bm25", "files"), ("ours", "definitions"), ("bm25", "definitions"))  # the tables' order


def bm25_definitions(ours: Ours, tree: Path, files: Sequence[str]) -> Bm25:
    """BM25 over definition bodies: one document per definition that the index records
    in ``files`` (``Memory.file_definitions``, imports left out): its path, qualified
    name and source lines (``line`` .. ``end_line``, a class's with its members'). The keys are
    ``(path, name, scope)``. The spans are ours; the ranking is plain BM25."""
    docs: list[tuple[tuple[str, str, str], str]] = []
    for rel in files:
        lines = read_text(tree / rel).splitlines()
        for d in ours.mem.file_definitions(rel).symbols:
            if d.kind == "import":
                continue
            body = "\n".join(lines[max(d.line - 1, 0) : d.end_line])
            docs.append(((rel, d.name, d.scope), f"{rel}\n{d.qualified}\n{body}"))
    return Bm25(docs)


def summarize(rows: Sequence[dict[str, Any]], key: Callable[[dict[str, Any]], str]) -> dict[str, dict[str, Any]]:
    """Hits at each k of ``KS`` for each ranker and level in ``RANKS``, per group
    (``key(row)``) and for "all"."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(key(row), []).append(row)
    groups["all"] = list(rows)
    out: dict[str, dict[str, Any]] = {}
    for group, members in groups.items():
        cell: dict[str, Any] = {"questions": len(members)}
        for ranker, level in RANKS:
            ranks = [r["rank"][ranker][level] for r in members if level in r["rank"].get(ranker, {})]
            if not ranks:
                continue
            for k in KS:
                cell[f"{ranker} {level} @{k}"] = sum(1 for rank in ranks if rank is not None and rank <= k)
        out[group] = cell
    return out


# -- the run ------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=(__doc__ or "").split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--cache", type=Path, default=DEFAULT_CACHE, help=f"sources and trees (default {DEFAULT_CACHE})"
    )
    parser.add_argument("--data", type=Path, default=DATA, help="the questions files' folder")
    parser.add_argument("--split", choices=("tune", "report", "all"), default="all")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="only these repositories")
    parser.add_argument("--markdown", type=Path, metavar="OUT", help="also write the Markdown tables here")
    parser.add_argument("--json", type=Path, metavar="OUT")
    parser.add_argument("--verbose", action="store_true", help="print each question's top hits")
    parser.add_argument("--override", action="append", default=[], metavar="KEY=VALUE", help="[retrieval] key for ours")
    parser.add_argument(
        "--check", action="store_true", help="only check the answers against the trees (see check_answers) and exit"
    )
    args = parser.parse_args(argv)

    repos = load(args.data)
    if args.only:
        unknown = sorted(set(args.only) - {r.name for r in repos})
        if unknown:
            parser.error(f"unknown repositories {unknown}; known: {', '.join(r.name for r in repos)}")
        repos = [r for r in repos if r.name in args.only]
    if args.check:
        return check(args.cache, repos)
    with_ours = search_code_available()
    if not with_ours:
        print("note: the installed aircher_mem has no Memory.search_code; only the BM25 baseline runs", file=sys.stderr)

    timings: dict[str, float] = {}
    skipped: dict[str, str] = {}
    rows: list[dict[str, Any]] = []
    for repo in repos:
        questions = [q for q in repo.questions if args.split in ("all", q.split)]
        start = time.perf_counter()
        try:
            tree = fetch(args.cache, repo)
        except FetchError as err:
            skipped[repo.name] = f"{repo.language}, {repo.source} {repo.spec}: {err}"
            print(f"skipped {repo.name}: {skipped[repo.name]}", file=sys.stderr)
            continue
        timings[f"fetch {repo.name}"] = time.perf_counter() - start
        sources = source_files(tree, repo.extensions)
        bm25: Bm25 = bm25_files(tree, files=sources)
        timings[f"bm25 index {repo.name}"] = bm25.seconds
        ours, bm25_defs = None, None
        if with_ours:
            ours = Ours(tree, static_tree_policy(tree, parse_overrides(args.override)))
            report = ours.index()
            timings[f"ours index {repo.name}"] = ours.index_seconds
            bm25_defs = bm25_definitions(ours, tree, sources)
            timings[f"bm25 definitions index {repo.name}"] = bm25_defs.seconds
            print(
                f"{repo.name} ({repo.language}): {report.files} files indexed ({report.parsed} parsed) "
                f"in {ours.index_seconds:.2f} s; BM25 over {len(bm25.keys)} files, {len(bm25_defs.keys)} definitions"
            )
        try:
            for q in questions:
                rows.append(ask(q, repo, bm25, bm25_defs, ours, args.verbose))
        finally:
            if ours is not None:
                ours.close()

    result = {
        "split": args.split,
        "repositories": {r.name: {"language": r.language, "source": r.source, "spec": r.spec} for r in repos},
        "skipped": skipped,
        "overall": summarize(rows, lambda r: r["split"]),
        "languages": summarize(rows, lambda r: r["language"]),
        "languages_by_split": {
            split: summarize([r for r in rows if r["split"] == split], lambda r: r["language"])
            for split in SPLITS
            if any(r["split"] == split for r in rows)
        },
        "by_repository": summarize(rows, lambda r: r["repository"]),
        "rows": rows,
        "timings": timings,
    }
    md = markdown(result)
    print("\n" + md)
    print("timings (s): " + ", ".join(f"{k} {v:.2f}" for k, v in timings.items()))
    if args.markdown:
        args.markdown.write_text(md)
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))
    return 0


def ask(
    q: Question, repo: Repository, bm25: Bm25, bm25_defs: Bm25 | None, ours: Ours | None, verbose: bool
) -> dict[str, Any]:
    """One question through both rankers: the rank of the first answering file (and
    definition), None when none is in the top 10; ``definitions_indexed`` tells whether
    the index records any answering definition in the question's files at all."""
    start = time.perf_counter()
    base = bm25.rank(q.text, 10)
    row: dict[str, Any] = {
        "repository": q.repository,
        "language": repo.language,
        "split": q.split,
        "question": q.text,
        "origin": q.origin,
        "files": list(q.files),
        "definitions": list(q.definitions),
        "rank": {"bm25": {"files": first_rank(p in q.files for p in base)}},
        "top": {"bm25": base[:3]},
        "ms": {"bm25": 1000 * (time.perf_counter() - start)},
    }
    if bm25_defs is not None:
        ranked = bm25_defs.rank(q.text, 10)
        row["rank"]["bm25"]["definitions"] = first_rank(
            definition_matches(name, scope, q.definitions, path, q.files) for path, name, scope in ranked
        )
        row["top"]["bm25 definitions"] = [f"{p}:{s + '.' if s else ''}{n}" for p, n, s in ranked[:3]]
    if ours is not None:
        start = time.perf_counter()
        files = ours.search(q.text, 10, "file")
        defs = ours.search(q.text, 10, "definition")
        row["ms"]["ours"] = 1000 * (time.perf_counter() - start) / 2
        row["rank"]["ours"] = {
            "files": first_rank(h.path in q.files for h in files.hits),
            "definitions": first_rank(
                definition_matches(
                    str(h.name or ""), str(getattr(h, "scope", "") or ""), q.definitions, h.path, q.files
                )
                for h in defs.hits
            ),
        }
        row["top"]["ours"] = [h.path for h in files.hits[:3]]
        row["top"]["ours definitions"] = [describe_hit(h) for h in defs.hits[:3]]
        row["definitions_indexed"] = any(
            d.kind != "import" and definition_matches(d.name, d.scope, q.definitions, rel, q.files)
            for rel in q.files
            for d in ours.mem.file_definitions(rel).symbols
        )
    if verbose:
        ranks = row["rank"]
        print(f"\n[{q.repository} {q.split}] {q.text}\n  expected: {', '.join(q.files)} ({', '.join(q.definitions)})")
        print(f"  bm25 files (rank {cell(ranks['bm25']['files'])}): {', '.join(base[:3])}")
        if "definitions" in ranks["bm25"]:
            shown = ", ".join(row["top"]["bm25 definitions"])
            print(f"  bm25 definitions (rank {cell(ranks['bm25']['definitions'])}): {shown}")
        if ours is not None:
            print(f"  ours files (rank {cell(ranks['ours']['files'])}): {', '.join(row['top']['ours'])}")
            print(f"  ours definitions (rank {cell(ranks['ours']['definitions'])}):")
            for line in row["top"]["ours definitions"]:
                print(f"    {line}")
    return row


def cell(rank: int | None) -> str:
    return "–" if rank is None else str(rank)


def markdown(result: dict[str, Any]) -> str:
    """The tables: per split, per language (overall, then per split when both ran), per
    repository, then each question."""
    lines: list[str] = []
    tables = [("split", result["overall"]), ("language", result["languages"])]
    if len(result["languages_by_split"]) > 1:
        tables += [(f"language, {split}", table) for split, table in result["languages_by_split"].items()]
    for title, table in tables:
        lines += table_lines(title, table) + [""]
    lines += table_lines("repository", result["by_repository"]) + [""]
    missing = [r for r in result["rows"] if r.get("definitions_indexed") is False]
    if missing:
        lines.append(
            f"{len(missing)} of {len(result['rows'])} questions have no answering definition among those the index "
            "records in their files: " + "; ".join(f"{r['repository']}: {r['question']}" for r in missing)
        )
        lines.append("")
    for name, reason in result["skipped"].items():
        lines.append(f"Skipped {name}: {reason}")
    if result["skipped"]:
        lines.append("")
    lines += [
        "| repository | split | question | files | ours: file rank, top | BM25: file rank, top "
        "| ours: definition rank | BM25: definition rank |",
        "|---|---|---|---|---|---|---:|---:|",
    ]
    for r in result["rows"]:
        question = r["question"] + (" (given)" if r["origin"] == "given" else "")
        expected = ", ".join(f"`{p}`" for p in r["files"])
        base = f"{cell(r['rank']['bm25']['files'])}, `{(r['top']['bm25'] or ['–'])[0]}`"
        if "ours" in r["rank"]:
            ours = f"{cell(r['rank']['ours']['files'])}, `{(r['top']['ours'] or ['–'])[0]}`"
            ours_def = cell(r["rank"]["ours"]["definitions"])
        else:
            ours, ours_def = "n/a", "n/a"
        base_def = cell(r["rank"]["bm25"]["definitions"]) if "definitions" in r["rank"]["bm25"] else "n/a"
        cells = [r["repository"], r["split"], question, expected, ours, base, ours_def, base_def]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def table_lines(title: str, table: dict[str, dict[str, Any]]) -> list[str]:
    """One row per group: files then definitions, ours then BM25, hits at 1 and 5."""
    head = (
        f"| {title} | questions | ours files @1 | @5 | BM25 files @1 | @5 "
        "| ours definitions @1 | @5 | BM25 definitions @1 | @5 |"
    )
    lines = [head, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    order = sorted(g for g in table if g != "all") + ["all"]
    for group in order:
        c = table[group]
        n = c["questions"]

        def hits(key: str, c: dict[str, Any] = c, n: int = n) -> str:
            return f"{c[key]} ({100 * c[key] / n:.0f} %)" if key in c and n else "n/a"

        cells = [hits(f"{ranker} {level} @{k}") for ranker, level in COLUMNS for k in KS]
        lines.append(f"| {group} | {n} | " + " | ".join(cells) + " |")
    return lines


if __name__ == "__main__":
    sys.exit(main())
