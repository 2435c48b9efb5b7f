"""Claude Code hooks: installing into a settings file (idempotent, exactly undone,
malformed files refused) and each event end to end on a fixture project, with event
JSON shaped as Claude Code's hooks reference documents it: the common fields
session_id, transcript_path, cwd, permission_mode and hook_event_name; SessionStart's
source (startup|resume|clear|compact) and model; UserPromptSubmit's prompt;
PostToolUse's tool_name, tool_input, tool_response and tool_use_id; PreCompact's
trigger and custom_instructions; Stop's stop_hook_active. Where from: the reference
at code.claude.com/docs/en/hooks (formerly docs.anthropic.com/en/docs/claude-code/hooks;
read through its German and Japanese translations on docs.claude.com and a copy of
its "Input schema" sections in the Claude-Code-Workflow project's
.claude/docs/HOOKS_OFFICIAL_REFERENCE.md, found with the search tool), and tool
payloads as documented for Read and Edit (``file.startLine``/``numLines``,
``structuredPatch``); see aircher_mem.interfaces.hooks' docstring."""

from __future__ import annotations

import json
import logging
import os
import shlex
import shutil
import subprocess
import sys
import threading
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import aircher_mem as am
import pytest
from aircher_mem.interfaces import hooks
from conftest import duckdb_held_by_another_process, git, run_with_stdin_held, serving, start_serve, stop_serve
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

PYTHON = "/opt/aircher/bin/python3"
#: The command installed before the event: the interpreter on aircher_mem/hook.py.
HOOK_FILE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(hooks.__file__))), "hook.py")
RUNNER = f"{PYTHON} -I -S {HOOK_FILE}"

# Someone's settings: other keys, and other hooks on two of our events.
THEIRS: dict[str, Any] = {
    "permissions": {"allow": ["Bash(npm run lint)"], "deny": []},
    "env": {"FOO": "bär"},
    "hooks": {
        "PostToolUse": [{"matcher": "Write|Edit", "hooks": [{"type": "command", "command": "npx prettier --write"}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "say done", "timeout": 5}]}],
        "Notification": [{"hooks": [{"type": "command", "command": "notify-send claude"}]}],
    },
    "model": "opus",
}


def dump(data: Any) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


@pytest.fixture
def script(monkeypatch: pytest.MonkeyPatch) -> str:
    """What the installed command runs before the event, with :data:`PYTHON` the
    interpreter."""
    monkeypatch.setattr(sys, "executable", PYTHON)
    return RUNNER


# -- install / uninstall -------------------------------------------------------------------


def test_install_adds_each_event_keeps_the_rest_and_uninstall_restores_the_file(tmp_path: Path, script: str) -> None:
    settings = tmp_path / "settings.json"
    original = dump(THEIRS)
    settings.write_text(original, encoding="utf-8")
    settings.chmod(0o640)

    summary = hooks.install(tmp_path, settings=settings)
    assert summary == {
        "path": str(settings),
        "scope": "project",
        "command": f"{RUNNER} EVENT",
        "added": list(hooks.EVENTS),
        "updated": [],
        "unchanged": [],
        "written": True,
    }
    text = settings.read_text(encoding="utf-8")
    assert text.endswith("}\n") and '"FOO": "bär"' in text  # indent 2, UTF-8 kept, newline
    data = json.loads(text)
    assert {k: v for k, v in data.items() if k != "hooks"} == {k: v for k, v in THEIRS.items() if k != "hooks"}
    assert list(data) == list(THEIRS)  # key order kept
    assert data["hooks"]["Notification"] == THEIRS["hooks"]["Notification"]
    assert data["hooks"]["PostToolUse"] == [
        *THEIRS["hooks"]["PostToolUse"],
        {"matcher": "*", "hooks": [{"type": "command", "command": f"{RUNNER} PostToolUse", "timeout": 10}]},
    ]
    assert data["hooks"]["Stop"] == [
        *THEIRS["hooks"]["Stop"],
        {"hooks": [{"type": "command", "command": f"{RUNNER} Stop", "timeout": 10}]},
    ]
    for event in ("SessionStart", "UserPromptSubmit", "PreCompact"):
        assert data["hooks"][event] == [{"hooks": [{"type": "command", "command": f"{RUNNER} {event}", "timeout": 10}]}]
    assert oct(settings.stat().st_mode & 0o777) == oct(0o640)  # the file's mode kept
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]

    again = hooks.install(tmp_path, settings=settings)  # idempotent: nothing written
    assert (again["added"], again["updated"], again["unchanged"], again["written"]) == (
        [],
        [],
        list(hooks.EVENTS),
        False,
    )
    assert settings.read_text(encoding="utf-8") == text

    removed = hooks.uninstall(tmp_path, settings=settings)
    assert removed == {
        "path": str(settings),
        "scope": "project",
        "removed": ["PostToolUse", "Stop", "SessionStart", "UserPromptSubmit", "PreCompact"],  # in the file's order
        "written": True,
        "deleted": False,
    }
    assert settings.read_text(encoding="utf-8") == original  # byte for byte
    assert hooks.uninstall(tmp_path, settings=settings)["removed"] == []  # nothing of ours left


# Someone else's settings in the key order they chose, with text beyond ASCII.
UNORDERED: dict[str, Any] = {
    "model": "opus",
    "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say 完了", "timeout": 5}]}]},
    "env": {"GREETING": "grüß dich 👋", "B": "2", "A": "1"},
    "permissions": {"deny": [], "allow": ["Bash(npm run lint)"]},
}

STYLES: dict[str, str] = {
    "2-spaces": json.dumps(THEIRS, indent=2, ensure_ascii=False) + "\n",
    "4-spaces": json.dumps(THEIRS, indent=4, ensure_ascii=False) + "\n",
    "tabs": json.dumps(THEIRS, indent="\t", ensure_ascii=False) + "\n",
    "no-final-newline": json.dumps(THEIRS, indent=2, ensure_ascii=False),
    "4-spaces-no-final-newline": json.dumps(THEIRS, indent=4, ensure_ascii=False),
    "unicode-escaped": json.dumps(UNORDERED, indent=2) + "\n",
    "unicode-raw-key-order": json.dumps(UNORDERED, indent=4, ensure_ascii=False) + "\n",
    "crlf": json.dumps(UNORDERED, indent=2, ensure_ascii=False).replace("\n", "\r\n") + "\r\n",
    "one-line": json.dumps(UNORDERED, ensure_ascii=False),
    "one-line-compact": json.dumps(UNORDERED, separators=(",", ":"), ensure_ascii=False) + "\n",
    "no-hooks-tabs": json.dumps({"model": "sonnet", "env": {"X": "ü"}}, indent="\t", ensure_ascii=False) + "\n",
}


@pytest.mark.parametrize("style", STYLES)
def test_install_keeps_the_files_style_and_uninstall_restores_it_byte_for_byte(
    tmp_path: Path, script: str, style: str
) -> None:
    settings = tmp_path / "settings.json"
    original = STYLES[style].encode("utf-8")
    settings.write_bytes(original)
    assert hooks.install(tmp_path, settings=settings)["added"] == list(hooks.EVENTS)
    installed = settings.read_bytes()
    assert set(json.loads(installed)["hooks"]) >= set(hooks.EVENTS)
    # written in the file's own style: indentation, escapes, line ends, final newline
    assert installed.endswith(b"\n") == original.endswith(b"\n")
    assert (b"\r\n" in installed) == (b"\r\n" in original)
    assert installed.count(b"\n") == installed.count(b"\r\n") or b"\r\n" not in original
    assert installed.isascii() == original.isascii()
    assert (installed.count(b"\n") <= 1) == (original.count(b"\n") <= 1)  # one line stays one line
    indent = [line[: len(line) - len(line.lstrip())] for line in original.splitlines()[1:2]]
    assert [line[: len(line) - len(line.lstrip())] for line in installed.splitlines()[1:2]] == indent
    assert hooks.uninstall(tmp_path, settings=settings)["written"] is True
    assert settings.read_bytes() == original


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    data=st.dictionaries(st.text(max_size=6).filter(lambda k: k != "hooks"), _JSON, min_size=1, max_size=4),
    indent=st.sampled_from([1, 2, 3, 4, 8, "\t", "\t\t", None]),
    compact=st.booleans(),
    ensure_ascii=st.booleans(),
    newline=st.sampled_from(["\n", "\r\n"]),
    final=st.booleans(),
)
def test_install_then_uninstall_gives_any_json_styled_file_back_byte_for_byte(
    tmp_path: Path,
    script: str,
    data: dict[str, Any],
    indent: int | str | None,
    compact: bool,
    ensure_ascii: bool,
    newline: str,
    final: bool,
) -> None:
    separators = (",", ":") if compact else ((", " if indent is None else ","), ": ")
    text = json.dumps(data, indent=indent, separators=separators, ensure_ascii=ensure_ascii)
    text = text.replace("\n", newline) + (newline if final else "")
    settings = tmp_path / "styled.json"
    settings.write_bytes(text.encode("utf-8"))
    hooks.install(tmp_path, settings=settings)
    hooks.uninstall(tmp_path, settings=settings)
    assert settings.read_bytes() == text.encode("utf-8")


def test_project_scope_creates_the_file_and_uninstall_deletes_what_it_created(project: Path, script: str) -> None:
    summary = hooks.install(project)
    path = project / ".claude" / "settings.json"
    assert summary["path"] == str(path) and path.is_file()
    assert set(json.loads(path.read_text())["hooks"]) == set(hooks.EVENTS)
    assert hooks.uninstall(project)["deleted"] is True
    assert not path.exists()


def test_user_scope_writes_the_home_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, script: str) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    summary = hooks.install(tmp_path / "anywhere", scope="user")
    assert summary["path"] == str(tmp_path / "home" / ".claude" / "settings.json")
    with pytest.raises(am.InvalidInputError, match="scope must be"):
        hooks.install(tmp_path, scope="global")


def test_a_moved_script_is_updated_and_a_hand_placed_hook_removed_alone(tmp_path: Path, script: str) -> None:
    settings = tmp_path / "settings.json"
    mixed = {
        "hooks": {
            "Stop": [
                {
                    "hooks": [
                        {"type": "command", "command": "say done"},
                        {"type": "command", "command": "'/old place/aircher-mem' hook Stop"},
                    ]
                }
            ]
        }
    }
    settings.write_text(dump(mixed))
    summary = hooks.install(tmp_path, settings=settings)
    assert summary["updated"] == ["Stop"] and "Stop" not in summary["added"]
    stop = json.loads(settings.read_text())["hooks"]["Stop"]
    assert stop == [
        {"hooks": [{"type": "command", "command": "say done"}, {"type": "command", "command": f"{script} Stop"}]}
    ]
    hooks.uninstall(tmp_path, settings=settings)
    assert json.loads(settings.read_text()) == {
        "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]}
    }


def test_without_a_known_interpreter_the_console_script_is_installed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "executable", "")
    monkeypatch.setattr(shutil, "which", lambda name: None)  # not on PATH: the bare name
    settings = tmp_path / "settings.json"
    summary = hooks.install(tmp_path, settings=settings)
    assert summary["command"] == "aircher-mem hook EVENT"
    stop = json.loads(settings.read_text())["hooks"]["Stop"]
    assert stop == [{"hooks": [{"type": "command", "command": "aircher-mem hook Stop", "timeout": 10}]}]
    monkeypatch.setattr(shutil, "which", lambda name: "/opt/aircher/bin/aircher-mem")
    assert hooks.install(tmp_path, settings=settings)["command"] == "/opt/aircher/bin/aircher-mem hook EVENT"
    assert hooks.uninstall(tmp_path, settings=settings)["deleted"] is True


@pytest.mark.parametrize(
    "content",
    ["{not json", "[1, 2]", '{"hooks": []}', '{"hooks": {"Stop": {"command": "x"}}}', b"\xff\xfe{}"],
    ids=["not-json", "not-object", "hooks-not-object", "event-not-list", "not-utf8"],
)
def test_a_malformed_settings_file_is_refused_and_left_alone(tmp_path: Path, content: str | bytes, script: str) -> None:
    settings = tmp_path / "settings.json"
    raw = content if isinstance(content, bytes) else content.encode()
    settings.write_bytes(raw)
    for verb in (hooks.install, hooks.uninstall):
        with pytest.raises(am.InvalidInputError, match=str(settings)):
            verb(tmp_path, settings=settings)
        assert settings.read_bytes() == raw
    assert sorted(p.name for p in tmp_path.iterdir()) == ["settings.json"]


def test_our_commands_are_recognized_by_script_and_verb() -> None:
    assert hooks._ours("aircher-mem hook Stop", "Stop")
    assert hooks._ours("/usr/local/bin/aircher-mem hook PostToolUse")
    assert hooks._ours("'/my dir/aircher-mem' hook Stop", "Stop")
    assert not hooks._ours("aircher-mem hook Stop", "PreCompact")
    assert not hooks._ours("aircher-mem recall x")
    assert not hooks._ours("my-aircher-mem hook Stop")
    assert not hooks._ours("echo aircher-mem hook Stop")
    assert not hooks._ours(None)
    assert not hooks._ours("'unbalanced")
    # the interpreter on aircher_mem/hook.py, with options before it
    assert hooks._ours("/venv/bin/python3 -I -S /venv/lib/site-packages/aircher_mem/hook.py Stop", "Stop")
    assert hooks._ours("'/my dir/python' '/my dir/aircher_mem/hook.py' PostToolUse", "PostToolUse")
    assert hooks._ours("python3 -I -S aircher_mem/hook.py Stop")
    assert not hooks._ours("/venv/bin/python3 -I -S /venv/lib/site-packages/aircher_mem/hook.py Stop", "PreCompact")
    assert not hooks._ours("python3 -I -S /elsewhere/hook.py Stop")
    assert not hooks._ours("python3 -I -S /x/aircher_mem/other.py Stop")
    assert not hooks._ours("python3 -m aircher_mem.hook Stop")
    assert not hooks._ours("python3 -I -S")


# -- running hooks ----------------------------------------------------------------------


@pytest.fixture
def store(project: Path) -> Path:
    """The fixture project with a store: two rules and an open task."""
    with am.Memory.open(project) as memory:
        assert memory.remember("Never push to main", importance=1).memory_id == 1
        assert memory.remember("We use pytest for the tests").memory_id == 2
        memory.task("start", "t1", description="Fix the login bug in the views")
    return project


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home folder for transcripts (and nothing of /tmp allowed besides)."""
    folder = tmp_path / "home"
    (folder / ".claude" / "projects" / "repo").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(folder))
    monkeypatch.setattr(hooks, "TRANSCRIPT_DIRS", ("~",))
    return folder


def event(name: str, project: Path, **fields: Any) -> str:
    """An event's JSON: the fields every event carries, then the event's own."""
    payload = {
        "session_id": "s1",
        "transcript_path": fields.pop("transcript_path", "/nonexistent/s1.jsonl"),
        "cwd": str(project),
        "permission_mode": "default",
        "hook_event_name": name,
        **fields,
    }
    return json.dumps(payload)


def set_policy(root: Path, toml: str) -> None:
    (root / ".aircher" / "config.toml").write_text(toml)


def line(kind: str, content: Any, *, at: float | None = None, **extra: Any) -> str:
    """A transcript line; ``at`` (default: now) in the transcript's ISO 8601 with Z."""
    when = datetime.fromtimestamp(time.time() if at is None else at, tz=timezone.utc)
    return json.dumps(
        {
            "type": kind,
            "uuid": f"u-{abs(hash(json.dumps(content))) % 10**8}",
            "timestamp": when.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "sessionId": "s1",
            "message": {"role": kind, "content": content},
            **extra,
        }
    )


SESSION_START = """\
[aircher-mem] Project memory; cite a memory by its id, e.g. [memory 1].
Open tasks:
[task t1] (active) Fix the login bug in the views
Project conventions and background:
[memory 1] (fact) Never push to main
[memory 2] (fact) We use pytest for the tests
"""

PROMPT_CONTEXT = """\
[aircher-mem] Recalled from project memory; cite a memory by its id, e.g. [memory 1].
Relevant:
[memory 1] (fact) Never push to main
"""


def test_session_start_prints_tasks_rules_and_facts(store: Path) -> None:
    for source in ("startup", "resume", "clear", "compact"):
        out, code = hooks.run_hook("SessionStart", event("SessionStart", store / "app", source=source))
        assert (out, code) == (SESSION_START, 0)


@pytest.mark.slow
def test_session_start_stays_within_the_budget(store: Path) -> None:
    with am.Memory.open(store) as memory:
        for i in range(200):
            memory.remember(f"Rule number {i}: the module m{i} keeps its own cache " + "x" * 80)
    out, code = hooks.run_hook("SessionStart", event("SessionStart", store))
    assert code == 0 and len(out) <= am.Policy().hooks.context_chars == 4000
    assert out.startswith(SESSION_START.rsplit("[memory 2]", 1)[0])  # the important memory first
    assert out.count("\n") > 20


def test_user_prompt_injects_what_scores_above_the_threshold_and_stores_the_prompt(store: Path) -> None:
    out, code = hooks.run_hook("UserPromptSubmit", event("UserPromptSubmit", store, prompt="Can I push to main now?"))
    assert (out, code) == (PROMPT_CONTEXT, 0)
    out, code = hooks.run_hook("UserPromptSubmit", event("UserPromptSubmit", store, prompt="What a lovely weather"))
    assert (out, code) == ("", 0)
    with am.Memory.open(store) as memory:
        turns = memory.longterm.turns("s1")
        assert [(t.role, t.text) for t in turns] == [
            ("user", "Can I push to main now?"),
            ("user", "What a lovely weather"),
        ]
        assert turns[0].metadata == {"source": "claude-code", "hook": "UserPromptSubmit"}
    state = json.loads((store / ".aircher" / hooks.STATE_FILE).read_text())
    assert len(state["sessions"]["s1"]["prompts"]) == 2
    assert oct((store / ".aircher" / hooks.STATE_FILE).stat().st_mode & 0o777) == oct(0o600)


def test_post_tool_use_records_calls_and_file_interactions_with_line_ranges(store: Path) -> None:
    models = str(store / "app" / "models.py")
    read = {
        "type": "text",
        "file": {"filePath": models, "content": "...", "numLines": 3, "startLine": 4, "totalLines": 9},
    }
    edit = {
        "filePath": models,
        "oldString": "def store(obj):",
        "newString": "def store(obj, *, fast=False):",
        "structuredPatch": [
            {
                "oldStart": 5,
                "oldLines": 5,
                "newStart": 5,
                "newLines": 5,
                "lines": [
                    "     def save(self):",
                    "         return store(self)",
                    " ",
                    "-def store(obj):",
                    "+def store(obj, *, fast=False):",
                    "     return obj",
                ],
            }
        ],
        "userModified": False,
        "replaceAll": False,
    }
    calls = [
        ("Read", {"file_path": models, "offset": 4, "limit": 3}, read),
        (
            "Edit",
            {"file_path": models, "old_string": "def store(obj):", "new_string": "def store(obj, *, fast=False):"},
            edit,
        ),
        ("Write", {"file_path": str(store / "app" / "new.py"), "content": "a = 1\nb = 2\nc = 3\n"}, {"type": "create"}),
        ("Read", {"file_path": "/etc/hostname"}, {"type": "text"}),  # outside the project: the call only
        ("Bash", {"command": "pytest -q", "description": "run the tests"}, {"stdout": "ok", "interrupted": False}),
    ]
    for tool, tool_input, response in calls:
        payload = event("PostToolUse", store, tool_name=tool, tool_input=tool_input, tool_response=response)
        assert hooks.run_hook("PostToolUse", payload) == ("", 0)
    with am.Memory.open(store) as memory:
        history = memory.file_history("app/models.py").interactions
        assert [(i.operation, i.line_range, i.changes_summary) for i in history] == [
            ("edit", (8, 8), "Edit: +1 -1 lines"),
            ("read", (4, 6), None),
        ]
        written = memory.file_history("app/new.py").interactions
        assert [(i.operation, i.line_range) for i in written] == [("write", (1, 3))]
        assert memory.episodic.counts()["tool_executions"] == 5
        rows = memory.episodic._read("SELECT tool_name, parameters FROM tool_executions ORDER BY id")
        params = {name: json.loads(p) for name, p in rows}
        assert params["Edit"]["file_path"] == "app/models.py"  # stored relative, as the file interactions
        assert params["Bash"] == {"command": "pytest -q", "description": "run the tests"}
        assert params["Read"]["file_path"] == "/etc/hostname"


def test_post_tool_use_keeps_the_files_a_tool_named_and_the_next_prompt_gets_the_prediction(store: Path) -> None:
    grep = {"stdout": f"views.py:3:def create():\n{store}/app/models.py:8:def store(obj):\n/etc/passwd.py:1:x"}
    payload = event(
        "PostToolUse", store / "app", tool_name="Bash", tool_input={"command": "grep -rn def ."}, tool_response=grep
    )
    assert hooks.run_hook("PostToolUse", payload) == ("", 0)
    payload = event(
        "PostToolUse",
        store,
        tool_name="Grep",
        tool_input={"pattern": "x"},
        tool_response={"filenames": ["app/util.py"]},
    )
    assert hooks.run_hook("PostToolUse", payload) == ("", 0)
    with am.Memory.open(store) as memory:
        assert memory.episodic.recent_mentions(5) == ["app/util.py", "app/views.py", "app/models.py"]
    # the next prompt gets the prediction: the files the tools named, then what was recalled
    predicted = (
        PROMPT_CONTEXT.split("\n")[0] + "\nRelevant:\n"
        "Likely next: app/util.py (0.80: mentioned)\n"
        "Likely next: app/views.py (0.64: mentioned)\n"
        "Likely next: app/models.py (0.51: mentioned)\n"
        "[memory 1] (fact) Never push to main\n"
    )
    out, code = hooks.run_hook("UserPromptSubmit", event("UserPromptSubmit", store, prompt="Can I push to main now?"))
    assert (out, code) == (predicted, 0)
    config = (store / ".aircher" / "config.toml").read_text()
    set_policy(store, "[hooks]\npredict_min_confidence = 0.6\n")
    with am.Memory.open(store) as memory, serving(memory) as served:
        out, code = hooks.run_hook("UserPromptSubmit", event("UserPromptSubmit", store, prompt="Can I push to main?"))
        assert (out, code) == (predicted.replace("Likely next: app/models.py (0.51: mentioned)\n", ""), 0)
        assert ("POST", "/assemble") in served.requests
    set_policy(store, config)


def write_transcript(home: Path, lines: list[str]) -> Path:
    path = home / ".claude" / "projects" / "repo" / "s1.jsonl"
    path.write_text("".join(f"{text}\n" for text in lines), encoding="utf-8")
    return path


def test_stop_adds_the_new_turns_of_the_transcript_once(store: Path, home: Path) -> None:
    hooks.run_hook("UserPromptSubmit", event("UserPromptSubmit", store, prompt="Can I push to main now?"))
    transcript = write_transcript(
        home,
        [
            line("user", "Can I push to main now?"),  # stored by UserPromptSubmit already
            line(
                "assistant",
                [
                    {"type": "thinking", "thinking": "hmm"},
                    {"type": "text", "text": "No: open a pull request for review instead."},
                    {"type": "tool_use", "id": "t", "name": "Bash", "input": {}},
                ],
                at=time.time() + 1.5,
            ),
            line("user", [{"type": "tool_result", "tool_use_id": "t", "content": "ok"}]),
            line("user", "<command-name>/clear</command-name>"),
            line("user", "hook output", isMeta=True),
            line("user", "side", isSidechain=True),
            "{broken json",
            line("summary", "x"),
            line("user", "I prefer tabs over spaces in the Makefile", at=time.time() + 2),
            line("assistant", [{"type": "text", "text": "Noted: tabs in the Makefile."}], at=time.time() + 3),
        ],
    )
    stop = event("Stop", store, transcript_path=str(transcript), stop_hook_active=False)
    assert hooks.run_hook("Stop", stop) == ("", 0)
    assert hooks.run_hook("Stop", stop) == ("", 0)  # nothing new: nothing added
    with am.Memory.open(store) as memory:
        turns = memory.longterm.turns("s1")
        assert [(t.role, t.text) for t in turns] == [
            ("user", "Can I push to main now?"),
            ("assistant", "No: open a pull request for review instead."),
            ("user", "I prefer tabs over spaces in the Makefile"),
            ("assistant", "Noted: tabs in the Makefile."),
        ]
        assert turns[1].at == pytest.approx(time.time() + 1.5, abs=10)  # the transcript's time
        assert turns[1].metadata["hook"] == "Stop" and turns[1].metadata["uuid"].startswith("u-")
        found = memory.recall("pull request review", kinds=["turn"]).hits
        assert found[0].content == "No: open a pull request for review instead."
        extracted = memory.recall("tabs Makefile", kinds=["fact"]).hits  # extraction ran on the user turn
        assert [h.content for h in extracted] == ["I prefer tabs over spaces in the Makefile"]

    with transcript.open("a", encoding="utf-8") as handle:
        handle.write(line("user", "Also run ruff before committing", at=time.time() + 4) + "\n")
        handle.write('{"type": "user", "message": {"content": "half a li')  # being written
    assert hooks.run_hook("Stop", stop) == ("", 0)
    with am.Memory.open(store) as memory:
        assert [t.text for t in memory.longterm.turns("s1")][-1] == "Also run ruff before committing"
        assert len(memory.longterm.turns("s1")) == 5
    state = json.loads((store / ".aircher" / hooks.STATE_FILE).read_text())["sessions"]["s1"]
    assert state["offset"] == len(transcript.read_bytes().rsplit(b"\n", 1)[0]) + 1 and state["prompts"] == []


def test_stop_reads_no_transcript_outside_home_or_tmp(store: Path, home: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere" / "s1.jsonl"
    outside.parent.mkdir()
    outside.write_text(line("user", "Secret plans for the launch") + "\n")
    link = home / ".claude" / "projects" / "repo" / "link.jsonl"
    link.symlink_to(outside)
    fifo_like = home / "folder.jsonl"
    fifo_like.mkdir()
    for path in (outside, link, fifo_like, home / "absent.jsonl", "relative/s1.jsonl", home / "notes.txt"):
        assert hooks.run_hook("Stop", event("Stop", store, transcript_path=str(path))) == ("", 0)
    with am.Memory.open(store) as memory:
        assert memory.longterm.turns("s1") == []


def test_stop_reads_at_most_the_cap_and_goes_on_later(store: Path, home: Path) -> None:
    lines = [line("user", f"Message number {i} about the parser") for i in range(6)]
    set_policy(store, f"[hooks]\ntranscript_max_bytes = {len(lines[0]) * 3}\n")
    transcript = write_transcript(home, [lines[0], "x" * (len(lines[0]) * 4), *lines[1:]])
    stop = event("Stop", store, transcript_path=str(transcript))
    for _ in range(12):
        hooks.run_hook("Stop", stop)
    with am.Memory.open(store) as memory:
        assert [t.text for t in memory.longterm.turns("s1")] == [
            f"Message number {i} about the parser" for i in range(6)
        ]


def test_pre_compact_stores_a_snapshot_of_the_transcript(store: Path, home: Path) -> None:
    usage = {
        "input_tokens": 100,
        "cache_creation_input_tokens": 20,
        "cache_read_input_tokens": 3000,
        "output_tokens": 50,
    }
    transcript = write_transcript(
        home,
        [
            line("user", "Refactor the parser"),
            line("assistant", [{"type": "text", "text": "Reading it."}], usage=None),
            line("user", [{"type": "tool_result", "tool_use_id": "t", "content": "def parse(): ..."}]),
            json.dumps(
                {
                    "type": "assistant",
                    "uuid": "a2",
                    "message": {"role": "assistant", "content": [{"type": "text", "text": "Done."}], "usage": usage},
                }
            ),
        ],
    )
    payload = event("PreCompact", store, transcript_path=str(transcript), trigger="manual", custom_instructions="")
    assert hooks.run_hook("PreCompact", payload) == ("", 0)
    with am.Memory.open(store) as memory:
        (snapshot,) = memory.episodic.snapshots()
    assert snapshot["reason"] == "pre-compact (manual)" and snapshot["session_id"] == "s1"
    assert [i["type"] for i in snapshot["items"]] == [
        "UserMessage",
        "AssistantResponse",
        "ToolResult",
        "AssistantResponse",
    ]
    assert snapshot["total_tokens"] == 3170 and snapshot["items"][-1]["id"] == "a2"


@pytest.mark.parametrize(
    "payload",
    ["{not json", "[1, 2]", "", "null", '{"cwd": 5}', '{"hook_event_name": "Stop", "cwd": "."}', 42],
    ids=["not-json", "list", "empty", "null", "bad-cwd", "other-event", "not-text"],
)
def test_a_malformed_payload_prints_nothing_and_exits_0(store: Path, payload: Any) -> None:
    assert hooks.run_hook("SessionStart", payload) == ("", 0)


def test_unknown_events_and_missing_fields_do_nothing(store: Path) -> None:
    assert hooks.run_hook("PreToolUse", event("PreToolUse", store)) == ("", 0)
    assert hooks.run_hook("UserPromptSubmit", event("UserPromptSubmit", store)) == ("", 0)  # no prompt
    assert hooks.run_hook("PostToolUse", event("PostToolUse", store, tool_input="x")) == ("", 0)  # no tool name
    assert hooks.run_hook("Stop", json.dumps({"hook_event_name": "Stop", "cwd": str(store)})) == ("", 0)


def test_a_folder_without_a_store_is_left_alone(tmp_path: Path) -> None:
    folder = tmp_path / "no-store"
    folder.mkdir()
    for name in hooks.EVENTS:
        assert hooks.run_hook(name, event(name, folder, prompt="hi", tool_name="Read")) == ("", 0)
    assert list(folder.iterdir()) == []
    assert hooks.run_hook("SessionStart", event("SessionStart", folder), root=folder) == ("", 0)


def test_root_overrides_the_payload_cwd(store: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert hooks.run_hook("SessionStart", event("SessionStart", elsewhere), root=store) == (SESSION_START, 0)


def test_a_store_held_by_another_process_gives_up_within_the_deadline(
    store: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with duckdb_held_by_another_process(store / ".aircher" / "memory.duckdb"):
        started = time.monotonic()
        with caplog.at_level(logging.WARNING, logger="aircher_mem.hooks"):
            assert hooks.run_hook("SessionStart", event("SessionStart", store)) == ("", 0)
        assert time.monotonic() - started < am.Policy().hooks.deadline_seconds + 3
    assert "StoreLockedError" in caplog.text


def test_without_a_server_a_hook_that_opens_the_store_opens_it_ahead(store: Path) -> None:
    from aircher_mem import store as stores

    db = str((store / ".aircher" / "memory.duckdb").resolve())
    hooks.input_policy(store, "PostToolUse")  # journals: opens nothing
    assert not stores._AHEAD
    # what `aircher-mem hook` does: the limits for reading stdin, then the hook
    hooks.input_policy(store, "UserPromptSubmit")
    assert list(stores._AHEAD) == [db]
    assert hooks.run_hook("UserPromptSubmit", event("UserPromptSubmit", store, prompt="Can I push to main?")) == (
        PROMPT_CONTEXT,
        0,
    )
    assert not stores._AHEAD  # the hook took that connection, and closed it
    with am.Memory.open(store) as memory:
        assert [t.text for t in memory.longterm.turns("s1")] == ["Can I push to main?"]


def test_an_unexpected_error_is_logged_never_raised(
    store: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(call: Any) -> str:
        raise RuntimeError("boom")

    monkeypatch.setitem(hooks._HANDLERS, "SessionStart", broken)
    with caplog.at_level(logging.WARNING, logger="aircher_mem.hooks"):
        assert hooks.run_hook("SessionStart", event("SessionStart", store)) == ("", 0)
    assert "RuntimeError: boom" in caplog.text


def test_with_a_server_the_hooks_are_its_clients_and_do_the_same(store: Path, home: Path) -> None:
    """A server on loopback holds the memory: every hook is a request to it (real
    HTTP), prints the same text and makes the same records as without it."""
    assert hooks.run_hook("SessionStart", event("SessionStart", store)) == (SESSION_START, 0)  # no server: direct
    with am.Memory.open(store) as memory, serving(memory) as served:
        assert hooks.run_hook("SessionStart", event("SessionStart", store, source="resume")) == (SESSION_START, 0)
        assert served.requests == [("GET", "/tasks"), ("POST", "/assemble")]
        prompt = event("UserPromptSubmit", store, prompt="Can I push to main now?")
        assert hooks.run_hook("UserPromptSubmit", prompt) == (PROMPT_CONTEXT, 0)
        assert [t.text for t in memory.longterm.turns("s1")] == ["Can I push to main now?"]
        read = {"type": "text", "file": {"filePath": "x", "content": "", "numLines": 2, "startLine": 1}}
        tool = {"file_path": str(store / "app/util.py")}
        payload = event("PostToolUse", store, tool_name="Read", tool_input=tool, tool_response=read, tool_use_id="t1")
        assert hooks.run_hook("PostToolUse", payload) == ("", 0)
        history = memory.file_history("app/util.py").interactions
        assert [(i.operation, i.line_range) for i in history] == [("read", (1, 2))]
        transcript = write_transcript(home, [line("user", "Refactor the parser"), line("assistant", "On it.")])
        compact = event("PreCompact", store, transcript_path=str(transcript), trigger="auto", custom_instructions="")
        assert hooks.run_hook("PreCompact", compact) == ("", 0)
        (snapshot,) = memory.episodic.snapshots()
        assert (snapshot["reason"], snapshot["item_count"]) == ("pre-compact (auto)", 2)
        stop = event("Stop", store, transcript_path=str(transcript), stop_hook_active=False)
        assert hooks.run_hook("Stop", stop) == ("", 0)
        assert [t.text for t in memory.longterm.turns("s1")][-2:] == ["Refactor the parser", "On it."]
        assert sorted(set(served.requests)) == [
            ("GET", "/tasks"),
            ("POST", "/add-turn"),
            ("POST", "/assemble"),
            ("POST", "/extract-facts"),  # Stop: no git work tree here, nothing learnt
            ("POST", "/record-file-interaction"),
            ("POST", "/record-snapshot"),
            ("POST", "/record-tool-call"),
        ]


def test_a_hook_past_its_deadline_prints_nothing_and_leaves_the_work(
    store: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, _hook_servers: list[Path]
) -> None:
    set_policy(store, "[hooks]\ndeadline_seconds = 0.5\n")
    release = threading.Event()

    def stuck(self: Any) -> Any:
        release.wait(60)
        return {"query": None, "tasks": []}

    monkeypatch.setattr(hooks._Verbs, "tasks", stuck)
    started = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="aircher_mem.hooks"):
        assert hooks.run_hook("SessionStart", event("SessionStart", store)) == ("", 0)
    assert time.monotonic() - started < 30  # the deadline, not the minute the work is stuck for
    assert hooks.abandoned()
    assert "no answer within 0.5 s ([hooks] deadline_seconds); printed nothing" in caplog.text
    # it opened the store itself: a server is started for the next hooks, which
    # would otherwise run out of time the same way
    assert _hook_servers == [store]
    release.set()
    for _ in range(500):
        if not hooks.abandoned():
            break
        time.sleep(0.02)
    assert not hooks.abandoned()
    assert _hook_servers == [store]  # once, not again when the work ends


STUCK_HOOK = """
import sys, time
from aircher_mem.interfaces import cli, hooks
hooks._Verbs.tasks = lambda self: time.sleep(60)
sys.exit(cli.main(["hook", "SessionStart"]))
"""


def test_the_hook_command_exits_0_at_its_deadline_whatever_the_work_does(store: Path) -> None:
    set_policy(store, "[hooks]\ndeadline_seconds = 0.5\n")
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", STUCK_HOOK],
        input=event("SessionStart", store),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (done.returncode, done.stdout) == (0, "")
    assert time.monotonic() - started < 50  # not the minute the work is stuck for
    assert "printed nothing" in done.stderr and "Traceback" not in done.stderr


HOOK = str(Path(sys.executable).with_name("aircher-mem"))


def test_a_hook_whose_stdin_is_never_closed_gives_up_with_exit_1(store: Path) -> None:
    """stdin held open (half a payload written): the hook waits ``[hooks]
    stdin_seconds``, says why on stderr and exits 1, which Claude Code reports as a
    non-blocking error (2 would block the agent's action)."""
    set_policy(store, "[hooks]\nstdin_seconds = 0.5\n")
    code, out, err = run_with_stdin_held(
        [HOOK, "hook", "SessionStart", "--root", str(store)], event("SessionStart", store)[:40]
    )
    assert (code, out) == (1, "")
    assert err == (
        "aircher-mem hook SessionStart: HookInputError: stdin was not closed within 0.5 s "
        "([hooks] stdin_seconds); nothing done\n"
    )


def test_a_hook_payload_over_the_limit_is_not_read_past_it(store: Path) -> None:
    # the deadline: a loaded machine (parallel workers) can take over 2 s to start Python
    set_policy(store, "[hooks]\npayload_max_bytes = 1024\ndeadline_seconds = 30\n")
    big = event("UserPromptSubmit", store, prompt="x" * 5000)
    done = subprocess.run(
        [HOOK, "hook", "UserPromptSubmit"], input=big, capture_output=True, text=True, timeout=120, cwd=store
    )
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        "aircher-mem hook UserPromptSubmit: HookInputError: the payload on stdin is over 1,024 bytes "
        "([hooks] payload_max_bytes); nothing done\n"
    )
    with am.Memory.open(store) as memory:  # the prompt was not stored
        assert memory.conversation("s1").short_term == []
    small = event("UserPromptSubmit", store, prompt="Do we push to main?")
    done = subprocess.run([HOOK, "hook", "UserPromptSubmit"], input=small, capture_output=True, text=True, cwd=store)
    assert done.returncode == 0 and "[memory 1] (fact) Never push to main" in done.stdout, done.stderr


def test_read_payload_stops_at_the_size_limit_and_the_time_limit() -> None:
    read, write = os.pipe()
    try:
        os.write(write, b'{"a": 1}')
        os.close(write)
        write = -1
        with open(read, "rb", closefd=False) as stream:
            assert hooks.read_payload(stream, seconds=5, max_bytes=8) == '{"a": 1}'
    finally:
        os.close(read)
        if write >= 0:
            os.close(write)
    read, write = os.pipe()
    try:
        os.write(write, b"x" * 9)
        with open(read, "rb", closefd=False) as stream:
            with pytest.raises(hooks.HookInputError, match="over 8 bytes"):
                hooks.read_payload(stream, seconds=5, max_bytes=8)
        started = time.monotonic()
        with open(read, "rb", closefd=False) as stream:  # open, nothing more written
            with pytest.raises(hooks.HookInputError, match=r"not closed within 0\.2 s"):
                hooks.read_payload(stream, seconds=0.2, max_bytes=8)
        assert time.monotonic() - started < 5
    finally:
        os.close(write)  # the reader left behind sees the end, then its descriptor goes
        for thread in threading.enumerate():
            if thread.name == "aircher-mem-hook-stdin":
                thread.join(5)
        os.close(read)


@pytest.mark.slow
@pytest.mark.parametrize("server", [False, True], ids=["store", "server"])
def test_installed_hooks_end_to_end(store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: bool) -> None:
    """Installed into a settings file, the commands Claude Code would run (through a
    shell, the event on stdin) inject the context at SessionStart and record a
    PostToolUse edit, with the store or with ``aircher-mem serve`` holding it; then
    uninstall leaves the file byte for byte as it was."""
    # a loaded CI machine starts Python slowly; no server but the test's
    set_policy(store, "[hooks]\ndeadline_seconds = 30\nstart_server = false\n")
    settings = tmp_path / "settings.json"
    original = dump(THEIRS)
    settings.write_text(original, encoding="utf-8")
    bin_dir = Path(sys.executable).parent
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")

    def hooks_command(action: str) -> dict[str, Any]:  # the console script, as a user runs it
        argv = [str(bin_dir / "aircher-mem"), "hooks", action, "--root", str(store), "--settings", str(settings)]
        done = subprocess.run([*argv, "--json"], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        return dict(json.loads(done.stdout))

    assert hooks_command("install")["added"] == list(hooks.EVENTS)
    installed = json.loads(settings.read_text(encoding="utf-8"))["hooks"]

    def command(name: str) -> str:
        (found,) = [h["command"] for g in installed[name] for h in g["hooks"] if hooks._ours(h["command"], name)]
        python, *rest = shlex.split(found)  # the interpreter the console script runs on
        assert (Path(python).parent, rest) == (bin_dir, ["-I", "-S", HOOK_FILE, name])
        return str(found)

    proc = start_serve(store)[0] if server else None
    try:
        start = subprocess.run(
            command("SessionStart"),
            shell=True,
            input=event("SessionStart", store, source="startup", model="claude-sonnet-4-5"),
            capture_output=True,
            text=True,
            cwd=store,
            timeout=120,
        )
        assert (start.returncode, start.stdout) == (0, SESSION_START), start.stderr
        views = str(store / "app" / "views.py")
        patch = [
            {
                "oldStart": 4,
                "oldLines": 1,
                "newStart": 4,
                "newLines": 1,
                "lines": ["-    user = User()", "+    user = User()  # new"],
            }
        ]
        edit = event(
            "PostToolUse",
            store,
            tool_name="Edit",
            tool_input={"file_path": views, "old_string": "user = User()", "new_string": "user = User()  # new"},
            tool_response={"filePath": views, "structuredPatch": patch},
            tool_use_id="toolu_01",
        )
        done = subprocess.run(
            command("PostToolUse"), shell=True, input=edit, capture_output=True, text=True, cwd=store, timeout=120
        )
        assert (done.returncode, done.stdout) == (0, ""), done.stderr
    finally:
        if proc is not None:
            stop_serve(proc)
    with am.Memory.open(store) as memory:
        history = memory.file_history("app/views.py").interactions
        assert [(i.operation, i.line_range, i.changes_summary) for i in history] == [
            ("edit", (4, 4), "Edit: +1 -1 lines")
        ]
        ((name, success, parameters),) = memory.episodic._read(
            "SELECT tool_name, success, parameters FROM tool_executions"
        )
        assert (name, success, json.loads(parameters)) == (
            "Edit",
            True,
            {"file_path": "app/views.py", "old_string": "user = User()", "new_string": "user = User()  # new"},
        )
    assert hooks_command("uninstall")["removed"] == [
        "PostToolUse",
        "Stop",
        "SessionStart",
        "UserPromptSubmit",
        "PreCompact",
    ]
    assert settings.read_bytes() == original.encode("utf-8")


def test_stop_turns_the_turns_edits_into_facts(store: Path, home: Path) -> None:
    for args in (["init", "-q"], ["add", "-A", "app"], ["commit", "-qm", "app"]):
        git(store, *args)
    util = store / "app" / "util.py"
    util.write_text(util.read_text() + "\n\ndef slugify(text):\n    return text.lower().replace(' ', '-')\n")
    transcript = write_transcript(home, [line("user", "Add a slugify helper")])
    stop = event("Stop", store, transcript_path=str(transcript), stop_hook_active=False)
    assert hooks.run_hook("Stop", stop) == ("", 0)
    with am.Memory.open(store) as memory:
        [fact] = [m for m in memory.memories(limit=100).memories if "slugify" in m.content]
        assert (fact.content, fact.source, fact.level) == (
            "Implemented function slugify in app/util.py",
            "ast_analysis",
            "L3",
        )
        assert fact.code_ref is not None and fact.code_ref.startswith("app/util.py#L")
    assert hooks.run_hook("Stop", stop) == ("", 0)  # again: known, nothing added
    with am.Memory.open(store) as memory:
        assert sum("slugify" in m.content for m in memory.memories(status="all", limit=100).memories) == 1
    set_policy(store, "[hooks]\nfacts_at_stop = false\n")
    util.write_text(util.read_text() + "\n\ndef unslug(text):\n    return text.replace('-', ' ')\n")
    assert hooks.run_hook("Stop", stop) == ("", 0)
    with am.Memory.open(store) as memory:
        assert not any("unslug" in m.content for m in memory.memories(status="all", limit=100).memories)


def test_post_tool_use_turns_each_save_into_facts_without_git(store: Path) -> None:
    util = store / "app" / "util.py"

    def save(added: str) -> str:
        before = util.read_text()
        util.write_text(before + added)
        edit = {"filePath": str(util), "oldString": "", "newString": added, "originalFile": before}
        tool_input = {"file_path": str(util), "old_string": "", "new_string": added}
        return event("PostToolUse", store, tool_name="Edit", tool_input=tool_input, tool_response=edit)

    def facts(memory: am.Memory, word: str) -> list[tuple[str, str]]:
        return [(m.content, m.source) for m in memory.memories(status="all", limit=100).memories if word in m.content]

    assert hooks.run_hook("PostToolUse", save("\n\ndef slugify(text):\n    return text.lower()\n")) == ("", 0)
    with am.Memory.open(store) as memory:
        assert facts(memory, "slugify") == [("Implemented function slugify in app/util.py", "ast_analysis")]
        with serving(memory) as served:  # the hook is the server's client
            assert hooks.run_hook("PostToolUse", save("\n\ndef unslug(text):\n    return text\n")) == ("", 0)
            assert ("POST", "/extract-facts") in served.requests
        assert facts(memory, "unslug") == [("Implemented function unslug in app/util.py", "ast_analysis")]
    # a response without the text before says nothing of the save; nor does a policy without it
    unsaid = json.loads(save("\n\ndef shout(text):\n    return text.upper()\n"))
    del unsaid["tool_response"]["originalFile"]
    assert hooks.run_hook("PostToolUse", json.dumps(unsaid)) == ("", 0)
    set_policy(store, "[hooks]\nfacts_on_edit = false\n")
    assert hooks.run_hook("PostToolUse", save("\n\ndef whisper(text):\n    return text\n")) == ("", 0)
    with am.Memory.open(store) as memory:
        assert facts(memory, "shout") == facts(memory, "whisper") == []


def test_stop_outside_a_git_work_tree_learns_nothing_and_says_nothing(store: Path, home: Path) -> None:
    transcript = write_transcript(home, [line("user", "Hello")])
    stop = event("Stop", store, transcript_path=str(transcript), stop_hook_active=False)
    assert hooks.run_hook("Stop", stop) == ("", 0)
    with am.Memory.open(store) as memory:
        assert memory.longterm.pending_facts() == 0
