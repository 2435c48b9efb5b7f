"""How code search ranks: word forms, files no channel found, code that is not the
product (tests, benchmarks, examples, docs, vendored code), files found by their
name alone. Each on a small synthetic project, with exact rankings."""

from __future__ import annotations

import tempfile
from pathlib import Path

import aircher_mem as am
import pytest
from aircher_mem.engine import RetrievalPolicy
from conftest import write_files
from hypothesis import given, settings
from hypothesis import strategies as st

PROTOCOL = {
    "pkg/reader.py": '''"""Reading from the server."""


def parse_reply(data):
    """Parse one reply of the server."""
    return data
''',
    "pkg/writer.py": '''"""Writing to the server."""


def write_command(args):
    """Write a command to the server."""
    return args
''',
}

NOTES = {
    "pkg/notes.py": '''"""Notes."""


def parsed_header(data):
    return data


def parse_header(data):
    return data
''',
}


def _files(memory: am.Memory, text: str, k: int = 10) -> list[str]:
    return [h.path for h in memory.search_code(text, k=k, level="file").hits]


def test_a_query_meets_other_forms_of_its_words(tmp_path: Path) -> None:
    with am.Memory.open(write_files(tmp_path / "p", {**PROTOCOL, **NOTES})) as m:
        m.index()
        # "replies" meets `reply`, "parsed" meets `parse`.
        assert _files(m, "how are replies handled", k=1) == ["pkg/reader.py"]
        # The exact form is the stronger match: "parsed" before "parse".
        found = m.search_code("parsed header", k=2)
        assert [h.name for h in found.hits] == ["parsed_header", "parse_header"]
        assert [h.matched for h in found.hits] == [["parsed", "header"], ["header", "parse"]]
        assert found.hits[0].score > found.hits[1].score
        # With the forms off, only the exact words count.
        exact = am.Policy(retrieval=RetrievalPolicy(word_forms_weight=0.0))
        with am.Memory.open(m.root, policy=exact) as plain:
            assert plain.search_code("how are replies handled", k=3).hits == []


def test_every_file_is_ranked_at_file_level(tmp_path: Path) -> None:
    with am.Memory.open(write_files(tmp_path / "p", {**PROTOCOL, **NOTES})) as m:
        m.index()
        found = m.search_code("write a command", k=10, level="file")
        # The channels' files, then the files the lexical index matches, then the rest
        # by path, each of those with score 0.
        assert [h.path for h in found.hits] == ["pkg/writer.py", "pkg/notes.py", "pkg/reader.py"]
        assert [h.score > 0 for h in found.hits] == [True, False, False]
        assert found.hits[2].channels == [] and found.hits[2].matched == []
        # A text nothing matches still finds nothing, and says why.
        assert m.search_code("quaternion slerp", k=10, level="file").hits == []


_WORDS = ("parse", "header", "email", "retry", "token", "cache", "route", "tree")


def _source(words: list[int]) -> str:
    body = "".join(f"def {_WORDS[w % len(_WORDS)]}_{i}(x):\n    return x\n\n" for i, w in enumerate(words))
    return '"""A module."""\n\n' + body


@settings(max_examples=12, deadline=None)
@given(
    files=st.lists(st.lists(st.integers(0, 7), max_size=4), min_size=1, max_size=12),
    query=st.lists(st.integers(0, 7), min_size=1, max_size=3),
    extra=st.integers(0, 3),
)
def test_every_file_appears_exactly_once_when_k_covers_the_project(
    files: list[list[int]], query: list[int], extra: int
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        tree = {f"pkg/m{i}.py": _source(words) for i, words in enumerate(files)}
        tree["pkg/m0.py"] += "def route_tree(x):\n    return x\n"
        with am.Memory.open(write_files(Path(tmp), tree)) as m:
            m.index()
            text = " ".join(_WORDS[q] for q in query) + " route"
            paths = _files(m, text, k=len(tree) + extra)
    assert sorted(paths) == sorted(tree)


PRODUCT = {
    "src/conf/loader.py": '''"""Loading the configuration."""


def load_config(path):
    """Load the configuration file."""
    return path
''',
    "benchmarks/bench_loader.py": '''"""Timing the configuration loader."""


def load_config_many(path):
    """Load the configuration file many times."""
    return path
''',
    "examples/load_config_demo.py": '''"""Load a configuration."""


def load_config_demo(path):
    """Load the configuration file and print it."""
    return path
''',
    "docs/conf_guide.py": '''"""Load the configuration."""


def load_config_doc(path):
    """Load the configuration file, documented."""
    return path
''',
    "third/yaml_config.py": '''"""Load configuration files."""


def load_config_file(path):
    """Load the configuration file."""
    return path
''',
    "checks/config_checks.py": '''"""Load configuration."""


def check_load_config(path):
    """Load the configuration file, checked."""
    return path
''',
    "pyproject.toml": '[project]\nname = "conf"\n\n[tool.pytest.ini_options]\ntestpaths = ["checks"]\n',
    ".gitattributes": "third/** linguist-vendored\n*.min.js linguist-vendored\n",
}


def test_code_that_is_not_the_product_is_scored_down_unless_the_query_names_it(tmp_path: Path) -> None:
    from aircher_mem.retrieval import declared_kinds

    root = write_files(tmp_path / "p", PRODUCT)
    assert declared_kinds(root) == [("checks", "test"), ("third", "vendor")]
    with am.Memory.open(root) as m:
        m.index()
        found = m.search_code("load the configuration file", k=6, level="file")
        assert [(h.path, h.test) for h in found.hits] == [
            ("src/conf/loader.py", False),
            ("third/yaml_config.py", False),
            ("examples/load_config_demo.py", False),
            ("checks/config_checks.py", True),
            ("docs/conf_guide.py", False),
            ("benchmarks/bench_loader.py", False),
        ]
        # A query that names a kind lifts its factor.
        assert _files(m, "benchmark: load the configuration file", k=1) == ["benchmarks/bench_loader.py"]
        assert _files(m, "example that loads the configuration file", k=1) == ["examples/load_config_demo.py"]
    # With every factor at 1, nothing is scored down.
    flat = RetrievalPolicy(test_factor=1.0, bench_factor=1.0, example_factor=1.0, docs_factor=1.0, vendor_factor=1.0)
    with am.Memory.open(root, policy=am.Policy(retrieval=flat)) as plain:
        scores = {h.path: h.score for h in plain.search_code("load the configuration file", k=6, level="file").hits}
    with am.Memory.open(root) as m:
        scaled = {h.path: h.score for h in m.search_code("load the configuration file", k=6, level="file").hits}
    for path in scaled:
        factor = 1.0 if path == "src/conf/loader.py" else 0.5
        assert abs(scaled[path] - scores[path] * factor) < 1e-9, path


WORKSPACES = {
    "package.json": '{"name": "root", "private": true, "workspaces": ["packages/*", "tools/perf", "!packages/skip"]}',
    "packages/core/package.json": '{"name": "@zod/core"}',
    "packages/speed/package.json": '{"name": "@zod/benchmarks"}',
    "packages/site/package.json": '{"name": "zod-docs"}',
    "packages/testing-kit/package.json": '{"name": "@testing/kit"}',
    "packages/broken/package.json": "{not json",
    "tools/perf/package.json": '{"name": "perf-samples"}',
    "pnpm-workspace.yaml": "packages:\n  - 'apps/*'   # the apps\nother:\n  - 'x/*'\n",
    "apps/web/package.json": '{"name": "web-example"}',
    "x/y/package.json": '{"name": "y-tests"}',
    "Cargo.toml": '[workspace]\nmembers = ["crates/*", "fuzz", "../outside"]\n',
    "crates/engine/Cargo.toml": '[package]\nname = "engine"\n',
    "crates/engine-bench/Cargo.toml": '[package]\nname = "engine-bench"\n',
    "fuzz/Cargo.toml": '[package]\nname = "engine-fuzz-tests"\n',
    ".gitattributes": "dist/bundle.js linguist-generated=true\n",
}


def test_workspace_members_named_for_a_kind_are_that_kind(tmp_path: Path) -> None:
    from aircher_mem.retrieval import declared_kinds

    root = write_files(tmp_path / "p", WORKSPACES)
    # A member counts by its package name's last word: "@testing/kit" is product
    # code; "x/*" is not under `packages:`; "../outside" is outside the project.
    assert declared_kinds(root) == [
        ("apps/web", "example"),
        ("crates/engine-bench", "bench"),
        ("dist/bundle.js", "vendor"),
        ("fuzz", "test"),
        ("packages/site", "docs"),
        ("packages/speed", "bench"),
        ("tools/perf", "example"),
    ]


@pytest.mark.parametrize(
    ("files", "declared"),
    [
        ({"tox.ini": "[tox]\nenvlist = py\n\n[pytest]\ntestpaths = it unit/\n"}, ["it", "unit"]),
        ({"setup.cfg": "[metadata]\nname = x\n[tool:pytest]\ntestpaths =\n    t1\n    ./t2\n"}, ["t1", "t2"]),
        ({"pytest.ini": "[pytest]\ntestpaths = checks/**\n", "setup.cfg": "[metadata\nbroken"}, ["checks"]),
        ({"setup.cfg": "[flake8]\nmax-line-length = 99\n", "tox.ini": "[tox]\n"}, []),
        ({"tox.ini": "[pytest\ntestpaths = no\n"}, []),
        ({"tox.ini": "[pytest]\ntestpaths = a\n[pytest]\ntestpaths = b\n"}, []),
    ],
)
def test_pytest_testpaths_come_from_each_ini_file_that_has_the_section(
    tmp_path: Path, files: dict[str, str], declared: list[str]
) -> None:
    """``testpaths`` of ``[pytest]`` (pytest.ini, tox.ini) and ``[tool:pytest]``
    (setup.cfg); a file without the section is not parsed, one that does not parse
    (a section given twice) gives nothing."""
    from aircher_mem.retrieval import declared_kinds

    root = write_files(tmp_path / "p", {"a.py": "x = 1\n", **files})
    assert declared_kinds(root) == [(path, "test") for path in declared]


def test_path_kind_reads_folder_and_file_names() -> None:
    from aircher_mem import _core

    assert [
        _core.path_kind(p)
        for p in ("src/a.py", "tests/a.py", "pkg/bench_io.py", "docs/x.md", "third_party/z.c", "demos/d.js")
    ] == [None, "test", "bench", "docs", "vendor", "example"]


FILLER = {
    "src/ignore/gitignore.py": '''"""Matching paths against ignore files."""


def gitignore_rules(root):
    """Read the rules of a directory."""
    return root
''',
    "src/ignore/walk.py": '''"""Walking a directory tree."""


def parent_key(path):
    """The key of the parent; errors are handled by the caller and handled once."""
    return path
''',
}


def test_a_filler_word_the_project_writes_in_prose_only_weighs_less(tmp_path: Path) -> None:
    root = write_files(tmp_path / "p", FILLER)
    plain = am.Policy(retrieval=RetrievalPolicy(filler_weight=1.0))
    with am.Memory.open(root, policy=plain) as m:
        m.index()
        found = m.search_code("where is gitignore handled", k=2)
        assert [h.name for h in found.hits] == ["parent_key", "gitignore_rules"]
    # By default "handled" weighs filler_weight (0.25): the definition that names
    # gitignore wins; prose_only_weight does not reach a filler word.
    for policy in (am.Policy(), am.Policy(retrieval=RetrievalPolicy(prose_only_weight=1.0))):
        with am.Memory.open(root, policy=policy) as m:
            found = m.search_code("where is gitignore handled", k=2)
            assert [h.name for h in found.hits] == ["gitignore_rules", "parent_key"]


def test_a_word_the_project_writes_in_prose_only_weighs_prose_only(tmp_path: Path) -> None:
    files = {path: text.replace("handled", "cleaned") for path, text in FILLER.items()}
    root = write_files(tmp_path / "p", files)
    with am.Memory.open(root) as m:
        m.index()
        found = m.search_code("where is gitignore cleaned", k=2)
        assert [h.name for h in found.hits] == ["parent_key", "gitignore_rules"]
    weighed = am.Policy(retrieval=RetrievalPolicy(prose_only_weight=0.25))
    with am.Memory.open(root, policy=weighed) as m:
        found = m.search_code("where is gitignore cleaned", k=2)
        assert [h.name for h in found.hits] == ["gitignore_rules", "parent_key"]


NEIGHBOURS = {
    "lib/legend_handler.py": '"""Handlers that draw the entries."""\n\n\nclass HandlerBase:\n    """Draw one entry."""\n\n    def draw(self, artist):\n        return artist\n',
    "lib/box.py": '"""Boxes."""\n\n\nclass Box:\n    """A box of entries."""\n\n    def place(self, where):\n        """Move the legend box to the best location."""\n        return where\n',
}


def test_a_neighbours_file_name_does_not_win_alone(tmp_path: Path) -> None:
    with am.Memory.open(write_files(tmp_path / "p", NEIGHBOURS)) as m:
        m.index()
        for query in ("legend location", "where is the legend placed"):
            found = m.search_code(query, k=2, level="file")
            assert [(h.path, h.matched[:1]) for h in found.hits] == [
                ("lib/box.py", ["legend"]),
                ("lib/legend_handler.py", ["legend"]),
            ], query
            # The name's match is worth less than half the content's.
            assert found.hits[1].score < found.hits[0].score / 2, query


def test_a_generated_bundle_is_scored_as_vendored_code(tmp_path: Path) -> None:
    from aircher_mem.retrieval import generated_bundles

    source = (
        "function parseReferrer(request) {\n  // Work out the referrer of a request.\n  return request.referrer;\n}\n"
    )
    prelude = "var __commonJS = (cb, mod) => function __require() {\n  return mod;\n};\n"
    body = "var require_util = __commonJS({\n  'lib/util.js'(exports) {\n" + source + "  }\n});\n"
    padding = "".join(f"function unrelated{n}() {{ return {n}; }}\n" for n in range(3000))
    root = write_files(
        tmp_path / "p",
        {
            "lib/util.js": source,
            "undici-fetch.js": prelude + body + padding,
            "small.js": prelude + body,
            "lib/other.js": "function other() { return 1; }\n",
        },
    )
    (root / "linked.js").symlink_to(root / "undici-fetch.js")
    with am.Memory.open(root) as m:
        m.index()
        assert generated_bundles(m.graph) == ["undici-fetch.js"]
        found = m.search_code("how is the referrer of a request worked out", k=2, level="file")
        assert [h.path for h in found.hits] == ["lib/util.js", "small.js"]
        scaled = {h.path: h.score for h in m.search_code("referrer of a request", k=4, level="file").hits}
    flat = am.Policy(retrieval=RetrievalPolicy(vendor_factor=1.0))
    with am.Memory.open(root, policy=flat) as m:
        plain = {h.path: h.score for h in m.search_code("referrer of a request", k=4, level="file").hits}
    assert abs(scaled["undici-fetch.js"] - plain["undici-fetch.js"] * 0.5) < 1e-9
    assert scaled["small.js"] == plain["small.js"] > 0
