"""Hostile files met by `aircher-mem index`: random bytes in a language's file (cut
off within the per-file budget, with a warning, or skipped as binary), and a skipped
file replaced by a symlink out of the project (skipped, never read; the manifest
reported as not matching until the next index)."""

from __future__ import annotations

import io
import json
import logging
import os
import random
from pathlib import Path

import aircher_mem as am
import pytest
from aircher_mem.interfaces.cli import main


def run(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    code = main(list(argv), stdout=out)
    return code, out.getvalue()


def run_json(*argv: str) -> dict[str, object]:
    code, text = run(*argv, "--json")
    assert code == 0, text
    data = json.loads(text)
    assert isinstance(data, dict)
    return data


def _doctor_graph(root: Path) -> tuple[str, str]:
    report = run_json("doctor", "--root", str(root))
    checks = report["checks"]
    assert isinstance(checks, list)
    (graph,) = [c for c in checks if c["check"] == "graph"]
    return graph["status"], graph["detail"]


def _noise(size: int, seed: int) -> bytes:
    """Random bytes without NUL (a NUL alone makes a file binary)."""
    rng = random.Random(seed)
    return bytes(rng.randrange(1, 256) for _ in range(size))


def test_random_bytes_in_lua_and_scala_are_skipped_as_binary_with_why(tmp_path: Path) -> None:
    """500 KB of random bytes as a .lua and a .scala file: skipped as binary, saying
    why (before, they were parsed: Lua's parse ran out its 10 s budget); the other
    files are indexed."""
    root = tmp_path / "project"
    root.mkdir()
    (root / "a.py").write_text("def f():\n    return 1\n")
    noise = _noise(500_000, 20_240_501)
    (root / "noise.lua").write_bytes(noise)
    (root / "noise.scala").write_bytes(noise)
    why = "binary (877 control and 3535 invalid UTF-8 bytes in the first 8192 bytes)"
    report = run_json("index", str(root))
    assert report["skipped"] == [["noise.lua", why], ["noise.scala", why]]
    assert (report["warnings"], report["files"]) == ([], 1)
    code, text = run("index", str(root))
    assert code == 0 and "skipped 2: noise.lua (binary (" in text


@pytest.mark.parametrize(
    ("content", "why"),
    [(b"x = 1\0\n", "binary (NUL byte)"), (b"x = 1\n" + b"#" * 1_000_001, "larger than 1000000 bytes (1000007 bytes)")],
    ids=["binary", "too-large"],
)
def test_a_skipped_file_turned_into_a_symlink_out_is_skipped_and_index_goes_on(
    tmp_path: Path, content: bytes, why: str, caplog: pytest.LogCaptureFixture
) -> None:
    root = tmp_path / "project"
    root.mkdir()
    outside = tmp_path / "outside.py"
    outside.write_text("SECRET_OUTSIDE = 1\n")
    (root / "a.py").write_text("def f():\n    return 1\n")
    (root / "b.py").write_bytes(content)
    first = run_json("index", str(root))
    assert (first["added"], first["skipped"]) == (["a.py", "b.py"], [["b.py", why]])
    assert _doctor_graph(root)[0] == "ok"

    (root / "b.py").unlink()
    os.symlink(outside, root / "b.py")
    status, detail = _doctor_graph(root)
    assert status == "warn"
    assert detail.endswith("manifest does not match 1 file(s) (b.py: a symlink now): run aircher-mem index")

    with caplog.at_level(logging.WARNING, logger="aircher_mem.graph"):
        second = run_json("index", str(root))
    assert (second["full"], second["added"], second["updated"], second["removed"]) == (False, [], [], ["b.py"])
    assert (second["skipped"], second["warnings"]) == ([], [])
    assert [r.getMessage() for r in caplog.records if r.name == "aircher_mem.graph"] == [
        "b.py is a symlink now: skipped, not read (removed from the graph)"
    ]
    assert run("index", str(root), "--quiet")[0] == 0
    assert _doctor_graph(root) == ("ok", _doctor_graph(root)[1])
    assert _doctor_graph(root)[1].endswith("manifest matches")
    with am.Memory.open(root) as memory:
        assert memory.graph.files == ["a.py"]
        assert memory.search_code("SECRET_OUTSIDE").hits == []
