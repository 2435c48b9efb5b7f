"""The long-term memory commands of aircher-mem: add-turn, get-context, remember, list,
forget, gc, explain, recall, feedback, update, facts, subtree, promote; tables for
people, --json equal to wire.to_json of the Memory verb, usage errors (2) and unknown
ids (3); and the serve/hooks/hook commands handing over to their modules."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import types
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import aircher_mem as am
import pytest
from aircher_mem.interfaces import cli, wire
from aircher_mem.interfaces.cli import main

SCRIPT = str(Path(sys.executable).with_name("aircher-mem"))
NOW = 1_700_000_000.0
DAY = 86_400.0


def when(ts: float) -> str:
    """How the tables print a time (local time, as the other commands do)."""
    return datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M:%S")


@pytest.fixture
def store(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    with am.Memory.open(root):
        pass
    return root


@pytest.fixture
def fixed_clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[float]]:
    """Every Memory the CLI opens reads the time from this settable clock, so its
    results can be compared with a Memory's own, field for field."""
    now = [NOW]
    opened = cli._open

    def open_with_clock(args: Any) -> am.Memory:
        memory = opened(args)
        memory.longterm.clock = lambda: now[0]
        return memory

    monkeypatch.setattr(cli, "_open", open_with_clock)
    yield now


def run(root: Path, *argv: str) -> tuple[int, str]:
    out = io.StringIO()
    code = main([*argv, "--root", str(root)], stdout=out)
    return code, out.getvalue()


def ok(root: Path, *argv: str) -> str:
    code, text = run(root, *argv)
    assert code == 0, text
    return text


def as_json(root: Path, *argv: str) -> Any:
    return json.loads(ok(root, *argv, "--json"))


def iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, timezone.utc).isoformat()


def lines(text: str) -> list[str]:
    return text.splitlines()


# -- tables --------------------------------------------------------------------------------


def test_add_turn_then_list_recall_and_explain_show_the_extracted_memory(store: Path, fixed_clock: list[float]) -> None:
    added = ok(store, "add-turn", "s1", "user", "I prefer tabs.", "--speaker", "ann")
    assert lines(added)[0] == "turn 1 added to session s1: 1 memory extracted"
    assert lines(added)[3].split() == ["created", "1", "fact", "I", "prefer", "tabs.", "preference.prefer"]

    listed = lines(ok(store, "memories"))
    assert listed[0].split() == ["id", "kind", "level", "layer", "status", "score", "hits", "tags", "content"]
    assert listed[2].split() == ["1", "fact", "L0", "mid", "active", "1.000", "0", "preference", "I", "prefer", "tabs."]

    recalled = lines(ok(store, "recall", "tabs or spaces?"))
    assert recalled[0] == "1 hit(s) for 'tabs or spaces?' (channels: lexical)"
    assert recalled[1].split() == ["#", "kind", "id", "score", "content", "said", "by", "matched"]
    row = recalled[3]
    assert row.split()[:4] == ["1", "fact", "1", "1.600"] and "I prefer tabs." in row
    assert f"ann {when(NOW)[:16]}" in row and row.endswith("  tab")

    fixed_clock[0] = NOW + 2 * DAY
    explained = lines(ok(store, "explain", "1"))
    assert explained[:4] == [
        "memory 1: I prefer tabs.",
        "  fact, level L0, mid-term layer, active, scope project-shared",
        "  source extracted (confidence 1.00); slot ann/indentation = tabs; tags preference",
        f"  created {when(NOW)}; valid from {when(NOW)}; last seen {when(NOW)}",
    ]
    assert explained[4] == "  age 2.0 days; hits 0, importance 0; recalled 1, cited 0, ignored 0"
    assert explained[5] == "score 0.9048 = frequency 0.0000 + recency 0.9048 + importance 0.0000"
    assert [r.split() for r in explained[6:11]] == [
        ["term", "weight", "value", "contribution"],
        ["----------", "------", "------", "------------"],
        ["frequency", "1", "0.0000", "0.0000"],
        ["recency", "1", "0.9048", "0.9048"],
        ["importance", "2", "0.0000", "0.0000"],
    ]
    assert explained[11] == "rules: preference.prefer"
    assert explained[12] == "source turns:"
    assert explained[15].split() == ["1", "extracted", "s1", "ann", *when(NOW).split(), "I", "prefer", "tabs."]
    assert explained[16] == "related memories: none"
    assert explained[17] == "actions:"
    assert explained[20].split()[2:] == ["created", "extracted;", "rules", "preference.prefer"]
    assert explained[-1] == "gc outlook: keep"


def test_a_changed_preference_supersedes_the_old_one(store: Path, fixed_clock: list[float]) -> None:
    ok(store, "add-turn", "s1", "user", "I prefer tabs.")
    fixed_clock[0] = NOW + 60
    second = as_json(store, "add-turn", "s1", "user", "I now prefer spaces.")
    assert second["extracted"] == [
        {
            "action": "superseded",
            "memory_id": 2,
            "content": "I now prefer spaces.",
            "kind": "fact",
            "rules": ["preference.prefer", "state_change.now"],
            "superseded": 1,
        }
    ]
    active = lines(ok(store, "memories"))
    assert len(active) == 3 and "I now prefer spaces." in active[2]
    every = [r.split()[:5] for r in lines(ok(store, "memories", "--status", "all", "--sort", "id"))[2:]]
    assert every == [["1", "fact", "L0", "mid", "archived"], ["2", "fact", "L0", "mid", "active"]]
    assert [m["id"] for m in as_json(store, "memories", "--status", "archived")["memories"]] == [1]

    old = ok(store, "explain", "1")
    assert f"valid from {when(NOW)} until {when(NOW + 60)}" in old and "superseded by memory 2" in old
    assert lines(old)[-1] == "gc outlook: none (archived)"
    related = lines(old)[lines(old).index("related memories:") + 3]
    assert related.split() == ["superseded_by", "2", "I", "now", "prefer", "spaces."]
    assert "superseded  by memory 2: 'spaces'" in old

    # recall as of a moment between the two turns knows only the old value
    between = as_json(store, "recall", "prefer", "--kinds", "fact", "--at", iso(NOW + 30))
    assert [h["id"] for h in between["hits"]] == [1]
    current = as_json(store, "recall", "prefer", "--kinds", "fact")
    assert [h["id"] for h in current["hits"]] == [2]


@pytest.mark.slow
def test_forget_by_id_and_by_text(store: Path, fixed_clock: list[float]) -> None:
    for text in ("We deploy with fly.io because it is cheaper", "The staging database is reset nightly", "Use ruff"):
        ok(store, "remember", text)
    assert ok(store, "forget", "2") == "forgot 1 memory for good: 2\n"
    assert ok(store, "forget", "--text", "fly.io") == "forgot 1 memory for good: 1\n"
    assert ok(store, "forget", "--text", "nothing like this") == "nothing matches; nothing forgotten\n"
    assert as_json(store, "forget", "--text", "ruff") == {"ids": [3], "turns": []}
    assert as_json(store, "memories", "--status", "all") == {"memories": []}
    code, _ = run(store, "explain", "1")
    assert code == wire.EXIT_NOT_FOUND


def test_forget_a_session_and_a_text_with_their_turns(store: Path, fixed_clock: list[float]) -> None:
    ok(store, "add-turn", "s1", "user", "I prefer tabs.")
    ok(store, "add-turn", "s1", "user", "The weather is nice.")
    ok(store, "add-turn", "s2", "user", "The weather is grey.")
    assert ok(store, "forget", "--session-id", "s1") == "forgot 1 memory and 2 turns for good: 1; turns 1, 2\n"
    assert ok(store, "forget", "--text", "grey") == "forgot 1 turn for good: 3\n"
    assert as_json(store, "forget", "--session-id", "s1") == {"ids": [], "turns": []}
    assert as_json(store, "stats")["longterm"]["turns"] == 0


def test_recall_marks_a_turn_whose_value_was_corrected(store: Path, fixed_clock: list[float]) -> None:
    ok(store, "add-turn", "s", "user", "The database is Postgres.")
    ok(store, "add-turn", "s", "user", "Actually, the database is MySQL.")
    rows = ok(store, "recall", "which database do we use?").splitlines()[3:]
    assert [row.split()[1:3] for row in rows] == [["fact", "2"], ["turn", "1"]]
    assert "The database is Postgres. (superseded by #2)" in rows[1]


@pytest.mark.slow
def test_gc_dry_run_shows_what_it_would_do_and_changes_nothing(store: Path, fixed_clock: list[float]) -> None:
    ok(store, "add-turn", "s0", "user", "I prefer tabs.", "--at", iso(NOW - 60 * DAY))
    for _ in range(4):  # the same memory four times: hits 3, promoted
        ok(store, "remember", "The API returns dates in UTC because clients live in many time zones")
    ok(store, "remember", "Never push to main directly", "--importance", "1")
    before = as_json(store, "memories", "--status", "all", "--sort", "id")

    dry = ok(store, "gc", "--dry-run")
    assert lines(dry) == [
        "gc dry run, nothing changed: 3 active memories scored; it would leave 1 mid-term and 1 long-term",
        "would promote to long-term: 2",
        "would archive, score too low: 1",
        "would archive, not seen for too long: none",
        "would archive, over capacity: none",
    ]
    assert as_json(store, "memories", "--status", "all", "--sort", "id") == before
    assert "gc outlook: archive: score" in ok(store, "explain", "1")

    done = lines(ok(store, "gc"))
    assert done[:3] == [
        "gc: 3 active memories scored; now 1 mid-term and 1 long-term",
        "promote to long-term: 2",
        "archive, score too low: 1",
    ]
    assert [m["id"] for m in as_json(store, "memories", "--status", "archived")["memories"]] == [1]
    # each command is its own process: the promotion was written
    assert [m["id"] for m in as_json(store, "memories", "--layer", "long")["memories"]] == [2]
    assert lines(ok(store, "gc"))[0] == "gc: 2 active memories scored; now 1 mid-term and 1 long-term"


@pytest.mark.slow
def test_get_context_remember_update_feedback_and_the_hierarchy(store: Path, fixed_clock: list[float]) -> None:
    ok(store, "add-turn", "s1", "user", "Hello there", "--no-extract")
    ok(store, "add-turn", "s1", "assistant", "Hi! What are we building?")
    made = ok(
        store,
        "remember",
        "Billing rounds amounts half-even because the auditors require it",
        "--kind",
        "decision",
        "--importance",
        "1",
        "--tags",
        "billing,money",
        "--domain",
        "billing",
    )
    assert made == "remembered as memory 1\n"
    child = ok(store, "remember", "Invoice totals round at the end", "--parent-id", "1", "--module", "inv")
    assert child == "remembered as memory 2\n"
    again = ["--kind", "decision", "--domain", "billing"]
    assert ok(store, "remember", "Billing rounds amounts half-even as auditors require it", *again) == (
        "merged into memory 1 (the same memory, seen once more)\n"
    )

    context = lines(ok(store, "conversation", "s1", "-k", "1"))
    assert context[0] == "session s1: last 2 turn(s)"
    assert context[3].split() == ["1", *when(NOW).split(), "user", "Hello", "there"]
    assert context[4].split()[3:] == ["assistant", "Hi!", "What", "are", "we", "building?"]
    assert context[5] == "top 1 memory by score"
    assert context[8].split()[:8] == ["1", "decision", "L1", "mid", "active", "3.693", "1", "billing,money"]

    facts = as_json(store, "facts", "--level", "L1", "--domain", "billing")["memories"]
    assert [m["id"] for m in facts] == [1]
    assert [m["id"] for m in as_json(store, "subtree", "1")["memories"]] == [1, 2]
    promoted = lines(ok(store, "promote", "2", "L3"))
    assert promoted[2].split()[:3] == ["2", "fact", "L3"]
    updated = as_json(store, "update", "2", "--content", "Invoice totals round once, at the end", "--tags", "x,y")
    assert (updated["content"], updated["tags"]) == ("Invoice totals round once, at the end", ["x", "y"])
    assert as_json(store, "update", "2", "--tags", "")["tags"] == []
    assert as_json(store, "update", "2", "--status", "archived")["status"] == "archived"
    assert ok(store, "feedback", "1", "cited") == "memory 1 cited: recalled 0, cited 1, ignored 0 times\n"
    assert as_json(store, "feedback", "1", "ignored") == {
        "memory_id": 1,
        "signal": "ignored",
        "retrieved": 0,
        "cited": 1,
        "ignored": 1,
    }


def test_recall_with_nothing_to_find_says_why(store: Path, fixed_clock: list[float]) -> None:
    text = ok(store, "recall", "anything at all")
    assert text.startswith("nothing recalled for 'anything at all': ")


# -- --json is wire.to_json of the Memory verb ---------------------------------------------------

# (CLI argv, the Memory call): run in order on two stores with the same clock.
STEPS: list[tuple[list[str], Any]] = [
    (
        ["add-turn", "s1", "user", "I prefer tabs.", "--speaker", "ann"],
        lambda m: m.add_turn("s1", "user", "I prefer tabs.", speaker="ann"),
    ),
    (
        ["add-turn", "s1", "user", "I now prefer spaces.", "--speaker", "ann"],
        lambda m: m.add_turn("s1", "user", "I now prefer spaces.", speaker="ann"),
    ),
    (
        ["add-turn", "s2", "assistant", "We use Postgres.", "--at", "2023-11-01"],
        lambda m: m.add_turn("s2", "assistant", "We use Postgres.", at=datetime(2023, 11, 1)),
    ),
    (
        ["add-turn", "s2", "user", "Our CI runs on GitHub Actions.", "--no-extract"],
        lambda m: m.add_turn("s2", "user", "Our CI runs on GitHub Actions.", extract=False),
    ),
    (
        ["remember", "Deploys go through fly.io because it is cheap", "--kind", "decision", "--tags", "ops"],
        lambda m: m.remember("Deploys go through fly.io because it is cheap", kind="decision", tags=["ops"]),
    ),
    (
        ["remember", "models.py holds the ORM", "--level", "L2", "--module", "app", "--code-ref", "app/m.py"],
        lambda m: m.remember("models.py holds the ORM", level="L2", module="app", code_ref="app/m.py"),
    ),
    (["conversation", "s1", "-k", "2"], lambda m: m.conversation("s1", k=2)),
    (["memories"], lambda m: m.memories()),
    (
        ["memories", "--layer", "mid", "--status", "all", "--kind", "fact", "--sort", "recent", "--limit", "5"],
        lambda m: m.memories(layer="mid", status=None, kind="fact", sort="recent", limit=5),
    ),
    (["recall", "tabs or spaces"], lambda m: m.recall("tabs or spaces")),
    (
        ["recall", "postgres ci", "-k", "2", "--session-id", "s2", "--kinds", "fact,turn", "--at", "2023-11-20T00:00Z"],
        lambda m: m.recall("postgres ci", k=2, session_id="s2", kinds=["fact", "turn"], at=datetime(2023, 11, 20)),
    ),
    (["explain", "1"], lambda m: m.explain(1)),
    (["feedback", "2", "cited"], lambda m: m.feedback(2, "cited")),
    (["update", "4", "--tags", "ops,deploy"], lambda m: m.update(4, tags=["ops", "deploy"])),
    (["facts", "--level", "L2"], lambda m: m.facts(level="L2")),
    (["subtree", "4"], lambda m: m.subtree(4)),
    (["promote", "4", "L1"], lambda m: m.promote(4, "L1")),
    (["gc", "--dry-run"], lambda m: m.gc(dry_run=True)),
    (["gc"], lambda m: m.gc()),
    (["forget", "--text", "fly.io"], lambda m: m.forget(text="fly.io")),
    (["forget", "2"], lambda m: m.forget(2)),
    (["explain", "4"], lambda m: m.explain(4)),
]


@pytest.mark.slow
def test_json_is_the_wire_form_of_the_memory_verbs_result(tmp_path: Path, fixed_clock: list[float]) -> None:
    by_cli, by_memory = tmp_path / "cli", tmp_path / "memory"
    for root in (by_cli, by_memory):
        root.mkdir()
        am.Memory.open(root).close()
    for n, (argv, call) in enumerate(STEPS):
        fixed_clock[0] = NOW + n * 60
        with am.Memory.open(by_memory) as memory:  # one open per step, as the CLI does
            memory.longterm.clock = lambda: fixed_clock[0]
            expected = wire.to_json(call(memory))
        assert as_json(by_cli, *argv) == expected, argv


# -- errors ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ["add-turn", "s", "system", "x"],
        ["add-turn", "s", "user", "   "],
        ["add-turn", "s", "user", "x", "--at", "yesterday"],
        ["add-turn", "s", "user", "x", "--at", "2024-13-01"],
        ["remember", "x", "--importance", "2"],
        ["remember", "x", "--kind", "rumour"],
        ["remember", "x", "--level", "L9"],
        ["memories", "--layer", "short"],
        ["memories", "--limit", "0"],
        ["forget"],
        ["forget", "1", "--text", "x"],
        ["forget", "x"],
        ["recall", "x", "--kinds", "fact,rumour"],
        ["recall", "x", "-k", "0"],
        ["feedback", "1", "liked"],
        ["update", "1"],
        ["update", "1", "--status", "deleted"],
        ["promote", "1", "L7"],
        ["explain"],
        ["conversation", "s", "-k", "-1"],
    ],
)
def test_bad_values_are_usage_errors(store: Path, argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    ok(store, "remember", "something worth keeping")
    code, _ = run(store, *argv)
    assert code == wire.EXIT_USAGE, argv
    assert "Traceback" not in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv",
    [
        ["explain", "99"],
        ["forget", "99"],
        ["feedback", "99", "cited"],
        ["update", "99", "--content", "x"],
        ["subtree", "99"],
        ["promote", "99", "L1"],
        ["remember", "x", "--parent-id", "99"],
    ],
)
def test_unknown_ids_are_not_found(store: Path, argv: list[str]) -> None:
    code, text = run(store, *argv, "--json")
    assert code == wire.EXIT_NOT_FOUND, argv
    assert json.loads(text)["error"]["code"] == "unknown_memory"


@pytest.mark.slow
def test_errors_from_the_console_script(store: Path, tmp_path: Path) -> None:
    done = subprocess.run([SCRIPT, "explain", "7", "--root", str(store)], capture_output=True, text=True)
    assert (done.returncode, done.stdout, done.stderr) == (3, "", "aircher-mem explain: no memory 7\n")
    done = subprocess.run([SCRIPT, "forget", "--root", str(store), "1", "--text", "x"], capture_output=True, text=True)
    assert done.returncode == 2 and "forget takes one of a memory id, text= or session_id=" in done.stderr
    bare = tmp_path / "bare"
    bare.mkdir()
    done = subprocess.run([SCRIPT, "memories", "--root", str(bare)], capture_output=True, text=True)
    assert done.returncode == 3 and "no aircher-mem store" in done.stderr and "Traceback" not in done.stderr


# -- serve, hooks and hook hand over to their modules ------------------------------------------


def fake_module(monkeypatch: pytest.MonkeyPatch, name: str, **functions: Any) -> None:
    module = types.ModuleType(f"aircher_mem.interfaces.{name}")
    for key, value in functions.items():
        setattr(module, key, value)
    monkeypatch.setitem(sys.modules, module.__name__, module)


def test_serve_hands_root_host_port_idle_exit_and_yields_to_the_http_module(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[tuple[Any, ...]] = []

    def serve(root: Path, *, host: str, port: int, idle_exit_seconds: float, yields: bool) -> None:
        calls.append((root, host, port, idle_exit_seconds, yields))

    fake_module(monkeypatch, "http", serve=serve)
    assert main(["serve", "--root", str(store), "--port", "0"]) == 0
    assert main(["serve", "--root", str(store), "--host", "127.0.0.2", "--port", "9000"]) == 0
    assert main(["serve", "--root", str(store), "--port", "0", "--idle-exit-seconds", "1.5"]) == 0
    assert main(["serve", "--root", str(store), "--port", "0", "--yields"]) == 0
    assert calls == [
        (store, "127.0.0.1", 0, 0.0, False),
        (store, "127.0.0.2", 9000, 0.0, False),
        (store, "127.0.0.1", 0, 1.5, False),
        (store, "127.0.0.1", 0, 0.0, True),
    ]
    monkeypatch.chdir(store / ".aircher")  # the store is found upward
    assert main(["serve"]) == 0 and calls[-1] == (store, "127.0.0.1", 8787, 0.0, False)
    assert main(["serve", "--port", "70000"]) == wire.EXIT_USAGE
    assert main(["serve", "--idle-exit-seconds", "-1"]) == wire.EXIT_USAGE


def test_hooks_install_and_uninstall_print_the_summary(
    store: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    calls: list[tuple[Any, ...]] = []

    def install(root: Path, *, scope: str = "project", settings: Path | None = None) -> dict[str, Any]:
        calls.append(("install", root, scope, settings))
        return {"settings": "/x/settings.json", "added": ["SessionStart", "PostToolUse"]}

    def uninstall(root: Path, *, scope: str = "project", settings: Path | None = None) -> dict[str, Any]:
        calls.append(("uninstall", root, scope, settings))
        return {"settings": "/x/settings.json", "removed": 2}

    fake_module(monkeypatch, "hooks", install=install, uninstall=uninstall)
    out = io.StringIO()
    assert main(["hooks", "install", "--root", str(store)], stdout=out) == 0
    assert out.getvalue() == 'settings: /x/settings.json\nadded: ["SessionStart","PostToolUse"]\n'
    out = io.StringIO()
    assert (
        main(
            ["hooks", "uninstall", "--scope", "user", "--settings", "s.json", "--json", "--root", str(store)],
            stdout=out,
        )
        == 0
    )
    assert json.loads(out.getvalue()) == {"settings": "/x/settings.json", "removed": 2}
    assert main(["hooks", "install", "--scope", "project", "--root", str(store)], stdout=io.StringIO()) == 0
    assert calls == [
        ("install", store, "project", None),
        ("uninstall", store, "user", Path("s.json")),
        ("install", store, "project", None),
    ]
    assert main(["hooks", "install", "--scope", "team"]) == wire.EXIT_USAGE
    assert main(["hooks", "reinstall"]) == wire.EXIT_USAGE


def test_hook_reads_the_event_on_stdin_and_prints_what_the_hook_prints(
    store: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    seen: list[tuple[Any, ...]] = []

    def run_hook(event: str, payload: str, *, root: Path | None) -> tuple[str, int]:
        seen.append((event, payload, root))
        if event == "Broken":
            raise am.InvalidInputError("the payload is not JSON")
        return "context to inject\n", 0

    from aircher_mem.interfaces import hooks

    fake_module(
        monkeypatch,
        "hooks",
        run_hook=run_hook,
        input_policy=hooks.input_policy,
        read_payload=hooks.read_payload,
        HookInputError=hooks.HookInputError,
    )
    monkeypatch.setattr(sys, "stdin", io.StringIO('{"hook_event_name": "SessionStart"}'))
    out = io.StringIO()
    assert main(["hook", "SessionStart"], stdout=out) == 0
    assert out.getvalue() == "context to inject\n"
    assert seen == [("SessionStart", '{"hook_event_name": "SessionStart"}', None)]
    monkeypatch.setattr(sys, "stdin", io.StringIO("{"))
    # a failure never blocks the agent: 0 (Claude Code blocks the action on 2), a line on stderr
    assert main(["hook", "Broken", "--root", str(store)], stdout=io.StringIO()) == wire.EXIT_OK
    assert seen[-1] == ("Broken", "{", store)
    assert "aircher-mem hook Broken: the payload is not JSON" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "module", "message"),
    [
        (["serve"], "http", "aircher-mem serve: the HTTP server is not available in this installation"),
        (["hooks", "install"], "hooks", "aircher-mem hooks: the Claude Code hooks module is not available"),
        (["hook", "Stop"], "hooks", "aircher-mem hook: the Claude Code hooks module is not available"),
    ],
)
def test_a_missing_module_is_one_line_and_an_internal_error(
    store: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    module: str,
    message: str,
) -> None:
    monkeypatch.setitem(sys.modules, f"aircher_mem.interfaces.{module}", None)  # import fails
    monkeypatch.setattr(sys, "stdin", io.StringIO("{}"))
    assert main([*argv, "--root", str(store)], stdout=io.StringIO()) == wire.EXIT_INTERNAL
    err = capsys.readouterr().err
    assert err.startswith(message) and err.count("\n") == 1
