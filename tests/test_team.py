"""A team's long-term memory on PostgreSQL (``[store] url``): several processes and
machines share it; each catches up with the others before a verb and writes with
the team's write lock. Needs a server (tests/pg_cluster.py)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aircher_mem as am
import pytest
from aircher_mem import postgres
from aircher_mem.config import StorePolicy
from aircher_mem.errors import PolicyError, StoreLockedError

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
            acked.append(m.add_turn(f"s{who}", "user", f"writer {who} says {i}: we use tool{who}x{i}").turn_id)
    print(json.dumps(acked))
    """
)


def test_writers_in_several_processes_lose_nothing_and_store_nothing_twice(tmp_path: Path, pg_url: str) -> None:
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
