"""An agent loop on aircher-mem's two calls: ``Memory.prepare_context(message)``
before every model call, ``Memory.record_tool_call(..., result=output)`` after every
tool call. The first returns the chat messages to send (the window pruned under 80 %
of its budget, code relevant to the message when the project is indexed, similar past
tasks); the second records the call in the episodic store and puts its output in the
window.

It replays one real trajectory (mini-swe-agent on SWE-bench) from ../shared/data when
that file is there, and a short built-in session otherwise. The task is the first
message; each command the agent ran is a tool call whose output is recorded; each
model call after one is prepared with a short "go on" prompt (mini-swe-agent sends
the output itself as the next prompt; here it is in the window as a tool result).
The system prompt is sent ahead of the window, outside its budget.

    python examples/agent_loop.py [--budget 8000] [--instance astropy__astropy-12907]
                                  [--root DIR]

The store is a temporary folder unless ``--root`` names a project (its
``.aircher/`` is created or reused, and kept).
"""

from __future__ import annotations

import argparse
import json
import re
import tarfile
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aircher_mem as am

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "trajectories-mini-swe-agent-gemini3pro.tar.gz"
GO_ON = "Go on with the task: the output of your last command is above."
RETURNCODE = re.compile(r"<returncode>(-?\d+)</returncode>")
COMMAND = re.compile(r"```bash\n(.*?)```", re.DOTALL)


def trajectory(instance: str) -> Iterator[dict[str, Any]]:
    with tarfile.open(DATA) as tar:
        try:
            member = tar.extractfile(f"mini_gemini3pro/{instance}.jsonl")
        except KeyError:
            member = None
        if member is None:
            raise SystemExit(f"{instance} is not in {DATA}")
        for line in member:
            yield json.loads(line)


def builtin_session() -> Iterator[dict[str, Any]]:
    yield {"kind": "system", "text": "You are a coding agent. Use one bash command per turn."}
    yield {"kind": "task", "text": "Fix the off-by-one error in pagination (app/pages.py)."}
    for turn in range(40):
        command = f"sed -n '{turn * 40 + 1},{turn * 40 + 40}p' app/pages.py"
        yield {"kind": "action", "tool": "sed", "text": f"THOUGHT: look at page {turn}\n```bash\n{command}\n```"}
        body = "\n".join(
            f"{n}: def page_{n}(items): return items[{n}:{n} + 10]" for n in range(turn * 40 + 1, turn * 40 + 41)
        )
        yield {
            "kind": "observation",
            "tool": "sed",
            "text": f"<returncode>0</returncode>\n<output>\n{body}\n</output>",
            "reads": [{"file_path": "app/pages.py", "line_range": [turn * 40 + 1, turn * 40 + 40]}],
        }


def touched_file(event: dict[str, Any]) -> str | None:
    """The file the command read or wrote first, as the trajectory parsed it."""
    for found in (event.get("reads") or []) + (event.get("writes") or []):
        if found.get("file_path"):
            return str(found["file_path"])
    return event.get("file_path")


def replay(memory: am.Memory, events: Iterator[dict[str, Any]]) -> None:
    system: list[am.Message] = []
    command: str | None = None
    calls = 0
    print(f"{'step':>4} {'event':<12} {'tokens':>7} {'items':>5}  pruned")
    for step, event in enumerate(events):
        kind, text = event.get("kind"), event["text"]
        window = memory.window.window
        prunes, tokens = window.pruning_count, window.token_count
        if kind == "system":
            system = [{"role": "system", "content": text}]
            messages = system
        elif kind == "task":
            messages = system + memory.prepare_context(text)
        elif kind == "action":
            # the model's reply to `messages`: the command it asks to run
            found = COMMAND.search(text)
            command = found.group(1).strip() if found else text
        else:
            code = RETURNCODE.search(text)
            memory.record_tool_call(
                event.get("tool") or "bash",
                {"command": command},
                success=code is None or code.group(1) == "0",
                result=text,
                file_path=touched_file(event),
            )
            calls += 1
            messages = system + memory.prepare_context(GO_ON)
        window = memory.window.window
        note = (
            f"{window.pruning_count - prunes} prune(s), {tokens} -> {window.token_count} tokens"
            if window.pruning_count > prunes
            else ""
        )
        print(f"{step:>4} {kind or '?':<12} {window.token_count:>7} {len(window):>5}  {note}")
    window = memory.window.window
    counts = memory.episodic.counts()
    print(
        f"\n{window.pruning_count} prunes; last model call: {len(messages)} messages, {window.token_count} tokens "
        f"in the window (+{sum(memory.tokens.count(m['content']) for m in system)} of system prompt); "
        f"first message role: {messages[0]['role']}\n"
        f"episodic store: {counts['tool_executions']} tool calls recorded (of {calls} replayed), "
        f"{counts['context_snapshots']} snapshots, {counts['file_interactions']} pruned code views"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--budget", type=int, default=8000, help="max_tokens of the context window")
    parser.add_argument("--instance", default="astropy__astropy-12907", help="the trajectory to replay")
    parser.add_argument("--root", type=Path, help="the project whose store to use (default: a temporary one)")
    args = parser.parse_args()

    events = trajectory(args.instance) if DATA.is_file() else builtin_session()
    with tempfile.TemporaryDirectory() as scratch:
        root = args.root if args.root is not None else Path(scratch)
        with am.Memory.open(root, policy=am.Policy(max_tokens=args.budget)) as memory:
            print(
                f"source: {args.instance if DATA.is_file() else 'built-in session'}; budget {args.budget} tokens "
                f"(prune above {memory.window.window.threshold}); store {memory.store}"
            )
            replay(memory, events)


if __name__ == "__main__":
    main()
