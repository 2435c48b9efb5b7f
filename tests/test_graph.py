"""KnowledgeGraph.build on fixture repositories: exact nodes and edges per language,
and every kind of bad input."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import aircher_mem as am


def write(root: Path, files: dict[str, str | bytes]) -> Path:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return root


REPO = {
    "app/models.py": "class Base:\n    pass\n\nclass User(Base):\n    def save(self):\n        return store(self)\n\ndef store(obj):\n    return obj\n",
    "app/views.py": "from app.models import User\n\ndef create():\n    user = User()\n    user.save()\n    return user\n",
    "web/main.ts": "import { fmt } from './fmt';\nexport function page(): string {\n  return fmt('x');\n}\n",
    "web/fmt.ts": "export function fmt(s: string): string {\n  return s.trim();\n}\n",
    "core/lib.rs": "pub struct Cache;\nimpl Cache {\n    pub fn get(&self) -> u8 { compute() }\n}\nfn compute() -> u8 { 1 }\n",
    "svc/main.go": "package main\n\nfunc main() { serve() }\n\nfunc serve() {}\n",
    "svc/App.java": "class App {\n  void start() { init(); }\n  void init() {}\n}\n",
    "ui/widget.jsx": "function Widget() { return <b>{label()}</b>; }\nfunction label() { return 'x'; }\n",
}


def test_exact_graph_across_languages(tmp_path: Path) -> None:
    g = am.KnowledgeGraph.build(write(tmp_path, REPO))
    assert g.file_count == 8 and g.skipped == [] and g.warnings == []
    assert g.edges() == [
        ("app/models.py", "contains", "app/models.py:Base"),
        ("app/models.py", "contains", "app/models.py:User"),
        ("app/models.py", "contains", "app/models.py:store"),
        ("app/models.py:User", "contains", "app/models.py:save"),
        ("app/models.py:save", "calls", "app/models.py:store"),
        ("app/views.py", "contains", "app/views.py:create"),
        ("app/views.py:create", "calls", "app/models.py:User"),
        ("app/views.py:create", "calls", "app/models.py:save"),
        ("core/lib.rs", "contains", "core/lib.rs:Cache"),
        ("core/lib.rs", "contains", "core/lib.rs:compute"),
        ("core/lib.rs", "contains", "core/lib.rs:get"),
        ("core/lib.rs:get", "calls", "core/lib.rs:compute"),
        ("svc/App.java", "contains", "svc/App.java:App"),
        ("svc/App.java:App", "contains", "svc/App.java:init"),
        ("svc/App.java:App", "contains", "svc/App.java:start"),
        ("svc/App.java:start", "calls", "svc/App.java:init"),
        ("svc/main.go", "contains", "svc/main.go:main"),
        ("svc/main.go", "contains", "svc/main.go:serve"),
        ("svc/main.go:main", "calls", "svc/main.go:serve"),
        ("ui/widget.jsx", "contains", "ui/widget.jsx:Widget"),
        ("ui/widget.jsx", "contains", "ui/widget.jsx:label"),
        ("ui/widget.jsx:Widget", "calls", "ui/widget.jsx:label"),
        ("web/fmt.ts", "contains", "web/fmt.ts:fmt"),
        ("web/main.ts", "contains", "web/main.ts:page"),
        ("web/main.ts:page", "calls", "web/fmt.ts:fmt"),
    ]
    assert g.node_count == 8 + 17


def test_queries_return_typed_symbols(tmp_path: Path) -> None:
    g = am.KnowledgeGraph.build(write(tmp_path, REPO))
    [user] = g.find_symbol("User")
    assert (user.kind, user.path, user.language, user.line, user.end_line) == ("class", "app/models.py", "python", 4, 6)
    assert user.signature == "class User(Base):"
    # by path, then line
    assert [s.name for s in g.find_symbol("s", prefix=True)] == ["save", "store", "start", "serve"]
    [call] = g.get_callers("store")
    assert (call.symbol.name, call.line, call.confidence) == ("save", 6, 1.0)
    assert [c.symbol.name for c in g.get_callees("create")] == ["User", "save"]
    assert [s.name for s in g.get_file_contents("app/models.py")] == ["Base", "User", "save", "store"]
    assert g.find_symbol("nothing") == [] and g.get_callers("nothing") == []
    with pytest.raises(am.UnknownItemError, match="no file"):
        g.get_file_contents("app/absent.py")


def test_bad_input_is_skipped_or_warned_never_fatal(tmp_path: Path) -> None:
    write(tmp_path, {
        "ok.py": "def fine():\n    pass\n",
        "broken.py": "def good():\n    pass\n\ndef bad(:\n",
        "latin1.py": b"def caf\xe9():\n    pass\n",
        "blob.py": b"\x00\x01\x02binary",
        "huge.py": "x = 1\n" * 200_000,
        "ignored/skip.py": "def hidden():\n    pass\n",
        "node_modules/pkg/index.js": "function vendored() {}\n",
        ".gitignore": "ignored/\n",
        "notes.txt": "not code",
    })
    (tmp_path / "loop").symlink_to(tmp_path, target_is_directory=True)
    seen: list[tuple[int, int]] = []
    g = am.KnowledgeGraph.build(tmp_path, max_file_bytes=1_000_000, progress=lambda done, total: seen.append((done, total)))
    # broken.py keeps what parsed; an invalid UTF-8 byte ends an identifier
    assert [(s.path, s.name) for s in g.find_symbol("", prefix=True)] == [
        ("broken.py", "good"), ("broken.py", "bad"), ("latin1.py", "caf"), ("ok.py", "fine")]
    assert {p for p, _ in g.skipped} == {"blob.py", "huge.py"}
    assert dict(g.skipped)["blob.py"].startswith("binary") and "larger than" in dict(g.skipped)["huge.py"]
    assert g.warnings == [(p, "syntax errors: indexed as far as the parser got") for p in ("broken.py", "latin1.py")]
    assert seen == [(4, 4)]  # ok, broken, latin1 and blob (found binary while parsing)


def test_bad_roots_and_callbacks(tmp_path: Path) -> None:
    with pytest.raises(am.InvalidInputError, match="not a directory"):
        am.KnowledgeGraph.build(tmp_path / "absent")
    write(tmp_path, {"a.py": "def f():\n    pass\n"})

    def boom(done: int, total: int) -> None:
        raise RuntimeError("stop")

    with pytest.raises(RuntimeError, match="stop"):
        am.KnowledgeGraph.build(tmp_path, progress=boom)
    empty = tmp_path / "empty"
    empty.mkdir()
    assert repr(am.KnowledgeGraph.build(empty)) == "KnowledgeGraph(files=0, nodes=0, edges=0, skipped=0)"


def test_update_and_remove_files(tmp_path: Path) -> None:
    root = write(tmp_path, REPO)
    g = am.KnowledgeGraph.build(root)
    (root / "app/jobs.py").write_text("def nightly():\n    store(None)\n")
    g.update_file("app/jobs.py")
    assert [c.symbol.name for c in g.get_callers("store")] == ["nightly", "save"]
    (root / "app/models.py").write_text("def store(obj):\n    return obj\n\ndef store_all(objs):\n    store(objs)\n")
    g.update_file(root / "app/models.py")  # absolute paths inside the root work too
    assert [c.symbol.name for c in g.get_callers("store")] == ["nightly", "store_all"]
    assert g.find_symbol("User") == [] and g.get_callees("create") == []
    assert g.edges() == am.KnowledgeGraph.build(root).edges()  # same as a fresh build
    (root / "app/jobs.py").unlink()
    g.update_file("app/jobs.py")  # gone: removed
    assert [c.symbol.name for c in g.get_callers("store")] == ["store_all"]
    assert g.remove_file("web/fmt.ts") and not g.remove_file("web/fmt.ts")
    assert g.get_callees("page") == []
    (root / "svc/main.go").write_bytes(b"\x00binary now")
    g.update_file("svc/main.go")
    assert ("svc/main.go", "binary (NUL byte)") in g.skipped and g.find_symbol("serve") == []


def test_update_refuses_paths_outside_the_project(tmp_path: Path) -> None:
    root = write(tmp_path / "repo", {"a.py": "def f():\n    pass\n"})
    write(tmp_path, {"secret.py": "def s():\n    pass\n"})
    g = am.KnowledgeGraph.build(root)
    for bad in ("../secret.py", str(tmp_path / "secret.py"), "/etc/passwd.py", ""):
        with pytest.raises(am.InvalidInputError, match="outside the project root"):
            g.update_file(bad)
    with pytest.raises(am.InvalidInputError, match="not a source file"):
        g.update_file("notes.txt")
    assert g.file_count == 1


def test_save_and_load(tmp_path: Path) -> None:
    root = write(tmp_path / "repo", {**REPO, "blob.py": b"\x00"})
    g = am.KnowledgeGraph.build(root)
    path = tmp_path / "graph.bin"
    g.save(path)
    loaded = am.KnowledgeGraph.load(path)
    assert loaded.edges() == g.edges() and loaded.skipped == g.skipped and loaded.root == g.root
    assert [c.symbol.name for c in loaded.get_callers("store")] == ["save"]
    (root / "app/jobs.py").write_text("def nightly():\n    store(None)\n")
    loaded.update_file("app/jobs.py")  # a loaded graph updates like a built one
    assert [c.symbol.name for c in loaded.get_callers("store")] == ["nightly", "save"]
    assert not list(tmp_path.glob("graph.bin.tmp*"))


def test_damaged_or_foreign_graph_files(tmp_path: Path) -> None:
    g = am.KnowledgeGraph.build(write(tmp_path / "repo", REPO))
    path = tmp_path / "graph.bin"
    g.save(path)
    data = path.read_bytes()
    path.write_bytes(data[:-1] + bytes([data[-1] ^ 0xFF]))
    with pytest.raises(am.StoreCorruptError, match="checksum"):
        am.KnowledgeGraph.load(path)
    path.write_bytes(data[:8] + (7).to_bytes(4, "little") + data[12:])
    with pytest.raises(am.SchemaVersionError, match="version 7"):
        am.KnowledgeGraph.load(path)
    path.write_bytes(b"random bytes, not a graph at all")
    with pytest.raises(am.StoreCorruptError, match="rebuild"):
        am.KnowledgeGraph.load(path)
    with pytest.raises(am.StoreError, match="cannot read"):
        am.KnowledgeGraph.load(tmp_path / "absent.bin")


def test_relevant_code_for_a_message(tmp_path: Path) -> None:
    root = write(tmp_path, REPO)
    g = am.KnowledgeGraph.build(root)
    found = am.find_relevant_to_query(g, "Why does store lose data when a User is saved?", max_tokens=200)
    # The two named definitions first (User has more neighbours), then create, which
    # calls both, then Base, which User inherits from by name only (no edge yet).
    assert [(c.file_path, c.line_range) for c in found] == [
        ("app/models.py", (4, 6)), ("app/models.py", (8, 9)), ("app/views.py", (3, 6)), ("app/models.py", (1, 2))]
    assert found[1].content == "def store(obj):\n    return obj"
    assert found[0].relevance == 1.0 and all(0 < c.relevance <= 1 for c in found)
    counter = am.TokenCounter()
    assert sum(counter.count(c.content) for c in found) <= 200
    assert all(not (c.file_path == "app/models.py" and c.line_range == (5, 6)) for c in found)  # save is inside User
    exact = counter.count("def store(obj):\n    return obj")
    tiny = am.find_relevant_to_query(g, "store", max_tokens=exact)  # room for the best snippet only
    assert [c.line_range for c in tiny] == [(8, 9)]
    assert am.find_relevant_to_query(g, "nothing named here", max_tokens=500) == []
    by_file = am.find_relevant_to_query(g, "look at this", max_tokens=500, focus_files=["svc/main.go"])
    assert {c.file_path for c in by_file} == {"svc/main.go"}


def test_graph_feeds_prepare_context(tmp_path: Path) -> None:
    g = am.KnowledgeGraph.build(write(tmp_path, REPO))
    ctx = am.DynamicContextManager(am.Policy(max_tokens=4000), code_provider=am.graph_code_provider(g, max_tokens=300))
    messages = ctx.prepare_context("fetch() in core/lib.rs: what does compute return?")
    assert messages[1]["content"].startswith("[code: core/lib.rs lines 5-5]\nfn compute() -> u8 { 1 }")


def test_neighbourhood(tmp_path: Path) -> None:
    g = am.KnowledgeGraph.build(write(tmp_path, REPO))
    assert [(s.name, d) for s, d in g.neighbourhood("store")] == [
        ("store", 0), ("app/models.py", 1), ("save", 1)]
    two = {(s.name, d) for s, d in g.neighbourhood("store", hops=2)}
    assert ("User", 2) in two and ("create", 2) in two and ("Base", 2) in two
    assert [s.name for s, _ in g.neighbourhood("svc/main.go")] == ["svc/main.go", "main", "serve"]
    assert g.neighbourhood("nothing") == []
