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
    (root / "z.py").write_text("X = 1\n")
    bench.git(root, "add", "-A")
    bench.git(root, "commit", "-q", "-m", "the root: a whole tree, not a change")
    (root / "a.py").write_text("def f():\n    pass\n")
    bench.git(root, "add", "-A")
    bench.git(root, "commit", "-q", "-m", "one")
    (root / "a.py").write_text("def f():\n    pass\n\n\ndef g():\n    pass\n")
    bench.git(root, "commit", "-q", "-am", "two")
    commits = bench.last_commits(root, 200)
    assert len(commits) == 2
    assert bench.last_commits(root, 1) == commits[1:]
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


def _sdist(folder: Path, name: str, files: dict[str, str]) -> bytes:
    import io
    import tarfile

    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for path, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(f"{name}/{path}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def test_a_release_history_is_each_sdist_against_the_one_before(tmp_path: Path) -> None:
    """The index's JSON lists releases out of order, one with a wheel only, one
    yanked, one whose file does not match its SHA-256 (left out); the history is
    the last releases by upload time, the oldest its base (no change of its own)."""
    import hashlib
    import http.server
    import threading

    sdists = {
        "1.0": _sdist(tmp_path, "pkg-1.0", {"pkg.py": "def a():\n    pass\n"}),
        "1.1": _sdist(tmp_path, "pkg-1.1", {"pkg.py": "def a():\n    pass\n\n\ndef b():\n    pass\n"}),
        "1.2": _sdist(tmp_path, "pkg-1.2", {"pkg.py": "def a():\n    pass\n\n\ndef c():\n    pass\n"}),
        "1.3": _sdist(tmp_path, "pkg-1.3", {"pkg.py": "def d():\n    pass\n"}),
    }

    def sdist(version: str, when: str, *, yanked: bool = False, sha: str | None = None) -> dict[str, object]:
        return {
            "packagetype": "sdist",
            "filename": f"pkg-{version}.tar.gz",
            "url": f"../../files/pkg-{version}.tar.gz",  # relative, as a mirror gives it
            "digests": {"sha256": sha or hashlib.sha256(sdists[version]).hexdigest()},
            "upload_time_iso_8601": when,
            "yanked": yanked,
        }

    listing = {
        "releases": {
            "1.2": [sdist("1.2", "2024-03-01T00:00:00Z")],
            "0.9": [sdist("1.3", "2024-04-01T00:00:00Z", sha="0" * 64)],  # damaged: left out
            "1.0": [sdist("1.0", "2024-01-01T00:00:00Z")],
            "1.1": [sdist("1.1", "2024-02-01T00:00:00Z")],
            "1.3": [sdist("1.3", "2024-05-01T00:00:00Z", yanked=True)],
            "2.0": [{"packagetype": "bdist_wheel", "filename": "pkg-2.0-py3-none-any.whl"}],
        }
    }

    class Index(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path == "/pypi/pkg/json":
                body = json.dumps(listing).encode()
            elif self.path.startswith("/files/pkg-"):
                body = sdists[self.path.removeprefix("/files/pkg-").removesuffix(".tar.gz")]
            else:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Index)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        index = f"http://127.0.0.1:{server.server_address[1]}"
        assert [v for v, *_ in bench.release_files("pkg", index)] == ["1.0", "1.1", "1.2", "0.9"]
        repo = bench.release_history("pkg", 3, tmp_path / "cache", index)
    finally:
        server.shutdown()
        server.server_close()
    assert bench.git(repo, "log", "--format=%s").split("\n")[:-1] == ["pkg 1.2", "pkg 1.1", "pkg 1.0"]
    found, _ = bench.run(repo, bench.last_commits(repo, 3))
    assert [[c.content for c in cs] for cs in found] == [
        ["Implemented function b in pkg.py"],
        ["Renamed function b to c in pkg.py"],
    ]


def test_labels_are_scored_again_as_the_extractor_gives_them_now() -> None:
    def labelled(commit: str, content: str, confidence: float, label: str) -> dict[str, object]:
        return {**row("r", "signature", confidence, label, content=content), "commit": commit}

    labels = [
        labelled("c1", "Changed the signature of function f in a.py: a: int (was a)", 0.9, "reject"),
        labelled("c1", "Changed the signature of function g in a.py: x: X | None (was x: Optional[X])", 0.9, "reject"),
        labelled("c2", "Implemented function h in a.py", 0.9, "approve"),
        labelled("c9", "Implemented function k in a.py", 0.9, "approve"),  # a commit this run did not extract
    ]
    rows = [
        {**labelled("c1", "Changed the signature of function f in a.py: a: int (was a)", 0.7, ""), "kind": "signature"},
        {**labelled("c2", "Implemented function h in a.py", 0.9, ""), "kind": "new_symbol"},
    ]
    labels.append(labelled("c3", "Changed the signature of function m in a.py: b (was b: int)", 0.9, "reject"))
    now = bench.as_now(labels, rows, {("r", "c1"), ("r", "c2"), ("r", "c3")})
    assert now["dropped"] == {"reject": 2}  # c3 gives no candidate now
    assert now["score"]["confident"] == {"n": 1, "approved": 1, "share": 1.0}
    assert now["score"]["needs_approval"] == {"n": 1, "approved": 0, "share": 0.0}
    assert bench.as_now(labels, [], set())["score"] is None
