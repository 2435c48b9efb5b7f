"""Which files changed since an index: the one walk of the tree (``KnowledgeGraph.tracked``:
each source file with the time and size ``lstat`` gives), and what an index of the
changed tree reports for each kind of change."""

from __future__ import annotations

import os
from pathlib import Path

import aircher_mem as am
import aircher_mem.graph as graph_module
import pytest
from aircher_mem.engine import KnowledgeGraph

TREE = {
    "app/a.py": "def a():\n    return 1\n",
    "app/b.py": "def b():\n    return 2\n",
    "app/c.py": "def c():\n    return 3\n",
    "app/d.py": "def d():\n    return 4\n",
    "app/f.py": "x = 1\n",
    "app/sub/e.py": "def e():\n    return 5\n",
    "app/sub/local/x.py": "def ignored():\n    pass\n",
    "app/sub/.gitignore": "local/\n",
    "app/keep.gen.py": "def kept():\n    pass\n",
    "app/other.gen.py": "def generated():\n    pass\n",
    "app/tool": "#!/usr/bin/env python3\ndef tool():\n    pass\n",
    "app/notes.txt": "not code\n",
    "app/plot.R": "plot(1)\n",
    ".cache/h.py": "def hidden():\n    pass\n",
    "node_modules/dep/index.js": "function dep() {}\n",
    ".gitignore": "*.gen.py\n!keep.gen.py\n",
}


def write_tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def later(path: Path, seconds: int) -> None:
    """Moves ``path``'s modification time ``seconds`` on (its content unchanged)."""
    info = path.stat()
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns + seconds * 1_000_000_000))


def test_tracked_is_the_scan_with_each_file_as_lstat_sees_it(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "repo", TREE)
    (root / "app" / "big.py").write_text("x = 1\n" * 200_000)  # over discover's default limit: still tracked
    (root / "app" / "link.py").symlink_to(root / "app" / "a.py")
    (root / "app" / "linked").symlink_to(root / "app" / "sub", target_is_directory=True)
    paths, mtimes, sizes, unsupported = KnowledgeGraph.tracked(root)
    assert paths == [
        "app/a.py",
        "app/b.py",
        "app/big.py",
        "app/c.py",
        "app/d.py",
        "app/f.py",
        "app/keep.gen.py",
        "app/sub/e.py",
        "app/tool",
    ]
    assert unsupported == {"R": 1}
    assert paths == KnowledgeGraph.discover(root, max_file_bytes=2**64 - 1)[0]
    assert "app/big.py" not in KnowledgeGraph.discover(root)[0]
    assert len(mtimes) == len(sizes) == len(paths)
    for rel, mtime_ns, size in zip(paths, mtimes, sizes):
        info = os.lstat(root / rel)
        assert (mtime_ns, size) == (info.st_mtime_ns, info.st_size), rel
    assert graph_module.tracked_files(root) == (paths, {"R": 1})


def test_each_kind_of_change_is_found_by_the_next_index(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "repo", TREE)
    app = root / "app"
    with am.Memory.open(root) as memory:
        first = memory.index()
        assert first.full and first.files == 8
        (app / "new.py").write_text("def new():\n    pass\n")  # added
        (app / "b.py").unlink()  # removed
        (app / "c.py").write_text("def c():\n    return 33\n")  # edited, another size
        (app / "f.py").write_text("x = 2\n")  # edited, the same size
        later(app / "f.py", 10)
        (app / "d.py").rename(app / "d2.py")  # renamed
        later(app / "a.py", 5)  # touched, the same content
        (app / "sub" / "local" / "y.py").write_text("def y():\n    pass\n")  # in an ignored folder
        (app / "sub" / "local2").mkdir()
        (app / "sub" / "local2" / "z.py").write_text("def z():\n    pass\n")  # beside it, not ignored
        (app / "more.gen.py").write_text("def more():\n    pass\n")  # ignored by a pattern
        (app / "again.gen.py").write_text("def again():\n    pass\n")
        (root / ".gitignore").write_text("*.gen.py\n!keep.gen.py\n!again.gen.py\n")  # let through again
        (app / "sub" / "e.py").unlink()
        (app / "sub" / "e.py").symlink_to(app / "a.py")  # a file turned into a symlink
        (app / "link.py").symlink_to(app / "a.py")  # a new symlink: not a file of the project
        (root / ".cache" / "h2.py").write_text("def hidden2():\n    pass\n")  # hidden folder
        report = memory.index()
        assert not report.full
        assert report.added == ["app/again.gen.py", "app/d2.py", "app/new.py", "app/sub/local2/z.py"]
        assert report.updated == ["app/c.py", "app/f.py"]
        assert report.removed == ["app/b.py", "app/d.py", "app/sub/e.py"]
        assert report.parsed == 6  # the added and the edited; the touched one is hashed, not parsed
        assert memory.graph.files == [
            "app/a.py",
            "app/again.gen.py",
            "app/c.py",
            "app/d2.py",
            "app/f.py",
            "app/keep.gen.py",
            "app/new.py",
            "app/sub/local2/z.py",
            "app/tool",
        ]
        again = memory.index()
        assert (again.added, again.updated, again.removed, again.parsed) == ([], [], [], 0)


def test_an_unchanged_tree_is_checked_without_a_second_look_at_each_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The walk's ``lstat`` of each file is the check: the index does not look at
    each file again from Python."""
    root = write_tree(tmp_path / "repo", TREE)
    looked: list[str] = []
    stat = graph_module._stat

    def counted(path: Path) -> tuple[int, int] | None:
        looked.append(str(path))
        return stat(path)

    with am.Memory.open(root) as memory:
        memory.index()
        monkeypatch.setattr(graph_module, "_stat", counted)
        report = memory.index()
        assert (report.full, report.parsed, report.added, report.updated, report.removed) == (False, 0, [], [], [])
        assert looked == []
        (root / "app" / "a.py").write_text("def a():\n    return 111\n")
        assert memory.index().updated == ["app/a.py"]
        assert looked == [str(root.resolve() / "app" / "a.py")] * 2  # its fingerprint, then the check after parsing
