"""The aircher-mem command: every command's output on the fixture repository, --json
for scripts, and one-line errors with their exit codes (never a traceback)."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import aircher_mem as am
import pytest
from aircher_mem.interfaces.cli import main
from aircher_mem.interfaces.render import ProgressLine, describe_progress
from aircher_mem.results import IndexProgress
from conftest import duckdb_held_by_another_process

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


@pytest.mark.slow
def test_the_first_job_index_then_context(project: Path) -> None:
    done = cli("index", ".", cwd=project)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == f"indexed {project.resolve()}: 4 files, full build (first index)"
    assert "parsed 4 files in" in done.stdout and "4 added, 0 updated, 0 removed" in done.stdout

    context = cli("preview-context", "why does store lose users?", cwd=project / "app")  # the store is found upward
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
        False,
        1,
        ["app/util.py"],
        ["app/models.py"],
    )
    assert report["files"] == 3 and report["files_per_second"] > 0
    code, text = run("index", str(indexed), "--full")
    assert code == 0 and "full build (full rebuild requested)" in text and "3 files" in text


def status(phase: str, done: int = 0, total: int = 0, seconds: float = 0.0, **more: Any) -> IndexProgress:
    fields: dict[str, Any] = {
        "running": True,
        "phase": phase,
        "done": done,
        "total": total,
        "unit": "documents" if phase == "embeddings" else "files",
        "seconds": seconds,
        "per_second": 0.0,
        "seconds_left": None,
    }
    return IndexProgress(**{**fields, **more})


def test_describe_progress_names_the_phase_counts_rate_and_time_left() -> None:
    assert describe_progress(status("scanning", seconds=0.4)) == "indexing 0 s: scanning"
    parsing = status("parsing", 1234, 5678, 12.6, per_second=950.2, seconds_left=4.7)
    assert describe_progress(parsing) == "indexing 13 s: parsing 1,234/5,678 files, 950 files/s, 5 s left"
    assert describe_progress(status("parsing", 0, 10, 0.1)) == "indexing 0 s: parsing 0/10 files"
    slow = status("parsing", 10, 90_000, 75, per_second=10.0, seconds_left=8999.0)
    assert describe_progress(slow) == "indexing 1 min 15 s: parsing 10/90,000 files, 10 files/s, 2 h 29 min left"
    linking = status("linking", 5678, 5678, 14.0, per_second=900.0)
    assert describe_progress(linking) == "indexing 14 s: linking"
    embedding = status("embeddings", 64, 256, 20.0, per_second=32.0, seconds_left=6.0)
    assert describe_progress(embedding) == "indexing 20 s: embeddings 64/256 documents, 32 documents/s, 6 s left"
    assert describe_progress(status("")) == "indexing 0 s: starting"


class Ticks:
    """A clock that says what the test sets."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_progress_line_on_a_terminal_is_redrawn_at_most_ten_times_a_second_and_at_each_phase() -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    tty, clock = Terminal(), Ticks()
    line = ProgressLine(tty, redraw=0.1, every=5.0, clock=clock)
    shown = [
        (0.00, status("scanning")),
        (0.05, status("parsing", 10, 40, 0.05)),  # a new phase: drawn at once
        (0.10, status("parsing", 20, 40, 0.1)),  # 0.05 s after the last: not drawn
        (0.16, status("parsing", 30, 40, 0.16, per_second=200.0, seconds_left=0.05)),
        (0.20, status("linking", 40, 40, 0.2)),
        (0.25, status("linking", 40, 40, 0.25)),
    ]
    for when, s in shown:
        clock.now = when
        line.show(s)
    line.finish()
    assert tty.getvalue() == (
        "\rindexing 0 s: scanning"
        "\rindexing 0 s: parsing 10/40 files"
        "\rindexing 0 s: parsing 30/40 files, 200 files/s, 0 s left"
        "\rindexing 0 s: linking" + " " * 35 + "\n"  # the longer line before it wiped out
    )


def test_progress_line_elsewhere_writes_a_plain_line_every_interval_and_at_each_phase() -> None:
    log, clock = io.StringIO(), Ticks()
    line = ProgressLine(log, redraw=0.1, every=5.0, clock=clock)
    for when, s in [
        (0.0, status("scanning")),
        (0.5, status("parsing", 100, 9000, 0.5, per_second=200.0, seconds_left=44.5)),
        (3.0, status("parsing", 600, 9000, 3.0, per_second=200.0, seconds_left=42.0)),
        (5.5, status("parsing", 1100, 9000, 5.5, per_second=200.0, seconds_left=39.5)),
        (9.0, status("parsing", 1800, 9000, 9.0, per_second=200.0, seconds_left=36.0)),
        (46.0, status("lexical index", 9000, 9000, 46.0, per_second=195.6)),
    ]:
        clock.now = when
        line.show(s)
    line.finish()
    assert log.getvalue() == (
        "indexing 0 s: scanning\n"
        "indexing 0 s: parsing 100/9,000 files, 200 files/s, 44 s left\n"
        "indexing 6 s: parsing 1,100/9,000 files, 200 files/s, 40 s left\n"
        "indexing 46 s: lexical index\n"
    )


SAVE = {
    "name": "save",
    "kind": "function",
    "scope": "User",
    "path": "app/models.py",
    "line": 5,
    "end_line": 6,
    "signature": "def save(self):",
    "qualified": "User.save",
}
STORE = {
    "name": "store",
    "kind": "function",
    "scope": "",
    "path": "app/models.py",
    "line": 8,
    "end_line": 9,
    "signature": "def store(obj):",
    "qualified": "store",
}


def test_graph_lookups(indexed: Path) -> None:
    root = ["--root", str(indexed)]
    assert run_json("find-symbol", "save", *root) == {
        "query": "save",
        "match": "exact",
        "symbols": [SAVE],
        "partial": None,
    }
    assert run_json("find-symbol", "User.save", *root)["symbols"] == [SAVE]
    assert [s["name"] for s in run_json("find-symbol", "s", "--prefix", *root)["symbols"]] == ["save", "store"]
    assert [s["name"] for s in run_json("find-symbol", "STR", "--fuzzy", *root)["symbols"]] == ["store"]
    assert run("find-symbol", "s", "--prefix", "--fuzzy", *root)[0] == 2
    assert run_json("callers", "store", *root) == {
        "name": "store",
        "direction": "callers",
        "definitions": [STORE],
        "calls": [{"symbol": SAVE, "call_line": 6, "kind": "calls", "confidence": 1.0}],
    }
    assert run_json("callers", "User.save", *root)["definitions"] == [SAVE]
    callees = run_json("callees", "create", *root)["calls"]
    assert [(c["symbol"]["name"], c["call_line"]) for c in callees] == [("User", 4), ("save", 5)]
    code, text = run("find-symbol", "User", *root)
    assert code == 0 and text.splitlines()[2].split() == ["class", "User", "app/models.py:4-6", "class", "User(Base):"]
    code, text = run("find-symbol", "save", *root)  # a method shows its class
    assert code == 0 and text.splitlines()[2].split()[:3] == ["function", "User.save", "app/models.py:5-6"]
    code, text = run("callers", "create", *root)
    assert code == 0 and text == "'create' is defined (create (app/views.py:3)) but nothing in the graph calls it\n"


@pytest.mark.slow
def test_unknown_names_say_so_with_exit_3(indexed: Path) -> None:
    root = ["--root", str(indexed)]
    for verb in ("find-symbol", "callers", "callees"):
        done = cli(verb, "stroe", *root)
        assert done.returncode == 3 and done.stdout == "", verb
        assert (
            done.stderr == f"aircher-mem {verb}: no definition named 'stroe' in the code graph; did you mean: store?\n"
        )
    as_json = cli("callers", "nobody", "--json", *root)
    assert as_json.returncode == 3
    assert json.loads(as_json.stdout) == {
        "error": {
            "code": "unknown_symbol",
            "type": "UnknownSymbolError",
            "message": "no definition named 'nobody' in the code graph",
        }
    }
    assert run_json("find-symbol", "nobody", "--prefix", *root)["symbols"] == []  # a search finding nothing is no error


def test_deps_lists_imports_both_ways(indexed: Path) -> None:
    root = ["--root", str(indexed)]
    assert run_json("dependencies", "app/views.py", *root) == {
        "path": "app/views.py",
        "dependencies": ["app/models.py"],
        "dependents": [],
    }
    assert run_json("dependencies", "app/models.py", *root) == {
        "path": "app/models.py",
        "dependencies": [],
        "dependents": ["app/views.py"],
    }
    code, text = run("dependencies", "app/models.py", *root)
    assert code == 0 and text.splitlines() == [
        "app/models.py imports 0 file(s) of the project:",
        "app/models.py is imported by 1 file(s):",
        "  app/views.py",
    ]
    assert cli("dependencies", "app/absent.py", "--root", str(indexed)).returncode == 3


@pytest.mark.slow
def test_episodic_commands(indexed: Path) -> None:
    with am.Memory.open(indexed) as memory:
        mem = memory.episodic
        mem.start_task("t1", "make store persist users")
        mem.record_file_interaction("app/models.py", "edit", line_range=(8, 9), changes_summary="store writes to disk")
        mem.record_tool_execution(
            "pytest",
            {"args": "-x"},
            success=False,
            error_message="AssertionError",
            file_path="app/models.py",
            duration_ms=120,
        )
        mem.record_file_interaction("app/models.py", "edit", changes_summary="fix the assertion")
        mem.record_tool_execution("pytest", {"args": "-x"}, success=True, file_path="app/models.py", duration_ms=80)
        mem.start_task("t2", "add a helper for views")
        session = mem.session_id
    root = ["--root", str(indexed)]
    history = run_json("file-history", "app/models.py", *root)
    assert [(h["operation"], h["changes_summary"]) for h in history["interactions"]] == [
        ("edit", "fix the assertion"),
        ("edit", "store writes to disk"),
    ]
    [failed] = history["failed_tool_runs"]  # the failed test run on the file
    assert (failed["tool_name"], failed["error_message"], failed["duration_ms"], failed["file_path"]) == (
        "pytest",
        "AssertionError",
        120,
        "app/models.py",
    )
    assert (
        run_json("file-history", str(indexed / "app/models.py"), "--limit", "1", *root)["interactions"][0]["line_range"]
        is None
    )
    assert [t["task_id"] for t in run_json("tasks", *root)["tasks"]] == ["t2", "t1"]
    [similar] = run_json("tasks", "persist users in store", *root)["tasks"]
    assert similar.pop("score") > 0 and similar.pop("started_at") > 0
    assert similar == {
        "task_id": "t1",
        "session_id": session,
        "description": "make store persist users",
        "intent": None,
        "status": "active",
        "completed_at": None,
        "files_touched": ["app/models.py"],
        "tools_used": {"pytest": 2},
        "outcome": None,
        "branch": None,
    }
    [pattern] = run_json("patterns", "error-fix", *root)["patterns"]
    assert pattern["data"] == {"tool": "pytest", "file": "app/models.py", "error": "AssertionError", "fix": "edit"}
    assert run_json("patterns", "co-edit", *root)["patterns"] == []
    done = run_json("task", "complete", "t2", "--outcome", "done", *root)
    assert 0 < done.pop("started_at") <= done.pop("completed_at")
    assert done == {
        "task_id": "t2",
        "session_id": session,
        "description": "add a helper for views",
        "intent": None,
        "status": "completed",
        "files_touched": [],
        "tools_used": {},
        "outcome": "done",
        "score": None,
        "branch": None,
    }
    assert run_json("tasks", *root)["tasks"][0]["task_id"] == "t1"
    stats = run_json("stats", *root)
    assert stats["graph"] == {"files": 4, "nodes": 11, "edges": 13, "skipped": 0, "warnings": 0, "unsupported": {}}
    assert stats["store_busy"] is None and "Python" in stats["supported_languages"]
    assert stats["episodic"]["file_interactions"] == 2 and stats["episodic"]["task_history"] == 2
    assert [(t["tool_name"], t["total"], t["successes"]) for t in stats["tools_7d"]] == [("pytest", 2, 1)]
    code, text = run("file-history", "app/util.py", *root)
    assert (code, text) == (0, "no recorded interactions with app/util.py\n")


def test_context_shows_items_pruned_items_and_tokens(indexed: Path) -> None:
    root = ["--root", str(indexed)]
    full = run_json("preview-context", "store save User", *root)
    assert full["max_tokens"] == 180_000 and full["pruned"] == [] and full["notes"] == []
    assert full["code_tokens"] == 16_000  # 25 % of the window, capped by retrieval.max_code_tokens
    assert full["items"][0] == {
        "type": "UserMessage",
        "role": "user",
        "tokens": 3,
        "score": 1.5,
        "source": "store save User",
        "content": "store save User",
    }
    sources = [i["source"] for i in full["items"][1:]]
    assert sorted(sources) == ["app/models.py:5-6", "app/models.py:8-9", "app/views.py:3-6"]
    assert full["total_tokens"] == sum(i["tokens"] for i in full["items"])

    small = run_json("preview-context", "store save User", "--max-tokens", "30", "--code-tokens", "16000", *root)
    assert small["pruned"] and small["total_tokens"] <= small["threshold"] == 24
    assert small["pruned_tokens"] == sum(p["tokens"] for p in small["pruned"])
    assert len(small["items"]) + len(small["pruned"]) == len(full["items"])
    code, text = run(
        "preview-context", "store save User", "--max-tokens", "30", "--code-tokens", "16000", "--show", *root
    )
    assert code == 0 and f"pruned {len(small['pruned'])} items" in text and "\n--- user ---\n" in text
    assert "def save(self):" in text  # --show prints the code itself


def test_the_code_budget_follows_the_window_and_the_message_survives(indexed: Path) -> None:
    root = ["--root", str(indexed)]
    assert run_json("preview-context", "store", "--max-tokens", "32000", *root)["code_tokens"] == 8000
    assert run_json("preview-context", "store", "--max-tokens", "8000", *root)["code_tokens"] == 2000
    tiny = run_json(
        "preview-context",
        "store save User and explain everything it does",
        "--max-tokens",
        "30",
        "--code-tokens",
        "16000",
        *root,
    )
    assert tiny["pruned"]  # the code did not fit ...
    kept = [i for i in tiny["items"] if i["type"] == "UserMessage"]
    assert [i["content"] for i in kept] == ["store save User and explain everything it does"]  # ... the message did
    assert all(p["type"] != "UserMessage" for p in tiny["pruned"])


def test_init_and_doctor(project: Path) -> None:
    created = run_json("create-store", str(project))
    assert created == {"root": str(project.resolve()), "store": str(project.resolve() / ".aircher"), "created": True}
    assert run_json("create-store", str(project))["created"] is False
    code, text = run("doctor", "--json", "--root", str(project))
    report = json.loads(text)
    assert code == 1 and not report["ok"]  # not indexed yet
    statuses = {c["check"]: c["status"] for c in report["checks"]}
    assert statuses == {
        "versions": "ok",
        "store": "ok",
        "server": "ok",
        "config": "ok",
        "encoding": "ok",
        "episodic": "ok",
        "long-term": "ok",
        "graph": "fail",
        "languages": "ok",
        "search": "ok",
    }
    assert run("index", str(project), "--quiet")[0] == 0
    report = run_json("doctor", "--root", str(project))
    assert report["ok"] and all(c["status"] == "ok" for c in report["checks"])
    details = {c["check"]: c["detail"] for c in report["checks"]}
    assert "manifest matches" in details["graph"]
    assert details["languages"].startswith("parsed: Python, ") and details["languages"].endswith(
        "; no files of other languages"
    )
    assert details["search"] == 'channels: lexical, graph (dense off: [retrieval] dense = "on" turns it on)'
    (project / ".aircher" / "graph.lexical").unlink()
    statuses = {c["check"]: c for c in run_json("doctor", "--root", str(project))["checks"]}
    assert statuses["search"]["status"] == "warn"
    assert statuses["search"]["detail"] == "no graph.lexical: it is rebuilt from the files when the graph loads"


@pytest.mark.parametrize(
    ("argv", "code", "message"),
    [
        (["find-symbol", "User"], 3, "no aircher-mem store in"),
        (["file-history", "app/models.py"], 3, "no aircher-mem store in"),
        (["index", "does/not/exist"], 2, "is not a directory"),
        (["find-symbol"], 2, "the following arguments are required: NAME"),
        (["frobnicate"], 2, "invalid choice: 'frobnicate'"),
        (["tasks", "--limit", "0"], 2, "argument --limit: must be >= 1, got 0"),
    ],
)
def test_errors_are_one_line_with_an_exit_code(tmp_path: Path, argv: list[str], code: int, message: str) -> None:
    done = cli(*argv, cwd=tmp_path)
    assert done.returncode == code
    assert message in done.stderr and "Traceback" not in done.stderr and done.stdout == ""


def test_a_snapshot_is_checked_field_by_field(indexed: Path) -> None:
    root = ("--root", str(indexed))
    good = {"timestamp": "2023-11-14T22:13:20Z", "session_id": "s1", "total_tokens": 5, "items": [], "reason": "r"}
    for change, message in [
        (
            {"colour": "red"},
            "unknown field snapshot.colour; allowed: timestamp, session_id, total_tokens, items, reason, task_id, "
            "item_count, pruned_items",
        ),
        ({"items": [1]}, "snapshot.items.0 must be an object, got 1"),
        ({"total_tokens": 1.5}, "snapshot.total_tokens must be an integer, got 1.5"),
    ]:
        code, text = run("record-snapshot", json.dumps({**good, **change}), "--json", *root)
        assert (code, json.loads(text)) == (
            2,
            {"error": {"code": "invalid_input", "type": "InvalidInputError", "message": message}},
        )
    assert run_json("record-snapshot", json.dumps(good), *root) == {
        "what": "snapshot",
        "graph_stale": False,
        "notes": [],
    }
    with am.Memory.open(indexed) as memory:
        [stored] = memory.episodic.snapshots()
    assert stored == {**good, "timestamp": 1_700_000_000.0, "task_id": None, "item_count": 0, "pruned_items": []}


@pytest.mark.slow
def test_errors_on_a_store(indexed: Path, tmp_path: Path) -> None:
    root = ["--root", str(indexed)]
    outside = cli("file-history", "../elsewhere.py", *root)
    assert outside.returncode == 2 and "is outside the project root" in outside.stderr
    assert "Traceback" not in outside.stderr
    (tmp_path / "bare").mkdir()
    assert cli("create-store", str(tmp_path / "bare")).returncode == 0
    not_indexed = cli("callers", "x", "--root", str(tmp_path / "bare"))
    assert not_indexed.returncode == 3 and "has not been indexed yet: run `aircher-mem index" in not_indexed.stderr
    with duckdb_held_by_another_process(indexed / ".aircher" / "memory.duckdb"):
        locked = cli("tasks", *root)
        assert locked.returncode == 4 and "open in another process" in locked.stderr
        assert "Traceback" not in locked.stderr
        # the graph does not need the episodic store; the context preview leaves memory out
        assert cli("find-symbol", "User", *root).returncode == 0
        context = cli("preview-context", "store", "--json", *root)
        assert context.returncode == 0
        assert json.loads(context.stdout)["notes"] == [
            "memory left out (no assembled context): the episodic store is open in another process"
        ]
        stats = cli("stats", *root)  # the graph half, and why the rest is missing
        assert stats.returncode == 0, stats.stderr
        assert "graph     4 files" in stats.stdout and "episodic  busy: " in stats.stdout
    (indexed / ".aircher" / "config.toml").write_text("[context]\nbogus = 1\n")
    bad_config = cli("stats", *root)
    assert bad_config.returncode == 2 and "unknown key context.bogus" in bad_config.stderr


def test_files_of_unparsed_languages_are_counted(project: Path) -> None:
    (project / "lib").mkdir()
    for name in ("a.dart", "b.dart", "c.dart", "x.ex"):
        (project / "lib" / name).write_text("int x;\n")
    report = run_json("index", str(project))
    assert report["files"] == 4 and report["unsupported"] == {"Dart": 3, "Elixir": 1}
    code, text = run("index", str(project))
    assert code == 0 and "not parsed (language not supported): Dart 3, Elixir 1 files" in text
    assert run_json("stats", "--root", str(project))["graph"]["unsupported"] == {"Dart": 3, "Elixir": 1}
    code, text = run("stats", "--root", str(project))
    assert "          not parsed: Dart 3, Elixir 1 files" in text
    doctor = run_json("doctor", "--root", str(project))
    [languages] = [c for c in doctor["checks"] if c["check"] == "languages"]
    assert doctor["ok"] and languages["status"] == "warn"
    assert languages["detail"].startswith("not in the graph (language not supported): Dart 3, Elixir 1 files; parsed: ")


def test_a_tree_whose_every_source_is_ignored_is_told_so(tmp_path: Path) -> None:
    root = tmp_path / "linux"
    (root / "kernel").mkdir(parents=True)
    (root / "kernel" / "fork.c").write_text("int fork(void) { return 0; }\n")
    (root / ".gitignore").write_text("/*\n!/debian/\n")
    report = run_json("index", str(root))
    why = "excluded by ignore rules (.gitignore, .ignore or git's excludes), as is every source file here: nothing is indexed"
    assert report["files"] == 0 and report["skipped"] == [["kernel/fork.c", why]]
    code, text = run("index", str(root), "--full")
    assert code == 0 and f"skipped 1: kernel/fork.c ({why})" in text
    (root / ".gitignore").write_text("/debian/\n")
    report = run_json("index", str(root))
    assert report["files"] == 1 and report["skipped"] == []


@pytest.mark.slow
def test_a_closed_pipe_ends_quietly(tmp_path: Path) -> None:
    root = tmp_path / "many"
    root.mkdir()
    (root / "m.py").write_text("".join(f"def f{n}():\n    pass\n" for n in range(20_000)))
    assert cli("index", str(root)).returncode == 0
    done = subprocess.run(
        f"'{SCRIPT}' find-symbol f --prefix --root '{root}' | head -n 1",
        shell=True,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.stdout.startswith("kind") and done.stderr == ""


def test_mcp_help_offers_no_json_flag() -> None:
    done = cli("mcp", "--help")
    assert done.returncode == 0 and "--root" in done.stdout and "--json" not in done.stdout


@pytest.mark.slow
@pytest.mark.parametrize(
    "config", ["context = 5\n", 'context = "ab"\n', "[[context]]\n", "[context]\nmax_tokens = 9223372036854775808\n"]
)
def test_a_bad_config_is_a_policy_error_and_doctor_checks_the_rest(indexed: Path, config: str) -> None:
    (indexed / ".aircher" / "config.toml").write_text(config)
    stats = cli("stats", "--root", str(indexed))
    assert stats.returncode == 2 and "config.toml" in stats.stderr and "Traceback" not in stats.stderr
    doctor = cli("doctor", "--json", "--root", str(indexed))
    report = json.loads(doctor.stdout)
    statuses = {c["check"]: c["status"] for c in report["checks"]}
    assert doctor.returncode == 1 and statuses["config"] == "fail"
    assert statuses["store"] == statuses["graph"] == statuses["episodic"] == "ok"


def test_references_and_neighbourhood(indexed: Path) -> None:
    root = ["--root", str(indexed)]
    refs = run_json("references", "User", *root)
    # the import in views.py names it; create() calls it
    assert [(r["kind"], r["symbol"]["qualified"], r["call_line"]) for r in refs["references"]] == [
        ("references", "app.models", 1),
        ("calls", "create", 4),
    ]
    inherits = run_json("references", "Base", "--kind", "inherits", *root)
    assert [(r["symbol"]["name"], r["kind"]) for r in inherits["references"]] == [("User", "inherits")]
    near = run_json("neighbourhood", "store", *root)
    assert [(n["symbol"]["qualified"], n["distance"]) for n in near["symbols"]] == [
        ("store", 0),
        ("app/models.py", 1),
        ("User.save", 1),
    ]
    code, text = run("references", "Base", "--kind", "inherits", *root)
    assert code == 0 and text.splitlines()[2].split()[:2] == ["inherits", "User"]
    assert run("references", "nobody", *root)[0] == 3 and run("near", "store", "--hops", "0", *root)[0] == 2
