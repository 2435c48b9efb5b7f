"""Extractive compression levels of long-term memory and the optional LLM summarizer."""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from collections.abc import Callable

import pytest
from aircher_mem.longterm import compress as c
from hypothesis import given, settings
from hypothesis import strategies as st

POSTGRES = (
    "The team decided to use PostgreSQL as the primary database because of its strong "
    "support for JSON operations and the team's existing expertise with it."
)

# a LoCoMo-like dialogue, one turn per text, with small talk between the information
DIALOGUE = [
    "Hi Caroline! How have you been?",
    "Wow, that's great! Thanks!",
    "I went to the LGBTQ support group on 7 May 2023 and it was powerful.",
    "That's awesome! I love it!",
    "So, what did you decide about the adoption agency?",
    "Well, we decided to go with Sunrise Adoptions in Boston. The first interview is on June 3.",
    "Should we store the notes in notes_db.py or in a CamelCase class?",
    "Sounds good to me!",
]

CODE = (
    "We switched to `ruff` from flake8 in v0.4.1 on 2024-05-01, e.g. for speed. Let's keep "
    "`pyproject.toml` as the one config and use snake_case names like load_config in FooBar."
)

FUNCTIONS: list[Callable[[str], object]] = [
    lambda t: c.sentences(t),
    lambda t: c.content_words(t),
    lambda t: c.summarize([t, t[::-1]]),
    lambda t: c.key_point(t),
    lambda t: c.compress(t),
    lambda t: c.index_form(t),
    lambda t: c.headline([t]),
    lambda t: c.tags([t]),
    lambda t: c.entities([t]),
    lambda t: c.decisions([t]),
    lambda t: c.questions([t, t]),
    lambda t: c.levels(t),
]


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, c.Levels):
        return [value.summary, value.compressed, value.index]
    assert isinstance(value, list)
    return value


# ---------------------------------------------------------------------------
# the design notes' example at each level


def test_the_postgres_fact_at_each_level() -> None:
    assert c.key_point(POSTGRES) == POSTGRES
    assert c.compress(POSTGRES) == (
        "team decided use PostgreSQL primary database strong support JSON operations existing expertise"
    )
    assert c.index_form(POSTGRES) == "postgresql_json_team"
    assert c.levels(POSTGRES) == c.Levels(
        summary=POSTGRES,
        compressed="team decided use PostgreSQL primary database strong support JSON operations existing expertise",
        index="postgresql_json_team",
    )
    assert c.entities([POSTGRES]) == ["PostgreSQL", "JSON"]
    assert c.decisions([POSTGRES]) == [POSTGRES]
    assert c.tags([POSTGRES]) == ["postgresql", "json", "team", "decided", "use"]


def test_compress_over_max_words_drops_common_words_first() -> None:
    assert c.compress(POSTGRES, max_words=3) == "team PostgreSQL JSON"
    assert c.compress(POSTGRES, max_words=2) == "PostgreSQL JSON"
    assert c.compress(POSTGRES, max_words=1) == "PostgreSQL"
    assert c.compress(POSTGRES, max_words=0) == ""
    assert c.compress(CODE, max_words=6) == "ruff flake8 v0.4.1 2024-05-01 pyproject.toml snake_case"
    assert c.index_form(POSTGRES, words=1) == "postgresql"
    assert c.index_form(POSTGRES, words=0) == ""


# ---------------------------------------------------------------------------
# sentences and words


def test_sentences_keep_abbreviations_numbers_and_initials() -> None:
    text = "Use a DB, e.g. Postgres. It is v3.5 now! Really? Yes\nnew line 漢字。テスト。 J. Smith said so. Dr. Who etc. Done"
    assert c.sentences(text) == [
        "Use a DB, e.g. Postgres.",
        "It is v3.5 now!",
        "Really?",
        "Yes",
        "new line 漢字。",
        "テスト。",
        "J. Smith said so.",
        "Dr. Who etc.",
        "Done",
    ]
    assert c.sentences("  \n\t ... !! \n") == []


def test_content_words_are_lowercased_in_order_without_stop_words() -> None:
    assert c.content_words("The team's DB is v3.5, we don't use it") == ["team", "db", "v3.5", "use"]
    assert c.content_words("Привет мир") == ["привет", "мир"]
    assert c.content_words("") == []


def test_entities_names_numbers_dates_and_code() -> None:
    assert c.entities([CODE]) == [
        "ruff",
        "flake8",
        "v0.4.1",
        "2024-05-01",
        "pyproject.toml",
        "snake_case",
        "load_config",
        "FooBar",
    ]
    assert c.entities(DIALOGUE) == [
        "Caroline",
        "LGBTQ",
        "7",
        "2023",
        "Sunrise",
        "Adoptions",
        "Boston",
        "June",
        "3",
        "notes_db.py",
        "CamelCase",
    ]
    # sentence-initial capitals are names only when capitalized elsewhere too
    assert c.entities(["Maybe later. Alice called.", "Then Alice left."]) == ["Alice"]
    assert c.entities(["Maybe later.", "Alice called."]) == []


# ---------------------------------------------------------------------------
# warm and cold contents of a dialogue


def test_summary_picks_the_informative_sentences_over_small_talk() -> None:
    assert c.summarize(DIALOGUE) == (
        "I went to the LGBTQ support group on 7 May 2023 and it was powerful. "
        "We decided to go with Sunrise Adoptions in Boston. The first interview is on June 3."
    )
    assert c.summarize(DIALOGUE, sentences=1) == "We decided to go with Sunrise Adoptions in Boston."
    assert c.summarize(DIALOGUE, sentences=0) == ""
    assert c.summarize(["Wow!", "Thanks!", "That's great!"]) == ""


def test_summary_punctuates_sentences_that_end_without_it() -> None:
    assert c.summarize(["we moved the cache to Redis", "the latency dropped to 40 ms"]) == (
        "we moved the cache to Redis. the latency dropped to 40 ms."
    )


def test_decisions_and_open_questions() -> None:
    assert c.decisions(DIALOGUE) == ["We decided to go with Sunrise Adoptions in Boston."]
    assert c.decisions(["Should we go with Redis?", "Let's use Redis.", "Let's use Redis."]) == ["Let's use Redis."]
    # the agency question is answered by the next turn (it shares "decide"); the last one is not
    assert c.questions(DIALOGUE) == ["Should we store the notes in notes_db.py or in a CamelCase class?"]
    assert c.questions(["Which port does the API use?", "It uses port 8080."]) == []
    assert c.questions(["Which port does the API use?", "Lunch?", "Sure, lunch at noon."]) == [
        "Which port does the API use?"
    ]
    assert c.questions(["Which port does the API use?"]) == ["Which port does the API use?"]


def test_headline_and_tags() -> None:
    assert c.headline(DIALOGUE) == "We decided to go with Sunrise Adoptions in Boston."
    assert c.headline(DIALOGUE, max_words=5) == "We decided to go with..."
    assert (
        c.headline(["This sentence has exactly ten words in it, no more."], max_words=4)
        == "This sentence has exactly..."
    )
    assert c.headline(["Wow!", "Thanks!"]) == ""
    assert c.headline([" ".join(["alpha"] * 100) + "."], max_words=1000) == " ".join(["alpha"] * 49) + "..."
    assert c.tags(DIALOGUE) == ["caroline", "lgbtq", "sunrise", "went", "support"]
    assert c.tags(DIALOGUE, n=3) == ["caroline", "went", "support"]
    assert c.tags(DIALOGUE, n=0) == []


def test_key_point_drops_small_talk_and_discourse_words() -> None:
    turn = "Oh, yeah, we moved the cache to Redis 7.2. It was fun! Thanks a lot. So the latency dropped from 120 ms to 40 ms."
    assert c.key_point(turn) == "We moved the cache to Redis 7.2. So the latency dropped from 120 ms to 40 ms."
    assert c.compress(turn) == "moved cache Redis 7.2 latency dropped 120 ms 40"
    assert c.index_form(turn) == "redis_moved_cache"
    assert c.key_point("Well, the build uses Bazel now.") == "The build uses Bazel now."
    assert c.key_point("Thanks!") == ""
    assert c.compress("No, we don't use Redis, not anymore.") == "don't use Redis not anymore"


# ---------------------------------------------------------------------------
# hostile input and properties


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   \n\t",
        "\ud800",
        "\ud800 Alice \udfff met Bob\x00 here.",
        "\x00\x01\x1b[31m",
        "a" * 100_000,
        "Привет мир. Москва большая.",
        "漢字テスト",
        "word " * 250_000,
    ],
)
def test_hostile_text_gives_clean_strings(text: str) -> None:
    for function in FUNCTIONS:
        for out in _strings(function(text)):
            assert isinstance(out, str)
            out.encode("utf-8")  # no lone surrogate survives
            assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f]", out)


def test_a_megabyte_is_cut_to_max_chars() -> None:
    head = "Alice moved the cache to Redis. "
    text = head + "Thanks! " * 130_000 + " Zebra12 appears at the end."
    start = time.monotonic()
    assert "Zebra12" not in c.entities([text])
    assert c.entities([text]) == ["Redis"]
    assert c.content_words(text)[:4] == ["alice", "moved", "cache", "redis"]
    assert len(" ".join(c.sentences(text))) <= c.MAX_CHARS
    assert c.summarize([text] * 3) == head.strip()
    assert time.monotonic() - start < 30  # a bound, not a benchmark


def test_many_sentences_are_bounded() -> None:
    texts = [f"Service{i} talks to service{i + 1} over gRPC." for i in range(3000)]
    out = c.summarize(texts)
    assert out.count(".") == 3
    assert all(int(n) < c.MAX_SENTENCES for n in re.findall(r"Service(\d+)", out))


def test_a_str_is_one_text_not_its_characters() -> None:
    assert c.summarize(POSTGRES) == POSTGRES
    assert c.entities(POSTGRES) == ["PostgreSQL", "JSON"]


WORDS = st.sampled_from(
    [
        "the",
        "team",
        "PostgreSQL",
        "uses",
        "3.5",
        "42",
        "Redis",
        "cache",
        "Wow!",
        "thanks.",
        "snake_case",
        "It",
        "is",
        "fast.",
        "2024-05-01",
        "?",
        "\n",
        "Well,",
    ]
)
SENTENCES = st.lists(WORDS, max_size=40).map(" ".join)


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_no_function_raises_and_all_return_valid_str(text: str) -> None:
    for function in FUNCTIONS:
        for out in _strings(function(text)):
            assert isinstance(out, str)
            out.encode("utf-8")


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.text(), SENTENCES))
def test_outputs_are_deterministic_and_never_add_content(text: str) -> None:
    for function in FUNCTIONS:
        assert function(text) == function(text)
    words = len(c.content_words(text))
    point = c.key_point(text)
    assert len(point) <= len(text)
    assert len(c.content_words(point)) <= words
    squeezed = c.compress(text, max_words=10_000)
    assert len(c.content_words(squeezed)) <= words
    assert len(c.compress(text).split()) <= 16
    index = c.index_form(text)
    assert index == index.lower()
    assert len(index) <= len(squeezed.lower())
    assert len(c.index_form(text, words=1)) <= len(index)
    # each index term is a word of the compressed form (snake_case terms hold "_" themselves)
    assert set(re.split(r"[_ ]", index)) - {""} <= set(re.split(r"[_ ]", squeezed.lower()))
    assert len(c.tags([text])) <= 5


@settings(max_examples=200, deadline=None)
@given(SENTENCES)
def test_every_number_of_a_short_input_survives_compress(text: str) -> None:
    numbers = {w for w in re.findall(r"\d[\d.\-]*\d|\d", text)}
    out = c.compress(text).split()
    if len(c.entities([text])) <= 16:
        assert numbers <= set(out)


@settings(max_examples=100, deadline=None)
@given(SENTENCES, st.integers(min_value=-2, max_value=30))
def test_headline_is_cut_to_max_words(text: str, max_words: int) -> None:
    out = c.headline([text], max_words=max_words)
    assert len(out.split()) <= max(max_words, 0)
    assert len(out) <= c.HEADLINE_CHARS


# ---------------------------------------------------------------------------
# the optional summarizer


def test_ask_summarizer_returns_the_parsed_answer() -> None:
    seen: list[str] = []

    def summarizer(request: str) -> str:
        seen.append(request)
        return json.dumps({"headline": "  Moved to   Redis. ", "tags": ["redis", "", "cache"]})

    answer = c.ask_summarizer(summarizer, c.WARM_TO_COLD_PROMPT, ["a", "b"], timeout=5)
    assert answer == {"headline": "Moved to Redis.", "tags": ["redis", "cache"]}
    assert seen == [c.WARM_TO_COLD_PROMPT + "\n\na\nb"]
    # a dict is taken as it is, values cut
    long = c.ask_summarizer(
        lambda _: {"summary": "x" * 5000, "key_points": ["k"] * 50}, c.HOT_TO_WARM_PROMPT, [], timeout=5
    )
    assert long is not None
    assert long["summary"] == "x" * c.ANSWER_STRING_CHARS
    assert long["key_points"] == ["k"] * c.ANSWER_ITEMS


def test_the_prompts_ask_for_the_seed_fields() -> None:
    for key in ("summary", "key_points", "entities", "decisions", "questions"):
        assert f'"{key}"' in c.HOT_TO_WARM_PROMPT
    for key in ("headline", "tags"):
        assert f'"{key}"' in c.WARM_TO_COLD_PROMPT
    assert "3-5 tags" in c.WARM_TO_COLD_PROMPT


def test_ask_summarizer_gives_none_for_a_raising_summarizer(caplog: pytest.LogCaptureFixture) -> None:
    def boom(_: str) -> object:
        raise RuntimeError("model down")

    with caplog.at_level(logging.WARNING, logger="aircher_mem.longterm"):
        assert c.ask_summarizer(boom, c.HOT_TO_WARM_PROMPT, ["x"], timeout=5) is None
    assert "model down" in caplog.text


def test_ask_summarizer_gives_none_after_the_timeout() -> None:
    release = threading.Event()

    def sleepy(_: str) -> object:
        release.wait(30)
        return {"headline": "late"}

    start = time.monotonic()
    try:
        assert c.ask_summarizer(sleepy, c.WARM_TO_COLD_PROMPT, ["x"], timeout=0.2) is None
        assert time.monotonic() - start < 2  # a bound, not a benchmark
        assert c.ask_summarizer(sleepy, c.WARM_TO_COLD_PROMPT, ["x"], timeout=float("nan")) is None
        assert c.ask_summarizer(sleepy, c.WARM_TO_COLD_PROMPT, ["x"], timeout=-1) is None
    finally:
        release.set()


@pytest.mark.parametrize(
    "answer",
    [
        None,
        42,
        "not json",
        "[1, 2]",
        '{"headline": 3}',
        '{"tags": ["a", 3]}',
        {"tags": [["nested"]]},
        {1: "x"},
        {},
        {"headline": ""},
        {f"k{i}": "v" for i in range(100)},
        "{" * 100_000,
        json.dumps({"headline": "x" * 200_000}),
    ],
)
def test_ask_summarizer_gives_none_for_junk(answer: object) -> None:
    assert c.ask_summarizer(lambda _: answer, c.WARM_TO_COLD_PROMPT, ["x"], timeout=5) is None
