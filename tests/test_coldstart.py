"""Cold start: project detection from build files and the template facts it seeds."""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path

import pytest
from aircher_mem.errors import InvalidInputError
from aircher_mem.longterm import coldstart
from aircher_mem.longterm.coldstart import Evidence, ProjectProfile, ProjectType, TemplateFact, detect, template_facts
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st


def write(root: Path, files: dict[str, str | bytes]) -> Path:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return root


def one(profile: ProjectProfile) -> ProjectType:
    assert len(profile.types) == 1, profile.types
    return profile.types[0]


FASTAPI = {
    "pyproject.toml": """
[build-system]
requires = ["hatchling"]
build-backend = "hatchling.build"

[project]
name = "svc"
dependencies = ["fastapi>=0.110", "uvicorn[standard]", "SQLAlchemy>=2"]

[project.optional-dependencies]
dev = ["pytest>=8", "httpx"]

[tool.pytest.ini_options]
addopts = "-q"

[tool.ruff]
line-length = 100
""",
    "src/svc/main.py": "app = None\n",
    "tests/test_main.py": "def test(): pass\n",
}


def test_a_python_project_with_fastapi(tmp_path: Path) -> None:
    profile = detect(write(tmp_path, FASTAPI))
    assert profile == ProjectProfile(
        types=(
            ProjectType(
                "python",
                "Python",
                "pyproject.toml",
                "",
                ("FastAPI",),
                ("pytest",),
                {"test": "pytest", "lint": "ruff check .", "build": "python -m build"},
            ),
        ),
        frameworks=("FastAPI",),
        test_runners=("pytest",),
        commands={"test": "pytest", "build": "python -m build", "lint": "ruff check ."},
        evidence=(
            Evidence("pyproject.toml", "type python (Python)"),
            Evidence("pyproject.toml", "framework FastAPI (dependency fastapi)"),
            Evidence("pyproject.toml", "test runner pytest ([tool.pytest])"),
            Evidence("pyproject.toml", "command build: python -m build (build tool)"),
            Evidence("pyproject.toml", "command lint: ruff check . ([tool.ruff])"),
            Evidence("pyproject.toml", "command test: pytest (runner pytest)"),
        ),
    )


def test_template_facts_say_only_what_the_files_said(tmp_path: Path) -> None:
    facts = template_facts(detect(write(tmp_path, FASTAPI)))
    tags = ("cold-start", "python")
    assert facts == [
        TemplateFact("Python project using FastAPI (pyproject.toml)", "L0", None, (*tags, "stack"), "pyproject.toml"),
        TemplateFact(
            "Python tests run with pytest: `pytest`", "L0", None, (*tags, "testing", "command"), "pyproject.toml"
        ),
        TemplateFact("Python build: `python -m build`", "L0", None, (*tags, "build", "command"), "pyproject.toml"),
        TemplateFact("Python lint: `ruff check .`", "L0", None, (*tags, "lint", "command"), "pyproject.toml"),
    ]
    # a bare Go workspace: what the go tool implies, no framework
    bare = write(tmp_path / "bare", {"go.work": "go 1.22\n", "main.go": "package main\n"})
    assert [f.content for f in template_facts(detect(bare))] == [
        "Go module (go.work)",
        "Go tests run with go test: `go test ./...`",
        "Go build: `go build ./...`",
    ]


def test_setup_py_requirements_and_tox(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "setup.py": "from setuptools import setup\nsetup(name='x', install_requires=['Django>=4.2', 'requests'],\n"
            "      tests_require=['pytest'])\n",
            "requirements.txt": "# pinned\nflask==3.0\n-r other.txt\ngit+https://example.invalid/x.git\n",
            "tox.ini": "[tox]\nenvlist = py311\n[testenv]\ncommands = pytest {posargs}\n[flake8]\nmax-line-length = 99\n",
            "x/__init__.py": "",
        },
    )
    t = one(detect(tmp_path))
    assert (t.build_file, t.frameworks, t.test_runners) == ("setup.py", ("Django", "Flask"), ("tox", "pytest"))
    assert t.commands == {"test": "pytest", "lint": "flake8", "build": "python -m build"}


def test_a_makefile_target_beats_the_runner_and_makes_no_c_project(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "setup.cfg": "[options]\ninstall_requires =\n    click>=8\n[tool:pytest]\ntestpaths = tests\n",
            "Makefile": "test:\n\tpytest -x\nlint: fmt\n\truff check .\nVAR := 1\n",
            "pkg/cli.py": "",
        },
    )
    profile = detect(tmp_path)
    assert [t.name for t in profile.types] == ["python"]
    assert profile.frameworks == ("Click",)
    assert profile.commands == {"test": "make test", "lint": "make lint"}
    # pytest found by a conftest.py in tests/ alone
    tests = write(tmp_path / "t", {"requirements.txt": "attrs\n", "tests/conftest.py": "", "m.py": ""})
    assert (one(detect(tests)).test_runners, detect(tests).commands) == (("pytest",), {"test": "pytest"})
    assert Evidence("Makefile", "command test: make test (target test)") in profile.evidence


NODE = {
    "package.json": """{
  "name": "web", "packageManager": "yarn@4.1.0",
  "dependencies": {"next": "14.0.0", "react": "18.2.0", "lodash": "4"},
  "devDependencies": {"jest": "29", "typescript": "5", "eslint": "8"},
  "scripts": {"test": "jest --ci", "build": "next build", "lint": "next lint", "dev": "next dev"}
}""",
    "tsconfig.json": "{}",
    "src/index.tsx": "export {}\n",
}


def test_a_node_project_in_typescript(tmp_path: Path) -> None:
    t = one(detect(write(tmp_path, NODE)))
    assert t == ProjectType(
        "node",
        "TypeScript",
        "package.json",
        "",
        ("Next.js", "React"),
        ("jest",),
        {"test": "yarn test", "build": "yarn run build", "lint": "yarn run lint"},
    )


def test_npm_default_test_script_is_no_test_command(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "package.json": '{"dependencies": {"express": "4"}, "devDependencies": {"mocha": "10"},'
            ' "scripts": {"test": "echo \\"Error: no test specified\\" && exit 1"}}',
            "pnpm-lock.yaml": "",
            "index.js": "",
        },
    )
    t = one(detect(tmp_path))
    assert (t.language, t.frameworks, t.test_runners, t.commands) == (
        "JavaScript",
        ("Express",),
        ("mocha",),
        {"test": "npx mocha"},
    )


def test_rust_go_and_deno(tmp_path: Path) -> None:
    rust = write(
        tmp_path / "rust",
        {
            "Cargo.toml": '[package]\nname = "svc"\n[dependencies]\naxum = "0.7"\ntokio = { version = "1", features = ["full"] }\n'
            '[dev-dependencies]\nrocket = "0.5"\n[target.\'cfg(unix)\'.dependencies]\nwarp = "0.3"\n',
            "clippy.toml": "",
            "src/main.rs": "fn main() {}\n",
        },
    )
    t = one(detect(rust))
    assert (t.frameworks, t.test_runners) == (("axum", "Tokio", "warp"), ("cargo test",))
    assert t.commands == {"test": "cargo test", "lint": "cargo clippy", "build": "cargo build"}
    go = write(
        tmp_path / "go",
        {
            "go.mod": "module example.com/svc\n\ngo 1.22\n\nrequire github.com/spf13/cobra v1.8.0\n"
            "require (\n\tgithub.com/gin-gonic/gin v1.9.1\n\tgithub.com/labstack/echo/v4 v4.11.0 // indirect\n)\n",
            ".golangci.yml": "",
            "main.go": "package main\n",
        },
    )
    t = one(detect(go))
    assert (t.frameworks, t.commands) == (
        ("Gin", "Cobra"),
        {"test": "go test ./...", "lint": "golangci-lint run", "build": "go build ./..."},
    )
    deno = write(
        tmp_path / "deno",
        {"deno.json": '{"imports": {"@oak/oak": "jsr:@oak/oak@^17.1.0"}, "tasks": {"test": "deno test -A"}}'},
    )
    t = one(detect(deno))
    assert (t.language, t.frameworks, t.test_runners, t.commands) == (
        "TypeScript",
        ("Oak",),
        ("deno test",),
        {"test": "deno task test"},
    )


POM = """<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <parent><groupId>org.springframework.boot</groupId><artifactId>spring-boot-starter-parent</artifactId></parent>
  <artifactId>svc</artifactId>
  <dependencies>
    <dependency><groupId>org.springframework.boot</groupId><artifactId>spring-boot-starter-web</artifactId></dependency>
    <dependency><groupId>org.junit.jupiter</groupId><artifactId>junit-jupiter</artifactId><scope>test</scope></dependency>
  </dependencies>
</project>
"""


def test_maven_gradle_kotlin_and_sbt(tmp_path: Path) -> None:
    maven = write(tmp_path / "maven", {"pom.xml": POM, "mvnw": "", "src/main/java/a/App.java": ""})
    t = one(detect(maven))
    assert (t.name, t.language, t.frameworks, t.test_runners, t.commands) == (
        "java",
        "Java",
        ("Spring Boot",),
        ("maven surefire", "junit"),
        {"test": "./mvnw test", "build": "./mvnw package"},
    )
    gradle = write(
        tmp_path / "gradle",
        {
            "build.gradle.kts": 'plugins {\n    kotlin("jvm") version "1.9.0"\n}\ndependencies {\n'
            '    implementation("io.ktor:ktor-server-core:2.3.0")\n    testImplementation("io.kotest:kotest-runner-junit5:5.8.0")\n}\n'
            "tasks.test { useJUnitPlatform() }\n",
            "gradlew": "",
            "src/main/kotlin/App.kt": "",
        },
    )
    t = one(detect(gradle))
    assert (t.name, t.language, t.frameworks, t.test_runners, t.commands) == (
        "kotlin",
        "Kotlin",
        ("Ktor",),
        ("gradle test", "junit", "kotest"),
        {"test": "./gradlew test", "build": "./gradlew build"},
    )
    sbt = write(
        tmp_path / "sbt",
        {
            "build.sbt": 'libraryDependencies += "org.http4s" %% "http4s-dsl" % "0.23.0"\n'
            'libraryDependencies += "org.scalameta" %% "munit" % "1.0.0" % Test\n',
            "src/main/scala/A.scala": "",
        },
    )
    t = one(detect(sbt))
    assert (t.name, t.frameworks, t.test_runners, t.commands) == (
        "scala",
        ("http4s",),
        ("sbt test", "munit"),
        {"test": "sbt test", "build": "sbt compile"},
    )


def test_csharp_solution_with_a_test_project(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "Shop.sln": "Microsoft Visual Studio Solution File\n",
            "Shop.Api/Shop.Api.csproj": '<Project Sdk="Microsoft.NET.Sdk.Web"><ItemGroup>'
            '<PackageReference Include="Microsoft.EntityFrameworkCore" Version="8.0.0" /></ItemGroup></Project>',
            "Shop.Tests/Shop.Tests.csproj": '<Project Sdk="Microsoft.NET.Sdk"><ItemGroup>'
            '<PackageReference Include="xunit" Version="2.6.0" /></ItemGroup></Project>',
            "Shop.Api/Program.cs": "",
        },
    )
    t = one(detect(tmp_path))
    assert (t.build_file, t.frameworks, t.test_runners, t.commands) == (
        "Shop.sln",
        ("ASP.NET Core", "Entity Framework Core"),
        ("xunit",),
        {"build": "dotnet build", "test": "dotnet test"},
    )


def test_ruby_php_swift_elixir_lua(tmp_path: Path) -> None:
    ruby = write(
        tmp_path / "ruby",
        {
            "Gemfile": "source 'https://rubygems.org'\ngem 'rails', '~> 7.1'\ngroup :development, :test do\n"
            "  gem 'rspec-rails'\n  gem 'rspec'\nend\ngem 'puma'\n",
            ".rspec": "--require spec_helper\n",
            ".rubocop.yml": "",
            "app/models/user.rb": "",
        },
    )
    t = one(detect(ruby))
    assert (t.frameworks, t.test_runners, t.commands) == (
        ("Rails",),
        ("rspec",),
        {"test": "bundle exec rspec", "lint": "bundle exec rubocop"},
    )
    php = write(
        tmp_path / "php",
        {
            "composer.json": '{"require": {"laravel/framework": "^11.0"}, "require-dev": {"phpunit/phpunit": "^10"},'
            ' "scripts": {"test": "phpunit"}}',
            "phpunit.xml": "<phpunit/>",
            "app/User.php": "",
        },
    )
    t = one(detect(php))
    assert (t.frameworks, t.test_runners, t.commands) == (("Laravel",), ("phpunit",), {"test": "composer test"})
    swift = write(
        tmp_path / "swift",
        {
            "Package.swift": '.package(url: "https://github.com/vapor/vapor.git", from: "4.0.0"),\n',
            "Sources/App/a.swift": "",
        },
    )
    t = one(detect(swift))
    assert (t.frameworks, t.commands) == (("Vapor",), {"test": "swift test", "build": "swift build"})
    elixir = write(
        tmp_path / "elixir",
        {"mix.exs": 'defp deps do\n  [{:phoenix, "~> 1.7"},\n   {:ex_machina, "~> 2.7", only: :test}]\nend\n'},
    )
    t = one(detect(elixir))
    assert (t.language, t.frameworks, t.test_runners) == ("Elixir", ("Phoenix",), ("mix test",))
    lua = write(
        tmp_path / "lua",
        {
            "app-1.0-1.rockspec": 'dependencies = {\n  "lua >= 5.1",\n  "lapis"\n}\ntest = { type = "busted" }\n',
            "src/app.lua": "",
        },
    )
    t = one(detect(lua))
    assert (t.build_file, t.frameworks, t.test_runners, t.commands) == (
        "app-1.0-1.rockspec",
        ("Lapis",),
        ("busted",),
        {"test": "busted"},
    )


def test_c_and_cpp_by_what_the_build_declares_or_the_sources(tmp_path: Path) -> None:
    cmake = write(
        tmp_path / "cmake",
        {
            "CMakeLists.txt": "cmake_minimum_required(VERSION 3.20)\nproject(zz VERSION 1.0 LANGUAGES C)\n"
            "find_package(SDL2 REQUIRED)\nenable_testing()\nadd_test(NAME t COMMAND t)\n",
            "src/zz.c": "",
        },
    )
    t = one(detect(cmake))
    assert (t.name, t.language, t.frameworks, t.test_runners, t.commands) == (
        "c",
        "C",
        ("SDL",),
        ("ctest",),
        {"test": "ctest --test-dir build", "build": "cmake -B build && cmake --build build"},
    )
    meson = write(
        tmp_path / "meson",
        {"meson.build": "project('x', 'cpp')\ngtest = dependency('gtest')\ntest('unit', exe)\n", "src/a.cc": ""},
    )
    t = one(detect(meson))
    assert (t.name, t.language, t.test_runners, t.commands) == (
        "cpp",
        "C++",
        ("meson test", "googletest"),
        {"test": "meson test -C build", "build": "meson setup build && meson compile -C build"},
    )
    make = write(tmp_path / "make", {"Makefile": "all: app\ncheck:\n\t./run\n", "main.cpp": "", "util.h": ""})
    t = one(detect(make))
    assert (t.name, t.build_file, t.commands) == ("cpp", "Makefile", {"test": "make check", "build": "make"})
    autotools = write(
        tmp_path / "autotools",
        {"configure.ac": "AC_INIT([x], [1])\nAM_INIT_AUTOMAKE\nAC_PROG_CC\n", "src/x.c": ""},
    )
    t = one(detect(autotools))
    assert (t.name, t.commands) == ("c", {"test": "make check", "build": "./configure && make"})
    # CMake with no C or C++ anywhere and nothing declared: not a C project
    assert detect(write(tmp_path / "none", {"CMakeLists.txt": "project(x)\n"})).types == ()


def test_shell_projects(tmp_path: Path) -> None:
    bats = write(tmp_path / "bats", {"bin/tool.sh": "#!/bin/sh\n", "test/tool.bats": "@test 'x' { true; }\n"})
    t = one(detect(bats))
    assert (t.name, t.build_file, t.test_runners, t.commands) == (
        "bash",
        "test/tool.bats",
        ("bats",),
        {"test": "bats test"},
    )
    scripts = write(tmp_path / "scripts", {"install.sh": "", "lib/util.sh": "", "README.md": ""})
    t = one(detect(scripts))
    assert (t.name, t.build_file, t.test_runners, t.commands) == ("bash", "install.sh", (), {})


def test_a_polyglot_repository_orders_types_by_folder_then_sources(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "pyproject.toml": '[project]\nname = "x"\ndependencies = ["django"]\n',
            "Cargo.toml": '[package]\nname = "x"\n[dependencies]\npyo3 = "0.22"\n',
            "src/lib.rs": "",
            "src/a.rs": "",
            "x/__init__.py": "",
            "frontend/package.json": '{"dependencies": {"vue": "3"}, "devDependencies": {"vitest": "1"}}',
            "frontend/src/main.js": "",
        },
    )
    profile = detect(tmp_path)
    assert [(t.name, t.directory) for t in profile.types] == [("rust", ""), ("python", ""), ("node", "frontend")]
    assert profile.frameworks == ("PyO3", "Django", "Vue")
    assert profile.test_runners == ("cargo test", "vitest")
    assert profile.commands == {"test": "cargo test", "build": "cargo build"}
    assert profile.types[2].commands == {"test": "npx vitest run"}
    facts = template_facts(profile)
    vue = [f for f in facts if f.domain == "frontend"]
    assert [(f.content, f.source) for f in vue] == [
        ("JavaScript project on Node.js in frontend/ using Vue (frontend/package.json)", "frontend/package.json"),
        ("JavaScript tests in frontend/ run with vitest: `npx vitest run`", "frontend/package.json"),
    ]


def test_a_monorepo_of_subfolders(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "services/api/go.mod": "module api\nrequire github.com/go-chi/chi/v5 v5.0.0\n",
            "services/api/main.go": "",
            "web/package.json": '{"dependencies": {"svelte": "4"}, "scripts": {"test": "vitest"}}',
            "web/ui/package.json": '{"peerDependencies": {"react": "18"}, "scripts": {"test": "jest"}}',
            "web/app.js": "",
            "docs/requirements.txt": "sphinx\n",
            "docs/conf.py": "",
            "examples/demo/Cargo.toml": "[package]\nname = 'demo'\n",
            "a/b/c/pyproject.toml": "[project]\nname = 'too-deep'\n",
        },
    )
    profile = detect(tmp_path)
    assert [(t.name, t.build_file) for t in profile.types] == [
        ("node", "web/package.json"),
        ("go", "services/api/go.mod"),
    ]
    # a workspace member's dependencies count for the folder's type; its scripts do not
    assert profile.types[0].frameworks == ("Svelte", "React")
    assert profile.commands == {"test": "cd web && npm test", "build": "cd services/api && go build ./..."}
    assert profile.test_runners == ("vitest", "go test")


def test_not_a_folder_is_invalid_input(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    for root in (tmp_path / "f", tmp_path / "missing"):
        with pytest.raises(InvalidInputError):
            detect(root)


def test_malformed_files_are_skipped_with_a_log_record(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    write(
        tmp_path,
        {
            "pyproject.toml": "[project\nname = ",
            "package.json": '{"dependencies": {"react": ',
            "pom.xml": "<project><dependencies>",
            "setup.cfg": "no section header\n",
            "x.py": "",
            "y.js": "",
        },
    )
    with caplog.at_level(logging.INFO, logger="aircher_mem.longterm.coldstart"):
        profile = detect(tmp_path)
    assert [t.name for t in profile.types] == ["python", "node", "java"]
    assert profile.frameworks == ()
    skipped = sorted(
        r.getMessage().split(":")[1].strip().split()[1] for r in caplog.records if "skipped" in r.getMessage()
    )
    assert skipped == ["package.json", "pom.xml", "pyproject.toml", "setup.cfg"]


def test_xml_with_a_doctype_is_never_parsed(tmp_path: Path) -> None:
    bomb = (
        '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;">]>'
        "<project><dependencies><dependency><groupId>io.quarkus</groupId><artifactId>&lol2;</artifactId>"
        "</dependency></dependencies></project>"
    )
    write(tmp_path, {"pom.xml": bomb, "App.csproj": bomb.replace("project>", "Project>")})
    profile = detect(tmp_path)
    assert [t.name for t in profile.types] == ["java", "csharp"]
    assert profile.frameworks == ()


def test_a_symlink_out_of_the_root_is_not_read(tmp_path: Path) -> None:
    outside = write(tmp_path / "outside", {"package.json": '{"dependencies": {"react": "18"}}'})
    root = tmp_path / "root"
    root.mkdir()
    (root / "package.json").symlink_to(outside / "package.json")
    (root / "web").symlink_to(outside, target_is_directory=True)
    (root / "index.js").write_text("")
    profile = detect(root)
    assert [(t.name, t.build_file) for t in profile.types] == [("node", "package.json")]
    assert profile.frameworks == ()


def test_a_fifo_named_like_a_build_file_does_not_hang(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "package.json")
    os.mkfifo(tmp_path / "Cargo.toml")
    (tmp_path / "go.mod").write_text("module x\nrequire github.com/gin-gonic/gin v1\n")
    result: list[ProjectProfile] = []
    worker = threading.Thread(target=lambda: result.append(detect(tmp_path)), daemon=True)
    worker.start()
    worker.join(10)
    if worker.is_alive():  # unblock the reader so the test process can end, then fail
        for name in ("package.json", "Cargo.toml"):
            fd = os.open(tmp_path / name, os.O_WRONLY | os.O_NONBLOCK)
            os.close(fd)
        pytest.fail("detect blocked on a FIFO")
    assert [t.name for t in result[0].types] == ["go"]
    assert result[0].frameworks == ("Gin",)


def test_a_huge_build_file_counts_for_its_name_only(tmp_path: Path) -> None:
    body = '[package]\nname = "x"\n[dependencies]\naxum = "1"\n' + "# pad\n" * (coldstart.MAX_FILE_BYTES // 6 + 1)
    write(tmp_path, {"Cargo.toml": body, "src/lib.rs": ""})
    t = one(detect(tmp_path))
    assert (t.name, t.frameworks) == ("rust", ())


def test_bad_utf8_is_skipped_and_a_bom_is_not(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "pyproject.toml": b'[project]\nname = "\xff\xfe"\ndependencies = ["flask"]\n',
            "package.json": b'\xef\xbb\xbf{"dependencies": {"koa": "2"}}',
            "a.py": "",
            "a.js": "",
        },
    )
    profile = detect(tmp_path)
    assert [t.name for t in profile.types] == ["python", "node"]
    assert profile.frameworks == ("Koa",)


def test_the_scan_is_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(coldstart, "MAX_ENTRIES", 15)
    write(tmp_path, {"README": ""})
    write(tmp_path / "a", {"package.json": "{}", "index.js": "", **{f"f{i}.txt": "" for i in range(8)}})
    write(tmp_path / "b", {f"f{i}.txt": "" for i in range(5)})
    write(tmp_path / "c", {"go.mod": "module x\n", "main.go": ""})
    # breadth first: the root's 4 entries, a/'s 10, one of b/'s; c/ is past the bound
    assert [t.build_file for t in detect(tmp_path).types] == ["a/package.json"]
    monkeypatch.setattr(coldstart, "MAX_ENTRIES", 40)
    assert [t.build_file for t in detect(tmp_path).types] == ["a/package.json", "c/go.mod"]


def test_a_huge_folder_is_not_read_to_its_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(coldstart, "MAX_ENTRIES", 100)
    for i in range(1000):
        (tmp_path / f"f{i:04}.sh").write_text("")
    pulled: list[str] = []
    scandir = os.scandir

    class Counting:
        def __init__(self, path: Path) -> None:
            self.it = scandir(path)

        def __enter__(self) -> Counting:
            return self

        def __exit__(self, *exc: object) -> None:
            self.it.close()

        def __iter__(self) -> Counting:
            return self

        def __next__(self) -> os.DirEntry[str]:
            entry = next(self.it)
            pulled.append(entry.name)
            return entry

    monkeypatch.setattr(os, "scandir", Counting)
    profile = detect(tmp_path)
    assert [t.name for t in profile.types] == ["bash"]
    assert len(pulled) == 100


_NAMES = ["pyproject.toml", "package.json", "Cargo.toml", "pom.xml", "go.mod", "setup.cfg", "App.csproj", "Gemfile"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(_NAMES), data=st.binary(max_size=400) | st.text(max_size=400).map(str.encode))
def test_any_bytes_in_a_build_file_give_a_profile(tmp_path: Path, name: str, data: bytes) -> None:
    root = tmp_path / "p"
    root.mkdir(exist_ok=True)
    for old in root.iterdir():
        old.unlink()
    (root / name).write_bytes(data)
    profile = detect(root)  # on a folder: never an exception, whatever the file holds
    assert len(profile.types) <= 1
    template_facts(profile)


def test_a_native_extension_comes_after_its_package_and_fixtures_are_not_sources(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "lua-x-1.0-1.rockspec": 'dependencies = { "lua >= 5.1" }\n',
            "CMakeLists.txt": "project(x C)\n",
            "a.c": "",
            "b.c": "",
            "x.lua": "",
            "runtests.sh": "#!/bin/sh\n",
        },
    )
    profile = detect(tmp_path)
    assert [t.name for t in profile.types] == ["lua", "c"]
    assert profile.commands["test"] == "./runtests.sh"
    # C files under test fixtures do not make an Autotools shell project a C one; Automake's
    # check target is still its test command
    shell = write(
        tmp_path / "shell",
        {
            "configure.ac": "AC_INIT([x], [1])\nAM_INIT_AUTOMAKE\n",
            "pyproject.toml": "[tool.black]\n",
            "test/fixtures/make/sample.c": "",
            ".shellcheckrc": "",
        },
    )
    profile = detect(shell)
    assert [t.name for t in profile.types] == ["python"]
    assert profile.commands == {"test": "make check"}  # .shellcheckrc lints shell, not Python


def test_a_script_named_for_tests_comes_after_the_makefile(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "pyproject.toml": "[tool.pytest.ini_options]\n",
            "scripts/test.sh": "pytest\n",
            "a.py": "",
        },
    )
    assert detect(tmp_path).commands == {"test": "bash scripts/test.sh"}
    (tmp_path / "Makefile").write_text("test:\n\tpytest\n")
    assert detect(tmp_path).commands == {"test": "make test"}
