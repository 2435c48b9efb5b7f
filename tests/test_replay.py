"""The trajectory replay: exact metrics on a hand-made trajectory, and a few real
ones when the trajectories data set is there (``$AIRCHER_DATA``, see conftest.needs_data)."""

from __future__ import annotations

import json
from pathlib import Path

import aircher_mem as am
import pytest
from aircher_mem import replay as rp
from conftest import needs_data


def read(step: int, path: str, lo: int, hi: int, text: str) -> list[dict[str, object]]:
    action = {
        "step": step,
        "kind": "action",
        "tool": "cat",
        "op": "read",
        "text": f"sed -n {lo},{hi}p {path}",
        "reads": [],
        "writes": [],
    }
    shown = {
        "step": step + 1,
        "kind": "observation",
        "tool": "cat",
        "op": "read",
        "text": text,
        "reads": [{"file_path": path, "line_range": [lo, hi], "ok": True}],
        "writes": [],
    }
    return [action, shown]


def trajectory() -> list[dict[str, object]]:
    big = "word " * 600  # ~600 tokens
    events: list[dict[str, object]] = [
        {"kind": "system", "text": "You are an agent."},
        {"kind": "task", "text": "Fix the bug in a.py"},
    ]
    events += read(1, "a.py", 1, 100, big)  # shown: a.py 1-100
    events += read(3, "b.py", 1, 100, big)
    events += read(5, "c.py", 1, 100, big)
    events += read(7, "a.py", 50, 60, "a 50-60")  # a re-read of 11 lines of a.py
    events += [
        {
            "kind": "action",
            "tool": "sed",
            "op": "edit",
            "text": "sed -i s/x/y/ a.py",
            "reads": [],
            "writes": [{"file_path": "a.py", "line_range": None}],
        },
        {"kind": "observation", "tool": "sed", "op": "edit", "text": "", "reads": [], "writes": []},
    ]
    events += read(11, "a.py", 50, 60, "a 50-60 again")  # after the edit: not a re-read
    events += [
        {
            "kind": "action",
            "tool": "sed",
            "op": "edit",
            "text": "sed -i s/q/r/ d.py",
            "reads": [],
            "writes": [{"file_path": "d.py", "line_range": None}],
        }
    ]  # never viewed
    return events


def test_metrics_on_a_known_trajectory() -> None:
    big = rp.replay(trajectory(), am.Policy(max_tokens=100_000), strategy="default")
    assert (big.model_calls, big.rereads, big.rereads_held, big.edits, big.edits_without_view) == (7, 1, 1, 2, 1)
    assert big.prunes == 0
    # 1,000 tokens: only about one big read fits, so a.py 1-100 is gone by the re-read.
    small = rp.replay(trajectory(), am.Policy.fifo(max_tokens=1000), strategy="fifo")
    assert (small.rereads, small.rereads_held) == (1, 0)
    assert small.prunes > 0 and small.edits_without_view == 1  # a.py 50-60 was in view before the edit


def test_summary_and_table() -> None:
    results = [rp.replay(trajectory(), rp.STRATEGIES[s](2000), strategy=s) for s in ("fifo", "default")]
    summaries = rp.summarize(results)
    assert [(s.strategy, s.budget, s.trajectories) for s in summaries] == [("default", 2000, 1), ("fifo", 2000, 1)]
    assert "| 2,000 | default |" in rp.table(summaries)


def test_loads_a_folder_of_jsonl(tmp_path: Path) -> None:
    (tmp_path / "x__y-1.jsonl").write_text("\n".join(json.dumps(e) for e in trajectory()) + "\n")
    [(instance, events)] = list(rp.load_trajectories(tmp_path))
    assert instance == "x__y-1" and events == trajectory()


def test_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "t.jsonl").write_text("\n".join(json.dumps(e) for e in trajectory()) + "\n")
    assert rp.main([str(tmp_path), "--budget", "1000", "--strategy", "fifo", "default"]) == 0
    out = capsys.readouterr().out
    assert "| 1,000 | fifo |" in out and "| 1,000 | default |" in out
    with pytest.raises(SystemExit):
        rp.main([str(tmp_path / "absent")])


@pytest.mark.slow
def test_real_trajectories_default_beats_the_unweighted_policy() -> None:
    data = needs_data(
        "trajectories-mini-swe-agent-gemini3pro.tar.gz",
        "the mini-swe-agent trajectories",
        "the 500 SWE-bench Verified runs of mini-swe-agent with Gemini 3 Pro in the public repository "
        "gruckion/mini-swe-agent, one JSONL file of events per run, in the format aircher_mem.replay reads",
    )
    trajectories = list(rp.load_trajectories(data, limit=12))
    results = [
        rp.replay(events, rp.STRATEGIES[s](8000), instance=i, strategy=s)
        for i, events in trajectories
        for s in ("unweighted", "default")
    ]
    by = {s.strategy: s for s in rp.summarize(results)}
    assert by["default"].rereads == by["unweighted"].rereads > 0
    assert by["default"].rereads_held >= by["unweighted"].rereads_held
    assert by["default"].edits_without_view <= by["unweighted"].edits_without_view
