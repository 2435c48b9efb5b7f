"""Exact scores and pruning decisions on hand-built windows (the scoring formula worked by hand)."""

from __future__ import annotations

import math
import threading

import aircher_mem as am
import numpy as np
import pytest
from aircher_mem.engine import ContextItem, ContextPolicy, ContextWindow
from aircher_mem.errors import DuplicateItemError, UnknownDependencyError, UnknownItemError
from conftest import NOW, T, make_item


def test_scores_are_the_seed_formula_computed_by_hand() -> None:
    w = ContextWindow(10_000)
    w.set_current_task("t1")
    w.add(make_item("sys", T.SystemPrompt(), sticky=True))
    w.add(make_item("task", T.TaskState("t1", "fix login"), age_s=30 * 60, task_id="t1"))
    w.add(make_item("user", T.UserMessage("ProjectFixing"), age_s=119))  # 1 whole minute
    w.add(make_item("act", T.AssistantResponse(["edit_file"]), age_s=60))
    w.add(make_item("say", T.AssistantResponse(), age_s=0))
    w.add(make_item("tool", T.ToolResult("bash", "a.py"), age_s=120, relevance_score=0.5))
    w.add(make_item("code", T.CodeSnippet("a.py", (10, 20)), age_s=0, task_id="t1"))
    w.add(make_item("graph", T.KnowledgeGraphQuery("callers of f", "g, h"), dependencies=["code", "tool"]))
    w.add(make_item("dep2", T.ToolResult("grep"), dependencies=["code"]))

    scores = w.scores(NOW)
    assert scores.dtype == np.float64 and scores.shape == (9,)
    expected = [
        100.0,  # 100 x 1, clamped at max_score
        math.exp(-30 / 60) * 2.0 * 2.0,
        math.exp(-1 / 60) * 1.5,
        math.exp(-1 / 60) * 1.2,
        0.9,
        math.exp(-2 / 60) * (1 + 0.2) * 0.8 * 0.5,  # one dependent
        2.0 * (1 + 0.2 * 2) * 0.7,  # current task, two dependents
        0.6,
        0.8,
    ]
    assert scores.tolist() == pytest.approx(expected, rel=1e-15)


def test_prune_at_eighty_percent_removes_thirty_percent_lowest_first() -> None:
    # max 1000 -> threshold 800. 820 tokens: target = int(820 * 0.3) = 246.
    w = ContextWindow(1000)
    w.add(make_item("sys", T.SystemPrompt(), tokens=100, sticky=True, age_s=5 * 3600))
    w.add(make_item("graph_old", T.KnowledgeGraphQuery("q", "r"), tokens=100, age_s=3 * 3600))  # 0.6e-3
    w.add(make_item("code_old", T.CodeSnippet("a.py", (1, 9)), tokens=100, age_s=3 * 3600))  # 0.7e-3
    w.add(make_item("tool_old", T.ToolResult("bash"), tokens=100, age_s=3 * 3600))  # 0.8e-3
    w.add(make_item("user_old", T.UserMessage(), tokens=120, age_s=3 * 3600))  # 1.5e-3
    w.add(make_item("tool_new", T.ToolResult("bash"), tokens=300))  # 0.8
    r = w.maybe_prune(NOW)
    # Lowest first: graph, code (200 < 246), then tool_old (300 >= 246); user_old stays.
    assert r is not None and [i.id for i in r.removed] == ["graph_old", "code_old", "tool_old"]
    assert [i.id for i in w.items()] == ["sys", "user_old", "tool_new"]
    assert w.token_count == 520
    assert w.pruning_count == 1


def test_prune_result_reports_what_was_removed() -> None:
    w = ContextWindow(1000)
    w.extend(
        [
            make_item("sys", T.SystemPrompt(), tokens=100, sticky=True),
            make_item("g", T.KnowledgeGraphQuery("q", "r"), tokens=150, age_s=3600),
            make_item("c", T.CodeSnippet("a.py", (1, 9)), tokens=150, age_s=3600),
            make_item("u", T.UserMessage(), tokens=500),
        ]
    )
    r = w.maybe_prune(NOW)
    assert r is not None
    # 900 tokens > 800: target max(270, 100) = 270 -> g (150) then c (150).
    assert [i.id for i in r.removed] == ["g", "c"]
    assert r.removed_scores == pytest.approx([0.6 * math.exp(-1), 0.7 * math.exp(-1)], rel=1e-15)
    assert (r.tokens_before, r.tokens_after, r.target_tokens, r.threshold) == (900, 600, 270, 800)
    assert r.reason == "over_threshold"
    assert w.maybe_prune(NOW) is None
    assert w.prune(NOW).reason == "requested"


def test_threshold_is_strictly_exceeded_before_pruning() -> None:
    w = ContextWindow(100)
    w.add(make_item("a", tokens=80))
    assert w.threshold == 80
    assert w.maybe_prune(NOW) is None
    w.add(make_item("b", tokens=1))
    assert w.maybe_prune(NOW) is not None


def test_current_task_boost_changes_the_decision() -> None:
    def window(task: str | None) -> ContextWindow:
        w = ContextWindow(100)
        w.set_current_task(task)
        w.add(make_item("mine", T.CodeSnippet("a.py", (1, 2)), tokens=45, task_id="t1"))  # 0.7 (x2 in t1)
        w.add(make_item("other", T.ToolResult("bash"), tokens=45, task_id="t2"))  # 0.8
        return w

    no_task = window(None)
    r = no_task.maybe_prune(NOW)
    assert r is not None and [i.id for i in r.removed] == ["mine"]
    in_t1 = window("t1")
    r = in_t1.maybe_prune(NOW)
    assert r is not None and [i.id for i in r.removed] == ["other"]


def test_dependents_keep_an_item() -> None:
    w = ContextWindow(100)
    w.add(make_item("base", T.ToolResult("bash"), tokens=40))  # 0.8 * 1.2 with one dependent
    w.add(make_item("plain", T.ToolResult("bash"), tokens=40))  # 0.8
    w.add(make_item("user", T.UserMessage(), tokens=5, dependencies=["base"]))
    r = w.maybe_prune(NOW)
    assert r is not None and [i.id for i in r.removed] == ["plain"]


def test_sticky_items_survive_even_when_nothing_else_is_left() -> None:
    w = ContextWindow(100)
    w.add(make_item("sys", T.SystemPrompt(), tokens=90, sticky=True, age_s=10**6))
    w.add(make_item("x", tokens=5))
    r = w.maybe_prune(NOW)
    assert r is not None and [i.id for i in r.removed] == ["x"]
    assert [i.id for i in w.items()] == ["sys"] and w.token_count == 90


def test_window_api() -> None:
    w = ContextWindow(500, ContextPolicy(prune_threshold=0.5))
    assert (w.max_tokens, w.threshold, len(w), w.current_task) == (500, 250, 0, None)
    w.extend([make_item("a"), make_item("b", dependencies=["a"]), make_item("c")])
    assert "b" in w and "z" not in w and len(w) == 3 and w.token_count == 30
    assert w.get("b").dependencies == ["a"]
    assert w.remove("a").id == "a"
    assert [i.id for i in w.items()] == ["b", "c"] and w.token_count == 20
    assert w.get("c").id == "c"
    clone = w.copy()
    clone.remove("c")
    assert len(w) == 2 and len(clone) == 1
    assert w.policy.prune_threshold == 0.5
    assert "tokens=20/500" in repr(w)


def test_item_fields_round_trip() -> None:
    kind = T.CodeSnippet("src/auth.py", (3, 7))
    item = ContextItem(
        "i",
        "def f(): ...",
        kind,
        token_cost=5,
        timestamp=NOW,
        relevance_score=0.25,
        task_id="t",
        dependencies=["x", "y", "x"],
        sticky=True,
    )
    assert (item.id, item.content, item.token_cost, item.timestamp) == ("i", "def f(): ...", 5, NOW)
    assert (item.relevance_score, item.task_id, item.dependencies, item.sticky) == (0.25, "t", ["x", "y"], True)
    assert item.item_type == kind and item.type_name == "CodeSnippet"
    assert isinstance(item.item_type, T.CodeSnippet) and item.item_type.line_range == (3, 7)
    assert repr(kind) == "ContextItemType.CodeSnippet(file_path='src/auth.py', line_range=(3, 7))"
    assert T.UserMessage().intent is None and T.AssistantResponse().tool_calls == []
    assert T.ToolResult("bash") == T.ToolResult("bash", None) != T.ToolResult("grep")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"token_cost": -1}, "token_cost"),
        ({"relevance_score": float("nan")}, "relevance_score"),
        ({"relevance_score": -0.1}, "relevance_score"),
        ({"relevance_score": float("inf")}, "relevance_score"),
        ({"timestamp": float("nan")}, "timestamp"),
        ({"dependencies": ["me"]}, "itself"),
    ],
)
def test_bad_items_raise_invalid_input(kwargs: dict[str, object], message: str) -> None:
    base: dict[str, object] = {"token_cost": 1, "timestamp": NOW}
    with pytest.raises(am.InvalidInputError, match=message):
        ContextItem("me", "x", T.SystemPrompt(), **{**base, **kwargs})  # type: ignore[arg-type]


def test_bad_item_types_raise() -> None:
    with pytest.raises(am.InvalidInputError, match="intent"):
        ContextItem("u", "x", T.UserMessage("Chatting"), token_cost=1, timestamp=NOW)
    with pytest.raises(am.InvalidInputError, match="line_range"):
        ContextItem("c", "x", T.CodeSnippet("a.py", (9, 2)), token_cost=1, timestamp=NOW)
    with pytest.raises(am.InvalidInputError, match="must not be empty"):
        ContextItem("", "x", T.SystemPrompt(), token_cost=1, timestamp=NOW)


class _Hostile:
    """A sequence whose every access raises: extraction must still end in InvalidInputError."""

    def __len__(self) -> int:
        raise RuntimeError("no len")

    def __getitem__(self, i: int) -> object:
        raise RuntimeError("no item")


# Values of the wrong Python type for some parameter (None where it is allowed
# for others): the boundary must answer InvalidInputError, never TypeError.
WRONG_TYPES: list[object] = [
    "not a type",
    "",
    5,
    0,
    1.5,
    [1, 2],
    ["a"],
    [None],
    {"a": 1},
    {},
    None,
    object(),
    b"bytes",
    (1, 2),
    _Hostile(),
    T.SystemPrompt,
    ContextPolicy(),
]


def test_wrong_argument_types_raise_invalid_input() -> None:
    w = ContextWindow(100)
    w.add(make_item("a"))
    bad_calls = [
        lambda: ContextItem("i", "c", "not a type", token_cost=1, timestamp=NOW),  # type: ignore[arg-type]
        lambda: ContextItem("i", "c", None, token_cost=1, timestamp=NOW),  # type: ignore[arg-type]
        lambda: ContextItem("i", "c", T.SystemPrompt(), token_cost=1, timestamp=NOW, sticky=[1]),  # type: ignore[arg-type]
        lambda: ContextItem("i", "c", T.SystemPrompt(), token_cost=1, timestamp=NOW, sticky=1),  # type: ignore[arg-type]
        lambda: ContextItem("i", "c", T.SystemPrompt(), token_cost=1, timestamp=NOW, dependencies=5),  # type: ignore[arg-type]
        lambda: ContextItem("i", "c", T.SystemPrompt(), token_cost=1, timestamp=NOW, dependencies="ab"),
        lambda: ContextWindow(100, policy="x"),  # type: ignore[arg-type]
        lambda: ContextWindow(100, policy=make_item("p")),  # type: ignore[arg-type]
        lambda: w.add("not an item"),  # type: ignore[arg-type]
        lambda: w.add(None),  # type: ignore[arg-type]
        lambda: w.add(T.SystemPrompt()),  # type: ignore[arg-type]
        lambda: w.extend([1, 2]),  # type: ignore[list-item]
        lambda: w.extend([make_item("b"), "c"]),  # type: ignore[list-item]
        lambda: w.extend(5),  # type: ignore[arg-type]
        lambda: w.extend("ab"),  # type: ignore[arg-type]
        lambda: w.extend(_Hostile()),  # type: ignore[arg-type]
        lambda: T.AssistantResponse(tool_calls=5),  # type: ignore[arg-type]
        lambda: T.AssistantResponse(tool_calls="bash"),
        lambda: T.AssistantResponse(tool_calls=[1]),  # type: ignore[list-item]
    ]
    for call in bad_calls:
        with pytest.raises(am.InvalidInputError) as info:
            call()
        assert not isinstance(info.value, TypeError)
    assert [i.id for i in w.items()] == ["a"]
    with pytest.raises(am.InvalidInputError, match=r"wrong type.*str.*ContextItem") as info:
        w.add("not an item")  # type: ignore[arg-type]
    assert isinstance(info.value.__cause__, TypeError)
    with pytest.raises(am.InvalidInputError, match=r"wrong type.*int"):
        ContextItem("i", "c", T.SystemPrompt(), token_cost=1, timestamp=NOW, dependencies=5)  # type: ignore[arg-type]
    # The right types still pass.
    item = ContextItem("i", "c", T.AssistantResponse(["x"]), token_cost=1, timestamp=NOW, sticky=True)
    assert item.sticky and item.item_type == T.AssistantResponse(tool_calls=["x"])
    assert ContextWindow(100, policy=None).policy == ContextPolicy()


def test_window_errors_are_typed_and_change_nothing() -> None:
    w = ContextWindow(100)
    w.add(make_item("a"))
    with pytest.raises(DuplicateItemError, match='"a"'):
        w.add(make_item("a"))
    with pytest.raises(UnknownDependencyError, match="ghost"):
        w.extend([make_item("b"), make_item("c", dependencies=["ghost"])])
    with pytest.raises(DuplicateItemError):
        w.extend([make_item("d"), make_item("d")])
    assert [i.id for i in w.items()] == ["a"] and w.token_count == 10
    with pytest.raises(UnknownItemError) as info:
        w.get("nope")
    assert isinstance(info.value, KeyError) and isinstance(info.value, am.AircherError)
    assert str(info.value) == 'no item with id "nope" in the context window'
    with pytest.raises(KeyError):
        w.remove("nope")
    for bad_now in (float("nan"), float("inf")):
        with pytest.raises(am.InvalidInputError, match="now"):
            w.scores(bad_now)
        with pytest.raises(am.InvalidInputError):
            w.maybe_prune(bad_now)
    with pytest.raises(am.InvalidInputError, match="max_tokens"):
        ContextWindow(0)
    with pytest.raises(am.InvalidInputError, match="max_tokens"):
        ContextWindow(-5)
    assert len(w) == 1


def test_errors_share_one_root() -> None:
    for cls in (
        am.InvalidInputError,
        DuplicateItemError,
        UnknownDependencyError,
        UnknownItemError,
        am.PolicyError,
        am.EncodingUnavailableError,
    ):
        assert issubclass(cls, am.AircherError)
    assert issubclass(am.InvalidInputError, ValueError) and issubclass(UnknownItemError, KeyError)


@pytest.mark.slow
def test_pruning_releases_the_gil() -> None:
    """Another thread keeps running Python while a large window is scored and pruned."""
    w = ContextWindow(10**9)
    w.extend([make_item(f"i{n}", age_s=n) for n in range(200_000)])
    ticks = 0
    done = threading.Event()

    def spin() -> None:
        nonlocal ticks
        while not done.is_set():
            ticks += 1

    t = threading.Thread(target=spin)
    t.start()
    try:
        before = ticks
        for _ in range(5):
            w.copy().prune(NOW)
        during = ticks - before
    finally:
        done.set()
        t.join()
    assert during > 0


# --- Typed errors at the boundary: hostile values raise AircherError subclasses ---


def test_out_of_range_values_raise_invalid_input() -> None:
    w = ContextWindow(1_000)
    bad_calls = [
        lambda: ContextWindow(2**70),
        lambda: ContextWindow(-1),
        lambda: ContextWindow(1.5),  # type: ignore[arg-type]
        lambda: ContextItem("a", "x", T.SystemPrompt(), token_cost=2**63, timestamp=NOW),
        lambda: ContextItem("a", "x", T.SystemPrompt(), token_cost=-1, timestamp=NOW),
        lambda: ContextItem("a", "x", T.SystemPrompt(), token_cost=1, timestamp=2**2000),
        lambda: ContextItem("a", "x", T.SystemPrompt(), token_cost=1, timestamp=float("nan")),
        lambda: ContextItem("a", "x", T.SystemPrompt(), token_cost=1, timestamp=NOW, relevance_score=-1.0),
        lambda: T.CodeSnippet("a.py", (-1, 2)),
        lambda: T.CodeSnippet("a.py", (1, 2**64)),
        lambda: T.CodeSnippet("a.py", (1,)),  # type: ignore[arg-type]
        lambda: w.prune(2**2000),
        lambda: w.scores(2**2000),
        lambda: w.maybe_prune(2**2000),
        lambda: ContextPolicy(prune_threshold=2**2000),
    ]
    for call in bad_calls:
        with pytest.raises(am.InvalidInputError):
            call()


def test_lone_surrogates_raise_invalid_input() -> None:
    w = ContextWindow(1_000)
    w.add(make_item("ok"))
    s = "\ud800"
    bad_calls = [
        lambda: ContextItem(s, "x", T.SystemPrompt(), token_cost=1, timestamp=NOW),
        lambda: ContextItem("a", s, T.SystemPrompt(), token_cost=1, timestamp=NOW),
        lambda: ContextItem("a", "x", T.SystemPrompt(), token_cost=1, timestamp=NOW, task_id=s),
        lambda: ContextItem("a", "x", T.SystemPrompt(), token_cost=1, timestamp=NOW, dependencies=[s]),
        lambda: T.ToolResult(s),
        lambda: T.ToolResult("bash", s),
        lambda: T.UserMessage(s),
        lambda: T.AssistantResponse([s]),
        lambda: T.CodeSnippet(s, (1, 2)),
        lambda: T.TaskState(s, "d"),
        lambda: T.KnowledgeGraphQuery("q", s),
        lambda: w.remove(s),
        lambda: w.get(s),
        lambda: s in w,
        lambda: w.set_current_task(s),
        lambda: ContextPolicy(**{s: 1.0}),
    ]
    for call in bad_calls:
        with pytest.raises(am.InvalidInputError, match="lone surrogate"):
            call()


def test_token_count_never_wraps() -> None:
    w = ContextWindow(2**63 - 1)
    big = 2**63 - 1
    w.add(ContextItem("a", "x", T.SystemPrompt(), token_cost=big, timestamp=NOW))
    with pytest.raises(am.InvalidInputError, match="token count"):
        w.add(ContextItem("b", "x", T.SystemPrompt(), token_cost=1, timestamp=NOW))
    with pytest.raises(am.InvalidInputError):
        w.extend([ContextItem(f"c{i}", "x", T.SystemPrompt(), token_cost=big, timestamp=NOW) for i in range(3)])
    assert (len(w), w.token_count) == (1, big)


def test_hostile_values_raise_only_aircher_errors() -> None:
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    hostile = st.one_of(
        st.integers(min_value=-(2**80), max_value=2**80),
        st.sampled_from([2**63, 2**63 - 1, -(2**63) - 1, 2**64, -1, 0, float("nan"), float("inf"), -float("inf")]),
        st.floats(allow_nan=True, allow_infinity=True),
        st.text(max_size=20),
        st.sampled_from(["\ud800", "a\x00b", "x" * 1_000_000, "\udcff", ""]),
        st.sampled_from(WRONG_TYPES),
    )

    def item(**kw: object) -> ContextItem:
        args: dict[str, object] = {"token_cost": 1, "timestamp": NOW} | kw
        return ContextItem(
            str(args.pop("id", "h")),  # type: ignore[arg-type]
            args.pop("content", "x"),  # type: ignore[arg-type]
            args.pop("item_type", T.SystemPrompt()),  # type: ignore[arg-type]
            **args,  # type: ignore[arg-type]
        )

    w = ContextWindow(10**6)
    entry_points = [
        lambda v: ContextWindow(v),
        lambda v: (
            item(id=v) if isinstance(v, str) else ContextItem(v, "x", T.SystemPrompt(), token_cost=1, timestamp=NOW)
        ),
        lambda v: ContextItem("h", v, T.SystemPrompt(), token_cost=1, timestamp=NOW),
        lambda v: item(token_cost=v),
        lambda v: item(timestamp=v),
        lambda v: item(relevance_score=v),
        lambda v: item(task_id=v),
        lambda v: item(dependencies=[v]),
        lambda v: T.ToolResult(v),
        lambda v: T.UserMessage(v),
        lambda v: T.AssistantResponse([v]),
        lambda v: T.CodeSnippet("a.py", (v, v)),
        lambda v: T.CodeSnippet(v, (1, 2)),
        lambda v: T.TaskState(v, v),
        lambda v: T.KnowledgeGraphQuery(v, v),
        lambda v: ContextPolicy(prune_threshold=v),
        lambda v: ContextPolicy(decay_minutes=v),
        lambda v: w.add(item(id="w" + str(v)[:50], token_cost=v)),
        lambda v: w.remove(v),
        lambda v: w.get(v),
        lambda v: v in w,
        lambda v: w.set_current_task(v),
        lambda v: w.scores(v),
        lambda v: w.prune(v),
        lambda v: w.maybe_prune(v),
        lambda v: item(item_type=v),
        lambda v: item(sticky=v),
        lambda v: item(dependencies=v),
        lambda v: ContextWindow(100, policy=v),
        lambda v: ContextWindow(100, v),
        lambda v: w.add(v),
        lambda v: w.extend(v),
        lambda v: w.extend([v]),
        lambda v: T.AssistantResponse(v),
        lambda v: T.AssistantResponse(tool_calls=v),
        lambda v: T.ToolResult("bash", v),
    ]

    @settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.sampled_from(range(len(entry_points))), hostile)
    def check(which: int, value: object) -> None:
        try:
            entry_points[which](value)
        except am.AircherError:
            pass
        assert w.token_count == sum(i.token_cost for i in w.items())

    check()
