"""benches/team_writers.py: writers on one team database, each turn, memory and
record acknowledged is on the server once, the retried ones too."""

from __future__ import annotations

import sys

import pytest
from conftest import bench_script

pytest.importorskip("psycopg", reason="psycopg 3 is not installed (pip install 'aircher-mem[team]')")
bench = bench_script("team_writers")


def test_every_acknowledged_write_is_there_once(
    pg_server: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "argv", ["team_writers.py", "--writers", "2", "--turns", "12", "--url", pg_server])
    bench.main()
    report = dict(line.split(": ", 1) for line in capsys.readouterr().out.splitlines())
    assert report["acknowledged"] == "72"  # 2 writers x 12 x (turn, memory, record)
    assert (report["turns on the server"], report["records on the server"]) == ("24", "24")
    assert report["tool calls the tasks count"] == "24"
    assert report["lost"] == "0"
    for twice in ("turn texts stored twice", "facts stored twice", "records stored twice"):
        assert report[twice] == "0"
