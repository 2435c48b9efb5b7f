"""TTLs of long-term memories (seed 000's TTL manager): the defaults by tag, set_ttl
and its checks, expiry at its boundary for each action (mark stale, archive,
delete for good while the turns stay), the stale listing and recall's note, refresh
by file globs (and the globs themselves, hostile ones included), dry runs that
change nothing, and the verbs through the CLI, HTTP and MCP."""

from __future__ import annotations

import datetime as dt
import fnmatch
import functools
import io
import json
import math
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aircher_mem as am
import anyio
import pytest
from aircher_mem.config import LifecyclePolicy
from aircher_mem.errors import InvalidInputError, UnknownMemoryError
from aircher_mem.interfaces import cli, http, wire
from aircher_mem.interfaces.mcp import build_server
from aircher_mem.longterm import LongTermMemory, ttl
from aircher_mem.longterm.schema import MemoryRow
from aircher_mem.results import Expiry
from conftest import Clock
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client
from starlette.testclient import TestClient

T0 = 1_700_000_000.0  # 2023-11-14 22:13:20 UTC
DAY = 86_400.0
HOUR = 3_600.0
ISO_T0 = "2023-11-14T22:13:20Z"


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture(params=["duckdb", "postgres"])
def ltm(request: pytest.FixtureRequest, clock: Clock) -> Iterator[LongTermMemory]:
    """A long-term store in memory, and one on a PostgreSQL server (a database of its own)."""
    url = request.getfixturevalue("pg_url") if request.param == "postgres" else ""
    memory = LongTermMemory(":memory:", clock=clock, url=url)
    yield memory
    memory.close()


def files_holding(folder: Path, word: str) -> list[str]:
    """Every file under ``folder`` whose bytes hold ``word`` (any case)."""
    needle = word.lower().encode()
    return sorted(
        str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() and needle in p.read_bytes().lower()
    )


def actions(ltm: LongTermMemory, memory_id: int) -> list[tuple[str, str]]:
    return [(a.action, a.detail) for a in ltm.explain(memory_id).actions]


# -- defaults ------------------------------------------------------------------------------


def test_a_new_memory_gets_the_default_of_its_first_ttl_tag(ltm: LongTermMemory, clock: Clock) -> None:
    made = {
        tags: ltm.remember(f"memory number {n} about {' '.join(tags) or 'nothing'}", tags=list(tags)).memory_id
        for n, tags in enumerate(
            [("architecture",), ("api",), ("implementation",), ("session",), ("ops",), ("session", "architecture")]
        )
    }
    got = {tags: ltm.get(i) for tags, i in made.items()}
    ttl_of = {tags: (r.ttl_seconds, r.ttl_refresh, r.ttl_on_expire, r.ttl_from) for tags, r in got.items()}
    assert ttl_of == {
        ("architecture",): (30 * DAY, None, "mark_stale", T0),
        ("api",): (7 * DAY, "**/api/**", "mark_stale", T0),
        ("implementation",): (3 * DAY, None, "archive", T0),
        ("session",): (24 * HOUR, None, "delete", T0),
        ("ops",): (None, None, None, None),
        ("session", "architecture"): (30 * DAY, None, "mark_stale", T0),  # architecture comes first
    }
    assert all(r.stale_since is None for r in got.values())


def test_default_for_follows_the_policy() -> None:
    policy = LifecyclePolicy(ttl_api_days=2.0, ttl_api_refresh="src/**", ttl_api_expire="delete", ttl_session_hours=1.5)
    api = MemoryRow(id=1, kind="fact", content="x", tags=["api"])
    assert ttl.default_for(api, policy) == (2 * DAY, "src/**", "delete")
    assert ttl.default_for(MemoryRow(id=2, kind="fact", content="x", tags=["session"]), policy) == (
        1.5 * HOUR,
        None,
        "delete",
    )
    assert ttl.default_for(MemoryRow(id=3, kind="fact", content="x", tags=["API"]), policy) is None
    kept = MemoryRow(id=4, kind="fact", content="x", tags=["api"], ttl_seconds=5.0, created_at=T0)
    ttl.apply_default(kept, policy)  # a memory with a TTL already keeps it
    assert (kept.ttl_seconds, kept.ttl_on_expire, kept.ttl_from) == (5.0, None, None)


def test_a_merge_keeps_the_existing_memorys_ttl(ltm: LongTermMemory, clock: Clock) -> None:
    first = ltm.remember("The payments api returns cents", tags=["api"]).memory_id
    clock.now = T0 + DAY
    again = ltm.remember("The payments api returns cents", tags=["api"])
    assert (again.memory_id, again.action) == (first, "merged")
    assert ltm.get(first).ttl_from == T0


# -- set_ttl -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"ttl_seconds": 0}, "ttl_seconds must be more than 0"),
        ({"ttl_seconds": -5}, "ttl_seconds must be more than 0"),
        ({"ttl_seconds": math.nan}, "ttl_seconds must be more than 0"),
        ({"ttl_seconds": math.inf}, "ttl_seconds must be more than 0"),
        ({"ttl_seconds": 1e13}, "ttl_seconds must be more than 0"),
        ({"ttl_seconds": 10**400}, "ttl_seconds must be more than 0"),
        ({"ttl_seconds": True}, "ttl_seconds must be a number"),
        ({"ttl_seconds": "60"}, "ttl_seconds must be a number"),
        ({"ttl_seconds": 60, "on_expire": "explode"}, "on_expire must be one of mark_stale, archive, delete"),
        ({"ttl_seconds": 60, "refresh_trigger": ""}, "refresh_trigger must be a glob of 1 to 1000"),
        ({"ttl_seconds": 60, "refresh_trigger": "   "}, "refresh_trigger must be a glob of 1 to 1000"),
        ({"ttl_seconds": 60, "refresh_trigger": "a\x00b"}, "refresh_trigger must be a glob of 1 to 1000"),
        ({"ttl_seconds": 60, "refresh_trigger": "*" * 1001}, "refresh_trigger must be a glob of 1 to 1000"),
        ({"ttl_seconds": 60, "refresh_trigger": 5}, "refresh_trigger must be a glob such as"),
        ({"ttl_seconds": None, "refresh_trigger": "**/api/**"}, "refresh_trigger needs a ttl_seconds"),
        ({"ttl_seconds": 60, "now": "yesterday"}, "now must be a datetime or Unix seconds"),
        ({"ttl_seconds": 60, "now": math.nan}, "now must be a finite time"),
    ],
)
def test_set_ttl_refuses_bad_arguments_with_a_typed_error(
    ltm: LongTermMemory, arguments: dict[str, Any], message: str
) -> None:
    memory_id = ltm.remember("The build uses maturin").memory_id
    before = ltm.get(memory_id)
    with pytest.raises(InvalidInputError, match=message.replace("(", r"\(")):
        ltm.set_ttl(memory_id, **arguments)
    assert ltm.get(memory_id) == before


def test_set_ttl_on_an_unknown_or_bad_id(ltm: LongTermMemory) -> None:
    with pytest.raises(UnknownMemoryError, match="no memory 99"):
        ltm.set_ttl(99, 60)
    for bad in (0, -1, True, "1"):
        with pytest.raises(InvalidInputError, match="memory_id must be a positive integer id"):
            ltm.set_ttl(bad, 60)  # type: ignore[arg-type]


def test_set_ttl_sets_restarts_and_clears(ltm: LongTermMemory, clock: Clock) -> None:
    memory_id = ltm.remember("The public api is versioned by path").memory_id
    clock.now = T0 + 10
    record = ltm.set_ttl(memory_id, 3600, refresh_trigger=" src/api/** ", on_expire="archive")
    assert (record.ttl_seconds, record.ttl_refresh, record.ttl_on_expire, record.ttl_from) == (
        3600.0,
        "src/api/**",
        "archive",
        T0 + 10,
    )
    later = ltm.set_ttl(memory_id, 60, now=dt.datetime(2024, 1, 1))
    assert (later.ttl_seconds, later.ttl_refresh, later.ttl_on_expire) == (60.0, None, "mark_stale")
    assert later.ttl_from == dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc).timestamp()
    cleared = ltm.set_ttl(memory_id, None)
    assert (cleared.ttl_seconds, cleared.ttl_refresh, cleared.ttl_on_expire, cleared.ttl_from) == (None,) * 4
    assert actions(ltm, memory_id)[1:] == [
        ("ttl", "1 hour, then archive; refreshed by changes to src/api/**"),
        ("ttl", "1 minute, then mark_stale"),
        ("ttl", "cleared"),
    ]
    assert ltm.expire(T0 + 100 * DAY) == []


def test_set_ttl_survives_reopening_and_explain_shows_it(tmp_path: Path, clock: Clock) -> None:
    path = tmp_path / "m.duckdb"
    with LongTermMemory(path, clock=clock) as ltm:
        memory_id = ltm.remember("Handlers live in src/api").memory_id
        ltm.set_ttl(memory_id, 2 * DAY, refresh_trigger="**/api/**")
    clock.now = T0 + DAY
    with LongTermMemory(path, clock=clock) as ltm:
        record = ltm.get(memory_id)
        assert (record.ttl_seconds, record.ttl_refresh, record.ttl_from) == (2 * DAY, "**/api/**", T0)
        assert ltm.explain(memory_id).ttl == (
            "TTL 2 days from 2023-11-14T22:13:20Z, then mark_stale; refreshed by changes to **/api/**; "
            "expires in 1.0 days"
        )
        assert ltm.explain(ltm.remember("No TTL here").memory_id).ttl == ""


# -- expiry --------------------------------------------------------------------------------


@pytest.mark.parametrize("action", ["mark_stale", "archive", "delete"])
def test_expiry_is_strictly_after_the_ttl(ltm: LongTermMemory, clock: Clock, action: str) -> None:
    memory_id = ltm.remember("The cache is warmed at startup").memory_id
    other = ltm.remember("The logs go to stderr").memory_id  # no TTL: never expires
    ltm.set_ttl(memory_id, 100, on_expire=action)
    assert ltm.expire(T0 + 100) == []  # exactly the TTL: not expired
    assert ltm.get(memory_id).status == "active" and ltm.get(memory_id).stale_since is None
    expected = [Expiry(memory_id, action, "TTL 100 seconds expired 1.0 seconds ago")]  # type: ignore[arg-type]
    assert ltm.expire(T0 + 101, dry_run=True) == expected
    assert ltm.expire(T0 + 101) == expected
    assert ltm.expire(T0 + 102) == []  # done once
    assert ltm.get(other).status == "active"
    if action == "mark_stale":
        record = ltm.get(memory_id)
        assert (record.status, record.stale_since) == ("active", T0 + 101)
        assert actions(ltm, memory_id)[-1] == ("ttl_expired", "stale: TTL 100 seconds expired 1.0 seconds ago")
    elif action == "archive":
        assert ltm.get(memory_id).status == "archived"
        assert actions(ltm, memory_id)[-1] == ("archived", "TTL 100 seconds expired 1.0 seconds ago")
    else:
        with pytest.raises(UnknownMemoryError):
            ltm.get(memory_id)


def test_the_ttl_runs_from_creation_without_ttl_from(ltm: LongTermMemory, clock: Clock) -> None:
    memory_id = ltm.remember("The session token lasts a day", tags=["session"]).memory_id
    row = ltm._memories[memory_id]
    row.ttl_from = None  # as a row written before TTLs had a start
    assert ltm.expire(T0 + DAY) == []
    assert ltm.expire(T0 + DAY + 7200) == [Expiry(memory_id, "delete", "TTL 1 day expired 2.0 hours ago")]


def test_mark_stale_lists_the_memory_and_recall_notes_it(ltm: LongTermMemory, clock: Clock) -> None:
    old = ltm.remember("The scheduler design uses one queue per tenant", tags=["architecture"]).memory_id
    clock.now = T0 + DAY
    newer = ltm.remember("The scheduler retries with backoff").memory_id
    ltm.set_ttl(newer, 3600)
    fresh = ltm.remember("The scheduler runs every minute").memory_id
    ltm.set_ttl(fresh, 3600, on_expire="archive")  # not mark_stale: never listed as stale
    assert ltm.stale().memories == []
    at = T0 + 40 * DAY
    # Past their TTL, not marked yet: listed, oldest expiry first, nothing changed.
    listed = ltm.stale(at).memories
    assert [(m.id, m.stale_since) for m in listed] == [(newer, None), (old, None)]
    hit = next(h for h in ltm.recall("scheduler queue tenant").hits if h.id == old)
    assert hit.notes == []
    clock.now = at
    assert [e.memory_id for e in ltm.expire()] == [old, newer, fresh]
    assert [(m.id, m.stale_since) for m in ltm.stale().memories] == [(old, at), (newer, at)]
    hit = next(h for h in ltm.recall("scheduler queue tenant").hits if h.id == old)
    assert hit.notes == ["stale since 2023-12-24: its TTL expired"]
    assert next(h for h in ltm.recall("scheduler queue tenant", at=T0 + 2 * DAY).hits if h.id == old).notes == []
    # set_ttl starts it again: no longer stale
    ltm.set_ttl(old, 30 * DAY)
    assert [m.id for m in ltm.stale().memories] == [newer]
    assert next(h for h in ltm.recall("scheduler queue tenant").hits if h.id == old).notes == []


def test_archive_takes_the_memory_out_of_recall(ltm: LongTermMemory, clock: Clock) -> None:
    memory_id = ltm.remember("The parser caches tokens per file", tags=["implementation"]).memory_id
    assert [h.id for h in ltm.recall("parser caches tokens").hits] == [memory_id]
    assert ltm.expire(T0 + 3 * DAY + 1) == [Expiry(memory_id, "archive", "TTL 3 days expired 1.0 seconds ago")]
    assert ltm.recall("parser caches tokens").hits == []
    assert [m.id for m in ltm.memories(status="archived").memories] == [memory_id]
    # the slot map and the merge check no longer hold it: the same text makes a new memory
    assert ltm.remember("The parser caches tokens per file").action == "created"


def test_delete_forgets_the_memory_for_good_but_keeps_its_turn(tmp_path: Path) -> None:
    now = [T0]
    with am.Memory.open(tmp_path) as memory:
        memory.longterm.clock = lambda: now[0]
        added = memory.add_turn("s1", "user", "I prefer tabs over spaces.")
        [extracted] = added.extracted
        memory_id = extracted.memory_id
        memory.update(memory_id, content="Zorblefish indentation everywhere")  # text only the memory holds
        kept = memory.remember("Deploys go through staging first").memory_id
        memory.set_ttl(memory_id, 60, on_expire="delete")
        assert files_holding(tmp_path, "Zorblefish") != []
        now[0] = T0 + 61
        assert memory.longterm.expire() == [Expiry(memory_id, "delete", "TTL 1 minute expired 1.0 seconds ago")]
        assert [m.id for m in memory.memories(status="all").memories] == [kept]
        assert all(h.kind == "turn" for h in memory.recall("tabs spaces indentation Zorblefish").hits)
        assert [t.text for t in memory.longterm.turns("s1")] == ["I prefer tabs over spaces."]
        with pytest.raises(UnknownMemoryError):
            memory.explain(memory_id)
    assert files_holding(tmp_path, "Zorblefish") == []
    with am.Memory.open(tmp_path) as memory:
        assert [t.text for t in memory.longterm.turns("s1")] == ["I prefer tabs over spaces."]
        [hit] = memory.recall("tabs over spaces").hits
        assert (hit.kind, hit.id) == ("turn", added.turn_id)
        assert memory.add_turn("s1", "user", "Another note.", extract=False).turn_id == added.turn_id + 1
        assert memory.remember("A new fact after the delete").memory_id == kept + 1  # ids never given twice


def test_erase_keeps_turns_and_unknown_ids_are_left_out(ltm: LongTermMemory) -> None:
    added = ltm.add_turn("s", "user", "I prefer dark mode.")
    memory_id = added.extracted[0].memory_id
    ltm.erase({memory_id, 999})
    assert ltm.memories(status=None).memories == []
    assert [t.id for t in ltm.turns("s")] == [added.turn_id]
    ltm.erase(set())


def test_delete_takes_the_memories_merged_into_it(ltm: LongTermMemory, clock: Clock) -> None:
    first = ltm.remember("The session id rotates hourly", tags=["session"]).memory_id
    second = ltm.remember("The session cookie is httpOnly").memory_id
    row = ltm._memories[second]
    row.status = "archived"  # as a cosine merge leaves a near duplicate
    ltm._edge(second, first, "merged_into", T0)
    ltm.commit()
    found = ltm.expire(T0 + 2 * DAY)
    assert [(e.memory_id, e.action) for e in found] == [(first, "delete"), (second, "delete")]
    assert found[1].reason == "merged into a memory whose TTL expired"
    assert ltm.memories(status=None).memories == []


# -- dry runs --------------------------------------------------------------------------------


def _state(ltm: LongTermMemory) -> Any:
    listed = ltm.memories(status=None, sort="id", limit=1000)
    return (
        wire.to_json(listed),
        {m.id: [(a.at, a.action, a.detail) for a in ltm.explain(m.id).actions] for m in listed.memories},
        ltm.counts(),
    )


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    ttls=st.lists(
        st.tuples(
            st.one_of(st.none(), st.floats(1.0, 10 * DAY)),
            st.sampled_from(["mark_stale", "archive", "delete"]),
            st.floats(0, 5 * DAY),
        ),
        min_size=1,
        max_size=6,
    ),
    at=st.floats(0, 20 * DAY),
)
def test_a_dry_run_changes_nothing_and_says_what_expire_does(
    ttls: list[tuple[float | None, str, float]], at: float
) -> None:
    clock = Clock()
    with LongTermMemory(":memory:", clock=clock) as ltm:
        for n, (seconds, action, start) in enumerate(ttls):
            memory_id = ltm.remember(f"fact number {n} is {'x' * (n + 1)}", tags=["session"] if n % 2 else []).memory_id
            if seconds is not None:
                ltm.set_ttl(memory_id, seconds, on_expire=action, now=T0 + start)
        clock.now = T0 + at
        before = _state(ltm)
        dry = ltm.expire(dry_run=True)
        assert _state(ltm) == before
        assert ltm.expire() == dry
        assert ltm.expire(dry_run=True) == []


# -- refresh -------------------------------------------------------------------------------


def test_refresh_restarts_the_ttls_whose_glob_matches(ltm: LongTermMemory, clock: Clock) -> None:
    api = ltm.remember("The users api returns pages of 50", tags=["api"]).memory_id
    models = ltm.remember("User rows are soft deleted").memory_id
    ltm.set_ttl(models, DAY, refresh_trigger="src/models/*.py")
    plain = ltm.remember("Releases are cut on Tuesdays").memory_id
    ltm.set_ttl(plain, DAY)
    archived = ltm.remember("The old api used XML", tags=["api"]).memory_id
    ltm.update(archived, status="archived")
    clock.now = T0 + 8 * DAY
    ltm.expire()
    assert ltm.get(api).stale_since == T0 + 8 * DAY
    clock.now = T0 + 9 * DAY
    assert ltm.refresh_ttl(["docs/readme.md", "src/apix/a.py", "src/models/sub/x.py"]) == []
    assert ltm.refresh_ttl(["docs/readme.md", "src/api/v1/users.py"]) == [api]
    record = ltm.get(api)
    assert (record.ttl_from, record.stale_since) == (T0 + 9 * DAY, None)
    assert actions(ltm, api)[-1] == ("ttl_refreshed", "src/api/v1/users.py")
    assert ltm.get(models).ttl_from == T0 and ltm.get(plain).ttl_from == T0
    assert ltm.refresh_ttl(["src/models/user.py", "api/x.py"], T0 + 10 * DAY) == [api, models]
    assert ltm.get(models).ttl_from == T0 + 10 * DAY
    assert ltm.get(archived).ttl_from == T0  # archived: never refreshed
    assert ltm.refresh_ttl([]) == []
    assert ttl.has_triggers(ltm)


def test_has_triggers_reads_the_file_without_loading_it(tmp_path: Path, clock: Clock) -> None:
    path = tmp_path / "m.duckdb"
    with LongTermMemory(path, clock=clock) as ltm:
        ltm.remember("The cli prints tables")
    with LongTermMemory(path, clock=clock) as ltm:
        assert not ttl.has_triggers(ltm) and not ltm._loaded
        ltm.remember("The http api speaks JSON", tags=["api"])
    with LongTermMemory(path, clock=clock) as ltm:
        assert ttl.has_triggers(ltm) and not ltm._loaded


def _project(root: Path) -> Path:
    for rel, text in {"src/api/users.py": "def users():\n    return []\n", "src/core.py": "X = 1\n"}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def test_the_service_refreshes_ttls_when_files_change(tmp_path: Path) -> None:
    root = _project(tmp_path / "repo")
    now = [T0]
    with am.Memory.open(root) as memory:
        memory.index()
        memory.longterm.clock = lambda: now[0]
        api = memory.remember("The users endpoint pages by 50", tags=["api"]).memory_id
        # A recorded edit (what the PostToolUse hook records) of a matching file ...
        now[0] = T0 + DAY
        memory.record_file_interaction("src/core.py", "edit")
        assert memory.longterm.get(api).ttl_from == T0
        memory.record_file_interaction("src/api/users.py", "edit", success=False)
        assert memory.longterm.get(api).ttl_from == T0
        memory.record_file_interaction("src/api/users.py", "write")
        assert memory.longterm.get(api).ttl_from == T0 + DAY
        # ... and an index that finds one changed.
        now[0] = T0 + 2 * DAY
        (root / "src/api/users.py").write_text("def users():\n    return [1]\n")
        report = memory.index()
        assert report.updated == ["src/api/users.py"]
        assert memory.longterm.get(api).ttl_from == T0 + 2 * DAY
        assert [a.action for a in memory.explain(api).actions][-2:] == ["ttl_refreshed", "ttl_refreshed"]
    with am.Memory.open(root) as memory:  # long-term memory opened for it by the index
        (root / "src/api/new.py").write_text("Y = 2\n")
        memory.index()
        assert memory.longterm.get(api).ttl_from > T0 + 2 * DAY


def test_a_first_index_refreshes_nothing(tmp_path: Path) -> None:
    root = _project(tmp_path / "repo")
    with am.Memory.open(root) as memory:
        memory.longterm.clock = lambda: T0
        api = memory.remember("The users endpoint pages by 50", tags=["api"]).memory_id
        memory.index()
        assert memory.longterm.get(api).ttl_from == T0


# -- globs ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("**/api/**", "api/x.py", True),
        ("**/api/**", "src/api/v1/h.py", True),
        ("**/api/**", "api", True),
        ("**/api/**", "src/apix/a.py", False),
        ("**/api/**", "src/xapi/a.py", False),
        ("**", "anything/at/all.py", True),
        ("**", "x", True),
        ("*.py", "a.py", True),
        ("*.py", "src/a.py", False),
        ("src/*.py", "src/a.py", True),
        ("src/*.py", "src/sub/a.py", False),
        ("src/**/*.py", "src/a.py", True),
        ("src/**/*.py", "src/a/b/c.py", True),
        ("src/**/*.py", "lib/a.py", False),
        ("src/**/test_*.py", "src/a/test_x.py", True),
        ("src/**/test_*.py", "src/a/xtest_x.py", False),
        ("a?c", "abc", True),
        ("a?c", "ac", False),
        ("a?c", "a/c", False),
        ("**/**/x", "x", True),
        ("a/**/b/**/c", "a/b/c", True),
        ("a/**/b/**/c", "a/x/b/y/z/c", True),
        ("a/**/b/**/c", "a/x/y/c", False),
        ("a**b", "axxb", True),
        ("a**b", "ax/xb", False),
        ("./src//*.py", "src/a.py", True),
        ("src/*.py", "./src/a.py", True),
        ("[ab].py", "[ab].py", True),
        ("[ab].py", "a.py", False),
        ("a.b", "axb", False),
        ("*a*b*c", "xxaxxbxxc", True),
        ("*a*b*c", "xxaxxcxxb", False),
        ("*ab", "aab", True),
    ],
)
def test_glob_matching(pattern: str, path: str, matches: bool) -> None:
    assert ttl.glob_matches(pattern, path) is matches


def _reference(pattern: str, path: str) -> bool:
    """A plain recursive matcher of the same rules, for small inputs."""
    parts = [s for s in pattern.split("/") if s not in ("", ".")]
    names = [s for s in path.split("/") if s not in ("", ".")]

    @functools.cache
    def match(i: int, j: int) -> bool:
        if i == len(parts):
            return j == len(names)
        if parts[i] == "**":
            return match(i + 1, j) or (j < len(names) and match(i, j + 1))
        return j < len(names) and fnmatch.fnmatchcase(names[j], parts[i]) and match(i + 1, j + 1)

    return match(0, 0)


@settings(max_examples=300, deadline=None)
@given(
    pattern=st.text(alphabet="ab*?/", min_size=1, max_size=12).filter(lambda p: p.strip("/") != ""),
    path=st.text(alphabet="ab/", max_size=12),
)
def test_glob_matching_agrees_with_a_plain_recursive_matcher(pattern: str, path: str) -> None:
    assert ttl.glob_matches(pattern, path) is _reference(pattern, path)


@pytest.mark.parametrize(
    ("pattern", "path"),
    [
        ("*a" * 40 + "b", "a" * 5000),
        ("*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*c", "a" * 2000),
        ("**/" * 300 + "x", "/".join(["a"] * 2000)),
        ("**/a/" * 150 + "x", "/".join(["a"] * 2000)),
        ("?" * 900, "a" * 20000),
    ],
)
def test_hostile_globs_answer_quickly(pattern: str, path: str) -> None:
    start = time.perf_counter()
    assert ttl.glob_matches(pattern, path) is False
    assert time.perf_counter() - start < 2.0


def test_globs_are_checked_and_cached() -> None:
    for bad in ("", "  ", "a\x00", "x" * 1001):
        with pytest.raises(InvalidInputError):
            ttl.glob_matches(bad, "a")
    with pytest.raises(InvalidInputError):
        ttl.compile_glob(5)  # type: ignore[arg-type]
    assert ttl.compile_glob("**/api/**") is ttl.compile_glob("**/api/**")
    assert len(ttl.compile_glob("**/**/a/**/**")) == 3


# -- the verbs through the interfaces ------------------------------------------------------


@pytest.fixture
def store(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    am.Memory.open(root).close()
    return root


def cli_json(root: Path, *argv: str) -> Any:
    out = io.StringIO()
    code = cli.main([*argv, "--json", "--root", str(root)], stdout=out)
    data = json.loads(out.getvalue())
    assert (code == 0) == ("error" not in data), (argv, code, data)
    return data


def cli_text(root: Path, *argv: str) -> str:
    out = io.StringIO()
    assert cli.main([*argv, "--root", str(root)], stdout=out) == 0
    return out.getvalue()


def test_set_ttl_and_stale_on_the_command_line(store: Path) -> None:
    cli_json(store, "remember", "Invoices are built nightly", "--at", ISO_T0)
    made = cli_json(store, "set-ttl", "1", "3600", "--on-expire", "mark_stale", "--now", ISO_T0)
    assert (made["id"], made["ttl_seconds"], made["ttl_on_expire"], made["ttl_from"]) == (1, 3600.0, "mark_stale", T0)
    assert cli_json(store, "stale", "--now", "2023-11-14T23:13:20Z") == {"memories": []}  # exactly the TTL
    [listed] = cli_json(store, "stale", "--now", "2023-11-14T23:13:21Z")["memories"]
    assert (listed["id"], listed["stale_since"]) == (1, None)
    assert "ttl: TTL 1 hour from 2023-11-14T22:13:20Z, then mark_stale" in cli_text(store, "explain", "1")
    cleared = cli_json(store, "set-ttl", "1")  # without ttl_seconds: cleared
    assert cleared["ttl_seconds"] is None
    error = cli_json(store, "set-ttl", "1", "0")
    assert error["error"]["code"] == "invalid_input"
    assert cli_json(store, "set-ttl", "9", "60")["error"]["code"] == "unknown_memory"


def test_set_ttl_and_stale_over_http(tmp_path: Path) -> None:
    with am.Memory.open(tmp_path) as memory:
        memory.longterm.clock = lambda: T0
        memory.remember("The api gateway strips cookies", tags=["api"])
        token = "ttl-token-" + "x" * 32
        app = http.build_app(memory, token=token)
        with TestClient(app, base_url="http://127.0.0.1:8787", headers={"Authorization": f"Bearer {token}"}) as c:
            answer = c.post("/set-ttl", json={"memory_id": 1, "ttl_seconds": 60, "refresh_trigger": "gateway/**"})
            assert answer.status_code == 200, answer.text
            assert (answer.json()["ttl_refresh"], answer.json()["ttl_from"]) == ("gateway/**", T0)
            stale = c.get("/stale", params={"now": T0 + 61})
            assert stale.status_code == 200 and [m["id"] for m in stale.json()["memories"]] == [1]
            assert c.get("/stale").json() == {"memories": []}
            bad = c.post("/set-ttl", json={"memory_id": 1, "ttl_seconds": 60, "on_expire": "never"})
            assert bad.status_code == 400, bad.text
            unknown = c.post("/set-ttl", json={"memory_id": 7, "ttl_seconds": 60})
            assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "unknown_memory"


def test_set_ttl_and_stale_as_mcp_tools(tmp_path: Path) -> None:
    async def script(client: Client) -> None:
        def answer(result: Any) -> Any:
            [block] = result.content
            return json.loads(block.text)

        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert "For an agent" in (tools["set_ttl"].description or "")
        assert "refresh_trigger" in (tools["set_ttl"].description or "")
        made = answer(await client.call_tool("remember", {"content": "The api rate limit is 100 per minute"}))
        done = answer(
            await client.call_tool("set_ttl", {"memory_id": made["memory_id"], "ttl_seconds": 10, "now": ISO_T0})
        )
        assert (done["ttl_seconds"], done["ttl_on_expire"]) == (10.0, "mark_stale")
        listed = answer(await client.call_tool("stale", {"now": T0 + 11}))
        assert [m["id"] for m in listed["memories"]] == [made["memory_id"]]
        refused = await client.call_tool("set_ttl", {"memory_id": made["memory_id"], "ttl_seconds": -1})
        assert refused.is_error

    with am.Memory.open(tmp_path) as memory:
        memory.longterm.clock = lambda: T0

        async def run() -> None:
            async with Client(build_server(memory)) as client:
                await script(client)

        anyio.run(run)
