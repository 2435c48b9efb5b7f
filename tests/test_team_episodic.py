"""A team's episodic memory on PostgreSQL (``[store] url``): several processes write
the same tables; each one's caches follow the others' writes, the co-edit count
reads every pair once, and a task's usage keeps what each process added. Needs a
server (tests/pg_cluster.py)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aircher_mem as am
import duckdb
import pytest
from aircher_mem.checks import MAX_TIME, MIN_TIME
from aircher_mem.config import StorePolicy
from aircher_mem.episodic import EpisodicMemory
from aircher_mem.errors import TaskStateError, UnknownTaskError
from conftest import NOW
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pg_cluster import database

psycopg = pytest.importorskip("psycopg", reason="psycopg 3 is not installed (pip install 'aircher-mem[team]')")


@pytest.fixture
def pair(pg_url: str) -> Iterator[tuple[EpisodicMemory, EpisodicMemory]]:
    """Two processes' episodic stores (two machines, say) on one team database."""
    a = EpisodicMemory(session_id="sa", url=pg_url, clock=lambda: NOW)
    b = EpisodicMemory(session_id="sb", url=pg_url, clock=lambda: NOW)
    yield a, b
    a.close()
    b.close()


def edit(m: EpisodicMemory, path: str, task: str, at: float) -> None:
    m.record_file_interaction(path, "edit", task_id=task, timestamp=at)


def test_what_one_records_the_other_reads(pair: tuple[EpisodicMemory, EpisodicMemory]) -> None:
    a, b = pair
    a.record_file_interaction("src/app.py", "edit", timestamp=NOW)
    a.record_tool_execution("pytest", {"k": 1}, result={"mentions": ["tests/test_app.py"]}, timestamp=NOW + 1)
    a.flush()
    assert [h.file_path for h in b.file_history("src/app.py")] == ["src/app.py"]
    assert b.recent_files(5) == ["src/app.py"]
    assert b.recent_mentions(5) == ["tests/test_app.py"]
    assert [s.tool_name for s in b.tool_stats(now=NOW + 2)] == ["pytest"]


def test_the_caches_follow_the_other_process(pair: tuple[EpisodicMemory, EpisodicMemory]) -> None:
    """b reads (and so keeps in memory) the recent files, the tasks of each file and
    the index of similar tasks; a's later writes reach each of them."""
    a, b = pair
    a.start_task("t1", "fix the login form")
    edit(a, "login.py", "t1", NOW)
    a.flush()
    assert b.recent_files(5) == ["login.py"]
    assert b.touched_with(["login.py"]) == []
    assert [t.task_id for t in b.find_similar_tasks("login")] == ["t1"]
    edit(a, "session.py", "t1", NOW + 10)
    a.start_task("t2", "speed up the login query")
    a.flush()
    assert b.recent_files(5) == ["session.py", "login.py"]
    assert b.touched_with(["login.py"]) == [("session.py", 1.0)]
    assert sorted(t.task_id for t in b.find_similar_tasks("login")) == ["t1", "t2"]
    b.complete_task("t1", "the form validates")
    assert a.task("t1").status == "completed"
    assert [t.task_id for t in a.open_tasks()] == ["t2"]


def test_a_task_started_twice_is_refused_and_a_missing_one_named(
    pair: tuple[EpisodicMemory, EpisodicMemory],
) -> None:
    a, b = pair
    a.start_task("t1", "one")
    with pytest.raises(TaskStateError, match="already exists"):
        b.start_task("t1", "the same id")
    with pytest.raises(UnknownTaskError, match="no task 'nope'"):
        b.pause_task("nope")
    b.pause_task("t1")
    with pytest.raises(TaskStateError, match="is paused"):
        a.pause_task("t1")


def test_a_task_s_usage_keeps_what_each_process_added(pair: tuple[EpisodicMemory, EpisodicMemory]) -> None:
    a, b = pair
    a.start_task("t1", "shared work")
    a.record_file_interaction("a.py", "read", task_id="t1")
    a.record_tool_execution("grep", task_id="t1")
    b.record_file_interaction("b.py", "read", task_id="t1")
    b.record_tool_execution("grep", task_id="t1")
    b.record_tool_execution("pytest", task_id="t1")
    a.flush()
    b.flush()
    a.record_file_interaction("c.py", "edit", task_id="t1")
    a.flush()
    task = b.task("t1")
    assert task.files_touched == ["a.py", "b.py", "c.py"]
    assert task.tools_used == {"grep": 2, "pytest": 1}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    steps=st.lists(
        st.tuples(
            st.sampled_from("ab"),
            st.sampled_from(["a.py", "b.py", "c.py"]),
            st.sampled_from(["t1", "t2"]),
            st.integers(0, 900),
            st.booleans(),
        ),
        max_size=24,
    )
)
def test_co_edits_of_two_writers_are_those_of_one_store(pg_server: str, steps: list[Any]) -> None:
    """Two processes edit under the same tasks and flush at random: the co-edit
    patterns on the server are those one DuckDB store learns from the same edits,
    each pair counted once."""
    with database(pg_server) as url:
        writers = {w: EpisodicMemory(url=url, batch_size=1000) for w in "ab"}
        alone = EpisodicMemory(batch_size=1000)
        try:
            writers["a"].start_task("t1", "one")  # t2 is never started: its usage is not kept
            alone.start_task("t1", "one")
            for who, path, task, at, flush in steps:
                edit(writers[who], path, task, NOW + at)
                if flush:
                    writers[who].flush()
            for w in writers.values():
                w.flush()
            # the same edits, in the order the server took them (by id)
            rows = writers["a"]._read(
                "SELECT file_path, task_id, epoch_us(timestamp) FROM file_interactions ORDER BY id"
            )
            for path, task, micros in rows:
                edit(alone, path, task, micros / 1e6)
            alone.flush()

            def learned(m: EpisodicMemory) -> dict[tuple[str, ...], int]:
                return {tuple(p.data["files"]): p.observed_count for p in m.patterns("co-edit")}

            assert learned(writers["b"]) == learned(alone)
            everything = {(c.file1, c.file2): c.count for c in writers["b"].co_edited_files(min_count=1)}
            assert learned(alone) == everything
        finally:
            for m in (*writers.values(), alone):
                m.close()


def test_a_project_s_memory_keeps_its_episodes_on_the_team_s_server(tmp_path: Path, pg_url: str) -> None:
    policy = am.Policy(store=StorePolicy(url=pg_url))
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    with am.Memory.open(tmp_path / "a", policy=policy) as a, am.Memory.open(tmp_path / "b", policy=policy) as b:
        a.task("start", "t1", description="wire the cache", branch="main")
        a.record_file_interaction("cache.py", "edit", task_id="t1")
        a.record_tool_call("pytest", success=False, error_message="1 failed", file_path="cache.py", task_id="t1")
        assert a.episodic.team and b.episodic.team
        assert [e.operation for e in b.file_history("cache.py").interactions] == ["edit"]
        assert [t.task_id for t in b.tasks().tasks] == ["t1"]
        assert b.task("complete", "t1", outcome="done").status == "completed"
        assert a.tasks().tasks == []
        # a request sent to a's server, then again to b's after a lost answer
        assert a.record_tool_call("make", success=True, idempotency_key="req-7").notes == []
        again = b.record_tool_call("make", success=True, idempotency_key="req-7")
        assert again.notes == ["stored before with this idempotency key: not stored again"]
    stored = Counter(
        table for table in ("tool_executions", "file_interactions", "task_history") for _ in range(count(pg_url, table))
    )
    assert stored == {"tool_executions": 2, "file_interactions": 1, "task_history": 1}
    for project in ("a", "b"):  # nothing of it went into a project's file
        path = tmp_path / project / ".aircher" / "memory.duckdb"
        if path.exists():
            with duckdb.connect(str(path), read_only=True) as con:
                tables = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
            assert "tool_executions" not in tables


def count(url: str, table: str) -> int:
    with psycopg.connect(url) as con:
        row = con.execute(f"SELECT count(*) FROM {table}").fetchone()
    assert row is not None
    return int(row[0])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(micros=st.lists(st.integers(round(MIN_TIME * 1e6), round(MAX_TIME * 1e6)), min_size=1, max_size=20))
def test_times_go_to_the_server_and_back_to_the_microsecond(pair: Any, micros: list[int]) -> None:
    """DuckDB's make_timestamp and epoch_us, in PostgreSQL's words (postgres.Connection)."""
    a, _ = pair
    got = a._con.execute("SELECT epoch_us(make_timestamp(unnest(?::BIGINT[])))", [micros]).fetchall()
    assert [r[0] for r in got] == micros


def test_a_key_another_process_stored_meanwhile_stores_nothing(
    pair: tuple[EpisodicMemory, EpisodicMemory], monkeypatch: Any
) -> None:
    """b checked the key before a stored it (two retries of one request at once): its
    write finds the key and leaves the record out."""
    a, b = pair
    monkeypatch.setattr(b, "_key_stored", lambda digest: False)
    assert a.record_file_interaction("x.py", "edit", idempotency_key="r1") is True
    assert b.recent_files(5) == ["x.py"]
    assert b.record_file_interaction("x.py", "edit", idempotency_key="r1") is False
    assert b.counts()["file_interactions"] == 1
    assert b.record_file_interaction("y.py", "edit", idempotency_key="r2") is True
    assert a.recent_files(5) == ["y.py", "x.py"]


def test_a_hook_without_a_server_records_on_the_team_s_server(tmp_path: Path, pg_url: str) -> None:
    """Claude Code's PostToolUse on one machine, no server running: the edit is on the
    team's server, where another machine's memory finds it."""
    from aircher_mem.interfaces import hooks

    roots = []
    for name in ("a", "b"):
        root = tmp_path / name
        (root / "app").mkdir(parents=True)
        (root / "app" / "models.py").write_text("def store(obj):\n    return obj\n")
        am.Memory.open(root).close()
        (root / ".aircher" / "config.toml").write_text(f'[store]\nurl = "{pg_url}"\n')
        roots.append(root)
    edit = {"file_path": str(roots[0] / "app" / "models.py"), "old_string": "obj", "new_string": "item"}
    payload = {
        "session_id": "s1",
        "transcript_path": "/nonexistent/s1.jsonl",
        "cwd": str(roots[0]),
        "hook_event_name": "PostToolUse",
        "tool_name": "Edit",
        "tool_input": edit,
        "tool_response": {"filePath": edit["file_path"], "structuredPatch": []},
    }
    assert hooks.run_hook("PostToolUse", json.dumps(payload)) == ("", 0)
    with am.Memory.open(roots[1]) as other:
        assert other.episodic.team
        assert [i.operation for i in other.file_history("app/models.py").interactions] == ["edit"]
        assert [r[0] for r in other.episodic._read("SELECT tool_name FROM tool_executions")] == ["Edit"]
