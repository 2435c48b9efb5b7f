from __future__ import annotations

from pathlib import Path

import aircher_mem as am
import pytest
from aircher_mem.engine import ContextItem, ContextItemType, ContextPolicy, ContextWindow, GraphPolicy, ServerPolicy


def test_the_unweighted_preset_has_the_reference_constants() -> None:
    p = am.Policy.unweighted()
    c = p.context
    assert (p.max_tokens, p.encoding) == (180_000, "cl100k_base")
    assert (c.prune_threshold, c.prune_fraction, c.decay_minutes, c.current_task_boost, c.dependent_boost) == (
        0.8,
        0.3,
        60.0,
        2.0,
        0.2,
    )
    assert [
        c.weight_system_prompt,
        c.weight_task_state,
        c.weight_user_message,
        c.weight_assistant_tool_calls,
        c.weight_assistant_text,
        c.weight_tool_result,
        c.weight_code_snippet,
        c.weight_graph_query,
    ] == [100.0, 2.0, 1.5, 1.2, 0.9, 0.8, 0.7, 0.6]
    assert c.max_score == 100.0
    assert c == ContextPolicy() and not p.drop_stale_views and not p.supersede_views


def test_default_is_the_seed_tuned_on_trajectories() -> None:
    p = am.Policy()
    assert p.context == ContextPolicy(weight_code_snippet=3.0)
    assert p.drop_stale_views and p.supersede_views


def test_fifo_preset_drops_oldest_first() -> None:
    p = am.Policy.fifo(max_tokens=100)
    w = ContextWindow(p.max_tokens, p.context)
    kinds = [
        ContextItemType.SystemPrompt(),
        ContextItemType.CodeSnippet("a.py", (1, 2)),
        ContextItemType.UserMessage(),
        ContextItemType.ToolResult("bash"),
    ]
    for n, kind in enumerate(kinds):  # newest last; the code is older than the user message
        w.add(ContextItem(f"i{n}", "x", kind, token_cost=30, timestamp=1000.0 + n * 90, relevance_score=1.0))
    r = w.maybe_prune(1000.0 + 400)
    assert r is not None and [i.id for i in r.removed] == ["i0", "i1"]
    assert not p.drop_stale_views and not p.supersede_views


def test_toml_round_trip_and_partial_files(tmp_path: Path) -> None:
    custom = am.Policy(max_tokens=32_000, context=ContextPolicy(weight_code_snippet=1.4, prune_fraction=0.25))
    path = tmp_path / "config.toml"
    path.write_text(custom.to_toml())
    assert am.Policy.from_toml(path) == custom
    path.write_text("[context]\nmax_tokens = 8000\ndecay_minutes = 30\nsupersede_views = false\n")
    loaded = am.Policy.from_toml(path)
    assert (loaded.max_tokens, loaded.context.decay_minutes, loaded.context.prune_threshold) == (8000, 30.0, 0.8)
    assert loaded.context.weight_code_snippet == 3.0  # unspecified keys keep the default's values
    assert (loaded.supersede_views, loaded.drop_stale_views) == (False, True)


def test_load_reads_the_project_config(tmp_path: Path) -> None:
    assert am.Policy.load(tmp_path) == am.Policy()
    (tmp_path / ".aircher").mkdir()
    (tmp_path / ".aircher" / "config.toml").write_text("[context]\nprune_threshold = 0.9\n")
    assert am.Policy.load(tmp_path).context.prune_threshold == 0.9


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[context]\nprune_threshold = 1.5\n", "prune_threshold"),
        ("[context]\nprune_fraction = 0\n", "prune_fraction"),
        ("[context]\nweight_code_snippet = -1\n", "weight_code_snippet"),
        ("[context]\ndecay_minutes = nan\n", "decay_minutes"),
        ("[context]\nweight_tool_result = 'high'\n", "weight_tool_result"),
        ("[context]\nweight_tool_result = true\n", "weight_tool_result"),
        ("[context]\nprune_treshold = 0.7\n", "unknown key context.prune_treshold"),
        ("[contxt]\n", "unknown section"),
        ("[context]\nmax_tokens = 0\n", "max_tokens"),
        ("[context]\nmax_tokens = 1.5\n", "max_tokens"),
        ("[context]\nsupersede_views = 1\n", "supersede_views"),
        ("[context\n", "not valid TOML"),
        ("context = 5\n", r"\[context\] must be a table"),
        ('context = "ab"\n', r"\[context\] must be a table"),
        ("[[context]]\n", r"\[context\] must be a table"),
        ("[context]\nmax_tokens = 9223372036854775808\n", "max_tokens must be a positive integer below 2"),
        ("[context]\nmax_tokens = 99999999999999999999999\n", "not valid TOML|max_tokens"),
        ("[graph]\nmax_file_bytes = -1\n", r"graph.max_file_bytes must be in \[1, "),
        ("[graph]\npagerank_damping = 1.5\n", "graph.pagerank_damping"),
        ("[server]\nrefresh_seconds = nan\n", "server.refresh_seconds must be a finite number"),
        ("[server]\nindex_at_start = 1\n", "server.index_at_start must be true or false"),
        ("[retrieval]\ncode_share = 0\n", r"retrieval.code_share must be in \(0.0, 1.0\]"),
        ("[retrieval]\nbogus = 1\n", "unknown key retrieval.bogus; known keys: code_share"),
        ("[episodic]\nco_edit_seconds = '300'\n", "episodic.co_edit_seconds must be an integer"),
    ],
)
def test_bad_config_names_the_file_and_key(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "config.toml"
    path.write_text(text)
    with pytest.raises(am.PolicyError, match=message) as info:
        am.Policy.from_toml(path)
    assert isinstance(info.value, ValueError)


def test_missing_or_binary_config(tmp_path: Path) -> None:
    with pytest.raises(am.PolicyError, match="no such config file"):
        am.Policy.from_toml(tmp_path / "absent.toml")
    path = tmp_path / "bin.toml"
    path.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(am.PolicyError, match="not valid TOML"):
        am.Policy.from_toml(path)


def test_context_policy_in_code() -> None:
    p = ContextPolicy(weight_code_snippet=2.0)
    assert p.replace(weight_code_snippet=0.7) == ContextPolicy()
    assert p.to_dict()["weight_code_snippet"] == 2.0 and list(p.to_dict()) == ContextPolicy.fields
    with pytest.raises(am.PolicyError, match="unknown field"):
        ContextPolicy(bogus=1.0)
    with pytest.raises(am.PolicyError, match="prune_threshold"):
        p.replace(prune_threshold=float("nan"))
    with pytest.raises(am.PolicyError):
        am.Policy(max_tokens=-3)


def test_sections_round_trip_and_set_the_budgets(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text("[retrieval]\ncode_share = 0.5\nmax_code_tokens = 3000\n[episodic]\nco_edit_seconds = 60\n")
    p = am.Policy.from_toml(path)
    assert (p.retrieval.code_share, p.retrieval.max_code_tokens, p.episodic.co_edit_seconds) == (0.5, 3000, 60)
    assert p.graph == GraphPolicy() and p.server == ServerPolicy()  # sections left out keep the defaults
    assert am.Policy(max_tokens=4000, retrieval=p.retrieval).code_tokens == 2000
    assert am.Policy(max_tokens=100_000, retrieval=p.retrieval).code_tokens == 3000  # capped
    assert am.Policy(max_tokens=1).code_tokens == 1
    path.write_text(p.to_toml())
    assert am.Policy.from_toml(path) == p
    assert list(p.to_dict()) == ["context", "graph", "episodic", "retrieval", "longterm", "server", "hooks"]
