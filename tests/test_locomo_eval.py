"""The LoCoMo bench's pure parts (benches/locomo.py): evidence normalisation, session
dates, recall_all@k and its summary, on hand-made inputs."""

from __future__ import annotations

from datetime import datetime

import pytest
from conftest import bench_script

locomo = bench_script("locomo")


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("D1:3", ("D1:3",)),
        ("D8:6; D9:17", ("D8:6", "D9:17")),
        ("D:11:26", ("D11:26",)),
        ("D30:05", ("D30:5",)),
        (" D 2 : 7 ", ("D2:7",)),
        (["D1:3", "D8:6; D9:17", "D1:3"], ("D1:3", "D8:6", "D9:17")),
        ([], ()),
        ("", ()),
        ("no id here", ()),
    ],
)
def test_normalize_evidence(raw: object, expected: tuple[str, ...]) -> None:
    assert locomo.normalize_evidence(raw) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1:56 pm on 8 May, 2023", datetime(2023, 5, 8, 13, 56)),
        ("12:09 am on 13 September, 2023", datetime(2023, 9, 13, 0, 9)),
        ("12:30 pm on 1 January, 2024", datetime(2024, 1, 1, 12, 30)),
        ("10:04 am on 19 June, 2023", datetime(2023, 6, 19, 10, 4)),
        ("7:00 PM on 31 December 2022", datetime(2022, 12, 31, 19, 0)),
    ],
)
def test_parse_session_date(text: str, expected: datetime) -> None:
    assert locomo.parse_session_date(text) == expected


@pytest.mark.parametrize("text", ["", "8 May, 2023", "13:56 pm on 8 May, 2023", "1:56 pm on 8 Mai, 2023"])
def test_parse_session_date_rejects(text: str) -> None:
    with pytest.raises(ValueError):
        locomo.parse_session_date(text)


def test_turn_content() -> None:
    assert locomo.turn_content("Look!", "a photo of a dog") == "Look! [image: a photo of a dog]"
    assert locomo.turn_content("Hi", None) == "Hi"


def test_distinct_turns_keeps_first_rank() -> None:
    hits = [["D1:2"], ["D1:3", "D1:2"], [], ["D2:1", "D1:3"], ["D3:4"]]
    assert locomo.distinct_turns(hits) == ["D1:2", "D1:3", "D2:1", "D3:4"]


def test_recall_all() -> None:
    ranked = ["a", "b", "c", "d", "e", "f"]
    ks = (1, 2, 5, 10)
    assert locomo.recall_all(ranked, ["a"], ks) == {1: True, 2: True, 5: True, 10: True}
    assert locomo.recall_all(ranked, ["b"], ks) == {1: False, 2: True, 5: True, 10: True}
    # every evidence turn must be in: the worst-ranked one decides
    assert locomo.recall_all(ranked, ["a", "e"], ks) == {1: False, 2: False, 5: True, 10: True}
    assert locomo.recall_all(ranked, ["f", "a"], ks) == {1: False, 2: False, 5: False, 10: True}
    # one missing evidence turn fails every k
    assert locomo.recall_all(ranked, ["a", "z"], ks) == {1: False, 2: False, 5: False, 10: False}
    # repeated turns count once: "c" is the 3rd distinct turn
    assert locomo.recall_all(["a", "a", "b", "a", "c"], ["c"], (2, 3)) == {2: False, 3: True}
    assert locomo.recall_all([], ["a"], (1,)) == {1: False}
    with pytest.raises(ValueError):
        locomo.recall_all(ranked, [], ks)


def test_summarize_exact_rates() -> None:
    def outcome(category: int, ranked: list[str], evidence: tuple[str, ...]) -> object:
        hit = locomo.recall_all(ranked, evidence, (1, 5))
        return locomo.Outcome("c", 0, category, evidence, tuple(ranked), hit)

    outcomes = [
        outcome(4, ["x", "y"], ("x",)),  # @1 and @5
        outcome(4, ["y", "x"], ("x",)),  # @5 only
        outcome(4, ["y"], ("x",)),  # neither
        outcome(1, ["a", "b", "c"], ("a", "c")),  # @5 only
    ]
    summary = locomo.summarize(outcomes, (1, 5))
    assert summary == {
        "all": {"n": 4, "@1": 0.25, "@5": 0.75},
        "multi-hop": {"n": 1, "@1": 0.0, "@5": 1.0},
        "single-hop": {"n": 3, "@1": 1 / 3, "@5": 2 / 3},
    }


def test_load_conversation_normalises_and_filters() -> None:
    raw = {
        "sample_id": "conv-x",
        "conversation": {
            "speaker_a": "Ann",
            "speaker_b": "Bob",
            "session_2_date_time": "9:00 am on 2 May, 2023",
            "session_2": [{"speaker": "Bob", "dia_id": "D2:1", "text": "Later."}],
            "session_1_date_time": "1:56 pm on 1 May, 2023",
            "session_1": [
                {"speaker": "Ann", "dia_id": "D1:1", "text": "Hi"},
                {"speaker": "Bob", "dia_id": "D1:2", "text": "Look", "blip_caption": "a cat"},
            ],
        },
        "qa": [
            {"question": "q0", "answer": "a", "category": 4, "evidence": ["D1:2; D2:1"]},
            {"question": "q1", "adversarial_answer": "a", "category": 5, "evidence": ["D1:1"]},
            {"question": "q2", "answer": "a", "category": 2, "evidence": []},
            {"question": "q3", "answer": "a", "category": 1, "evidence": ["D:1:1", "D9:9"]},
            {"question": "q4", "answer": "a", "category": 3, "evidence": ["D9:9"]},
        ],
    }
    conv = locomo.load_conversation(raw)
    assert [(t.dia_id, t.session, t.speaker, t.content) for t in conv.turns] == [
        ("D1:1", 1, "Ann", "Hi"),
        ("D1:2", 1, "Bob", "Look [image: a cat]"),
        ("D2:1", 2, "Bob", "Later."),
    ]
    assert conv.turns[0].at == datetime(2023, 5, 1, 13, 56)
    assert conv.turns[2].date_text == "9:00 am on 2 May, 2023"
    assert [(q.index, q.category, q.evidence) for q in conv.questions] == [
        (0, 4, ("D1:2", "D2:1")),
        (3, 1, ("D1:1",)),
    ]
    assert conv.dropped_evidence == 2
    assert locomo.bm25_document(conv.turns[1]) == "1:56 pm on 1 May, 2023 Bob: Look [image: a cat]"


def test_percentile_nearest_rank() -> None:
    values = [5.0, 1.0, 3.0, 2.0, 4.0]
    assert locomo.percentile(values, 50) == 3.0
    assert locomo.percentile(values, 95) == 5.0
    assert locomo.percentile(values, 0) == 1.0
    assert locomo.percentile([7.0], 95) == 7.0
