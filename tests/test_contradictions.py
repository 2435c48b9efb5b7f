"""Contradictions between memories (seed 001): found when a memory is stored and in
consolidation, listed, resolved four ways (the loser superseded bi-temporally), an
explicit correction winning at once; kept across a reopen, gone with what they
quote, and offered in the assembled context's first tier."""

from __future__ import annotations

import itertools
import json
import time
from pathlib import Path

import pytest
from aircher_mem import InvalidInputError, Memory, Policy
from aircher_mem.config import DecisionsPolicy
from aircher_mem.errors import UnknownMemoryError
from conftest import Clock, Store
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

T0 = 1_700_000_000.0
DAY = 86_400.0


def test_the_issue_example_a_correction_wins_and_says_so(make_store: Store) -> None:
    lt = make_store()
    first = lt.remember("the database is Postgres", at=T0)
    second = lt.remember("Actually, the database is MySQL, not Postgres", at=T0 + DAY)
    assert (second.action, second.superseded) == ("superseded", first.memory_id)
    [c] = lt.contradictions("all").contradictions
    assert (c.memory_a, c.memory_b, c.status, c.resolution) == (first.memory_id, second.memory_id, "resolved", "b_wins")
    assert lt.contradictions("open").contradictions == []
    hits = lt.recall("which database do we use?").hits
    assert hits[0].id == second.memory_id and first.memory_id not in [h.id for h in hits]
    # bi-temporal: as of before the correction, the old value is what held
    before = lt.recall("which database do we use?", at=T0 + DAY / 2).hits
    assert before[0].id == first.memory_id
    old = lt.get(first.memory_id)
    assert (old.status, old.superseded_by, old.valid_until) == ("archived", second.memory_id, T0 + DAY)


def test_an_explicit_correction_without_a_slot_resolves_b_wins_with_a_note(make_store: Store) -> None:
    lt = make_store()
    first = lt.remember("Deploy the API on Fridays", at=T0)
    second = lt.remember("We no longer deploy the API on Fridays", at=T0 + DAY)
    assert (second.action, second.superseded) == ("superseded", first.memory_id)
    [c] = lt.contradictions("resolved").contradictions
    assert c.resolution == "b_wins" and c.origin == "write" and "explicit correction" in (c.note or "")


def test_opposites_stay_open_and_are_offered_in_the_first_tier(tmp_path: Path) -> None:
    with Memory.open(tmp_path) as mem:
        a = mem.remember("Always use tabs for indentation")
        b = mem.remember("Never use tabs for indentation")
        assert b.action == "created"  # not merged, though the words nearly match
        [c] = mem.contradictions().contradictions
        assert (c.memory_a, c.memory_b, c.status) == (a.memory_id, b.memory_id, "open")
        assert mem.explain(b.memory_id).contradictions == [c]
        context = mem.assemble(query="indentation", budget=2000)
        [critical] = [t for t in context.tiers if t.name == "critical"]
        assert any(item.text.startswith(f"Open contradiction {c.id} (") for item in critical.items)


def test_the_first_tier_offers_at_most_the_policys_number_of_open_contradictions(tmp_path: Path) -> None:
    with Memory.open(tmp_path) as mem:
        for rule in (
            "squash commits on merge",
            "pin dependency versions in requirements",
            "write docstrings for public functions",
            "deploy to staging before production",
            "rotate the API keys every month",
            "cache the search results in Redis",
            "log the request bodies",
        ):
            mem.remember(f"Always {rule}")
            mem.remember(f"Never {rule}")
        assert len(mem.contradictions().contradictions) == 7
        context = mem.assemble(query="before a commit", budget=8000)
        [critical] = [t for t in context.tiers if t.name == "critical"]
        offered = [item for item in critical.items if item.text.startswith("Open contradiction")]
        assert len(offered) == Policy().assembly.contradictions == 5


def test_the_first_open_ones_are_listeds_order_with_the_recalled_ahead(make_store: Store) -> None:
    """What the first tier takes: the open contradictions in :meth:`contradictions`'
    order (newest first), those of a recalled memory ahead of the rest (stable),
    cut at the limit."""
    lt = make_store()
    for rule in ("squash commits", "pin versions", "write docstrings", "deploy to staging", "rotate keys"):
        lt.remember(f"Always {rule} on merge")
        lt.remember(f"Never {rule} on merge")
    listed = lt.contradictions("open").contradictions
    assert len(listed) == 5
    lt.resolve_contradiction(listed[2].id, "both_valid")
    open_ones = lt.contradictions("open").contradictions
    memories = sorted({m for c in listed for m in (c.memory_a, c.memory_b)})

    @settings(max_examples=60, deadline=None)
    @given(st.sets(st.sampled_from(memories)), st.integers(0, 6))
    def check(recalled: set[int], limit: int) -> None:
        expected = sorted(open_ones, key=lambda c: not (c.memory_a in recalled or c.memory_b in recalled))
        assert lt.first_open_contradictions(recalled, limit) == expected[:limit]

    check()


@pytest.mark.parametrize(
    ("resolution", "active", "superseded_by"),
    [("a_wins", {1}, {2: 1}), ("b_wins", {2}, {1: 2}), ("both_valid", {1, 2}, {})],
)
def test_resolutions_supersede_the_loser(
    resolution: str, active: set[int], superseded_by: dict[int, int], make_store: Store
) -> None:
    lt = make_store()
    lt.remember("Always use tabs for indentation", at=T0)
    lt.remember("Never use tabs for indentation", at=T0 + DAY)
    [c] = lt.contradictions().contradictions
    done = lt.resolve_contradiction(c.id, resolution, note="checked the style guide", now=T0 + 2 * DAY)
    assert (done.status, done.resolution, done.note, done.resolved_at) == (
        "resolved",
        resolution,
        "checked the style guide",
        T0 + 2 * DAY,
    )
    assert {m.id for m in lt.memories().memories if m.status == "active"} == active
    assert {i: lt.get(i).superseded_by for i in (1, 2) if lt.get(i).superseded_by} == superseded_by
    with pytest.raises(InvalidInputError, match="already resolved"):
        lt.resolve_contradiction(c.id, "a_wins")


def test_merged_stores_the_new_memory_and_supersedes_both(make_store: Store) -> None:
    lt = make_store()
    lt.remember("Always use tabs for indentation", at=T0)
    lt.remember("Never use tabs for indentation", at=T0 + DAY)
    [c] = lt.contradictions().contradictions
    with pytest.raises(InvalidInputError, match="needs content"):
        lt.resolve_contradiction(c.id, "merged")
    with pytest.raises(InvalidInputError, match="only for resolution merged"):
        lt.resolve_contradiction(c.id, "b_wins", content="x")
    done = lt.resolve_contradiction(c.id, "merged", content="Use tabs in Go files, spaces elsewhere")
    [merged] = [m for m in lt.memories().memories if m.status == "active"]
    assert merged.content == "Use tabs in Go files, spaces elsewhere"
    assert lt.get(1).superseded_by == merged.id and lt.get(2).superseded_by == merged.id
    assert done.note == f"merged into memory {merged.id}"


def test_unknown_and_bad_arguments_are_typed_errors(make_store: Store) -> None:
    lt = make_store()
    with pytest.raises(UnknownMemoryError, match="no contradiction 7"):
        lt.resolve_contradiction(7, "a_wins")
    for bad in (0, -1, True, "1"):
        with pytest.raises(InvalidInputError):
            lt.resolve_contradiction(bad, "a_wins")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="resolution"):
        lt.resolve_contradiction(1, "c_wins")
    with pytest.raises(InvalidInputError, match="status"):
        lt.contradictions("closed")


def test_kept_across_a_reopen_and_gone_with_a_forgotten_memory(tmp_path: Path, make_store: Store) -> None:
    path = tmp_path / "m.duckdb"
    with make_store(path) as lt:
        lt.remember("Always run the zebra suite before a release", at=T0)
        lt.remember("Never run the zebra suite before a release", at=T0 + DAY)
    with make_store(path) as lt:
        [c] = lt.contradictions().contradictions
        assert "zebra" in c.content_a
        lt.forget(c.memory_a)
        assert lt.contradictions("all").contradictions == []
        assert all("zebra" not in a.detail for a in lt.explain(c.memory_b).actions if a.action == "contradicts")
    with make_store(path) as lt:
        assert lt.contradictions("all").contradictions == []
        lt.forget(2)
    for f in tmp_path.iterdir():
        assert b"zebra" not in f.read_bytes(), f.name


def test_a_pair_is_recorded_once_and_found_again_after_a_forget(make_store: Store) -> None:
    always, never = "Always run the zebra suite before a release", "Never run the zebra suite before a release"
    lt = make_store()
    lt.remember(always, at=T0)
    lt.remember(never, at=T0 + DAY)
    [first] = lt.contradictions().contradictions
    lt.consolidate(now=T0 + 2 * DAY)  # scans the store again: the pair is known
    assert [c.id for c in lt.contradictions("all").contradictions] == [first.id]
    lt.forget(first.memory_a)
    again = lt.remember(always, at=T0 + 3 * DAY)
    [second] = lt.contradictions().contradictions
    assert (second.memory_a, second.memory_b) == (first.memory_b, again.memory_id)
    lt.close()


def test_a_judge_is_asked_about_the_pairs_the_rules_pass_over_once(make_store: Store) -> None:
    asked: list[str] = []

    def judge(prompt: str) -> object:
        asked.append(prompt)
        return '{"contradicts": true, "why": "a cat is not a dog"}'

    lt = make_store(judge=judge, decisions=DecisionsPolicy(judge_min_overlap=0.2))
    lt.remember("The office pet is a cat named Mochi", at=T0)
    lt.remember("The office pet is a dog named Mochi", at=T0 + DAY)
    [c] = lt.contradictions().contradictions
    assert c.rule == "judge" and len(asked) == 1
    assert asked[0].startswith("Are these contradictory?") and "A: The office pet is a cat" in asked[0]


def test_a_write_asks_the_judge_within_its_budget_and_consolidation_the_rest(make_store: Store) -> None:
    asked: list[str] = []

    def judge(prompt: str) -> object:
        asked.append(prompt)
        return "yes"

    lt = make_store(judge=judge, decisions=DecisionsPolicy(judge_min_overlap=0.2, judge_scan_seconds=0.0))
    lt.remember("The office pet is a cat named Mochi", at=T0)
    lt.remember("The office pet is a dog named Mochi", at=T0 + DAY)
    assert asked == [] and lt.contradictions("all").contradictions == []
    lt.consolidate(now=T0 + 2 * DAY)
    [c] = lt.contradictions().contradictions
    assert (c.rule, c.origin, len(asked)) == ("judge", "consolidation", 1)
    lt.consolidate(now=T0 + 3 * DAY)
    assert len(asked) == 1  # the answer is kept by pair


def test_a_write_waits_for_the_judge_only_within_its_budget(make_store: Store) -> None:
    class Slow:  # a judge given the two texts, slower than the write's budget
        asked = 0

        def pair(self, a: str, b: str) -> bool:
            Slow.asked += 1
            time.sleep(0.5)
            return True

    lt = make_store(judge=Slow(), decisions=DecisionsPolicy(judge_min_overlap=0.2, judge_scan_seconds=0.05))
    lt.remember("The office pet is a cat named Mochi", at=T0)
    lt.remember("The office pet is a dog named Mochi", at=T0 + DAY)
    assert Slow.asked == 1 and lt.contradictions("all").contradictions == []  # late: not taken
    lt.consolidate(now=T0 + 2 * DAY)  # waits up to judge_timeout_seconds
    [c] = lt.contradictions().contradictions
    assert (c.rule, c.origin, Slow.asked) == ("judge", "consolidation", 2)


def test_memories_embedded_together_wait_for_the_judge_as_one_write() -> None:
    from aircher_mem.longterm import LongTermMemory

    texts = ["Mochi sleeps all afternoon", "Rust compiles slowly here", "Berlin trains run late", "Tea beats coffee"]

    class Embedder:  # no word in common, alike in meaning (cosine 0.55: no merge)
        def embed(self, batch: list[str]) -> object:
            import numpy as np

            rows = [[1.0] + [0.9 * (texts.index(t) == i if t in texts else 0) for i in range(4)] for t in batch]
            return np.array(rows, dtype=np.float32)

    class Slow:
        asked = 0

        def pair(self, a: str, b: str) -> bool:
            Slow.asked += 1
            time.sleep(0.3)
            return False

    decisions = DecisionsPolicy(judge_scan_seconds=0.5)
    with LongTermMemory(":memory:", clock=Clock(T0 + 10), embedder=Embedder, judge=Slow(), decisions=decisions) as lt:
        for i, text in enumerate(texts):
            lt.remember(text, at=T0 + i)
        assert Slow.asked == 0  # no lexical neighbour
        lt.recall("Mochi")  # embeds all four; each is checked by meaning
        # one budget for the four (a budget each would have asked at least four times)
        assert 1 <= Slow.asked <= 2


def test_consolidation_asks_the_judge_about_the_nearest_by_meaning_too() -> None:
    from aircher_mem.longterm import LongTermMemory

    texts = ["Mochi sleeps all afternoon", "Rust compiles slowly here"]

    class Embedder:  # no word in common, alike in meaning (cosine 0.55: no merge)
        def embed(self, batch: list[str]) -> object:
            import numpy as np

            rows = [[1.0] + [0.9 * (texts.index(t) == i if t in texts else 0) for i in range(2)] for t in batch]
            return np.array(rows, dtype=np.float32)

    class Judge:
        def pair(self, a: str, b: str) -> bool:
            return True

    decisions = DecisionsPolicy(judge_scan_seconds=0.0)  # nothing judged at the writes
    with LongTermMemory(":memory:", clock=Clock(T0 + 10), embedder=Embedder, judge=Judge(), decisions=decisions) as lt:
        for i, text in enumerate(texts):
            lt.remember(text, at=T0 + i)
        lt.recall("Mochi")  # embedded
        assert lt.consolidate(now=T0 + DAY, dry_run=True).contradictions_found == 1
        assert lt.contradictions("all").contradictions == []
        lt.consolidate(now=T0 + DAY)
        [c] = lt.contradictions().contradictions
        assert (c.rule, c.origin, c.memory_a, c.memory_b) == ("judge", "consolidation", 1, 2)


def test_an_nli_judge_is_asked_only_about_pairs_close_in_meaning() -> None:
    import numpy as np
    from aircher_mem.longterm import LongTermMemory

    vectors = {
        "We use npm as the package manager": [1.0, 0.0, 0.0, 0.0],
        "My manager is Priya": [0.0, 1.0, 0.0, 0.0],  # a word in common with the one above, not a subject
        "I follow a strictly vegan diet": [0.0, 0.0, 1.0, 0.0],
        "Had a cheeseburger for lunch today": [0.0, 0.0, 0.8, 0.6],  # cosine 0.8 with the one above
    }

    class Embedder:
        def embed(self, batch: list[str]) -> object:
            return np.array([vectors.get(t, [0.5, 0.5, 0.5, 0.5]) for t in batch], dtype=np.float32)

    asked: list[frozenset[str]] = []

    class Judge:  # an NLI model that says contradiction to anything
        def pair(self, a: str, b: str) -> bool:
            asked.append(frozenset((a, b)))
            return True

    def run(least: float) -> tuple[set[frozenset[str]], set[frozenset[int]]]:
        asked.clear()
        decisions = DecisionsPolicy(nli_min_similarity=least)
        with LongTermMemory(
            ":memory:", clock=Clock(T0 + 10), embedder=Embedder, judge=Judge(), decisions=decisions
        ) as lt:
            for i, text in enumerate(vectors):
                lt.remember(text, at=T0 + i)
            written = set(asked)
            lt.recall("lunch")  # embeds the four: each checked by meaning
            lt.consolidate(now=T0 + DAY)
            found = {frozenset((c.memory_a, c.memory_b)) for c in lt.contradictions("all").contradictions}
        return written, found

    npm, priya = frozenset(list(vectors)[:2]), frozenset((1, 2))
    written, found = run(-1.0)  # every pair
    assert npm in written and priya in found and frozenset((3, 4)) in found
    written, found = run(0.3)
    # not asked at the writes (not embedded yet); then about the one pair close in meaning
    assert written == set() and set(asked) == {frozenset(list(vectors)[2:])}
    assert found == {frozenset((3, 4))}


@pytest.mark.parametrize("answer", [RuntimeError("down"), "maybe", 42, None])
def test_a_failing_or_unclear_judge_finds_nothing(answer: object, make_store: Store) -> None:
    def judge(prompt: str) -> object:
        if isinstance(answer, Exception):
            raise answer
        return answer

    lt = make_store(judge=judge, decisions=DecisionsPolicy(judge_min_overlap=0.2))
    lt.remember("The office pet is a cat named Mochi", at=T0)
    lt.remember("The office pet is a dog named Mochi", at=T0 + DAY)
    assert lt.contradictions("all").contradictions == []


def test_consolidation_reports_the_contradictions_since_its_last_pass(make_store: Store) -> None:
    lt = make_store()
    lt.remember("Always use tabs for indentation", at=T0)
    lt.remember("Never use tabs for indentation", at=T0 + DAY)
    report = lt.consolidate(now=T0 + 2 * DAY, dry_run=True)
    assert report.contradictions_found == 1
    [action] = [a for a in report.actions if a.action == "contradiction"]
    assert action.memory_id == 2 and action.reason.startswith("with memory 1: ")
    lt.consolidate(now=T0 + 2 * DAY)
    assert lt.consolidate(now=T0 + 3 * DAY, dry_run=True).contradictions_found == 0


def test_consolidation_checks_the_memories_an_older_version_stored(tmp_path: Path, make_store: Store) -> None:
    path = tmp_path / "m.duckdb"
    with make_store(path) as lt:
        lt.remember("Always use tabs for indentation", at=T0)
        lt.remember("Never use tabs for indentation", at=T0 + DAY)
        lt.remember("The API listens on port 8080", at=T0 + DAY)
    with make_store(path) as lt:  # as an older version left it: no contradiction known, none checked
        lt._con.execute("DELETE FROM contradictions")
        lt._con.execute("INSERT OR REPLACE INTO longterm_state VALUES ('unscanned_through', 3)")
    with make_store(path) as lt:
        assert lt.contradictions("all").contradictions == []
        assert lt.consolidate(now=T0 + 2 * DAY, dry_run=True).contradictions_found == 1
        report = lt.consolidate(now=T0 + 2 * DAY)
        [c] = lt.contradictions().contradictions
        assert (c.memory_a, c.memory_b, c.origin, report.contradictions_found) == (1, 2, "consolidation", 1)
        assert dict(lt._state())["scanned_through"] == 3
        assert lt.consolidate(now=T0 + 3 * DAY).contradictions_found == 0


def test_cli_and_http_shapes(tmp_path: Path) -> None:
    from aircher_mem.interfaces import http
    from starlette.testclient import TestClient

    token = "t" * 40
    with Memory.open(tmp_path) as mem:
        mem.remember("Always use tabs for indentation")
        mem.remember("Never use tabs for indentation")
        app = http.build_app(mem, token=token)
        with TestClient(app, base_url="http://127.0.0.1:8787", headers={"Authorization": f"Bearer {token}"}) as c:
            listed = c.get("/contradictions?status=open").json()
            [one] = listed["contradictions"]
            bad = c.post(f"/contradictions/{one['id']}/resolve", json={"resolution": "x_wins"})
            assert bad.status_code == 400
            assert c.post("/contradictions/abc/resolve", json={"resolution": "a_wins"}).status_code == 400
            done = c.post(f"/contradictions/{one['id']}/resolve", json={"resolution": "b_wins", "note": "style guide"})
            assert done.status_code == 200, done.text
            assert {k: done.json()[k] for k in ("status", "resolution", "note")} == {
                "status": "resolved",
                "resolution": "b_wins",
                "note": "style guide",
            }
    assert json.loads(json.dumps(listed))["contradictions"][0]["rule"]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.sampled_from(
            [
                "Always use tabs for indentation",
                "Never use tabs for indentation",
                "The timeout is 30 seconds",
                "The timeout is 60 seconds",
                "We use Python 3.11",
                "We use Python 3.12",
                "Actually we use Python 3.12, not 3.11",
                "Prefer spaces for indentation",
            ]
        ),
        min_size=1,
        max_size=8,
    ),
    st.data(),
)
def test_resolving_never_leaves_a_loser_active_nor_a_winner_superseded_by_it(make_store: Store, texts, data) -> None:  # type: ignore[no-untyped-def]
    lt = make_store(policy=None)
    for i, text in enumerate(texts):
        lt.remember(text, at=T0 + i)
    for c in lt.contradictions().contradictions:
        if lt.get(c.memory_a).status != "active" or lt.get(c.memory_b).status != "active":
            continue
        resolution = data.draw(st.sampled_from(["a_wins", "b_wins", "both_valid"]))
        lt.resolve_contradiction(c.id, resolution)
        a, b = lt.get(c.memory_a), lt.get(c.memory_b)
        if resolution == "a_wins":
            assert b.superseded_by == a.id and b.status == "archived" and a.status == "active"
        elif resolution == "b_wins":
            assert a.superseded_by == b.id and a.status == "archived" and b.status == "active"
    for c in lt.contradictions("all").contradictions:
        assert c.memory_a < c.memory_b or lt.get(c.memory_a).valid_from <= lt.get(c.memory_b).valid_from


def test_policy_section_round_trips_and_auto_resolution_can_be_off(tmp_path: Path, make_store: Store) -> None:
    policy = Policy(decisions=DecisionsPolicy(scan_neighbours=5, auto_resolve_corrections=False))
    (tmp_path / "config.toml").write_text(policy.to_toml())
    assert Policy.from_toml(tmp_path / "config.toml").decisions == policy.decisions
    lt = make_store(decisions=policy.decisions)
    lt.remember("Deploy the API on Fridays", at=T0)
    assert lt.remember("We no longer deploy the API on Fridays", at=T0 + DAY).action == "created"
    [c] = lt.contradictions().contradictions
    assert c.status == "open"


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(["Postgres", "MySQL", "SQLite", "MongoDB"]), min_size=2, max_size=5), st.data())
def test_a_corrected_value_never_ranks_above_its_correction(make_store: Store, values: list[str], data) -> None:  # type: ignore[no-untyped-def]
    lt = make_store()
    for i, (old, new) in enumerate(itertools.pairwise(values)):
        if i == 0:
            lt.add_turn("s", "user", f"The database is {old}.", at=T0)
        form = data.draw(
            st.sampled_from(["Actually, the database is {new}, not {old}.", "We switched from {old} to {new}."])
        )
        lt.add_turn("s", "user", form.format(new=new, old=old), at=T0 + (i + 1) * DAY)
    hits = lt.recall("which database do we use?", k=10).hits
    place = {(h.kind == "turn", h.id): n for n, h in enumerate(hits)}
    for n, hit in enumerate(hits):
        successor = None
        if hit.kind != "turn":
            successor = lt.get(hit.id).superseded_by
        else:
            successor = next(
                (int(note.split("#")[1]) for note in hit.notes if note.startswith("superseded by #")), None
            )
        if successor is not None and (False, successor) in place:
            assert place[(False, successor)] < n, (hit, hits)
    memories = [h for h in hits if h.kind != "turn"]
    assert memories and lt.get(memories[0].id).status == "active"
    assert values[-1].lower() in memories[0].content.lower()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(st.text(min_size=1, max_size=200), min_size=1, max_size=4),
    st.one_of(st.integers(-2, 5), st.booleans(), st.text(max_size=3)),
    st.one_of(st.sampled_from(["a_wins", "b_wins", "both_valid", "merged", "x"]), st.text(max_size=5)),
    st.one_of(st.none(), st.text(max_size=50)),
)
def test_hostile_texts_and_resolutions_are_typed_errors(make_store: Store, texts, cid, resolution, content) -> None:  # type: ignore[no-untyped-def]
    from aircher_mem.errors import AircherError

    lt = make_store()
    for text in texts:
        try:
            lt.remember(text)
        except AircherError:
            pass
    try:
        lt.resolve_contradiction(cid, resolution, content=content, note="n")
    except AircherError:
        pass
    for status in ("open", "resolved", "all"):
        lt.contradictions(status)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(st.tuples(st.integers(0, 5), st.integers(1, 9)), min_size=1, max_size=12))
def test_the_known_pairs_a_scan_skips_are_every_recorded_pair(make_store: Store, steps: list[tuple[int, int]]) -> None:
    from aircher_mem.longterm import contradictions

    with make_store() as lt:
        first = None
        for service, replicas in steps:
            lt.remember(f"The service svc{service} runs {replicas} replicas in production.", kind="fact")
            kept = contradictions._pair(lt)
            assert kept == {(c.memory_a, c.memory_b) for c in lt._contradictions.values()}
            first = kept if first is None else first
            assert kept is first  # kept up to date as pairs are added, never made again
