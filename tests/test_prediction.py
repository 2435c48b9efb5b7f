"""The predictive engine (``Memory.predict``), the router (``Memory.route_context``)
and the four-tier assembly (``Memory.assemble``): exact predictions, routes and
tier placements, the budget as an invariant, and the paths a text names."""

from __future__ import annotations

import os
import random
from pathlib import Path
from typing import ClassVar

import aircher_mem as am
import pytest
from aircher_mem import assembly
from aircher_mem.assembly import Candidate
from aircher_mem.config import AssemblyPolicy, Policy
from aircher_mem.interfaces import wire
from aircher_mem.mentions import paths_in
from aircher_mem.tokens import TokenCounter
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

T0 = 1_800_000_000.0


@pytest.fixture
def project(tmp_path: Path) -> Path:
    for name in ("app/models.py", "app/views.py", "app/urls.py", "tests/test_views.py", "README.md"):
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x = 1\n")
    (tmp_path / "app" / "views.py").write_text("from app import models\n")
    return tmp_path


# -- the paths a text names --------------------------------------------------------------


def test_paths_in_grep_traceback_and_diff() -> None:
    text = (
        "app/views.py:12:    def get(self):\n"
        'File "/srv/proj/app/models.py", line 40, in save\n'
        "--- a/app/urls.py\n+++ b/app/urls.py\n"
        "see ./README.md. and ../etc/passwd.txt, v1.2, and 'setup.cfg'"
    )
    assert paths_in(text) == ["app/views.py", "/srv/proj/app/models.py", "app/urls.py", "README.md", "setup.cfg"]
    assert paths_in(text, limit=2) == ["app/views.py", "/srv/proj/app/models.py"]


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=400))
def test_paths_in_names_only_source_paths_inside(text: str) -> None:
    for path in paths_in(text):
        assert path in text or path in text.replace("./", "")
        assert ".." not in path.split("/")
        assert path.rsplit(".", 1)[-1].lower() in am.mentions.SOURCE_SUFFIXES


# -- prediction ----------------------------------------------------------------------------


def test_tool_calls_keep_the_project_files_they_name(project: Path) -> None:
    with am.Memory.open(project) as memory:
        memory.record_tool_call(
            "bash",
            {"command": "grep -rn get app"},
            success=True,
            result=f"app/views.py:1:x\nmissing/file.py:2:y\n{project}/app/models.py:3\n/etc/hosts.txt:1",
            at=T0,
        )
        memory.record_tool_call("bash", {"command": "cat app/urls.py"}, success=True, mentions=["README.md"], at=T0 + 1)
        assert memory.episodic.recent_mentions(5) == ["README.md", "app/views.py", "app/models.py"]


def test_predict_ranks_recent_named_companion_and_imported_files(project: Path) -> None:
    policy = AssemblyPolicy()
    with am.Memory.open(project) as memory:
        memory.task("start", task_id="past", description="an earlier task")
        memory.record_file_interaction("app/views.py", "edit", task_id="past", at=T0 + 1)
        memory.record_file_interaction("tests/test_views.py", "edit", task_id="past", at=T0 + 2)
        memory.task("complete", task_id="past")
        memory.task("start", task_id="now", description="this task")
        memory.record_file_interaction("app/urls.py", "read", task_id="now", at=T0 + 11)
        memory.record_file_interaction("app/views.py", "read", task_id="now", at=T0 + 12)
        memory.record_tool_call(
            "bash", {"command": "grep -rn x ."}, success=True, mentions=["README.md"], task_id="now", at=T0 + 13
        )
        memory.index()
        got = memory.predict(task_id="now", current_file="app/views.py")
    by_path = {f.path: f for f in got.files}
    assert [f.path for f in got.files] == [
        "app/views.py",
        "README.md",
        "app/urls.py",
        "tests/test_views.py",
        "app/models.py",
    ]
    assert by_path["app/views.py"].confidence == 1.0
    assert [r.signal for r in by_path["app/views.py"].reasons] == ["current-file", "recent"]
    assert by_path["app/urls.py"].confidence == pytest.approx(policy.recent_weight * policy.recent_decay)
    assert by_path["README.md"].confidence == pytest.approx(policy.mention_weight)
    # views.py and test_views.py were edited together in the one past task with views.py
    assert by_path["tests/test_views.py"].reasons[0].signal == "co-touched"
    assert by_path["tests/test_views.py"].confidence == pytest.approx(policy.companion_weight)
    assert by_path["app/models.py"].reasons == [am.results.Reason("imports", "imported by app/views.py", 0.3)]
    assert got.confidence == pytest.approx(sum(f.confidence for f in got.files) / 5, abs=1e-6)


def test_predict_brings_the_memories_about_predicted_files_and_known_fixes(project: Path) -> None:
    with am.Memory.open(project) as memory:
        kept = memory.remember("views return JSON envelopes", code_ref="app/views.py:get").memory_id
        memory.remember("models are plain dataclasses", code_ref="app/other.py:M")
        memory.record_tool_call(
            "pytest", {}, success=False, error_message="ImportError: no module x", file_path="app/views.py", at=T0
        )
        memory.record_file_interaction("app/views.py", "edit", at=T0 + 1)
        memory.record_tool_call("pytest", {}, success=True, file_path="app/views.py", at=T0 + 2)
        got = memory.predict(recent_errors=["ImportError: no module x"])
    assert [(m.id, m.path) for m in got.memories] == [(kept, "app/views.py")]
    assert [(p.data["file"], p.data["error"]) for p in got.fixes] == [("app/views.py", "ImportError: no module x")]


def test_predict_rejects_one_string_for_errors(project: Path) -> None:
    with am.Memory.open(project) as memory, pytest.raises(am.InvalidInputError):
        memory.predict(recent_errors="boom")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("signal", "value", "message"),
    [
        ("branch", "b" * 1001, "branch is longer than 1,000 characters"),
        ("branch", "\ud800", "branch is not valid text"),
        ("task_id", "t" * 1001, "task_id is longer than 1,000 characters"),
        ("collaborator", "\udfff", "collaborator is not valid text"),
    ],
)
def test_a_bad_signal_is_refused_by_its_name(project: Path, signal: str, value: str, message: str) -> None:
    with am.Memory.open(project) as memory:
        with pytest.raises(am.InvalidInputError, match=message):
            memory.assemble(**{signal: value})
        if signal != "collaborator":
            with pytest.raises(am.InvalidInputError, match=message):
                memory.predict(**{signal: value})


# -- the router ---------------------------------------------------------------------------


def test_route_loads_l0_then_the_matching_domain_and_cross_references(project: Path) -> None:
    with am.Memory.open(project) as memory:
        l0 = memory.remember("every module is typed and ruff-clean", level="L0").memory_id
        auth = memory.remember("login tokens expire after one hour", domain="auth", level="L1").memory_id
        sess = memory.remember(
            "session login cookies are http-only", domain="auth", module="app/views.py", level="L2"
        ).memory_id
        memory.remember("invoices are rendered as PDF", domain="billing", level="L1")
        routed = memory.route_context("why do login tokens expire")
    assert [m.id for m in routed.memories] == [l0, auth, sess]
    assert [(d.domain, d.chosen) for d in routed.domains] == [("auth", True), ("billing", False)]
    assert routed.domains[0].score == 1.0
    assert routed.cross_references == []
    assert routed.confidence == 1.0
    assert "domains loaded: auth (1.00)" in routed.explanation


def test_route_widens_when_confidence_is_low_and_follows_parents(project: Path) -> None:
    policy = Policy(assembly=AssemblyPolicy(route_threshold=0.9))
    with am.Memory.open(project, policy=policy) as memory:
        parent = memory.remember("payments go through the billing service", domain="billing", level="L1").memory_id
        child = memory.remember(
            "refunds are queued", domain="billing", level="L2", parent_id=parent, module="app/models.py"
        ).memory_id
        routed = memory.route_context("refunds queued twice")
    assert [(d.domain, d.chosen) for d in routed.domains] == [("billing", True)]
    assert routed.domains[0].score == pytest.approx(2 / 3)
    assert "widened to billing" in routed.explanation
    assert {m.id for m in routed.memories} == {parent, child}


def test_route_follows_every_change_of_the_memories(project: Path) -> None:
    def loaded(memory: am.Memory) -> list[tuple[int, str]]:
        return [(m.id, m.level) for m in memory.route_context("login tokens expire").memories]

    with am.Memory.open(project) as memory:
        first = memory.remember("login tokens expire after one hour", domain="auth", level="L1").memory_id
        assert loaded(memory) == [(first, "L1")]
        second = memory.remember("login tokens are signed with ed25519", domain="auth", level="L1").memory_id
        assert sorted(loaded(memory)) == [(first, "L1"), (second, "L1")]
        memory.promote(first, "L0")
        assert sorted(loaded(memory)) == [(first, "L0"), (second, "L1")]
        memory.update(second, status="archived")
        assert loaded(memory) == [(first, "L0")]
        memory.update(second, status="active")
        memory.update(second, content="login tokens expire when the session ends")
        assert [m.content for m in memory.route_context("session ends").memories if m.id == second] == [
            "login tokens expire when the session ends"
        ]
        memory.forget(first)
        assert loaded(memory) == [(second, "L1")]


# -- the tiers ----------------------------------------------------------------------------


def _c(tier: str, text: str, ref: str | None = None) -> Candidate:
    return Candidate(tier, "memory", ref, text, 1.0, [])


def test_tiers_pass_what_they_leave_on_and_drop_repeated_refs() -> None:
    tokens = TokenCounter()
    offered = {
        "critical": [],
        "relevant": [_c("relevant", "alpha beta gamma", "memory:1"), _c("relevant", "delta", "memory:2")],
        "background": [_c("background", "alpha beta gamma again", "memory:1"), _c("background", "epsilon")],
    }
    tiers, context, count = assembly.fill_tiers(100, (0.25, 0.375, 0.25), offered, tokens, 300)
    assert [(t.name, t.budget) for t in tiers][:2] == [("critical", 25), ("relevant", 62)]
    assert [i.text for i in tiers[1].items] == ["alpha beta gamma", "delta"]
    assert [i.text for i in tiers[2].items] == ["epsilon"]
    assert context == "## Relevant\n- alpha beta gamma\n- delta\n\n## Background\n- epsilon"
    assert count == tokens.count(context)


@settings(max_examples=60, deadline=None)
@given(
    st.integers(1, 300),
    st.lists(st.tuples(st.sampled_from(assembly.TIERS), st.text(min_size=1, max_size=80)), max_size=30),
    st.sampled_from([(0.25, 0.375, 0.25), (0.375, 0.3125, 0.1875), (1.0, 0.0, 0.0)]),
)
def test_tiers_never_exceed_the_budget(budget: int, items: list[tuple[str, str]], shares: tuple[float, ...]) -> None:
    tokens = TokenCounter()
    offered: dict[str, list[Candidate]] = {}
    for tier, text in items:
        offered.setdefault(tier, []).append(_c(tier, text))
    tiers, context, count = assembly.fill_tiers(budget, shares, offered, tokens, 300)
    assert count == tokens.count(context) <= budget
    assert all(t.tokens <= t.budget for t in tiers)


def test_assemble_places_decisions_errors_prediction_and_conventions(project: Path) -> None:
    with am.Memory.open(project) as memory:
        decision = memory.remember("we keep views thin", kind="decision", code_ref="app/views.py:get").memory_id
        l0 = memory.remember("every module is typed", level="L0", importance=1).memory_id
        plant = memory.remember("the office plant needs water", level="L0").memory_id  # neither important nor recalled
        memory.record_tool_call("pytest", {}, success=False, error_message="boom", file_path="app/views.py")
        memory.record_file_interaction("app/views.py", "read")
        got = memory.assemble(budget=800, query="thin views", current_file="app/views.py", activity="debugging")
    tiers = {t.name: t for t in got.tiers}
    assert got.tiers[0].budget == 300  # debugging: 3/8 of the budget to critical
    assert tiers["critical"].items[0].ref == f"memory:{decision}"
    assert [i.kind for i in tiers["critical"].items] == ["decision", "error"]
    assert tiers["relevant"].items[0].text.startswith("Likely next: app/views.py (1.00: current-file, recent)")
    assert [i.ref for i in tiers["background"].items] == [f"memory:{l0}", "history:app/views.py", f"memory:{plant}"]
    assert got.token_count <= 800
    assert got.notes == ["no code graph: the project is not indexed (aircher-mem index)"]


def test_assemble_puts_decisions_about_the_file_first_and_its_neighbours_in_relevant(project: Path) -> None:
    with am.Memory.open(project) as memory:
        here = memory.remember("views stay thin", kind="decision", code_ref="app/views.py:get").memory_id
        near = memory.remember("models are plain dataclasses", kind="decision", code_ref="app/models.py:M").memory_id
        memory.index()
        got = memory.assemble(budget=1000, current_file="app/views.py")
    tiers = {t.name: t for t in got.tiers}
    assert [i.ref for i in tiers["critical"].items] == [f"memory:{here}"]
    [item] = [i for i in tiers["relevant"].items if i.ref == f"memory:{near}"]
    assert item.reasons == [am.results.Reason("code-ref", "about app/models.py, near the file open", 0.5)]
    assert got.notes == []


def test_assemble_points_at_what_did_not_fit(project: Path) -> None:
    with am.Memory.open(project) as memory:
        ids = [
            memory.remember("billing invoices round " + " ".join(f"term{i}x{j}" for j in range(12))).memory_id
            for i in range(12)
        ]
        got = memory.assemble(budget=120, query="billing invoices round")
    index = {t.name: t for t in got.tiers}["index"]
    pointers = [i for i in index.items if i.kind == "pointers"]
    assert pointers and pointers[0].text.startswith("More memories (did not fit; recall or explain them): ")
    placed = {int(i.ref.split(":")[1]) for t in got.tiers for i in t.items if i.ref and i.ref.startswith("memory:")}
    listed = [int(x) for p in pointers for x in p.text.split(": ", 1)[1].split(", ")]
    assert listed and len(set(listed)) == len(listed)
    assert set(listed) <= set(ids) - placed  # each pointer names a memory the tiers had no room for
    assert got.token_count <= 120


# -- the episodic answers predict reads, kept in memory ------------------------------------

_PATHS = ["a.py", "b.py", "c/d.py", "e.rs"]
_TASKS = [None, "t1", "t2"]
_record = st.one_of(
    st.tuples(
        st.just("file"),
        st.sampled_from(_TASKS),
        st.sampled_from(_PATHS),
        st.integers(0, 50),
        st.sampled_from(["read", "edit", "viewed"]),
        st.booleans(),
    ),
    st.tuples(
        st.just("call"),
        st.sampled_from(_TASKS),
        st.lists(st.sampled_from(_PATHS), max_size=3, unique=True),
        st.integers(0, 50),
    ),
)


def _expected(records: list[tuple], task: str | None, limit: int, calls: int) -> tuple[list[str], list[str]]:
    """The answers from the records themselves: the newest distinct files (the last
    one recorded first among equal times), the files of the newest calls."""
    last: dict[str, tuple[int, int]] = {}
    named: list[tuple[int, int, list[str]]] = []
    for n, r in enumerate(records):
        if task is not None and r[1] != task:
            continue
        if r[0] == "file" and r[5] and r[4] != "viewed":
            last[r[2]] = max(last.get(r[2], (-1, -1)), (r[3], n))
        elif r[0] == "call" and r[2]:
            named.append((r[3], n, r[2]))
    files = [p for p, _ in sorted(last.items(), key=lambda kv: kv[1], reverse=True)][:limit]
    mentions = list(dict.fromkeys(p for _, _, ps in sorted(named, reverse=True)[:calls] for p in ps))
    return files, mentions


@settings(max_examples=150, deadline=None)
@given(st.lists(_record, max_size=40), st.integers(0, 40), st.integers(1, 5), st.integers(1, 4))
def test_recent_files_and_mentions_match_the_records_live_and_reopened(
    records: list[tuple], split: int, limit: int, calls: int
) -> None:
    import tempfile

    from aircher_mem.episodic import EpisodicMemory

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "e.duckdb"

        def record(m: EpisodicMemory, r: tuple) -> None:
            if r[0] == "file":
                m.record_file_interaction(r[2], r[4], success=r[5], task_id=r[1], timestamp=T0 + r[3])
            else:
                m.record_tool_execution(
                    "bash", {}, result={"mentions": r[2]} if r[2] else None, task_id=r[1], timestamp=T0 + r[3]
                )

        live = EpisodicMemory(path)
        for r in records[:split]:
            record(live, r)
        live.recent_files(1)  # loaded from the store here, then kept current
        for r in records[split:]:
            record(live, r)
        for task in _TASKS:
            want = _expected(records, task, limit, calls)
            assert (live.recent_files(limit, task_id=task), live.recent_mentions(calls, task_id=task)) == want
        live.close()
        reopened = EpisodicMemory(path)
        for task in _TASKS:
            want = _expected(records, task, limit, calls)
            assert (reopened.recent_files(limit, task_id=task), reopened.recent_mentions(calls, task_id=task)) == want
        reopened.close()


# -- the branch, the collaborator and the time of day ----------------------------------------


def test_git_branch_reads_head_and_nothing_else(tmp_path: Path) -> None:
    from aircher_mem.root import git_branch

    assert git_branch(tmp_path) is None  # no repository
    (tmp_path / ".git").mkdir()
    head = tmp_path / ".git" / "HEAD"
    head.write_text("ref: refs/heads/feature/login-fix\n")
    assert git_branch(tmp_path) == "feature/login-fix"
    head.write_text("3f2a9c0d1e2b3a4c5d6e7f8091a2b3c4d5e6f708\n")  # detached
    assert git_branch(tmp_path) is None
    head.write_text("ref: refs/heads/\n")
    assert git_branch(tmp_path) is None
    head.unlink()
    head.symlink_to(tmp_path / "elsewhere")
    (tmp_path / "elsewhere").write_text("ref: refs/heads/main\n")
    assert git_branch(tmp_path) is None  # a link is not followed
    head.unlink()
    os.mkfifo(head)
    assert git_branch(tmp_path) is None  # not read: no writer would ever come
    head.unlink()
    (tmp_path / ".git").rmdir()
    (tmp_path / ".git").write_text("gitdir: /somewhere/else/.git/worktrees/x\n")  # a worktree: outside
    assert git_branch(tmp_path) is None


def test_tasks_carry_their_branch_and_predict_the_files_of_its_tasks(project: Path) -> None:
    policy = AssemblyPolicy()
    (project / ".git").mkdir()
    (project / ".git" / "HEAD").write_text("ref: refs/heads/login-fix\n")
    with am.Memory.open(project) as memory:
        first = memory.task("start", task_id="a", description="start the login fix")
        assert first.branch == "login-fix"  # the branch checked out
        memory.record_file_interaction("app/views.py", "edit", task_id="a", at=T0 + 1)
        memory.record_file_interaction("app/models.py", "read", task_id="a", at=T0 + 2)
        memory.task("complete", task_id="a", outcome="half done")
        memory.task("start", task_id="b", description="more of it", branch="login-fix")
        memory.record_file_interaction("app/views.py", "edit", task_id="b", at=T0 + 3)
        memory.task("complete", task_id="b")
        other = memory.task("start", task_id="c", description="elsewhere", branch="docs")
        assert other.branch == "docs" and wire.to_json(other)["branch"] == "docs"
        memory.record_file_interaction("README.md", "edit", task_id="c", at=T0 + 4)
        memory.task("complete", task_id="c")
        assert [t.task_id for t in memory.episodic.branch_tasks("login-fix")] == ["b", "a"]
        got = memory.predict(branch="login-fix", task_id="new")
        assembled = memory.assemble(budget=2000, branch="login-fix")
    branch = {f.path: f for f in got.files if any(r.signal == "branch" for r in f.reasons)}
    assert set(branch) == {"app/views.py", "app/models.py"}
    views = next(r for r in branch["app/views.py"].reasons if r.signal == "branch")
    assert views.detail == "worked on in 2 of 2 tasks on branch login-fix"
    assert views.confidence == pytest.approx(policy.branch_weight)
    models = next(r for r in branch["app/models.py"].reasons if r.signal == "branch")
    assert models.confidence == pytest.approx(policy.branch_weight / 2)
    relevant = {t.name: t for t in assembled.tiers}["relevant"]
    on_branch = [i for i in relevant.items if i.reasons and i.reasons[0].signal == "branch"]
    assert [i.text for i in on_branch] == [
        "Task b on branch login-fix (completed): more of it",
        "Task a on branch login-fix (completed): start the login fix -> half done",
    ]
    assert not any("branch" in n for n in assembled.notes)


def test_assemble_brings_the_collaborators_preferences(project: Path) -> None:
    with am.Memory.open(project) as memory:
        memory.add_turn("s1", "user", "I prefer tabs over spaces.", speaker="Dana")
        memory.add_turn("s1", "user", "I prefer dark mode.", speaker="Sam")
        dana = [m for m in memory.memories().memories if "tabs" in m.content]
        assert dana and "preference" in dana[0].tags
        got = memory.assemble(budget=2000, collaborator="  dana ")
        nobody = memory.assemble(budget=2000, collaborator="Lee")
    relevant = {t.name: t for t in got.tiers}["relevant"]
    preferred = [i for i in relevant.items if i.reasons and i.reasons[0].signal == "collaborator"]
    assert [i.ref for i in preferred] == [f"memory:{dana[0].id}"]
    assert preferred[0].reasons[0].detail == "a preference of   dana "
    assert not [i for t in nobody.tiers for i in t.items if i.reasons and i.reasons[0].signal == "collaborator"]


def test_assemble_hints_at_the_tools_run_around_this_time_of_day(project: Path) -> None:
    import time

    now = time.time()
    with am.Memory.open(project) as memory:
        for day in range(1, 7):  # pytest six days running, an hour either side of now's time of day
            memory.record_tool_call("pytest", {}, success=True, at=now - day * 86_400 + (day % 3 - 1) * 1800)
        for day in range(1, 7):  # ruff as often, but twelve hours off
            memory.record_tool_call("ruff", {}, success=True, at=now - day * 86_400 + 12 * 3600)
        memory.record_tool_call("mypy", {}, success=True, at=now - 40 * 86_400)  # too long ago
        assert memory.episodic.tools_at_hour(now, days=30) == [("pytest", 6, 6)]
        predicted = memory.predict()
        got = memory.assemble(budget=2000)
        quiet = Policy.from_dict({"assembly": {"hour_min_runs": 7}})
    assert predicted.workflows == [am.results.PredictedWorkflow("pytest", 6, 1.0)]
    assert got.prediction.workflows == predicted.workflows
    background = {t.name: t for t in got.tiers}["background"]
    assert [i.text for i in background.items if i.ref == "hour"] == [
        "Around this time of day the tools run most were: pytest (6)"
    ]
    with am.Memory.open(project, policy=quiet) as memory:
        assert not [i for t in memory.assemble(budget=2000).tiers for i in t.items if i.ref == "hour"]
        assert memory.predict().workflows == []


class Senses:
    """A stand-in embedder: billing texts one way, auth texts another, the rest a third."""

    VECTORS: ClassVar[dict[str, list[float]]] = {
        "invoices are rendered as PDF": [1.0, 0.0, 0.0, 0.0],
        "login tokens expire after one hour": [0.0, 1.0, 0.0, 0.0],
        "what do we charge customers": [0.8, 0.0, 0.6, 0.0],  # cosine 0.8 with the invoices
    }

    def embed(self, texts: list[str]) -> object:
        import numpy as np

        return np.array([self.VECTORS.get(t, [0.0, 0.0, 0.0, 1.0]) for t in texts], dtype=np.float32)


def test_route_loads_a_domain_the_dense_channel_finds_when_no_word_matches(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(am.memory, "dense_embedder", lambda policy: (Senses, None))
    with am.Memory.open(project) as memory:
        bill = memory.remember("invoices are rendered as PDF", domain="billing", level="L1").memory_id
        memory.remember("login tokens expire after one hour", domain="auth", level="L1")
        routed = memory.route_context("what do we charge customers")
    by_domain = {d.domain: d for d in routed.domains}
    assert (by_domain["billing"].chosen, by_domain["billing"].dense) == (True, True)
    assert by_domain["billing"].score == pytest.approx(0.8, abs=1e-5)
    assert (by_domain["auth"].chosen, by_domain["auth"].dense) == (False, False)
    assert bill in [m.id for m in routed.memories]
    assert "domains loaded: billing (0.80, dense)" in routed.explanation


def test_a_dense_score_under_the_words_share_changes_nothing(project: Path) -> None:
    with am.Memory.open(project) as memory:
        memory.remember("login tokens expire after one hour", domain="auth", level="L1")
        known = memory._hierarchy()
        args = ("login tokens", known, {}, 500, AssemblyPolicy(), memory.tokens, memory.longterm.records)
        plain = assembly.route(*args)
        lower = assembly.route(*args, dense={"auth": 0.3, "nowhere": 0.9})
    assert (plain.domains, plain.explanation, [m.id for m in plain.memories]) == (
        lower.domains,
        lower.explanation,
        [m.id for m in lower.memories],
    )
    assert plain.domains[0].score == 1.0 and not plain.domains[0].dense


def _grouped(known: assembly.Hierarchy) -> dict[str, object]:
    """A hierarchy as the ids in each of its groups, in order."""

    def ids(members: list[assembly.Routable]) -> list[int]:
        return [m.id for m in members]

    return {
        "levels": {level: ids(members) for level, members in known.by_level.items()},
        "domains": {d: ids(members) for d, members in sorted(known.by_domain.items())},
        "words": known.words,
        "ids": sorted(known.by_id),
        "about": {str(key): ids(members) for key, members in sorted(known.about.items(), key=str)},
        "modules": dict(known.modules),
        "flows": ids(known.flows),
    }


_TOPICS = ["parser", "cache", "login", "deploy", "billing", "search"]
_step = st.one_of(
    st.tuples(
        st.just("remember"),
        st.sampled_from(_TOPICS),
        st.sampled_from(["fact", "decision", "workflow", "pattern"]),
        st.sampled_from([None, "auth", "build"]),
        st.sampled_from([None, "app.models"]),
        st.sampled_from([None, "app/views.py:create", "app/views.py:show"]),
        st.integers(0, 1),
    ),
    st.tuples(
        st.sampled_from(["forget", "archive", "activate", "reword", "level", "cite", "recall"]), st.integers(0, 30)
    ),
    st.tuples(st.just("gc")),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(_step, min_size=4, max_size=25), st.randoms(use_true_random=False))
def test_the_router_hierarchy_kept_and_placed_again_is_the_one_grouped_anew(
    tmp_path_factory: pytest.TempPathFactory, steps: list[tuple[object, ...]], rng: random.Random
) -> None:
    """After every change, the hierarchy the router reads (kept, the changed memories
    placed again) holds what grouping every active memory again gives; so do the
    memories found about a file."""
    with am.Memory.open(tmp_path_factory.mktemp("h")) as memory:
        made: list[int] = []
        for n, step in enumerate(steps):
            op, *args = step
            some = made[int(args[0]) % len(made)] if made and op not in ("remember", "gc") else None
            if op == "remember":
                topic, kind, domain, module, code_ref, importance = args
                text = f"The {topic} step {n} uses {rng.choice(_TOPICS)} and {rng.choice(_TOPICS)} number {n}"
                kept_as = memory.remember(
                    text, kind=kind, domain=domain, module=module, code_ref=code_ref, importance=importance
                )
                made += [kept_as.memory_id] if kept_as.memory_id not in made else []  # not merged into one
            elif some is None and op != "gc":
                continue
            elif op == "forget":
                memory.forget(some)
                made.remove(some)
            elif op in ("archive", "activate"):
                memory.update(some, status="archived" if op == "archive" else "active")
            elif op == "reword":
                memory.update(some, content=f"Reworded {rng.choice(_TOPICS)} {rng.choice(_TOPICS)} note {n}")
            elif op == "level":
                memory.promote(some, rng.choice(["L0", "L1", "L2", "L3"]))
            elif op == "cite":
                memory.feedback(some, "cited")
            elif op == "recall":
                memory.recall(rng.choice(_TOPICS))
            else:
                memory.gc()
            before = memory._known.get(None)
            kept = memory._hierarchy()
            if before is not None and op != "gc" and len(made) > 1:
                assert kept is before[2]  # placed again, not grouped anew
            assert _grouped(kept) == _grouped(assembly.Hierarchy(memory.longterm.active()))
            lt = memory.longterm
            about = [(r.id, path) for r, path in lt.about(["app/views.py", "app.models"])]  # places kept
            places = {place: set(ids) for place, ids in lt._places[1].items()}
            lt._places = None  # and made anew
            assert about == [(r.id, path) for r, path in lt.about(["app/views.py", "app.models"])]
            assert places == lt._places[1]
