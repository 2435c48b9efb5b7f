"""Facts from the code kept as memories: seed 000's dedup bands (skip at 0.95,
merge at 0.85 by the cosine of stemmed words), pending review below the approval
confidence (never recalled until approved; a rejection forgets the text and keeps
only a digest, so the fact is not proposed again), across a reopen."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import duckdb
import pytest
from aircher_mem import InvalidInputError, Memory
from aircher_mem._core import tokenize
from aircher_mem.config import KnowledgePolicy
from aircher_mem.errors import GitError
from aircher_mem.longterm.knowledge import similarity
from conftest import Store, git
from hypothesis import given
from hypothesis import strategies as st

T0 = 1_700_000_000.0


@dataclasses.dataclass(frozen=True)
class Fact:
    content: str
    confidence: float = 0.9
    source: str = "git_diff"
    suggested_level: str = "L3"
    code_ref: str | None = "app/config.py#L10-24"
    domain: str | None = "app"
    kind: str = "new_symbol"
    commit: str | None = "abc1234"


def words(text: str) -> frozenset[str]:
    return frozenset(tokenize(text, stem=True))


def test_a_confident_fact_is_kept_with_its_code_reference_and_recalled(make_store: Store) -> None:
    lt = make_store()
    [c] = lt.keep_facts([Fact("Implemented parse_config in app/config.py")])
    assert (c.action, c.approved, c.level, c.code_ref, c.source, c.commit) == (
        "created",
        True,
        "L3",
        "app/config.py#L10-24",
        "git_diff",
        "abc1234",
    )
    memory = lt.get(c.memory_id)
    assert (memory.status, memory.level, memory.domain, memory.code_ref, memory.source) == (
        "active",
        "L3",
        "app",
        "app/config.py#L10-24",
        "git_diff",
    )
    assert memory.tags == ["code", "new_symbol"]
    assert [h.id for h in lt.recall("where is parse_config implemented?").hits][:1] == [c.memory_id]


def test_below_the_approval_confidence_a_fact_waits_and_is_never_recalled(make_store: Store) -> None:
    lt = make_store()
    [c] = lt.keep_facts([Fact("Added app/cache.py", confidence=0.6, kind="new_file", code_ref=None)])
    assert (c.action, c.approved) == ("pending", False)
    assert lt.get(c.memory_id).status == "pending"
    assert lt.recall("app/cache.py").hits == []
    assert lt.recall("app/cache.py", at=T0 + 10).hits == []  # not as of later either
    assert [m.id for m in lt.memories(status="pending").memories] == [c.memory_id]
    assert lt.pending_facts() == 1 and lt.counts()["pending"] == 1 and lt.counts()["active"] == 0
    review = lt.review_fact(c.memory_id, "approve")
    assert (review.verdict, review.memory.status) == ("approve", "active")  # type: ignore[union-attr]
    assert [h.id for h in lt.recall("app/cache.py").hits] == [c.memory_id]
    assert lt.pending_facts() == 0
    with pytest.raises(InvalidInputError, match="not pending"):
        lt.review_fact(c.memory_id, "reject")


def test_auto_approve_keeps_every_fact(make_store: Store) -> None:
    lt = make_store()
    [c] = lt.keep_facts([Fact("Added app/cache.py", confidence=0.1)], auto_approve=True)
    assert (c.action, c.approved, lt.get(c.memory_id).status) == ("created", True, "active")


def test_the_dedup_bands_skip_merge_and_add(make_store: Store) -> None:
    lt = make_store()
    first = "Implemented parse_config in app/config.py"
    [a] = lt.keep_facts([Fact(first)])
    # the same words: skipped, the memory unchanged
    [same] = lt.keep_facts([Fact("implemented parse_config in app/config.py", code_ref="app/config.py#L11-25")])
    assert (same.action, same.memory_id) == ("skipped", a.memory_id)
    assert lt.get(a.memory_id).code_ref == "app/config.py#L10-24"
    # in the merge band: a code fact takes the new wording and code reference
    changed = "Implemented parse_config in app/config.py with defaults"
    sim = similarity(words(first), words(changed))
    assert 0.85 <= sim < 0.95, sim
    [merged] = lt.keep_facts([Fact(changed, code_ref="app/config.py#L12-30")])
    assert (merged.action, merged.memory_id) == ("merged", a.memory_id)
    memory = lt.get(a.memory_id)
    assert (memory.content, memory.code_ref, memory.hits) == (changed, "app/config.py#L12-30", 1)
    # below the band: a memory of its own
    [other] = lt.keep_facts([Fact("Implemented load_plugins in app/plugins.py")])
    assert other.action == "created" and other.memory_id != a.memory_id


def test_a_fact_told_in_conversation_is_seen_again_not_rewritten(make_store: Store) -> None:
    lt = make_store()
    told = lt.remember("parse_config lives in app/config.py and reads TOML")
    [c] = lt.keep_facts([Fact("parse_config lives in app/config.py, reads TOML")])
    assert (c.action, c.memory_id) == ("skipped", told.memory_id) or (c.action, c.memory_id) == (
        "merged",
        told.memory_id,
    )
    assert lt.get(told.memory_id).content == "parse_config lives in app/config.py and reads TOML"


def test_a_candidate_like_a_pending_fact_merges_into_it_and_approves_it_when_confident(make_store: Store) -> None:
    lt = make_store()
    [low] = lt.keep_facts([Fact("Refactored app/config.py", confidence=0.7, kind="refactor")])
    assert low.action == "pending"
    [high] = lt.keep_facts([Fact("Refactored app/config.py", confidence=0.9, kind="refactor")])
    assert (high.action, high.memory_id, high.approved) == ("skipped", low.memory_id, False)
    [again] = lt.keep_facts([Fact("Refactored app/config.py loading", confidence=0.9, kind="refactor")])
    assert (again.action, again.memory_id, again.approved) == ("merged", low.memory_id, True)
    assert lt.get(low.memory_id).status == "active"


def test_a_rejected_fact_is_gone_from_the_file_and_not_proposed_again(tmp_path: Path, make_store: Store) -> None:
    path = tmp_path / "lt.duckdb"
    secret = "Added app/zanzibar_quokka.py"
    with make_store(path) as lt:
        [c] = lt.keep_facts([Fact(secret, confidence=0.5, kind="new_file")])
        review = lt.review_fact(c.memory_id, "reject")
        assert (review.verdict, review.memory) == ("reject", None)
        assert lt.pending_facts() == 0
    assert b"zanzibar_quokka" not in path.read_bytes()
    with make_store(path) as lt:
        [again] = lt.keep_facts([Fact(secret, confidence=0.5, kind="new_file")])
        assert (again.action, again.memory_id, again.approved) == ("rejected_before", None, False)
        assert lt.memories(status=None).memories == []
    con = duckdb.connect(str(path), read_only=True)
    try:
        [(digest,)] = con.execute("SELECT digest FROM rejected_facts").fetchall()
    finally:
        con.close()
    assert len(digest) == 64 and "zanzibar" not in digest


def test_pending_facts_survive_a_reopen(tmp_path: Path, make_store: Store) -> None:
    path = tmp_path / "lt.duckdb"
    with make_store(path) as lt:
        [c] = lt.keep_facts([Fact("Added app/cache.py", confidence=0.6)])
    with make_store(path) as lt:
        assert lt.get(c.memory_id).status == "pending" and lt.pending_facts() == 1
        assert lt.recall("cache").hits == []


def test_the_policy_sets_the_threshold_and_the_cap(make_store: Store) -> None:
    lt = make_store(knowledge=KnowledgePolicy(approve_confidence=0.5, max_candidates=2))
    kept = lt.keep_facts([Fact(f"Implemented f{i} in app/m{i}.py", confidence=0.6) for i in range(5)])
    assert [(c.action, c.approved) for c in kept] == [("created", True), ("created", True)]


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("confidence", math.nan, "confidence"),
        ("confidence", 1.5, "confidence"),
        ("suggested_level", "L9", "level"),
        ("source", "rumour", "source"),
        ("content", "", "content"),
    ],
)
def test_malformed_facts_are_refused_and_nothing_is_kept(
    make_store: Store, field: str, value: object, message: str
) -> None:
    lt = make_store()
    bad = dataclasses.replace(Fact("Implemented f in app/m.py"), **{field: value})
    with pytest.raises(InvalidInputError, match=message):
        lt.keep_facts([bad])
    assert lt.memories(status=None).memories == []


def test_a_secret_in_a_fact_is_redacted_before_it_is_kept(make_store: Store) -> None:
    lt = make_store()
    [c] = lt.keep_facts([Fact("Updated API_KEY to sk-live-0123456789abcdef0123456789abcdef in .env")])
    assert "0123456789abcdef0123" not in c.content
    assert "0123456789abcdef0123" not in lt.get(c.memory_id).content


@given(st.lists(st.text(min_size=1, max_size=30), max_size=6), st.lists(st.text(min_size=1, max_size=30), max_size=6))
def test_similarity_is_a_symmetric_cosine_within_0_and_1(a: list[str], b: list[str]) -> None:
    x, y = words(" ".join(a)), words(" ".join(b))
    s = similarity(x, y)
    assert 0.0 <= s <= 1.0 + 1e-12 and s == similarity(y, x)
    assert (s == 0.0) == (not x or not y or not (x & y))
    if x:
        assert math.isclose(similarity(x, x), 1.0)


# -- through the service: git changes in, facts kept, reviewed -------------------------


BEFORE = '"""Boxes that open and close."""\n\n\nclass Box:\n    def open(self, force: bool) -> None:\n        pass\n'
AFTER = (
    '"""Boxes that open and close."""\n\n\nclass Box:\n    def open(self, force: bool, quietly: bool = False) -> None:\n'
    "        pass\n\n    def close(self) -> None:\n        pass\n"
)


def box_changed(root: Path) -> None:
    """A git work tree whose pkg/box.py went from BEFORE (committed) to AFTER."""
    (root / "pkg").mkdir()
    (root / "pkg" / "box.py").write_text(BEFORE)
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "box")
    (root / "pkg" / "box.py").write_text(AFTER)


def test_extract_facts_keeps_the_confident_and_holds_the_rest_for_review(tmp_path: Path) -> None:
    box_changed(tmp_path)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_box.py").write_text("def test_close():\n    pass\n")
    with Memory.open(tmp_path) as mem:
        found = mem.extract_facts()
        got = [(c.kind, c.content, c.confidence, c.action, c.level, c.code_ref) for c in found.candidates]
        assert got == [
            (
                "signature",
                "Changed the signature of method Box.open in pkg/box.py: added quietly: bool = False",
                0.9,
                "created",
                "L3",
                "pkg/box.py#L5-6",
            ),
            ("new_symbol", "Implemented method Box.close in pkg/box.py", 0.9, "created", "L3", "pkg/box.py#L8-9"),
            ("new_file", "Added tests/test_box.py", 0.6, "pending", "L2", None),
            ("new_symbol", "Added tests test_close in tests/test_box.py", 0.6, "pending", "L2", None),
        ]
        assert found.pending_approval == 2 and found.more == 0
        pending = [m.id for m in mem.memories(status="pending").memories]
        assert sorted(pending) == sorted(c.memory_id for c in found.candidates if c.action == "pending")
        assert [h.id for h in mem.recall("Box.close").hits][:1] == [found.candidates[1].memory_id]
        mem.review_fact(pending[0], "approve")
        rejected = mem.review_fact(pending[1], "reject")
        assert rejected.memory is None and mem.longterm.pending_facts() == 0
        again = mem.extract_facts()
        assert [c.action for c in again.candidates] == ["skipped", "skipped", "skipped", "rejected_before"] or [
            c.action for c in again.candidates
        ] == ["skipped", "skipped", "rejected_before", "skipped"]


def test_extract_facts_of_one_file(tmp_path: Path) -> None:
    box_changed(tmp_path)
    (tmp_path / "pkg" / "crate.py").write_text("def pack(x):\n    return [x]\n")
    with Memory.open(tmp_path) as mem:
        found = mem.extract_facts(path="pkg/box.py", auto_approve=True)
        assert {c.code_ref.split("#")[0] for c in found.candidates if c.code_ref} == {"pkg/box.py"}
        assert not any("crate" in c.content for c in found.candidates)
        assert [c.content for c in mem.extract_facts(path=str(tmp_path / "pkg" / "crate.py")).candidates] == [
            "Added pkg/crate.py",
            "Implemented function pack in pkg/crate.py",
        ]
        with pytest.raises(InvalidInputError):
            mem.extract_facts(path="../outside.py")


def test_extract_facts_of_one_save_needs_no_git(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "box.py").write_text(AFTER)
    with Memory.open(tmp_path) as mem:
        found = mem.extract_facts("edit", path="pkg/box.py", before=BEFORE)
        got = [(c.kind, c.content, c.confidence, c.action, c.source) for c in found.candidates]
        assert got == [
            (
                "signature",
                "Changed the signature of method Box.open in pkg/box.py: added quietly: bool = False",
                0.9,
                "created",
                "ast_analysis",
            ),
            ("new_symbol", "Implemented method Box.close in pkg/box.py", 0.9, "created", "ast_analysis"),
        ]
        # the same save again: known, nothing added
        assert [c.action for c in mem.extract_facts("edit", path="pkg/box.py", before=BEFORE).candidates] == [
            "skipped",
            "skipped",
        ]
        # a save that created the file (no text before) ...
        (tmp_path / "pkg" / "crate.py").write_text('"""Crates to ship boxes in."""\n\ndef pack(x):\n    return [x]\n')
        assert [(c.kind, c.content) for c in mem.extract_facts("edit", path="pkg/crate.py").candidates] == [
            ("new_file", "Added pkg/crate.py for crates to ship boxes in"),
            ("new_symbol", "Implemented function pack in pkg/crate.py"),
        ]
        # ... one that removed it, and one of a file that is not text
        (tmp_path / "pkg" / "crate.py").unlink()
        assert [
            c.kind for c in mem.extract_facts("edit", path="pkg/crate.py", before="def pack(x):\n    pass\n").candidates
        ] == ["removed_file"]
        (tmp_path / "blob.py").write_bytes(b"\x00\x01def f(): pass\n")
        assert mem.extract_facts("edit", path="blob.py", before="").candidates == []
        with pytest.raises(InvalidInputError, match="path"):
            mem.extract_facts("edit", before=BEFORE)
        with pytest.raises(InvalidInputError, match="before"):
            mem.extract_facts("working", before=BEFORE)
        with pytest.raises(InvalidInputError):
            mem.extract_facts("edit", path="../outside.py", before="")


def test_extract_facts_outside_a_git_work_tree_or_without_a_rev_is_a_typed_error(tmp_path: Path) -> None:
    with Memory.open(tmp_path) as mem:
        with pytest.raises(GitError, match="not a git work tree"):
            mem.extract_facts()
    git(tmp_path, "init", "-q")
    with Memory.open(tmp_path) as mem, pytest.raises(InvalidInputError, match="revision"):
        mem.extract_facts("range", rev="HEAD")


# -- an index refresh: the graph's definitions against the text now, no git --------------


def refresh_tree(root: Path) -> None:
    """An indexed tree (no git) of pkg/box.py as BEFORE, a helper in pkg/a.py and pkg/gone.py."""
    (root / "pkg").mkdir()
    (root / "pkg" / "box.py").write_text(BEFORE)
    (root / "pkg" / "a.py").write_text("def helper(x):\n    return x\n\n\ndef stay():\n    return 1\n")
    (root / "pkg" / "gone.py").write_text("def old():\n    return 0\n")
    with Memory.open(root) as mem:
        mem.index()


def change_outside_the_agent(root: Path) -> None:
    (root / "pkg" / "box.py").write_text(AFTER)
    (root / "pkg" / "a.py").write_text("def stay():\n    return 1\n")
    (root / "pkg" / "b.py").write_text("def helper(x):\n    return x\n")
    (root / "pkg" / "gone.py").unlink()


def kept_facts(mem: Memory) -> list[tuple[str, str, str]]:
    listed = mem.memories(status="pending").memories + mem.memories(status="active").memories
    return sorted((m.status, m.source, m.content) for m in listed)


def test_an_index_refresh_makes_facts_of_the_files_changed_without_git(tmp_path: Path) -> None:
    refresh_tree(tmp_path)
    # refresh_seconds = 0: each graph verb looks for changed files
    config = "[knowledge]\nfacts_on_index = true\n[server]\nrefresh_seconds = 0\n"
    (tmp_path / ".aircher" / "config.toml").write_text(config)
    change_outside_the_agent(tmp_path)
    with Memory.open(tmp_path) as mem:
        report = mem.index()
        assert (report.added, report.updated, report.removed) == (
            ["pkg/b.py"],
            ["pkg/a.py", "pkg/box.py"],
            ["pkg/gone.py"],
        )
        assert kept_facts(mem) == [
            (
                "active",
                "ast_analysis",
                "Changed the signature of method Box.open in pkg/box.py: added quietly: bool = False",
            ),
            ("active", "ast_analysis", "Implemented method Box.close in pkg/box.py"),
            ("active", "ast_analysis", "Moved function helper from pkg/a.py to pkg/b.py"),
            ("active", "file_change", "Removed pkg/gone.py"),
            ("pending", "file_change", "Added pkg/b.py"),
        ]
        # A graph verb's look for changed files refreshes too, and learns the same way.
        (tmp_path / "pkg" / "a.py").write_text("def stay():\n    return 1\n\n\ndef again(y):\n    return y\n")
        mem.search_code("again")
        assert ("active", "ast_analysis", "Implemented function again in pkg/a.py") in kept_facts(mem)


def test_an_index_refresh_makes_no_facts_unless_asked(tmp_path: Path) -> None:
    refresh_tree(tmp_path)
    change_outside_the_agent(tmp_path)
    with Memory.open(tmp_path) as mem:
        assert mem.index().updated == ["pkg/a.py", "pkg/box.py"]
        assert kept_facts(mem) == []


def test_extract_refresh_compares_the_definitions_held_with_the_text_now(tmp_path: Path) -> None:
    from aircher_mem._core import outline
    from aircher_mem.longterm import changes

    (tmp_path / "pkg").mkdir()
    two_lines = "def build(\n    size: int,\n) -> None:\n    pass\n"
    held = {
        "pkg/box.py": outline("pkg/box.py", BEFORE.encode()),
        "pkg/long.py": outline("pkg/long.py", two_lines.encode()),
    }
    (tmp_path / "pkg" / "box.py").write_text(AFTER)
    # a parameter added on a signature's second line: only its first line is compared
    (tmp_path / "pkg" / "long.py").write_text("def build(\n    size: int, depth: int = 1,\n) -> None:\n    pass\n")
    (tmp_path / "pkg" / "other.py").write_text("def f():\n    pass\n")
    (tmp_path / "pkg" / "blob.py").write_bytes(b"\x00\x01def f(): pass\n")
    found = changes.extract_refresh(
        tmp_path, {**held, "pkg/blob.py": []}, updated=["pkg/box.py", "pkg/long.py", "pkg/other.py", "pkg/blob.py"]
    )
    assert [(c.kind, c.content, c.code_ref) for c in found] == [
        (
            "signature",
            "Changed the signature of method Box.open in pkg/box.py: added quietly: bool = False",
            "pkg/box.py#L5-6",
        ),
        ("new_symbol", "Implemented method Box.close in pkg/box.py", "pkg/box.py#L8-9"),
    ]
    assert changes.extract_refresh(tmp_path, held, updated=["pkg/box.py"], limit=0) == []
    # a build file or README changed: nothing to compare without its text before
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\ndependencies = ["httpx"]\n')
    assert changes.extract_refresh(tmp_path, {"pyproject.toml": []}, updated=["pyproject.toml"]) == []
