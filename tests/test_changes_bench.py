"""The code-change extraction bench (benches/changes.py): its scoring of labelled
candidates, its sample, and one run on a small repository."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import bench_script

bench = bench_script("changes")


def row(repo: str, kind: str, confidence: float, label: str, content: str = "c") -> dict[str, object]:
    return {"repo": repo, "commit": "abc", "content": content, "kind": kind, "confidence": confidence, "label": label}


def test_score_counts_approvals_by_kind_repo_and_confidence(tmp_path: Path) -> None:
    labels = tmp_path / "labels.jsonl"
    rows = [
        row("a", "new_symbol", 0.9, "approve"),
        row("a", "new_symbol", 0.7, "reject"),
        row("b", "config", 0.9, "approve"),
        row("b", "refactor", 0.6, "approve"),
        row("b", "import", 0.75, "reject"),
    ]
    labels.write_text("".join(json.dumps(r) + "\n" for r in rows) + "\n")
    assert bench.score(bench.read_labels(labels)) == {
        "overall": {"n": 5, "approved": 3, "share": 0.6},
        "by_kind": {
            "config": {"n": 1, "approved": 1, "share": 1.0},
            "import": {"n": 1, "approved": 0, "share": 0.0},
            "new_symbol": {"n": 2, "approved": 1, "share": 0.5},
            "refactor": {"n": 1, "approved": 1, "share": 1.0},
        },
        "by_repo": {"a": {"n": 2, "approved": 1, "share": 0.5}, "b": {"n": 3, "approved": 2, "share": 0.667}},
        "confident": {"n": 2, "approved": 2, "share": 1.0},
        "needs_approval": {"n": 3, "approved": 1, "share": 0.333},
    }
    with pytest.raises(ValueError, match="unlabelled"):
        bench.score([row("a", "config", 0.9, "")])


def test_sample_is_stable_and_the_run_reports_each_commit(tmp_path: Path) -> None:
    rows = [row("a", "config", 0.9, "", content=str(n)) for n in range(20)]
    assert bench.sample(rows, 5) == bench.sample(list(reversed(rows)), 5)
    root = tmp_path / "r"
    root.mkdir()
    bench.git(root, "init", "-q")
    (root / "a.py").write_text("def f():\n    pass\n")
    bench.git(root, "add", "-A")
    bench.git(root, "commit", "-q", "-m", "one")
    (root / "a.py").write_text("def f():\n    pass\n\n\ndef g():\n    pass\n")
    bench.git(root, "commit", "-q", "-am", "two")
    commits = bench.last_commits(root, 200)
    assert len(commits) == 2
    found, times = bench.run(root, commits)
    assert [[c.content for c in cs] for cs in found] == [
        ["Added a.py", "Implemented function f in a.py"],
        ["Implemented function g in a.py"],
    ]
    figures = bench.summary("r", found, times)
    assert {k: figures[k] for k in ("commits", "candidates", "per_commit_max", "commits_without", "kinds")} == {
        "commits": 2,
        "candidates": 3,
        "per_commit_max": 2,
        "commits_without": 0,
        "kinds": {"new_symbol": 2, "new_file": 1},
    }
    out = subprocess.run(
        [sys.executable, bench.__file__, "--repo", str(root), "--labels", str(tmp_path / "none"), "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(out.stdout)["repos"][0]["candidates"] == 3
