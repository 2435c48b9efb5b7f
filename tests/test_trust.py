"""Memory a user can trust: an acknowledged write is on disk, one process holds a
store (another gets StoreLockedError before it reads or accepts anything), and a
forgotten text is nowhere under ``.aircher/``."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import aircher_mem as am
import pytest
from aircher_mem import store
from aircher_mem.engine import EpisodicMemory
from aircher_mem.longterm import LongTermMemory
from hypothesis import given, settings
from hypothesis import strategies as st

SECRET_WORD = "Zorblefish"


def files_holding(folder: Path, word: str) -> list[str]:
    """Every file under ``folder`` whose bytes hold ``word`` (any case)."""
    needle = word.lower().encode()
    return sorted(
        str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() and needle in p.read_bytes().lower()
    )


def run_child(script: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(script), *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def kill(child: subprocess.Popen[str]) -> None:
    """kill -9, then reap it and close its pipes."""
    child.send_signal(signal.SIGKILL)
    child.communicate(timeout=30)


# -- durable before acknowledged -------------------------------------------------------


ACKNOWLEDGING_WRITER = """
import sys, aircher_mem as am
m = am.Memory.open(sys.argv[1])
first = m.remember("the staging host is blue-7")
print("ack remember", first.memory_id, flush=True)
for i in range(20):
    t = m.add_turn("s1", "user", f"note number {i} about the parser")
    print("ack turn", t.turn_id, flush=True)
m.update(first.memory_id, tags=["infra"])
print("ack update", flush=True)
m.feedback(first.memory_id, "cited")
print("ack feedback", flush=True)
sys.stdin.readline()  # killed here, never closed
"""


def test_every_acknowledged_write_survives_kill_9(tmp_path: Path) -> None:
    child = run_child(ACKNOWLEDGING_WRITER, str(tmp_path))
    assert child.stdout is not None
    acks = [child.stdout.readline().split() for _ in range(23)]
    kill(child)
    turns = [int(a[2]) for a in acks if a[1] == "turn"]
    assert turns == list(range(1, 21)) and acks[-1] == ["ack", "feedback"]
    with am.Memory.open(tmp_path) as memory:
        assert [t.id for t in memory.longterm.turns("s1")] == turns
        record = memory.longterm.get(1)
        assert (record.content, record.tags, record.cited) == ("the staging host is blue-7", ["infra"], 1)


LOGGING_WRITER = """
import sys, aircher_mem as am
m = am.Memory.open(sys.argv[1])
m.longterm.counts()  # the indexes saved beside the file are read: writes log what they change
for i in range(6):
    m.add_turn("s2", "user", f"the deploy of build {i} waits for the canary")
m.remember("the canary runs in the eu-west pool")
print("ack", flush=True)
sys.stdin.readline()  # killed here, never closed
"""


def test_documents_written_before_kill_9_are_found_from_the_saved_indexes(tmp_path: Path) -> None:
    """The indexes saved beside the file stay through a writer killed before its
    close: the documents its acknowledged writes changed were logged with them, and
    the next open finds them as a rebuild from every row does."""
    with am.Memory.open(tmp_path) as memory:
        memory.add_turn("s1", "user", "the release train leaves on Tuesday")
        memory.remember("the staging host is blue-7")
    child = run_child(LOGGING_WRITER, str(tmp_path))
    assert child.stdout is not None
    assert child.stdout.readline().split() == ["ack"]
    kill(child)
    queries = ["canary deploy build", "eu-west pool", "staging host", "release train"]

    def recalled() -> tuple[str, list[list[tuple[str, int]]]]:
        with am.Memory.open(tmp_path) as memory:
            hits = [[(h.kind, h.id) for h in memory.longterm.recall(q, k=5).hits] for q in queries]
            return memory.longterm.index_source, hits

    source, saved = recalled()
    assert source == "saved"
    assert ("turn", 7) in saved[0] and saved[1][0] == ("fact", 2)  # the killed writer's
    for path in (tmp_path / ".aircher").glob("memory.duckdb.longterm-*"):
        path.unlink()
    assert recalled() == ("rebuilt", saved)


def test_a_batch_commits_at_its_end_and_says_what_a_crash_costs(tmp_path: Path) -> None:
    script = """
    import sys, aircher_mem as am
    m = am.Memory.open(sys.argv[1])
    m.add_turn("s", "user", "before the batch")
    with m.batch():
        for i in range(5):
            m.add_turn("s", "user", f"inside the batch {i}")
        print("in batch", flush=True)
        sys.stdin.readline()  # killed inside the block
    """
    child = run_child(script, str(tmp_path))
    assert child.stdout is not None and child.stdout.readline().strip() == "in batch"
    kill(child)
    with am.Memory.open(tmp_path) as memory:
        assert [t.text for t in memory.longterm.turns("s")] == ["before the batch"]
        with memory.batch():
            for i in range(3):
                memory.add_turn("s", "user", f"kept {i}")
    with am.Memory.open(tmp_path) as memory:
        assert [t.text for t in memory.longterm.turns("s")] == ["before the batch", "kept 0", "kept 1", "kept 2"]


def test_writes_inside_a_batch_reach_the_file_only_at_its_end(tmp_path: Path) -> None:
    path = tmp_path / "m.duckdb"
    with LongTermMemory(path) as ltm:
        with ltm.batch():
            ltm.add_turn("s", "user", "one")
            with ltm.batch():  # nested: the outer block commits
                ltm.add_turn("s", "user", "two")
            assert ltm._con.execute("SELECT count(*) FROM turns").fetchone() == (0,)
        assert ltm._con.execute("SELECT count(*) FROM turns").fetchone() == (2,)
        ltm.add_turn("s", "user", "three")  # outside a batch: committed before it returns
        assert ltm._con.execute("SELECT count(*) FROM turns").fetchone() == (3,)


def test_concurrent_writers_return_only_once_their_rows_are_in_the_file(tmp_path: Path) -> None:
    import threading

    with am.Memory.open(tmp_path) as memory:
        acknowledged: list[int] = []
        lock = threading.Lock()

        def write(n: int) -> None:
            for i in range(15):
                turn = memory.add_turn(f"w{n}", "user", f"writer {n} says {i}", extract=False)
                reader = memory.longterm._con.cursor()  # its own connection to the database
                try:
                    in_file = reader.execute("SELECT count(*) FROM turns WHERE id = ?", [turn.turn_id]).fetchone()
                finally:
                    reader.close()
                assert in_file == (1,)
                with lock:
                    acknowledged.append(turn.turn_id)

        threads = [threading.Thread(target=write, args=(n,)) for n in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(acknowledged) == list(range(1, 121))


def test_a_failed_commit_is_not_acknowledged_and_stays_pending(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with am.Memory.open(tmp_path) as memory:
        memory.add_turn("s", "user", "first")
        lt = memory.longterm
        real = lt._store

        def refuse(taken: object) -> None:
            raise am.StoreError("disk full")

        monkeypatch.setattr(lt, "_store", refuse)
        with pytest.raises(am.StoreError, match="disk full"):
            memory.add_turn("s", "user", "second")
        monkeypatch.setattr(lt, "_store", real)
        memory.add_turn("s", "user", "third")  # commits the second too
        rows = lt._con.execute("SELECT text FROM turns ORDER BY id").fetchall()
        assert rows == [("first",), ("second",), ("third",)]


# -- one process holds a store -----------------------------------------------------------

HOLDER = """
import sys, aircher_mem as am
m = am.Memory.open(sys.argv[1])
m.add_turn("held", "user", "We deploy with Helm charts.")
print("ready", flush=True)
sys.stdin.readline()
m.close()
print("closed", flush=True)
"""

CALLER = """
import sys, aircher_mem as am
m = am.Memory.open(sys.argv[1])
try:
    if sys.argv[2] == "read":
        print("answer", m.recall("Helm").hits)
    elif sys.argv[2] == "stats":
        print("busy", m.stats().store_busy is not None)
    else:
        print("answer", m.add_turn("other", "user", "a second writer"))
except am.StoreLockedError as exc:
    print("locked", exc.code)
finally:
    m.close()
"""


@pytest.mark.slow
@pytest.mark.parametrize("verb", ["read", "write", "stats"])
def test_a_second_process_gets_store_locked_never_a_stale_store(tmp_path: Path, verb: str) -> None:
    holder = run_child(HOLDER, str(tmp_path))
    assert holder.stdin is not None and holder.stdout is not None
    try:
        assert holder.stdout.readline().strip() == "ready"
        done = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(CALLER), str(tmp_path), verb],
            capture_output=True,
            text=True,
            timeout=60,
        )
        expected = "busy True" if verb == "stats" else "locked store_locked"
        assert done.stdout.strip() == expected, done.stderr
    finally:
        out, _ = holder.communicate("\n", timeout=30)
        assert out.strip() == "closed"
    with am.Memory.open(tmp_path) as memory:  # nothing the holder wrote was lost, nothing else came in
        assert memory.longterm.counts()["turns"] == 1
        assert [h.content for h in memory.recall("Helm charts").hits][:1] == ["We deploy with Helm charts."]


def test_the_lock_goes_with_a_killed_holder(tmp_path: Path) -> None:
    holder = run_child(HOLDER, str(tmp_path))
    assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
    with pytest.raises(am.StoreLockedError, match=rf"another process \(pid {holder.pid}\)"):
        LongTermMemory(tmp_path / ".aircher" / "memory.duckdb")
    kill(holder)
    with am.Memory.open(tmp_path) as memory:
        assert memory.longterm.counts()["turns"] == 1


@pytest.mark.slow
def test_one_process_shares_its_hold_and_releases_it_with_the_last_connection(tmp_path: Path) -> None:
    path = tmp_path / "m.duckdb"
    probe = "import sys\nfrom aircher_mem import store\ntry:\n store.hold(sys.argv[1]); print('free')\nexcept Exception as e: print(type(e).__name__)"

    def other_process_sees() -> str:
        return subprocess.run(
            [sys.executable, "-c", probe, str(path)], capture_output=True, text=True, check=True
        ).stdout.strip()

    episodic = EpisodicMemory(path)
    ltm = LongTermMemory(path)
    assert other_process_sees() == "StoreLockedError"
    episodic.close()
    assert other_process_sees() == "StoreLockedError"
    ltm.close()
    assert other_process_sees() == "free"


# -- forget means gone -----------------------------------------------------------------


def fill(memory: am.Memory) -> None:
    memory.add_turn("s1", "user", "We use pytest for the tests.")
    memory.add_turn("s1", "user", f"My cat is called {SECRET_WORD} and she is grey.")
    memory.add_turn("s1", "assistant", "Noted: a grey cat.")
    memory.add_turn("s2", "user", f"Remind me: {SECRET_WORD} needs her vaccine in May.")
    memory.add_turn("s2", "user", "The deploy target is kubernetes.")


def test_forget_by_text_removes_memories_turns_and_every_copy_on_disk(tmp_path: Path) -> None:
    with am.Memory.open(tmp_path) as memory:
        fill(memory)
        assert files_holding(memory.store, SECRET_WORD) != []  # on disk before
        forgotten = memory.forget(text=SECRET_WORD.lower())
        assert forgotten.turns == [2, 4]
        assert files_holding(memory.store, SECRET_WORD) == []
        assert memory.recall(SECRET_WORD).hits == []
        hits = memory.recall("grey cat vaccine").hits
        assert hits and all(SECRET_WORD.lower() not in h.content.lower() for h in hits)
        assert [t.text for t in memory.longterm.turns("s1")] == ["We use pytest for the tests.", "Noted: a grey cat."]
        assert memory.recall("which test runner?").hits[0].content == "We use pytest for the tests."
    assert files_holding(tmp_path / ".aircher", SECRET_WORD) == []


def test_forget_by_id_takes_the_turns_it_came_from_and_ids_are_never_given_again(tmp_path: Path) -> None:
    with am.Memory.open(tmp_path) as memory:
        fill(memory)
        newest = max(m.id for m in memory.memories(status=None).memories)
        last_turn = memory.longterm.counts()["turns"]
        forgotten = memory.forget(newest)
        assert forgotten.ids == [newest] and forgotten.turns == [last_turn]
        assert memory.recall("kubernetes deploy target").hits == []
    with am.Memory.open(tmp_path) as memory:
        added = memory.add_turn("s3", "user", "The deploy target is nomad.")
        assert added.turn_id == last_turn + 1
        assert [e.memory_id for e in added.extracted] == [newest + 1]
        with pytest.raises(am.UnknownMemoryError):
            memory.explain(newest)


def test_forget_by_session_takes_its_turns_and_the_memories_only_they_support(tmp_path: Path) -> None:
    with am.Memory.open(tmp_path) as memory:
        fill(memory)
        before = {m.content: m.id for m in memory.memories(status=None).memories}
        forgotten = memory.forget(session_id="s2")
        assert forgotten.turns == [4, 5]
        left = {m.content for m in memory.memories(status=None).memories}
        assert "The deploy target is kubernetes." not in left and "We use pytest for the tests." in left
        assert sorted(forgotten.ids) == sorted(before[c] for c in before if c not in left)
        assert memory.longterm.turns("s2") == []
        assert memory.recall("vaccine in May").hits == []


def test_forget_then_kill_9_leaves_no_copy(tmp_path: Path) -> None:
    script = f"""
    import sys, aircher_mem as am
    m = am.Memory.open(sys.argv[1])
    m.add_turn("s", "user", "My cat is called {SECRET_WORD}.")
    m.record_tool_call("pytest", {{"args": "-x"}}, success=True)
    print(m.forget(text="{SECRET_WORD}").turns, flush=True)
    sys.stdin.readline()
    """
    child = run_child(script, str(tmp_path))
    assert child.stdout is not None and child.stdout.readline().strip() == "[1]"
    kill(child)
    assert files_holding(tmp_path / ".aircher", SECRET_WORD) == []
    with am.Memory.open(tmp_path) as memory:
        assert memory.recall(SECRET_WORD).hits == []
        assert memory.stats().episodic is not None and memory.stats().episodic["tool_executions"] == 1


def test_a_rewrite_a_crash_cut_short_is_done_at_the_next_open(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "m.duckdb"
    calls: list[str] = []
    real = store.rewrite

    def failing(p: object) -> None:
        calls.append("failed")
        raise am.StoreError("disk full")

    with LongTermMemory(path) as ltm:
        ltm.add_turn("s", "user", f"My cat is called {SECRET_WORD}.")
        monkeypatch.setattr(store, "rewrite", failing)
        assert ltm.forget(text=SECRET_WORD).turns == [1]  # committed; the rewrite is owed
        assert sorted(ltm._state()) == [
            ("next_contradiction", 1),
            ("next_memory", 2),
            ("next_node", 1),
            ("next_turn", 2),
            ("rewrite", 1),
            ("unscanned_through", 0),
        ]

    def counting(p: object) -> None:
        calls.append("done")
        real(p)  # type: ignore[arg-type]

    monkeypatch.setattr(store, "rewrite", counting)
    with LongTermMemory(path) as ltm:
        assert calls == ["failed", "done"]
        assert ("rewrite", 1) not in ltm._state()
    assert files_holding(tmp_path, SECRET_WORD) == []


def test_forget_takes_one_way_in() -> None:
    with LongTermMemory() as ltm:
        for kwargs in ({}, {"memory_id": 1, "text": "x"}, {"text": "x", "session_id": "s"}):
            with pytest.raises(am.InvalidInputError, match="one of"):
                ltm.forget(**kwargs)  # type: ignore[arg-type]


def test_the_store_files_are_private(tmp_path: Path) -> None:
    with am.Memory.open(tmp_path) as memory:
        fill(memory)
        memory.forget(text=SECRET_WORD)
        modes = {p.name: os.stat(p).st_mode & 0o777 for p in memory.store.iterdir() if p.is_file()}
    assert "memory.duckdb" in modes and "memory.duckdb.lock" in modes
    assert {mode for name, mode in modes.items() if name != "config.toml"} == {0o600}


_MARKERS = ["amber", "basalt", "cobalt", "dune", "ember"]


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.tuples(st.just("turn"), st.sampled_from(["s1", "s2"]), st.lists(st.sampled_from(_MARKERS), max_size=2)),
            st.tuples(st.just("text"), st.sampled_from(_MARKERS), st.just([])),
            st.tuples(st.just("session"), st.sampled_from(["s1", "s2"]), st.just([])),
            st.tuples(st.just("memory"), st.integers(1, 6).map(str), st.just([])),
        ),
        max_size=20,
    )
)
def test_forgotten_text_never_comes_back_and_nothing_else_goes(ops: list[tuple[str, str, list[str]]]) -> None:
    """Turns say "We use pytest" plus marker words; after any mix of forgets, no turn
    or hit holds a forgotten marker, every turn no forget named is still there, and
    no turn or memory id is given twice."""
    with LongTermMemory(":memory:") as ltm:
        alive: dict[int, str] = {}  # turn id -> text
        seen_turns: set[int] = set()
        seen_memories: set[int] = set()
        gone_words: set[str] = set()
        for op, arg, words in ops:
            if op == "turn":
                text = f"The {' '.join(words) or 'plain'} service uses pytest for the tests."
                added = ltm.add_turn(arg, "user", text)
                assert added.turn_id not in seen_turns
                seen_turns.add(added.turn_id)
                for e in added.extracted:
                    assert e.action != "created" or e.memory_id not in seen_memories
                    seen_memories.add(e.memory_id)
                alive[added.turn_id] = text
                gone_words -= set(words)
                continue
            if op == "text":
                done = ltm.forget(text=arg)
                gone_words.add(arg)
            elif op == "session":
                done = ltm.forget(session_id=arg)
            else:
                try:
                    done = ltm.forget(int(arg))
                except am.UnknownMemoryError:
                    continue
            for turn_id in done.turns:
                alive.pop(turn_id)
            if op == "text":
                assert not [t for t, text in alive.items() if arg in text]
            elif op == "session":
                assert ltm.turns(arg) == []
        stored = {t.id: t.text for s in ("s1", "s2") for t in ltm.turns(s)}
        assert stored == alive
        for word in gone_words:
            assert all(word not in h.content for h in ltm.recall(f"{word} service", k=50).hits)
