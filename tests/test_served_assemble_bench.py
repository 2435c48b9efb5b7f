"""The served-assemble bench (benches/served_assemble.py): the project it serves holds
a copy of the store and its saved indexes, and one round against a real server
reports every request it times."""

from __future__ import annotations

from pathlib import Path

from aircher_mem.longterm import LongTermMemory
from aircher_mem.longterm.core import INDEX_SUFFIXES
from conftest import bench_script

bench = bench_script("served_assemble")


def _store(path: Path) -> Path:
    with LongTermMemory(path) as lt:
        lt.remember("We deploy with Nomad because the cluster is tiny", kind="decision")
        lt.remember("The parser runs before the linker", domain="build")
    return path


def test_the_project_holds_a_copy_of_the_store_and_its_indexes(tmp_path: Path) -> None:
    store = _store(tmp_path / "lt.duckdb")
    saved = [suffix for suffix in INDEX_SUFFIXES if Path(f"{store}{suffix}").is_file()]
    assert saved == list(INDEX_SUFFIXES)  # saved beside the store at its close (not its lock file)
    bench.project(store, tmp_path / "app")
    copied = sorted(p.name for p in (tmp_path / "app" / ".aircher").iterdir())
    assert copied == sorted(["memory.duckdb", *(f"memory.duckdb{suffix}" for suffix in saved)])
    assert (tmp_path / "app" / ".aircher" / "memory.duckdb").read_bytes() == store.read_bytes()


def test_one_round_times_every_request(tmp_path: Path) -> None:
    found = bench.main(_store(tmp_path / "lt.duckdb"), 1, None)
    [(name, timed)] = found["builds"].items()
    assert name == "this build" and timed["load_ms"] > 0
    assert {case: set(timed[case]) for case in bench.CASES} == {case: {"median_ms", "p95_ms"} for case in bench.CASES}
    assert all(timed[case]["median_ms"] > 0 for case in bench.CASES)
