"""The text the Claude Code hooks inject (``SessionStart``, ``UserPromptSubmit``),
built from the verbs' JSON answers within a character budget: part of the context
assembly (:mod:`aircher_mem.assembly` exports it), in a module of its own that
imports nothing, since a hook that is a server's client loads it on every prompt."""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: importing typing is a cost here; checkers treat any TYPE_CHECKING as true
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from typing import Any

__all__ = ["MARKER", "TIER_TITLES", "Brief", "one_line", "task_query", "session_brief", "prompt_brief"]

# -- the text the hooks inject -------------------------------------------------------------

#: Starts the text the hooks print; a turn holding it is not stored again.
MARKER = "[aircher-mem]"
_CITE = "cite a memory by its id, e.g. [memory 1]."


class Brief:
    """A header and lines under section titles, all within ``budget`` characters;
    nothing at all when no line fits."""

    def __init__(self, header: str, budget: int) -> None:
        self.header = header
        self.left = budget - len(header) - 1
        self.lines: list[str] = []

    def add(self, line: str) -> bool:
        if len(line) + 1 > self.left:
            return False
        self.lines.append(line)
        self.left -= len(line) + 1
        return True

    def section(self, title: str, lines: Sequence[str]) -> None:
        """The title and as many of ``lines`` as fit, in order; nothing when the
        title and the first line do not fit together."""
        if not lines or len(title) + len(lines[0]) + 2 > self.left:
            return
        self.add(title)
        for line in lines:
            if not self.add(line):
                break

    def text(self) -> str:
        return "\n".join([self.header, *self.lines]) + "\n" if self.lines else ""


def one_line(text: object, width: int) -> str:
    """``text`` on one line (whitespace runs made one space), cut to ``width``."""
    one = " ".join(str(text).split())
    return one if len(one) <= width else one[: width - 3] + "..."


def _task_line(t: Mapping[str, Any], width: int) -> str:
    return f"[task {one_line(t.get('task_id'), 80)}] ({t.get('status')}) {one_line(t.get('description'), width)}"


def task_query(tasks: Sequence[Mapping[str, Any]], max_chars: int) -> str:
    """The query for the context of the open tasks: their descriptions, the first
    ``max_chars`` characters."""
    return " ".join(str(t.get("description", "")) for t in tasks)[:max_chars]


#: The section title of each tier of an assembled context, in tier order.
TIER_TITLES = {
    "critical": "Critical now (recent errors, their known fixes, decisions about this code):",
    "relevant": "Relevant:",
    "background": "Project conventions and background:",
    "index": "Also in memory:",
}


def _sections(
    out: Brief,
    assembled: Mapping[str, Any] | None,
    tiers: Sequence[str],
    line_chars: int,
    keep: Callable[[Mapping[str, Any]], bool],
) -> None:
    """A section for each of ``tiers`` in ``assembled`` (``assemble``'s JSON), one
    line an item that ``keep`` keeps; turns are left out."""
    found = assembled.get("tiers") if isinstance(assembled, dict) else None
    for tier in found if isinstance(found, list) else ():
        if isinstance(tier, dict) and tier.get("name") in tiers:
            items = [i for i in tier.get("items") or () if isinstance(i, dict) and i.get("kind") != "turn" and keep(i)]
            out.section(TIER_TITLES[tier["name"]], [one_line(i.get("text", ""), line_chars) for i in items])


def session_brief(
    tasks: Sequence[Mapping[str, Any]],
    assembled: Mapping[str, Any] | None,
    *,
    budget: int,
    line_chars: int,
) -> str:
    """What a session starts with, within ``budget`` characters (each line cut to
    ``line_chars``): the open tasks, then the four tiers of ``assembled`` (the JSON
    of ``assemble`` for the open tasks), turns left out."""
    out = Brief(f"{MARKER} Project memory; {_CITE}", budget)
    out.section("Open tasks:", [_task_line(t, line_chars) for t in tasks])
    _sections(out, assembled, ("critical", "relevant", "background", "index"), line_chars, lambda item: True)
    return out.text()


def _score(item: Mapping[str, Any]) -> float:
    s = item.get("score")
    return float(s) if isinstance(s, (int, float)) and not isinstance(s, bool) else 0.0


def prompt_brief(
    assembled: Mapping[str, Any] | None,
    *,
    budget: int,
    min_score: float,
    line_chars: int,
    min_confidence: float,
) -> str:
    """What a prompt gets, within ``budget`` characters (each line cut to
    ``line_chars``): the critical and relevant tiers of ``assembled`` (the JSON of
    ``assemble`` for the prompt), turns left out, a memory only when it scores at
    least ``min_score`` and a predicted file at ``min_confidence`` or more."""

    def keep(item: Mapping[str, Any]) -> bool:
        if item.get("kind") == "prediction":
            return _score(item) >= min_confidence
        if str(item.get("ref") or "").startswith("memory:"):
            return _score(item) >= min_score
        return True

    out = Brief(f"{MARKER} Recalled from project memory; {_CITE}", budget)
    _sections(out, assembled, ("critical", "relevant"), line_chars, keep)
    return out.text()
