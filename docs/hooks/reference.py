"""MkDocs hook: the CLI and HTTP references, rendered from the verb registry
(``aircher_mem.verbs.VERBS``) when the site is built, and the Policy's default
``config.toml``.

A page holding ``<!-- aircher:cli -->``, ``<!-- aircher:http -->`` or
``<!-- aircher:policy-defaults -->`` gets that marker replaced by the rendered
text. The build fails when the registry cannot be imported or a verb does not have
the registry's shape: a reference that silently lost its verbs would be worse than
no site.
"""

from __future__ import annotations

import enum
import re
import types
import typing
from collections.abc import Callable, Iterable
from typing import Any

from mkdocs.exceptions import PluginError

__all__ = ["on_config", "on_page_content", "on_page_markdown", "render_cli", "render_http", "render_policy_defaults"]

MARKERS = {
    "cli": "<!-- aircher:cli -->",
    "http": "<!-- aircher:http -->",
    "policy": "<!-- aircher:policy-defaults -->",
}
VERB_FIELDS = ("name", "summary", "params", "result", "http", "cli", "mcp")
PARAM_FIELDS = ("name", "type", "default", "help", "required", "choices", "minimum", "maximum")

_verbs: tuple[Any, ...] = ()


def _load_verbs() -> tuple[Any, ...]:
    try:
        import aircher_mem.interfaces.cli  # noqa: F401 - registers the CLI's own commands
        from aircher_mem import verbs
    except ImportError as exc:
        raise PluginError(
            "docs/hooks/reference.py: the CLI and HTTP references are generated from "
            f"aircher_mem.verbs, which cannot be imported ({exc}); install aircher-mem "
            "with its verb registry in the environment that runs mkdocs"
        ) from exc
    found = tuple(getattr(verbs, "VERBS", ()))
    if not found:
        raise PluginError("docs/hooks/reference.py: aircher_mem.verbs.VERBS is empty or missing")
    for verb in found:
        missing = [f for f in VERB_FIELDS if not hasattr(verb, f)]
        if missing:
            raise PluginError(f"docs/hooks/reference.py: verb {verb!r:.80} has no {', '.join(missing)}")
        for param in verb.params:
            missing = [f for f in PARAM_FIELDS if not hasattr(param, f)]
            if missing:
                raise PluginError(
                    f"docs/hooks/reference.py: parameter {param!r:.80} of verb {verb.name} has no {', '.join(missing)}"
                )
    names = [v.name for v in found]
    if len(set(names)) != len(names):
        raise PluginError(f"docs/hooks/reference.py: verb names repeat in VERBS: {sorted(names)}")
    return found


def on_config(config: Any) -> Any:
    global _verbs
    _verbs = _load_verbs()
    return config


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    renderers: dict[str, Callable[[], str]] = {
        MARKERS["cli"]: lambda: render_cli(_verbs),
        MARKERS["http"]: lambda: render_http(_verbs),
        MARKERS["policy"]: render_policy_defaults,
    }
    for marker, render in renderers.items():
        if marker in markdown:
            markdown = markdown.replace(marker, render())
    return markdown


ROLE = re.compile(r":(?:class|func|meth|attr|exc|data|mod):(?=<code>|`)")


def on_page_content(html: str, page: Any, config: Any, files: Any) -> str:
    """Docstrings name objects with Sphinx roles (``:class:`X` ``); the rendered
    page shows the name alone."""
    return ROLE.sub("", html)


# -- rendering ---------------------------------------------------------------------------


def type_name(annotation: Any) -> str:
    """A Python annotation as a reader writes it: ``str | None``, ``list[str]``."""
    if annotation is None or annotation is type(None):
        return "None"
    if isinstance(annotation, str):
        return annotation
    origin = typing.get_origin(annotation)
    if origin is typing.Literal:
        return " | ".join(repr(a) for a in typing.get_args(annotation))
    if origin in (typing.Union, types.UnionType):
        return " | ".join(type_name(a) for a in typing.get_args(annotation))
    if origin is not None:
        args = typing.get_args(annotation)
        base = getattr(origin, "__name__", str(origin))
        return f"{base}[{', '.join('...' if a is Ellipsis else type_name(a) for a in args)}]" if args else base
    if isinstance(annotation, type):
        return annotation.__name__
    return re.sub(r"\btyping\.", "", str(annotation))


def _value(value: Any) -> str:
    if isinstance(value, enum.Enum):
        value = value.value
    return repr(value)


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _code(text: str) -> str:
    # a pipe inside a code span does not split a table cell
    return "`" + str(text).replace("`", "'").replace("\n", " ") + "`"


def _allowed(param: Any) -> str:
    parts = []
    if param.choices:
        parts.append(", ".join(_code(_value(c)) for c in param.choices))
    if param.minimum is not None and param.maximum is not None:
        parts.append(f"{param.minimum} to {param.maximum}")
    elif param.minimum is not None:
        parts.append(f"at least {param.minimum}")
    elif param.maximum is not None:
        parts.append(f"at most {param.maximum}")
    return "; ".join(parts)


def _default(param: Any) -> str:
    if param.required:
        return "required"
    return _code(_value(param.default))


def _params_table(params: Iterable[Any], name: Callable[[Any], str]) -> list[str]:
    rows = [
        "| parameter | type | default | allowed | meaning |",
        "|---|---|---|---|---|",
    ]
    for p in params:
        rows.append(
            f"| {_code(name(p))} | {_code(type_name(p.type))} | {_default(p)} | {_allowed(p)} | {_cell(p.help or '')} |"
        )
    return rows


def _results(verb: Any) -> str:
    names = []
    for t in verb.results:
        label = getattr(t, "__name__", type_name(t))
        module = getattr(t, "__module__", "")
        if module == "aircher_mem.results":
            names.append(f"[`{label}`](results.md#aircher_mem.results.{label})")
        else:
            names.append(f"`{label}`")
    return " or ".join(names) if names else "nothing"


def cli_name(verb_name: str) -> str:
    return verb_name.replace("_", "-")


def _usages() -> dict[str, str]:
    """Each subcommand's usage line, as ``aircher-mem <command> --help`` prints it."""
    import argparse

    from aircher_mem.interfaces.cli import build_parser

    [sub] = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    return {name: " ".join(p.format_usage().split()).removeprefix("usage: ") for name, p in sub.choices.items()}


def render_cli(verbs: Iterable[Any]) -> str:
    out: list[str] = []
    usages = _usages()
    for verb in sorted((v for v in verbs if v.cli), key=lambda v: v.name):
        out += [f"## `aircher-mem {cli_name(verb.name)}`", "", _cell(verb.summary), ""]
        out += ["```", usages[cli_name(verb.name)], "```", ""]
        if verb.params:
            out += _params_table(verb.params, lambda p: p.name)
            out.append("")
        if "python" not in verb.surfaces:
            out += ["A command of the CLI itself (no Python, MCP or HTTP counterpart).", ""]
            continue
        json_note = f" (`--json` prints it as the MCP tool `{verb.name}` answers it)" if verb.mcp else ""
        out += [f"Python: `Memory.{verb.name}`. Result: {_results(verb)}{json_note}.", ""]
    if not out:
        raise PluginError("docs/hooks/reference.py: no verb of aircher_mem.verbs.VERBS is a CLI command")
    return "\n".join(out)


def render_http(verbs: Iterable[Any]) -> str:
    served = sorted((v for v in verbs if v.http), key=lambda v: (v.http[1], v.http[0]))
    if not served:
        raise PluginError("docs/hooks/reference.py: no verb of aircher_mem.verbs.VERBS has an HTTP route")
    out = ["| route | verb | summary |", "|---|---|---|"]
    for verb in served:
        method, path = verb.http
        out.append(f"| `{method} {_cell(path)}` | [`{verb.name}`](#{verb.name}) | {_cell(verb.summary)} |")
    out.append("")
    for verb in served:
        method, path = verb.http
        where = "the query string" if method.upper() in ("GET", "DELETE") else "a JSON object in the body"
        out += [f"## `{verb.name}` {{ #{verb.name} }}", "", f"`{method} {path}`: {_cell(verb.summary)}", ""]
        in_path = set(re.findall(r"{(\w+)", path))
        rest = [p for p in verb.params if p.name not in in_path]
        if in_path:
            out += [f"Path parameters: {', '.join(f'`{n}`' for n in sorted(in_path))}.", ""]
        if rest:
            out += [f"Parameters, in {where}:", ""]
            out += _params_table(rest, lambda p: p.name)
            out.append("")
        out += [f"Answer: {_results(verb)}, as JSON.", ""]
    return "\n".join(out)


def render_policy_defaults() -> str:
    try:
        from aircher_mem import Policy
    except ImportError as exc:
        raise PluginError(f"docs/hooks/reference.py: aircher_mem cannot be imported ({exc})") from exc
    return "```toml\n" + Policy().to_toml().rstrip() + "\n```\n"
