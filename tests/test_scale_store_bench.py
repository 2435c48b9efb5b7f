"""benches/scale_store.py: a long-term store made N times as large holds N distinct
copies of every row, each copy's ids and the ids its rows name moved together."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from aircher_mem.longterm import LongTermMemory
from conftest import Clock, bench_script

bench = bench_script("scale_store")


def test_each_copy_is_the_store_again_with_its_own_ids(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    clock = Clock()
    source, target = tmp_path / "small.duckdb", tmp_path / "big.duckdb"
    with LongTermMemory(source, clock=clock) as lt:
        lt.add_turn("s1", "user", "The database is Postgres.")
        lt.add_turn("s1", "user", "Actually, the database is MySQL, not Postgres.")
        lt.remember("The billing service talks to Stripe.", kind="fact")
        before = lt.counts()
    monkeypatch.setattr(sys, "argv", ["scale_store.py", str(source), str(target), "--copies", "3"])
    bench.main()
    with LongTermMemory(target, clock=clock) as lt:
        after = lt.counts()
        assert {k: after[k] for k in ("turns", "sessions", "memories", "active", "archived")} == {
            k: 3 * before[k] for k in ("turns", "sessions", "memories", "active", "archived")
        }
        assert [t.text for t in lt.turns("s1~c2")] == [
            "The database is Postgres. (copy 2)",
            "Actually, the database is MySQL, not Postgres. (copy 2)",
        ]
        listed = lt.memories(status=None, limit=100).memories
        assert len({m.id for m in listed}) == len(listed) == after["memories"]
        (corrected,) = [m for m in listed if m.content == "Actually, the database is MySQL, not Postgres. (copy 2)"]
        old = [m for m in listed if m.superseded_by == corrected.id]
        assert [m.content for m in old] == ["The database is Postgres. (copy 2)"]
        assert "MySQL" in lt.recall("which database is MySQL?", k=3).hits[0].content
        links = lt.explain(corrected.id).links
        assert [(link.turn.session_id, link.turn.text) for link in links] == [
            ("s1~c2", "Actually, the database is MySQL, not Postgres. (copy 2)")
        ]
    with pytest.raises(SystemExit, match="exists"):
        bench.main()
