"""Recall over conversations: a reply is found by the question it answers, a name
said to someone is not what a turn is about, and session documents never change
how turns score (longterm/dialogue.py, LongTermMemory._turn_document)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from aircher_mem.config import LongtermPolicy
from aircher_mem.longterm import LongTermMemory
from aircher_mem.longterm.dialogue import name_words, party, questions, unaddressed
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

T0 = 1_700_000_000.0

# Only the turn's own fields count: no neighbouring context, no session evidence.
TEXT_ONLY = LongtermPolicy(weight_context=0.0, recall_session_weight=0.0)


# -- the rules ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Nice! How often do you run? I do.", "How often do you run?"),
        ("Are you there? Is it late?\nYes.", "Are you there? Is it late?"),
        ("No question here.", ""),
        ("What?? Really?!", "What??"),
        ("全角の質問ですか\uff1f", "全角の質問ですか\uff1f"),
        ("", ""),
        ("???", ""),
    ],
)
def test_questions_are_the_sentences_ending_in_a_question_mark(text: str, expected: str) -> None:
    assert questions(text) == expected


def test_questions_keep_the_last_whole_sentences_within_the_limit() -> None:
    text = "Is the first one long enough? Second? Third?"
    assert questions(text, limit=16) == "Second? Third?"
    assert questions(text, limit=5) == ""
    assert questions("a?" * 3000) == " ".join(["a?"] * 667)  # 2000 characters


def test_a_long_text_without_a_question_mark_is_read_in_linear_time() -> None:
    start = time.perf_counter()
    assert questions("a" * 1_000_000) == ""
    assert questions("?" * 1_000_000) == ""
    assert time.perf_counter() - start < 5.0  # quadratic backtracking would take hours


@pytest.mark.parametrize(
    ("speaker", "expected"),
    [
        ("Ada Lovelace", ("Ada", "Lovelace")),
        ("user", ()),
        ("J Smith", ("Smith",)),
        ("O'Brien", ("Brien",)),
        (None, ()),
        ("", ()),
    ],
)
def test_name_words_are_the_capitalised_words_of_a_name(speaker: str | None, expected: tuple[str, ...]) -> None:
    assert name_words(speaker) == expected


def test_unaddressed_takes_out_the_names_of_others_only() -> None:
    assert unaddressed("Thanks, Caroline! I love it.", ["Caroline"], "Melanie") == "Thanks,  ! I love it."
    assert unaddressed("Caroline's painting, Carolines", ["Caroline"], "Mel") == " 's painting, Carolines"
    assert unaddressed("caroline, lower case", ["Caroline"], "Mel") == "caroline, lower case"
    # one's own name stays, also when the other party shares it
    assert unaddressed("I am Ann, Ann Lee.", ["Ann Smith", None], "Ann Lee") == "I am Ann, Ann Lee."
    assert unaddressed("Hi Annabel and Ann", ["Ann", "Annabel"], None) == "Hi   and  "
    assert unaddressed("the assistant said so", ["assistant"], "user") == "the assistant said so"
    assert unaddressed("Hey (Dr.) X", ["Dr. X", "(?)"], None) == "Hey ( .) X"


def test_party_is_the_speaker_else_the_role() -> None:
    assert party("Ann", "user") == party("Ann", "assistant") == "speaker:Ann"
    assert party(None, "user") != party(None, "assistant")
    assert party("", "user") == "role:user"


@given(st.text(max_size=300), st.lists(st.text(max_size=12), max_size=3), st.text(max_size=12))
def test_unaddressed_only_ever_replaces_name_words_by_spaces(text: str, others: list[str], speaker: str) -> None:
    out = unaddressed(text, others, speaker)
    if not {w for o in others for w in name_words(o)} - set(name_words(speaker)):
        assert out == text
    assert set(out) <= set(text) | {" "}
    assert unaddressed(out, others, speaker) == out  # nothing left to take out


# -- recall -------------------------------------------------------------------------------------


def turn_hits(ltm: LongTermMemory, query: str) -> list[tuple[int, list[str]]]:
    return [(h.id, h.matched) for h in ltm.recall(query, kinds=["turn"]).hits]


def test_a_reply_is_found_by_the_question_it_answers() -> None:
    with LongTermMemory(":memory:", policy=TEXT_ONLY, clock=lambda: T0) as ltm:
        ltm.add_turn("s", "user", "Nice run! How often do you work out?", speaker="Ann", at=T0, extract=False)
        ltm.add_turn("s", "user", "Three times a week.", speaker="Bob", at=T0, extract=False)
        ltm.add_turn("s", "user", "Cool.", speaker="Ann", at=T0, extract=False)
        assert turn_hits(ltm, "how often does Bob work out") == [
            (2, ["bob", "work", "out"]),  # "how", "often", "does" are stop words
            (1, ["work", "out"]),
        ]
        assert turn_hits(ltm, "three times") == [(2, ["three", "time"])]
        assert turn_hits(ltm, "nice run") == [(1, ["nice", "run"])]  # only the question travels


def test_the_question_is_a_field_of_its_own() -> None:
    """A long question never dilutes the reply's own words; weight 0 turns it off."""
    long_question = "Which of the many ways we discussed at length last week should we use? " * 5
    with LongTermMemory(":memory:", policy=TEXT_ONLY, clock=lambda: T0) as ltm:
        ltm.add_turn("a", "user", long_question, speaker="Ann", at=T0, extract=False)
        ltm.add_turn("a", "user", "Use a pull request.", speaker="Bob", at=T0, extract=False)
        ltm.add_turn("b", "user", "We discussed ways.", speaker="Ann", at=T0, extract=False)
        ltm.add_turn("b", "user", "Use a pull request.", speaker="Bob", at=T0, extract=False)
        scores = {h.id: h.channels[0].raw for h in ltm.recall("pull request", kinds=["turn"]).hits}
        assert sorted(scores) == [2, 4] and scores[2] == scores[4]
    off = LongtermPolicy(weight_context=0.0, recall_session_weight=0.0, weight_question=0.0)
    with LongTermMemory(":memory:", policy=off, clock=lambda: T0) as ltm:
        ltm.add_turn("s", "user", "How often do you work out?", speaker="Ann", at=T0, extract=False)
        ltm.add_turn("s", "user", "Three times a week.", speaker="Bob", at=T0, extract=False)
        assert turn_hits(ltm, "work out") == [(1, ["work", "out"])]


def test_no_question_or_no_other_party_means_no_reply() -> None:
    with LongTermMemory(":memory:", policy=TEXT_ONLY, clock=lambda: T0) as ltm:
        ltm.add_turn("a", "user", "I work out daily.", speaker="Ann", at=T0, extract=False)
        ltm.add_turn("a", "user", "Three times a week.", speaker="Bob", at=T0, extract=False)
        ltm.add_turn("b", "user", "How often do you work out?", speaker="Ann", at=T0, extract=False)
        ltm.add_turn("b", "user", "Asking for a friend.", speaker="Ann", at=T0, extract=False)
        ltm.add_turn("c", "user", "Do you work out?", at=T0, extract=False)
        ltm.add_turn("c", "assistant", "I cannot.", at=T0, extract=False)
        # 2 follows no question, 4 is no other party: neither is a hit; 1, 3 and 5
        # match on their own, 6 (the assistant answering the user) by the question
        assert [i for i, _ in turn_hits(ltm, "work out")] == [3, 5, 6, 1]


def test_a_name_said_to_someone_does_not_match_it() -> None:
    with LongTermMemory(":memory:", policy=TEXT_ONLY, clock=lambda: T0) as ltm:
        ltm.add_turn("s", "user", "Hi Bob, we adopted a cat.", speaker="Ann", at=T0, extract=False)
        ltm.add_turn("s", "user", "Thanks, Ann! I saw Carol today.", speaker="Bob", at=T0, extract=False)
        # Bob is matched by who said turn 2, not by turn 1 greeting him
        assert turn_hits(ltm, "Bob") == [(2, ["bob"])]
        assert turn_hits(ltm, "Ann") == [(1, ["ann"])]
        # Carol is no party of the turns next to turn 2: a topic, kept
        assert turn_hits(ltm, "Carol") == [(2, ["carol"])]


def test_the_turn_before_is_reindexed_when_its_addressee_speaks() -> None:
    with LongTermMemory(":memory:", policy=TEXT_ONLY, clock=lambda: T0) as ltm:
        ltm.add_turn("s", "user", "Hey Bob, ready?", speaker="Ann", at=T0, extract=False)
        assert turn_hits(ltm, "Bob ready") == [(1, ["bob", "readi"])]
        ltm.add_turn("s", "user", "Yes.", speaker="Bob", at=T0, extract=False)
        assert turn_hits(ltm, "Bob ready") == [(2, ["bob", "readi"]), (1, ["readi"])]


def test_reopening_builds_the_same_documents(tmp_path: Path) -> None:
    path = tmp_path / "m.duckdb"
    said = [
        ("Ann", "Hi Bob! Where did you hike last weekend?"),
        ("Bob", "Mount Tam, Ann. Have you been?"),
        ("Ann", "Not yet, Bob."),
    ]
    with LongTermMemory(path, clock=lambda: T0) as ltm:
        for speaker, text in said:
            ltm.add_turn("s", "user", text, speaker=speaker, at=T0, extract=False)
        live = [(h.id, h.score, h.matched) for h in ltm.recall("Bob hike Ann", kinds=["turn"]).hits]
    with LongTermMemory(path, clock=lambda: T0) as ltm:
        again = [(h.id, h.score, h.matched) for h in ltm.recall("Bob hike Ann", kinds=["turn"]).hits]
    assert again == live


def lexical_scores(ltm: LongTermMemory, query: str) -> dict[int, float]:
    return {h.id: next(c.raw for c in h.channels if c.channel == "lexical") for h in ltm.recall(query).hits}


def test_session_documents_never_change_how_turns_score() -> None:
    said = ["I prefer tabs.", "We use Postgres.", "Our CI runs on GitHub Actions."]
    scores = []
    for weight in (0.0, 0.5):  # 0: no session document is ever built
        with LongTermMemory(":memory:", policy=LongtermPolicy(recall_session_weight=weight), clock=lambda: T0) as ltm:
            for n, text in enumerate(said):
                ltm.add_turn(f"s{n % 2}", "user", text, at=T0, extract=False)
            first = lexical_scores(ltm, "postgres ci")
            assert lexical_scores(ltm, "postgres ci") == first
            scores.append(first)
    assert scores[0] == scores[1]
    assert sorted(scores[0]) == [1, 2, 3]  # 1 by its context: turn 3 is next to it in s0


_SPEAKERS = st.sampled_from(["Ann", "Bob", "Cy Lee", None])
_WORDS = st.sampled_from(["Ann", "Bob", "Lee", "cat", "hike", "tabs", "why", "Cy", "ok", "?", ".", "!", ","])


@pytest.mark.slow
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["s1", "s2"]),
            st.sampled_from(["user", "assistant"]),
            _SPEAKERS,
            st.lists(_WORDS, min_size=1, max_size=8),
        ),
        min_size=1,
        max_size=10,
    )
)
def test_live_and_reopened_stores_recall_alike(
    tmp_path: Path, turns: list[tuple[str, str, str | None, list[str]]]
) -> None:
    """Documents depend on a turn's neighbours only, re-indexed as turns arrive: a
    store reopened from its file ranks and scores exactly as the live one did."""
    path = tmp_path / f"m{abs(hash(repr(turns)))}.duckdb"
    queries = ["Ann cat", "Bob hike why", "Cy Lee tabs", "ok"]
    with LongTermMemory(path, clock=lambda: T0) as ltm:
        for session, role, speaker, words in turns:
            ltm.add_turn(session, role, " ".join(words), speaker=speaker, at=T0, extract=False)
        live = [[(h.id, h.score, h.matched) for h in ltm.recall(q, kinds=["turn"]).hits] for q in queries]
    with LongTermMemory(path, clock=lambda: T0) as ltm:
        again = [[(h.id, h.score, h.matched) for h in ltm.recall(q, kinds=["turn"]).hits] for q in queries]
    assert again == live
