"""An agent loop driving aircher-mem: every model call goes through
DynamicContextManager.prepare_context, every tool output is added as an item, and
the Rust window prunes whenever the budget's 80 % threshold is crossed.

It replays one real trajectory (mini-swe-agent on SWE-bench) from
../shared/data when that file is there, and a short built-in session otherwise:

    python examples/agent_loop.py [--budget 8000] [--instance astropy__astropy-12907]
"""

from __future__ import annotations

import argparse
import json
import tarfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aircher_mem as am
from aircher_mem.engine import DynamicContextManager

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "trajectories-mini-swe-agent-gemini3pro.tar.gz"


def trajectory(instance: str) -> Iterator[dict[str, Any]]:
    with tarfile.open(DATA) as tar:
        member = tar.extractfile(f"mini_gemini3pro/{instance}.jsonl")
        if member is None:
            raise SystemExit(f"{instance} is not in {DATA}")
        for line in member:
            yield json.loads(line)


def builtin_session() -> Iterator[dict[str, Any]]:
    yield {"kind": "system", "text": "You are a coding agent. Use one bash command per turn."}
    yield {"kind": "task", "text": "Fix the off-by-one error in pagination (app/pages.py)."}
    for turn in range(40):
        yield {
            "kind": "action",
            "tool": "cat",
            "text": f"THOUGHT: look at page {turn}\n```bash\n"
            f"sed -n '{turn * 40 + 1},{turn * 40 + 40}p' app/pages.py\n```",
        }
        body = "\n".join(
            f"{n}: def page_{n}(items): return items[{n}:{n} + 10]" for n in range(turn * 40 + 1, turn * 40 + 41)
        )
        yield {
            "kind": "observation",
            "tool": "cat",
            "text": body,
            "reads": [{"file_path": "app/pages.py", "line_range": [turn * 40 + 1, turn * 40 + 40]}],
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--budget", type=int, default=8000, help="max_tokens of the context window")
    parser.add_argument("--instance", default="astropy__astropy-12907")
    args = parser.parse_args()

    clock = [1_700_000_000.0]  # one simulated minute per event, so time decay shows
    manager = DynamicContextManager(am.Policy(max_tokens=args.budget), clock=lambda: clock[0])
    events = trajectory(args.instance) if DATA.is_file() else builtin_session()
    print(
        f"source: {args.instance if DATA.is_file() else 'built-in session'}; budget {args.budget} tokens "
        f"(prune above {manager.window.threshold})"
    )
    print(f"{'step':>4} {'event':<12} {'tokens':>7} {'items':>5}  pruned")
    for step, event in enumerate(events):
        clock[0] += 60
        kind, text = event.get("kind"), event["text"]
        if kind == "system":
            manager.add_system_prompt(text)
        elif kind == "task":
            manager.set_current_task("task", text[:200])
            manager.prepare_context(text)
        elif kind == "action":
            manager.add_assistant_response(text, tool_calls=[event.get("tool") or "bash"])
        else:
            reads = [r for r in event.get("reads") or [] if r.get("line_range")]
            if reads:
                first, last = reads[0]["line_range"]
                manager.add_code_snippet(text, file_path=reads[0]["file_path"], line_range=(first, last))
            else:
                manager.add_tool_result(text, tool_name=event.get("tool") or "bash", file_path=event.get("file_path"))
        result = manager.maybe_prune()
        note = f"{len(result.removed)} items, {result.tokens_before} -> {result.tokens_after}" if result else ""
        print(f"{step:>4} {kind or '?':<12} {manager.window.token_count:>7} {len(manager.window):>5}  {note}")
    messages = manager.messages()
    print(
        f"\n{manager.window.pruning_count} prunes; final context: {len(messages)} messages, "
        f"{manager.window.token_count} tokens; first message role: {messages[0]['role']}"
    )


if __name__ == "__main__":
    main()
