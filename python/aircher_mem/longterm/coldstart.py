"""Cold start: what a project is, read from its build files, and the L0 facts that say
so before the agent has done anything.

:func:`detect` looks at the root and at most two levels of folders below it (not in
dependency, build or documentation folders) for the build files of every language
the code graph parses (and a few more), and reads what they declare: the project
types (a type per folder, a folder's type covering those below it), the frameworks
among the runtime dependencies, the test runners among all dependencies and
configuration sections, and the commands that test, build and lint it (scripts of
the build file first, then Makefile targets, then the commands the CI files at the
root run, :mod:`.ci`, then what the runner or the build tool implies). What the build
files mean is in ``aircher_mem/data/coldstart.toml``.

:func:`template_facts` turns a profile into facts from the templates in
``aircher_mem/data/templates/<type>.toml``; a template's fact is only made when the
profile has every value it names, so no fact says more than a build file did.

Every file is read through :func:`aircher_mem._core.read_project_file` (inside the
root, no symlink followed, regular files only, at most :data:`MAX_FILE_BYTES`); a file
that cannot be read or parsed is skipped with a log record, and a folder is listed
only while fewer than :data:`MAX_ENTRIES` entries have been seen.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import functools
import itertools
import logging
import os
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path, PurePosixPath
from typing import Any

from ..errors import InvalidInputError
from . import buildfiles as bf
from . import ci
from .buildfiles import MAX_FILE_BYTES, Findings, strings, table, tables

__all__ = [
    "MAX_FILE_BYTES",
    "MAX_ENTRIES",
    "BUILD_DEPTH",
    "Evidence",
    "ProjectType",
    "ProjectProfile",
    "TemplateFact",
    "detect",
    "template_facts",
]

LOG = logging.getLogger(__name__)

#: How many folder entries are looked at in all (build files and the source sample).
MAX_ENTRIES = 6000
#: How deep below the root build files are looked for (the root is depth 0).
BUILD_DEPTH = 2
_SOURCE_DEPTH = 6  # how deep the sample of source files that decides languages goes
_MAX_BUILD_FILES = 96
# never descended into: dependencies, build output, caches, version control
_SKIP = frozenset(
    "node_modules .git .hg .svn vendor target build dist out bin obj .venv venv env .env .tox .nox "
    "__pycache__ .mypy_cache .pytest_cache .ruff_cache .gradle .idea .vscode .next .nuxt coverage "
    "_build deps Pods .build .cache site-packages bower_components".split()
)
# looked at for sources, but their build files are examples or tooling, not the project
# nor counted in the sample of sources: test data, examples, documentation, vendored code
_NOT_SOURCE = frozenset(
    "fixtures fixture testdata test-data examples example samples sample docs doc third_party thirdparty "
    "external extern".split()
)
_NOT_PROJECT = frozenset(
    "docs doc examples example samples sample fixtures testdata test tests spec benches benchmarks "
    "third_party thirdparty external extern contrib scripts tools misc".split()
)
# the template fields a type may lack (a fact naming one it lacks is not made)
_OPTIONAL = frozenset({"frameworks", "test_runners", "test", "build", "lint"})


@dataclasses.dataclass(frozen=True)
class Evidence:
    """One thing a file said: ``says`` is e.g. ``"type python"``, ``"framework FastAPI
    (dependency fastapi)"`` or ``"command test: pytest"``."""

    file: str
    says: str


@dataclasses.dataclass(frozen=True)
class ProjectType:
    """A project type found in one folder: ``name`` names its template (``python``,
    ``node``, ``rust``, ...), ``language`` is the code graph's name of its language,
    ``build_file`` the file that said so (relative to the root, ``/``-separated),
    ``directory`` its folder (``""`` for the root). ``commands`` run from that folder."""

    name: str
    language: str
    build_file: str
    directory: str
    frameworks: tuple[str, ...]
    test_runners: tuple[str, ...]
    commands: dict[str, str]


@dataclasses.dataclass(frozen=True)
class ProjectProfile:
    """What :func:`detect` found. ``types`` primary first; ``frameworks`` and
    ``test_runners`` over all types, in that order; ``commands`` maps ``test``,
    ``build`` and ``lint`` to a command run from the root (a type's command in a
    subfolder starts with ``cd <folder> && ``)."""

    types: tuple[ProjectType, ...]
    frameworks: tuple[str, ...]
    test_runners: tuple[str, ...]
    commands: dict[str, str]
    evidence: tuple[Evidence, ...]


@dataclasses.dataclass(frozen=True)
class TemplateFact:
    """A fact seeded by a template: ``level`` is ``"L0"`` (project-wide), ``domain``
    the type's folder for a type below the root, ``source`` the file it rests on."""

    content: str
    level: str
    domain: str | None
    tags: tuple[str, ...]
    source: str


@functools.cache
def _template(name: str) -> list[dict[str, Any]]:
    facts = (bf.shipped_toml("templates", f"{name}.toml") or {}).get("facts", [])
    return [f for f in facts if isinstance(f, dict)]


# ----------------------------------------------------------------------------- the scan


@dataclasses.dataclass
class _Scan:
    files: dict[str, list[str]]  # folder (depth <= BUILD_DEPTH, project folders) -> file names
    listed: dict[str, list[str]]  # the same for every folder of depth <= BUILD_DEPTH
    sources: dict[str, Counter[str]]  # folder -> extensions of the files in it (sample)


def _scan(root: Path) -> _Scan:
    scan = _Scan({}, {}, {})
    seen = 0
    queue: list[tuple[str, int, bool, bool]] = [("", 0, True, True)]
    while queue and seen < MAX_ENTRIES:
        rel, depth, project, source = queue.pop(0)
        try:
            with os.scandir(root / rel if rel else root) as it:  # a huge folder is not read to its end
                entries = sorted(itertools.islice(it, MAX_ENTRIES - seen), key=lambda e: e.name)
        except OSError as exc:
            LOG.info("cold start: cannot list %s: %s", rel or ".", exc)
            continue
        names: list[str] = []
        dirs: list[str] = []
        counts: Counter[str] = Counter()
        for entry in entries:
            seen += 1
            try:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name not in _SKIP and not entry.name.startswith("."):
                        dirs.append(entry.name)
                elif entry.is_file(follow_symlinks=False) or entry.is_symlink():  # a symlink is named, never read
                    names.append(entry.name)
                    counts[os.path.splitext(entry.name)[1].lower()] += 1
            except OSError:
                continue
        if source:
            scan.sources[rel] = counts
        if depth <= BUILD_DEPTH:
            scan.listed[rel] = names
        if depth <= BUILD_DEPTH and project:
            scan.files[rel] = names
        for d in dirs:
            child = f"{rel}/{d}" if rel else d
            if depth + 1 <= _SOURCE_DEPTH:
                name = d.lower()
                queue.append(
                    (child, depth + 1, project and name not in _NOT_PROJECT, source and name not in _NOT_SOURCE)
                )
    return scan


def _count(scan: _Scan, folder: str, extensions: Iterable[str]) -> int:
    exts = set(extensions)
    prefix = f"{folder}/" if folder else ""
    return sum(
        n
        for d, counts in scan.sources.items()
        if d == folder or d.startswith(prefix)
        for e, n in counts.items()
        if e in exts
    )


# ----------------------------------------------------------------------------- detect


def _type_files(spec: Mapping[str, Any]) -> tuple[list[str], list[str], list[str], list[str]]:
    return (
        strings(spec.get("files")),
        strings(spec.get("globs")),
        strings(spec.get("weak")),
        strings(spec.get("weak_globs")),
    )


def _match(rel: str, key: str) -> bool:
    return rel == key or (key.endswith("*") and rel.startswith(key[:-1]))


def _norm(name: str, ecosystem: str) -> str:
    return re.sub(r"[-_.]+", "-", name) if ecosystem == "python" else name.lower()


def _frameworks(acc: Findings) -> None:
    ecosystem = acc.ecosystem
    frameworks = {_norm(k, ecosystem): v for k, v in table(tables(), "frameworks", ecosystem).items()}
    runners = {_norm(k, ecosystem): v for k, v in table(tables(), "runners", ecosystem).items()}
    for dep, file in acc.runtime.items():
        dep_name = _norm(dep, ecosystem)
        for key, framework in frameworks.items():
            if _match(dep_name, key) or (ecosystem == "go" and _match(re.sub(r"/v\d+$", "", dep_name), key)):
                acc.frameworks_found.setdefault(framework, (file, dep))
                break
    for deps in (acc.runtime, acc.dev):
        for dep, file in deps.items():
            for key, runner in runners.items():
                if _match(_norm(dep, ecosystem), key):
                    acc.runner(runner, file, f"dependency {dep}")
                    break


def _commands(acc: Findings, makes: dict[str, tuple[str, set[str]]]) -> dict[str, tuple[str, str, str]]:
    """kind -> (command, file, why): the build file's scripts, then Makefile targets,
    then a script named for running tests, then the first command of the kind a CI
    step runs in the folder, then the first runner with a command, then what the build
    tool implies."""
    known = tables()["commands"]
    found: dict[str, tuple[str, str, str]] = dict(acc.scripts)
    make = makes.get(acc.directory)
    if make:
        for kind, targets in (("test", ("test", "check")), ("lint", ("lint",)), ("build", ("build", "all"))):
            target = next((t for t in targets if t in make[1]), None)
            if target and kind not in found:
                found[kind] = (f"make {target}" if target != "all" else "make", make[0], f"target {target}")
    if "test" not in found and acc.test_script:
        found["test"] = (acc.test_script[0], acc.test_script[1], "test script")
    for kind, step in acc.ci.items():
        found.setdefault(kind, step)
    order = list(table(tables(), "runners", acc.ecosystem).values()) + list(known["runners"])
    ranked = sorted(acc.runners, key=lambda r: order.index(r) if r in order else len(order))
    for runner in ranked:
        if "test" not in found and runner in known["runners"]:
            found["test"] = (known["runners"][runner], acc.runners[runner][0], f"runner {runner}")
    for kind, (command, file, why) in acc.defaults.items():
        found.setdefault(kind, (command, file, why))
    if "maven" in acc.flags:
        found.setdefault("build", (known["build"]["maven"], acc.build_file, "build tool"))
    if "gradle" in acc.flags:
        found.setdefault("build", (known["build"]["gradle"], acc.build_file, "build tool"))
    if acc.name == "csharp" and acc.runners:
        found.setdefault("test", ("dotnet test", acc.runners[ranked[0]][0], f"runner {ranked[0]}"))
    words = {
        "{mvn}": "./mvnw" if "mvnw" in acc.flags else "mvn",
        "{gradle}": "./gradlew" if "gradlew" in acc.flags else "gradle",
        "{bundle}": "bundle exec " if "bundle" in acc.flags else "",
    }
    out = {}
    for kind, (command, file, why) in found.items():
        for word, value in words.items():
            command = command.replace(word, value)
        out[kind] = (command, file, why)
    return out


def detect(root: str | os.PathLike[str]) -> ProjectProfile:
    """The project types, frameworks, test runners and commands the build files in
    ``root`` (and up to :data:`BUILD_DEPTH` folders below) declare.

    :raises InvalidInputError: ``root`` is not a folder.
    """
    base = Path(root)
    if not base.is_dir():
        raise InvalidInputError(f"cold start: {root} is not a folder")
    known = tables()
    scan = _scan(base)
    accs: dict[tuple[str, str], Findings] = {}  # (folder, type) -> what its files say
    makes: dict[str, tuple[str, set[str]]] = {}
    lint_files = table(known, "commands", "lint_files")
    read = 0
    for folder in sorted(scan.files, key=lambda f: (f.count("/") + (f != ""), f)):
        names = scan.files[folder]
        for rank, (type_name, spec) in enumerate(known["types"].items()):
            files, globs, weak, weak_globs = _type_files(spec)
            strong_hits = [n for n in files if n in names] + sorted(
                n for n in names for g in globs if fnmatch.fnmatchcase(n, g)
            )
            weak_hits = [n for n in weak if n in names] + sorted(
                {n for g in weak_globs for n in _glob(scan, folder, g)}
            )
            if not strong_hits and not weak_hits:
                continue
            extensions = spec["extensions"] + (known["types"]["cpp"]["extensions"] if type_name == "c" else [])
            ext_count = _count(scan, folder, extensions)
            if not strong_hits and ext_count == 0:
                continue
            owner = next((k for k in accs if k[1] == type_name and _below(folder, k[0])), None)
            hits = strong_hits + weak_hits
            if owner is None:
                first = hits[0]
                acc = Findings(
                    type_name,
                    spec["language"],
                    f"{folder}/{first}" if folder else first,
                    folder,
                    "java" if type_name in ("java", "kotlin") else "c" if type_name == "cpp" else type_name,
                    not strong_hits,
                    rank,
                )
                accs[(folder, type_name)] = acc
            else:
                acc = accs[owner]
            for name in hits:
                if read >= _MAX_BUILD_FILES:
                    break
                read += 1
                _parse(acc, base, f"{folder}/{name}" if folder else name, PurePosixPath(name).name, names)
        for make in ("GNUmakefile", "Makefile", "makefile"):
            if make in names and folder not in makes:
                rel = f"{folder}/{make}" if folder else make
                makes[folder] = (rel, bf.make_targets(base, rel))
        if folder not in makes and "configure.ac" in names:  # Automake makes a check target, whatever the language
            rel = f"{folder}/configure.ac" if folder else "configure.ac"
            if "AM_INIT_AUTOMAKE" in (bf.read_text(base, rel) or ""):
                makes[folder] = (rel, {"check"})
        for acc in accs.values():
            if acc.directory != folder:
                continue
            for file_name, command in table(lint_files, acc.name).items():
                if file_name in names:
                    acc.default("lint", command, f"{folder}/{file_name}" if folder else file_name, "configuration")
            for script, command in table(known, "commands", "test_scripts").items():
                sub, _, leaf = script.rpartition("/")
                if leaf in scan.listed.get(f"{folder}/{sub}".strip("/"), []):
                    rel = f"{folder}/{script}" if folder else script
                    acc.test_script = acc.test_script or (command, rel)
    for folder, names in scan.listed.items():  # a Python project's pytest without a section for it
        for acc in accs.values():
            if acc.name == "python" and _below(folder, acc.directory):
                for name in ("pytest.ini", "conftest.py"):
                    if name in names:
                        acc.runner("pytest", f"{folder}/{name}" if folder else name, name)
    accs = _languages(accs, scan)
    _bash(accs, scan)
    _ci_steps(accs, base)
    return _profile(accs, scan, makes)


def _glob(scan: _Scan, folder: str, pattern: str) -> list[str]:
    if "/" in pattern:
        sub, leaf = pattern.split("/", 1)
        child = f"{folder}/{sub}" if folder else sub
        return [f"{sub}/{n}" for n in scan.listed.get(child, []) if fnmatch.fnmatchcase(n, leaf)]
    return [n for n in scan.files.get(folder, []) if fnmatch.fnmatchcase(n, pattern)]


def _below(folder: str, ancestor: str) -> bool:
    return ancestor == "" or folder == ancestor or folder.startswith(ancestor + "/")


def _parse(acc: Findings, root: Path, rel: str, name: str, names: list[str]) -> None:
    kind = acc.name
    if kind == "python":
        bf.python(acc, root, rel, name)
    elif kind == "node":
        bf.node(acc, root, rel, name, names)
    elif kind == "deno":
        bf.deno(acc, root, rel)
    elif kind == "rust":
        bf.rust(acc, root, rel)
    elif kind == "go":
        bf.go(acc, root, rel)
    elif kind == "java":
        bf.java(acc, root, rel, name, names)
    elif kind == "scala":
        bf.scala(acc, root, rel, name)
    elif kind == "csharp":
        bf.csharp(acc, root, rel, name)
    elif kind == "ruby":
        bf.ruby(acc, root, rel, name)
    elif kind == "php":
        bf.php(acc, root, rel, name)
    elif kind == "swift":
        bf.swift(acc, root, rel)
    elif kind == "elixir":
        bf.elixir(acc, root, rel)
    elif kind == "lua":
        bf.lua(acc, root, rel, name)
    elif kind == "c" and name not in ("Makefile", "GNUmakefile", "makefile"):
        bf.native(acc, root, rel, name)
    elif kind == "bash" and name.endswith(".bats"):
        acc.runner("bats", rel, name)


def _languages(accs: dict[tuple[str, str], Findings], scan: _Scan) -> dict[tuple[str, str], Findings]:
    """Settle what the build file alone does not: TypeScript or JavaScript, Java or
    Kotlin, C or C++ (or neither: a Makefile with no C sources is a task runner)."""
    types = tables()["types"]
    out: dict[tuple[str, str], Findings] = {}
    for key, acc in accs.items():
        if acc.name == "node" and "typescript" in acc.flags:
            acc.language = "TypeScript"
        elif acc.name == "java":
            kotlin = _count(scan, acc.directory, types["kotlin"]["extensions"])
            if "kotlin" in acc.flags or kotlin > _count(scan, acc.directory, types["java"]["extensions"]):
                acc.name, acc.language = "kotlin", "Kotlin"
        elif acc.name == "c":
            c = _count(scan, acc.directory, [".c"])
            cpp = _count(scan, acc.directory, types["cpp"]["extensions"])
            declared = {f for f in acc.flags if f.startswith("declares-")}
            if declared == {"declares-cpp"} or (len(declared) != 1 and cpp > c):
                acc.name, acc.language = "cpp", "C++"
            elif not declared and c == 0 and cpp == 0 and not _count(scan, acc.directory, [".h"]):
                continue
        out[key] = acc
    return out


def _bash(accs: dict[tuple[str, str], Findings], scan: _Scan) -> None:
    """A shell project has no build file: bats tests make one, and so does a root
    whose sampled sources are mostly shell scripts when no other type was found."""
    if ("", "bash") in accs or accs:
        return
    extensions = tables()["types"]["bash"]["extensions"]
    shell = _count(scan, "", extensions)
    others = sum(
        _count(scan, "", spec.get("extensions", [])) for name, spec in tables()["types"].items() if name != "bash"
    )
    if shell and shell > others:
        first = next(
            (f"{d}/{n}" if d else n for d in sorted(scan.files) for n in scan.files[d] if n.endswith((".sh", ".bash"))),
            None,
        )
        if first:
            accs[("", "bash")] = Findings("bash", "Bash", first, "", "bash", True, len(tables()["types"]))


def _ci_steps(accs: dict[tuple[str, str], Findings], root: Path) -> None:
    """Each CI command to the type of the folder it runs in whose ecosystem its tool
    belongs to (any for ``make``, ``pre-commit``): the first of each kind per type."""
    for step in ci.commands(root):
        owners = [
            acc for acc in accs.values() if acc.directory == step.directory and step.ecosystem in (None, acc.ecosystem)
        ]
        if owners:
            owner = min(owners, key=lambda acc: (acc.weak, acc.rank))
            owner.ci.setdefault(step.kind, (step.command, step.file, "CI step"))


def _profile(
    accs: dict[tuple[str, str], Findings], scan: _Scan, makes: dict[str, tuple[str, set[str]]]
) -> ProjectProfile:
    types_table = tables()["types"]

    def order(acc: Findings) -> tuple[int, bool, bool, int, int]:
        # C or C++ beside another type's build file is most often its native extension
        # (a Python C extension, a Lua rock, a Node addon): the other type comes first
        depth = acc.directory.count("/") + (acc.directory != "")
        count = _count(scan, acc.directory, types_table[acc.name]["extensions"])
        return (depth, acc.weak, acc.name in ("c", "cpp"), -count, acc.rank)

    evidence: list[Evidence] = []
    types: list[ProjectType] = []
    for acc in sorted(accs.values(), key=order):
        _frameworks(acc)
        found = _commands(acc, makes)
        evidence.append(Evidence(acc.build_file, f"type {acc.name} ({acc.language})"))
        for framework, (file, dep) in acc.frameworks_found.items():
            evidence.append(Evidence(file, f"framework {framework} (dependency {dep})"))
        for runner, (file, why) in acc.runners.items():
            evidence.append(Evidence(file, f"test runner {runner} ({why})"))
        for kind, (command, file, why) in sorted(found.items()):
            evidence.append(Evidence(file, f"command {kind}: {command} ({why})"))
        types.append(
            ProjectType(
                acc.name,
                acc.language,
                acc.build_file,
                acc.directory,
                tuple(acc.frameworks_found),
                tuple(acc.runners),
                {kind: c[0] for kind, c in found.items()},
            )
        )
    commands: dict[str, str] = {}
    for t in types:
        for kind in ("test", "build", "lint"):
            if kind in t.commands and kind not in commands:
                commands[kind] = t.commands[kind] if not t.directory else f"cd {t.directory} && {t.commands[kind]}"
    return ProjectProfile(
        tuple(types),
        tuple(dict.fromkeys(f for t in types for f in t.frameworks)),
        tuple(dict.fromkeys(r for t in types for r in t.test_runners)),
        commands,
        tuple(evidence),
    )


# ----------------------------------------------------------------------------- templates


def template_facts(profile: ProjectProfile) -> list[TemplateFact]:
    """The L0 facts the templates of the profile's types make: a template's fact is
    kept only when the type has every value its text names (``{frameworks}``,
    ``{test_runners}``, ``{test}``, ``{build}``, ``{lint}``; ``{language}``,
    ``{build_file}`` and ``{where}`` always have one) and none its ``unless`` names,
    and each text only once."""
    facts: list[TemplateFact] = []
    seen: set[str] = set()
    said: list[list[Evidence]] = []  # the evidence of each type: from its "type" record on
    for e in profile.evidence:
        if e.says.startswith("type ") or not said:
            said.append([])
        said[-1].append(e)
    for t, evidence in zip(profile.types, said):
        values = {
            "language": t.language,
            "build_file": t.build_file,
            "where": f" in {t.directory}/" if t.directory else "",
            "frameworks": ", ".join(t.frameworks),
            "test_runners": ", ".join(t.test_runners),
            **t.commands,
        }
        for spec in _template(t.name):
            text = spec.get("text")
            if not isinstance(text, str):
                continue
            fields = re.findall(r"\{(\w+)\}", text)
            if any(f not in values or (f in _OPTIONAL and not values[f]) for f in fields) or any(
                values.get(f) for f in strings(spec.get("unless"))
            ):
                continue
            content = text.format_map(values)
            if content in seen:
                continue
            seen.add(content)
            kind = next((f"command {f}:" for f in fields if f in ("test", "build", "lint")), None)
            kind = kind or ("framework " if "frameworks" in fields else "type ")
            source = next((e.file for e in evidence if e.says.startswith(kind)), t.build_file)
            tags = ("cold-start", t.name, *strings(spec.get("tags")))
            facts.append(TemplateFact(content, "L0", t.directory or None, tags, source))
    return facts
