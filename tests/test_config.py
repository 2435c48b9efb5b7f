from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

import aircher_mem as am
import numpy as np
import pytest
from aircher_mem.engine import (
    ContextItem,
    ContextItemType,
    ContextPolicy,
    ContextWindow,
    GraphPolicy,
    LongTermMemory,
    ServerPolicy,
)
from aircher_mem.interfaces import hooks


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
    assert list(p.to_dict()) == [
        "context",
        "graph",
        "episodic",
        "retrieval",
        "longterm",
        "server",
        "hooks",
        "assembly",
        "lifecycle",
        "decisions",
        "knowledge",
        "chains",
        "contradictions",
        "store",
    ]


# -- each key moved into the Policy is read from the file and changes what it names -------


def policy_from(tmp_path: Path, toml: str) -> am.Policy:
    path = tmp_path / "config.toml"
    path.write_text(toml)
    return am.Policy.from_toml(path)


def test_the_new_keys_load_from_toml_with_todays_defaults(tmp_path: Path) -> None:
    default = am.Policy()
    assert (
        default.longterm.cosine_window,
        default.assembly.relevant_relevance,
        default.longterm.llm_max_items,
        default.longterm.extract_scan_chars,
        default.longterm.extract_content_chars,
        default.hooks.line_chars,
        default.hooks.query_chars,
        default.hooks.parameter_chars,
        default.hooks.turn_chars,
    ) == (1000, 0.8, 200, 8192, 500, 300, 10_000, 500, 100_000)
    p = policy_from(
        tmp_path,
        "[longterm]\ncosine_window = 7\nllm_max_items = 3\n"
        "extract_scan_chars = 100\nextract_content_chars = 40\n[assembly]\nrelevant_relevance = 0.25\n"
        "[hooks]\nline_chars = 20\nquery_chars = 12\nparameter_chars = 11\nturn_chars = 9\n",
    )
    assert (
        p.longterm.cosine_window,
        p.assembly.relevant_relevance,
        p.longterm.llm_max_items,
        p.longterm.extract_scan_chars,
        p.longterm.extract_content_chars,
        p.hooks.line_chars,
        p.hooks.query_chars,
        p.hooks.parameter_chars,
        p.hooks.turn_chars,
    ) == (7, 0.25, 3, 100, 40, 20, 12, 11, 9)
    assert am.Policy.from_dict(p.to_dict()) == p


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[longterm]\ncosine_window = 0\n", r"longterm.cosine_window must be in \[1, 1000000\], got 0"),
        ("[assembly]\nrelevant_relevance = -0.5\n", r"assembly.relevant_relevance must be in \[0.0, 100.0\], got -0.5"),
        ("[longterm]\nllm_max_items = 0\n", r"longterm.llm_max_items must be in \[1, 100000\], got 0"),
        ("[longterm]\nextract_scan_chars = 0\n", r"longterm.extract_scan_chars must be in \[1, 10000000\], got 0"),
        (
            "[longterm]\nextract_content_chars = 5\n",
            r"longterm.extract_content_chars must be in \[10, 1000000\], got 5",
        ),
        ("[hooks]\nline_chars = 9\n", r"hooks.line_chars must be in \[10, 10000\], got 9"),
        ("[hooks]\nquery_chars = 1.5\n", "hooks.query_chars must be an integer, got 1.5"),
        ("[hooks]\nparameter_chars = 9\n", r"hooks.parameter_chars must be in \[10, 1000000\], got 9"),
        ("[hooks]\nturn_chars = 0\n", r"hooks.turn_chars must be in \[1, 1000000\], got 0"),
    ],
)
def test_the_new_keys_are_checked_like_their_neighbours(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(am.PolicyError, match=message):
        policy_from(tmp_path, text)


def test_relevant_relevance_is_the_relevance_of_the_relevant_tier_in_the_window(project: Path) -> None:
    (project / ".aircher").mkdir()
    (project / ".aircher" / "config.toml").write_text("[assembly]\nrelevant_relevance = 0.25\n")
    with am.Memory.open(project) as memory:
        memory.remember("The deploy script lives in tools/release.sh")
        memory.prepare_context("where is the deploy script?")
        recalled = [i for i in memory.window.window.items() if i.content.startswith("## Relevant\n- [memory 1] (fact)")]
        assert [i.relevance_score for i in recalled] == [0.25]


class Vectors:
    """A stand-in embedder: two memories 0.9 similar, everything else elsewhere."""

    TEXTS: ClassVar[dict[str, list[float]]] = {
        "The deploy script lives in tools/release.sh": [1.0, 0.0, 0.0, 0.0],
        "Releases are shipped by running tools/release.sh": [0.9, 0.435889894, 0.0, 0.0],
    }

    def embed(self, texts: list[str]) -> object:
        return np.array([self.TEXTS.get(t, [0.0, 0.0, 0.0, 1.0]) for t in texts], dtype=np.float32)


@pytest.mark.parametrize(("window", "merged"), [(1000, True), (1, False)])
def test_cosine_window_is_how_many_neighbours_the_cosine_merge_looks_at(
    tmp_path: Path, window: int, merged: bool
) -> None:
    p = policy_from(tmp_path, f"[longterm]\ncosine_window = {window}\n")
    with LongTermMemory(":memory:", policy=p.longterm, embedder=Vectors) as ltm:
        for text in Vectors.TEXTS:
            ltm.remember(text)
        ltm.recall("release script")  # embeds both, then merges
        assert ltm.get(2).status == ("archived" if merged else "active")


def test_llm_max_items_is_how_many_items_of_an_extractor_are_read(tmp_path: Path) -> None:
    p = policy_from(tmp_path, "[longterm]\nllm_max_items = 2\nextractor_mode = 'llm'\n")
    said = ["The API listens on port 8080", "Deploys happen every Friday", "The office opens at nine"]
    items = [{"content": content} for content in said]
    with LongTermMemory(":memory:", policy=p.longterm, extractor=lambda text: items) as ltm:
        added = ltm.add_turn("s1", "user", "the services")
        assert [e.content for e in added.extracted] == said[:2]
        assert added.notes == [
            "extractor: 1 invalid llm item(s) skipped (first: too many items); the heuristic rules were used"
        ]


def test_extract_scan_chars_and_content_chars_bound_what_the_rules_read_and_keep(tmp_path: Path) -> None:
    text = "I prefer tabs for indentation in every file of this repository."
    late = "x " * 60 + "I prefer tabs."
    for toml, kept in [
        ("", [text]),
        ("[longterm]\nextract_content_chars = 20\n", [text[:20]]),
    ]:
        p = policy_from(tmp_path, toml)
        with LongTermMemory(":memory:", policy=p.longterm) as ltm:
            assert [e.content for e in ltm.add_turn("s1", "user", text).extracted] == kept
    for toml, found in [("", 1), ("[longterm]\nextract_scan_chars = 100\n", 0)]:
        p = policy_from(tmp_path, toml)
        with LongTermMemory(":memory:", policy=p.longterm) as ltm:
            assert len(ltm.add_turn("s1", "user", late).extracted) == found


def test_hooks_line_chars_and_query_chars_shape_what_the_hooks_inject(project: Path) -> None:
    with am.Memory.open(project) as memory:
        memory.remember("Never push to the main branch without a review", importance=1)
        memory.task("start", "t1", description="Fix the login bug in the views")
    prompt = "What a lovely weather today; can I push to main?"

    def run(name: str, **fields: Any) -> str:
        payload = {"session_id": "s1", "cwd": str(project), "hook_event_name": name, **fields}
        out, code = hooks.run_hook(name, json.dumps(payload))
        assert code == 0
        return out

    assert "[memory 1] (fact) Never push to the main branch without a review\n" in run("SessionStart")
    assert "[memory 1] (fact) Never push to the main branch without a review\n" in run(
        "UserPromptSubmit", prompt=prompt
    )
    (project / ".aircher" / "config.toml").write_text("[hooks]\nline_chars = 20\nquery_chars = 20\n")
    assert run("SessionStart") == (
        "[aircher-mem] Project memory; cite a memory by its id, e.g. [memory 1].\n"
        "Open tasks:\n"
        "[task t1] (active) Fix the login bug...\n"
        "Project conventions and background:\n"
        "[memory 1] (fact)...\n"
    )
    assert run("UserPromptSubmit", prompt=prompt) == ""  # "What a lovely weathe" recalls nothing


def test_hooks_parameter_chars_and_turn_chars_bound_what_the_hooks_store(project: Path) -> None:
    am.Memory.open(project).close()
    (project / ".aircher" / "config.toml").write_text("[hooks]\nparameter_chars = 12\nturn_chars = 30\n")
    payload = {"session_id": "s1", "cwd": str(project)}
    command = {"command": "pytest -q tests/test_config.py", "flags": ["--maxfail", "1", "-x"]}
    tool_call = {**payload, "tool_name": "Bash", "tool_input": command, "tool_response": {"stdout": "ok"}}
    assert hooks.run_hook("PostToolUse", json.dumps(tool_call)) == ("", 0)
    prompt = "Why does the login view fail on a fresh database?"
    assert hooks.run_hook("UserPromptSubmit", json.dumps({**payload, "prompt": prompt}))[1] == 0
    with am.Memory.open(project) as memory:
        ((parameters,),) = memory.episodic._read("SELECT parameters FROM tool_executions")
        assert json.loads(parameters) == {"command": "pytest -q te...", "flags": '["--maxfa...'}
        assert [t.text for t in memory.longterm.turns("s1")] == [prompt[:30]]
