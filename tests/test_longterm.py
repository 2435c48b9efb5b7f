"""Long-term memory through the service: turns, extraction outcomes, merge,
supersede, forget for good, the memory score and gc, recall and its explanations."""

from __future__ import annotations

import datetime as dt
import math
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import pytest
from aircher_mem import Memory, Policy
from aircher_mem.config import LongtermPolicy
from aircher_mem.errors import InvalidInputError, UnknownMemoryError
from aircher_mem.longterm import LongTermMemory
from conftest import Clock, FakeEmbedder
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

DAY = 86_400.0
T0 = 1_700_000_000.0  # 2023-11-14 22:13:20 UTC


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


# -- turns -------------------------------------------------------------------------------


def test_turns_are_stored_redacted_tagged_and_windowed(tmp_path: Path, clock: Clock) -> None:
    policy = LongtermPolicy(short_term_turns=3)
    with LongTermMemory(tmp_path / "m.duckdb", policy=policy, clock=clock) as ltm:
        added = [ltm.add_turn("s1", "user", f"message number {i}", at=T0 + i, extract=False) for i in range(5)]
        assert [a.turn_id for a in added] == [1, 2, 3, 4, 5]
        assert all(a.extracted == [] for a in added)
        clock.now = T0 + 10
        secret = ltm.add_turn(
            "s1",
            "user",
            "my key is ghp_" + "a" * 36 + " and mail me at ana@example.com",
            metadata={"dia_id": "D1:3", "password": "hunter2hunter2"},
            extract=False,
        )
        assert secret.turn_id == 6
        window = ltm.turns("s1")
        assert [t.id for t in window] == [4, 5, 6]
        last = window[-1]
        assert "ghp_" not in last.text and "[REDACTED:github_token:" in last.text
        assert "ana@example.com" in last.text and last.tags == ["email"]
        assert last.metadata["dia_id"] == "D1:3" and "hunter2" not in str(last.metadata)
        assert last.at == T0 + 10  # the clock's now
    # persisted, and private to the user
    assert stat.S_IMODE(os.stat(tmp_path / "m.duckdb").st_mode) == 0o600
    with LongTermMemory(tmp_path / "m.duckdb", policy=policy, clock=clock) as again:
        assert [t.text for t in again.turns("s1", limit=2)] == ["message number 4", last.text]
        assert again.add_turn("s2", "assistant", "ok", extract=False).turn_id == 7


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda m: m.add_turn("", "user", "x"), "session_id"),
        (lambda m: m.add_turn("s", "system", "x"), "role"),
        (lambda m: m.add_turn("s", "user", "   "), "text"),
        (lambda m: m.add_turn("s", "user", "bad \ud800"), "lone surrogate"),
        (lambda m: m.add_turn("s", "user", "nul \x00"), "NUL"),
        (lambda m: m.add_turn("s", "user", "x", at=math.nan), "at"),
        (lambda m: m.add_turn("s", "user", "x", at=10**30), "at"),
        (lambda m: m.add_turn("s", "user", "x", metadata={"n": math.inf}), "metadata"),
        (lambda m: m.add_turn("s", "user", "x", metadata=[1]), "metadata"),
        (lambda m: m.remember("x", kind="opinion"), "kind"),
        (lambda m: m.remember("x", importance=2), "importance"),
        (lambda m: m.remember("x", tags="a,b"), "tags"),
        (lambda m: m.remember("x", level="L9"), "level"),
        (lambda m: m.recall("x", k=0), "k"),
        (lambda m: m.recall("x", kinds=["nope"]), "kind"),
        (lambda m: m.feedback(1, "liked"), "memory"),
        (lambda m: m.forget(), "forget"),
        (lambda m: m.explain(True), "memory_id"),
    ],
)
def test_bad_arguments_are_typed_errors(ltm: LongTermMemory, call, error: str) -> None:
    with pytest.raises((InvalidInputError, UnknownMemoryError), match=error):
        call(ltm)


# -- extraction outcomes: created, merged, superseded --------------------------------------


def test_preference_change_supersedes_and_both_stay_explainable(ltm: LongTermMemory, clock: Clock) -> None:
    first = ltm.add_turn("s1", "user", "I prefer tabs.", at=T0 - 10 * DAY)
    assert [(e.action, e.memory_id, e.content) for e in first.extracted] == [("created", 1, "I prefer tabs.")]
    again = ltm.add_turn("s1", "user", "I prefer tabs.", at=T0 - 9 * DAY)
    assert [(e.action, e.memory_id) for e in again.extracted] == [("merged", 1)]
    assert (ltm.get(1).hits, ltm.get(1).last_seen, ltm.get(1).valid_from) == (1, T0 - 9 * DAY, T0 - 10 * DAY)
    change = ltm.add_turn("s2", "user", "I now prefer spaces.", at=T0 - 2 * DAY)
    assert [(e.action, e.memory_id, e.superseded) for e in change.extracted] == [("superseded", 2, 1)]

    old, new = ltm.get(1), ltm.get(2)
    assert (old.status, old.valid_until, old.superseded_by, old.hits) == ("archived", T0 - 2 * DAY, 2, 1)
    assert (new.status, new.valid_from, new.valid_until, new.slot, new.value) == (
        "active",
        T0 - 2 * DAY,
        None,
        ["user", "indentation"],
        "spaces",
    )
    # the new fact is never lost (mem0's bug), the old one is not deleted
    now = ltm.recall("do I prefer tabs or spaces", kinds=["fact"])
    assert [h.id for h in now.hits] == [2]
    then = ltm.recall("do I prefer tabs or spaces", kinds=["fact"], at=T0 - 5 * DAY)
    assert [h.id for h in then.hits] == [1]
    why_old = ltm.explain(1)
    assert [(link.turn.id, link.reason) for link in why_old.links] == [(1, "extracted"), (2, "merged")]
    assert [(e.relation, e.memory_id) for e in why_old.related] == [("superseded_by", 2)]
    assert [a.action for a in why_old.actions] == ["created", "merged", "superseded"]
    why_new = ltm.explain(2)
    assert [(link.turn.id, link.reason) for link in why_new.links] == [(3, "conflict")]
    assert [(e.relation, e.memory_id) for e in why_new.related] == [("supersedes", 1)]


def _state(ltm: LongTermMemory, ids: range) -> list[tuple[object, ...]]:
    return [(m.id, m.content, m.status, m.slot, m.value, m.superseded_by) for m in map(ltm.get, ids)]


def _hits(found: object) -> list[tuple[str, int, list[str]]]:
    return [(h.kind, h.id, h.notes) for h in found.hits]  # type: ignore[attr-defined]


def test_a_correction_supersedes_only_the_fact_it_corrects_and_wins_recall(ltm: LongTermMemory) -> None:
    first = ltm.add_turn("s1", "user", "We use pytest for the tests and the database is Postgres.", at=T0 - 2 * DAY)
    fix = ltm.add_turn("s2", "user", "Actually, the database is MySQL, not Postgres.", at=T0 - DAY)
    assert [(e.action, e.memory_id, e.content, e.superseded) for e in first.extracted + fix.extracted] == [
        ("created", 1, "We use pytest for the tests", None),
        ("created", 2, "the database is Postgres.", None),
        ("superseded", 3, "Actually, the database is MySQL, not Postgres.", 2),
    ]
    assert _state(ltm, range(1, 4)) == [
        (1, "We use pytest for the tests", "active", ["project", "test_runner"], "pytest", None),
        (2, "the database is Postgres.", "archived", ["project", "database"], "postgres", 3),
        (3, "Actually, the database is MySQL, not Postgres.", "active", ["project", "database"], "mysql", None),
    ]
    assert ltm.get(2).valid_until == T0 - DAY
    # both facts of the first turn link back to it
    assert [[(link.turn.id, link.reason) for link in ltm.explain(i).links] for i in (1, 2, 3)] == [
        [(1, "extracted")],
        [(1, "extracted")],
        [(2, "conflict")],
    ]
    # the turn stating the old value ranks right after the memory holding the new one
    assert _hits(ltm.recall("which database do we use?")) == [
        ("fact", 3, []),
        ("turn", 1, ["superseded by #3"]),
        ("fact", 1, []),
    ]
    top = ltm.recall("which database do we use?").hits
    assert top[0].score > top[1].score
    assert _hits(ltm.recall("which database do we use?", kinds=["turn"])) == [
        ("turn", 2, []),
        ("turn", 1, ["superseded by #3"]),
    ]
    assert _hits(ltm.recall("which database do we use?", kinds=["fact"])) == [("fact", 3, []), ("fact", 1, [])]
    assert _hits(ltm.recall("is the database Postgres?")) == [("fact", 3, []), ("turn", 1, ["superseded by #3"])]
    # after it, at= ranks as now does
    assert _hits(ltm.recall("is the database Postgres?", at=T0 - 0.5 * DAY)) == [
        ("fact", 3, []),
        ("turn", 1, ["superseded by #3"]),
    ]
    # before the correction the old value was valid: it ranks first, with no note
    assert _hits(ltm.recall("is the database Postgres?", at=T0 - 1.5 * DAY)) == [("fact", 2, [])]
    # a query the old value does not match folds the turn into its fact as before
    assert _hits(ltm.recall("which test runner do we use?")) == [("fact", 1, [])]


def test_a_self_introduction_gives_name_and_team_and_a_move_supersedes_the_team(ltm: LongTermMemory) -> None:
    hello = ltm.add_turn("s1", "user", "Hi, I'm Dana, lead on billing", speaker="Dana", at=T0 - 2 * DAY)
    moved = ltm.add_turn("s2", "user", "I moved to the payments team", speaker="Dana", at=T0 - DAY)
    assert [(e.action, e.memory_id, e.content, e.superseded) for e in hello.extracted + moved.extracted] == [
        ("created", 1, "Hi, I'm Dana", None),
        ("created", 2, "lead on billing", None),
        ("superseded", 3, "I moved to the payments team", 2),
    ]
    assert _state(ltm, range(1, 4)) == [
        (1, "Hi, I'm Dana", "active", ["dana", "name"], "dana", None),
        (2, "lead on billing", "archived", ["dana", "team"], "billing", 3),
        (3, "I moved to the payments team", "active", ["dana", "team"], "payments", None),
    ]
    assert _hits(ltm.recall("which team is Dana on?")) == [
        ("fact", 3, []),
        ("turn", 1, ["superseded by #3"]),
        ("fact", 1, []),
    ]
    assert _hits(ltm.recall("who leads billing?", at=T0 - 1.5 * DAY)) == [("fact", 2, [])]


def test_remember_takes_the_slot_of_its_one_slotted_fact(ltm: LongTermMemory) -> None:
    # two facts, one with a slot: the memory (the whole text) holds that slot
    first = ltm.remember("I'm the billing lead and I love long walks", at=T0 - DAY)
    assert (first.memory_id, first.action, ltm.get(1).slot, ltm.get(1).value) == (
        1,
        "created",
        ["user", "team"],
        "billing",
    )
    moved = ltm.remember("I moved to the payments team", at=T0)
    assert (moved.memory_id, moved.action, moved.superseded) == (2, "superseded", 1)
    # two slotted facts: one memory cannot hold both, so it holds neither
    both = ltm.remember("We use pytest for the tests and the database is Postgres.")
    assert (both.memory_id, both.action, ltm.get(3).slot) == (3, "created", None)


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    values=st.lists(st.sampled_from(["Postgres", "MySQL", "SQLite", "DuckDB"]), min_size=1, max_size=6),
    forms=st.lists(
        st.sampled_from(["The database is {}.", "We use pytest and the database is {}.", "two"]), min_size=6
    ),
)
def test_no_superseded_value_ranks_above_the_value_now(values: list[str], forms: list[str]) -> None:
    ltm = LongTermMemory(":memory:", clock=Clock())
    for i, (value, form) in enumerate(zip(values, forms, strict=False)):
        # "two": the turn corrects itself, so it says the value it ends with
        text = f"The database is Oracle. Actually no, the database is {value}." if form == "two" else form.format(value)
        ltm.add_turn(f"s{i}", "user", text, at=T0 - (10 - i) * DAY)
    (current,) = [m.id for m in ltm.memories().memories if m.slot == ["project", "database"]]
    saying = {link.turn.id for link in ltm.explain(current).links}
    for query in ("which database do we use?", f"is the database {values[0]}?"):
        hits = ltm.recall(query).hits
        assert all(ltm.get(h.id).status == "active" for h in hits if h.kind != "turn")
        turns = ltm.recall(query, kinds=["turn"]).hits
        for found, ahead in ((hits, {("fact", current)}), (turns, {("turn", t) for t in saying})):
            for rank, hit in enumerate(found):
                if hit.notes:
                    assert hit.kind == "turn" and hit.id not in saying
                    assert hit.notes == [f"superseded by #{current}"]
                    assert ahead & {(h.kind, h.id) for h in found[:rank]}
        noted = {h.id for h in turns if h.notes}
        assert noted == {h.id for h in hits if h.notes}
        assert noted == {t.id for h in turns for t in h.turns if t.id not in saying}


def test_project_fact_moves_to_a_new_value(ltm: LongTermMemory) -> None:
    ltm.add_turn("s", "user", "The database is Postgres.", at=T0 - DAY)
    moved = ltm.add_turn("s", "user", "We moved to MySQL last week.", at=T0)
    assert [(e.action, e.superseded) for e in moved.extracted] == [("superseded", 1)]
    assert ltm.get(2).slot == ["project", "database"] and ltm.get(2).value == "mysql"
    assert ltm.memories().memories[0].id == 2
    assert [m.id for m in ltm.memories(status="archived").memories] == [1]


def test_remember_dedups_by_jaccard(ltm: LongTermMemory) -> None:
    a = ltm.remember("The staging server restarts each night at two")
    assert (a.memory_id, a.action) == (1, "created")
    same = ltm.remember("the staging server restarts each night at two!")
    assert (same.memory_id, same.action) == (1, "merged")
    # 5 of 6 tokens shared ("the" and "at" are stop words): Jaccard 5/7 = 0.714 >= 0.7
    close = ltm.remember("The staging server reboots each night at two")
    assert (close.memory_id, close.action) == (1, "merged")
    # as close, but another hour: a contradiction, never merged
    later = ltm.remember("The staging server restarts each night at three")
    assert (later.memory_id, later.action) == (2, "created")
    other = ltm.remember("Production deploys need two approvals")
    assert (other.memory_id, other.action) == (3, "created")
    assert ltm.get(1).hits == 2
    assert ltm.remember("The staging server restarts each night at two", kind="decision").action == "created"


def test_remember_merges_word_forms_and_keeps_negations_apart(ltm: LongTermMemory) -> None:
    assert ltm.remember("The staging server restarts each night").action == "created"
    # Stemmed, "servers restarted" is "server restart": the same five words.
    merged = ltm.remember("The staging servers restarted each night")
    assert (merged.memory_id, merged.action) == (1, "merged")
    assert ltm.remember("We deploy on Fridays").memory_id == 2
    # "don't" is two stop words to the tokenizer, but the negation keeps the memories apart.
    negated = ltm.remember("We don't deploy on Fridays")
    assert (negated.memory_id, negated.action) == (3, "created")


def test_assistant_turns_extract_only_when_asked(clock: Clock) -> None:
    with LongTermMemory(":memory:", clock=clock) as ltm:
        assert ltm.add_turn("s", "assistant", "We use pytest for the tests.").extracted == []
    with LongTermMemory(":memory:", clock=clock, policy=LongtermPolicy(extract_assistant=True)) as ltm:
        assert [e.action for e in ltm.add_turn("s", "assistant", "We use pytest for the tests.").extracted] == [
            "created"
        ]


def test_an_llm_extractor_adds_and_its_failure_never_blocks(clock: Clock) -> None:
    def good(text: str) -> object:
        return [{"content": "User likes JRPGs", "importance": 1, "tags": ["interests"], "action": "create"}]

    def broken(text: str) -> object:
        raise RuntimeError("rate limited")

    with LongTermMemory(":memory:", clock=clock, extractor=good) as ltm:
        added = ltm.add_turn("s", "user", "my name is Alex. JRPGs are great fun")
        assert [e.content for e in added.extracted] == ["my name is Alex.", "User likes JRPGs"]
        assert ltm.get(2).importance == 1 and ltm.explain(2).rules == ["llm"]
    with LongTermMemory(":memory:", clock=clock, extractor=broken) as ltm:
        added = ltm.add_turn("s", "user", "my name is Alex.")
        assert [e.content for e in added.extracted] == ["my name is Alex."]
        assert added.notes and "rate limited" in added.notes[0]


# -- the memory score, explain and gc -------------------------------------------------------


def test_score_terms_by_hand(ltm: LongTermMemory, clock: Clock) -> None:
    ltm.remember("Deploys happen from the release branch", importance=1, at=T0 - 10 * DAY)
    ltm.remember("Deploys happen from the release branch", at=T0 - 10 * DAY)
    ltm.remember("Deploys happen from the release branch", at=T0 - 10 * DAY)
    why = ltm.explain(1)
    assert why.memory.hits == 2 and why.age_days == pytest.approx(10.0)
    terms = {t.name: (t.weight, t.value, t.contribution) for t in why.terms}
    assert terms["frequency"] == (1.0, pytest.approx(math.log(3)), pytest.approx(math.log(3)))
    assert terms["recency"] == (1.0, pytest.approx(math.exp(-0.5)), pytest.approx(math.exp(-0.5)))
    assert terms["importance"] == (2.0, 1.0, 2.0)
    assert why.score == pytest.approx(math.log(3) + math.exp(-0.5) + 2.0)
    assert why.memory.score == pytest.approx(why.score)
    assert why.outlook == "keep"


def test_gc_promotes_archives_and_enforces_capacity(clock: Clock) -> None:
    policy = LongtermPolicy(mid_capacity=2)
    with LongTermMemory(":memory:", clock=clock, policy=policy) as ltm:
        for _ in range(4):  # hits 3, seen now: promoted
            ltm.remember("alpha service owns the billing tables", at=T0)
        ltm.remember("bravo notes about the cache layer", at=T0 - 20 * DAY)  # 0 + e^-1 = 0.37 < 0.5
        ltm.remember("charlie runbook for incidents", importance=1, at=T0 - 40 * DAY)  # old
        ltm.remember("delta fact one", at=T0 - 1 * DAY)  # e^-0.05 = 0.95
        ltm.remember("echo fact two", at=T0 - 2 * DAY)  # 0.90
        ltm.remember("foxtrot fact three", at=T0 - 3 * DAY)  # 0.86: the lowest, over capacity
        dry = ltm.gc(dry_run=True)
        assert (dry.promoted, dry.archived_low_score, dry.archived_age, dry.archived_capacity) == ([1], [2], [3], [6])
        assert (dry.scored, dry.mid_active, dry.long_active) == (6, 2, 1)
        assert ltm.get(1).layer == "mid" and ltm.get(2).status == "active"  # nothing changed
        done = ltm.gc()
        assert done == type(dry)(False, *list(dataclass_values(dry))[1:])
        assert ltm.get(1).layer == "long"
        assert [m.id for m in ltm.memories(status="archived", sort="id").memories] == [2, 3, 6]
        assert ltm.explain(2).actions[-1].detail == "gc: low score"
        assert ltm.gc().promoted == []  # long-term is never archived by gc


def dataclass_values(report: object) -> list[object]:
    import dataclasses

    return [getattr(report, f.name) for f in dataclasses.fields(report)]  # type: ignore[arg-type]


# -- forget -----------------------------------------------------------------------------------


def test_forget_is_for_good_and_survives_reopening(tmp_path: Path, clock: Clock) -> None:
    path = tmp_path / "m.duckdb"
    with LongTermMemory(path, clock=clock) as ltm:
        ltm.add_turn("s", "user", "My name is Alex.")
        ltm.remember("The release checklist lives in docs/release.md")
        forgotten = ltm.forget(text="the release checklist lives in docs/release.md")
        assert (forgotten.ids, forgotten.turns) == ([2], [])  # remembered: no turn
        forgotten = ltm.forget(1)  # the turn it came from goes with it
        assert (forgotten.ids, forgotten.turns) == ([1], [1])
        with pytest.raises(UnknownMemoryError):
            ltm.explain(1)
        assert ltm.memories(status=None).memories == []
        assert ltm.recall("name Alex release checklist").hits == []
        assert ltm.forget(text="nothing like this") == type(forgotten)([], [])
    with LongTermMemory(path, clock=clock) as ltm:
        assert ltm.memories(status=None).memories == []
        assert ltm.recall("name Alex").hits == []
        assert ltm.counts()["turns"] == 0
    con = __import__("duckdb").connect(str(path))
    assert con.execute("SELECT count(*) FROM memory_links").fetchone() == (0,)
    assert con.execute("SELECT count(*) FROM memory_actions").fetchone() == (0,)


_CONTENTS = [
    "the build uses cargo and maturin",
    "the build uses cargo and maturin today",
    "alice owns the payments module",
    "never push directly to main",
    "the api runs on port 8080",
    "tests run with pytest -x",
]


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.one_of(
            st.tuples(st.just("remember"), st.sampled_from(_CONTENTS)),
            st.tuples(st.just("forget"), st.integers(1, 8)),
            st.tuples(st.just("forget_text"), st.sampled_from(_CONTENTS)),
        ),
        max_size=25,
    )
)
def test_a_forgotten_memory_never_comes_back(ops: list[tuple[str, object]]) -> None:
    with LongTermMemory(":memory:", clock=Clock()) as ltm:
        forgotten: set[int] = set()
        for op, arg in ops:
            if op == "remember":
                done = ltm.remember(str(arg))
                assert done.memory_id not in forgotten  # ids are never reused
            elif op == "forget":
                try:
                    forgotten.update(ltm.forget(int(arg)).ids)  # type: ignore[arg-type]
                except UnknownMemoryError:
                    pass
            else:
                forgotten.update(ltm.forget(text=str(arg)).ids)
            for query in _CONTENTS:
                ids = {h.id for h in ltm.recall(query, k=50).hits if h.kind != "turn"}
                assert not ids & forgotten
            listed = {m.id for m in ltm.memories(status=None, limit=1000).memories}
            assert not listed & forgotten
            for memory_id in forgotten:
                with pytest.raises(UnknownMemoryError):
                    ltm.explain(memory_id)


# -- recall -------------------------------------------------------------------------------------


def test_recall_aggregates_turns_into_their_memories_and_counts_usage(ltm: LongTermMemory) -> None:
    ltm.add_turn("s1", "user", "My name is Alex.", speaker="Alex", at=T0 - DAY)
    ltm.add_turn("s1", "user", "The weather is nice and sunny today", speaker="Alex", extract=False)
    recall = ltm.recall("what is Alex's name?")
    assert recall.channels == ["lexical"] and recall.reason == ""
    top = recall.hits[0]
    assert (top.kind, top.id, top.content) == ("fact", 1, "My name is Alex.")
    assert [t.id for t in top.turns] == [1]
    assert 1 not in [h.id for h in recall.hits if h.kind == "turn"]  # folded into the memory
    assert {c.channel for c in top.channels} == {"lexical", "session"} and "name" in top.matched
    assert ltm.get(1).retrieved == 1
    fed = ltm.feedback(1, "cited")
    assert (fed.retrieved, fed.cited, fed.ignored) == (1, 1, 0)
    again = ltm.recall("what is Alex's name?").hits[0]
    assert again.usage == pytest.approx(0.1 * 1 / 2)
    assert ltm.recall("zebra quantum").reason == "no stored turn or memory shares a word with the query"
    assert LongTermMemory(":memory:").recall("anything").reason.startswith("nothing stored")


def test_recall_filters_by_session_kind_and_time(ltm: LongTermMemory) -> None:
    ltm.add_turn("a", "user", "the parrot learned a new word", at=T0 - 3 * DAY, extract=False)
    ltm.add_turn("b", "user", "the parrot escaped the cage", at=T0 - 1 * DAY, extract=False)
    assert [h.id for h in ltm.recall("parrot", session_id="b").hits] == [2]
    assert [h.id for h in ltm.recall("parrot", at=T0 - 2 * DAY).hits] == [1]
    assert ltm.recall("parrot", kinds=["fact"]).hits == []
    # the more recent of two equal matches ranks first
    assert [h.id for h in ltm.recall("parrot").hits] == [2, 1]


def test_hierarchy_facts_subtree_promote(ltm: LongTermMemory) -> None:
    root = ltm.remember("The service is a Django monolith").memory_id
    child = ltm.remember("Payments live in the billing app", domain="payments", parent_id=root).memory_id
    leaf = ltm.remember(
        "Refunds are computed in refund_amount", code_ref="billing/refunds.py:42", parent_id=child
    ).memory_id
    assert [(m.id, m.level) for m in ltm.facts().memories] == [(root, "L0"), (child, "L1"), (leaf, "L3")]
    assert [m.id for m in ltm.facts(domain="payments").memories] == [child]
    assert [m.id for m in ltm.subtree(root).memories] == [root, child, leaf]
    assert [m.id for m in ltm.subtree(child).memories] == [child, leaf]
    assert ltm.promote(leaf, "L2").level == "L2"
    assert ltm.explain(leaf).actions[-1].detail == "L3 -> L2"
    with pytest.raises(UnknownMemoryError):
        ltm.remember("orphan", parent_id=99)


def test_update_reindexes_and_archives(ltm: LongTermMemory) -> None:
    memory_id = ltm.remember("The linter is flake8").memory_id
    updated = ltm.update(memory_id, content="The linter is ruff", tags=["tooling"])
    assert (updated.content, updated.tags) == ("The linter is ruff", ["tooling"])
    assert [h.id for h in ltm.recall("ruff linter", kinds=["fact"]).hits] == [memory_id]
    assert ltm.recall("flake8", kinds=["fact"]).hits == []
    ltm.update(memory_id, status="archived")
    assert ltm.recall("ruff linter", kinds=["fact"]).hits == []
    assert ltm.update(memory_id, status="active").status == "active"


def test_get_context_gives_the_window_and_top_memories(ltm: LongTermMemory) -> None:
    ltm.add_turn("s", "user", "I prefer tabs.")
    ltm.remember("Never push to main", importance=1)
    ltm.add_turn("s", "assistant", "Noted.")
    context = ltm.get_context("s", k=1)
    assert [t.text for t in context.short_term] == ["I prefer tabs.", "Noted."]
    assert [m.content for m in context.memories] == ["Never push to main"]


# -- the service ---------------------------------------------------------------------------------


def test_service_verbs_and_prepare_context_cite_memories(tmp_path: Path) -> None:
    with Memory.open(tmp_path) as memory:
        added = memory.add_turn("s1", "user", "We use pytest for the tests.", at=dt.datetime(2024, 5, 1))
        assert added.turn_id == 1 and [e.action for e in added.extracted] == ["created"]
        assert memory.remember("Never push to main", importance=1).memory_id == 2
        assert memory.recall("how do we run the tests?").hits[0].id == 1
        messages = memory.window.prepare_context("which test runner do we use?")
        assert messages[1:] == [
            {"role": "assistant", "content": "## Relevant\n- [memory 1] (fact) We use pytest for the tests."},
            {"role": "assistant", "content": "## Background\n- [memory 2] (fact) Never push to main"},
        ]
        assert memory.explain(1).memory.retrieved == 2
    with Memory.open(tmp_path) as memory:
        assert [m.id for m in memory.memories(sort="id").memories] == [1, 2]
        assert memory.gc(dry_run=True).scored == 2
        assert memory.forget(2).ids == [2]


def test_prepare_context_adds_what_assemble_gives_within_the_window_share(tmp_path: Path) -> None:
    policy = Policy(max_tokens=2000)  # [assembly] window_share 0.05: 100 tokens
    with Memory.open(tmp_path, policy=policy) as memory:
        memory.add_turn("s1", "user", "Our pytest runs are slow on CI", extract=False)
        for text in ("We use pytest for the tests.", "pytest runs with -x.", "pytest plugins live in conftest."):
            memory.remember(text)
        assembled = memory.assemble(budget=100, query="which pytest options?")
        blocks = [c for c in assembled.context.split("\n\n") if c]
        assert len(blocks) >= 1 and assembled.token_count <= 100
        messages = memory.new_window(record=False).prepare_context("which pytest options?")
        assert messages == [
            {"role": "user", "content": "which pytest options?"},
            *({"role": "assistant", "content": b} for b in blocks),
        ]
        memory.longterm.close()  # the store fails: the window goes on without the assembled context
        assert memory.new_window(record=False).prepare_context("pytest?") == [{"role": "user", "content": "pytest?"}]


WORKFLOWS = (
    "Run the migrations before the integration suite",
    "Tag the release after the changelog is merged",
    "Rebuild the docs site when the API pages change",
    "Bump the lockfile weekly with the updater bot",
    "Profile the parser whenever a grammar is upgraded",
    "Rotate the staging credentials every quarter",
    "Squash fixup commits before asking for review",
    "Regenerate the fixtures from the seed database",
    "Check the wheel sizes after each dependency upgrade",
    "Archive old benchmark results in the bucket",
    "Review flaky tests on Monday mornings",
    "Email the changelog summary to support",
)


def test_the_background_tier_offers_the_ten_best_scored_workflows_and_follows_a_collection(tmp_path: Path) -> None:
    def offered(memory: Memory) -> list[int]:
        [background] = [t for t in memory.assemble(budget=8000).tiers if t.name == "background"]
        why = "a workflow or pattern of the project"
        return [int(i.ref.split(":")[1]) for i in background.items if any(r.detail == why for r in i.reasons)]

    def best(memory: Memory) -> list[int]:  # by stored score, equal ones by id
        rows = [m for m in memory.longterm.active() if m.kind in ("workflow", "pattern")]
        return [m.id for m in sorted(rows, key=lambda m: -m.score)[:10]]

    with Memory.open(tmp_path) as memory:
        ids = [
            memory.remember(text, kind="workflow" if i % 3 else "pattern", importance=i % 2, domain="release").memory_id
            for i, text in enumerate(WORKFLOWS)
        ]
        assert len(set(ids)) == 12
        assert offered(memory) == best(memory)
        assert set(best(memory)[:6]) == set(ids[1::2])  # the important ones first
        for _ in range(4):  # recalled: more hits, a higher score once a collection rescores
            memory.recall("email the changelog summary to support")
            memory.recall("review flaky tests on monday mornings")
        before = offered(memory)
        assert memory.gc().scored == 12
        assert offered(memory) == best(memory) != before


def test_policy_section_round_trips() -> None:
    policy = Policy.from_dict({"longterm": {"short_term_turns": 5, "extractor_mode": "llm"}})
    assert policy.longterm.short_term_turns == 5
    assert Policy.from_dict(policy.to_dict()) == policy
    with pytest.raises(InvalidInputError, match="extractor_mode"):
        Policy.from_dict({"longterm": {"extractor_mode": "magic"}})


def test_near_duplicates_merge_by_cosine_once_embedded(clock: Clock) -> None:
    with LongTermMemory(":memory:", clock=clock, embedder=FakeEmbedder) as ltm:
        ids = [ltm.remember(text) for text in list(FakeEmbedder.VECTORS)[:3]]
        assert [(r.memory_id, r.action) for r in ids] == [(1, "created"), (2, "created"), (3, "created")]
        found = ltm.recall("where is the release script?")  # embeds what is new, then merges
        assert found.channels == ["lexical", "dense"]
        assert (ltm.get(1).status, ltm.get(1).hits) == ("active", 1)
        assert (ltm.get(2).status, ltm.get(3).status) == ("archived", "active")
        assert [(e.relation, e.memory_id) for e in ltm.explain(2).related] == [("merged_into", 1)]
        assert [(e.relation, e.memory_id) for e in ltm.explain(1).related] == [("merged_from", 2)]
        assert ltm.explain(2).actions[-1].detail == "merged into memory 1 (cosine 0.900)"
        assert 2 not in [h.id for h in ltm.recall("tools/release.sh").hits]


def test_a_recall_scores_as_the_next_one(clock: Clock) -> None:
    """Whatever a recall brings up to date (stale session documents, pending embeddings
    and the cosine merges they cause) is done before it searches, not after."""
    query = "where is the release script for postgres?"
    with LongTermMemory(":memory:", clock=clock, embedder=FakeEmbedder) as ltm:
        ltm.add_turn("s1", "user", "We keep the release script next to the Postgres dump.")
        for text in list(FakeEmbedder.VECTORS)[:3]:
            ltm.remember(text)
        first = ltm.recall(query)
        assert ltm.get(2).status == "archived"  # merged into 1 by cosine during the first recall
        assert [(h.kind, h.id) for h in first.hits] == [("turn", 1), ("fact", 1)]
        assert ltm.recall(query) == first
        ltm.add_turn("s2", "user", "Postgres 16 runs the release script checks.")  # a new session
        third = ltm.recall(query)
        assert [(h.kind, h.id) for h in third.hits] == [("turn", 1), ("turn", 2), ("fact", 1)]
        assert ltm.recall(query) == third


def test_memories_from_turns_with_personal_data_are_tagged(ltm: LongTermMemory) -> None:
    added = ltm.add_turn("s", "user", "My name is Alex and my email is alex@example.com.")
    memory = ltm.get(added.extracted[0].memory_id)
    assert "pii" in memory.tags and "email" in memory.tags


_HOSTILE = st.one_of(
    st.text(max_size=300),
    st.sampled_from(
        ["\ud800 lone", "nul\x00", "", "   ", "?" * 5000, "I " * 20000, "my name is " * 3000, "é" * 70_000]
    ),
)


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["turn", "remember", "recall", "forget"]), _HOSTILE), max_size=8))
def test_hostile_text_gets_a_typed_error_or_works(ops: list[tuple[str, str]]) -> None:
    from aircher_mem import AircherError

    with LongTermMemory(":memory:", clock=Clock()) as ltm:
        for op, text in ops:
            try:
                if op == "turn":
                    ltm.add_turn("s", "user", text, speaker=text[:20] or None, metadata={"raw": text[:50]})
                elif op == "remember":
                    ltm.remember(text)
                elif op == "recall":
                    ltm.recall(text, k=5)
                else:
                    ltm.forget(text=text)
            except AircherError:
                pass
        ltm.flush()
        counts = ltm.counts()
        assert counts["memories"] == counts["active"] + counts["archived"]


def test_extractor_modes_llm_only_and_archive(clock: Clock) -> None:
    def llm(text: str) -> object:
        if "forget the old editor" in text:
            return [{"content": "I use vim", "action": "archive"}]
        return [{"content": "Alex is a backend engineer", "importance": 0, "tags": ["work"], "action": "create"}]

    def slow(text: str) -> object:
        import time

        time.sleep(1.0)
        return []

    policy = LongtermPolicy(extractor_mode="llm", llm_timeout_seconds=0.05)
    with LongTermMemory(":memory:", clock=clock, extractor=llm, policy=policy) as ltm:
        added = ltm.add_turn("s", "user", "My name is Alex. I work on the backend.")
        assert [(e.content, e.rules) for e in added.extracted] == [("Alex is a backend engineer", ["llm"])]
        assert ltm.remember("I use vim").action == "created"
        assert ltm.add_turn("s", "user", "please forget the old editor").extracted == []
        assert ltm.get(2).status == "archived"
        assert ltm.explain(2).actions[-1].detail == "the extractor asked (turn 2)"
    with LongTermMemory(":memory:", clock=clock, extractor=slow, policy=policy) as ltm:
        added = ltm.add_turn("s", "user", "My name is Alex.")
        assert [e.content for e in added.extracted] == ["My name is Alex."]  # the rules, after the timeout
        assert "timeout" in added.notes[0]


def test_vectors_persist_and_the_dense_channel_survives_reopening(tmp_path: Path, clock: Clock) -> None:
    path = tmp_path / "m.duckdb"
    with LongTermMemory(path, clock=clock, embedder=FakeEmbedder) as ltm:
        ltm.remember("Lunch is at noon")
        assert ltm.recall("lunch").channels == ["lexical", "dense"]
    with LongTermMemory(path, clock=clock, embedder=FakeEmbedder) as ltm:  # nothing left to embed
        found = ltm.recall("lunch")
        assert found.channels == ["lexical", "dense"]
        assert {c.channel for c in found.hits[0].channels} == {"lexical", "dense"}


def test_gc_changes_are_written(tmp_path: Path, clock: Clock) -> None:
    path = tmp_path / "m.duckdb"
    with LongTermMemory(path, clock=clock) as ltm:
        for _ in range(4):
            ltm.remember("alpha service owns the billing tables", at=T0)
        ltm.remember("bravo notes about the cache layer", at=T0 - 20 * DAY)
        report = ltm.gc()
        assert (report.promoted, report.archived_low_score) == ([1], [2])
    with LongTermMemory(path, clock=clock) as ltm:
        assert (ltm.get(1).layer, ltm.get(2).status) == ("long", "archived")
        assert [a.action for a in ltm.explain(2).actions] == ["created", "archived"]
        assert [a.detail for a in ltm.explain(1).actions] == [
            "remember; rules remember",
            *["remember"] * 3,
            "hits 3 >= 3",
        ]
        # the stored score is gc's: the memory score at gc time (the archived one was active then)
        stored = dict(ltm._con.execute("SELECT id, score FROM memories").fetchall())
        assert stored == {1: pytest.approx(math.log(4) + 1.0), 2: pytest.approx(math.exp(-1.0))}
        assert ltm.remember("bravo notes about the cache layer").action == "created"  # archived: no merge


def test_stored_vectors_load_and_bad_ones_are_embedded_again(tmp_path: Path, clock: Clock) -> None:
    import duckdb

    path = tmp_path / "m.duckdb"
    texts = ["Lunch is at noon", "The deploy script lives in tools/release.sh", "Coffee is free", "Tea is free"]
    with LongTermMemory(path, clock=clock, embedder=FakeEmbedder) as ltm:
        assert [ltm.remember(text).memory_id for text in texts] == [1, 2, 3, 4]
        ltm.flush()  # embeds all four
    con = duckdb.connect(str(path))
    con.execute("UPDATE memory_vectors SET vector = [1.0, NULL, 0.0, 0.0] WHERE item_key = 'm2'")
    con.execute("UPDATE memory_vectors SET vector = [1.0, 0.0] WHERE item_key = 'm3'")  # another dimension
    con.execute("UPDATE memory_vectors SET vector = ['nan'::FLOAT, 0, 0, 0] WHERE item_key = 'm4'")
    con.execute("INSERT INTO memory_vectors VALUES ('m99', [0.0, 0.0, 1.0, 0.0]), ('t7', [1.0])")  # no such items
    con.close()
    embedded: list[str] = []

    class Counting(FakeEmbedder):
        def embed(self, texts: list[str]) -> object:
            embedded.extend(texts)
            return super().embed(texts)

    with LongTermMemory(path, clock=clock, embedder=Counting) as ltm:
        assert ltm.counts()["memories"] == 4  # loaded: the vectors read, nothing embedded yet
        assert embedded == []
        found = ltm.recall("lunch")
        assert embedded == [*texts[1:], "lunch"]  # the three bad vectors, then the query
        assert found.channels == ["lexical", "dense"]
        assert [(h.id, [c.channel for c in h.channels]) for h in found.hits] == [(1, ["lexical", "dense"])]
    con = duckdb.connect(str(path))
    rows = con.execute("SELECT item_key, vector FROM memory_vectors ORDER BY item_key").fetchall()
    con.close()
    assert rows == [
        ("m1", [0.0, 0.0, 1.0, 0.0]),
        ("m2", [1.0, 0.0, 0.0, 0.0]),
        ("m3", [0.0, 0.0, 0.0, 1.0]),
        ("m4", [0.0, 0.0, 0.0, 1.0]),
        ("m99", [0.0, 0.0, 1.0, 0.0]),
        ("t7", [1.0]),
    ]


# -- the indexes saved at close ----------------------------------------------------------------


def _recalled(ltm: LongTermMemory) -> list[list[tuple[str, int, float]]]:
    queries = ["Where does Ana run?", "deploy staging", "favourite colour", "parser fixed on Friday"]
    return [[(h.kind, h.id, round(h.score, 9)) for h in ltm.recall(q, k=6).hits] for q in queries]


@pytest.mark.slow
def test_indexes_saved_at_close_are_read_until_the_rows_change(
    tmp_path: Path, clock: Clock, caplog: pytest.LogCaptureFixture
) -> None:
    import duckdb
    from aircher_mem.longterm.store import DOCUMENTS_VERSION, INDEX_SUFFIXES

    path = tmp_path / "m.duckdb"
    files = [Path(f"{path}{suffix}") for suffix in INDEX_SUFFIXES]

    def generation() -> list[tuple[int, int]]:
        con = duckdb.connect(str(path))
        try:
            return con.execute("SELECT generation, documents FROM longterm_indexes").fetchall()
        finally:
            con.close()

    with LongTermMemory(path, clock=clock) as ltm:
        for i, text in enumerate(
            [
                "Ana runs along the river every morning.",
                "My favourite colour is green.",
                "We deploy staging with make deploy-staging.",
                "The parser was fixed on Friday.",
            ]
        ):
            ltm.add_turn("s1", "user", text, speaker="Ana", at=T0 + i)
        ltm.remember("Staging deploys need the VPN.", kind="fact", tags=["deploy"])
        assert ltm.index_source == "rebuilt" and not any(f.exists() for f in files)
        expected = _recalled(ltm)
        merged = ltm.counts()
    assert all(f.exists() and stat.S_IMODE(f.stat().st_mode) == 0o600 for f in files)
    [(first, documents)] = generation()
    assert documents == DOCUMENTS_VERSION

    def logged() -> list[tuple[int, str]]:
        con = duckdb.connect(str(path))
        try:
            return sorted(con.execute("SELECT part, key FROM longterm_index_log").fetchall())
        finally:
            con.close()

    with LongTermMemory(path, clock=clock) as ltm:  # read as saved: nothing is rebuilt
        assert ltm.counts() == merged and ltm.index_source == "saved"
    assert generation() == [(first, documents)] and logged() == []  # nothing written: the files stay
    saved = [f.read_bytes() for f in files]
    with LongTermMemory(path, clock=clock) as ltm:
        assert _recalled(ltm) == expected and ltm.index_source == "saved"
    # recall counts what it retrieved: the memories it wrote are logged, the files stay
    assert generation() == [(first, documents)] and [f.read_bytes() for f in files] == saved
    assert logged() and {part for part, _ in logged()} == {0, 1} and all(k[0] == "m" for _, k in logged())
    with LongTermMemory(path, clock=clock) as ltm:  # the saved files and the log: as recalled
        assert _recalled(ltm) == expected and ltm.index_source == "saved"
    for f in files:
        f.unlink()
    with LongTermMemory(path, clock=clock) as ltm:  # no files: built from the rows, alike
        assert _recalled(ltm) == expected and ltm.index_source == "rebuilt"
    [(second, _)] = generation()
    assert second != first and logged() == []

    # A write logs the keys of the documents it changes, in its transaction; the
    # files and their generation stay, and the next load makes those documents again.
    with LongTermMemory(path, clock=clock) as ltm:
        assert ltm.index_source == ""  # not loaded yet: on first use
        ltm.counts()
        assert ltm.index_source == "saved"
        ltm.add_turn("s2", "user", "The release moved to Tuesday.", at=T0 + 9, extract=False)
        ltm.add_turn("s2", "user", "The release notes are in the wiki.", at=T0 + 10, extract=False)
        ltm.flush()
        assert all(f.exists() for f in files) and ltm._con.execute("SELECT * FROM longterm_indexes").fetchall()
        # each turn, the turn before it (its context) and its session
        rows = ltm._con.execute("SELECT part, key FROM longterm_index_log").fetchall()
        assert sorted(rows) == [(0, "t5"), (0, "t5"), (0, "t6"), (2, "ss2"), (2, "ss2")]
        expected = _recalled(ltm)
    assert generation() == [(second, documents)]
    with LongTermMemory(path, clock=clock) as ltm:
        assert _recalled(ltm) == expected and ltm.index_source == "saved"
        assert [h.id for h in ltm.recall("release wiki notes", k=1).hits] == [6]

    # A write whose keys would take the log past [longterm] index_log_rows drops the
    # files first (the generation and the log with the write); close saves anew.
    policy = LongtermPolicy(index_log_rows=len(logged()) + 1)
    with LongTermMemory(path, clock=clock, policy=policy) as ltm:
        ltm.counts()
        ltm.add_turn("s2", "user", "The wiki moved to the new server.", at=T0 + 11, extract=False)
        ltm.flush()
        assert not any(f.exists() for f in files)
        assert ltm._con.execute("SELECT * FROM longterm_indexes").fetchall() == []
        assert ltm._con.execute("SELECT * FROM longterm_index_log").fetchall() == []
        expected = _recalled(ltm)
    [(third, _)] = generation()
    assert third != second and logged() == []
    with LongTermMemory(path, clock=clock) as ltm:
        assert _recalled(ltm) == expected and ltm.index_source == "saved"

    # Forget: gone from the files at once, and from those saved at close.
    with LongTermMemory(path, clock=clock) as ltm:
        [forgotten] = [m.id for m in ltm.memories().memories if "VPN" in m.content]
        ltm.forget(forgotten)
        assert not any(f.exists() for f in files)
    assert all(b"VPN" not in f.read_bytes() for f in files)
    with LongTermMemory(path, clock=clock) as ltm:
        ltm.counts()
        assert ltm.index_source == "saved"
        assert all(h.id != forgotten for h in ltm.recall("VPN staging", k=10).hits if h.kind != "turn")

    # Files of another generation, of older documents, or damaged: rebuilt from the
    # rows (and deleted).
    for change in ("generation = generation + 1", f"documents = {DOCUMENTS_VERSION - 1}"):
        con = duckdb.connect(str(path))
        con.execute(f"UPDATE longterm_indexes SET {change}")
        con.close()
        with LongTermMemory(path, clock=clock) as ltm:
            ltm.counts()
            assert ltm.index_source == "rebuilt" and not any(f.exists() for f in files)
            expected = _recalled(ltm)
    files[0].write_bytes(b"AIRLEXIC" + bytes(64))
    with caplog.at_level("WARNING", logger="aircher_mem.longterm"), LongTermMemory(path, clock=clock) as ltm:
        assert _recalled(ltm) == expected and ltm.index_source == "rebuilt"
    assert "rebuilding its indexes" in caplog.text


_SESSION_OPS = st.lists(
    st.one_of(
        st.tuples(st.just("turn"), st.sampled_from(_CONTENTS)),
        st.tuples(st.just("remember"), st.sampled_from(_CONTENTS)),
        st.tuples(st.just("forget"), st.integers(1, 8)),
        st.tuples(st.just("update"), st.tuples(st.integers(1, 8), st.sampled_from(_CONTENTS))),
        st.tuples(st.just("archive"), st.integers(1, 8)),
        st.tuples(st.just("recall"), st.sampled_from(_CONTENTS)),
        st.tuples(st.just("gc"), st.just(0)),
        st.tuples(st.just("crash"), st.just(0)),
    ),
    max_size=8,
)


@pytest.mark.slow
@settings(max_examples=30, deadline=None)
@given(st.lists(_SESSION_OPS, min_size=1, max_size=4))
def test_saved_indexes_recall_as_indexes_built_from_the_rows(sessions: list[list[tuple[str, object]]]) -> None:
    """Sessions of changes, each closed (saving the indexes when its writes could
    not log their changes), or, after a "crash", left with every write made and
    nothing saved at close; then the store opened with its saved indexes (and the
    log of changes since) and opened with them deleted recall alike."""
    import tempfile

    from aircher_mem.longterm.store import INDEX_SUFFIXES

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "m.duckdb"
        clock = Clock()
        for ops in sessions:
            with LongTermMemory(path, clock=clock) as ltm:
                ltm.counts()  # loaded: close saves the indexes, changed or not
                for op, arg in ops:
                    clock.now += 3_600
                    try:
                        if op == "turn":
                            ltm.add_turn("s", "user", str(arg))
                        elif op == "remember":
                            ltm.remember(str(arg))
                        elif op == "forget":
                            ltm.forget(int(arg))  # type: ignore[call-overload]
                        elif op == "update":
                            memory_id, content = arg  # type: ignore[misc]
                            ltm.update(memory_id, content=content)
                        elif op == "archive":
                            ltm.update(int(arg), status="archived")  # type: ignore[call-overload]
                        elif op == "recall":
                            ltm.recall(str(arg), k=5)
                        elif op == "crash":  # what close writes after the last write: nothing
                            ltm.flush()
                            ltm._save_indexes = lambda: None  # type: ignore[method-assign]
                        else:
                            ltm.gc()
                    except UnknownMemoryError:
                        pass

        def recalled() -> tuple[str, list[list[tuple[str, int, float]]]]:
            with LongTermMemory(path, clock=clock) as ltm:
                hits = [[(h.kind, h.id, round(h.score, 9)) for h in ltm.recall(q, k=10).hits] for q in _CONTENTS]
                merged = [ltm.remember(c).action for c in _CONTENTS[:2]]  # the merge check's index
                return ltm.index_source, [*hits, merged]  # type: ignore[list-item]

        # Each reopen writes (recall's usage counts, the merge check's memories):
        # copies of the store as the sessions left it, one per way of opening.
        for suffix in ("", *INDEX_SUFFIXES):
            source = Path(f"{path}{suffix}")
            if source.exists():
                Path(f"{path}.keep{suffix}").write_bytes(source.read_bytes())
        saved_files = all(Path(f"{path}{suffix}").exists() for suffix in INDEX_SUFFIXES)
        source, saved = recalled()
        assert source == ("saved" if saved_files else "rebuilt")  # none after a crash before any save
        for suffix in ("", *INDEX_SUFFIXES):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
            kept = Path(f"{path}.keep{suffix}")
            if kept.exists() and not suffix:
                kept.rename(path)
        source, rebuilt = recalled()
        assert source == "rebuilt" and saved == rebuilt


def test_secrets_are_redacted_wherever_they_would_be_stored(tmp_path: Path, clock: Clock) -> None:
    import duckdb

    token = "ghp_" + "a" * 36

    def llm(text: str) -> object:
        return [{"content": f"The deploy token is {token}", "importance": 1, "tags": [token], "action": "create"}]

    path = tmp_path / "m.duckdb"
    with LongTermMemory(path, clock=clock, extractor=llm) as ltm:
        added = ltm.add_turn("s", "user", f"the token is {token}", speaker=f"bot {token}", metadata={"k": token})
        assert [(e.action, e.memory_id) for e in added.extracted] == [("created", 1)]
        remembered = ltm.remember(f"CI uses {token}", tags=[token, "ci"], domain=token, module="m", code_ref=token)
        assert remembered.memory_id == 2
        ltm.update(1, tags=[f"deploy {token}"])
        kept = [ltm.get(1), ltm.get(2)]
        marker = kept[0].content.removeprefix("The deploy token is ")
        assert marker.startswith("[REDACTED:github_token:") and token not in marker
        assert (kept[0].tags, kept[1].content, kept[1].tags) == (
            [f"deploy {marker}"],
            f"CI uses {marker}",
            [marker, "ci"],
        )
        assert (kept[1].domain, kept[1].code_ref) == (marker, marker)
        assert ltm.turns("s")[0].speaker == f"bot {marker}"
        assert ltm.forget(text=f"CI uses {token}").ids == [2]  # the text is redacted before matching
        # A session id that holds a secret is kept redacted; the raw id still finds it.
        secret_session = f"deploy-{token}"
        ltm.add_turn(secret_session, "user", "ship it", extract=False)
        [turn] = ltm.turns(secret_session)
        assert (turn.session_id, turn.text) == (f"deploy-{marker}", "ship it")
        assert [t.text for t in ltm.get_context(secret_session).short_term] == ["ship it"]
        recalled = ltm.recall("ship", session_id=secret_session).hits
        assert [(h.kind, h.id) for h in recalled] == [("turn", turn.id)]
    con = duckdb.connect(str(path))
    stored = [
        str(row)
        for table in ("turns", "memories", "memory_links", "memory_edges", "memory_actions")
        for row in con.execute(f"SELECT * FROM {table}").fetchall()
    ]
    con.close()
    assert stored and not [row for row in stored if token in row]


# -- the policy's default numbers, at their boundaries --------------------------------------------


def test_policy_defaults() -> None:
    p = LongtermPolicy()
    assert (p.short_term_turns, p.merge_jaccard, p.merge_cosine, p.duplicate_cosine) == (100, 0.7, 0.85, 0.95)
    assert (p.w_freq, p.w_recency, p.w_importance, p.decay_lambda) == (1.0, 1.0, 2.0, 0.05)
    assert (p.promote_hits, p.promote_days, p.archive_score, p.archive_days, p.mid_capacity) == (3, 7.0, 0.5, 30.0, 500)


def test_jaccard_merges_at_0_7_and_not_below(ltm: LongTermMemory) -> None:
    from aircher_mem.longterm.extract import jaccard, token_set

    base = "The staging server restarts each night at two"
    above = "The staging server reboots each night at two"  # 5 of 7 tokens: 0.714
    below = "The staging server reboots each single night at two"  # 5 of 8: 0.625
    assert jaccard(token_set(base), token_set(above)) == 5 / 7
    assert jaccard(token_set(base), token_set(below)) == 5 / 8  # memory 1 keeps base's words after the merge
    assert [(r.memory_id, r.action) for r in (ltm.remember(t) for t in (base, above, below))] == [
        (1, "created"),
        (1, "merged"),
        (2, "created"),
    ]
    assert (ltm.get(1).hits, ltm.get(2).hits) == (1, 0)


class PlaneEmbedder:
    """Each memory's own direction: cosine to "base" 0.96, 0.851 and 0.849, and at
    most 0.817 between any two of the others; any other text gets a fifth axis."""

    VECTORS: ClassVar[dict[str, list[float]]] = {
        "base: the release script is tools/release.sh": [1.0, 0.0, 0.0, 0.0, 0.0],
        "dup: run tools/release.sh to ship": [0.96, 0.28, 0.0, 0.0, 0.0],
        "merge: shipping goes through a script": [0.851, 0.0, math.sqrt(1 - 0.851**2), 0.0, 0.0],
        "new: a script exists somewhere": [0.849, 0.0, 0.0, math.sqrt(1 - 0.849**2), 0.0],
    }

    def embed(self, texts: list[str]) -> object:
        import numpy as np

        return np.array([self.VECTORS.get(t, [0.0, 0.0, 0.0, 0.0, 1.0]) for t in texts], dtype=np.float32)


def test_cosine_duplicate_merge_and_new_at_000s_thresholds(clock: Clock) -> None:
    with LongTermMemory(":memory:", clock=clock, embedder=PlaneEmbedder) as ltm:
        assert [ltm.remember(t).action for t in PlaneEmbedder.VECTORS] == ["created"] * 4  # no shared words
        ltm.flush()  # embeds the four, then applies the cosine rule
        assert [(ltm.get(i).status, ltm.get(i).hits) for i in (1, 2, 3, 4)] == [
            ("active", 2),
            ("archived", 0),
            ("archived", 0),
            ("active", 0),
        ]
        assert ltm.explain(2).actions[-1].detail == "duplicate of memory 1 (cosine 0.960)"
        assert ltm.explain(3).actions[-1].detail == "merged into memory 1 (cosine 0.851)"
        assert [a.detail for a in ltm.explain(1).actions[1:]] == [
            "memory 2, a duplicate (cosine 0.960)",
            "memory 3 (cosine 0.851)",
        ]
        assert [(e.relation, e.memory_id) for e in ltm.explain(1).related] == [("merged_from", 2), ("merged_from", 3)]


def test_gc_rules_at_their_boundaries(clock: Clock) -> None:
    with LongTermMemory(":memory:", clock=clock) as ltm:
        for _ in range(4):
            ltm.remember("alpha owns billing", at=T0 - 6.9 * DAY)  # 1: hits 3, seen 6.9 days ago: promoted
        for _ in range(4):
            ltm.remember("bravo owns search", at=T0 - 7.1 * DAY)  # 2: hits 3 but 7.1 days: kept, ln 4 + 0.70
        for _ in range(3):
            ltm.remember("charlie owns payroll", at=T0)  # 3: hits 2: kept
        ltm.remember("delta runbook", importance=1, at=T0 - 30.1 * DAY)  # 4: 2.22, unseen 30.1 days: archived
        ltm.remember("echo runbook", importance=1, at=T0 - 29.9 * DAY)  # 5: kept
        ltm.remember("foxtrot note", at=T0 - 13.8 * DAY)  # 6: e^-0.69 = 0.5016: kept
        ltm.remember("golf note", at=T0 - 13.9 * DAY)  # 7: e^-0.695 = 0.4991: archived
        assert [ltm.get(i).hits for i in range(1, 8)] == [3, 3, 2, 0, 0, 0, 0]
        assert [ltm.explain(i).outlook for i in (1, 2, 3, 4, 5, 6)] == [
            "promote to long-term",
            "keep",
            "keep",
            "archive: not seen for 30.1 days > 30.0",
            "keep",
            "keep",
        ]
        assert ltm.explain(7).outlook == "archive: score 0.499 < 0.5"
        report = ltm.gc()
        assert (report.promoted, report.archived_low_score, report.archived_age, report.archived_capacity) == (
            [1],
            [7],
            [4],
            [],
        )
        assert (report.scored, report.mid_active, report.long_active) == (7, 4, 1)


@pytest.mark.slow
def test_gc_keeps_500_mid_term_memories_by_default(clock: Clock) -> None:
    with LongTermMemory(":memory:", clock=clock) as ltm:
        for i in range(502):  # each a minute older than the one before; none merge
            assert ltm.remember(f"note {i} zz{i}", at=T0 - 60 * i).memory_id == i + 1
        report = ltm.gc(dry_run=True)
        assert (report.archived_capacity, report.mid_active) == ([502, 501], 500)
        assert ltm.gc().archived_capacity == [502, 501]
        assert ltm.explain(501).actions[-1].detail == "gc: capacity"
        assert ltm.counts()["active"] == 500


def test_feedback_moves_the_usage_term(ltm: LongTermMemory) -> None:
    ltm.remember("Builds run on buildkite")
    assert ltm.recall("buildkite builds").hits[0].usage == 0.0
    for signal in ("ignored", "ignored", "cited"):
        ltm.feedback(1, signal)  # type: ignore[arg-type]
    fed = ltm.feedback(1, "ignored")
    assert (fed.retrieved, fed.cited, fed.ignored) == (1, 1, 3)
    hit = ltm.recall("buildkite builds").hits[0]
    assert hit.usage == pytest.approx(0.1 * (1 - 3) / (1 + 3 + 1))  # recall_usage_weight (cited - ignored) / (n + 1)
    assert [a.action for a in ltm.explain(1).actions] == ["created", "ignored", "ignored", "cited", "ignored"]


# -- forget, against every way a memory can be made or changed ------------------------------------

_SAID = [
    "I prefer tabs.",
    "I now prefer spaces.",
    "The database is Postgres.",
    "We moved to MySQL.",
    "My name is Alex.",
    "We use pytest for the tests.",
]
_KEPT = [
    "base: the release script is tools/release.sh",
    "dup: run tools/release.sh to ship",
    "merge: shipping goes through a script",
    "alice owns the payments module",
    "alice owns the payments module today",
]
_QUERIES = ["tabs spaces prefer", "database postgres mysql", "name Alex", "pytest tests", "release script", "alice"]


@pytest.mark.slow
@settings(max_examples=30, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.tuples(st.just("turn"), st.sampled_from(_SAID)),
            st.tuples(st.just("remember"), st.sampled_from(_KEPT)),
            st.tuples(st.just("child"), st.integers(1, 10)),
            st.tuples(st.just("forget"), st.integers(1, 10)),
            st.tuples(st.just("forget_text"), st.sampled_from(_SAID + _KEPT)),
            st.tuples(st.just("archive"), st.integers(1, 10)),
            st.tuples(st.just("recall"), st.sampled_from(_QUERIES)),  # embeds: cosine merges
            st.tuples(st.just("gc"), st.just(0)),
        ),
        max_size=20,
    )
)
def test_a_forgotten_memory_never_comes_back_whatever_made_it(ops: list[tuple[str, object]]) -> None:
    """Turns (extracted, merged, superseded), remember (Jaccard and cosine merges,
    children), updates and gc, with forgets anywhere: a forgotten memory is in no
    recall, list, explain (its own or another's), record, or table row, even after
    reopening."""
    import tempfile

    import duckdb

    clock = Clock()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "m.duckdb"
        forgotten: set[int] = set()
        with LongTermMemory(path, clock=clock, embedder=PlaneEmbedder) as ltm:
            for op, arg in ops:
                clock.now += 60
                try:
                    if op == "turn":
                        ltm.add_turn("s", "user", str(arg))
                    elif op == "remember":
                        assert ltm.remember(str(arg)).memory_id not in forgotten  # ids are never reused
                    elif op == "child":
                        ltm.remember(f"child note {arg}", parent_id=int(arg))  # type: ignore[call-overload]
                    elif op == "forget":
                        forgotten.update(ltm.forget(int(arg)).ids)  # type: ignore[call-overload]
                    elif op == "forget_text":
                        forgotten.update(ltm.forget(text=str(arg)).ids)
                    elif op == "archive":
                        ltm.update(int(arg), status="archived")  # type: ignore[call-overload]
                    elif op == "recall":
                        ltm.recall(str(arg))
                    else:
                        ltm.gc()
                except UnknownMemoryError:
                    pass
                _assert_forgotten(ltm, forgotten)
        with LongTermMemory(path, clock=clock, embedder=PlaneEmbedder) as ltm:
            _assert_forgotten(ltm, forgotten)
        con = duckdb.connect(str(path))
        try:
            keys = [f"m{i}" for i in forgotten]
            for sql, values in (
                ("SELECT id FROM memories WHERE id IN (SELECT unnest(?::BIGINT[]))", [list(forgotten)]),
                (
                    "SELECT memory_id FROM memory_links WHERE memory_id IN (SELECT unnest(?::BIGINT[]))",
                    [list(forgotten)],
                ),
                (
                    "SELECT memory_id FROM memory_actions WHERE memory_id IN (SELECT unnest(?::BIGINT[]))",
                    [list(forgotten)],
                ),
                (
                    "SELECT source_id FROM memory_edges WHERE source_id IN (SELECT unnest(?::BIGINT[])) "
                    "OR target_id IN (SELECT unnest(?::BIGINT[]))",
                    [list(forgotten), list(forgotten)],
                ),
                (
                    "SELECT id FROM memories WHERE parent_id IN (SELECT unnest(?::BIGINT[])) "
                    "OR superseded_by IN (SELECT unnest(?::BIGINT[]))",
                    [list(forgotten), list(forgotten)],
                ),
                (
                    "SELECT id FROM contradictions WHERE memory_a IN (SELECT unnest(?::BIGINT[])) "
                    "OR memory_b IN (SELECT unnest(?::BIGINT[]))",
                    [list(forgotten), list(forgotten)],
                ),
                ("SELECT memory_id FROM episodes WHERE memory_id IN (SELECT unnest(?::BIGINT[]))", [list(forgotten)]),
                ("SELECT item_key FROM memory_vectors WHERE item_key IN (SELECT unnest(?::VARCHAR[]))", [keys]),
            ):
                assert con.execute(sql, values).fetchall() == []
        finally:
            con.close()


def _assert_forgotten(ltm: LongTermMemory, forgotten: set[int]) -> None:
    for query in _QUERIES:
        for at in (None, T0 + 10 * DAY):
            hits = ltm.recall(query, k=50, at=at).hits
            assert not {h.id for h in hits if h.kind != "turn"} & forgotten
    records = ltm.memories(status=None, limit=1000).memories
    assert not {m.id for m in records} & forgotten
    assert not {m.parent_id for m in records} & forgotten
    assert not {m.superseded_by for m in records} & forgotten
    for record in records:
        why = ltm.explain(record.id)
        assert not {e.memory_id for e in why.related} & forgotten
        for action in why.actions:
            if action.action in ("superseded", "supersedes"):  # they quote the other memory's value
                other = int(action.detail.removeprefix("by ").removeprefix("memory ").split(":")[0].split()[0])
                assert (other in forgotten) == action.detail.endswith(" (forgotten)") == (":" not in action.detail)
    for memory_id in forgotten:
        with pytest.raises(UnknownMemoryError):
            ltm.explain(memory_id)


@pytest.mark.parametrize("gone", [1, 2])
def test_forgetting_one_side_of_a_supersede_leaves_no_quote_of_it(tmp_path: Path, clock: Clock, gone: int) -> None:
    path = tmp_path / "m.duckdb"
    with LongTermMemory(path, clock=clock) as ltm:
        ltm.add_turn("s", "user", "I prefer tabs.")
        ltm.add_turn("s", "user", "I now prefer spaces.")
        kept = 3 - gone
        quote = {1: "by memory 2: 'spaces'", 2: "memory 1: 'tabs'"}[kept]
        assert ltm.explain(kept).actions[-1].detail == quote
        assert ltm.forget(gone).ids == [gone]
        scrubbed = {1: "by memory 2 (forgotten)", 2: "memory 1 (forgotten)"}[kept]
        assert ltm.explain(kept).actions[-1].detail == scrubbed
    with LongTermMemory(path, clock=clock) as ltm:
        assert [a.detail for a in ltm.explain(kept).actions][-1] == scrubbed
        assert ltm.explain(kept).related == []


def test_the_cosine_merge_looks_past_turns_that_say_the_same(clock: Clock) -> None:
    """The vector index holds turns too: 30 turns as close to the new memory as it is
    to itself must not hide the older memory it merges into (the window was 20)."""

    class Crowd:
        def embed(self, texts: list[str]) -> object:
            import numpy as np

            table = {"alpha: the cache lives in redis": [0.9, 0.435889894, 0.0], "the cache is redis": [1.0, 0.0, 0.0]}
            vectors = [table.get(t, [1.0, 0.0, 0.0] if t.startswith("s:") else [0.0, 0.0, 1.0]) for t in texts]
            return np.array(vectors, dtype=np.float32)

    with LongTermMemory(":memory:", clock=clock, embedder=Crowd) as ltm:
        assert ltm.remember("alpha: the cache lives in redis").memory_id == 1
        for i in range(30):
            ltm.add_turn("s", "user", f"turn {i}", speaker="s", extract=False)
        assert ltm.remember("the cache is redis").memory_id == 2
        ltm.flush()
        assert (ltm.get(2).status, ltm.get(1).hits) == ("archived", 1)
        assert ltm.explain(2).actions[-1].detail == "merged into memory 1 (cosine 0.900)"


# -- one way to write ----------------------------------------------------------------------


class _Recording:
    """A connection that notes every statement run on it and whether a transaction
    was open then (everything else goes to the real connection)."""

    def __init__(self, con: object, seen: list[tuple[bool, str]]) -> None:
        self._con, self._seen, self._open = con, seen, False

    def execute(self, sql: str, *args: object) -> object:
        verb = sql.split()[0].upper()
        if verb == "BEGIN":
            self._open = True
        elif verb in ("COMMIT", "ROLLBACK"):
            self._open = False
        else:
            self._seen.append((self._open, verb))
        return self._con.execute(sql, *args)  # type: ignore[attr-defined]

    def __getattr__(self, name: str) -> object:
        return getattr(self._con, name)


def test_every_write_of_every_verb_runs_inside_a_transaction(
    tmp_path: Path, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pending rows, forget, gc, the rewrite after a forget (a new connection) and
    the indexes saved at close all write through the one transaction helper."""
    import aircher_mem.store

    seen: list[tuple[bool, str]] = []
    real_reopen = aircher_mem.store.reopen
    monkeypatch.setattr(aircher_mem.store, "reopen", lambda path: _Recording(real_reopen(path), seen))
    ltm = LongTermMemory(tmp_path / "m.duckdb", clock=clock)
    ltm._con = _Recording(ltm._con, seen)  # type: ignore[assignment]
    ltm.add_turn("s", "user", "I prefer tabs over spaces.")
    remembered = ltm.remember("We deploy with Helm charts.", tags=["ops"])
    ltm.update(remembered.memory_id, tags=["ops", "k8s"])
    ltm.feedback(remembered.memory_id, "cited")
    ltm.promote(remembered.memory_id, "L1")
    assert ltm.recall("Helm").hits[0].id == remembered.memory_id
    ltm.gc()
    assert ltm.forget(remembered.memory_id).ids == [remembered.memory_id]
    ltm.add_turn("s", "user", "The build runs on Fridays.", extract=False)
    ltm.close()
    writes = [(inside, verb) for inside, verb in seen if verb in ("INSERT", "UPDATE", "DELETE")]
    assert {verb for _inside, verb in writes} == {"INSERT", "UPDATE", "DELETE"}
    assert [verb for inside, verb in writes if not inside] == []


def test_one_row_is_inserted_as_its_values_and_more_as_columns() -> None:
    from aircher_mem.longterm import schema

    columns = [[7], ["s"], ["user"], [None], ["hi"], [1.5], ["{}"], [""]]
    sql, values = schema.one_row(schema.INSERT_TURNS, columns)
    assert "unnest" not in sql and sql.startswith("INSERT INTO turns (id, session_id")
    assert values == [7, "s", "user", None, "hi", 1.5, "{}", ""]
    two = [column * 2 for column in columns]
    assert schema.one_row(schema.INSERT_TURNS, two) == (schema.INSERT_TURNS, two)
    assert schema.one_row(schema.DELETE_MEMORIES, [[4]]) == ("DELETE FROM memories WHERE id = ?::BIGINT", [4])
    assert schema.one_row(schema.DELETE_MEMORIES, [[4, 5]]) == (schema.DELETE_MEMORIES, [[4, 5]])
    other = "DELETE FROM turns WHERE id IN (SELECT unnest(?::BIGINT[]))"
    assert schema.one_row(other, [[1]]) == (other, [[1]])


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.text(
            st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), min_size=1, max_size=40
        ).filter(str.strip),
        min_size=1,
        max_size=3,
    )
)
def test_turns_stored_one_at_a_time_read_back_as_a_batch_stores_them(tmp_path: Path, texts: list[str]) -> None:
    import duckdb

    stored: list[list[tuple[object, ...]]] = []
    for way in ("one", "batch"):
        path = tmp_path / f"{way}-{len(os.listdir(tmp_path))}.duckdb"
        lt = LongTermMemory(path, clock=Clock())
        try:
            if way == "one":
                for text in texts:
                    lt.add_turn("s", "user", text, metadata={"n": len(text)})
                    lt.flush()
            else:
                for text in texts:
                    lt.add_turn("s", "user", text, metadata={"n": len(text)})
                lt.flush()
        finally:
            lt.close()
        con = duckdb.connect(str(path))
        try:
            query = "SELECT id, session_id, role, speaker, text, said_at, metadata, tags FROM turns ORDER BY id"
            stored.append(con.execute(query).fetchall())
        finally:
            con.close()
    assert stored[0] == stored[1]


def test_storing_a_prompt_does_not_import_decimal(tmp_path: Path) -> None:
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from aircher_mem import Memory\n"
        f"with Memory.open({str(tmp_path)!r}) as m:\n"
        "    m.remember('Never push to main without a review', importance=1)\n"
        f"with Memory.open({str(tmp_path)!r}) as m:\n"  # what a hook does: assemble (counts a use), add_turn
        "    m.assemble(query='Can I push to main now?')\n"
        "    m.add_turn('s', 'user', 'Can I push to main now?')\n"
        "print('decimal' in sys.modules, 'uuid' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_a_turn_sent_again_with_its_idempotency_key_is_stored_once(tmp_path: Path) -> None:
    path = tmp_path / "m.duckdb"
    with LongTermMemory(path, clock=Clock()) as lt:
        first = lt.add_turn("s", "user", "We use Postgres for the database.", idempotency_key="req-7f3a")
        again = lt.add_turn("s", "user", "We use Postgres for the database.", idempotency_key="req-7f3a")
        other = lt.add_turn("s", "user", "We use pytest for tests.", idempotency_key="req-8b1c")
        assert [e.content for e in first.extracted] == ["We use Postgres for the database."]
        assert (again.turn_id, again.extracted, again.notes) == (
            first.turn_id,
            [],
            ["stored before with this idempotency key: not stored again"],
        )
        assert other.turn_id == first.turn_id + 1
    with LongTermMemory(path, clock=Clock()) as lt:  # the key was written with its turn
        assert lt.add_turn("s", "user", "We use Postgres for the database.", idempotency_key="req-7f3a").turn_id == 1
        assert [t.text for t in lt.turns("s")] == ["We use Postgres for the database.", "We use pytest for tests."]
        lt.forget(text="Postgres")
        after = lt.add_turn("s", "user", "We use Postgres for the database.", idempotency_key="req-7f3a")
        assert (after.turn_id, after.notes) == (
            1,
            ["stored before with this idempotency key and forgotten since: not stored again"],
        )
        assert [t.text for t in lt.turns("s")] == ["We use pytest for tests."]
    assert b"req-7f3a" not in path.read_bytes()  # only its digest is kept
    with pytest.raises(InvalidInputError, match="idempotency_key"):
        LongTermMemory(":memory:").add_turn("s", "user", "x", idempotency_key="  ")


def test_a_user_private_memory_is_its_users_only_also_in_a_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import aircher_mem.longterm.core as core

    path = tmp_path / "m.duckdb"
    monkeypatch.setattr(core, "_login", lambda: "ann")
    with LongTermMemory(path, clock=Clock()) as lt:
        lt.add_turn("s1", "user", "My pager code is 7781 and we deploy on Fridays.", scope="user-private")
        lt.remember("The zebra tool formats the Go code.", scope="user-private")
        lt.remember("CI runs on GitHub Actions.")
        assert [h.content for h in lt.recall("zebra Go code").hits][:1] == ["The zebra tool formats the Go code."]
        assert {m.scope for m in lt.memories().memories} == {"user-private", "project-shared"}
    monkeypatch.setattr(core, "_login", lambda: "bob")
    with LongTermMemory(path, clock=Clock()) as lt:
        assert lt.index_source == "" and lt.counts()["memories"] == 1  # ann's saved indexes are not read
        assert lt.index_source == "rebuilt"
        assert [m.content for m in lt.memories().memories] == ["CI runs on GitHub Actions."]
        assert "7781" not in repr(lt.recall("pager code Fridays").hits) and "zebra" not in repr(
            lt.recall("zebra Go").hits
        )
        assert lt.turns("s1") == []
        assert lt.add_turn("s2", "user", "We use pytest.").turn_id == 2  # ids go on past the hidden turn
    monkeypatch.setattr(core, "_login", lambda: "ann")
    with LongTermMemory(path, clock=Clock()) as lt:
        assert "7781" in repr(lt.recall("pager code Fridays").hits)
    with pytest.raises(InvalidInputError, match="scope"):
        LongTermMemory(":memory:").add_turn("s", "user", "x", scope="system")
