"""The episode benchmark's pure parts (benches/episodes.py): segments from labels,
Pk and boundary scores on hand-made segmentations, and the shipped data's shape."""

from __future__ import annotations

import pytest
from conftest import bench_script

episodes = bench_script("episodes")


def test_segments_start_where_the_label_changes_and_a_return_is_a_new_one() -> None:
    assert episodes.segments(["a", "a", "b", "b", "a"]) == [0, 0, 1, 1, 2]
    assert episodes.segments([]) == []


def test_pk_counts_the_pairs_k_apart_the_two_put_differently() -> None:
    truth = [[0, 0, 0, 1, 1, 1]]
    assert episodes.pk(truth, truth, 2) == 0.0
    # one run for everything: the pairs (1, 3), (2, 4) straddle the true start
    assert episodes.pk(truth, [[7] * 6], 2) == pytest.approx(2 / 4)
    # a start one turn late: (1, 3) put together, (3, 5) apart
    assert episodes.pk(truth, [[0, 0, 0, 0, 1, 1]], 2) == pytest.approx(2 / 4)
    # a start in the right place, another too many: (3, 5) apart
    assert episodes.pk(truth, [[0, 0, 0, 1, 2, 2]], 2) == pytest.approx(1 / 4)


def test_boundary_scores_match_each_true_start_once_within_the_tolerance() -> None:
    truth = [[0, 0, 1, 1, 2, 2]]  # starts at 2 and 4
    found = [[0, 0, 0, 1, 1, 2]]  # starts at 3 and 5
    assert episodes.boundary_scores(truth, found, 0) == {"precision": 0.0, "recall": 0.0, "f1": 0.0}
    within = episodes.boundary_scores(truth, found, 1)
    assert within == {"precision": 1.0, "recall": 1.0, "f1": 1.0}
    crowded = episodes.boundary_scores([[0, 0, 1, 1]], [[0, 1, 2, 3]], 1)  # starts 1, 2, 3 for one at 2
    assert crowded == {"precision": pytest.approx(1 / 3), "recall": 1.0, "f1": pytest.approx(0.5)}


def test_the_data_has_two_halves_of_labelled_sessions() -> None:
    tune, report = episodes.load(split="tune"), episodes.load(split="report")
    assert len(tune) == len(report) == 24
    assert not {s["thread"] for s in tune} & {s["thread"] for s in report}
    for session in tune + report:
        assert 20 <= len(session["turns"]) <= 40
        assert all(turn["text"] and turn["topic"] for turn in session["turns"])
