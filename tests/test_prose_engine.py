"""The Rust prose engine behind ``aircher_mem.longterm.compress`` against the Python
it replaced (``prose_reference``): every form, text by text, on LoCoMo's turns and
on generated text, equal."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterator, Sequence

import prose_reference as ref
import pytest
from aircher_mem._core import ProseAnalysis
from aircher_mem.longterm import compress
from conftest import needs_data
from hypothesis import given, settings
from hypothesis import strategies as st

ONE_TEXT: dict[str, Callable[[object, str], object]] = {
    "sentences": lambda m, t: m.sentences(t),
    "content_words": lambda m, t: m.content_words(t),
    "key_point": lambda m, t: m.key_point(t),
    "compress": lambda m, t: m.compress(t),
    "compress 48 fillers": lambda m, t: m.compress(t, max_words=48, fillers=True),
    "compress 3": lambda m, t: m.compress(t, max_words=3),
    "index_form": lambda m, t: m.index_form(t),
    "levels": lambda m, t: dataclasses.astuple(m.levels(t, sentences=2)),
}

TEXTS: dict[str, Callable[[object, Sequence[str]], object]] = {
    "summarize": lambda m, ts: m.summarize(ts),
    "summarize 1": lambda m, ts: m.summarize(ts, sentences=1),
    "headline": lambda m, ts: m.headline(ts),
    "headline 4": lambda m, ts: m.headline(ts, max_words=4),
    "tags": lambda m, ts: m.tags(ts),
    "tags 1": lambda m, ts: m.tags(ts, 1),
    "entities": lambda m, ts: m.entities(ts),
    "decisions": lambda m, ts: m.decisions(ts),
    "questions": lambda m, ts: m.questions(ts),
    "digest": lambda m, ts: dataclasses.astuple(m.digest(ts)),
}


def differences(texts: Sequence[str]) -> Iterator[str]:
    for text in texts:
        for name, form in ONE_TEXT.items():
            want, got = form(ref, text), form(compress, text)
            if want != got:
                yield f"{name}({text!r}): reference {want!r}, engine {got!r}"
    for name, form in TEXTS.items():
        want, got = form(ref, texts), form(compress, texts)
        if want != got:
            yield f"{name}({list(texts)!r}): reference {want!r}, engine {got!r}"


def locomo_turns() -> list[str]:
    path = needs_data("locomo-dev.json", "LoCoMo's dev conversations", "the LoCoMo benchmark's locomo10.json")
    out: list[str] = []

    def walk(value: object) -> None:
        if isinstance(value, dict):
            if isinstance(value.get("text"), str):
                out.append(value["text"])
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(json.loads(path.read_text(encoding="utf-8")))
    return out


def test_every_form_of_locomo_turns_equals_the_reference() -> None:
    turns = locomo_turns()
    assert len(turns) > 1000
    found = [d for i in range(0, len(turns), 12) for d in differences(turns[i : i + 12])]
    assert found == [], found[:5]


# Letters of several scripts and cases (title case, final sigma, dotted capital I,
# sharp s), numbers that are not ASCII digits, combining marks, the punctuation the
# sentence splitter and the word pattern read, and the words its rules name.
ALPHABET = "abcxyzABCXYZ019 ,;:-.'!?$%()\"`_/\n\t’”…—–€£。！？éÉßΣσςİǅ数٣½Ⅻ\u0301\u00a0\u2028"
WORDS = (
    "we decided to use go with let's switched to No not don't isn't well oh so yeah okay "
    "thanks great Wow e.g. i.e. Dr. vs. etc. J. U.S. v3.5 foo.py snake_case CamelCase JSON "
    "PostgreSQL 2024-05-01 3:30 $5 20% team's Boston ok? what? Anyway, — ... !"
).split()

TEXT = st.one_of(
    st.text(alphabet=ALPHABET, max_size=120),
    st.lists(
        st.one_of(st.sampled_from(WORDS), st.text(alphabet=ALPHABET, min_size=1, max_size=8)),
        max_size=30,
    ).map(" ".join),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(TEXT, min_size=1, max_size=5))
def test_every_form_of_generated_text_equals_the_reference(texts: list[str]) -> None:
    found = list(differences(texts))
    assert found == [], found[:3]


@settings(max_examples=50, deadline=None)
@given(st.lists(st.lists(TEXT, max_size=4), max_size=6))
def test_digests_made_together_equal_each_made_alone(batches: list[list[str]]) -> None:
    assert compress.digests(batches, sentences=2) == [compress.digest(b, sentences=2) for b in batches]


def test_the_limits_are_the_engines() -> None:
    assert (compress.MAX_SENTENCES, compress.KEY_POINT_SENTENCES, compress.HEADLINE_CHARS) == (200, 2, 300)
    assert ProseAnalysis.MAX_SENTENCES == ref.MAX_SENTENCES


@pytest.mark.parametrize("bad", [None, 3, [b"bytes"], ["ok", 4]])
def test_the_engine_refuses_what_is_not_a_list_of_str(bad: object) -> None:
    from aircher_mem.errors import InvalidInputError

    with pytest.raises(InvalidInputError):
        ProseAnalysis(bad)  # type: ignore[arg-type]
