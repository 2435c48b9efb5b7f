"""Times at the edges of the accepted range: refused outside it with
InvalidInputError, and every accepted one works afterwards (recall, get_context,
explain, memories and the CLI's tables) in the time zones furthest east and west."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path

import aircher_mem as am
import pytest
from aircher_mem.interfaces import cli, render, wire
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

SCRIPT = str(Path(sys.executable).with_name("aircher-mem"))
ZONES = ("Pacific/Kiritimati", "Etc/GMT+12")  # UTC+14 and UTC-12
YEAR_1 = -62_135_596_800.0  # 0001-01-01T00:00:00Z
YEAR_10000 = 253_402_300_800.0  # 10000-01-01T00:00:00Z
FIRST = "0001-01-03T00:00:00Z"
LAST = "9999-12-30T00:00:00Z"


@pytest.fixture
def zone() -> Iterator[list[str]]:
    """Sets this process's time zone (``zone.append(name)``), and puts it back after."""
    old = os.environ.get("TZ")
    names: list[str] = []
    yield names
    if old is None:
        os.environ.pop("TZ", None)
    else:
        os.environ["TZ"] = old
    time.tzset()


def _set_zone(name: str) -> None:
    os.environ["TZ"] = name
    time.tzset()


def _render(result: object) -> str:
    out = io.StringIO()
    render.RENDER[type(result)](result, render.Output(False, out))
    return out.getvalue()


def _cli(root: Path, tz: str, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TZ": tz}
    return subprocess.run(
        [SCRIPT, *argv, "--root", str(root)], capture_output=True, text=True, timeout=120, env=env, check=False
    )


def test_the_range_is_years_1_to_9999_less_two_days() -> None:
    from aircher_mem.checks import MAX_TIME, MIN_TIME, unix_time

    assert (MIN_TIME, MAX_TIME) == (YEAR_1 + 2 * 86_400, YEAR_10000 - 2 * 86_400)
    assert datetime.fromtimestamp(MIN_TIME, timezone.utc).isoformat() == "0001-01-03T00:00:00+00:00"
    assert datetime.fromtimestamp(MAX_TIME, timezone.utc).isoformat() == "9999-12-30T00:00:00+00:00"
    assert unix_time("at", datetime(1, 1, 3)) == MIN_TIME  # naive: UTC
    assert unix_time("at", datetime(9999, 12, 30, tzinfo=timezone.utc)) == MAX_TIME
    assert unix_time("at", datetime(9999, 12, 30, 10, tzinfo=timezone(timedelta(hours=10)))) == MAX_TIME
    for bad in (
        MIN_TIME - 0.001,
        MAX_TIME + 0.001,
        datetime(1, 1, 2, 23, 59, 59),
        datetime(9999, 12, 30, 0, 0, 1),
        datetime(1, 1, 1, tzinfo=timezone(timedelta(hours=1))),  # year 0 in UTC
        float("nan"),
        10**400,
    ):
        with pytest.raises(am.InvalidInputError, match="at must be a finite time from 0001-01-03T00:00:00Z"):
            unix_time("at", bad)
    with pytest.raises(am.InvalidInputError, match="at must be a datetime or Unix seconds, got '2024'"):
        unix_time("at", "2024")


def _main(root: Path, *argv: str) -> tuple[int, str]:
    out = io.StringIO()
    return cli.main([*argv, "--root", str(root)], stdout=out), out.getvalue()


@pytest.mark.slow
def test_edge_times_via_the_cli_are_refused_and_the_store_keeps_working(tmp_path: Path, zone: list[str]) -> None:
    """The CLI sequence that broke a store for good: a turn dated 0001-01-01T00:00:01Z
    or 9999-12-31T23:59:59.999999 was stored, then recall, conversation and explain
    exited 70 whatever the time zone."""
    root = tmp_path / "p"
    root.mkdir()
    with am.Memory.open(root):
        pass
    for tz, edge in zip(ZONES * 2, ("0001-01-01T00:00:01Z", "9999-12-31T23:59:59.999999", "0001-01-02T23:59:59Z")):
        done = _cli(root, tz, "add-turn", "s", "user", "I prefer tabs", "--at", edge)
        assert done.returncode == wire.EXIT_USAGE, done.stderr
        assert done.stderr.startswith("aircher-mem add-turn: at must be a finite time from 0001-01-03T00:00:00Z")
    for text, at in (("I prefer tabs over spaces.", FIRST), ("The database is Postgres.", LAST)):
        code, out = _main(root, "add-turn", "s", "user", text, "--at", at)
        assert code == 0, out
    for tz in ZONES:
        _set_zone(tz)
        for argv in (("recall", "tabs"), ("conversation", "s"), ("explain", "1"), ("memories",)):
            code, out = _main(root, *argv)
            assert code == 0, (tz, argv, out)
    done = _cli(root, "Etc/GMT+12", "recall", "Postgres", "--at", "9999-12-31T00:00:00Z")
    assert done.returncode == wire.EXIT_USAGE
    assert done.stderr.startswith("aircher-mem recall: at must be a finite time from")


_ANY_TIME = st.one_of(
    st.floats(min_value=YEAR_1, max_value=YEAR_10000),
    st.sampled_from([YEAR_1, YEAR_1 + 1, YEAR_1 + 86_400, YEAR_10000 - 1, YEAR_10000 - 86_400, 0.0]),
    st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31, 23, 59, 59, 999_999)),
    st.datetimes(
        min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 31), timezones=st.sampled_from([timezone.utc])
    ),
)


def test_any_accepted_time_works_afterwards_in_every_zone(tmp_path: Path, zone: list[str]) -> None:
    """Property: a turn at any time from year 1 to 9999 is refused with
    InvalidInputError, or recall, get_context, explain, memories and their tables
    work under UTC+14 and UTC-12 (set in this process with tzset)."""
    root = tmp_path / "p"
    root.mkdir()
    counter = [0]
    with am.Memory.open(root) as memory:

        @settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
        @given(at=_ANY_TIME)
        def check(at: float | datetime) -> None:
            counter[0] += 1
            session = f"s{counter[0]}"
            _set_zone("UTC")
            try:
                added = memory.add_turn(session, "user", f"I prefer tabs number {counter[0]}.", at=at)
            except am.InvalidInputError:
                return
            ids = [e.memory_id for e in added.extracted] or [1]
            for tz in ZONES:
                _set_zone(tz)
                _render(memory.recall("tabs", k=5))
                _render(memory.recall("tabs", k=5, at=at))
                _render(memory.conversation(session))
                for memory_id in ids:
                    _render(memory.explain(memory_id))
                _render(memory.memories())

        check()


def test_edge_times_over_http_are_400_and_the_range_ends_are_200(tmp_path: Path) -> None:
    from aircher_mem.interfaces import http
    from starlette.testclient import TestClient

    token = "t" * 40
    root = tmp_path / "p"
    root.mkdir()
    with am.Memory.open(root) as memory:
        app = http.build_app(memory, token=token)
        with TestClient(app, base_url="http://127.0.0.1:8787", headers={"Authorization": f"Bearer {token}"}) as c:
            for at in ("0001-01-01T00:00:01Z", "9999-12-31T23:59:59.999999", "0001-01-02T23:59:59", YEAR_1):
                done = c.post("/add-turn", json={"session_id": "s", "role": "user", "text": "I prefer tabs", "at": at})
                assert done.status_code == 400, done.text
                assert done.json()["error"]["code"] == "invalid_input"
                assert done.json()["error"]["message"].startswith("at must be a finite time from 0001-01-03T00:00:00Z")
            for at in (FIRST, LAST):
                done = c.post("/add-turn", json={"session_id": "s", "role": "user", "text": "I prefer tabs", "at": at})
                assert done.status_code == 200, done.text
            assert c.post("/recall", json={"query": "tabs"}).status_code == 200
            assert [t["at"] for t in c.get("/conversation", params={"session_id": "s"}).json()["short_term"]] == [
                -62_135_424_000.0,
                253_402_128_000.0,
            ]
