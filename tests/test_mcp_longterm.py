"""The long-term memory tools of the MCP server (remember, recall, forget, explain,
feedback, add_turn), driven in-process by the SDK's client: descriptions a model can
act on, and for every call the same JSON as ``aircher-mem <command> --json``."""

from __future__ import annotations

import io
import json
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import aircher_mem as am
import anyio
import pytest
from aircher_mem.interfaces import cli, wire
from aircher_mem.interfaces.mcp import build_server
from aircher_mem.interfaces.mcp import tools as mcp_tools
from mcp import Client
from mcp.types import CallToolResult, TextContent

NOW = 1_700_000_000.0
LONGTERM_TOOLS = ("remember", "recall", "forget", "explain", "feedback", "add_turn")


def text(result: CallToolResult) -> str:
    [block] = result.content
    assert isinstance(block, TextContent)
    return block.text


def answer(result: CallToolResult) -> Any:
    """The tool's JSON, success or error (the error result holds the error JSON)."""
    return json.loads(text(result))


@pytest.fixture
def clock() -> list[float]:
    return [NOW]


def with_server(root: Path, clock: list[float], script: Callable[[Client], Awaitable[None]]) -> None:
    """Serves ``root``'s memory (its time read from ``clock``) to an in-process client."""
    with am.Memory.open(root) as memory:
        memory.longterm.clock = lambda: clock[0]

        async def run() -> None:
            async with Client(build_server(memory)) as client:
                await script(client)

        anyio.run(run)


@pytest.fixture
def cli_clock(monkeypatch: pytest.MonkeyPatch, clock: list[float]) -> Iterator[list[float]]:
    """The CLI's memories read the same clock."""
    opened = cli._open

    def open_with_clock(args: Any) -> am.Memory:
        memory = opened(args)
        memory.longterm.clock = lambda: clock[0]
        return memory

    monkeypatch.setattr(cli, "_open", open_with_clock)
    yield clock


def cli_json(root: Path, argv: list[str]) -> Any:
    out = io.StringIO()
    code = cli.main([*argv, "--json", "--root", str(root)], stdout=out)
    data = json.loads(out.getvalue())
    assert (code == 0) == ("error" not in data), (argv, code, data)
    return data


def test_the_tools_tell_a_model_when_to_remember_and_how_to_cite(tmp_path: Path, clock: list[float]) -> None:
    assert set(LONGTERM_TOOLS) <= set(mcp_tools())

    async def script(c: Client) -> None:
        tools = {t.name: t for t in (await c.list_tools()).tools}
        assert sorted(tools) == sorted(mcp_tools())
        remember, recall, forget, feedback = (tools[n].description or "" for n in LONGTERM_TOOLS[:3] + ("feedback",))
        assert "preference" in remember and "decision" in remember and "reason" in remember
        assert "One memory per fact" in remember and "supersedes" in remember
        content = tools["remember"].input_schema["properties"]["content"]["description"]
        assert "self-contained" in content and "why" in content
        assert "feedback(id, 'cited')" in recall and "'ignored'" in recall and "cite it" in recall
        assert "user asks" in forget and "wrong" in forget
        assert "'cited'" in feedback and "'ignored'" in feedback
        schema = {n: tools[n].input_schema for n in LONGTERM_TOOLS}
        assert schema["add_turn"]["required"] == ["session_id", "role", "text"]
        assert schema["add_turn"]["properties"]["role"]["enum"] == ["user", "assistant"]
        assert schema["feedback"]["properties"]["signal"]["enum"] == ["cited", "ignored"]
        assert schema["remember"]["properties"]["kind"]["enum"] == [
            "fact",
            "decision",
            "episode",
            "pattern",
            "workflow",
        ]
        kinds = schema["recall"]["properties"]["kinds"]["anyOf"][0]["items"]["enum"]
        assert kinds == ["fact", "decision", "episode", "pattern", "workflow", "turn"]
        assert schema["explain"]["required"] == ["memory_id"]

    tmp_path.joinpath("p").mkdir()
    with_server(tmp_path / "p", clock, script)


# (CLI argv, MCP tool, arguments), in order: one recall (a process's first recall
# scores as its later ones do: test_a_second_recall_scores_like_the_first).
SHARED = [
    (
        ["add-turn", "s1", "user", "I prefer tabs.", "--speaker", "ann"],
        "add_turn",
        {"session_id": "s1", "role": "user", "text": "I prefer tabs.", "speaker": "ann"},
    ),
    (
        ["add-turn", "s1", "user", "I now prefer spaces.", "--speaker", "ann"],
        "add_turn",
        {"session_id": "s1", "role": "user", "text": "I now prefer spaces.", "speaker": "ann"},
    ),
    (
        ["add-turn", "s2", "user", "We use Postgres.", "--at", "2023-11-01T12:00Z"],
        "add_turn",
        {"session_id": "s2", "role": "user", "text": "We use Postgres.", "at": "2023-11-01T12:00Z"},
    ),
    (
        ["add-turn", "s2", "assistant", "Noted.", "--no-extract"],
        "add_turn",
        {"session_id": "s2", "role": "assistant", "text": "Noted.", "extract": False},
    ),
    (
        ["remember", "Deploys go through fly.io because it is cheap", "--kind", "decision", "--tags", "ops"],
        "remember",
        {"content": "Deploys go through fly.io because it is cheap", "kind": "decision", "tags": ["ops"]},
    ),
    (
        ["remember", "Never force-push main", "--importance", "1", "--level", "L0"],
        "remember",
        {"content": "Never force-push main", "importance": 1, "level": "L0"},
    ),
    (
        ["remember", "User.save writes through store()", "--code-ref", "app/models.py:User.save"],
        "remember",
        {"content": "User.save writes through store()", "code_ref": "app/models.py:User.save"},
    ),
    (
        ["recall", "tabs or spaces", "-k", "3", "--session-id", "s1", "--kinds", "fact,turn"],
        "recall",
        {"query": "tabs or spaces", "k": 3, "session_id": "s1", "kinds": ["fact", "turn"]},
    ),
    (["feedback", "2", "cited"], "feedback", {"memory_id": 2, "signal": "cited"}),
    (["feedback", "4", "ignored"], "feedback", {"memory_id": 4, "signal": "ignored"}),
    (["explain", "1"], "explain", {"memory_id": 1}),
    (["explain", "2"], "explain", {"memory_id": 2}),
    (["forget", "--text", "fly.io"], "forget", {"text": "fly.io"}),
    (["forget", "5"], "forget", {"memory_id": 5}),
    (["forget", "--text", "nothing like it"], "forget", {"text": "nothing like it"}),
    # errors have one shape too
    (["explain", "4"], "explain", {"memory_id": 4}),
    (["feedback", "99", "cited"], "feedback", {"memory_id": 99, "signal": "cited"}),
    (["forget", "--text", "   "], "forget", {"text": "   "}),
    (
        ["add-turn", "s", "user", " "],
        "add_turn",
        {"session_id": "s", "role": "user", "text": " "},
    ),
]


@pytest.mark.slow
def test_the_tools_give_the_clis_json(tmp_path: Path, cli_clock: list[float]) -> None:
    by_cli, by_mcp = tmp_path / "cli", tmp_path / "mcp"
    for root in (by_cli, by_mcp):
        root.mkdir()
        am.Memory.open(root).close()
    expected = []
    for n, (argv, _, _) in enumerate(SHARED):
        cli_clock[0] = NOW + 60 * n
        expected.append(cli_json(by_cli, argv))
    assert [e["error"]["code"] for e in expected if "error" in e] == [
        "unknown_memory",
        "unknown_memory",
        "invalid_input",
        "invalid_input",
    ]
    assert expected[1]["extracted"][0]["superseded"] == 1
    hits = [(h["kind"], h["id"]) for h in expected[7]["hits"]]
    assert ("fact", 2) in hits and ("fact", 1) not in hits  # the superseded value is no memory now

    async def script(c: Client) -> None:
        for n, ((argv, tool, arguments), want) in enumerate(zip(SHARED, expected)):
            cli_clock[0] = NOW + 60 * n
            result = await c.call_tool(tool, arguments)
            assert result.is_error == ("error" in want), argv
            assert answer(result) == want, argv

    with_server(by_mcp, cli_clock, script)


def test_remember_then_recall_cite_and_forget_in_one_session(tmp_path: Path, clock: list[float]) -> None:
    async def script(c: Client) -> None:
        made = answer(await c.call_tool("remember", {"content": "Tests run with pytest -x because CI is slow"}))
        assert made == {"memory_id": 1, "action": "created", "superseded": None}
        found = answer(await c.call_tool("recall", {"query": "how are tests run?"}))
        assert [(h["kind"], h["id"]) for h in found["hits"]] == [("fact", 1)]
        cited = answer(await c.call_tool("feedback", {"memory_id": 1, "signal": "cited"}))
        assert (cited["retrieved"], cited["cited"], cited["ignored"]) == (1, 1, 0)
        why = answer(await c.call_tool("explain", {"memory_id": 1}))
        assert [a["action"] for a in why["actions"]] == ["created", "cited"]
        assert (why["memory"]["retrieved"], why["memory"]["cited"]) == (1, 1)
        assert why["links"] == [] and why["outlook"] == "keep"
        assert answer(await c.call_tool("forget", {"memory_id": 1})) == {"ids": [1], "turns": []}
        gone = await c.call_tool("explain", {"memory_id": 1})
        assert gone.is_error and answer(gone)["error"]["code"] == "unknown_memory"
        both = await c.call_tool("forget", {"memory_id": 1, "text": "pytest"})
        assert both.is_error and answer(both)["error"]["code"] == "invalid_input"
        late = await c.call_tool("recall", {"query": "tests", "at": "last tuesday"})
        assert answer(late)["error"]["message"].startswith("at must be ISO-8601")

    tmp_path.joinpath("p").mkdir()
    with_server(tmp_path / "p", clock, script)
    with am.Memory.open(tmp_path / "p") as memory:  # the server's writes are in the store
        assert wire.to_json(memory.memories(status=None)) == {"memories": []}


def test_a_second_recall_scores_like_the_first(tmp_path: Path, clock: list[float]) -> None:
    async def script(c: Client) -> None:
        for n, said in enumerate(["I prefer tabs.", "We use Postgres.", "Our CI runs on GitHub Actions."]):
            await c.call_tool("add_turn", {"session_id": f"s{n % 2}", "role": "user", "text": said})
        await c.call_tool("remember", {"content": "Deploys go through fly.io because it is cheap"})
        first = answer(await c.call_tool("recall", {"query": "postgres ci", "kinds": ["turn"]}))
        second = answer(await c.call_tool("recall", {"query": "postgres ci", "kinds": ["turn"]}))
        assert second["hits"] == first["hits"]

    tmp_path.joinpath("p").mkdir()
    with_server(tmp_path / "p", clock, script)
