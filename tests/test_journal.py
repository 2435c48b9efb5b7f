"""The hooks' journal (``aircher_mem.journal``): a ``PostToolUse`` with no server
appends its records, redacted and on disk, to ``.aircher/journal.jsonl`` with C
modules only; opening the store writes them into it exactly once; a held store, a
full journal or a changed config sends the hook to the store itself."""

from __future__ import annotations

import json
import logging
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import aircher_mem as am
import pytest
from aircher_mem import journal, store
from aircher_mem.interfaces import hooks, thin
from conftest import hook_event
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

HOOK_FILE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(hooks.__file__))), "hook.py")
SECRET = "ghp_" + "a1B2c3D4e5F6g7H8i9J0" + "k1L2m3N4o5P6q7R8"
READ = {"type": "text", "file": {"filePath": "x", "content": "", "numLines": 2, "startLine": 1}}


def run_hook(root: Path, event: str, **fields: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-I", "-S", HOOK_FILE, event],
        input=hook_event(event, root, **fields),
        capture_output=True,
        text=True,
        timeout=120,
        cwd=root,
    )


def bash(root: Path, command: str) -> subprocess.CompletedProcess[str]:
    return run_hook(root, "PostToolUse", tool_name="Bash", tool_input={"command": command}, tool_response={})


def read_util(root: Path) -> subprocess.CompletedProcess[str]:
    tool = {"file_path": str(root / "app" / "util.py")}
    return run_hook(root, "PostToolUse", tool_name="Read", tool_input=tool, tool_response=READ)


def journal_of(root: Path) -> Path:
    return root / ".aircher" / journal.JOURNAL_FILE


def seen(root: Path) -> tuple[list[tuple[str, tuple[int, int] | None]], list[dict[str, Any]]]:
    """Opens the store (which writes the journal into it): the reads and edits of
    app/util.py, and the parameters of every Bash call, oldest first."""
    with am.Memory.open(root) as memory:
        history = memory.file_history("app/util.py").interactions
        runs = memory.episodic._read(
            "SELECT parameters FROM tool_executions WHERE tool_name = 'Bash' ORDER BY timestamp"
        )
    return [(i.operation, i.line_range) for i in reversed(history)], [json.loads(r[0]) for r in runs]


def test_the_module_names_match_the_service() -> None:
    from aircher_mem import memory, verbs

    assert thin.DB_FILE == memory.DB_FILE
    assert set(journal.VERBS) <= {v.name for v in verbs.all_verbs()}
    for name, arguments in journal.ARGUMENTS.items():
        assert arguments <= {p.name for p in verbs.get(name).params}, name


@pytest.mark.slow
def test_without_a_server_post_tool_use_journals_redacted_on_disk_with_c_modules(rules: Path, tmp_path: Path) -> None:
    from test_thin import THIN_MODULES, modules_of

    prompt = run_hook(rules, "UserPromptSubmit", prompt="Can I push to main now?")  # the full path
    assert (prompt.returncode, prompt.stderr) == (0, "")
    assert (rules / ".aircher" / thin.HOOKS_FILE).is_file()
    db = rules / ".aircher" / "memory.duckdb"
    before = db.stat()
    empty = tmp_path / "empty.py"
    empty.write_text("")
    _, baseline = modules_of([str(empty)], tmp_path)
    payload = hook_event("PostToolUse", rules, tool_name="Bash", tool_input={"command": f"git push {SECRET}"})
    done, modules = modules_of([HOOK_FILE, "PostToolUse"], tmp_path, payload, cwd=rules)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    # the redactor (pure Python, with re) and the journal's writer besides the thin path
    loaded = sorted(modules - baseline - THIN_MODULES)
    assert not {"duckdb", "_duckdb", "numpy", "aircher_mem.memory"} & set(loaded)
    assert {"aircher_mem.journal", "aircher_mem.redact"} <= set(loaded)
    assert read_util(rules).returncode == 0
    written = journal_of(rules).read_bytes()
    assert SECRET.encode() not in written and b"git push" in written
    assert stat.S_IMODE(journal_of(rules).stat().st_mode) == 0o600
    assert len(written.splitlines()) == 4  # the header, the Bash call, the Read call and the read
    after = db.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)  # the store untouched

    reads, commands = seen(rules)
    assert reads == [("read", (1, 2))]
    assert len(commands) == 1 and commands[0]["command"].startswith("git push [REDACTED:")
    assert not journal_of(rules).exists()
    assert seen(rules) == (reads, commands)  # written once


@pytest.mark.slow
def test_a_held_store_a_full_journal_or_a_changed_config_is_not_journaled(rules: Path) -> None:
    config = rules / ".aircher" / "config.toml"
    config.write_text("[hooks]\ndeadline_seconds = 30\njournal_max_bytes = 600\nstart_server = false\n")
    assert run_hook(rules, "UserPromptSubmit", prompt="hello").returncode == 0  # writes hooks.json
    assert bash(rules, "ls").returncode == 0
    assert journal_of(rules).is_file()
    # over 600 bytes: the hook opens the store, which takes the journal in first
    assert bash(rules, "ls -la " + "x" * 450).returncode == 0
    assert not journal_of(rules).exists()
    assert bash(rules, "id").returncode == 0
    assert journal_of(rules).is_file()
    config.write_text("[hooks]\ndeadline_seconds = 30\nstart_server = false\n")  # hooks.json no longer describes it
    assert bash(rules, "pwd").returncode == 0
    assert not journal_of(rules).exists()
    assert [c["command"] for c in seen(rules)[1]] == ["ls", "ls -la " + "x" * 450, "id", "pwd"]

    config.write_text("[hooks]\ndeadline_seconds = 1\n")
    assert run_hook(rules, "UserPromptSubmit", prompt="hello").returncode == 0
    with am.Memory.open(rules) as memory:
        memory.episodic  # holds the store
        done = bash(rules, "whoami")
        assert done.returncode == 0 and "StoreLockedError" in done.stderr  # the full path, as before
        assert not journal_of(rules).exists()


def write_journal(root: Path, lines: list[str], journal_id: str = "j1") -> bool:
    header = json.dumps({"journal": journal_id, "version": journal.VERSION})
    return journal.append(str(root / ".aircher"), "memory.duckdb", lines, header, max_bytes=1 << 20)


def record(verb: str, **arguments: Any) -> str:
    return json.dumps({"verb": verb, "arguments": arguments})


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "util.py").write_text("x = 1\n")
    am.Memory.open(tmp_path).close()
    return tmp_path


def test_a_journal_is_written_into_the_store_once_with_its_times(project: Path) -> None:
    util = str(project / "app" / "util.py")
    lines = [
        record("record_file_interaction", path=util, operation="edit", line_range=[2, 3], at=1_700_000_000.0),
        record("record_tool_call", tool_name="Bash", parameters={"command": "make"}, success=False, at=1_700_000_001.0),
    ]
    assert write_journal(project, lines)
    kept = journal_of(project).read_bytes()
    with am.Memory.open(project) as memory:
        [edit] = memory.file_history("app/util.py").interactions
        assert (edit.operation, edit.line_range, edit.timestamp) == ("edit", (2, 3), 1_700_000_000.0)
        assert memory.episodic.counts()["tool_executions"] == 1
    assert not journal_of(project).exists()
    journal_of(project).write_bytes(kept)  # as if the process died before removing it
    with am.Memory.open(project) as memory:
        assert len(memory.file_history("app/util.py").interactions) == 1
        assert memory.episodic.counts()["tool_executions"] == 1
    assert not journal_of(project).exists()


def test_lines_that_do_not_parse_or_are_refused_are_skipped(project: Path, caplog: Any) -> None:
    util = str(project / "app" / "util.py")
    good = record("record_file_interaction", path=util, operation="read", at=1_700_000_000.0)
    assert write_journal(project, [good, '{"verb": "record_tool_call", "argu'])
    assert write_journal(project, [good.replace("read", "edit")])  # starts on a line of its own
    assert write_journal(
        project,
        [
            record("forget", query="x"),
            record("record_file_interaction", path="/etc/passwd", operation="read"),
            record("record_file_interaction", path=util, operation="chewed"),
            "[1, 2]",
            record("record_tool_call", tool_name="x", success=True, duration_ms="long"),
            json.dumps({"verb": "record_tool_call", "arguments": ["x", True]}),
        ],
    )
    with caplog.at_level(logging.WARNING, logger="aircher_mem.journal"):
        with am.Memory.open(project) as memory:
            history = memory.file_history("app/util.py").interactions
    assert sorted(i.operation for i in history) == ["edit", "read"]
    skipped = [r.getMessage().split(": skipped: ")[1].split(":")[0] for r in caplog.records]
    assert skipped == [
        "JSONDecodeError",
        "ValueError",
        "InvalidInputError",
        "InvalidInputError",
        "TypeError",
        "ValueError",
        "TypeError",
    ]


def test_writing_the_journal_into_the_store_does_not_import_pydantic(project: Path) -> None:
    # the first hook without a server after some PostToolUse ones pays for it
    util = str(project / "app" / "util.py")
    assert write_journal(project, [record("record_file_interaction", path=util, operation="read", at=1.7e9)])
    code = (
        "import sys, aircher_mem as am\n"
        f"with am.Memory.open({str(project)!r}) as m:\n"
        "    assert len(m.file_history('app/util.py').interactions) == 1\n"
        "print(sorted(n for n in sys.modules if n.split('.')[0] == 'pydantic'))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.strip() == "[]"
    assert not journal_of(project).exists()


def test_a_journal_not_written_by_a_hook_is_set_aside(project: Path, caplog: Any) -> None:
    journal_of(project).write_text('{"not": "a journal"}\n' + record("record_tool_call", tool_name="x", success=True))
    with caplog.at_level(logging.WARNING, logger="aircher_mem.journal"):
        with am.Memory.open(project) as memory:
            assert memory.episodic.counts()["tool_executions"] == 0
    assert not journal_of(project).exists()
    assert (project / ".aircher" / (journal.JOURNAL_FILE + ".unreadable")).is_file()
    assert "is not a hooks' journal" in caplog.text


def test_a_journal_that_is_a_link_or_a_fifo_is_set_aside_unread(project: Path, tmp_path_factory: Any) -> None:
    outside = tmp_path_factory.mktemp("outside") / "journal.jsonl"
    util = str(project / "app" / "util.py")
    header = json.dumps({"journal": "elsewhere", "version": journal.VERSION})
    outside.write_text(header + "\n" + record("record_file_interaction", path=util, operation="edit") + "\n")
    journal_of(project).symlink_to(outside)
    assert not write_journal(project, [record("record_tool_call", tool_name="x", success=True)])
    with am.Memory.open(project) as memory:
        assert memory.file_history("app/util.py").interactions == []
    aside = project / ".aircher" / (journal.JOURNAL_FILE + ".unreadable")
    assert aside.is_symlink() and not journal_of(project).exists()
    assert outside.read_text().startswith(header)  # neither read nor changed
    aside.unlink()
    os.mkfifo(journal_of(project))
    assert not write_journal(project, [record("record_tool_call", tool_name="x", success=True)])
    with am.Memory.open(project) as memory:  # does not block on the FIFO
        assert memory.episodic.counts()["tool_executions"] == 0
    assert stat.S_ISFIFO(aside.lstat().st_mode)


def test_nothing_is_appended_to_a_journal_whose_first_line_was_cut(project: Path, caplog: Any) -> None:
    util = str(project / "app" / "util.py")
    journal_of(project).write_bytes(b'{"journal": "cut-sh')  # a crash while the header was written
    assert not write_journal(project, [record("record_file_interaction", path=util, operation="read")])
    journal_of(project).write_bytes(b'{"journal": "cut-sh\n' + record("record_tool_call", tool_name="x").encode())
    assert not write_journal(project, [record("record_file_interaction", path=util, operation="read")])
    with caplog.at_level(logging.WARNING, logger="aircher_mem.journal"), am.Memory.open(project) as memory:
        assert memory.episodic.counts()["tool_executions"] == 0
    assert "is not a hooks' journal" in caplog.text
    assert write_journal(project, [record("record_file_interaction", path=util, operation="read")])
    assert journal_of(project).read_bytes().startswith(b'{"journal": "j1"')


@pytest.mark.slow
def test_a_payload_the_thin_path_cannot_take_goes_to_the_full_path(rules: Path) -> None:
    assert run_hook(rules, "UserPromptSubmit", prompt="hello").returncode == 0  # writes hooks.json
    loop = rules / "app" / "loop.py"
    loop.symlink_to(loop)  # resolving it raises RuntimeError, not OSError
    done = run_hook(rules, "PostToolUse", tool_name="Read", tool_input={"file_path": str(loop)}, tool_response=READ)
    assert done.returncode == 0 and "Traceback" not in done.stderr
    assert not journal_of(rules).exists()


def test_nothing_is_appended_while_the_store_is_held(project: Path) -> None:
    line = record("record_tool_call", tool_name="x", success=True)
    db = project / ".aircher" / "memory.duckdb"
    store.hold(db)
    try:
        assert not write_journal(project, [line])
    finally:
        store.release(db)
    assert not journal_of(project).exists()
    assert write_journal(project, [line])
    assert not write_journal(project, [line * 100_000])  # over max_bytes
    assert len(journal_of(project).read_bytes().splitlines()) == 2


LEAF = st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=30)
JSON = LEAF | st.lists(LEAF, max_size=3) | st.dictionaries(st.text(max_size=8), LEAF | st.lists(LEAF, max_size=3))


@pytest.mark.slow
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    parameters=st.dictionaries(st.text(max_size=10), JSON, max_size=4),
    error=st.none() | st.text(max_size=40),
    secret=st.booleans(),
)
def test_a_journaled_call_is_stored_as_the_call_itself(
    tmp_path_factory: Any, parameters: dict[str, Any], error: str | None, secret: bool
) -> None:
    # what the thin path journals (redacted) and the drain stores equals what
    # the verb stores when called directly
    if secret:
        parameters = {**parameters, "token": SECRET}
    direct, journaled = tmp_path_factory.mktemp("direct"), tmp_path_factory.mktemp("journaled")
    with am.Memory.open(direct) as memory:
        try:
            memory.record_tool_call("Bash", parameters, success=error is None, error_message=error, at=1.7e9)
        except am.InvalidInputError:
            return  # refused alike (checked below by the drain's warning path)
        expected = memory.episodic._read("SELECT parameters, error_message, success FROM tool_executions")
    am.Memory.open(journaled).close()
    limits = thin.Limits(am.Policy().hooks.to_dict())
    kept = thin.Journaled(str(journaled), limits)
    kept.record_tool_call("Bash", parameters, success=error is None, error_message=error, file_path=None)
    assert SECRET not in "".join(kept.lines)
    for i, line in enumerate(kept.lines):  # the time of the direct call
        entry = json.loads(line)
        kept.lines[i] = json.dumps({**entry, "arguments": {**entry["arguments"], "at": 1.7e9}})
    assert kept.write()
    with am.Memory.open(journaled) as memory:
        got = memory.episodic._read("SELECT parameters, error_message, success FROM tool_executions")
    assert got == expected
    shutil.rmtree(direct)
    shutil.rmtree(journaled)


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    lines=st.lists(
        st.binary(max_size=80)
        | st.builds(
            lambda verb, arguments: json.dumps({"verb": verb, "arguments": arguments}).encode(),
            st.sampled_from([*journal.VERBS, "forget", ""]),
            # every argument a line may carry, and one it may not, with any JSON value
            st.dictionaries(st.sampled_from(sorted(set().union(*journal.ARGUMENTS.values(), {"x"}))), JSON),
        ),
        max_size=6,
    ),
    header=st.booleans(),
)
def test_any_journal_is_read_without_an_error_and_keeps_what_is_stored(
    tmp_path_factory: Any, lines: list[bytes], header: bool
) -> None:
    root = tmp_path_factory.mktemp("fuzz")
    with am.Memory.open(root) as memory:
        memory.record_tool_call("kept", success=True)
    top = json.dumps({"journal": "fuzz", "version": journal.VERSION}).encode() if header else b""
    journal_of(root).write_bytes(b"\n".join([top, *lines]))
    with am.Memory.open(root) as memory:
        counts = memory.episodic.counts()
        assert counts["tool_executions"] >= 1  # what was stored stays
    assert not journal_of(root).exists()
    shutil.rmtree(root)


TOOL_INPUT = st.fixed_dictionaries(
    {},
    optional={
        "file_path": st.sampled_from(["app/util.py", "app/new.py", "/etc/passwd", "", f"app/{SECRET}.py"]),
        "command": st.text(max_size=40) | st.just(f"curl -H 'Authorization: Bearer {SECRET}'"),
        "content": st.text(max_size=40),
        "offset": st.integers(-2, 50),
        "limit": st.integers(-2, 50),
        "old_string": st.text(max_size=10),
    },
)
TOOL_RESPONSE = st.none() | st.fixed_dictionaries(
    {},
    optional={
        "success": st.booleans(),
        "error": st.text(max_size=30),
        "is_error": st.booleans(),
        "structuredPatch": st.lists(
            st.fixed_dictionaries(
                {"newStart": st.integers(0, 40), "newLines": st.integers(0, 5)},
                optional={"lines": st.lists(st.sampled_from(["+a", "-b", " c", "\\ no newline"]), max_size=4)},
            ),
            max_size=2,
        ),
        "file": st.fixed_dictionaries({"startLine": st.integers(0, 9), "numLines": st.integers(0, 9)}),
    },
)


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    tool=st.sampled_from(["Read", "Edit", "MultiEdit", "Write", "NotebookEdit", "Bash", "Grep"]),
    tool_input=TOOL_INPUT,
    response=TOOL_RESPONSE,
)
def test_post_tool_use_journaled_stores_what_it_stores_through_the_store(
    tmp_path_factory: Any, tool: str, tool_input: dict[str, Any], response: Any
) -> None:
    # the same event through the journal (then the drain) and through a Memory:
    # the same rows, times and sessions aside
    if "file_path" in tool_input and tool == "NotebookEdit":
        tool_input = {**tool_input, "notebook_path": tool_input.pop("file_path")}
    roots = []
    for name in ("direct", "journaled"):
        root = tmp_path_factory.mktemp(name)
        (root / "app").mkdir()
        (root / "app" / "util.py").write_text("x = 1\n")
        am.Memory.open(root).close()
        roots.append(root)
    data = {"session_id": "s1", "cwd": "", "tool_name": tool, "tool_input": tool_input, "tool_response": response}
    limits = thin.Limits(am.Policy().hooks.to_dict())
    deadline = 1e18  # never late
    with am.Memory.open(roots[0]) as memory:
        thin.post_tool(
            thin.Call(thin.Verbs(memory, deadline), {**data, "cwd": str(roots[0])}, roots[0], deadline, limits)
        )
    kept = thin.Journaled(str(roots[1]), limits)
    try:
        thin.post_tool(
            thin.Call(thin.Verbs(kept, deadline), {**data, "cwd": str(roots[1])}, roots[1], deadline, limits)
        )
    except thin.NotJournaled:
        assert SECRET in json.dumps(tool_input)  # only a path redaction would change
        return
    assert SECRET not in "".join(kept.lines)
    assert kept.write()

    def rows(root: Path) -> list[Any]:
        with am.Memory.open(root) as memory:
            read = memory.episodic._read
            return [
                read("SELECT tool_name, parameters, success, error_message FROM tool_executions ORDER BY id"),
                read(
                    "SELECT file_path, operation, line_range, success, changes_summary FROM file_interactions "
                    "ORDER BY id"
                ),
            ]

    assert rows(roots[1]) == rows(roots[0])
    for root in roots:
        shutil.rmtree(root)
