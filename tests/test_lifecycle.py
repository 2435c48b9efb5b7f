"""How memories age (seeds 000, 001, 003): episodes, the hot/warm/cold layers and
their priority, lazy unpacking, and the consolidation pass with its thresholds."""

from __future__ import annotations

import dataclasses
import itertools
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from aircher_mem import Memory, Policy
from aircher_mem.config import LifecyclePolicy, LongtermPolicy
from aircher_mem.longterm import LongTermMemory
from aircher_mem.longterm.layers import placement, priority
from aircher_mem.longterm.schema import MemoryRow
from conftest import Clock
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

DAY = 86_400.0
MINUTE = 60.0
T0 = 1_700_000_000.0
SCRIPT = str(Path(sys.executable).with_name("aircher-mem"))

PUPPY = [
    "We adopted a puppy named Biscuit, and his training starts at the puppy school.",
    "Biscuit the puppy already knows sit, and the training is going well.",
    "Puppy school training for Biscuit is on Tuesdays with other puppies.",
    "The puppy training treats Biscuit likes are the chicken ones.",
]
DATABASE = "The billing service stores invoices in PostgreSQL with JSON columns."


def store(tmp_path: Path, clock: Clock, **lifecycle: Any) -> LongTermMemory:
    return LongTermMemory(
        tmp_path / "m.duckdb",
        clock=clock,
        policy=LongtermPolicy(merge_jaccard=1.0),
        lifecycle=LifecyclePolicy(**lifecycle),
    )


def episodes_of(lt: LongTermMemory) -> list[list[int]]:
    """Each episode's raw turn ids, in the order the episodes were made."""
    return [
        [link.turn.id for link in lt.explain(m.id).links if link.reason == "episode"]
        for m in sorted(lt.memories(kind="episode", limit=1000).memories, key=lambda m: m.id)
    ]


def say(lt: LongTermMemory, text: str, at: float, session: str = "s", **metadata: Any) -> int:
    return lt.add_turn(session, "user", text, speaker="Ann", at=at, metadata=metadata or None, extract=False).turn_id


# -- episodes ---------------------------------------------------------------------------


def test_a_time_gap_over_the_threshold_starts_an_episode_and_one_at_it_does_not(tmp_path: Path) -> None:
    clock = Clock()
    with store(tmp_path, clock) as lt:
        ids = [say(lt, PUPPY[i % 4], T0 + i * MINUTE) for i in range(3)]
        ids.append(say(lt, PUPPY[3], T0 + 2 * MINUTE + 30 * MINUTE))  # exactly 30 minutes later: the same
        ids.append(say(lt, PUPPY[0], T0 + 2 * MINUTE + 60 * MINUTE + 1))  # 30 minutes and 1 s: a new one
        report = lt.consolidate(now=T0 + DAY)
        assert (report.episodes, report.extended) == (2, 0)
        assert episodes_of(lt) == [ids[:4], ids[4:]]
        reasons = [a.reason for a in report.actions if a.action == "episode"]
        assert reasons == ["4 turns of session s", "1 turns of session s after a time gap"]


def test_a_task_switch_and_a_topic_shift_start_episodes(tmp_path: Path) -> None:
    clock = Clock()
    with store(tmp_path, clock) as lt:
        first = [say(lt, PUPPY[i], T0 + i * MINUTE, task_id="t1") for i in range(4)]
        shifted = say(lt, DATABASE, T0 + 4 * MINUTE, task_id="t1")  # shares no word with the puppy turns
        switched = say(lt, DATABASE, T0 + 5 * MINUTE, task_id="t2")
        report = lt.consolidate(now=T0 + DAY)
        assert episodes_of(lt) == [first, [shifted], [switched]]
        reasons = [a.reason for a in report.actions if a.action == "episode"]
        assert reasons == [
            "4 turns of session s",
            "1 turns of session s after a topic shift",
            "1 turns of session s after a task switch",
        ]


def test_a_topic_shift_needs_the_minimum_turns_and_size_caps_an_episode(tmp_path: Path) -> None:
    clock = Clock()
    with store(tmp_path, clock, episode_max_turns=3) as lt:
        ids = [say(lt, PUPPY[0], T0), say(lt, DATABASE, T0 + MINUTE)]  # a shift after 1 turn: too early
        ids += [say(lt, PUPPY[1], T0 + 2 * MINUTE), say(lt, PUPPY[2], T0 + 3 * MINUTE)]
        lt.consolidate(now=T0 + DAY)
        assert episodes_of(lt) == [ids[:3], ids[3:]]


def test_new_turns_extend_the_last_episode_or_start_one_that_continues_from_it(tmp_path: Path) -> None:
    clock = Clock()
    with store(tmp_path, clock) as lt:
        ids = [say(lt, PUPPY[i], T0 + i * MINUTE) for i in range(2)]
        assert lt.consolidate(now=T0 + DAY).episodes == 1
        ids.append(say(lt, PUPPY[2], T0 + 3 * MINUTE))
        report = lt.consolidate(now=T0 + DAY)
        assert (report.episodes, report.extended) == (0, 1)
        later = say(lt, PUPPY[3], T0 + DAY)
        assert lt.consolidate(now=T0 + 2 * DAY).episodes == 1
        assert episodes_of(lt) == [ids, [later]]
        first, second = sorted(m.id for m in lt.memories(kind="episode").memories)
        assert ("continues_from", first) in [(e.relation, e.memory_id) for e in lt.explain(second).related]
        shown = lt.explain(first).episode
        assert shown is not None and shown.origin == "conversation" and shown.session_id == "s"
        assert (
            shown.entities == []
            and lt.get(first).content
            == "We adopted a puppy named Biscuit, and his training starts at the puppy school."
        )
        lt.consolidate(now=T0 + 8 * DAY)  # a week old: formed
        shown = lt.explain(first).episode
        assert shown is not None and "Biscuit" in shown.entities and lt.get(first).summary


def test_an_episode_survives_reopening_with_its_turns(tmp_path: Path) -> None:
    clock = Clock()
    with store(tmp_path, clock) as lt:
        ids = [say(lt, PUPPY[i], T0 + i * MINUTE) for i in range(3)]
        lt.consolidate(now=T0 + DAY)
    with store(tmp_path, clock) as again:
        assert episodes_of(again) == [ids]
        assert again.consolidate(now=T0 + DAY).episodes == 0


# -- layers and priority ------------------------------------------------------------------


def aged(days: float, **fields: Any) -> tuple[MemoryRow, float]:
    memory = MemoryRow(id=1, kind="fact", content="x", last_seen=T0, **fields)
    return memory, T0 + days * DAY


@pytest.mark.parametrize(
    ("days", "tier"),
    [(0.0, "hot"), (13.999, "hot"), (14.0, "warm"), (89.999, "warm"), (90.0, "cold"), (400.0, "cold")],
)
def test_the_layer_by_days_since_the_last_access(days: float, tier: str) -> None:
    memory, now = aged(days)
    assert placement(memory, now, LifecyclePolicy())[0] == tier


def test_anchors_never_go_cold() -> None:
    for fields in ({"importance": 1}, {"tags": ["anchor"]}, {"is_anchor": True}):
        memory, now = aged(1000.0, **fields)
        assert placement(memory, now, LifecyclePolicy())[:1] == ("warm",)


def test_the_priority_thresholds_are_strict() -> None:
    # frequency alone: one use saturates (saturation 1), so the priority is exactly the weight
    policy = LifecyclePolicy(recency_weight=0.0, frequency_weight=0.3, frequency_saturation=1)
    memory, now = aged(200.0, retrieved=1)
    assert priority(memory, now, policy) == pytest.approx(0.3)
    assert placement(memory, now, policy)[0] == "cold"  # 0.3 is not above 0.3
    assert placement(memory, now, dataclasses.replace(policy, frequency_weight=0.31))[0] == "warm"
    hot = LifecyclePolicy(recency_weight=0.0, frequency_weight=0.7, frequency_saturation=1)
    assert placement(memory, now, hot)[0] == "warm"  # 0.7 is not above 0.7
    assert placement(memory, now, dataclasses.replace(hot, frequency_weight=0.71))[0] == "hot"


def test_priority_is_003s_formula() -> None:
    policy = LifecyclePolicy()
    memory, now = aged(14.0, retrieved=2, cited=1, ignored=1, importance=1)
    uses = 2 + 2 * 1 - 1
    import math

    expected = 0.3 * 0.5 + 0.2 * math.log1p(uses) / math.log1p(10) + 0.3
    assert priority(memory, now, policy) == pytest.approx(expected)
    assert priority(memory, now, policy, relevance=1.0) == pytest.approx(expected + 0.2)


# -- consolidation thresholds ---------------------------------------------------------------

WORDS = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima".split()


def test_facts_merge_at_the_similarity_threshold(tmp_path: Path) -> None:
    clock = Clock()
    with store(tmp_path, clock) as lt:
        base = lt.remember(" ".join(WORDS)).memory_id
        near = lt.remember(" ".join([*WORDS, "mike"])).memory_id  # cosine 12 / sqrt(12 * 13) = 0.961
        far = lt.remember(" ".join([*WORDS, "mike", "november", "oscar"])).memory_id  # 12 / sqrt(12 * 15) = 0.894
        assert len({base, near, far}) == 3
        dry = lt.consolidate(now=T0, dry_run=True)
        report = lt.consolidate(now=T0)
        assert dry.deduped == report.deduped == 1
        assert [(a.memory_id, a.action) for a in report.actions if a.action == "merged"] == [(near, "merged")]
        assert lt.get(near).status == "archived" and lt.get(far).status == "active"
        assert ("merged_into", base) in [(e.relation, e.memory_id) for e in lt.explain(near).related]


@pytest.mark.parametrize(
    ("days", "summarized", "compressed"), [(6.999, 0, 0), (7.0, 1, 0), (29.999, 1, 0), (30.0, 1, 1)]
)
def test_episodes_are_formed_at_7_days_and_counted_compressed_at_30(
    tmp_path: Path, days: float, summarized: int, compressed: int
) -> None:
    clock = Clock()
    with store(tmp_path, clock) as lt:
        say(lt, "The team decided to use PostgreSQL as the primary database because of its JSON support.", T0)
        report = lt.consolidate(now=T0 + days * DAY)
        assert (report.summarized, report.compressed, report.pending) == (summarized, compressed, 0)
        (episode,) = lt.memories(kind="episode").memories
        assert (episode.compressed, episode.index_text) == (
            ("team decided use PostgreSQL primary database JSON support", "postgresql_json_team")
            if summarized
            else ("", "")
        )


def test_forming_stops_when_the_pass_has_used_its_time(tmp_path: Path) -> None:
    clock = Clock()
    with store(tmp_path, clock, consolidate_forms_seconds=0.0) as lt:
        say(lt, PUPPY[0], T0)
        say(lt, DATABASE, T0 + DAY)
        report = lt.consolidate(now=T0 + 30 * DAY)
        assert (report.episodes, report.summarized, report.pending) == (2, 0, 2)


def test_a_memory_is_served_from_its_summary_warm_and_its_key_words_cold(tmp_path: Path) -> None:
    clock = Clock()
    with store(tmp_path, clock) as lt:
        text = "Well, the team decided to use PostgreSQL as the primary database because of its JSON support."
        memory_id = lt.remember(text, at=T0).memory_id
        assert lt.get(memory_id).summary == ""
        clock.now = T0 + 20 * DAY
        assert lt.consolidate(now=clock.now, dry_run=True).tiers["warm"] == 1
        assert lt.get(memory_id).summary == ""  # a dry run makes nothing
        lt.consolidate(now=clock.now)
        assert lt.get(memory_id).tier == "warm"
        # the pass made its forms: recall only reads them
        assert lt.get(memory_id).summary == "T" + text.removeprefix("Well, t")
        (hit,) = [h for h in lt.recall("PostgreSQL database").hits if h.id == memory_id]
        assert (hit.tier, hit.content) == ("warm", "T" + text.removeprefix("Well, t"))
        record = lt.get(memory_id)
        assert (record.compressed, record.index_text) == (
            "team decided use PostgreSQL primary database JSON support",
            "postgresql_json_team",
        )


def test_a_changed_content_is_served_from_forms_of_the_new_text(tmp_path: Path) -> None:
    clock = Clock()
    with store(tmp_path, clock) as lt:
        memory_id = lt.remember("The team uses MySQL as the primary database.", at=T0).memory_id
        clock.now = T0 + 20 * DAY
        lt.consolidate(now=clock.now)
        assert lt.get(memory_id).summary == "The team uses MySQL as the primary database."
        lt.update(memory_id, content="The team uses PostgreSQL as the primary database.")
        record = lt.get(memory_id)
        assert (record.summary, record.compressed, record.index_text) == ("", "", "")
        (hit,) = [h for h in lt.recall("primary database").hits if h.id == memory_id]
        assert hit.content == "The team uses PostgreSQL as the primary database."
        assert "MySQL" not in lt.get(memory_id).compressed


@pytest.mark.parametrize(("days", "forgotten"), [(89.999, 0), (90.0, 1)])
def test_unused_memories_are_forgotten_after_90_days_but_not_their_turns(
    tmp_path: Path, days: float, forgotten: int
) -> None:
    clock = Clock()
    with store(tmp_path, clock) as lt:
        turn = lt.add_turn("s", "user", "I prefer tabs over spaces for indentation.", at=T0)
        (extracted,) = [e.memory_id for e in turn.extracted]
        kept = lt.remember("Always run the tests before a release.", importance=1, at=T0).memory_id
        report = lt.consolidate(now=T0 + days * DAY)
        assert report.forgotten == forgotten
        ids = {m.id for m in lt.memories(status=None, limit=100).memories}
        assert (extracted in ids) == (not forgotten)
        assert kept in ids  # an anchor
        assert [t.id for t in lt.turns("s")] == [turn.turn_id]  # the raw turn stays


def test_a_superseded_memory_is_forgotten_unless_cited_within_30_days(tmp_path: Path) -> None:
    clock = Clock()
    with store(tmp_path, clock) as lt:
        old = lt.remember("I prefer tabs for indentation.", at=T0).memory_id
        new = lt.remember("I prefer spaces for indentation.", at=T0 + DAY)
        assert new.superseded == old
        clock.now = T0 + 2 * DAY
        lt.feedback(old, "cited")
        assert lt.consolidate(now=T0 + 32 * DAY, dry_run=True).forgotten == 0
        report = lt.consolidate(now=T0 + 32 * DAY + 1)
        assert [(a.memory_id, a.action) for a in report.actions if a.action == "forgotten"] == [(old, "forgotten")]
        assert report.contradictions_found == 1
        assert old not in {m.id for m in lt.memories(status=None).memories}


# -- serving from the layers and lazy unpacking -------------------------------------------------

LONG = (
    "Yesterday Ann repainted the garden shed, fixed the gate, planted tulips, trimmed hedges, cleaned gutters, "
    "washed windows, sorted the garage, oiled hinges, replaced bulbs, swept the porch, mended a fence, "
    "weeded beds, watered ferns, stacked firewood, raked leaves, scrubbed tiles, tuned the bicycle, "
    "patched the roof, cleared the drain, polished brass, repotted cacti, painted railings, and finally "
    "adopted a tortoise named Sheldon."
)


def test_a_cold_turn_is_served_compressed_and_unpacked_when_the_match_is_only_raw(tmp_path: Path) -> None:
    clock = Clock(T0 + 200 * DAY)
    with store(tmp_path, clock) as lt:
        plain = say(lt, "Ann repainted the garden shed green last weekend.", T0)
        long = say(lt, LONG, T0 + MINUTE)
        lt.consolidate(now=T0 + 200 * DAY)
        (episode,) = lt.memories(kind="episode").memories
        assert episode.tier == "cold"
        hit = lt.recall("garden shed green", k=1).hits[0]
        assert (hit.kind, hit.id, hit.tier, hit.unpacked) == ("turn", plain, "cold", False)
        assert hit.content == "ann repainted garden shed green last weekend" == hit.turns[0].text
        unpacked = lt.recall("tortoise Sheldon", k=1).hits[0]
        assert (unpacked.id, unpacked.tier, unpacked.unpacked, unpacked.content) == (long, "hot", True, LONG)
        assert lt.get(episode.id).tier == "hot"
        (move,) = [a for a in lt.explain(episode.id).actions if a.action == "unpacked"]
        assert move.detail == f"cold -> hot: matched 'tortois' only in raw turn {long}"
        assert lt.recall("garden shed green", k=1).hits[0].tier == "hot"  # the episode is hot again


def test_found_by_what_is_served_a_cold_turn_needs_a_word_of_its_compressed_form(tmp_path: Path) -> None:
    clock = Clock(T0 + 200 * DAY)
    with store(tmp_path, clock, recall_finds_by="served") as lt:
        plain = say(lt, "Ann repainted the garden shed green last weekend.", T0)
        long = say(lt, LONG, T0 + MINUTE)
        lt.consolidate(now=T0 + 200 * DAY)
        (episode,) = lt.memories(kind="episode").memories
        # "tortoise" is only in the raw turn: its compressed form does not find it
        assert lt.recall("tortoise", k=5).hits == []
        assert lt.get(episode.id).tier == "cold"
        hit = lt.recall("garden shed green", k=1).hits[0]
        assert (hit.id, hit.tier, hit.unpacked) == (plain, "cold", False)
        # "Sheldon" is in it: found by it, and unpacked for "tortoise"
        unpacked = lt.recall("tortoise Sheldon", k=1).hits[0]
        assert (unpacked.id, unpacked.tier, unpacked.unpacked, unpacked.content) == (long, "hot", True, LONG)
        assert lt.recall("tortoise", k=1).hits[0].id == long  # hot again: found by its raw text
    with store(tmp_path / "raw", clock) as lt:  # the default finds it by its raw text
        long = say(lt, LONG, T0)
        lt.consolidate(now=T0 + 200 * DAY)
        (found,) = lt.recall("tortoise", k=5).hits
        assert (found.id, found.unpacked) == (long, True)


def test_conversation_episodes_are_listed_only_when_asked_and_recall_at_serves_raw(tmp_path: Path) -> None:
    clock = Clock(T0 + 200 * DAY)
    with store(tmp_path, clock) as lt:
        turn = say(lt, PUPPY[0], T0)
        lt.consolidate(now=T0 + 200 * DAY)
        assert {h.kind for h in lt.recall("puppy Biscuit").hits} == {"turn"}
        (hit,) = lt.recall("puppy Biscuit", kinds=["episode"]).hits
        assert hit.kind == "episode" and [t.id for t in hit.turns] == [turn]
        (raw,) = lt.recall("puppy Biscuit", at=T0 + DAY).hits
        assert (raw.tier, raw.content) == ("hot", PUPPY[0])


@pytest.mark.parametrize("days", [1.0, 200.0], ids=["not formed yet", "formed"])
def test_an_episode_made_by_a_pass_is_found_formed_or_not(tmp_path: Path, days: float) -> None:
    clock = Clock(T0 + days * DAY)
    with store(tmp_path, clock) as lt:
        turn = say(lt, PUPPY[0], T0)
        report = lt.consolidate(now=T0 + days * DAY)
        assert (report.episodes, report.summarized) == (1, int(days >= 7))
        (hit,) = lt.recall("puppy Biscuit", kinds=["episode"]).hits
        assert [t.id for t in hit.turns] == [turn]


# -- forget reaches episodes ------------------------------------------------------------------


def test_forgetting_a_turn_remakes_its_episode_and_the_last_turn_takes_it(tmp_path: Path) -> None:
    clock = Clock()
    with store(tmp_path, clock) as lt:
        kept = say(lt, PUPPY[1], T0)
        gone = say(lt, "Biscuit the puppy swallowed a zircon earring during training.", T0 + MINUTE)
        lt.consolidate(now=T0 + DAY)
        (episode,) = lt.memories(kind="episode").memories
        assert lt.forget(text="zircon earring").turns == [gone]
        assert episodes_of(lt) == [[kept]]
        shown = lt.explain(episode.id)
        texts = [shown.memory.content, shown.memory.summary, shown.memory.compressed, shown.memory.index_text]
        assert shown.episode is not None
        texts += shown.episode.key_points + shown.episode.entities + shown.episode.decisions
        assert not any("zircon" in t.lower() for t in texts)
        assert lt.forget(text="already knows sit").turns == [kept]
        assert lt.memories(kind="episode").memories == []
    data = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.is_file())
    assert b"zircon" not in data and b"knows sit" not in data


# -- dry runs ----------------------------------------------------------------------------------


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    texts=st.lists(st.sampled_from([*PUPPY, DATABASE, "I prefer tabs.", "I prefer spaces.", LONG]), max_size=8),
    gaps=st.lists(st.floats(0, 3 * DAY), min_size=8, max_size=8),
    later=st.floats(0, 400),
)
def test_a_dry_run_changes_nothing_and_says_what_the_pass_does(
    tmp_path_factory: pytest.TempPathFactory, texts: list[str], gaps: list[float], later: float
) -> None:
    clock = Clock()
    with store(tmp_path_factory.mktemp("dry"), clock) as lt:
        at = T0
        for text, gap in zip(texts, gaps):
            at += gap
            lt.add_turn("s", "user", text, at=at)
        now = at + later * DAY
        before = (lt.memories(status=None, limit=1000), [lt.explain(m.id) for m in lt.memories(status=None).memories])
        dry = lt.consolidate(now=now, dry_run=True)
        after = (lt.memories(status=None, limit=1000), [lt.explain(m.id) for m in lt.memories(status=None).memories])
        assert before == after
        real = lt.consolidate(now=now)
        fields = ("episodes", "extended", "deduped", "summarized", "compressed", "forgotten", "expired")
        assert [getattr(dry, f) for f in fields] == [getattr(real, f) for f in fields]


# -- the agent's own work, and the verb everywhere -------------------------------------------------


def test_a_finished_task_becomes_an_episode_recall_finds(tmp_path: Path) -> None:
    with Memory.open(tmp_path, policy=Policy()) as memory:
        task = "auth-fix"
        memory.episodic.start_task(task, "Fix the auth bug: login fails after token expiry")
        memory.episodic.record_tool_execution("Bash", {"command": "pytest"}, success=False, error_message="401")
        memory.episodic.complete_task(task, "normalized token expiry to UTC; added a regression test")
        report = memory.consolidate()
        assert [a.reason for a in report.actions if a.action == "episode"] == [f"the agent's task {task}"]
        hits = memory.recall("how did we fix the auth bug").hits
        assert hits[0].kind == "episode"
        shown = memory.explain(hits[0].id).episode
        assert shown is not None and shown.origin == "task" and shown.session_id == f"task:{task}"
        assert shown.outcome == "normalized token expiry to UTC; added a regression test"
        assert memory.consolidate().episodes == 0  # once


def test_consolidate_from_the_cli(tmp_path: Path) -> None:
    with Memory.open(tmp_path) as memory:
        memory.add_turn("s", "user", PUPPY[0], extract=False)
    done = subprocess.run(
        [SCRIPT, "consolidate", "--dry-run", "--json", "--root", str(tmp_path)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert (answer["dry_run"], answer["episodes"], answer["deduped"], answer["forgotten"]) == (True, 1, 0, 0)
    assert {"contradictions_found", "compressed", "tiers", "actions"} <= set(answer)


def test_a_server_consolidates_once_up_an_interval_when_the_last_pass_is_that_old(tmp_path: Path) -> None:
    import time

    from aircher_mem.interfaces.http import Consolidating

    policy = Policy.from_dict({"lifecycle": {"consolidate_interval_seconds": 3600}}, source="test")
    with Memory.open(tmp_path, policy=policy) as memory:
        memory.add_turn("s", "user", PUPPY[0], extract=False)
        assert not Consolidating(memory).due()  # a server just started waits an interval
        schedule = Consolidating(memory, started=time.time() - 3600)
        assert schedule.due()  # never consolidated
        schedule.when_due()
        schedule.join(60)
        assert memory.last_consolidated() is not None
        assert not schedule.due()
        assert len(memory.memories(kind="episode").memories) == 1
        last = memory.last_consolidated()
        assert last is not None
        memory.consolidate(now=last - 3600)  # the last pass an interval ago
        assert schedule.due()
    never = Policy.from_dict({"lifecycle": {"consolidate_interval_seconds": 0}}, source="test")
    with Memory.open(tmp_path, policy=never) as memory:
        assert not Consolidating(memory, started=0.0).due()


def test_a_server_that_exits_when_idle_consolidates_once_idle(tmp_path: Path) -> None:
    from aircher_mem.interfaces.http import Consolidating

    policy = Policy.from_dict(
        {"lifecycle": {"consolidate_interval_seconds": 3600, "consolidate_idle_seconds": 60}}, source="test"
    )
    idle = [59.0]
    with Memory.open(tmp_path, policy=policy) as memory:
        memory.add_turn("s", "user", PUPPY[0], extract=False)
        schedule = Consolidating(memory, idle=lambda: idle[0])  # just started: no interval to wait
        assert not schedule.due()  # the agent is at work
        idle[0] = 60.0
        assert schedule.due()  # never consolidated, idle long enough
        schedule.when_due()
        schedule.join(60)
        assert memory.last_consolidated() is not None and not schedule.due()
        last = memory.last_consolidated()
        assert last is not None
        memory.consolidate(now=last - 3600)
        assert schedule.due()
        idle[0] = 0.0
        assert not schedule.due()


def test_consolidate_over_http(tmp_path: Path) -> None:
    from aircher_mem.interfaces import http
    from starlette.testclient import TestClient

    with Memory.open(tmp_path) as memory:
        memory.add_turn("s", "user", PUPPY[0], extract=False)
        app = http.build_app(memory, token="t" * 32)
        with TestClient(
            app, base_url="http://127.0.0.1:8787", headers={"Authorization": "Bearer " + "t" * 32}
        ) as client:
            dry = client.post("/consolidate", json={"dry_run": True})
            assert dry.status_code == 200, dry.text
            assert (dry.json()["dry_run"], dry.json()["episodes"]) == (True, 1)
            done = client.post("/consolidate", json={})
            assert (done.json()["dry_run"], done.json()["episodes"]) == (False, 1)
            bad = client.post("/consolidate", json={"dry_run": "maybe"})
            assert bad.status_code == 400


def test_a_summarizer_forms_episodes_with_003s_prompts_and_its_failure_falls_back(tmp_path: Path) -> None:
    import time

    asked: list[str] = []

    def summarizer(request: str) -> object:
        asked.append(request.split("\n", 1)[0])
        if request.startswith("Compress the dialogue"):
            return {"summary": "Ann adopted Biscuit.", "key_points": ["puppy: Biscuit"], "questions": []}
        return json.dumps({"headline": "Biscuit the puppy", "tags": ["puppy", "biscuit"]})

    def failing(request: str) -> object:
        raise RuntimeError("the model is down")

    def slow(request: str) -> object:
        time.sleep(5)
        return {"summary": "too late"}

    made = {}
    for name, callable_ in (("good", summarizer), ("failing", failing), ("slow", slow)):
        clock = Clock()
        with LongTermMemory(
            tmp_path / f"{name}.duckdb",
            clock=clock,
            summarizer=callable_,
            lifecycle=LifecyclePolicy(summarizer_timeout_seconds=0.2),
        ) as lt:
            say(lt, PUPPY[0], T0)
            say(lt, PUPPY[1], T0 + MINUTE)
            lt.consolidate(now=T0 + 10 * DAY)
            (episode,) = lt.memories(kind="episode").memories
            shown = lt.explain(episode.id).episode
            assert shown is not None
            made[name] = (episode.content, episode.summary, shown.key_points, sorted(episode.tags))
    assert asked == [
        "Compress the dialogue into a structured summary.",
        "Compress to the minimum. One sentence: what was this episode about?",
    ]
    assert made["good"] == (
        "Biscuit the puppy",
        "Ann adopted Biscuit.",
        ["puppy: Biscuit"],
        ["biscuit", "episode", "puppy"],
    )
    assert made["failing"] == made["slow"]  # both the extractive forms
    assert made["failing"][1] and made["failing"][1] != "Ann adopted Biscuit."


def test_memories_about_the_same_file_and_episodes_sharing_entities_are_linked(tmp_path: Path) -> None:
    clock = Clock()
    with store(tmp_path, clock) as lt:
        a = lt.remember("User.save must commit before it returns.", code_ref="app/models.py:User.save", importance=1)
        b = lt.remember("Base models keep their ids immutable.", code_ref="app/models.py:Base", importance=1)
        c = lt.remember("Views render through Jinja templates.", code_ref="app/views.py", importance=1)
        say(lt, "We run Postgres and Redis on the Hetzner box for Acme.", T0)
        say(lt, "Last night Acme moved Postgres to a bigger Hetzner box.", T0 + DAY)
        report = lt.consolidate(now=T0 + 10 * DAY)
        linked = sorted((x.memory_id, x.reason) for x in report.actions if x.action == "linked")
        first, second = sorted(m.id for m in lt.memories(kind="episode").memories)
        assert linked == [
            (a.memory_id, f"related to memory {b.memory_id}: both about app/models.py"),
            (first, f"related to episode {second}: acme, hetzner, postgres"),
        ]
        related = [(e.relation, e.memory_id) for e in lt.explain(b.memory_id).related]
        assert ("related_to", a.memory_id) in related
        assert all(e.relation != "related_to" for e in lt.explain(c.memory_id).related)
        assert lt.consolidate(now=T0 + 10 * DAY).linked == 0  # once


def test_consolidation_applies_ttls_and_deletes_for_good(tmp_path: Path) -> None:
    clock = Clock()
    with store(tmp_path, clock) as lt:
        session = lt.remember("The deploy window this week is Thursday.", tags=["session"], importance=1, at=T0)
        kept = lt.remember("Services speak gRPC inside the cluster.", tags=["architecture"], importance=1, at=T0)
        report = lt.consolidate(now=T0 + 2 * DAY)
        assert sorted((a.memory_id, a.reason.split(":")[0]) for a in report.actions if a.action == "expired") == [
            (session.memory_id, "delete")
        ]
        assert report.expired == 1
        assert {m.id for m in lt.memories(status=None).memories} == {kept.memory_id}
        assert lt.consolidate(now=T0 + 31 * DAY).expired == 1  # 30 days: architecture goes stale
        assert lt.get(kept.memory_id).stale_since == T0 + 31 * DAY
    data = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.is_file())
    assert b"deploy window" not in data


def test_with_embeddings_consolidation_merges_by_the_vectors_too(tmp_path: Path) -> None:
    import numpy as np

    vectors = {
        "The deploy script lives in tools/release.sh": [1.0, 0.0, 0.0],
        "Releases are shipped by running tools/release.sh": [0.9, 0.435889894, 0.0],  # cosine 0.9
        "Lunch is at noon": [0.0, 0.0, 1.0],
    }

    class Embedder:
        def embed(self, texts: list[str]) -> object:
            return np.array([vectors.get(t, [0.0, 1.0, 0.0]) for t in texts], dtype=np.float32)

    clock = Clock()
    with LongTermMemory(tmp_path / "m.duckdb", clock=clock, embedder=Embedder) as lt:
        ids = [lt.remember(text).memory_id for text in vectors]
        assert lt.consolidate(now=T0, dry_run=True).deduped == 0  # a dry run embeds nothing
        report = lt.consolidate(now=T0)
        assert report.deduped == 1
        assert [(a.memory_id, a.reason) for a in report.actions if a.action == "merged"] == [
            (ids[1], f"into memory {ids[0]} (embedding cosine >= 0.85)")
        ]
        assert [lt.get(i).status for i in ids] == ["active", "archived", "active"]


def test_with_embeddings_a_turn_near_by_meaning_stays_in_its_episode(tmp_path: Path) -> None:
    import numpy as np

    leash = "We bought a red leash for the walks in the park."  # no word of the puppy turns

    class Embedder:
        def embed(self, texts: list[str]) -> object:
            def vector(text: str) -> list[float]:
                if "leash" in text:
                    return [0.8, 0.6, 0.0]  # cosine 0.8 with the puppy turns'
                return [1.0, 0.0, 0.0] if "Biscuit" in text else [0.0, 0.0, 1.0]

            return np.array([vector(t) for t in texts], dtype=np.float32)

    def turns(lt: LongTermMemory) -> list[int]:
        texts = [*PUPPY, leash, DATABASE]
        return [say(lt, text, T0 + i * MINUTE) for i, text in enumerate(texts)]

    clock = Clock()
    with LongTermMemory(tmp_path / "plain.duckdb", clock=clock) as lt:  # no embedder: the words alone
        ids = turns(lt)
        lt.consolidate(now=T0 + DAY)
        assert episodes_of(lt) == [ids[:4], ids[4:]]
    with LongTermMemory(tmp_path / "m.duckdb", clock=clock, embedder=Embedder) as lt:
        ids = turns(lt)
        planned = lt.consolidate(now=T0 + DAY, dry_run=True)
        assert lt._vectors is None  # the dry run's vectors are not kept
        report = lt.consolidate(now=T0 + DAY)
        assert episodes_of(lt) == [ids[:5], ids[5:]]
        reasons = [a.reason for a in report.actions if a.action == "episode"]
        assert reasons == ["5 turns of session s", "1 turns of session s after a topic shift"]
        assert [a.reason for a in planned.actions if a.action == "episode"] == reasons
    words = Policy.from_dict({"lifecycle": {"episode_meaning_weight": 0}}, source="test").lifecycle
    with LongTermMemory(tmp_path / "words.duckdb", clock=clock, embedder=Embedder, lifecycle=words) as lt:
        ids = turns(lt)  # a weight of 0: the words decide again
        lt.consolidate(now=T0 + DAY)
        assert episodes_of(lt) == [ids[:4], ids[4:]]


def test_with_embeddings_episodes_alike_in_meaning_are_linked_each_the_others_nearest(tmp_path: Path) -> None:
    import numpy as np

    walks = [
        "We bought a red leash for the walks in the park.",
        "The leash is long enough for the morning walks.",
        "Evening walks in the park take an hour now.",
        "A longer leash would help on the beach walks.",
    ]

    class Embedder:
        def embed(self, texts: list[str]) -> object:
            def vector(text: str) -> list[float]:
                if "Biscuit" in text:
                    return [1.0, 0.0, 0.0]
                return [0.8, 0.6, 0.0] if "walks" in text else [0.0, 0.0, 1.0]

            return np.array([vector(t) for t in texts], dtype=np.float32)

    clock = Clock()
    with LongTermMemory(tmp_path / "m.duckdb", clock=clock, embedder=Embedder) as lt:
        for n, (session, texts) in enumerate((("dog", PUPPY), ("walks", walks), ("db", [DATABASE] * 4))):
            for i, text in enumerate(texts):
                say(lt, text, T0 + n * DAY + i * MINUTE, session=session)
        assert lt.consolidate(now=T0 + 3 * DAY, dry_run=True).linked == 0  # no episode made yet
        report = lt.consolidate(now=T0 + 3 * DAY)
        dog, walk, db = episodes_of_sessions = sorted(m.id for m in lt.memories(kind="episode").memories)
        assert len(episodes_of_sessions) == 3
        assert [(a.memory_id, a.reason) for a in report.actions if a.action == "linked"] == [
            (dog, f"related to episode {walk}: alike in meaning (cosine 0.80), each the other's nearest")
        ]
        assert ("related_to", walk) in [(e.relation, e.memory_id) for e in lt.explain(dog).related]
        assert db not in [e.memory_id for e in lt.explain(walk).related]
        assert lt.consolidate(now=T0 + 4 * DAY).linked == 0  # linked once
    strict = Policy.from_dict({"lifecycle": {"link_cosine": 0.81}}, source="test").lifecycle
    with LongTermMemory(tmp_path / "strict.duckdb", clock=clock, embedder=Embedder, lifecycle=strict) as lt:
        for n, (session, texts) in enumerate((("dog", PUPPY), ("walks", walks))):
            for i, text in enumerate(texts):
                say(lt, text, T0 + n * DAY + i * MINUTE, session=session)
        assert lt.consolidate(now=T0 + 3 * DAY).linked == 0  # 0.80 is below 0.81


def test_the_schedule_runs_in_the_background_for_a_holder_like_mcp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    from aircher_mem.interfaces.http import Consolidating

    monkeypatch.setattr(Consolidating, "CHECK_SECONDS", 0.05)
    policy = Policy.from_dict({"lifecycle": {"consolidate_interval_seconds": 60}}, source="test")
    with Memory.open(tmp_path, policy=policy) as memory:
        memory.add_turn("s", "user", PUPPY[0], extract=False)
        schedule = Consolidating(memory, started=time.time() - 60).in_background()
        try:
            deadline = time.monotonic() + 30
            while memory.last_consolidated() is None and time.monotonic() < deadline:
                time.sleep(0.05)
        finally:
            schedule.stop()
        assert memory.last_consolidated() is not None
        assert len(memory.memories(kind="episode").memories) == 1


def test_a_recently_superseded_memory_stays_for_as_of_recall(tmp_path: Path) -> None:
    clock = Clock()
    with store(tmp_path, clock) as lt:
        old = lt.remember("The database is Postgres.", at=T0).memory_id
        new = lt.remember("Actually, the database is MySQL, not Postgres.", at=T0 + 10 * DAY)
        assert new.superseded == old
        for days, kept in ((20, True), (39.9, True), (40, False)):
            clock.now = T0 + days * DAY
            report = lt.consolidate(now=T0 + days * DAY, dry_run=True)
            assert ((old, "forgotten") not in [(a.memory_id, a.action) for a in report.actions]) == kept, days
        lt.consolidate(now=T0 + 20 * DAY)
        assert [h.id for h in lt.recall("which database?", at=T0 + 5 * DAY).hits][:1] == [old]
        lt.consolidate(now=T0 + 40 * DAY)
        assert old not in {m.id for m in lt.memories(status=None).memories}


def test_segment_sessions_takes_a_vector_row_per_text_or_none() -> None:
    import numpy as np
    from aircher_mem._core import segment_sessions
    from aircher_mem.errors import InvalidInputError

    texts = ["puppy biscuit", "biscuit puppy", "postgres invoices", "invoices postgres"]
    session = (texts, [0.0, 1.0, 2.0, 3.0], [0, 0, 0, 0], 0)
    rule: dict[str, Any] = {"gap": 60.0, "min_len": 1, "window": 2, "depth": 0.5, "max_len": 10, "meaning": 0.9}
    with pytest.raises(InvalidInputError, match="one array"):
        segment_sessions([session], vectors=[], **rule)
    with pytest.raises(InvalidInputError, match="a row per text"):
        segment_sessions([session], vectors=[np.zeros((3, 2))], **rule)
    alike = np.array([[1.0, 0.0], [0.9, 0.1], [1.0, 0.0], [0.9, 0.1]])
    assert segment_sessions([session], vectors=[alike], **rule) == [[]]
    unknown = np.full((4, 2), np.nan)  # texts without a vector: the words decide
    words = segment_sessions([session], **rule)
    assert segment_sessions([session], vectors=[unknown], **rule) == segment_sessions([session], vectors=[None], **rule)
    assert segment_sessions([session], vectors=[unknown], **rule) == words == [[(2, "topic")]]


_WORDS = ["puppy", "biscuit", "school", "postgres", "invoice", "json", "ok", "deploy", "cache", "redis"]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(
            st.lists(st.sampled_from(_WORDS), max_size=6),
            st.sampled_from([0.0, 1.0, 100.0, 4000.0]),
            st.integers(0, 2),
        ),
        max_size=40,
    ),
    st.integers(0, 10),
    st.integers(1, 6),
    st.integers(1, 5),
    st.floats(0.0, 1.0),
    st.integers(1, 12),
    st.booleans(),
)
def test_segment_sessions_starts_keep_their_rules(
    rows: list[tuple[list[str], float, int]],
    keep: int,
    min_len: int,
    window: int,
    depth: float,
    max_len: int,
    embedded: bool,
) -> None:
    import numpy as np
    from aircher_mem._core import segment_sessions

    texts = [" ".join(words) for words, _step, _group in rows]
    times = list(np.cumsum([step for _words, step, _group in rows]).astype(float))
    groups = [group for _words, _step, group in rows]
    keep = min(keep, len(texts))
    rule: dict[str, Any] = {"gap": 1800.0, "min_len": min_len, "window": window, "depth": depth, "max_len": max_len}
    vectors = None
    if embedded:  # a vector per text from its words, some texts without one
        rows_of = [[t.count(w) + 0.1 for w in _WORDS[:4]] if i % 3 else [np.nan] * 4 for i, t in enumerate(texts)]
        vectors = [np.array(rows_of, dtype=float).reshape(len(texts), 4)]
    [found] = segment_sessions([(texts, times, groups, keep)], vectors=vectors, meaning=0.5, **rule)
    starts = [at for at, _why in found]
    assert starts == sorted(set(starts)) and all(max(keep, 1) <= at < len(texts) for at in starts)
    hard = {
        at: "gap" if times[at] - times[at - 1] > 1800.0 else "group"
        for at in range(max(keep, 1), len(texts))
        if times[at] - times[at - 1] > 1800.0 or groups[at] != groups[at - 1]
    }
    assert {at: why for at, why in found if why in ("gap", "group")} == hard
    bounds = [0, *starts, len(texts)]
    for begin, end in itertools.pairwise(bounds):
        assert end - begin <= (max(keep, max_len) if begin == 0 else max_len)
    previous = 0
    for at, why in found:
        if why == "topic":
            assert at - previous >= min_len
        if why != "size":
            previous = at
    again = segment_sessions([(texts, times, groups, keep)], vectors=vectors, meaning=0.5, **rule)
    assert again == [found]
