"""Memory: the store in <root>/.aircher/, incremental indexing by modification time and
hash, the pieces wired together, paths confined to the root, flushing on close."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

import aircher_mem as am
import aircher_mem.graph
import pytest
from aircher_mem import _core
from aircher_mem.engine import ContextItemType, DynamicContextManager, KnowledgeGraph
from aircher_mem.errors import UnknownItemError
from aircher_mem.results import Conversation, Recorded
from conftest import PROJECT, PROJECT_SOURCES, duckdb_held_by_another_process, write_files
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st


def columns(files: dict[str, Any]) -> dict[str, list[Any]]:
    """A manifest's files (layout 3) as a list per column."""
    paths = files["paths"]
    return {
        "paths": paths.split("\0") if paths else [],
        "mtimes": list(files["mtimes"]),
        "sizes": list(files["sizes"]),
        "digests": files["digests"].split(",") if paths else [],
    }


def layout(files: dict[str, list[Any]]) -> dict[str, Any]:
    """:func:`columns` as layout 3 keeps them."""
    return {
        "paths": "\0".join(map(str, files["paths"])),
        "mtimes": files["mtimes"],
        "sizes": files["sizes"],
        "digests": ",".join(map(str, files["digests"])),
    }


def test_open_creates_the_store_and_refuses_what_is_not_a_project(project: Path, tmp_path: Path) -> None:
    with pytest.raises(am.StoreNotFoundError, match="no aircher-mem store in"):
        am.Memory.open(project, create=False)
    assert not (project / ".aircher").exists()  # refusing created nothing
    with am.Memory.open(project) as memory:
        assert memory.root == project.resolve()
        assert (project / ".aircher" / "config.toml").is_file()
        assert am.Policy.load(project) == am.Policy() == memory.policy
        assert not memory.indexed
        with pytest.raises(am.NotIndexedError, match="has not been indexed yet"):
            memory.graph
        memory.episodic.flush()
        assert (project / ".aircher" / "memory.duckdb").is_file()
    am.Memory.open(project, create=False).close()
    with pytest.raises(am.InvalidInputError, match="is not a directory"):
        am.Memory.open(tmp_path / "absent")
    (project / ".aircher" / "config.toml").write_text("[context]\nmax_tokens = -1\n")
    with pytest.raises(am.PolicyError, match="max_tokens"):
        am.Memory.open(project)


def test_first_index_builds_and_later_ones_parse_only_changed_files(project: Path) -> None:
    with am.Memory.open(project) as memory:
        first = memory.index()
        assert (first.full, first.reason, first.files, first.parsed) == (True, "first index", 4, 4)
        assert first.added == PROJECT_SOURCES and first.updated == first.removed == []
        assert [s.path for s in memory.graph.find_symbol("generated")] == []  # .gitignore'd
        manifest = json.loads((project / ".aircher" / "files.json").read_text())
        assert manifest["version"] == 3 and manifest["files"]["paths"] == "\0".join(PROJECT_SOURCES)
        graph_mtime = (project / ".aircher" / "graph.bin").stat().st_mtime_ns

        again = memory.index()
        assert (again.full, again.parsed, again.added, again.updated, again.removed) == (False, 0, [], [], [])
        assert (project / ".aircher" / "graph.bin").stat().st_mtime_ns == graph_mtime  # nothing to save

        # A new modification time with the same content: hashed, not parsed.
        stat = (project / "app/util.py").stat()
        os.utime(project / "app/util.py", ns=(stat.st_atime_ns, stat.st_mtime_ns + 5_000_000_000))
        touched = memory.index()
        assert (touched.parsed, touched.updated) == (0, [])

        (project / "app/util.py").write_text(
            "def helper():\n    return store(2)\n\ndef extra():\n    return helper()\n"
        )
        (project / "app/new.py").write_text("def fresh():\n    return create()\n")
        (project / "app/views.py").unlink()
        changed = memory.index()
        assert (changed.full, changed.parsed) == (False, 2)
        assert (changed.added, changed.updated, changed.removed) == (["app/new.py"], ["app/util.py"], ["app/views.py"])
        assert changed.files == 4
        assert sorted(c.symbol.name for c in memory.graph.get_callers("store")) == ["helper", "save"]
        assert memory.graph.find_symbol("create") == []
        with pytest.raises(UnknownItemError):
            memory.graph.get_file_contents("app/views.py")
        # incrementally updated == built from scratch, edge for edge
        assert memory.graph.edges() == KnowledgeGraph.build(project).edges()

        (project / ".gitignore").write_text("")  # generated/ is no longer ignored
        unignored = memory.index()
        assert (unignored.added, unignored.parsed) == (["generated/gen.py"], 1)
        assert [s.path for s in memory.graph.find_symbol("generated")] == ["generated/gen.py"]

    with am.Memory.open(project) as reopened:  # graph and manifest persisted together
        assert reopened.rebuild_reason() == ""
        assert reopened.graph.edges() == KnowledgeGraph.build(project).edges()
        assert reopened.index().parsed == 0


def test_an_index_not_held_saves_the_same_store_and_loads_it_when_used(project: Path) -> None:
    (project / "app/blob.py").write_bytes(b"x = 1\0")
    store = project / ".aircher"
    with am.Memory.open(project) as memory:
        memory.index()
        held = memory.index(full=True)
        saved = {name: (store / name).read_bytes() for name in ("graph.bin", "graph.lexical")}
        manifest = json.loads((store / "files.json").read_text())
        edges = memory.graph.edges()
        streamed = memory.index(full=True, hold=False)
        assert dataclasses.replace(streamed, seconds=0) == dataclasses.replace(held, seconds=0)
        assert (streamed.full, streamed.files, streamed.parsed) == (True, 4, 4)
        assert [p for p, _ in streamed.skipped] == ["app/blob.py"]
        assert {name: (store / name).read_bytes() for name in saved} == saved
        assert json.loads((store / "files.json").read_text())["files"] == manifest["files"]
        assert memory.graph.edges() == edges  # read back from the store
        (project / "app/util.py").write_text("def helper():\n    return store(3)\n")
        assert memory.index(hold=False).updated == ["app/util.py"]  # an update is kept as ever
        assert sorted(c.symbol.name for c in memory.graph.get_callers("store")) == ["helper", "save"]


def test_an_index_not_held_of_an_unchanged_tree_does_not_wait_for_the_graph(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nothing changed and the graph not kept (``hold=False``, the CLI's index): the
    report comes from the summary the manifest keeps of the graph saved, equal to
    the report of an index that loads the graph, and the graph is loaded when used,
    not before (no load is begun beside the look). A manifest without the summary
    (an older version's) loads the graph to report."""
    (project / "app/blob.py").write_bytes(b"x = 1\0")
    (project / "app/b.c").write_text(
        "template <typename T> T twice(T x) { return x + x; }\nint g(void) { return 1; }\n"
    )
    manifest = project / ".aircher" / "files.json"
    with am.Memory.open(project) as memory:
        memory.index()
    with am.Memory.open(project) as memory:
        loaded = dataclasses.replace(memory.index(), seconds=0)
    assert [p for p, _ in loaded.skipped] == ["app/blob.py"] and [p for p, _ in loaded.warnings] == ["app/b.c"]
    assert json.loads(manifest.read_text())["summary"] == {
        "files": loaded.files,
        "skipped": [1, "app/blob.py", loaded.skipped[0][1]],
        "warnings": [1, "app/b.c", loaded.warnings[0][1]],
    }
    os.utime(project / "app/util.py", ns=(1, 1))  # moved in time, same content: not an update
    graph_file = (project / ".aircher" / "graph.bin").stat()
    for summary in (True, False):
        if not summary:
            data = json.loads(manifest.read_text())
            del data["summary"]
            manifest.write_text(json.dumps(data))
        with am.Memory.open(project) as memory:
            monkeypatch.setattr(aircher_mem.graph, "_Loading", None)  # a load begun would fail the index
            report = memory.index(hold=False)
            monkeypatch.undo()
            assert dataclasses.replace(report, seconds=0) == loaded
            assert (memory._index._graph is None) == summary
            assert [d.path for d in memory.graph.find_symbol("helper")] == ["app/util.py"]
        written = json.loads(manifest.read_text())  # its times, and its summary again: the graph as it was
        files = columns(written["files"])
        assert files["mtimes"][files["paths"].index("app/util.py")] == 1 and "summary" in written
        assert (project / ".aircher" / "graph.bin").stat().st_mtime_ns == graph_file.st_mtime_ns


# (name, prefix, fuzzy) asked of find_symbol, and the qualified names of what each finds
FIND_ASKED = [("save", False, False), ("User.save", False, False), ("s", True, False), ("usr", False, True)]
FIND_EXPECTED = [
    ["app/models.py:5 User.save"],
    ["app/models.py:5 User.save"],
    ["app/models.py:5 User.save", "app/models.py:8 .store"],
    ["app/models.py:4 .User"],
    [
        "app/models.py:1 .Base",
        "app/models.py:4 .User",
        "app/models.py:5 User.save",
        "app/models.py:8 .store",
    ],  # the outline
]
# What refers to definitions, what they call, what files import, and what is near, as
# the view and the loaded graph both answer: "path:line kind scope.name confidence"
RELATED_EXPECTED = [
    ["app/views.py:5 calls .create 1.0"],  # callers("User.save")
    ["app/models.py:6 calls .store 1.0"],  # callees("save")
    ["app/models.py:4 calls .User 1.0", "app/models.py:5 calls User.save 1.0"],  # callees("create")
    ["app/views.py:1 references .app.models 1.0", "app/views.py:4 calls .create 1.0"],  # references("User")
    ["app/models.py:6 calls User.save 1.0"],  # references("store", kind="calls")
    [["app/models.py"], []],  # dependencies("app/views.py")
    [[], ["app/views.py"]],  # dependencies("app/models.py")
    [  # neighbourhood("save", hops=2): "distance path:line kind name"
        "0 app/models.py:5 function save",
        "1 app/models.py:4 class User",
        "1 app/models.py:8 function store",
        "1 app/views.py:3 function create",
        "2 app/models.py:1 class Base",
        "2 app/models.py:1 file app/models.py",
        "2 app/views.py:1 import app.models",
        "2 app/views.py:1 file app/views.py",
    ],
]


def related(memory: am.Memory) -> list[list[Any]]:
    """The answers RELATED_EXPECTED holds, asked of ``memory``."""
    out: list[list[Any]] = []
    asked = [
        memory.callers("User.save").calls,
        memory.callees("save").calls,
        memory.callees("create").calls,
        memory.references("User").references,
        memory.references("store", kind="calls").references,
    ]
    for calls in asked:
        out.append(
            [f"{c.symbol.path}:{c.call_line} {c.kind} {c.symbol.scope}.{c.symbol.name} {c.confidence}" for c in calls]
        )
    for path in ("app/views.py", "app/models.py"):
        found = memory.dependencies(path)
        out.append([found.dependencies, found.dependents])
    near = memory.neighbourhood("save", hops=2).symbols
    out.append([f"{n.distance} {n.symbol.path}:{n.symbol.line} {n.symbol.kind} {n.symbol.name}" for n in near])
    return out


def test_a_first_search_reads_the_saved_graph_in_place(project: Path, tmp_path: Path) -> None:
    """A process that has not loaded the graph answers a search, ``find_symbol``,
    ``file_definitions``, the verbs that follow edges (callers, callees,
    references, dependencies, neighbourhood), an assembly's prediction and
    ``prepare_context`` from the graph as saved (its view, searched where it lies)
    once a look finds the tree as indexed: the same hits, scores and code as the
    loaded graph gives, at both levels, the same definitions, and the graph is not
    loaded. A view missing, damaged or of another save has the
    graph loaded, with the same answers, and saved again with a view; a changed
    file is indexed first."""
    with am.Memory.open(project) as memory:
        memory.index()
    asked = [("store the user", "definition"), ("helper in app/util.py", "file"), ("User.save", "definition")]

    def answers(memory: am.Memory) -> list[dict[str, object]]:
        return [dataclasses.asdict(memory.search_code(text, level=level)) for text, level in asked]  # type: ignore[arg-type]

    def found(memory: am.Memory) -> list[dict[str, object]]:  # definitions by name, outlines, edges
        named = [memory.find_symbol(n, prefix=p, fuzzy=f) for n, p, f in FIND_ASKED]
        edges = related(memory)
        assert edges == RELATED_EXPECTED
        return [
            *(dataclasses.asdict(a) for a in (*named, memory.file_definitions("app/models.py"))),
            {"related": edges},
        ]

    with am.Memory.open(project) as memory:
        defined = found(memory)
        assert not memory._index.loaded
        saved = answers(memory)
        assert not memory._index.loaded
        assert answers(memory) == saved and not memory._index.loaded  # the view kept
        # An assembly (a hook's) predicts from the current file's imports, in place.
        assembled = memory.assemble(query="store the user", current_file="app/views.py")
        assert not memory._index.loaded
        assert [f.path for f in assembled.prediction.files] == ["app/views.py", "app/models.py"]
        assert "app/models.py (0.30: imports)" in assembled.context
        # The agent loop's call, and its preview: the window's code from the view.
        messages = memory.prepare_context("store the user")
        assert [m["content"].split("\n")[0] for m in messages[1:]] == [
            "[code: app/models.py lines 5-6]",
            "[code: app/models.py lines 8-9]",
            "[code: app/views.py lines 3-6]",
        ]
        assert memory.preview_context("store the user").items and not memory._index.loaded
        assert memory.graph.file_count == 4 and memory._index.loaded
        assert answers(memory) == saved  # from the graph loaded
        assert found(memory) == defined
        again = memory.assemble(query="store the user", current_file="app/views.py")
        assert (again.context, again.prediction) == (assembled.context, assembled.prediction)
    where = [[f"{s['path']}:{s['line']} {s['scope']}.{s['name']}" for s in a["symbols"]] for a in defined[:-1]]  # type: ignore[index]
    assert where == FIND_EXPECTED
    assert [h["name"] for h in saved[0]["hits"]][:2] == ["save", "store"]  # type: ignore[index]
    store = project / ".aircher"
    kept = tmp_path / "kept"
    kept.mkdir()
    names = ("graph.bin", "graph.lexical", "graph.view", "files.json")
    for name in names:
        shutil.copy2(store / name, kept / name)
    good = (kept / "graph.view").read_bytes()
    other = bytearray(good)
    other[16] ^= 1  # the checksum of another graph file
    flipped = bytearray(good)
    flipped[len(good) // 2] ^= 1  # a block that fails its checksum where the search reads
    before = good[:8] + (1).to_bytes(4, "little") + good[12:]  # the format before (no names section)
    for damaged in (None, good[:50], good[: len(good) // 2], bytes(other), bytes(flipped), before):
        for name in names:  # the store as the index left it (times too: the manifest names them)
            shutil.copy2(kept / name, store / name)
        if damaged is None:
            (store / "graph.view").unlink()
        else:
            (store / "graph.view").write_bytes(damaged)
        with am.Memory.open(project) as memory:
            assert found(memory) == defined
            assert answers(memory) == saved
            assert memory._index.loaded
        with am.Memory.open(project) as memory:  # the look saved the graph again, with its view
            assert [a["hits"] for a in answers(memory)] == [a["hits"] for a in saved]
            assert found(memory) == defined
            assert not memory._index.loaded
    (project / "app/util.py").write_text("def helper():\n    return 1\n\ndef fresh_four():\n    return 4\n")
    with am.Memory.open(project) as memory:
        assert memory.search_code("fresh_four").hits[0].name == "fresh_four"
        assert memory._index.loaded  # loaded to index the change
    with am.Memory.open(project) as memory:
        assert memory.search_code("fresh_four").hits[0].name == "fresh_four"  # the view written with it
        assert not memory._index.loaded


def test_a_look_and_a_search_open_the_saved_graph_once(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The view of a graph file is opened once however often it is asked for (the
    search, the look's check that it is there); a look that finds a change loads
    the graph, and the view is not read."""
    with am.Memory.open(project) as memory:
        memory.index()
    opened: list[Path] = []
    real = aircher_mem.graph.GraphView.open

    def spy(path: Path, *, root: Path) -> _core.GraphView:
        opened.append(path)
        return real(path, root=root)

    monkeypatch.setattr(aircher_mem.graph.GraphView, "open", spy)
    with am.Memory.open(project) as memory:
        memory.search_code("store the user")
        memory.search_code("helper")
        assert len(opened) == 1 and not memory._index.loaded
    (project / "app/util.py").write_text("def helper():\n    return 2\n\ndef fresh_five():\n    return 3\n")
    with am.Memory.open(project) as memory:
        opened.clear()
        assert memory.search_code("fresh_five").hits[0].name == "fresh_five"  # indexed first: the graph loaded
        assert memory._index.loaded and len(opened) == 1  # the view of the file before, not read


@pytest.mark.parametrize(
    "summary",
    [
        None,
        [],
        {"files": -1, "skipped": [], "warnings": []},
        {"files": True, "skipped": [], "warnings": []},
        {"files": 4, "skipped": [["a"]], "warnings": []},
        {"files": 4, "skipped": [], "warnings": [["a", 1]]},
        {"files": 4, "skipped": "none", "warnings": []},
        {"files": 4, "skipped": []},
        {"files": 4, "skipped": [0, "", ""], "warnings": [2, "a\0b", "why"]},
        {"files": 4, "skipped": [1, "a", ""], "warnings": [0, "", "why"]},
        {"files": 4, "skipped": [0, "", ""], "warnings": [True, "a", "b"]},
        {"files": 4, "skipped": [0, "", ""], "warnings": [1, ["a"], "b"]},
    ],
)
def test_a_summary_of_the_wrong_shape_has_the_graph_loaded_to_report(project: Path, summary: object) -> None:
    with am.Memory.open(project) as memory:
        memory.index()
        loaded = dataclasses.replace(memory.index(), seconds=0)  # of the unchanged tree
    manifest = project / ".aircher" / "files.json"
    data = json.loads(manifest.read_text())
    data["summary"] = summary
    manifest.write_text(json.dumps(data))
    with am.Memory.open(project) as memory:
        assert dataclasses.replace(memory.index(hold=False), seconds=0) == loaded
        assert memory._index._graph is not None  # loaded: the summary was not trusted
    assert json.loads(manifest.read_text())["summary"] == {"files": 4, "skipped": [0, "", ""], "warnings": [0, "", ""]}


def test_the_manifest_is_parsed_again_only_when_its_file_changed(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A look reads the manifest; the same file (inode, time, size) is parsed once per
    process, each caller given its own copy of what it may change; a file put in its
    place is read anew."""
    with am.Memory.open(project) as memory:
        memory.index()
        index = memory._index
        parsed: list[int] = []
        parse = index._parse_manifest
        monkeypatch.setattr(index, "_parse_manifest", lambda graph: parsed.append(1) or parse(graph))
        first = index._read_manifest()
        assert first.files is not None and first.summary is not None
        first.summary[1].append(("x", "y"))  # a caller's change stays its own
        first.unsupported["X"] = 1
        again = index._read_manifest()
        assert again.files is not None and again.summary is not None
        assert (len(parsed), len(again.files.fingerprints()), again.summary[1], again.unsupported) == (1, 4, [], {})
        manifest = project / ".aircher" / "files.json"
        data = json.loads(manifest.read_text())
        files = columns(data["files"])
        at = files["paths"].index("app/util.py")
        for column in files.values():
            del column[at]
        data["files"] = layout(files)
        written = manifest.with_name("files.json.new")
        written.write_text(json.dumps(data))
        os.replace(written, manifest)  # another writer's manifest
        read = index._read_manifest()
        assert read.files is not None and "app/util.py" not in read.files.fingerprints() and len(parsed) == 2
        assert memory.index().added == ["app/util.py"]


def test_a_look_for_changed_files_that_is_due_runs_after_the_answer(project: Path) -> None:
    """With ``[server] refresh_after_answer``, once ``refresh_seconds`` have passed
    (0 here: always), a graph query answers from the graph as it is and the look
    runs right after it on a thread of its own; after a recorded edit, and with
    ``refresh_after_answer`` off (the default), the look comes first."""

    def names(memory: am.Memory, text: str) -> list[str | None]:
        return [h.name for h in memory.search_code(text).hits if h.name == text]

    util = project / "app/util.py"
    later = am.Policy.from_dict({"server": {"refresh_seconds": 0, "refresh_after_answer": True}})
    with am.Memory.open(project, policy=later) as memory:
        memory.index()
        util.write_text("def helper():\n    return 1\n\ndef fresh_one():\n    return 2\n")
        assert names(memory, "fresh_one") == []  # answered from the graph as it was
        refreshing = memory._refreshing
        assert refreshing is not None and refreshing.name == "aircher-mem-graph-refresh"
        refreshing.join(30)
        assert names(memory, "fresh_one") == ["fresh_one"]  # what the look after found
        util.write_text("def helper():\n    return 1\n\ndef fresh_two():\n    return 33\n")  # (another size)
        memory.record_file_interaction("app/util.py", "edit")
        assert names(memory, "fresh_two") == ["fresh_two"]  # a recorded edit: the look first
    first = am.Policy.from_dict({"server": {"refresh_seconds": 0}})
    with am.Memory.open(project, policy=first) as memory:
        memory.index()
        util.write_text("def helper():\n    return 1\n\ndef fresh_three():\n    return 444\n")
        assert names(memory, "fresh_three") == ["fresh_three"]
        assert memory._refreshing is None


def test_a_walk_made_before_is_used_only_while_the_manifest_is_as_it_was(project: Path) -> None:
    """A look after an answer walks the tree without the memory's lock and indexes
    what it found under it: a manifest written between the two (a file indexed
    meanwhile, which that walk has not seen) has the tree walked again, so nothing
    indexed is taken for removed."""
    with am.Memory.open(project) as memory:
        memory.index()
        walked = memory._index.scan()
        (project / "app/extra.py").write_text("def extra():\n    return 5\n")
        assert memory.index().added == ["app/extra.py"]  # the manifest, written since the walk
        report = memory._index.index(scanned=walked)
        assert (report.added, report.removed) == ([], []) and "app/extra.py" in memory.graph.files
        walked = memory._index.scan()  # the manifest as it is: the walk is used
        (project / "app/later.py").write_text("def later():\n    return 6\n")
        assert memory._index.index(scanned=walked).added == []
        assert memory.index().added == ["app/later.py"]  # found by the next look


def test_a_file_skipped_for_its_size_is_not_counted_as_parsed(project: Path) -> None:
    (project / ".aircher").mkdir()
    (project / ".aircher" / "config.toml").write_text("[graph]\nmax_file_bytes = 200\n")
    (project / "app/big.py").write_text("x = 1\n" * 100)  # 600 bytes
    with am.Memory.open(project) as memory:
        first = memory.index()
        assert [p for p, _ in first.skipped] == ["app/big.py"]
        assert (first.files, first.parsed) == (4, 4)
        (project / "app/big.py").write_text("x = 2\n" * 100)
        (project / "app/util.py").write_text("def helper():\n    return 2\n")
        again = memory.index()
        assert [p for p, _ in again.skipped] == ["app/big.py"]
        assert (again.full, again.files, again.parsed) == (False, 4, 1)


def test_damaged_graph_or_manifest_leads_to_a_full_rebuild(project: Path) -> None:
    with am.Memory.open(project) as memory:
        memory.index()
    graph = project / ".aircher" / "graph.bin"
    stat = graph.stat()
    data = bytearray(graph.read_bytes())
    data[len(data) // 2] ^= 0xFF  # same size and time: only the checksum can tell
    graph.write_bytes(bytes(data))
    os.utime(graph, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    with am.Memory.open(project) as memory:
        with pytest.raises(am.StoreCorruptError):
            memory.graph
        report = memory.index()
        assert report.full and report.reason.startswith("graph file unreadable") and report.files == 4
        assert [s.name for s in memory.graph.get_file_contents("app/util.py")] == ["helper"]

    (project / ".aircher" / "files.json").write_text("{not json")
    with am.Memory.open(project) as memory:
        assert memory.rebuild_reason().startswith("unreadable manifest")
        report = memory.index()
        assert report.full and report.reason.startswith("unreadable manifest")
        assert (report.added, report.removed) == (PROJECT_SOURCES, [])  # nothing to compare with
        assert memory.rebuild_reason() == ""

    # A graph written by someone else since the manifest: the pair is not trusted.
    os.utime(graph, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1))
    with am.Memory.open(project) as memory:
        report = memory.index()
        assert report.full and "graph file written since the manifest" in report.reason
        assert (report.added, report.updated, report.removed) == (PROJECT_SOURCES, [], [])


def test_an_index_written_by_another_process_replaces_the_graph_held_in_memory(project: Path) -> None:
    with am.Memory.open(project) as server, am.Memory.open(project) as cli:
        server.index()
        assert server.graph.find_symbol("fresh") == []
        (project / "app/new.py").write_text("def fresh():\n    return 1\n")
        assert cli.index().added == ["app/new.py"]  # graph.bin and manifest rewritten
        report = server.index()
        assert (report.full, report.parsed, report.added) == (False, 0, [])  # the pair on disk is current
        assert [s.path for s in server.graph.find_symbol("fresh")] == ["app/new.py"]


def test_paths_are_confined_to_the_root(project: Path, tmp_path: Path) -> None:
    (tmp_path / "secret.py").write_text("KEY = 1\n")
    os.symlink(tmp_path / "secret.py", project / "app" / "link.py")
    with am.Memory.open(project) as memory:
        assert memory.relative("app/models.py") == "app/models.py"
        assert memory.relative("./app/../app/models.py") == "app/models.py"
        assert memory.relative(project / "app" / "models.py") == "app/models.py"
        assert memory.relative("app/not-yet.py") == "app/not-yet.py"  # need not exist
        for outside in (
            "../secret.py",
            str(tmp_path / "secret.py"),
            "/etc/passwd",
            "app/link.py",
            "app/../../secret.py",
        ):
            with pytest.raises(am.InvalidInputError, match="is outside the project root"):
                memory.relative(outside)
        for bad in ("", "  ", ".", "a\0b"):
            with pytest.raises(am.InvalidInputError):
                memory.relative(bad)


def test_names_say_window_for_the_window_and_context_only_for_what_a_model_gets(project: Path) -> None:
    with am.Memory.open(project) as memory:
        assert isinstance(memory.window, DynamicContextManager) and memory.window is memory.window
        assert memory.new_window(max_tokens=100).window.max_tokens == 100 and memory.window.window.max_tokens != 100
        assert memory.conversation("s1") == Conversation("s1", [], [])
        assert [name for name in dir(memory) if "context" in name] == [
            "prepare_context",
            "preview_context",
            "route_context",
        ]


def test_window_is_wired_to_the_graph_and_the_episodic_store(project: Path) -> None:
    with am.Memory.open(project) as memory:
        memory.index()
        memory.episodic.start_task("t0", "make store persist users")
        memory.episodic.complete_task("t0", "store now writes to disk")
        manager = memory.window
        assert manager is memory.window and manager.episodic is memory.episodic
        messages = manager.prepare_context("why does store lose users?")
        contents = [m["content"] for m in messages]
        assert contents[0] == "why does store lose users?"
        assert any(c.startswith("[code: app/models.py lines 8-9]\ndef store(obj):") for c in contents)
        assert contents[-1] == (
            "## Relevant\n- Past task t0 (completed): make store persist users -> store now writes to disk"
        )

        # a tiny window prunes; the pruned code goes to the store as a "viewed" interaction
        small = memory.new_window(max_tokens=20, code_tokens=200)
        messages = small.prepare_context("store save User create helper")
        assert small.last_prune is not None
        # the message survives its own prune; only it may hold the window over the threshold
        assert [m["content"] for m in messages if m["content"] == "store save User create helper"]
        assert small.window.token_count - small.tokens.count("store save User create helper") <= small.window.threshold
        viewed = [f for f in memory.episodic.last_interactions("app/") if f.operation == "viewed"]
        assert viewed and memory.episodic.snapshots(1)[0]["reason"] == "pruning"

        preview = memory.new_window(max_tokens=20, code_tokens=200, record=False)
        before = memory.episodic.counts()
        preview.prepare_context("store save User create helper")
        assert memory.episodic.counts() == before  # a preview records nothing

    with pytest.raises(am.InvalidInputError, match="max_tokens"):
        with am.Memory.open(project) as memory:
            memory.relevant_code("store", max_tokens=0)


def test_the_agent_loop_prepares_the_context_and_records_tool_calls_into_it(project: Path) -> None:
    with am.Memory.open(project, policy=am.Policy(max_tokens=4000)) as memory:
        memory.index()
        first = memory.prepare_context("why does store lose users?")
        assert first[0] == {"role": "user", "content": "why does store lose users?"}
        assert memory.window.window.items()[0].type_name == "UserMessage"

        recorded = memory.record_tool_call(
            "pytest",
            {"args": "-x"},
            success=False,
            result="1 failed, 2 passed",
            error_message="1 failed",
            duration_ms=80,
            file_path=str(project / "app" / "models.py"),
            task_id="t1",
        )
        assert recorded == Recorded("tool_call", False)
        item = memory.window.window.items()[-1]
        assert (item.content, item.type_name) == ("1 failed, 2 passed", "ToolResult")
        assert isinstance(item.item_type, ContextItemType.ToolResult)
        assert (item.item_type.tool_name, item.item_type.file_path) == ("pytest", "app/models.py")
        [run] = memory.episodic.failed_tool_runs("app/models.py")
        assert (run.tool_name, run.parameters, run.success, run.error_message, run.duration_ms, run.task_id) == (
            "pytest",
            {"args": "-x", "file_path": "app/models.py"},
            False,
            "1 failed",
            80,
            "t1",
        )
        # without a result the call is only recorded: the window is unchanged
        before = [i.id for i in memory.window.window.items()]
        memory.record_tool_call("ls", success=True)
        assert [i.id for i in memory.window.window.items()] == before
        assert memory.episodic.counts()["tool_executions"] == 2

        # the next window holds the tool's output; the code shown again replaces its older views
        code = [m for m in first if m["content"].startswith("[code: ")]
        assert [m["content"].split("\n")[0] for m in code] == [
            "[code: app/models.py lines 8-9]",
            "[code: app/models.py lines 5-6]",
            "[code: app/views.py lines 3-6]",
        ]
        # the failed run is a recent error: the assembled context's critical tier
        fixing = memory.prepare_context("fix store")
        assert fixing[:-1] == [
            {"role": "user", "content": "why does store lose users?"},
            {"role": "user", "content": "[tool result: pytest on app/models.py]\n1 failed, 2 passed"},
            {"role": "user", "content": "fix store"},
            *code,
        ]
        assert fixing[-1]["role"] == "assistant"
        assert re.fullmatch(
            r"## Critical\n- Failed [\d-]{10} \d\d:\d\d: pytest on app/models.py: 1 failed", fixing[-1]["content"]
        )

        with pytest.raises(am.InvalidInputError, match="message must be a non-empty string"):
            memory.prepare_context(" ")
        with pytest.raises(am.InvalidInputError, match="result must be a string, got 3"):
            memory.record_tool_call("pytest", success=True, result=3)  # type: ignore[arg-type]
        assert memory.episodic.counts()["tool_executions"] == 2  # a refused call records nothing

    with am.Memory.open(project, create=False) as again:  # what was recorded was committed
        assert [r.tool_name for r in again.episodic.failed_tool_runs("app/models.py")] == ["pytest"]


def test_tool_results_recorded_in_a_small_window_are_pruned_by_the_next_prepare(project: Path) -> None:
    with am.Memory.open(project, policy=am.Policy(max_tokens=200)) as memory:
        memory.prepare_context("list the files")
        for n in range(8):
            memory.record_tool_call("ls", {"n": n}, success=True, result=f"listing {n}: " + "file " * 30)
        assert memory.window.window.token_count > memory.window.window.threshold
        messages = memory.prepare_context("now read one")
        window = memory.window.window
        assert window.token_count <= window.threshold
        assert messages[-1] == {"role": "user", "content": "now read one"}
        assert memory.window.last_prune is not None and memory.window.last_prune.removed
        assert memory.episodic.snapshots(1)[0]["reason"] == "pruning"
        assert memory.episodic.counts()["tool_executions"] == 8


def test_close_flushes_buffered_records(project: Path) -> None:
    memory = am.Memory.open(project)
    memory.episodic.record_file_interaction("app/models.py", "edit", changes_summary="store returns a copy")
    memory.close()
    memory.close()  # twice is fine
    with pytest.raises(am.StoreError, match="closed"):
        memory.episodic
    with am.Memory.open(project, create=False) as again:
        [row] = again.episodic.file_history("app/models.py")
        assert (row.operation, row.changes_summary) == ("edit", "store returns a copy")


def test_a_store_held_by_another_process_is_refused_but_the_graph_still_answers(project: Path) -> None:
    with am.Memory.open(project) as memory:
        memory.index()
        memory.episodic.record_file_interaction("app/models.py", "read")
    with duckdb_held_by_another_process(project / ".aircher" / "memory.duckdb"):
        with am.Memory.open(project) as memory:
            with pytest.raises(am.StoreLockedError, match="open in another process"):
                memory.episodic
            assert [s.path for s in memory.graph.find_symbol("User")] == ["app/models.py"]
            assert memory.index().parsed == 0
    with am.Memory.open(project) as memory:  # nothing was lost
        assert [f.operation for f in memory.episodic.file_history("app/models.py")] == ["read"]


def test_verbs_share_one_lock_and_a_recorded_edit_refreshes_the_graph(project: Path) -> None:
    import dataclasses
    import threading

    with am.Memory.open(project) as memory:
        memory.index()
        never = dataclasses.replace(memory.policy.server, refresh_seconds=86_400.0)
        memory.policy = dataclasses.replace(memory.policy, server=never)
        assert [c.symbol.name for c in memory.callers("store").calls] == ["save"]
        (project / "app/util.py").write_text("def helper():\n    return store(1)\n")
        assert [c.symbol.name for c in memory.callers("store").calls] == ["save"]  # not due, not told
        assert memory.record_file_interaction("app/util.py", "edit").graph_stale
        assert sorted(c.symbol.name for c in memory.callers("store").calls) == ["helper", "save"]

        errors: list[BaseException] = []

        def work(n: int) -> None:
            try:
                for i in range(20):
                    memory.record_tool_call("pytest", {"run": i}, success=i % 2 == 0, task_id=f"w{n}")
                    assert memory.callers("store").definitions[0].name == "store"
                    memory.file_history("app/util.py", limit=3)
            except BaseException as exc:  # pragma: no cover - reported below
                errors.append(exc)

        threads = [threading.Thread(target=work, args=(n,)) for n in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        assert [(s.tool_name, s.total) for s in memory.episodic.tool_stats(days=1)] == [("pytest", 120)]
    with pytest.raises(am.StoreError, match="closed"):
        memory.callers("store")


def test_a_file_changed_while_it_is_indexed_is_parsed_again_next_time(project: Path) -> None:
    def edit_during_parse(done: int, total: int) -> None:
        (project / "app/util.py").write_text("def helper():\n    return 2\n\ndef late():\n    return helper()\n")

    with am.Memory.open(project) as memory:
        report = memory.index(progress=edit_during_parse)
        assert report.full and report.unsettled == ["app/util.py"]
        again = memory.index()  # the file is parsed again, whatever the parse saw
        assert (again.full, again.parsed, again.updated, again.unsettled) == (False, 1, ["app/util.py"], [])
        assert [s.name for s in memory.graph.find_symbol("late")] == ["late"]
        assert memory.index().parsed == 0
        doctor = am.Memory.doctor(project, deep=True)
        assert {c.check: c.status for c in doctor.checks}["graph (deep)"] == "ok"
        (project / "app/views.py").write_text("def view():\n    return 1\n")  # not indexed yet
    doctor = am.Memory.doctor(project, deep=True)
    [deep] = [c for c in doctor.checks if c.check == "graph (deep)"]
    assert deep.status == "warn" and "differs from a fresh build" in deep.detail and "edge(s)" in deep.detail


@pytest.mark.parametrize(
    "files",
    [
        [1, 2],
        {"paths": "../outside.py", "mtimes": [1], "sizes": [2], "digests": "h"},
        {"paths": "/etc/passwd", "mtimes": [1], "sizes": [2], "digests": "h"},
        {"paths": "app/./util.py", "mtimes": [1], "sizes": [2], "digests": "h"},
        {"paths": "app/util.py", "mtimes": [1], "sizes": [2]},
        {"paths": "app/util.py", "mtimes": [1, 3], "sizes": [2], "digests": "h"},
        {"paths": "app/util.py", "mtimes": [1, 3], "sizes": [2, 2], "digests": "h,h"},
        {"paths": "app/util.py", "mtimes": [1], "sizes": [2], "digests": "h,h"},
        {"paths": "app/util.py", "mtimes": [1.5], "sizes": [2], "digests": "h"},
        {"paths": "app/util.py", "mtimes": [1], "sizes": [None], "digests": "h"},
        {"paths": "app/util.py\0app/util.py", "mtimes": [1, 1], "sizes": [2, 2], "digests": "h,h"},
        {"paths": "app/views.py\0app/util.py", "mtimes": [1, 1], "sizes": [2, 2], "digests": "h,h"},
        {"paths": "", "mtimes": [1], "sizes": [2], "digests": "h"},
        {"paths": ["app/util.py"], "mtimes": [1], "sizes": [2], "digests": ["h"]},
        {"paths": 7, "mtimes": [1], "sizes": [2], "digests": "h"},
        {"app/util.py": [1, 2, "h"]},
        "files",
    ],
)
def test_a_manifest_of_the_wrong_shape_means_a_full_rebuild(project: Path, files: object) -> None:
    import json

    with am.Memory.open(project) as memory:
        memory.index()
        data = json.loads(memory.manifest_path.read_text())
        data["files"] = files
        memory.manifest_path.write_text(json.dumps(data))
        assert memory.rebuild_reason().startswith("damaged manifest")
        report = memory.index()
        assert report.full and report.reason.startswith("damaged manifest") and report.files == 4
        assert memory.rebuild_reason() == ""


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=10,
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_a_manifest_changed_anywhere_is_trusted_only_as_far_as_it_holds(
    tmp_path_factory: pytest.TempPathFactory, data: st.DataObject
) -> None:
    """Any value of the manifest replaced (a column of its files, a part of its
    summary, its version) or any byte of it changed: the next index neither fails
    nor answers from what no longer holds (the graph as the tree is, the files all
    there), and leaves a manifest the index after it trusts."""
    root = write_files(tmp_path_factory.mktemp("manifest") / "repo", PROJECT)
    with am.Memory.open(root) as memory:
        memory.index()
        text = memory.manifest_path.read_text()
        where = data.draw(st.sampled_from(["files", "summary", "version", "bytes"]))
        if where == "bytes":
            at = data.draw(st.integers(0, 2**20)) % len(text)  # (its length holds the temporary root's)
            text = text[:at] + data.draw(st.characters(codec="utf-8")) + text[at + 1 :]
        else:
            manifest = json.loads(text)
            if where == "version":
                manifest["version"] = data.draw(_JSON)
            else:
                part = manifest[where]
                part[data.draw(st.sampled_from(sorted(part)))] = data.draw(_JSON)
            text = json.dumps(manifest)
        memory.manifest_path.write_text(text)
        report = memory.index()
        assert report.files == 4 and [d.path for d in memory.graph.find_symbol("helper")] == ["app/util.py"]
        assert memory.rebuild_reason() == ""
        again = memory.index()
        assert (again.full, again.parsed, again.files) == (False, 0, 4)


def test_a_manifest_whose_hashes_lost_a_separator_is_not_trusted(project: Path) -> None:
    """The hashes of a manifest whose paths, times and sizes are the tree's, with two
    of them run together: the index does not take the fast path's word for it, and
    writes a manifest the next index trusts."""
    with am.Memory.open(project) as memory:
        memory.index()
        data = json.loads(memory.manifest_path.read_text())
        data["files"]["digests"] = data["files"]["digests"].replace(",", "0", 1)
        memory.manifest_path.write_text(json.dumps(data))
        assert memory.rebuild_reason() == "damaged manifest (a column of 4 values holds 3)"
        report = memory.index()
        assert (report.full, report.files, memory.rebuild_reason()) == (True, 4, "")
        again = memory.index()
        assert (again.full, again.parsed, again.files) == (False, 0, 4)


@given(
    st.lists(st.text(alphabet=st.sampled_from(["a", "b", ".", "/", "\0", "é"]), max_size=9), unique=True, max_size=4),
    st.sampled_from([1, 2, 3]),
)
def test_a_manifest_path_must_be_one_inside_the_project(paths: list[str], version: int) -> None:
    """Exactly the paths whose parts (split at "/") are all non-empty and neither
    "." nor "..", without NUL, are taken from a manifest of any layout (in layout
    3, joined by NULs, in order); the error names the first that is not."""
    from aircher_mem.graph import _manifest_files

    def inside(path: str) -> bool:
        return bool(path) and "\0" not in path and all(p not in ("", ".", "..") for p in path.split("/"))

    if version == 3:
        paths = sorted(p for p in paths if "\0" not in p)  # (a NUL there is a separator)
    n = len(paths)
    raw: object = {
        1: {p: [1, 2, "h"] for p in paths},
        2: {"paths": paths, "mtimes": [1] * n, "sizes": [2] * n, "digests": ["h"] * n},
        3: {"paths": "\0".join(paths), "mtimes": [1] * n, "sizes": [2] * n, "digests": ",".join(["h"] * n)},
    }[version]
    try:
        taken = _manifest_files(raw, version).fingerprints() == {p: (1, 2, "h") for p in paths}
    except ValueError as exc:
        assert str(exc) == f"{next(p for p in paths if not inside(p))!r} is not a path inside the project"
        taken = False
    assert taken == all(map(inside, paths))


@pytest.mark.parametrize("version", [1, 2])
def test_a_manifest_of_a_layout_before_is_read_and_rewritten(project: Path, version: int) -> None:
    """A manifest whose files are an object of [time, size, hash] per path (layout
    1) or a list per column (layout 2), and whose summary lists [path, reason]
    pairs, written by versions before, is trusted: no rebuild; the next save
    writes layout 3."""
    with am.Memory.open(project) as memory:
        memory.index()
        current = json.loads(memory.manifest_path.read_text())
        files = columns(current["files"])
        data = {**current, "version": version, "summary": {"files": 4, "skipped": [], "warnings": []}}
        data["files"] = (
            {p: [t, s, d] for p, t, s, d in zip(*(files[k] for k in ("paths", "mtimes", "sizes", "digests")))}
            if version == 1
            else files
        )
        memory.manifest_path.write_text(json.dumps(data))
        assert memory.rebuild_reason() == ""
        report = memory.index()
        assert (report.full, report.parsed, report.updated) == (False, 0, [])
        assert json.loads(memory.manifest_path.read_text()) == current


def test_a_look_at_a_tree_as_its_walk_left_it_stats_the_files(project: Path) -> None:
    """An index keeps its walk of the tree beside the graph (``graph.walk``, private
    to the user) once the tree's folders are older than a file system's clock can
    blur (2 s); a later look at a tree as the walk left it stats the files without
    walking; what changes the walk (a file added, an ignore rule) is found by one."""
    import time

    with am.Memory.open(project) as memory:
        memory.index()  # (the store made in the project: its folder changed now)
        assert not (project / ".aircher" / "graph.walk").exists()
        time.sleep(2.2)  # the tree's folders old enough to be trusted
        memory.index()
        record = project / ".aircher" / "graph.walk"
        assert record.stat().st_mode & 0o777 == 0o600
        kept = record.stat().st_ino
        (project / "app/util.py").write_text("def helper():\n    return 22\n")  # in place
        assert (memory.index().updated, record.stat().st_ino) == (["app/util.py"], kept)
        (project / "app/extra.py").write_text("def extra():\n    pass\n")
        assert memory.index().added == ["app/extra.py"]
        (project / ".gitignore").write_text("generated/\napp/views.py\n")
        assert memory.index().removed == ["app/views.py"]
        record.write_bytes(b"AMWALK01" + bytes(40))  # damaged: not used
        (project / "generated/more.py").write_text("x = 1\n")  # (ignored)
        (project / ".gitignore").write_text("generated/\n")
        assert memory.index().added == ["app/views.py"]


def test_leftover_temporary_files_of_dead_writers_are_removed(project: Path) -> None:
    import os
    import subprocess
    import sys

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    store = project / ".aircher"
    store.mkdir()
    stale = store / f".files.json.{int(dead.stdout)}.tmp"
    live = store / f".files.json.{os.getppid()}.tmp"
    stale.write_text("{")
    live.write_text("{")
    with am.Memory.open(project) as memory:
        memory.index()
    assert not stale.exists() and live.exists()
    assert (store / "files.json").stat().st_mode & 0o777 == 0o600
    assert (store / "config.toml").stat().st_mode & 0o777 == 0o600


@pytest.mark.slow
def test_a_file_replaced_by_a_fifo_hangs_nothing(project: Path) -> None:
    import os
    import subprocess
    import sys

    with am.Memory.open(project) as memory:
        memory.index()
    (project / "app/models.py").unlink()
    os.mkfifo(project / "app/models.py")  # nobody ever writes to it
    script = (
        "import sys, aircher_mem as am\n"
        "with am.Memory.open(sys.argv[1]) as m:\n"
        "    code = m.relevant_code('store save User')\n"
        "    preview = m.preview_context('store save User')\n"
        "    report = m.index(full=True)\n"
        "    print(len(code.snippets), report.files, sorted(p for p, _ in report.skipped))\n"
    )
    done = subprocess.run([sys.executable, "-c", script, str(project)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    _, files, skipped = done.stdout.split(" ", 2)
    assert files == "3" and "app/models.py" in skipped  # listed as skipped, never opened for reading


def test_reads_never_leave_the_project(project: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.py"
    outside.write_text("def store(obj):\n    return 'SECRET-OUTSIDE'\n")
    with am.Memory.open(project) as memory:
        memory.index()
        (project / "app/models.py").unlink()
        (project / "app/models.py").symlink_to(outside)  # swapped for a link after indexing
        code = memory.relevant_code("store save User")
        assert all("SECRET-OUTSIDE" not in c.content for c in code.snippets)
        preview = memory.preview_context("store save User")
        assert all("SECRET-OUTSIDE" not in (i.content or "") for i in preview.items)
        with pytest.raises(am.InvalidInputError):
            memory.graph.update_file("app/models.py")
        with pytest.raises(am.InvalidInputError):
            KnowledgeGraph.build(project).update_file(str(outside))


def test_fingerprints_on_threads_are_the_serial_ones_in_order(tmp_path: Path) -> None:
    import hashlib

    from aircher_mem.graph import _FINGERPRINT_BATCH, _fingerprint, _fingerprints

    root = tmp_path / "many"
    root.mkdir()
    names = [f"m{i:04d}.py" for i in range(2 * _FINGERPRINT_BATCH + 7)]  # three batches
    for i, name in enumerate(names):
        (root / name).write_text(f"def f{i}():\n    return {i}\n")
    (root / "big.py").write_text("x = 1\n" * 10)  # over the limit below: not hashed
    os.symlink(root / names[0], root / "link.py")  # not a regular file: left out
    asked = [*reversed(names), "big.py", "link.py", "gone.py"]
    found = _fingerprints(root, asked, max_hash_bytes=40)
    assert list(found) == [*reversed(names), "big.py"]
    for name in names:
        info = os.lstat(root / name)
        digest = hashlib.sha256((root / name).read_bytes()).hexdigest()
        assert found[name] == (info.st_mtime_ns, info.st_size, digest) == _fingerprint(root, name, 40)
    big = os.lstat(root / "big.py")
    assert found["big.py"] == (big.st_mtime_ns, big.st_size, "")
    assert _fingerprints(root, [], max_hash_bytes=40) == {}


def test_an_index_of_many_files_updates_exactly_those_changed(tmp_path: Path) -> None:
    from aircher_mem.graph import _FINGERPRINT_BATCH

    root = tmp_path / "many"
    (root / "pkg").mkdir(parents=True)
    count = 2 * _FINGERPRINT_BATCH + 3
    for i in range(count):
        (root / "pkg" / f"m{i:04d}.py").write_text(f"def f{i}():\n    return {i}\n")
    with am.Memory.open(root) as memory:
        first = memory.index()
        assert (first.full, first.files, first.parsed) == (True, count, count)
        manifest = columns(json.loads(memory.manifest_path.read_text())["files"])
        assert len(manifest["paths"]) == count and all(len(d) == 64 for d in manifest["digests"])
        edited = [f"pkg/m{i:04d}.py" for i in (0, _FINGERPRINT_BATCH + 1, count - 1)]
        for rel in edited:
            (root / rel).write_text("def changed():\n    return 0\n")
        touched = root / "pkg" / "m0005.py"  # a new time, the same content: not parsed
        info = touched.stat()
        os.utime(touched, ns=(info.st_atime_ns, info.st_mtime_ns + 5_000_000_000))
        (root / "pkg" / "m0007.py").unlink()
        again = memory.index()
        assert (again.full, again.parsed, again.updated, again.removed) == (False, 3, edited, ["pkg/m0007.py"])
        assert [s.path for s in memory.graph.find_symbol("changed")] == edited
        assert memory.index().parsed == 0


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda m: m.record_tool_call(" ", success=True), "tool_name must be a non-empty string, got ' '"),
        (
            lambda m: m.record_tool_call("bash", success=True, duration_ms=-1),
            "duration_ms must be an integer >= 0 and below 2**63, got -1",
        ),
        (lambda m: m.record_tool_call("bash", success=1), "success must be true or false, got 1"),
        (
            lambda m: m.record_file_interaction("app/util.py", "read", line_range=(5, 2)),
            "line_range must be (start, end) with start <= end, got (5, 2)",
        ),
        (
            lambda m: m.record_file_interaction("app/util.py", "read", line_range=(-1, 2)),
            "line_range start must be an integer >= 0 and below 2**63, got -1",
        ),
        (
            lambda m: m.record_file_interaction("app/util.py", "read", success="yes"),
            "success must be true or false, got 'yes'",
        ),
        (lambda m: m.task("start", "t1", description="  "), "description must be a non-empty string, got '  '"),
        (lambda m: m.find_symbol("save", prefix=1), "prefix must be true or false, got 1"),
        (lambda m: m.find_symbol("save", fuzzy=None), "fuzzy must be true or false, got None"),
        (lambda m: m.file_history("app/util.py", limit=0), "limit must be an integer from 1 to 10000, got 0"),
        (lambda m: m.tasks(limit=True), "limit must be an integer from 1 to 10000, got True"),
        (lambda m: m.recall("build", k=1001), "k must be an integer from 1 to 1000, got 1001"),
        (lambda m: m.gc(dry_run=1), "dry_run must be true or false, got 1"),
        (lambda m: m.add_turn("s1", "user", "hello", extract=1), "extract must be true or false, got 1"),
    ],
)
def test_each_bad_argument_is_invalid_input_with_an_exact_message(project: Path, call: Any, message: str) -> None:
    with am.Memory.open(project) as memory:
        with pytest.raises(am.InvalidInputError) as info:
            call(memory)
        assert type(info.value) is am.InvalidInputError and str(info.value) == message
        assert memory.episodic.counts()["tool_executions"] == 0
        assert memory.episodic.counts()["file_interactions"] == 0
        assert memory.episodic.open_tasks() == []
