"""The MCP server over stdio, driven by the SDK's own client: the installed
``aircher-mem mcp`` is started, its tools listed and every one called on the fixture
repository; bad paths and arguments come back as error results and the server goes on."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import aircher_mem as am
import anyio
import pytest
from aircher_mem import verbs
from aircher_mem.interfaces import http
from aircher_mem.interfaces.mcp import tools as mcp_tools
from conftest import PROJECT_SOURCES
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.types import CallToolResult, TextContent
from starlette.testclient import TestClient

SCRIPT = str(Path(sys.executable).with_name("aircher-mem"))


def text(result: CallToolResult) -> str:
    [block] = result.content
    assert isinstance(block, TextContent)
    return block.text


def ok(result: CallToolResult) -> Any:
    assert not result.is_error, text(result)
    return json.loads(text(result))


def task_shape(task: dict[str, Any]) -> dict[str, Any]:
    """A task's JSON without what the run decides: the session id and the times are
    checked for their type, ``completed_at`` for being set."""
    shape = dict(task)
    assert isinstance(shape.pop("session_id"), str) and isinstance(shape.pop("started_at"), float)
    shape["completed_at"] = shape["completed_at"] is not None
    return shape


def error(result: CallToolResult) -> str:
    assert result.is_error
    return text(result)


async def session_run(root: Path, script: Any, *extra: str) -> None:
    params = StdioServerParameters(command=SCRIPT, args=["mcp", "--root", str(root), *extra], cwd=str(root))
    with open(root.parent / "server-stderr.txt", "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                await script(session)


@pytest.mark.slow
def test_every_tool_over_stdio(project: Path) -> None:
    # The store already holds memories from an earlier run.
    with am.Memory.open(project) as memory:
        mem = memory.episodic
        mem.start_task("t0", "make store persist users")
        for minute in range(3):
            now = 1_700_000_000 + minute * 600
            mem.record_file_interaction("app/models.py", "edit", task_id="t0", timestamp=now)
            mem.record_file_interaction("app/views.py", "edit", task_id="t0", timestamp=now + 30)
        mem.complete_task("t0", "store writes to disk")
        mem.start_task("t1", "add a helper for views")

    async def script(s: ClientSession) -> None:
        tools = (await s.list_tools()).tools
        assert sorted(t.name for t in tools) == sorted(mcp_tools())
        for t in tools:
            assert t.description and len(t.description) > 60, t.name
            assert t.input_schema["type"] == "object"
        schema = {t.name: t.input_schema for t in tools}
        assert schema["relevant_code"]["required"] == ["query"]
        assert schema["record_file_interaction"]["properties"]["operation"]["enum"] == [
            "read",
            "write",
            "edit",
            "search",
            "analyze",
        ]

        save = {
            "name": "save",
            "kind": "function",
            "scope": "User",
            "path": "app/models.py",
            "line": 5,
            "end_line": 6,
            "signature": "def save(self):",
            "qualified": "User.save",
        }
        assert ok(await s.call_tool("find_symbol", {"name": "save"})) == {
            "query": "save",
            "match": "exact",
            "symbols": [save],
            "partial": None,
        }
        assert ok(await s.call_tool("find_symbol", {"name": "User.save"}))["symbols"] == [save]
        found = ok(await s.call_tool("find_symbol", {"name": "s", "prefix": True}))["symbols"]
        assert [x["name"] for x in found] == ["save", "store"]
        found = ok(await s.call_tool("find_symbol", {"name": "STR", "fuzzy": True}))["symbols"]
        assert [x["name"] for x in found] == ["store"]
        assert ok(await s.call_tool("callers", {"name": "store"}))["calls"] == [
            {"symbol": save, "call_line": 6, "kind": "calls", "confidence": 1.0}
        ]
        callees = ok(await s.call_tool("callees", {"name": "create"}))["calls"]
        assert [(c["symbol"]["name"], c["call_line"]) for c in callees] == [("User", 4), ("save", 5)]
        unknown = json.loads(error(await s.call_tool("callers", {"name": "stroe"})))
        assert unknown == {
            "error": {
                "code": "unknown_symbol",
                "type": "UnknownSymbolError",
                "message": "no definition named 'stroe' in the code graph; did you mean: store?",
            }
        }
        assert ok(await s.call_tool("dependencies", {"path": "app/views.py"})) == {
            "path": "app/views.py",
            "dependencies": ["app/models.py"],
            "dependents": [],
        }
        outline = ok(await s.call_tool("file_definitions", {"path": "app/models.py"}))
        assert [(x["qualified"], x["kind"], x["line"]) for x in outline["symbols"]] == [
            ("Base", "class", 1),
            ("User", "class", 4),
            ("User.save", "function", 5),
            ("store", "function", 8),
        ]
        raw = text(await s.call_tool("file_definitions", {"path": "app/util.py"}))
        assert raw == (
            '{"path":"app/util.py","symbols":[{"name":"helper","kind":"function","scope":"",'
            '"path":"app/util.py","line":1,"end_line":2,"signature":"def helper():",'
            '"qualified":"helper"}]}'
        )  # compact JSON
        code = ok(await s.call_tool("relevant_code", {"query": "why does store lose users?", "max_tokens": 8}))
        assert code == {
            "query": "why does store lose users?",
            "max_tokens": 8,
            "tokens": 7,
            "snippets": [
                {
                    "file_path": "app/models.py",
                    "line_range": [8, 9],
                    "content": "def store(obj):\n    return obj",
                    "relevance": 1.0,
                    "tokens": 7,
                }
            ],
        }
        default = ok(await s.call_tool("relevant_code", {"query": "store save"}))
        assert default["max_tokens"] == 16_000 and default["tokens"] == sum(c["tokens"] for c in default["snippets"])

        history = ok(await s.call_tool("file_history", {"path": "app/models.py", "limit": 2}))
        assert [(h["operation"], h["task_id"]) for h in history["interactions"]] == [("edit", "t0"), ("edit", "t0")]
        assert history["failed_tool_runs"] == []
        assert ok(await s.call_tool("co_edited_files", {})) == {
            "path": None,
            "min_count": 3,
            "pairs": [{"file1": "app/models.py", "file2": "app/views.py", "count": 3}],
        }
        assert ok(await s.call_tool("co_edited_files", {"path": "app/util.py"}))["pairs"] == []
        open_tasks = ok(await s.call_tool("tasks", {}))
        assert [(t["task_id"], t["status"]) for t in open_tasks["tasks"]] == [("t1", "active")]
        similar = ok(await s.call_tool("tasks", {"query": "users are not persisted by store"}))
        assert [(t["task_id"], t["outcome"]) for t in similar["tasks"]] == [("t0", "store writes to disk")]

        # The agent declares its task, works, and completes it; a later search finds the outcome.
        started = ok(await s.call_tool("task", {"action": "start", "task_id": "t2", "description": "cache helper"}))
        assert task_shape(started) == {
            "task_id": "t2",
            "description": "cache helper",
            "intent": None,
            "status": "active",
            "completed_at": False,
            "files_touched": [],
            "tools_used": {},
            "outcome": None,
            "score": None,
            "branch": None,
        }
        assert ok(await s.call_tool("task", {"action": "pause", "task_id": "t2"}))["status"] == "paused"
        assert ok(await s.call_tool("task", {"action": "resume", "task_id": "t2"}))["status"] == "active"
        done = ok(await s.call_tool("task", {"action": "complete", "task_id": "t2", "outcome": "memoized helper"}))
        assert task_shape(done) == {
            "task_id": "t2",
            "description": "cache helper",
            "intent": None,
            "status": "completed",
            "completed_at": True,
            "files_touched": [],
            "tools_used": {},
            "outcome": "memoized helper",
            "score": None,
            "branch": None,
        }
        found = ok(await s.call_tool("tasks", {"query": "cache helper"}))["tasks"]
        assert next((t["task_id"], t["outcome"]) for t in found) == ("t2", "memoized helper")
        assert "needs a description" in error(await s.call_tool("task", {"action": "start", "task_id": "t3"}))
        assert "t2" in error(await s.call_tool("task", {"action": "fail", "task_id": "t2"}))  # already completed
        assert (
            json.loads(error(await s.call_tool("task", {"action": "delete", "task_id": "t2"})))["error"]["code"]
            == "invalid_input"
        )

        assert ok(
            await s.call_tool(
                "record_tool_call",
                {
                    "tool_name": "pytest",
                    "success": False,
                    "parameters": {"args": "-x"},
                    "error_message": "1 failed",
                    "duration_ms": 840,
                    "file_path": "app/util.py",
                    "task_id": "t1",
                },
            )
        ) == {"what": "tool_call", "graph_stale": False, "notes": []}
        # The agent edits a file and says so: the next graph query sees the edit.
        (project / "app/util.py").write_text("def helper():\n    return store(1)\n")
        assert ok(
            await s.call_tool(
                "record_file_interaction",
                {
                    "path": "app/util.py",
                    "operation": "edit",
                    "line_range": [1, 2],
                    "changes_summary": "helper stores",
                    "task_id": "t1",
                },
            )
        ) == {"what": "file_interaction", "graph_stale": True, "notes": []}
        callers = ok(await s.call_tool("callers", {"name": "store"}))["calls"]
        assert sorted(c["symbol"]["name"] for c in callers) == ["helper", "save"]
        history = ok(await s.call_tool("file_history", {"path": "app/util.py"}))
        [latest] = history["interactions"]
        assert (latest["operation"], latest["line_range"], latest["changes_summary"]) == (
            "edit",
            [1, 2],
            "helper stores",
        )
        [failed] = history["failed_tool_runs"]  # promised by the tool's description, and given
        assert (failed["tool_name"], failed["error_message"], failed["parameters"]) == (
            "pytest",
            "1 failed",
            {"args": "-x", "file_path": "app/util.py"},
        )

        # Refused: paths outside the root, unknown files, bad arguments. The server goes on.
        for tool, args in [
            ("file_definitions", {"path": "../outside.py"}),
            ("file_history", {"path": "/etc/passwd"}),
            ("dependencies", {"path": "../../x.py"}),
            ("record_file_interaction", {"path": "../x.py", "operation": "read"}),
            ("record_tool_call", {"tool_name": "cat", "success": True, "file_path": "/etc/hosts"}),
        ]:
            refused = json.loads(error(await s.call_tool(tool, args)))["error"]
            assert refused["code"] == "invalid_input" and "is outside the project root" in refused["message"], tool
        assert "no file" in error(await s.call_tool("file_definitions", {"path": "app/absent.py"}))
        assert "no file" in error(await s.call_tool("dependencies", {"path": "app/absent.py"}))
        assert json.loads(error(await s.call_tool("find_symbol", {}))) == {
            "error": {"code": "invalid_input", "type": "InvalidInputError", "message": "name is required"}
        }
        assert (
            json.loads(error(await s.call_tool("relevant_code", {"query": "x", "max_tokens": -5})))["error"]["code"]
            == "invalid_input"
        )
        assert (
            json.loads(
                error(await s.call_tool("record_file_interaction", {"path": "app/util.py", "operation": "delete"}))
            )["error"]["code"]
            == "invalid_input"
        )
        one_line = {"path": "app/util.py", "operation": "read", "line_range": [3]}
        assert "line_range" in error(await s.call_tool("record_file_interaction", one_line))
        assert json.loads(error(await s.call_tool("rm_rf", {})))["error"]["message"].startswith(
            "no tool named 'rm_rf'; tools: add_turn, assemble, callees, "
        )
        assert ok(await s.call_tool("find_symbol", {"name": "User"}))["symbols"][0]["path"] == "app/models.py"

    anyio.run(session_run, project, script, "--refresh-seconds", "3600")
    with am.Memory.open(project) as memory:  # what the agent recorded was flushed to the store
        stats = memory.episodic.tool_stats(days=100_000)
        assert [(t.tool_name, t.total, t.successes) for t in stats] == [("pytest", 1, 0)]
        assert memory.rebuild_reason() == ""
        assert (
            json.loads((project / ".aircher/files.json").read_text())["files"]["paths"].split("\0") == PROJECT_SOURCES
        )


@pytest.mark.slow
def test_server_builds_the_graph_at_start_and_follows_edits_over_time(project: Path) -> None:
    async def script(s: ClientSession) -> None:
        assert json.loads(error(await s.call_tool("find_symbol", {"name": "later"})))["error"]["code"] == (
            "unknown_symbol"
        )
        (project / "app/later.py").write_text("def later():\n    return helper()\n")
        time.sleep(0.3)  # past --refresh-seconds: the next query rescans
        found = ok(await s.call_tool("find_symbol", {"name": "later"}))["symbols"]
        assert [x["path"] for x in found] == ["app/later.py"]

    anyio.run(session_run, project, script, "--refresh-seconds", "0.2")
    assert (project / ".aircher" / "graph.bin").is_file()
    log = (project.parent / "server-stderr.txt").read_text()
    assert f"aircher-mem: {project.resolve()}: 4 files indexed (full build" in log and "Traceback" not in log


@pytest.mark.slow
@pytest.mark.parametrize("tool", ["find_symbol", "callers"])
def test_server_measures_a_query_roundtrip(project: Path, tool: str) -> None:
    timings: list[float] = []

    async def script(s: ClientSession) -> None:
        for _ in range(20):
            start = time.perf_counter()
            assert not (await s.call_tool(tool, {"name": "store"})).is_error
            timings.append(time.perf_counter() - start)

    anyio.run(session_run, project, script, "--refresh-seconds", "3600")
    timings.sort()
    print(f"{tool} over stdio: median {timings[10] * 1000:.2f} ms, max {timings[-1] * 1000:.2f} ms")
    assert timings[10] < 0.5  # a round trip, not a rebuild


# (tool, arguments with one the tool does not take): a model's typos.
MISSPELT = [
    ("relevant_code", {"qurey": "why does store lose users?"}),
    ("find_symbol", {"name": "s", "prefx": True}),
    ("record_tool_call", {"tool_name": "pytest", "success": False, "duraton_ms": 840}),
    ("task", {"action": "start", "task_id": "t1", "descripton": "a task"}),
]


def over_http(project: Path, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    """What the HTTP server answers to each (verb, arguments): a POST's JSON body,
    a GET's query string (each value as JSON text)."""
    token = "t" * 32
    with am.Memory.open(project) as memory:
        memory.index()
        app = http.build_app(memory, token=token)
        with TestClient(app, base_url="http://127.0.0.1:8787", headers={"Authorization": f"Bearer {token}"}) as c:
            return [
                c.post(f"/{tool.replace('_', '-')}", json=args)
                if verbs.get(tool).http_method == "POST"
                else c.get(f"/{tool.replace('_', '-')}", params={k: json.dumps(x) for k, x in args.items()})
                for tool, args in calls
            ]


@pytest.mark.slow
def test_an_argument_a_tool_does_not_take_is_refused_as_over_http(project: Path) -> None:
    answers = over_http(project, MISSPELT)
    assert {r.status_code for r in answers} == {400}
    assert [r.json()["error"]["message"] for r in answers] == [
        "query is required; unknown argument qurey; allowed: query, max_tokens, focus_files",
        "unknown argument prefx; allowed: name, prefix, fuzzy",
        "unknown argument duraton_ms; allowed: tool_name, parameters, success, result, error_message, "
        "duration_ms, file_path, task_id, at, mentions, idempotency_key",
        "unknown argument descripton; allowed: action, task_id, description, outcome, branch",
    ]

    async def script(s: ClientSession) -> None:
        for t in (await s.list_tools()).tools:
            assert t.input_schema["additionalProperties"] is False, t.name
        for (tool, args), want in zip(MISSPELT, answers):
            assert json.loads(error(await s.call_tool(tool, args))) == want.json(), tool
        # Spelt right, the same calls run as before.
        assert [x["name"] for x in ok(await s.call_tool("find_symbol", {"name": "s", "prefix": True}))["symbols"]] == [
            "save",
            "store",
        ]
        assert task_shape(
            ok(await s.call_tool("task", {"action": "start", "task_id": "t1", "description": "a task"}))
        ) == {
            "task_id": "t1",
            "description": "a task",
            "intent": None,
            "status": "active",
            "completed_at": False,
            "files_touched": [],
            "tools_used": {},
            "outcome": None,
            "score": None,
            "branch": None,
        }

    anyio.run(session_run, project, script, "--refresh-seconds", "3600")
    with am.Memory.open(project) as memory:  # the refused calls did nothing
        assert memory.episodic.tool_stats(days=100_000) == []
        assert [(t.task_id, t.description) for t in memory.tasks().tasks] == [("t1", "a task")]


SNAPSHOT = {"timestamp": 1_700_000_000, "session_id": "s1", "total_tokens": 5, "items": [{"id": "a"}], "reason": "r"}
SNAPSHOT_FIELDS = [
    "timestamp",
    "session_id",
    "total_tokens",
    "items",
    "reason",
    "task_id",
    "item_count",
    "pruned_items",
]


@pytest.mark.slow
def test_a_snapshot_is_checked_field_by_field_as_over_http(project: Path) -> None:
    bad = [
        ("record_snapshot", {"snapshot": {**SNAPSHOT, "colour": "red"}}),
        ("record_snapshot", {"snapshot": {**SNAPSHOT, "total_tokens": -1}}),
        ("record_snapshot", {"snapshot": {k: x for k, x in SNAPSHOT.items() if k != "reason"}}),
    ]
    answers = over_http(project, bad)
    assert [r.status_code for r in answers] == [400, 400, 400]
    assert [r.json()["error"]["message"] for r in answers] == [
        "unknown field snapshot.colour; allowed: " + ", ".join(SNAPSHOT_FIELDS),
        "snapshot.total_tokens must be >= 0, got -1",
        "snapshot.reason is required",
    ]

    async def script(s: ClientSession) -> None:
        [tool] = [t for t in (await s.list_tools()).tools if t.name == "record_snapshot"]
        snapshot = tool.input_schema["properties"]["snapshot"]
        assert list(snapshot["properties"]) == SNAPSHOT_FIELDS
        assert snapshot["required"] == ["timestamp", "session_id", "total_tokens", "items", "reason"]
        assert snapshot["additionalProperties"] is False and "$defs" not in tool.input_schema
        for (_, args), want in zip(bad, answers):
            assert json.loads(error(await s.call_tool("record_snapshot", args))) == want.json()
        assert ok(await s.call_tool("record_snapshot", {"snapshot": SNAPSHOT})) == {
            "what": "snapshot",
            "graph_stale": False,
            "notes": [],
        }

    anyio.run(session_run, project, script, "--refresh-seconds", "3600")
    with am.Memory.open(project) as memory:  # the good one only
        [stored] = memory.episodic.snapshots()
        assert stored == {**SNAPSHOT, "task_id": None, "item_count": 1, "pruned_items": []}


# (CLI argv, MCP tool, MCP arguments): the verbs both interfaces offer.
SHARED_VERBS = [
    (["find-symbol", "save"], "find_symbol", {"name": "save"}),
    (["find-symbol", "s", "--prefix"], "find_symbol", {"name": "s", "prefix": True}),
    (["find-symbol", "STR", "--fuzzy"], "find_symbol", {"name": "STR", "fuzzy": True}),
    (["callers", "store"], "callers", {"name": "store"}),
    (["callees", "User.save"], "callees", {"name": "User.save"}),
    (["dependencies", "app/views.py"], "dependencies", {"path": "app/views.py"}),
    (["references", "User"], "references", {"name": "User"}),
    (["references", "Base", "--kind", "inherits"], "references", {"name": "Base", "kind": "inherits"}),
    (["neighbourhood", "store", "--hops", "2"], "neighbourhood", {"name": "store", "hops": 2}),
    (["file-definitions", "app/models.py"], "file_definitions", {"path": "app/models.py"}),
    (
        ["relevant-code", "why does store lose users?", "--max-tokens", "40"],
        "relevant_code",
        {"query": "why does store lose users?", "max_tokens": 40},
    ),
    (["search-code", "persist the user", "-k", "3"], "search_code", {"text": "persist the user", "k": 3}),
    (["search-code", "user model", "--level", "file"], "search_code", {"text": "user model", "level": "file"}),
    (["file-history", "app/models.py"], "file_history", {"path": "app/models.py"}),
    (["co-edited-files", "--min-count", "1"], "co_edited_files", {"min_count": 1}),
    (["co-edited-files", "app/views.py"], "co_edited_files", {"path": "app/views.py"}),
    (["tasks"], "tasks", {}),
    (["tasks", "persist users"], "tasks", {"query": "persist users"}),
]
# Errors have one shape too.
SHARED_ERRORS = [
    (["callers", "nobody"], "callers", {"name": "nobody"}),
    (["search-code", "   "], "search_code", {"text": "   "}),
    (["dependencies", "../outside.py"], "dependencies", {"path": "../outside.py"}),
]


@pytest.mark.slow
def test_the_cli_and_the_mcp_tools_give_the_same_json(project: Path) -> None:
    with am.Memory.open(project) as memory:
        memory.index()
        memory.task("start", "t0", description="make store persist users")
        for _minute in range(3):
            memory.record_file_interaction("app/models.py", "edit", task_id="t0")
            memory.record_file_interaction("app/views.py", "edit", task_id="t0")
        memory.record_tool_call(
            "pytest",
            {"args": "-x"},
            success=False,
            file_path="app/models.py",
            error_message="AssertionError",
            task_id="t0",
        )
    root = ["--root", str(project)]
    started = subprocess.run(
        [SCRIPT, "task", "start", "t-cli", "--description", "from the CLI", "--json", *root],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert task_shape(json.loads(started.stdout)) == {
        "task_id": "t-cli",
        "description": "from the CLI",
        "intent": None,
        "status": "active",
        "completed_at": False,
        "files_touched": [],
        "tools_used": {},
        "outcome": None,
        "score": None,
        "branch": None,
    }
    expected = []
    for argv, _, _ in SHARED_VERBS + SHARED_ERRORS:
        done = subprocess.run([SCRIPT, *argv, "--json", *root], capture_output=True, text=True, timeout=120)
        expected.append(json.loads(done.stdout))
    assert all("error" not in e for e in expected[: len(SHARED_VERBS)])
    assert all("error" in e for e in expected[len(SHARED_VERBS) :])

    async def script(s: ClientSession) -> None:
        for (argv, tool, args), want in zip(SHARED_VERBS + SHARED_ERRORS, expected):
            result = await s.call_tool(tool, args)
            assert json.loads(text(result)) == want, argv
        started = ok(await s.call_tool("task", {"action": "start", "task_id": "t-mcp", "description": "over MCP"}))
        assert task_shape(started) == {
            "task_id": "t-mcp",
            "description": "over MCP",
            "intent": None,
            "status": "active",
            "completed_at": False,
            "files_touched": [],
            "tools_used": {},
            "outcome": None,
            "score": None,
            "branch": None,
        }

    anyio.run(session_run, project, script, "--refresh-seconds", "3600")
