"""The code-search questions bench's pure parts (benches/questions.py): its data files
(format, split rule, coverage), the definition-hit rule and the per-group summary."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import bench_script
from hypothesis import given
from hypothesis import strategies as st

questions = bench_script("questions")

_HEAD = """[repository]
name = "demo"
language = "Go"
source = "debian"
spec = "golang-demo-dev=1.0-1"
folder = "usr/share/gocode/src/demo"
extensions = ["go"]
"""


def _question(text: str, split: str) -> str:
    return f'\n[[question]]\ntext = "{text}"\nfiles = ["a.go"]\ndefinitions = ["F"]\nsplit = "{split}"\n'


def test_the_shipped_questions_cover_the_promised_ground() -> None:
    repos = questions.load()
    qs = [q for r in repos for q in r.questions]
    assert len(qs) >= 120
    assert len(repos) >= 12
    assert len({r.language for r in repos}) >= 8
    for repo in repos:
        assert {q.split for q in repo.questions} == {"tune", "report"}, repo.name
        assert [q.split for q in repo.questions] == [questions.split_for(i) for i in range(len(repo.questions))]
        assert all(not Path(f).is_absolute() and ".." not in Path(f).parts for q in repo.questions for f in q.files)
    texts = [(q.repository, q.text) for q in qs]
    assert len(set(texts)) == len(texts)


def test_the_earlier_seventeen_questions_keep_their_answers() -> None:
    by_text = {q.text: q for r in questions.load() for q in r.questions}
    q = by_text["how does gin match a request path against its routes (radix tree)?"]
    assert (q.repository, q.files, q.definitions, q.origin) == (
        "gin",
        ("tree.go",),
        ("getValue", "addRoute", "node"),
        "given",
    )
    q = by_text["add rate limiting middleware"]
    assert q.files == ("starlette/middleware/base.py", "starlette/middleware/__init__.py")
    assert q.origin == "given"


def test_a_file_that_breaks_the_split_rule_is_refused(tmp_path: Path) -> None:
    (tmp_path / "demo.toml").write_text(_HEAD + _question("one", "tune") + _question("two", "tune"))
    with pytest.raises(questions.DataError, match=r"demo.toml question 2: split 'tune', the rule gives 'report'"):
        questions.load(tmp_path)


def test_a_file_that_follows_the_format_loads(tmp_path: Path) -> None:
    (tmp_path / "demo.toml").write_text(_HEAD + _question("one", "tune") + _question("two", "report"))
    [repo] = questions.load(tmp_path)
    assert repo == questions.Repository(
        "demo",
        "Go",
        "debian",
        "golang-demo-dev=1.0-1",
        "usr/share/gocode/src/demo",
        ("go",),
        (
            questions.Question("demo", "one", ("a.go",), ("F",), "tune"),
            questions.Question("demo", "two", ("a.go",), ("F",), "report"),
        ),
    )


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (('source = "debian"', 'source = "npm"'), "source 'npm' is not one of"),
        (('files = ["a.go"]', "files = []"), "files: wants a non-empty list"),
        (('definitions = ["F"]', 'definitions = "F"'), "definitions: wants a non-empty list"),
        (('extensions = ["go"]\n', ""), "extensions: wants a non-empty list"),
    ],
)
def test_a_malformed_file_is_refused(tmp_path: Path, edit: tuple[str, str], message: str) -> None:
    (tmp_path / "demo.toml").write_text((_HEAD + _question("one", "tune")).replace(*edit, 1))
    with pytest.raises(questions.DataError, match=message):
        questions.load(tmp_path)


@pytest.mark.parametrize(
    ("name", "scope", "path", "expected", "hit"),
    [
        ("matched", "Gitignore", "src/x.rs", ["Gitignore.matched"], True),  # qualified name
        ("matched", "ignore::Gitignore", "src/x.rs", ["Gitignore.matched"], True),  # "::" and a longer scope
        ("getValue", "", "tree.go", ["getValue"], True),  # name
        ("handle", "FingersCrossedHandler", "h.php", ["FingersCrossedHandler"], True),  # a member
        ("matched", "Override", "src/x.rs", ["Gitignore.matched"], False),  # another type's method
        ("Gitignore", "", "src/x.rs", ["Gitignore.matched"], False),  # the class, not the method
        ("matched", "", "src/gitignore.rs", ["Gitignore.matched"], True),  # no scope, in a question's file
        ("matched", "", "src/walk.rs", ["Gitignore.matched"], False),  # no scope, in another file
        ("", "", "src/gitignore.rs", ["Gitignore.matched"], False),
    ],
)
def test_definition_matches(name: str, scope: str, path: str, expected: list[str], hit: bool) -> None:
    assert questions.definition_matches(name, scope, expected, path, ["src/gitignore.rs", "tree.go"]) is hit


@given(
    name=st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True),
    scope=st.lists(st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True), max_size=3),
)
def test_a_definition_answers_its_own_names(name: str, scope: list[str]) -> None:
    qualified = ".".join([*scope, name])
    assert questions.definition_matches(name, ".".join(scope), [qualified])
    assert questions.definition_matches(name, "::".join(scope), [name])


def test_summarize_counts_hits_per_group_and_overall() -> None:
    def row(split: str, ours: int | None, bm25: int | None) -> dict[str, object]:
        return {"split": split, "rank": {"ours": {"files": ours, "definitions": None}, "bm25": {"files": bm25}}}

    rows = [row("tune", 1, 2), row("tune", 6, None), row("report", 3, 1)]
    assert questions.summarize(rows, lambda r: r["split"]) == {
        "tune": {
            "questions": 2,
            "ours files @1": 1,
            "ours files @5": 1,
            "ours definitions @1": 0,
            "ours definitions @5": 0,
            "bm25 files @1": 0,
            "bm25 files @5": 1,
        },
        "report": {
            "questions": 1,
            "ours files @1": 0,
            "ours files @5": 1,
            "ours definitions @1": 0,
            "ours definitions @5": 0,
            "bm25 files @1": 1,
            "bm25 files @5": 1,
        },
        "all": {
            "questions": 3,
            "ours files @1": 1,
            "ours files @5": 2,
            "ours definitions @1": 0,
            "ours definitions @5": 0,
            "bm25 files @1": 1,
            "bm25 files @5": 2,
        },
    }


def test_check_answers_names_missing_files_and_definitions(tmp_path: Path) -> None:
    (tmp_path / "demo.toml").write_text(
        _HEAD + _question("one", "tune") + _question("two", "report").replace('"F"', '"T.Fx"')
    )
    [repo] = questions.load(tmp_path)
    tree = tmp_path / "tree"
    tree.mkdir()
    assert questions.check_answers(tree, repo) == [
        "demo: 'one': no file a.go",
        "demo: 'two': no file a.go",
    ]
    (tree / "a.go").write_text("package demo\n\nfunc F() {}\n\nfunc (t T) Fxy() {}\n")
    assert questions.check_answers(tree, repo) == ["demo: 'two': T.Fx is in none of a.go"]


def test_a_source_that_cannot_be_fetched_is_reported_skipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "demo.toml").write_text(_HEAD + _question("one", "tune"))

    def no_apt(cmd: list[str], cwd: Path | None = None) -> None:
        raise questions.FetchError(f"{cmd[0]} is not installed")

    monkeypatch.setattr(questions, "_run", no_apt)
    out = tmp_path / "out.json"
    assert questions.main(["--data", str(data), "--cache", str(tmp_path / "cache"), "--json", str(out)]) == 0
    result = json.loads(out.read_text())
    assert result["skipped"] == {"demo": "Go, debian golang-demo-dev=1.0-1: apt-get is not installed"}
    assert result["rows"] == []
    assert result["overall"] == {"all": {"questions": 0}}
