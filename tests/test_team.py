"""A team's long-term memory on PostgreSQL (``[store] url``): several processes and
machines share it; each catches up with the others before a verb and writes with
the team's write lock. Needs a server (tests/pg_cluster.py)."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aircher_mem as am
import pg_cluster
import pytest
from aircher_mem import postgres
from aircher_mem.config import StorePolicy
from aircher_mem.errors import PolicyError, StoreError, StoreLockedError
from aircher_mem.longterm import contradictions
from conftest import DISTINCT_TEXTS, FakeEmbedder
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pg_cluster import database

psycopg = pytest.importorskip("psycopg", reason="psycopg 3 is not installed (pip install 'aircher-mem[team]')")


def team_policy(url: str, **store: Any) -> am.Policy:
    return am.Policy(store=StorePolicy(url=url, **store))


@pytest.fixture
def two(tmp_path: Path, pg_url: str) -> Iterator[tuple[am.Memory, am.Memory]]:
    """Two projects' memories (two machines, say) on one team database."""
    policy = team_policy(pg_url)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    with am.Memory.open(tmp_path / "a", policy=policy) as a, am.Memory.open(tmp_path / "b", policy=policy) as b:
        yield a, b


def contents(recall: Any) -> list[str]:
    return [h.content for h in recall.hits]


def test_what_one_learns_the_other_recalls(two: tuple[am.Memory, am.Memory]) -> None:
    a, b = two
    said = a.add_turn("s1", "user", "We use Postgres for the database.")
    assert [e.content for e in said.extracted] == ["We use Postgres for the database."]
    assert contents(b.recall("which database do we use?"))[0] == "We use Postgres for the database."
    kept = b.remember("Deploys go through tools/deploy.sh", kind="fact")
    assert kept.memory_id == 2  # after a's memory 1: ids are the team's
    assert contents(a.recall("how do we deploy?"))[0] == "Deploys go through tools/deploy.sh"


def test_vectors_one_process_embedded_serve_the_others(pg_url: str) -> None:
    from aircher_mem.longterm import LongTermMemory

    FakeEmbedder.embedded.clear()
    with LongTermMemory(url=pg_url, embedder=FakeEmbedder) as a, LongTermMemory(url=pg_url, embedder=FakeEmbedder) as b:
        a.remember("Lunch is at noon")
        a.remember("The deploy script lives in tools/release.sh")
        assert a.recall("lunch").channels == ["lexical", "dense"]  # embeds the two and the query
        assert sorted(FakeEmbedder.embedded) == [
            "Lunch is at noon",
            "The deploy script lives in tools/release.sh",
            "lunch",
        ]
        FakeEmbedder.embedded.clear()
        found = b.recall("lunch")
        assert found.channels == ["lexical", "dense"] and FakeEmbedder.embedded == ["lunch"]  # the rows' vectors, read
        assert {c.channel for c in found.hits[0].channels} == {"lexical", "dense"}
        shipped = b.remember("Releases are shipped by running tools/release.sh")
        b.flush()  # embeds it, then the cosine rule merges it into a's memory
        assert (b.get(shipped.memory_id).status, a.get(shipped.memory_id).status) == ("archived", "archived")
        assert [(e.relation, e.memory_id) for e in a.explain(2).related] == [("merged_from", shipped.memory_id)]
    with psycopg.connect(pg_url) as con:
        assert con.execute("SELECT count(*), min(cardinality(vector::REAL[])) FROM memory_vectors").fetchone() == (3, 4)
        kind = con.execute("SELECT pg_typeof(vector)::text FROM memory_vectors LIMIT 1").fetchone()
    assert kind == (("vector",) if pg_cluster.has_pgvector(pg_url) else ("real[]",))  # pgvector's, where there


def test_the_router_places_what_another_process_stored(two: tuple[am.Memory, am.Memory]) -> None:
    """A kept hierarchy takes in the memories another process stores, forgets and
    moves: after each, it holds what grouping every active memory anew gives."""
    from aircher_mem import assembly

    a, b = two

    def grouped(memory: am.Memory) -> dict[str, list[int]]:
        known = memory._hierarchy()
        return {level: [m.id for m in members] for level, members in known.by_level.items()}

    first = a.remember("The billing export runs nightly", domain="billing").memory_id
    a.assemble(query="billing export", budget=2000)
    kept = a._known[None][2]
    second = b.remember("Invoices are archived after a year", domain="billing").memory_id
    b.promote(first, "L0")
    a.recall("invoices")  # a verb: a catches up
    assert grouped(a) == {"L0": [first], "L1": [second], "L2": []}
    assert a._hierarchy() is kept  # placed again, not grouped anew
    b.forget(second)
    a.recall("invoices")
    fresh = assembly.Hierarchy(a.longterm.active())
    assert grouped(a) == {level: [m.id for m in members] for level, members in fresh.by_level.items()}
    assert grouped(a) == {"L0": [first], "L1": [], "L2": []}


def test_a_correction_made_elsewhere_wins_everywhere(two: tuple[am.Memory, am.Memory]) -> None:
    a, b = two
    a.add_turn("s1", "user", "The database is Postgres.")
    corrected = b.add_turn("s2", "user", "Actually, the database is MySQL, not Postgres.")
    assert [(e.action, e.superseded) for e in corrected.extracted] == [("superseded", 1)]
    assert contents(a.recall("which database?"))[0] == "Actually, the database is MySQL, not Postgres."
    assert a.explain(1).memory.superseded_by == 2


def test_a_forget_anywhere_is_gone_everywhere(two: tuple[am.Memory, am.Memory], pg_url: str) -> None:
    a, b = two
    a.add_turn("s1", "user", "My token is in vault path secret/zebra-42 and we use pytest.")
    assert "zebra" in " ".join(contents(b.recall("vault zebra path")))
    b.forget(session_id="s1")
    assert "zebra" not in " ".join(contents(a.recall("vault zebra path")))
    with psycopg.connect(pg_url) as con:
        assert con.execute("SELECT count(*) FROM turns WHERE text LIKE '%zebra%'").fetchone() == (0,)
        assert con.execute("SELECT count(*) FROM memories WHERE content LIKE '%zebra%'").fetchone() == (0,)
        assert con.execute("SELECT count(*) FROM longterm_state WHERE name = 'rewrite'").fetchone() == (0,)


def test_what_a_process_reads_is_what_a_fresh_one_loads(tmp_path: Path, pg_url: str) -> None:
    policy = team_policy(pg_url)
    for name in "abc":
        (tmp_path / name).mkdir()
    with am.Memory.open(tmp_path / "a", policy=policy) as a, am.Memory.open(tmp_path / "b", policy=policy) as b:
        a.add_turn("s1", "user", "We went with FastAPI because the team knows it. We use ruff for linting.")
        b.record_decision("use sessions over JWT", reasons=["tokens grew too large"])
        a.remember("CI runs on GitHub Actions", kind="fact")
        b.add_turn("s2", "user", "Actually, we use black for linting, not ruff.")
        a.feedback(1, "cited")
        seen_by_b = contents(b.recall("linting"))
        chain_b = b.query_chain("why did we use sessions?").text
        listed_b = [(m.id, m.status, m.content) for m in b.memories(status="all", sort="id", limit=100).memories]
    with am.Memory.open(tmp_path / "c", policy=policy) as c:
        assert contents(c.recall("linting")) == seen_by_b
        assert c.query_chain("why did we use sessions?").text == chain_b
        assert [
            (m.id, m.status, m.content) for m in c.memories(status="all", sort="id", limit=100).memories
        ] == listed_b


_WRITER = textwrap.dedent(
    """
    import json, os, sys
    import aircher_mem as am
    from aircher_mem.config import StorePolicy
    url, who, n, root = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    os.makedirs(root, exist_ok=True)
    acked = []
    with am.Memory.open(root, policy=am.Policy(store=StorePolicy(url=url))) as m:
        for i in range(n):
            said = (f"s{who}", "user", f"writer {who} says {i}: we use tool{who}x{i}")
            turn = m.add_turn(*said, idempotency_key=f"{who}-{i}").turn_id
            if i % 3 == 0:  # the answer was lost: the client sends it again
                assert m.add_turn(*said, idempotency_key=f"{who}-{i}").turn_id == turn
            acked.append(turn)
    print(json.dumps(acked))
    """
)


def test_writers_in_several_processes_retrying_lose_nothing_and_store_nothing_twice(
    tmp_path: Path, pg_url: str
) -> None:
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER, pg_url, str(w), "25", str(tmp_path / f"w{w}")],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for w in range(3)
    ]
    acked = []
    for p in writers:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        acked.append(json.loads(out))
    with psycopg.connect(pg_url) as con:
        rows = con.execute("SELECT id, session_id, text FROM turns ORDER BY id").fetchall()
    assert sorted(i for ids in acked for i in ids) == [r[0] for r in rows] == list(range(1, 76))
    for w, ids in enumerate(acked):
        mine = [r for r in rows if r[1] == f"s{w}"]
        assert [r[0] for r in mine] == ids  # in the order acknowledged
        assert [r[2] for r in mine] == [f"writer {w} says {i}: we use tool{w}x{i}" for i in range(25)]


def test_a_write_waits_for_the_lock_then_says_who_holds_it(tmp_path: Path, pg_url: str) -> None:
    (tmp_path / "a").mkdir()
    with am.Memory.open(tmp_path / "a", policy=team_policy(pg_url, lock_seconds=0.5)) as a:
        a.add_turn("s1", "user", "first")
        with psycopg.connect(pg_url, autocommit=True) as other:
            other.execute("SELECT pg_advisory_lock(%s)", [postgres._WRITE_LOCK])
            started = time.monotonic()
            with pytest.raises(StoreLockedError, match=r"held the team's write lock for over 0\.5 s"):
                a.add_turn("s1", "user", "second")
            assert time.monotonic() - started < 10
        # the other process is gone, its lock with it
        assert a.add_turn("s1", "user", "third").turn_id == 2
        assert [t.text for t in a.conversation("s1").short_term] == ["first", "third"]
    with psycopg.connect(pg_url) as con:
        assert con.execute("SELECT text FROM turns ORDER BY id").fetchall() == [("first",), ("third",)]


def test_the_store_section_takes_a_postgresql_url_or_nothing(tmp_path: Path) -> None:
    assert StorePolicy().url == ""
    assert StorePolicy(url="postgres://db/team").url == "postgres://db/team"
    with pytest.raises(PolicyError, match=r"store\.url must be empty or start with postgresql:// or postgres://"):
        StorePolicy(url="mysql://db/team")
    with pytest.raises(PolicyError, match=r"store\.lock_seconds"):
        StorePolicy(lock_seconds=0)
    (tmp_path / ".aircher").mkdir()
    (tmp_path / ".aircher" / "config.toml").write_text('[store]\nurl = "postgresql://ann@db/team"\n')
    assert am.Policy.load(tmp_path).store.url == "postgresql://ann@db/team"
    policy = team_policy("postgresql://ann@db/team")
    assert am.Policy.from_dict(policy.to_dict()) == policy


# -- catching up row by row builds what a load builds ------------------------------------------

_SAID = [
    "We use Postgres for the database.",
    "Actually, the database is MySQL, not Postgres.",
    "We went with FastAPI because the team knows it well.",
    "Never use tabs; we prefer spaces for indentation.",
    "Actually we prefer tabs for indentation now.",
    "The deploy script lives in tools/deploy.sh and CI runs on GitHub Actions.",
    "We can't use Redis since the ops team does not support it.",
    "Ann prefers pytest over unittest for new tests.",
    "What is the release process? It goes through the release branch.",
]
_QUERIES = ["database", "indentation tabs spaces", "deploy", "FastAPI team", "Redis ops", "pytest", "release"]


def _state(memory: am.Memory) -> dict[str, Any]:
    """Everything a long-term store holds in memory that a load builds."""
    lt = memory.longterm
    lt._load()
    lt._refresh_sessions()
    nonempty = lambda d: {k: v for k, v in d.items() if v}  # noqa: E731
    return copy.deepcopy(
        {
            "turns": dict(lt._turns),
            "sessions": nonempty(lt._sessions),
            "position": dict(lt._position),
            "memories": dict(lt._memories),
            "sources": {k: list(v.items()) for k, v in lt._sources.items() if v},
            "memories_of": nonempty(lt._memories_of),
            "edges": {k: sorted(v) for k, v in lt._edges.items() if v},
            "actions": nonempty(lt._actions),
            "children": nonempty(lt._children),
            "episodes": dict(lt._episodes),
            "episode_turns": nonempty(lt._episode_turns),
            "slots": dict(lt._slots),
            "contradictions": dict(lt._contradictions),
            "pairs": sorted(contradictions._pair(lt)),  # kept in place as rows arrive
            "nodes": dict(lt._nodes),
            "causal": sorted(lt._causal.items()),
            "chain_of": nonempty(lt._chain_of),
            "next": (lt._next_turn, lt._next_memory, lt._next_contradiction, lt._next_node),
            "lexical": sorted(lt._lexical.keys()),
            "dedup": sorted(lt._dedup.keys()),
            "sessions_index": sorted(lt._session_lexical.keys()),
            "search": [lt._lexical.search(q, 20) for q in _QUERIES],
            "dedup_search": [lt._dedup.search(q, 20) for q in _QUERIES],
        }
    )


_OPS = st.lists(
    st.tuples(
        st.sampled_from(["a", "b"]),
        st.sampled_from(["say", "remember", "decide", "cite", "resolve", "recall"]),
        st.integers(0, len(_SAID) - 1),
    ),
    min_size=1,
    max_size=10,
)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=_OPS)
def test_a_process_that_caught_up_holds_what_a_fresh_load_builds(
    tmp_path_factory: pytest.TempPathFactory, pg_server: str, ops: list[tuple[str, str, int]]
) -> None:
    folder = tmp_path_factory.mktemp("team")
    for name in "abc":
        (folder / name).mkdir()
    with database(pg_server) as url:
        policy = team_policy(url)
        with am.Memory.open(folder / "a", policy=policy) as a, am.Memory.open(folder / "b", policy=policy) as b:
            a.add_turn("s0", "user", "We use ruff for linting.")  # both have read something
            b.recall("linting")
            for who, op, at in ops:
                m = a if who == "a" else b
                if op == "say":
                    m.add_turn(f"s{who}", "user", _SAID[at])
                elif op == "remember":
                    m.remember(_SAID[at], kind="fact")
                elif op == "decide":
                    m.record_decision(f"decision {at}", reasons=[_SAID[at]])
                elif op == "cite":
                    m.feedback(1, "cited")
                elif op == "resolve":
                    listed = m.contradictions().contradictions
                    if listed and listed[0].status == "open":
                        m.resolve_contradiction(listed[0].id, "b_wins")
                else:
                    m.recall(_SAID[at])
            states = [_state(a), _state(b)]
        with am.Memory.open(folder / "c", policy=policy) as c:
            fresh = _state(c)
    assert states[0] == fresh
    assert states[1] == fresh


def test_a_server_that_crashed_and_restarted_has_every_acknowledged_write(tmp_path: Path) -> None:
    folder = Path(tempfile.mkdtemp(prefix="aircher-pg-"))
    try:
        try:
            url = pg_cluster.start(folder)
        except pg_cluster.Unavailable as exc:
            pytest.skip(str(exc))
        (tmp_path / "a").mkdir()
        with am.Memory.open(tmp_path / "a", policy=team_policy(url)) as a:
            first = a.add_turn("s1", "user", "We use Postgres for the database.", idempotency_key="k1")
            pg_cluster.kill(folder)
            with pytest.raises(StoreError, match=r"server closed the connection|cannot connect"):
                a.add_turn("s1", "user", "We use pytest for tests.", idempotency_key="k2")
            pg_cluster.restart(folder)
            # the client sends the turn that failed again: stored once
            second = a.add_turn("s1", "user", "We use pytest for tests.", idempotency_key="k2")
            assert a.add_turn("s1", "user", "We use pytest for tests.", idempotency_key="k2").turn_id == second.turn_id
            assert (first.turn_id, second.turn_id) == (1, 2)
            assert [t.text for t in a.conversation("s1").short_term] == [
                "We use Postgres for the database.",
                "We use pytest for tests.",
            ]
    finally:
        pg_cluster.stop(folder)


# -- user-private rows ----------------------------------------------------------------------------


def _as(url: str, user: str) -> str:
    """``url`` logged in as ``user``, acting as the role that owns the tables."""
    return url.replace("postgresql://aircher@", f"postgresql://{user}@") + "&options=-c%20role%3Dteam_owner"


@pytest.fixture(scope="module")
def team_roles(pg_server: str) -> str:
    """Two users of one team database (roles ann and bob, members of team_owner)."""
    with psycopg.connect(pg_server, autocommit=True) as con:
        for role, how in (("team_owner", "NOLOGIN"), ("ann", "LOGIN"), ("bob", "LOGIN")):
            if con.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", [role]).fetchone() is None:
                con.execute(f"CREATE ROLE {role} {how}")
        con.execute("GRANT team_owner TO ann, bob")
    return pg_server


def _team_database(admin: str) -> Any:
    made = database(admin)
    url = made.__enter__()
    with psycopg.connect(url, autocommit=True) as con:
        con.execute("GRANT ALL ON SCHEMA public TO team_owner")
    return made, url


_ACTS = st.lists(
    st.tuples(st.sampled_from(["ann", "bob"]), st.sampled_from(["say", "remember"]), st.booleans()),
    min_size=1,
    max_size=8,
)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(acts=_ACTS)
def test_a_users_private_memories_never_reach_another_user(
    tmp_path_factory: pytest.TempPathFactory, team_roles: str, acts: list[tuple[str, str, bool]]
) -> None:
    folder = tmp_path_factory.mktemp("private")
    made, url = _team_database(team_roles)
    try:
        memories = {}
        for user in ("ann", "bob"):
            (folder / user).mkdir()
            memories[user] = am.Memory.open(folder / user, policy=team_policy(_as(url, user)))
        private: dict[str, list[str]] = {"ann": [], "bob": []}
        shared: list[str] = []
        for n, (user, act, secret) in enumerate(acts):
            token = f"zq{n}x"
            scope = "user-private" if secret else "project-shared"
            text = DISTINCT_TEXTS[n].format(token)
            if act == "say":
                memories[user].add_turn(f"s-{user}", "user", text, scope=scope)
            else:
                memories[user].remember(text, kind="decision", scope=scope)
            (private[user] if secret else shared).append(token)
        for user, memory in memories.items():
            other = "bob" if user == "ann" else "ann"
            seen = repr(
                [
                    memory.recall("which tool do we use?", k=50),
                    *(memory.recall(t, k=10).hits for t in private[other] + shared),  # (a query is echoed)
                    memory.memories(status="all", limit=1000),
                    memory.conversation(f"s-{other}"),
                    memory.conversation(f"s-{user}"),
                    memory.contradictions(status="all"),
                    memory.query_chain("why did we choose it for feature flags?"),
                    memory.assemble(budget=4000, query="which tool do we use?"),
                ]
            )
            assert [t for t in private[other] if t in seen] == []
            listed = repr(
                [memory.memories(status="all", limit=1000), *(memory.conversation(f"s-{u}") for u in private)]
            )
            assert [t for t in private[user] + shared if t not in listed] == []
    finally:
        for memory in memories.values():
            memory.close()
        made.__exit__(None, None, None)


def test_a_process_that_slept_past_the_trimmed_log_reads_every_row(
    tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(postgres, "TRIM_EVERY", 2)  # trim every second write ...
    policy = team_policy(pg_url, changes_days=1e-9)  # ... everything written before now
    for name in "abc":
        (tmp_path / name).mkdir()
    with am.Memory.open(tmp_path / "a", policy=policy) as a, am.Memory.open(tmp_path / "b", policy=policy) as b:
        b.add_turn("s0", "user", "We use ruff for linting.")
        for i in range(6):
            a.add_turn("s1", "user", f"Step {i}: we use tool{i} for the release.")
        with psycopg.connect(pg_url) as con:
            through = con.execute("SELECT through FROM team_trimmed").fetchone()[0]
            left = con.execute("SELECT min(seq) FROM team_changes").fetchone()[0]
        assert through >= 6 and left > through  # b's last write is gone from the log
        caught = _state(b)
        assert [t.text for t in b.conversation("s1", k=1).short_term][-1] == "Step 5: we use tool5 for the release."
    with am.Memory.open(tmp_path / "c", policy=policy) as c:
        assert _state(c) == caught


def test_doctor_says_where_long_term_memory_is(tmp_path: Path, pg_url: str) -> None:
    with am.Memory.open(tmp_path, policy=team_policy(pg_url)) as memory:
        memory.add_turn("s1", "user", "We use Postgres for the database.")
    config = tmp_path / ".aircher" / "config.toml"
    config.write_text(team_policy(pg_url).to_toml())
    [check] = [c for c in am.Memory.doctor(tmp_path).checks if c.check == "long-term"]
    assert (check.status, check.detail) == (
        "ok",
        f"{postgres.shown(pg_url)} as aircher: 1 turns, 1 memories (1 active)",
    )


def test_a_watching_process_catches_up_before_it_is_asked(two: tuple[am.Memory, am.Memory]) -> None:
    a, b = two
    a.watch_team()
    a.watch_team()  # once
    said = b.add_turn("s1", "user", "We use Postgres for the database.")
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with a._lock:  # what a's verbs see, without a verb (which would catch up itself)
            if said.turn_id in a.longterm._turns:
                break
        time.sleep(0.05)
    with a._lock:
        assert said.turn_id in a.longterm._turns
    a.close()  # stops the listener first
    assert a._listener is None
