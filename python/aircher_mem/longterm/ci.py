"""The commands a project's continuous integration runs, for cold start: the shell
lines of GitHub Actions workflows (``.github/workflows/*.yml``), GitLab CI
(``.gitlab-ci.yml``), CircleCI (``.circleci/config.yml``) and Travis CI
(``.travis.yml``) at the root, each split into simple commands and classified as a
test, lint or build command by the ``[ci]`` table of ``aircher_mem/data/coldstart.toml``.

A command keeps the words CI runs (``poetry run pytest -q``) less any word that holds
a CI expression or a shell variable (``${{ matrix.python }}``, ``$FLAGS``), and the
folder it runs in: a step's ``working-directory`` (or the job's or the workflow's
default), or a ``cd DIR`` earlier in the same script. Workflow files and jobs named
for the docs or a release (the table's ``skip``) are not read.

The files are read through :func:`aircher_mem.longterm.buildfiles.read_text` (inside
the root, no symlink followed, at most ``MAX_FILE_BYTES``) and parsed with PyYAML's
safe loader; a file that does not parse is skipped with a log record, and the walk
over what it holds stops after :data:`MAX_NODES` values (aliases can make a small file
a large tree)."""

from __future__ import annotations

import dataclasses
import functools
import logging
import os
import posixpath
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..pattern import lazy
from .buildfiles import read_text, strings, table, tables

__all__ = ["MAX_FILES", "MAX_NODES", "CiCommand", "commands", "split"]

LOG = logging.getLogger("aircher_mem.longterm.coldstart")

#: The most workflow files read from ``.github/workflows`` (by name).
MAX_FILES = 32
#: The most YAML values looked at in one file.
MAX_NODES = 50_000
_FILES = (".gitlab-ci.yml", ".circleci/config.yml", ".travis.yml")
# the GitLab CI keys that are no job
_GITLAB_GLOBAL = frozenset(
    {"stages", "variables", "default", "include", "workflow", "image", "services", "cache", "before_script"}
    | {"after_script", "types", "pages"}
)
_EXPRESSION = lazy(r"\$\{\{.*?\}\}")
_ASSIGNMENT = lazy(r"[A-Za-z_][A-Za-z0-9_]*=")
_PYTHON = lazy(r"python(?:\d+(?:\.\d+)?)?$")
_SEPARATOR = lazy(r"\s*(?:&&|\|\||;)\s*")


@dataclasses.dataclass(frozen=True)
class CiCommand:
    """One command CI runs: ``kind`` is ``test``, ``lint`` or ``build``; ``ecosystem``
    the build files' ecosystem its tool belongs to (``python``, ``rust``, ``node``...;
    None for a tool of any, ``make`` say); ``directory`` the folder it runs in
    (``""``: the root); ``file`` the CI file that says so."""

    kind: str
    ecosystem: str | None
    command: str
    directory: str
    file: str


def commands(root: Path) -> list[CiCommand]:
    """The test, lint and build commands of the CI files at ``root``, in the order
    the files (workflows by name, then the others) and their steps say them."""
    found: list[CiCommand] = []
    skip = [word.lower() for word in strings(table(tables(), "ci").get("skip"))]
    for rel in _ci_files(root):
        if _skipped(posixpath.basename(rel), skip):
            continue
        text = read_text(root, rel)
        if text is None:
            continue
        data = _load(text, rel)
        if data is None:
            continue
        for script, directory in _scripts(rel, data, skip):
            for command, where in split(script, directory):
                kind = _classify(command)
                if kind is not None:
                    found.append(CiCommand(kind[0], kind[1], command, where, rel))
    return found


def _skipped(name: str, skip: list[str]) -> bool:
    """A workflow file or job named for building the docs or shipping a release."""
    return any(word in name.lower() for word in skip)


def _ci_files(root: Path) -> list[str]:
    workflows: list[str] = []
    try:
        with os.scandir(root / ".github" / "workflows") as it:
            for entry in it:
                if entry.name.endswith((".yml", ".yaml")) and entry.is_file(follow_symlinks=False):
                    workflows.append(entry.name)
    except OSError:
        pass
    names = [f".github/workflows/{n}" for n in sorted(workflows)[:MAX_FILES]]
    return names + [rel for rel in _FILES if (root / rel).is_file() and not (root / rel).is_symlink()]


def _load(text: str, rel: str) -> Any:
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        return yaml.load(text, Loader=loader)
    except (yaml.YAMLError, RecursionError, ValueError) as exc:
        LOG.info("cold start: skipped %s: %s", rel, exc)
        return None


class _Budget:
    def __init__(self) -> None:
        self.left = MAX_NODES

    def spend(self) -> bool:
        self.left -= 1
        return self.left >= 0


def _scripts(rel: str, data: Any, skip: list[str]) -> Iterator[tuple[str, str]]:
    """(shell script, folder it starts in) of each step or job of one CI file, but
    those of a job named for docs or a release (``skip``)."""
    if not isinstance(data, dict):
        return
    budget = _Budget()
    if rel.startswith(".github/"):
        default = _folder(table(data, "defaults", "run").get("working-directory"), "")
        for name, job in table(data, "jobs").items():
            if not isinstance(job, dict) or _skipped(str(name), skip) or not budget.spend():
                continue
            start = _folder(table(job, "defaults", "run").get("working-directory"), default)
            for step in _items(job.get("steps"), budget):
                if isinstance(step, dict) and isinstance(step.get("run"), str):
                    yield step["run"], _folder(step.get("working-directory"), start)
    elif rel == ".circleci/config.yml":
        for name, job in table(data, "jobs").items():
            if not isinstance(job, dict) or _skipped(str(name), skip) or not budget.spend():
                continue
            start = _folder(job.get("working_directory"), "")
            for step in _items(job.get("steps"), budget):
                run = step.get("run") if isinstance(step, dict) else None
                if isinstance(run, str):
                    yield run, start
                elif isinstance(run, dict) and isinstance(run.get("command"), str):
                    yield run["command"], _folder(run.get("working_directory"), start)
    elif rel == ".gitlab-ci.yml":
        for name, job in data.items():
            skipped = name in _GITLAB_GLOBAL or _skipped(str(name), skip)
            if skipped or not isinstance(job, dict) or not budget.spend():
                continue
            for line in _lines(job.get("script"), budget):
                yield line, ""
    else:  # Travis CI
        jobs = [data] + [j for j in _items(table(data, "jobs").get("include"), budget) if isinstance(j, dict)]
        jobs += [j for j in _items(table(data, "matrix").get("include"), budget) if isinstance(j, dict)]
        for job in jobs:
            for line in _lines(job.get("script"), budget):
                yield line, ""


def _items(value: Any, budget: _Budget) -> Iterator[Any]:
    if isinstance(value, list):
        for item in value:
            if not budget.spend():
                return
            yield item


def _lines(value: Any, budget: _Budget, depth: int = 0) -> Iterator[str]:
    """A GitLab or Travis ``script``: a string or a list of them (lists nested by
    ``!reference`` or anchors flattened, a few levels deep)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, list) and depth < 4:
        for item in _items(value, budget):
            yield from _lines(item, budget, depth + 1)


def _folder(value: Any, default: str) -> str:
    """A working directory (relative to the root) as a folder below the root (``""``:
    the root), or ``default`` when there is none or it is not one (absolute, an
    expression, above the root)."""
    if not isinstance(value, str) or "$" in value:
        return default
    folder = _below("", value)
    return default if folder is None else folder


def _below(base: str, path: str) -> str | None:
    path = path.strip()
    if not path or path.startswith(("/", "~")):
        return None
    joined = posixpath.normpath(posixpath.join(base, path))
    if joined == ".":
        return ""
    return None if joined.startswith("..") else joined


def split(script: str, directory: str = "") -> list[tuple[str, str]]:
    """The simple commands of a shell ``script`` with the folder each runs in:
    lines continued with ``\\`` joined, lines split at ``&&``, ``||`` and ``;``,
    comments, ``VAR=value`` prefixes and words holding an expression or a variable
    (with the option before such a word, whose value it was) dropped; a command with a
    pipe, a redirection or a substitution dropped; a ``cd DIR`` moves the commands after
    it (to no folder when ``DIR`` is not a plain one below the root: those are
    dropped)."""
    out: list[tuple[str, str]] = []
    where: str | None = directory
    for line in script.replace("\\\n", " ").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        for part in _SEPARATOR.split(_EXPRESSION.sub("$EXPR", line)):
            try:
                words = shlex.split(part, comments=True)
            except ValueError:
                continue
            while words and _ASSIGNMENT.match(words[0]):
                words.pop(0)
            if not words:
                continue
            if words[0] == "cd":
                plain = len(words) == 2 and not any(c in words[1] for c in "$`*?")
                where = _below(where, words[1]) if where is not None and plain else None
                continue
            if where is None or "$" in words[0] or any(c in part for c in "|<>`"):
                continue
            kept: list[str] = []
            for word in words:
                if "$" not in word:
                    kept.append(word)
                elif len(kept) > 1 and kept[-1].startswith("-") and "=" not in kept[-1]:
                    kept.pop()  # the option whose value was dropped
            while len(kept) > 1 and kept[-1] == "--":
                kept.pop()
            out.append((" ".join(shlex.quote(w) for w in kept), where))
    return out


def _words(command: str) -> list[str]:
    """The words a ``[ci]`` key is compared on: option words (``-B``, ``+nightly``)
    after the first dropped, ``python3.11`` read as ``python``."""
    words = shlex.split(command)
    if words and _PYTHON.match(words[0]):
        words[0] = "python"
    return words[:1] + [w for w in words[1:] if not w.startswith(("-", "+"))]


@functools.cache
def _table() -> tuple[list[tuple[list[str], list[str]]], list[list[str]]]:
    """The ``[ci]`` table's commands and wrappers, as the words they are compared on."""
    spec = table(tables(), "ci")
    keys = [(_words(key), strings(value)) for key, value in table(spec, "commands").items()]
    return keys, [_words(wrapper) for wrapper in strings(spec.get("wrappers"))]


def _classify(command: str) -> tuple[str, str | None] | None:
    """(kind, ecosystem) of the longest ``[ci.commands]`` key whose words begin the
    command's, also after a wrapper (``poetry run``, ``python -m``, ``bundle
    exec``...); None for a command none begins."""
    keys, wrappers = _table()
    words = _words(command)
    found = _known(words, keys)
    for lead in wrappers:
        if found is None and words[: len(lead)] == lead:
            found = _known(words[len(lead) :], keys)
    return found


def _known(words: list[str], keys: list[tuple[list[str], list[str]]]) -> tuple[str, str | None] | None:
    best: tuple[int, tuple[str, str | None]] | None = None
    for lead, value in keys:
        if not words or len(value) != 2 or words[: len(lead)] != lead or (best and best[0] >= len(lead)):
            continue
        best = (len(lead), (value[0], None if value[1] == "any" else value[1]))
    return best[1] if best else None
