"""The contradiction benchmark's scoring (benches/contradictions.py): pairs found in a
store, and the rules followed by a judge, on small inputs."""

from __future__ import annotations

import pytest
from conftest import bench_script

bench = bench_script("contradictions")


def pair(a: str, b: str, label: str) -> object:
    return bench.Pair(a, b, label, "test")


def test_a_store_finds_a_contradiction_between_neighbours_and_counts_what_else_it_finds() -> None:
    pairs = [
        pair("Always use tabs for indentation", "Never use tabs for indentation", "contradiction"),
        pair("The staging server runs Ubuntu 22.04", "Staging is on Ubuntu 22.04 as well", "agree"),
        pair("I follow a strictly vegan diet", "Had a cheeseburger for lunch today", "contradiction"),
    ]
    found = bench.in_store(pairs)
    # the rules find the first; the second needs knowledge of the world
    assert (found.contradictions, found.at_write, found.after_pass) == (2, 1, 1)
    assert (found.false_alarms, found.across) == (0, 0)


def test_a_judge_in_the_store_is_asked_only_about_neighbours() -> None:
    asked: list[tuple[str, str]] = []

    class Judge:
        def pair(self, a: str, b: str) -> bool:
            asked.append((a, b))
            return "garden" in a + b or "vegan" in a + b

    pairs = [
        pair("The team meets on the third floor", "The team meets in the garden", "contradiction"),
        pair("I follow a strictly vegan diet", "Had a cheeseburger for lunch today", "contradiction"),
        pair("The office pet is a cat", "The office has a cat called Mochi", "detail"),
    ]
    found = bench.in_store(pairs, Judge())
    assert (found.contradictions, found.at_write, found.after_pass) == (2, 1, 1)
    assert (found.false_alarms, found.across) == (0, 0)
    # no word in common: the lexical lookup never makes the second pair neighbours
    assert not any("vegan" in a + b and "cheeseburger" in a + b for a, b in asked)


@pytest.mark.dense
def test_with_the_dense_channel_the_store_also_judges_neighbours_by_meaning() -> None:
    from aircher_mem.embeddings import available

    ok, why = available()
    if not ok:
        pytest.skip(why)
    asked: list[tuple[str, str]] = []

    class Judge:
        def pair(self, a: str, b: str) -> bool:
            asked.append((a, b))
            return "vegan" in a + b and "cheeseburger" in a + b

    pairs = [
        pair("I follow a strictly vegan diet", "Had a cheeseburger for lunch today", "contradiction"),
        pair("The office pet is a cat", "The office has a cat called Mochi", "detail"),
    ]
    found = bench.in_store(pairs, Judge(), dense=True, min_similarity=-1.0)
    # no word in common, neighbours by meaning: judged when the second text is embedded
    assert (found.contradictions, found.at_write, found.after_pass) == (1, 1, 1)
    assert (found.false_alarms, found.across) == (0, 0)
    assert any("vegan" in a + b and "cheeseburger" in a + b for a, b in asked)
    # the Policy's nli_min_similarity: the model puts them further apart (cosine 0.17)
    asked.clear()
    found = bench.in_store(pairs, Judge(), dense=True)
    assert (found.at_write, found.after_pass) == (0, 0)
    assert not any("vegan" in a + b and "cheeseburger" in a + b for a, b in asked)
