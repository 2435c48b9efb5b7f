"""Redaction: each detector on a secret and on a look-alike that is not one, stable
markers, nested data, PII tags, and no secret in the store file's bytes."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

import aircher_mem as am
import pytest
from aircher_mem.redact import entropy, marker, pii_tags, redact, redact_value
from conftest import NOW
from hypothesis import given, settings
from hypothesis import strategies as st

AWS_KEY = "AKIAIOSFODNN7EXAMPLE"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
GITHUB = "ghp_" + "a1B2c3D4e5F6g7H8i9J0" + "k1L2m3N4o5P6q7R8"
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEAx1y2z3\nabcDEF==\n-----END RSA PRIVATE KEY-----"


def m(kind: str, secret: str) -> str:
    return f"[REDACTED:{kind}:{hashlib.sha256(secret.encode()).hexdigest()[:12]}]"


# (text, what redact gives back)
POSITIVE = [
    (f"key {AWS_KEY} here", f"key {m('aws_access_key', AWS_KEY)} here"),
    ("id ASIAY34FZKBOKMUTVV7A,", f"id {m('aws_access_key', 'ASIAY34FZKBOKMUTVV7A')},"),
    (f"aws_secret_access_key = {AWS_SECRET}", f"aws_secret_access_key = {m('aws_secret_key', AWS_SECRET)}"),
    (f"export GITHUB_TOKEN={GITHUB}", f"export GITHUB_TOKEN={m('github_token', GITHUB)}"),
    ("gho_" + "x" * 36, m("github_token", "gho_" + "x" * 36)),
    (
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
        m("github_token", "github_pat_11ABCDEFG0123456789_abcdefghijklmnop"),
    ),
    ("slack xoxb-1234567890-abcdefghij", f"slack {m('slack_token', 'xoxb-1234567890-abcdefghij')}"),
    ("sk_live_4eC39HqLyjWDarjtT1zdp7dc", m("stripe_key", "sk_live_4eC39HqLyjWDarjtT1zdp7dc")),
    ("rk_live_4eC39HqLyjWDarjtT1zdp7dc", m("stripe_key", "rk_live_4eC39HqLyjWDarjtT1zdp7dc")),
    ("AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY", m("google_api_key", "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY")),
    ("sk-ant-api03-AbCdEf0123456789xyz_XYZ", m("anthropic_key", "sk-ant-api03-AbCdEf0123456789xyz_XYZ")),
    ("OPENAI sk-proj-AbCdEf0123456789xyzXYZ", f"OPENAI {m('openai_key', 'sk-proj-AbCdEf0123456789xyzXYZ')}"),
    (f"token {JWT}", f"token {m('jwt', JWT)}"),
    (
        "Authorization: Bearer abcdef0123456789ABCDEF",
        f"Authorization: Bearer {m('bearer_token', 'abcdef0123456789ABCDEF')}",
    ),
    (f"{PEM}\nafter", f"{m('private_key', PEM)}\nafter"),
    ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn", m("private_key", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn")),
    (
        "postgres://admin:s3cr3tP4ss@db.example.com:5432/app",
        f"postgres://admin:{m('url_password', 's3cr3tP4ss')}@db.example.com:5432/app",
    ),
    ("password=hunter2 next", f"password={m('password', 'hunter2')} next"),
    ('{"password": "hunter 2"}', f'{{"password": "{m("password", "hunter 2")}"}}'),
    ("PASSWORD: swordfish", f"PASSWORD: {m('password', 'swordfish')}"),
    ("mysql --password hunter2 -u root", f"mysql --password {m('password', 'hunter2')} -u root"),
    ("db_passwd='x y z'", f"db_passwd='{m('password', 'x y z')}'"),
    ("api_key=AbC123xYz789QwE456rTy", f"api_key={m('high_entropy', 'AbC123xYz789QwE456rTy')}"),
]

NEGATIVE = [
    "commit 4b825dc642cb6eb9a060e54bf8d69288fbe4904b",  # a git sha
    "id 123e4567-e89b-12d3-a456-426614174000",  # a UUID
    "get_user_session_token() returns AKIA-like names",
    "AKIAIOSFODNN7EXAMPL",  # one short
    "ghp_short and gh_pages",
    "xoxz-1234567890-abcdef",
    "sk_test_4eC39HqLyjWDarjtT1zdp7dc",
    "AIzaShort",
    "scikit-learn sk-learn task-manager-and-more-words-here",
    "eyJhbGciOiJIUzI1NiJ9 alone",
    "the bearer of bad news",
    "-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----",
    "https://example.com:8080/path?a=b and git@github.com:org/repo.git",
    "password = get_password()",
    "password=self.password",
    "password: ${DB_PASSWORD}",
    "password: <your password>",
    "password=*****",
    "Password reset link sent",
    "token = 'refresh_access_token_handler'",
    "max_tokens=4096",
]


@pytest.mark.parametrize(("text", "expected"), POSITIVE)
def test_each_detector_redacts_its_secret(text: str, expected: str) -> None:
    assert redact(text) == expected


@pytest.mark.parametrize("text", NEGATIVE)
def test_look_alikes_are_kept(text: str) -> None:
    assert redact(text) == text


def test_markers_are_stable_and_group_equal_secrets() -> None:
    once = redact(f"a {AWS_KEY} b {AWS_KEY} c AKIAIOSFODNN7EXAMPLF")
    first, second, third = re.findall(r"\[REDACTED:[a-z_]+:[0-9a-f]{12}\]", once)
    assert first == second == marker("aws_access_key", AWS_KEY) != third
    assert redact(f"x {AWS_KEY}") == f"x {first}"  # the same in another call


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200) | st.sampled_from([t for t, _ in POSITIVE] + NEGATIVE))
def test_redacting_twice_changes_nothing(text: str) -> None:
    once = redact(text)
    assert redact(once) == once


@settings(max_examples=100, deadline=None)
@given(prefix=st.text(max_size=30), suffix=st.text(max_size=30), secret=st.sampled_from([AWS_KEY, GITHUB, JWT]))
def test_a_secret_in_any_text_is_gone(prefix: str, suffix: str, secret: str) -> None:
    assert secret not in redact(f"{prefix} {secret} {suffix}")


def test_nested_structures_and_key_names() -> None:
    value: Any = {
        "password": "pw",  # any value under a password-like key
        "apiKey": "Zx81Kq09Lm27Pw45Rt63",  # high entropy under a token-like key
        "session_id": "abc",  # short: not a secret
        "Authorization": "Bearer abcdefgh12345678",
        "user": "bob",
        "password_hint": "",
        "env": [{"CLIENT_SECRET": "s3cr3t"}, ("x", f"token {GITHUB}")],
        f"key-{AWS_KEY}": 1,
        3: "three",
        "count": 7,
    }
    assert redact_value(value) == {
        "password": m("password", "pw"),
        "apiKey": m("high_entropy", "Zx81Kq09Lm27Pw45Rt63"),
        "session_id": "abc",
        "Authorization": f"Bearer {m('bearer_token', 'abcdefgh12345678')}",
        "user": "bob",
        "password_hint": "",
        "env": [{"CLIENT_SECRET": m("password", "s3cr3t")}, ["x", f"token {m('github_token', GITHUB)}"]],
        f"key-{m('aws_access_key', AWS_KEY)}": 1,
        3: "three",
        "count": 7,
    }


def test_redact_value_refuses_deep_data_and_redact_refuses_non_text() -> None:
    deep: Any = "x"
    for _ in range(100):
        deep = [deep]
    with pytest.raises(am.InvalidInputError, match="nested deeper"):
        redact_value(deep)
    with pytest.raises(am.InvalidInputError, match="str"):
        redact(None)  # type: ignore[arg-type]


def test_entropy() -> None:
    assert entropy("") == 0.0 and entropy("aaaa") == 0.0 and entropy("abcd") == 2.0


@pytest.mark.parametrize(
    ("text", "tags"),
    [
        ("mail ana@example.com", ["email"]),
        ("call +1 415-555-0132", ["phone"]),
        ("(415) 555-0132 or ana.b+x@mail.example.org", ["email", "phone"]),
        ("+44 20 7946 0958", ["phone"]),
        ("+14155550132", ["phone"]),
        ("2024-01-15 at 10:00, v1.2.3 on 192.168.1.1, ts 1700000000", []),
        ("git@github.com:org/repo.git", []),
        ("", []),
    ],
)
def test_pii_tags(text: str, tags: list[str]) -> None:
    assert pii_tags(text) == tags
    assert redact(text) == text  # tagged, never removed


def test_pii_tags_of_nested_data() -> None:
    assert pii_tags({"to": ["ana@example.com"], "415-555-0132": 1}) == ["email", "phone"]
    assert pii_tags([1, None, {"a": "b"}]) == []


def test_a_10_mb_text_is_fast_enough() -> None:
    big = "x" * 10_000_000
    assert redact(big) == big and pii_tags(big) == []


def test_secrets_never_reach_the_file(tmp_path: Path) -> None:
    path = tmp_path / "memory.duckdb"
    url = "https://deploy:Sup3rS3cretPw@git.example.com/repo.git"
    with am.EpisodicMemory(path, session_id=f"s1-{GITHUB}", clock=lambda: NOW) as mem:
        assert mem.session_id == f"s1-{m('github_token', GITHUB)}"
        mem.start_task("t1", f"rotate {AWS_KEY}")
        mem.record_tool_execution(
            "bash",
            {"cmd": f"git clone {url}", "env": {"AWS_ACCESS_KEY_ID": AWS_KEY, "GH": GITHUB}, "to": "ana@example.com"},
            result={"stdout": f"using {GITHUB}"},
            success=False,
            error_message=f"fatal: could not read from {url}",
            file_path="deploy.sh",
        )
        mem.record_file_interaction("deploy.sh", "edit", context=f"key={AWS_KEY}", changes_summary=f"drop {GITHUB}")
        mem.record_file_interaction("deploy.sh", "read", session_id=f"other-{AWS_KEY}")
        mem.record_tool_execution("bash", {"file_path": "deploy.sh"}, success=True)  # error-then-fix pattern
        mem.store_snapshot(
            {
                "timestamp": NOW,
                "session_id": f"s1-{GITHUB}",
                "items": [{"id": GITHUB}],
                "total_tokens": 1,
                "reason": "r",
            }
        )
        mem.record_learning("common_error", {"url": url, "phone": "+1 415-555-0132"}, 0.5)
        mem.complete_task("t1", f"rotated {AWS_KEY}")
        # A task id holding a secret: kept redacted, found by the id as given.
        secret_task = f"t2-{GITHUB}"
        mem.start_task(secret_task, "rotate again")
        assert mem.current_task_id == f"t2-{m('github_token', GITHUB)}"
        mem.record_file_interaction("deploy.sh", "edit")
        mem.record_tool_execution("bash", {"cmd": "true"}, success=True, task_id=secret_task)
        mem.store_snapshot(
            {
                "timestamp": NOW,
                "session_id": "s1",
                "task_id": secret_task,
                "items": [],
                "total_tokens": 0,
                "reason": "r",
            }
        )
        mem.pause_task(secret_task)
        assert mem.current_task_id is None and mem.task(secret_task).status == "paused"
        mem.resume_task(secret_task)
        assert mem.current_task_id == mem.task(secret_task).task_id == f"t2-{m('github_token', GITHUB)}"
        mem.fail_task(secret_task, "gave up")
        record = mem.task(secret_task)
        assert (record.status, record.files_touched, record.tools_used) == ("failed", ["deploy.sh"], {"bash": 1})
        with pytest.raises(am.TaskStateError, match=r"t2-\[REDACTED:github_token"):
            mem.start_task(secret_task, "once more")
        # A file path holding a secret: likewise.
        secret_path = f"keys/{AWS_KEY}.pem"
        mem.start_task("t3", "fix the key file")
        mem.record_tool_execution("cat", {}, success=False, error_message="denied", file_path=secret_path)
        mem.record_file_interaction(secret_path, "edit")
        mem.record_tool_execution("cat", {}, success=True, file_path=secret_path)  # error, then fix
        stored_path = f"keys/{m('aws_access_key', AWS_KEY)}.pem"
        assert [i.file_path for i in mem.file_history(secret_path)] == [stored_path]
        assert [r.file_path for r in mem.failed_tool_runs(secret_path)] == [stored_path]
        assert [i.file_path for i in mem.last_interactions(AWS_KEY)] == [stored_path]
        assert mem.task("t3").files_touched == [stored_path]
        [run] = mem.failed_tool_runs("deploy.sh")
        assert run.parameters["_pii"] == ["email"]
        assert run.parameters["env"]["AWS_ACCESS_KEY_ID"] == m("aws_access_key", AWS_KEY)
        assert mem.learnings()[0]["data"]["_pii"] == ["phone"]
        assert [p.pattern_type for p in mem.patterns()] == ["error-fix", "error-fix"]
    data = path.read_bytes()
    wal = Path(str(path) + ".wal")
    if wal.exists():
        data += wal.read_bytes()
    for secret in (AWS_KEY, GITHUB, "Sup3rS3cretPw"):
        assert secret.encode() not in data
    assert m("aws_access_key", AWS_KEY).encode() in data  # what is there instead
