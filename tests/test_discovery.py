"""Cold start end to end (seed 000's discover_project): the project's type and
commands kept as L0 facts, the domains its code graph suggests (exact, with their
scores and main modules) kept as L1 facts, and with a task hint the files it needs
as L2 facts, skipping what memory knows already."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from aircher_mem import Memory
from aircher_mem._core import KnowledgeGraph
from aircher_mem.longterm import discovery
from aircher_mem.results import SuggestedDomain
from conftest import bench_script, git
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.types import CallToolResult, TextContent

FILES = {
    "pyproject.toml": (
        '[project]\nname = "shop"\nversion = "0.1.0"\ndependencies = ["fastapi>=0.110", "sqlalchemy"]\n\n'
        '[project.optional-dependencies]\ntest = ["pytest"]\n'
    ),
    "src/shop/__init__.py": '"""The shop: a small web store."""\n',
    "src/shop/api/__init__.py": "",
    "src/shop/api/routes.py": (
        '"""HTTP routes of the shop\'s API."""\nfrom shop.db.models import Order\n'
        "from shop.db.session import open_session\nfrom shop import util\n\n\n"
        "def list_orders():\n    with open_session() as s:\n"
        "        return [util.money(o.total) for o in s.query(Order)]\n"
    ),
    "src/shop/db/__init__.py": "",
    "src/shop/db/models.py": 'class Order:\n    total = 0\n\n\nclass Customer:\n    name = ""\n',
    "src/shop/db/session.py": (
        "# Database sessions: one per request.\nfrom shop.db.models import Order\n\n\n"
        "def open_session():\n    return Order\n"
    ),
    "src/shop/util.py": 'def money(cents):\n    return f"{cents / 100:.2f}"\n',
    "tests/test_api.py": (
        "from shop.api.routes import list_orders\n\n\ndef test_list():\n    assert list_orders() is not None\n"
    ),
}

DOMAINS = [
    SuggestedDomain("db", "src/shop/db", 3, 6, ["src/shop/db/models.py", "src/shop/db/session.py"]),
    SuggestedDomain("api", "src/shop/api", 2, 2, ["src/shop/api/routes.py"]),
    SuggestedDomain("util", "src/shop/util.py", 1, 2, ["src/shop/util.py"]),
]


def shop(root: Path) -> Path:
    for name, text in FILES.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_domains_look_through_containers_and_into_the_dominant_package(tmp_path: Path) -> None:
    graph = KnowledgeGraph.build(shop(tmp_path))
    assert discovery.domains(graph, 8) == DOMAINS
    assert discovery.domains(graph, 2) == DOMAINS[:2]
    assert discovery.domain_of("src/shop/db/models.py", DOMAINS) == "db"
    assert discovery.domain_of("src/shop/dbx.py", DOMAINS) is None


def test_a_folder_of_equals_gives_its_folders_as_domains(tmp_path: Path) -> None:
    for folder in ("fs", "net", "mm"):
        for i in range(3):
            (tmp_path / folder).mkdir(exist_ok=True)
            (tmp_path / folder / f"f{i}.c").write_text(f"int {folder}_{i}(void) {{ return {i}; }}\n")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "conf.py").write_text("x = 1\n")  # docs: not a domain
    graph = KnowledgeGraph.build(tmp_path)
    assert [(d.name, d.files, d.score) for d in discovery.domains(graph, 8)] == [
        ("fs", 3, 3),
        ("mm", 3, 3),
        ("net", 3, 3),
    ]


def test_discover_project_keeps_its_facts_once(tmp_path: Path) -> None:
    with Memory.open(shop(tmp_path)) as mem:
        found = mem.discover_project()
        assert (found.project_type, found.frameworks, found.test_runners) == ("python", ["FastAPI"], ["pytest"])
        assert found.types == [{"type": "python", "language": "Python", "file": "pyproject.toml"}]
        assert found.commands == {"test": "pytest"}
        assert found.suggested_domains == ["db", "api", "util"] and found.domains == DOMAINS
        assert [(f.content, f.level, f.action) for f in found.facts] == [
            ("Python project using FastAPI (pyproject.toml)", "L0", "created"),
            ("Python tests run with pytest: `pytest`", "L0", "created"),
            (
                "Domain db (src/shop/db): 3 file(s); main modules src/shop/db/models.py, src/shop/db/session.py",
                "L1",
                "created",
            ),
            ("Domain api (src/shop/api): 2 file(s); main modules src/shop/api/routes.py", "L1", "created"),
            ("Domain util (src/shop/util.py): 1 file(s); main modules src/shop/util.py", "L1", "created"),
        ]
        assert found.facts_created == 5 and found.task_files == [] and found.partial is None
        assert found.discovery_tokens == sum(mem.tokens.count_many([f.content for f in found.facts])) + sum(
            mem.tokens.count_many(found.suggested_domains)
        )
        assert [m.level for m in mem.facts().memories].count("L0") == 2
        assert [m.content for m in mem.facts(level="L1", domain="db").memories] == [found.facts[2].content]
        again = mem.discover_project()
        assert again.facts_created == 0 and {f.action for f in again.facts} == {"skipped"}


def test_a_task_hint_brings_facts_about_its_files_and_skips_known_ones(tmp_path: Path) -> None:
    with Memory.open(shop(tmp_path)) as mem:
        mem.remember("open_session must be closed by the caller", code_ref="src/shop/db/session.py")
        found = mem.discover_project(task_hint="list the orders with their money totals")
        assert found.task_files[:2] == ["src/shop/api/routes.py", "src/shop/util.py"]
        task = {f.content: (f.level, f.domain, f.code_ref) for f in found.facts if f.level == "L2"}
        assert task["src/shop/api/routes.py: HTTP routes of the shop's API"] == ("L2", "api", "src/shop/api/routes.py")
        assert task["src/shop/util.py defines money"] == ("L2", "util", "src/shop/util.py")
        assert not any(c.startswith("src/shop/db/session.py") for c in task)  # known already


def test_in_a_server_a_first_index_runs_in_the_background(tmp_path: Path) -> None:
    with Memory.open(shop(tmp_path)) as mem:
        mem.partial_answers = True  # as aircher-mem serve's memory
        first = mem.discover_project()
        if first.partial is not None:  # answered from the first files' graph
            assert first.partial.total == 8 and first.partial.files < 8
        mem.index()  # waits for the first index, then updates (nothing changed)
        assert not mem.index_progress().running and mem.graph.file_count == 8
        assert mem.discover_project().suggested_domains == ["db", "api", "util"]


# -- seed 000's six tools, end to end over MCP with the SDK's stdio client -----------------

SCRIPT = str(Path(sys.executable).with_name("aircher-mem"))
SEED_TOOLS = {  # seed 000's name -> ours
    "rlm_discover_project": "discover_project",
    "rlm_route_context": "route_context",
    "rlm_extract_facts": "extract_facts",
    "rlm_get_causal_chain": "query_chain",
    "rlm_set_ttl": "set_ttl",
    "rlm_get_stale_facts": "stale",
}


def ok(result: CallToolResult) -> Any:
    assert not result.is_error, result.content
    [block] = result.content
    assert isinstance(block, TextContent)
    return json.loads(block.text)


def test_the_six_project_tools_over_stdio(tmp_path: Path) -> None:
    root = shop(tmp_path / "shop")
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "shop"]):
        git(root, *args)
    with Memory.open(root) as mem:
        mem.index()
    models = root / "src" / "shop" / "db" / "models.py"
    models.write_text(models.read_text() + "\n\nclass Invoice:\n    number = 0\n")

    async def script(s: ClientSession) -> None:
        names = {t.name for t in (await s.list_tools()).tools}
        assert set(SEED_TOOLS.values()) <= names
        found = ok(await s.call_tool("discover_project", {"task_hint": "list the orders"}))
        assert (found["project_type"], found["suggested_domains"]) == ("python", ["db", "api", "util"])
        assert found["facts_created"] >= 5 and found["discovery_tokens"] > 0
        routed = ok(await s.call_tool("route_context", {"query": "where are orders stored in the db?"}))
        assert any("Domain db" in m["content"] for m in routed["memories"])
        extracted = ok(await s.call_tool("extract_facts", {"source": "working"}))
        [invoice] = [c for c in extracted["candidates"] if "Invoice" in c["content"]]
        assert (invoice["action"], invoice["code_ref"]) == ("created", "src/shop/db/models.py#L9-10")
        ok(
            await s.call_tool(
                "record_decision", {"decision": "Store orders in Postgres", "reasons": ["we need transactions"]}
            )
        )
        chain = ok(await s.call_tool("query_chain", {"query": "why did we store orders in Postgres?"}))
        assert "we need transactions" in chain["text"] and chain["mermaid"].startswith("graph TD")
        timed = ok(
            await s.call_tool(
                "set_ttl",
                {"memory_id": invoice["memory_id"], "ttl_seconds": 60, "now": "2020-01-01T00:00:00Z"},
            )
        )
        assert timed["ttl_seconds"] == 60
        stale = ok(await s.call_tool("stale", {}))
        assert [m["id"] for m in stale["memories"]] == [invoice["memory_id"]]

    async def run() -> None:
        params = StdioServerParameters(command=SCRIPT, args=["mcp", "--root", str(root)], cwd=str(root))
        with open(tmp_path / "server-stderr.txt", "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    await script(session)

    anyio.run(run)


def test_the_discovery_bench_measures_a_tree(tmp_path: Path) -> None:
    bench = bench_script("discovery")
    root = shop(tmp_path / "shop")
    (root / "README.md").write_text("# Shop\n\nA small web store.\n")
    out = bench.measure(root, "list the orders", 2)
    assert (out["files"], out["project_type"], out["facts_created"]) == (8, "python", [out["facts_created"][0], 0])
    assert out["facts_created"][0] >= 5 and out["discovery_tokens"] > 0 and out["index_seconds"] is not None
    assert out["baseline_files"] == ["README.md", "pyproject.toml"] and out["baseline_tokens"] > 0
    assert [d[0] for d in out["domains"]] == ["db", "api", "util"]


def test_the_readme_says_what_the_project_is(tmp_path: Path) -> None:
    root = shop(tmp_path)
    (root / "README.md").write_text("# Shop\n\n[![ci](x)](y)\n\nShop is a small web store built on FastAPI. More.\n")
    with Memory.open(root) as mem:
        facts = [(f.content, f.level, f.code_ref) for f in mem.discover_project().facts if f.kind == "readme"]
        assert facts == [
            ("README.md says the project is: Shop is a small web store built on FastAPI", "L0", "README.md")
        ]


@pytest.mark.parametrize("kind", ["fifo", "symlink", "binary", "huge"])
def test_a_hostile_readme_gives_no_fact_and_no_hang(tmp_path: Path, kind: str) -> None:
    root = shop(tmp_path / "shop")
    readme = root / "README.md"
    if kind == "fifo":
        os.mkfifo(readme)
    elif kind == "symlink":
        secret = tmp_path / "outside.md"
        secret.write_text("# Secret\n\nThe launch codes are kept in the outer vault of this building.\n")
        readme.symlink_to(secret)
    elif kind == "binary":
        readme.write_bytes(b"\x00\xff\xfe" * 1000)
    else:
        readme.write_text("# Big\n\n" + "word " * 3_000_000)
    with Memory.open(root) as mem:
        found = mem.discover_project()
    assert not any(f.kind == "readme" and "launch codes" in f.content for f in found.facts)
    if kind != "huge":
        assert [f for f in found.facts if f.kind == "readme"] == []
