"""Cold start reads the commands a project's CI runs (``longterm.ci``): GitHub Actions,
GitLab CI, CircleCI and Travis CI files, their steps split into commands, each
classified and given to the project type of the folder it runs in."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from aircher_mem.longterm import ci
from aircher_mem.longterm.ci import CiCommand
from aircher_mem.longterm.coldstart import Evidence, detect
from conftest import write_files
from hypothesis import given, settings
from hypothesis import strategies as st

WORKFLOW = """
name: CI
on: [push]
defaults:
  run:
    shell: bash
jobs:
  test:
    runs-on: ubuntu-latest
    strategy:
      matrix:
        python: ["3.11", "3.12"]
    steps:
      - uses: actions/checkout@v4
      - run: pip install -e .[test]
      - name: Tests
        run: |
          # the suite
          PYTHONWARNINGS=error poetry run pytest -x tests \\
            --maxfail 3
          python${{ matrix.python }} -m mypy src
      - run: cd web && npm ci && npm test -- --coverage ${{ matrix.flags }}
      - run: npm run build
        working-directory: web
  lint:
    runs-on: ubuntu-latest
    defaults:
      run:
        working-directory: web
    steps:
      - run: npx eslint . --max-warnings 0
      - run: ruff check src
        working-directory: .
  docs:
    steps:
      - run: pytest docs
"""


def test_a_github_workflow_gives_each_command_its_kind_and_folder(tmp_path: Path) -> None:
    write_files(tmp_path, {".github/workflows/ci.yml": WORKFLOW})
    assert ci.commands(tmp_path) == [
        CiCommand("test", "python", "poetry run pytest -x tests --maxfail 3", "", ".github/workflows/ci.yml"),
        CiCommand("test", "node", "npm test", "web", ".github/workflows/ci.yml"),
        CiCommand("build", "node", "npm run build", "web", ".github/workflows/ci.yml"),
        CiCommand("lint", "node", "npx eslint . --max-warnings 0", "web", ".github/workflows/ci.yml"),
        CiCommand("lint", "python", "ruff check src", "", ".github/workflows/ci.yml"),
    ]


def test_workflows_and_jobs_for_docs_and_releases_are_not_read(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            ".github/workflows/publish.yml": "jobs:\n  b:\n    steps:\n      - run: python -m build\n",
            ".github/workflows/docs.yaml": "jobs:\n  b:\n    steps:\n      - run: make test\n",
            ".github/workflows/main.yaml": (
                "jobs:\n  deploy-site:\n    steps:\n      - run: npm run build\n"
                "  unit:\n    steps:\n      - run: go test ./...\n"
            ),
        },
    )
    assert ci.commands(tmp_path) == [CiCommand("test", "go", "go test ./...", "", ".github/workflows/main.yaml")]


def test_gitlab_circleci_and_travis(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            ".gitlab-ci.yml": """
stages: [test]
variables:
  script: make lint
.template: &tpl
  script:
    - cargo fmt --check
unit:
  <<: *tpl
  script:
    - cargo test --all-features
    - [cargo clippy -- -D warnings]
pages:
  script: [mkdocs build]
""",
            ".circleci/config.yml": """
version: 2.1
jobs:
  build:
    working_directory: ~/repo
    steps:
      - checkout
      - run: bundle exec rspec
      - run:
          name: lint
          command: bundle exec rubocop
          working_directory: app
""",
            ".travis.yml": """
language: php
script: vendor/bin/phpunit
jobs:
  include:
    - script:
        - composer phpstan
""",
        },
    )
    assert ci.commands(tmp_path) == [
        CiCommand("lint", "rust", "cargo fmt --check", "", ".gitlab-ci.yml"),
        CiCommand("test", "rust", "cargo test --all-features", "", ".gitlab-ci.yml"),
        CiCommand("lint", "rust", "cargo clippy -- -D warnings", "", ".gitlab-ci.yml"),
        CiCommand("test", "ruby", "bundle exec rspec", "", ".circleci/config.yml"),
        CiCommand("lint", "ruby", "bundle exec rubocop", "app", ".circleci/config.yml"),
        CiCommand("test", "php", "vendor/bin/phpunit", "", ".travis.yml"),
        CiCommand("lint", "php", "composer phpstan", "", ".travis.yml"),
    ]


@pytest.mark.parametrize(
    ("script", "expected"),
    [
        ("pytest", [("pytest", "")]),
        ("make -C sub test", [("make -C sub test", "")]),
        ("cd pkg\ncargo test\ncd ..\ncargo build", [("cargo test", "pkg"), ("cargo build", "")]),
        ("cd ../elsewhere && pytest", []),
        ("cd /opt/x; pytest", []),
        ("cd $HOME/x || exit 1\npytest", []),
        ("cd `scripts/dir` && make check", []),
        ("pytest | tee log.txt", []),
        ("pytest > out.txt 2>&1", []),
        ("$RUNNER test", []),
        ("FOO=1 BAR='a b' tox -e $ENV", [("tox", "")]),
        ("tox -e ${{ matrix.env }} --parallel", [("tox --parallel", "")]),
        ("go test ./... || true", [("go test ./...", ""), ("true", "")]),
        ("pytest 'unterminated", []),
        ("pytest -k 'not slow and not net'", [("pytest -k 'not slow and not net'", "")]),
    ],
)
def test_split(script: str, expected: list[tuple[str, str]]) -> None:
    assert ci.split(script) == expected


def test_the_ci_commands_take_their_place_among_the_build_files(tmp_path: Path) -> None:
    """A build file's scripts and the Makefile's targets come first; the CI's come before
    what a runner or a configuration file implies, and only in the folder they run in,
    for a type of their tool's ecosystem."""
    write_files(
        tmp_path,
        {
            "pyproject.toml": (
                '[project]\nname = "x"\n[project.optional-dependencies]\ntest = ["pytest"]\n[tool.ruff]\n'
            ),
            "x/__init__.py": "",
            "Makefile": "build:\n\tpython -m build\n",
            "web/package.json": '{"name": "w", "scripts": {"test": "vitest run"}}',
            "web/index.js": "",
            ".github/workflows/ci.yml": """
jobs:
  all:
    steps:
      - run: |
          poetry run pytest -q
          ruff check x tests
          make build-docs
          cd web && npm test && npm run lint && npm run build
      - run: cargo test
""",
        },
    )
    profile = detect(tmp_path)
    python, node = profile.types
    assert (python.name, node.name) == ("python", "node")
    assert python.commands == {"test": "poetry run pytest -q", "lint": "ruff check x tests", "build": "make build"}
    assert node.commands == {"test": "npm test", "lint": "npm run lint", "build": "npm run build"}
    ci_said = [e for e in profile.evidence if e.says.endswith("(CI step)")]
    assert ci_said == [
        Evidence(".github/workflows/ci.yml", "command lint: ruff check x tests (CI step)"),
        Evidence(".github/workflows/ci.yml", "command test: poetry run pytest -q (CI step)"),
        Evidence(".github/workflows/ci.yml", "command build: npm run build (CI step)"),
        Evidence(".github/workflows/ci.yml", "command lint: npm run lint (CI step)"),
    ]


HOSTILE: list[tuple[str, str | bytes]] = [
    ("not yaml", "jobs: [unclosed\n  - : :\n"),
    ("a list", "- run: pytest\n"),
    ("steps not a list", "jobs:\n  a:\n    steps: pytest\n"),
    ("run not a string", "jobs:\n  a:\n    steps:\n      - run: [pytest]\n      - run: 3\n"),
    ("bad UTF-8", b"jobs:\n  a:\n    steps:\n      - run: pytest \xff\xfe\n"),
    ("a tag", "jobs: !!python/object/apply:os.system ['echo hacked']\n"),
    ("deep", "jobs:\n" + "".join("  " * (i + 1) + f"k{i}:\n" for i in range(2000)) + "  " * 2001 + "x: 1\n"),
]


@pytest.mark.parametrize(("name", "content"), HOSTILE, ids=[h[0] for h in HOSTILE])
def test_a_hostile_ci_file_is_skipped(tmp_path: Path, name: str, content: str | bytes) -> None:
    write_files(tmp_path, {".github/workflows/ci.yml": content, ".travis.yml": "script: npm test\n"})
    assert [c.command for c in ci.commands(tmp_path)] == ["npm test"]


def test_aliases_cannot_make_the_walk_long(tmp_path: Path) -> None:
    # each level's list names the level below nine times: 9**7 steps if walked whole
    levels = ["a0: &a0 {run: pytest}"] + [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 8)]
    text = "x:\n" + "\n".join(f"  {line}" for line in levels) + "\njobs:\n  t:\n    steps: *a7\n"
    write_files(tmp_path, {".github/workflows/ci.yml": text})
    start = time.monotonic()
    assert ci.commands(tmp_path) == []  # the steps are lists, not steps
    assert time.monotonic() - start < 5
    steps = "\n".join(f"      - run: pytest -k t{i}" for i in range(ci.MAX_NODES + 10))
    write_files(tmp_path, {".github/workflows/ci.yml": f"jobs:\n  t:\n    steps:\n{steps}\n"})
    assert len(ci.commands(tmp_path)) < ci.MAX_NODES


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_links_fifos_and_huge_files_are_not_read(tmp_path: Path) -> None:
    outside = write_files(tmp_path / "outside", {"ci.yml": "jobs:\n  a:\n    steps:\n      - run: pytest\n"})
    root = tmp_path / "root"
    (root / ".github" / "workflows").mkdir(parents=True)
    (root / ".github" / "workflows" / "link.yml").symlink_to(outside / "ci.yml")
    os.mkfifo(root / ".github" / "workflows" / "fifo.yml")
    (root / ".travis.yml").symlink_to(outside / "ci.yml")
    big = "script:\n" + "  - npm test\n" * (ci_max_bytes() // 10)
    write_files(root, {".gitlab-ci.yml": big})
    assert ci.commands(root) == []
    (tmp_path / "elsewhere").mkdir()
    (root / ".circleci").symlink_to(tmp_path / "elsewhere")
    write_files(tmp_path / "elsewhere", {"config.yml": "jobs:\n  a:\n    steps:\n      - run: pytest\n"})
    assert ci.commands(root) == []


def ci_max_bytes() -> int:
    from aircher_mem.longterm.buildfiles import MAX_FILE_BYTES

    return MAX_FILE_BYTES + 100


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(list("ab /.-$`|&;\\\n'\"cdpytest") + ["cd ", "..", "${{ x }}"]), max_size=40).map("".join)
)
def test_split_never_raises_nor_leaves_the_root(script: str) -> None:
    for command, folder in ci.split(script):
        assert command.strip()
        assert not folder.startswith(("/", "..")) and "$" not in folder
