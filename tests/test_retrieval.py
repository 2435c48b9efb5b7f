"""Code search: the hybrid engine behind ``Memory.search_code``, ``relevant_code``
and ``prepare_context``, through the service and the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import aircher_mem as am
import aircher_mem.graph
import pytest
from aircher_mem.engine import KnowledgeGraph, RetrievalPolicy, find_relevant_to_query
from conftest import write_files

SCRIPT = str(Path(sys.executable).with_name("aircher-mem"))  # the installed console script

# A small package in the shape of click: the question's answer lives in a file whose
# definitions share no name with the question's words.
CLI_PROJECT = {
    "src/clik/__init__.py": '"""A command line toolkit."""\n',
    "src/clik/shell_completion.py": '''"""Shell completion for bash, zsh and fish."""

class ShellComplete:
    """Base class for providing shell completion support."""

    def source(self):
        """Produce the shell script that defines the completion function."""
        return self.name


class BashComplete(ShellComplete):
    """Shell completion for Bash."""

    name = "bash"


class ZshComplete(ShellComplete):
    """Shell completion for Zsh."""

    name = "zsh"
''',
    "src/clik/core.py": '''"""Commands, groups and contexts."""

from clik.shell_completion import BashComplete


class Command:
    """A command the user can invoke from the terminal."""

    def invoke(self, ctx):
        """Run the command's callback with the parsed parameters."""
        return ctx

    def main(self):
        return BashComplete().source()


def echo(message):
    """Print a message to standard output."""
    print(message)
''',
    "src/clik/termui.py": '''"""Prompts and progress bars for the terminal."""


def prompt(text):
    """Prompt the user for input in the terminal."""
    return input(text)


def progressbar(items):
    """Show a progress bar while iterating over items."""
    return iter(items)
''',
    "tests/test_completion.py": '''from clik.shell_completion import BashComplete


def test_bash_and_zsh_shell_completion():
    """Shell completion works for bash and zsh."""
    assert BashComplete().source() == "bash"
''',
}


@pytest.fixture
def cli_project(tmp_path: Path) -> Path:
    return write_files(tmp_path / "clik", CLI_PROJECT)


@pytest.fixture
def memory(cli_project: Path):
    with am.Memory.open(cli_project) as m:
        m.index()
        yield m


def test_graph_verbs_leave_the_lexical_index_unread_and_searches_need_no_load(
    cli_project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with am.Memory.open(cli_project) as m:
        m.index()
    loads: list[str] = []
    load = KnowledgeGraph.load

    def spy(path: Path, **kwargs: Any) -> KnowledgeGraph:
        loads.append(kwargs["read_index"])
        return load(path, **kwargs)

    monkeypatch.setattr(aircher_mem.graph.KnowledgeGraph, "load", spy)
    with am.Memory.open(cli_project) as m:
        m.callers("main")
        m.find_symbol("main")
        assert loads == []  # both answered from the saved graph in place
        assert not m.graph.lexical_read  # loaded when asked for: its lexical index read when first needed
        assert m.search_code("shell completion", k=3).hits
        assert m.graph.lexical_read
    assert loads == ["when_needed"]
    for verb in (
        lambda m: m.search_code("shell completion", k=3).hits,
        lambda m: m.relevant_code("shell completion", max_tokens=500).snippets,
    ):
        loads.clear()
        with am.Memory.open(cli_project) as m:
            assert verb(m)  # answered from the saved graph, searched in place
        assert loads == []
    loads.clear()
    with am.Memory.open(cli_project) as m:
        assert "shell_completion" in str(m.window.prepare_context("fix shell completion"))
    assert loads == []  # the window's code and the assembly's prediction in place


def test_a_question_in_plain_words_finds_the_file_that_answers_it(memory: am.Memory) -> None:
    question = "how does shell completion work for bash and zsh?"
    found = memory.search_code(question, k=3, level="file")
    assert [h.path for h in found.hits] == [
        "src/clik/shell_completion.py",
        "tests/test_completion.py",
        "src/clik/core.py",
    ]
    top = found.hits[0]
    assert top.name is None and top.kind == "file" and top.code is None and not top.test
    # "completion" also meets `complete` (`ShellComplete`), another form of it.
    assert top.matched == ["shell", "completion", "bash", "zsh", "complete"]
    assert [c.channel for c in top.channels] == ["lexical", "graph"]
    assert [v.name for v in top.via] == ["BashComplete", "ZshComplete", "ShellComplete"]
    assert found.hits[1].test
    assert found.reason == "" and found.level == "file" and found.channels == ["lexical", "graph"]
    # The test file says the question's very words; the policy's factor halves its score.
    with am.Memory.open(memory.root, policy=am.Policy(retrieval=RetrievalPolicy(test_factor=1.0))) as plain:
        unscaled = {h.path: h.score for h in plain.search_code(question, k=3, level="file").hits}
    assert found.hits[1].score == pytest.approx(unscaled["tests/test_completion.py"] * 0.5)
    assert top.score == pytest.approx(unscaled[top.path])


def test_definitions_carry_their_code_and_explanation(memory: am.Memory) -> None:
    found = memory.search_code("prompt the user for input", k=2)
    top = found.hits[0]
    assert (top.path, top.name, top.kind, top.line, top.end_line) == ("src/clik/termui.py", "prompt", "function", 4, 6)
    assert top.code == 'def prompt(text):\n    """Prompt the user for input in the terminal."""\n    return input(text)'
    assert top.matched == ["prompt", "user", "input"]
    lexical = next(c for c in top.channels if c.channel == "lexical")
    assert lexical.normalized == 1.0 and lexical.weight == memory.policy.retrieval.lexical_weight
    assert memory.search_code("prompt the user for input", k=1, code=False).hits[0].code is None


def test_a_traceback_path_seeds_its_file(memory: am.Memory, cli_project: Path) -> None:
    trace = (
        "Traceback (most recent call last):\n"
        '  File "/home/someone/.venv/lib/python3.11/site-packages/clik/termui.py", line 5, in prompt\n'
        "EOFError"
    )
    found = memory.search_code(trace, k=3, level="file")
    assert found.mentioned == ["src/clik/termui.py"]
    assert found.hits[0].path == "src/clik/termui.py"
    assert memory.search_code("see clik.core.Command.invoke", k=1, level="file").mentioned == ["src/clik/core.py"]


def test_an_empty_result_says_why(memory: am.Memory, cli_project: Path) -> None:
    nothing = memory.search_code("is it the ?")
    assert nothing.hits == []
    assert nothing.reason == "the text has no searchable words (only stop words, symbols or 1-letter words)"
    unknown = memory.search_code("quaternion slerp")
    assert unknown.hits == []
    assert unknown.reason == "no indexed definition, file name or docstring contains any of: quaternion, slerp"
    with pytest.raises(am.InvalidInputError, match="level"):
        memory.search_code("x", level="module")  # type: ignore[arg-type]
    with pytest.raises(am.InvalidInputError, match="k must be"):
        memory.search_code("prompt", k=0)
    with pytest.raises(am.InvalidInputError, match="text must be"):
        memory.search_code("   ")
    with am.Memory.open(cli_project / "src") as fresh, pytest.raises(am.NotIndexedError):
        fresh.search_code("prompt")


def test_the_index_follows_edits_and_is_saved_beside_the_graph(memory: am.Memory, cli_project: Path) -> None:
    assert memory.search_code("quaternion slerp").hits == []
    (cli_project / "src/clik/geometry.py").write_text(
        'def slerp(a, b, t):\n    """Interpolate two quaternions."""\n    return a\n'
    )
    memory.index()
    hit = memory.search_code("quaternion slerp", k=1).hits[0]
    assert (hit.path, hit.name) == ("src/clik/geometry.py", "slerp")
    (cli_project / "src/clik/geometry.py").unlink()
    memory.index()
    assert memory.search_code("quaternion slerp").hits == []
    store = cli_project / ".aircher"
    assert (store / "graph.lexical").is_file()
    assert (store / "graph.lexical").stat().st_mode & 0o077 == 0
    before = memory.search_code("progress bar over items", k=5, level="file")
    # Loaded without re-indexing; without the lexical file it is rebuilt from disk.
    with am.Memory.open(cli_project) as again:
        assert again.search_code("progress bar over items", k=5, level="file") == before
    # Of another format version (an older one here): not read, rebuilt from disk.
    saved = bytearray((store / "graph.lexical").read_bytes())
    saved[8:12] = (3).to_bytes(4, "little")
    (store / "graph.lexical").write_bytes(bytes(saved))
    with am.Memory.open(cli_project) as again:
        assert again.search_code("progress bar over items", k=5, level="file") == before
    (store / "graph.lexical").write_bytes(b"garbage")
    with am.Memory.open(cli_project) as again:
        assert again.search_code("progress bar over items", k=5, level="file") == before
    (store / "graph.lexical").unlink()
    with am.Memory.open(cli_project) as again:
        assert again.search_code("progress bar over items", k=5, level="file") == before


def test_focus_files_pull_their_neighbourhood(memory: am.Memory) -> None:
    plain = memory.search_code("source", k=5)
    focused = memory.search_code("source", k=5, focus_files=["src/clik/core.py"])
    assert plain.hits[0].name == "source"
    graph_of = {h.name: next((c.raw for c in h.channels if c.channel == "graph"), 0.0) for h in focused.hits}
    plain_graph = {h.name: next((c.raw for c in h.channels if c.channel == "graph"), 0.0) for h in plain.hits}
    assert graph_of.get("Command", 0.0) > plain_graph.get("Command", 0.0)


def test_relevant_code_and_prepare_context_use_the_search(memory: am.Memory) -> None:
    code = memory.relevant_code("prompt the user for input", max_tokens=200)
    assert code.snippets[0].file_path == "src/clik/termui.py"
    assert code.snippets[0].line_range == (4, 6)
    assert code.snippets[0].relevance == 1.0
    messages = memory.window.prepare_context("how does shell completion work for zsh?")
    shown = "\n".join(m["content"] for m in messages)
    assert "class ZshComplete" in shown


def test_every_weight_comes_from_the_policy(cli_project: Path) -> None:
    policy = am.Policy()
    lexical_only = am.Policy(retrieval=RetrievalPolicy(graph_weight=0.0, test_factor=1.0))
    with am.Memory.open(cli_project, policy=policy) as m:
        m.index()
        both = m.search_code("bash and zsh shell completion", k=5, level="file")
    with am.Memory.open(cli_project, policy=lexical_only) as m:
        alone = m.search_code("bash and zsh shell completion", k=5, level="file")
    assert [(h.path, h.score) for h in alone.hits] != [(h.path, h.score) for h in both.hits]
    assert all(next(c for c in h.channels if c.channel == "graph").weight == 0.0 for h in alone.hits if h.channels)
    with pytest.raises(am.PolicyError, match=r"retrieval\.normalization must be one of minmax, zscore"):
        RetrievalPolicy(normalization="softmax")


@pytest.mark.slow
def test_cli_search(cli_project: Path) -> None:
    root = ["--root", str(cli_project)]
    subprocess.run([SCRIPT, "index", str(cli_project), "--quiet"], check=True, capture_output=True, timeout=120)
    done = subprocess.run(
        [SCRIPT, "search-code", "prompt the user for input", "-k", "1", *root],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(" 1. function prompt  src/clik/termui.py:4-6  score ")
    assert "def prompt(text):" in done.stdout
    files = subprocess.run(
        [SCRIPT, "search-code", "shell completion for zsh", "--level", "file", "--json", *root],
        capture_output=True,
        text=True,
        timeout=120,
    )
    hits = json.loads(files.stdout)["hits"]
    assert hits[0]["path"] == "src/clik/shell_completion.py" and hits[0]["name"] is None
    empty = subprocess.run([SCRIPT, "search-code", "the of", *root], capture_output=True, text=True, timeout=120)
    assert empty.returncode == 0
    assert empty.stdout.startswith("nothing found for 'the of': the text has no searchable words")


@pytest.mark.slow
@pytest.mark.dense
def test_the_dense_channel_embeds_the_code_and_follows_edits(cli_project: Path) -> None:
    from aircher_mem.embeddings import available

    ok, why = available()
    if not ok:
        pytest.skip(why)
    on = am.Policy(retrieval=RetrievalPolicy(dense="on"))
    with am.Memory.open(cli_project, policy=on) as m:
        report = m.index()
        # 11 functions and classes, 5 files (variables are not embedded).
        assert report.dense == "dense channel: 16 documents embedded, 0 vectors dropped, 16 in all"
        assert (cli_project / ".aircher/graph.vectors").stat().st_mode & 0o077 == 0
        found = m.search_code("ask someone to type an answer", k=3)
        assert found.channels == ["lexical", "graph", "dense"] and found.notes == []
        top = found.hits[0]
        assert (top.path, top.name) == ("src/clik/termui.py", "prompt")
        assert [c.channel for c in top.channels] == ["dense", "graph"] or "dense" in [c.channel for c in top.channels]
        path = cli_project / "src/clik/termui.py"
        path.write_text(path.read_text().replace("Prompt the user for input", "Ask for a line of input"))
        assert m.index().dense == "dense channel: 1 documents embedded, 1 vectors dropped, 16 in all"
    with am.Memory.open(cli_project, policy=on) as again:  # loaded, not embedded again
        assert again.index().dense == "dense channel: 0 documents embedded, 0 vectors dropped, 16 in all"
    off = am.Policy(retrieval=RetrievalPolicy(dense="off"))
    with am.Memory.open(cli_project, policy=off) as m:
        assert m.search_code("ask someone to type an answer", k=3).channels == ["lexical", "graph"]


def test_without_the_extra_search_says_the_dense_channel_is_off(memory: am.Memory, cli_project: Path) -> None:
    found = memory.search_code("prompt the user", k=1)
    assert found.notes == [] and found.channels == ["lexical", "graph"]  # off by default
    on = am.Policy(retrieval=RetrievalPolicy(dense="on"))
    with am.Memory.open(cli_project, policy=on) as m:
        found = m.search_code("prompt the user", k=1)
        assert found.notes == ["dense channel off: dense channel disabled in tests"]
        assert found.channels == ["lexical", "graph"]
        assert m.index().dense == "dense channel off: dense channel disabled in tests"


def test_hostile_queries(memory: am.Memory) -> None:
    # NULs, control characters, huge texts and paths outside the project.
    assert memory.search_code("prompt\x00the\x01user", k=1).hits[0].name == "prompt"
    huge = " ".join(f"name{i} prompt" for i in range(100_000))[:999_999]
    assert memory.search_code(huge, k=1).hits[0].name == "prompt"  # the first 512 terms are searched
    with pytest.raises(am.InvalidInputError, match="text"):
        memory.search_code("prompt \ud800")
    with pytest.raises(am.InvalidInputError):
        memory.search_code("prompt", focus_files=["../../etc/passwd"])
    # Paths that are not the project's files are not mentions (and nothing is read).
    trace = 'File "/etc/passwd", line 1\nFile "../../outside/termui.py", line 2'
    assert memory.search_code(trace, k=3).mentioned == []


class _Counter:
    """Counts one snippet (the class ShellComplete) as 1 token, every other as a million."""

    def count(self, text: str) -> int:
        return 1 if text.startswith("class ShellComplete:") else 1_000_000


@pytest.mark.parametrize(
    ("attempts", "taken"),
    [(0, []), (2, []), (3, ["src/clik/shell_completion.py"]), (8, ["src/clik/shell_completion.py"])],
)
def test_relevant_code_tries_fill_attempts_more_after_a_miss(
    memory: am.Memory, attempts: int, taken: list[str]
) -> None:
    # Ranked: BashComplete, ZshComplete, the test function, then ShellComplete.
    policy = am.Policy(retrieval=RetrievalPolicy(fill_attempts=attempts, word_forms_weight=0.0))
    found = find_relevant_to_query(
        memory.graph,
        "shell completion bash zsh",
        max_tokens=10,
        tokens=_Counter(),
        policy=policy,  # type: ignore[arg-type]
    )
    assert [c.file_path for c in found] == taken


def test_a_huge_text_that_matches_nothing_gets_a_short_reason(memory: am.Memory) -> None:
    words = " ".join(f"zq{i:06d}x" for i in range(90_000))  # 90K distinct words, none indexed
    found = memory.search_code(words, k=3)
    assert found.hits == []
    assert found.reason.startswith("no indexed definition, file name or docstring contains any of: zq000000x")
    listed = found.reason.split(": ", 1)[1].split(", ")
    assert len(listed) == 21 and listed[-1] == "..."  # the first 20 distinct words
