"""The build files' readers for :mod:`aircher_mem.longterm.coldstart`: each reads one
kind of build file (bounded, inside the root, never raising) and writes what it
declares (dependencies, test runners, scripts, the commands its build tool implies)
into the :class:`Findings` of one project type. The tables that give names meaning are
in ``aircher_mem/data/coldstart.toml``."""

from __future__ import annotations

import configparser
import dataclasses
import functools
import json
import logging
import re
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from pathlib import Path, PurePosixPath
from typing import Any

from .._core import read_project_file
from ..errors import AircherError
from ..pattern import lazy
from ..root import shipped

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

__all__ = [
    "MAX_FILE_BYTES",
    "shipped_toml",
    "tables",
    "read_text",
    "read_toml",
    "read_json",
    "read_xml",
    "read_ini",
    "table",
    "strings",
    "requirement",
    "Findings",
    "python",
    "node",
    "deno",
    "rust",
    "go",
    "java",
    "scala",
    "csharp",
    "ruby",
    "php",
    "swift",
    "elixir",
    "lua",
    "native",
    "make_targets",
]

LOG = logging.getLogger("aircher_mem.longterm.coldstart")

#: The largest build file read (a larger one counts for its name only).
MAX_FILE_BYTES = 1 << 20
_NPM_NO_TEST = "no test specified"


def shipped_toml(*parts: str) -> dict[str, Any] | None:
    """A TOML file shipped under ``aircher_mem/data`` (None when there is none)."""
    path = Path(shipped(*parts))
    return tomllib.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


@functools.cache
def tables() -> dict[str, Any]:
    """``aircher_mem/data/coldstart.toml``: what build files and dependency names mean."""
    return shipped_toml("coldstart.toml") or {}


def read_text(root: Path, rel: str) -> str | None:
    try:
        data = read_project_file(root, rel, max_bytes=MAX_FILE_BYTES)
    except (AircherError, OSError) as exc:
        LOG.info("cold start: skipped %s: %s", rel, exc)
        return None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        LOG.info("cold start: skipped %s: not UTF-8 (%s)", rel, exc)
        return None


def read_toml(root: Path, rel: str) -> dict[str, Any] | None:
    text = read_text(root, rel)
    if text is None:
        return None
    try:
        return tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError, RecursionError) as exc:
        LOG.info("cold start: skipped %s: %s", rel, exc)
        return None


def read_json(root: Path, rel: str) -> dict[str, Any] | None:
    text = read_text(root, rel)
    if text is None:
        return None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError) as exc:
        LOG.info("cold start: skipped %s: %s", rel, exc)
        return None
    return value if isinstance(value, dict) else None


def read_xml(root: Path, rel: str) -> ET.Element | None:
    text = read_text(root, rel)
    if text is None:
        return None
    if re.search(r"<!\s*(DOCTYPE|ENTITY)", text, re.IGNORECASE):  # no entity expansion, ever
        LOG.info("cold start: skipped %s: a DOCTYPE or ENTITY declaration", rel)
        return None
    try:
        element = ET.fromstring(text)
    except (ET.ParseError, ValueError, RecursionError) as exc:
        LOG.info("cold start: skipped %s: %s", rel, exc)
        return None
    for e in element.iter():  # drop namespaces: {http://maven.apache.org/POM/4.0.0}artifactId
        if isinstance(e.tag, str) and "}" in e.tag:
            e.tag = e.tag.rsplit("}", 1)[1]
    return element


def read_ini(root: Path, rel: str) -> configparser.ConfigParser | None:
    text = read_text(root, rel)
    if text is None:
        return None
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text)
    except configparser.Error as exc:
        LOG.info("cold start: skipped %s: %s", rel, exc)
        return None
    return parser


def table(value: Any, *keys: str) -> dict[str, Any]:
    for key in keys:
        value = value.get(key) if isinstance(value, dict) else None
    return value if isinstance(value, dict) else {}


def strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


_PEP508 = lazy(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def requirement(text: str) -> str | None:
    if text.lstrip().startswith(("-", "#", "git+", "http:", "https:", "file:", ".")):
        return None
    m = _PEP508.match(text)
    return re.sub(r"[-_.]+", "-", m.group(1).lower()) if m else None


# ----------------------------------------------------------------------------- one type


@dataclasses.dataclass
class Findings:
    """What the build files of one type in one folder (and the folders below it) say."""

    name: str
    language: str
    build_file: str
    directory: str
    ecosystem: str
    weak: bool
    rank: int
    runtime: dict[str, str] = dataclasses.field(default_factory=dict)  # dependency -> file
    dev: dict[str, str] = dataclasses.field(default_factory=dict)
    runners: dict[str, tuple[str, str]] = dataclasses.field(default_factory=dict)  # runner -> (file, why)
    scripts: dict[str, tuple[str, str, str]] = dataclasses.field(default_factory=dict)  # kind -> (cmd, file, why)
    defaults: dict[str, tuple[str, str, str]] = dataclasses.field(default_factory=dict)  # kind -> (cmd, file, why)
    flags: set[str] = dataclasses.field(default_factory=set)
    test_script: tuple[str, str] | None = None  # (command, file) of a script named for running tests
    ci: dict[str, tuple[str, str, str]] = dataclasses.field(default_factory=dict)  # kind -> (cmd, file, why)
    frameworks_found: dict[str, tuple[str, str]] = dataclasses.field(default_factory=dict)

    def runner(self, name: str, file: str, why: str) -> None:
        self.runners.setdefault(name, (file, why))

    def script(self, kind: str, command: str, file: str, why: str) -> None:
        if command.strip():
            self.scripts.setdefault(kind, (command.strip(), file, why))

    def default(self, kind: str, command: str, file: str, why: str = "build tool") -> None:
        self.defaults.setdefault(kind, (command, file, why))

    def deps(self, names: Iterable[str | None], file: str, *, dev: bool) -> None:
        target = self.dev if dev else self.runtime
        for n in names:
            if n:
                target.setdefault(n.lower(), file)


def python(acc: Findings, root: Path, rel: str, name: str) -> None:
    if name == "pyproject.toml":
        data = read_toml(root, rel)
        if data is None:
            return
        project = table(data, "project")
        acc.deps(map(requirement, strings(project.get("dependencies"))), rel, dev=False)
        for extra in table(project, "optional-dependencies").values():
            acc.deps(map(requirement, strings(extra)), rel, dev=True)
        for group in table(data, "dependency-groups").values():
            acc.deps(map(requirement, strings(group)), rel, dev=True)
        poetry = table(data, "tool", "poetry")
        acc.deps((requirement(k) for k in table(poetry, "dependencies") if k != "python"), rel, dev=False)
        acc.deps(map(requirement, table(poetry, "dev-dependencies")), rel, dev=True)
        for group in table(poetry, "group").values():
            acc.deps(map(requirement, table(group, "dependencies")), rel, dev=True)
        tool = table(data, "tool")
        if "pytest" in tool:
            acc.runner("pytest", rel, "[tool.pytest]")
        for runner in ("tox", "nox"):
            if runner in tool:
                acc.runner(runner, rel, f"[tool.{runner}]")
        for section, command in tables()["commands"]["lint_pyproject"].items():
            if section in tool:
                acc.default("lint", command, rel, f"[tool.{section}]")
        for kind in ("test", "lint", "build"):
            for env_name, env in table(tool, "hatch", "envs").items():
                if isinstance(table(env, "scripts").get(kind), str | list):
                    prefix = "" if env_name == "default" else f"{env_name}:"
                    acc.script(kind, f"hatch run {prefix}{kind}", rel, f"[tool.hatch.envs.{env_name}.scripts]")
            if kind in table(tool, "pdm", "scripts"):
                acc.script(kind, f"pdm run {kind}", rel, "[tool.pdm.scripts]")
            if kind in table(tool, "poe", "tasks"):
                acc.script(kind, f"poe {kind}", rel, "[tool.poe.tasks]")
        backend = table(data, "build-system").get("build-backend")
        if isinstance(backend, str):
            acc.default("build", "maturin build" if backend.startswith("maturin") else "python -m build", rel)
    elif name == "setup.cfg":
        ini = read_ini(root, rel)
        if ini is None:
            return
        acc.deps(map(requirement, ini.get("options", "install_requires", fallback="").splitlines()), rel, dev=False)
        acc.deps(map(requirement, ini.get("options", "tests_require", fallback="").splitlines()), rel, dev=True)
        if ini.has_section("options.extras_require"):
            for _, value in ini.items("options.extras_require"):
                acc.deps(map(requirement, value.splitlines()), rel, dev=True)
        if ini.has_section("tool:pytest"):
            acc.runner("pytest", rel, "[tool:pytest]")
        if ini.has_section("flake8"):
            acc.default("lint", "flake8", rel, "[flake8]")
    elif name == "setup.py":
        text = read_text(root, rel) or ""
        for key, dev in (("install_requires", False), ("tests_require", True), ("extras_require", True)):
            for m in re.finditer(rf"{key}\s*=\s*([\[{{][^\]}}]*[\]}}])", text):
                acc.deps(map(requirement, re.findall(r"['\"]([^'\"]+)['\"]\s*[,\]]", m.group(1))), rel, dev=dev)
        acc.default("build", "python -m build", rel)
    elif name == "Pipfile":
        data = read_toml(root, rel) or {}
        acc.deps(map(requirement, table(data, "packages")), rel, dev=False)
        acc.deps(map(requirement, table(data, "dev-packages")), rel, dev=True)
    elif name == "tox.ini":
        acc.runner("tox", rel, "tox.ini")
        ini = read_ini(root, rel)
        if ini is None:
            return
        if ini.has_section("pytest"):
            acc.runner("pytest", rel, "[pytest]")
        commands = ini.get("testenv", "commands", fallback="")
        if re.search(r"\bpytest\b|-m pytest", commands):
            acc.runner("pytest", rel, "[testenv] commands")
        elif "unittest" in commands:
            acc.runner("unittest", rel, "[testenv] commands")
        if ini.has_section("flake8"):
            acc.default("lint", "flake8", rel, "[flake8]")
    elif name == "noxfile.py":
        acc.runner("nox", rel, "noxfile.py")
    elif name in ("pytest.ini", "conftest.py"):
        acc.runner("pytest", rel, name)
    elif name.endswith(".txt"):
        text = read_text(root, rel) or ""
        dev = bool(re.search(r"dev|test|lint|doc|ci", PurePosixPath(rel).name.lower()))
        acc.deps((requirement(line) for line in text.splitlines()), rel, dev=dev)


def node(acc: Findings, root: Path, rel: str, name: str, names: list[str]) -> None:
    if name == "tsconfig.json":
        acc.flags.add("typescript")
        return
    data = read_json(root, rel)
    if data is None:
        return
    acc.deps(table(data, "dependencies"), rel, dev=False)
    acc.deps(table(data, "peerDependencies"), rel, dev=False)
    acc.deps(table(data, "devDependencies"), rel, dev=True)
    if "typescript" in acc.runtime or "typescript" in acc.dev:
        acc.flags.add("typescript")
    if rel != acc.build_file:  # a workspace member: its scripts run from its own folder
        return
    manager = data.get("packageManager")
    pm = manager.split("@")[0] if isinstance(manager, str) and manager.split("@")[0] in ("pnpm", "yarn", "bun") else ""
    for lock, tool in (("pnpm-lock.yaml", "pnpm"), ("yarn.lock", "yarn"), ("bun.lockb", "bun"), ("bun.lock", "bun")):
        if not pm and lock in names:
            pm = tool
    pm = pm or "npm"
    scripts = table(data, "scripts")
    test = scripts.get("test")
    if isinstance(test, str) and _NPM_NO_TEST not in test:
        acc.script("test", f"{pm} test" if pm != "bun" else "bun run test", rel, "scripts.test")
        for runner in tables()["runners"]["node"].values():
            if re.search(rf"(^|[\s/&;]){re.escape(runner)}(\s|$)", test):
                acc.runner(runner, rel, "scripts.test")
        if re.search(r"\bnode\s+(--\S+\s+)*--test\b", test):
            acc.runner("node:test", rel, "scripts.test")
    for kind in ("build", "lint"):
        if isinstance(scripts.get(kind), str):
            acc.script(kind, f"{pm} run {kind}", rel, f"scripts.{kind}")


def deno(acc: Findings, root: Path, rel: str) -> None:
    data = read_json(root, rel) or {}
    imports = [v for v in table(data, "imports").values() if isinstance(v, str)]
    acc.deps((re.sub(r"(?<=.)@[^/]*$", "", v.split("@^")[0]) for v in imports), rel, dev=False)
    tasks = table(data, "tasks")
    for kind in ("test", "build", "lint"):
        if kind in tasks:
            acc.script(kind, f"deno task {kind}", rel, f"tasks.{kind}")
    acc.runner("deno test", rel, "deno.json")


def rust(acc: Findings, root: Path, rel: str) -> None:
    acc.runner("cargo test", rel, "Cargo.toml")
    acc.default("build", "cargo build", rel)
    data = read_toml(root, rel)
    if data is None:
        return
    sections = [data, *(t for t in table(data, "target").values() if isinstance(t, dict))]
    for section in sections:
        acc.deps(table(section, "dependencies"), rel, dev=False)
        acc.deps(table(section, "build-dependencies"), rel, dev=True)
        acc.deps(table(section, "dev-dependencies"), rel, dev=True)
    acc.deps(table(data, "workspace", "dependencies"), rel, dev=False)


def go(acc: Findings, root: Path, rel: str) -> None:
    acc.runner("go test", rel, PurePosixPath(rel).name)
    acc.default("build", "go build ./...", rel)
    text = read_text(root, rel) or ""
    block = "\n".join(re.findall(r"^require\s*\(([^)]*)\)", text, re.MULTILINE))
    lines = block.splitlines() + re.findall(r"^require\s+([^(\s].*)$", text, re.MULTILINE)
    acc.deps((line.split()[0] for line in lines if line.split() and "// indirect" not in line), rel, dev=False)


_GRADLE_DEP = lazy(
    r"\b(\w*(?:[Ii]mplementation|[Aa]pi|[Cc]ompileOnly|[Rr]untimeOnly|kapt|ksp|compile|testCompile))"
    r"\s*\(?\s*(?:platform\s*\(\s*)?[\"']([^\"':\s]+):([^\"':\s]+)"
)
_GRADLE_PLUGIN = lazy(
    r"\bid\s*\(?\s*[\"']([^\"']+)[\"']|\bkotlin\s*\(\s*[\"']([^\"']+)[\"']|apply plugin:\s*[\"']([^\"']+)"
)


def java(acc: Findings, root: Path, rel: str, name: str, names: list[str]) -> None:
    if name == "pom.xml":
        acc.flags.add("maven")
        acc.runner("maven surefire", rel, "pom.xml")
        pom = read_xml(root, rel)
        if pom is None:
            return
        parent = pom.find("parent")
        if parent is not None:
            acc.deps([f"{parent.findtext('groupId', '')}:{parent.findtext('artifactId', '')}"], rel, dev=False)
        for dep in pom.findall("./dependencies/dependency") + pom.findall("./profiles/profile/dependencies/dependency"):
            coordinate = f"{dep.findtext('groupId', '').strip()}:{dep.findtext('artifactId', '').strip()}"
            acc.deps([coordinate], rel, dev=dep.findtext("scope", "").strip() == "test")
        for element in pom.iter("plugin"):
            if element.findtext("artifactId", "").strip() == "kotlin-maven-plugin":
                acc.flags.add("kotlin")
    elif name.startswith("build.gradle"):
        acc.flags.add("gradle")
        acc.runner("gradle test", rel, name)
        text = read_text(root, rel) or ""
        for m in _GRADLE_DEP.finditer(text):
            acc.deps([f"{m.group(2)}:{m.group(3)}"], rel, dev=m.group(1).lower().startswith(("test", "androidtest")))
        for m in _GRADLE_PLUGIN.finditer(text):
            plugin = m.group(1) or m.group(2) or m.group(3)
            if plugin.startswith(("org.jetbrains.kotlin", "kotlin")) or m.group(2):
                acc.flags.add("kotlin")
            acc.deps([f"{plugin}:plugin"], rel, dev=False)
        if "useJUnitPlatform" in text:
            acc.runner("junit", rel, "useJUnitPlatform()")
    if "mvnw" in names:
        acc.flags.add("mvnw")
    if "gradlew" in names:
        acc.flags.add("gradlew")


def scala(acc: Findings, root: Path, rel: str, name: str) -> None:
    text = read_text(root, rel) or ""
    if name == "build.sbt":
        acc.runner("sbt test", rel, name)
        acc.default("build", "sbt compile", rel)
        for m in re.finditer(r"\"([^\"]+)\"\s*%%?%?\s*\"([^\"]+)\"\s*%\s*\"[^\"]*\"(\s*%\s*(Test|\"test\"))?", text):
            acc.deps([f"{m.group(1)}:{m.group(2)}"], rel, dev=bool(m.group(3)))
    else:
        acc.runner("mill test", rel, name)
        acc.default("build", "mill __.compile", rel)
        acc.deps((f"{g}:{a}" for g, a in re.findall(r"ivy\"([^:\"]+)::?:?([^:\"]+):", text)), rel, dev=False)


def csharp(acc: Findings, root: Path, rel: str, name: str) -> None:
    acc.default("build", "dotnet build", rel)
    if not name.endswith(".csproj"):
        return
    project = read_xml(root, rel)
    if project is None:
        return
    sdk = project.get("Sdk")
    if sdk:
        acc.deps([sdk], rel, dev=False)
    for ref in project.iter("PackageReference"):
        acc.deps([ref.get("Include") or ref.get("Update")], rel, dev=False)


def ruby(acc: Findings, root: Path, rel: str, name: str) -> None:
    if name == "Gemfile":
        acc.flags.add("bundle")
        group_indent: int | None = None
        for line in (read_text(root, rel) or "").splitlines():
            indent = len(line) - len(line.lstrip())
            if re.match(r"\s*group\b.*\bdo\b", line) and re.search(r":(test|development)\b", line):
                group_indent = indent
            elif group_indent is not None and line.strip() == "end" and indent <= group_indent:
                group_indent = None
            m = re.match(r"\s*gem\s+[\"']([^\"']+)[\"']", line)
            if m:
                acc.deps([m.group(1)], rel, dev=group_indent is not None or "group: :test" in line)
    elif name.endswith(".gemspec"):
        text = read_text(root, rel) or ""
        for kind, dep in re.findall(r"add_(runtime_|development_)?dependency\s*\(?\s*[\"']([^\"']+)", text):
            acc.deps([dep], rel, dev=kind == "development_")
    elif name == "Rakefile":
        text = read_text(root, rel) or ""
        if "RSpec::Core::RakeTask" in text:
            acc.runner("rspec", rel, "RSpec::Core::RakeTask")
        if "TestTask" in text:
            acc.default("test", "{bundle}rake test", rel, "Rake::TestTask")
    elif name == ".rspec":
        acc.runner("rspec", rel, ".rspec")


def php(acc: Findings, root: Path, rel: str, name: str) -> None:
    if name.startswith("phpunit.xml"):
        acc.runner("phpunit", rel, name)
        return
    data = read_json(root, rel) or {}
    acc.deps(table(data, "require"), rel, dev=False)
    acc.deps(table(data, "require-dev"), rel, dev=True)
    scripts = table(data, "scripts")
    for kind in ("test", "lint", "build"):
        if kind in scripts:
            acc.script(kind, f"composer {kind}", rel, f"scripts.{kind}")


def swift(acc: Findings, root: Path, rel: str) -> None:
    acc.runner("swift test", rel, "Package.swift")
    acc.default("build", "swift build", rel)
    text = read_text(root, rel) or ""
    urls = re.findall(r"\.package\s*\([^)]*?url:\s*\"([^\"]+)\"", text)
    acc.deps((re.sub(r"\.git$", "", u.rstrip("/").rsplit("/", 1)[-1]) for u in urls), rel, dev=False)


def elixir(acc: Findings, root: Path, rel: str) -> None:
    acc.runner("mix test", rel, "mix.exs")
    acc.default("build", "mix compile", rel)
    for dep, rest in re.findall(r"\{\s*:(\w+)\s*,([^}]*)\}", read_text(root, rel) or ""):
        acc.deps([dep], rel, dev=bool(re.search(r"only:\s*(:test|\[[^\]]*:test)", rest)) and ":prod" not in rest)


def lua(acc: Findings, root: Path, rel: str, name: str) -> None:
    if name == ".busted":
        acc.runner("busted", rel, ".busted")
        return
    text = read_text(root, rel) or ""
    for kind, body in re.findall(r"^(dependencies|test_dependencies)\s*=\s*\{([^}]*)\}", text, re.MULTILINE):
        acc.deps((requirement(d) for d in re.findall(r"[\"']([^\"']+)[\"']", body)), rel, dev=kind != "dependencies")
    if re.search(r"test\s*=\s*\{[^}]*type\s*=\s*[\"']busted", text):
        acc.runner("busted", rel, "test.type")


def native(acc: Findings, root: Path, rel: str, name: str) -> None:
    """CMake, Meson, Autotools and Make: the languages declared, the dependencies
    (find_package, dependency, PKG_CHECK_MODULES) and the test setup."""
    text = read_text(root, rel) or ""
    if name == "CMakeLists.txt":
        acc.default("build", tables()["commands"]["build"]["cmake"], rel)
        m = re.search(r"\bproject\s*\(\s*[\w.${}-]+([^)]*)\)", text, re.IGNORECASE)
        declared = set(re.findall(r"\b(CXX|C)\b", m.group(1))) if m else set()
        acc.flags.update({"C": "declares-c", "CXX": "declares-cpp"}[d] for d in declared)
        acc.deps(re.findall(r"find_package\s*\(\s*([\w+-]+)", text, re.IGNORECASE), rel, dev=False)
        acc.deps(re.findall(r"FetchContent_Declare\s*\(\s*([\w+-]+)", text, re.IGNORECASE), rel, dev=False)
        if re.search(
            r"\benable_testing\s*\(|\badd_test\s*\(|\bgtest_discover_tests\s*\(|\bcatch_discover_tests", text, re.I
        ):
            acc.runner("ctest", rel, "enable_testing/add_test")
    elif name == "meson.build":
        acc.default("build", tables()["commands"]["build"]["meson"], rel)
        m = re.search(r"\bproject\s*\(\s*'[^']*'\s*,\s*(\[[^\]]*\]|'[^']*')", text)
        langs = set(re.findall(r"'(c|cpp)'", m.group(1))) if m else set()
        acc.flags.update({"c": "declares-c", "cpp": "declares-cpp"}[lang] for lang in langs)
        acc.deps(re.findall(r"\bdependency\s*\(\s*'([^']+)'", text), rel, dev=False)
        if re.search(r"^\s*test\s*\(", text, re.MULTILINE):
            acc.runner("meson test", rel, "test()")
    elif name.startswith("configure"):
        acc.default("build", tables()["commands"]["build"]["autotools"], rel)
        if "AC_PROG_CXX" in text:
            acc.flags.add("declares-cpp")
        if re.search(r"AC_PROG_CC\b", text):
            acc.flags.add("declares-c")
        for body in re.findall(r"PKG_CHECK_MODULES\s*\(\s*\[?\w+\]?\s*,\s*\[?([^\],)]+)", text):
            acc.deps((d for d in body.split() if re.match(r"[A-Za-z]", d)), rel, dev=False)
        if "AM_INIT_AUTOMAKE" in text:
            acc.runner("make check", rel, "AM_INIT_AUTOMAKE")


_MAKE_TARGET = lazy(r"^([A-Za-z0-9][\w.-]*)\s*:(?![:=])", re.MULTILINE)


def make_targets(root: Path, rel: str) -> set[str]:
    return set(_MAKE_TARGET.findall(read_text(root, rel) or ""))
