"""Every code example of the README runs as written: the Python blocks in order, in
one namespace, and each ``aircher-mem`` command of the shell blocks (the MCP and HTTP
servers and the install/CI lines aside) and each line piping into one, in a copy of
the fixture project."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import PROJECT, write_files

README = Path(__file__).resolve().parent.parent / "README.md"
SCRIPT = str(Path(sys.executable).with_name("aircher-mem"))
# The README's examples name files of a small app; the fixture project has them.
FILES = {
    **PROJECT,
    "auth.py": "def login(user):\n    return user\n",
    "tests/test_auth.py": "def test_login():\n    pass\n",
}


def blocks(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", README.read_text(encoding="utf-8"), flags=re.S | re.M)


LONG_RUNNING = ("aircher-mem mcp", "aircher-mem serve")  # servers: they run until stopped


def commands() -> list[str]:
    found = []
    for block in blocks("bash"):
        for line in block.splitlines():
            line = line.split("  #")[0].strip()
            for part in line.split(";"):
                part = part.strip()
                if part.startswith("aircher-mem ") and not part.startswith(LONG_RUNNING):
                    found.append(part)
    return found


def pipelines() -> list[str]:
    """Shell lines that pipe into aircher-mem (a hook fed its event)."""
    return [line.strip() for block in blocks("bash") for line in block.splitlines() if "| aircher-mem " in line]


@pytest.fixture
def app(tmp_path: Path) -> Path:
    root = write_files(tmp_path / "app-project", FILES)
    cwd = os.getcwd()
    os.chdir(root)
    yield root
    os.chdir(cwd)


def test_the_readme_has_examples() -> None:
    assert len(blocks("python")) >= 5 and len(commands()) >= 10


def test_python_examples_run_as_written(app: Path) -> None:
    namespace: dict[str, object] = {"__name__": "readme"}
    for n, block in enumerate(blocks("python")):
        try:
            exec(compile(block, f"README.md python block {n + 1}", "exec"), namespace)
        except Exception as exc:  # pragma: no cover - the message says which block
            raise AssertionError(f"README python block {n + 1} failed: {type(exc).__name__}: {exc}\n{block}") from exc
    close = getattr(namespace.get("mem"), "close", None)
    if callable(close):
        close()


@pytest.mark.slow
def test_shell_examples_run_as_written(app: Path) -> None:
    failed = []
    for command in commands():  # in order: `task complete t1` follows `task start t1`
        argv = shlex.split(command)
        done = subprocess.run([SCRIPT, *argv[1:]], capture_output=True, text=True, timeout=120)
        if done.returncode != 0 or "Traceback" in done.stderr:
            failed.append(f"{command}: exit {done.returncode}: {done.stderr}")
    assert failed == []


@pytest.mark.slow
def test_piped_examples_run_as_written(app: Path) -> None:
    """The hook example prints the SessionStart context of the project's store."""
    assert len(pipelines()) == 1
    subprocess.run([SCRIPT, "create-store"], check=True, timeout=120, capture_output=True)
    subprocess.run([SCRIPT, "remember", "Never push to main", "--importance", "1"], check=True, timeout=120)
    env = {**os.environ, "PATH": f"{Path(SCRIPT).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    for line in pipelines():
        done = subprocess.run(["bash", "-c", line], capture_output=True, text=True, timeout=120, env=env)
        assert done.returncode == 0 and done.stderr == "", (line, done.stderr)
        assert done.stdout.splitlines()[-2:] == [
            "Project conventions and background:",
            "[memory 1] (fact) Never push to main",
        ]
