"""The aircher-mem command: every command's output on the fixture repository, --json
for scripts, and one-line errors with their exit codes (never a traceback)."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import PROJECT_SOURCES, duckdb_held_by_another_process

import aircher_mem as am
from aircher_mem.cli import ProgressLine, main

SCRIPT = str(Path(sys.executable).with_name("aircher-mem"))  # the installed console script


def cli(*argv: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([SCRIPT, *argv], capture_output=True, text=True, cwd=cwd, timeout=120)


def run(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    code = main(list(argv), stdout=out)
    return code, out.getvalue()


def run_json(*argv: str) -> Any:
    code, text = run(*argv, "--json")
    assert code == 0, text
    return json.loads(text)


@pytest.fixture
def indexed(project: Path) -> Path:
    with am.Memory.open(project) as memory:
        memory.index()
    return project


def test_the_first_job_index_then_context(project: Path) -> None:
    done = cli("index", ".", cwd=project)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == f"indexed {project.resolve()}: 4 files, full build (first index)"
    assert "parsed 4 files in" in done.stdout and "4 added, 0 updated, 0 removed" in done.stdout

    context = cli("context", "why does store lose users?", cwd=project / "app")  # the store is found upward
    assert context.returncode == 0, context.stderr
    lines = context.stdout.splitlines()
    assert lines[0].startswith("context for 'why does store lose users?': ")
    assert "UserMessage" in lines[3] and "why does store lose users?" in lines[3]
    assert any("CodeSnippet" in line and "app/models.py:8-9" in line for line in lines)
    assert "pruned nothing" in lines


def test_incremental_index_reports_what_changed(indexed: Path) -> None:
    (indexed / "app/util.py").write_text("def helper():\n    return 2\n")
    (indexed / "app/models.py").unlink()
    report = run_json("index", str(indexed))
    assert (report["full"], report["parsed"], report["updated"], report["removed"]) == (
        False, 1, ["app/util.py"], ["app/models.py"])
    assert report["files"] == 3 and report["files_per_second"] > 0
    code, text = run("index", str(indexed), "--full")
    assert code == 0 and "full build (full rebuild requested)" in text and "3 files" in text


def test_progress_line_redraws_files_and_rate_on_a_terminal() -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    tty = Terminal()
    bar = ProgressLine(tty)
    bar(256, 512)
    bar(512, 512)
    bar.finish()
    text = tty.getvalue()
    assert text.startswith("\rindexing [############............] 256/512 files, ")
    assert "\rindexing [########################] 512/512 files, " in text and text.endswith(" files/s \n")
    quiet = io.StringIO()  # not a terminal: no redraws
    ProgressLine(quiet)(1, 2)
    assert quiet.getvalue() == ""


def test_graph_lookups(indexed: Path) -> None:
    root = ["--root", str(indexed)]
    assert run_json("symbol", "save", *root) == [
        {"name": "save", "kind": "function", "path": "app/models.py", "line": 5, "end_line": 6,
         "signature": "def save(self):"}]
    assert [s["name"] for s in run_json("symbol", "s", "--prefix", *root)] == ["save", "store"]
    assert [s["name"] for s in run_json("symbol", "STR", "--fuzzy", *root)] == ["store"]
    assert run("symbol", "s", "--prefix", "--fuzzy", *root)[0] == 2
    assert run_json("callers", "store", *root) == [
        {"name": "save", "kind": "function", "path": "app/models.py", "line": 5, "end_line": 6,
         "signature": "def save(self):", "call_line": 6, "confidence": 1.0}]
    assert [(c["name"], c["call_line"]) for c in run_json("callees", "create", *root)] == [("User", 4), ("save", 5)]
    code, text = run("symbol", "User", *root)
    assert code == 0 and text.splitlines()[2].split() == ["class", "User", "app/models.py:4-6", "class", "User(Base):"]
    assert run("callers", "nobody", *root) == (0, "no callers of 'nobody' in the graph\n")
    assert run_json("symbol", "nobody", *root) == []


def test_deps_lists_imports_both_ways(indexed: Path) -> None:
    root = ["--root", str(indexed)]
    assert run_json("deps", "app/views.py", *root) == {
        "path": "app/views.py", "dependencies": ["app/models.py"], "dependents": []}
    assert run_json("deps", "app/models.py", *root) == {
        "path": "app/models.py", "dependencies": [], "dependents": ["app/views.py"]}
    code, text = run("deps", "app/models.py", *root)
    assert code == 0 and text.splitlines() == [
        "app/models.py imports 0 file(s) of the project:", "app/models.py is imported by 1 file(s):", "  app/views.py"]
    assert cli("deps", "app/absent.py", "--root", str(indexed)).returncode == 1


def test_episodic_commands(indexed: Path) -> None:
    with am.Memory.open(indexed) as memory:
        mem = memory.episodic
        mem.start_task("t1", "make store persist users")
        mem.record_file_interaction("app/models.py", "edit", line_range=(8, 9), changes_summary="store writes to disk")
        mem.record_tool_execution("pytest", {"args": "-x"}, success=False, error_message="AssertionError",
                                  file_path="app/models.py", duration_ms=120)
        mem.record_file_interaction("app/models.py", "edit", changes_summary="fix the assertion")
        mem.record_tool_execution("pytest", {"args": "-x"}, success=True, file_path="app/models.py", duration_ms=80)
        mem.start_task("t2", "add a helper for views")
    root = ["--root", str(indexed)]
    history = run_json("history", "app/models.py", *root)
    assert [(h["operation"], h["changes_summary"]) for h in history] == [
        ("edit", "fix the assertion"), ("edit", "store writes to disk")]
    assert run_json("history", str(indexed / "app/models.py"), "--limit", "1", *root)[0]["line_range"] is None
    assert [t["task_id"] for t in run_json("tasks", *root)] == ["t2", "t1"]
    assert [t["task_id"] for t in run_json("tasks", "persist users in store", *root)] == ["t1"]
    [pattern] = run_json("patterns", "--type", "error-fix", *root)
    assert pattern["data"] == {"tool": "pytest", "file": "app/models.py", "error": "AssertionError", "fix": "edit"}
    assert run_json("patterns", "--type", "co-edit", *root) == []
    stats = run_json("stats", *root)
    assert stats["graph"] == {"files": 4, "nodes": 11, "edges": 13, "skipped": 0, "warnings": 0}
    assert stats["episodic"]["file_interactions"] == 2 and stats["episodic"]["task_history"] == 2
    assert [(t["tool_name"], t["total"], t["successes"]) for t in stats["tools_7d"]] == [("pytest", 2, 1)]
    code, text = run("history", "app/util.py", *root)
    assert (code, text) == (0, "no recorded interactions with app/util.py\n")


def test_context_shows_items_pruned_items_and_tokens(indexed: Path) -> None:
    root = ["--root", str(indexed)]
    full = run_json("context", "store save User", *root)
    assert full["max_tokens"] == 180_000 and full["pruned"] == [] and full["note"] == ""
    assert full["items"][0] == {"type": "UserMessage", "role": "user", "tokens": 3, "score": 1.5,
                                "source": "store save User", "content": "store save User"}
    sources = [i["source"] for i in full["items"][1:]]
    assert sorted(sources) == ["app/models.py:1-2", "app/models.py:4-6", "app/models.py:8-9", "app/views.py:3-6"]
    assert full["total_tokens"] == sum(i["tokens"] for i in full["items"])

    small = run_json("context", "store save User", "--budget", "30", *root)
    assert small["pruned"] and small["total_tokens"] <= small["threshold"] == 24
    assert small["pruned_tokens"] == sum(p["tokens"] for p in small["pruned"])
    assert len(small["items"]) + len(small["pruned"]) == len(full["items"])
    code, text = run("context", "store save User", "--budget", "30", "--show", *root)
    assert code == 0 and f"pruned {len(small['pruned'])} items" in text and "\n--- user ---\n" in text


def test_init_and_doctor(project: Path) -> None:
    created = run_json("init", str(project))
    assert created == {"root": str(project.resolve()), "store": str(project.resolve() / ".aircher"), "created": True}
    assert run_json("init", str(project))["created"] is False
    code, text = run("doctor", "--json", "--root", str(project))
    report = json.loads(text)
    assert code == 1 and not report["ok"]  # not indexed yet
    statuses = {c["check"]: c["status"] for c in report["checks"]}
    assert statuses == {"versions": "ok", "store": "ok", "config": "ok", "encoding": "ok", "episodic": "ok",
                        "graph": "fail"}
    assert run("index", str(project), "--quiet")[0] == 0
    report = run_json("doctor", "--root", str(project))
    assert report["ok"] and all(c["status"] == "ok" for c in report["checks"])
    assert "manifest matches" in report["checks"][-1]["detail"]


@pytest.mark.parametrize(("argv", "code", "message"), [
    (["symbol", "User"], 3, "no aircher-mem store in"),
    (["history", "app/models.py"], 3, "no aircher-mem store in"),
    (["index", "does/not/exist"], 2, "is not a directory"),
    (["symbol"], 2, "the following arguments are required: name"),
    (["frobnicate"], 2, "invalid choice: 'frobnicate'"),
    (["tasks", "--limit", "0"], 2, "must be > 0"),
])
def test_errors_are_one_line_with_an_exit_code(tmp_path: Path, argv: list[str], code: int, message: str) -> None:
    done = cli(*argv, cwd=tmp_path)
    assert done.returncode == code
    assert message in done.stderr and "Traceback" not in done.stderr and done.stdout == ""


def test_errors_on_a_store(indexed: Path, tmp_path: Path) -> None:
    root = ["--root", str(indexed)]
    outside = cli("history", "../elsewhere.py", *root)
    assert outside.returncode == 2 and "is outside the project root" in outside.stderr
    assert "Traceback" not in outside.stderr
    (tmp_path / "bare").mkdir()
    assert cli("init", str(tmp_path / "bare")).returncode == 0
    not_indexed = cli("callers", "x", "--root", str(tmp_path / "bare"))
    assert not_indexed.returncode == 3 and "has not been indexed yet: run `aircher-mem index" in not_indexed.stderr
    with duckdb_held_by_another_process(indexed / ".aircher" / "memory.duckdb"):
        locked = cli("tasks", *root)
        assert locked.returncode == 4 and "open in another process" in locked.stderr
        assert "Traceback" not in locked.stderr
        # the graph does not need the episodic store; the context preview leaves past tasks out
        assert cli("symbol", "User", *root).returncode == 0
        context = cli("context", "store", "--json", *root)
        assert context.returncode == 0
        assert json.loads(context.stdout)["note"] == "past tasks left out: the episodic store is open in another process"
    (indexed / ".aircher" / "config.toml").write_text("[context]\nbogus = 1\n")
    bad_config = cli("stats", *root)
    assert bad_config.returncode == 2 and "unknown key context.bogus" in bad_config.stderr
