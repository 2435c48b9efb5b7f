"""The cold-start bench's scoring (benches/coldstart.py) on a tiny truth file, so the
script cannot rot: command matching, per-field tallies and the mismatch notes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import bench_script

bench = bench_script("coldstart")


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("pytest", "python -m pytest", True),
        ("tox", "python -Im tox run", True),
        ("tox", "python -I tox", False),
        ("ctest", "ctest --test-dir build", True),
        ("go test ./...", "go test", True),
        ("mvn test", "mvn clean test", False),
        ("npm test", "yarn test", False),
        ("--verbose", "pytest", False),
    ],
)
def test_commands_match(a: str, b: str, same: bool) -> None:
    assert bench.commands_match(a, b) is same
    assert bench.commands_match(b, a) is same


def test_score_on_a_tiny_truth_file(tmp_path: Path) -> None:
    truth = [
        {"name": "a", "types": ["python", "c"], "frameworks": ["Flask"], "test_commands": ["pytest", "tox"]},
        {"name": "b", "types": ["node"], "frameworks": [], "test_commands": ["npm test"]},
        {"name": "c", "types": ["go"], "frameworks": [], "test_commands": []},
        {"name": "skipped", "types": ["rust"], "frameworks": [], "test_commands": ["cargo test"]},
    ]
    path = tmp_path / "truth.json"
    path.write_text(json.dumps({"projects": truth}))
    predictions = {
        "a": bench.Prediction(("c", "python"), ("flask", "Click"), "python -m pytest -q"),
        "b": bench.Prediction(("node",), (), "yarn test"),
        "c": bench.Prediction((), (), "go test ./..."),
    }
    tallies, mismatches = bench.score(bench.load(path), predictions)
    got = {field: (t.tp, t.fp, t.fn) for field, t in tallies.items()}
    assert got == {"type": (3, 0, 1), "primary": (1, 1, 2), "framework": (1, 1, 0), "test command": (1, 2, 1)}
    assert tallies["type"].precision == 1.0 and tallies["type"].recall == 0.75
    assert mismatches == {
        "a": ["framework: missed [], extra ['click']", "primary: ('c',) for ['python']"],
        "b": ["test command: 'yarn test' for ['npm test']"],
        "c": ["type: missed ['go'], extra []", "primary: () for ['go']", "test command: 'go test ./...' for []"],
    }


def test_the_truth_file_is_complete() -> None:
    projects = bench.load(bench.TRUTH)
    assert len(projects) >= 15
    assert len({t for p in projects for t in p["types"]}) >= 8
    for p in projects:
        assert set(p) >= {"name", "version", "source", "licence", "types", "frameworks", "test_commands", "read"}, p
        assert p["source"]["kind"] in ("pypi-sdist", "crate", "debian-source"), p["name"]
        assert set(p["read"]) == {"types", "frameworks", "test"}, p["name"]
