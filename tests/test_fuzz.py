"""Hostile values through every public verb of the service and every CLI command:
the only exceptions allowed are AircherError subclasses, the CLI never exits 70
("internal error") and never prints a traceback. Bounded (hypothesis examples per
verb, a fixed list of CLI cases) so CI runs it in seconds."""

from __future__ import annotations

import io
import math
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import aircher_mem as am
import pytest
from aircher_mem.interfaces.cli import main
from conftest import PROJECT, write_files
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

SCRIPT = str(Path(sys.executable).with_name("aircher-mem"))

HOSTILE: list[Any] = [
    None,
    True,
    False,
    0,
    -1,
    1,
    2**31,
    2**63,
    2**70,
    -(2**70),
    math.nan,
    math.inf,
    -math.inf,
    1.5,
    "",
    " ",
    "\x00",
    "a\x00b",
    "\ud800",
    "x\udcffy",
    "é",
    "../../etc/passwd",
    "/etc/passwd",
    "app/models.py",
    "User.save",
    "store",
    "x" * 2_000_000,
    [],
    {},
    ["a"],
    {"a": 1},
    b"bytes",
]


def nested(depth: int) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = {"k": value}
    return value


HOSTILE_PARAMETERS = [*HOSTILE, nested(100_000), {"a": math.nan}, {"k": object()}, {1: "int key"}]


@pytest.fixture(scope="module")
def memory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[am.Memory]:
    root = write_files(tmp_path_factory.mktemp("fuzz") / "repo", PROJECT)
    with am.Memory.open(root) as m:
        m.index()
        m.task("start", "t0", description="make store persist users")
        yield m


values = st.sampled_from(HOSTILE)

VERBS: dict[str, tuple[Callable[..., Any], int]] = {}


def verbs(m: am.Memory) -> dict[str, Callable[..., Any]]:
    return {
        "find_symbol": lambda a, b, c: m.find_symbol(a, prefix=b, fuzzy=c),
        "callers": lambda a, b, c: m.callers(a),
        "callees": lambda a, b, c: m.callees(a),
        "references": lambda a, b, c: m.references(a, kind=b),
        "dependencies": lambda a, b, c: m.dependencies(a),
        "file_definitions": lambda a, b, c: m.file_definitions(a),
        "neighbourhood": lambda a, b, c: m.neighbourhood(a, hops=b),
        "relevant_code": lambda a, b, c: m.relevant_code(a, max_tokens=b, focus_files=c if isinstance(c, list) else ()),
        "search_code": lambda a, b, c: m.search_code(a, k=b, level=c, focus_files=a if isinstance(a, list) else ()),
        "preview_context": lambda a, b, c: m.preview_context(a, max_tokens=b, code_tokens=c),
        "prepare_context": lambda a, b, c: m.prepare_context(a),
        "file_history": lambda a, b, c: m.file_history(a, limit=b),
        "co_edited_files": lambda a, b, c: m.co_edited_files(a, min_count=b),
        "tasks": lambda a, b, c: m.tasks(a, limit=b),
        "patterns": lambda a, b, c: m.patterns(a, min_count=b),
        "task": lambda a, b, c: m.task(a, b, description=c, outcome=c),
        "record_file_interaction": lambda a, b, c: m.record_file_interaction(a, b, changes_summary=c, task_id=c),
        "relative": lambda a, b, c: m.relative(a),
    }


@pytest.mark.parametrize("verb", sorted(verbs(am.Memory(Path("."), am.Policy()))))
def test_every_verb_raises_only_typed_errors(memory: am.Memory, verb: str) -> None:
    call = verbs(memory)[verb]

    @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(values, values, values)
    def check(a: Any, b: Any, c: Any) -> None:
        try:
            call(a, b, c)
        except am.AircherError:
            pass

    check()


@settings(max_examples=80, deadline=None)
@given(st.sampled_from(HOSTILE_PARAMETERS), values, values, values)
def test_record_tool_call_raises_only_typed_errors(
    memory: am.Memory, params: Any, name: Any, ms: Any, msg: Any
) -> None:
    try:
        memory.record_tool_call(name, params, success=True, result=msg, duration_ms=ms, error_message=msg)
    except am.AircherError:
        pass
    memory.flush()  # whatever was accepted can be written


def test_memory_open_refuses_hostile_roots(tmp_path: Path) -> None:
    for root in ["", "\x00", "a\x00b", "x\ud800", str(tmp_path / "absent"), str(tmp_path / "file.txt")]:
        (tmp_path / "file.txt").write_text("x")
        with pytest.raises(am.AircherError):
            am.Memory.open(root)


# -- the command line ------------------------------------------------------------------------

HOSTILE_ARGS = [
    "",
    "\x01",
    "x\udcffy",
    "../../etc/passwd",
    "/etc/passwd",
    "-1",
    "0",
    str(2**70),
    "nan",
    "inf",
    "x" * 100_000,
    "User.save",
    "--",
]


def cli_cases(root: str) -> Iterator[list[str]]:
    for arg in HOSTILE_ARGS:
        for command in (
            ["find-symbol", arg],
            ["find-symbol", arg, "--fuzzy"],
            ["callers", arg],
            ["callees", arg],
            ["file-definitions", arg],
            ["dependencies", arg],
            ["relevant-code", arg],
            ["search-code", arg],
            ["search-code", "x", "-k", arg],
            ["search-code", arg, "--level", "file", "--focus-files", arg],
            ["file-history", arg],
            ["co-edited-files", arg],
            ["tasks", arg],
            ["preview-context", arg],
            ["task", "start", arg, "--description", arg],
            ["task", "complete", arg],
            ["patterns", arg],
        ):
            yield [*command, "--root", root]
        for command in (
            ["file-history", "app/models.py", "--limit", arg],
            ["tasks", "--limit", arg],
            ["preview-context", "store", "--max-tokens", arg],
            ["preview-context", "store", "--code-tokens", arg],
            ["relevant-code", "store", "--max-tokens", arg],
            ["co-edited-files", "--min-count", arg],
            ["mcp", "--refresh-seconds", arg, "--help"],
        ):
            yield [*command, "--root", root]
        yield ["find-symbol", "store", "--root", arg]
        yield ["index", arg]


@pytest.mark.slow
def test_no_cli_input_reaches_an_internal_error(
    memory: am.Memory, capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # `index --` indexes the current folder
    failures = []
    for argv in cli_cases(str(memory.root)):
        for as_json in ([], ["--json"]):
            out = io.StringIO()
            try:
                code = main([*argv, *as_json] if argv[0] != "mcp" else argv, stdout=out)
            except SystemExit as exc:  # pragma: no cover - main returns, it never exits
                code = int(exc.code or 0)
            err = capsys.readouterr().err
            if code == 70 or "Traceback" in err or "internal error" in err:
                failures.append((argv[:3], code, err[-300:]))
    assert failures == []


@pytest.mark.slow
def test_no_cli_input_reaches_an_internal_error_as_a_process(memory: am.Memory) -> None:
    root = str(memory.root).encode()
    for argv in ([b"find-symbol", b"a\xffb"], [b"deps", b"../\xfe.py"], [b"context", b"\xff\xfe"], [b"tasks", b"\xc3"]):
        done = subprocess.run([SCRIPT.encode(), *argv, b"--root", root], capture_output=True, timeout=120)
        assert done.returncode in (0, 2, 3) and b"Traceback" not in done.stderr, (argv, done.stderr)
