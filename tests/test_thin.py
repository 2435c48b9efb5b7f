"""The hooks' thin path (``interfaces/thin.py``): run as Claude Code runs the
installed command, with a server it imports no module of the standard library
written in Python besides what the interpreter loads anyway; its JSON, HMAC, query
strings and paths are those of json, hmac, urllib and pathlib; off the happy path
it hands the payload to the full path, whose output and exit codes stay."""

from __future__ import annotations

import hashlib
import hmac
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import urlencode

import aircher_mem as am
import pytest
from aircher_mem.interfaces import hooks, thin
from conftest import assert_prompt_and_read_recorded, hook_event, run_with_stdin_held, serving
from hypothesis import given
from hypothesis import strategies as st

HOOK_FILE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(hooks.__file__))), "hook.py")

# Runs the installed hook command's file as ``python -I -S FILE EVENT`` does, then
# writes the names of every module loaded to the file named first; it imports
# nothing itself (atexit is built in).
RUN_HOOK = """
import atexit, os, sys
listing = sys.argv[1]
def write():
    open(listing, "w").write("\\n".join(sorted(sys.modules)))
atexit.register(write)
leave = os._exit  # a hook that opened the store ends without the interpreter's teardown
os._exit = lambda code: (write(), leave(code))
sys.argv = sys.argv[2:]
with open(sys.argv[0], "rb") as source:
    code = compile(source.read(), sys.argv[0], "exec")
exec(code, {"__name__": "__main__", "__file__": sys.argv[0]})
"""

#: What the thin path may load beyond the interpreter's own start (-S: without
#: site, which loads os and its own modules on every other start): os, the
#: package's modules on the way and C modules of the standard library.
THIN_MODULES = {
    "_collections_abc",
    "_stat",
    "genericpath",
    "os",
    "os.path",
    "posixpath",
    "stat",
    "__future__",
    "_json",
    "_operator",
    "_sha2",
    "_sha256",
    "_socket",
    "aircher_mem",
    "aircher_mem.brief",
    "aircher_mem.digest",
    "aircher_mem.mentions",
    "aircher_mem.errors",
    "aircher_mem.interfaces",
    "aircher_mem.interfaces.dispatch",
    "aircher_mem.interfaces.hook_command",
    "aircher_mem.interfaces.thin",
    "aircher_mem.root",
    "atexit",
    "select",
}

PROMPT_CONTEXT = """\
[aircher-mem] Recalled from project memory; cite a memory by its id, e.g. [memory 1].
Relevant:
[memory 1] (fact) Never push to main
"""


def modules_of(args: list[str], tmp_path: Path, stdin: str = "", cwd: Path | None = None) -> tuple[Any, set[str]]:
    listing = tmp_path / "modules.txt"
    argv = [sys.executable, "-I", "-S", "-c", RUN_HOOK, str(listing)]
    done = subprocess.run([*argv, *args], input=stdin, capture_output=True, text=True, timeout=120, cwd=cwd)
    return done, set(listing.read_text().split("\n"))


@pytest.mark.slow
def test_the_installed_command_with_a_server_loads_only_c_modules_besides_its_own(rules: Path, tmp_path: Path) -> None:
    empty = tmp_path / "empty.py"
    empty.write_text("")
    _, baseline = modules_of([str(empty)], tmp_path)  # what starting the interpreter loads anyway
    read = {"type": "text", "file": {"filePath": "x", "content": "", "numLines": 2, "startLine": 1}}
    tool = {"file_path": str(rules / "app" / "util.py")}
    with am.Memory.open(rules) as memory, serving(memory) as served:
        prompt = hook_event("UserPromptSubmit", rules, prompt="Can I push to main now?")
        done, modules = modules_of([HOOK_FILE, "UserPromptSubmit"], tmp_path, prompt, cwd=rules)
        assert (done.returncode, done.stdout, done.stderr) == (0, PROMPT_CONTEXT, "")
        assert sorted(modules - baseline - THIN_MODULES) == []
        payload = hook_event("PostToolUse", rules, tool_name="Read", tool_input=tool, tool_response=read)
        done, modules = modules_of([HOOK_FILE, "PostToolUse", "--root", str(rules)], tmp_path, payload)
        assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
        assert sorted(modules - baseline - THIN_MODULES) == []
        assert_prompt_and_read_recorded(served, memory)


@pytest.mark.slow
def test_without_a_server_the_installed_command_takes_the_full_path_with_site_packages(
    rules: Path, tmp_path: Path
) -> None:
    prompt = hook_event("UserPromptSubmit", rules, prompt="Can I push to main now?")
    done, modules = modules_of([HOOK_FILE, "UserPromptSubmit"], tmp_path, prompt, cwd=rules)
    assert (done.returncode, done.stdout, done.stderr) == (0, PROMPT_CONTEXT, "")
    assert {"site", "_duckdb", "aircher_mem.memory"} <= modules
    with am.Memory.open(rules) as memory:
        assert [t.text for t in memory.longterm.turns("s1")] == ["Can I push to main now?"]


def run_hook_file(args: list[str], stdin: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-I", "-S", HOOK_FILE, *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
    )


@pytest.mark.slow
def test_off_the_happy_path_the_payload_goes_to_the_full_path(rules: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"  # a project without a server
    other.mkdir()
    with am.Memory.open(other) as memory:
        memory.remember("Deploy on Fridays", importance=1)
    with am.Memory.open(rules) as memory, serving(memory) as served:
        not_json = run_hook_file(["UserPromptSubmit"], "{not json", rules)
        assert (not_json.returncode, not_json.stdout) == (0, "")
        assert not_json.stderr.startswith("aircher-mem hook: the payload is not JSON: Expecting property name")
        wrong = run_hook_file(["PostToolUse"], hook_event("Stop", rules), rules)
        assert (wrong.returncode, wrong.stdout, wrong.stderr) == (
            0,
            "",
            "aircher-mem hook PostToolUse: the payload is for 'Stop'; ignored\n",
        )
        elsewhere = run_hook_file(
            ["UserPromptSubmit"], hook_event("UserPromptSubmit", other, prompt="deploy when?"), rules
        )
        assert (elsewhere.returncode, elsewhere.stderr) == (0, ""), elsewhere.stderr
        assert elsewhere.stdout.endswith("[memory 1] (fact) Deploy on Fridays\n")
        assert served.requests == []
    with am.Memory.open(other) as memory:
        assert [t.text for t in memory.longterm.turns("s1")] == ["deploy when?"]


@pytest.mark.slow
def test_on_the_thin_path_stdin_held_open_is_exit_1_as_on_the_full_path(rules: Path) -> None:
    (rules / ".aircher" / "config.toml").write_text("[hooks]\nstdin_seconds = 0.5\n")
    with am.Memory.open(rules) as memory, serving(memory) as served:
        code, out, err = run_with_stdin_held(
            [sys.executable, "-I", "-S", HOOK_FILE, "PostToolUse", "--root", str(rules)],
            hook_event("PostToolUse", rules)[:40],
        )
        assert (code, out) == (1, "")
        assert err == (
            "aircher-mem hook PostToolUse: HookInputError: stdin was not closed within 0.5 s "
            "([hooks] stdin_seconds); nothing done\n"
        )
        assert served.requests == []


# -- the thin path's pieces are the standard library's ------------------------------------

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@given(JSON)
def test_thin_json_is_the_json_modules(value: Any) -> None:
    compact = json.dumps(value, allow_nan=False, ensure_ascii=False, separators=(",", ":"))
    assert thin.dumps(value) == compact
    assert thin.dumps(value, ensure_ascii=True) == json.dumps(value, allow_nan=False, separators=(",", ":"))
    assert thin._spaced(value) == json.dumps(value, ensure_ascii=False)
    spaced = f" \n{json.dumps(value, indent=1)}\t"
    assert thin.loads(spaced) == json.loads(spaced)


@pytest.mark.parametrize("text", ["", " ", "{", '{"a": 1} x', "[1,]", "nul"])
def test_thin_loads_refuses_what_json_refuses_with_its_error(text: str) -> None:
    with pytest.raises(json.JSONDecodeError) as expected:
        json.loads(text)
    with pytest.raises(json.JSONDecodeError) as found:
        thin.loads(text)
    assert str(found.value) == str(expected.value)


def test_thin_json_reads_the_constants_and_refuses_to_write_them() -> None:
    assert [math.isinf(x) for x in thin.loads("[Infinity, -Infinity]")] == [True, True]
    assert math.isnan(thin.loads("NaN"))
    with pytest.raises(ValueError):
        thin.dumps({"x": float("nan")})
    with pytest.raises(TypeError, match="Object of type set is not JSON serializable"):
        thin.dumps({"x": {1}})


@given(st.text(min_size=1), st.text(alphabet="0123456789abcdef", min_size=1), st.integers(1, 2**31))
def test_thin_proof_is_hmac_sha256(token: str, challenge: str, pid: int) -> None:
    message = f"aircher-mem {pid} {challenge}".encode("ascii")
    assert thin.proof(token, challenge, pid) == hmac.new(token.encode(), message, hashlib.sha256).hexdigest()


@given(st.lists(st.tuples(st.text(), st.text()), max_size=5))
def test_thin_query_is_urlencode(pairs: list[tuple[str, str]]) -> None:
    try:
        expected = urlencode(pairs)
    except UnicodeEncodeError:  # a lone surrogate: the same error
        with pytest.raises(UnicodeEncodeError):
            thin.query(pairs)
        return
    assert thin.query(pairs) == expected


@given(st.lists(st.sampled_from(["", ".", "..", "a", "b c", "/", "//"]), max_size=8).map("/".join))
def test_thin_paths_are_normalized_as_pathlib_does(path: str) -> None:
    assert thin._pure(path) == str(PurePosixPath(path))


def test_a_tool_path_is_inside_the_project_as_pathlib_resolves_it(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "link").symlink_to(tmp_path)  # out of the project
    data = {"cwd": str(root / "src")}
    call = thin.Call(None, data, str(root), 0.0, thin.Limits(am.Policy().hooks.to_dict()))  # type: ignore[arg-type]
    found = {
        value: thin._inside(call, value)
        for value in ["a.py", "./a.py", "../b.py", "../../x.py", f"{root}//src/./c.py", "../link/x", str(root), "/"]
    }
    assert found == {
        "a.py": f"{root}/src/a.py",
        "./a.py": f"{root}/src/a.py",
        "../b.py": f"{root}/src/../b.py",
        "../../x.py": None,
        f"{root}//src/./c.py": f"{root}/src/c.py",
        "../link/x": None,
        str(root): str(root),
        "/": None,
    }


# -- a server a hook starts ------------------------------------------------------------------


class Spawned:
    """Stands for subprocess.Popen: records each command line."""

    def __init__(self) -> None:
        self.argv: list[list[str]] = []

    def __call__(self, argv: list[str], **options: Any) -> None:
        self.argv.append(argv)
        assert options["start_new_session"] is True
        assert options["stdin"] == options["stdout"] == options["stderr"] == subprocess.DEVNULL


@pytest.mark.hook_servers
def test_a_hook_without_a_server_starts_one_unless_hooks_start_server_says_not_to(
    rules: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spawned = Spawned()
    monkeypatch.setattr(subprocess, "Popen", spawned)
    (rules / ".aircher" / "config.toml").write_text("[hooks]\ndeadline_seconds = 30\nstart_server = false\n")
    prompt = hook_event("UserPromptSubmit", rules, prompt="Can I push to main now?")
    assert hooks.run_hook("UserPromptSubmit", prompt) == (PROMPT_CONTEXT, 0)
    assert spawned.argv == []
    (rules / ".aircher" / "config.toml").write_text("[hooks]\ndeadline_seconds = 30\nserver_idle_seconds = 90\n")
    assert hooks.run_hook("PostToolUse", hook_event("PostToolUse", rules, tool_name="Bash")) == ("", 0)
    serve = [sys.executable, "-m", "aircher_mem", "serve", "--root", str(rules), "--port", "0"]
    assert spawned.argv == [[*serve, "--idle-exit-seconds", "90", "--yields"]]  # the default
    with am.Memory.open(rules) as memory, serving(memory):  # with a server: none started
        assert hooks.run_hook("PostToolUse", hook_event("PostToolUse", rules, tool_name="Bash")) == ("", 0)
    assert len(spawned.argv) == 1


def wait_for(condition: Any, seconds: float = 120.0) -> None:
    end = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < end, "not within the time"
        time.sleep(0.1)


@pytest.mark.slow
def test_a_server_started_by_a_hook_serves_the_next_hooks_then_exits_when_idle(rules: Path, tmp_path: Path) -> None:
    from aircher_mem.interfaces import client as http_client

    (rules / ".aircher" / "config.toml").write_text(
        "[hooks]\ndeadline_seconds = 30\nstart_server = true\nserver_idle_seconds = 3\n"
    )
    prompt = hook_event("UserPromptSubmit", rules, prompt="Can I push to main now?")
    done = run_hook_file(["UserPromptSubmit"], prompt, rules)  # no server: the full path, then one starts
    assert (done.returncode, done.stdout, done.stderr) == (0, PROMPT_CONTEXT, "")
    wait_for(lambda: http_client.Client.discover(rules) is not None)
    info = http_client.discover(rules)
    assert info is not None
    payload = hook_event("PostToolUse", rules, tool_name="Bash", tool_input={"command": "ls"})
    done, modules = modules_of([HOOK_FILE, "PostToolUse"], tmp_path, payload, cwd=rules)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert "aircher_mem.interfaces.thin" in modules and not {"duckdb", "_duckdb"} & modules  # the server's client
    wait_for(lambda: not thin.alive(info.pid))  # idle for 3 s: it exits, and removes server.json
    assert not (rules / ".aircher" / "server.json").exists()
    with am.Memory.open(rules) as memory:  # the server let go of the store; what the hooks sent is there
        assert [t.text for t in memory.longterm.turns("s1")] == ["Can I push to main now?"]
        assert memory.episodic._read("SELECT tool_name FROM tool_executions") == [("Bash",)]


@pytest.mark.slow
def test_serve_with_an_idle_exit_exits_only_once_no_request_came_for_that_long(rules: Path) -> None:
    from aircher_mem.interfaces import client as http_client

    script = str(Path(sys.executable).with_name("aircher-mem"))
    argv = [script, "serve", "--root", str(rules), "--port", "0", "--idle-exit-seconds", "2"]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: (info := http_client.discover(rules)) is not None and info.pid == proc.pid)
        client = http_client.Client.discover(rules)
        assert client is not None
        until = time.monotonic() + 4
        while time.monotonic() < until:  # a request every half second: not idle
            client.request("GET", "/stats")
            assert proc.poll() is None
            time.sleep(0.5)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert (proc.returncode, "Traceback" in err) == (0, False), err
    assert not (rules / ".aircher" / "server.json").exists()
    with pytest.raises(am.InvalidInputError, match="idle_exit_seconds must be a finite number >= 0"):
        from aircher_mem.interfaces import http

        http.serve(rules, port=0, idle_exit_seconds=-1)


def test_a_hook_opens_the_store_on_its_store_threads(tmp_path: Path) -> None:
    """Without a server a hook runs DuckDB on ``[hooks] store_threads`` threads (0:
    DuckDB's default, one per core), its own Policy's or the project's."""
    from aircher_mem import store

    root = tmp_path
    am.Memory.open(root).close()
    config = root / ".aircher" / "config.toml"
    try:
        for count, given in (
            (2, None),
            (1, None),
            (0, None),
            (3, am.Policy.from_dict({"hooks": {"store_threads": 3}})),
        ):
            config.write_text(f"[hooks]\nstore_threads = {count}\n")
            memory = thin.open_store(root, given)
            try:
                threads = memory.episodic._con.execute("SELECT current_setting('threads')").fetchone()[0]
            finally:
                memory.close()
            assert threads == (count or os.cpu_count() or 1)
    finally:
        store.set_threads(0)
