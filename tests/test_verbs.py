"""The verb registry: every interface is generated from it, under the same names.

Each test builds an interface (the CLI's parser, the MCP server, the OpenAPI of the
HTTP server) and compares it with the registry: a verb declared once appears in each
interface it is offered on, with its parameters, and nothing else does."""

from __future__ import annotations

import argparse
import asyncio
import inspect
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import aircher_mem.interfaces.cli as cli
import aircher_mem.interfaces.render as render
import pytest
from aircher_mem import Memory, verbs
from aircher_mem.errors import InvalidInputError
from aircher_mem.interfaces.http import SEED_ROUTES, openapi
from aircher_mem.interfaces.mcp import build_server
from mcp import Client
from mcp.types import Tool
from pydantic import Field


def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    [action] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(action.choices)


def dests(parser: argparse.ArgumentParser, name: str) -> set[str]:
    presentation = {"help", "json", "root", "quiet", "show"} | (
        {"path"} if name in ("index", "create-store") else set()
    )
    return {a.dest for a in parser._actions} - presentation


def test_every_cli_command_is_a_verb_with_its_parameters() -> None:
    commands = subcommands(cli.build_parser())
    declared = {v.cli_name: v for v in verbs.all_verbs("cli")}
    assert sorted(commands) == sorted(declared)
    for name, parser in commands.items():
        assert dests(parser, name) == {p.name for p in declared[name].params}, name
    assert {"serve", "mcp", "hooks", "hook", "doctor"} <= set(commands)


def test_every_cli_command_that_answers_a_result_can_show_it_as_text() -> None:
    """Without --json the CLI renders the result as text: every result type a
    service verb on the CLI returns has a renderer (the preview has its own)."""
    results = {r for v in verbs.all_verbs("cli") if "python" in v.surfaces for r in v.results}
    assert sorted(r.__name__ for r in results - set(render.RENDER)) == ["ContextPreview"]


def test_every_mcp_tool_is_a_verb_with_its_schema(tmp_path: Path) -> None:
    async def listed(memory: Memory) -> list[Tool]:
        async with Client(build_server(memory)) as client:
            return (await client.list_tools()).tools

    with Memory.open(tmp_path) as memory:
        tools = {t.name: t for t in asyncio.run(listed(memory))}
    declared = {v.name: v for v in verbs.all_verbs("mcp")}
    assert sorted(tools) == sorted(declared)
    for name, tool in tools.items():
        v = declared[name]
        schema = tool.input_schema
        assert sorted(schema.get("properties", {})) == sorted(p.name for p in v.params), name
        assert sorted(schema.get("required", [])) == sorted(p.name for p in v.params if p.required), name
        assert tool.description == verbs.plain(v.description)


def test_every_http_route_is_a_verb_at_a_path_from_its_name() -> None:
    paths = openapi()["paths"]
    declared = {v.http_path: v for v in verbs.all_verbs("http")}
    assert sorted(paths) == sorted([*declared, "/health", "/openapi.json", *SEED_ROUTES])
    for path, v in declared.items():
        assert path == "/" + v.name.replace("_", "-")
        [(method, operation)] = paths[path].items()
        assert method == v.http_method.lower() and operation["operationId"] == v.name
        if method == "get":
            sent = {p["name"] for p in operation.get("parameters", [])}
        else:
            sent = set(operation["requestBody"]["content"]["application/json"]["schema"].get("properties", {}))
        assert sent == {p.name for p in v.params}, path


def test_the_python_verbs_are_memory_methods_of_the_same_name() -> None:
    for v in verbs.all_verbs("python"):
        method = getattr(Memory, v.name)
        assert inspect.unwrap(method) is inspect.unwrap(v.function)
        assert v.summary and v.summary == verbs.plain(v.description).split("\n\n")[0][: len(v.summary)]
        assert all(p.help for p in v.params), v.name


@pytest.fixture
def declared_here() -> Iterator[None]:
    before = dict(verbs._DECLARED)
    yield
    verbs._DECLARED.clear()
    verbs._DECLARED.update(before)


def test_a_verb_declared_once_reaches_every_interface(declared_here: None) -> None:
    @verbs.verb(http="GET")
    def shout(
        self: Any,
        word: Annotated[str, Field(min_length=1, description="What to shout.")],
        *,
        times: Annotated[int, Field(ge=1, le=3, description="How often.")] = 1,
    ) -> str:
        """Shouts a word."""
        return " ".join([word.upper()] * times)

    v = verbs.get("shout")
    assert [(p.name, p.required, p.positional, p.minimum, p.maximum) for p in v.params] == [
        ("word", True, True, None, None),
        ("times", False, False, 1, 3),
    ]
    parser = subcommands(cli.build_parser())["shout"]
    args = parser.parse_args(["hey", "--times", "2"])
    assert v.arguments({"word": args.word, "times": args.times}, text=True) == {"word": "hey", "times": 2}
    get = openapi()["paths"]["/shout"]["get"]
    assert [(p["name"], p["required"]) for p in get["parameters"]] == [("word", True), ("times", False)]
    assert get["parameters"][1]["schema"] == {
        "type": "integer",
        "minimum": 1,
        "maximum": 3,
        "default": 1,
        "description": "How often.",
    }
    with pytest.raises(InvalidInputError, match=r"^times must be <= 3, got 4$"):
        v.arguments({"word": "hey", "times": 4})
    with pytest.raises(InvalidInputError, match=r"^unknown argument loud; allowed: word, times$"):
        v.arguments({"word": "hey", "loud": True})
    with pytest.raises(InvalidInputError, match=r"^word is required$"):
        v.arguments({})
    assert v.arguments_json(b'{"word": "hey"}') == {"word": "hey"}
    with pytest.raises(InvalidInputError, match=r"^times must be an integer, got '2'$"):
        v.arguments_json(b'{"word": "hey", "times": "2"}')  # JSON is typed: no "2" for 2


def test_a_name_is_declared_once(declared_here: None) -> None:
    def forget(self: Any) -> None:
        """Another forget."""

    with pytest.raises(ValueError, match="verb 'forget' is declared twice"):
        verbs.verb()(forget)
    with pytest.raises(InvalidInputError, match="no verb named 'frobnicate'"):
        verbs.get("frobnicate")


def test_time_arguments_take_iso_text_or_seconds() -> None:
    recall = verbs.get("recall")
    at = recall.arguments({"query": "x", "at": "2024-05-01T12:00:00Z"}, text=True)["at"]
    assert at.isoformat() == "2024-05-01T12:00:00+00:00"
    assert recall.arguments({"query": "x", "at": "1714564800"}, text=True)["at"] == 1714564800.0
    assert recall.arguments_json(b'{"query": "x", "at": 5}')["at"] == 5.0
    with pytest.raises(InvalidInputError, match=r"^at must be ISO-8601"):
        recall.arguments({"query": "x", "at": "last tuesday"}, text=True)


def test_the_shipped_command_descriptions_are_the_registrys() -> None:
    """``data/cli.json`` (what a command a server answers is parsed with) describes
    the commands as the registry declares them."""
    from aircher_mem.interfaces import cli, command_line

    assert command_line.load_specs() == json.loads(cli.specs_text()), (
        'data/cli.json is stale: python -c "from aircher_mem.interfaces.cli import write_command_specs; '
        "write_command_specs('python/aircher_mem/data/cli.json')\" in a checkout with the package installed from it"
    )
