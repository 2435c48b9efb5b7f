"""Candidate facts from code changes: what a diff says about the project that is worth
remembering ("Implemented Box.open in pkg/box.py", "Updated dependency fastapi to
>=0.110 in pyproject.toml"), each with a confidence that decides whether it may be
stored at once or waits for approval.

What changed in a source file is read by the code graph's parser (``_core.outline``
on the old and the new text), not by patterns over diff lines: a definition is new
when the parser finds it in the new text and not in the old one. Configuration files
are parsed with the standard library (TOML, JSON, INI) and compared key by key;
workflow YAML is compared line by line (PyYAML is no dependency). Nothing is
invented: a new file's purpose comes only from its own docstring or leading comment,
a new definition's only from its Python docstring or the doc comment right above it.

Changes are read with the ``git`` command (``read_changes``): the working tree or the
staged changes against HEAD, one commit against its first parent, or a range ``A..B``
(its net change). ``candidates_for_change`` is the pure part: one file's old and new
text to candidates; ``extract_file`` is it for a file an agent just edited.

Confidence (the share a careful reviewer approves is in docs/measurements-detail.md):

- 0.9: a public class, function or method the parser found added or removed, or
  its signature changed; a module constant's value changed; a dependency of a parsed
  config file added, updated or removed.
- 0.85: a file removed or renamed (git says so); a new file whose own docstring or
  leading comment gives its purpose.
- 0.75: a new import of a module from outside the project.
- 0.7: the same for a private definition (``_name`` in Python, no ``pub`` in Rust, a
  lowercase Go name), one in a benchmark, example or docs folder, or a method that
  only plugs into the language (``__str__``, Rust's ``fmt``); a Python signature
  whose type annotations alone changed; another setting of a parsed config file; an
  action a workflow uses added, updated or removed.
- 0.6: tests added or removed (one candidate a file); a workflow setting read line by
  line; a new file without a stated purpose; a refactor (over ``REFACTOR_LINES``
  lines changed, at least ``REFACTOR_MINIMUM`` of them added and as many removed).

A candidate below ``[knowledge] approve_confidence`` (0.8) waits for approval when
it is kept (:mod:`aircher_mem.longterm.knowledge`).

A Python signature whose annotations are only spelled anew (``Optional[X]`` as ``X |
None``, ``t.Dict`` as ``dict``) is no change, and one of an overloaded function
(``@overload``) is not compared: the parser keeps one of its definitions.
"""

from __future__ import annotations

import configparser
import json
import os
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import PurePosixPath
from typing import Any, Literal

from .. import _core
from ..errors import AircherError, GitError, InvalidInputError
from ..pattern import lazy
from ..root import STORE_DIR

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

__all__ = [
    "MAX_FILE_BYTES",
    "extract_edit",
    "extract_refresh",
    "MAX_FILES",
    "MAX_PER_FILE",
    "MAX_PER_CHANGE",
    "REFACTOR_LINES",
    "CandidateFact",
    "ChangedFile",
    "read_changes",
    "candidates_for_change",
    "extract",
    "extract_file",
    "purpose",
    "readme_summary",
    "is_readme",
]

#: A file's version larger than this is not read (the code graph's limit per file).
MAX_FILE_BYTES = 1_000_000
#: The files of one change whose texts are read (in git's order); the rest give
#: only what git's status says (added, removed, renamed).
MAX_FILES = 300
#: All texts of one change together: past this the remaining files are not read.
MAX_CHANGE_BYTES = 64 * 1_000_000
#: Candidates kept per file and per change (a commit, a range, the working tree):
#: the most confident first, ties in the order they were found; the rest dropped.
MAX_PER_FILE = 10
MAX_PER_CHANGE = 50
#: A modified source file with more lines changed (added + removed) is refactored.
REFACTOR_LINES = 50
#: ... of which at least this many added and as many removed: a file that only grows
#: is extended, one that only shrinks is cut, neither refactored.
REFACTOR_MINIMUM = 10
#: Seconds one git command may take.
GIT_TIMEOUT = 60.0

Source = Literal["working", "staged", "commit", "range"]
Origin = Literal["git_diff", "file_change", "ast_analysis"]
Level = Literal["L0", "L1", "L2", "L3"]
Kind = Literal[
    "new_file",
    "removed_file",
    "moved_file",
    "new_symbol",
    "removed_symbol",
    "moved_symbol",
    "renamed_symbol",
    "signature",
    "import",
    "config",
    "refactor",
    "readme",
]
Status = Literal["added", "modified", "deleted", "renamed"]

# Confidence, by what the candidate rests on (see the module docstring).
PARSED = 0.9
PRIVATE = 0.7
FROM_GIT = 0.85
PURPOSE = 0.85
IMPORT = 0.75
SETTING = 0.7
TESTS = 0.6
LINE_LEVEL = 0.6
BARE_FILE = 0.6
REFACTOR = 0.6
README = 0.7  # what the project is, in its README's words: a reviewer confirms
ANNOTATIONS = 0.7  # a Python signature's type annotations alone changed

_EMPTY_TREE_SHA1 = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
_MAX_PURPOSE = 160
_MAX_VALUE = 100
_MAX_SIGNATURE = 240
_MAX_NAMES = 5


@dataclass(frozen=True)
class CandidateFact:
    """A fact a change suggests, not yet stored.

    ``content`` is the fact as it would be stored; ``confidence`` (0-1) how sure the
    extraction is (see the module docstring); ``source`` what found it: ``ast_analysis``
    (the parser, for definitions, signatures and imports), ``git_diff`` (git's status,
    line counts and config files of a commit or the working tree) or ``file_change``
    (the same from a file's old and new text, without git). ``suggested_level``: L3 for
    a symbol with ``code_ref`` (``path#Lstart-end`` in the new text), L2 for a file, L1
    for the project's configuration. ``domain`` is the path's top-level folder (None
    for a file at the root); ``commit`` the commit's id (the range's end for a range,
    None for the working tree, the index or a single file)."""

    content: str
    confidence: float
    source: Origin
    suggested_level: Level
    kind: Kind
    path: str
    code_ref: str | None = None
    domain: str | None = None
    commit: str | None = None


@dataclass(frozen=True)
class ChangedFile:
    """One file of a change as git reports it. ``old_text``/``new_text`` are None where
    the file does not exist on that side, is binary, a symlink or submodule, is larger
    than ``MAX_FILE_BYTES``, or was not read (past ``MAX_FILES``); bytes that are not
    UTF-8 are replaced. ``added``/``removed``: lines, as ``git diff --numstat`` counts
    them (0 for binary files)."""

    path: str
    status: Status
    old_path: str | None
    old_text: str | None
    new_text: str | None
    added: int
    removed: int
    binary: bool = False


# ---------------------------------------------------------------- git


class _GitFailed(GitError):
    """A git command that ran and exited with an error (not a missing or hanging git)."""


def _git(root: str, args: Sequence[str], *, input: bytes | None = None, timeout: float = GIT_TIMEOUT) -> bytes:
    env = dict(os.environ)
    env.update({"GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C", "GIT_PAGER": "cat"})
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=root,
            input=input,
            capture_output=True,
            timeout=timeout,
            env=env,
            check=False,
        )
    except FileNotFoundError as exc:
        if not os.path.isdir(root):
            raise GitError(f"not a git work tree: {root!r} is not a folder") from exc
        raise GitError("git is not installed (no `git` command on PATH)") from exc
    except subprocess.TimeoutExpired as exc:
        raise GitError(f"git {args[0]} took longer than {timeout:g} s in {root!r}") from exc
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise _GitFailed(f"git {args[0]} failed in {root!r}: {message[-1] if message else done.returncode}")
    return done.stdout


def _check_work_tree(root: str, timeout: float) -> None:
    try:
        inside = _git(root, ["rev-parse", "--is-inside-work-tree"], timeout=timeout).strip()
    except _GitFailed as exc:
        raise GitError(f"not a git work tree: {root!r}") from exc
    if inside != b"true":
        raise GitError(f"not a git work tree: {root!r}")


def _commit_of(root: str, rev: str, timeout: float) -> str | None:
    """The commit `rev` names (None if it names none)."""
    if not rev or "\0" in rev or "\n" in rev:
        return None
    try:
        out = _git(root, ["rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}"], timeout=timeout)
    except _GitFailed:
        return None
    return out.decode("ascii", "replace").strip() or None


def _empty_tree(root: str, timeout: float) -> str:
    out = _git(root, ["hash-object", "-t", "tree", "--stdin"], input=b"", timeout=timeout)
    return out.decode("ascii").strip() or _EMPTY_TREE_SHA1


def _revision(root: str, rev: str, timeout: float) -> str:
    sha = _commit_of(root, rev, timeout)
    if sha is None:
        raise InvalidInputError(f"unknown revision {rev!r}: not a commit of {root!r}")
    return sha


def _first_parent(root: str, sha: str, timeout: float) -> str:
    words = _git(root, ["rev-list", "--parents", "-n", "1", sha, "--"], timeout=timeout).split()
    return words[1].decode("ascii") if len(words) > 1 else _empty_tree(root, timeout)


def _decode_path(raw: bytes) -> str | None:
    """A path git printed; None for one that is not UTF-8 (skipped, as the graph does)."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return None


@dataclass
class _Raw:
    status: str
    old_sha: str
    new_sha: str
    old_mode: str
    new_mode: str
    path: bytes
    old_path: bytes | None


def _parse_raw(out: bytes) -> list[_Raw]:
    """`git diff --raw -z --no-abbrev`: `:old_mode new_mode old new status\\0path\\0`,
    two paths for a rename or copy."""
    fields = out.split(b"\0")
    found: list[_Raw] = []
    i = 0
    while i < len(fields) and fields[i].startswith(b":"):
        meta = fields[i][1:].decode("ascii", "replace").split()
        if len(meta) < 5:
            break
        old_mode, new_mode, old_sha, new_sha, status = meta[:5]
        if status[:1] in ("R", "C") and i + 2 < len(fields):
            found.append(_Raw(status[:1], old_sha, new_sha, old_mode, new_mode, fields[i + 2], fields[i + 1]))
            i += 3
        elif i + 1 < len(fields):
            found.append(_Raw(status[:1], old_sha, new_sha, old_mode, new_mode, fields[i + 1], None))
            i += 2
        else:
            break
    return found


def _parse_numstat(out: bytes) -> dict[bytes, tuple[int, int, bool]]:
    """`git diff --numstat -z`: `added\\tremoved\\tpath\\0`, or for a rename
    `added\\tremoved\\t\\0old\\0new\\0`; `-` counts for a binary file. By new path."""
    fields = out.split(b"\0")
    counts: dict[bytes, tuple[int, int, bool]] = {}
    i = 0
    while i < len(fields):
        parts = fields[i].split(b"\t", 2)
        if len(parts) != 3:
            i += 1
            continue
        added, removed, path = parts
        if not path and i + 2 < len(fields):
            path = fields[i + 2]
            i += 3
        else:
            i += 1
        binary = added == b"-" or removed == b"-"
        counts[path] = (0 if binary else int(added or 0), 0 if binary else int(removed or 0), binary)
    return counts


def _cat_file(root: str, mode: str, shas: Iterable[str], timeout: float) -> bytes:
    """``git cat-file --batch`` or ``--batch-check`` (``mode``) of the objects ``shas``
    (each once); empty without any."""
    wanted = sorted(set(shas))
    if not wanted:
        return b""
    return _git(root, ["cat-file", mode], input="".join(f"{s}\n" for s in wanted).encode(), timeout=timeout)


def _blob_sizes(root: str, shas: Iterable[str], timeout: float) -> dict[str, int]:
    out = _cat_file(root, "--batch-check", shas, timeout)
    sizes: dict[str, int] = {}
    for line in out.decode("ascii", "replace").splitlines():
        words = line.split()
        if len(words) == 3 and words[1] == "blob":
            sizes[words[0]] = int(words[2])
    return sizes


def _blobs(root: str, shas: Iterable[str], timeout: float) -> dict[str, bytes]:
    out = _cat_file(root, "--batch", shas, timeout)
    blobs: dict[str, bytes] = {}
    at = 0
    while at < len(out):
        end = out.find(b"\n", at)
        if end < 0:
            break
        words = out[at:end].split()
        at = end + 1
        if len(words) != 3:
            continue  # `<sha> missing`
        size = int(words[2])
        blobs[words[0].decode("ascii")] = out[at : at + size]
        at += size + 1
    return blobs


def _is_binary(data: bytes) -> bool:
    return b"\0" in data[:8192]


def _text(data: bytes | None) -> str | None:
    if data is None or _is_binary(data):
        return None
    return data.decode("utf-8", "replace")


def _read_work_file(root: str, path: str) -> bytes | None:
    """The work tree's `path`, read without following symlinks; None if it cannot be."""
    try:
        return _core.read_project_file(root, path, max_bytes=MAX_FILE_BYTES)
    except (OSError, AircherError):
        return None


_STATUS: dict[str, Status] = {"A": "added", "M": "modified", "D": "deleted", "R": "renamed", "T": "modified"}
_NO_BLOB = frozenset({"160000", "120000", "000000"})  # submodule, symlink, none


def read_changes(
    root: str | os.PathLike[str],
    *,
    source: Source = "working",
    rev: str | None = None,
    paths: Sequence[str] = (),
    timeout: float = GIT_TIMEOUT,
) -> tuple[list[ChangedFile], str | None]:
    """The files a change touches, with their old and new texts, and the commit the
    change is (None for the working tree and the index).

    ``source``: ``working`` (the work tree against HEAD, untracked files that are not
    ignored included), ``staged`` (the index against HEAD), ``commit`` (``rev`` against
    its first parent; a root commit against nothing) or ``range`` (``rev`` is ``A..B``:
    the net change from A to B; ``A..`` is ``A..HEAD``). Renames are found (``-M``);
    paths are relative to ``root`` (a subfolder of a work tree sees only its files).
    ``paths`` (relative to ``root``, taken literally): only the changes of those files.
    Raises GitError when git is missing, ``root`` is not a git work tree or git fails or
    times out; InvalidInputError for an unknown revision or source."""
    where = os.fspath(root)
    _check_work_tree(where, timeout)
    head = _commit_of(where, "HEAD", timeout)
    commit: str | None = None
    if source == "working" or source == "staged":
        if rev is not None:
            raise InvalidInputError(f"source {source!r} takes no revision")
        sides = [head or _empty_tree(where, timeout)]
        if source == "staged":
            sides = ["--cached", *sides]
    elif source == "commit":
        if not rev:
            raise InvalidInputError("source 'commit' needs a revision")
        commit = _revision(where, rev, timeout)
        sides = [_first_parent(where, commit, timeout), commit]
    elif source == "range":
        if not rev or ".." not in rev or "..." in rev:
            raise InvalidInputError(f"source 'range' needs a revision 'A..B', not {rev!r}")
        start, end = rev.split("..", 1)
        commit = _revision(where, end or "HEAD", timeout)
        sides = [_revision(where, start or "HEAD", timeout), commit]
    else:
        raise InvalidInputError(f"unknown source {source!r}: working, staged, commit or range")
    diff = ["diff", "-z", "--no-abbrev", "-M", "--relative", "--no-ext-diff", "--no-textconv", "--no-color"]
    only = [f":(literal){p}" for p in paths]
    raw = _parse_raw(_git(where, [*diff, "--raw", *sides, "--", *only], timeout=timeout))
    counts = _parse_numstat(_git(where, [*diff, "--numstat", *sides, "--", *only], timeout=timeout))
    if source == "working":
        untracked = _git(where, ["ls-files", "-z", "--others", "--exclude-standard", "--", *only], timeout=timeout)
        for name in sorted(p for p in untracked.split(b"\0") if p):
            raw.append(_Raw("A", "0" * 40, "0" * 40, "000000", "100644", name, None))
    # The blobs to read: git's for both sides, but the work tree's file for the new
    # side of the working tree; each at most MAX_FILE_BYTES, MAX_FILES files in all.
    entries: list[tuple[_Raw, str, str | None]] = []
    for entry in raw:
        path = _decode_path(entry.path)
        old_path = _decode_path(entry.old_path) if entry.old_path is not None else None
        if path is None or (entry.old_path is not None and old_path is None) or entry.status not in _STATUS:
            continue
        if path.split("/", 1)[0] == STORE_DIR:  # aircher-mem's own store is no change to the project
            continue
        entries.append((entry, path, old_path))
    read = entries[:MAX_FILES]
    null = {"0" * 40, "0" * 64}
    old_shas = [e.old_sha for e, _, _ in read if e.old_sha not in null and e.old_mode not in _NO_BLOB]
    new_shas = (
        [e.new_sha for e, _, _ in read if e.new_sha not in null and e.new_mode not in _NO_BLOB]
        if source != "working"
        else []
    )
    sizes = _blob_sizes(where, old_shas + new_shas, timeout)
    budget = MAX_CHANGE_BYTES
    wanted: list[str] = []
    for sha in old_shas + new_shas:
        size = sizes.get(sha)
        if size is not None and size <= MAX_FILE_BYTES and size <= budget:
            budget -= size
            wanted.append(sha)
    blobs = _blobs(where, wanted, timeout)
    files: list[ChangedFile] = []
    for n, (entry, path, old_path) in enumerate(entries):
        status = _STATUS[entry.status]
        added, removed, binary = counts.get(entry.path, (0, 0, False))
        old_data = blobs.get(entry.old_sha) if status != "added" and entry.old_mode not in _NO_BLOB else None
        new_data: bytes | None = None
        if status != "deleted" and entry.new_mode not in _NO_BLOB and n < MAX_FILES:
            if source == "working":
                new_data = _read_work_file(where, path) if budget > 0 else None
                budget -= len(new_data or b"")
            else:
                new_data = blobs.get(entry.new_sha)
        if entry.status == "A" and source == "working" and entry.path not in counts and new_data is not None:
            binary = _is_binary(new_data)
            added = 0 if binary else new_data.count(b"\n") + (0 if new_data.endswith(b"\n") or not new_data else 1)
        binary = (
            binary or (old_data is not None and _is_binary(old_data)) or (new_data is not None and _is_binary(new_data))
        )
        files.append(
            ChangedFile(
                path=path,
                status=status,
                old_path=old_path if status == "renamed" else None,
                old_text=None if binary else _text(old_data),
                new_text=None if binary else _text(new_data),
                added=added,
                removed=removed,
                binary=binary,
            )
        )
    return files, commit


# ---------------------------------------------------------------- the pure part


def _domain(path: str) -> str | None:
    parts = PurePosixPath(path).parts
    return parts[0] if len(parts) > 1 else None


def _normal(text: str) -> str:
    return " ".join(text.split())


def _short(text: str, limit: int = _MAX_VALUE) -> str:
    text = _normal(text)
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _names(names: Sequence[str]) -> str:
    shown = ", ".join(names[:_MAX_NAMES])
    return shown if len(names) <= _MAX_NAMES else f"{shown} and {len(names) - _MAX_NAMES} more"


_DIRECTIVE = lazy(
    r"^(-\*-|vim?:|eslint|prettier|@ts-|@flow|@jsx|noqa|type:\s*ignore|pylint|go:build|\+build|"
    r"#\s*(?:define|include|ifndef|pragma)|use strict|frozen_string_literal|encoding:|coding[:=]|"
    r"pragma|@generated|@license|@copyright)",
    re.IGNORECASE,
)
_LICENSE = lazy(r"copyright|licen[cs]e|spdx|all rights reserved|\(c\)|generated by|do not edit", re.IGNORECASE)
_COMMENT_PREFIXES = ("//!", "///", "//", "#", "--", ";;")


def purpose(text: str) -> str | None:
    """The first paragraph of a file's own docstring or leading comment (a license or
    a tool directive is no purpose)."""
    lines = text.splitlines()[:80]
    i = 0
    if lines and lines[0].startswith("#!"):
        i = 1
    while i < len(lines) and (not lines[i].strip() or _DIRECTIVE.match(lines[i].strip().lstrip("#/*-; ").strip())):
        i += 1
    if i >= len(lines):
        return None
    first = lines[i].strip()
    block: list[str] = []
    quote = re.match(r"^[rRuUbB]?(\"\"\"|''')", first)
    if quote:  # a Python docstring
        delimiter = quote.group(1)
        rest = first[quote.end() :]
        while True:
            if delimiter in rest:
                block.append(rest.split(delimiter, 1)[0])
                break
            block.append(rest)
            i += 1
            if i >= len(lines):
                return None
            rest = lines[i].strip()
    elif first.startswith("/*"):
        rest = first[2:].lstrip("*!")
        while True:
            if "*/" in rest:
                block.append(rest.split("*/", 1)[0].strip().lstrip("*").strip())
                break
            block.append(rest.strip().lstrip("*").strip())
            i += 1
            if i >= len(lines):
                return None
            rest = lines[i].strip()
    else:
        prefix = next((p for p in _COMMENT_PREFIXES if first.startswith(p)), None)
        if prefix is None:
            return None
        while i < len(lines) and lines[i].strip().startswith(prefix):
            line = lines[i].strip()[len(prefix) :]
            block.append(line.lstrip("/!#-; ").strip())
            i += 1
    paragraph: list[str] = []
    for line in block:
        if not line.strip():
            if paragraph:
                break
            continue
        paragraph.append(line.strip())
    said = " ".join(paragraph)
    if not said or _LICENSE.search(said) or _DIRECTIVE.match(said) or "://" in said:
        return None
    sentence = re.split(r"(?<=[.!?])\s", said, maxsplit=1)[0].rstrip(".!? :")
    if len(re.findall(r"[^\W\d_]{2,}", sentence)) < 2:
        return None
    sentence = _short(sentence, _MAX_PURPOSE)
    return sentence


_QUESTION = frozenset("do does did is are can could should will would how what why which when where who".split())
_VERB = frozenset(
    "read write run provide implement define handle manage return build create make parse check compute give "
    "hold keep convert generate load save fetch find get set show print render validate wrap test collect "
    "expose register serve store track update extract index search list measure compare describe".split()
)


_README = lazy(r"readme(?:\.(?:md|markdown|rst|txt))?", re.IGNORECASE)
_MARKUP_LINE = lazy(r"^\s*(?:#|=+\s*$|-+\s*$|\*+\s*$|\[!\[|!\[|<|\.\.\s|\||```|:)")
_LINK = lazy(r"\[([^\]]*)\]\([^)]*\)")
_UNDERLINE = lazy(r"^\s*([=\-~^*#])\1+\s*$")


def is_readme(path: str) -> bool:
    """Whether ``path`` is the project's README (at the root)."""
    return "/" not in path and _README.fullmatch(path) is not None


def readme_summary(text: str) -> str | None:
    """The first sentence of a README's first paragraph of prose (titles, badges,
    images, HTML, tables and code left out; links as their text); None when it has
    none of at least four words."""
    paragraph: list[str] = []
    fenced = False
    for line in text.splitlines()[:200]:
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            if paragraph:
                break
            continue
        if fenced:
            continue
        if not line.strip():
            if paragraph:
                break
            continue
        if _UNDERLINE.match(line) and len(paragraph) == 1:
            paragraph = []  # that was a title
            continue
        if _MARKUP_LINE.match(line):
            if paragraph:
                break
            continue
        paragraph.append(line.strip())
    said = _LINK.sub(r"\1", " ".join(paragraph)).replace("**", "").replace("`", "")
    sentence = re.split(r"(?<=[.!?])\s", said, maxsplit=1)[0].rstrip(".!? :")
    if len(re.findall(r"[^\W\d_]{2,}", sentence)) < 4:
        return None
    return _short(sentence, _MAX_PURPOSE)


def _added_for(path: str, purpose: str) -> str:
    """``Added {path} for {purpose}``, worded after the purpose's first word: "to read
    ..." for an imperative, ", which reads ..." for a third person verb, ": Do ...?" for a
    question; a capital dropped unless the word is an acronym or a name."""
    word = purpose.split(" ", 1)[0]
    lower = word.lower()
    if word[:1].isupper() and (word[1:].islower() or word == "A"):
        text = purpose[0].lower() + purpose[1:]
    else:
        text = purpose
    if lower in _QUESTION:
        return f"Added {path}: {purpose[0].upper() + purpose[1:]}?"
    if lower in _VERB:
        return f"Added {path} to {text}"
    if (lower.endswith("s") and lower[:-1] in _VERB) or (lower.endswith("es") and lower[:-2] in _VERB):
        return f"Added {path}, which {text}"
    return f"Added {path} for {text}"


def _generated(path: str) -> bool:
    """A build's output, not the project's source: in an ``*.egg-info``, ``__pycache__``
    or ``node_modules`` folder, or under ``build/lib``."""
    parts = PurePosixPath(path).parts[:-1]
    if any(p.endswith(".egg-info") or p in ("__pycache__", "node_modules") for p in parts):
        return True
    return any(parts[i : i + 2] == ("build", "lib") for i in range(len(parts)))


def _is_test_function(key: tuple[str, str, str]) -> bool:
    """A test by its name (`test_x`, `testX`, `TestX`), wherever it is (Rust keeps its
    unit tests beside the code)."""
    kind, _, name = key
    return kind == "function" and re.match(r"^(test_|test[A-Z]|Test[A-Z_])", name) is not None


def _is_test(path: str) -> bool:
    return _core.path_kind(path) == "test"


def _outline(path: str, text: str | None) -> list[_core.Definition]:
    if text is None:
        return []
    data = text.encode("utf-8", "replace")
    if len(data) > MAX_FILE_BYTES:
        return []
    return _core.outline(path, data, max_bytes=MAX_FILE_BYTES)


_CONSTANT = lazy(r"^[A-Z][A-Z0-9_]*$")


def _symbols(defs: Sequence[_core.Definition]) -> dict[tuple[str, str, str], list[_core.Definition]]:
    """The classes and functions of a file (not those local to a function), and its
    module-level constants, by (kind, scope, name)."""
    functions = {d.name for d in defs if d.kind == "function"}
    classes = {d.name for d in defs if d.kind == "class"}
    found: dict[tuple[str, str, str], list[_core.Definition]] = {}
    for d in defs:
        if d.kind in ("function", "class"):
            if d.scope and d.scope in functions and d.scope not in classes:
                continue  # a helper inside a function
        elif not (d.kind == "variable" and not d.scope and _CONSTANT.match(d.name)):
            continue
        found.setdefault((d.kind, d.scope, d.name), []).append(d)
    return found


def _body(lines: Sequence[str], d: _core.Definition, name: str) -> str:
    """A definition's text with its own name (as a whole word) made ``name`` and
    whitespace left out."""
    text = "\n".join(lines[d.line - 1 : d.end_line])
    return "".join(re.sub(rf"\b{re.escape(d.name)}\b", name, text).split())


def _renames(
    old: dict[tuple[str, str, str], list[_core.Definition]],
    new: dict[tuple[str, str, str], list[_core.Definition]],
    old_lines: Sequence[str],
    new_lines: Sequence[str],
) -> dict[tuple[str, str, str], tuple[str, str, str]]:
    """The classes and functions removed whose text, under the name of one added in
    the same scope, is that one's text: old key -> new key (each used once)."""
    gone = [k for k in old if k not in new and k[0] != "variable" and len(old[k]) == 1]
    came = [k for k in new if k not in old and k[0] != "variable" and len(new[k]) == 1]
    found: dict[tuple[str, str, str], tuple[str, str, str]] = {}
    for was in gone:
        for now in came:
            if now in found.values() or (was[0], was[1]) != (now[0], now[1]):
                continue
            if _body(old_lines, old[was][0], now[2]) == _body(new_lines, new[now][0], now[2]):
                found[was] = now
                break
    return found


def _what(kind: str, scope: str, name: str) -> str:
    if kind == "class":
        return f"class {scope}.{name}" if scope else f"class {name}"
    if kind == "variable":
        return f"constant {name}"
    return f"method {scope}.{name}" if scope else f"function {name}"


_LOCAL_PREFIXES = (".", "crate", "super", "self", "/", "@/", "~/", "$")


def _outside_import(module: str, signature: str, path: str, language: str) -> bool:
    """Whether an import names a module from outside the file's project: not relative,
    not a Rust `mod`, not a package named in the file's own path, not Python's stdlib."""
    if not module or module.startswith(_LOCAL_PREFIXES) or re.match(r"^(pub(\(\w+\))?\s+)?mod\s", signature):
        return False
    top = re.split(r"[./:\\]", module, maxsplit=1)[0]
    if not top or top in PurePosixPath(path).parts[:-1] or top == PurePosixPath(path).stem:
        return False
    return not (language == "python" and top in sys.stdlib_module_names)


def _public(d: _core.Definition) -> bool:
    """Whether a definition is part of its module's interface, as its language marks
    it: no leading `_` in Python, `pub` in Rust, a capital in Go; anything elsewhere."""
    if d.language == "python":
        if d.scope.startswith("_"):
            return False
        return not d.name.startswith("_") or (d.name.startswith("__") and d.name.endswith("__"))
    if d.language == "rust":
        return d.signature.startswith("pub")
    if d.language == "go":
        return d.name[:1].isupper()
    return True


# A trailing comment; a `#` or `//` with a quote after it may be inside a string.
_HASH_TRAILING = lazy(r"\s+#[^'\"]*$")
_SLASH_TRAILING = lazy(r"\s+//[^'\"]*$")


def _header_lines(lines: Sequence[str], d: _core.Definition) -> tuple[str, int]:
    """A definition's first line, and the lines after it while a bracket it opens is
    open (a signature over several lines), at most 40, each without its trailing
    comment; and the index (0-based) of the line after them."""
    comment = _HASH_TRAILING if d.language in ("python", "ruby", "bash") else _SLASH_TRAILING
    header = comment.sub("", d.signature)
    depth = sum(header.count(c) for c in "([") - sum(header.count(c) for c in ")]")
    at = d.line  # the next line, 0-based
    while depth > 0 and at < min(len(lines), d.line + 40, d.end_line):
        line = comment.sub("", lines[at].strip())
        header += " " + line
        depth += sum(line.count(c) for c in "([") - sum(line.count(c) for c in ")]")
        at += 1
    return header, at


def _header(lines: Sequence[str], d: _core.Definition) -> str:
    """A definition's header (:func:`_header_lines`) without the body's opening `{`
    or `:` and whitespace runs made one space."""
    header = _normal(_header_lines(lines, d)[0])
    if header.endswith("{"):
        header = header[:-1].rstrip()
    elif d.language == "python" and header.endswith(":") and d.kind != "variable":
        header = header[:-1].rstrip()
    return header


def _split_params(header: str, name: str, language: str) -> tuple[list[str], str] | None:
    """The parameters of a header (split at top-level commas) and what follows their
    closing bracket (the return type); None without a parameter list."""
    named = re.search(rf"(?<![\w$]){re.escape(name)}(?![\w$])", header)
    start = header.find("(", named.end() if named else 0)
    if start < 0:
        return None
    depth, at = 0, start
    parts: list[str] = []
    current: list[str] = []
    quote = ""
    angles = language not in ("python", "ruby", "php", "lua", "bash", "javascript")
    for at in range(start, len(header)):
        ch = header[at]
        if quote:  # inside a string: brackets and commas are text
            current.append(ch)
            if ch == quote and header[at - 1] != "\\":
                quote = ""
            continue
        if ch in "'\"`":
            quote = ch
            current.append(ch)
            continue
        if ch in "([{" or (ch == "<" and angles):
            depth += 1
            if depth == 1:
                continue
        elif ch in ")]}" or (ch == ">" and angles and header[at - 1 : at] not in ("-", "=")):
            depth -= 1
            if depth == 0:
                parts.append("".join(current).strip())
                break
        if depth == 1 and ch == ",":
            parts.append("".join(current).strip())
            current = []
        else:
            current.append(ch)
    else:
        return None
    rest = header[at + 1 :].split("{", 1)[0].strip().removeprefix("->").removeprefix(":").strip()
    if language == "python":  # `-> T: ...`, `-> T: return x`: the body goes
        rest = rest.split(":", 1)[0].strip()
    # Python's `*` and `/` markers and a trailing comma are no parameters.
    return [p for p in parts if p and p not in ("*", "/")], rest


def _param_name(param: str, language: str) -> str:
    """A parameter's name: before its `:` type (Python, Rust, TypeScript...), first in
    Go, else the last word before any default (C, Java: the type comes first)."""
    if ":" in param:
        head = param.split(":", 1)[0]
    elif language == "go":
        words = re.findall(r"[A-Za-z_][\w]*", param)
        return words[0] if words else param
    else:
        head = param.split("=", 1)[0]
    words = [w for w in re.findall(r"[A-Za-z_$][\w$]*", head) if w not in ("mut", "ref", "const", "val", "var")]
    return words[-1] if words else param


def _same(text: str) -> str:
    """A header's text with its layout and quote style left out (black's `'a'` -> `"a"`)."""
    return "".join(text.split()).replace("'", '"').replace(",)", ")").replace(",]", "]")


def _signature_change(was: str, now: str, name: str, language: str) -> tuple[str, bool] | None:
    """What changed between two headers: parameters added, removed or changed, the
    return type; both headers whole when the parameters cannot be told apart; None
    when they are the same parameters and return type laid out anew (in Python, also
    when only the annotations' spelling differs). The flag says that only a Python
    signature's type annotations changed."""
    typed = _python_difference(was, now) if language == "python" else None
    if typed is not None and typed[0] == "same":
        return None
    annotations = typed is not None and typed[0] == "annotations"
    old, new = _split_params(was, name, language), _split_params(now, name, language)
    if old is not None and new is not None:
        before = {_param_name(p, language): p for p in old[0]}
        after = {_param_name(p, language): p for p in new[0]}
        if len(before) == len(old[0]) and len(after) == len(new[0]):
            changes = [f"added {_short(p, 60)}" for n, p in after.items() if n not in before]
            changes += [f"removed {_short(p, 60)}" for n, p in before.items() if n not in after]
            changes += [
                f"{_short(p, 60)} (was {_short(before[n], 60)})"
                for n, p in after.items()
                if n in before and _same(before[n]) != _same(p)
            ]
            if _same(old[1]) != _same(new[1]):
                changes.append(f"returns {_short(new[1], 60) or 'nothing'} (was {_short(old[1], 60) or 'nothing'})")
            if typed is not None:
                changes += typed[1]  # Python's `*` and `/` markers moved
            if not changes:
                return None  # the same parameters, laid out anew
            return "; ".join(changes[:4]) + (f"; and {len(changes) - 4} more" if len(changes) > 4 else ""), annotations
    return f"{_short(was, _MAX_SIGNATURE)} -> {_short(now, _MAX_SIGNATURE)}", annotations


# typing's names for what the builtins (PEP 585) and `X | Y` (PEP 604) say now
_TYPING_ALIASES = {
    "List": "list",
    "Dict": "dict",
    "Tuple": "tuple",
    "Set": "set",
    "FrozenSet": "frozenset",
    "Type": "type",
    "Text": "str",
}
_TYPING_MODULES = frozenset({"typing", "t", "typing_extensions"})


def _python_difference(was: str, now: str) -> tuple[Literal["same", "annotations", "other"], list[str]] | None:
    """How two Python headers differ, read by ``ast``: "same" when only the
    annotations' spelling does, "annotations" when only annotations do (added,
    removed or another type), "other" for a parameter's name, kind, order or default,
    with the parameters whose kind changed ("b keyword-only (was positional)"); None
    when either does not parse (a header cut short, another language's text)."""
    old, new = _python_signature(was), _python_signature(now)
    if old is None or new is None:
        return None
    if [p[:2] + p[3:] for p in old[0]] != [p[:2] + p[3:] for p in new[0]]:
        kinds = {p[1]: p[0] for p in old[0]}
        moved = [f"{p[1]} {p[0]} (was {kinds[p[1]]})" for p in new[0] if kinds.get(p[1], p[0]) != p[0]]
        return "other", moved
    return ("same" if old == new else "annotations"), []


def _python_signature(header: str) -> tuple[list[tuple[str, str, str, str]], str] | None:
    """A Python header's parameters, each (kind, name, annotation, default) with its
    annotation in one spelling (:func:`_annotation`), and its return annotation."""
    import ast

    text = header.strip()
    if not text.startswith(("def ", "async def ")):
        return None
    try:
        tree = ast.parse(text + ": pass")
        node = tree.body[0] if len(tree.body) == 1 else None
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return None
        a = node.args
        defaults: list[ast.expr | None] = [None] * (len(a.posonlyargs) + len(a.args) - len(a.defaults))
        defaults += a.defaults
        params: list[tuple[str, str, str, str]] = []
        positional = len(a.posonlyargs)
        for n, (arg, value) in enumerate(zip(a.posonlyargs + a.args, defaults)):
            kind = "positional-only" if n < positional else "positional"
            params.append((kind, arg.arg, _annotation(arg.annotation), "" if value is None else ast.unparse(value)))
        for arg, value in zip(a.kwonlyargs, a.kw_defaults):
            params.append(
                ("keyword-only", arg.arg, _annotation(arg.annotation), "" if value is None else ast.unparse(value))
            )
        for kind, star in (("*", a.vararg), ("**", a.kwarg)):
            if star is not None:
                params.append((kind, star.arg, _annotation(star.annotation), ""))
        return params, _annotation(node.returns)
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # too deep for ast or for us
        return None


def _annotation(node: Any) -> str:
    """An annotation in one spelling: ``Optional[X]``, ``Union[X, None]`` and ``None |
    X`` all as ``X | None`` (a union's members sorted), typing's ``List``, ``Dict``...
    as the builtins, ``typing.X`` / ``t.X`` as ``X``, a string annotation as the
    expression it holds; "" for none."""
    import ast

    if node is None:
        return ""

    def members(n: ast.expr, depth: int) -> list[str]:
        if depth > _MAX_ANNOTATION_DEPTH:
            raise RecursionError("annotation nested too deep")
        if isinstance(n, ast.BinOp) and isinstance(n.op, ast.BitOr):
            return members(n.left, depth + 1) + members(n.right, depth + 1)
        if isinstance(n, ast.Subscript) and _typing_name(n.value) in ("Union", "Optional"):
            inner: list[ast.expr] = n.slice.elts if isinstance(n.slice, ast.Tuple) else [n.slice]
            found = [m for e in inner for m in members(e, depth + 1)]
            return found + (["None"] if _typing_name(n.value) == "Optional" else [])
        return [spell(n, depth + 1)]

    def spell(n: ast.expr, depth: int) -> str:
        if depth > _MAX_ANNOTATION_DEPTH:
            raise RecursionError("annotation nested too deep")
        if isinstance(n, ast.Constant) and isinstance(n.value, str):  # a forward reference
            try:
                held = ast.parse(n.value.strip(), mode="eval").body
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                return repr(n.value)
            return spell(held, depth + 1)
        if (isinstance(n, ast.BinOp) and isinstance(n.op, ast.BitOr)) or (
            isinstance(n, ast.Subscript) and _typing_name(n.value) in ("Union", "Optional")
        ):
            return " | ".join(sorted(set(members(n, depth))))
        if isinstance(n, ast.Subscript):
            items: list[ast.expr] = n.slice.elts if isinstance(n.slice, ast.Tuple) else [n.slice]
            return f"{spell(n.value, depth + 1)}[{', '.join(spell(e, depth + 1) for e in items)}]"
        if isinstance(n, (ast.List, ast.Tuple)):  # Callable[[A, B], C]
            return "[" + ", ".join(spell(e, depth + 1) for e in n.elts) + "]"
        name = _typing_name(n)
        if name is not None:
            return _TYPING_ALIASES.get(name, name)
        return ast.unparse(n)

    return spell(node, 0)


_MAX_ANNOTATION_DEPTH = 50


def _typing_name(node: Any) -> str | None:
    """``X`` for a name ``X`` or ``typing.X`` / ``t.X`` / ``typing_extensions.X``."""
    import ast

    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in _TYPING_MODULES:
        return node.attr
    return None


# `@overload` (or `@typing.overload`...), more decorators, then the `def` and its name
_OVERLOAD = lazy(
    r"^[ \t]*@(?:typing\.|t\.|typing_extensions\.)?overload\b[^\n]*\n"
    r"(?:[ \t]*@[^\n]*\n)*[ \t]*(?:async[ \t]+)?def[ \t]+(\w+)",
    re.MULTILINE,
)


def _overloaded(path: str, text: str | None) -> frozenset[str]:
    """The names of a Python file's functions with an ``@overload`` definition."""
    if not text or not path.endswith((".py", ".pyi")) or "overload" not in text:
        return frozenset()
    return frozenset(m.group(1) for m in _OVERLOAD.finditer(text))


_PLUMBING = frozenset({"fmt", "as_str", "from", "into", "eq", "hash", "clone", "default", "drop", "deref"})


def _weight(path: str, d: _core.Definition) -> float:
    """A definition's confidence: PARSED for the project's interface, PRIVATE for a
    private one, one in a benchmark, example or docs folder, and a method that only
    plugs into the language (a dunder other than ``__init__``/``__call__``, Rust's
    ``fmt``, ``clone``...)."""
    if not _public(d) or _core.path_kind(path) in ("bench", "example", "docs"):
        return PRIVATE
    if d.scope and (d.name in _PLUMBING or (d.name.startswith("__") and d.name not in ("__init__", "__call__"))):
        return PRIVATE
    return PARSED


# a comment line above a definition (a line of a doc block's middle or end too), by
# how the language comments (C's `#include` is none)
_SLASH_COMMENT = lazy(r"^\s*(?://|/\*|\*)")
_COMMENT_LINE = {"ruby": lazy(r"^\s*#(?!!)"), "bash": lazy(r"^\s*#(?!!)"), "lua": lazy(r"^\s*--")}
# an attribute, annotation or decorator between a doc comment and its definition
_ATTRIBUTE_LINE = lazy(r"^\s*(?:#!?\[|@\w|\[\w[^\]]*\]\s*$)")
# a Python body's first line that opens a docstring
_DOCSTRING = lazy(r"^\s*[rRuU]?(?:\"\"\"|\'\'\')")


def _symbol_purpose(lines: Sequence[str], d: _core.Definition) -> str | None:
    """The first sentence of a new definition's own documentation (:func:`purpose`):
    in Python its docstring, elsewhere the comment block right above it (attributes
    and annotations between are skipped). None without one: nothing is invented."""
    if not lines or d.line < 1 or d.line > len(lines):
        return None
    if d.language == "python":
        at = _header_lines(lines, d)[1]  # the body's first line
        if at >= min(len(lines), d.end_line) or not _DOCSTRING.match(lines[at]):
            return None
        return purpose("\n".join(lines[at : min(at + 40, d.end_line)]))
    comment = _COMMENT_LINE.get(d.language, _SLASH_COMMENT)
    at = d.line - 2
    while at >= 0 and _ATTRIBUTE_LINE.match(lines[at]):
        at -= 1
    end = at
    while at >= 0 and end - at < 40 and comment.match(lines[at]):
        at -= 1
    if at == end:
        return None
    return purpose("\n".join(lines[at + 1 : end + 1]))


def _ref(path: str, d: _core.Definition) -> str:
    return f"{path}#L{d.line}-{d.end_line}"


def _source_candidates(
    path: str,
    old_text: str | None,
    new_text: str | None,
    new_file: bool,
    commit: str | None,
    old_definitions: Sequence[_core.Definition] | None = None,
) -> list[CandidateFact]:
    known = old_definitions is not None
    old_defs = list(old_definitions) if old_definitions is not None else _outline(path, old_text)
    new_defs = _outline(path, new_text)
    # Without the old text a header is its first line on both sides (see candidates_for_change).
    old_lines = (old_text or "").splitlines()
    new_lines = [] if known else (new_text or "").splitlines()
    old, new = _symbols(old_defs), _symbols(new_defs)
    domain = _domain(path)
    found: list[CandidateFact] = []

    def fact(content: str, confidence: float, kind: Kind, d: _core.Definition | None) -> None:
        found.append(
            CandidateFact(
                content=content,
                confidence=confidence,
                source="ast_analysis",
                suggested_level="L3" if d is not None else "L2",
                kind=kind,
                path=path,
                code_ref=_ref(path, d) if d is not None else None,
                domain=domain,
                commit=commit,
            )
        )

    # Tests: one candidate a file for those added, one for those removed; in a test
    # file nothing else (its helpers and fixtures are no facts of the project).
    added = [k[2] for k in new if k not in old and _is_test_function(k)]
    gone = [k[2] for k in old if k not in new and _is_test_function(k)]
    if added:
        fact(f"Added tests {_names(added)} in {path}", TESTS, "new_symbol", None)
    if gone and new_text is not None:
        fact(f"Removed tests {_names(gone)} from {path}", TESTS, "removed_symbol", None)
    if _is_test(path):
        return found
    renamed = {} if known else _renames(old, new, old_lines, new_lines)
    overloaded = _overloaded(path, old_text) | _overloaded(path, new_text)
    for was_key, key in renamed.items():
        d = new[key][0]
        fact(f"Renamed {_what(*was_key)} to {key[2]} in {path}", _weight(path, d), "renamed_symbol", d)
    # a renamed class's methods come with it
    moved_in = {now[2] for now in renamed.values() if now[0] == "class"}
    text_lines: list[str] | None = None  # the new text's lines, for what a new definition is for
    for key, defs in new.items():
        kind, scope, _ = key
        if _is_test_function(key) or key in renamed.values() or (scope and scope in moved_in):
            continue
        if key in old:
            before = old[key]
            was, now = (
                (_header(old_lines, before[0]), _header(new_lines, defs[0]))
                if len(before) == len(defs) == 1
                else ("", "")
            )
            if _same(was) != _same(now):
                if kind == "variable":
                    was, now = _short(was, _MAX_SIGNATURE), _short(now, _MAX_SIGNATURE)
                    fact(f"Changed {_what(*key)} in {path}: {was} -> {now}", PARSED, "signature", defs[0])
                elif key[2] in overloaded:
                    pass  # the parser kept one of its definitions on each side: no telling
                elif (change := _signature_change(was, now, key[2], defs[0].language)) is not None:
                    fact(
                        f"Changed the signature of {_what(*key)} in {path}: {change[0]}",
                        min(_weight(path, defs[0]), ANNOTATIONS) if change[1] else _weight(path, defs[0]),
                        "signature",
                        defs[0],
                    )
        elif kind != "variable" and not (new_file and scope):
            # In a new file only its top-level classes and functions: its methods
            # come with their class.
            if text_lines is None:
                text_lines = (new_text or "").splitlines()
            said = _symbol_purpose(text_lines, defs[0])
            fact(
                f"Implemented {_what(*key)} in {path}" + (f": {said}" if said else ""),
                _weight(path, defs[0]),
                "new_symbol",
                defs[0],
            )
    if new_text is not None:  # a removed file's symbols go with it
        gone_classes = {k[2] for k in old if k[0] == "class" and k not in new}
        for key in old:
            # A removed class's methods go with it.
            if (
                key not in new
                and key not in renamed
                and key[0] != "variable"
                and not (key[1] and key[1] in gone_classes)
                and not _is_test_function(key)
            ):
                fact(f"Removed {_what(*key)} from {path}", _weight(path, old[key][0]), "removed_symbol", None)
    if not new_file:
        old_modules = {d.name for d in old_defs if d.kind == "import"}
        fresh: list[str] = []
        for d in new_defs:
            if (
                d.kind == "import"
                and d.name not in old_modules
                and d.name not in fresh
                and _outside_import(d.name, d.signature, path, d.language)
            ):
                fresh.append(d.name)
        if fresh:
            fact(f"{path} now imports {_names(fresh)}", IMPORT, "import", None)
    return found


# ------------------------------------------------- configuration files

_DEPENDENCY = lazy(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*(.*)$")


def _requirement(text: str) -> tuple[str, str] | None:
    """A PEP 508 requirement's name (normalised) and the rest (versions, markers)."""
    match = _DEPENDENCY.match(text)
    if not match:
        return None
    name = re.sub(r"[-_.]+", "-", match.group(1)).lower()
    return name, _normal((match.group(2) or "") + match.group(3))


def _spec(value: Any) -> str:
    """A Cargo/Poetry/npm dependency's version (or where it comes from)."""
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        for key in ("version", "path", "git", "url"):
            if isinstance(value.get(key), str):
                return str(value[key]) if key == "version" else f"{key} {value[key]}"
        if value.get("workspace") is True:
            return "workspace"
    return _short(json.dumps(value, sort_keys=True, default=str))


def _flatten(value: Any, prefix: str, out: dict[str, str], skip: frozenset[str]) -> None:
    if prefix in skip:
        return
    if isinstance(value, Mapping):
        for key, inner in value.items():
            _flatten(inner, f"{prefix}.{key}" if prefix else str(key), out, skip)
    elif isinstance(value, list) and any(isinstance(v, (Mapping, list)) for v in value):
        for n, inner in enumerate(value):
            _flatten(inner, f"{prefix}[{n}]", out, skip)
    elif isinstance(value, list):
        out[prefix] = "[" + ", ".join(str(v) for v in value) + "]"
    elif isinstance(value, bool):
        out[prefix] = "true" if value else "false"
    else:
        out[prefix] = str(value)


Deps = dict[tuple[str, str], str]


def _pyproject(data: Mapping[str, Any]) -> tuple[Deps, frozenset[str]]:
    deps: Deps = {}
    tables: set[str] = set()

    def pep508(group: str, items: Any, table: str) -> None:
        if isinstance(items, list):
            tables.add(table)
            for item in items:
                if isinstance(item, str) and (req := _requirement(item)):
                    deps[(group, req[0])] = req[1]

    project = data.get("project") if isinstance(data.get("project"), Mapping) else {}
    assert isinstance(project, Mapping)
    pep508("", project.get("dependencies"), "project.dependencies")
    for group, items in (project.get("optional-dependencies") or {}).items():
        pep508(str(group), items, f"project.optional-dependencies.{group}")
    if isinstance(data.get("dependency-groups"), Mapping):
        for group, items in data["dependency-groups"].items():
            pep508(str(group), items, f"dependency-groups.{group}")
    build = data.get("build-system")
    if isinstance(build, Mapping):
        pep508("build", build.get("requires"), "build-system.requires")
    poetry = data.get("tool", {}).get("poetry") if isinstance(data.get("tool"), Mapping) else None
    if isinstance(poetry, Mapping):
        for table, group in [("dependencies", ""), ("dev-dependencies", "dev")]:
            if isinstance(poetry.get(table), Mapping):
                tables.add(f"tool.poetry.{table}")
                for name, spec in poetry[table].items():
                    deps[(group, str(name).lower())] = _spec(spec)
    return deps, frozenset(tables)


def _cargo(data: Mapping[str, Any]) -> tuple[Deps, frozenset[str]]:
    deps: Deps = {}
    tables: set[str] = set()
    sections = ("dependencies", "dev-dependencies", "build-dependencies")

    def add(prefix: str, table: Any) -> None:
        if not isinstance(table, Mapping):
            return
        for section in sections:
            if isinstance(table.get(section), Mapping):
                tables.add(f"{prefix}{section}")
                group = "" if section == "dependencies" else section.removesuffix("-dependencies")
                if prefix:
                    group = f"{prefix.rstrip('.')} {group}".strip()
                for name, spec in table[section].items():
                    deps[(group, str(name))] = _spec(spec)

    add("", data)
    if isinstance(data.get("workspace"), Mapping):
        add("workspace.", data["workspace"])
    if isinstance(data.get("target"), Mapping):
        for target, table in data["target"].items():
            add(f"target.{target}.", table)
    return deps, frozenset(tables)


def _package_json(data: Mapping[str, Any]) -> tuple[Deps, frozenset[str]]:
    deps: Deps = {}
    tables: set[str] = set()
    for section, group in [
        ("dependencies", ""),
        ("devDependencies", "dev"),
        ("peerDependencies", "peer"),
        ("optionalDependencies", "optional"),
    ]:
        if isinstance(data.get(section), Mapping):
            tables.add(section)
            for name, spec in data[section].items():
                deps[(group, str(name))] = _spec(spec)
    return deps, frozenset(tables)


def _setup_cfg(data: Mapping[str, Any]) -> tuple[Deps, frozenset[str]]:
    deps: Deps = {}
    tables: set[str] = set()
    options = data.get("options", {})
    if "install_requires" in options:
        tables.add("options.install_requires")
        for line in options["install_requires"].splitlines():
            if req := _requirement(line.split("#", 1)[0]):
                deps[("", req[0])] = req[1]
    for group, text in data.get("options.extras_require", {}).items():
        tables.add(f"options.extras_require.{group}")
        for line in text.splitlines():
            if req := _requirement(line.split("#", 1)[0]):
                deps[(group, req[0])] = req[1]
    return deps, frozenset(tables)


def _ini(text: str) -> dict[str, dict[str, str]]:
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    parser.read_string(text)
    return {section: dict(parser[section]) for section in parser.sections()}


def _go_mod(text: str) -> tuple[Deps, dict[str, str]]:
    deps: Deps = {}
    settings: dict[str, str] = {}
    block: str | None = None  # the directive of the `(` block the line is in
    for raw in text.splitlines():
        line = raw.split("//", 1)[0].strip()
        if not line:
            continue
        words = line.split()
        if block is not None:
            if line == ")":
                block = None
            elif block == "require" and len(words) >= 2:
                deps[("", words[0])] = words[1]
        elif words[-1] == "(":
            block = words[0]
        elif words[0] == "require" and len(words) >= 3:
            deps[("", words[1])] = words[2]
        elif words[0] in ("go", "toolchain", "module") and len(words) == 2:
            settings[words[0]] = words[1]
    return deps, settings


_YAML_KEY = lazy(r"^(\s*)(-\s+)?([A-Za-z0-9_.\-/]+)\s*:\s*(.*)$")


def _yaml_lines(text: str) -> Counter[tuple[str, str]]:
    """(dotted key, value) of each `key: value` line with a value, the key's parents
    found by indentation; list items' keys are their list's children."""
    found: Counter[tuple[str, str]] = Counter()
    stack: list[tuple[int, str]] = []
    for raw in text.splitlines():
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        match = _YAML_KEY.match(raw)
        if not match:
            continue
        indent = len(match.group(1)) + len(match.group(2) or "")
        while stack and stack[-1][0] >= indent:
            stack.pop()
        key = match.group(3)
        value = re.split(r"\s+#", match.group(4), maxsplit=1)[0].strip()
        full = ".".join([k for _, k in stack] + [key])
        if value and value not in ("|", ">", "|-", ">-"):
            found[(full, _short(value.strip("'\"")))] += 1
        else:
            stack.append((indent, key))
    return found


def _actions(lines: Counter[tuple[str, str]]) -> dict[str, str]:
    """The actions a workflow's steps use, by name: the ref (a commit id cut to 12)."""
    found: dict[str, str] = {}
    for key, value in sorted(lines):
        if key.endswith("uses") and "@" in value:
            action, _, ref = value.partition("@")
            found[action] = ref[:12] if re.fullmatch(r"[0-9a-f]{40}", ref) else ref
    return found


_CONFIG_NAMES = frozenset({"pyproject.toml", "package.json", "Cargo.toml", "go.mod", "setup.cfg", "tox.ini"})


def _is_config(path: str) -> bool:
    p = PurePosixPath(path)
    if p.name in _CONFIG_NAMES:
        return True
    return p.suffix in (".yml", ".yaml") and p.parent.as_posix().endswith(".github/workflows")


def _config_state(path: str, text: str) -> tuple[Deps, dict[str, str]]:
    """A config file's dependencies and other settings; ValueError if it does not parse."""
    name = PurePosixPath(path).name
    settings: dict[str, str] = {}
    if name in ("pyproject.toml", "Cargo.toml"):
        try:
            data: Any = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ValueError(str(exc)) from exc
        deps, tables = (_pyproject if name == "pyproject.toml" else _cargo)(data)
        _flatten(data, "", settings, tables)
        return deps, settings
    if name == "package.json":
        data = json.loads(text)
        if not isinstance(data, dict):
            raise ValueError("not a JSON object")
        deps, tables = _package_json(data)
        _flatten(data, "", settings, tables)
        return deps, settings
    if name == "go.mod":
        return _go_mod(text)
    try:
        sections = _ini(text)
    except configparser.Error as exc:
        raise ValueError(str(exc)) from exc
    deps, tables = _setup_cfg(sections) if name == "setup.cfg" else ({}, frozenset())
    _flatten(sections, "", settings, tables)
    return deps, settings


def _dep_name(group: str, name: str) -> str:
    return f"{name} ({group})" if group else name


def _config_candidates(
    path: str, old_text: str | None, new_text: str | None, origin: Origin, commit: str | None
) -> list[CandidateFact]:
    domain = _domain(path)
    found: list[CandidateFact] = []

    def fact(content: str, confidence: float) -> None:
        found.append(CandidateFact(content, confidence, origin, "L1", "config", path, None, domain, commit))

    if new_text is None:
        return found
    if PurePosixPath(path).suffix in (".yml", ".yaml"):
        if old_text is None:
            return found
        before, after = _yaml_lines(old_text), _yaml_lines(new_text)
        # A step's `uses: owner/action@ref` is a dependency on the action, once a file.
        old_actions = _actions(before)
        for action, ref in _actions(after).items():
            if action not in old_actions:
                fact(f"Added action {action}@{ref} to {path}", SETTING)
            elif old_actions[action] != ref:
                fact(f"Updated action {action} to {ref} in {path}", SETTING)
        for action in old_actions:
            if action not in _actions(after):
                fact(f"Removed action {action} from {path}", SETTING)
        before = Counter({k: n for k, n in before.items() if not k[0].endswith("uses")})
        after = Counter({k: n for k, n in after.items() if not k[0].endswith("uses")})
        gone = list((before - after).elements())
        for key, value in (after - before).elements():
            old_value = next((v for k, v in gone if k == key), None)
            if old_value is not None:
                gone.remove((key, old_value))
                fact(f"Updated {key} to {value} in {path}", LINE_LEVEL)
            else:
                fact(f"Set {key} to {value} in {path}", LINE_LEVEL)
        return found
    try:
        new_deps, new_settings = _config_state(path, new_text)
        old_deps, old_settings = _config_state(path, old_text) if old_text is not None else ({}, {})
    except (ValueError, RecursionError):
        return found  # a file that does not parse says nothing reliable
    if old_text is None:
        if new_deps:
            names = [_dep_name(*dep) for dep in new_deps]
            fact(f"{path} declares dependencies {_names(names)}", PARSED)
        return found
    for dep, spec in new_deps.items():
        name = _dep_name(*dep)
        if dep not in old_deps:
            fact(f"Added dependency {name}{' ' + spec if spec else ''} to {path}", PARSED)
        elif old_deps[dep] != spec:
            fact(f"Updated dependency {name} to {spec or 'any version'} in {path}", PARSED)
    for dep in old_deps:
        if dep not in new_deps:
            fact(f"Removed dependency {_dep_name(*dep)} from {path}", PARSED)
    # Keys inside an array of tables (`sponsors[2].url`) are positions, not names.
    new_settings = {k: v for k, v in new_settings.items() if "[" not in k}
    old_settings = {k: v for k, v in old_settings.items() if "[" not in k}
    for key, value in new_settings.items():
        if key not in old_settings:
            fact(f"Set {key} to {_short(value)} in {path}", SETTING)
        elif old_settings[key] != value:
            fact(f"Updated {key} to {_short(value)} in {path}", SETTING)
    for key in old_settings:
        if key not in new_settings:
            fact(f"Removed {key} from {path}", SETTING)
    return found


# ---------------------------------------------------------------- one file


def _line_counts(old_text: str | None, new_text: str | None) -> tuple[int, int]:
    """Lines added and removed, as a multiset difference of the lines (a moved line
    counts as neither)."""
    before = Counter((old_text or "").splitlines())
    after = Counter((new_text or "").splitlines())
    return sum((after - before).values()), sum((before - after).values())


def _capped(found: list[CandidateFact], limit: int) -> list[CandidateFact]:
    if len(found) <= limit:
        return found
    ranked = sorted(range(len(found)), key=lambda i: (-found[i].confidence, i))[:limit]
    return [found[i] for i in sorted(ranked)]


def candidates_for_change(
    path: str,
    old_text: str | None,
    new_text: str | None,
    *,
    lines_added: int | None = None,
    lines_removed: int | None = None,
    old_path: str | None = None,
    origin: Literal["git_diff", "file_change"] = "file_change",
    commit: str | None = None,
    old_definitions: Sequence[_core.Definition] | None = None,
) -> list[CandidateFact]:
    """The candidate facts one file's change gives: ``old_text`` None for a new file,
    ``new_text`` None for a removed one, ``old_path`` for a renamed one. Lines changed
    are counted from the texts unless given (git's ``--numstat``). File-level
    candidates carry ``origin`` as their source; those the parser found
    ``ast_analysis``. At most ``MAX_PER_FILE``, the most confident first. Pure: reads
    nothing but its arguments.

    ``old_definitions`` stand for a text before that is not known (an index refresh
    of a file changed outside the agent: the graph's definitions of it,
    ``KnowledgeGraph.get_file_contents``, which are what ``_core.outline`` of that
    text gave): they are compared with the new text's, each header its first line on
    both sides; what needs the old text is not said (renames, a refactor's line
    counts, a build file's or README's changes)."""
    domain = _domain(path)
    found: list[CandidateFact] = []

    def file_fact(content: str, confidence: float, kind: Kind) -> None:
        found.append(CandidateFact(content, confidence, origin, "L2", kind, path, None, domain, commit))

    if _generated(path):
        return found
    known = old_definitions is not None
    if old_text is None and new_text is None and old_path is None and not known:
        return found
    new_file = old_text is None and old_path is None and not known
    if new_file:
        said = purpose(new_text) if new_text is not None else None
        if said:
            file_fact(_added_for(path, said), PURPOSE, "new_file")
        else:
            file_fact(f"Added {path}", BARE_FILE, "new_file")
    elif new_text is None and old_path is None:
        file_fact(f"Removed {path}", FROM_GIT, "removed_file")
        return found
    elif old_path is not None and old_path != path:
        file_fact(f"Renamed {old_path} to {path}", FROM_GIT, "moved_file")
    if known and (_is_config(path) or is_readme(path)):
        return found
    if _is_config(path):
        found.extend(_config_candidates(path, old_text, new_text, origin, commit))
        return _capped(found, MAX_PER_FILE)
    if is_readme(path) and new_text is not None:
        summary = readme_summary(new_text)
        if summary is not None and (old_text is None or readme_summary(old_text) != summary):
            found.append(
                CandidateFact(
                    f"{path} says the project is: {summary}", README, origin, "L0", "readme", path, None, None, commit
                )
            )
        return _capped(found, MAX_PER_FILE)
    symbols = _source_candidates(path, old_text, new_text, new_file, commit, old_definitions)
    found.extend(symbols)
    if not new_file and old_text is not None and new_text is not None:
        if lines_added is None or lines_removed is None:
            lines_added, lines_removed = _line_counts(old_text, new_text)
        parsed = bool(_outline(path, new_text) or _outline(path, old_text))
        if (
            parsed
            and lines_added + lines_removed > REFACTOR_LINES
            and min(lines_added, lines_removed) >= REFACTOR_MINIMUM
        ):
            file_fact(
                f"Refactored {path} ({lines_added} lines added, {lines_removed} removed)",
                REFACTOR,
                "refactor",
            )
    return _capped(found, MAX_PER_FILE)


def _moves(found: list[CandidateFact]) -> list[CandidateFact]:
    """A symbol removed from one file and added to another in the same change: moved."""
    added: dict[str, int] = {}
    for n, c in enumerate(found):
        if c.kind == "new_symbol" and c.code_ref is not None:
            # "Implemented {what} in {path}", then ": {purpose}" when it has one
            what = c.content.removeprefix("Implemented ").partition(f" in {c.path}")[0]
            added.setdefault(what, n)
    out = list(found)
    drop: set[int] = set()
    for n, c in enumerate(found):
        if c.kind != "removed_symbol" or not c.content.startswith("Removed "):
            continue
        what, _, origin_path = c.content.removeprefix("Removed ").rpartition(" from ")
        at = added.pop(what, None)
        if at is None or found[at].path == origin_path:
            continue
        target = found[at]
        out[at] = replace(target, content=f"Moved {what} from {origin_path} to {target.path}", kind="moved_symbol")
        drop.add(n)
    return [c for n, c in enumerate(out) if n not in drop]


def extract(
    root: str | os.PathLike[str],
    *,
    source: Source = "working",
    rev: str | None = None,
    paths: Sequence[str] = (),
    timeout: float = GIT_TIMEOUT,
) -> list[CandidateFact]:
    """The candidate facts of a change git knows (see ``read_changes`` for ``source``,
    ``rev`` and ``paths``): each file's (``candidates_for_change``), a symbol removed from one
    file and added to another made one ``moved_symbol``; at most ``MAX_PER_CHANGE``,
    the most confident first. Raises GitError and InvalidInputError as
    ``read_changes`` does."""
    files, commit = read_changes(root, source=source, rev=rev, paths=paths, timeout=timeout)
    found: list[CandidateFact] = []
    for f in files:
        if f.status == "modified" and (f.old_text is None or f.new_text is None):
            continue  # binary, too large or not read: nothing to compare
        found.extend(
            candidates_for_change(
                f.path,
                None if f.status == "added" else (f.old_text or ""),
                None if f.status == "deleted" else (f.new_text or ""),
                lines_added=f.added,
                lines_removed=f.removed,
                old_path=f.old_path,
                origin="git_diff",
                commit=commit,
            )
        )
    return _capped(_moves(found), MAX_PER_CHANGE)


def extract_file(
    root: str | os.PathLike[str], path: str | os.PathLike[str], old_text: str | None, new_text: str | None
) -> list[CandidateFact]:
    """The candidate facts of one edit of the file ``path`` (relative to ``root`` or
    absolute inside it) from its text before (None: the edit created it) and after
    (None: it removed it), as a file-save hook sees them. InvalidInputError for a path
    outside ``root``."""
    relative = _core.relative_path(root, path)
    return candidates_for_change(relative, old_text, new_text, origin="file_change")


def extract_edit(root: str | os.PathLike[str], path: str | os.PathLike[str], before: str | None) -> list[CandidateFact]:
    """The candidate facts of an edit just made to the file ``path``: its text
    ``before`` it (None: the edit created the file) against its text now on disk
    (gone: the edit removed it), as :func:`extract_file` compares them. A file now
    binary, over ``MAX_FILE_BYTES`` or not a regular file gives none.
    InvalidInputError for a path outside ``root``."""
    relative = _core.relative_path(root, path)
    if os.path.lexists(os.path.join(os.fspath(root), relative)):
        after = _text(_read_work_file(os.fspath(root), relative))
        if after is None:
            return []
    else:
        after = None
    if before is None and after is None:
        return []
    return candidates_for_change(relative, before, after, origin="file_change")


def extract_refresh(
    root: str | os.PathLike[str],
    before: Mapping[str, Sequence[_core.Definition]],
    *,
    added: Sequence[str] = (),
    updated: Sequence[str] = (),
    removed: Sequence[str] = (),
    limit: int = MAX_FILES,
) -> list[CandidateFact]:
    """The candidate facts of an index refresh: the files it found ``added``,
    ``updated`` (each with the definitions the graph held of it in ``before``; one
    missing there is not compared) and ``removed`` since the last index (root-relative
    paths), their text now read from disk against those definitions, as
    :func:`candidates_for_change` compares them (``origin`` ``file_change``); at most
    ``limit`` files, in that order, read. No git is needed: this is how a change made
    outside the agent, in a tree no history describes, becomes facts."""
    base = os.fspath(root)
    found: list[CandidateFact] = []
    files = [(p, "added") for p in added] + [(p, "updated") for p in updated if p in before]
    files += [(p, "removed") for p in removed]
    for rel, status in files[: max(0, limit)]:
        after = None if status == "removed" else _text(_read_work_file(base, rel))
        if status != "removed" and after is None:
            continue  # binary, too large or gone since
        found.extend(
            candidates_for_change(
                rel,
                None,
                after,
                origin="file_change",
                old_definitions=None if status == "added" else before.get(rel, ()),
            )
        )
    return _capped(_moves(found), MAX_PER_CHANGE)
