"""The text the Claude Code hooks inject (``SessionStart``, ``UserPromptSubmit``),
built from the verbs' JSON answers within a character budget: part of the context
assembly (:mod:`aircher_mem.assembly` exports it), in a module of its own that
imports nothing, since a hook that is a server's client loads it on every prompt."""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: importing typing is a cost here; checkers treat any TYPE_CHECKING as true
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence
    from typing import Any

__all__ = ["MARKER", "Brief", "one_line", "memory_line", "task_query", "session_brief", "prompt_brief"]

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


def memory_line(m: Mapping[str, Any], width: int) -> str:
    """``[memory <id>] <content>``, the content on one line cut to ``width``."""
    return f"[memory {m.get('id')}] {one_line(m.get('content', ''), width)}"


def _task_line(t: Mapping[str, Any], width: int) -> str:
    return f"[task {one_line(t.get('task_id'), 80)}] ({t.get('status')}) {one_line(t.get('description'), width)}"


def task_query(tasks: Sequence[Mapping[str, Any]], max_chars: int) -> str:
    """The query for the memories relevant to the open tasks: their descriptions,
    the first ``max_chars`` characters."""
    return " ".join(str(t.get("description", "")) for t in tasks)[:max_chars]


def session_brief(
    tasks: Sequence[Mapping[str, Any]],
    ranked: Sequence[Mapping[str, Any]],
    facts: Sequence[Mapping[str, Any]],
    relevant: Sequence[Mapping[str, Any]],
    *,
    budget: int,
    line_chars: int,
) -> str:
    """What a session starts with, within ``budget`` characters (each entry's text
    cut to ``line_chars``): the open tasks;
    the project's rules and facts (the important memories among ``ranked``, then
    ``facts``); the memories ``relevant`` to the open tasks (recall hits; turns left
    out). A memory shows once, in its first section. Entries are the verbs' JSON."""
    out = Brief(f"{MARKER} Project memory; {_CITE}", budget)
    out.section("Open tasks:", [_task_line(t, line_chars) for t in tasks])
    seen: set[Any] = set()

    def fresh(found: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
        chosen = []
        for m in found:
            if m.get("id") not in seen:
                seen.add(m.get("id"))
                chosen.append(m)
        return chosen

    important = [m for m in ranked if m.get("importance")]
    out.section("Project rules and facts:", [memory_line(m, line_chars) for m in fresh([*important, *facts])])
    hits = [h for h in relevant if h.get("kind") != "turn"]
    out.section("Relevant to the open tasks:", [memory_line(h, line_chars) for h in fresh(hits)])
    return out.text()


def prompt_brief(
    hits: Sequence[Mapping[str, Any]],
    *,
    budget: int,
    min_score: float,
    line_chars: int,
    prediction: Mapping[str, Any] | None = None,
    min_confidence: float = 0.5,
) -> str:
    """The memories recalled for a prompt that score at least ``min_score`` (turns
    left out); then, from ``prediction`` (``predict``'s JSON), the memories about the
    files likely opened next and those files, at ``min_confidence`` or more; within
    ``budget`` characters, each text cut to ``line_chars``. Entries are the verbs'
    JSON."""
    out = Brief(f"{MARKER} Recalled from project memory; {_CITE}", budget)
    chosen = [
        h
        for h in hits
        if h.get("kind") != "turn" and isinstance(h.get("score"), (int, float)) and h["score"] >= min_score
    ]
    out.section("Memories that may bear on this prompt:", [memory_line(h, line_chars) for h in chosen])
    if prediction is None:
        return out.text()
    shown = {h.get("id") for h in chosen}

    def sure(entry: Any) -> bool:
        c = entry.get("confidence") if isinstance(entry, dict) else None
        return isinstance(c, (int, float)) and c >= min_confidence

    about = [m for m in prediction.get("memories") or () if sure(m) and m.get("id") not in shown]
    out.section(
        "Memories about the files you will likely open next:",
        [f"{memory_line(m, line_chars)} (about {one_line(m.get('path'), 200)})" for m in about],
    )
    files = [f for f in prediction.get("files") or () if sure(f)]
    if files:
        named = ", ".join(f"{one_line(f.get('path'), 200)} ({f['confidence']:.2f})" for f in files)
        out.section("Files you will likely open next:", [one_line(named, line_chars)])
    return out.text()
