"""The local HTTP server: the app in-process (Starlette's TestClient) for every route,
the JSON of each result (the same as ``wire.to_json`` of the verb), the security
checks and hostile input; then one real ``serve`` in a subprocess with ``--port 0``,
found through server.json and driven by the stdlib ``Client``."""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import os
import signal
import stat
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aircher_mem as am
import jsonschema
import pytest
from aircher_mem import verbs
from aircher_mem.errors import InvalidInputError, StoreLockedError, UnknownMemoryError, UnknownSymbolError
from aircher_mem.interfaces import client as remote
from aircher_mem.interfaces import http, thin, wire
from conftest import duckdb_held_by_another_process, serving
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

TOKEN = "test-token-" + "x" * 32
BASE = "http://127.0.0.1:8787"
NOW = 1_700_000_000.0
#: Every route: (method, path).
ROUTES = (
    {("GET", "/health"), ("GET", "/openapi.json")}
    | {(v.http_method, v.http_path) for v in verbs.all_verbs("http")}
    | {("POST", path) for path in http.SEED_ROUTES}
)


@pytest.fixture
def memory(project: Path) -> Iterator[am.Memory]:
    with am.Memory.open(project) as mem:
        mem.index()
        mem.longterm.clock = lambda: NOW
        yield mem


@pytest.fixture
def client(memory: am.Memory) -> Iterator[TestClient]:
    app = http.build_app(memory, token=TOKEN)
    with TestClient(app, base_url=BASE, headers={"Authorization": f"Bearer {TOKEN}"}) as c:
        yield c


def ok(response: Any) -> Any:
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "application/json"
    return response.json()


def err(response: Any, status: int, code: str) -> str:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error"} and set(body["error"]) == {"code", "type", "message"}, body
    assert body["error"]["code"] == code, body
    assert "Traceback" not in response.text
    return str(body["error"]["message"])


# -- the verbs over HTTP --------------------------------------------------------------


def test_turns_memories_recall_explain_forget_round_trip(client: TestClient, memory: am.Memory) -> None:
    added = ok(client.post("/add-turn", json={"session_id": "s1", "role": "user", "text": "I prefer tabs."}))
    assert [(e["action"], e["content"]) for e in added["extracted"]] == [("created", "I prefer tabs.")]
    mid = added["extracted"][0]["memory_id"]
    kept = ok(client.post("/remember", json={"content": "The CI runs on Python 3.11", "importance": 1, "tags": ["ci"]}))
    assert kept["action"] == "created"
    listed = ok(client.get("/memories", params={"sort": "id"}))
    assert [m["id"] for m in listed["memories"]] == [mid, kept["memory_id"]]
    found = ok(client.post("/recall", json={"query": "which python does CI use", "k": 3}))
    assert found["hits"][0]["id"] == kept["memory_id"]
    kinds = ["fact", "decision", "episode", "pattern", "workflow"]  # memories only, no raw turns
    searched = ok(client.post("/recall", json={"query": "tabs", "k": 5, "kinds": kinds}))
    assert [h["id"] for h in searched["hits"]] == [mid]
    assert ok(client.post("/recall", json={"query": "tabs", "kinds": ["decision"]}))["hits"] == []
    why = ok(client.get("/explain", params={"memory_id": mid}))
    assert why["memory"]["content"] == "I prefer tabs." and why["links"][0]["reason"] == "extracted"
    assert ok(client.post("/forget", json={"memory_id": mid})) == {"ids": [mid], "turns": [1]}
    err(client.get("/explain", params={"memory_id": mid}), 404, "unknown_memory")
    err(client.post("/forget", json={"memory_id": mid}), 404, "unknown_memory")
    context = ok(client.get("/conversation", params={"session_id": "s1", "k": 5}))
    assert context["short_term"] == []  # the turn the memory came from went with it


def test_results_are_exactly_the_verbs_json(client: TestClient, memory: am.Memory) -> None:
    """Each body equals wire.to_json of the same verb called on the Memory (and fits
    the OpenAPI schema of the route's result)."""
    ok(client.post("/add-turn", json={"session_id": "s", "role": "user", "text": "My name is Ada.", "at": NOW - 86400}))
    ok(client.post("/remember", json={"content": "Deploys go through staging first", "tags": ["ops"]}))
    ok(client.post("/task", json={"action": "start", "task_id": "t1", "description": "fix the save bug"}))
    ok(
        client.post(
            "/record-file-interaction", json={"path": "app/models.py", "operation": "edit", "line_range": [4, 6]}
        )
    )
    ok(client.post("/record-tool-call", json={"tool_name": "pytest", "parameters": {"k": "save"}, "success": False}))
    spec = ok(client.get("/openapi.json"))
    pairs: list[tuple[str, str, Any, Any]] = [
        ("get", "/find-symbol?name=User", None, memory.find_symbol("User")),
        ("get", "/find-symbol?name=sa&prefix=true", None, memory.find_symbol("sa", prefix=True)),
        ("get", "/callers?name=store", None, memory.callers("store")),
        ("get", "/callees?name=create", None, memory.callees("create")),
        ("get", "/references?name=User", None, memory.references("User")),
        ("get", "/file-definitions?path=app/models.py", None, memory.file_definitions("app/models.py")),
        ("get", "/dependencies?path=app/views.py", None, memory.dependencies("app/views.py")),
        ("get", "/file-history?path=app/models.py&limit=5", None, memory.file_history("app/models.py", limit=5)),
        ("post", "/search-code", {"text": "save a user", "k": 3}, memory.search_code("save a user", k=3)),
        ("post", "/relevant-code", {"query": "save user"}, memory.relevant_code("save user")),
        ("get", "/tasks", None, memory.tasks()),
        ("get", "/tasks?query=save+bug", None, memory.tasks("save bug")),
        ("get", "/co-edited-files", None, memory.co_edited_files()),
        ("get", "/patterns", None, memory.patterns()),
        ("get", "/conversation?session_id=s", None, memory.conversation("s")),
        ("get", "/memories?sort=id&status=all", None, memory.memories(sort="id", status="all")),
        ("get", "/explain?memory_id=1", None, memory.explain(1)),
        ("get", "/subtree?memory_id=1", None, memory.subtree(1)),
        ("get", "/facts", None, memory.facts()),
        ("post", "/gc", {"dry_run": True}, memory.gc(dry_run=True)),
        ("get", "/stats", None, memory.stats()),
    ]
    routes = {(v.http_method, v.http_path) for v in verbs.all_verbs("http")}
    for method, path, body, expected in pairs:
        got = ok(client.request(method.upper(), path, json=body))
        assert got == wire.to_json(expected), path
        route = path.split("?")[0]
        assert (method.upper(), route) in routes, path
        schema = spec["paths"][route][method]["responses"]["200"]["content"]["application/json"]["schema"]
        jsonschema.validate(got, {**schema, "components": spec["components"]})


def test_every_route_answers(client: TestClient, memory: am.Memory) -> None:
    """One valid request per route (the registry and this list agree), never a 5xx."""
    samples: dict[tuple[str, str], tuple[str, Any]] = {
        ("GET", "/health"): ("/health", None),
        ("GET", "/openapi.json"): ("/openapi.json", None),
        ("POST", "/create-store"): ("/create-store", None),
        ("POST", "/add-turn"): (
            "/add-turn",
            {"session_id": "s", "role": "user", "text": "Never use ruff. Never use mypy on the tests."},
        ),
        ("GET", "/conversation"): ("/conversation?session_id=s&k=3", None),
        ("POST", "/remember"): ("/remember", {"content": "Use ruff", "kind": "decision", "level": "L0"}),
        ("GET", "/memories"): ("/memories?layer=mid&limit=5&kind=decision", None),
        ("POST", "/update"): ("/update", {"memory_id": 1, "tags": ["lint"], "status": "active"}),
        ("POST", "/promote"): ("/promote", {"memory_id": 1, "level": "L1"}),
        ("GET", "/subtree"): ("/subtree?memory_id=1", None),
        ("GET", "/explain"): ("/explain?memory_id=1", None),
        ("GET", "/facts"): ("/facts?level=L1", None),
        ("GET", "/route-context"): ("/route-context?query=ruff&max_tokens=500", None),
        ("POST", "/predict"): ("/predict", {"current_file": "pkg/models.py", "activity": "debugging"}),
        ("POST", "/assemble"): ("/assemble", {"budget": 500, "query": "where is save", "recent_errors": ["boom"]}),
        ("POST", "/context/assemble"): ("/context/assemble", {"budget": 500, "signals": {"query": "save"}}),
        ("POST", "/context/predict"): ("/context/predict", {"file_opened": "pkg/models.py"}),
        ("POST", "/feedback"): ("/feedback", {"memory_id": 1, "signal": "cited"}),
        ("POST", "/recall"): ("/recall", {"query": "ruff", "kinds": ["decision"], "at": "2023-11-14T22:13:20Z"}),
        ("POST", "/gc"): ("/gc", None),
        ("POST", "/consolidate"): ("/consolidate", {"dry_run": True, "now": "2024-03-01T00:00:00Z"}),
        ("POST", "/set-ttl"): ("/set-ttl", {"memory_id": 1, "ttl_seconds": 3600, "refresh_trigger": "pkg/**"}),
        ("GET", "/stale"): ("/stale?now=2023-11-14T23:13:21Z", None),
        ("POST", "/extract-facts"): ("/extract-facts", {"source": "working", "auto_approve": False}),
        ("POST", "/review-fact"): ("/review-fact", "a pending fact"),
        ("POST", "/discover-project"): ("/discover-project", {"task_hint": "save a user"}),
        ("POST", "/record-decision"): (
            "/record-decision",
            {"decision": "Use mypy on the tests", "reasons": ["it is fast"]},
        ),
        ("POST", "/query-chain"): ("/query-chain", {"query": "why mypy?", "max_depth": 2}),
        ("GET", "/contradictions"): ("/contradictions?status=all", None),
        ("POST", "/resolve-contradiction"): (
            "/resolve-contradiction",
            {"contradiction_id": 1, "resolution": "both_valid", "note": "both hold"},
        ),
        ("POST", "/contradictions/{contradiction_id}/resolve"): (
            "/contradictions/2/resolve",
            {"resolution": "a_wins", "note": "the first holds"},
        ),
        ("POST", "/forget"): ("/forget", {"text": "nothing matches this"}),
        ("GET", "/find-symbol"): ("/find-symbol?name=Usr&fuzzy=true", None),
        ("GET", "/callers"): ("/callers?name=User.save", None),
        ("GET", "/callees"): ("/callees?name=User.save", None),
        ("GET", "/references"): ("/references?name=Base&kind=inherits", None),
        ("GET", "/neighbourhood"): ("/neighbourhood?name=store", None),
        ("POST", "/search-code"): ("/search-code", {"text": "helper", "level": "file", "code": False}),
        ("POST", "/relevant-code"): ("/relevant-code", {"query": "helper", "max_tokens": 100}),
        ("GET", "/file-history"): ("/file-history?path=app/util.py", None),
        ("GET", "/file-definitions"): ("/file-definitions?path=app/util.py", None),
        ("GET", "/dependencies"): ("/dependencies?path=app/util.py", None),
        ("GET", "/tasks"): ("/tasks?limit=3", None),
        ("GET", "/co-edited-files"): ("/co-edited-files?path=app/util.py&min_count=1", None),
        ("GET", "/patterns"): ("/patterns?pattern_type=co-edit", None),
        ("POST", "/record-tool-call"): ("/record-tool-call", {"tool_name": "ls", "success": True, "duration_ms": 3}),
        ("POST", "/record-file-interaction"): (
            "/record-file-interaction",
            {"path": "app/util.py", "operation": "read"},
        ),
        ("POST", "/record-snapshot"): (
            "/record-snapshot",
            {
                "snapshot": {
                    "timestamp": NOW,
                    "session_id": "s",
                    "total_tokens": 5,
                    "items": [{"id": "a", "tokens": 5}],
                    "reason": "r",
                }
            },
        ),
        ("POST", "/task"): ("/task", {"action": "start", "task_id": "t9", "description": "a task"}),
        ("GET", "/stats"): ("/stats", None),
        ("POST", "/index"): ("/index", {"full": False}),
        ("GET", "/index-progress"): ("/index-progress", None),
        ("POST", "/preview-context"): ("/preview-context", {"message": "where is save", "max_tokens": 2000}),
    }
    assert sorted(samples) == sorted(ROUTES)
    subprocess.run(["git", "init", "-q"], cwd=memory.root, check=True)  # extract-facts reads its changes
    for (method, _), (path, body) in samples.items():
        if body == "a pending fact":  # one extract-facts left waiting
            body = {"memory_id": memory.memories(status="pending").memories[0].id, "verdict": "approve"}
        ok(client.request(method, path, json=body))


def test_at_takes_iso_8601_or_unix_seconds(client: TestClient) -> None:
    for at in ("2023-11-14T22:13:20Z", "2023-11-14T22:13:20+00:00", "2023-11-14 22:13:20", 1_700_000_000, 1.7e9):
        ok(client.post("/add-turn", json={"session_id": "at", "role": "user", "text": f"at {at}", "at": at}))
    turns = ok(client.get("/conversation", params={"session_id": "at"}))["short_term"]
    assert {t["at"] for t in turns} <= {NOW, 1.7e9} and len(turns) == 5
    assert "ISO-8601" in err(client.post("/recall", json={"query": "x", "at": "yesterday"}), 400, "invalid_input")
    err(client.post("/recall", json={"query": "x", "at": True}), 400, "invalid_input")
    err(client.post("/recall", json={"query": "x", "at": 10**30}), 400, "invalid_input")


# -- security --------------------------------------------------------------------------


def test_the_token_is_required_except_for_health(client: TestClient) -> None:
    for headers in ({"Authorization": ""}, {"Authorization": "Bearer wrong"}, {"Authorization": TOKEN}):
        err(client.get("/stats", headers=headers), 401, "unauthorized")
        err(client.get("/openapi.json", headers=headers), 401, "unauthorized")
    anonymous = TestClient(client.app, base_url=BASE)
    response = anonymous.get("/stats")
    err(response, 401, "unauthorized")
    assert response.headers["www-authenticate"] == "Bearer"
    err(anonymous.post("/add-turn", json={}), 401, "unauthorized")
    err(anonymous.get("/nowhere"), 401, "unauthorized")  # routes are not revealed either
    assert ok(anonymous.get("/health")) == {"ok": True, "version": am.__version__}
    assert ok(client.get("/stats", headers={"Authorization": f"bearer {TOKEN}"}))["root"]


def test_host_and_origin_checks_stop_dns_rebinding_and_web_pages(client: TestClient) -> None:
    for host in ("evil.example:8787", "127.0.0.1:9999", "127.0.0.1", "localhost.evil.com:8787", ""):
        err(client.get("/stats", headers={"Host": host}), 421, "bad_host")
        err(client.get("/health", headers={"Host": host}), 421, "bad_host")
    for host in ("localhost:8787", "LOCALHOST:8787", "[::1]:8787"):
        ok(client.get("/health", headers={"Host": host}))
    for origin in ("https://evil.example", "null", "http://127.0.0.1.evil.com", "file://", "http://[::1"):
        err(client.get("/stats", headers={"Origin": origin}), 403, "bad_origin")
    for origin in ("http://localhost:3000", "http://127.0.0.1:8787", "http://[::1]:8787"):
        ok(client.get("/stats", headers={"Origin": origin}))


def test_bodies_over_the_limit_are_413(client: TestClient) -> None:
    big = json.dumps({"session_id": "s", "role": "user", "text": "x" * (http.MAX_BODY + 1)})
    err(client.post("/add-turn", content=big, headers={"Content-Type": "application/json"}), 413, "too_large")

    def chunks() -> Iterator[bytes]:  # no Content-Length: the limit applies while reading
        yield b'{"session_id": "s", "role": "user", "text": "'
        for _ in range(3):
            yield b"y" * 1024 * 1024
        yield b'"}'

    err(client.post("/add-turn", content=chunks()), 413, "too_large")
    ok(client.post("/add-turn", json={"session_id": "s", "role": "user", "text": "z" * 1_000_000, "extract": False}))


# -- bad input -------------------------------------------------------------------------

BAD_BODIES = [
    b"{",
    b"[1, 2]",
    b'"text"',
    b"\xff\xfe",
    b'{"session_id": "s", "role": "user", "text": NaN}',
    b'{"session_id": "s", "role": "user", "text": "t", "at": Infinity}',
    b'{"session_id": "s", "role": "user", "text": "t", "at": 1e999}',
    b'{"session_id": "s", "role": "user", "text": "\\ud800"}',
    b'{"session_id": "s\\udfff", "role": "user", "text": "t"}',
    b'{"session_id": "s", "role": "user", "text": "t", "metadata": {"\\ud800": 1}}',
    b'{"session_id": "s", "role": "user", "text": "t", "at": ' + b"9" * 5000 + b"}",
    b"[" * 100_000 + b"]" * 100_000,
    b'{"session_id": "s", "role": "user"}',
    b'{"session_id": "s", "role": "user", "text": "t", "colour": "red"}',
    b'{"session_id": 1, "role": "user", "text": "t"}',
    b'{"session_id": "s", "role": "robot", "text": "t"}',
    b'{"session_id": "s", "role": "user", "text": ""}',
    b'{"session_id": "s", "role": "user", "text": ["t"]}',
    b'{"session_id": "s", "role": "user", "text": "t", "extract": "yes"}',
    b'{"session_id": "s", "role": "user", "text": "t", "metadata": []}',
    b'{"session_id": null, "role": "user", "text": "t"}',
]


@pytest.mark.parametrize("body", BAD_BODIES, ids=range(len(BAD_BODIES)))
def test_bad_bodies_are_400(client: TestClient, body: bytes) -> None:
    err(client.post("/add-turn", content=body, headers={"Content-Type": "application/json"}), 400, "invalid_input")


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("POST", "/recall", {"query": "x", "k": 10**30}),
        ("POST", "/recall", {"query": "x", "k": 0}),
        ("POST", "/recall", {"query": "x", "k": 2.5}),
        ("POST", "/recall", {"query": "x", "k": True}),
        ("POST", "/recall", {"query": "x", "kinds": "fact"}),
        ("POST", "/recall", {"query": "x", "kinds": ["nope"]}),
        ("POST", "/feedback", {"memory_id": -1, "signal": "cited"}),
        ("POST", "/feedback", {"memory_id": 1, "signal": "loved"}),
        ("POST", "/remember", {"content": "x", "importance": 7}),
        ("POST", "/remember", {"content": "x", "tags": [1]}),
        ("POST", "/update", {"memory_id": "abc", "content": "x"}),
        ("POST", "/update", {"memory_id": 0, "content": "x"}),
        ("GET", "/explain?memory_id=-3", None),
        ("GET", "/explain", None),
        ("GET", "/explain?memory_id=1&memory_id=2", None),
        ("POST", "/remember", {"content": "x", "parent_id": 0}),
        ("GET", "/tasks?limit=0", None),
        ("GET", "/facts?level=L9", None),
        ("GET", "/facts?level=", None),  # an empty value is no choice (the OpenAPI says so)
        ("GET", "/co-edited-files?min_count=", None),  # nor a number (schemathesis found it)
        ("GET", "/find-symbol?name=a&prefix=", None),
        (
            "POST",
            "/record-snapshot",
            {
                "snapshot": {
                    "timestamp": 1.0,
                    "session_id": "s",
                    "total_tokens": -1,
                    "items": [],
                    "reason": "r",
                }
            },
        ),
        ("POST", "/record-snapshot", {"snapshot": []}),
        ("POST", "/update", {"memory_id": 1, "colour": "x"}),
        ("POST", "/update", {"memory_id": 99999999999999999999999, "content": "x"}),
        ("GET", "/memories?limit=abc", None),
        ("GET", "/memories?limit=0", None),
        ("GET", "/memories?limit=1&limit=2", None),
        ("GET", "/memories?colour=red", None),
        ("GET", "/memories?q=x", None),
        ("GET", "/memories?status=deleted", None),
        ("GET", "/memories?layer=short", None),
        ("GET", "/find-symbol", None),
        ("GET", "/find-symbol?name=", None),
        ("GET", "/find-symbol?name=a&prefix=maybe", None),
        ("GET", "/find-symbol?name=a&prefix=true&fuzzy=true", None),
        ("GET", "/file-history?path=..%2F..%2Fetc%2Fpasswd", None),
        ("GET", "/file-history?path=%2Fetc%2Fpasswd", None),
        ("POST", "/record-file-interaction", {"path": "app/util.py", "operation": "read", "line_range": [1]}),
        ("POST", "/record-file-interaction", {"path": "app/util.py", "operation": "chew"}),
        ("POST", "/task", {"action": "start", "task_id": "t"}),
        ("POST", "/forget", {}),
        ("POST", "/forget", {"memory_id": 1, "text": "x"}),
        ("POST", "/gc", {"dry_run": 1}),
        ("POST", "/gc", b"\x0b"),  # not an empty body (schemathesis found it)
        ("POST", "/gc", b"\t"),  # whitespace alone is no JSON either
        ("POST", "/gc?dry_run=true", None),  # a POST takes its arguments in the body
        ("POST", "/search-code", {"text": "x", "level": "galaxy"}),
    ],
)
def test_bad_arguments_are_400(client: TestClient, method: str, path: str, body: Any) -> None:
    if isinstance(body, bytes):
        response = client.request(method, path, content=body, headers={"Content-Type": "application/json"})
    else:
        response = client.request(method, path, json=body)
    err(response, 400, "invalid_input")


SNAPSHOT = {"timestamp": NOW, "session_id": "s1", "total_tokens": 5, "items": [{"id": "a", "tokens": 5}], "reason": "r"}
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
# (what is changed in SNAPSHOT, the message naming the field and what it must be)
BAD_SNAPSHOTS = [
    ({"colour": "red"}, "unknown field snapshot.colour; allowed: " + ", ".join(SNAPSHOT_FIELDS)),
    ({"total_tokens": "5"}, "snapshot.total_tokens must be an integer, got '5'"),
    ({"total_tokens": -1}, "snapshot.total_tokens must be >= 0, got -1"),
    ({"reason": None}, "snapshot.reason must be a string, got None"),
    ({"session_id": ""}, "snapshot.session_id must be at least 1 characters long, got ''"),
    ({"items": [1]}, "snapshot.items.0 must be an object, got 1"),
    ({"items": None}, "snapshot.items must be a list, got None"),
    ({"pruned_items": {"id": "a"}}, "snapshot.pruned_items must be a list, got {'id': 'a'}"),
    ({"task_id": 7}, "snapshot.task_id must be a string, got 7"),
    ({"timestamp": True}, "snapshot.timestamp must be ISO-8601 text or Unix seconds, got True"),
    (
        {"timestamp": 1e20},
        "snapshot.timestamp must be a finite time from 0001-01-03T00:00:00Z to 9999-12-30T00:00:00Z, got 1e+20",
    ),
]


def test_the_openapi_of_record_snapshot_lists_the_snapshot_fields() -> None:
    spec = http.openapi()
    body = spec["paths"]["/record-snapshot"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert body["properties"]["snapshot"]["$ref"] == "#/components/schemas/Snapshot"
    snapshot = spec["components"]["schemas"]["Snapshot"]
    assert list(snapshot["properties"]) == SNAPSHOT_FIELDS
    assert snapshot["required"] == ["timestamp", "session_id", "total_tokens", "items", "reason"]
    assert snapshot["additionalProperties"] is False
    fields = snapshot["properties"]
    assert [x["type"] for x in fields["timestamp"]["anyOf"]] == ["string", "number"]
    assert (fields["session_id"]["type"], fields["session_id"]["minLength"]) == ("string", 1)
    assert (fields["total_tokens"]["type"], fields["total_tokens"]["minimum"]) == ("integer", 0)
    assert fields["items"]["items"] == {"type": "object", "additionalProperties": True}
    assert [x["type"] for x in fields["pruned_items"]["anyOf"]] == ["array", "null"]
    assert [x["type"] for x in fields["task_id"]["anyOf"]] == ["string", "null"]
    assert all(field["description"] for field in fields.values())
    jsonschema.Draft202012Validator.check_schema(snapshot)


@pytest.mark.parametrize(("change", "message"), BAD_SNAPSHOTS)
def test_a_bad_snapshot_field_is_400_naming_it(
    client: TestClient, memory: am.Memory, change: dict[str, Any], message: str
) -> None:
    response = client.post("/record-snapshot", json={"snapshot": {**SNAPSHOT, **change}})
    assert err(response, 400, "invalid_input") == message
    assert memory.episodic.snapshots() == []  # refused before the store


def test_a_snapshot_with_every_field_is_recorded(client: TestClient, memory: am.Memory) -> None:
    full = {**SNAPSHOT, "timestamp": "2023-11-14T22:13:20Z", "task_id": "t1", "item_count": 1, "pruned_items": []}
    assert ok(client.post("/record-snapshot", json={"snapshot": full})) == {
        "what": "snapshot",
        "graph_stale": False,
        "notes": [],
    }
    [stored] = memory.episodic.snapshots()
    assert stored == {**SNAPSHOT, "task_id": "t1", "item_count": 1, "pruned_items": []}


def test_argument_errors_name_the_argument_and_what_it_must_be(client: TestClient) -> None:
    """The messages of the registry's checks, exactly (a person or an agent reads them)."""
    cases: list[tuple[str, str, Any, str]] = [
        ("GET", "/memories?limit=0", None, "limit must be >= 1, got '0'"),
        ("POST", "/recall", {}, "query is required"),
        (
            "POST",
            "/recall",
            {"query": "x", "colour": 1},
            "unknown argument colour; allowed: query, k, session_id, kinds, at",
        ),
        ("GET", "/memories?limit=1&limit=2", None, "repeated query parameter: limit"),
        ("POST", "/recall", {"query": "x", "k": True}, "k must be an integer, got True"),
        ("GET", "/facts?level=", None, "level must be one of 'L0', 'L1', 'L2' or 'L3', got ''"),
        ("POST", "/gc?dry_run=true", None, "POST /gc takes its arguments in the JSON body, not the query string"),
        ("POST", "/recall", [1], "the body must be a JSON object, got an array"),
    ]
    for method, path, body, message in cases:
        assert err(client.request(method, path, json=body), 400, "invalid_input") == message, path


def test_unknown_things_are_404_and_wrong_methods_405(client: TestClient) -> None:
    err(client.get("/explain", params={"memory_id": 12345}), 404, "unknown_memory")
    err(client.post("/update", json={"memory_id": 12345, "content": "x"}), 404, "unknown_memory")
    err(client.post("/feedback", json={"memory_id": 12345, "signal": "ignored"}), 404, "unknown_memory")
    err(client.get("/find-symbol", params={"name": "Nope"}), 404, "unknown_symbol")
    err(client.post("/task", json={"action": "complete", "task_id": "nope"}), 404, "unknown_task")
    err(client.get("/nowhere"), 404, "not_found")
    err(client.get("/memories/1/why"), 404, "not_found")  # no path parameters
    put = client.put("/update", json={"memory_id": 1})
    err(put, 405, "method_not_allowed")
    assert put.headers["allow"] == "POST"
    turns = client.get("/add-turn")
    err(turns, 405, "method_not_allowed")
    assert turns.headers["allow"] == "POST"
    posted = client.post("/stats")
    err(posted, 405, "method_not_allowed")
    assert sorted(posted.headers["allow"].split(", ")) == ["GET", "HEAD"]  # every method the path has


def test_an_unexpected_failure_is_500_without_a_traceback(
    client: TestClient, memory: am.Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    def boom(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("secret internals")

    monkeypatch.setattr(memory, "stats", boom)
    message = err(client.get("/stats"), 500, "internal")
    assert "secret" not in message and "RuntimeError" in message


def test_a_store_held_elsewhere_is_503(tmp_path: Path) -> None:
    from conftest import duckdb_held_by_another_process

    with am.Memory.open(tmp_path) as mem:
        with duckdb_held_by_another_process(mem.db_path):
            app = http.build_app(mem, token=TOKEN)
            with TestClient(app, base_url=BASE, headers={"Authorization": f"Bearer {TOKEN}"}) as c:
                err(c.post("/add-turn", json={"session_id": "s", "role": "user", "text": "t"}), 503, "store_locked")


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4),
    max_leaves=12,
)


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    verb=st.sampled_from([v for v in verbs.all_verbs("http") if v.http_method == "POST" and v.name != "index"]),
    data=st.data(),
)
def test_fuzzed_bodies_never_give_a_5xx(client: TestClient, verb: verbs.Verb, data: st.DataObject) -> None:
    names = [p.name for p in verb.params] + ["extra"]
    body = data.draw(st.dictionaries(st.sampled_from(names), json_values, max_size=len(names)))
    response = client.request(verb.http_method, verb.http_path, json=body)
    assert response.status_code < 500, (verb.http_path, body, response.text)
    if response.status_code >= 400:
        assert set(response.json()["error"]) == {"code", "type", "message"}


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(verb=st.sampled_from([v for v in verbs.all_verbs("http") if v.http_method == "GET"]), data=st.data())
def test_fuzzed_queries_never_give_a_5xx(client: TestClient, verb: verbs.Verb, data: st.DataObject) -> None:
    names = [p.name for p in verb.params] + ["extra"]
    values = (
        st.text(max_size=12)
        | st.integers().map(str)
        | st.sampled_from(["true", "0", "-1", "1e9", "NaN", "app/util.py", "\x00", "../..", "9" * 30])
    )
    params = data.draw(st.lists(st.tuples(st.sampled_from(names), values), max_size=len(names) + 1))
    response = client.request(verb.http_method, verb.http_path, params=params)
    assert response.status_code < 500, (verb.http_path, params, response.text)


# -- OpenAPI ---------------------------------------------------------------------------


def test_openapi_lists_every_route_with_resolvable_schemas(client: TestClient) -> None:
    spec = ok(client.get("/openapi.json"))
    assert spec["openapi"] == "3.1.0"
    listed = {(m.upper(), p) for p, ops in spec["paths"].items() for m in ops}
    assert listed == ROUTES
    text = json.dumps(spec)
    for name in {part.split('"')[0] for part in text.split('"$ref": "#/components/schemas/')[1:]}:
        assert spec["components"]["schemas"][name]["type"] == "object", name
    turns = spec["paths"]["/add-turn"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert turns["required"] == ["session_id", "role", "text"] and turns["additionalProperties"] is False
    record = spec["components"]["schemas"]["MemoryRecord"]
    assert record["properties"]["slot"] == {"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}]}
    assert spec["components"]["schemas"]["Definition"]["properties"]["qualified"] == {"type": "string"}
    assert spec["paths"]["/health"]["get"]["security"] == []
    jsonschema.Draft202012Validator.check_schema({**spec["components"]["schemas"]["Recall"]})


# -- seed 001's context routes ------------------------------------------------------------


def test_context_assemble_and_predict_take_and_give_seed_001s_shapes(client: TestClient, memory: am.Memory) -> None:
    memory.remember("we keep models thin", kind="decision", code_ref="pkg/models.py:User")
    memory.record_file_interaction("pkg/models.py", "read")
    body = {
        "budget": 600,
        "signals": {"current_file": "pkg/models.py", "recent_errors": ["boom"], "activity": "debugging"},
    }
    got = ok(client.post("/context/assemble", json=body))
    assert sorted(got) == ["assembled", "context", "tiers", "token_count"]
    assert list(got["tiers"]) == ["tier1", "tier2", "tier3", "tier4"]
    assert got["tiers"] == {f"tier{i}": t["tokens"] for i, t in enumerate(got["assembled"]["tiers"], 1)}
    assert got["assembled"]["tiers"][0]["budget"] == 225  # debugging: 3/8 of 600
    assert got["token_count"] <= 600 and "we keep models thin" in got["context"]
    direct = wire.to_json(
        memory.assemble(budget=600, current_file="pkg/models.py", recent_errors=["boom"], activity="debugging")
    )
    assert got["assembled"]["context"] == direct["context"]
    predicted = ok(client.post("/context/predict", json={"file_opened": "pkg/models.py"}))
    assert sorted(predicted) == ["confidence", "predicted_files", "predicted_memories", "prediction"]
    assert predicted["predicted_files"][0]["path"] == "pkg/models.py"
    assert [m["content"] for m in predicted["predicted_memories"]] == ["we keep models thin"]
    assert predicted["confidence"] == predicted["prediction"]["confidence"]
    assert "unknown field nope" in err(client.post("/context/predict", json={"nope": 1}), 400, "invalid_input")
    assert "unknown field x" in err(client.post("/context/assemble", json={"signals": {"x": 1}}), 400, "invalid_input")
    assert "signals must be a JSON object" in err(
        client.post("/context/assemble", json={"signals": [1]}), 400, "invalid_input"
    )
    assert "budget" in err(client.post("/context/assemble", json={"budget": 0}), 400, "invalid_input")


# -- server.json, discover and the client -----------------------------------------------


def write_info(root: Path, **info: Any) -> Path:
    path = remote.server_file(root)
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(info))
    return path


def dead_pid() -> int:
    done = subprocess.Popen([sys.executable, "-c", "pass"])
    done.wait()
    return done.pid


def test_discover_ignores_missing_stale_and_unreadable_files(tmp_path: Path) -> None:
    assert remote.discover(tmp_path) is None
    live = {"host": "127.0.0.1", "port": 8787, "pid": os.getpid(), "token": "t"}
    write_info(tmp_path, **live)
    assert remote.discover(tmp_path) == remote.ServerInfo("127.0.0.1", 8787, os.getpid(), "t")
    for bad in (
        {**live, "pid": dead_pid()},
        {**live, "host": "10.0.0.1"},
        {**live, "port": "8787"},
        {**live, "port": 0},
        {**live, "token": ""},
        {**live, "pid": True},
        {"host": "127.0.0.1"},
    ):
        write_info(tmp_path, **bad)
        assert remote.discover(tmp_path) is None, bad
    remote.server_file(tmp_path).write_bytes(b"\x00not json")
    assert remote.discover(tmp_path) is None
    assert remote.Client.discover(tmp_path) is None


def test_a_client_trusts_server_json_only_when_its_server_proves_the_token(tmp_path: Path, memory: am.Memory) -> None:
    """Client.discover asks for the proof before anything else: a file naming a
    live pid and a port where nothing listens is stale (None); a real server is
    proven once, and what it answers is the HMAC of the challenge and its pid."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))  # bound, never listening
        port = sock.getsockname()[1]
        write_info(tmp_path, host="127.0.0.1", port=port, pid=os.getpid(), token="t")
        assert remote.discover(tmp_path) == remote.ServerInfo("127.0.0.1", port, os.getpid(), "t")
        assert remote.Client.discover(tmp_path, timeout=0.5) is None
        check = remote.server_check(tmp_path)
        assert (check.check, check.status, check.detail) == (
            "server",
            "warn",
            f"server.json names pid {os.getpid()} at 127.0.0.1:{port} but nothing there proves the token: stale",
        )
    remote.server_file(tmp_path).unlink()
    assert remote.server_check(tmp_path).detail == "no server.json: no server runs for this project"
    challenge = "ab" * 16
    app = http.build_app(memory, token=TOKEN)
    with TestClient(app, base_url=BASE) as anonymous:
        answer = ok(anonymous.get(f"/health?challenge={challenge}"))
        expected = hmac.new(TOKEN.encode(), f"aircher-mem {os.getpid()} {challenge}".encode(), hashlib.sha256)
        assert answer == {"ok": True, "version": am.__version__, "pid": os.getpid(), "proof": expected.hexdigest()}
        for bad in ("ab" * 15, "AB" * 16, "xy" * 16, "ab" * 65):
            err(anonymous.get(f"/health?challenge={bad}"), 400, "invalid_input")
    (tmp_path / "other").mkdir()
    with am.Memory.open(tmp_path / "other", create=True) as other, serving(other) as served:
        client = remote.Client.discover(other.root, timeout=5)
        assert client is not None and client.proven and client.pid == os.getpid()
        proofs: list[None] = []
        prove = client.prove
        client.prove = lambda: proofs.append(prove())  # type: ignore[method-assign, func-returns-value]
        client.request("GET", "/stats")
        client.request("GET", "/stats")
        assert served.requests == [("GET", "/stats"), ("GET", "/stats")] and proofs == []  # proven once
        client.proven = False
        client.request("GET", "/stats")
        assert proofs == [None]


def test_the_client_raises_the_class_of_the_error_code() -> None:
    def error(status: int, code: str) -> am.AircherError:
        return thin._error_of(status, {"error": {"code": code, "type": "X", "message": "m"}})

    assert type(error(404, "unknown_memory")) is UnknownMemoryError
    assert type(error(404, "unknown_symbol")) is UnknownSymbolError
    assert type(error(503, "store_locked")) is StoreLockedError
    assert type(error(400, "invalid_input")) is InvalidInputError
    assert str(error(400, "invalid_input")) == "m"
    unauthorized = error(401, "unauthorized")
    assert isinstance(unauthorized, remote.HTTPError) and (unauthorized.status, unauthorized.code) == (
        401,
        "unauthorized",
    )
    assert isinstance(thin._error_of(502, "<html>"), remote.HTTPError)


def test_serve_refuses_other_hosts_and_ports(tmp_path: Path) -> None:
    for host in ("0.0.0.0", "192.168.1.1", "example.com", "127.0.0.2", ""):
        with pytest.raises(InvalidInputError, match="loopback"):
            http.serve(tmp_path, host=host, port=0)
    for port in (-1, 65536, True, "80"):
        with pytest.raises(InvalidInputError, match="port"):
            http.serve(tmp_path, port=port)  # type: ignore[arg-type]
    assert not (tmp_path / ".aircher" / "server.json").exists()


SERVE = textwrap.dedent(
    """
    import logging, sys
    from pathlib import Path
    from aircher_mem.interfaces.http import serve
    logging.basicConfig(level=logging.INFO)
    serve(Path(sys.argv[1]), port=0)
    print("stopped", flush=True)
    """
)


def test_a_hooks_server_waits_for_the_store_the_hook_still_holds(project: Path) -> None:
    # a hook past its deadline starts the server, then its process exits and lets
    # the store go: the server waits for it ([server] yield_wait_seconds), a server
    # started by hand does not
    am.Memory.open(project).close()
    db = project / ".aircher" / "memory.duckdb"
    with duckdb_held_by_another_process(db), am.Memory.open(project, create=False) as memory:
        with pytest.raises(StoreLockedError):
            http._claim(memory)
        started = time.monotonic()
        with pytest.raises(StoreLockedError):
            http._claim(memory, wait_seconds=0.3)
        assert time.monotonic() - started >= 0.3
    held = duckdb_held_by_another_process(db)
    held.__enter__()
    letting_go = threading.Timer(0.5, held.__exit__, (None, None, None))
    letting_go.start()
    try:
        with am.Memory.open(project, create=False) as memory:
            http._claim(memory, wait_seconds=60)
            assert memory.episodic.counts()["tool_executions"] == 0  # the store is this process's
    finally:
        letting_go.join()


def test_a_server_reads_the_store_in_before_the_first_request_needs_it(
    project: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with am.Memory.open(project) as memory:
        memory.index()
        memory.add_turn("s", "user", "We use Postgres for the orders service.")
    with am.Memory.open(project, create=False) as memory:
        assert memory._longterm is None and memory._index._graph is None
        with caplog.at_level(logging.INFO, logger="aircher_mem.http"):
            http.warm(memory)
        assert memory.longterm.index_source == "saved" and memory._index._graph is not None
        assert f"read the store of {memory.root} in" in caplog.text


def start_server(root: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", SERVE, str(root)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def wait_for(root: Path, proc: subprocess.Popen[str], timeout: float = 60) -> remote.ServerInfo:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        info = remote.discover(root)
        if info is not None and info.pid == proc.pid:
            return info
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    raise AssertionError("no server.json")


@pytest.mark.slow
def test_a_real_server_end_to_end(project: Path) -> None:
    stale = write_info(project, host="127.0.0.1", port=1, pid=dead_pid(), token="old")
    proc = start_server(project)
    try:
        info = wait_for(project, proc)
        assert info.port not in (0, 1) and info.token != "old" and len(info.token) >= 40
        assert stat.S_IMODE(stale.stat().st_mode) == 0o600
        client = remote.Client.discover(project, timeout=30)
        assert client is not None
        assert client.request("GET", "/health") == {"ok": True, "version": am.__version__}
        assert client.request("POST", "/index")["files"] == 4
        added = client.request("POST", "/add-turn", json={"session_id": "s", "role": "user", "text": "I prefer tabs."})
        mid = added["extracted"][0]["memory_id"]
        listed = client.request("GET", "/memories", params={"layer": "mid", "limit": 10, "kind": None})
        assert [m["content"] for m in listed["memories"]] == ["I prefer tabs."]
        found = client.request("POST", "/recall", json={"query": "tabs or spaces?"})
        assert found["hits"][0]["id"] == mid
        assert client.request("GET", "/explain", params={"memory_id": mid})["memory"]["id"] == mid
        assert client.request("GET", "/find-symbol", params={"name": "User"})["symbols"][0]["path"] == "app/models.py"
        assert client.request("GET", "/file-history?path=app%2Fmodels.py")["path"] == "app/models.py"
        assert client.request("POST", "/forget", json={"memory_id": mid}) == {"ids": [mid], "turns": [1]}
        with pytest.raises(UnknownMemoryError, match=str(mid)):
            client.request("GET", "/explain", params={"memory_id": mid})
        with pytest.raises(InvalidInputError, match="unknown argument colour; allowed: query, k, session_id"):
            client.request("POST", "/recall", json={"query": "x", "colour": 1})
        # a client with a wrong token finds the server unproven and sends nothing
        with pytest.raises(remote.ServerNotProvenError, match="does not prove it knows the token"):
            remote.Client(info.host, info.port, "wrong").request("GET", "/stats")
        with pytest.raises(remote.ServerNotProvenError):  # another pid than server.json's
            remote.Client(info.host, info.port, info.token, pid=info.pid + 1).prove()
        # the Host check on a real socket, the token check, and a second server on the same root
        import http.client as hc

        conn = hc.HTTPConnection("127.0.0.1", info.port, timeout=10)
        conn.request("GET", "/stats", headers={"Authorization": "Bearer wrong"})
        assert conn.getresponse().status == 401
        conn.close()

        conn = hc.HTTPConnection("127.0.0.1", info.port, timeout=10)
        conn.request("GET", "/health", headers={"Host": "attacker.example"})
        assert conn.getresponse().status == 421
        conn.close()
        with pytest.raises(StoreLockedError, match=f"pid {proc.pid}"):
            http.serve(project, port=0)
        second = start_server(project)
        _, errors = second.communicate(timeout=60)
        assert second.returncode != 0 and "already runs" in errors
        # concurrent writers: every acknowledged turn is stored
        acked: list[int] = []

        def write(n: int) -> None:
            for i in range(10):
                body = {"session_id": "many", "role": "assistant", "text": f"turn {n} {i}", "extract": False}
                acked.append(client.request("POST", "/add-turn", json=body)["turn_id"])

        threads = [threading.Thread(target=write, args=(n,)) for n in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(set(acked)) == 80
        assert client.request("GET", "/stats")["longterm"]["turns"] == 80  # the first went with its memory
    finally:
        proc.send_signal(signal.SIGTERM)
        out, errors = proc.communicate(timeout=60)
    assert proc.returncode == 0, errors
    assert out.strip() == "stopped" and "Traceback" not in errors
    assert not remote.server_file(project).exists()
    with pytest.raises(remote.ServerUnavailableError):
        remote.Client(info.host, info.port, info.token, timeout=2).request("GET", "/health")
    # the store is free again, and holds what the server acknowledged
    with am.Memory.open(project) as mem:
        assert mem.stats().longterm["turns"] == 80  # type: ignore[index]


def test_sigint_stops_the_server_and_removes_its_file(tmp_path: Path) -> None:
    proc = start_server(tmp_path)
    try:
        info = wait_for(tmp_path, proc)
        assert remote.Client(info.host, info.port, info.token).request("GET", "/stats")["graph"] is None
    finally:
        proc.send_signal(signal.SIGINT)
        out, errors = proc.communicate(timeout=60)
    assert proc.returncode == 0 and out.strip() == "stopped", errors
    assert not remote.server_file(tmp_path).exists()


def test_from_json_is_the_way_back_for_every_result(client: TestClient, memory: am.Memory) -> None:
    """wire.from_json rebuilds each verb's result from its JSON (tuples as tuples,
    nested dataclasses, computed json_properties left out), so that a RemoteMemory
    returns what the Memory would."""
    ok(client.post("/add-turn", json={"session_id": "s", "role": "user", "text": "I prefer tabs.", "at": NOW - 86400}))
    ok(
        client.post(
            "/record-file-interaction", json={"path": "app/models.py", "operation": "edit", "line_range": [4, 6]}
        )
    )
    made = [
        memory.find_symbol("User"),
        memory.callers("store"),
        memory.references("User"),
        memory.neighbourhood("store", hops=2),
        memory.file_history("app/models.py"),
        memory.search_code("save a user", k=3),
        memory.relevant_code("save user"),
        memory.recall("tabs"),
        memory.explain(1),
        memory.gc(dry_run=True),
        memory.stats(),
        memory.index(),
        memory.preview_context("where is save"),
        memory.conversation("s"),
    ]
    for result in made:
        data = wire.to_json(result)
        back = wire.from_json(type(result), data)
        assert type(back) is type(result) and wire.to_json(back) == data, type(result).__name__
    history = wire.from_json(am.results.FileHistory, wire.to_json(made[4]))
    # equal but for floats, which the JSON rounds to 4 decimals
    assert history.interactions[0].line_range == (4, 6) and history.path == made[4].path
    for bad in ({"query": "x"}, {**wire.to_json(made[0]), "symbols": "no"}, [], None):
        with pytest.raises(TypeError):
            wire.from_json(am.results.Symbols, bad)
    with pytest.raises(TypeError, match="expected one of"):
        wire.from_json(am.results.Symbols, {**wire.to_json(made[0]), "match": "somehow"})


# -- idle and slow connections ------------------------------------------------------------


def _limited_files(limit: int) -> Any:
    def preexec() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))

    return preexec


def _closed(sock: Any) -> bool:
    """Whether the server closed this (non-blocking) client socket."""
    try:
        return bool(sock.recv(1) == b"")
    except BlockingIOError:
        return False
    except OSError:  # reset
        return True


def _serve_with(root: Path, *, max_connections: int, request_seconds: float, preexec_fn: Any = None) -> Any:
    """``aircher-mem serve`` on ``root`` (a free port, no index at start) with these
    ``[server]`` connection bounds."""
    (root / ".aircher").mkdir()
    (root / ".aircher" / "config.toml").write_text(
        f"[server]\nmax_connections = {max_connections}\nrequest_seconds = {request_seconds}\nindex_at_start = false\n"
    )
    script = str(Path(sys.executable).with_name("aircher-mem"))
    return subprocess.Popen(
        [script, "serve", "--root", str(root), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=preexec_fn,
    )


def _files(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


@pytest.mark.slow
@pytest.mark.alone
@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="counts the server's descriptors in /proc")
def test_idle_connections_do_not_make_the_server_unreachable(tmp_path: Path) -> None:
    """1,100 idle connections (no request, no token) against a server limited to 600
    open files: a real request answers meanwhile, the server holds at most ``[server]
    max_connections`` (the idle one idle longest is closed for a new one), and every
    connection that sends no complete request within ``request_seconds`` (a slow one
    dribbling a header, one stopping in its body) is closed, so its descriptors come
    back."""
    import socket

    proc = _serve_with(tmp_path, max_connections=100, request_seconds=2.0, preexec_fn=_limited_files(600))
    idle: list[socket.socket] = []
    try:
        info = wait_for(tmp_path, proc)
        client = remote.Client(info.host, info.port, info.token, pid=info.pid, timeout=20, proof_timeout=20)
        assert client.request("GET", "/stats")["graph"] is None
        before = _files(proc.pid)
        slow = socket.create_connection(("127.0.0.1", info.port))
        slow.sendall(b"GET /stats HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")  # never finished
        slow.setblocking(False)
        idle.append(slow)
        body = socket.create_connection(("127.0.0.1", info.port))  # 10 of 100 body bytes, then nothing
        body.sendall(
            f"POST /recall HTTP/1.1\r\nHost: 127.0.0.1:{info.port}\r\nAuthorization: Bearer {info.token}\r\n"
            'Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"query": '.encode()
        )
        body.setblocking(False)
        idle.append(body)
        for _ in range(1100):
            sock = socket.socket()
            sock.setblocking(False)
            sock.connect_ex(("127.0.0.1", info.port))
            idle.append(sock)
        started = time.monotonic()
        client.proven = False  # the proof too, through the crowd
        assert client.request("GET", "/stats")["root"] == str(tmp_path.resolve())
        assert time.monotonic() - started < 20
        most = _files(proc.pid)
        while time.monotonic() - started < 30 and _files(proc.pid) > before:
            most = max(most, _files(proc.pid))
            time.sleep(0.2)
        # bounded: max_connections, and what asyncio accepted before the protocol saw
        # it (4 bursts of the backlog fitted to 600 files: (600 - 64) // 8); then all closed
        assert _files(proc.pid) <= before < most <= before + 100 + 4 * ((600 - 64) // 8)
        assert _closed(slow) and _closed(body)
        assert sum(_closed(s) for s in idle) >= 100  # (the kernel dropped those the queue had no room for)
        assert client.request("GET", "/stats")["graph"] is None
    finally:
        for sock in idle:
            sock.close()
        proc.send_signal(signal.SIGTERM)
        _, errors = proc.communicate(timeout=60)
    assert proc.returncode == 0 and "Traceback" not in errors and "Too many open files" not in errors, errors


@pytest.mark.slow
def test_a_request_accepted_with_an_idle_crowd_is_answered_not_evicted(tmp_path: Path) -> None:
    """With room for one connection, a request and an idle connection accepted in
    the same loop turn (the server was stopped while both arrived): the idle newcomer
    is closed; the request, not yet read when the newcomer came, is answered."""
    import socket

    proc = _serve_with(tmp_path, max_connections=1, request_seconds=30.0)
    try:
        info = wait_for(tmp_path, proc)
        address = ("127.0.0.1", info.port)
        os.kill(proc.pid, signal.SIGSTOP)
        try:
            asking = socket.create_connection(address, timeout=30)
            asking.sendall(f"GET /health HTTP/1.1\r\nHost: 127.0.0.1:{info.port}\r\nConnection: close\r\n\r\n".encode())
            crowd = socket.create_connection(address, timeout=30)
        finally:
            os.kill(proc.pid, signal.SIGCONT)
        with asking, crowd:
            answer = b""
            while chunk := asking.recv(65_536):
                answer += chunk
            assert answer.startswith(b"HTTP/1.1 200"), answer
            assert crowd.recv(1) == b""  # closed by the server
    finally:
        proc.send_signal(signal.SIGTERM)
        _, errors = proc.communicate(timeout=60)
    assert proc.returncode == 0 and "Traceback" not in errors, errors


def test_serving_raises_the_open_files_soft_limit_to_the_hard_limit(tmp_path: Path) -> None:
    script = textwrap.dedent(
        """
        import resource
        from aircher_mem.interfaces import http
        http._raise_open_files()
        print(resource.getrlimit(resource.RLIMIT_NOFILE))
        """
    )
    import resource

    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    low = min(hard, 256)

    def preexec() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (low // 2, low))

    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, preexec_fn=preexec, timeout=60
    )
    assert done.stdout.strip() == f"({low}, {low})", done.stderr
