"""A build's and an index's phases and progress: the phases in order, the parse's
reports, the tracker's counts, rate and time left, and a build of some files."""

from __future__ import annotations

import os
from pathlib import Path

import aircher_mem as am
import pytest
from aircher_mem.engine import KnowledgeGraph
from test_graph import FIXTURES, REPO, write


def test_a_build_reports_each_phase_as_it_begins_and_the_parse_before_the_rest(tmp_path: Path) -> None:
    root = write(tmp_path / "repo", {**REPO, "blob.py": b"\x00"})
    total = len(KnowledgeGraph.discover(root)[0])
    events: list[object] = []
    g = KnowledgeGraph.build(root, progress=lambda *a: events.append(a), phase=events.append)
    parse_reports = events[2 : events.index("lexical index")]
    assert events[:2] == ["scanning", "parsing"] and events[-2:] == ["lexical index", "linking"]
    assert parse_reports[-1] == (total, total) and parse_reports == sorted(parse_reports)  # type: ignore[type-var]
    assert all(isinstance(r, tuple) and r[1] == total for r in parse_reports)
    events.clear()
    KnowledgeGraph.build_into(root, tmp_path / "g.bin", progress=lambda *a: events.append(a), phase=events.append)
    assert events[:2] == ["scanning", "parsing"] and events[-3:] == ["lexical index", "linking", "saving"]
    assert events[-4] == (total, total) and g.file_count == total - 1
    phases: list[str] = []
    KnowledgeGraph.build(root, phase=phases.append)  # without progress: the phases alone
    assert phases == ["scanning", "parsing", "lexical index", "linking"]
    for build in (KnowledgeGraph.build, lambda r, **kw: KnowledgeGraph.build_into(r, tmp_path / "h.bin", **kw)):
        with pytest.raises(am.InvalidInputError, match="phase must be callable or None"):
            build(root, phase=3)

    def stop(name: str) -> None:
        if name == "linking":
            raise RuntimeError("stop at linking")

    with pytest.raises(RuntimeError, match="stop at linking"):
        KnowledgeGraph.build(root, phase=stop)


def test_an_index_says_its_phases_full_incremental_and_unchanged(tmp_path: Path) -> None:
    from aircher_mem.config import Policy
    from aircher_mem.graph import GraphIndex

    root = write(tmp_path / "repo", dict(FIXTURES["python"]))
    index = GraphIndex(root.resolve(), root / ".aircher", Policy())
    for hold in (True, False):
        phases: list[str] = []
        index.index(full=True, phase=phases.append, hold=hold)
        assert phases == ["scanning", "parsing", "lexical index", "linking", "saving"], hold
    (root / "app/util.py").write_text("def slug(s):\n    return s.upper()\n")
    phases, counted = [], []
    index.index(phase=phases.append, progress=lambda *a: counted.append(a))
    assert (phases, counted) == (["scanning", "parsing", "saving"], [(1, 1)])
    phases.clear()
    index.index(phase=phases.append)
    assert phases == ["scanning"]  # each file as the manifest has it: nothing parsed or saved
    phases.clear()
    os.utime(root / "app/util.py", ns=(1, 1))
    report = index.index(phase=phases.append)
    assert phases == ["scanning", "parsing", "saving"]  # a time moved: the file hashed, its time kept
    assert (report.parsed, report.updated) == (0, [])


def test_the_index_tracker_reports_phase_counts_rate_and_time_left() -> None:
    from aircher_mem.graph import IndexTracker
    from aircher_mem.results import IndexProgress

    now = [100.0]
    tracker = IndexTracker(clock=lambda: now[0])
    assert tracker.snapshot() == IndexProgress(False, "", 0, 0, "files", 0.0, 0.0, None)
    seen: list[tuple[int, int]] = []
    tracker.begin(lambda done, total: seen.append((done, total)))
    tracker.phase("scanning")
    now[0] = 101.0
    tracker.phase("parsing")
    tracker(0, 400)
    now[0] = 103.0
    tracker(100, 400)
    assert tracker.snapshot() == IndexProgress(True, "parsing", 100, 400, "files", 3.0, 50.0, 6.0)
    now[0] = 105.0
    tracker(400, 400)
    tracker.phase("linking")  # the rate is the parse's from now on
    tracker.phase("linking")  # the same again: nothing
    now[0] = 120.0
    assert tracker.snapshot() == IndexProgress(True, "linking", 400, 400, "files", 20.0, 100.0, None)
    tracker.phase("embeddings")
    now[0] = 122.0
    tracker(20, 100)
    assert tracker.snapshot() == IndexProgress(True, "embeddings", 20, 100, "documents", 22.0, 10.0, 8.0)
    now[0] = 130.0
    tracker(100, 100)
    tracker.end()
    now[0] = 500.0
    assert tracker.snapshot() == IndexProgress(False, "embeddings", 100, 100, "documents", 30.0, 10.0, None)
    assert seen == [(0, 400), (100, 400), (400, 400), (20, 100), (100, 100)]


def test_a_build_of_some_files_and_an_index_in_two_steps(tmp_path: Path) -> None:
    from aircher_mem.config import GraphPolicy, Policy
    from aircher_mem.graph import GraphIndex

    root = write(tmp_path / "repo", {**REPO, "big.py": "x = 1\n" * 100})
    part = KnowledgeGraph.build(root, only=["app/util.py", "app/views.py", "big.py", "absent.py"])
    assert part.files == ["app/util.py", "app/views.py", "big.py"]
    assert KnowledgeGraph.build(root, only=[]).file_count == 0
    for bad in ([1], "app/util.py", ["\ud800"]):
        with pytest.raises(am.InvalidInputError):
            KnowledgeGraph.build(root, only=bad)  # type: ignore[arg-type]
    whole = KnowledgeGraph.build(root, max_file_bytes=500)
    policy = Policy(graph=GraphPolicy(first_batch_files=2, first_batch_share=1.0, max_file_bytes=500))
    published: list[tuple[list[str], int]] = []
    phases: list[str] = []
    index = GraphIndex(root.resolve(), root / ".aircher", policy)
    report = index.index(phase=phases.append, publish=lambda g, total: published.append((g.files, total)))
    files = sorted(KnowledgeGraph.discover(root)[0])
    assert published == [(files[:2], len(files) - 1)]  # big.py is too large: skipped, not counted
    assert phases == ["scanning", "first files", "scanning", "parsing", "lexical index", "linking", "saving"]
    assert index.graph.files == whole.files and set(index.graph.edges()) == set(whole.edges())
    assert report.full and report.files == whole.file_count and report.skipped == whole.skipped
    published.clear()
    (root / "app/util.py").write_text("def slug(s):\n    return s\n")
    assert index.index(publish=lambda g, total: published.append((g.files, total))).updated == ["app/util.py"]
    assert published == []  # an update: the graph answers as it is
    shared = GraphIndex(root.resolve(), tmp_path / "shared", Policy(graph=GraphPolicy(first_batch_share=0.2)))
    shared.index(publish=lambda g, total: published.append((g.files, total)))
    assert published == [(files[: -(-len(files) // 5)], len(files))]  # a fifth, rounded up: big.py fits now
