"""A long-term store ``--copies`` times as large as ``SOURCE`` (the file
``bench_longterm.py`` builds: 100K turns + 100K memories), for timing recall at a
million of each (``team_recall.py --store TARGET``). Each copy holds every row of
the source with its ids moved past the previous copy's (turns, memories,
contradictions and causal nodes, and every column that names one), its session ids
and texts marked with the copy's number (``~c3`` after a session id, `` (copy 3)``
after a text), so the copies are distinct rows and distinct documents. The saved
indexes are left out: the first open builds them for the whole store.

Replicated text is a pessimistic stand-in for a million real turns: each word's
posting list is ``--copies`` times as long, where new text would also bring new
words. It measures latency, not recall quality.

    python benches/scale_store.py SOURCE TARGET [--copies 10]
"""

from __future__ import annotations

import argparse
import os
import shutil
import time
from pathlib import Path
from typing import Any

import duckdb

#: Per table: the columns that hold an id moved by each copy (its own and those naming
#: another row's), the session columns and the text columns marked with the copy.
TABLES: dict[str, tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]] = {
    "turns": (("id",), ("session_id",), ("text",)),
    "memories": (("id", "parent_id", "superseded_by"), (), ("content", "summary", "compressed", "index_text")),
    "memory_links": (("memory_id", "turn_id"), (), ()),
    "memory_edges": (("source_id", "target_id"), (), ()),
    "memory_actions": (("memory_id",), (), ()),
    "contradictions": (("id", "memory_a", "memory_b"), (), ()),
    "causal_nodes": (("id", "decision_id", "turn_id"), ("session_id",), ("content",)),
    "causal_edges": (("from_id", "to_id"), (), ()),
    "episodes": (("memory_id",), ("session_id",), ()),
}
#: Left as they are: one row of state, or nothing a copy repeats.
KEPT = ("longterm_state", "schema_versions", "rejected_facts")
#: Not copied: the saved indexes' generation and the log of changes since (the copy
#: rebuilds them), vectors and idempotency keys (none in the bench store).
DROPPED = ("longterm_indexes", "longterm_index_log", "memory_vectors", "request_keys")


def scalar(con: duckdb.DuckDBPyConnection, sql: str) -> Any:
    row = con.execute(sql).fetchone()
    assert row is not None
    return row[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", type=Path)
    parser.add_argument("target", type=Path)
    parser.add_argument("--copies", type=int, default=10)
    args = parser.parse_args()
    if args.target.exists():
        raise SystemExit(f"{args.target} exists")
    started = time.perf_counter()
    shutil.copyfile(args.source, args.target)
    os.chmod(args.target, 0o600)
    con = duckdb.connect(str(args.target))
    tables = {name for (name,) in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    unknown = tables - set(TABLES) - set(KEPT) - set(DROPPED)
    if unknown:
        raise SystemExit(f"tables this script does not know how to copy: {sorted(unknown)}")
    step = 1 + max(
        scalar(con, f"SELECT coalesce(max({column}), 0) FROM {table}")
        for table, (ids, _, _) in TABLES.items()
        if table in tables
        for column in ids
    )
    for table in DROPPED:
        if table in tables:
            con.execute(f"DELETE FROM {table}")
    for table, (ids, sessions, texts) in TABLES.items():
        if table not in tables:
            continue
        columns = [field[0] for field in con.execute(f"SELECT * FROM {table} LIMIT 0").description]
        con.execute(f"CREATE TEMP TABLE original AS SELECT * FROM {table}")
        for copy in range(1, args.copies):
            values = []
            for column in columns:
                if column in ids:
                    values.append(f"{column} + {copy * step}")
                elif column in sessions:
                    values.append(f"{column} || '~c{copy}'")
                elif column in texts:
                    values.append(f"CASE WHEN {column} = '' THEN {column} ELSE {column} || ' (copy {copy})' END")
                else:
                    values.append(column)
            con.execute(f"INSERT INTO {table} SELECT {', '.join(values)} FROM original")
        con.execute("DROP TABLE original")
        print(f"{table}: {scalar(con, f'SELECT count(*) FROM {table}'):,} rows", flush=True)
    con.execute("CHECKPOINT")
    con.close()
    print(f"{args.target}: {args.copies} copies in {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
