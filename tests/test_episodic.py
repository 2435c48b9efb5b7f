"""EpisodicMemory: schema, recording, every query on known data, patterns,
migrations, and a locked or corrupt store."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import re
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aircher_mem as am
import duckdb
import pytest
from aircher_mem import episodic
from aircher_mem.checks import MAX_TIME, MIN_TIME
from aircher_mem.engine import DynamicContextManager, EpisodicMemory
from aircher_mem.errors import TaskStateError
from aircher_mem.redact import pii_tags, redact, redact_value
from aircher_mem.results import CoEdit, FileInteraction, Task, ToolStats
from conftest import NOW
from hypothesis import given, settings
from hypothesis import strategies as st


@pytest.fixture
def clock() -> list[float]:
    return [NOW]


@pytest.fixture(params=["duckdb", "postgres"])
def mem(request: pytest.FixtureRequest, clock: list[float]) -> Iterator[EpisodicMemory]:
    """An episodic store in memory, and one on a PostgreSQL server (a database of its own)."""
    url = request.getfixturevalue("pg_url") if request.param == "postgres" else ""
    m = EpisodicMemory(session_id="s1", clock=lambda: clock[0], url=url)
    yield m
    m.close()


def raw(m: EpisodicMemory, sql: str) -> list[tuple[Any, ...]]:
    """Reads the database directly, without flushing the buffer."""
    return m._con.execute(sql).fetchall()


def test_schema_has_the_seed_tables_and_version(mem: EpisodicMemory) -> None:
    tables = {
        r[0] for r in raw(mem, "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()")
    }
    # on a team's server, the change logs too
    assert tables - ({"team_changes", "team_trimmed", "episodic_writes"} if mem.team else set()) == {
        "schema_meta",
        "schema_versions",
        "tool_executions",
        "file_interactions",
        "task_history",
        "context_snapshots",
        "learned_patterns",
        "session_learnings",
        "drained_journals",
        "record_keys",
    }
    assert mem.schema_version == am.episodic.SCHEMA_VERSION == 6
    cols = [
        r[0]
        for r in raw(
            mem,
            "SELECT column_name FROM information_schema.columns "
            "WHERE table_name = 'file_interactions' ORDER BY ordinal_position",
        )
    ]
    assert cols == [
        "id",
        "timestamp",
        "session_id",
        "task_id",
        "file_path",
        "operation",
        "line_range",
        "success",
        "context",
        "changes_summary",
    ]


def test_writes_are_batched_and_flushed(clock: list[float]) -> None:
    m = EpisodicMemory(batch_size=3, clock=lambda: clock[0])
    m.record_file_interaction("a.py", "read")
    m.record_file_interaction("a.py", "edit")
    assert raw(m, "SELECT count(*) FROM file_interactions") == [(0,)]
    m.record_tool_execution("pytest")  # third record: the batch is written
    assert raw(m, "SELECT count(*) FROM file_interactions") == [(2,)]
    m.record_file_interaction("b.py", "read")
    assert len(m.file_history("b.py")) == 1  # queries flush first
    m.close()
    m.close()
    with pytest.raises(am.StoreError, match="closed"):
        m.record_file_interaction("a.py", "read")


def test_file_history_newest_first_with_line_ranges(mem: EpisodicMemory, clock: list[float]) -> None:
    for n in range(7):
        clock[0] = NOW + n
        mem.record_file_interaction("src/auth.py", "read", line_range=(n, n + 10), context=f"look {n}")
    mem.record_file_interaction("src/other.py", "edit", changes_summary="rename")
    history = mem.file_history("src/auth.py")
    assert [h.line_range for h in history] == [(6, 16), (5, 15), (4, 14), (3, 13), (2, 12)]
    assert history[0] == FileInteraction(NOW + 6, "s1", None, "src/auth.py", "read", (6, 16), True, "look 6", None)
    assert json.loads(raw(mem, "SELECT line_range FROM file_interactions LIMIT 1")[0][0]) == {"start": 0, "end": 10}
    assert mem.file_history("nope.py") == []


def test_last_interactions_match_a_substring_literally(mem: EpisodicMemory, clock: list[float]) -> None:
    for n, path in enumerate(["src/auth/login.py", "src/api.py", "tests/test_auth.py", "src/100%_auth.py"]):
        clock[0] = NOW + n
        mem.record_file_interaction(path, "read")
    assert [i.file_path for i in mem.last_interactions("auth")] == [
        "src/100%_auth.py",
        "tests/test_auth.py",
        "src/auth/login.py",
    ]
    assert [i.file_path for i in mem.last_interactions("%_")] == ["src/100%_auth.py"]
    assert len(mem.last_interactions("auth", limit=1)) == 1


def edit(m: EpisodicMemory, path: str, task: str, at: float) -> None:
    m.record_file_interaction(path, "edit", task_id=task, timestamp=at)


def test_co_edited_files_on_known_data(mem: EpisodicMemory) -> None:
    # a.py + b.py edited together (<= 300 s apart, same task) in three tasks: 3.
    for k, task in enumerate(["t1", "t2", "t3"]):
        edit(mem, "a.py", task, NOW + k * 1000)
        edit(mem, "b.py", task, NOW + k * 1000 + 299)
    edit(mem, "c.py", "t1", NOW + 301)  # 301 s after a.py: too late; 2 s after b.py: counts once
    edit(mem, "a.py", "t4", NOW)  # different task from b.py's edits
    mem.record_file_interaction("b.py", "read", task_id="t4", timestamp=NOW)  # a read is not an edit
    assert mem.co_edited_files() == [CoEdit("a.py", "b.py", 3)]
    assert mem.co_edited_files(min_count=1) == [CoEdit("a.py", "b.py", 3), CoEdit("b.py", "c.py", 1)]
    assert mem.co_edited_files(min_count=1, within_seconds=1000) == [
        CoEdit("a.py", "b.py", 3),
        CoEdit("a.py", "c.py", 1),
        CoEdit("b.py", "c.py", 1),
    ]


def test_co_edit_patterns_are_learned_incrementally(mem: EpisodicMemory) -> None:
    for k in range(4):
        edit(mem, "api.py", f"t{k}", NOW + k * 1000)
        edit(mem, "auth.py", f"t{k}", NOW + k * 1000 + 60)
        mem.flush()  # one flush per task: each adds to the pattern
    edit(mem, "auth.py", "t9", NOW + 9000)  # auth.py alone: lowers nothing, adds an edit
    [pattern] = mem.patterns("co-edit")
    assert pattern.data == {"files": ["api.py", "auth.py"], "operations": ["edit", "edit"], "within_seconds": 300}
    assert pattern.observed_count == 4
    assert pattern.confidence == pytest.approx(1.0)  # 4 co-edits / 4 edits of api.py
    assert (pattern.first_seen, pattern.last_seen) == (NOW + 60, NOW + 3060)
    assert mem.patterns("co-edit", min_count=5) == []


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["a.py", "b.py", "c.py"]), st.sampled_from(["t1", "t2"]), st.integers(0, 900), st.booleans()
        ),
        max_size=30,
    ),
    st.integers(1, 7),
)
def test_incremental_co_edits_equal_the_full_query(edits: list[tuple[str, str, int, bool]], batch: int) -> None:
    m = EpisodicMemory(batch_size=batch)
    for path, task, at, flush in edits:
        edit(m, path, task, NOW + at)
        if flush:
            m.flush()
    learned = {tuple(p.data["files"]): p.observed_count for p in m.patterns("co-edit")}
    assert learned == {(c.file1, c.file2): c.count for c in m.co_edited_files(min_count=1)}
    m.close()


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["a.py", "b.py", "c.py"]),
            st.sampled_from(["t1", "t2", "t3"]),
            st.integers(0, 900),
            st.sampled_from(["edit", "read", "failed edit", "reopen"]),
        ),
        max_size=30,
    ),
    st.integers(1, 3),
)
def test_co_edits_of_started_tasks_across_reopens(
    tmp_path_factory: Any, steps: list[tuple[str, str, int, str]], batch: int
) -> None:
    # t1 and t2 are started (their files_touched tell which tasks touched one file
    # only, whose edits cannot pair: no query), t3 never is; a reopen reads
    # files_touched back from the file
    path = tmp_path_factory.mktemp("co") / "episodic.duckdb"
    m = EpisodicMemory(path, batch_size=batch)
    m.start_task("t1", "one")
    m.start_task("t2", "two")
    for file, task, at, what in steps:
        if what == "reopen":
            m.close()
            m = EpisodicMemory(path, batch_size=batch)
        else:
            m.record_file_interaction(
                file,
                "edit" if "edit" in what else "read",
                task_id=task,
                timestamp=NOW + at,
                success=what != "failed edit",
            )
    m.flush()
    learned = {tuple(p.data["files"]): p.observed_count for p in m.patterns("co-edit")}
    assert learned == {(c.file1, c.file2): c.count for c in m.co_edited_files(min_count=1)}
    m.close()


def test_error_then_fix_pattern(mem: EpisodicMemory) -> None:
    mem.start_task("t1", "make the tests pass")
    for _ in range(2):
        mem.record_tool_execution(
            "pytest",
            {"args": "-x"},
            success=False,
            file_path="tests/test_app.py",
            error_message="AssertionError: 1 != 2\n  more",
        )
        mem.record_tool_execution("pytest", success=True, file_path="tests/test_app.py")  # no edit in between
        mem.record_tool_execution(
            "pytest", success=False, file_path="tests/test_app.py", error_message="AssertionError: 1 != 2"
        )
        mem.record_file_interaction("tests/test_app.py", "edit")
        mem.record_tool_execution("pytest", success=True, file_path="tests/test_app.py")
    [pattern] = mem.patterns("error-fix")
    assert pattern.data == {
        "tool": "pytest",
        "file": "tests/test_app.py",
        "error": "AssertionError: 1 != 2",
        "fix": "edit",
    }
    assert (pattern.observed_count, pattern.confidence) == (2, pytest.approx(2 / 3))


def test_tool_stats_over_the_last_seven_days(mem: EpisodicMemory) -> None:
    mem.record_tool_execution("bash", {"cmd": "ls"}, success=True, duration_ms=10, timestamp=NOW - 3600)
    mem.record_tool_execution(
        "bash", {"cmd": "false"}, success=False, duration_ms=30, error_message="exit 1", timestamp=NOW - 86_400
    )
    mem.record_tool_execution("edit", {"path": "a.py"}, success=True, timestamp=NOW)
    mem.record_tool_execution("bash", {"cmd": "old"}, success=True, duration_ms=999, timestamp=NOW - 8 * 86_400)
    stats = mem.tool_stats(now=NOW)
    assert stats == [ToolStats("bash", 2, 1, 20.0), ToolStats("edit", 1, 1, None)]
    assert stats[0].success_rate == 0.5
    assert mem.tool_stats(days=30, now=NOW)[0].total == 3
    params = raw(mem, "SELECT parameters FROM tool_executions ORDER BY id LIMIT 1")[0][0]
    assert json.loads(params) == {"cmd": "ls"}


def test_task_lifecycle_and_usage(mem: EpisodicMemory, clock: list[float]) -> None:
    mem.start_task("t1", "fix login", intent="ProjectFixing")
    mem.record_file_interaction("auth.py", "read")
    mem.record_file_interaction("auth.py", "edit")
    mem.record_file_interaction("views.py", "viewed", line_range=(1, 9))  # pruned view: not "touched"
    mem.record_tool_execution("read_file")
    mem.record_tool_execution("read_file")
    mem.record_tool_execution("edit_file")
    clock[0] = NOW + 10
    mem.start_task("t2", "add caching")
    mem.pause_task("t2")
    clock[0] = NOW + 20
    mem.start_task("t3", "write docs")
    assert [t.task_id for t in mem.open_tasks()] == ["t3", "t2", "t1"]
    assert [t.status for t in mem.open_tasks()] == ["active", "paused", "active"]
    t1 = mem.task("t1")
    assert (t1.files_touched, t1.tools_used, t1.intent) == (
        ["auth.py"],
        {"read_file": 2, "edit_file": 1},
        "ProjectFixing",
    )
    clock[0] = NOW + 30
    mem.complete_task("t1", "patched the session check")
    t1 = mem.task("t1")
    assert (t1.status, t1.outcome, t1.completed_at) == ("completed", "patched the session check", NOW + 30)
    mem.resume_task("t2")
    assert mem.current_task_id == "t2"
    mem.fail_task("t2", "no cache backend")
    assert [t.task_id for t in mem.open_tasks()] == ["t3"]
    with pytest.raises(TaskStateError, match="completed"):
        mem.pause_task("t1")
    with pytest.raises(TaskStateError, match="already exists"):
        mem.start_task("t1", "again")
    with pytest.raises(am.UnknownTaskError):
        mem.complete_task("ghost")
    with pytest.raises(am.InvalidInputError, match="intent"):
        mem.start_task("t9", "x", intent="Chatting")


def test_usage_of_an_earlier_session_task_is_kept(tmp_path: Path, clock: list[float]) -> None:
    path = tmp_path / "memory.duckdb"
    with EpisodicMemory(path, session_id="s1", clock=lambda: clock[0]) as first:
        first.start_task("t1", "refactor parser")
        first.record_tool_execution("grep")
        first.record_file_interaction("parser.py", "edit")
        first.pause_task("t1")
    with EpisodicMemory(path, session_id="s2", clock=lambda: clock[0]) as second:
        second.resume_task("t1")
        second.record_tool_execution("grep")
        second.record_file_interaction("lexer.py", "edit")
        t1 = second.task("t1")
        assert (t1.files_touched, t1.tools_used) == (["parser.py", "lexer.py"], {"grep": 2})
        assert t1.session_id == "s1"


def test_similar_tasks_rank_lexically(mem: EpisodicMemory) -> None:
    tasks = {
        "t1": ("Fix login failure for admin users", "session cookie was not refreshed in auth.py"),
        "t2": ("Add caching to the search endpoint", "redis cache with 60 s TTL"),
        "t3": ("Speed up CSV export", "streamed rows"),
        "t4": ("Login page shows a blank screen", "missing template variable"),
    }
    for task_id, (description, outcome) in tasks.items():
        mem.start_task(task_id, description)
        mem.complete_task(task_id, outcome)
    found = mem.find_similar_tasks("admin cannot login: session expires", limit=3)
    assert [t.task_id for t in found] == ["t1", "t4"]
    assert found[0].description == tasks["t1"][0] and found[0].outcome == tasks["t1"][1]
    assert found[0].score > found[1].score > 0
    assert mem.find_similar_tasks("cache the searchEndpoint")[0].task_id == "t2"  # identifiers are split
    assert mem.find_similar_tasks("") == [] and mem.find_similar_tasks("the a of") == []
    mem.start_task("t5", "login admin session cookie")  # the current task is not "past work"
    assert "t5" not in [t.task_id for t in mem.find_similar_tasks("login admin session")]


def test_similar_tasks_match_word_forms_with_bm25_scores(mem: EpisodicMemory) -> None:
    # Words are stemmed: "fixing logins" is "fix login", as "fix the login" is.
    mem.start_task("t2", "speed up export")
    mem.complete_task("t2")
    mem.start_task("t1", "fix the login")
    mem.complete_task("t1")
    mem.record_file_interaction("auth.py", "edit", task_id="t1")
    mem.record_tool_execution("pytest", {}, success=True, task_id="t1")
    found = mem.find_similar_tasks("fixing logins")
    # BM25, k1 = 1.2, b = 0.75: N = 2 tasks, "fix" and "login" each in one (idf = ln 2),
    # t1 has 2 terms (fix, login), t2 3 (speed, up, export): mean length 2.5.
    per_term = math.log(2) * 2.2 / (1 + 1.2 * (1 - 0.75 + 0.75 * 2 / 2.5))
    assert [dataclasses.replace(t, score=pytest.approx(t.score)) for t in found] == [
        Task("t1", "s1", "fix the login", None, "completed", NOW, NOW, ["auth.py"], {"pytest": 1}, None, 2 * per_term)
    ]
    assert found[0].score == pytest.approx(2 * per_term, rel=1e-12)
    assert [t.task_id for t in mem.find_similar_tasks("exporting speedily")] == ["t2"]


def test_similar_tasks_follow_every_change_of_the_tasks(mem: EpisodicMemory) -> None:
    def found(text: str) -> list[tuple[str, str | None, str]]:
        return [(t.task_id, t.outcome, t.status) for t in mem.find_similar_tasks(text)]

    mem.start_task("t1", "tune the cache")
    assert found("cache") == []  # the current task is not past work
    mem.pause_task("t1")
    assert found("cache") == [("t1", None, "paused")]
    mem.resume_task("t1")
    assert found("cache") == []
    mem.complete_task("t1", "warmed on deploy")
    assert found("cache") == [("t1", "warmed on deploy", "completed")]
    assert found("deploying") == [("t1", "warmed on deploy", "completed")]
    mem.start_task("t2", "deploy script")
    mem.fail_task("t2", "deploys time out")
    assert found("deploying") == [("t2", "deploys time out", "failed"), ("t1", "warmed on deploy", "completed")]


def test_similar_tasks_equal_scores_go_by_task_id(mem: EpisodicMemory) -> None:
    for task_id in ("b", "c", "a"):
        mem.start_task(task_id, "migrate the billing tables")
        mem.complete_task(task_id)
    found = mem.find_similar_tasks("billing migration", limit=2)
    assert [t.task_id for t in found] == ["a", "b"] and found[0].score == found[1].score > 0


def test_snapshots_and_learnings(mem: EpisodicMemory) -> None:
    snap = {
        "timestamp": NOW,
        "session_id": "s1",
        "task_id": "t1",
        "total_tokens": 120,
        "item_count": 1,
        "items": [{"id": "x", "type": "UserMessage", "tokens": 120, "relevance": 1.5, "age_minutes": 0}],
        "pruned_items": [{"id": "y", "type": "ToolResult", "tokens": 40, "relevance": 0.1}],
        "reason": "pruning",
    }
    mem.store_snapshot(snap)
    assert mem.snapshots() == [snap]
    mem.record_learning("file_purpose", {"file": "auth.py", "purpose": "sessions"}, 0.9)
    assert mem.learnings("file_purpose") == [
        {
            "session_id": "s1",
            "learning_type": "file_purpose",
            "data": {"file": "auth.py", "purpose": "sessions"},
            "confidence": pytest.approx(0.9),
        }
    ]
    assert mem.learnings("workflow") == []


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda m: m.record_file_interaction("a.py", "delete"), "operation"),
        (lambda m: m.record_file_interaction("a.py", "read", line_range=(5, 2)), "line_range"),
        (lambda m: m.record_file_interaction("a.py", "read", line_range=(-1, 2)), "line_range"),
        (lambda m: m.record_file_interaction("", "read"), "file_path"),
        (lambda m: m.record_file_interaction("a.py", "read", timestamp=float("nan")), "timestamp"),
        (lambda m: m.record_tool_execution("bash", {"x": object()}), "parameters"),
        (lambda m: m.record_tool_execution("bash", {"x": float("nan")}), "parameters"),
        (lambda m: m.record_tool_execution("bash", duration_ms=-5), "duration_ms"),
        (lambda m: m.record_tool_execution(""), "tool_name"),
        (lambda m: m.record_learning("workflow", {}, 1.5), "confidence"),
        (lambda m: m.store_snapshot({"timestamp": NOW}), "snapshot lacks"),
    ],
)
def test_bad_records_raise_and_store_nothing(mem: EpisodicMemory, call: Any, message: str) -> None:
    mem.record_file_interaction("kept.py", "read")
    with pytest.raises(am.InvalidInputError, match=message):
        call(mem)
    assert mem.counts()["file_interactions"] == 1 and mem.counts()["tool_executions"] == 0


def v1_store(path: Path) -> None:
    """A store as the first release wrote it, with one row per table that has data."""
    con = duckdb.connect(str(path))
    for statement in episodic._MIGRATIONS[1]:
        con.execute(statement)
    con.execute("UPDATE schema_meta SET version = 1")
    con.execute(
        "INSERT INTO file_interactions (timestamp, session_id, file_path, operation, success) "
        "VALUES (TIMESTAMP '2026-01-01 10:00:00', 'old', 'legacy.py', 'edit', true)"
    )
    con.execute(
        "INSERT INTO learned_patterns (pattern_type, pattern_data, confidence, observed_count, first_seen, "
        "last_seen) VALUES ('refactor', '{}', 0.5, 2, now(), now())"
    )
    con.close()


def test_an_older_store_is_migrated_and_keeps_its_rows(tmp_path: Path) -> None:
    path = tmp_path / "memory.duckdb"
    v1_store(path)
    with EpisodicMemory(path) as m:
        assert m.schema_version == 6
        [old] = m.file_history("legacy.py")
        assert (old.session_id, old.operation) == ("old", "edit")
        assert [p.pattern_type for p in m.patterns()] == ["refactor"]
        m.record_learning("workflow", {"steps": 3}, 0.5)  # the v2 column works
    with EpisodicMemory(path) as again:
        assert again.schema_version == 6 and again.counts()["session_learnings"] == 1


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_newer_store_is_refused_and_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "memory.duckdb"
    with EpisodicMemory(path) as m:
        m.record_file_interaction("a.py", "read")
    con = duckdb.connect(str(path))
    con.execute("UPDATE schema_meta SET version = 99")
    con.close()
    before = digest(path)
    with pytest.raises(am.SchemaVersionError, match="version 99"):
        EpisodicMemory(path)
    assert digest(path) == before


def test_a_corrupt_store_is_a_clear_error_and_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "memory.duckdb"
    path.write_bytes(b"\x00garbage" * 1000)
    before = digest(path)
    with pytest.raises(am.StoreCorruptError, match="not a DuckDB database"):
        EpisodicMemory(path)
    assert digest(path) == before


def test_a_store_locked_by_another_process(tmp_path: Path) -> None:
    path = tmp_path / "memory.duckdb"
    script = textwrap.dedent(f"""
        import sys
        from aircher_mem.engine import EpisodicMemory
        m = EpisodicMemory({str(path)!r}, session_id="holder")
        m.record_file_interaction("held.py", "edit")
        m.flush()
        print("ready", flush=True)
        sys.stdin.readline()
        m.close()
    """)
    with subprocess.Popen(
        [sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    ) as holder:
        assert holder.stdin is not None and holder.stdout is not None
        try:
            assert holder.stdout.readline().strip() == "ready"
            with pytest.raises(am.StoreLockedError, match="another process"):
                EpisodicMemory(path)
        finally:
            holder.stdin.write("\n")
            holder.stdin.flush()
            holder.wait(timeout=30)
    with EpisodicMemory(path) as m:  # nothing the holder stored was lost
        assert [h.session_id for h in m.file_history("held.py")] == ["holder"]


@pytest.mark.slow
def test_buffered_records_are_written_at_exit(tmp_path: Path) -> None:
    path = tmp_path / "memory.duckdb"
    subprocess.run(
        [
            sys.executable,
            "-c",
            textwrap.dedent(f"""
        from aircher_mem.engine import EpisodicMemory
        m = EpisodicMemory({str(path)!r})
        m.record_file_interaction("exit.py", "read")   # never flushed or closed by hand
    """),
        ],
        check=True,
    )
    with EpisodicMemory(path) as m:
        assert len(m.file_history("exit.py")) == 1


def test_context_manager_wiring(clock: list[float]) -> None:
    store = EpisodicMemory(session_id="s1", clock=lambda: clock[0])
    store.start_task("old", "fix the login redirect loop")
    store.complete_task("old", "cleared the stale session in auth.py")
    ctx = DynamicContextManager(am.Policy(max_tokens=400), session_id="s1", episodic=store, clock=lambda: clock[0])
    ctx.add_system_prompt("You are an agent.")
    ctx.set_current_task("t1", "login loops forever")
    messages = ctx.prepare_context("Why does login redirect forever?")
    # no context provider: the window adds the message alone (Memory wires in assemble)
    assert messages[-1] == {"role": "user", "content": "Why does login redirect forever?"}
    for n in range(6):
        clock[0] += 600
        ctx.add_code_snippet("x = 1\n" * 40, file_path="auth.py", line_range=(10 * n + 1, 10 * n + 40))
        ctx.maybe_prune()
    viewed = [h for h in store.file_history("auth.py", limit=20) if h.operation == "viewed"]
    assert viewed and all(h.session_id == "s1" and h.task_id == "t1" for h in viewed)
    assert {h.line_range for h in viewed} <= {(10 * n + 1, 10 * n + 40) for n in range(6)}
    reasons = [s["reason"] for s in store.snapshots(limit=50)]
    assert reasons.count("pruning") == ctx.window.pruning_count > 0 and "task_switch" in reasons
    store.close()


def test_the_migration_registry_versions_each_component(tmp_path: Path) -> None:
    path = tmp_path / "memory.duckdb"
    with EpisodicMemory(path) as m:
        m.record_file_interaction("a.py", "read")
    con = duckdb.connect(str(path))
    assert con.execute("SELECT component, version FROM schema_versions").fetchall() == [("episodic", 6)]
    assert con.execute("SELECT version FROM schema_meta").fetchall() == [(6,)]  # what older releases read
    con.execute("DROP TABLE schema_versions")  # a store written before the registry
    con.close()
    with EpisodicMemory(path) as m:
        assert m.schema_version == 6 and len(m.file_history("a.py")) == 1
    con = duckdb.connect(str(path))
    con.execute("UPDATE schema_versions SET version = 7")
    con.close()
    with pytest.raises(am.SchemaVersionError, match="episodic schema version 7"):
        EpisodicMemory(path)


# -- one bad record never poisons the store -------------------------------------------


def nested(depth: int, leaf: Any = 1) -> Any:
    """A list ``depth`` levels deep, built without recursion."""
    value = leaf
    for _ in range(depth):
        value = [value]
    return value


DEEP = nested(100_000)


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda m: m.record_tool_execution("bash", duration_ms=2**63), "duration_ms"),
        (lambda m: m.record_tool_execution("bash", context_tokens=2**63), "context_tokens"),
        (lambda m: m.record_tool_execution("bash", duration_ms=1.5), "duration_ms"),
        (lambda m: m.record_tool_execution("bash", timestamp=1e13), "timestamp"),
        (lambda m: m.record_tool_execution("bash", timestamp=-1e12), "timestamp"),
        (lambda m: m.record_tool_execution("bash", timestamp=float("inf")), "timestamp"),
        (lambda m: m.record_tool_execution("ba\ud800sh"), "tool_name"),
        (lambda m: m.record_tool_execution("bash", {"cmd": "ls \udfff"}), "parameters"),
        (lambda m: m.record_tool_execution("bash", {"\ud800": 1}), "parameters"),
        (lambda m: m.record_tool_execution("bash", result={"out": ["\ud800"]}), "result"),
        (lambda m: m.record_tool_execution("bash", success=False, error_message="no \ud800"), "error_message"),
        (lambda m: m.record_tool_execution("bash", {"x": float("inf")}), "parameters"),
        (lambda m: m.record_tool_execution("bash", result=float("nan")), "result"),
        (lambda m: m.record_tool_execution("bash", {"deep": DEEP}), "parameters"),
        (lambda m: m.record_tool_execution("bash", result=nested(65)), "result"),
        (lambda m: m.record_tool_execution("bash", {"x": {1, 2}}), "parameters"),
        (lambda m: m.record_tool_execution("bash", {("a", "b"): 1}), "parameters"),
        (lambda m: m.record_tool_execution("bash", ["not", "a", "mapping"]), "parameters"),  # type: ignore[arg-type]
        (lambda m: m.record_tool_execution("bash", success="yes"), "success"),
        (lambda m: m.record_tool_execution("bash", task_id="t\ud800"), "task_id"),
        (lambda m: m.record_file_interaction("a\ud800.py", "read"), "file_path"),
        (lambda m: m.record_file_interaction("a.py", "read", context="\ud800"), "context"),
        (lambda m: m.record_file_interaction("a.py", "edit", changes_summary="\udc80"), "changes_summary"),
        (lambda m: m.record_file_interaction("a.py", "read", line_range=(0, 2**63)), "line_range"),
        (lambda m: m.record_file_interaction("a.py", "read", line_range=(1,)), "line_range"),
        (lambda m: m.record_file_interaction("a.py", "read", session_id="\ud800"), "session_id"),
        (lambda m: m.record_file_interaction("a.py", ["read"]), "operation"),
        (
            lambda m: m.store_snapshot(
                {"timestamp": 1e13, "session_id": "s", "items": [], "total_tokens": 0, "reason": "r"}
            ),
            "timestamp",
        ),
        (
            lambda m: m.store_snapshot(
                {"timestamp": NOW, "session_id": "s", "items": None, "total_tokens": 0, "reason": "r"}
            ),
            "items",
        ),
        (
            lambda m: m.store_snapshot(
                {"timestamp": NOW, "session_id": "s", "items": [], "total_tokens": None, "reason": "r"}
            ),
            "total_tokens",
        ),
        (
            lambda m: m.store_snapshot(
                {"timestamp": NOW, "session_id": "s", "items": [], "total_tokens": 2**63, "reason": "r"}
            ),
            "total_tokens",
        ),
        (
            lambda m: m.store_snapshot(
                {"timestamp": NOW, "session_id": "s", "items": [DEEP], "total_tokens": 1, "reason": "r"}
            ),
            "items",
        ),
        (
            lambda m: m.store_snapshot(
                {"timestamp": NOW, "session_id": 5, "items": [], "total_tokens": 1, "reason": "r"}
            ),
            "session_id",
        ),
        (lambda m: m.store_snapshot(["not a mapping"]), "snapshot"),
        (lambda m: m.record_learning("workflow", {"x": "\ud800"}, 0.5), "data"),
        (lambda m: m.record_learning("workflow", {"x": 1}, float("nan")), "confidence"),
        (lambda m: m.record_learning("workflow", {"x": 1}, True), "confidence"),
        (lambda m: m.record_learning("workflow", [1], 0.5), "data"),
    ],
)
def test_a_value_the_store_cannot_hold_is_refused_at_the_call(
    tmp_path: Path, clock: list[float], call: Any, field: str
) -> None:
    path = tmp_path / "memory.duckdb"
    m = EpisodicMemory(path, session_id="s1", clock=lambda: clock[0], batch_size=2)
    m.record_file_interaction("before.py", "read")
    with pytest.raises(am.InvalidInputError, match=field):
        call(m)
    m.record_tool_execution("after", {"ok": True}, duration_ms=2**31, context_tokens=2**40)
    m.record_file_interaction("after.py", "edit")
    m.close()  # never fails because of the refused record
    with EpisodicMemory(path) as again:
        counts = again.counts()
        assert (counts["file_interactions"], counts["tool_executions"]) == (2, 1)
        assert counts["context_snapshots"] == counts["session_learnings"] == 0
        assert raw(again, "SELECT duration_ms, context_tokens FROM tool_executions") == [(2**31, 2**40)]


def test_wide_durations_and_token_counts_are_stored(mem: EpisodicMemory) -> None:
    big = 2**63 - 1
    mem.record_tool_execution("slow", duration_ms=big, context_tokens=big)
    mem.store_snapshot({"timestamp": NOW, "session_id": "s1", "items": [], "total_tokens": big, "reason": "r"})
    assert mem.snapshots()[0]["total_tokens"] == big
    assert raw(mem, "SELECT duration_ms, context_tokens FROM tool_executions") == [(big, big)]
    assert mem.tool_stats(now=NOW)[0].avg_duration_ms == pytest.approx(float(big))


def v2_store(path: Path) -> None:
    con = duckdb.connect(str(path))
    for step in (1, 2):
        for statement in episodic._MIGRATIONS[step]:
            con.execute(statement)
    con.execute("UPDATE schema_meta SET version = 2")
    con.execute("CREATE TABLE schema_versions (component VARCHAR PRIMARY KEY, version INTEGER NOT NULL)")
    con.execute("INSERT INTO schema_versions VALUES ('episodic', 2)")
    con.execute(
        "INSERT INTO tool_executions (timestamp, session_id, tool_name, parameters, success, duration_ms, "
        "context_tokens) VALUES (TIMESTAMP '2026-01-01 10:00:00', 'old', 'pytest', '{}', true, 1500, 2000)"
    )
    con.execute(
        "INSERT INTO context_snapshots (timestamp, session_id, context_items, total_tokens, reason) "
        "VALUES (TIMESTAMP '2026-01-01 10:00:00', 'old', '[]', 300, 'pruning')"
    )
    con.close()


def test_step_3_widens_durations_and_token_counts(tmp_path: Path) -> None:
    path = tmp_path / "memory.duckdb"
    v2_store(path)
    with EpisodicMemory(path) as m:
        assert m.schema_version == 6
        types = dict(
            raw(
                m,
                "SELECT table_name || '.' || column_name, data_type FROM information_schema.columns "
                "WHERE column_name IN ('duration_ms', 'context_tokens', 'total_tokens')",
            )
        )
        assert types == {
            "tool_executions.duration_ms": "BIGINT",
            "tool_executions.context_tokens": "BIGINT",
            "context_snapshots.total_tokens": "BIGINT",
        }
        assert raw(m, "SELECT duration_ms, context_tokens FROM tool_executions") == [(1500, 2000)]
        assert [s["total_tokens"] for s in m.snapshots()] == [300]
        m.record_tool_execution("long", duration_ms=2**40)
    with EpisodicMemory(path) as again:
        assert sorted(r[0] for r in raw(again, "SELECT duration_ms FROM tool_executions")) == [1500, 2**40]


def test_a_row_duckdb_refuses_is_dropped_with_a_warning_and_the_rest_written(
    mem: EpisodicMemory, caplog: pytest.LogCaptureFixture
) -> None:
    """Defence in depth: should a row get past the checks at the call, the flush
    finds it, drops it, and keeps every other row (of every table)."""
    for i in range(7):
        mem.record_tool_execution(f"tool{i}", {"i": i})
        mem.record_file_interaction(f"f{i}.py", "read")
    bad = list(mem._pending["tool_executions"][3])
    bad[8] = 2**63  # past BIGINT
    mem._pending["tool_executions"].insert(3, tuple(bad))
    mem._pending["tool_executions"].append(tuple(bad))
    mem._pending_rows += 2
    with caplog.at_level("WARNING", logger="aircher_mem.episodic"):
        mem.flush()
    assert [r[0] for r in raw(mem, "SELECT tool_name FROM tool_executions ORDER BY id")] == [
        f"tool{i}" for i in range(7)
    ]
    assert mem.counts()["file_interactions"] == 7 and mem._pending_rows == 0
    warnings = [r for r in caplog.records if r.name == "aircher_mem.episodic"]
    assert len(warnings) == 2 and all(r.levelname == "WARNING" for r in warnings)
    assert all(
        r.getMessage().startswith(f"dropped a tool_executions record that {mem.path} cannot store: ") for r in warnings
    )
    mem.record_tool_execution("later")
    assert mem.counts()["tool_executions"] == 8


def test_an_io_failure_keeps_the_records(mem: EpisodicMemory) -> None:
    """Only an error about a value makes the flush drop rows; anything else keeps
    them all buffered and raises StoreError."""
    mem.record_file_interaction("kept.py", "read")
    mem._con.execute("DROP TABLE file_interactions")  # any failure that is not about a row
    with pytest.raises(am.StoreError, match="the records are kept in memory"):
        mem.flush()
    assert len(mem._pending["file_interactions"]) == 1 and mem._pending_rows == 1
    mem._pending["file_interactions"].clear()
    mem._pending_rows = 0


def test_a_bad_buffered_row_at_exit_is_logged_not_a_traceback(tmp_path: Path) -> None:
    path = tmp_path / "memory.duckdb"
    script = textwrap.dedent(f"""
        from aircher_mem.engine import EpisodicMemory
        m = EpisodicMemory({str(path)!r})
        m.record_file_interaction("exit.py", "read")
        m.record_tool_execution("bash")
        bad = list(m._pending["tool_executions"][0]); bad[8] = 2**63
        m._pending["tool_executions"].append(tuple(bad)); m._pending_rows += 1
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert "Traceback" not in done.stderr
    with EpisodicMemory(path) as m:
        assert m.counts()["file_interactions"] == 1 and m.counts()["tool_executions"] == 1


# Random mixes of valid and invalid records through every record_* method.

_text = st.text(st.characters(exclude_categories=("Cs",)), max_size=12)
# A name, id or required text: not blank (whitespace alone is refused like "").
_name = st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=12).filter(str.strip)
_json_value = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | _text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3),
    max_leaves=8,
)
_bigint = st.integers(min_value=0, max_value=2**63 - 1)
_time = st.floats(min_value=MIN_TIME, max_value=MAX_TIME)
_surrogate = st.sampled_from(["\ud800", "a\udfff", "\udc80x"])
_bad_time = st.sampled_from([float("nan"), float("inf"), -float("inf"), 1e13, -1e12, 2**70, "now", True])
_bad_count = st.sampled_from([-1, 2**63, 2**70, 1.5, True, "3"])
_bad_json = st.sampled_from(
    [float("nan"), float("inf"), object(), {1, 2}, b"bytes", nested(65), DEEP, {"k": "\ud800"}, {("a",): 1}]
)

VALID: dict[str, dict[str, Any]] = {
    "tool": {
        "tool_name": _name,
        "parameters": st.none() | st.dictionaries(_text, _json_value, max_size=3),
        "result": _json_value,
        "success": st.booleans(),
        "error_message": st.none() | _text,
        "duration_ms": st.none() | _bigint,
        "context_tokens": st.none() | _bigint,
        "file_path": st.none() | _name,
        "task_id": st.none() | _name,
        "timestamp": st.none() | _time,
    },
    "file": {
        "file_path": _name,
        "operation": st.sampled_from(episodic.OPERATIONS),
        "line_range": st.none() | st.lists(_bigint, min_size=2, max_size=2).map(lambda p: (min(p), max(p))),
        "success": st.booleans(),
        "context": st.none() | _text,
        "changes_summary": st.none() | _text,
        "task_id": st.none() | _name,
        "session_id": st.none() | _name,
        "timestamp": st.none() | _time,
    },
    "snapshot": {
        "timestamp": _time,
        "session_id": _name,
        "task_id": st.none() | _name,
        "items": st.lists(_json_value, max_size=3),
        "total_tokens": _bigint,
        "pruned_items": st.none() | st.lists(_json_value, max_size=3),
        "reason": _name,
    },
    "learning": {
        "learning_type": _name,
        "data": st.dictionaries(_text, _json_value, max_size=3),
        "confidence": st.floats(min_value=0.0, max_value=1.0),
    },
}
INVALID: dict[str, dict[str, Any]] = {
    "tool": {
        "tool_name": st.sampled_from(["", " \t", None, 5]) | _surrogate,
        "parameters": _bad_json.map(lambda v: {"v": v}) | st.sampled_from([[1], "x"]),
        "result": _bad_json,
        "success": st.sampled_from([None, "yes", 1]),
        "error_message": _surrogate | st.just(5),
        "duration_ms": _bad_count,
        "context_tokens": _bad_count,
        "file_path": _surrogate | st.just(5),
        "task_id": _surrogate | st.sampled_from(["", 7]),
        "timestamp": _bad_time,
    },
    "file": {
        "file_path": _surrogate | st.sampled_from(["", "\r", None]),
        "operation": st.sampled_from(["delete", None, ["read"], ""]),
        "line_range": st.sampled_from([(5, 2), (-1, 2), (0, 2**63), (1,), "1-2", (1.0, 2.0), (True, 2)]),
        "success": st.sampled_from([None, "no"]),
        "context": _surrogate | st.just(5),
        "changes_summary": _surrogate | st.just(b"x"),
        "task_id": _surrogate | st.just(""),
        "session_id": _surrogate | st.sampled_from(["", 3]),
        "timestamp": _bad_time,
    },
    "snapshot": {
        "timestamp": _bad_time,
        "session_id": _surrogate | st.sampled_from(["", None, 5]),
        "task_id": _surrogate | st.just(5),
        "items": _bad_json | st.none() | _bad_json.map(lambda v: [v]),
        "total_tokens": _bad_count | st.none(),
        "pruned_items": _bad_json.map(lambda v: [v]),
        "reason": _surrogate | st.sampled_from(["", "  ", None]),
    },
    "learning": {
        "learning_type": _surrogate | st.sampled_from(["", "\n", None]),
        "data": _bad_json.map(lambda v: {"v": v}) | st.sampled_from([[1], None]),
        "confidence": st.sampled_from([float("nan"), float("inf"), 1.5, -0.1, "high", True, None]),
    },
}


@st.composite
def records(draw: st.DrawFn) -> tuple[str, dict[str, Any], str | None]:
    kind = draw(st.sampled_from(sorted(VALID)))
    fields = {name: draw(strategy) for name, strategy in VALID[kind].items()}
    broken = draw(st.none() | st.sampled_from(sorted(INVALID[kind])))
    if broken is not None:
        fields[broken] = draw(INVALID[kind][broken])
    return kind, fields, broken


def record(m: EpisodicMemory, kind: str, f: dict[str, Any]) -> None:
    if kind == "tool":
        m.record_tool_execution(f.pop("tool_name"), f.pop("parameters"), **f)
    elif kind == "file":
        m.record_file_interaction(f.pop("file_path"), f.pop("operation"), **f)
    elif kind == "snapshot":
        m.store_snapshot(f)
    else:
        m.record_learning(f["learning_type"], f["data"], f["confidence"])


def plain(value: Any) -> Any:
    """What JSON gives back for ``value`` (tuples are lists, keys strings)."""
    return json.loads(json.dumps(value))


def nul_free(value: Any) -> Any:
    """``value`` with every NUL character in its texts as U+FFFD, as the store keeps them."""
    if isinstance(value, str):
        return value.replace("\x00", "\ufffd")
    if isinstance(value, (list, tuple)):
        return type(value)(nul_free(v) for v in value)
    if isinstance(value, dict):
        return {nul_free(k): nul_free(v) for k, v in value.items()}
    return value


def expected_row(kind: str, f: dict[str, Any], now: float) -> tuple[Any, ...]:
    """What the store keeps of a record (see nul_free)."""
    return nul_free(_expected_row(kind, nul_free(f), now))  # type: ignore[no-any-return]


def _expected_row(kind: str, f: dict[str, Any], now: float) -> tuple[Any, ...]:
    def micros(t: float | None) -> int:
        return round((now if t is None else t) * 1_000_000)

    # What the store keeps: secrets redacted, PII tagged (see aircher_mem.redact).
    def text(value: str | None) -> str | None:
        return None if value is None else redact(value)

    if kind == "tool":
        given = dict(f["parameters"] or {})
        if f["file_path"] is not None:
            given.setdefault("file_path", f["file_path"])
        params = redact_value(given)
        result, error = redact_value(f["result"]), text(f["error_message"])
        if pii_tags([params, result, error]):
            params["_pii"] = pii_tags([params, result, error])
        return (
            micros(f["timestamp"]),
            "s1",
            f["task_id"],
            f["tool_name"],
            plain(params),
            plain(result),
            f["success"],
            error,
            f["duration_ms"],
            f["context_tokens"],
        )
    if kind == "file":
        span = None if f["line_range"] is None else {"start": f["line_range"][0], "end": f["line_range"][1]}
        return (
            micros(f["timestamp"]),
            f["session_id"] or "s1",
            f["task_id"],
            f["file_path"],
            f["operation"],
            span,
            f["success"],
            text(f["context"]),
            text(f["changes_summary"]),
        )
    if kind == "snapshot":
        return (
            micros(f["timestamp"]),
            f["session_id"],
            f["task_id"],
            plain(redact_value(f["items"])),
            f["total_tokens"],
            plain(redact_value(f["pruned_items"])),
            f["reason"],
        )
    data = redact_value(dict(f["data"]))
    if pii_tags(data):
        data["_pii"] = pii_tags(data)
    return ("s1", f["learning_type"], plain(data), pytest.approx(f["confidence"], rel=1e-6, abs=1e-30))


STORED_SQL = {
    "tool": "SELECT epoch_us(timestamp), session_id, task_id, tool_name, parameters, result, success, error_message, "
    "duration_ms, context_tokens FROM tool_executions ORDER BY id",
    "file": "SELECT epoch_us(timestamp), session_id, task_id, file_path, operation, line_range, success, context, "
    "changes_summary FROM file_interactions ORDER BY id",
    "snapshot": "SELECT epoch_us(timestamp), session_id, task_id, context_items, total_tokens, pruned_items, reason "
    "FROM context_snapshots ORDER BY id",
    "learning": "SELECT session_id, learning_type, data, confidence FROM session_learnings ORDER BY id",
}
JSON_COLUMNS = {"tool": (4, 5), "file": (5,), "snapshot": (3, 5), "learning": (2,)}


@pytest.mark.slow
@settings(max_examples=120, deadline=None)
@given(calls=st.lists(records(), max_size=12), batch=st.integers(min_value=1, max_value=5))
def test_valid_records_are_stored_and_invalid_ones_refused(
    calls: list[tuple[str, dict[str, Any], str | None]], batch: int
) -> None:
    m = EpisodicMemory(session_id="s1", batch_size=batch, clock=lambda: NOW)
    expected: dict[str, list[tuple[Any, ...]]] = {kind: [] for kind in STORED_SQL}
    try:
        for kind, fields, broken in calls:
            if broken is None:
                expected[kind].append(expected_row(kind, fields, NOW))
                record(m, kind, dict(fields))
            else:
                with pytest.raises(am.InvalidInputError):
                    record(m, kind, dict(fields))
        m.flush()
        for kind, sql in STORED_SQL.items():
            rows = [list(r) for r in raw(m, sql)]
            for row in rows:
                for i in JSON_COLUMNS[kind]:
                    row[i] = None if row[i] is None else json.loads(row[i])
            assert [tuple(r) for r in rows] == expected[kind]
    finally:
        m.close()


# -- hostile arguments: only AircherError ----------------------------------------------

HOSTILE: list[Any] = [
    float("nan"),
    float("inf"),
    -float("inf"),
    1e308,
    -0.0,
    2**70,
    -(2**70),
    2**63,
    -1,
    0,
    True,
    None,
    "",
    "\ud800",
    "\x00",
    "a\x00b",
    "x" * 10_000_000,
    b"bytes",
    object(),
    [],
    {},
    {"k": float("nan")},
    nested(65),
    DEEP,
    {1, 2},
]
_hostile = st.sampled_from(HOSTILE)

# method -> (positional arguments, keyword arguments), all valid.
CALLS: dict[str, tuple[list[Any], dict[str, Any]]] = {
    "record_tool_execution": (
        ["bash", {"cmd": "ls"}],
        {
            "result": {"ok": 1},
            "success": False,
            "error_message": "boom",
            "duration_ms": 5,
            "context_tokens": 9,
            "file_path": "a.py",
            "task_id": None,
            "timestamp": NOW,
        },
    ),
    "record_file_interaction": (
        ["a.py", "edit"],
        {
            "line_range": (1, 2),
            "success": True,
            "context": "c",
            "changes_summary": "s",
            "task_id": None,
            "session_id": "s1",
            "timestamp": NOW,
        },
    ),
    "store_snapshot": (
        [{"timestamp": NOW, "session_id": "s1", "items": [], "total_tokens": 1, "reason": "r"}],
        {},
    ),
    "record_learning": (["workflow", {"steps": 1}, 0.5], {}),
    "start_task": (["t-new", "do a thing"], {"intent": "CodeWriting"}),
    "pause_task": (["t1"], {}),
    "resume_task": (["t1"], {}),
    "complete_task": (["t1"], {"outcome": "done"}),
    "fail_task": (["t1"], {"outcome": "no"}),
    "file_history": (["a.py"], {"limit": 5}),
    "failed_tool_runs": (["a.py"], {"limit": 5}),
    "last_interactions": (["a"], {"limit": 5}),
    "co_edited_files": ([], {"min_count": 1, "within_seconds": 300}),
    "tool_stats": ([], {"days": 7.0, "now": NOW}),
    "task": (["t1"], {}),
    "open_tasks": ([], {}),
    "find_similar_tasks": (["fix the login"], {"limit": 3}),
    "patterns": ([], {"pattern_type": "co-edit", "min_count": 1}),
    "snapshots": ([], {"limit": 5}),
    "learnings": ([], {"learning_type": "workflow"}),
    "counts": ([], {}),
    "flush": ([], {}),
}


@st.composite
def hostile_calls(draw: st.DrawFn) -> tuple[str, list[Any], dict[str, Any]]:
    name = draw(st.sampled_from(sorted(CALLS)))
    args, kwargs = list(CALLS[name][0]), dict(CALLS[name][1])
    slots = [("arg", i) for i in range(len(args))] + [("kw", k) for k in kwargs]
    if slots:
        for kind, slot in draw(st.lists(st.sampled_from(slots), min_size=1, max_size=2, unique=True)):
            value = draw(_hostile | _hostile.map(lambda v: {"nested": v}) | _hostile.map(lambda v: [v]))
            if kind == "arg":
                args[slot] = value  # type: ignore[index]
            else:
                kwargs[slot] = value  # type: ignore[index]
    return name, args, kwargs


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(calls=st.lists(hostile_calls(), min_size=1, max_size=4))
def test_hostile_arguments_raise_only_aircher_errors(calls: list[tuple[str, list[Any], dict[str, Any]]]) -> None:
    m = EpisodicMemory(session_id="s1", batch_size=2, clock=lambda: NOW)
    try:
        m.start_task("t1", "fix the login redirect")
        for name, args, kwargs in calls:
            try:
                getattr(m, name)(*args, **kwargs)
            except am.AircherError:
                pass
        m.flush()
        m.counts()
    finally:
        m.close()


@settings(max_examples=40, deadline=None)
@given(
    session_id=st.none() | _hostile,
    batch_size=st.none() | _hostile,
    clock_value=st.sampled_from([NOW, float("nan"), 1e13, "now", None]),
)
def test_hostile_construction_and_clocks_raise_only_aircher_errors(
    session_id: Any, batch_size: Any, clock_value: Any
) -> None:
    try:
        m = EpisodicMemory(session_id=session_id, batch_size=batch_size, clock=lambda: clock_value)
    except am.AircherError:
        return
    try:
        for call in (
            lambda: m.record_file_interaction("a.py", "read"),
            lambda: m.record_learning("w", {}, 0.5),
            lambda: m.start_task("t", "d"),
            lambda: m.tool_stats(),
        ):
            try:
                call()
            except am.AircherError:
                pass
    finally:
        m.close()


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda m: m.file_history("a.py", limit=-1), "limit"),
        (lambda m: m.file_history("a.py", limit=2**70), "limit"),
        (lambda m: m.file_history("a.py", limit=0), "limit"),
        (lambda m: m.last_interactions("a", limit=10_001), "limit"),
        (lambda m: m.snapshots(limit=1.5), "limit"),
        (lambda m: m.tool_stats(days=float("nan")), "days"),
        (lambda m: m.tool_stats(days=float("inf")), "days"),
        (lambda m: m.tool_stats(days=-1), "days"),
        (lambda m: m.tool_stats(now=1e13), "timestamp"),
        (lambda m: m.find_similar_tasks(None), "text"),
        (lambda m: m.find_similar_tasks("login \ud800"), "text"),
        (lambda m: m.file_history("\ud800"), "file_path"),
        (lambda m: m.patterns(min_count=2**70), "min_count"),
        (lambda m: m.co_edited_files(within_seconds=float("nan")), "within_seconds"),
        (lambda m: m.co_edited_files(min_count=0), "min_count"),
        (lambda m: m.task(5), "task_id"),
        (lambda m: m.learnings("\udc80"), "learning_type"),
    ],
)
def test_bad_query_arguments_are_invalid_input(mem: EpisodicMemory, call: Any, error: str) -> None:
    with pytest.raises(am.InvalidInputError, match=error):
        call(mem)


def test_query_edges_still_answer(mem: EpisodicMemory) -> None:
    mem.record_tool_execution("old", timestamp=NOW - 10 * 365 * 86_400)
    assert [s.tool_name for s in mem.tool_stats(days=1e300, now=NOW)] == ["old"]
    assert mem.tool_stats(days=0, now=NOW) == []
    assert mem.find_similar_tasks("anything", limit=0) == []
    assert mem.file_history("a\x00b", limit=10_000) == []


def test_a_failure_of_the_store_in_a_query_is_a_store_error(mem: EpisodicMemory) -> None:
    mem._con.execute("DROP TABLE learned_patterns")
    # the file's error says what failed; the server's is its own, naming it
    failed = f"^{re.escape(mem.path)}: .*learned_patterns" if mem.team else "reading it failed"
    with pytest.raises(am.StoreError, match=failed) as info:
        mem.patterns()
    assert type(info.value) is am.StoreError and "\n" not in str(info.value)


BIG = 2**63


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda m: m.record_tool_execution("  "), "tool_name must be a non-empty string, got '  '"),
        (lambda m: m.record_tool_execution(5), "tool_name must be a string, got 5"),
        (
            lambda m: m.record_tool_execution("ba\ud800sh"),
            "tool_name is not valid text (it holds a lone surrogate at index 2): 'ba\\ud800sh'",
        ),
        (
            lambda m: m.record_tool_execution("bash", duration_ms=-5),
            "duration_ms must be an integer >= 0 and below 2**63, got -5",
        ),
        (
            lambda m: m.record_tool_execution("bash", duration_ms=True),
            "duration_ms must be an integer >= 0 and below 2**63, got True",
        ),
        (
            lambda m: m.record_tool_execution("bash", context_tokens=BIG),
            f"context_tokens must be an integer >= 0 and below 2**63, got {BIG}",
        ),
        (lambda m: m.record_tool_execution("bash", success=1), "success must be true or false, got 1"),
        (lambda m: m.record_file_interaction(" ", "read"), "file_path must be a non-empty string, got ' '"),
        (
            lambda m: m.record_file_interaction("a.py", "read", line_range=(-1, 2)),
            "line_range start must be an integer >= 0 and below 2**63, got -1",
        ),
        (
            lambda m: m.record_file_interaction("a.py", "read", line_range=(1, 2.0)),
            "line_range end must be an integer >= 0 and below 2**63, got 2.0",
        ),
        (
            lambda m: m.record_file_interaction("a.py", "read", line_range=(5, 2)),
            "line_range must be (start, end) with start <= end, got (5, 2)",
        ),
        (lambda m: m.record_learning("workflow", {}, float("nan")), "confidence must be a finite number >= 0, got nan"),
        (lambda m: m.record_learning("workflow", {}, True), "confidence must be a number, got True"),
        (
            lambda m: m.record_learning("\udc80", {}, 0.5),
            "learning_type is not valid text (it holds a lone surrogate at index 0): '\\udc80'",
        ),
        (lambda m: m.start_task("t1", "\t"), "description must be a non-empty string, got '\\t'"),
        (
            lambda m: m.store_snapshot(
                {"timestamp": NOW, "session_id": "s", "items": [], "total_tokens": -1, "reason": "r"}
            ),
            "total_tokens must be an integer >= 0 and below 2**63, got -1",
        ),
        (lambda m: m.file_history("a.py", limit=0), "limit must be an integer from 1 to 10000, got 0"),
        (lambda m: m.last_interactions("a", limit=10_001), "limit must be an integer from 1 to 10000, got 10001"),
        (lambda m: m.snapshots(limit=1.5), "limit must be an integer from 1 to 10000, got 1.5"),
        (lambda m: m.find_similar_tasks("x", limit=-1), "limit must be an integer from 0 to 10000, got -1"),
        (lambda m: m.find_similar_tasks(None), "text must be a string, got None"),
        (lambda m: m.task(5), "task_id must be a string, got 5"),
        (lambda m: m.tool_stats(days=-1), "days must be a finite number >= 0, got -1"),
        (lambda m: m.co_edited_files(min_count=0), "min_count must be an integer >= 1 and below 2**63, got 0"),
        (
            lambda m: m.patterns(min_count=2**70),
            "min_count must be an integer >= 0 and below 2**63, got 1180591620717411303424",
        ),
        (lambda m: EpisodicMemory(batch_size=0), "batch_size must be an integer >= 1 and below 2**63, got 0"),
    ],
)
def test_each_bad_argument_is_invalid_input_with_an_exact_message(mem: EpisodicMemory, call: Any, message: str) -> None:
    mem.record_file_interaction("kept.py", "read")
    with pytest.raises(am.InvalidInputError) as info:
        call(mem)
    assert type(info.value) is am.InvalidInputError and str(info.value) == message
    assert mem.counts()["file_interactions"] == 1 and mem.counts()["tool_executions"] == 0


def test_read_aside_reads_what_was_written_on_a_connection_of_its_own(tmp_path: Path, clock: list[float]) -> None:
    path = tmp_path / "memory.duckdb"
    m = EpisodicMemory(path, clock=lambda: clock[0], batch_size=1000)
    m.record_file_interaction("a.py", "edit")  # buffered: read_aside writes it first
    m.record_tool_execution("pytest", {"file_path": "a.py"}, success=False, error_message="1 failed")
    answer = m.read_aside(lambda ep: ([h.file_path for h in ep.file_history("a.py")], ep.failed_runs_since(0)))
    m.record_file_interaction("b.py", "read")  # the caller goes on meanwhile
    history, failed = answer()
    assert history == ["a.py"] and [(r.tool_name, r.error_message) for r in failed] == [("pytest", "1 failed")]
    assert m._aside is not None

    def broken(ep: EpisodicMemory) -> None:
        ep.file_history("a.py", limit=-1)  # refused

    with pytest.raises(am.InvalidInputError, match="limit"):
        m.read_aside(broken)()
    m.close()
    assert m._aside is None
    # both connections closed: another process opens the store at once
    done = subprocess.run(
        [sys.executable, "-c", f"from aircher_mem.engine import EpisodicMemory; EpisodicMemory({str(path)!r}).close()"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    with pytest.raises(am.StoreError, match="is closed"):
        m.read_aside(lambda ep: None)


def test_read_aside_survives_a_compaction_of_the_store(tmp_path: Path, clock: list[float]) -> None:
    from aircher_mem import store

    path = tmp_path / "memory.duckdb"
    with EpisodicMemory(path, clock=lambda: clock[0]) as m:
        m.record_file_interaction("a.py", "edit")
        assert m.read_aside(lambda ep: len(ep.file_history("a.py")))() == 1
        store.compact(path)  # closes every connection to the file, rewrites it, reopens
        m.record_file_interaction("a.py", "read")
        assert m.read_aside(lambda ep: len(ep.file_history("a.py")))() == 2


def test_the_service_takes_the_stored_operations_but_the_window_s_own() -> None:
    # "viewed" is what the context window records of a file it showed; the
    # service's record_file_interaction takes the others
    from typing import get_args

    from aircher_mem import memory

    assert set(get_args(memory.Operation)) == set(episodic.OPERATIONS) - {"viewed"}


@settings(max_examples=200, deadline=None)
@given(st.text(), st.text())
def test_a_co_edit_key_is_the_one_duckdb_wrote(f1: str, f2: str) -> None:
    """Keys of patterns stored by DuckDB's to_json before are found again."""
    con = duckdb.connect()
    (written,) = con.execute("SELECT 'co-edit:' || to_json([?, ?])", [f1, f2]).fetchone() or ("",)
    assert episodic._co_edit_key(f1, f2) == written


def test_a_record_sent_again_with_its_idempotency_key_is_stored_once(mem: EpisodicMemory) -> None:
    mem.record_file_interaction("a.py", "read")  # buffered: written before the keyed record
    assert mem.record_tool_execution("pytest", {"k": 1}, idempotency_key="call-1") is True
    assert raw(mem, "SELECT count(*) FROM file_interactions") == [(1,)]  # written at once, with it
    assert mem.record_tool_execution("pytest", {"k": 1}, idempotency_key="call-1") is False
    assert mem.record_file_interaction("a.py", "edit", idempotency_key="call-2") is True
    assert mem.record_file_interaction("a.py", "edit", idempotency_key="call-2") is False
    assert mem.record_file_interaction("a.py", "edit", idempotency_key="call-1") is False  # keys are shared
    assert mem.record_tool_execution("pytest", {"k": 1}) is True  # no key: stored each time
    assert mem.counts()["tool_executions"] == 2 and mem.counts()["file_interactions"] == 2
    digests = {r[0] for r in raw(mem, "SELECT digest FROM record_keys")}
    assert digests == {hashlib.sha256(k.encode()).hexdigest() for k in ("call-1", "call-2")}
    with pytest.raises(am.InvalidInputError, match="idempotency_key"):
        mem.record_tool_execution("pytest", idempotency_key="")


def test_a_keyed_record_found_stored_at_its_write_adds_nothing_to_its_task(
    mem: EpisodicMemory, monkeypatch: Any
) -> None:
    """The key was checked free, then found stored in the write transaction (as when
    another process stored the same request meanwhile): neither the record nor what
    it added to its task's files and tools is stored; the rest of the flush is."""
    mem.start_task("t1", "fix login")
    assert mem.record_tool_execution("pytest", idempotency_key="k1") is True
    assert mem.record_file_interaction("auth.py", "edit", idempotency_key="k2") is True
    monkeypatch.setattr(mem, "_key_stored", lambda digest: False)
    mem.record_file_interaction("views.py", "read")  # buffered, written with the next
    assert mem.record_tool_execution("pytest", idempotency_key="k1") is False
    mem.record_file_interaction("auth.py", "read")  # touched again by a record that is stored
    assert mem.record_file_interaction("auth.py", "edit", idempotency_key="k2") is False
    mem.flush()
    t1 = mem.task("t1")
    assert (t1.files_touched, t1.tools_used) == (["auth.py", "views.py"], {"pytest": 1})
    assert mem.counts()["tool_executions"] == 1 and mem.counts()["file_interactions"] == 3
    stored = raw(mem, "SELECT files_touched, tools_used FROM task_history")
    assert [(json.loads(f), json.loads(t)) for f, t in stored] == [(["auth.py", "views.py"], {"pytest": 1})]


def test_a_keyed_record_whose_write_failed_keeps_its_key(mem: EpisodicMemory, monkeypatch: Any) -> None:
    """The record stays buffered with its key: the next flush writes both, and the
    retry is not stored again."""
    real = mem._con

    class Failing:
        def __getattr__(self, name: str) -> Any:
            return getattr(real, name)

        def execute(self, sql: str, *args: Any) -> Any:
            if sql.startswith("INSERT INTO tool_executions"):
                raise (am.StoreError("the server went away") if mem.team else duckdb.IOException("disk gone"))
            return real.execute(sql, *args)

    monkeypatch.setattr(mem, "_con", Failing())
    with pytest.raises(am.StoreError):
        mem.record_tool_execution("make", idempotency_key="k")
    monkeypatch.undo()
    mem.flush()
    assert mem.record_tool_execution("make", idempotency_key="k") is False
    assert mem.counts()["tool_executions"] == 1
    assert len(raw(mem, "SELECT digest FROM record_keys")) == 1
