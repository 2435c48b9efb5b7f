"""Candidate facts from code changes (aircher_mem.longterm.changes): the outline binding,
each kind of candidate from a file's old and new text, and the four git sources on
small repositories built here."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from aircher_mem import _core
from aircher_mem.config import KnowledgePolicy
from aircher_mem.errors import GitError, InvalidInputError
from aircher_mem.longterm.changes import (
    MAX_PER_FILE,
    CandidateFact,
    candidates_for_change,
    extract,
    extract_edit,
    extract_file,
    read_changes,
    readme_summary,
)
from conftest import git
from hypothesis import given
from hypothesis import strategies as st

APPROVE = KnowledgePolicy().approve_confidence

BOX = '''"""Boxes that open and close."""

import os


class Box:
    def open(self, force: bool) -> None:
        pass


def helper(x):
    return x
'''

BOX2 = '''"""Boxes that open and close."""

import os
import requests
from . import sibling


class Box:
    def open(self, force: bool, quietly: bool = False) -> None:
        pass

    def close(self) -> None:
        pass


def _private():
    return 1
'''


def commit(root: Path, message: str) -> str:
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message)
    return git(root, "rev-parse", "HEAD")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    git(root, "init", "-q")
    (root / "pkg" / "box.py").write_text(BOX)
    (root / "pyproject.toml").write_text('[project]\nname = "p"\nversion = "0.1"\ndependencies = ["fastapi>=0.100"]\n')
    commit(root, "first")
    return root


def brief(found: list[CandidateFact]) -> list[tuple[str, str, float, str | None]]:
    return [(c.kind, c.content, c.confidence, c.code_ref) for c in found]


# ---------------------------------------------------------------- outline


def test_outline_matches_the_graph_for_a_file(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "box.py").write_text(BOX2)
    graph = _core.KnowledgeGraph.build(str(tmp_path))
    from_graph = [
        (d.kind, d.name, d.line, d.end_line, d.signature, d.scope, d.items)
        for d in graph.get_file_contents("pkg/box.py")
        if d.kind != "file"
    ]
    outlined = _core.outline("pkg/box.py", BOX2.encode())
    assert [(d.kind, d.name, d.line, d.end_line, d.signature, d.scope, d.items) for d in outlined] == from_graph
    assert {d.path for d in outlined} == {"pkg/box.py"} and {d.language for d in outlined} == {"python"}
    assert [(d.kind, d.name, d.scope, d.items) for d in outlined] == [
        ("import", "os", "", []),
        ("import", "requests", "", []),
        ("import", ".", "", ["sibling"]),
        ("class", "Box", "", []),
        ("function", "open", "Box", []),
        ("function", "close", "Box", []),
        ("function", "_private", "", []),
    ]


def test_outline_unsupported_binary_and_oversized() -> None:
    assert _core.outline("notes.txt", b"def f(): pass\n") == []
    assert _core.outline("a.py", b"def f():\0 pass\n") == []
    assert [d.name for d in _core.outline("bin/run", b"#!/usr/bin/env python3\ndef main(): pass\n")] == ["main"]
    with pytest.raises(InvalidInputError, match="over the limit of 5 bytes"):
        _core.outline("a.py", b"def f(): pass\n", max_bytes=5)


# ---------------------------------------------------------------- one file's change


def test_new_file_with_a_purpose_and_its_top_level_symbols() -> None:
    found = candidates_for_change("pkg/box.py", None, BOX)
    assert brief(found) == [
        ("new_file", "Added pkg/box.py for boxes that open and close", 0.85, None),
        ("new_symbol", "Implemented class Box in pkg/box.py", 0.9, "pkg/box.py#L6-8"),
        ("new_symbol", "Implemented function helper in pkg/box.py", 0.9, "pkg/box.py#L11-12"),
    ]
    box = found[1]
    assert (box.source, box.suggested_level, box.domain, box.path, box.commit) == (
        "ast_analysis",
        "L3",
        "pkg",
        "pkg/box.py",
        None,
    )
    assert (found[0].source, found[0].suggested_level, found[0].confidence >= APPROVE) == ("file_change", "L2", True)


def test_new_file_without_a_purpose_waits_for_approval() -> None:
    license_header = "# Copyright 2020 Someone. Licensed under MIT.\ndef f():\n    pass\n"
    found = candidates_for_change("f.py", None, license_header)
    assert brief(found) == [
        ("new_file", "Added f.py", 0.6, None),
        ("new_symbol", "Implemented function f in f.py", 0.9, "f.py#L2-3"),
    ]
    assert found[0].confidence < APPROVE and found[0].domain is None
    assert brief(candidates_for_change("data/x.csv", None, "a,b\n1,2\n")) == [
        ("new_file", "Added data/x.csv", 0.6, None)
    ]


@pytest.mark.parametrize(
    ("path", "text", "purpose"),
    [
        (
            "src/lib.rs",
            "//! The engine's core: parsing and linking.\n\npub fn f() {}\n",
            "the engine's core: parsing and linking",
        ),
        ("a.go", "// Package a reads HTTP headers.\npackage a\n", "package a reads HTTP headers"),
        ("a.js", "/**\n * Rendering of HTML pages.\n */\nexport function f() {}\n", "rendering of HTML pages"),
        (
            "a.py",
            "#!/usr/bin/env python3\n# -*- coding: utf-8 -*-\n'''Command line for the tool.'''\n",
            "command line for the tool",
        ),
        ("a.py", "x = 1\n", None),
        ("a.py", "# from https://example.com/docs/options\n", None),
        ("a.py", '"""Reads the settings file."""\n', "RAW, which reads the settings file"),
        ("a.py", '"""Parse the settings file."""\n', "RAW to parse the settings file"),
        (
            "a.py",
            '"""Do two memories contradict each other? A test."""\n',
            "RAW: Do two memories contradict each other?",
        ),
        ("a.py", '"""HTTP handlers."""\n', "HTTP handlers"),
        ("a.py", "# TODO\n", None),
    ],
)
def test_purpose_comes_only_from_the_files_own_docstring(path: str, text: str, purpose: str | None) -> None:
    first = candidates_for_change(path, None, text)[0]
    if purpose and purpose.startswith("RAW"):
        assert first.content == f"Added {path}{purpose[3:]}"
    else:
        assert first.content == (f"Added {path} for {purpose}" if purpose else f"Added {path}")


def test_new_removed_and_changed_symbols_and_imports() -> None:
    found = candidates_for_change("pkg/box.py", BOX, BOX2)
    assert brief(found) == [
        (
            "signature",
            "Changed the signature of method Box.open in pkg/box.py: added quietly: bool = False",
            0.9,
            "pkg/box.py#L9-10",
        ),
        ("new_symbol", "Implemented method Box.close in pkg/box.py", 0.9, "pkg/box.py#L12-13"),
        ("new_symbol", "Implemented function _private in pkg/box.py", 0.7, "pkg/box.py#L16-17"),
        ("removed_symbol", "Removed function helper from pkg/box.py", 0.9, None),
        ("import", "pkg/box.py now imports requests", 0.75, None),
    ]
    assert [c.source for c in found] == ["ast_analysis"] * 5
    assert [c.suggested_level for c in found] == ["L3", "L3", "L3", "L2", "L2"]


def test_a_removed_class_takes_its_methods_and_a_constant_change_is_reported() -> None:
    old = "LIMIT = 5\n\nclass A:\n    def m(self):\n        pass\n"
    new = "LIMIT = 8\n"
    assert brief(candidates_for_change("a.py", old, new)) == [
        ("signature", "Changed constant LIMIT in a.py: LIMIT = 5 -> LIMIT = 8", 0.9, "a.py#L1-1"),
        ("removed_symbol", "Removed class A from a.py", 0.9, None),
    ]


def test_rust_visibility_and_local_imports() -> None:
    old = "pub struct S;\n"
    new = "use crate::graph::Node;\nuse serde::Serialize;\nmod inner;\npub struct S;\nfn helper() {}\npub fn api() {}\n"
    assert brief(candidates_for_change("src/s.rs", old, new)) == [
        ("new_symbol", "Implemented function helper in src/s.rs", 0.7, "src/s.rs#L5-5"),
        ("new_symbol", "Implemented function api in src/s.rs", 0.9, "src/s.rs#L6-6"),
        ("import", "src/s.rs now imports serde", 0.75, None),
    ]


@pytest.mark.parametrize(
    ("path", "text", "said"),
    [
        # Python: the docstring's first sentence, after a header over lines and a comment
        (
            "m.py",
            'def f(\n    a,  # the input\n):  # why\n    r"""Reads the whole config file.\n\n    More."""\n',
            ": Reads the whole config file",
        ),
        ("m.py", "class K:\n    '''Holds the settings of one run.'''\n", ": Holds the settings of one run"),
        # a comment in the body, or above the def, is no docstring
        ("m.py", "# Builds the index of a tree.\ndef f():\n    # builds it\n    pass\n", ""),
        ("m.py", 'def f():\n    x = """Not a docstring."""\n', ""),
        # the doc comment above, attributes and annotations skipped
        (
            "s.rs",
            "/// Opens the store at a path.\n/// More.\n#[inline]\npub fn open() {}\n",
            ": Opens the store at a path",
        ),
        (
            "s.go",
            "package s\n\n// Parse reads a config from bytes.\nfunc Parse() {}\n",
            ": Parse reads a config from bytes",
        ),
        (
            "S.java",
            "class S {\n  /**\n   * Counts the pages of a book.\n   */\n  @Override\n  public int f() { return 1; }\n}\n",
            ": Counts the pages of a book",
        ),
        (
            "s.c",
            "/*\n * Counts the pages of a book.\n */\nint pages(void) { return 2; }\n",
            ": Counts the pages of a book",
        ),
        ("s.c", '#include "s.h"\n#define N 2\nint pages(void) { return N; }\n', ""),
        (
            "s.rb",
            "#!/usr/bin/env ruby\n# Greets the user by name.\ndef greet(name)\nend\n",
            ": Greets the user by name",
        ),
        ("s.rb", "#!/usr/bin/env ruby\ndef greet(name)\nend\n", ""),
        ("s.lua", "-- Loads the plugin table.\nfunction load()\nend\n", ": Loads the plugin table"),
        (
            "s.cs",
            "class S {\n  // Sums two numbers.\n  [Pure]\n  public int Sum() { return 0; }\n}\n",
            ": Sums two numbers",
        ),
        # a licence or a word alone says no purpose
        ("s.rs", "// Copyright 2024 Ann.\npub fn f() {}\n// TODO\npub fn g() {}\n", ""),
    ],
)
def test_a_new_definition_says_what_it_is_for_in_its_own_words(path: str, text: str, said: str) -> None:
    old = "class S {\n}\n" if path.endswith((".java", ".cs")) else None
    found = [c.content for c in candidates_for_change(path, old, text) if c.kind == "new_symbol"]
    assert found and all(c.startswith("Implemented ") for c in found)
    assert found[-1].partition(f" in {path}")[2] == said, found


def test_a_moved_definition_with_a_docstring_is_one_move(repo: Path) -> None:
    (repo / "pkg" / "tools.py").write_text('def helper(x):\n    """Doubles a number of the box."""\n    return x\n')
    (repo / "pkg" / "box.py").write_text(BOX.replace("def helper(x):\n    return x\n", ""))
    found = extract(repo, source="commit", rev=commit(repo, "move helper"))
    assert [c.content for c in found if c.kind != "new_file"] == [
        "Moved function helper from pkg/box.py to pkg/tools.py"
    ]


def test_a_signature_over_several_lines_is_read_whole() -> None:
    old = "pub fn build(\n    scan: Scan,\n) -> Result<()> {\n    Ok(())\n}\n"
    new = "pub fn build(\n    scan: Scan,\n    progress: &Progress,\n) -> Result<()> {\n    Ok(())\n}\n"
    assert brief(candidates_for_change("src/b.rs", old, new)) == [
        (
            "signature",
            "Changed the signature of function build in src/b.rs: added progress: &Progress",
            0.9,
            "src/b.rs#L1-6",
        )
    ]
    # a body's change is no signature change, nor are the same parameters laid out anew
    assert candidates_for_change("src/b.rs", old, old.replace("Ok(())", "Ok(( ))")) == []
    assert candidates_for_change("src/b.rs", old, "pub fn build(scan: Scan) -> Result<()> {\n    Ok(())\n}\n") == []
    keyword_only = "def f(a, *, b=1):  # the old one\n    pass\n"
    assert [c.content for c in candidates_for_change("k.py", keyword_only, keyword_only.replace("b=1", "b=2"))] == [
        "Changed the signature of function f in k.py: b=2 (was b=1)"
    ]


@pytest.mark.parametrize(
    ("path", "old", "new", "said"),
    [
        ("a.py", "def f(a, b=1):\n    pass\n", "def f(a):\n    pass\n", "removed b=1"),
        (
            "a.py",
            "def f(a: int) -> int:\n    pass\n",
            "def f(a: str) -> str:\n    pass\n",
            "a: str (was a: int); returns str (was int)",
        ),
        (
            "a.go",
            "package a\nfunc F(x int) {}\n",
            "package a\nfunc F(x int, y string) error {}\n",
            "added y string; returns error (was nothing)",
        ),
        ("A.java", "class A {\n  void f(int x) {}\n}\n", "class A {\n  void f(long x) {}\n}\n", "long x (was int x)"),
        ("a.py", "class C(A):\n    pass\n", "class C(A, B):\n    pass\n", "added B"),
        ("a.py", "class C:\n    pass\n", "class C(B):\n    pass\n", "class C -> class C(B)"),
        ("a.pyi", "def f(x: int) -> int: ...\n", "def f(x: int) -> str: ...\n", "returns str (was int)"),
        (
            "a.py",
            "def f(fill=\"#\", mode='r'):\n    pass\n",
            'def f(fill="#", mode="w"):  # note\n    pass\n',
            "mode=\"w\" (was mode='r')",
        ),
        ("a.rs", "pub(crate) fn g(a: u8) {}\n", "pub(crate) fn g(a: u16) {}\n", "a: u16 (was a: u8)"),
        (
            "a.py",
            'def f(t="%(a)s, %(b)s", n=1):\n    pass\n',
            'def f(t="%(a)s, %(b)s", n=2):\n    pass\n',
            "n=2 (was n=1)",
        ),
        ("a.rs", "fn h(m: HashMap<K, V>) {}\n", "fn h(m: HashMap<K, V>, n: u8) {}\n", "added n: u8"),
        (
            "a.py",
            "def f(\n" + "".join(f"    a{i},\n" for i in range(20)) + "):\n    pass\n",
            "def f(\n" + "".join(f"    a{i},\n" for i in range(21)) + "):\n    pass\n",
            "added a20",
        ),
    ],
)
def test_signature_changes_name_the_parameters(path: str, old: str, new: str, said: str) -> None:
    (found,) = [c for c in candidates_for_change(path, old, new) if c.kind == "signature"]
    assert found.content.split(": ", 1)[1] == said


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("def f(a: Optional[int] = None) -> Union[str, None]:", "def f(a: int | None = None) -> None | str:"),
        (
            "def f(a: t.Dict[str, t.List[int]]) -> typing.Tuple[int, ...]:",
            "def f(a: dict[str, list[int]]) -> tuple[int, ...]:",
        ),
        ('def f(a: "Foo", b: "Optional[Bar]") -> "Type[Foo]":', "def f(a: Foo, b: Bar | None) -> type[Foo]:"),
        ("def f(a: Union[int, Union[str, bytes]]):", "def f(a: bytes | int | str):"),
        ("def f(a: Callable[[Optional[int]], Text]):", "def f(a: Callable[[int | None], str]):"),
    ],
)
def test_an_annotation_spelled_anew_is_no_change(old: str, new: str) -> None:
    assert candidates_for_change("a.py", f"{old}\n    pass\n", f"{new}\n    pass\n") == []


def test_annotations_alone_wait_for_approval_and_a_parameter_made_keyword_only_is_said() -> None:
    def said(old: str, new: str) -> list[tuple[str, float]]:
        found = candidates_for_change("a.py", f"{old}\n    pass\n", f"{new}\n    pass\n")
        return [(c.content.split(": ", 1)[1], c.confidence) for c in found]

    assert said("def f(v, n=1):", "def f(v: object, n: int = 1) -> str:") == [
        ("v: object (was v); n: int = 1 (was n=1); returns str (was nothing)", 0.7)
    ]
    assert said("def f(v: float) -> float:", "def f(v: float | int) -> float | int:") == [
        ("v: float | int (was v: float); returns float | int (was float)", 0.7)
    ]
    # what a caller must change stays confident: a default, a name, a kind
    assert said("def f(v: int = 1):", "def f(v: int = 2):") == [("v: int = 2 (was v: int = 1)", 0.9)]
    assert said("def f(v: int, w: int):", "def f(v: str, *, w: int):") == [
        ("v: str (was v: int); w keyword-only (was positional)", 0.9)
    ]
    assert said("def f(v, w):", "def f(v, /, w):") == [("v positional-only (was positional)", 0.9)]


def test_an_overloaded_function_has_no_signature_change() -> None:
    """The parser keeps one definition of an overloaded name, so its old and new
    headers are not the same definition's: neither an overload added nor the
    implementation's annotations dropped is a change said."""
    old = "def pick(m: dict) -> dict:\n    pass\n"
    new = (
        "from typing import overload\n\n@overload\ndef pick(m: int) -> int: ...\n@typing.overload\n"
        "@cache\ndef pick(m: str, *, o: int) -> str: ...\ndef pick(m, o=None):\n    pass\n"
    )
    assert [c.kind for c in candidates_for_change("a.py", old, new)] == []
    method = "class A:\n    @t.overload\n    async def get(self, k: int) -> int: ...\n    async def get(self, k):\n        pass\n"
    assert candidates_for_change("a.py", "class A:\n    async def get(self, k: str):\n        pass\n", method) == []


@given(
    st.lists(st.sampled_from(["int", "str", "None", "bytes", "t.List[int]", "Dict[str, int]"]), min_size=1, max_size=5)
)
def test_a_union_is_one_spelling_in_any_order_and_form(members: list[str]) -> None:
    """``Union[...]``, ``Optional[...]`` and ``|`` in any order and nesting are one
    annotation; another member set is another."""
    import ast

    from aircher_mem.longterm.changes import _annotation

    def spelled(text: str) -> str:
        return _annotation(ast.parse(text, mode="eval").body)

    piped = " | ".join(members)
    union = f"Union[{', '.join(reversed(members))}]"
    assert spelled(piped) == spelled(union) == spelled(f"Optional[{piped}]" if "None" in members else piped)
    assert spelled(f"Union[{members[0]}, Union[{', '.join(members)}]]") == spelled(piped)
    assert spelled(f"{piped} | float") != spelled(piped)


def test_a_pathological_annotation_is_read_in_bounded_time() -> None:
    deep = "def f(a: " + "List[" * 400 + "int" + "]" * 400 + "):\n    pass\n"
    wide = "def f(a: " + " | ".join(f"T{i}" for i in range(3000)) + "):\n    pass\n"
    for text in (deep, wide):
        found = candidates_for_change("a.py", "def f(a):\n    pass\n", text)
        assert [c.kind for c in found] == ["signature"]


def test_benchmarks_dunders_and_private_signatures_wait_for_approval() -> None:
    assert [c.confidence for c in candidates_for_change("benches/b.py", "", "def run():\n    pass\n")] == [0.7]
    new = "class E(Exception):\n    def __str__(self):\n        return ''\n    def __init__(self):\n        pass\n"
    assert [
        (c.content, c.confidence) for c in candidates_for_change("e.py", "class E(Exception):\n    pass\n", new)
    ] == [
        ("Implemented method E.__str__ in e.py", 0.7),
        ("Implemented method E.__init__ in e.py", 0.9),
    ]
    found = candidates_for_change("p.py", "def _f(a):\n    pass\n", "def _f(a, b):\n    pass\n")
    assert [(c.content, c.confidence) for c in found] == [
        ("Changed the signature of function _f in p.py: added b", 0.7)
    ]


def test_methods_of_a_private_class_are_private() -> None:
    new = "class _Rule:\n    def patterns(self):\n        pass\n"
    assert [(c.content, c.confidence) for c in candidates_for_change("r.py", "class _Rule:\n    pass\n", new)] == [
        ("Implemented method _Rule.patterns in r.py", 0.7)
    ]


def test_tests_are_one_candidate_a_file() -> None:
    old = "def test_a():\n    pass\n"
    new = "def test_b():\n    pass\n\ndef test_c():\n    pass\n"
    assert brief(candidates_for_change("tests/test_x.py", old, new)) == [
        ("new_symbol", "Added tests test_b, test_c in tests/test_x.py", 0.6, None),
        ("removed_symbol", "Removed tests test_a from tests/test_x.py", 0.6, None),
    ]


def test_tests_anywhere_are_tests_and_build_output_is_nothing() -> None:
    old = "pub fn f() {}\n"
    new = "pub fn f() {}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn test_f() {}\n}\n"
    assert brief(candidates_for_change("src/a.rs", old, new)) == [
        ("new_symbol", "Added tests test_f in src/a.rs", 0.6, None)
    ]
    # in a test file, helpers are no facts
    assert (
        candidates_for_change("tests/test_a.py", "", "class Helper:\n    def __bool__(self):\n        return True\n")
        == []
    )
    for generated in ("pkg.egg-info/PKG-INFO", "examples/x/build/lib/x.py", "src/__pycache__/a.py"):
        assert candidates_for_change(generated, None, "def f():\n    pass\n") == []


def test_refactor_needs_lines_both_ways() -> None:
    old = "def f():\n" + "".join(f"    a{i} = {i}\n" for i in range(40))
    new = "def f():\n" + "".join(f"    b{i} = {i}\n" for i in range(40))
    assert brief(candidates_for_change("m.py", old, new)) == [
        ("refactor", "Refactored m.py (40 lines added, 40 removed)", 0.6, None)
    ]
    # Growth or shrinking alone is no refactor; git's counts win over the texts'.
    assert candidates_for_change("m.py", old, new, lines_added=60, lines_removed=2) == []
    assert candidates_for_change("m.py", old, new, lines_added=0, lines_removed=112) == []
    assert candidates_for_change("notes.md", "a\n" * 60, "b\n" * 60) == []


def test_removed_and_renamed_files() -> None:
    assert brief(candidates_for_change("pkg/box.py", BOX, None)) == [("removed_file", "Removed pkg/box.py", 0.85, None)]
    assert brief(candidates_for_change("pkg/crate.py", BOX, BOX, old_path="pkg/box.py")) == [
        ("moved_file", "Renamed pkg/box.py to pkg/crate.py", 0.85, None)
    ]


def test_pyproject_dependencies_and_settings() -> None:
    old = '[project]\nname = "p"\nversion = "0.1"\ndependencies = ["fastapi>=0.100", "click"]\n'
    new = (
        '[project]\nname = "p"\nversion = "0.2"\ndependencies = ["FastAPI>=0.110", "httpx[http2]>=0.27"]\n'
        '[project.optional-dependencies]\ntest = ["pytest>=8"]\n[tool.ruff]\nline-length = 120\n'
    )
    found = candidates_for_change("pyproject.toml", old, new, origin="git_diff", commit="abc")
    assert brief(found) == [
        ("config", "Updated dependency fastapi to >=0.110 in pyproject.toml", 0.9, None),
        ("config", "Added dependency httpx [http2]>=0.27 to pyproject.toml", 0.9, None),
        ("config", "Added dependency pytest (test) >=8 to pyproject.toml", 0.9, None),
        ("config", "Removed dependency click from pyproject.toml", 0.9, None),
        ("config", "Updated project.version to 0.2 in pyproject.toml", 0.7, None),
        ("config", "Set tool.ruff.line-length to 120 in pyproject.toml", 0.7, None),
    ]
    assert {(c.source, c.suggested_level, c.commit, c.domain) for c in found} == {("git_diff", "L1", "abc", None)}


def test_cargo_package_json_go_mod_and_ini() -> None:
    cargo_old = '[package]\nname = "c"\n[dependencies]\nserde = "1"\n'
    cargo_new = '[package]\nname = "c"\n[dependencies]\nserde = { version = "1.0.200", features = ["derive"] }\n[dev-dependencies]\nproptest = "1"\n'
    assert [c.content for c in candidates_for_change("crates/c/Cargo.toml", cargo_old, cargo_new)] == [
        "Updated dependency serde to 1.0.200 in crates/c/Cargo.toml",
        "Added dependency proptest (dev) 1 to crates/c/Cargo.toml",
    ]
    pkg_old = '{"name": "w", "dependencies": {"react": "^18.0.0"}, "scripts": {"test": "jest"}}'
    pkg_new = '{"name": "w", "dependencies": {"react": "^19.0.0"}, "devDependencies": {"vite": "^5"}, "scripts": {"test": "vitest"}}'
    assert [c.content for c in candidates_for_change("web/package.json", pkg_old, pkg_new)] == [
        "Updated dependency react to ^19.0.0 in web/package.json",
        "Added dependency vite (dev) ^5 to web/package.json",
        "Updated scripts.test to vitest in web/package.json",
    ]
    go_old = "module m\n\ngo 1.21\n\nrequire (\n\tgithub.com/a/b v1.0.0\n)\nreplace (\n\tgithub.com/x/y => ../y\n)\n"
    go_new = "module m\n\ngo 1.22\n\nrequire (\n\tgithub.com/a/b v1.2.0\n\tgolang.org/x/sync v0.7.0 // indirect\n)\n"
    assert [c.content for c in candidates_for_change("go.mod", go_old, go_new)] == [
        "Updated dependency github.com/a/b to v1.2.0 in go.mod",
        "Added dependency golang.org/x/sync v0.7.0 to go.mod",
        "Updated go to 1.22 in go.mod",
    ]
    cfg_old = "[options]\ninstall_requires =\n    attrs>=20\n[flake8]\nmax-line-length = 88\n"
    cfg_new = "[options]\ninstall_requires =\n    attrs>=22\n    six\n[flake8]\nmax-line-length = 100\n"
    assert [c.content for c in candidates_for_change("setup.cfg", cfg_old, cfg_new)] == [
        "Updated dependency attrs to >=22 in setup.cfg",
        "Added dependency six to setup.cfg",
        "Updated flake8.max-line-length to 100 in setup.cfg",
    ]


def test_a_new_config_file_and_workflow_lines() -> None:
    assert [c.content for c in candidates_for_change("Cargo.toml", None, '[dependencies]\na = "1"\nb = "2"\n')] == [
        "Added Cargo.toml",
        "Cargo.toml declares dependencies a, b",
    ]
    old = "jobs:\n  test:\n    runs-on: ubuntu-22.04\n    steps:\n      - uses: actions/checkout@v3\n"
    new = "jobs:\n  test:\n    runs-on: ubuntu-24.04  # newer\n    steps:\n      - uses: actions/checkout@v4\n      - run: pytest\n"
    found = candidates_for_change(".github/workflows/ci.yml", old, new)
    assert brief(found) == [
        ("config", "Updated action actions/checkout to v4 in .github/workflows/ci.yml", 0.7, None),
        ("config", "Updated jobs.test.runs-on to ubuntu-24.04 in .github/workflows/ci.yml", 0.6, None),
        ("config", "Set jobs.test.steps.run to pytest in .github/workflows/ci.yml", 0.6, None),
    ]
    pinned = new.replace("@v4", "@" + "ab" * 20) + "      - uses: actions/cache@v4\n"
    assert [c.content for c in candidates_for_change(".github/workflows/ci.yml", new, pinned)] == [
        "Added action actions/cache@v4 to .github/workflows/ci.yml",
        "Updated action actions/checkout to abababababab in .github/workflows/ci.yml",
    ]


@pytest.mark.parametrize(
    ("path", "bad"),
    [
        ("pyproject.toml", "[project\ndependencies = ["),
        ("package.json", "{not json"),
        ("package.json", "[1, 2]"),
        ("setup.cfg", "no section header\n"),
        ("Cargo.toml", "[dependencies]\na = \n"),
    ],
)
def test_malformed_config_files_give_no_setting(path: str, bad: str) -> None:
    good = {"pyproject.toml": "[project]\n", "package.json": "{}", "setup.cfg": "[a]\n", "Cargo.toml": "[package]\n"}[
        path
    ]
    assert candidates_for_change(path, good, bad) == []
    assert candidates_for_change(path, bad, good) == []
    assert [c.kind for c in candidates_for_change(path, None, bad)] == ["new_file"]


def test_candidates_are_capped_per_file_most_confident_first() -> None:
    new = "".join(f"def f{i}():\n    pass\n" for i in range(8)) + "".join(f"def _g{i}():\n    pass\n" for i in range(8))
    found = candidates_for_change("m.py", "", new)
    assert len(found) == MAX_PER_FILE
    assert [c.content for c in found][-2:] == ["Implemented function _g0 in m.py", "Implemented function _g1 in m.py"]


def test_extract_file_rejects_paths_outside_the_root(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("")
    assert [c.content for c in extract_file(tmp_path, tmp_path / "a.py", "", "def f():\n    pass\n")] == [
        "Implemented function f in a.py"
    ]
    for outside in ("../x.py", "/etc/passwd", ""):
        with pytest.raises(InvalidInputError):
            extract_file(tmp_path, outside, None, "x = 1\n")


@given(
    old=st.one_of(st.none(), st.text(max_size=300)),
    new=st.one_of(st.none(), st.text(max_size=300)),
    lines=st.lists(
        st.sampled_from(
            ["def f(x):", "    return x", "class C:", "    def m(self): pass", "import os", '"""Doc of it."""', ""]
        ),
        max_size=12,
    ),
    path=st.sampled_from(
        ["a.py", "src/b.rs", "c.js", "pyproject.toml", "package.json", "x.txt", ".github/workflows/c.yml"]
    ),
)
def test_candidates_never_raise_and_code_refs_point_into_the_new_text(
    old: str | None, new: str | None, lines: list[str], path: str
) -> None:
    if new is not None:
        new = "\n".join(lines) + new
    found = candidates_for_change(path, old, new)
    assert len(found) <= MAX_PER_FILE
    count = len(new.splitlines()) if new is not None else 0
    for c in found:
        assert 0.0 <= c.confidence <= 1.0
        if c.code_ref is not None:
            ref_path, _, span = c.code_ref.partition("#L")
            start, end = (int(x) for x in span.split("-"))
            assert ref_path == path and 1 <= start <= end <= max(count, 1) and c.suggested_level == "L3"


@given(
    before=st.one_of(st.none(), st.lists(st.sampled_from(["def f(x):", "    return x", "class C:", "x = 1", ""]))),
    after=st.one_of(st.none(), st.lists(st.sampled_from(["def f(x, y):", "    return x", "class D:", "x = 2", ""]))),
)
def test_an_edit_is_the_change_from_its_text_before_to_the_file_on_disk(
    tmp_path_factory: pytest.TempPathFactory, before: list[str] | None, after: list[str] | None
) -> None:
    root = tmp_path_factory.mktemp("edit")
    old = None if before is None else "\n".join(before) + "\n"
    new = None if after is None else "\n".join(after) + "\n"
    if new is not None:
        (root / "m.py").write_text(new, encoding="utf-8")
    found = extract_edit(root, "m.py", old)
    assert found == ([] if old is None and new is None else extract_file(root, "m.py", old, new))
    assert extract_edit(root, "m.py", new) == []  # saved unchanged: nothing new


# ---------------------------------------------------------------- git sources


def test_working_tree_staged_commit_and_range(repo: Path) -> None:
    first = git(repo, "rev-parse", "HEAD")
    (repo / "pkg" / "box.py").write_text(BOX2)
    (repo / "new tool.py").write_text('"""A tool with a space in its name."""\n')
    # the working tree (untracked files included); nothing staged yet
    assert [c.content for c in extract(repo)] == [
        "Changed the signature of method Box.open in pkg/box.py: added quietly: bool = False",
        "Implemented method Box.close in pkg/box.py",
        "Implemented function _private in pkg/box.py",
        "Removed function helper from pkg/box.py",
        "pkg/box.py now imports requests",
        "Added new tool.py for a tool with a space in its name",
    ]
    assert extract(repo, source="staged") == []
    git(repo, "add", "new tool.py")
    assert [(c.content, c.source, c.commit) for c in extract(repo, source="staged")] == [
        ("Added new tool.py for a tool with a space in its name", "git_diff", None)
    ]
    second = commit(repo, "second")
    found = extract(repo, source="commit", rev="HEAD")
    assert {c.commit for c in found} == {second}
    assert [c.code_ref for c in found if c.code_ref] == ["pkg/box.py#L9-10", "pkg/box.py#L12-13", "pkg/box.py#L16-17"]
    # the root commit, against nothing
    assert [c.content for c in extract(repo, source="commit", rev=first)] == [
        "Added pkg/box.py for boxes that open and close",
        "Implemented class Box in pkg/box.py",
        "Implemented function helper in pkg/box.py",
        "Added pyproject.toml",
        "pyproject.toml declares dependencies fastapi",
    ]
    (repo / "pyproject.toml").write_text('[project]\nname = "p"\nversion = "0.1"\ndependencies = ["fastapi>=0.110"]\n')
    third = commit(repo, "third")
    # a range is its net change; its candidates carry its end
    found = extract(repo, source="range", rev=f"{first}..{third}")
    assert {c.commit for c in found} == {third}
    assert "Updated dependency fastapi to >=0.110 in pyproject.toml" in [c.content for c in found]
    assert [c.content for c in extract(repo, source="range", rev=f"{second}..")] == [
        "Updated dependency fastapi to >=0.110 in pyproject.toml"
    ]


def test_renames_moves_deletions_and_hostile_names(repo: Path) -> None:
    git(repo, "mv", "pkg/box.py", "pkg/crate.py")
    (repo / "other.py").write_text("def helper(x):\n    return x\n")
    (repo / "pkg" / "crate.py").write_text(BOX.replace("def helper(x):\n    return x\n", ""))
    (repo / "line\nbreak ünï.py").write_text("def odd():\n    pass\n")
    (repo / "blob.bin").write_bytes(b"\0\1\2" * 100)
    (repo / "latin.py").write_bytes(b"# caf\xe9 module for the shop\ndef f():\n    pass\n")
    sha = commit(repo, "move")
    found = extract(repo, source="commit", rev=sha)
    assert [c.content for c in found] == [
        "Added blob.bin",
        "Added latin.py for caf\ufffd module for the shop",
        "Implemented function f in latin.py",
        "Added line\nbreak ünï.py",
        "Implemented function odd in line\nbreak ünï.py",
        "Added other.py",
        "Moved function helper from pkg/crate.py to other.py",
        "Renamed pkg/box.py to pkg/crate.py",
    ]
    git(repo, "rm", "-q", "other.py")
    sha = commit(repo, "remove")
    assert [c.content for c in extract(repo, source="commit", rev=sha)] == ["Removed other.py"]
    files, at = read_changes(repo, source="commit", rev=sha)
    assert at == sha and [(f.path, f.status, f.added, f.removed, f.new_text) for f in files] == [
        ("other.py", "deleted", 0, 2, None)
    ]


def test_errors_not_a_repository_bad_revision_and_a_hanging_git(tmp_path: Path, repo: Path) -> None:
    with pytest.raises(GitError, match="not a git work tree") as caught:
        extract(tmp_path)
    assert caught.value.code == "git_error"
    with pytest.raises(GitError, match="not a git work tree"):
        extract(tmp_path / "absent")
    for rev in ("no-such-rev", "--output=/tmp/x", ""):
        with pytest.raises(InvalidInputError):
            extract(repo, source="commit", rev=rev)
    for bad in ("HEAD", "a...b", None):
        with pytest.raises(InvalidInputError):
            extract(repo, source="range", rev=bad)
    with pytest.raises(InvalidInputError):
        extract(repo, source="working", rev="HEAD")
    with pytest.raises(InvalidInputError):
        extract(repo, source="everything")  # type: ignore[arg-type]
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "git").write_text("#!/bin/sh\nexec /bin/sleep 30\n")
    (fake / "git").chmod(0o755)
    path = os.environ["PATH"]
    try:
        os.environ["PATH"] = str(fake)
        with pytest.raises(GitError, match=r"took longer than 0\.5 s"):
            read_changes(repo, timeout=0.5)
        os.environ["PATH"] = str(tmp_path / "nowhere")
        with pytest.raises(GitError, match="git is not installed"):
            extract(repo)
    finally:
        os.environ["PATH"] = path


def test_a_subfolder_root_sees_its_own_files(repo: Path) -> None:
    (repo / "pkg" / "box.py").write_text(BOX + "\n\ndef more():\n    pass\n")
    (repo / "top.py").write_text("def top():\n    pass\n")
    assert [(c.content, c.code_ref) for c in extract(repo / "pkg")] == [
        ("Implemented function more in box.py", "box.py#L15-16")
    ]


def test_an_unborn_head_and_a_huge_change(tmp_path: Path) -> None:
    root = tmp_path / "r"
    root.mkdir()
    git(root, "init", "-q")
    (root / "a.py").write_text("def f():\n    pass\n")
    os.symlink("/etc/passwd", root / "link.py")
    # no commit yet: the work tree and the index against nothing
    assert [c.content for c in extract(root)] == ["Added a.py", "Implemented function f in a.py", "Added link.py"]
    git(root, "add", "a.py")
    assert [c.content for c in extract(root, source="staged")] == ["Added a.py", "Implemented function f in a.py"]
    for n in range(400):
        (root / f"m{n:03}.py").write_text(f"def g{n}():\n    pass\n")
    (root / "big.py").write_text("x = 1\n" * 300_000)  # over 1 MB: not read
    sha = commit(root, "many")
    found = extract(root, source="commit", rev=sha)
    assert len(found) == 50 and {c.confidence for c in found} == {0.9}
    files, _ = read_changes(root, source="commit", rev=sha)
    assert len(files) == 403 and next(f for f in files if f.path == "big.py").new_text is None
    # the first MAX_FILES (300) in git's order are read: but big.py (too large) and link.py (a symlink)
    assert sum(f.new_text is not None for f in files) == 298


@pytest.mark.parametrize(
    ("text", "summary"),
    [
        (
            "# Shop\n\n[![ci](x)](y)\n\nA small **web store** for [Django](https://x) users. More.\n",
            "A small web store for Django users",
        ),
        (
            "# Shop\n\nA small web store for Django users and shops. More here.\n",
            "A small web store for Django users and shops",
        ),
        (
            "Flask\n=====\n\nFlask is a lightweight WSGI web application framework. It is...\n",
            "Flask is a lightweight WSGI web application framework",
        ),
        (
            "<p align=center><img src=x></p>\n\n```bash\npip install x\n```\n\nRuns `tests` for every pull request you open.\n",
            "Runs tests for every pull request you open",
        ),
        ("", None),
        ("# Title only\n", None),
    ],
)
def test_a_readme_summary_is_its_first_sentence_of_prose(text: str, summary: str | None) -> None:
    assert readme_summary(text) == summary


def test_a_readme_whose_first_sentence_changes_is_an_l0_candidate() -> None:
    old = "# Shop\n\nA small web store for Django users and shops.\n"
    new = "# Shop\n\nA small web store and invoicing tool for Django users.\n\nMore.\n"
    [c] = candidates_for_change("README.md", old, new)
    assert (c.kind, c.suggested_level, c.confidence, c.content) == (
        "readme",
        "L0",
        0.7,
        "README.md says the project is: A small web store and invoicing tool for Django users",
    )
    assert candidates_for_change("README.md", old, old + "\nAnother paragraph.\n") == []  # the same first sentence
    assert [c.kind for c in candidates_for_change("docs/README.md", old, new)] == []  # not the project's README


def test_a_renamed_function_method_or_class_is_one_rename() -> None:
    old = (
        "class Box:\n    def resultcallback(self, f):\n        return self.resultcallback_impl(f)\n\n\n"
        "class Crate:\n    def open(self):\n        return 1\n\n\n"
        "def helper(x):\n    return x + 1\n"
    )
    new = (
        "class Box:\n    def result_callback(self, f):\n        return self.resultcallback_impl(f)\n\n\n"
        "class Chest:\n    def open(self):\n        return 1\n\n\n"
        "def helper2(x):\n    return x + 2\n"
    )
    got = [(c.kind, c.content, c.code_ref) for c in candidates_for_change("pkg/box.py", old, new)]
    assert sorted(got) == sorted(
        [
            ("renamed_symbol", "Renamed method Box.resultcallback to result_callback in pkg/box.py", "pkg/box.py#L2-3"),
            ("renamed_symbol", "Renamed class Crate to Chest in pkg/box.py", "pkg/box.py#L6-8"),
            ("new_symbol", "Implemented function helper2 in pkg/box.py", "pkg/box.py#L11-12"),  # its body changed
            ("removed_symbol", "Removed function helper from pkg/box.py", None),
        ]
    )
