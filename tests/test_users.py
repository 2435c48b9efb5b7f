"""Per-user tokens of a project's server on a team's store: ``aircher-mem users``,
users.json (hashes only, private to the owner), and requests that act for the user
their token names (what they write is that user's; that user's private memories
are what they see). The server parts need PostgreSQL (tests/pg_cluster.py)."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aircher_mem as am
import pytest
from aircher_mem.config import StorePolicy
from aircher_mem.errors import DuplicateItemError, InvalidInputError, UnknownItemError
from aircher_mem.interfaces import accounts, http, thin
from aircher_mem.interfaces import client as remote
from conftest import DISTINCT_TEXTS, serving
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

psycopg = pytest.importorskip("psycopg", reason="psycopg 3 is not installed (pip install 'aircher-mem[team]')")

BASE = "http://127.0.0.1:8787"
SERVER_TOKEN = "server-token-" + "x" * 32


def _store(root: Path) -> Path:
    (root / ".aircher").mkdir(parents=True, exist_ok=True)
    return root


# -- users.json --------------------------------------------------------------------------------


def test_a_token_is_shown_once_and_kept_as_its_hash_in_a_private_file(tmp_path: Path) -> None:
    root = _store(tmp_path)
    token = accounts.add(root, "ann", now=1_700_000_000.0)
    user, dot, secret = token.rpartition(".")
    assert (user, dot, len(secret)) == ("ann", ".", 43)
    assert thin.user_of(token) == "ann"
    path = root / ".aircher" / "users.json"
    text = path.read_text()
    assert secret not in text and token not in text
    assert json.loads(text) == {
        "users": {"ann": {"created_at": 1_700_000_000.0, "sha256": hashlib.sha256(token.encode()).hexdigest()}}
    }
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [u.name for u in accounts.listed(root)] == ["ann"]
    with pytest.raises(DuplicateItemError, match="ann has a token already"):
        accounts.add(root, "ann")
    bob = accounts.add(root, "bob.smith@example.org")
    assert thin.user_of(bob) == "bob.smith@example.org"
    assert [u.name for u in accounts.listed(root)] == ["ann", "bob.smith@example.org"]
    accounts.remove(root, "ann")
    assert [(u.name, u.created_at > 1_700_000_000.0) for u in accounts.listed(root)] == [
        ("bob.smith@example.org", True)
    ]
    with pytest.raises(UnknownItemError, match="no user ann"):
        accounts.remove(root, "ann")
    assert sorted(p.name for p in (root / ".aircher").iterdir()) == [".users.lock", "users.json"]


@pytest.mark.parametrize("name", ["", ".ann", "a b", "ann:x", "é", "x" * 65, "ann\n", "ann/..", "\udcff"])
def test_a_users_name_is_plain(tmp_path: Path, name: str) -> None:
    with pytest.raises(InvalidInputError, match="a user's name"):
        accounts.add(_store(tmp_path), name)


@given(st.text(max_size=70) | st.from_regex(thin.USER_NAME_PATTERN, fullmatch=True))
def test_a_users_name_is_what_the_openapi_pattern_says(name: str) -> None:
    import re

    assert thin.is_user_name(name) == bool(re.fullmatch(thin.USER_NAME_PATTERN.strip("^$"), name))


@pytest.mark.parametrize(
    "token",
    [
        "",
        "ann",
        "ann.",
        ".x" + "a" * 42,
        "ann." + "a" * 42,
        "ann." + "a" * 44,
        "ann." + "a" * 42 + "=",
        "a b." + "a" * 43,
    ],
)
def test_only_a_users_token_names_a_user(token: str) -> None:
    assert thin.user_of(token) is None
    assert thin.proof_key(token) == token  # server.json's token is its own key


def test_a_broken_users_file_refuses_every_users_token(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    root = _store(tmp_path)
    token = accounts.add(root, "ann")
    seen = accounts.Accounts(root)
    assert seen.user(token.encode()) == "ann"
    assert seen.user(token.encode()[:-1] + (b"B" if token.endswith("A") else b"A")) is None
    (root / ".aircher" / "users.json").write_text('{"users": {"ann": "not an entry"}}')
    assert seen.user(token.encode()) is None
    assert "per-user tokens are refused until it is fixed" in caplog.text
    with pytest.raises(am.StoreError, match="not a list of users"):
        accounts.listed(root)


def test_the_users_command_lists_adds_and_removes(tmp_path: Path) -> None:
    root = _store(tmp_path)
    script = str(Path(sys.executable).with_name("aircher-mem"))

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([script, "users", *args, "--root", str(root), "--json"], capture_output=True, text=True)

    refused = run("add", "ann")
    assert refused.returncode != 0 and "per-user tokens are for a team's store" in refused.stderr
    (root / ".aircher" / "config.toml").write_text('[store]\nurl = "postgresql://team@db.example/aircher"\n')
    made = run("add", "ann")
    assert made.returncode == 0, made.stderr
    answer = json.loads(made.stdout)
    assert [u["name"] for u in answer["users"]] == ["ann"] and thin.user_of(answer["token"]) == "ann"
    listed = json.loads(run().stdout)
    assert [u["name"] for u in listed["users"]] == ["ann"] and listed["token"] is None
    assert json.loads(run("remove", "ann").stdout) == {"users": [], "token": None}
    assert "no user ann" in run("remove", "ann").stderr


# -- the server ----------------------------------------------------------------------------------


def _team(root: Path, url: str) -> am.Memory:
    root.mkdir(parents=True, exist_ok=True)
    return am.Memory.open(root, create=True, policy=am.Policy(store=StorePolicy(url=url)))


@pytest.fixture
def team(tmp_path: Path, pg_url: str) -> Iterator[am.Memory]:
    with _team(tmp_path / "project", pg_url) as memory:
        yield memory


def _client(memory: am.Memory, token: str) -> TestClient:
    app = http.build_app(memory, token=SERVER_TOKEN)
    return TestClient(app, base_url=BASE, headers={"Authorization": f"Bearer {token}"})


def _rows(memory: am.Memory, sql: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(memory.policy.store.url) as con:
        return con.execute(sql).fetchall()


def _hits(client: TestClient, query: str) -> list[str]:
    answer = client.post("/recall", json={"query": query, "k": 20})
    assert answer.status_code == 200, answer.text
    return [hit["content"] for hit in answer.json()["hits"]]


def test_each_request_acts_for_the_user_its_token_names(team: am.Memory) -> None:
    ann, bob = accounts.add(team.root, "ann"), accounts.add(team.root, "bob")
    with _client(team, ann) as as_ann, _client(team, bob) as as_bob, _client(team, SERVER_TOKEN) as as_server:
        made = as_ann.post(
            "/remember", json={"content": "Ann keeps her signing key in the hardware token.", "scope": "user-private"}
        )
        assert made.status_code == 200, made.text
        shared = as_bob.post("/remember", json={"content": "We sign releases with the hardware token."})
        assert shared.status_code == 200, shared.text
        assert as_ann.get("/explain", params={"memory_id": made.json()["memory_id"]}).status_code == 200
        assert _hits(as_ann, "hardware token signing key") == [
            "Ann keeps her signing key in the hardware token.",
            "We sign releases with the hardware token.",
        ]
        assert _hits(as_bob, "hardware token signing key") == ["We sign releases with the hardware token."]
        assert _hits(as_server, "hardware token signing key") == ["We sign releases with the hardware token."]
        assert as_bob.get("/explain", params={"memory_id": made.json()["memory_id"]}).status_code == 404
    owners = dict(_rows(team, "SELECT content, owner FROM memories"))
    assert owners == {
        "Ann keeps her signing key in the hardware token.": "ann",
        "We sign releases with the hardware token.": "bob",
    }


def test_a_removed_token_is_refused_from_the_next_request(team: am.Memory) -> None:
    ann = accounts.add(team.root, "ann")
    with _client(team, ann) as as_ann:
        assert as_ann.get("/memories").status_code == 200
        accounts.remove(team.root, "ann")
        refused = as_ann.get("/memories")
        assert refused.status_code == 401 and refused.json()["error"]["code"] == "unauthorized"
        again = accounts.add(team.root, "ann")
        assert as_ann.get("/memories").status_code == 401  # the old token stays refused
        assert as_ann.get("/memories", headers={"Authorization": f"Bearer {again}"}).status_code == 200
        wrong = ann.rpartition(".")[0] + "." + ("B" if ann.endswith("A" * 43) else "A") * 43
        assert as_ann.get("/memories", headers={"Authorization": f"Bearer {wrong}"}).status_code == 401


def test_the_server_proves_it_knows_a_users_token_to_its_holder(team: am.Memory) -> None:
    ann = accounts.add(team.root, "ann")
    challenge = "ab" * 16
    with _client(team, "") as anyone:
        proof = anyone.get("/health", params={"challenge": challenge, "user": "ann"}).json()
        key = hashlib.sha256(ann.encode()).hexdigest().encode()
        message = f"aircher-mem {proof['pid']} {challenge}".encode()
        assert proof["proof"] == hmac.new(key, message, hashlib.sha256).hexdigest()
        unknown = anyone.get("/health", params={"challenge": challenge, "user": "carol"}).json()
        assert unknown["proof"] != proof["proof"]
        assert anyone.get("/health", params={"user": "ann"}).status_code == 400
        assert anyone.get("/health", params={"challenge": challenge, "user": "a b"}).status_code == 400


def test_a_client_with_a_users_token_acts_for_that_user(team: am.Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    ann = accounts.add(team.root, "ann")
    with serving(team):
        monkeypatch.setenv(thin.TOKEN_ENV, ann)
        with remote.connect(team.root) as memory:
            assert isinstance(memory, remote.RemoteMemory)
            memory.remember("Ann reviews the billing code on Mondays.", scope="user-private")
        monkeypatch.delenv(thin.TOKEN_ENV)
        with remote.connect(team.root) as memory:
            assert isinstance(memory, remote.RemoteMemory)
            assert memory.recall("who reviews the billing code?").hits == []
        accounts.remove(team.root, "ann")
        monkeypatch.setenv(thin.TOKEN_ENV, ann)
        with pytest.raises(remote.HTTPError, match="does not know the token of ann") as refused:
            remote.connect(team.root)
        assert refused.value.status == 401


def test_a_hook_with_a_users_token_acts_for_that_user(team: am.Memory) -> None:
    ann = accounts.add(team.root, "ann")
    with team.as_user("ann"):
        team.remember("Pushing to main needs two approvals from the release team.", scope="user-private")
    script = str(Path(sys.executable).with_name("aircher-mem"))
    payload = json.dumps(
        {
            "session_id": "s1",
            "transcript_path": "/nonexistent/s1.jsonl",
            "cwd": str(team.root),
            "hook_event_name": "UserPromptSubmit",
            "prompt": "Can I push to main now? Which approvals do I need?",
        }
    )

    def hook(token: str | None) -> str:
        env = {k: v for k, v in os.environ.items() if k != thin.TOKEN_ENV}
        if token is not None:
            env[thin.TOKEN_ENV] = token
        done = subprocess.run(
            [script, "hook", "UserPromptSubmit"], input=payload, env=env, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    with serving(team):
        assert "two approvals" in hook(ann)
        assert "two approvals" not in hook(None)
        said = [owner for (owner,) in _rows(team, "SELECT owner FROM turns WHERE text LIKE 'Can I push%' ORDER BY id")]
        accounts.remove(team.root, "ann")
        removed = subprocess.run(
            [script, "hook", "UserPromptSubmit"],
            input=payload,
            env={**os.environ, thin.TOKEN_ENV: ann},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert (removed.returncode, removed.stdout) == (0, "") and "does not know the token of ann" in removed.stderr
        accounts.add(team.root, "ann")
    assert said == ["ann", team.longterm.user]
    alone = subprocess.run(  # no server: the hook opens nothing, starts nothing, says why
        [script, "hook", "UserPromptSubmit"],
        input=payload,
        env={**os.environ, thin.TOKEN_ENV: accounts.add(team.root, "bob")},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (alone.returncode, alone.stdout) == (0, "") and "no server answers: start it" in alone.stderr
    assert not (team.root / ".aircher" / "server.json").exists()


def test_without_a_server_a_users_token_opens_nothing(team: am.Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(thin.TOKEN_ENV, accounts.add(team.root, "ann"))
    with pytest.raises(remote.ServerUnavailableError, match="no server answers: start it"):
        remote.connect(team.root)


def test_a_users_token_is_refused_on_a_store_that_is_a_file(memory_project: Path) -> None:
    token = accounts.add(memory_project, "ann")
    with am.Memory.open(memory_project) as memory:
        with _client(memory, token) as as_ann:
            refused = as_ann.get("/memories")
            assert refused.status_code == 401 and "team's store" in refused.json()["error"]["message"]
        with pytest.raises(InvalidInputError, match="as_user needs a team's store"), memory.as_user("ann"):
            pass


@pytest.fixture
def memory_project(tmp_path: Path) -> Path:
    (tmp_path / "file").mkdir()
    with am.Memory.open(tmp_path / "file", create=True):
        pass
    return tmp_path / "file"


# -- privacy, request by request ----------------------------------------------------------------

_ACTS = st.lists(
    st.tuples(st.sampled_from(["ann", "bob", "server"]), st.sampled_from(["say", "remember"]), st.booleans()),
    min_size=1,
    max_size=6,
)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(acts=_ACTS)
def test_over_http_a_users_private_memories_reach_no_other_user(
    tmp_path_factory: pytest.TempPathFactory, pg_server: str, acts: list[tuple[str, str, bool]]
) -> None:
    from pg_cluster import database

    folder = tmp_path_factory.mktemp("users")
    with database(pg_server) as url, _team(folder, url) as memory:
        tokens = {"ann": accounts.add(folder, "ann"), "bob": accounts.add(folder, "bob"), "server": SERVER_TOKEN}
        clients = {user: _client(memory, token) for user, token in tokens.items()}
        private: dict[str, list[str]] = {user: [] for user in tokens}
        for n, (user, act, secret) in enumerate(acts):
            mark = f"zq{n}x"
            body: dict[str, Any] = {"scope": "user-private" if secret else "project-shared"}
            if act == "say":
                body |= {"session_id": f"s-{user}", "role": "user", "text": DISTINCT_TEXTS[n].format(mark)}
                answer = clients[user].post("/add-turn", json=body)
            else:
                body |= {"content": DISTINCT_TEXTS[n].format(mark), "kind": "decision"}
                answer = clients[user].post("/remember", json=body)
            assert answer.status_code == 200, answer.text
            if secret:
                private[user].append(mark)
        for user, client in clients.items():
            others = [mark for other, marks in private.items() if other != user for mark in marks]
            seen = json.dumps(
                [
                    client.post("/recall", json={"query": "which tool do we use?", "k": 50}).json(),
                    *(client.post("/recall", json={"query": mark}).json()["hits"] for mark in others),
                    client.get("/memories", params={"status": "all", "limit": 1000}).json(),
                    *(client.get("/conversation", params={"session_id": f"s-{u}"}).json() for u in tokens),
                    client.post("/assemble", json={"budget": 4000, "query": "which tool do we use?"}).json(),
                ]
            )
            assert [mark for mark in others if mark in seen] == []
            mine = json.dumps(client.get("/memories", params={"status": "all", "limit": 1000}).json()) + json.dumps(
                client.get("/conversation", params={"session_id": f"s-{user}"}).json()
            )
            assert [mark for mark in private[user] if mark not in mine] == []
        for client in clients.values():
            client.close()
    assert os.path.exists(folder / ".aircher" / "users.json")


def test_a_servers_consolidation_pass_covers_the_users_it_serves(team: am.Memory) -> None:
    import time

    puppy = [
        "We adopted a puppy named Biscuit, and his training starts at the puppy school.",
        "Biscuit the puppy already knows sit, and the training is going well.",
        "Puppy school training for Biscuit is on Tuesdays with other puppies.",
        "The puppy training treats Biscuit likes are the chicken ones.",
    ]
    with team.as_user("ann"):
        for text in puppy:
            team.add_turn("ann-home", "user", text, extract=False, scope="user-private")
    assert team.served_users() == ["ann"]
    schedule = http.Consolidating(team, started=time.time() - 2 * team.policy.lifecycle.consolidate_interval_seconds)
    assert schedule.due()
    schedule.when_due()
    schedule.join(120)
    with team.as_user("ann"):
        episodes = team.memories(kind="episode").memories
    assert [e.scope for e in episodes] == ["user-private"]
    assert _rows(team, "SELECT owner FROM memories WHERE kind = 'episode'") == [("ann",)]
    assert team.memories(kind="episode").memories == []  # the server's own user sees none of it
